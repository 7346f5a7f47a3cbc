"""``knorm fit linear|logistic``: a private regression on a CSV file."""

from __future__ import annotations

import numpy as np

from knorm._docs import fill_doc
from knorm.cli._common import (
    CLIError,
    add_budget,
    add_data,
    add_output,
    emit,
    new_parser,
    open_budget,
    parse_bounds,
    positive_float,
    probability,
    read_csv,
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
      --bounds variance=-8:8 --bounds skewness=-14:14
  knorm fit logistic iris.csv --target species --classes setosa,versicolor,virginica --epsilon 4 \\
      --bounds sepal_length=4:8 --bounds petal_length=1:7""",
}
_BANNER = "CURATOR-ONLY DIAGNOSTICS: not private, depend on the data; do not publish"


@fill_doc
def add_parser(sub, parser_class):
    """Add ``fit`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    fit = new_parser(
        sub,
        "fit",
        "fit a private linear or logistic regression on a CSV file",
        _EXAMPLES["linear"] + "\n" + _EXAMPLES["logistic"].replace("example:", "", 1),
    )
    models = fit.add_subparsers(dest="model", required=True, parser_class=parser_class)
    for model, help_text in (
        ("linear", "ordinary least squares (functional mechanism)"),
        ("logistic", "logistic regression (objective perturbation)"),
    ):
        p = new_parser(models, model, help_text, _EXAMPLES[model])
        add_data(p)
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
        p.add_argument(
            "--alpha",
            type=probability,
            default=0.05,
            help="1 - the coverage of the printed confidence intervals (default 0.05)",
        )
        p.add_argument(
            "--sampler",
            choices=["auto", "lattice", "continuous"],
            default="auto",
            help="noise sampler (default auto: exact lattice noise where the ball allows it; continuous noise is "
            "exposed to floating-point attacks)",
        )
        add_budget(p)
        add_output(p)
        if model == "linear":
            p.add_argument(
                "--norm",
                default="auto",
                choices=["auto", "split", "l1", "l2", "linf", "kt", "cut"],
                help="K-norm of the noise (default auto: 'split' under replace-one neighbours, the design and "
                "response blocks with a public split of epsilon; else the best certified ball affordable)",
            )
            p.add_argument(
                "--postprocess",
                default="eigen",
                choices=["eigen", "pinv"],
                help="eigenvalue floor (default) or the paper's pseudo-inverse",
            )
        else:
            p.add_argument(
                "--norm",
                default="auto",
                choices=["auto", "linf", "l2", "l1", "softmax"],
                help="K-norm of the noise (default auto: l_inf for two classes, the softmax ball for more)",
            )
            p.add_argument("--q", default="auto", help="share of epsilon on the noise, in (0, 1), or 'auto'")
            p.add_argument(
                "--inference-share",
                default="0",
                help="share of epsilon spent on the Fisher information behind the intervals, in [0, 1), or 'auto' "
                "(default 0: all of epsilon on the coefficients, no intervals)",
            )
            p.add_argument(
                "--multi-class",
                choices=["multinomial", "ovr"],
                default="multinomial",
                help="more than two classes: one multinomial fit (default) or one-vs-rest",
            )
            labels = p.add_mutually_exclusive_group()
            labels.add_argument(
                "--classes", help="the labels, declared publicly, e.g. 0,1 or setosa,versicolor,virginica (recommended)"
            )
            labels.add_argument(
                "--public-labels",
                action="store_true",
                help="read the labels from the target column: reveals which labels occur",
            )
        p.set_defaults(func=run)
    return fit


def _share(text, option, rule):
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise CLIError(f"argument {option} must be a float in {rule} or 'auto'. Got {text!r} instead.") from None


def _features(args, columns):
    if args.features:
        return [c.strip() for c in args.features.split(",") if c.strip()]
    return [c for c in columns if c != args.target]


def run(args):
    """Fit the model named by ``args.model`` and print its release."""
    if args.drop_missing and args.neighbours != "add_remove":
        raise CLIError(
            "option --drop-missing needs --neighbours add_remove: dropping rows makes n data-dependent, "
            "and n is public under replace-one neighbours."
        )
    header = list(read_csv(args.data, delimiter=args.delimiter, nrows=0).columns)
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
        frame, n_dropped = read_table(args.data, features, drop_missing=args.drop_missing, delimiter=args.delimiter)
        labels = read_csv(args.data, delimiter=args.delimiter, usecols=[args.target])[args.target].loc[frame.index]
        if labels.isna().any():
            raise CLIError(f"the target column {args.target!r} has missing labels.")
    else:
        frame, n_dropped = read_table(
            args.data, features + [args.target], drop_missing=args.drop_missing, delimiter=args.delimiter
        )
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
        sampler=args.sampler,
    )
    if args.model == "linear":
        return LinearRegression(norm=args.norm, bounds_y=bounds[args.target], postprocess=args.postprocess, **common)
    q = _share(args.q, "--q", "(0, 1)")
    if args.classes is None and not args.public_labels:
        raise CLIError(
            "declare the labels with --classes A,B[,C...] (or pass --public-labels to read them from the "
            "data, which reveals which labels occur)."
        )
    extra = {"classes": _parse_classes(args.classes)} if args.classes else {"public_labels": True}
    return LogisticRegression(
        norm=args.norm,
        q=q,
        inference_share=_share(args.inference_share, "--inference-share", "[0, 1)"),
        multi_class=args.multi_class,
        **extra,
        **common,
    )


def _parse_classes(text):
    items = [c.strip() for c in text.split(",") if c.strip()]
    try:
        values = [float(c) for c in items]
        values = [int(v) if v.is_integer() else v for v in values]
    except ValueError:
        values = items
    return values


def _report(args, model, features, n_dropped):
    releases = tuple(getattr(model, "releases_", (model.release_,)))
    release = model.release_
    epsilon = sum(r.epsilon for r in releases)
    coef = np.atleast_2d(model.coef_)
    intercept = np.ravel(model.intercept_)
    lines = [
        f"knorm fit {args.model}: {args.data}, target {args.target}, epsilon {epsilon:g}"
        + (
            f", n = {model.n_samples_:.0f} (public under replace-one neighbours)"
            if args.model == "linear" and args.neighbours == "replace"
            else ""
        ),
    ]
    for r in releases:
        lines.append(
            f"release: {r.label}, epsilon {r.epsilon:g}; noise: {r.ball_name} ball, certified sensitivity "
            f"{r.sensitivity.value:g} ({r.sensitivity.kind}); sampler: {r.sampler}"
        )
        lines += [f"  caveat: {c}" for c in r.caveats]
    if release.ledger_entry is not None:
        acc = model.accountant
        positions = [str(r.ledger_entry.position) for r in releases if r.ledger_entry is not None]
        which = f"entry {positions[0]}" if len(positions) == 1 else f"entries {', '.join(positions)}"
        lines.append(f"charged to {args.budget}: {which}; {acc.spent:g} of {acc.total_epsilon:g} spent")
    names = ["intercept", *features]
    intervals, corrected, note = _intervals(model, args.alpha, args.model == "logistic")
    payload = {
        "command": f"fit {args.model}",
        "epsilon": epsilon,
        "releases": [release_dict(r) for r in releases],
        "release": release_dict(release),
    }
    width = max(len(c) for c in names)
    level = f"{1 - args.alpha:.0%} interval"
    if len(coef) == 1:
        values = [float(intercept[0]), *coef[0]]
        head = f"{'':<{width}}  {'coefficient':>14}" + (f"  {'corrected':>14}" if corrected is not None else "")
        lines.append(head + (f"  {level:>29}" if intervals is not None else ""))
        for j, (name, v) in enumerate(zip(names, values)):
            row = f"{name:<{width}}  {v:>14.6g}" + (f"  {corrected[j]:>14.6g}" if corrected is not None else "")
            if intervals is not None:
                row += f"  [{intervals[j, 0]:>12.6g}, {intervals[j, 1]:>12.6g}]"
            lines.append(row)
        payload["coefficients"] = dict(zip(features, coef[0].tolist()))
        payload["intercept"] = float(intercept[0])
    else:  # one row of coefficients per class
        classes = [str(c) for c in model.classes_]
        lines.append(f"{'class':<{width}}  " + "  ".join(f"{n:>12}" for n in names))
        for c, b0, row in zip(classes, intercept, coef):
            lines.append(f"{c:<{width}}  " + "  ".join(f"{v:>12.6g}" for v in (b0, *row)))
        payload["coefficients"] = {c: dict(zip(features, row.tolist())) for c, row in zip(classes, coef)}
        payload["intercept"] = dict(zip(classes, intercept.tolist()))
    if note:
        lines.append(note)
        if intervals is None:
            payload["no_intervals"] = note
    if intervals is not None:
        lines.append("intervals: sampling error and privacy noise, from released and public quantities only")
        payload["intervals"] = {"alpha": args.alpha, "lower": intervals[:, 0], "upper": intervals[:, 1]}
    if corrected is not None:
        payload["corrected"] = corrected
    if args.model == "linear" and args.neighbours == "replace":
        payload["n"] = int(model.n_samples_)
    if args.diagnostics:
        diag = dict(model.fit_diagnostics_.as_dict(), rows_dropped=n_dropped)
        lines += ["", _BANNER] + [f"  {k}: {v}" for k, v in diag.items()]
        payload["curator_only_diagnostics"] = diag
    emit(args, payload, lines)


def _intervals(model, alpha, logistic):
    """(intervals or None, corrected estimate or None, a line saying what they are or why there are none)."""
    if not logistic:
        return np.asarray(model.conf_int(alpha)), None, ""
    if len(model.classes_) != 2:
        return None, None, ""  # multiclass: no intervals
    # Binary logistic: the release is shrunk by the ridge term, so the intervals are centred on
    # the corrected estimate; it is printed where it is reliably closer to the non-private fit.
    s = model.summary(alpha)
    if s.refusal is not None:
        hint = " Pass --inference-share (e.g. 0.5) for intervals." if model.information_release_ is None else ""
        return None, None, f"no intervals: {s.refusal}.{hint}"
    shown = bool(np.all(np.isfinite(s.corrected)))
    note = (
        "corrected: the coefficient with the ridge term's shrinkage undone, the centre of the interval"
        if shown
        else "interval: centred on the corrected coefficient (the ridge term's shrinkage undone), not printed: "
        "the correction is within its own noise"
    )
    return s.conf_int, (s.corrected if shown else None), note
