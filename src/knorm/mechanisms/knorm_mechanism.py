"""The K-norm mechanism: release T(X) + V, V with density exp(-eps ||v||_K / Delta)."""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_positive, check_rng, check_vectors
from knorm.geometry.base import NormBall
from knorm.noise.distribution import KNormNoise
from knorm.sensitivity.certificate import UnsafeSensitivityError, as_certified

__all__ = ["KNormMechanism"]


class KNormMechanism:
    """The K-norm mechanism of Hardt & Talwar (2010), paper Proposition "K-Norm Mechanism".

    Releasing ``T(X) + V`` with V ~ :class:`~knorm.noise.KNormNoise` (ball,
    Delta / eps) is eps-DP whenever Delta >= Delta_K(T) = sup_{u in S_T} ||u||_K.

    Parameters
    ----------
    ball : NormBall
        The unit ball K of the norm.
    sensitivity : float or Sensitivity
        Delta, a certified upper bound on the K-norm sensitivity. A float is taken
        as declared by the caller from the data domain. A :class:`Sensitivity`
        of kind 'estimate' is refused.
    epsilon : float
        Privacy budget, in (0, inf).
    unsafe_allow_estimated_sensitivity : bool, default False
        Accept a sampled (uncertified) sensitivity. The guarantee may then fail.

    Attributes
    ----------
    noise : KNormNoise
        The noise law, scale Delta / eps.

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> mech = KNormMechanism(LpBall(2, p=float("inf")), sensitivity=2.0, epsilon=1.0)
    >>> mech.privacy_loss([1.0, -2.0])
    1.0
    >>> mech.release([10.0, 20.0], rng=7).shape
    (2,)
    """

    def __init__(self, ball, sensitivity, epsilon, *, unsafe_allow_estimated_sensitivity=False):
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"The 'ball' parameter of KNormMechanism must be a NormBall. Got {type(ball).__name__} instead."
            )
        if ball.estimated and not unsafe_allow_estimated_sensitivity:
            raise UnsafeSensitivityError(
                f"The 'ball' parameter of KNormMechanism must not be estimated from samples. Got {ball!r}, "
                "built from sampled points of the sensitivity space, instead. Such a ball can miss parts "
                "of S_T, so its sensitivity is not certified; use a certified outer hull "
                "(SensitivitySpace.outer_hull) or pass unsafe_allow_estimated_sensitivity=True."
            )
        self.ball = ball
        self.epsilon = check_positive(epsilon, "epsilon", "KNormMechanism")
        self.sensitivity = as_certified(
            sensitivity, "KNormMechanism", unsafe_allow_estimated_sensitivity=unsafe_allow_estimated_sensitivity
        )
        self.noise = KNormNoise(ball, self.sensitivity.value / self.epsilon)

    @property
    def dim(self):
        """Dimension m of the released statistic."""
        return self.ball.dim

    def sample_noise(self, size=None, *, rng=None):
        """Draw noise vectors (see :meth:`KNormNoise.sample`)."""
        return self.noise.sample(size, rng=check_rng(rng, "KNormMechanism.sample_noise"))

    def release(self, value, *, rng=None, accountant=None, label="K-norm release"):
        """Release ``value`` (shape (m,) or (k, m)) plus independent noise per row.

        If an ``accountant`` (:class:`knorm.accounting.PrivacyAccountant`) is given,
        epsilon is charged to it first (once per row), and nothing is released if
        the budget would be exceeded.
        """
        value = check_vectors(value, self.dim, "value", "KNormMechanism.release")
        rng = check_rng(rng, "KNormMechanism.release")
        if accountant is not None and not callable(getattr(accountant, "spend", None)):
            raise TypeError(
                "The 'accountant' parameter of KNormMechanism.release must be a PrivacyAccountant (an object with "
                f"a 'spend' method) or None. Got {accountant!r} instead."
            )
        if accountant is not None:
            rows = 1 if value.ndim == 1 else int(np.prod(value.shape[:-1]))
            accountant.spend(self.epsilon * rows, label)
        if value.ndim == 1:
            return value + self.noise.sample(rng=rng)
        return value + self.noise.sample(value.shape[:-1], rng=rng)

    def privacy_loss(self, u):
        """Privacy loss eps ||u||_K / Delta of a change ``u`` of the statistic.

        This is the supremum over outputs z of log f(z - T(X)) / f(z - T(X')) for
        T(X) - T(X') = u, by the triangle inequality, attained on a ray. It is
        <= eps exactly when u lies in Delta K.
        """
        u = check_vectors(u, self.dim, "u", "KNormMechanism.privacy_loss")
        loss = self.epsilon * self.ball._gauge(u) / self.sensitivity.value
        return float(loss) if np.ndim(loss) == 0 else loss

    def log_density_ratio(self, z, value, neighbour):
        """log f(z | value) - log f(z | neighbour): the realised privacy loss at output z."""
        return self.noise.logpdf(np.asarray(z, float) - np.asarray(value, float)) - self.noise.logpdf(
            np.asarray(z, float) - np.asarray(neighbour, float)
        )

    def log_volume(self):
        """log vol(Delta K): the key of the volume order (paper Definition "Containment and Volume Orders")."""
        lv = self.noise.log_volume()
        return type(lv)(
            float(lv) + self.dim * math.log(self.sensitivity.value), exact=lv.exact, stderr=lv.stderr, method=lv.method
        )

    def entropy(self):
        """Entropy of the noise (paper Proposition "Entropy of K-mech")."""
        return self.noise.entropy()

    def __repr__(self):
        return f"KNormMechanism({self.ball!r}, sensitivity={self.sensitivity.value:g}, epsilon={self.epsilon:g})"
