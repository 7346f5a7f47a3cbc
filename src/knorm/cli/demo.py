"""``knorm demo``: the paper's Example 2.1 and the regression statistic, compared."""

from __future__ import annotations

import math
from pathlib import Path

from knorm._docs import fill_doc
from knorm.cli._common import format_number, new_parser, optional, positive_float, seed_int, text_table

__all__ = ["add_parser"]

_EXAMPLE = """example:
  knorm demo --epsilon 0.5 --out figures"""


@fill_doc
def add_parser(sub, parser_class):
    """Add ``demo`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """

    p = new_parser(sub, "demo", "compare mechanisms on the paper's Example 2.1 and the regression statistic", _EXAMPLE)
    p.add_argument("--epsilon", type=positive_float, default=1.0, help="privacy budget (default 1)")
    p.add_argument("--seed", type=seed_int, default=2021, help="seed of the demo's releases (default 2021)")
    p.add_argument("--out", default="knorm-out", help="folder for the figure (default ./knorm-out)")
    p.set_defaults(func=run)
    return p


def run(args):
    """Print the comparison of mechanisms on Example 2.1 and the regression statistic."""
    import numpy as np

    optional("matplotlib")

    from knorm.experiments.example21 import example21_table, figure_1
    from knorm.geometry import LpBall
    from knorm.mechanisms import choose_mechanism, containment
    from knorm.sensitivity import linear_regression_space, regression_cut_ball, squared_statistic_space

    eps = args.epsilon
    print("knorm demo: paper Example 2.1, T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1]\n")
    rows = [
        [r["radii"], r["name"], *(format_number(r[k]) for k in ("sensitivity", "volume", "epsilon_factor"))]
        for r in example21_table(eps)
    ]
    print("\n".join(text_table(["radii", "mechanism", "Delta", "vol(Delta K)", "eps factor"], rows, left=(0, 1))))
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
    print(
        f"\nAutomatic choice: {choice.name}; l1 would need {format_number(choice.gain)}x the epsilon for the same "
        "entropy."
    )
    released = choice.mechanism.release(t, rng=rng).value
    print(f"Release of T = {_vector(t)} at eps = {format_number(eps)}: {_vector(released)}")

    p = 2
    reg = linear_regression_space(p)
    cut, rep = regression_cut_ball(p)
    choice = choose_mechanism(reg, eps, rng=args.seed)
    print(f"\nLinear regression statistic (paper Section 5.1), p = {p}, d = {reg.dim}:")
    print(choice.report)
    print(
        f"cut ball volume / K_T volume = {format_number(rep.volume_ratio)} ± {format_number(rep.volume_ratio_se)}; "
        f"chosen: {choice.name}"
    )

    out = Path(args.out)
    path = figure_1(out / "figure1_example21.png")
    print(f"\nFigure 1 written to {path}")
    return 0


def _vector(values):
    return "[" + ", ".join(format_number(v) for v in values) + "]"
