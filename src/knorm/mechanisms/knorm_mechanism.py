"""The K-norm mechanism: release T(X) + V, V with density exp(-eps ||v||_K / Delta)."""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_positive, check_rng, check_vectors
from knorm.geometry import NormBall
from knorm.mechanisms.release import Release, ball_name
from knorm.noise import KNormNoise
from knorm.sensitivity.certificate import UnsafeSensitivityError, as_certified

__all__ = ["KNormMechanism"]

_FLOAT_CAVEAT = "continuous noise drawn in binary64: exposed to the least-significant-bit attack of Mironov (2012)"


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
    >>> mech.release([10.0, 20.0], rng=7).value.shape
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
        """Draw noise vectors of this mechanism's law (see :meth:`KNormNoise.sample`).

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors; None draws a single vector.
        rng : None, int, SeedSequence or Generator
            Source of the noise. None draws fresh entropy from the operating system.

        Returns
        -------
        ndarray
            Shape (dim,) if ``size`` is None, else (size, dim) (``size + (dim,)`` for a
            tuple): draws with density proportional to exp(-eps ||v||_K / Delta). They
            are noise only; values are published through :meth:`release`, which charges
            the budget.
        """
        return self.noise.sample(size, rng=check_rng(rng, "KNormMechanism.sample_noise"))

    def release(self, value, *, rng=None, accountant=None, label="K-norm release"):
        """Release ``value`` plus K-norm noise: the one additive release path.

        Parameters
        ----------
        value : array_like of shape (m,) or (k, m)
            The statistic T(X); each row gets independent noise.
        rng : None, int, SeedSequence or Generator
            Source of the noise. None draws fresh entropy from the operating system.
        accountant : PrivacyAccountant, optional
            Charged epsilon (once per row) before any noise is drawn; nothing is
            released if the charge is refused.
        label : str, default "K-norm release"
            What is released, for the ledger and the record.

        Returns
        -------
        Release
            The published value with its privacy terms; ``np.asarray(release)`` is the value.
        """
        value = check_vectors(value, self.dim, "value", "KNormMechanism.release")
        rows = 1 if value.ndim == 1 else int(np.prod(value.shape[:-1]))
        return self._publish(
            lambda gen: value + self.noise.sample(None if value.ndim == 1 else value.shape[:-1], rng=gen),
            epsilon=self.epsilon * rows,
            rng=rng,
            accountant=accountant,
            label=label,
            owner="KNormMechanism.release",
        )

    def release_objective(self, minimise, *, epsilon, rng=None, accountant=None, label="objective perturbation"):
        """Publish the minimiser of an objective perturbed by this mechanism's noise.

        Objective perturbation (paper Algorithm "Extended Objective Perturbation"): V is
        drawn from this mechanism's law, exp(-eps_V ||V||_K / Delta) with
        eps_V = ``self.epsilon`` = q epsilon, and ``minimise(V)``, the minimiser of
        L(theta; X) + gamma/2 ||theta||^2 + V'theta, is published. The proof (paper
        Theorem "Extended Objective Perturbation", with gamma as in errata item 1) spends
        the rest of ``epsilon`` on the Hessian term. V itself is never returned: with the
        minimiser it would reveal the exact gradient.

        Parameters
        ----------
        minimise : callable
            V -> the exact minimiser theta (an ndarray). It may raise to refuse publishing
            (for instance when the optimiser has not converged); the charge stands.
        epsilon : float
            The whole budget of the release, at least this mechanism's epsilon.
        rng : None, int, SeedSequence or Generator
            Source of the noise.
        accountant : PrivacyAccountant, optional
            Charged ``epsilon`` before the noise is drawn.
        label : str, default "objective perturbation"
            What is released.

        Returns
        -------
        Release
            The minimiser theta (``value``), with ``mechanism='objective perturbation'``
            and the whole ``epsilon`` as its budget.
        """
        epsilon = check_positive(epsilon, "epsilon", "KNormMechanism.release_objective")
        if epsilon < self.epsilon:
            raise ValueError(
                "The 'epsilon' parameter of KNormMechanism.release_objective must be at least the noise's epsilon "
                f"{self.epsilon:g} (the noise spends q epsilon of it). Got {epsilon!r} instead."
            )
        return self._publish(
            lambda gen: minimise(self.noise.sample(rng=gen)),
            epsilon=epsilon,
            rng=rng,
            accountant=accountant,
            label=label,
            owner="KNormMechanism.release_objective",
            mechanism="objective perturbation",
        )

    def _publish(self, draw, *, epsilon, rng, accountant, label, owner, mechanism="K-norm"):
        """Every release goes through here: the accountant is charged, then noise is drawn."""
        gen = check_rng(rng, owner)
        if accountant is not None and not callable(getattr(accountant, "spend", None)):
            raise TypeError(
                f"The 'accountant' parameter of {owner} must be a PrivacyAccountant (an object with "
                f"a 'spend' method) or None. Got {accountant!r} instead."
            )
        entry = None
        if accountant is not None:
            entry = accountant.spend(epsilon, label)
            if entry is None:  # a ledger whose spend returns nothing: its last entry is this charge
                entry = accountant.ledger[-1]
        value = draw(gen)
        return Release(
            value=value,
            epsilon=epsilon,
            ball=self.ball,
            ball_name=ball_name(self.ball),
            sensitivity=self.sensitivity,
            noise_scale=self.noise.scale,
            label=str(label),
            ledger_entry=entry,
            mechanism=mechanism,
            sampler=self.noise.sampler,
            caveats=(_FLOAT_CAVEAT,),
        )

    def privacy_loss(self, u):
        """Return the privacy loss eps ||u||_K / Delta of a change ``u`` of the statistic.

        Parameters
        ----------
        u : array_like of shape (m,) or (..., m)
            Differences T(X) - T(X') of the statistic on neighbouring datasets.

        Returns
        -------
        float or ndarray of shape (...)
            The worst-case privacy loss of each difference.

        Notes
        -----
        This is the supremum over outputs z of log f(z - T(X)) / f(z - T(X')) for
        T(X) - T(X') = u, by the triangle inequality, attained on a ray. It is
        <= eps exactly when u lies in Delta K (paper Proposition "K-Norm Mechanism").
        """
        u = check_vectors(u, self.dim, "u", "KNormMechanism.privacy_loss")
        loss = self.epsilon * self.ball._gauge(u) / self.sensitivity.value
        return float(loss) if np.ndim(loss) == 0 else loss

    def log_density_ratio(self, z, value, neighbour):
        """Return log f(z | value) - log f(z | neighbour), the realised privacy loss at output z.

        Parameters
        ----------
        z : array_like of shape (m,) or (..., m)
            Outputs of the mechanism.
        value : array_like of shape (m,)
            The statistic T(X).
        neighbour : array_like of shape (m,)
            The statistic T(X') of a neighbouring dataset.

        Returns
        -------
        float or ndarray of shape (...)
            (||z - T(X')||_K - ||z - T(X)||_K) eps / Delta; its absolute value is at
            most :meth:`privacy_loss` of T(X) - T(X').
        """
        return self.noise.logpdf(np.asarray(z, float) - np.asarray(value, float)) - self.noise.logpdf(
            np.asarray(z, float) - np.asarray(neighbour, float)
        )

    def log_volume(self):
        """Return log vol(Delta K), the key of the volume order.

        Returns
        -------
        Volume
            The sum m log(Delta) + log vol(K), exact or a labelled Monte Carlo
            estimate as :meth:`KNormNoise.log_volume` is.

        References
        ----------
        Paper Definition "Containment and Volume Orders".
        """
        lv = self.noise.log_volume()
        return type(lv)(
            float(lv) + self.dim * math.log(self.sensitivity.value), exact=lv.exact, stderr=lv.stderr, method=lv.method
        )

    def entropy(self):
        """Return the differential entropy of the noise, in nats.

        Returns
        -------
        float
            The entropy m + log(m!) + log vol(K) + m log(Delta / eps) (see
            :meth:`KNormNoise.entropy`).

        References
        ----------
        Paper Proposition "Entropy of K-mech".
        """
        return self.noise.entropy()

    def __repr__(self):
        return f"KNormMechanism({self.ball!r}, sensitivity={self.sensitivity.value:g}, epsilon={self.epsilon:g})"
