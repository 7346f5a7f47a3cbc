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
