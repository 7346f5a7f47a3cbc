"""Lattice laws built from other lattice laws: independent blocks, and the histogram ball.

:class:`BlockLatticeNoise` is the law of a block-sum norm, a product of the blocks' laws;
:class:`HistogramLatticeNoise` is the law of the histogram ball (replace-one counts), d - 1
discrete Laplaces conditioned on a zero sum. Both draw int64 lattice units exactly, like
:class:`~knorm.noise.lattice.LatticeKNormNoise`, and implement :class:`~knorm.noise.law.NoiseLaw`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from knorm._validation import check_rng, check_size
from knorm.geometry import LpBall, RejectionStats
from knorm.noise import discrete
from knorm.noise.lattice import MIN_ACCEPTANCE, LatticeKNormNoise
from knorm.noise.law import HalfWidth, NoiseLaw

__all__ = ["BlockLatticeNoise", "HistogramLatticeNoise"]


class BlockLatticeNoise(NoiseLaw):
    """The lattice law of a block-sum norm: independent lattice laws on the blocks.

    P(k) proportional to exp(-r sum_i w_i ||gamma_i k_i||_{K_i}) is the product of the laws
    of rates r w_i on the blocks (the density factorises,
    :class:`~knorm.sensitivity.BlockSumBall` Notes).

    Parameters
    ----------
    dim : int
        Dimension m.
    parts : sequence of (indices, NoiseLaw)
        The blocks' coordinates and lattice laws.
    scale : float, default nan
        1 / r, the scale of the whole law in units of the block-sum norm (the blocks'
        laws have scales 1 / (r w_i)); nan when not given.

    Notes
    -----
    The coordinates of one block are independent of the others, so the marginal
    half-widths are the blocks' own (closed form where a block has one).
    """

    def __init__(self, dim, parts, *, scale=math.nan):
        self.dim = dim
        self.parts = tuple((tuple(np.atleast_1d(idx).tolist()), noise) for idx, noise in parts)
        self.sampler = "blocks: " + "; ".join(noise.sampler for _, noise in self.parts)
        self.scale = float(scale)

    @property
    def cache_key(self):
        """The blocks' coordinates and keys: equal keys are the same law."""
        return ("BlockLatticeNoise", self.dim, tuple((idx, noise.cache_key) for idx, noise in self.parts))

    def _half_width(self, alpha, n_draws):
        value = np.empty(self.dim)
        closed, mc_error = True, 0.0
        for idx, noise in self.parts:
            part = noise._half_width(alpha, n_draws)
            value[list(idx)] = np.asarray(part)
            closed &= part.method == "closed form"
            mc_error = max(mc_error, part.mc_error)
        return HalfWidth(value, "closed form" if closed else "Monte Carlo", mc_error)

    def unnormalised_logpmf(self, k):
        """Return the log of the unnormalised pmf, the sum of the blocks' (normalisers not computed).

        Parameters
        ----------
        k : array_like of int, shape (..., m)
            Lattice points.

        Returns
        -------
        ndarray of float
            The log pmf up to its additive log normaliser.
        """
        k = np.asarray(k, dtype=np.int64)
        return sum(noise.unnormalised_logpmf(k[..., list(idx)]) for idx, noise in self.parts)

    @property
    def expected_acceptance(self):
        """The smallest acceptance among the blocks' samplers."""
        return min(noise.expected_acceptance for _, noise in self.parts)

    def sample(self, size=None, *, rng=None):
        """Draw lattice noise, int64 of shape (m,) or ``size + (m,)``, block by block.

        Parameters
        ----------
        size : int or tuple of ints, optional
            Number (or shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            The noise, in lattice units.
        """
        gen = check_rng(rng, "BlockLatticeNoise.sample")
        shape = check_size(size, "BlockLatticeNoise.sample")
        out = np.empty((*shape, self.dim), dtype=np.int64)
        for idx, noise in self.parts:
            out[..., list(idx)] = noise.sample(size, rng=gen)
        return out

    def __repr__(self):
        return f"BlockLatticeNoise({self.dim}, {[(list(idx), noise) for idx, noise in self.parts]!r})"


class HistogramLatticeNoise(NoiseLaw):
    """The lattice law of the histogram ball (replace-one counts, Joseph & Yu 2023), exactly.

    Parameters
    ----------
    ball : HistogramBall
        K = {v : ||v||_1 + |sum v| <= 2} in the d - 1 released coordinates.
    gamma : float
        The lattice spacing (equal on every coordinate; 1 for counts).
    rate : Fraction
        The rate r per unit of ||.||_K.

    Notes
    -----
    With z = (k, -sum k) in Z^d, ||gamma k||_K = gamma (||k||_1 + |sum k|) / 2 = gamma ||z||_1 / 2,
    so P(k) proportional to exp(-r ||gamma k||_K) = prod_{i < d} exp(-rho |k_i|) exp(-rho |sum k|)
    with rho = r gamma / 2: d - 1 independent discrete Laplaces of rate rho (drawn exactly,
    :func:`knorm.noise.discrete.discrete_laplace`, rho rounded down to a dyadic rate, which only
    adds noise) kept with probability exp(-rho |sum k|) (an exact Bernoulli, CKS Algorithm 1, in
    integer arithmetic): the acceptance ratio of the target to the proposal, at most 1. No float
    decides anything. (It is d discrete Laplaces conditioned on a zero sum, the last one dropped;
    drawing the last one and rejecting a non-zero sum, as before issue 21, accepted (1 - q) / (1 + q)
    times less: at small rates the cost grew like 1 / epsilon.)

    The acceptance E exp(-rho |S|), S the sum of the d - 1 proposals, is
    P(sum of d = 0) (1 + q) / (1 - q) with q = exp(-rho), P(sum of d = 0) = (1/pi) int_0^pi
    phi(t)^d dt and phi(t) = (1 - q)^2 / (1 - 2 q cos t + q^2): about 1 / sqrt(pi d) at small
    rates whatever rho (0.18 at d = 10, 0.0018 at d = 10^5), and near 1 at large rates. A draw
    costs about d sqrt(pi d) discrete Laplaces at most: 10^5 bins take about 2 s.

    References
    ----------
    Joseph & Yu (2023), arXiv:2309.15790 (the count ball); Canonne, Kamath & Steinke (2020)
    (exact discrete Laplace, Bernoulli(exp(-x))); paper Section 2 (K-norm mechanism).
    """

    def __init__(self, ball, gamma, rate):
        self.dim = ball.dim
        g = self._gamma = Fraction(self.equal_spacing(gamma))
        # One coordinate gives the per-unit rate, rounded down to a dyadic (d coordinates cost d Fractions).
        self._inner = LatticeKNormNoise(LpBall(1, 1), Fraction(rate) * g / 2)
        self._rho = Fraction(self._inner.effective_rate)  # dyadic: s / 2^tau
        self.effective_rate = self._rho * 2 / g
        self.sampler = (
            f"histogram ball: {ball.stat_dim} discrete Laplaces conditioned on a zero sum "
            "(the last by rejection, exp(-rate |sum|))"
        )
        self.sampler_stats = RejectionStats()
        self._acceptance = None

    @property
    def scale(self):
        """1 / effective_rate: the law is proportional to exp(-||gamma k||_K / scale) (statistic units)."""
        return float(1 / self.effective_rate)

    @property
    def cache_key(self):
        """The dimension, spacing and per-unit rate: equal keys are the same law."""
        return ("HistogramLatticeNoise", self.dim, self._gamma, self._rho)

    @staticmethod
    def equal_spacing(gamma):
        """Return the one spacing of ``gamma`` (the histogram ball is symmetric in its coordinates).

        Parameters
        ----------
        gamma : float or array_like of float
            The lattice spacings.

        Returns
        -------
        float
            Their common value; ValueError if they differ.
        """
        values = set(np.atleast_1d(np.asarray(gamma, dtype=float)).tolist())
        if len(values) != 1:
            raise ValueError(f"the histogram ball's lattice needs equal spacings; got {sorted(values)}")
        return values.pop()

    @property
    def expected_acceptance(self):
        """E exp(-rho |S|) = P(sum of d = 0) (1 + q) / (1 - q), by quadrature of the characteristic function."""
        if self._acceptance is None:
            self._acceptance = self._acceptance_value()
        return self._acceptance

    def _acceptance_value(self):
        from scipy.integrate import quad

        rho = float(self._rho)
        if rho > 40:  # q < 4e-18: every proposal is 0 but for an event below 1e-16
            return 1.0
        q, one_q = math.exp(-rho), -math.expm1(-rho)  # 1 - q without cancellation
        d = self.dim + 1
        var = 2 * q / one_q**2

        def f(t):  # phi(t)^d, with 1 - 2 q cos t + q^2 = (1 - q)^2 + 4 q sin^2(t / 2)
            return math.exp(d * (2 * math.log(one_q) - math.log(one_q**2 + 4 * q * math.sin(t / 2) ** 2)))

        cut = min(math.pi, 12 / math.sqrt(d * var))  # phi^d is negligible beyond 12 standard deviations
        value = quad(f, 0, cut, limit=200)[0] + (quad(f, cut, math.pi, limit=200)[0] if cut < math.pi else 0.0)
        return min(1.0, value / math.pi * (1 + q) / one_q)

    def norm(self, k):
        """Return ||gamma k||_K = gamma (||k||_1 + |sum k|) / 2 exactly, one Fraction per lattice point.

        Parameters
        ----------
        k : array_like of int, shape (..., d - 1)
            Lattice points.

        Returns
        -------
        ndarray of Fraction (object dtype)
            One exact norm per point (at least 1-D).
        """
        k = np.atleast_2d(np.asarray(k, dtype=np.int64))
        twice = np.abs(k).sum(axis=-1) + np.abs(k.sum(axis=-1))
        return np.array([int(v) * self._gamma / 2 for v in twice.ravel()], dtype=object).reshape(twice.shape)

    def unnormalised_logpmf(self, k):
        """Return the log of the unnormalised pmf, -effective_rate ||gamma k||_K.

        Parameters
        ----------
        k : array_like of int, shape (..., d - 1)
            Lattice points.

        Returns
        -------
        ndarray of float
            The log pmf up to its additive log normaliser, which is not computed.
        """
        k = np.asarray(k, dtype=np.int64)
        twice = np.abs(k).sum(axis=-1) + np.abs(k.sum(axis=-1))
        return -float(self.effective_rate * self._gamma / 2) * twice.astype(float)

    def _keep(self, sums, gen):
        """Bernoulli(exp(-rho |sum|)) per entry of the int64 array ``sums``, exactly.

        rho |sum| = I + f / 2^tau is split in Python integers (it can exceed int64);
        exp(-I) is drawn as I Bernoulli(exp(-1)) all true, in chunks below 2^62.
        """
        num, den = self._rho.numerator, self._rho.denominator
        prods = [abs(int(v)) * num for v in sums.tolist()]
        whole = [p // den for p in prods]
        frac = np.array([p - w * den for p, w in zip(prods, whole)], dtype=np.int64)
        keep = discrete._bernoulli_exp_frac(frac, den, gen)
        left = np.array(whole, dtype=object)
        chunk = 1 << 62
        while keep.any() and any(left[keep] > 0):
            idx = np.flatnonzero(keep & (left > 0))
            step = np.array([min(int(v), chunk) for v in left[idx]], dtype=np.int64)
            keep[idx] &= discrete._bernoulli_exp_int(step, gen)
            left[idx] -= step
        return keep

    def sample(self, size=None, *, rng=None):
        """Draw lattice noise, int64 of shape (d - 1,) or ``size + (d - 1,)``.

        Parameters
        ----------
        size : int or tuple of ints, optional
            Number (or shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            The noise, in lattice units.
        """
        gen = check_rng(rng, "HistogramLatticeNoise.sample")
        shape = check_size(size, "HistogramLatticeNoise.sample")
        n = math.prod(shape)
        acc = max(self.expected_acceptance, MIN_ACCEPTANCE)
        num, den = self._rho.numerator, self._rho.denominator  # the proposals' one rate, dyadic
        out = np.empty((n, self.dim), dtype=np.int64)
        have = proposed = 0
        while have < n:
            batch = int(min(max(16, 1.2 * (n - have) / acc), max(16, (1 << 22) // self.dim)))
            z = discrete._discrete_laplace(num, den, batch * self.dim, gen).reshape(batch, self.dim)
            keep = z[self._keep(z.sum(axis=1), gen)]
            take = min(len(keep), n - have)
            out[have : have + take] = keep[:take]
            have, proposed = have + take, proposed + batch
            self.sampler_stats.proposed += batch
            self.sampler_stats.accepted += len(keep)
            if proposed > 64 * n / acc + (1 << 20):
                raise RuntimeError("HistogramLatticeNoise: far fewer acceptances than expected; refusing to loop on.")
        return out.reshape(*shape, self.dim)

    def __repr__(self):
        return f"HistogramLatticeNoise(dim={self.dim}, rate={self.effective_rate})"
