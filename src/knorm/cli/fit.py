"""``knorm fit linear|logistic``: a private regression on a CSV file."""

from __future__ import annotations

import numpy as np

from knorm.cli._common import (
    CLIError,
    add_budget,
    add_output,
    emit,
    open_budget,
    parse_bounds,
    positive_float,
    read_table,
    release_dict,
    seed_int,
)

__all__ = ["add_parser"]

_EXAMPLES = {
    "linear": """example:
  knorm fit linear houses.csv --target price --epsilon 1 \\
      --bounds price=0:1e6 --bounds rooms=1:10 --bounds age=0:100 --budget ledger.sqlite""",
    "logistic": """example:
  knorm fit logistic notes.csv --target forged --classes 0,1 --epsilon 1 \\
      --bounds variance=-8:8 --bounds skewness=-14:14""",
}
_BANNER = "CURATOR-ONLY DIAGNOSTICS: not private, depend on the data; do not publish"


def add_parser(sub, parser_class):
    """Add ``fit`` to the subcommands ``sub``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``knorm`` parser.
    parser_class : type
        The parser class to use for nested subcommands (one-line errors).

    Returns
    -------
    argparse.ArgumentParser
        The new subcommand's parser.
    """
    fit = sub.add_parser(
        "fit",
        help="fit a private linear or logistic regression on a CSV file",
        epilog=_EXAMPLES["linear"] + "\n" + _EXAMPLES["logistic"].replace("example:", "", 1),
        formatter_class=_raw(),
    )
    models = fit.add_subparsers(dest="model", required=True, parser_class=parser_class)
    for model, help_text in (
        ("linear", "ordinary least squares (functional mechanism)"),
        ("logistic", "logistic regression (objective perturbation)"),
    ):
        p = models.add_parser(model, help=help_text, epilog=_EXAMPLES[model], formatter_class=_raw())
        p.add_argument("data", help="CSV file with a header")
        p.add_argument("--target", required=True, help="response column")
        p.add_argument("--epsilon", type=positive_float, required=True, help="privacy budget of this fit")
        p.add_argument(
            "--bounds",
            action="append",
            metavar="COLUMN=LOWER:UPPER",
            help="declared domain of a column; required for every feature"
            + (" and the target" if model == "linear" else ""),
        )
        p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
        p.add_argument(
            "--neighbours",
            choices=["replace", "add_remove"],
            default="replace",
            help="neighbouring relation (default replace: n is public)",
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
        p.add_argument(
            "--diagnostics",
            action="store_true",
            help="also print curator-only diagnostics (not private) under a banner",
        )
        add_budget(p)
        add_output(p)
        if model == "linear":
            p.add_argument(
                "--norm",
                default="auto",
                choices=["auto", "l1", "l2", "linf", "kt", "cut"],
                help="K-norm of the noise (default auto: the best certified ball affordable)",
            )
            p.add_argument(
                "--postprocess",
                default="eigen",
                choices=["eigen", "pinv"],
                help="eigenvalue floor (default) or the paper's pseudo-inverse",
            )
        else:
            p.add_argument("--norm", default="linf", choices=["linf", "l2", "l1"], help="K-norm of the noise")
            p.add_argument("--q", default="auto", help="share of epsilon on the noise, in (0, 1), or 'auto'")
            labels = p.add_mutually_exclusive_group()
            labels.add_argument("--classes", help="the two labels, declared publicly, e.g. 0,1 (recommended)")
            labels.add_argument(
                "--public-labels",
                action="store_true",
                help="read the labels from the target column: reveals which labels occur",
            )
        p.set_defaults(func=run)
    return fit


def _raw():
    import argparse

    return argparse.RawDescriptionHelpFormatter


def _features(args, columns):
    if args.features:
        return [c.strip() for c in args.features.split(",") if c.strip()]
    return [c for c in columns if c != args.target]


def run(args):
    """Fit the model named by ``args.model`` and print its release."""
    pd = __import__("knorm.cli._common", fromlist=["optional"]).optional("pandas")
    if args.drop_missing and args.neighbours != "add_remove":
        raise CLIError(
            "option --drop-missing needs --neighbours add_remove: dropping rows makes n data-dependent, "
            "and n is public under replace-one neighbours."
        )
    try:
        header = list(pd.read_csv(args.data, nrows=0).columns)
    except FileNotFoundError:
        raise CLIError(f"cannot read {args.data!r}: no such file.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, IsADirectoryError) as err:
        raise CLIError(f"cannot read {args.data!r} as a CSV file with a header: {err}") from None
    if args.target not in header:
        raise CLIError(f"argument --target must name a column of {args.data}. Got {args.target!r}; columns: {header}.")
    features = _features(args, header)
    if not features:
        raise CLIError(
            f"{args.data} has no feature column besides the target {args.target!r}; name some with --features."
        )
    unknown = [c for c in features if c not in header]
    if unknown:
        raise CLIError(f"argument --features names columns not in {args.data}: {unknown}; columns: {header}.")
    needed = features + ([args.target] if args.model == "linear" else [])
    bounds = parse_bounds(args.bounds, needed)
    if args.model == "logistic":
        frame, n_dropped = read_table(args.data, features, drop_missing=args.drop_missing)
        labels = pd.read_csv(args.data, usecols=[args.target])[args.target].loc[frame.index]
        if labels.isna().any():
            raise CLIError(f"the target column {args.target!r} has missing labels.")
    else:
        frame, n_dropped = read_table(args.data, features + [args.target], drop_missing=args.drop_missing)
        labels = frame[args.target]
    X = frame[features]
    lo = [bounds[c][0] for c in features]
    hi = [bounds[c][1] for c in features]
    accountant = open_budget(args.budget)
    model = _model(args, (lo, hi), bounds, accountant)
    model.fit(X, labels.to_numpy())
    _report(args, model, features, n_dropped)
    return 0


def _model(args, bounds_X, bounds, accountant):
    from knorm.models import LinearRegression, LogisticRegression

    common = dict(
        epsilon=args.epsilon,
        bounds_X=bounds_X,
        neighbours=args.neighbours,
        accountant=accountant,
        random_state=args.seed,
    )
    if args.model == "linear":
        return LinearRegression(norm=args.norm, bounds_y=bounds[args.target], postprocess=args.postprocess, **common)
    q = args.q
    if q != "auto":
        try:
            q = float(q)
        except ValueError:
            raise CLIError(
                f"argument --q must be a float in the range (0, 1) or 'auto'. Got {args.q!r} instead."
            ) from None
    if args.classes is None and not args.public_labels:
        raise CLIError(
            "declare the two labels with --classes A,B (or pass --public-labels to read them from the "
            "data, which reveals which labels occur)."
        )
    extra = {"classes": _parse_classes(args.classes)} if args.classes else {"public_labels": True}
    return LogisticRegression(norm=args.norm, q=q, **extra, **common)


def _parse_classes(text):
    items = [c.strip() for c in text.split(",") if c.strip()]
    try:
        values = [float(c) for c in items]
        values = [int(v) if v.is_integer() else v for v in values]
    except ValueError:
        values = items
    return values


def _report(args, model, features, n_dropped):
    release = model.release_
    coef = np.ravel(model.coef_)
    intercept = float(np.ravel(model.intercept_)[0])
    lines = [
        f"knorm fit {args.model}: {args.data}, target {args.target}, epsilon {release.epsilon:g}"
        + (
            f", n = {model.n_samples_:.0f} (public under replace-one neighbours)"
            if args.model == "linear" and args.neighbours == "replace"
            else ""
        ),
        f"release: {release.mechanism}, {release.label}",
        f"noise: {release.ball_name} ball, certified sensitivity {release.sensitivity.value:g} "
        f"({release.sensitivity.kind}), noise scale {release.noise_scale:.4g}, sampler: {release.sampler}",
    ]
    if release.ledger_entry is not None:
        acc = model.accountant
        lines.append(
            f"charged to {args.budget}: entry {release.ledger_entry.position}; "
            f"{acc.spent:g} of {acc.total_epsilon:g} spent"
        )
    names = ["intercept", *features]
    width = max(len(c) for c in names)
    lines.append(f"{'':<{width}}  {'coefficient':>14}")
    lines += [f"{name:<{width}}  {v:>14.6g}" for name, v in zip(names, [intercept, *coef])]
    payload = {
        "command": f"fit {args.model}",
        "release": release_dict(release),
        "coefficients": dict(zip(features, coef.tolist())),
        "intercept": intercept,
    }
    if args.model == "linear" and args.neighbours == "replace":
        payload["n"] = int(model.n_samples_)
    if args.diagnostics:
        diag = dict(model.fit_diagnostics_.as_dict(), rows_dropped=n_dropped)
        lines += ["", _BANNER] + [f"  {k}: {v}" for k, v in diag.items()]
        payload["curator_only_diagnostics"] = diag
    emit(args, payload, lines)
