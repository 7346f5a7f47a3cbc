"""Private medians and quantiles: the exponential mechanism over a public grid, sampled exactly.

A quantile has no useful additive sensitivity (one record can move the median of a
dataset from one end of its domain to the other), so it is not released with K-norm
noise. Like OpenDP (``make_quantile_score_candidates`` followed by
``make_report_noisy_max_gumbel``), diffprivlib and Tumult, knorm scores public candidates
by rank and chooses one with the exponential mechanism (Smith 2011); here the candidates
are a public grid over the declared bounds and the choice is sampled exactly in integer
arithmetic (:mod:`knorm.mechanisms.exponential`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from fractions import Fraction

import numpy as np

from knorm._docs import fill_doc
from knorm._ingest import is_dask
from knorm._validation import param_error
from knorm.accounting.zcdp import rho_from_epsilon
from knorm.mechanisms.exponential import ExponentialMechanism
from knorm.stats._core import check_budget, check_neighbours, ingest

__all__ = ["median", "quantile"]

#: Default number of grid points: lower + (upper - lower) j / 2^16, j = 0, ..., 2^16.
GRID_SIZE = (1 << 16) + 1
#: Largest number of candidates (scoring and sampling are O(n_C) per quantile).
MAX_CANDIDATES = 1 << 22
#: Levels q are read as the nearest fraction a / b with b at most this (0.1 is 1/10).
LEVEL_DENOMINATOR = 1 << 20
# n b stays below 2^63 in the integer scores.
_MAX_RECORDS = 1 << 31


def _check_levels(q, owner):
    """``q`` as (list of floats in [0, 1], scalar?), refusing anything else with the parameter named."""
    rule = "a float in the range [0, 1] or a non-empty 1-D sequence of them"
    scalar = np.ndim(q) == 0
    try:
        values = np.atleast_1d(np.asarray(q))
    except (TypeError, ValueError):
        raise param_error("q", owner, rule, q, TypeError) from None
    if values.ndim != 1 or values.size == 0:
        raise param_error("q", owner, rule, q)
    out = []
    for v in values.tolist():
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise param_error("q", owner, rule, q, TypeError)
        if not 0.0 <= float(v) <= 1.0:  # NaN fails too
            raise param_error("q", owner, rule, q)
        out.append(float(v))
    return out, scalar


def _check_candidates(candidates, lo, hi, owner):
    """The public candidates: a grid of ``candidates`` points over [lo, hi], or a given increasing array."""
    if isinstance(candidates, numbers.Integral) and not isinstance(candidates, bool):
        m = int(candidates)
        if not 2 <= m <= MAX_CANDIDATES:
            raise param_error("candidates", owner, f"an int in the range [2, {MAX_CANDIDATES}] or an array", m)
        grid = np.linspace(lo, hi, m)
        if not np.all(np.diff(grid) > 0):
            raise param_error(
                "candidates",
                owner,
                f"a grid size that gives distinct points over the bounds [{lo!r}, {hi!r}] (they are too close for it)",
                m,
            )
        return grid
    rule = (
        f"an int in the range [2, {MAX_CANDIDATES}] (grid points over the bounds) or a 1-D array of at least 2 "
        "finite, strictly increasing values within the bounds (public, never read from the data)"
    )
    try:
        grid = np.asarray(candidates, dtype=float)
    except (TypeError, ValueError):
        raise param_error("candidates", owner, rule, candidates, TypeError) from None
    if (
        grid.ndim != 1
        or not 2 <= grid.size <= MAX_CANDIDATES
        or not np.all(np.isfinite(grid))
        or not np.all(np.diff(grid) > 0)
        or grid[0] < lo
        or grid[-1] > hi
    ):
        raise param_error("candidates", owner, rule, f"an array of shape {grid.shape}" if grid.size > 8 else candidates)
    return grid


def _cell_counts(column, grid):
    """Counts of the records rounded to the nearest candidate (a midpoint goes down): cell j holds the x
    with m_(j-1) < x <= m_j, m_j = (grid[j] + grid[j + 1]) / 2 (m_(-1) = -inf, m_(n_C-1) = +inf)."""
    m = len(grid)
    mids = grid[:-1] / 2 + grid[1:] / 2  # halves first: no overflow near the largest bounds
    if is_dask(column):
        import dask.array as da

        idx = da.digitize(column, mids, right=True)
        return np.asarray(da.bincount(idx, minlength=m).compute(), dtype=np.int64)
    return np.bincount(np.searchsorted(mids, column, side="left"), minlength=m).astype(np.int64)


def rank_scores(counts, level):
    """Integer scores b dist(q n, [N_{j-1}, N_j]) of the candidates, for q = a / b.

    Parameters
    ----------
    counts : ndarray of int64, shape (n_candidates,)
        Records per candidate after rounding to the nearest one (:func:`_cell_counts`).
    level : Fraction
        q = a / b.

    Returns
    -------
    ndarray of int64
        S_j = max(0, b N_{j-1} - a n, a n - b N_j), where N_j is the number of records at or
        below candidate j after rounding to the nearest candidate (N_{-1} = 0, N_{n_C-1} = n).

    Notes
    -----
    S_j / b is the distance from q n to [N_{j-1}, N_j]: zero exactly when candidate j is a
    q-quantile of the rounded data (N_{j-1} <= q n <= N_j), which always exists, so the
    best score is 0. One record moves each N_j by at most 1 (replace-one: some by +1, some
    by -1; add/remove: all by 0 or +1 while q n moves by q), so the score vector's l_inf
    sensitivity is 1 (replace-one, n public) and max(q, 1 - q) (add/remove), in records:
    the stability map of OpenDP's ``make_quantile_score_candidates`` (``score_candidates_map``:
    ``alpha_den`` per replaced record with known size, max(alpha_num, alpha_den -
    alpha_num) per added or removed one), whose alpha-weighted score |(1 - q) #{x < c} -
    q #{x > c}| this one equals when no record sits on a candidate. Smith (2011) uses the
    same rank score.
    """
    a, b = level.numerator, level.denominator
    upto = np.cumsum(counts)
    below = upto - counts
    an = a * int(upto[-1])
    return np.maximum(0, np.maximum(b * below - an, an - b * upto))


def _sensitivity(level, neighbours):
    """The l_inf sensitivity of :func:`rank_scores` in records: 1 (replace-one) or max(q, 1 - q) (add/remove)."""
    return Fraction(1) if neighbours == "replace" else max(level, 1 - level)


@fill_doc
def quantile(
    x,
    q,
    bounds,
    *,
    epsilon=None,
    rho=None,
    candidates=GRID_SIZE,
    neighbours="replace",
    accountant=None,
    rng=None,
    label=None,
):
    """Release q-quantiles of ``x``, chosen on a public grid by the exponential mechanism.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, 1)
        The data, one column: numpy, pandas or Dask.
    q : float or sequence of float
        The levels, in [0, 1] (0.5 is the median). Each is read as the nearest fraction
        a / b with b <= 2^20 (0.1 as 1/10), which the release names.
    bounds : pair (lower, upper)
        The declared domain of the column (never read from the data).
    %(pure_epsilon)s
        With several levels, each gets epsilon / len(q) (sequential composition, stated in
        the release's ``sampler``).
    rho : float, optional
        A rho-zCDP budget instead of ``epsilon``: the exponential mechanism is pure
        epsilon-DP, so it runs at epsilon = sqrt(2 rho) rounded down, which is
        (epsilon^2 / 2 <= rho)-zCDP (Bun & Steinke 2016, Proposition 1.4); a rho ledger is
        charged epsilon^2 / 2, a pure epsilon ledger epsilon (both true), and the Release
        reports both.
    candidates : int or array_like, default 65537
        The public candidates: an int m gives the grid lower + (upper - lower) j / (m - 1),
        j = 0, ..., m - 1 (the default spacing is (upper - lower) / 2^16); an array gives
        them directly (finite, strictly increasing, within the bounds). The released values
        are candidates.
    %(neighbours)s
    %(accountant)s
    %(rng)s
    %(label)s

    Returns
    -------
    ExponentialRelease
        One candidate per level (shape (len(q),), or (1,) for a scalar q), with
        ``method='exponential mechanism'`` and its utility guarantee
        (:meth:`~knorm.mechanisms.exponential.ExponentialRelease.score_error`, in records).
        ``conf_int`` refuses: a rank bound becomes a value interval only through the data's
        distribution, which is private.

    Notes
    -----
    Each record is rounded to the nearest candidate (a per-record map: neighbours stay
    neighbours) and candidate c_j gets the score dist(q n, [N_{j-1}, N_j]) (:func:`rank_scores`; N_j
    counts the records at or below c_j), of l_inf sensitivity Delta = 1 under replace-one
    neighbours and max(q, 1 - q) under add/remove (OpenDP's ``score_candidates_map``).
    The exponential mechanism releases c_j with probability proportional to
    exp(-eps s_j / (2 Delta)) (McSherry & Talwar 2007, Theorem 6), sampled exactly
    (:mod:`knorm.mechanisms.exponential`). The best score is 0 (the rounded data's own
    q-quantile is a candidate), so with probability 1 - alpha the released c_j satisfies
    N_{j-1} - t <= q n <= N_j + t with t = (2 Delta / eps) ln(n_C / alpha) records
    (``score_error``): c_j is a q'-quantile of the rounded data for some |q' - q| <= t / n,
    and within half a grid step of a q'-quantile of the data itself.

    Values outside the bounds are clipped (counted, and the curator warned above 5%);
    nothing about them is published.

    References
    ----------
    Smith (2011), "Privacy-preserving statistical estimation with optimal convergence
    rates", STOC. McSherry & Talwar (2007), FOCS. OpenDP, ``make_quantile_score_candidates``
    (rust/src/transformations/quantile_score_candidates). Canonne, Kamath & Steinke (2020),
    arXiv:2004.00010, Algorithm 1 (the exact Bernoulli(exp(-x))).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(0, 10, 1000)
    >>> release = quantile(x, [0.25, 0.75], (0, 10), epsilon=1.0, rng=1)
    >>> release.names, release.method
    (('quantile 1/4', 'quantile 3/4'), 'exponential mechanism')
    >>> bool(abs(release.value[0] - 2.5) < 0.5)
    True
    """
    owner = "knorm.stats.quantile"
    return _release(x, q, bounds, (epsilon, rho), candidates, neighbours, accountant, rng, label, owner)


@fill_doc
def median(
    x,
    bounds,
    *,
    epsilon=None,
    rho=None,
    candidates=GRID_SIZE,
    neighbours="replace",
    accountant=None,
    rng=None,
    label=None,
):
    """Release the median of ``x``: :func:`quantile` at q = 1/2.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, 1)
        The data, one column: numpy, pandas or Dask.
    bounds : pair (lower, upper)
        The declared domain of the column (never read from the data).
    %(pure_epsilon)s
    rho : float, optional
        A rho-zCDP budget instead of ``epsilon`` (see :func:`quantile`): epsilon = sqrt(2 rho)
        rounded down.
    candidates : int or array_like, default 65537
        The public candidates (see :func:`quantile`).
    %(neighbours)s
    %(accountant)s
    %(rng)s
    %(label)s

    Returns
    -------
    ExponentialRelease
        The released median (shape (1,)), with ``score_error`` in records.

    Notes
    -----
    The exponential mechanism over the public grid with the rank score (:func:`quantile`,
    Smith 2011), sampled exactly.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(5, 1, 2000).clip(0, 10)
    >>> release = median(x, (0, 10), epsilon=1.0, rng=2)
    >>> bool(abs(float(release) - 5) < 0.2), release.names
    (True, ('median',))
    """
    owner = "knorm.stats.median"
    return _release(x, 0.5, bounds, (epsilon, rho), candidates, neighbours, accountant, rng, label, owner)


def epsilon_from_rho(rho):
    """The largest binary64 epsilon whose charge on a rho ledger is at most ``rho``: eps^2 / 2 <= rho.

    Bun & Steinke (2016), Proposition 1.4: epsilon-DP implies (epsilon^2 / 2)-zCDP. A rho
    ledger charges an epsilon release :func:`knorm.accounting.zcdp.rho_from_epsilon` (eps^2 / 2
    rounded up, then one ulp more), so epsilon is lowered until that charge is at most rho too.
    """
    two_rho = 2 * Fraction(rho)
    eps = math.sqrt(float(two_rho))
    while Fraction(eps) ** 2 > two_rho or rho_from_epsilon(eps) > rho:
        eps = math.nextafter(eps, 0.0)
    return eps


def _release(x, q, bounds, budget, candidates, neighbours, accountant, rng, label, owner):
    levels_float, _ = _check_levels(q, owner)
    epsilon, rho = check_budget(owner, *budget)
    if rho is not None:
        epsilon = epsilon_from_rho(rho)
    neighbours = check_neighbours(neighbours, owner)
    X, (lo,), (hi,), _ = ingest(x, bounds, owner, one_column=True)  # values outside counted, the curator warned
    grid = _check_candidates(candidates, float(lo), float(hi), owner)
    # Clipping is implicit: the candidates lie in [lo, hi], so a value below lo (above hi) rounds to the
    # first (last) candidate, as lo (hi) does.
    counts = _cell_counts(X[:, 0], grid)
    if int(counts.sum()) >= _MAX_RECORDS:
        raise param_error("x", owner, "an array of fewer than 2^31 records (exact integer scores)", "2^31 or more")
    levels = [Fraction(v).limit_denominator(LEVEL_DENOMINATOR) for v in levels_float]
    scores = [rank_scores(counts, lv) for lv in levels]
    k = len(levels)
    share = epsilon / k
    while Fraction(share) * k > Fraction(epsilon):  # the k shares add up to at most epsilon, exactly
        share = math.nextafter(share, 0.0)
    mechanism = ExponentialMechanism(share, owner=owner)
    median_only = owner.endswith("median")
    names = ("median",) if median_only else tuple(f"quantile {lv}" for lv in levels)
    read = [f"{v!r} as {lv}" for v, lv in zip(levels_float, levels) if Fraction(v) != lv]
    note = (
        f"rank scores of the data rounded to the nearest candidate, Delta = "
        f"{'1 (replace-one)' if neighbours == 'replace' else 'max(q, 1 - q) (add/remove)'} record"
        + (f"; epsilon / {k} per quantile (sequential composition)" if k > 1 else "")
        + (f"; q read as {', '.join(read)}" if read else "")
    )
    if rho is not None:
        note += f"; rho = {rho:g} spent as epsilon = sqrt(2 rho) = {epsilon!r} (epsilon-DP is epsilon^2/2-zCDP)"
    out = mechanism.release(
        scores,
        grid,
        sensitivity=[_sensitivity(lv, neighbours) for lv in levels],
        unit=[Fraction(1, lv.denominator) for lv in levels],
        rng=rng,
        accountant=accountant,
        label=label or ("median" if median_only else f"quantiles {', '.join(str(lv) for lv in levels)}"),
        names=names,
        note=note,
        total_epsilon=epsilon,
    )
    if rho is None or out.epsilon == math.inf:  # pure epsilon, or the non-private mode
        return out
    # An epsilon-DP release is (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4): it reports that rho,
    # what a rho ledger is charged (at most the rho asked for), and keeps its epsilon.
    return dataclasses.replace(out, rho=rho_from_epsilon(epsilon))
