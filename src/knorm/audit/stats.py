"""Exact binomial confidence bounds and the privacy-loss lower bound built from them.

References: Clopper & Pearson (1934), "The use of confidence or fiducial limits
illustrated in the case of the binomial"; the event-based eps bound follows from
the DP inequality P(M(X) in E) <= e^eps P(M(X') in E) (paper Definition "DP").
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = ["clopper_pearson", "eps_lower_bound"]


def clopper_pearson(k, n, beta):
    """Return one-sided Clopper-Pearson bounds for a binomial proportion.

    Parameters
    ----------
    k : int or array_like
        Successes, 0 <= k <= n. Non-integer values are accepted (they are used
        to project a bound to another sample size while selecting events).
    n : int or array_like
        Trials, n >= 1.
    beta : float
        Error of EACH one-sided bound, in (0, 1).

    Returns
    -------
    lower : ndarray
        The lower bound: P(p < lower) <= beta for every true proportion p. It is
        the beta quantile of Beta(k, n - k + 1) (0 when k = 0).
    upper : ndarray
        The upper bound: P(p > upper) <= beta. It is the 1 - beta quantile of
        Beta(k + 1, n - k) (1 when k = n).

    References
    ----------
    Clopper & Pearson (1934), "The use of confidence or fiducial limits
    illustrated in the case of the binomial", Biometrika 26(4).

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 10, 0.05)
    >>> float(lo), round(float(hi), 4)  # upper = 1 - 0.05 ** (1 / 10)
    (0.0, 0.2589)
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    k, n = np.broadcast_arrays(k, n)
    lower = np.zeros(k.shape)
    upper = np.ones(k.shape)
    pos = k > 0
    lower[pos] = stats.beta.ppf(beta, k[pos], n[pos] - k[pos] + 1)
    below = k < n
    upper[below] = stats.beta.ppf(1 - beta, k[below] + 1, n[below] - k[below])
    return lower, upper


def eps_lower_bound(k_num, n_num, k_den, n_den, beta, delta=0.0):
    """Return a lower confidence bound on eps from the counts of one event E.

    Parameters
    ----------
    k_num, n_num : int or array_like
        Outputs in E and all outputs, on the input whose probability of E is
        bounded from below (the numerator).
    k_den, n_den : int or array_like
        The same on the other input (the denominator).
    beta : float
        Error of each one-sided Clopper-Pearson bound, in (0, 1).
    delta : float, default 0.0
        The delta of (eps, delta)-DP assumed.

    Returns
    -------
    float or ndarray
        The bound log((CP_lower(k_num) - delta) / CP_upper(k_den)), or -inf when the
        numerator bound does not exceed delta.

    Notes
    -----
    An (eps, delta)-DP mechanism has P_num(E) <= exp(eps) P_den(E) + delta for
    the output laws on any two neighbouring inputs, so
    eps >= log((P_num(E) - delta) / P_den(E)) (paper Definition "DP"). With the
    one-sided Clopper-Pearson bounds of :func:`clopper_pearson` at error ``beta``
    each, the returned value is a lower bound on the true eps with probability at
    least 1 - 2 beta, for an event E chosen independently of these counts.

    Examples
    --------
    >>> round(float(eps_lower_bound(50_000, 100_000, 18_394, 100_000, 1e-4)), 3)
    0.964
    """
    lo, _ = clopper_pearson(k_num, n_num, beta)
    _, hi = clopper_pearson(k_den, n_den, beta)
    num = lo - delta
    with np.errstate(divide="ignore"):
        out = np.where(num > 0, np.log(np.where(num > 0, num, 1.0)) - np.log(hi), -math.inf)
    return out[()]
