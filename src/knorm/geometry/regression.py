"""The closed-form balls K_2 and K_3 of the paper's linear-regression Section 5.1."""

from __future__ import annotations

import itertools
import math

import numpy as np

from knorm.geometry.base import NormBall, Volume
from knorm.geometry.polytope import Polytope

__all__ = ["K2Ball", "k3_ball"]

_K2_AREA = 40.0 / 3.0


class K2Ball(NormBall):
    """K_2, the convex hull of the sensitivity space of (sum X_i, sum 2 X_i^2).

    K_2 = {(u1, u2) in [-2, 2]^2 : |u2| <= 2 if |u1| <= 1, and
    |u2| <= 2 - 2 (|u1| - 1)^2 if |u1| >= 1}, for records X_i in [-1, 1]
    (the paper's Example 2.1 and Section 5.1).

    Notes
    -----
    Errata item 3: the appendix prints 2 - (1 - u1)^2 (no factor 2), a valid but
    larger ball of area 44/3; the correct set, used here, has area 40/3.

    By the symmetries u1 -> -u1 and u2 -> -u2 take a = |u1|, b = |u2|. The
    boundary is the flat top b = 2 for a <= 1 and the arc b = 4a - 2a^2 for
    a in [1, 2], so the gauge is

    - b / 2 if b >= 2a (the ray meets the flat top),
    - 2 a^2 / (4a - b) otherwise (solve b/t = 4 a/t - 2 a^2/t^2);

    the two agree at b = 2a. The support function at c >= 0 (take |c1|, |c2|)
    is attained on the arc at x = clip(1 + c1 / (4 c2), 1, 2), with value
    c1 x + c2 (4x - 2x^2); the flat top's best value c1 + 2 c2 is the arc's
    value at x = 1, and c2 = 0 gives 2 c1. The area is
    4 (2 + int_1^2 (4x - 2x^2) dx) = 4 (2 + 4/3) = 40/3. Uniform sampling is
    exact rejection from [-2, 2]^2, with acceptance 40/48.

    References
    ----------
    Awan & Slavkovic (2021), Example 2.1 and Section 5.1; errata item 3 and
    errata, facts (vol(Hull S_T) = 40/3).

    Examples
    --------
    >>> ball = K2Ball()
    >>> float(ball.norm([1.0, 2.0])), float(ball.norm([2.0, 0.0]))
    (1.0, 1.0)
    >>> float(ball.volume()) == 40 / 3
    True
    """

    def __init__(self):
        super().__init__(2)

    def _cache_key(self):
        return ("K2Ball",)

    def _gauge(self, u):
        a = np.abs(u[..., 0])
        b = np.abs(u[..., 1])
        flat = b >= 2.0 * a  # includes u = 0
        den = np.where(flat, 1.0, 4.0 * a - b)  # > 2a > 0 off the flat branch
        # 2a * (a / den), not 2a^2 / den: a^2 underflows for |a| < 1e-154
        return np.where(flat, 0.5 * b, 2.0 * a * (a / den))[()]

    def _contains(self, u):
        a = np.abs(u[..., 0])
        b = np.abs(u[..., 1])
        top = np.where(a <= 1.0, 2.0, 4.0 * a - 2.0 * a * a)
        return (a <= 2.0) & (b <= top)

    def _support(self, c):
        c1 = np.abs(c[..., 0])
        c2 = np.abs(c[..., 1])
        pos = c2 > 0
        x = np.where(pos, np.clip(1.0 + c1 / (4.0 * np.where(pos, c2, 1.0)), 1.0, 2.0), 2.0)
        return (c1 * x + c2 * (4.0 * x - 2.0 * x * x))[()]

    def _bounding_box(self):
        return np.array([2.0, 2.0])

    def _volume(self, rng=None, n_samples=None):
        return Volume(_K2_AREA, exact=True, method="closed form (ERRATA item 3)")

    def _log_volume(self, rng=None, n_samples=None):
        return Volume(math.log(_K2_AREA), exact=True, method="closed form (ERRATA item 3)")

    def _sample_uniform(self, n, rng):
        return self._rejection_from_box(n, rng)

    def __repr__(self):
        return "K2Ball()"


def k3_ball(*, name="K_3"):
    """Return K_3 = {u in [-2, 2]^3 : |u1| + |u2| + |u3| <= 4}, as a :class:`Polytope`.

    The convex hull of the sensitivity space of (sum X_i, sum Y_i, sum X_i Y_i)
    for X_i, Y_i in [-1, 1]: a cuboctahedron with the 12 vertices obtained by
    permuting (±2, ±2, 0), and volume 160/3.

    Parameters
    ----------
    name : str, default "K_3"
        Label for ``repr``.

    Returns
    -------
    Polytope
        K_3 from its 14 halfspaces: exact gauge, support function and volume.

    References
    ----------
    Awan & Slavkovic (2021), Section 5.1; errata, facts (K_3).

    Examples
    --------
    >>> ball = k3_ball()
    >>> len(ball.vertices), round(float(ball.volume()), 10) == round(160 / 3, 10)
    (12, True)
    """
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    A = np.vstack([np.eye(3), -np.eye(3), signs])
    b = np.concatenate([np.full(6, 2.0), np.full(8, 4.0)])
    return Polytope.from_halfspaces(A, b, name=name)
