"""Certified outer polytopes of Hull(S_T), with an inner polytope and their sandwich ratio.

Every cutting plane c.u <= h(c) with h the (certified) support function of Hull(S_T)
contains S_T, so their intersection is a certified outer ball (paper Theorem "Optimal
K-mech": the hull is optimal, and any ball containing it is valid). Points of S_T that
attain h(c) span an inner polytope; the ratio of the two volumes bounds how far the outer
ball can be from the optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from knorm._validation import check_count, check_rng, check_vectors
from knorm.geometry import Polytope, Volume
from knorm.geometry.duality import sign_vectors

__all__ = ["CertifiedHull", "inner_hull", "outer_hull"]

# A width below this fraction of the largest one means S_T is flat. It is well above
# the 1e-10 relative slack of QuadraticStatistic's extremes.
_FLAT_TOL = 1e-8


@dataclass(frozen=True)
class CertifiedHull:
    """A certified outer approximation of Hull(S_T), with an inner one and their sandwich.

    Returned by :func:`outer_hull`; each parameter is kept as the attribute of the
    same name.

    Parameters
    ----------
    outer : Polytope
        The polytope {u : c_k.u <= h(c_k)} over the directions c_k: it contains
        Hull(S_T) (certified).
    inner : Polytope
        Symmetric hull of points of S_T attaining h(c_k): inside Hull(S_T).
    sandwich : Volume
        The ratio vol(inner) / vol(outer) <= vol(Hull S_T) / vol(outer): the outer
        ball is at most 1/sandwich times the optimal volume (exact with qhull in low
        dimension, else a labelled Monte Carlo estimate).
    """

    outer: Polytope
    inner: Polytope
    sandwich: Volume


def inner_hull(space, n=20_000, *, rng=None):
    """Return the symmetric hull of sampled points of S_T, for plots and diagnostics only.

    Parameters
    ----------
    space : SensitivitySpace
        The space, with a sampler.
    n : int, default 20000
        Number of sampled points of S_T.
    rng : None, int, SeedSequence or Generator
        Randomness of the sample.

    Returns
    -------
    Polytope
        Flagged ``estimated``: it may miss parts of S_T, so mechanisms refuse it unless
        the caller accepts the risk explicitly.
    """
    ball = Polytope.from_points(space.sample(n, rng=rng))
    ball.estimated = True
    return ball


def outer_hull(space, directions=None, *, n_directions=None, rng=None, n_volume=200_000):
    """Return a certified outer polytope of Hull(S_T) from cutting planes c.u <= h(c).

    Parameters
    ----------
    space : SensitivitySpace
        The space, with a certified support function and an extreme-point oracle.
    directions : array_like of shape (k, m), optional
        Cutting directions; by default the coordinate axes, the sign vectors (m <= 10)
        and random Gaussian directions.
    n_directions : int, optional
        Number of random directions (default 60 m).
    rng : None, int, SeedSequence or Generator
        Randomness of the directions and of Monte Carlo volumes.
    n_volume : int, default 200000
        Monte Carlo points for the sandwich in dimensions beyond qhull's reach.

    Returns
    -------
    CertifiedHull
        The outer polytope {u : c.u <= h(c)} over the directions and their
        negatives, the inner polytope of the points attaining h(c), and the ratio
        of their volumes (exact with qhull in low dimension, else a labelled
        Monte Carlo estimate).

    Raises
    ------
    ValueError
        For a zero direction, directions that do not span R^m, or a space that is not
        full-dimensional (a width h(c) + h(-c) of about 0, as for a constant or
        duplicated coordinate of T): no polytope of R^m can then be a norm ball around
        it. Its sensitivities still work.
    """
    dim = space.dim
    gen = check_rng(rng, "outer_hull")
    if directions is None:
        n_directions = 60 * dim if n_directions is None else check_count(n_directions, "n_directions", "outer_hull")
        parts = [np.eye(dim), gen.standard_normal((n_directions, dim))]
        if dim <= 10:
            parts.append(sign_vectors(dim))
        directions = np.vstack(parts)
    c = np.atleast_2d(check_vectors(directions, dim, "directions", "outer_hull"))
    norms = np.linalg.norm(c, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(
            "The 'directions' parameter of outer_hull must have non-zero rows. "
            f"Got a zero row at index {int(np.flatnonzero(norms == 0)[0])} instead."
        )
    rank = int(np.linalg.matrix_rank(c))
    if rank < dim:
        raise ValueError(f"The 'directions' parameter of outer_hull must span R^{dim}. Got rank {rank} instead.")
    c = c / norms
    h = space.support(c)
    # Hull(S_T) is symmetric, so its width along c is h(c) + h(-c) = 2 h(c).
    flat = h <= _FLAT_TOL * np.max(h)
    if np.any(flat):
        i = int(np.flatnonzero(flat)[0])
        raise ValueError(
            "outer_hull: the sensitivity space is not full-dimensional: its width h(c) + h(-c) along "
            f"c = {np.round(c[i], 6).tolist()} is {2 * h[i]:.3g}, next to a largest width of {2 * np.max(h):.3g} "
            "(a constant or duplicated coordinate of T, or another linear dependence between coordinates). "
            "Drop or merge that coordinate."
        )
    outer = Polytope.from_halfspaces(np.vstack([c, -c]), np.concatenate([h, h]))
    inner = Polytope.from_points(space.extreme_points(c))
    return CertifiedHull(outer, inner, _volume_ratio(inner, outer, gen, n_volume))


def _volume_ratio(inner, outer, rng, n):
    vi, vo = inner.volume(rng=rng, n_samples=n), outer.volume(rng=rng, n_samples=n)
    if vi.exact and vo.exact:
        return Volume(vi / vo, exact=True, method="qhull volumes")
    u = outer.sample_uniform(min(n, 20_000), rng=rng)
    frac = float(np.mean(inner.contains(u)))
    se = math.sqrt(max(frac * (1 - frac), 1 / len(u)) / len(u))
    return Volume(frac, exact=False, stderr=se, method=f"fraction of {len(u)} uniform outer points in the inner hull")
