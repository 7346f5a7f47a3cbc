"""The ball a lattice law samples with, by the type of the norm ball.

:func:`knorm.mechanisms.lattice.lattice_noise` hands each ball to
:class:`~knorm.noise.lattice.LatticeKNormNoise` in the form its exact samplers take:

* a 1-D ball as the interval [-r, r] (:func:`_as_interval`), sampled as a discrete Laplace;
* an l1 ball, or an l_inf ball on equal spacings, as itself: the dedicated samplers
  (:func:`_dedicated`; the ball says whether it is an l_p ball, :meth:`NormBall.lp_parts`);
* count and vote balls on the integer lattice as their exact integer polytopes
  (:func:`_count_polytope`, rows chosen by :func:`_integer_rows` on the ball's type);
* any other ball as its outward-rounded rational polytope
  (:func:`~knorm.noise.lattice.to_rational_polytope`).
"""

from __future__ import annotations

import itertools
import math
from functools import singledispatch

import numpy as np

from knorm.geometry import CountBall, LpBall, ScaledBall, VoteBall
from knorm.noise.lattice import MIN_ACCEPTANCE, RationalPolytope

#: An induced ball (count, vote) gets an exact rational polytope only with at most this many rows.
_MAX_INDUCED_ROWS = 1 << 14


def _dedicated(ball, gamma):
    """Whether LatticeKNormNoise has a dedicated (non-polytope) sampler for ``ball`` on ``gamma``."""
    parts = ball.lp_parts()
    if parts is None:
        return False
    p = parts[0].p
    return p == 1 or (math.isinf(p) and len(set(gamma.tolist())) == 1)


def _as_interval(ball):
    """A 1-D ball is an interval [-r, r]: the l1 ball of radius r, with the exact discrete Laplace sampler.

    A 1-D l_p ball is that interval exactly, for every p. Any other 1-D ball (a linear image,
    a polytope, a count ball) lies inside [-b, b], b its certified bounding box widened by a
    relative 1e-12 against the rounding of its product: the norm of [-b, b] is at most the
    ball's, so its certified sensitivity stays valid there (as for the outward rational
    polytope). The discrete Laplace then serves every rate in its range (2^-46 to 2^62 per
    lattice unit), where the polytope sampler's N k overflowed int64 at epsilon = 1e-9 and
    needed more denominator bits at epsilon = 1e9 (issue 21).
    """
    if ball.dim != 1:
        return ball
    parts = ball.lp_parts()
    if parts is not None:
        base, factor = parts
        if base.p == 1:
            return ball
        interval = LpBall(1, 1, radius=base.radius)
        return interval if factor is None else ScaledBall(interval, factor)
    radius = float(ball.bounding_box()[0])
    if not (math.isfinite(radius) and radius > 0):
        return ball
    return LpBall(1, 1, radius=math.nextafter(radius * (1 + 1e-12), math.inf))


def _count_rows(ball):
    """Integer rows N (and D = k) with ||u||_K = max_i N_i . u / k, exactly, for a CountBall.

    With g(x) = max(||x||_inf, ||x||_1 / k) on x >= 0 (CountBall, Notes), k g(u+) is the largest
    of 0 and a . u over P' = {k e_i} u {1_T : |T| > k} (a . u <= a . u+ as a >= 0, with equality
    for T the positive coordinates; 1_T with |T| <= k is dominated by k e_i). Replace-one:
    the gauge max(g(u+), g(u-)) has rows P' u -P'. Add/remove: g(u+) + g(u-) has rows a - b
    for a, b in P' u {0} with disjoint supports, not both 0. No rounding: K' = K.
    """
    d, k = ball.dim, ball.l0_bound
    eye = np.eye(d, dtype=np.int64)
    plus = [k * e for e in eye]
    for size in range(k + 1, d + 1):
        for subset in itertools.combinations(range(d), size):
            row = np.zeros(d, dtype=np.int64)
            row[list(subset)] = 1
            plus.append(row)
    if ball.neighbours == "replace":
        return np.array(plus), k
    rows = list(plus)
    for a in plus:
        for b in plus:
            if not np.any((a != 0) & (b != 0)):
                rows.append(a - b)
    return np.array(rows), k


def _vote_rows(ball):
    """Integer rows N and D with ||v||_K = max_i N_i . v / D, exactly, for a VoteBall.

    The centred permutohedron Pi has gauge max over proper subsets A (|A| = s) of
    2 sum_{i in A} y_i / (s (d - s)) (Rado's facets, VoteBall Notes). Replace-one: K = 2 Pi in
    the released coordinates v, y = (v, -sum v), so the row of A is (1_A - [d in A] 1) / (s (d - s))
    on v. Add/remove: y = u - t 1 with t = mean u, rows 2 (d 1_A - s 1) / (d s (d - s)), and
    the cylinder's ends 2 |t| / (d - 1), rows +-2 1 / (d (d - 1)). D is the common denominator.
    """
    d = ball.stat_dim
    flat = ball.neighbours == "replace"
    D = math.lcm(*[(1 if flat else d) * s * (d - s) for s in range(1, d)])
    rows = []
    for mask in range(1, 2**d - 1):
        A = np.array([(mask >> i) & 1 for i in range(d)], dtype=np.int64)
        size = int(A.sum())
        if flat:
            rows.append((A[:-1] - A[-1]) * (D // (size * (d - size))))
        else:
            rows.append(2 * (d * A - size) * (D // (d * size * (d - size))))
    if not flat:
        rows.append(np.full(d, 2 * D // (d * (d - 1)), dtype=np.int64))
    return np.array(rows), D


@singledispatch
def _integer_rows(ball):
    """(number of rows, builder of (N, D)) of the ball's exact integer polytope at spacing 1, or None."""
    return None


@_integer_rows.register
def _(ball: CountBall):
    d, k = ball.dim, ball.l0_bound
    plus = d + sum(math.comb(d, s) for s in range(k + 1, d + 1))
    return plus * (plus if ball.neighbours == "add_remove" else 1), _count_rows


@_integer_rows.register
def _(ball: VoteBall):
    return 2**ball.stat_dim, _vote_rows


def _count_polytope(ball):
    """The exact RationalPolytope of a CountBall or VoteBall in lattice units at spacing 1, or ValueError."""
    found = _integer_rows(ball)
    if found is None:
        raise ValueError(f"{type(ball).__name__} has no exact integer polytope")
    rows, build = found
    if rows > _MAX_INDUCED_ROWS:
        raise ValueError(f"the ball's exact polytope would have over {_MAX_INDUCED_ROWS} rows")
    box = np.asarray(ball.bounding_box(), dtype=float)
    share = math.exp(math.log(float(ball.volume())) - float(np.sum(np.log(2 * box))))
    if share < MIN_ACCEPTANCE / 100:  # the rejection from the box would accept far too rarely (pilot skipped)
        raise ValueError(f"the ball fills {share:.2g} of its box: rejection from l_inf would accept too rarely")
    P = RationalPolytope(*build(ball))
    # The ball's own box is exact (1 for counts, d - 1 for votes: the l_inf sensitivities); the LP box
    # is padded by one lattice unit, which at spacing 1 doubled the count ball's proposal box (an
    # acceptance 2^-d lower). Rows and box are exact integers, so the tighter box is certified.
    if np.all(box == np.round(box)) and np.all(box <= P.box):
        P.box = box.astype(np.int64)
    return P
