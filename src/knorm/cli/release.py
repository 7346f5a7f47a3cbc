"""``knorm release mean|var|std|sum|count|covariance|histogram|median|quantile``: a private statistic of a CSV file."""

from __future__ import annotations

import argparse
import math

import numpy as np

from knorm._docs import fill_doc
from knorm.cli._common import (
    CLIError,
    add_budget,
    add_data,
    add_output,
    add_privacy_budget,
    budget_words,
    emit,
    format_interval,
    format_number,
    new_parser,
    open_budget,
    parse_bounds,
    probability,
    read_csv,
    read_table,
    release_dict,
    seed_int,
    text_table,
)

__all__ = ["add_parser"]

_EXAMPLES = {
    "mean": "knorm release mean houses.csv --column price --bounds price=0:1e6 --epsilon 0.5",
    "var": "knorm release var houses.csv --column age --bounds age=0:100 --epsilon 1 --budget study.sqlite",
    "std": "knorm release std houses.csv --column age --bounds age=0:100 --epsilon 1",
    "sum": "knorm release sum sales.csv --column amount --bounds amount=0:500 --rho 0.5 --budget zcdp.sqlite",
    "count": "knorm release count visits.csv --column clicked,bought --epsilon 1   # no --column: the rows",
    "covariance": "knorm release covariance houses.csv --column rooms,age,income \\\n"
    "      --bounds rooms=1:10 --bounds age=0:100 --bounds income=0:15 --epsilon 1",
    "histogram": "knorm release histogram houses.csv --column age --bins 0,10,20,40,60,100 --epsilon 1",
    "median": "knorm release median houses.csv --column income --bounds income=0:15 --epsilon 1",
    "quantile": "knorm release quantile houses.csv --column income --bounds income=0:15 --q 0.1,0.9 --epsilon 1",
}
_HELP = {
    "mean": "the mean of one or more columns",
    "var": "the mean and variance of one column (released jointly)",
    "std": "the mean and standard deviation of one column (released jointly)",
    "sum": "the sums of one or more columns",
    "count": "the number of rows, or of 1s in 0/1 indicator columns (add/remove neighbours)",
    "covariance": "the means and covariance of several columns (released jointly)",
    "histogram": "counts over declared bins of one column",
    "median": "the median of one column (exponential mechanism on a public grid)",
    "quantile": "quantiles of one column (exponential mechanism on a public grid; epsilon split across levels)",
}
_CHOSEN = ("median", "quantile")  # released by the exponential mechanism: a rank bound, not an interval


@fill_doc
def add_parser(sub, parser_class):
    """Add ``release`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in _EXAMPLES.values())
    release = new_parser(
        sub,
        "release",
        "release a private mean, variance, covariance, histogram, sum, count, median or quantiles of a CSV file",
        epilog,
    )
    stats = release.add_subparsers(dest="statistic", required=True, parser_class=parser_class, metavar="STATISTIC")
    for name, help_text in _HELP.items():
        p = new_parser(stats, name, help_text, f"example:\n  {_EXAMPLES[name]}")
        add_data(p)
        p.add_argument(
            "--column",
            required=name != "count",
            help="the column, or comma-separated columns, to release"
            + (" (0/1 indicators; default: count the rows)" if name == "count" else ""),
        )
        add_privacy_budget(p, "this release")
        if name == "histogram":
            p.add_argument(
                "--bins",
                required=True,
                help="declared bin edges, increasing and comma-separated (values outside are clipped into the end bins)",
            )
        elif name != "count":
            p.add_argument(
                "--bounds",
                action="append",
                metavar="COLUMN=LOWER:UPPER",
                help="declared domain of each column (never read from the data)",
            )
        p.add_argument(
            "--neighbours",
            choices=["replace", "add_remove"],
            default="add_remove" if name == "count" else "replace",
            help="neighbouring relation (default replace: n is public"
            + ("; count needs add_remove)" if name == "count" else ")"),
        )
        if name in ("var", "std", "covariance"):
            p.add_argument("--ddof", type=int, default=0, help="delta degrees of freedom, as in numpy (default 0)")
        if name == "quantile":
            p.add_argument("--q", required=True, help="the levels, comma-separated numbers in [0, 1] (0.5: the median)")
        if name in _CHOSEN:
            p.add_argument(
                "--candidates",
                type=_grid_size,
                default=None,
                help="number of public grid points over the bounds (default 65537)",
            )
        p.add_argument(
            "--alpha",
            type=probability,
            default=0.05,
            help="1 - the coverage of the printed intervals (default 0.05)"
            if name not in _CHOSEN
            else "failure probability of the printed rank bound (default 0.05)",
        )
        if name not in _CHOSEN:
            p.add_argument(
                "--kind",
                choices=("noise", "population"),
                default="noise",
                help="what the intervals cover: this dataset's statistic (noise, the default) or the population "
                "parameter behind it (sampling error and noise together; mean, sum, var, std, covariance, histogram)",
            )
        p.add_argument(
            "--drop-missing", action="store_true", help="drop rows with missing values (add_remove neighbours only)"
        )
        p.add_argument(
            "--seed",
            type=seed_int,
            default=None,
            help="fixed seed, for tests and reproducible examples only (default: fresh OS entropy)",
        )
        add_budget(p)
        add_output(p)
        p.set_defaults(func=run)
    return release


def _grid_size(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 2 (grid points). Got {text!r} instead.") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be an int >= 2 (grid points). Got {text!r} instead.")
    return value


def _levels(text):
    try:
        levels = [float(v) for v in text.split(",")]
    except ValueError:
        raise CLIError(f"argument --q must be comma-separated numbers in [0, 1]. Got {text!r} instead.") from None
    if not all(0.0 <= v <= 1.0 for v in levels):
        raise CLIError(f"argument --q must be comma-separated numbers in [0, 1]. Got {text!r} instead.")
    return levels


def _columns(args):
    if args.column is None:  # count the rows
        return []
    columns = [c.strip() for c in args.column.split(",") if c.strip()]
    if not columns:
        raise CLIError(f"argument --column must name at least one column. Got {args.column!r} instead.")
    if len(set(columns)) != len(columns):
        raise CLIError(f"argument --column names a column twice. Got {args.column!r} instead.")
    single = args.statistic in ("var", "std", "histogram", *_CHOSEN)
    if single and len(columns) != 1:
        raise CLIError(f"knorm release {args.statistic} takes one column. Got {len(columns)}: {args.column!r}.")
    if args.statistic == "covariance" and len(columns) < 2:
        raise CLIError(f"knorm release covariance takes two or more columns. Got {args.column!r}.")
    return columns


def _rows(path, delimiter):
    """A frame with one constant column per CSV row (to count the rows)."""
    frame = read_csv(path, delimiter=delimiter)
    return frame.assign(rows=np.ones(len(frame)))[["rows"]]


def _bins(text):
    try:
        edges = [float(v) for v in text.split(",")]
    except ValueError:
        raise CLIError(f"argument --bins must be comma-separated numbers. Got {text!r} instead.") from None
    if len(edges) < 3 or not all(math.isfinite(e) for e in edges) or np.any(np.diff(edges) <= 0):
        raise CLIError(
            f"argument --bins must be at least 3 finite, strictly increasing edges (2 or more bins). Got {text!r} instead."
        )
    return edges


def run(args):
    """Release the statistic named by ``args.statistic`` and print it with intervals."""
    import knorm.stats as dp

    if args.drop_missing and args.neighbours != "add_remove":
        raise CLIError(
            "option --drop-missing needs --neighbours add_remove: dropping rows makes n data-dependent, "
            "and n is public under replace-one neighbours."
        )
    if args.statistic == "count" and args.neighbours != "add_remove":
        raise CLIError("knorm release count needs --neighbours add_remove: under replace-one neighbours n is public.")
    columns = _columns(args)
    edges = _bins(args.bins) if args.statistic == "histogram" else None
    levels = _levels(args.q) if args.statistic == "quantile" else None
    frame = (
        _rows(args.data, args.delimiter)
        if not columns
        else read_table(args.data, columns, drop_missing=args.drop_missing, delimiter=args.delimiter)[0]
    )
    bounds = parse_bounds(getattr(args, "bounds", None), [] if args.statistic in ("count", "histogram") else columns)
    # Exactly one of epsilon and rho (argparse has refused both and neither): the stats
    # functions take rho= for rho-zCDP releases (Gaussian noise) as they take epsilon=.
    budget = {"epsilon": args.epsilon} if args.rho is None else {"rho": args.rho}
    common = dict(
        **budget,
        neighbours=args.neighbours,
        accountant=open_budget(args.budget),
        rng=args.seed,
    )
    lo = [bounds[c][0] for c in columns if c in bounds]
    hi = [bounds[c][1] for c in columns if c in bounds]
    X = frame.to_numpy()
    stat = args.statistic
    if stat == "mean":
        release = dp.mean(X, (lo, hi), **common)
    elif stat == "sum":
        release = dp.sum(X, (lo, hi), **common)
    elif stat == "count":
        release = dp.count(X if columns else np.ones(len(X)), **common)
    elif stat in ("var", "std"):
        release = getattr(dp, stat)(X[:, 0], (lo[0], hi[0]), ddof=args.ddof, **common)
    elif stat == "covariance":
        release = dp.mean_and_covariance(X, (lo, hi), ddof=args.ddof, **common)
    elif stat in _CHOSEN:
        grid = {} if args.candidates is None else {"candidates": args.candidates}
        if stat == "median":
            release = dp.median(X[:, 0], (lo[0], hi[0]), **grid, **common)
        else:
            release = dp.quantile(X[:, 0], levels, (lo[0], hi[0]), **grid, **common)
        _report_chosen(args, release, columns, len(X))
        return 0
    else:
        release = dp.histogram(X[:, 0], edges, **common)
    _report(args, release, columns)
    return 0


def _report_chosen(args, release, columns, n):
    """Print a median or quantiles with their rank bound (an exponential-mechanism release has no interval)."""
    t = release.score_error(args.alpha)
    public_n = args.neighbours == "replace"
    names = [f"{name} {columns[0]}" for name in release.names]
    lines = [
        f"knorm release {args.statistic}: {args.data}, column {columns[0]}, {budget_words(release)}"
        + (", n public (replace-one neighbours)" if public_n else ", n private (add/remove)"),
        f"exponential mechanism over {format_number(release.n_candidates)} public grid points, sampled exactly",
    ]
    if release.ledger_entry is not None:
        lines.append(f"charged to {args.budget}: entry {release.ledger_entry.position}")
    rows = [[name, format_number(v), f"{format_number(e)} records"] for name, v, e in zip(names, release.value, t)]
    lines += text_table(["", "value", f"rank error ({1 - args.alpha:.0%})"], rows)
    lines.append(
        "rank error: with the stated probability the value's rank is within it of q n (the data rounded to the grid)"
        + (
            f"; here n = {format_number(n)}, so the value is a q'-quantile with |q' - q| <= error / n"
            if public_n
            else ""
        )
        + "; no value interval (it would need the data's distribution)"
    )
    payload = {
        "command": f"release {args.statistic}",
        "columns": columns,
        "names": names,
        "release": release_dict(release),
        "rank_error": {"alpha": args.alpha, "records": t, "levels": (t / n) if public_n else None},
    }
    emit(args, payload, lines)


def _report(args, release, columns):
    value = np.ravel(release.value)
    names = list(release.names) or [f"{args.statistic} {c}" for c in columns]
    names = [_rename(n, columns) for n in names]
    if args.statistic == "count":
        names = [f"count {c}" for c in columns] or ["rows"]
    interval, refused = release.conf_int(args.alpha), None
    if args.kind == "population":
        # The release is made and charged: a refusal still prints it, with the noise intervals and the reason.
        try:
            interval = release.conf_int(args.alpha, kind="population")
        except ValueError as exc:
            refused = str(exc)
    ci = np.asarray(interval)
    gain = release.gain
    lines = [
        f"knorm release {args.statistic}: {args.data}, {'column ' + ', '.join(columns) if columns else 'rows'}, "
        f"{budget_words(release)}"
        + (", n public (replace-one neighbours)" if args.neighbours == "replace" else ", n private (add/remove)"),
        _noise_line(release),
    ]
    if release.ledger_entry is not None:
        lines.append(f"charged to {args.budget}: entry {release.ledger_entry.position}")
    rows = [[n, format_number(v), format_interval(a, b)] for n, v, (a, b) in zip(names, value, ci)]
    lines += text_table(["", "value", f"{1 - args.alpha:.0%} interval"], rows)
    if interval.kind == "population":
        lines.append(f"intervals: {interval.method}; they cover the population parameter (sampling error and noise)")
    else:
        lines.append(f"intervals: {interval.method}; they cover this dataset's statistic (the noise), not a population")
    if refused is not None:
        lines.append(f"population intervals refused: {refused}")
    payload = {
        "command": f"release {args.statistic}",
        "columns": columns,
        "names": names,
        "release": release_dict(release),
        "gain_over_laplace": gain if math.isfinite(gain) else None,
        "intervals": {
            "alpha": args.alpha,
            "kind": interval.kind,
            "method": interval.method,
            "lower": ci[:, 0],
            "upper": ci[:, 1],
            "population_refused": refused,
        },
    }
    emit(args, payload, lines)


def _noise_line(release):
    """How the noise was made: K-norm (epsilon) or Gaussian (rho), with the certified sensitivity."""
    sens = f"certified sensitivity {format_number(release.sensitivity.value)} ({release.sensitivity.kind})"
    if release.rho is not None:
        return (
            f"noise: Gaussian (rho-zCDP), {release.ball_name} shape, {sens}, sigma {format_number(release.noise_scale)}"
        )
    gain = release.gain
    return f"noise: K-norm with K = {release.ball_name}, {sens}" + (
        f"; Laplace would need {format_number(gain)}x the epsilon" if math.isfinite(gain) else ""
    )


def _rename(name, columns):
    """Map the library's generic coordinate names ('mean x2', 'cov 1,2') to the CSV's column names."""
    import re

    def col(match):
        return columns[int(match.group(1)) - 1]

    if name.startswith("cov "):
        return "cov " + re.sub(r"(\d+)", col, name[4:])
    return re.sub(r"\bx(\d+)\b", col, name)
