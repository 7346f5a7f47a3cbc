import json
import re

import numpy as np
import pandas as pd
import pytest

from knorm.mechanisms import nonprivate
from tests.cli.conftest import run_cli


def _table(out):
    """{name: (value, lower, upper)} from the printed table."""
    rows = {}
    for line in out.splitlines():
        if "[" in line and "]" in line and not line.startswith(" "):
            head, interval = line.rsplit("[", 1)
            *name, value = head.split()
            lo, hi = interval.rstrip("]").split(",")
            rows[" ".join(name)] = (float(value), float(lo), float(hi))
    return rows


def test_release_mean_matches_numpy_without_noise(csv_file, capsys):
    df = pd.read_csv(csv_file)
    with nonprivate():
        status, out, err = run_cli(
            [
                "release",
                "mean",
                csv_file,
                "--column",
                "x,z",
                "--bounds",
                "x=0:10",
                "--bounds",
                "z=-1:1",
                "--epsilon",
                "1",
            ],
            capsys,
        )
    assert status == 0, err
    rows = _table(out)
    assert rows["mean x"][0] == pytest.approx(df.x.mean(), rel=1e-5)
    assert rows["mean z"][0] == pytest.approx(df.z.mean(), abs=1e-5)
    assert rows["mean x"][1] == rows["mean x"][0] == rows["mean x"][2]  # no noise: zero-width intervals


def test_release_var_prints_intervals_and_gain(csv_file, capsys):
    argv = ["release", "var", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "1", "--seed", "4"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    rows = _table(out)
    assert set(rows) == {"mean", "variance"}
    gain = re.search(r"Laplace would need (\S+)x the epsilon", out)
    assert "hull of (x, x^2)" in out and float(gain[1]) == pytest.approx(5.39, abs=0.005)
    x = pd.read_csv(csv_file).x
    for name, truth in (("mean", x.mean()), ("variance", x.var(ddof=0))):
        value, lo, hi = rows[name]
        assert lo < value < hi and abs(value - truth) < 5 * (hi - lo)


def test_release_covariance_json(csv_file, capsys):
    argv = ["release", "covariance", csv_file, "--column", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1"]
    status, out, err = run_cli([*argv, "--epsilon", "1", "--seed", "5", "--json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert payload["names"] == ["mean x", "mean z", "cov x,x", "cov x,z", "cov z,z"]
    assert len(payload["intervals"]["lower"]) == 5 and payload["release"]["epsilon"] == 1
    assert np.all(np.array(payload["intervals"]["lower"]) <= np.array(payload["release"]["value"]))


def test_release_histogram_and_counts(csv_file, capsys):
    df = pd.read_csv(csv_file)
    with nonprivate():
        status, out, err = run_cli(
            ["release", "histogram", csv_file, "--column", "x", "--bins", "0,2.5,5,10", "--epsilon", "1"], capsys
        )
        assert status == 0, err
        counts = [v[0] for v in _table(out).values()]
        assert counts == pytest.approx(np.histogram(df.x, [0, 2.5, 5, 10])[0])
        status, out, err = run_cli(["release", "count", csv_file, "--epsilon", "1"], capsys)
        assert _table(out)["rows"][0] == len(df)
        status, out, err = run_cli(["release", "count", csv_file, "--column", "flag", "--epsilon", "1"], capsys)
        assert _table(out)["count flag"][0] == df.flag.sum()


def test_release_charges_the_budget(csv_file, tmp_path, capsys):
    ledger = tmp_path / "l.sqlite"
    run_cli(["budget", "create", ledger, "--total", "1"], capsys)
    argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "0.6", "--budget", ledger]
    status, out, _ = run_cli(argv, capsys)
    assert status == 0 and f"charged to {ledger}: entry 0" in out
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == "" and "would exceed the total 1" in err
    status, out, _ = run_cli(["budget", "show", ledger, "--json"], capsys)
    assert json.loads(out)["spent"] == pytest.approx(0.6) and json.loads(out)["entries"] == 1


def test_a_seed_is_refused_twice_by_the_budget_and_never_printed(csv_file, tmp_path, capsys):
    import re

    from knorm._seeds import legacy_fingerprint

    ledger = tmp_path / "l.sqlite"
    assert run_cli(["budget", "create", ledger, "--total-epsilon", "2"], capsys)[0] == 0
    argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "0.5", "--budget", ledger]
    status, out, err = run_cli([*argv, "--seed", "271828", "--json"], capsys)
    assert status == 0, err
    assert re.findall(r"[0-9a-f]{32,}", out.lower()) == [] and legacy_fingerprint(271828) not in out
    status, out, err = run_cli([*argv, "--seed", "271828"], capsys)
    assert status == 2 and out == "" and "same fixed seed" in err and "271828" not in err
    status, out, _ = run_cli(["budget", "show", ledger, "--json"], capsys)
    assert json.loads(out)["entries"] == 1  # the refused release charged nothing


@pytest.mark.parametrize("command", ["release", "fit"])
def test_a_bad_budget_file_is_one_line_and_status_2(command, csv_file, tmp_path, capsys):
    (tmp_path / "empty.sqlite").touch()
    (tmp_path / "dir").mkdir()
    if command == "release":
        argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "0.5"]
    else:
        argv = ["fit", "linear", csv_file, "--target", "y", "--features", "x", "--bounds", "x=0:10"]
        argv += ["--bounds", "y=-10:40", "--epsilon", "1"]
    for name, what in (
        ("missing.sqlite", "create it with 'knorm budget create"),
        ("empty.sqlite", "is an empty file"),
        ("dir", "is a directory"),
    ):
        path = tmp_path / name
        status, out, err = run_cli([*argv, "--budget", path], capsys)
        assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, (status, out, err)
        assert str(path) in err and what in err and "internal error" not in err, err
    assert "--total-epsilon E" in run_cli([*argv, "--budget", tmp_path / "missing.sqlite"], capsys)[2]
    assert not (tmp_path / "missing.sqlite").exists()


def test_release_population_intervals_are_labelled_and_a_refusal_still_prints_the_release(csv_file, capsys):
    argv = ["release", "mean", csv_file, "--column", "x", "--bounds", "x=0:10", "--epsilon", "1", "--seed", "6"]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    _, lo, hi = _table(out)["mean x"]
    assert "(the noise), not a population" in out
    status, out, err = run_cli([*argv, "--kind", "population", "--json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert payload["intervals"]["kind"] == "population" and payload["intervals"]["population_refused"] is None
    # The same release (same seed), an interval that adds the sampling error: it contains the noise one.
    plo, phi = payload["intervals"]["lower"][0], payload["intervals"]["upper"][0]
    assert plo < lo and hi < phi
    # Under add/remove no variance is released: the value and the noise intervals are printed
    # (the release was made and charged), with the public reason for the refusal; status 0.
    status, out, err = run_cli([*argv, "--kind", "population", "--neighbours", "add_remove"], capsys)
    assert status == 0, err
    assert "mean x" in _table(out) and "population intervals refused: " in out and "add/remove" in out
