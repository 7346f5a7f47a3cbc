"""``knorm fit linear|logistic``: a private regression on a CSV file."""

from __future__ import annotations

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
    ledger_entry_dict,
    new_parser,
    open_budget,
    parse_bounds,
    privacy_terms,
    probability,
    read_csv,
    read_table,
    seed_int,
    text_table,
)
from knorm.exceptions import IntervalUnavailableError

__all__ = ["add_parser"]

_EXAMPLES = {
    "linear": """example:
  knorm fit linear houses.csv --target price --epsilon 1 \\
      --bounds price=0:1e6 --bounds rooms=1:10 --bounds age=0:100 --budget ledger.sqlite
  knorm fit linear houses.csv --target price --rho 0.5 \\
      --bounds price=0:1e6 --bounds rooms=1:10 --bounds age=0:100 --budget zcdp-ledger.sqlite""",
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
        add_privacy_budget(p, "this fit")
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
            "--debug",
            action="store_true",
            help="also print the raw released statistics (private, in the model's scaled units)",
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
                "--shape",
                default="spherical",
                choices=["spherical", "split"],
                help="with --rho: the Gaussian noise's shape (default spherical; split gives the response block "
                "less noise)",
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
        rho=args.rho,
        bounds_X=bounds_X,
        neighbours=args.neighbours,
        accountant=accountant,
        random_state=args.seed,
        sampler=args.sampler,
    )
    if args.model == "linear":
        return LinearRegression(
            norm=args.norm, shape=args.shape, bounds_y=bounds[args.target], postprocess=args.postprocess, **common
        )
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
    """Print the fit: each piece once (coefficients, intervals, privacy terms, ledger), raw statistics on --debug."""
    releases = tuple(getattr(model, "releases_", (model.release_,)))
    rho = getattr(model, "rho_", None)  # a rho fit's releases are Gaussian (linear) or pure at eps_i (logistic)
    epsilon = None if rho is not None else sum(r.epsilon for r in releases)
    budget = f"rho {format_number(rho)}" if rho is not None else f"epsilon {format_number(epsilon)}"
    coef = np.atleast_2d(model.coef_)
    intercept = np.ravel(model.intercept_)
    public_n = args.model == "linear" and args.neighbours == "replace"
    lines = [
        f"knorm fit {args.model}: {args.data}, target {args.target}, {budget}"
        + (f", n = {format_number(int(model.n_samples_))} (public under replace-one neighbours)" if public_n else ""),
    ]
    for r in releases:
        noise = (
            f"Gaussian (rho-zCDP), sigma {format_number(r.noise_scale)}, certified l2 sensitivity"
            if r.rho is not None
            else f"{r.ball_name} ball, certified sensitivity"
        )
        lines.append(
            f"release: {r.label}, {budget_words(r)}; noise: {noise} {format_number(r.sensitivity.value)} "
            f"({r.sensitivity.kind}); sampler: {r.sampler}"
        )
        lines += [f"  caveat: {c}" for c in r.caveats]
    entries = [r.ledger_entry for r in releases if r.ledger_entry is not None]
    ledger = None
    if entries:
        acc = model.accountant
        positions = [str(e.position) for e in entries]
        which = f"entry {positions[0]}" if len(positions) == 1 else f"entries {', '.join(positions)}"
        # A rho ledger has no epsilon total: it is read in its own unit.
        unit = acc.budget
        spent, total = (acc.spent_rho, acc.total_rho) if unit == "rho" else (acc.spent, acc.total_epsilon)
        word = "rho " if unit == "rho" else ""
        lines.append(f"charged to {args.budget}: {which}; {word}{format_number(spent)} of {format_number(total)} spent")
        ledger = {
            "path": args.budget,
            "budget": unit,
            "entries": [ledger_entry_dict(e) for e in entries],
            "spent": spent,
            "total": total,
        }
    names = ["intercept", *features]
    intervals, refused, corrected = _intervals(model, args.alpha)
    payload = {
        "command": f"fit {args.model}",
        "data": args.data,
        "target": args.target,
        "n": int(model.n_samples_) if public_n else None,
    }
    if len(coef) == 1:
        values = [float(intercept[0]), *coef[0]]
        head = ["", "coefficient"] + (["corrected"] if corrected is not None else [])
        head += [f"{1 - args.alpha:.0%} interval"] if intervals is not None else []
        rows = []
        for j, (name, v) in enumerate(zip(names, values)):
            row = [name, format_number(v)] + ([format_number(corrected[j])] if corrected is not None else [])
            if intervals is not None:
                row.append(format_interval(*intervals[j]))
            rows.append(row)
        lines += text_table(head, rows)
        payload["coefficients"] = dict(zip(names, values))
    else:  # one row of coefficients per class
        classes = [str(c) for c in model.classes_]
        rows = [[c, *(format_number(v) for v in (b0, *row))] for c, b0, row in zip(classes, intercept, coef)]
        lines += text_table(["class", *names], rows)
        payload["coefficients"] = {
            c: dict(zip(names, [float(b0), *row.tolist()])) for c, b0, row in zip(classes, intercept, coef)
        }
    payload["intervals"] = None
    if refused:
        lines.append(f"intervals: {refused}")
        payload["intervals_refused"] = refused
    if intervals is not None:
        lines.append("intervals: sampling error and privacy noise, from released and public quantities only")
        if hasattr(model, "release_information"):  # logistic: the release is shrunk by the ridge term
            lines.append(
                "corrected: the coefficient with the ridge term's shrinkage undone, the centre of the interval"
                if corrected is not None
                else "interval: centred on the corrected coefficient (the ridge term's shrinkage undone), not "
                "printed: the correction is within its own noise"
            )
            payload["corrected"] = None if corrected is None else dict(zip(names, corrected.tolist()))
        payload["intervals"] = {
            "alpha": args.alpha,
            "method": intervals.method,
            "lower": dict(zip(intervals.names, intervals.lower.tolist())),
            "upper": dict(zip(intervals.names, intervals.upper.tolist())),
        }
    payload["privacy"] = {
        "epsilon": epsilon,
        "rho": rho,
        "neighbours": args.neighbours,
        "releases": [privacy_terms(r) for r in releases],
    }
    payload["ledger"] = ledger
    if args.debug:
        # Private (released) values, but not what a reader of the model needs: the noisy statistics in the
        # model's internal scaled units, shown only on request.
        lines += ["", "released statistics (--debug; private, in the model's scaled units):"]
        lines += [f"  {r.label}: {', '.join(format_number(v) for v in np.ravel(r.value))}" for r in releases]
        payload["debug_released_statistics"] = [
            {"label": r.label, "value": np.asarray(r.value).tolist()} for r in releases
        ]
    if args.diagnostics:
        diag = dict(model.fit_diagnostics_.as_dict(), rows_dropped=n_dropped)
        lines += ["", _BANNER] + [f"  {k}: {_diagnostic(v)}" for k, v in diag.items()]
        payload["curator_only_diagnostics"] = diag
    emit(args, payload, lines)


def _diagnostic(value):
    return format_number(value) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else value


def _intervals(model, alpha):
    """(the model's intervals, named, intercept first, or None; the public reason when it gives none;
    the corrected estimate of a binary logistic fit where it is shown, or None)."""
    try:
        intervals = model.conf_int(alpha)
    except IntervalUnavailableError as exc:  # refused with a public reason: say it, print no interval
        return None, str(exc), None
    except ValueError:  # a logistic fit that spent nothing on its Fisher information
        return None, "none: no epsilon was spent on the Fisher information (pass --inference-share, e.g. 0.5)", None
    corrected = None
    if hasattr(model, "release_information"):  # binary logistic: the interval's centre, where reliable
        shown = model.summary(alpha).corrected
        corrected = shown if np.all(np.isfinite(shown)) else None
    return intervals, "", corrected
