"""The K-norm distribution, in the style of ``scipy.stats``."""

from __future__ import annotations

import math
from functools import singledispatch

import numpy as np
from scipy import optimize, special, stats
from scipy.special import gammaln

from knorm._validation import check_count, check_positive, check_probability, check_rng, check_vectors
from knorm.geometry import LinearImage, LpBall, ScaledBall
from knorm.geometry.base import NormBall
from knorm.noise.law import NoiseLaw, ball_key
from knorm.noise.samplers import sample_knorm, sampler_name

__all__ = ["KNormNoise"]

# The one sampler with a rejection step (uniform points of K), for expected_acceptance.
_UNIFORM_K = "gamma(m+1) x uniform(K)"


class KNormNoise(NoiseLaw):
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
    * marginal half-widths (:meth:`marginal_half_width`): for l1 balls Laplace
      coordinates, t = scale log(1 / alpha); for l_inf balls V_j = R U_j with
      R ~ Gamma(m + 1, scale) (paper appendix, l_inf sampler; errata item 4); in 1-D
      the Laplace law of scale ``scale`` h_K(1); scalings and diagonal linear images
      carry these through. Other balls: Monte Carlo from public draws.

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

    @property
    def expected_acceptance(self):
        """1 for the direct samplers (l_p balls, their scalings and linear images), else the rate observed so far.

        The uniform sampler of a general ball may reject (from its bounding box); its
        acceptance is then known only from the draws made so far (nan before any).
        """
        return self.acceptance_rate if self.sampler == _UNIFORM_K else 1.0

    @property
    def cache_key(self):
        """('KNormNoise', the ball's key, scale): equal keys are the same law."""
        return ("KNormNoise", ball_key(self.ball), self.scale)

    def _closed_half_width(self, alpha):
        if self.dim == 1:  # in 1-D every K-norm law is Laplace, of scale b h_K(1)
            return np.array([self.scale * float(np.ravel(self.ball.support([1.0]))[0]) * math.log(1 / alpha)])
        return _marginal_half_width(self.ball, self.scale, alpha)

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


@singledispatch
def _marginal_half_width(ball, scale, alpha):
    """Half-widths t_j with P(|V_j| > t_j) = alpha for K-norm noise of ``scale`` on ``ball``, or None.

    Chosen by the type of the ball (as :func:`~knorm.noise.sample_knorm` chooses a sampler);
    a ball without a registered closed form gets None, and its law a Monte Carlo half-width.
    """
    return None


@_marginal_half_width.register
def _(ball: LpBall, scale, alpha):
    b = scale * ball.radius
    if ball.p == 1:  # Laplace marginals of scale b
        return np.full(ball.dim, b * math.log(1 / alpha))
    if math.isinf(ball.p):
        # V_j = R U_j, R ~ Gamma(m + 1, b), U_j uniform on [-1, 1] (paper appendix, l_inf sampler; errata
        # item 4), so P(|V_j| > t) = E[(1 - t/R)^+] = Q(m + 1, t/b) - (t / (m b)) Q(m, t/b).
        m = ball.dim

        def tail(t):
            x = t / b
            return special.gammaincc(m + 1, x) - x / m * special.gammaincc(m, x) - alpha

        t = optimize.brentq(tail, 0.0, b * (m + 1 + 50 * math.sqrt(m + 1)), xtol=1e-12 * b)
        return np.full(m, t)
    return None


@_marginal_half_width.register
def _(ball: ScaledBall, scale, alpha):
    # exp(-||v||_{cK} / s) = exp(-||v||_K / (c s))
    return _marginal_half_width(ball.base, scale * ball.factor, alpha)


@_marginal_half_width.register
def _(ball: LinearImage, scale, alpha):
    # V = A W with W the law on the base: a diagonal A scales each coordinate by |A_jj|.
    if not ball._diagonal:
        return None
    base = _marginal_half_width(ball.base, scale, alpha)
    return None if base is None else np.abs(np.diag(ball.matrix)) * base
