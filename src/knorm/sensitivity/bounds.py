"""Certified sensitivities where no closed form or facet enumeration applies.

Delta_K(T) = sup over Hull(S_T) of ||u||_K (paper Definition "K-norm Sensitivity"): exact
by enumeration when finitely many record values span P, else certified upper bounds from
an outer polytope of the polar ball (dimension <= 3) or from coordinate blocks (l_p).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.spatial import HalfspaceIntersection

from knorm.geometry import LpBall
from knorm.sensitivity.certificate import Sensitivity

__all__ = ["block_bound", "enumerate_sensitivity", "polar_bound"]

# Largest dimension where the polar polytope bound is computed with qhull.
MAX_POLAR_DIM = 3
#: Seconds the (diagnostic) ascent of an attained lower bound may spend.
POLAR_BUDGET = 1.0
_POLAR_POINTS = {1: 2, 2: 4096, 3: 6000}
# Face solves a polar bound may spend in all (about a second on the reference machine).
_POLAR_WORK = 3.0e6
# Face solves per direction allowed in the (diagnostic) ascent of an attained lower bound.
_ASCENT_WORK = 3.0**9
# Pairs of record points compared at once in exact enumerations.
_PAIR_BLOCK = 1 << 20


def enumerate_sensitivity(space, ball):
    """Return the exact sensitivity by enumerating the record points of the space.

    Parameters
    ----------
    space : SensitivitySpace
        A space with ``record_points`` t_1, ..., t_k, whose hull is P.
    ball : NormBall
        The ball K.

    Returns
    -------
    Sensitivity
        Kind 'exact': the maximum over pairs of ||t_a - t_b||_K (P - P is the hull
        of these differences), or of ||t_a||_K for add/remove neighbours (the hull
        of P and -P). A convex function attains its maximum over a polytope at a
        vertex (paper Definition "K-norm Sensitivity"; errata item 5).
    """
    pts = space.record_points
    assert pts is not None  # called only when the space has record points
    if space.neighbours == "add_remove":
        return Sensitivity(float(np.max(ball._gauge(pts))), "exact", f"enumeration of {len(pts)} record points")
    best, n = 0.0, len(pts)
    step = max(1, _PAIR_BLOCK // n)
    for s in range(0, n, step):
        diff = pts[s : s + step, None, :] - pts[None, :, :]
        best = max(best, float(np.max(ball._gauge(diff))))
    return Sensitivity(best, "exact", f"enumeration of {n} record points (extreme points of P)")


def polar_bound(space, ball):
    """Return a certified sensitivity bound, in dimension <= 3, through an outer polytope of the polar ball.

    Parameters
    ----------
    space : SensitivitySpace
        A space of dimension 1, 2 or 3 with a certified support function h.
    ball : NormBall
        The ball K.

    Returns
    -------
    Sensitivity
        Kind 'bound', with ``lower`` an attained value when the space has an
        extreme-point oracle.

    Notes
    -----
    For boundary points u_i of K, K° is inside Q = {c : c.u_i <= 1}, so
    Delta_K = sup_{K°} h <= max over the vertices of Q of h (h is convex). The
    boundary points are 2 (m = 1), 4096 (m = 2) or 6000 (m = 3) deterministic
    directions scaled to the boundary, or fewer (at least 32) when the support
    function is costly (a count of face solves, never a timing, so every run
    certifies the same value).
    """
    m = space.dim
    dirs = _sphere_points(m, _points_within_budget(space, m))
    u = dirs / ball._gauge(dirs)[:, None]
    if m == 1:
        verts = 1.0 / u
    else:
        hs = HalfspaceIntersection(np.hstack([u, -np.ones((len(u), 1))]), np.zeros(m))
        verts = hs.intersections
    upper = float(np.max(space._h(verts)))
    lower = None
    if space._extreme_points is not None:
        lower = float(np.max(ball._gauge(space._extreme_points(np.vstack([verts, dirs])))))
    return Sensitivity(upper, "bound", f"polar polytope bound ({len(u)} boundary points)", lower)


def _points_within_budget(space, m):
    """Boundary points of the polar bound: the default number, fewer when h is slow to evaluate.

    The bound evaluates h at about one polar vertex per point in R^2 and two in R^3 (and the
    extreme points as many times), so the count is capped to keep that within
    _POLAR_WORK face solves (counted, so the bound is reproducible). Fewer points give a larger polytope Q around K°, hence a looser
    but still certified bound.
    """
    default = _POLAR_POINTS[m]
    work = getattr(getattr(space, "statistic", None), "face_work", None)
    if m == 1 or work is None or len(getattr(space.statistic, "_uses", ())) != m:
        return default
    # Counted, not timed, so that the certified bound is the same in every run: the face
    # solves one support evaluation costs (3^a per component), against a budget of
    # _POLAR_WORK solves for the whole bound.
    per = float(np.max(work(_sphere_points(m, 8))))
    calls = 2 * m - 2  # h at the polar vertices, then extreme points there
    return int(min(default, max(32, _POLAR_WORK / max(calls * per, 1.0))))


def block_bound(space, ball):
    """Return a certified l_p sensitivity bound from coordinate blocks of size <= 3.

    Parameters
    ----------
    space : SensitivitySpace
        A space with a certified support function.
    ball : LpBall
        An l_p ball of any radius r.

    Returns
    -------
    Sensitivity
        Kind 'bound': the smaller of the block bound and the naive per-coordinate
        bound, divided by r; ``lower`` is an attained value when the space has an
        extreme-point oracle.

    Notes
    -----
    ||u||_p^p is the sum over coordinate blocks B of ||u_B||_p^p, and sup of a sum is
    at most the sum of sups, so Delta_p <= (sum_B Delta_p(T_B)^p)^(1/p) (the maximum
    over blocks for p = inf), each Delta_p(T_B) certified in dimension <= 3.
    """
    p, r = ball.p, ball.radius
    blocks = [list(range(i, min(i + MAX_POLAR_DIM, space.dim))) for i in range(0, space.dim, MAX_POLAR_DIM)]
    parts = [space.project(b).sensitivity(LpBall(len(b), p)) for b in blocks]
    if math.isinf(p):
        val = max(s.value for s in parts)
    else:
        val = sum(s.value**p for s in parts) ** (1 / p)
    method = f"block bound over {len(blocks)} coordinate blocks"
    naive = space.naive_sensitivity(p).value  # also certified; keep the smaller
    if naive < val:
        val, method = naive, "naive per-coordinate bound (smaller than the block bound)"
    lower = None
    if space._extreme_points is not None:
        lower = _ascent_lower(space, p) / r
    return Sensitivity(val / r, "bound", method, lower)


def _ascent_lower(space, p, starts=64, steps=12):
    """The largest ||u||_p found over points u of S_T: an attained value, hence a lower bound of Delta_p.

    From the axes and spread directions c, alternate u = a maximiser of c.u over S_T and c
    = the gradient of ||.||_p at u (the sign vector for p = 1): each step cannot decrease
    c.u, the ascent used for the largest norm over a convex set. It stops after about
    POLAR_BUDGET seconds.
    """
    m = space.dim
    c = np.vstack([np.eye(m), _sphere_points(m, starts)])
    best = 0.0
    end = time.perf_counter() + POLAR_BUDGET  # an attained value is a diagnostic: a second at most
    work = getattr(getattr(space, "statistic", None), "face_work", None)
    for _ in range(steps):
        if work is not None and c.shape[1] == len(getattr(space.statistic, "_uses", ())):
            c = c[work(c) <= _ASCENT_WORK]  # 3^a face solves per direction: skip the costly ones
        if time.perf_counter() > end or not len(c):
            break
        u = space._extreme_points(c)
        best = max(best, float(np.max(np.linalg.norm(u, ord=p, axis=1))))
        if p == 1:
            c = np.where(u >= 0, 1.0, -1.0)
        elif math.isinf(p):
            c = np.zeros_like(u)
            j = np.argmax(np.abs(u), axis=1)
            c[np.arange(len(u)), j] = np.sign(u[np.arange(len(u)), j])
        else:
            c = np.sign(u) * np.abs(u) ** (p - 1)
        c = c[np.any(c != 0, axis=1)]
        if not len(c):
            break
    return best


def _sphere_points(m, n):
    """Deterministic, well-spread unit vectors in R^m (both signs included)."""
    if m == 1:
        return np.array([[1.0], [-1.0]])
    if m == 2:
        t = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.stack([np.cos(t), np.sin(t)], axis=1)
    if m == 3:
        i = np.arange(n) + 0.5
        phi = np.arccos(1 - 2 * i / n)
        theta = np.pi * (1 + 5**0.5) * i
        return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)
    g = np.random.default_rng(12345).standard_normal((n, m))
    return g / np.linalg.norm(g, axis=1, keepdims=True)
