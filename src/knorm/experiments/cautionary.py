"""The Discussion's cautionary example: a rectangle K inside a diamond H.

The paper does not give the shapes' sizes. They follow from its reported
marginal variances (100,000 draws, sensitivity 1, and eps = 1):

* K-mech, V = R U with R ~ Gamma(3, 1) and U uniform on [-a, a] x [-b, b]:
  Var(V_x) = E[R^2] E[U_x^2] = 12 a^2 / 3 = 4 a^2. Reported 40068.37 and 3.99
  give a = 100.08 and b = 0.999, so a = 100, b = 1 (variances 40000 and 4).
* H-mech, U uniform on the diamond |x|/c + |y|/d <= 1: E[U_x^2] = c^2 / 6, so
  Var(V_x) = 2 c^2. Reported 24139.87 and 242.09 give c = 109.9 and d = 11.0;
  c = 110, d = 11 (variances 24200 and 242) put the diamond's edges exactly
  through the rectangle's corners (100/110 + 1/11 = 1), the tightest diamond
  containing it, as in the paper's figure.
"""

from __future__ import annotations

import math

import numpy as np

from knorm.experiments._runner import Claim, Result, task_rng
from knorm.geometry import Polytope
from knorm.noise import KNormNoise

__all__ = ["run", "rectangle", "diamond", "PAPER"]

# Noise vectors drawn per mechanism (the replicates): the full run, and quick mode (knorm reproduce --quick).
FULL_REPS, QUICK_REPS = 100_000, 20_000

#: The paper's Table "loss": expected l_inf, l2, l1 losses (Monte Carlo standard errors).
PAPER = {
    "K": {"linf": (150.17, 0.418), "l2": (150.19, 0.418), "l1": (151.66, 0.420)},
    "H": {"linf": (110.89, 0.345), "l2": (112.27, 0.343), "l1": (120.89, 0.349)},
}
PAPER_VARIANCES = {"K": (40068.37, 3.99), "H": (24139.87, 242.09)}


def rectangle():
    """Return the rectangle K = [-100, 100] x [-1, 1] of the cautionary example.

    Returns
    -------
    Polytope
        The rectangle, from its 4 halfspaces.
    """
    return Polytope.from_halfspaces(np.vstack([np.eye(2), -np.eye(2)]), [100.0, 1.0, 100.0, 1.0])


def diamond():
    """Return the diamond H = {|x|/110 + |y|/11 <= 1} of the cautionary example.

    Returns
    -------
    Polytope
        The diamond, the symmetric hull of (110, 0) and (0, 11).
    """
    return Polytope.from_points([[110.0, 0.0], [0.0, 11.0]])


# Exact marginal variances at scale 1 in R^2: E[R^2] E[U_j^2] with R ~ Gamma(3, 1),
# so 12 E[U_j^2]; E[U^2] = a^2/3 on [-a, a], c^2/6 along an axis of a diamond.
EXACT_VARIANCES = {"K": (12 * 100.0**2 / 3, 12 * 1.0 / 3), "H": (12 * 110.0**2 / 6, 12 * 11.0**2 / 6)}


def run(config):
    """Run the ``cautionary`` experiment: losses and marginal variances of the K- and H-mechs.

    Parameters
    ----------
    config : Config
        The run's settings (``quick`` draws 20,000 noise vectors instead of 100,000).

    Returns
    -------
    Result
        Tables of expected l_inf, l2 and l1 losses and of marginal variances
        (Monte Carlo of the public noise laws, sensitivity 1, eps = 1), beside the
        paper's Table "loss".
    """
    import pandas as pd

    n = QUICK_REPS if config.quick else FULL_REPS
    rows, var_rows = [], []
    for name, ball in (("K", rectangle()), ("H", diamond())):
        # The noise law alone, with no data: Monte Carlo of the public law.
        v = KNormNoise(ball, scale=1.0).public_law_sample(n, seed=task_rng(config.seed, "cautionary", name))
        var_rows.append(
            dict(
                mechanism=name,
                var_x=v[:, 0].var(ddof=1),
                var_y=v[:, 1].var(ddof=1),
                exact_var_x=EXACT_VARIANCES[name][0],
                exact_var_y=EXACT_VARIANCES[name][1],
                paper_var_x=PAPER_VARIANCES[name][0],
                paper_var_y=PAPER_VARIANCES[name][1],
            )
        )
        for loss, p in (("linf", math.inf), ("l2", 2), ("l1", 1)):
            x = np.linalg.norm(v, ord=p, axis=1)
            mean, se = x.mean(), x.std(ddof=1) / math.sqrt(n)
            pm, pse = PAPER[name][loss]
            rows.append(
                dict(
                    mechanism=name,
                    loss=loss,
                    mean=mean,
                    se=se,
                    paper=pm,
                    paper_se=pse,
                    z=(mean - pm) / math.hypot(se, pse),
                )
            )
    table, variances = pd.DataFrame(rows), pd.DataFrame(var_rows)
    claims = [
        Claim(
            "cautionary",
            f"E {r['loss']} loss of the {r['mechanism']}-mech",
            f"{r['paper']:.2f} ({r['paper_se']:.3f})",
            f"{r['mean']:.2f} ({r['se']:.3f})",
            bool(abs(r["z"]) < 3),
            f"z = {r['z']:+.2f}; agreement means |z| < 3",
        )
        for r in rows
    ]
    mean = {(r["mechanism"], r["loss"]): r["mean"] for r in rows}
    h_wins = all(mean["H", loss] < mean["K", loss] for loss in ("linf", "l2", "l1"))
    claims.append(
        Claim(
            "cautionary",
            "H beats K in expected l_inf, l2 and l1 loss although K is inside H",
            "yes",
            "yes" if h_wins else "no",
            h_wins,
        )
    )
    for name, (vx, vy) in PAPER_VARIANCES.items():
        claims.append(
            Claim(
                "cautionary",
                f"marginal variances of the {name}-mech (x, y)",
                f"{vx:.2f}, {vy:.2f}",
                f"{EXACT_VARIANCES[name][0]:.2f}, {EXACT_VARIANCES[name][1]:.2f} (exact)",
                None,
                "the shapes were derived from these numbers (module docstring)",
            )
        )
    summary = "Cautionary example (Discussion): K = [-100,100] x [-1,1] inside H = {|x|/110 + |y|/11 <= 1}, eps = 1\n"
    summary += table.to_string(index=False, float_format=lambda x: f"{x:.3f}") + "\n\n"
    summary += variances.to_string(index=False, float_format=lambda x: f"{x:.2f}")
    tables = {"cautionary_losses": table, "cautionary_variances": variances}
    return Result("cautionary", tables, [], summary, claims, replicates=(n, FULL_REPS))
