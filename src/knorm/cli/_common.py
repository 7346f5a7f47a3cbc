"""Conventions shared by every subcommand: one-line errors, CSV input, bounds, budgets, JSON."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import re
import sys

import numpy as np

__all__ = [
    "CLIError",
    "KnormParser",
    "add_budget",
    "add_data",
    "add_privacy_budget",
    "budget_words",
    "add_output",
    "csv_problem",
    "emit",
    "format_interval",
    "format_number",
    "ledger_entry_dict",
    "ledger_errors",
    "open_budget",
    "optional",
    "parse_bounds",
    "positive_float",
    "privacy_terms",
    "probability",
    "read_csv",
    "read_table",
    "release_dict",
    "seed_int",
    "text_table",
]

# Optional dependencies and the extra that installs each.
_EXTRAS = {"pandas": "tables", "matplotlib": "plot", "dask": "dask", "tqdm": "reproduce"}


class CLIError(Exception):
    """A user error the CLI reports on one line, with exit status 2."""


class KnormParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line on stderr and exit status 2."""

    def error(self, message):
        """Print ``message`` on one line and exit with status 2.

        Parameters
        ----------
        message : str
            What is wrong.
        """
        print(f"{self.prog}: error: {_one_line(message)}", file=sys.stderr)
        raise SystemExit(2)


def new_parser(sub, name, help, epilog):
    """Add the subcommand ``name`` to ``sub``: its help line, and its examples shown as written.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        Where the subcommand goes.
    name : str
        The subcommand.
    help : str
        Its one-line help.
    epilog : str
        Its examples, printed after the options with their line breaks kept.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser.
    """
    return sub.add_parser(name, help=help, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)


def _one_line(text):
    return " ".join(str(text).split())


def optional(module):
    """Import an optional dependency, or fail with the pip command that installs it.

    Parameters
    ----------
    module : str
        The module's name ('pandas', 'matplotlib', ...).

    Returns
    -------
    module
        The imported module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        extra = _EXTRAS.get(module.split(".")[0], "reproduce")
        raise CLIError(f'this command needs {module}, which is not installed: pip install "knorm[{extra}]"') from err


def probability(text):
    """argparse type: a float in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a float in the range (0, 1). Got {text!r} instead.") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a float in the range (0, 1). Got {text!r} instead.")
    return value


def positive_float(text):
    """Parse a float in (0, inf) for argparse (epsilon, totals)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a float in the range (0, inf). Got {text!r} instead.") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a float in the range (0, inf). Got {text!r} instead.")
    return value


def seed_int(text):
    """Parse a seed: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 0. Got {text!r} instead.") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0. Got {text!r} instead.")
    return value


def parse_bounds(items, columns):
    """Return {column: (lower, upper)} from ``--bounds COLUMN=LOWER:UPPER`` items.

    Parameters
    ----------
    items : list of str or None
        The repeated ``--bounds`` values.
    columns : list of str
        The columns that need a bound; each must have exactly one, and no other may have one.

    Returns
    -------
    dict
        Bounds by column.
    """
    bounds = {}
    for text in items or []:
        try:
            col, span = text.rsplit("=", 1)
            lo, hi = (float(v) for v in span.split(":"))
        except ValueError:
            raise CLIError(f"argument --bounds must look like COLUMN=LOWER:UPPER. Got {text!r} instead.") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise CLIError(f"argument --bounds must have finite LOWER < UPPER. Got {text!r} instead.")
        bounds[col] = (lo, hi)
    unused = [c for c in bounds if c not in columns]
    if unused:
        raise CLIError(
            f"argument --bounds names columns that are not used: {', '.join(map(repr, unused))} "
            f"(used: {', '.join(columns)})."
        )
    absent = [c for c in columns if c not in bounds]
    if absent:
        raise CLIError(
            "refusing to run without declared bounds (they are never taken from the data, which would leak "
            f"privacy). Missing --bounds for: {', '.join(absent)}. Example: --bounds {absent[0]}=0:100"
        )
    return bounds


def csv_problem(err):
    """What is wrong with a CSV file pandas could not read, in words that quote nothing from it.

    pandas' and Python's messages can quote the file (a decoding error shows the byte); the
    line number of a ragged row and the field counts are kept, values never.
    """
    if isinstance(err, UnicodeDecodeError):
        return f"it is not {err.encoding} text"
    if isinstance(err, IsADirectoryError):
        return "it is a directory, not a CSV file"
    ragged = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(err))
    if ragged:
        return f"line {ragged[2]} has {ragged[3]} fields where the header has {ragged[1]}"
    if type(err).__name__ == "EmptyDataError":
        return "it is empty (no header row)"
    return "pandas could not parse it (its message is withheld: it can quote the file)"


# Delimiters a one-column header is checked for: how to pass each to --delimiter, and its name.
_DELIMITERS = {",": ("','", "commas"), ";": ("';'", "semicolons"), "\t": ("tab", "tabs"), "|": ("'|'", "bars")}


def delimiter(text):
    """Parse ``--delimiter``: one character, or the word 'tab'."""
    value = "\t" if text in ("tab", "\\t") else text
    if len(value) != 1 or value in '"\r\n' or value.isalnum():
        raise argparse.ArgumentTypeError(
            f"must be one character that is not a letter, a digit, a quote or a newline, or 'tab'. Got {text!r} instead."
        )
    return value


def add_data(parser):
    """Add the positional ``data`` (a CSV file with a header) and ``--delimiter``."""
    parser.add_argument("data", help="CSV file with a header row")
    parser.add_argument(
        "--delimiter",
        type=delimiter,
        default=",",
        help="the character between fields: ',' (default), ';', tab, ...",
    )


def read_csv(path, *, delimiter=",", **kwargs):
    """Read the CSV file ``path`` with pandas, every file problem turned into a one-line CLIError.

    Parameters
    ----------
    path : str
        The CSV file.
    delimiter : str, default ','
        The field separator (``--delimiter``).
    **kwargs
        Passed to ``pandas.read_csv`` (``nrows``, ``usecols``).

    Returns
    -------
    pandas.DataFrame
        The file.

    Raises
    ------
    CLIError
        A missing file, a directory, an empty file (no header row), a ragged row, text that
        is not UTF-8, and a header that is one column holding another delimiter (the file was
        written with ';' or tabs: the message names the ``--delimiter`` to pass). Nothing from
        the file is quoted.
    """
    pd = optional("pandas")
    try:
        frame = pd.read_csv(path, sep=delimiter, **kwargs)
    except FileNotFoundError:
        raise CLIError(f"cannot read {path!r}: no such file.") from None
    except IsADirectoryError:
        raise CLIError(f"cannot read {path!r}: it is a directory, not a CSV file.") from None
    except PermissionError:
        raise CLIError(f"cannot read {path!r}: permission denied.") from None
    except pd.errors.EmptyDataError:
        raise CLIError(
            f"cannot read {path!r}: the file is empty, so it has no header row. Give a CSV file whose first line "
            "names the columns."
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise CLIError(f"cannot read {path!r} as a CSV file with a header: {csv_problem(err)}.") from None
    if frame.shape[1] == 1 and "usecols" not in kwargs:
        others = [d for d in _DELIMITERS if d != delimiter and d in str(frame.columns[0])]
        if others:
            option, name = _DELIMITERS[others[0]]
            used = _DELIMITERS.get(delimiter, (repr(delimiter), ""))[0]
            raise CLIError(
                f"cannot read {path!r}: split at --delimiter {used} it has a single column, and its header row "
                f"holds {name}: the file looks separated by {name}. Pass --delimiter {option}."
            )
    return frame


def read_table(path, columns, *, drop_missing=False, delimiter=","):
    """Read the ``columns`` of a CSV file with a header, checked to be numeric and complete.

    Parameters
    ----------
    path : str
        The CSV file.
    columns : list of str
        The columns to read.
    drop_missing : bool, default False
        Drop rows with a missing value instead of refusing them.
    delimiter : str, default ','
        The field separator (``--delimiter``).

    Returns
    -------
    frame : pandas.DataFrame
        The columns, as floats.
    n_dropped : int
        Rows dropped (curator-only: it depends on the data).

    Raises
    ------
    CLIError
        Naming the file, the column and the rule; a count of offending rows at most
        (curator-only), never a value from the file.
    """
    pd = optional("pandas")
    frame = read_csv(path, delimiter=delimiter)
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise CLIError(f"{', '.join(map(repr, unknown))} not among the columns of {path}: {list(frame.columns)}.")
    frame = frame[columns]
    if frame.empty:
        raise CLIError(f"{path} has a header but no data rows.")
    missing = int(frame.isna().any(axis=1).sum())
    if missing and not drop_missing:
        raise CLIError(
            f"rows of {path} have missing values in the columns used. Clean the file, or drop them with "
            "--drop-missing (which needs --neighbours add_remove: dropping makes n data-dependent)."
        )
    frame = frame.dropna()
    bad = [c for c in columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        # The column and how many cells (curator-only: a count of the data), never the cells.
        counts = ", ".join(
            f"column {c!r} holds {int(pd.to_numeric(frame[c], errors='coerce').isna().sum())} non-numeric value(s)"
            for c in bad
        )
        raise CLIError(
            f"{counts} (of {len(frame)} rows) in {path}. Encode them (e.g. as 0/1 indicators) or leave the "
            "column out; the values are not shown: they are data."
        )
    if frame.empty:
        raise CLIError(f"{path} has no complete row in the columns used.")
    frame = frame.astype(float)
    infinite = [c for c in columns if not np.isfinite(frame[c]).all()]
    if infinite:
        raise CLIError(
            f"columns {infinite} of {path} hold infinite values. Replace them (no value is dropped or clipped silently)."
        )
    return frame, missing


def add_privacy_budget(parser, what):
    """Add ``--epsilon E`` and ``--rho R``, exactly one of them required (pure epsilon-DP or rho-zCDP).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    what : str
        What the budget pays for ('this fit', 'this release'), for the help.
    """
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--epsilon", type=positive_float, help=f"pure epsilon-DP budget of {what}, in (0, inf)")
    group.add_argument(
        "--rho",
        type=positive_float,
        help=f"instead: rho-zCDP budget of {what}, in (0, inf) (charge it to a ledger made with --total-rho)",
    )


def budget_words(release):
    """'epsilon E' or 'rho R': the budget a release spent, for a report line.

    Parameters
    ----------
    release : Release
        The record.

    Returns
    -------
    str
        The unit and its value.
    """
    if release.rho is not None:
        return f"rho {format_number(release.rho)}"
    return f"epsilon {format_number(release.epsilon)}"


def add_budget(parser):
    """Add ``--budget PATH`` (a file ledger charged by the release)."""
    parser.add_argument(
        "--budget",
        metavar="LEDGER",
        help="SQLite privacy ledger to charge (create one with 'knorm budget create'); refused past its total",
    )


def add_output(parser):
    """Add ``--json`` (machine-readable output)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


@contextlib.contextmanager
def ledger_errors(path, *, create=False):
    """Turn every error of opening or creating the ledger file ``path`` into a one-line CLIError.

    A missing file says how to create one; the others (an existing path given to create, a
    directory, a read-only file or directory, an empty, truncated or damaged file, a file
    that is not a ledger) keep the library's one-line message, which names the path.
    """
    try:
        yield
    except FileNotFoundError as err:
        if not create:
            raise CLIError(
                f"no privacy ledger at {str(path)!r}: create it with 'knorm budget create {path} --total-epsilon E' "
                "(or --total-rho R for a rho-zCDP budget)."
            ) from None
        raise CLIError(str(err)) from None
    except (OSError, ValueError) as err:  # FileExistsError, IsADirectoryError, PermissionError, damaged files
        raise CLIError(str(err)) from None


def open_budget(path):
    """Open the file ledger at ``path`` (it must exist), or return None when no path is given."""
    if path is None:
        return None
    from knorm.accounting import PrivacyAccountant

    with ledger_errors(path):
        return PrivacyAccountant.open(path)


def format_number(x):
    """Return one number as the CLI prints it everywhere: 6 significant digits, no padding.

    Parameters
    ----------
    x : float or int
        The number (a numpy scalar too).

    Returns
    -------
    str
        ``format(x, '.6g')`` for a float (so 1e6 is '1e+06' and 1234567.8 is
        '1.23457e+06'), the digits of an integer, 'inf', '-inf' or 'nan'; '-0' is '0'.

    Examples
    --------
    >>> [format_number(v) for v in (3.873658, -1067120.4, 12, 0.5, -0.0)]
    ['3.87366', '-1.06712e+06', '12', '0.5', '0']
    """
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    text = f"{float(x):.6g}"
    return "0" if text == "-0" else text


def format_interval(lower, upper):
    """Return ``[lower, upper]`` with both ends in :func:`format_number`, no padding inside the brackets.

    Parameters
    ----------
    lower, upper : float
        The ends.

    Returns
    -------
    str
        For example '[-1.06712e+06, 1.2378e+06]'.
    """
    return f"[{format_number(lower)}, {format_number(upper)}]"


def text_table(head, rows, left=(0,)):
    """Return the lines of a table: numbers right-aligned, the text columns ``left`` left-aligned.

    Parameters
    ----------
    head : sequence of str
        The column titles.
    rows : sequence of sequence of str
        The cells, already formatted (:func:`format_number`, :func:`format_interval`).
    left : tuple of int, default (0,)
        The columns aligned left (names, labels); the others are aligned right.

    Returns
    -------
    list of str
        The title line, then one line per row, columns two spaces apart.
    """
    table = [[str(c) for c in head], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[j]) for r in table) for j in range(len(head))]
    return [
        "  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in table
    ]


def privacy_terms(release):
    """Return the public terms of a Release's guarantee as plain JSON types (no value, no ledger entry).

    Parameters
    ----------
    release : Release
        The record.

    Returns
    -------
    dict
        Label, method, the budget spent (epsilon, or rho for a zCDP release), ball,
        sensitivity (value and kind), noise scale, sampler and caveats.
    """
    return {
        "label": release.label,
        "method": release.method,
        "epsilon": release.epsilon,
        "rho": release.rho,
        "ball": release.ball_name,
        "sensitivity": {"value": release.sensitivity.value, "kind": release.sensitivity.kind},
        "noise_scale": release.noise_scale,
        "sampler": release.sampler,
        "caveats": list(release.caveats),
    }


def ledger_entry_dict(entry):
    """Return the public part of a ledger entry (position and time), or None."""
    if entry is None:
        return None
    return {"position": getattr(entry, "position", None), "time": str(getattr(entry, "time", ""))}


def release_dict(release):
    """Return a Release as plain JSON types: its value and the public terms of its guarantee.

    Parameters
    ----------
    release : Release
        The record.

    Returns
    -------
    dict
        The value, the :func:`privacy_terms`, and the ledger entry's position and time
        when one was charged.
    """
    return {
        "value": np.asarray(release.value).tolist(),
        **privacy_terms(release),
        "ledger_entry": ledger_entry_dict(release.ledger_entry),
    }


def emit(args, payload, text):
    """Print ``payload`` as JSON when ``--json`` was given, else the lines of ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=1, default=_jsonable))
    else:
        print("\n".join(text))


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)
