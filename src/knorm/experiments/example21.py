"""Paper Example 2.1: T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1], and its Figure 1."""

from __future__ import annotations

import math

import numpy as np

from knorm.experiments._runner import caption_figure, save_figure, subplots
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, rank_mechanisms
from knorm.sensitivity import squared_statistic_space

__all__ = ["CAPTION", "example21_table", "figure", "figure_1"]

#: The caption of Figure 1, printed under it.
CAPTION = (
    "Paper Figure 1 (Example 2.1): the statistic T(X) = (Σ X_i, Σ 2 X_i²) of records X_i in [-1, 1]. Blue: "
    "its sensitivity space S_T, the differences T(X) - T(X') of neighbouring datasets; dashed: its convex "
    "hull K_2, the optimal ball. Coloured: the ℓ1, ℓ2 and ℓ∞ balls scaled to the exact sensitivities "
    "(left: the smallest radius containing S_T) and to the naive per-coordinate ones (right). A K-norm "
    "mechanism's noise grows with the volume of its ball: the smaller the ball around S_T, the better."
)

_PS = {"l1": 1, "l2": 2, "linf": math.inf}


def example21_table(epsilon=1.0):
    """Return the exact and naive sensitivities of paper Example 2.1 with the volume order.

    Parameters
    ----------
    epsilon : float, default 1.0
        Privacy budget of the mechanisms compared (the order does not depend on it).

    Returns
    -------
    list of dict
        One row per ball and kind of radius: radii ('exact' or 'naive'), name
        ('l1', 'l2', 'linf' or 'hull K_2'), sensitivity, volume of Delta K and
        epsilon factor against the best of its group, best first within each group.
        The hull K_2 has Delta = 1 in both groups.

    Examples
    --------
    >>> rows = example21_table()
    >>> [(r["name"], round(r["volume"], 2)) for r in rows if r["radii"] == "exact"]
    [('hull K_2', 13.33), ('linf', 16.0), ('l2', 16.16), ('l1', 19.53)]
    """
    space = squared_statistic_space()
    rows = []
    for label in ("exact", "naive"):
        mechs = {}
        for name, p in _PS.items():
            sens = space.sensitivity(p) if label == "exact" else space.naive_sensitivity(p)
            mechs[name] = KNormMechanism(LpBall(2, p), sens, epsilon)
        mechs["hull K_2"] = KNormMechanism(space.hull, space.sensitivity(space.hull), epsilon)
        report = rank_mechanisms(mechs)
        for r in report.rows:
            rows.append(
                dict(
                    radii=label,
                    name=r["name"],
                    sensitivity=r["sensitivity"],
                    volume=math.exp(r["log_volume"]),
                    epsilon_factor=r["epsilon_factor"],
                )
            )
    return rows


def _space_polygon(n=400):
    """Boundary of S_T: |u2| <= 2 - 2(1 - |u1|)^2 on [-2, 2] (paper Example 2.1)."""
    u1 = np.linspace(0, 2, n)
    top = 2 - 2 * (1 - u1) ** 2
    right = np.column_stack([u1, top])
    upper = np.vstack([right[::-1] * [-1, 1], right])
    return np.vstack([upper, upper[::-1] * [1, -1]])


def _ball_boundary(ball, n=721):
    t = np.linspace(0, 2 * np.pi, n)
    d = np.column_stack([np.cos(t), np.sin(t)])
    return d / ball.norm(d)[:, None]


def figure():
    """Draw the paper's Figure 1 (both panels) with its caption.

    Left: S_T with the l1, l2, l_inf balls at the exact sensitivities; right: at the
    naive per-coordinate sensitivities (Eq. ApproximateSensitivity). The hull K_2
    is drawn dashed in both. Needs matplotlib.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    space = squared_statistic_space()
    poly = _space_polygon()
    fig, axes = subplots(1, 2, figsize=(10, 5), sharey=True)
    colours = {"l1": "tab:red", "l2": "tab:green", "linf": "tab:purple"}
    for ax, label in zip(axes, ("exact", "naive")):
        ax.fill(poly[:, 0], poly[:, 1], color="tab:blue", alpha=0.35, label="$S_T$")
        hull = _ball_boundary(space.hull)
        ax.plot(hull[:, 0], hull[:, 1], "k--", lw=1.2, label="Hull($S_T$) = $K_2$")
        for name, p in _PS.items():
            sens = space.sensitivity(p) if label == "exact" else space.naive_sensitivity(p)
            b = _ball_boundary(LpBall(2, p, radius=sens.value))
            ax.plot(
                b[:, 0],
                b[:, 1],
                color=colours[name],
                lw=1.6,
                label=f"$\\ell_{{{name[1:].replace('inf', chr(92) + 'infty')}}}$, $\\Delta$ = {sens.value:.3f}",
            )
        ax.set_aspect("equal")
        ax.set_xlim(-4.3, 4.3)
        ax.set_ylim(-4.3, 4.3)
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_title(f"{label} sensitivities")
        ax.set_xlabel("$u_1$")
        ax.legend(loc="lower left", fontsize=8)
    axes[0].set_ylabel("$u_2$")
    fig.suptitle("Example 2.1: $T(X) = (\\sum X_i, \\sum 2X_i^2)$, $X_i \\in [-1, 1]$")
    return caption_figure(fig, CAPTION)


def figure_1(path):
    """Write the paper's Figure 1 (:func:`figure`) as a PNG at ``path`` and return the path.

    Parameters
    ----------
    path : str or Path
        Where to write the PNG (folders are created).

    Returns
    -------
    Path
        The path written.
    """
    return save_figure(figure(), path)


def run(config):
    """The ``example`` experiment: sensitivities, volumes, orders and Figure 1."""
    import pandas as pd

    from knorm.experiments._runner import Claim, Result
    from knorm.mechanisms import containment

    space = squared_statistic_space()
    table = pd.DataFrame(example21_table())
    fig = figure_1(config.out / "figure1_example21.png")
    sens = {p: space.sensitivity(p).value for p in (1, 2, math.inf)}
    naive = {p: space.naive_sensitivity(p).value for p in (1, 2)}
    vol = {(r.radii, r.name): r.volume for r in table.itertuples()}
    claims = [
        Claim(
            "example",
            "exact Delta_1, Delta_2, Delta_inf (Eq. ExactSensitivity)",
            "3.125, 2.268 (1/4 sqrt(71 + 8 sqrt 2)), 2",
            f"{sens[1]:.4f}, {sens[2]:.4f}, {sens[math.inf]:.4f}",
            bool(
                abs(sens[1] - 3.125) < 1e-9
                and abs(sens[2] - 0.25 * math.sqrt(71 + 8 * math.sqrt(2))) < 1e-9
                and sens[math.inf] == 2
            ),
        ),
        Claim(
            "example",
            "naive Delta_1, Delta_2 (Eq. ApproximateSensitivity)",
            "4, sqrt 8 = 2.828",
            f"{naive[1]:.4f}, {naive[2]:.4f}",
            bool(abs(naive[1] - 4) < 1e-6 and abs(naive[2] - math.sqrt(8)) < 1e-6),
        ),
        Claim(
            "example",
            "volumes of the l1, l2, l_inf balls at exact radii (Example 'volume')",
            "19.53, 16.16, 16",
            f"{vol['exact', 'l1']:.2f}, {vol['exact', 'l2']:.2f}, {vol['exact', 'linf']:.2f}",
            bool(
                abs(vol["exact", "l1"] - 19.53) < 0.005
                and abs(vol["exact", "l2"] - 16.16) < 0.005
                and abs(vol["exact", "linf"] - 16) < 1e-9
            ),
        ),
        Claim(
            "example",
            "volume of Hull(S_T) = K_2",
            "13.33 (40/3; ERRATA item 3)",
            f"{vol['exact', 'hull K_2']:.4f}",
            bool(abs(vol["exact", "hull K_2"] - 40 / 3) < 1e-9),
        ),
    ]
    balls = {name: LpBall(2, p) for name, p in _PS.items()}
    exact_nested = [
        containment((balls[a], sens[_PS[a]]), (balls[b], sens[_PS[b]])).contained
        for a in balls
        for b in balls
        if a != b
    ]
    claims.append(
        Claim(
            "example",
            "exact radii: no l_p ball contains another (Example 'approx')",
            "none contained",
            f"{sum(exact_nested)} of 6 ordered pairs contained",
            not any(exact_nested),
        )
    )
    nv = {"l1": naive[1], "l2": naive[2], "linf": 2.0}
    chain = (
        containment((balls["linf"], nv["linf"]), (balls["l2"], nv["l2"])).contained
        and containment((balls["l2"], nv["l2"]), (balls["l1"], nv["l1"])).contained
    )
    claims.append(
        Claim(
            "example", "naive radii: l_inf in l2 in l1 (Example 'approx')", "yes", "yes" if chain else "no", bool(chain)
        )
    )
    best = table[table.radii == "exact"].iloc[1]["name"]
    claims.append(
        Claim(
            "example",
            "volume order prefers l_inf among l1, l2, l_inf (Example 'volume')",
            "l_inf",
            best,
            best == "linf",
        )
    )
    summary = "Example 2.1: T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1]\n" + table.to_string(
        index=False, float_format=lambda x: f"{x:.4f}"
    )
    return Result(
        "example",
        {"example21": table},
        [fig],
        summary,
        claims,
        {"figure1_example21.png": CAPTION},
    )
