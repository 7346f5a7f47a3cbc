"""What the CLI prints: one number format, and JSON that says each thing once."""

import json
import re

import pytest

from knorm.cli._common import format_interval, format_number, text_table
from tests.cli.conftest import run_cli

LINEAR = ["fit", "linear", "--target", "y", "--features", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1"]
LINEAR_BOUNDS = ["--bounds", "y=-10:40"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.873658, "3.87366"),
        (-1067120.4, "-1.06712e+06"),
        (1237800.0, "1.2378e+06"),
        (12, "12"),
        (0.5, "0.5"),
        (-0.0, "0"),
        (float("inf"), "inf"),
        (1e-7, "1e-07"),
    ],
)
def test_one_number_format(value, text):
    assert format_number(value) == text


def test_intervals_have_no_padding_inside_their_brackets():
    assert format_interval(-1067120.4, 1237800.0) == "[-1.06712e+06, 1.2378e+06]"
    assert text_table(["", "value"], [["a", "1"], ["long name", "22.5"]]) == [
        "           value",
        "a              1",
        "long name   22.5",
    ]


# A number as the CLI may print it: format_number's output and nothing longer than 6 significant digits.
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?")


def _numbers_in_brackets(out):
    return re.findall(r"\[([^\]]*)\]", out)


@pytest.mark.parametrize(
    "argv",
    [
        [*LINEAR, *LINEAR_BOUNDS, "--epsilon", "1", "--seed", "3"],
        ["release", "covariance", "--column", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1", "--epsilon", "1"],
        ["release", "mean", "--column", "x", "--bounds", "x=0:10", "--epsilon", "1", "--seed", "3"],
    ],
)
def test_tables_print_numbers_in_one_format(argv, csv_file, capsys):
    argv = [*argv[:2], csv_file, *argv[2:]] if argv[0] == "release" else [*argv, csv_file]
    status, out, err = run_cli(argv, capsys)
    assert status == 0, err
    intervals = [b for b in _numbers_in_brackets(out) if "," in b and not b.startswith("'")]
    assert intervals, out
    for inner in intervals:
        lo, hi = inner.split(", ")
        assert inner == inner.strip() and lo == format_number(float(lo)) and hi == format_number(float(hi))
    for line in out.splitlines():
        for token in _NUMBER.findall(line):
            digits = re.sub(r"e[+-]\d+$", "", token).lstrip("-").replace(".", "").lstrip("0")
            assert len(digits) <= 6, (token, line)


def _fit_json(csv_file, capsys, *extra):
    status, out, err = run_cli(
        [*LINEAR, csv_file, *LINEAR_BOUNDS, "--epsilon", "2", "--seed", "5", "--json", *extra], capsys
    )
    assert status == 0, err
    return json.loads(out)


def _walk(obj, path=()):
    """Every (path, leaf) of a JSON value."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _walk(v, (*path, i))
    else:
        yield path, obj


def test_fit_json_says_each_thing_once(csv_file, tmp_path, capsys):
    ledger = tmp_path / "study.sqlite"
    run_cli(["budget", "create", ledger, "--total-epsilon", "5"], capsys)
    payload = _fit_json(csv_file, capsys, "--budget", ledger)
    assert list(payload) == ["command", "data", "target", "n", "coefficients", "intervals", "privacy", "ledger"]
    names = ["intercept", "x", "z"]
    assert list(payload["coefficients"]) == names
    intervals = payload["intervals"]
    assert set(intervals) == {"alpha", "method", "lower", "upper"}
    assert list(intervals["lower"]) == list(intervals["upper"]) == names
    assert all(intervals["lower"][n] < payload["coefficients"][n] < intervals["upper"][n] for n in names)
    (release,) = payload["privacy"]["releases"]
    assert payload["privacy"]["epsilon"] == release["epsilon"] == 2 and payload["privacy"]["neighbours"] == "replace"
    assert set(release) == {
        "label",
        "method",
        "epsilon",
        "rho",
        "ball",
        "sensitivity",
        "noise_scale",
        "sampler",
        "caveats",
    }
    assert payload["ledger"]["entries"][0]["position"] == 0 and payload["ledger"]["spent"] == 2
    assert payload["ledger"]["total"] == 5 and payload["n"] == 2000
    # No raw statistic anywhere: the release's value (9 scaled sums for p = 2, the same seed) is not in the output.
    raw = _fit_json(csv_file, capsys, "--debug")["debug_released_statistics"][0]["value"]
    leaves = [v for _, v in _walk(payload) if isinstance(v, float)]
    assert len(raw) == 9 and not set(raw) & set(leaves)
    assert len(leaves) == 16  # 3 coefficients, alpha and 6 interval ends, 4 privacy terms, spent and total: once each


def test_fit_json_without_a_budget_has_no_ledger_and_nothing_curator_only(csv_file, capsys):
    payload = _fit_json(csv_file, capsys)
    assert payload["ledger"] is None
    assert "curator_only_diagnostics" not in payload and "debug_released_statistics" not in payload


def test_the_raw_statistics_and_diagnostics_come_only_on_request_and_named(csv_file, capsys):
    payload = _fit_json(csv_file, capsys, "--debug", "--diagnostics")
    (raw,) = payload["debug_released_statistics"]
    assert raw["label"] == payload["privacy"]["releases"][0]["label"] and len(raw["value"]) == 9
    assert payload["curator_only_diagnostics"]["n_records"] == 2000
    status, out, _ = run_cli([*LINEAR, csv_file, *LINEAR_BOUNDS, "--epsilon", "2", "--debug"], capsys)
    assert status == 0 and "released statistics (--debug; private, in the model's scaled units):" in out
    assert "CURATOR-ONLY" not in out


def test_logistic_json_names_every_class_and_coefficient(csv_file, capsys):
    argv = ["fit", "logistic", csv_file, "--target", "label", "--features", "x,z", "--bounds", "x=0:10"]
    argv += ["--inference-share", "auto"]  # the default is 0: no information, no intervals
    status, out, err = run_cli([*argv, "--bounds", "z=-1:1", "--classes", "0,1", "--epsilon", "5", "--json"], capsys)
    assert status == 0, err
    payload = json.loads(out)
    assert list(payload["coefficients"]) == ["intercept", "x", "z"] and payload["n"] is None
    assert len(payload["privacy"]["releases"]) == 2  # the model and the Fisher information, once each
    # These labels are nearly separable in x (label = 1[2x + 1 + N(0, 1) > 11]): the intervals are refused,
    # with the public reason, instead of printed narrow and wrong (issue 23).
    assert payload["intervals"] is None and "refuses to give intervals" in payload["intervals_refused"]
