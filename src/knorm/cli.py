"""Command line: ``knorm demo`` (the reproduction command comes with its issue)."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np


def _demo(args):
    from knorm.geometry import LpBall
    from knorm.geometry.regression import K2Ball
    from knorm.mechanisms import KNormMechanism, rank_mechanisms

    eps = args.epsilon
    print("knorm demo: paper Example 2.1, T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1]\n")
    exact = {"l1": 3.125, "l2": 0.25 * math.sqrt(71 + 8 * math.sqrt(2)), "linf": 2.0}
    naive = {"l1": 4.0, "l2": math.sqrt(8.0), "linf": 2.0}
    ps = {"l1": 1, "l2": 2, "linf": math.inf}
    for label, deltas in (("exact sensitivities", exact), ("naive per-coordinate sensitivities", naive)):
        mechs = {name: KNormMechanism(LpBall(2, ps[name]), d, eps) for name, d in deltas.items()}
        mechs["hull K_2"] = KNormMechanism(K2Ball(), 1.0, eps)
        report = rank_mechanisms(mechs)
        print(f"Volume order with {label} (eps = {eps:g}):")
        print(report)
        print("volumes of Delta K:", ", ".join(f"{r['name']} {math.exp(r['log_volume']):.2f}" for r in report.rows))
        pairs = [("linf", "l2"), ("l2", "l1"), ("hull K_2", "linf")]
        print("containment:", "; ".join(f"{a} in {b}: {bool(report.containment(a, b, rng=0))}" for a, b in pairs))
        print()
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, size=1000)
    t = np.array([x.sum(), 2 * (x**2).sum()])
    mech = KNormMechanism(K2Ball(), 1.0, eps)
    print(f"A release with the optimal K_2 mechanism: T = {np.round(t, 3)} -> {np.round(mech.release(t, rng=rng), 3)}")
    return 0


def main(argv=None):
    """Entry point of the ``knorm`` command."""
    parser = argparse.ArgumentParser(prog="knorm", description="K-norm mechanisms for differential privacy.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare mechanisms on the paper's Example 2.1")
    demo.add_argument("--epsilon", type=float, default=1.0)
    demo.add_argument("--seed", type=int, default=20211)
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    if args.command == "demo" and not (args.epsilon > 0 and math.isfinite(args.epsilon)):
        parser.error(f"argument --epsilon must be a float in the range (0, inf). Got {args.epsilon!r} instead.")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
