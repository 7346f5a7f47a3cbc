"""Paper Example 2.1: T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1], and its Figure 1."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, rank_mechanisms
from knorm.sensitivity import squared_statistic_space

__all__ = ["example21_table", "figure_1"]

_PS = {"l1": 1, "l2": 2, "linf": math.inf}


def example21_table(epsilon=1.0):
    """Exact and naive sensitivities with the volume order, as a list of dicts.

    Each row: radii ('exact' or 'naive'), name, sensitivity, volume of Delta K,
    epsilon factor against the best of its group. The hull K_2 has Delta = 1.
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
            rows.append(dict(radii=label, name=r["name"], sensitivity=r["sensitivity"], volume=math.exp(r["log_volume"]), epsilon_factor=r["epsilon_factor"]))
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


def figure_1(path):
    """Write the paper's Figure 1 (both panels) as a PNG at ``path`` and return the path.

    Left: S_T with the l1, l2, l_inf balls at the exact sensitivities; right: at the
    naive per-coordinate sensitivities (Eq. ApproximateSensitivity). The hull K_2
    is drawn dashed in both.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    space = squared_statistic_space()
    poly = _space_polygon()
    fig, axes = plt.subplots(1, 2, figsize=(10, 5), sharey=True)
    colours = {"l1": "tab:red", "l2": "tab:green", "linf": "tab:purple"}
    for ax, label in zip(axes, ("exact", "naive")):
        ax.fill(poly[:, 0], poly[:, 1], color="tab:blue", alpha=0.35, label="$S_T$")
        hull = _ball_boundary(space.hull)
        ax.plot(hull[:, 0], hull[:, 1], "k--", lw=1.2, label="Hull($S_T$) = $K_2$")
        for name, p in _PS.items():
            sens = space.sensitivity(p) if label == "exact" else space.naive_sensitivity(p)
            b = _ball_boundary(LpBall(2, p, radius=sens.value))
            ax.plot(b[:, 0], b[:, 1], color=colours[name], lw=1.6, label=f"$\\ell_{{{name[1:].replace('inf', chr(92) + 'infty')}}}$, $\\Delta$ = {sens.value:.3f}")
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
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
