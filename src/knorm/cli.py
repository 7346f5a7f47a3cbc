"""Command line: ``knorm demo`` (``knorm reproduce`` arrives with its issue)."""

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
    from knorm.sensitivity import linear_regression_space, regression_hull_ball, squared_statistic_space

    eps = args.epsilon
    print("knorm demo: paper Example 2.1, T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1]\n")
    print(f"{'radii':<7}{'mechanism':<11}{'Delta':>9}{'vol(Delta K)':>14}{'eps factor':>12}")
    for r in example21_table(eps):
        print(f"{r['radii']:<7}{r['name']:<11}{r['sensitivity']:>9.4f}{r['volume']:>14.3f}{r['epsilon_factor']:>12.4f}")
    space = squared_statistic_space()
    naive = {name: (LpBall(2, p), space.naive_sensitivity(p).value) for name, p in (("l1", 1), ("l2", 2), ("linf", math.inf))}
    exact = {name: (LpBall(2, p), space.sensitivity(p).value) for name, p in (("l1", 1), ("l2", 2), ("linf", math.inf))}
    print("\nContainment order (paper Examples \"approx\" and \"volume\"):")
    for label, balls in (("naive", naive), ("exact", exact)):
        pairs = ", ".join(f"{a} in {b}: {containment(balls[a], balls[b]).contained}" for a, b in (("linf", "l2"), ("l2", "l1"), ("l1", "linf")))
        print(f"  {label} radii: {pairs}")
    print(f"  hull K_2 in linf (exact radius): {containment((space.hull, 1.0), exact['linf']).contained}")
    choice = choose_mechanism(space, eps, rng=args.seed)
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, size=1000)
    t = np.array([x.sum(), 2 * (x**2).sum()])
    print(f"\nAutomatic choice: {choice.name}; l1 would need {choice.gain:.3f}x the epsilon for the same entropy.")
    print(f"Release of T = {np.round(t, 3)} at eps = {eps:g}: {np.round(choice.mechanism.release(t, rng=rng), 3)}")

    p = 2
    reg = linear_regression_space(p)
    cut, rep = regression_hull_ball(p)
    reg.candidates["cut hull"] = cut
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
    from knorm.experiments.report import write_results_page

    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    config = Config(quick=args.quick, out=Path(args.out), jobs=args.jobs, seed=args.seed, data=args.data,
                    target=args.target, progress=not args.no_progress)
    results = run_experiments(names, config)
    if args.report:
        cmd = "knorm reproduce " + " ".join(sys.argv[2:] if args.argv is None else args.argv)
        page = write_results_page(results, config, args.report, cmd.strip())
        print(f"\nResults page written to {page}")
    print(f"\nCSV and PNG files are in {config.out}/")
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
    args = parser.parse_args(argv)
    args.argv = argv
    if args.command == "demo" and not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        parser.error(f"argument --epsilon must be a float in the range (0, inf). Got {args.epsilon!r} instead.")
    if args.command == "reproduce" and args.jobs < 1:
        parser.error(f"argument --jobs must be an int >= 1. Got {args.jobs!r} instead.")
    if args.command == "reproduce" and (args.data is None) != (args.target is None):
        parser.error("arguments --data and --target must be given together.")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
