"""``knorm release median`` and ``knorm release quantile``: values, rank bounds, budgets, one-line errors."""

import json

import numpy as np
import pandas as pd
import pytest

from knorm.mechanisms import nonprivate
from tests.cli.conftest import run_cli

BASE = ["--column", "x", "--bounds", "x=0:10"]


def test_median_without_noise_is_the_rounded_median(csv_file, capsys):
    x = pd.read_csv(csv_file).x.to_numpy()
    with nonprivate():
        status, out, err = run_cli(["release", "median", csv_file, *BASE, "--epsilon", "1", "--json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert payload["names"] == ["median x"] and payload["release"]["method"] == "exponential mechanism"
    (value,) = payload["release"]["value"]
    assert abs(value - np.quantile(x, 0.5, method="inverted_cdf")) <= 10 / 2**17  # half a grid step


def test_quantile_prints_the_rank_bound(csv_file, capsys):
    argv = ["release", "quantile", csv_file, *BASE, "--q", "0.1,0.9", "--epsilon", "1", "--seed", "5"]
    status, out, err = run_cli([*argv, "--candidates", "1001"], capsys)
    assert status == 0, err
    assert "quantile 1/10 x" in out and "quantile 9/10 x" in out and "1001 public grid points" in out
    assert "records" in out and "n = 2000" in out and "no value interval" in out
    status, out, err = run_cli([*argv, "--json", "--neighbours", "add_remove"], capsys)
    payload = json.loads(out)
    assert payload["rank_error"]["levels"] is None and len(payload["rank_error"]["records"]) == 2


def test_quantile_charges_the_budget_once(csv_file, tmp_path, capsys):
    ledger = tmp_path / "l.sqlite"
    assert run_cli(["budget", "create", ledger, "--total-epsilon", "2"], capsys)[0] == 0
    argv = ["release", "quantile", csv_file, *BASE, "--q", "0.25,0.5,0.75", "--epsilon", "0.9", "--budget", ledger]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err and "charged to" in out
    status, out, _ = run_cli(["budget", "show", ledger, "--json"], capsys)
    assert json.loads(out)["spent"] == pytest.approx(0.9) and json.loads(out)["entries"] == 1


@pytest.mark.parametrize(
    "extra, words",
    [
        (["quantile", "--q", "1.5"], "argument --q must be comma-separated numbers in [0, 1]. Got '1.5'"),
        (["quantile", "--q", "half"], "argument --q must be comma-separated numbers in [0, 1]. Got 'half'"),
        (["median", "--candidates", "1"], "argument --candidates: must be an int >= 2"),
        (["median", "--epsilon", "0"], "argument --epsilon"),
    ],
)
def test_errors_are_one_line_with_status_2(extra, words, csv_file, capsys):
    stat, *rest = extra
    argv = ["release", stat, csv_file, *BASE, *rest]
    if "--epsilon" not in rest:
        argv += ["--epsilon", "1"]
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, (status, out, err)
    assert words in err


def test_median_takes_one_column(csv_file, capsys):
    argv = ["release", "median", csv_file, "--column", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1"]
    status, _, err = run_cli([*argv, "--epsilon", "1"], capsys)
    assert status == 2 and "takes one column" in err
