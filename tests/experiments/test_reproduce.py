import pandas as pd
import pytest

from knorm.cli import main
from knorm.experiments import EXPERIMENTS, Config, run_experiments

# The whole main job (`knorm reproduce --quick`, about a minute): run by .ci/run with the slow tests,
# and by the README's first command; the other tests here run its pieces on small inputs.
_MAIN_JOB = pytest.mark.slow


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    page = out / "results.md"
    assert main(["reproduce", "--quick", "--out", str(out), "--report", str(page), "--no-progress"]) == 0
    return out, page


@_MAIN_JOB
def test_every_experiment_writes_its_files(quick_run):
    out, page = quick_run
    expected = {
        "example21.csv",
        "figure1_example21.png",
        "logistic_raw.csv",
        "logistic_medians.csv",
        "logistic_error.png",
        "cautionary_losses.csv",
        "cautionary_variances.csv",
        "linear_raw.csv",
        "linear_coverage.csv",
        "linear_coverage.png",
    }
    expected |= {"realdata_raw.csv", "realdata_medians.csv", "realdata_distance.png"}
    assert expected <= {p.name for p in out.iterdir()}
    text = page.read_text()
    for name in EXPERIMENTS:
        assert f"## {name}" in text
    assert "The paper's claims:" in text and "tested agree" in text


@_MAIN_JOB
def test_cautionary_matches_paper_table(quick_run):
    out, _ = quick_run
    t = pd.read_csv(out / "cautionary_losses.csv")
    assert len(t) == 6 and (t.z.abs() < 3).all()  # within 3 Monte Carlo SE of the paper


@_MAIN_JOB
def test_logistic_csv_contents(quick_run):
    out, _ = quick_run
    raw = pd.read_csv(out / "logistic_raw.csv")
    assert set(raw.mechanism) == {"MLE", "l1", "l2", "linf", "linf q=0.85", "linf q=auto"}
    assert raw.error.gt(0).all() and raw.eps.dropna().nunique() == 8


@pytest.mark.slow  # about 20 s (three quick runs); not a privacy test: pytest -m slow (CI) runs it
def test_identical_results_for_identical_seed_any_jobs(tmp_path):
    a = run_experiments(
        ["logistic"], Config(quick=True, out=tmp_path / "a", jobs=1, seed=7, progress=False), echo=lambda s: None
    )
    b = run_experiments(
        ["logistic"], Config(quick=True, out=tmp_path / "b", jobs=2, seed=7, progress=False), echo=lambda s: None
    )
    pd.testing.assert_frame_equal(a[0].tables["logistic_raw"], b[0].tables["logistic_raw"])
    c = run_experiments(
        ["logistic"], Config(quick=True, out=tmp_path / "c", jobs=1, seed=8, progress=False), echo=lambda s: None
    )
    assert not a[0].tables["logistic_raw"].error.equals(c[0].tables["logistic_raw"].error)


def test_reproduce_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "nonsense"])
    with pytest.raises(SystemExit):
        main(["reproduce", "--jobs", "0"])
    assert "--jobs: must be an int >= 1. Got '0' instead." in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--data", "x.csv"])
    assert "--data and --target must be given together" in capsys.readouterr().err


@_MAIN_JOB
def test_linear_csv_contents(quick_run):
    out, _ = quick_run
    cov = pd.read_csv(out / "linear_coverage.csv")
    assert {"l1", "linf", "K_T", "cut ball", "cut ball + floor (ours)"} <= set(cov.columns)
    assert cov.drop(columns=["n", "eps"]).stack().between(0, 1).all()


@pytest.mark.slow  # about 25 s (40 quick replicates); not a privacy test: pytest -m slow (CI) runs it
def test_realdata_on_a_user_csv(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["kind"] = rng.choice(["u", "v"], size=3000)
    df["y"] = X @ [1.0, -0.5, 0.2] + (df.kind == "v") + rng.normal(size=3000)
    df.loc[5, "a"] = np.nan
    path = tmp_path / "mine.csv"
    df.to_csv(path, index=False)
    cfg = Config(quick=True, out=tmp_path / "o", data=str(path), target="y", progress=False)
    res = run_experiments(["realdata"], cfg, echo=lambda s: None)[0]
    assert "dropped 1 of 3000 rows" in res.summary and "NOT private" in res.summary
    assert (tmp_path / "o" / "realdata_medians.csv").exists()


def test_packaged_housing_data_is_the_public_file_byte_for_byte():
    import gzip
    import hashlib

    from knorm.experiments.data import HOUSING_SHA256, housing_path

    raw = gzip.decompress(housing_path().read_bytes())
    assert hashlib.sha256(raw).hexdigest() == HOUSING_SHA256
    assert raw.count(b"\n") == 20_641  # header and 20,640 block groups


def _claims_and_reference():
    from knorm.experiments import Claim

    claims = [
        Claim("a", "n=1: noise", "yes", "no", False),
        Claim("a", "n=1: real", "yes", "no", False, source="ours"),
        Claim("a", "n=1: fine", "yes", "yes", True),
        Claim("a", "n=2: noise", "yes", "not run", None, "quick mode runs n = 1 only", run=False),
        Claim("a", "coverage", "not in paper", "0.9", None, "quick mode: 3 replicates are too few to judge"),
        Claim("a", "context", "-", "1.5", None, "context only"),
    ]
    reference = {
        ("a", "n=1: noise"): {"ours": "yes (full)", "agrees": True},
        ("a", "n=1: real"): {"ours": "no (full)", "agrees": False},
        ("a", "n=1: fine"): {"ours": "yes", "agrees": True},
        ("a", "n=2: noise"): {"ours": "yes", "agrees": True},
    }
    return claims, reference


def test_quick_notes_say_why_beside_each_no_and_each_claim_not_run():
    from knorm.experiments.report import quick_note

    claims, reference = _claims_and_reference()
    notes = [quick_note(c, reference, (3, 300)) for c in claims]
    assert notes[0].startswith("too few replicates to decide (3 replicates here, 300 replicates in the full run)")
    assert "the full run agrees (yes (full))" in notes[0]
    assert notes[1].startswith("a real disagreement: the full run (300 replicates) does not agree either (no (full))")
    assert notes[2] == "" and notes[5] == ""  # a "yes", and a context row, need no note
    assert notes[3] == "not run: quick mode runs n = 1 only; the full run (300 replicates) tests it"
    assert notes[4].startswith("not judged: quick mode: 3 replicates") and "the full run (300 replicates)" in notes[4]
    assert "has no verdict" in quick_note(claims[0], {}, (3, 300))


def test_the_summary_counts_the_papers_claims_and_ours_apart_as_the_page_does():
    from knorm.experiments import Result
    from knorm.experiments.report import _counts, claim_counts, console_summary

    claims, reference = _claims_and_reference()
    result = Result("a", claims=claims, replicates=(3, 300))
    counts = claim_counts(claims)
    assert counts["paper"] == (1, 2) and counts["ours"] == (0, 1) and len(counts["not_run"]) == 1
    quick = console_summary([result], True, reference)
    assert quick[2].startswith("The paper's claims: 1 of 2 tested agree. Our own claims: 0 of 1 hold.")
    assert quick[2].split(". 1 claim")[0] in _counts(claims).replace("**", "")  # the page's numbers
    text = "\n".join(quick)
    assert "a 3 (the full run: 300)" in text
    assert 'Of its 2 "NO", 1 is too few replicates to decide (the last full run agrees) and 1 is a real' in text
    assert "the paper's claims 3 of 3 agree; our own claims 0 of 1 hold" in text  # the full run, same claims
    assert console_summary([result], False, reference) == quick[:3]  # a full run: its own counts only


def test_a_quick_run_says_on_screen_why_each_no_and_each_claim_not_run(tmp_path, capsys):
    assert main(["reproduce", "logistic", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.count(" | ") >= 3 and not line.startswith("claim |")]
    verdicts = [row.split(" | ")[3] for row in rows]
    assert rows and any(v.startswith("- ") or v == "-" for v in verdicts)
    for row, verdict in zip(rows, verdicts):
        if verdict.startswith("NO"):
            assert "  <- too few replicates to decide (8 replicates here, 100 replicates in the full run)" in row or (
                "  <- a real disagreement: the full run (100 replicates)" in row
            ), row
        if " | not run | " in row:
            assert "  <- not run: quick mode runs n = 10000 only; the full run (100 replicates) tests it" in row, row
        assert "has no verdict" not in row  # the shipped full-run verdicts know every claim of the quick run
    assert "The paper's claims: " in out and "Our own claims: " in out and "The last full run" in out
    assert out.splitlines()[0].startswith("knorm reproduce --quick: small replicate counts")
