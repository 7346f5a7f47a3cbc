"""The largest norm over a symmetric convex set, through the rows of the norm's polar ball.

A norm ball K whose polar K° is a polytope has ||u||_K = max_i g_i . u over the vertices
g_i of K° (the normalised facet rows of K). So, for a convex set C,

    sup_{u in C} ||u||_K = max_i sup_{u in C} g_i . u = max_i h_C(g_i),

h_C the support function of C, and when C is the hull of finitely many points the supremum
of the convex function ||.||_K is attained at one of them. Sensitivities (C = Hull(S_T),
paper Definition "K-norm Sensitivity") and the containment order (C = Delta_K K, paper
Definition "Containment and Volume Orders") are both this computation.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from knorm.geometry.base import NormBall, ScaledBall
from knorm.geometry.linear_image import LinearImage
from knorm.geometry.lp import LpBall

__all__ = ["largest_norm", "norm_rows", "sign_vectors"]

# Sign vectors are enumerated for an l1 ball up to this dimension: 2^(m-1) rows.
MAX_SIGN_DIM = 14


def sign_vectors(m):
    """Return the 2^(m-1) sign vectors of R^m whose first entry is +1.

    Parameters
    ----------
    m : int
        Dimension.

    Returns
    -------
    ndarray of shape (2 ** (m - 1), m)
        With their negatives, all the vertices of the cube [-1, 1]^m.

    Examples
    --------
    >>> sign_vectors(2).tolist()
    [[1.0, 1.0], [1.0, -1.0]]
    """
    signs = list(itertools.product((1.0, -1.0), repeat=m - 1))
    rest = np.array(signs, dtype=float).reshape(len(signs), m - 1)
    return np.hstack([np.ones((len(rest), 1)), rest])


@functools.singledispatch
def norm_rows(ball):
    """Return rows g_i with ||u||_K = max_i |g_i . u|, when finitely many are known.

    Parameters
    ----------
    ball : NormBall
        A symmetric ball K.

    Returns
    -------
    tuple of (ndarray, str) or None
        The rows (one of each pair +-g, which suffices for symmetric sets) and a word on
        where they come from; None when K is not a polytope with known facets (l_p for
        1 < p < inf, curved or oracle balls) or an l1 ball of dimension above 14.

    Notes
    -----
    The rows are the vertices of the polar ball K°: the coordinate axes / radius for
    l_inf, the sign vectors / radius for l1 (H\u00f6lder duality), the normalised
    halfspaces of a polytope, and the base ball's rows divided by c for c K.

    Examples
    --------
    >>> rows, how = norm_rows(LpBall(2, float("inf"), radius=2.0))
    >>> rows.tolist(), how
    ([[0.5, 0.0], [0.0, 0.5]], 'the coordinate axes')
    """
    # A polytope with known facets (the generic case; l_p balls and images dispatch below).
    halfspaces = getattr(ball, "halfspaces", None)
    if halfspaces is not None and getattr(ball, "constraints", None) is None:
        return halfspaces[0], "the facets"
    return None


@norm_rows.register
def _(ball: ScaledBall):
    inner = norm_rows(ball.base)
    return None if inner is None else (inner[0] / ball.factor, inner[1])


@norm_rows.register
def _(ball: LinearImage):  # ||v||_{AK} = max_i g_i . A^{-1} v
    inner = norm_rows(ball.base)
    return None if inner is None else (inner[0] @ ball._inverse, inner[1])


@norm_rows.register
def _(ball: LpBall):
    if math.isinf(ball.p):
        return np.eye(ball.dim) / ball.radius, "the coordinate axes"
    if ball.p == 1 and ball.dim <= MAX_SIGN_DIM:
        return sign_vectors(ball.dim) / ball.radius, "the sign vectors"
    return None


def largest_norm(ball, *, support=None, points=None):
    """Return sup ||u||_K over a symmetric convex set C, exactly, where the geometry allows.

    Parameters
    ----------
    ball : NormBall
        The ball K of the norm.
    support : callable, optional
        The support function h_C, vectorised over rows: used with the rows of
        :func:`norm_rows`.
    points : array_like of shape (n, m), optional
        Finitely many points whose symmetric hull is C (takes precedence).

    Returns
    -------
    tuple of (float, ndarray or None, str) or None
        The supremum, a point of C attaining it (None when found through the support
        function), and the method; None when neither route applies.

    Notes
    -----
    A convex function attains its maximum over a polytope at a vertex, and
    sup_C ||u||_K = max_i h_C(g_i) over the rows g_i of K's polar ball (module notes).

    Examples
    --------
    >>> value, witness, how = largest_norm(LpBall(2, 1), points=[[1.0, 2.0], [3.0, 0.0]])
    >>> value, witness.tolist()
    (3.0, [1.0, 2.0])
    """
    if not isinstance(ball, NormBall):
        raise TypeError(f"The 'ball' parameter of largest_norm must be a NormBall. Got {type(ball).__name__} instead.")
    if points is not None:
        pts = np.atleast_2d(np.asarray(points, dtype=float))
        g = ball._gauge(pts)
        i = int(np.argmax(g))
        return float(g[i]), pts[i], "maximum over the extreme points"
    rows = norm_rows(ball) if support is not None else None
    if rows is None:
        return None
    return float(np.max(support(rows[0]))), None, f"support function over {rows[1]}"
