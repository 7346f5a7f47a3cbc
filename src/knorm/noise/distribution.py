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
      Var(|V'e| | ...) = m scale^2 / ||e||_K^2: errata item 2 (the printed
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
        """Return log vol(K) of the unit ball, computed once and cached.

        Returns
        -------
        Volume
            Exact where the ball has a closed form, else a labelled Monte Carlo
            estimate (oracle and intersection balls) over 10^6 points with a fixed
            seed, so that ``logpdf`` and ``entropy`` are deterministic.
        """
        if self._log_vol is None:
            self._log_vol = self.ball.log_volume(rng=0, n_samples=1_000_000)
        return self._log_vol

    # -- sampling -----------------------------------------------------------
    def sample(self, size=None, *, rng=None):
        """Draw noise vectors with density proportional to exp(-||v||_K / scale).

        ``rvs`` is an alias, as in ``scipy.stats``.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors; None draws a single vector.
        rng : None, int, SeedSequence or Generator
            Source of randomness. None draws fresh entropy from the operating system.

        Returns
        -------
        ndarray
            Shape (dim,) if ``size`` is None, else (size, dim) (``size + (dim,)`` for
            a tuple), drawn exactly by :func:`~knorm.noise.sample_knorm`.
        """
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
            Draws of the noise law, for Monte Carlo functionals of the law only.
        """
        return self.sample(size, rng=seed)

    # -- density ------------------------------------------------------------
    def _log_normaliser(self):
        m = self.dim
        return gammaln(m + 1) + float(self.log_volume()) + m * math.log(self.scale)

    def logpdf(self, x):
        """Return the log density at the rows of ``x``.

        Parameters
        ----------
        x : array_like of shape (dim,) or (..., dim)
            Points of R^m.

        Returns
        -------
        float or ndarray of shape (...)
            -||x||_K / scale - log(m! vol(K) scale^m).
        """
        x = check_vectors(x, self.dim, "x", "KNormNoise")
        return -self.ball._gauge(x) / self.scale - self._log_normaliser()

    def pdf(self, x):
        """Return the density at the rows of ``x``.

        Parameters
        ----------
        x : array_like of shape (dim,) or (..., dim)
            Points of R^m.

        Returns
        -------
        float or ndarray of shape (...)
            The density exp(-||x||_K / scale) / (m! vol(K) scale^m).
        """
        return np.exp(self.logpdf(x))

    def entropy(self):
        """Return the differential entropy of the law, in nats.

        Returns
        -------
        float
            The entropy m + log(m!) + log vol(K) + m log(scale) (paper Proposition
            "Entropy of K-mech"); an estimate when log vol(K) is.
        """
        return self.dim + self._log_normaliser()

    # -- geometry of the law -----------------------------------------------
    def norm_law(self):
        """Return the law of ||V||_K, Gamma(m, scale) (paper Lemma "K-norm Marginal Distribution").

        Returns
        -------
        scipy.stats.rv_continuous_frozen
            The frozen ``scipy.stats.gamma(a=m, scale=scale)``.
        """
        return stats.gamma(a=self.dim, scale=self.scale)

    def concentration_set(self, alpha):
        """Return the alpha-concentration set t_alpha K, the smallest set of probability alpha.

        Parameters
        ----------
        alpha : float
            Probability, in (0, 1).

        Returns
        -------
        ScaledBall
            The ball t_alpha K, with t_alpha the alpha-quantile of :meth:`norm_law`
            (paper Lemma "Concentration of K-mech").
        """
        alpha = check_probability(alpha, "alpha", "KNormNoise.concentration_set")
        return self.ball.scaled(float(self.norm_law().ppf(alpha)))

    def depth(self, x):
        """Return the depth P(||V||_K > ||x||_K) of the rows of ``x``.

        Parameters
        ----------
        x : array_like of shape (dim,) or (..., dim)
            Points of R^m.

        Returns
        -------
        float or ndarray of shape (...)
            Depth in [0, 1], 1 at the centre (paper Theorem "Depth for Concentration
            Sets").
        """
        x = check_vectors(x, self.dim, "x", "KNormNoise")
        return self.norm_law().sf(self.ball._gauge(x))

    def conditional_variance(self, e, *, signed=True):
        """Return the variance of V'e given V in span(e), for a direction ``e``.

        Parameters
        ----------
        e : array_like of shape (dim,) or (..., dim)
            Non-zero directions; each is normalised to ||e||_2 = 1 here.
        signed : bool, default True
            True for Var(V'e | V in span(e)), False for the variance of |V'e|.

        Returns
        -------
        float or ndarray of shape (...)
            The variance m (m+1) scale^2 / ||e||_K^2 (signed) or m scale^2 / ||e||_K^2.

        References
        ----------
        Paper Lemma "K-mech Conditional Distribution" item 2, corrected as errata item 2.
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
