"""The Tulap distribution, and the exact DP-UMP tests of a binomial proportion built on it.

Awan & Slavkovic (2018), "Differentially private uniformly most powerful tests for binomial
data" (NeurIPS), Section 4: for X ~ Binomial(n, theta), the uniformly most powerful
epsilon-DP test of H0: theta <= theta0 against H1: theta > theta0 is a post-processing of
Z = X + N, N ~ Tulap(0, b, q) with b = exp(-epsilon) (q = 0 for pure DP), and its exact
p-value is P_theta0(X + N >= z), a sum over the binomial law of Tulap CDFs.

Tulap(m, b, 0) is the law of m + L + U with L discrete Laplace, P(L = k) proportional to
b^|k| on the integers, and U ~ Uniform(-1/2, 1/2) independent of L. A count released by
the geometric (discrete Laplace) mechanism, as knorm releases a count of one 0/1 column
(:func:`knorm.stats.count`), is X + L: adding an independent public U makes it
X + Tulap(0, b, 0) exactly, a post-processing with public randomness, and the p-value
below then has exact type-I error.

Everything here is a function of public quantities (n, theta0, b) and of released values.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import stats

from knorm._validation import check_count, check_rng, param_error

__all__ = ["binomial_pvalue", "count_pvalue", "tulap_cdf"]

# The binomial mass left out of the sums below: at most twice this (its two tails), against
# p-values that are sums of terms of at most 1. Below binary64's resolution of 1.
_TAIL = 1e-30


def _check_b(b, owner):
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not 0.0 <= float(b) < 1.0:
        raise param_error("b", owner, "a float in the range [0, 1) (b = exp(-epsilon))", b)
    return float(b)


def _cdf0(t, b):
    """The CDF of Tulap(0, b, 0) at ``t`` (array), no checks.

    With k the integer nearest t and f = t - k in [-1/2, 1/2], P(N <= t) = P(L <= k - 1) +
    P(L = k) (f + 1/2). For k <= 0 the two geometric sums give b^(-k) (b + (1 - b)(f + 1/2)) /
    (1 + b); for t > 0 the law is symmetric: F(t) = 1 - F(-t). Both branches agree at the
    half-integers, so the CDF is continuous (and ties of the rounding do not matter).
    """
    t = np.asarray(t, dtype=float)
    s = -np.abs(t)  # F(t) = F(s) for t <= 0, 1 - F(s) for t > 0
    k = np.rint(s)
    f = s - k
    low = np.power(b, -k) * (b + (1.0 - b) * (f + 0.5)) / (1.0 + b)
    return np.where(t <= 0, low, 1.0 - low)


def tulap_cdf(x, b, m=0.0):
    """Return the CDF of the Tulap(m, b, 0) distribution at ``x``.

    Parameters
    ----------
    x : array_like of float
        Where to evaluate it.
    b : float
        In [0, 1): P(L = k) is proportional to b^|k| (b = exp(-epsilon) for the geometric
        mechanism at epsilon; b = 0 leaves the uniform alone).
    m : float, default 0.0
        The location.

    Returns
    -------
    ndarray of float
        P(N <= x) for N ~ Tulap(m, b, 0), of the shape of ``x``.

    Notes
    -----
    N = m + L + U with L discrete Laplace of parameter b and U ~ Uniform(-1/2, 1/2):
    F(x) = b^(-[x - m]) (b + (x - m - [x - m] + 1/2)(1 - b)) / (1 + b) for x <= m, with [.]
    the nearest integer, and F(x) = 1 - F(2m - x) above (Awan & Slavkovic 2018, Section 4,
    the CDF of Tulap(m, b, 0)). It is continuous and strictly increasing, so N has a
    density: the p-values of :func:`binomial_pvalue` are exactly uniform under the null.

    Examples
    --------
    >>> float(tulap_cdf(0.0, 0.5))  # symmetric about m
    0.5
    >>> float(tulap_cdf(0.25, 0.0))  # b = 0: Uniform(-1/2, 1/2)
    0.75
    """
    b = _check_b(b, "knorm.noise.tulap.tulap_cdf")
    return _cdf0(np.asarray(x, dtype=float) - float(m), b)


def binomial_pvalue(z, n, theta0, b, alternative="greater"):
    """Return the exact p-value of the DP-UMP test of a binomial proportion from Z = X + Tulap(0, b, 0).

    Parameters
    ----------
    z : float
        The observed Z: a count released with discrete Laplace noise of parameter b, plus
        an independent Uniform(-1/2, 1/2).
    n : int
        The number of trials (public).
    theta0 : float
        The proportion under the null hypothesis, in [0, 1].
    b : float
        The noise's parameter, in [0, 1).
    alternative : {'greater', 'less', 'two-sided'}, default 'greater'
        'greater' tests H0: theta <= theta0 against theta > theta0 (the UMP test); 'less'
        the mirror image; 'two-sided' H0: theta = theta0, by twice the smaller one-sided
        p-value (equal tails; not the UMP-unbiased test).

    Returns
    -------
    float
        The p-value, in [0, 1].

    Notes
    -----
    For 'greater' the p-value is P_theta0(X + N >= z) = sum_x C(n, x) theta0^x (1 -
    theta0)^(n - x) F_N(x - z), F_N the Tulap(0, b, 0) CDF (N is symmetric), as in Awan &
    Slavkovic (2018), Section 4 (the p-value of the DP-UMP test); for 'less', P_theta0(X + N
    <= z) = sum_x C(n, x) ... F_N(z - x). Z has a continuous CDF, so under theta = theta0 the
    one-sided p-value is uniform on (0, 1): the test that rejects when it is <= alpha has type
    I error exactly alpha, and at most alpha for every theta in the null (X is stochastically
    increasing in theta). Twice the smaller of the two, capped at 1, is then uniform too
    under theta0: the two-sided test is exact. The binomial sum skips the x whose two tails
    hold less than 1e-30 of the mass together (an error below 2e-30 on the p-value).

    References
    ----------
    Awan, J. & Slavkovic, A. (2018). Differentially private uniformly most powerful tests
    for binomial data. NeurIPS 31, Section 4. The two-sided UMP-unbiased test is in their
    longer version (Journal of Privacy and Confidentiality 10(1), 2020); it is not
    implemented here.

    Examples
    --------
    >>> p = binomial_pvalue(70.3, 100, 0.5, b=0.5)
    >>> 0 < p < 1e-3  # 70 heads in 100 tosses: not a fair coin
    True
    >>> round(binomial_pvalue(50.0, 100, 0.5, b=0.5, alternative="two-sided"), 6)
    1.0
    """
    owner = "knorm.noise.tulap.binomial_pvalue"
    if isinstance(z, bool) or not isinstance(z, numbers.Real) or not math.isfinite(z):
        raise param_error("z", owner, "a finite real number", z)
    n = check_count(n, "n", owner)
    if n < 1:
        raise param_error("n", owner, "an int >= 1", n)
    if isinstance(theta0, bool) or not isinstance(theta0, numbers.Real) or not 0.0 <= float(theta0) <= 1.0:
        raise param_error("theta0", owner, "a float in the range [0, 1]", theta0)
    b = _check_b(b, owner)
    if alternative not in ("greater", "less", "two-sided"):
        raise param_error("alternative", owner, "'greater', 'less' or 'two-sided'", alternative)
    x, pmf = _binomial_support(n, float(theta0))
    z = float(z)
    greater = float(np.dot(pmf, _cdf0(x - z, b)))
    if alternative == "greater":
        return min(greater, 1.0)
    less = float(np.dot(pmf, _cdf0(z - x, b)))
    if alternative == "less":
        return min(less, 1.0)
    return min(1.0, 2.0 * min(greater, less))


def count_pvalue(count, n, theta0, b, alternative="greater", *, rng=None):
    """Return the exact DP-UMP p-value of a count released with discrete Laplace noise (adds the public uniform).

    Parameters
    ----------
    count : int
        The released count X + L, L discrete Laplace of parameter b.
    n : int
        The number of trials (public).
    theta0 : float
        The proportion under the null hypothesis, in [0, 1].
    b : float
        The noise's parameter, in [0, 1).
    alternative : {'greater', 'less', 'two-sided'}, default 'greater'
        As for :func:`binomial_pvalue`.
    rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
        Source of the public uniform (None: fresh OS entropy). It is not privacy noise: a
        fixed seed makes the p-value reproducible and costs nothing.

    Returns
    -------
    float
        :func:`binomial_pvalue` at z = count + U, U ~ Uniform(-1/2, 1/2) drawn from ``rng``.

    Notes
    -----
    L + U is Tulap(0, b, 0) (module docstring), so z is X + Tulap(0, b, 0) and the p-value is
    exact. U is public randomness independent of the data: drawing it is post-processing,
    free in privacy, and the p-value varies with it (a randomised test, as the UMP test of a
    discrete statistic must be: Awan & Slavkovic 2018, Section 4).

    Examples
    --------
    >>> p = count_pvalue(70, 100, 0.5, b=0.5, rng=1)
    >>> 0 < p < 1e-3
    True
    """
    owner = "knorm.noise.tulap.count_pvalue"
    if isinstance(count, bool) or not isinstance(count, numbers.Integral):
        raise param_error("count", owner, "an int (a released count)", count, TypeError)
    u = check_rng(rng, owner).uniform(-0.5, 0.5)
    return binomial_pvalue(int(count) + u, n, theta0, b, alternative)


def _binomial_support(n, theta):
    """(x, pmf(x)) of Binomial(n, theta) over the x that hold all but 2e-30 of the mass."""
    law = stats.binom(n, theta)
    lo = int(max(law.ppf(_TAIL) - 1, 0))
    hi = int(min(law.isf(_TAIL) + 1, n))
    x = np.arange(lo, hi + 1, dtype=float)
    return x, law.pmf(x)
