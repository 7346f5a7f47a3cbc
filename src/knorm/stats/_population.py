"""Population intervals and tests for the releases of knorm.stats: sampling error and privacy noise together.

A release R = T(X) + V covers T, this dataset's statistic, with the noise's intervals
(``conf_int(kind='noise')``). A statistician asks about the population the n records were
drawn from (independently, from one law on the declared bounds): its mean mu, its variance,
a cell's proportion. Then R - theta = (T - theta) + V, the sampling error of T plus the noise.
The sampling models below attach to releases (:attr:`knorm.mechanisms.Release.population`)
and add the two, from released values and public inputs only:

* the noise's law is public: draws V* of it at a fixed seed (``public_draws``), pushed
  through the release's post-processing g, give W* = g(R) - g(R - V*), the law of the
  estimate's noise (exact for a linear g: a mean; a plug-in otherwise);
* the sampling error is approximately tau T with T a t- or normal variable (central limit
  theorem), its scale tau estimated from released values: the variance from the second
  moment released jointly with the mean (:func:`knorm.stats.mean` releases (sum x, sum x^2)
  with the mean's focus for this), a proportion's p (1 - p);
* the interval's ends solve P(tau T + W > q_hi) = alpha / 2 and P(tau T + W < -q_lo) =
  alpha / 2 with W averaged over the draws (the t or normal tail is exact given W, so the
  Monte Carlo error of each tail is below that of its binomial count, sqrt(alpha (1 - alpha)
  / n_draws)), and the interval is [estimate - q_hi, estimate + q_lo], cut to the
  parameter's possible range (a mean lies in the bounds, a variance in [0, (hi - lo)^2 / 4]).

Honesty where an estimate is unreliable: a released variance below the (1 - alpha)
half-width of its own noise cannot be told from that half-width, so the half-width is used
(larger, hence conservative) and the intervals' ``method`` says so. A variance's own sampling
error needs the fourth central moment, which is not released: it is bounded from the
declared bounds, mu_4 <= sigma^2 m^2 with m the largest distance from the mean to a bound
(|x - mu| <= m for every record), which is sharp (a law with a small mass at the far bound)
and makes variance intervals valid for every law on the bounds, and wide (conservative) for
most. These are large-sample intervals: the t- and normal laws are the central limit
theorem's.

The count of one 0/1 column under replace-one neighbours gets the exact test of Awan &
Slavkovic (2018) (:mod:`knorm.noise.tulap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, special

from knorm.mechanisms.release import Intervals, SamplingModel
from knorm.noise.law import MC_DRAWS, ZeroNoise
from knorm.noise.tulap import count_pvalue

__all__ = ["CovarianceModel", "MomentsModel", "ProportionModel", "attach", "refused"]


def attach(release, model):
    """Return ``release`` with the sampling model ``model`` (a new Release: nothing is edited)."""
    return replace(release, population=model)


def refused(reason):
    """A model that refuses population intervals and tests with ``reason`` (public words only)."""
    return SamplingModel.refused(reason)


def _root(release):
    return release if release.parent is None else release.parent


def _pushed(release, g, n_draws):
    """(g(R), W*) with W* = g(R) - g(R - V*) over public draws V* of the root's noise law."""
    root = _root(release)
    R = np.asarray(root.value, dtype=float).reshape(-1)
    V = root.noise_law.public_draws(n_draws).reshape(n_draws, -1)
    est = np.asarray(g(R), dtype=float)
    return est, est[None, ...] - np.asarray(g(R[None, :] - V), dtype=float)


#: Above these degrees of freedom the t CDF is evaluated through its normal approximation
#: z = t (1 - 1 / (4 df)) / sqrt(1 + t^2 / (2 df)) (Abramowitz & Stegun 1964, 26.7.8): its error
#: is below 1e-4 at 30 degrees of freedom and 1e-6 at 400 (measured on a grid of t in [-8, 8]),
#: and it is about 30 times faster than the exact CDF over 40,000 draws of the noise.
_T_APPROX_DF = 30


def _cdf(x, df):
    """P(T <= x) for T ~ t_df (df None: the normal law)."""
    if df is None:
        return special.ndtr(x)
    if df < _T_APPROX_DF:
        return special.stdtr(df, x)
    return special.ndtr(x * (1.0 - 0.25 / df) / np.sqrt(1.0 + x * x / (2.0 * df)))


def _tail_solver(W, tau, df):
    """The tails P(tau T + W > q) and P(tau T + W < -q), W over its draws (with their weights)."""
    values, counts = np.unique(W, return_counts=True)  # lattice noise repeats: fewer evaluations
    weights = counts / counts.sum()

    def upper(q):
        return float(weights @ _cdf((values - q) / tau, df))

    def lower(q):
        return float(weights @ _cdf((-q - values) / tau, df))

    return upper, lower


def _solve(tail, target, scale):
    """The q where the decreasing ``tail(q)`` equals ``target`` (q may be negative)."""
    lo, hi = -scale, scale
    while tail(lo) < target:
        lo *= 2.0
    while tail(hi) > target:
        hi *= 2.0
    return optimize.brentq(lambda q: tail(q) - target, lo, hi, xtol=1e-12 * scale, rtol=1e-12)


def _interval(est, W, tau, df, alpha):
    """[est - q_hi, est + q_lo]: each tail of est - theta = tau T + W (T ~ t_df, or normal) is alpha / 2."""
    if not tau > 0:  # no sampling error left (a constant column, or n public and huge): the noise alone
        return est - np.quantile(W, 1 - alpha / 2), est - np.quantile(W, alpha / 2)
    upper, lower = _tail_solver(W, tau, df)
    scale = float(np.max(np.abs(W))) + 40.0 * tau
    return est - _solve(upper, alpha / 2, scale), est + _solve(lower, alpha / 2, scale)


def _pvalue(d, W, tau, df, alternative):
    """P-value of est - theta0 = d under est - theta0 ~ tau T + W (the interval's law)."""
    if not tau > 0:
        greater, less = float(np.mean(W >= d)), float(np.mean(W <= d))
    else:
        upper, lower = _tail_solver(W, tau, df)
        greater, less = upper(d), lower(-d)
    if alternative == "greater":
        return greater
    if alternative == "less":
        return less
    return min(1.0, 2.0 * min(greater, less))


def _honest_variance(v, W_v, alpha, cap):
    """(variance for the sampling scale, whether it was raised): never below its noise's half-width."""
    floor = float(np.quantile(np.abs(W_v), 1 - alpha))
    used = min(max(v, floor), cap)
    return used, v < floor


def _population_intervals(release, lower, upper, alpha, method, n_draws):
    """The named population Intervals, with the Monte Carlo error of the public noise law's quantiles."""
    mc_error = math.sqrt(alpha * (1 - alpha) / n_draws)
    return Intervals(np.array(lower), np.array(upper), alpha, method, mc_error, names=release.names, kind="population")


_RAISED = "; a variance below its noise level raised to it"


@dataclass(frozen=True)
class MomentsModel(SamplingModel):
    """The mean, sum, variance or standard deviation of one column, from its joint first two moments.

    The release's root is (sum u, sum u^2) of u = (x - centre) / width, after the released
    count when n is private (add/remove neighbours). With n public the mean's interval counts
    the sampling error with a t-law on n - 1 degrees of freedom, scale s / sqrt(n), s^2 the
    sample variance from the same release; the noise comes from the public law. The
    variance's interval uses a normal law of scale sqrt(s^2 (m^2 - s^2) / n), m^2 s^2 bounding
    the fourth central moment from the declared bounds (module docstring); the standard
    deviation's is the square root of the variance's. A sum with n public is n times the mean.
    Under add/remove neighbours n is the released count (floored at 2).

    Parameters
    ----------
    outputs : tuple of str
        What each coordinate of the release is: 'mean', 'sum', 'variance' or 'std'.
    lo, hi : float
        The declared bounds.
    n : float or None
        The public number of records, or None when the count is released.
    centre, width : float, default 0.0 and 1.0
        The standardisation of the released moments.
    """

    outputs: tuple
    lo: float
    hi: float
    n: float | None
    centre: float = 0.0
    width: float = 1.0

    def _mean_var(self, rows):
        rows = np.asarray(rows, dtype=float)
        if self.n is None:
            n, s1, s2 = np.maximum(rows[..., 0], 2.0), rows[..., 1], rows[..., 2]
        else:
            n, s1, s2 = self.n, rows[..., 0], rows[..., 1]
        mean = self.centre + self.width * (s1 / n)
        var = self.width**2 * ((s2 - s1 * s1 / n) / (n - 1.0))
        return np.stack([mean, var, np.broadcast_to(n, np.shape(mean))], axis=-1)

    def _parts(self, release, alpha, n_draws):
        est, W = _pushed(release, self._mean_var, n_draws)
        mean, v, n = est
        cap = (self.hi - self.lo) ** 2 / 4.0  # Popoviciu: no law on [lo, hi] has a larger variance
        s2, raised = _honest_variance(v, W[:, 1], alpha, cap)
        lo_m, hi_m = _interval(mean, W[:, 0], math.sqrt(s2 / n), n - 1.0, alpha)
        lo_m, hi_m = max(lo_m, self.lo), min(hi_m, self.hi)
        m = min(max(hi_m - self.lo, self.hi - lo_m), self.hi - self.lo)
        return dict(mean=mean, v=v, n=n, W=W, s2=s2, raised=raised, mean_int=(lo_m, hi_m), m=m, cap=cap)

    def conf_int(self, release, alpha, n_draws):
        """Population intervals of each coordinate (class docstring)."""
        if np.ndim(release.value) != 1:
            raise ValueError("Release.conf_int(kind='population') covers one release, not a batch of rows.")
        p = self._parts(release, alpha, n_draws)
        lower, upper = [], []
        for what in self.outputs:
            if what in ("mean", "sum"):
                a, b = p["mean_int"]
                k = p["n"] if what == "sum" else 1.0
                lower.append(k * a)
                upper.append(k * b)
                continue
            tau = math.sqrt(p["s2"] * max(p["m"] ** 2 - p["s2"], 0.0) / p["n"])
            a, b = _interval(p["v"], p["W"][:, 1], tau, None, alpha)
            a, b = max(a, 0.0), min(b, p["cap"])
            if what == "std":
                a, b = math.sqrt(a), math.sqrt(b)
            lower.append(a)
            upper.append(b)
        method = "t-law of the sampling error, public noise law"
        if any(w in ("variance", "std") for w in self.outputs):
            method += "; variance: fourth moment bounded by the bounds"
        if p["raised"]:
            method += _RAISED
        return _population_intervals(release, lower, upper, alpha, method, n_draws)

    def test(self, release, value, alternative, rng):
        """P-value for the population mean (or total) against ``value``, by the mean interval's law."""
        if self.outputs not in (("mean",), ("sum",)):
            return SamplingModel.test(self, release, value, alternative, rng)
        # Only the floor of the variance (its noise's half-width) reads alpha: conf_int's default.
        p = self._parts(release, 0.05, MC_DRAWS)
        k = p["n"] if self.outputs == ("sum",) else 1.0
        tau = math.sqrt(p["s2"] / p["n"])
        return _pvalue(p["mean"] - value / k, p["W"][:, 0], tau, p["n"] - 1.0, alternative)


@dataclass(frozen=True)
class CovarianceModel(SamplingModel):
    """Means and covariance entries of p columns, from their jointly released first and second moments.

    Each mean as in :class:`MomentsModel` (its variance the diagonal entry). An entry
    sigma_jk's sampling variance is (E[(x_j - mu_j)^2 (x_k - mu_k)^2] - sigma_jk^2) / n, bounded
    by min(sigma_j^2 m_k^2, sigma_k^2 m_j^2) / n off the diagonal and sigma_j^2 (m_j^2 -
    sigma_j^2) / n on it (m_j: the largest distance from mu_j to a bound of column j), with a
    normal law: valid for every law on the bounds, conservative for most.

    Parameters
    ----------
    transform : callable
        The map from the root's rows to (means, upper triangle) with ddof = 1
        (:class:`~knorm.stats._transforms.CovarianceFromMoments`).
    p : int
        The number of columns.
    lo, hi : tuple of float
        The declared bounds.
    n : float or None
        The public number of records, or None when the count is released.
    with_means : bool, default True
        The release holds the p means before the entries.
    """

    transform: object
    p: int
    lo: tuple
    hi: tuple
    n: float | None
    with_means: bool = True

    def conf_int(self, release, alpha, n_draws):
        """Population intervals of the means and entries (class docstring)."""
        p = self.p
        est, W = _pushed(release, self.transform, n_draws)
        root = np.asarray(_root(release).value, dtype=float)
        n = self.n if self.n is not None else max(float(root[0]), 2.0)
        lo, hi = np.asarray(self.lo, dtype=float), np.asarray(self.hi, dtype=float)
        tri = np.triu_indices(p)
        diag = {j: p + int(np.flatnonzero((tri[0] == j) & (tri[1] == j))[0]) for j in range(p)}
        s2, m, raised = np.zeros(p), np.zeros(p), False
        lower, upper = [], []
        for j in range(p):
            cap = (hi[j] - lo[j]) ** 2 / 4.0
            s2[j], up = _honest_variance(est[diag[j]], W[:, diag[j]], alpha, cap)
            raised = raised or up
            a, b = _interval(est[j], W[:, j], math.sqrt(s2[j] / n), n - 1.0, alpha)
            a, b = max(a, lo[j]), min(b, hi[j])
            m[j] = min(max(b - lo[j], hi[j] - a), hi[j] - lo[j])
            lower.append(a)
            upper.append(b)
        if not self.with_means:
            lower, upper = [], []
        for i, (j, k) in enumerate(zip(tri[0].tolist(), tri[1].tolist())):
            if j == k:
                var, bound = s2[j] * max(m[j] ** 2 - s2[j], 0.0), (hi[j] - lo[j]) ** 2 / 4.0
                floor = 0.0
            else:
                var = min(s2[j] * m[k] ** 2, s2[k] * m[j] ** 2)
                bound = (hi[j] - lo[j]) * (hi[k] - lo[k]) / 4.0  # |sigma_jk| <= sigma_j sigma_k
                floor = -bound
            a, b = _interval(est[p + i], W[:, p + i], math.sqrt(var / n), None, alpha)
            lower.append(max(a, floor))
            upper.append(min(b, bound))
        method = "t-law (means), normal law with fourth moments bounded by the bounds (entries), public noise law"
        if raised:
            method += _RAISED
        return _population_intervals(release, lower, upper, alpha, method, n_draws)


@dataclass(frozen=True)
class ProportionModel(SamplingModel):
    """The population proportions behind released counts, with n public (replace-one neighbours).

    Count j is Binomial(n, pi_j): the interval for pi_j counts the sampling error with a
    normal law of variance pi_j (1 - pi_j) / n and the noise of count j / n with the public
    law. pi_j (1 - pi_j) is taken at its largest over a conservative range of pi_j (the
    estimate widened by the noise's (1 - alpha) half-width and z_{1 - alpha / 2} / (2 sqrt n)),
    so near 0 and 1, where the estimate is unreliable, it is not underestimated. The
    intervals are cut to [0, 1].

    The count of one 0/1 column, released with discrete Laplace (geometric) noise, also has
    :meth:`test`: the exact DP-UMP test of Awan & Slavkovic (2018).

    Parameters
    ----------
    n : int
        The public number of records.
    """

    n: int

    def conf_int(self, release, alpha, n_draws):
        """Population intervals of each cell's proportion (class docstring)."""
        g = release.transform if release.parent is not None else (lambda v: v)
        counts, W = _pushed(release, g, n_draws)
        n = float(self.n)
        share, W = counts / n, W / n
        z = float(special.ndtri(1 - alpha / 2))
        lower, upper = [], []
        for j in range(len(share)):
            reach = float(np.quantile(np.abs(W[:, j]), 1 - alpha)) + z / (2.0 * math.sqrt(n))
            a, b = max(share[j] - reach, 0.0), min(share[j] + reach, 1.0)
            worst = 0.25 if a <= 0.5 <= b else max(a * (1 - a), b * (1 - b))
            lo_j, hi_j = _interval(share[j], W[:, j], math.sqrt(worst / n), None, alpha)
            lower.append(max(lo_j, 0.0))
            upper.append(min(hi_j, 1.0))
        method = "binomial sampling error (normal law, p (1 - p) conservative), public noise law"
        return _population_intervals(release, lower, upper, alpha, method, n_draws)

    def test(self, release, value, alternative, rng):
        """The exact DP-UMP test of H0: pi = ``value`` (Awan & Slavkovic 2018) for one count."""
        b = _discrete_laplace_parameter(release)
        if not 0.0 <= value <= 1.0:
            raise ValueError(
                f"The 'value' parameter of Release.test must be a proportion in [0, 1] for a count (the null "
                f"hypothesis' pi, the count being Binomial(n, pi)). Got {value!r} instead."
            )
        count = np.asarray(release.value).reshape(-1)[0]
        return count_pvalue(int(round(float(count))), int(self.n), value, b, alternative, rng=rng)


def _discrete_laplace_parameter(release):
    """b of the release's discrete Laplace noise on the integers (P(k) proportional to b^|k|), or refuse."""
    law = release.noise_law
    why = (
        "the exact test of a proportion (Awan & Slavkovic 2018) needs one count released with discrete Laplace "
        "(geometric) noise on the integers; this release {}."
    )
    if release.parent is not None or np.size(release.value) != 1:
        raise ValueError(why.format("is not one raw count (a histogram's cells share one noise law)"))
    if isinstance(law, ZeroNoise):
        return 0.0  # non-private: the randomised exact binomial test
    noise, spacing = getattr(law, "noise", None), np.asarray(getattr(law, "spacing", [np.nan]), dtype=float)
    logpmf = getattr(noise, "unnormalised_logpmf", None)
    if logpmf is None or not np.array_equal(spacing, [1.0]):
        raise ValueError(why.format("has other noise"))
    k = np.arange(-3, 4)
    values = np.array([float(np.asarray(logpmf(np.array([j]))).reshape(-1)[0]) for j in k])
    rate = values[3] - values[4]
    if not (rate > 0 and np.allclose(values - values[3], -rate * np.abs(k), rtol=1e-12, atol=1e-12)):
        raise ValueError(why.format("has noise that is not discrete Laplace"))
    return math.exp(-rate)
