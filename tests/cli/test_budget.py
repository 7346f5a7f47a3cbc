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


def _ledger_with_a_charge(path):
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.create(path, total_epsilon=2.0) as acc:
        acc.spend(0.5, "a mean")
    return path


def _file_errors(tmp_path):
    """(what, path) for each file a ledger command must refuse, made fresh in ``tmp_path``."""
    whole = _ledger_with_a_charge(tmp_path / "whole.sqlite").read_bytes()
    (tmp_path / "empty.sqlite").touch()
    (tmp_path / "half.sqlite").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "notes.sqlite").write_text("not a database " * 100)
    (tmp_path / "a-directory").mkdir()
    return {
        "missing": (tmp_path / "missing.sqlite", "no privacy ledger at"),
        "empty": (tmp_path / "empty.sqlite", "is an empty file"),
        "truncated": (tmp_path / "half.sqlite", "is damaged"),
        "not sqlite": (tmp_path / "notes.sqlite", "is not a knorm privacy ledger"),
        "directory": (tmp_path / "a-directory", "is a directory"),
    }


def _one_line_status_2(status, out, err, path, what):
    assert status == 2 and out == "", (status, out, err)
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err and "Traceback" not in err, err
    assert str(path) in err and what in err, err


@pytest.mark.parametrize("action", ["show", "ledger"])
def test_reading_a_bad_ledger_file_is_one_line_and_status_2(action, tmp_path, capsys):
    for path, what in _file_errors(tmp_path).values():
        _one_line_status_2(*run_cli(["budget", action, path], capsys), path, what)


def test_the_missing_ledger_message_says_how_to_create_one(tmp_path, capsys):
    path = tmp_path / "missing.sqlite"
    status, _, err = run_cli(["budget", "show", path], capsys)
    assert status == 2 and f"create it with 'knorm budget create {path} --total-epsilon E'" in err
    status, out, _ = run_cli(["budget", "create", path, "--total-epsilon", "1.5"], capsys)
    assert status == 0 and "total epsilon 1.5" in out


def test_create_refuses_any_existing_path(tmp_path, capsys):
    for name, (path, _) in _file_errors(tmp_path).items():
        if name == "missing":
            continue
        before = path.read_bytes() if path.is_file() else None
        status, out, err = run_cli(["budget", "create", path, "--total-epsilon", "3"], capsys)
        _one_line_status_2(status, out, err, path, "is a directory" if path.is_dir() else "exists already")
        assert before is None or path.read_bytes() == before  # left as it was
    path = tmp_path / "no-such-dir" / "x.sqlite"
    _one_line_status_2(*run_cli(["budget", "create", path, "--total", "1"], capsys), path, "does not exist")


def test_a_read_only_ledger_is_one_line_and_status_2(tmp_path, capsys, monkeypatch):
    import os

    path = _ledger_with_a_charge(tmp_path / "ro.sqlite")
    real = os.access
    for target, what in ((path, "is read-only"), (path.parent, "directory of the privacy ledger file")):
        monkeypatch.setattr(os, "access", lambda p, mode, t=target: False if str(p) == str(t) else real(p, mode))
        for action in ("show", "ledger"):
            _one_line_status_2(*run_cli(["budget", action, path], capsys), path, what)
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real(p, mode))
    new = tmp_path / "new.sqlite"
    monkeypatch.setattr(
        os, "open", lambda *a, **k: (_ for _ in ()).throw(PermissionError(13, "Permission denied", str(new)))
    )
    _one_line_status_2(*run_cli(["budget", "create", new, "--total", "1"], capsys), new, "is read-only")


def test_budget_ledger_prints_nothing_from_a_seed(tmp_path, capsys):
    import re

    from knorm._seeds import legacy_fingerprint
    from knorm.accounting import PrivacyAccountant

    path = tmp_path / "study.sqlite"
    with PrivacyAccountant.create(path, total_epsilon=2.0) as acc:
        acc.spend(0.5, "seeded", seed=271828)
        acc.spend(0.5, "fresh")
    status, out, _ = run_cli(["budget", "ledger", path, "--json"], capsys)
    rows = json.loads(out)["ledger"]
    assert status == 0 and [r["fixed_seed"] for r in rows] == [True, False]
    assert all("seed_fingerprint" not in r for r in rows)
    _, text, _ = run_cli(["budget", "ledger", path], capsys)
    published = set(re.findall(r"[0-9a-f]{32,}", (out + text).lower()))
    assert published == set()
    assert [s for s in range(10**5 + 1) if legacy_fingerprint(s) in published] == []  # the attack


def test_an_immutable_ledger_file_is_one_line_and_status_2(tmp_path, capsys, csv_file):
    # The real thing where the file system allows it (root passes every permission check, not this one).
    import shutil
    import subprocess

    path = _ledger_with_a_charge(tmp_path / "immutable.sqlite")
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i is not available here (it needs root and a file system with the immutable flag)")
    try:
        mean = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "0.5"]
        for argv in (["budget", "show", path], ["budget", "ledger", path], [*mean, "--budget", path]):
            _one_line_status_2(*run_cli(argv, capsys), path, "read-only")
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)
    from knorm.accounting import PrivacyAccountant

    with PrivacyAccountant.open(path) as acc:
        assert acc.spent == 0.5  # nothing was charged


# -- rho (zCDP) ledgers --------------------------------------------------------------------------
def test_budget_create_show_ledger_of_a_rho_ledger(tmp_path, capsys):
    path = tmp_path / "zcdp.sqlite"
    status, out, err = run_cli(["budget", "create", path, "--total-rho", "0.5"], capsys)
    assert status == 0 and "total rho 0.5" in out, err
    from knorm.accounting import PrivacyAccountant
    from knorm.accounting.zcdp import epsilon_from_rho

    with PrivacyAccountant.open(path) as acc:
        assert acc.budget == "rho" and acc.total_rho == 0.5
        acc.spend(rho=0.125, label="a gaussian mean")
        acc.spend(0.5, "a laplace count")  # pure epsilon 0.5 is charged 0.125
    status, out, err = run_cli(["budget", "show", path], capsys)
    assert status == 0, err
    assert "rho ledger: total rho 0.5, spent 0.25, remaining 0.25 (2 charges)" in out
    assert f"(epsilon {epsilon_from_rho(0.25, 1e-6):.6g}, delta 1e-06)-DP" in out
    status, out, _ = run_cli(["budget", "show", path, "--delta", "1e-9", "--json"], capsys)
    payload = json.loads(out)
    assert payload["budget"] == "rho" and payload["spent"] == pytest.approx(0.25)
    assert payload["remaining"] == pytest.approx(0.25) and payload["total"] == 0.5
    conv = payload["epsilon_at_delta"]
    assert conv["delta"] == 1e-9 and conv["epsilon"] == epsilon_from_rho(0.25, 1e-9)
    status, out, _ = run_cli(["budget", "ledger", path], capsys)
    lines = out.splitlines()
    assert status == 0 and lines[0].endswith("0.25 of 0.5 rho spent")
    assert lines[1].split()[:3] == ["#", "rho", "epsilon"]
    assert lines[2].split()[:3] == ["0", "0.125", "-"] and lines[2].endswith("a gaussian mean")
    assert lines[3].split()[:3] == ["1", "0.125", "0.5"] and lines[3].endswith("a laplace count")
    payload = json.loads(run_cli(["budget", "ledger", path, "--json"], capsys)[1])
    assert [(e["epsilon"], e["label"]) for e in payload["ledger"]] == [
        (None, "a gaussian mean"),
        (0.5, "a laplace count"),
    ]
    assert payload["ledger"][1]["rho"] >= 0.125


def test_an_epsilon_ledger_shows_as_before_and_has_no_rho_fields(tmp_path, capsys):
    path = tmp_path / "eps.sqlite"
    run_cli(["budget", "create", path, "--total-epsilon", "2"], capsys)
    payload = json.loads(run_cli(["budget", "show", path, "--json"], capsys)[1])
    assert payload["budget"] == "epsilon" and "epsilon_at_delta" not in payload
    payload = json.loads(run_cli(["budget", "ledger", path, "--json"], capsys)[1])
    assert payload["ledger"] == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--total-epsilon", "1", "--total-rho", "0.5"],
            "argument --total-rho: not allowed with argument --total-epsilon",
        ),
        ([], "one of the arguments --total-epsilon/--total --total-rho is required"),
        (["--total-rho", "0"], "argument --total-rho: must be a float in the range (0, inf). Got '0'"),
        (["--total-rho", "inf"], "argument --total-rho: must be a float in the range (0, inf). Got 'inf'"),
    ],
)
def test_create_takes_exactly_one_total(tmp_path, capsys, argv, message):
    path = tmp_path / "x.sqlite"
    status, out, err = run_cli(["budget", "create", path, *argv], capsys)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err, err
    assert not path.exists()
