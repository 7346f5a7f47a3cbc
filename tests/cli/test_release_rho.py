"""``knorm release ... --rho``: the CLI passes rho= to knorm.stats (run once knorm.stats takes it)."""

import inspect
import json

import pytest

import knorm.stats
from tests.cli.conftest import run_cli

if "rho" not in inspect.signature(knorm.stats.mean).parameters:
    pytest.skip("knorm.stats does not take rho= yet (issue 25, the stats part)", allow_module_level=True)


def test_release_mean_under_rho_reports_rho_and_charges_a_rho_ledger(csv_file, tmp_path, capsys):
    ledger = tmp_path / "zcdp.sqlite"
    assert run_cli(["budget", "create", ledger, "--total-rho", "1"], capsys)[0] == 0
    argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--rho", "0.5", "--seed", "1"]
    status, out, err = run_cli([*argv, "--budget", ledger], capsys)
    assert status == 0, err
    assert "rho 0.5" in out and "epsilon" not in out.splitlines()[0]
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.open(ledger) as acc:
        assert acc.spent_rho == pytest.approx(0.5) and len(acc.ledger) == 1
    status, out, err = run_cli([*argv[:-2], "--seed", "2", "--json"], capsys)
    release = json.loads(out)["release"]
    assert status == 0 and release["rho"] == 0.5 and release["epsilon"] is None


@pytest.mark.parametrize(
    "statistic, extra",
    [
        ("sum", ["--column", "x", "--bounds", "x=0:10"]),
        ("count", ["--column", "flag"]),
        ("covariance", ["--column", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1"]),
        ("histogram", ["--column", "x", "--bins", "0,2,5,10"]),
        ("var", ["--column", "x", "--bounds", "x=0:10"]),
    ],
)
def test_release_statistics_under_rho(csv_file, capsys, statistic, extra):
    status, out, err = run_cli(
        ["release", statistic, csv_file, *extra, "--rho", "0.5", "--seed", "3", "--json"], capsys
    )
    assert status == 0, err
    release = json.loads(out)["release"]
    assert release["rho"] == 0.5 and release["epsilon"] is None


def test_release_rho_on_a_pure_epsilon_ledger_is_one_line(csv_file, tmp_path, capsys):
    ledger = tmp_path / "eps.sqlite"
    run_cli(["budget", "create", ledger, "--total-epsilon", "1"], capsys)
    argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--rho", "0.5", "--budget", ledger]
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == "" and len(err.splitlines()) == 1 and "pure epsilon ledger" in err
