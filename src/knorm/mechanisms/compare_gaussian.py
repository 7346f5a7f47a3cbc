"""The paper's comparisons carried to Gaussian noise, and pure K-norm against Gaussian at one (epsilon, delta).

Paper Section 3 orders K-norm mechanisms by containment (Delta_K K inside Delta_H H: the
first is stochastically tighter and has the smaller conditional variance in every
direction) and by volume (entropy). For Gaussian noise N(0, Sigma) the same two orders read:

* **containment** (Loewner order): Sigma_1 <= Sigma_2, that is, every concentration ellipsoid
  {u' Sigma_1^-1 u <= c} lies inside {u' Sigma_2^-1 u <= c}. Then V_1 is stochastically
  tighter than V_2: P(V_1 in C) >= P(V_2 in C) for every symmetric convex C (Anderson 1955,
  "The integral of a symmetric unimodal function over a symmetric convex set", Theorem 1,
  applied to V_2 = V_1 + W with W ~ N(0, Sigma_2 - Sigma_1) independent), the analogue of
  the paper's Theorem "Stochastic Tightness of K-mechs".
* **volume**: the entropy 1/2 log det(2 pi e Sigma) (Cover & Thomas 2006, Theorem 8.4.1),
  the analogue of the paper's Theorem "Entropy Ordering".
* **conditional variance** in a direction e (unit): V restricted to the line span(e) has
  density proportional to exp(-t^2 e' Sigma^-1 e / 2) in t, so Var(V'e | V in span(e)) =
  1 / (e' Sigma^-1 e), the analogue of the paper's Lemma "K-mech Conditional Distribution"
  (errata item 2).

Across families (a pure K-norm against a Gaussian) neither order applies, so
:func:`compare_pure_and_gaussian` compares what a user pays for: the expected squared error
E||V||^2 of each, at the user's (epsilon, delta) target. A pure epsilon-DP release is
(epsilon, delta)-DP for every delta; the Gaussian gets the largest rho whose conversion
(:func:`knorm.accounting.zcdp.epsilon_from_rho`, the tighter of Bun & Steinke 2016
Proposition 1.3 and Canonne, Kamath & Steinke 2020 Corollary 13) is at most epsilon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from knorm._validation import check_positive, check_probability, check_vectors, param_error
from knorm.accounting.zcdp import epsilon_from_rho
from knorm.geometry import LinearImage, ScaledBall
from knorm.geometry.lp import LpBall
from knorm.mechanisms.choose import choose_mechanism
from knorm.mechanisms.choose_gaussian import choose_gaussian
from knorm.mechanisms.gaussian import GaussianMechanism

__all__ = [
    "ErrorComparison",
    "GaussianComparison",
    "compare_gaussians",
    "compare_pure_and_gaussian",
    "gaussian_conditional_variance",
    "gaussian_entropy",
    "knorm_noise_second_moment",
    "rho_for_target",
]

# Draws for the Monte Carlo second moment of a ball without a closed form (fixed seed: public).
_MC_DRAWS, _MC_SEED = 20_000, 20_240_527
# Relative tolerance of the Loewner comparison (certified covariances carry float rounding).
_TOL = 1e-9


def _covariance(mech):
    """The covariance matrix of a Gaussian mechanism's noise, or a covariance itself."""
    cov = mech.covariance if isinstance(mech, GaussianMechanism) else mech
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or not np.all(np.isfinite(cov)):
        raise param_error("mechanism", "compare_gaussians", "a GaussianMechanism or a finite square matrix", cov.shape)
    return (cov + cov.T) / 2


def gaussian_entropy(mechanism):
    """Return the differential entropy of the noise N(0, Sigma), in nats: 1/2 log det(2 pi e Sigma).

    Parameters
    ----------
    mechanism : GaussianMechanism or array_like of shape (m, m)
        The mechanism (for a lattice release, the covariance of its noise in the statistic's units) or Sigma.

    Returns
    -------
    float
        The entropy (Cover & Thomas 2006, Theorem 8.4.1), the Gaussian analogue of the paper's
        Proposition "Entropy of K-mech".
    """
    cov = _covariance(mechanism)
    sign, logdet = np.linalg.slogdet(cov)
    if sign <= 0:
        raise ValueError("The covariance of a Gaussian mechanism must be positive definite; this one is singular.")
    m = cov.shape[0]
    return 0.5 * (m * math.log(2 * math.pi * math.e) + logdet)


def gaussian_conditional_variance(mechanism, e):
    """Return Var(V'e | V in span(e)) = 1 / (e' Sigma^-1 e) for unit directions e.

    Parameters
    ----------
    mechanism : GaussianMechanism or array_like of shape (m, m)
        The mechanism or Sigma.
    e : array_like of shape (m,) or (..., m)
        Non-zero directions; each is normalised to ||e||_2 = 1.

    Returns
    -------
    float or ndarray of shape (...)
        The conditional variance (module docstring), comparable with
        :meth:`knorm.noise.KNormNoise.conditional_variance`.
    """
    cov = _covariance(mechanism)
    e = check_vectors(e, cov.shape[0], "e", "gaussian_conditional_variance")
    norms = np.sqrt(np.einsum("...i,...i->...", e, e))
    if np.any(norms == 0):
        raise ValueError(
            "The 'e' parameter of gaussian_conditional_variance must be a non-zero direction. Got the zero vector instead."
        )
    u = e / norms[..., None]
    q = np.einsum("...i,...i->...", u, np.linalg.solve(cov, u.T).T if u.ndim > 1 else np.linalg.solve(cov, u))
    return 1.0 / q


@dataclass(frozen=True)
class GaussianComparison:
    """Two Gaussian mechanisms in the paper's orders, as returned by :func:`compare_gaussians`.

    Parameters
    ----------
    first_contained : bool
        Sigma_1 <= Sigma_2 in the Loewner order: the first is stochastically tighter (containment order).
    second_contained : bool
        Sigma_2 <= Sigma_1.
    ratio : float
        The largest eigenvalue of Sigma_2^-1 Sigma_1: containment of the first holds iff ratio <= 1.
    entropy_difference : float
        Entropy of the first minus entropy of the second (nats); negative favours the first (volume order).
    trace_ratio : float
        The ratio trace(Sigma_1) / trace(Sigma_2), that is, the ratio of expected squared errors.
    """

    first_contained: bool
    second_contained: bool
    ratio: float
    entropy_difference: float
    trace_ratio: float


def compare_gaussians(first, second):
    """Compare two Gaussian mechanisms by the containment (Loewner) and volume (entropy) orders.

    Parameters
    ----------
    first, second : GaussianMechanism or array_like of shape (m, m)
        The mechanisms or their covariances, of one dimension.

    Returns
    -------
    GaussianComparison
        Both orders and the ratio of expected squared errors.

    Examples
    --------
    >>> result = compare_gaussians(np.diag([1.0, 1.0]), np.diag([2.0, 1.0]))
    >>> result.first_contained, result.second_contained, round(result.trace_ratio, 3)
    (True, False, 0.667)
    """
    a, b = _covariance(first), _covariance(second)
    if a.shape != b.shape:
        raise ValueError(
            f"The mechanisms compared by compare_gaussians must have one dimension. Got {a.shape[0]} and {b.shape[0]} instead."
        )
    # Eigenvalues of the pencil (A, B): lambda_max <= 1 iff A <= B in the Loewner order.
    lb = np.linalg.cholesky(b)
    pencil = np.linalg.solve(lb, np.linalg.solve(lb, a).T).T
    eig = np.linalg.eigvalsh((pencil + pencil.T) / 2)
    return GaussianComparison(
        first_contained=bool(eig[-1] <= 1 + _TOL),
        second_contained=bool(eig[0] >= 1 - _TOL),
        ratio=float(eig[-1]),
        entropy_difference=gaussian_entropy(a) - gaussian_entropy(b),
        trace_ratio=float(np.trace(a) / np.trace(b)),
    )


def _ball_second_moment(ball):
    """(E[W W'] for W uniform in ``ball``, method): exact for l_p balls with p in {1, 2, inf} and their linear images."""
    scale, base = 1.0, ball
    while isinstance(base, ScaledBall):
        scale, base = scale * base.factor, base.base
    if isinstance(base, LinearImage):
        inner, method = _ball_second_moment(base.base)
        A = np.asarray(base.matrix, dtype=float)
        return scale**2 * (A @ inner @ A.T), method
    if isinstance(base, LpBall) and base.p in (1, 2, math.inf):
        m, r = base.dim, base.radius
        per = {1: 2 / ((m + 1) * (m + 2)), 2: 1 / (m + 2), math.inf: 1 / 3}[base.p]
        return (scale * r) ** 2 * per * np.eye(m), "closed form"
    draws = np.asarray(ball.sample_uniform(_MC_DRAWS, rng=_MC_SEED), dtype=float)
    return draws.T @ draws / _MC_DRAWS, f"Monte Carlo ({_MC_DRAWS} uniform draws of the ball, fixed seed)"


def knorm_noise_second_moment(mechanism):
    """Return E[V V'] of a K-norm mechanism's noise, and how it was computed.

    Parameters
    ----------
    mechanism : KNormMechanism
        The mechanism.

    Returns
    -------
    second_moment : ndarray of shape (m, m)
        E[V V'] = (m + 1)(m + 2) s^2 E[W W'] with s = Delta / epsilon and W uniform in K: the
        noise is R W with R ~ Gamma(m + 1, s) independent of W (paper Algorithm "Sampling
        K-mech", Lemma "K-norm Marginal Distribution").
    method : str
        'closed form' for l1, l2, l_inf balls (and their linear images), else Monte Carlo.

    Examples
    --------
    >>> from knorm.mechanisms import KNormMechanism
    >>> mech = KNormMechanism(LpBall(3, 1), sensitivity=1.0, epsilon=1.0)
    >>> np.round(np.diag(knorm_noise_second_moment(mech)[0]), 6)  # Laplace(1) coordinates
    array([2., 2., 2.])
    """
    m = mechanism.dim
    inner, method = _ball_second_moment(mechanism.ball)
    s = mechanism.sensitivity.value / mechanism.epsilon
    return (m + 1) * (m + 2) * s**2 * inner, method


def rho_for_target(epsilon, delta):
    """Return the largest rho (to 1e-12 relative) whose (epsilon, delta) conversion is at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        The target epsilon, in (0, inf).
    delta : float
        The target delta, in (0, 1).

    Returns
    -------
    float
        The rho with :func:`~knorm.accounting.zcdp.epsilon_from_rho` (rho, delta) <= epsilon: a rho-zCDP
        release then meets the target (the conversion is monotone in rho; bisection keeps the feasible end).

    Examples
    --------
    >>> rho = rho_for_target(1.0, 1e-6)
    >>> from knorm.accounting.zcdp import epsilon_from_rho
    >>> epsilon_from_rho(rho, 1e-6) <= 1.0
    True
    """
    epsilon = check_positive(epsilon, "epsilon", "rho_for_target")
    delta = check_probability(delta, "delta", "rho_for_target")
    lo, hi = 0.0, epsilon  # epsilon_from_rho(rho) >= rho, so rho = epsilon is infeasible
    for _ in range(200):
        mid = (lo + hi) / 2
        if epsilon_from_rho(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    if lo == 0.0:
        raise ValueError(f"No rho > 0 meets epsilon = {epsilon:g} at delta = {delta:g}.")
    return lo


@dataclass(frozen=True)
class ErrorComparison:
    """Pure K-norm against Gaussian noise at one (epsilon, delta), by :func:`compare_pure_and_gaussian`.

    Parameters
    ----------
    epsilon, delta : float
        The user's target.
    rho : float
        The Gaussian's zCDP budget meeting the target (:func:`rho_for_target`).
    knorm_mse : float
        E||V||^2 of the best pure K-norm mechanism at epsilon (``knorm_name``).
    gaussian_mse : dict of str to float
        E||V||^2 of each certified Gaussian candidate at rho (spherical first), by
        :func:`~knorm.mechanisms.choose_gaussian`.
    knorm_name : str
        The K-norm ball chosen (paper volume order, :func:`~knorm.mechanisms.choose_mechanism`).
    method : str
        How ``knorm_mse`` was computed.
    winner : str
        'K-norm (name)' or 'Gaussian (shape)': the smaller expected squared error.
    mechanisms : dict
        The mechanisms compared, by name.
    """

    epsilon: float
    delta: float
    rho: float
    knorm_mse: float
    gaussian_mse: dict
    knorm_name: str
    method: str
    winner: str
    mechanisms: dict = field(repr=False, compare=False, default_factory=dict)

    def ratio(self, shape):
        """Return the Gaussian ``shape``'s expected squared error over the K-norm's.

        Parameters
        ----------
        shape : str
            A key of ``gaussian_mse``.

        Returns
        -------
        float
            The ratio; below 1 the Gaussian wins.
        """
        return self.gaussian_mse[shape] / self.knorm_mse


def compare_pure_and_gaussian(space, epsilon, delta, *, shapes=None, hull=True, candidates=None):
    """Say which of pure K-norm noise and (shaped) Gaussian noise gives the smaller error at (epsilon, delta).

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's certified sensitivity space (full-dimensional: reduce a flat one first).
    epsilon : float
        The user's epsilon target, in (0, inf).
    delta : float
        The user's delta target, in (0, 1). The K-norm release is pure, so it meets any delta.
    shapes : callable, optional
        The statistic's closed-form Gaussian shapes (for example
        ``lambda: (count_shape(100, 50),)``, :mod:`knorm.mechanisms.gaussian_shapes`).
    hull : bool, default True
        Also fit the min-trace ellipsoid on certified vertices of the space, when it has few
        enough (cvxpy, the ``zcdp`` extra); skipped with the reason otherwise.
    candidates : dict of str to NormBall, optional
        K-norm balls for :func:`~knorm.mechanisms.choose_mechanism` (default: its candidates).

    Returns
    -------
    ErrorComparison
        Expected squared errors E||V||^2 = trace of the noise's second moment, and the winner.

    Notes
    -----
    Expected squared error is compared, not the paper's orders, which do not compare across
    families. For a statistic of dimension m the K-norm's error grows like m^2 / eps^2 and the
    Gaussian's like m log(1/delta) / eps^2, so the Gaussian wins in high dimension and the
    K-norm in low dimension and at small delta.
    """
    owner = "compare_pure_and_gaussian"
    epsilon = check_positive(epsilon, "epsilon", owner)
    delta = check_probability(delta, "delta", owner)
    if space.affine_reduction() is not None:
        raise ValueError(
            f"The 'space' parameter of {owner} must be full-dimensional. Got a flat space instead: compare on "
            "space.reduced() (the released coordinates)."
        )
    rho = rho_for_target(epsilon, delta)
    choice = choose_mechanism(space, epsilon, candidates, reduce=False, time_budget=None, owner=owner)
    moment, method = knorm_noise_second_moment(choice.mechanism)
    knorm_mse = float(np.trace(moment))
    gaussian = choose_gaussian(space, rho, shapes=shapes, hull=hull or None, owner=owner)
    mechanisms = {f"K-norm ({choice.name})": choice.mechanism, "Gaussian (chosen)": gaussian.mechanism}
    gaussian_mse = {name: float(trace) for name, trace in gaussian.ranking}
    best_shape = min(gaussian_mse, key=gaussian_mse.__getitem__)
    winner = f"Gaussian ({best_shape})" if gaussian_mse[best_shape] < knorm_mse else f"K-norm ({choice.name})"
    return ErrorComparison(epsilon, delta, rho, knorm_mse, gaussian_mse, choice.name, method, winner, mechanisms)
