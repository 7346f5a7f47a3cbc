"""Exact hulls of sensitivity spaces recognised from the statistic: closed forms before numerics.

Every ball here is exactly Hull(S_T) for the statistic it is returned for, by a proof that
depends only on the statistic's coefficients and declared domain (never on sampling), so
it is the optimal K-norm ball (paper Theorem "Optimal K-mech") with Delta = 1, attained.

Blocks of a :class:`~knorm.sensitivity.QuadraticStatistic` under replace-one neighbours
(S = t(D) - t(D), errata item 5), for records in a box:

* linear, t(z) = B z + c with B square and invertible: S = B diag(w) [-1, 1]^d with
  w = upper - lower, the image of the cube (a parallelotope, :class:`LinearImage` of the
  l_inf ball); with fewer outputs than variables S is the zonotope sum_i [-1, 1] w_i B_i,
  whose facets are normal to every (m - 1)-subset of generators spanning a hyperplane;
* one variable, t(x) = C (x, x^2) + c with C invertible: x = mid + s z for z in [-1, 1]
  gives (x, x^2) = const + M (z, 2 z^2) with M = [[s, 0], [2 mid s, s^2 / 2]], so
  S = C M S_2 and Hull(S) = C M K_2 (paper Example 2.1 with errata item 3: K_2 is the hull
  for (z, 2 z^2));
* two variables, t(x, y) = C (x, y, x y) + c with C invertible: likewise
  (x, y, x y) = const + M (z1, z2, z1 z2) with M = [[s1, 0, 0], [0, s2, 0],
  [mid2 s1, mid1 s2, s1 s2]], and the hull of (z1, z2, z1 z2) differences is K_3 (paper
  Section 5.1; errata, facts);
* one output coordinate: the interval [-h(e), h(e)].

Finite record sets, recognised by their exact list of records (Joseph & Yu 2023):

* the unit vectors e_1..e_d (a histogram): :class:`HistogramBall` under replace-one (flat:
  the first d - 1 counts are released), the l1 ball under add/remove;
* every 0/1 vector with at most k ones (l0-bounded counts): :class:`CountBall`;
* every permutation of b (0, 1, ..., d - 1) + a (Borda scores), d <= 8: |b| times
  :class:`VoteBall` (replace-one; add/remove when a = 0).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from knorm.geometry import CountBall, HistogramBall, K2Ball, LinearImage, LpBall, Polytope, VoteBall, k3_ball

__all__ = ["finite_exact_hull", "quadratic_block_hull"]

# Largest number of candidate facets of an exact zonotope.
_MAX_ZONOTOPE_FACETS = 20_000
# Largest number of records checked for the count and vote patterns.
_MAX_PATTERN_RECORDS = 200_000
# Largest number of candidates for which the exact vote pattern is checked (d! records).
_MAX_VOTE_CANDIDATES = 8
# Conditioning bound of the invertibility checks.
_MAX_CONDITION = 1e10


def _invertible(C):
    return C.shape[0] == C.shape[1] and np.linalg.cond(C) < _MAX_CONDITION


def quadratic_block_hull(t, support):
    """Return the exact Hull(S_T) of one block of a statistic, when a closed form applies (replace-one).

    Parameters
    ----------
    t : QuadraticStatistic
        The block: its output coordinates are linearly independent functions (a
        reduced statistic) of its record variables.
    support : callable
        The exact support function h of the block's S_T (for the one-coordinate case).

    Returns
    -------
    tuple of (NormBall, str) or None
        The hull and its proof, or None when no closed form applies.
    """
    m, d = t.dim, t.record_dim
    lo, hi = t.lower, t.upper
    mid, s = 0.5 * (lo + hi), 0.5 * (hi - lo)
    if m == 1:
        h = float(support(np.ones((1, 1)))[0])
        return LpBall(1, math.inf, radius=h), "one coordinate: the interval [-h(e), h(e)]"
    if t.is_linear:
        B = t.b
        if m == d and _invertible(B):
            return (
                LinearImage(LpBall(d, math.inf), B * (hi - lo), name="B diag(w) [-1,1]^d"),
                "linear t = B z on a box: S_T = B diag(upper - lower) [-1, 1]^d, a parallelotope",
            )
        return _zonotope(B * (hi - lo))
    if d == 1:
        C = np.column_stack([t.b[:, 0], t.A[:, 0, 0]])  # t = C (x, x^2) + const
        if _invertible(C):
            M = np.array([[s[0], 0.0], [2.0 * mid[0] * s[0], 0.5 * s[0] ** 2]])
            return (
                LinearImage(K2Ball(), C @ M, name="hull of (x, x^2)"),
                "t = C (x, x^2) on an interval: Hull(S_T) = C M K_2 (paper Example 2.1, errata item 3)",
            )
        return None
    if d == 2 and t.is_multilinear and m == 3:
        C = np.column_stack([t.b[:, 0], t.b[:, 1], 2.0 * t.A[:, 0, 1]])  # t = C (x, y, x y) + const
        if _invertible(C):
            M = np.array([[s[0], 0.0, 0.0], [0.0, s[1], 0.0], [mid[1] * s[0], mid[0] * s[1], s[0] * s[1]]])
            return (
                LinearImage(k3_ball(), C @ M, name="hull of (x, y, xy)"),
                "t = C (x, y, x y) on a box: Hull(S_T) = C M K_3 (paper Section 5.1; errata, facts)",
            )
    return None


def _zonotope(G):
    """The zonotope sum_i [-1, 1] g_i (columns of G, spanning R^m) as an exact Polytope, if small enough."""
    m, n = G.shape
    G = G[:, np.any(G != 0, axis=0)]
    n = G.shape[1]
    if n < m or math.comb(n, m - 1) > _MAX_ZONOTOPE_FACETS:
        return None
    normals = []
    for sub in itertools.combinations(range(n), m - 1):
        # The normal of the hyperplane spanned by m - 1 generators: the last left singular vector.
        u, sv, _ = np.linalg.svd(G[:, sub], full_matrices=True)
        if sv[-1] <= 1e-10 * sv[0]:
            continue  # they do not span a hyperplane
        normals.append(u[:, -1])
    if not normals:
        return None
    N = np.array(normals)
    N = N * np.sign(N[np.arange(len(N)), np.argmax(np.abs(N) > 1e-12, axis=1)])[:, None]
    N = np.unique(np.round(N, 12), axis=0)
    h = np.abs(N @ G).sum(axis=1)  # support of the zonotope: sum_i |n.g_i|
    poly = Polytope.from_halfspaces(np.vstack([N, -N]), np.concatenate([h, h]), name="zonotope")
    return poly, f"linear t = B z on a box: the zonotope of its {n} generators, {len(N)} facet pairs"


def finite_exact_hull(points, neighbours):
    """Return the exact hull of S_T for a recognised finite record set (Joseph & Yu's statistics).

    Parameters
    ----------
    points : ndarray of shape (k, m)
        The per-record values t(z) of the declared records, full statistic.
    neighbours : {'replace', 'add_remove'}
        The neighbouring relation.

    Returns
    -------
    tuple of (NormBall, str) or None
        The hull, in the coordinates it releases (the first d - 1 for flat balls, as
        chosen by :class:`~knorm.sensitivity.reduction.AffineReduction`), and its proof;
        None when the records match no known pattern.
    """
    P = np.unique(np.asarray(points, dtype=float), axis=0)
    k, d = P.shape
    if d < 2 or k > _MAX_PATTERN_RECORDS:
        return None
    replace = neighbours == "replace"
    binary = np.all((P == 0) | (P == 1))
    if binary:
        ones = P.sum(axis=1)
        if np.all(ones == 1) and k == d:
            if replace:
                return HistogramBall(d), "records are the unit vectors: the histogram's root polytope (Joseph & Yu)"
            return LpBall(d, 1), "records are the unit vectors: under add/remove the hull of +-e_j, the l1 ball"
        top = int(ones.max())
        expected = sum(math.comb(d, j) for j in range(top + 1))
        if top >= 1 and k == expected:  # every 0/1 vector with at most top ones (all distinct, all present)
            return (
                CountBall(d, top, neighbours=neighbours),
                f"records are every 0/1 vector with at most {top} ones: Joseph & Yu's count ball",
            )
        return None
    if d <= _MAX_VOTE_CANDIDATES and k == math.factorial(d):
        w = np.sort(P[0])
        steps = np.diff(w)
        if np.all(np.sort(P, axis=1) == w) and np.all(steps > 0) and np.allclose(steps, steps[0], rtol=1e-12):
            b, a = float(steps[0]), float(w[0])
            if replace:
                ball = VoteBall(d)
            elif a == 0.0:
                ball = VoteBall(d, neighbours="add_remove")
            else:
                return None
            return (
                ball if b == 1.0 else ball.scaled(b),
                f"records are every permutation of {b:g} (0, ..., {d - 1}) + {a:g}: Joseph & Yu's vote ball",
            )
    return None
