"""The geometry of linear sums: sum x (and (n, sum x)) over a declared box, in closed form.

The sensitivity spaces, their exact l_p sensitivities and the exact hulls that
:func:`knorm.stats.sum` and :func:`knorm.stats.mean` release with; nothing here reads
the data.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from knorm._validation import param_error
from knorm.geometry import LinearImage, LpBall, Polytope
from knorm.sensitivity import SensitivitySpace

__all__ = ["check_l0_bound", "count_sum_ball", "linear_space", "ScaledSupport", "sum_ball"]

# The exact hull of box u -box (sums under add/remove) is a polytope on the 2^p corners up to
# this many columns; beyond, the symmetric box (exact when the bounds are symmetric).
_MAX_EXACT_COLUMNS = 10


class _LinearSupport:
    """Support function and extreme points of S_T for t(x) = x or (1, x) on the box [lo, hi].

    Replace-one: S_T = box - box = [-w, w], w = hi - lo (and 0 for the count), so
    h(c) = sum |c_j| w_j.
    Add/remove: S_T = P u -P with P = t(box), so h(c) = max(h_P(c), h_P(-c)) and
    h_P(c) = c_0 + sum_j max(c_j lo_j, c_j hi_j) (c_0 only with the count). Closed forms,
    so nothing enumerates the 2^p corners (picklable).
    """

    def __init__(self, lo, hi, neighbours, with_count):
        self.lo, self.hi, self.neighbours, self.with_count = lo, hi, neighbours, with_count

    def _top(self, c):
        """(h_P(c), the corner of P attaining it) for rows c."""
        x = np.where(c[:, self.with_count :] >= 0, self.hi, self.lo)
        if self.with_count:
            x = np.column_stack([np.ones(len(c)), x])
        return np.einsum("ij,ij->i", c, x), x

    def __call__(self, c):
        c = np.atleast_2d(c)
        if self.neighbours == "replace":  # the count, if any, does not change: n is public
            return np.abs(c[:, self.with_count :]) @ (self.hi - self.lo)
        return np.maximum(self._top(c)[0], self._top(-c)[0])

    def extreme_points(self, c):
        c = np.atleast_2d(c)
        if self.neighbours == "replace":
            return np.where(c >= 0, 1.0, -1.0) * np.concatenate([[0.0] * self.with_count, self.hi - self.lo])
        (hp, xp), (hm, xm) = self._top(c), self._top(-c)
        return np.where((hp >= hm)[:, None], xp, -xm)


def linear_space(lo, hi, neighbours, *, with_count=False):
    """The space of sum_i t(x_i), t(x) = x (or (1, x)) on the box [lo, hi]^p, with exact l_p sensitivities.

    Delta_p is ||w||_p (replace-one: the corner difference hi - lo) or the largest ||t(x)||_p
    over the box (add/remove: the corner of largest |x_j|), in closed form.
    """
    p = len(lo)
    names = (["n"] if with_count else []) + [f"sum x{j + 1}" for j in range(p)]
    support = _LinearSupport(lo, hi, neighbours, with_count)
    space = SensitivitySpace.from_support(
        p + with_count, support, extreme_points=support.extreme_points, exact=True, neighbours=neighbours
    )
    if neighbours == "replace":
        extreme, why = hi - lo, "the corner difference hi - lo"
    else:
        extreme = np.concatenate([[1.0] if with_count else [], np.maximum(np.abs(lo), np.abs(hi))])
        why = "the corner of largest |x_j|"
    for q in (1.0, 2.0, math.inf):
        space.register_exact(LpBall(p + with_count, q), float(np.linalg.norm(extreme, ord=q)), why)
    return space, names


def sum_ball(lo, hi, neighbours):
    """The exact hull of S_T for sum x over the box (replace), or a certified ball (add/remove).

    Built once per (bounds, neighbours): the hull of the box's corners is a triangulated
    polytope, tens of milliseconds to build, and depends on public inputs only.
    """
    return _sum_ball(tuple(np.asarray(lo, float).tolist()), tuple(np.asarray(hi, float).tolist()), neighbours)


@functools.lru_cache(maxsize=32)
def _sum_ball(lo, hi, neighbours):
    lo, hi = np.array(lo), np.array(hi)
    p = len(lo)
    if neighbours == "replace":  # S_T = box - box = prod [-(hi - lo), hi - lo]
        return LinearImage(LpBall(p, math.inf), hi - lo, name="box hull")
    if p <= _MAX_EXACT_COLUMNS:  # Hull(box u -box): the symmetric hull of the box's corners
        corners = np.array(np.meshgrid(*zip(lo, hi), indexing="ij")).reshape(p, -1).T
        if p == 1:  # named like every other hull: publish keys the candidates by name
            return LinearImage(LpBall(1, math.inf), [float(np.max(np.abs(corners)))], name="hull of +-box")
        return Polytope.from_points(corners, name="hull of +-box")
    return LinearImage(LpBall(p, math.inf), np.maximum(np.abs(lo), np.abs(hi)), name="symmetric box")


def check_l0_bound(l0_bound, dim, owner):
    """Return ``l0_bound`` if it is an int in [1, dim]."""
    rule = f"an int in the range [1, {dim}] (the number of columns)"
    if isinstance(l0_bound, bool) or not isinstance(l0_bound, numbers.Integral):
        raise param_error("l0_bound", owner, rule, l0_bound, TypeError)
    if not 1 <= int(l0_bound) <= dim:
        raise param_error("l0_bound", owner, rule, l0_bound)
    return int(l0_bound)


class ScaledSupport:
    """h(c) = h_0(b * c): the support function of diag(b) K_0 (picklable)."""

    def __init__(self, space, scale):
        self.space, self.scale = space, scale

    def __call__(self, c):
        return self.space.support(np.atleast_2d(c) * self.scale)


def count_sum_ball(lo, hi):
    """The exact hull of +-{(1, x) : x in [lo, hi]}: the cube's image under (t, s) -> (t, c t + a s).

    With c = (hi + lo) / 2 and a = (hi - lo) / 2, the section of Hull(P u -P) at count
    t = 2 lam - 1 is lam B - (1 - lam) B = t c + [-a, a] for the box B (the hull of two
    convex sets is the union of their segments; Minkowski sums of boxes are boxes), which
    is the section of L [-1, 1]^(p+1), L = [[1, 0], [c, diag(a)]]. Exact in every dimension,
    with an exact sampler and volume 2^(p+1) prod a_j.
    """
    p = len(lo)
    L = np.zeros((p + 1, p + 1))
    L[0, 0] = 1.0
    L[1:, 0] = (hi + lo) / 2.0
    L[np.arange(1, p + 1), np.arange(1, p + 1)] = (hi - lo) / 2.0
    return LinearImage(LpBall(p + 1, math.inf), L, name="hull of +-(1, x)")
