"""Command line: ``knorm reproduce``, ``knorm fit`` and ``knorm demo``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def _demo(args):
    import numpy as np

    from knorm.experiments.example21 import example21_table, figure_1
    from knorm.geometry import LpBall
    from knorm.mechanisms import choose_mechanism, containment
    from knorm.sensitivity import linear_regression_space, regression_cut_ball, squared_statistic_space

    eps = args.epsilon
    print("knorm demo: paper Example 2.1, T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1]\n")
    print(f"{'radii':<7}{'mechanism':<11}{'Delta':>9}{'vol(Delta K)':>14}{'eps factor':>12}")
    for r in example21_table(eps):
        print(f"{r['radii']:<7}{r['name']:<11}{r['sensitivity']:>9.4f}{r['volume']:>14.3f}{r['epsilon_factor']:>12.4f}")
    space = squared_statistic_space()
    naive = {
        name: (LpBall(2, p), space.naive_sensitivity(p).value) for name, p in (("l1", 1), ("l2", 2), ("linf", math.inf))
    }
    exact = {name: (LpBall(2, p), space.sensitivity(p).value) for name, p in (("l1", 1), ("l2", 2), ("linf", math.inf))}
    print('\nContainment order (paper Examples "approx" and "volume"):')
    for label, balls in (("naive", naive), ("exact", exact)):
        pairs = ", ".join(
            f"{a} in {b}: {containment(balls[a], balls[b]).contained}"
            for a, b in (("linf", "l2"), ("l2", "l1"), ("l1", "linf"))
        )
        print(f"  {label} radii: {pairs}")
    print(f"  hull K_2 in linf (exact radius): {containment((space.hull, 1.0), exact['linf']).contained}")
    choice = choose_mechanism(space, eps, rng=args.seed)
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, size=1000)
    t = np.array([x.sum(), 2 * (x**2).sum()])
    print(f"\nAutomatic choice: {choice.name}; l1 would need {choice.gain:.3f}x the epsilon for the same entropy.")
    print(
        f"Release of T = {np.round(t, 3)} at eps = {eps:g}: {np.round(choice.mechanism.release(t, rng=rng).value, 3)}"
    )

    p = 2
    reg = linear_regression_space(p)
    cut, rep = regression_cut_ball(p)
    choice = choose_mechanism(reg, eps, rng=args.seed)
    print(f"\nLinear regression statistic (paper Section 5.1), p = {p}, d = {reg.dim}:")
    print(choice.report)
    print(f"cut ball volume / K_T volume = {rep.volume_ratio:.3f} ± {rep.volume_ratio_se:.3f}; chosen: {choice.name}")

    out = Path(args.out)
    path = figure_1(out / "figure1_example21.png")
    print(f"\nFigure 1 written to {path}")
    return 0


def _reproduce(args):
    from knorm.experiments import EXPERIMENTS, Config, run_experiments
    from knorm.experiments.report import render_results_page, store_run

    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    config = Config(
        quick=args.quick,
        out=Path(args.out),
        jobs=args.jobs,
        seed=args.seed,
        data=args.data,
        target=args.target,
        progress=not args.no_progress,
    )
    results = run_experiments(names, config)
    cmd = "knorm " + " ".join(sys.argv[1:] if args.argv is None else args.argv)
    store_run(results, config, cmd.strip())
    if args.report:
        page = Path(args.report)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(render_results_page(config.out, page))
        print(f"\nResults page written to {page}")
    print(f"\nCSV and PNG files are in {config.out}/")
    return 0


def _parse_bound(text, parser):
    try:
        col, rng = text.rsplit("=", 1)
        lo, hi = (float(v) for v in rng.split(":"))
    except ValueError:
        parser.error(f"argument --bounds must look like COLUMN=LOWER:UPPER. Got {text!r} instead.")
    return col, (lo, hi)


def _fit(args, parser):
    import numpy as np
    import pandas as pd

    from knorm.models import LinearRegression, LogisticRegression

    df = pd.read_csv(args.data)
    if args.target not in df.columns:
        parser.error(
            f"argument --target must name a column of {args.data}. Got {args.target!r}; columns: {list(df.columns)}."
        )
    features = args.features.split(",") if args.features else [c for c in df.columns if c != args.target]
    unknown = [c for c in features if c not in df.columns]
    if unknown:
        parser.error(f"argument --features names columns not in {args.data}: {unknown}.")
    if not features:
        parser.error(
            f"{args.data} has no feature column besides the target {args.target!r}; name some with --features."
        )
    if df.empty:
        parser.error(f"{args.data} has a header but no data rows.")
    used = df[features + [args.target]]
    missing = int(used.isna().any(axis=1).sum())
    if missing and not args.drop_missing:
        parser.error(
            f"{missing} rows of {args.data} have missing values in the columns used. "
            "Drop them explicitly with --drop-missing (the count is reported), or clean the file."
        )
    used = used.dropna()
    non_numeric = [c for c in features if not pd.api.types.is_numeric_dtype(used[c])]
    if non_numeric:
        parser.error(
            f"columns {non_numeric} are not numeric. Encode them (e.g. as 0/1 indicators) or leave them out with --features."
        )
    bounds = dict(_parse_bound(b, parser) for b in args.bounds or [])
    needed = features + ([args.target] if args.model == "linear" else [])
    unused = [c for c in bounds if c not in needed]
    if unused:
        parser.error(
            f"argument --bounds names columns that are not used: {', '.join(repr(c) for c in unused)} "
            f"(used: {', '.join(needed)}). Remove them or add them to --features."
        )
    absent = [c for c in needed if c not in bounds]
    if absent:
        parser.error(
            "refusing to fit without declared bounds (they are never taken from the data, which would leak "
            f"privacy). Missing --bounds for: {', '.join(absent)}. Example: --bounds {absent[0]}=0:100"
        )
    lo = [bounds[c][0] for c in features]
    hi = [bounds[c][1] for c in features]
    X, y = used[features], used[args.target].to_numpy()
    if args.model == "logistic" and args.q != "auto":
        try:
            float(args.q)
        except ValueError:
            parser.error(f"argument --q must be a float in the range (0, 1) or 'auto'. Got {args.q!r} instead.")
    if args.model == "linear":
        model = LinearRegression(
            epsilon=args.epsilon,
            norm=args.mechanism,
            bounds_X=(lo, hi),
            bounds_y=bounds[args.target],
            random_state=args.seed,
        )
    else:
        model = LogisticRegression(
            epsilon=args.epsilon,
            norm=args.norm,
            q=args.q if args.q == "auto" else float(args.q),
            bounds_X=(lo, hi),
            random_state=args.seed,
        )
    model.fit(X, y)
    print(f"knorm fit {args.model}: {args.data}, target {args.target}, n = {len(used)}, epsilon = {args.epsilon:g}")
    if missing:
        print(f"dropped {missing} rows with missing values (--drop-missing)")
    print(f"entries outside the declared bounds (clipped): {model.n_clipped_} (not private: for the data holder)")
    if args.model == "linear":
        print(
            f"mechanism: {model.norm_}, certified sensitivity {model.sensitivity_.value:g} ({model.sensitivity_.kind})"
        )
    else:
        print(
            f"noise: {args.norm}, q = {model.q_:g}, certified sensitivity {model.sensitivity_.value:g} ({model.sensitivity_.kind})"
        )
    coef = np.ravel(model.coef_)
    width = max(len(c) for c in ["intercept", *features])
    print(f"{'intercept':<{width}}  {float(np.ravel(model.intercept_)[0]):>14.6g}")
    for c, v in zip(features, coef):
        print(f"{c:<{width}}  {v:>14.6g}")
    return 0


def main(argv=None):
    """Entry point of the ``knorm`` command."""
    parser = argparse.ArgumentParser(prog="knorm", description="K-norm mechanisms for differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare mechanisms on the paper's Example 2.1 and the regression statistic")
    demo.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    demo.add_argument("--seed", type=int, default=2021, help="seed of the demo's releases")
    demo.add_argument("--out", default="knorm-out", help="folder for the figure (default ./knorm-out)")
    demo.set_defaults(func=_demo)

    from knorm.experiments import EXPERIMENTS

    rep = sub.add_parser("reproduce", help="reproduce the paper's experiments (CSV, PNG, summary tables)")
    rep.add_argument("experiment", nargs="?", default="all", choices=["all", *EXPERIMENTS])
    rep.add_argument("--quick", action="store_true", help="small replicate counts: everything in under 2 minutes")
    rep.add_argument("--out", default="knorm-results", help="folder for CSV and PNG files (default ./knorm-results)")
    rep.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    rep.add_argument("--seed", type=int, default=2021, help="root seed (default 2021)")
    rep.add_argument("--data", help="CSV file for the realdata experiment")
    rep.add_argument("--target", help="response column of --data")
    rep.add_argument("--report", help="also write the results page (markdown) to this path")
    rep.add_argument("--no-progress", action="store_true", help="hide progress bars")
    rep.set_defaults(func=_reproduce)

    fit = sub.add_parser("fit", help="fit a private linear or logistic regression on a CSV file")
    fit.add_argument("model", choices=["linear", "logistic"])
    fit.add_argument("data", help="CSV file with a header")
    fit.add_argument("--target", required=True, help="response column")
    fit.add_argument("--epsilon", type=float, required=True, help="privacy budget of this fit")
    fit.add_argument(
        "--bounds",
        action="append",
        metavar="COLUMN=LOWER:UPPER",
        help="declared domain of a column (repeat for every feature, and the target for linear)",
    )
    fit.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    fit.add_argument("--drop-missing", action="store_true", help="drop rows with missing values (counted)")
    fit.add_argument(
        "--mechanism", default="auto", choices=["auto", "l1", "l2", "linf", "kt", "cut"], help="linear only"
    )
    fit.add_argument("--norm", default="linf", choices=["linf", "l2", "l1"], help="logistic only")
    fit.add_argument("--q", default="0.5", help="logistic only: float in (0, 1) or 'auto'")
    fit.add_argument("--seed", type=int, default=None, help="seed of the noise (default: fresh OS entropy)")
    fit.set_defaults(func=lambda a: _fit(a, fit))
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command == "demo" and not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        parser.error(f"argument --epsilon must be a float in the range (0, inf). Got {args.epsilon!r} instead.")
    if args.command in ("demo", "reproduce") and args.seed < 0:
        parser.error(f"argument --seed must be an int >= 0. Got {args.seed!r} instead.")
    if args.command == "reproduce" and args.jobs < 1:
        parser.error(f"argument --jobs must be an int >= 1. Got {args.jobs!r} instead.")
    if args.command == "fit" and not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        parser.error(f"argument --epsilon must be a float in the range (0, inf). Got {args.epsilon!r} instead.")
    if args.command == "reproduce" and (args.data is None) != (args.target is None):
        parser.error("arguments --data and --target must be given together.")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
