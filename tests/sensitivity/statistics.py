"""Statistics shared by the hull, reduction and choice tests."""

import numpy as np

from knorm.sensitivity import QuadraticStatistic


def moments(lower, upper, interleave=False):
    """Per-column (sum x_j, sum x_j^2) for columns with the given bounds: separable, one block per column."""
    lower, upper = np.atleast_1d(np.asarray(lower, float)), np.atleast_1d(np.asarray(upper, float))
    d = len(lower)
    A, b = np.zeros((2 * d, d, d)), np.zeros((2 * d, d))
    lin, sq = (2 * np.arange(d), 2 * np.arange(d) + 1) if interleave else (np.arange(d), d + np.arange(d))
    b[lin, np.arange(d)] = 1.0
    A[sq, np.arange(d), np.arange(d)] = 1.0
    return QuadraticStatistic(A, b, lower, upper)


def second_moments(p, lower=-1.0, upper=1.0):
    """(x, upper triangle of x x') for x in [lower, upper]^p: one block, cross terms everywhere."""
    iu, ju = np.triu_indices(p)
    m = p + len(iu)
    A, b = np.zeros((m, p, p)), np.zeros((m, p))
    b[np.arange(p), np.arange(p)] = 1.0
    A[p + np.arange(len(iu)), iu, ju] = 1.0
    return QuadraticStatistic(A, b, np.full(p, lower), np.full(p, upper))


def identity(d, widths=None):
    """t(z) = z on [0, w_j]: the sum statistic."""
    w = np.ones(d) if widths is None else np.asarray(widths, float)
    return QuadraticStatistic(np.zeros((d, d, d)), np.eye(d), np.zeros(d), w)


def vote_support(c):
    """Support of Hull(S_T) for full Borda totals, replace-one: 2 h_Pi (Joseph & Yu; VoteBall notes)."""
    c = np.atleast_2d(c)
    d = c.shape[1]
    return 2.0 * (np.sort(c, axis=1) @ np.arange(d) - 0.5 * (d - 1) * c.sum(axis=1))


def vote_extreme_points(c):
    """Maximisers of c.u over the full Borda difference hull: the rank scores against their reversal."""
    c = np.atleast_2d(c)
    d = c.shape[1]
    ranks = np.argsort(np.argsort(c, axis=1), axis=1).astype(float)
    return 2.0 * (ranks - 0.5 * (d - 1))


def grid_pairs_support(t, c, n=401):
    """Brute force: max over a grid of records of c.t(z) minus the min (one-variable statistics)."""
    z = np.linspace(t.lower[0], t.upper[0], n)[:, None]
    v = t(z) @ np.atleast_2d(c).T
    return v.max(axis=0) - v.min(axis=0)
