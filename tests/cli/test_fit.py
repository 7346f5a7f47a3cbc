import json

import numpy as np
import pytest

from tests.cli.conftest import run_cli

LINEAR = ["fit", "linear", "--target", "y", "--features", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1"]


def test_fit_linear_prints_coefficients(csv_file, capsys):
    status, out, err = run_cli([*LINEAR, csv_file, "--bounds", "y=-10:40", "--epsilon", "50", "--seed", "1"], capsys)
    assert status == 0, err
    rows = {ln.split()[0]: float(ln.split()[1]) for ln in out.splitlines() if ln.split()[:1] in (["x"], ["intercept"])}
    assert rows["x"] == pytest.approx(2.0, abs=0.3) and rows["intercept"] == pytest.approx(1.0, abs=1.5)
    assert "n = 2000 (public under replace-one neighbours)" in out
    assert "CURATOR-ONLY" not in out  # diagnostics only on request


def test_fit_linear_diagnostics_under_a_banner_and_json(csv_file, capsys):
    argv = [*LINEAR, csv_file, "--bounds", "y=-10:40", "--epsilon", "5", "--seed", "2", "--diagnostics", "--json"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    payload = json.loads(out)
    (release,) = payload["privacy"]["releases"]
    assert release["epsilon"] == 5 and release["sensitivity"]["kind"] in ("exact", "bound")
    assert list(payload["coefficients"]) == ["intercept", "x", "z"]
    assert "curator_only_diagnostics" in payload and payload["curator_only_diagnostics"]["rows_dropped"] == 0


def test_fit_logistic(csv_file, capsys):
    argv = ["fit", "logistic", csv_file, "--target", "label", "--features", "x", "--bounds", "x=0:10"]
    status, out, err = run_cli([*argv, "--classes", "0,1", "--epsilon", "5", "--seed", "2"], capsys)
    assert status == 0, err
    assert "objective perturbation" in out and "noise: linf" in out


def test_fit_charges_a_budget_and_refuses_past_it(csv_file, tmp_path, capsys):
    ledger = tmp_path / "study.sqlite"
    assert run_cli(["budget", "create", ledger, "--total", "1.5"], capsys)[0] == 0
    argv = [*LINEAR, csv_file, "--bounds", "y=-10:40", "--epsilon", "1", "--budget", ledger]
    status, out, _ = run_cli(argv, capsys)
    assert status == 0 and f"charged to {ledger}: entry 0; 1 of 1.5 spent" in out
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == "" and "would exceed the total 1.5 (spent 1" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], r"refusing to run without declared bounds.*Missing --bounds for: y"),
        (["--bounds", "y=0-10"], "--bounds must look like COLUMN=LOWER:UPPER. Got 'y=0-10'"),
        (["--bounds", "y=3:1"], "--bounds must have finite LOWER < UPPER. Got 'y=3:1'"),
        (["--bounds", "y=0:1", "--bounds", "w=0:1"], "--bounds names columns that are not used: 'w'"),
    ],
)
def test_fit_bounds_refusals(csv_file, capsys, extra, message):
    status, out, err = run_cli([*LINEAR, csv_file, "--epsilon", "1", *extra], capsys)
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert pytest.importorskip("re").search(message, err)


def test_fit_refuses_unknown_features(csv_file, capsys):
    argv = ["fit", "linear", csv_file, "--target", "y", "--epsilon", "1", "--features", "x,nope"]
    status, _, err = run_cli(argv, capsys)
    assert status == 2 and "--features names columns not in" in err and "['nope']" in err


def test_fit_refuses_missing_values_and_text_columns(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("x,c,y\n1,a,2\n,b,3\n2,a,4\n")
    argv = ["fit", "linear", path, "--target", "y", "--epsilon", "1", "--bounds", "x=0:5", "--bounds", "y=0:5"]
    status, _, err = run_cli([*argv, "--features", "x"], capsys)
    assert status == 2 and "have missing values" in err and "--drop-missing" in err
    status, _, err = run_cli([*argv, "--features", "x", "--drop-missing"], capsys)
    assert status == 2 and "--drop-missing needs --neighbours add_remove" in err
    status, _, err = run_cli([*argv, "--bounds", "c=0:1", "--drop-missing", "--neighbours", "add_remove"], capsys)
    assert status == 2 and "column 'c' holds 2 non-numeric value(s)" in err


def test_fit_logistic_needs_declared_classes(csv_file, capsys):
    argv = ["fit", "logistic", csv_file, "--target", "label", "--features", "x", "--bounds", "x=0:10"]
    status, _, err = run_cli([*argv, "--epsilon", "1"], capsys)
    assert status == 2 and "--classes" in err and "--public-labels" in err


# -- rho (zCDP) fits -------------------------------------------------------------------------------
def test_fit_linear_under_rho_charges_a_rho_ledger_once(csv_file, tmp_path, capsys):
    ledger = tmp_path / "zcdp.sqlite"
    assert run_cli(["budget", "create", ledger, "--total-rho", "1"], capsys)[0] == 0
    argv = [*LINEAR, csv_file, "--bounds", "y=-10:40", "--rho", "0.5", "--budget", ledger, "--seed", "3"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    assert "target y, rho 0.5" in out and "noise: Gaussian (rho-zCDP)" in out
    assert "certified l2 sensitivity 4.3589 (bound)" in out  # p = 2: sqrt((16 + 14 + 8) / 2) = sqrt(19)
    assert f"charged to {ledger}: entry 0; rho 0.5 of 1 spent" in out
    rows = {ln.split()[0]: float(ln.split()[1]) for ln in out.splitlines() if ln.split()[:1] in (["x"], ["intercept"])}
    assert rows["x"] == pytest.approx(2.0, abs=0.3)
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.open(ledger) as acc:  # one charge for the fit, of rho itself
        assert [(e.rho, e.epsilon) for e in acc.ledger] == [(0.5, None)]
    status, out, err = run_cli([*argv[:-2], "--seed", "4", "--json"], capsys)
    payload = json.loads(out)
    assert payload["privacy"]["rho"] == 0.5 and payload["privacy"]["epsilon"] is None
    (release,) = payload["privacy"]["releases"]
    assert release["rho"] == 0.5 and release["epsilon"] is None and release["method"] == "Gaussian"
    status, out, err = run_cli([*argv[:-2], "--seed", "5"], capsys)  # 1.5 > 1
    assert status == 2 and out == "" and "Spending rho=0.5" in err and len(err.splitlines()) == 1


def test_fit_linear_split_shape_and_refusals_under_rho(csv_file, tmp_path, capsys):
    base = [*LINEAR, csv_file, "--bounds", "y=-10:40"]
    status, out, err = run_cli([*base, "--rho", "0.5", "--shape", "split", "--seed", "1", "--json"], capsys)
    assert status == 0, err
    assert "split Gaussian noise" in json.loads(out)["privacy"]["releases"][0]["label"]
    ledger = tmp_path / "eps.sqlite"
    run_cli(["budget", "create", ledger, "--total-epsilon", "1"], capsys)
    for extra, message in (
        (["--rho", "0.5", "--epsilon", "1"], "argument --epsilon: not allowed with argument --rho"),
        (["--rho", "0.5", "--norm", "linf"], "'norm' parameter of LinearRegression must be 'auto' with rho"),
        (["--epsilon", "1", "--shape", "split"], "'shape' parameter of LinearRegression must be 'spherical'"),
        (["--rho", "0.5", "--budget", str(ledger)], "to a pure epsilon ledger"),
    ):
        status, out, err = run_cli([*base, *extra], capsys)
        assert status == 2 and out == "" and len(err.splitlines()) == 1 and message in err, (extra, err)


def test_fit_logistic_under_rho_spends_at_most_rho(csv_file, tmp_path, capsys):
    ledger = tmp_path / "zcdp.sqlite"
    run_cli(["budget", "create", ledger, "--total-rho", "0.5"], capsys)
    argv = ["fit", "logistic", csv_file, "--target", "label", "--features", "x", "--bounds", "x=0:10"]
    argv += ["--inference-share", "auto"]  # two releases: the model and the Fisher information
    status, out, err = run_cli([*argv, "--classes", "0,1", "--rho", "0.5", "--seed", "2", "--budget", ledger], capsys)
    assert status == 0, err
    assert "target label, rho 0.5" in out and "charged to" in out and "of 0.5 spent" in out
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.open(ledger) as acc:
        model, info = acc.ledger  # two pure releases, each charged eps^2 / 2
        assert model.rho == pytest.approx(model.epsilon**2 / 2) and info.rho == pytest.approx(info.epsilon**2 / 2)
        assert 0.5 * (1 - 1e-9) <= acc.spent_rho <= 0.5


def test_fit_logistic_one_vs_rest_reports_its_releases(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 3, 600)
    path = tmp_path / "three.csv"
    pd.DataFrame({"x": x, "c": np.floor(x).astype(int)}).to_csv(path, index=False)
    argv = ["fit", "logistic", path, "--target", "c", "--bounds", "x=0:3", "--classes", "0,1,2", "--multi-class", "ovr"]
    status, out, err = run_cli([*argv, "--rho", "1", "--seed", "1"], capsys)
    assert status == 0, err
    assert out.count("release: LogisticRegression.fit") == 3 and "rho 1" in out


def _logistic_csv(tmp_path, name, X, y, columns):
    import pandas as pd

    df = pd.DataFrame(X, columns=columns)
    df["label"] = y
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def _rows(out, names):
    """{name: [numbers on its row]} for the coefficient table of ``knorm fit logistic``."""
    rows = {}
    for line in out.splitlines():
        parts = line.replace("[", " ").replace("]", " ").replace(",", " ").split()
        if parts and parts[0] in names and len(parts) > 1:
            rows[parts[0]] = [float(v) for v in parts[1:]]
    return rows


def test_fit_logistic_prints_coherent_labelled_intervals(tmp_path, capsys):
    # Issue 23: a printed coefficient lay outside its own printed interval (the interval was
    # centred on the corrected estimate, the coefficient was the shrunk release). Now the
    # interval's centre is printed as 'corrected' where it is reliably closer to the
    # non-private fit, and the release lies inside its interval where it is not; over 6 fits
    # (the paper's design with an intercept, n = 10^4), every printed number is inside its row's interval.
    from scipy.special import expit

    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, size=(10_000, 3))
    y = (rng.random(10_000) < expit(X @ [1.0, -0.5, 0.25])).astype(int)
    path = _logistic_csv(tmp_path, "sim.csv", X, y, ["a", "b", "c"])
    argv = ["fit", "logistic", path, "--target", "label", "--classes", "0,1", "--bounds", "a=-1:1"]
    argv += ["--bounds", "b=-1:1", "--bounds", "c=-1:1", "--inference-share", "0.5"]
    names = {"intercept", "a", "b", "c"}
    for seed in range(6):
        status, out, err = run_cli([*argv, "--epsilon", "1", "--seed", seed], capsys)
        assert status == 0, err
        assert "95% interval" in out and "intervals: sampling error and privacy noise" in out
        assert "corrected" in out  # the corrected column, or the line saying why it is not printed
        rows = _rows(out, names)
        assert set(rows) == names
        for values in rows.values():
            *points, lo, hi = values
            assert all(lo <= v <= hi for v in points), out


def test_fit_logistic_says_why_there_are_no_intervals(tmp_path, capsys):
    rng = np.random.default_rng(12)
    X = rng.uniform(0, 10, size=(10_000, 3))
    y = (X @ [1.0, -2.0, 0.5] + rng.normal(size=10_000) > 0).astype(int)
    path = _logistic_csv(tmp_path, "readme.csv", X, y, ["x1", "x2", "x3"])
    argv = ["fit", "logistic", path, "--target", "label", "--classes", "0,1", "--epsilon", "1", "--seed", "4"]
    argv += ["--bounds", "x1=0:10", "--bounds", "x2=0:10", "--bounds", "x3=0:10"]
    status, out, err = run_cli(argv, capsys)  # the default: no epsilon on the information
    assert status == 0, err
    assert "interval" not in out.split("intervals: none")[0] and "pass --inference-share" in out
    status, out, err = run_cli([*argv, "--inference-share", "0.5", "--json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert payload["intervals"] is None and "refuses to give intervals: the ridge term" in payload["intervals_refused"]
