"""The K-norm distribution, in the style of ``scipy.stats``."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from scipy.special import gammaln

from knorm._validation import check_count, check_positive, check_probability, check_rng, check_vectors
from knorm.geometry.base import NormBall
from knorm.noise.samplers import sample_knorm, sampler_name

__all__ = ["KNormNoise"]


class KNormNoise:
    """K-norm noise V on R^m with density exp(-||v||_K / scale) / (m! vol(K) scale^m).

    For a mechanism with privacy budget eps and sensitivity Delta, ``scale`` is
    Delta / eps (paper Proposition "K-Norm Mechanism", Hardt & Talwar 2010).

    Parameters
    ----------
    ball : NormBall
        The unit ball K of the norm.
    scale : float
        Positive scale Delta / eps.

    Notes
    -----
    * ||V||_K ~ Gamma(m, rate 1/scale): paper Lemma "K-norm Marginal Distribution".
    * alpha-concentration set = t_alpha K, t_alpha the alpha-quantile of that
      Gamma: paper Lemma "Concentration of K-mech".
    * depth D(v) = 1 - inf{alpha : v in S^alpha} = P(||V||_K > ||v||_K): paper
      Theorem "Depth for Concentration Sets".
    * entropy = log((e scale)^m m! vol(K)): paper Proposition "Entropy of K-mech".
    * Var(V'e | V in span(e)) = m (m+1) scale^2 / ||e||_K^2 for ||e||_2 = 1, and
      Var(|V'e| | ...) = m scale^2 / ||e||_K^2: ERRATA.md item 2 (the printed
      m Delta / (eps^2 ||e||_K) is wrong).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> noise = KNormNoise(LpBall(3, p=float("inf")), scale=2.0)
    >>> noise.sample(4, rng=1).shape
    (4, 3)
    >>> round(float(noise.norm_law().mean()), 6)  # Gamma(3, scale 2)
    6.0
    """

    def __init__(self, ball, scale):
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"The 'ball' parameter of KNormNoise must be a NormBall. Got {type(ball).__name__} instead."
            )
        self.ball = ball
        self.scale = check_positive(scale, "scale", "KNormNoise")
        self.dim = ball.dim
        self._log_vol = None

    @property
    def sampler(self):
        """Name of the exact sampling algorithm used."""
        return sampler_name(self.ball)

    @property
    def acceptance_rate(self):
        """Acceptance rate of the ball's rejection sampler so far (nan if none ran)."""
        return self.ball.sampler_stats.acceptance_rate

    def log_volume(self):
        """log vol(K), cached; a labelled :class:`~knorm.geometry.Volume`.

        Monte Carlo estimates (oracle and intersection balls) use a fixed seed so
        that ``logpdf`` and ``entropy`` are deterministic.
        """
        if self._log_vol is None:
            self._log_vol = self.ball.log_volume(rng=0, n_samples=1_000_000)
        return self._log_vol

    # -- sampling -----------------------------------------------------------
    def sample(self, size=None, *, rng=None):
        """Draw noise vectors: shape (dim,) if ``size`` is None, else (size, dim)."""
        gen = check_rng(rng)
        if size is None:
            return sample_knorm(self.ball, self.scale, 1, gen)[0]
        shape = (size,) if np.ndim(size) == 0 else tuple(size)
        shape = tuple(check_count(s, "size", "KNormNoise") for s in shape)
        return sample_knorm(self.ball, self.scale, math.prod(shape), gen).reshape(*shape, self.dim)

    rvs = sample

    def public_law_sample(self, size, *, seed):
        """Draw from the public noise law for Monte Carlo computations that use no data.

        The same law as :meth:`sample`, with a fixed ``seed`` so that functionals of the
        law (quantiles, moments) are deterministic. It is named apart so that a reader
        never mistakes it for a release: releases go through
        :meth:`knorm.mechanisms.KNormMechanism.release`.

        Parameters
        ----------
        size : int
            Number of draws.
        seed : int, SeedSequence or Generator
            A fixed source of randomness.

        Returns
        -------
        ndarray of shape (size, dim)
        """
        return self.sample(size, rng=seed)

    # -- density ------------------------------------------------------------
    def _log_normaliser(self):
        m = self.dim
        return gammaln(m + 1) + float(self.log_volume()) + m * math.log(self.scale)

    def logpdf(self, x):
        """Log density at the rows of ``x``."""
        x = check_vectors(x, self.dim, "x", "KNormNoise")
        return -self.ball._gauge(x) / self.scale - self._log_normaliser()

    def pdf(self, x):
        """Density at the rows of ``x``."""
        return np.exp(self.logpdf(x))

    def entropy(self):
        """Differential entropy m + log(m!) + log vol(K) + m log(scale)."""
        return self.dim + self._log_normaliser()

    # -- geometry of the law -----------------------------------------------
    def norm_law(self):
        """The frozen ``scipy.stats.gamma`` law of ||V||_K: Gamma(m, scale)."""
        return stats.gamma(a=self.dim, scale=self.scale)

    def concentration_set(self, alpha):
        """The alpha-concentration set, the smallest set of probability alpha: t_alpha K."""
        alpha = check_probability(alpha, "alpha", "KNormNoise.concentration_set")
        return self.ball.scaled(float(self.norm_law().ppf(alpha)))

    def depth(self, x):
        """Depth of the rows of ``x``: P(||V||_K > ||x||_K), 1 at the centre."""
        x = check_vectors(x, self.dim, "x", "KNormNoise")
        return self.norm_law().sf(self.ball._gauge(x))

    def conditional_variance(self, e, *, signed=True):
        """Variance of V'e given V in span(e), for a direction ``e`` (normalised here).

        ``signed=False`` gives the variance of |V'e| instead. ERRATA.md item 2.
        """
        e = check_vectors(e, self.dim, "e", "KNormNoise")
        n2 = np.sqrt(np.einsum("...i,...i->...", e, e))
        if np.any(n2 == 0):
            raise ValueError(
                "The 'e' parameter of KNormNoise.conditional_variance must be a non-zero direction. Got the zero vector instead."
            )
        ke = self.ball._gauge(e / n2[..., None])
        m = self.dim
        factor = m * (m + 1) if signed else m
        return factor * self.scale**2 / ke**2

    def __repr__(self):
        return f"KNormNoise({self.ball!r}, scale={self.scale:g})"
