import json

import pytest

from tests.cli.conftest import run_cli


def test_budget_create_show_ledger(tmp_path, capsys):
    path = tmp_path / "study.sqlite"
    status, out, _ = run_cli(["budget", "create", path, "--total", "2"], capsys)
    assert status == 0 and "total epsilon 2" in out
    status, out, _ = run_cli(["budget", "show", path], capsys)
    assert "total 2, spent 0, remaining 2 (0 charges)" in out
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.open(path) as acc:
        acc.spend(0.5, "a mean")
    status, out, _ = run_cli(["budget", "ledger", path, "--json"], capsys)
    payload = json.loads(out)
    assert status == 0 and payload["spent"] == pytest.approx(0.5)
    assert [e["label"] for e in payload["ledger"]] == ["a mean"]


def test_budget_refusals(tmp_path, capsys):
    path = tmp_path / "study.sqlite"
    run_cli(["budget", "create", path, "--total", "2"], capsys)
    status, _, err = run_cli(["budget", "create", path, "--total", "3"], capsys)
    assert status == 2 and "exists already" in err
    status, _, err = run_cli(["budget", "show", tmp_path / "none.sqlite"], capsys)
    assert status == 2 and "no privacy ledger at" in err and "knorm budget create" in err
    status, _, err = run_cli(["budget", "create", tmp_path / "x.sqlite", "--total", "-1"], capsys)
    assert status == 2 and "--total: must be a float in the range (0, inf). Got '-1'" in err
