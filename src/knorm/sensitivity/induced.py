"""Sensitivity spaces of counts, sums, histograms and votes, whose hulls are known exactly.

Joseph & Yu (2023), "Optimal private count, sum and vote via K-norm mechanisms"
(arXiv 2309.15790), give the convex hulls of these sensitivity spaces; the balls of
:mod:`knorm.geometry.induced` implement them. Each space here has that ball as its exact
hull (so it is the optimal K-norm mechanism, paper Theorem "Optimal K-mech") and exact
l1, l2 and l_inf sensitivities in closed form.
"""

from __future__ import annotations

import math

import numpy as np

from knorm._docs import fill_doc
from knorm.geometry import CountBall, HistogramBall, LpBall, SumBall, VoteBall
from knorm.sensitivity.reduction import AffineReduction
from knorm.sensitivity.space import SensitivitySpace

__all__ = ["count_space", "histogram_space", "induced_space", "sum_space", "vote_space"]


def induced_space(ball):
    """Return the sensitivity space whose exact hull is an induced-norm ball.

    Parameters
    ----------
    ball : SumBall, CountBall, HistogramBall or VoteBall
        The hull of S_T, in the released coordinates.

    Returns
    -------
    SensitivitySpace
        With ``hull=ball``, the ball's support function (exact), and the exact
        sensitivities of the ball (1) and of l1, l2 and l_inf registered. For a flat
        ball (histograms, and votes under replace-one) the space is that of the released
        coordinates, and its ``reduction`` rebuilds the full statistic.

    Examples
    --------
    >>> space = vote_space(4)
    >>> space.dim, space.sensitivity(space.hull).value, space.sensitivity(1).value
    (3, 1.0, 7.0)
    """
    if not isinstance(ball, (SumBall, CountBall, HistogramBall, VoteBall)):
        raise TypeError(
            "The 'ball' parameter of induced_space must be a SumBall, CountBall, HistogramBall or VoteBall. "
            f"Got {type(ball).__name__} instead."
        )
    space = SensitivitySpace.from_support(
        ball.dim, ball.support, exact=True, hull=ball, name=repr(ball), neighbours=ball.neighbours
    )
    if ball.flat:  # released coordinates: the last count is n per_record_total minus the others
        d = ball.dim
        space.reduction = AffineReduction(
            ball.stat_dim, np.arange(d), -np.ones((1, d)), np.array([float(ball.per_record_total or 0.0)]), repr(ball)
        )
    space.register_exact(ball, 1.0, f"{type(ball).__name__} is the convex hull of S_T (Joseph & Yu 2023)")
    for p in (1.0, 2.0, math.inf):
        value, method = ball.max_lp_norm(p)
        space.register_exact(LpBall(ball.dim, p), value, method)
    return space


@fill_doc
def sum_space(dim, l0_bound, *, neighbours="replace"):
    """Return the space of sums of records in [-1, 1]^dim with at most ``l0_bound`` non-zeros.

    Parameters
    ----------
    dim : int
        Number of coordinates d.
    l0_bound : int
        Largest number of non-zero entries of a record, k in [1, d].
    %(neighbours)s

    Returns
    -------
    SensitivitySpace
        With the exact hull and sensitivities (see :func:`induced_space`).
    """
    return induced_space(SumBall(dim, l0_bound, neighbours=neighbours))


@fill_doc
def count_space(dim, l0_bound, *, neighbours="replace"):
    """Return the space of counts where a record adds 1 to at most ``l0_bound`` of ``dim`` counts.

    Parameters
    ----------
    dim : int
        Number of counts d.
    l0_bound : int
        Largest number of counts one record adds to, k in [1, d].
    %(neighbours)s

    Returns
    -------
    SensitivitySpace
        With the exact hull and sensitivities (see :func:`induced_space`).
    """
    return induced_space(CountBall(dim, l0_bound, neighbours=neighbours))


def histogram_space(n_categories):
    """Return the space of a histogram (each record in exactly one category), replace-one neighbours.

    The counts sum to the public n, so the space is flat: it lives in the first
    ``n_categories - 1`` counts, and the last is reconstructed exactly.

    Parameters
    ----------
    n_categories : int
        Number of categories k >= 2.

    Returns
    -------
    SensitivitySpace
        Of dimension k - 1.
    """
    return induced_space(HistogramBall(n_categories))


def vote_space(n_candidates, *, neighbours="replace"):
    """Return the space of Borda vote totals (each voter ranks ``n_candidates`` candidates).

    Parameters
    ----------
    n_candidates : int
        Number of candidates d >= 2.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under replace-one neighbours the totals sum to a public constant, so the space
        lives in the first d - 1 totals.

    Returns
    -------
    SensitivitySpace
        With the exact hull and sensitivities (see :func:`induced_space`).
    """
    return induced_space(VoteBall(n_candidates, neighbours=neighbours))
