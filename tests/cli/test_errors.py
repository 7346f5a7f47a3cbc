"""Every subcommand answers bad input with one line on stderr and exit status 2, never a traceback."""

import subprocess
import sys

import pytest

from tests.cli.conftest import run_cli

DATA = "{data}"
MEAN = ["release", "mean", DATA, "--column", "x", "--bounds", "x=0:10"]
LIN = ["fit", "linear", DATA, "--target", "y", "--features", "x", "--bounds", "x=0:10", "--bounds", "y=-10:40"]

# (argv, regex the one-line message must match)
CASES = [
    ([], r"^knorm: error: the following arguments are required: COMMAND"),
    (["frobnicate"], r"invalid choice: 'frobnicate'"),
    (["reproduce", "nope"], r"argument experiment: invalid choice: 'nope'"),
    (["reproduce", "--jobs", "0"], r"--jobs: must be an int >= 1. Got '0'"),
    (["reproduce", "--data", DATA], r"--data and --target must be given together"),
    (["reproduce", "--seed", "-3"], r"--seed: must be an int >= 0. Got '-3'"),
    (["demo", "--epsilon", "nan"], r"--epsilon: must be a float in the range \(0, inf\). Got 'nan'"),
    (["fit", "ridge"], r"invalid choice: 'ridge'"),
    ([*LIN, "--epsilon", "inf"], r"--epsilon: must be a float in the range \(0, inf\). Got 'inf'"),
    ([*LIN, "--epsilon", "1", "--norm", "l7"], r"--norm: invalid choice: 'l7'"),
    ([*LIN, "--epsilon", "1", "--q", "0.5"], r"option --q does not apply here \(it belongs to 'knorm fit logistic'\)"),
    (
        [
            "fit",
            "logistic",
            DATA,
            "--target",
            "label",
            "--features",
            "x",
            "--bounds",
            "x=0:10",
            "--classes",
            "0,1",
            "--epsilon",
            "1",
            "--q",
            "2",
        ],
        r"'q' parameter of LogisticRegression must be a float in the range \(0.0, 1.0\).* Got 2.0",
    ),
    (["fit", "linear", "nofile.csv", "--target", "y", "--epsilon", "1"], r"cannot read 'nofile.csv': no such file"),
    (["fit", "linear", DATA, "--target", "nope", "--epsilon", "1"], r"--target must name a column of .* Got 'nope'"),
    ([*MEAN, "--epsilon", "-1"], r"--epsilon: must be a float in the range \(0, inf\). Got '-1'"),
    (["release", "mean", DATA, "--column", "x", "--epsilon", "1"], r"refusing to run without declared bounds"),
    (["release", "mean", DATA, "--column", "x", "--bounds", "x=1:1", "--epsilon", "1"], r"finite LOWER < UPPER"),
    (["release", "mean", DATA, "--column", "w", "--bounds", "w=0:1", "--epsilon", "1"], r"'w' not among the columns"),
    (["release", "mean", DATA, "--column", "x,x", "--bounds", "x=0:1", "--epsilon", "1"], r"names a column twice"),
    (
        ["release", "var", DATA, "--column", "x,z", "--bounds", "x=0:10", "--bounds", "z=-1:1", "--epsilon", "1"],
        r"knorm release var takes one column. Got 2",
    ),
    (["release", "covariance", DATA, "--column", "x", "--bounds", "x=0:10", "--epsilon", "1"], r"two or more columns"),
    (
        ["release", "histogram", DATA, "--column", "x", "--bins", "0,5,5", "--epsilon", "1"],
        r"--bins must be at least 3 finite, strictly increasing edges \(2 or more bins\)\. Got '0,5,5'",
    ),
    (["release", "histogram", DATA, "--column", "x", "--bins", "a,b", "--epsilon", "1"], r"--bins must be comma-sep"),
    (["release", "count", DATA, "--column", "x", "--epsilon", "1"], r"0/1 indicators"),
    (["release", "count", DATA, "--epsilon", "1", "--neighbours", "replace"], r"count needs --neighbours add_remove"),
    ([*MEAN, "--epsilon", "1", "--alpha", "1"], r"--alpha: must be a float in the range \(0, 1\). Got '1'"),
    ([*MEAN, "--epsilon", "1", "--budget", "none.sqlite"], r"no privacy ledger at 'none.sqlite'"),
    ([*MEAN, "--epsilon", "1", "--drop-missing"], r"--drop-missing needs --neighbours add_remove"),
    (["release", "mode", DATA], r"invalid choice: 'mode'"),
    (["budget", "show", "none.sqlite"], r"no privacy ledger at 'none.sqlite'"),
    (["budget", "create", "x.sqlite"], r"one of the arguments --total-epsilon/--total --total-rho is required"),
    (["example-data", DATA], r"argument path must be a new file: .* exists already .* never overwrites"),
    (["example-data", "no-such-folder/x.csv"], r"cannot write 'no-such-folder/x.csv': its folder does not exist"),
    ([*MEAN, "--epsilon", "1", "--delimiter", "::"], r"--delimiter: must be one character .* Got '::'"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(a[:2]) or "(none)" for a, _ in CASES])
def test_one_line_and_status_2(argv, message, csv_file, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli([str(csv_file) if a == DATA else a for a in argv], capsys)
    assert status == 2, (out, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("knorm") and ": error: " in err
    assert pytest.importorskip("re").search(message, err), err


def test_every_subcommand_has_an_error_case():
    from knorm.cli import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert set(commands) <= {a[0] for a, _ in CASES if a}


def test_internal_errors_are_one_line_with_status_1(monkeypatch, capsys):
    from knorm.cli import build_parser

    def broken(args):
        raise RuntimeError("boom")

    parser = build_parser()
    args = parser.parse_args(["budget", "show", "x.sqlite"])
    args.func = broken
    monkeypatch.setattr("knorm.cli.build_parser", lambda: _FixedParser(args))
    status, _, err = run_cli(["budget", "show", "x.sqlite"], capsys)
    assert status == 1 and len(err.splitlines()) == 1
    # The type only: an unexpected error's message can quote the data.
    assert "internal error (RuntimeError); rerun with KNORM_DEBUG=1" in err and "boom" not in err
    monkeypatch.setenv("KNORM_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_cli(["budget", "show", "x.sqlite"], capsys)


class _FixedParser:
    def __init__(self, args):
        self.args = args

    def parse_known_args(self, argv):
        return self.args, []


def test_the_installed_entry_point_prints_no_traceback(tmp_path):
    # The real process: python -m knorm, as a user runs it.
    proc = subprocess.run(
        [sys.executable, "-m", "knorm", "release", "mean", "nofile.csv", "--column", "x", "--epsilon", "1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["knorm release mean: error: cannot read 'nofile.csv': no such file."]


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "option"),
    [("x;y\n1;2\n3;4\n", "';'"), ("x\ty\n1\t2\n3\t4\n", "tab"), ("x|y\n1|2\n3|4\n", "'|'")],
    ids=["semicolons", "tabs", "bars"],
)
def test_a_file_with_another_delimiter_names_the_option_that_reads_it(text, option, tmp_path, capsys):
    path = _write(tmp_path / "other.csv", text)
    commands = (
        ["release", "mean", path, "--column", "x", "--bounds", "x=0:5", "--epsilon", "1"],
        ["release", "count", path, "--epsilon", "1"],
        ["fit", "linear", path, "--target", "y", "--bounds", "x=0:5", "--bounds", "y=0:5", "--epsilon", "1"],
    )
    for argv in commands:
        status, out, err = run_cli(argv, capsys)
        assert status == 2 and out == "" and len(err.splitlines()) == 1, err
        assert f"Pass --delimiter {option}." in err and "single column" in err
        assert "x;y" not in err and "1;2" not in err  # nothing quoted from the file
    # ... and that option reads it: the same release as from the comma-separated file.
    delimiter = {"';'": ";", "tab": "tab", "'|'": "|"}[option]
    comma = _write(tmp_path / "comma.csv", "x,y\n1,2\n3,4\n")
    outputs = []
    for source, extra in ((path, ["--delimiter", delimiter]), (comma, [])):
        argv = ["release", "mean", source, "--column", "x", "--bounds", "x=0:5", "--epsilon", "1", "--seed", "5"]
        status, out, err = run_cli([*argv, "--json", *extra], capsys)
        assert status == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1] and '"value": [' in outputs[0]


def test_a_comma_file_read_with_another_delimiter_is_told_to_use_commas(tmp_path, capsys):
    path = _write(tmp_path / "comma.csv", "x,y\n1,2\n")
    status, _, err = run_cli(
        ["release", "mean", path, "--column", "x", "--bounds", "x=0:5", "--epsilon", "1", "--delimiter", ";"], capsys
    )
    assert status == 2 and "Pass --delimiter ','." in err


@pytest.mark.parametrize("text", ["", "\n\n"], ids=["empty", "blank lines"])
def test_an_empty_file_says_it_has_no_header_row(text, tmp_path, capsys):
    path = _write(tmp_path / "empty.csv", text)
    for argv in (
        ["release", "mean", path, "--column", "x", "--bounds", "x=0:5", "--epsilon", "1"],
        ["release", "count", path, "--epsilon", "1"],
        ["fit", "logistic", path, "--target", "y", "--classes", "0,1", "--epsilon", "1"],
    ):
        status, out, err = run_cli(argv, capsys)
        assert status == 2 and out == "" and len(err.splitlines()) == 1, err
        assert f"cannot read '{path}': the file is empty, so it has no header row" in err


def test_example_data_writes_the_packaged_file_and_never_overwrites(tmp_path, capsys):
    import hashlib

    from knorm.experiments.data import HOUSING_SHA256

    path = tmp_path / "housing.csv"
    status, out, _ = run_cli(["example-data", path], capsys)
    assert status == 0 and "20640 rows" in out and "median_house_value" in out
    assert hashlib.sha256(path.read_bytes()).hexdigest() == HOUSING_SHA256
    path.write_text("mine\n")
    status, _, err = run_cli(["example-data", path], capsys)
    assert status == 2 and "exists already" in err and path.read_text() == "mine\n"
