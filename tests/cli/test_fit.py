import json

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
