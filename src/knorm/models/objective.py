"""Objective perturbation (paper Section 4), written once: gamma, the q rule, the solver, the release.

One release function, :func:`fit_objective_perturbation`, serves every logistic model: it
takes a loss object of :mod:`knorm.models.losses` (binary, the k = 2 case, or
multinomial), which gives the loss, its gradient and Hessian, and the bound lambda and
rank r of a per-record Hessian that enter gamma (errata item 1); one damped Newton solver
minimises the perturbed objective to the certified gradient tolerance of
:meth:`~knorm.mechanisms.KNormMechanism.release_objective`. Whether the release is
private (outside :func:`~knorm.mechanisms.nonprivate`) is decided there, once, and
returned in its :class:`ObjectiveFit`. :func:`objective_perturbation` (binary) and
:func:`~knorm.models.multinomial.multinomial_objective_perturbation` are thin forms of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from knorm._docs import fill_doc
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, Release, nonprivate_active
from knorm.mechanisms.knorm_mechanism import OUTPUT_SHARE
from knorm.models.losses import BinaryLogisticLoss, hessian_trace_bound, logistic_loss
from knorm.noise import KNormNoise

__all__ = [
    "ObjectiveFit",
    "TAU2_INFERENCE",
    "TAU2_POINT",
    "auto_q",
    "fit_objective_perturbation",
    "hessian_trace_bound",
    "logistic_gamma",
    "logistic_newton",
    "objective_gamma",
    "objective_perturbation",
    "perturbation_gamma",
]

# Public constants of the q='auto' rule (see ``auto_q``): the q grid. The curvature of the
# mean loss at theta = 0 for features uniform on [-1, 1] is (k - 1) / (3 k^2) (1/12 for
# two classes: sigma' = 1/4 times E x^2 = 1/3).
_Q_GRID = np.linspace(0.005, 0.995, 199)
# The coefficient sizes tau^2 / d over which the q rule is minimax in ratio: 1 to 8 per coordinate
# for a point estimate; 1/4 to 1 for a fit that also releases its information for intervals.
TAU2_POINT, TAU2_INFERENCE = (1.0, 64.0), (1.0 / 16.0, 1.0)
# Below this gamma the objective is too flat for a certified minimiser (gamma underflows
# at eps (1 - q) of a few hundred; the output noise covering tau / gamma explodes well before).
_GAMMA_MIN = 1e-9
# Fixed seed and size of the Monte Carlo E||V||_2^2 for balls without a closed form.
_MC_SEED, _MC_SIZE = 20_240_601, 20_000
_MC_CACHE: dict = {}


def objective_gamma(lam, epsilon, q, *, rank=1):
    """Return the regularisation gamma = lambda / (exp(eps (1 - q) / rank) - 1) of objective perturbation.

    Parameters
    ----------
    lam : float
        The bound lambda on the eigenvalues of the per-record Hessian (m / 4 for
        the logistic loss on records in [-1, 1]^m); for a Hessian of rank r > 1, the
        bound on the mean of its r largest eigenvalues (see Notes).
    epsilon : float
        The whole privacy budget.
    q : float or array_like
        Share of epsilon spent on the noise, in (0, 1).
    rank : int, default 1
        The largest rank r of a per-record Hessian (1 for binary logistic
        regression, k - 1 for the multinomial loss with k classes).

    Returns
    -------
    float or ndarray
        The gamma of each q, computed as lambda exp(-x) / (1 - exp(-x)) with
        x = eps (1 - q) / r, so that it underflows to 0 instead of overflowing for huge eps.

    Notes
    -----
    The paper prints gamma = lambda / (exp(eps (q - 1)) - 1), which is negative for
    q < 1: the objective is then non-convex and the mechanism not private. The proof
    needs 1 + lambda / gamma <= exp(eps (1 - q)), which this gamma meets with
    equality (errata item 1).

    *Rank r.* The proof bounds det(I + C^{-1} M) for the per-record Hessian M and
    C >= gamma I. As C^{-1} <= I / gamma, det(I + C^{-1} M) = det(I + M^{1/2} C^{-1}
    M^{1/2}) <= det(I + M / gamma) = prod_i (1 + mu_i / gamma) over the r nonzero
    eigenvalues mu_i of M. If their mean is at most lambda, the arithmetic-geometric
    mean inequality gives prod_i (1 + mu_i / gamma) <= (1 + lambda / gamma)^r, which
    is exp(eps (1 - q)) for this gamma. For r = 1 it is errata item 1.

    References
    ----------
    Paper Section 4, Algorithm "Extended Objective Perturbation" step 1 and the
    proof of Theorem "Extended Objective Perturbation"; errata item 1.

    Examples
    --------
    >>> round(objective_gamma(7 / 4, 1.0, 0.5), 6)  # m = 7, eps = 1, q = 1/2
    2.697615
    """
    x = epsilon * (1.0 - np.asarray(q, dtype=float)) / rank
    g = lam * np.exp(-x) / -np.expm1(-x)
    return float(g) if g.ndim == 0 else g


def _coupled_excess_bound(a, b):
    """A certified upper bound on max over r in [0, 1] of f(r) = a r + log(1 + b r (1 - r)) (arrays broadcast).

    f is concave (both terms are), so it lies below its tangent at any point r0:
    max f <= f(r0) + max(-f'(r0) r0, f'(r0) (1 - r0)). r0 is the root of f' (a quadratic,
    a b r^2 + (2 b - a b) r - (a + b) = 0) clipped to [0, 1], so the tangent term is
    the rounding error of r0 only (and exact at a clipped end).
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    c = 2.0 * b - a * b
    # A wrong r0 (rounding, or overflow for huge b) only loosens the certificate, never breaks it.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        root = np.sqrt(c * c + 4.0 * a * b * (a + b))
        # The positive root, written to avoid cancellation in either sign of c.
        r0 = np.where(c > 0, 2.0 * (a + b) / (c + root), (root - c) / (2.0 * a * b))
    r0 = np.clip(np.where((a == 0) | ~np.isfinite(r0), 0.5, r0), 0.0, 1.0)
    u = b * r0 * (1.0 - r0)
    f = a * r0 + np.log1p(u)
    slope = a + b * (1.0 - 2.0 * r0) / (1.0 + u)
    out = f + np.maximum(np.maximum(-slope * r0, slope * (1.0 - r0)), 0.0)
    return float(out) if out.ndim == 0 else out


@fill_doc
def logistic_gamma(m, epsilon, q, *, neighbours="replace"):
    """Return the smallest gamma for which objective perturbation of the binary logistic loss is eps-DP.

    The noise V has density proportional to exp(-eps q ||V||_K / Delta_K); the rest of
    epsilon pays for the Jacobian, as in errata item 1, but the two factors are bounded
    jointly (see Notes), which allows a smaller gamma than
    ``objective_gamma(m / 4, epsilon, q)`` at the same q.

    Parameters
    ----------
    m : int
        Number of features (intercept column included); records in [-1, 1]^m.
    epsilon : float
        Budget of objective perturbation proper (eps_op of :func:`fit_objective_perturbation`).
    q : float or array_like
        Share of epsilon spent on the noise, in (0, 1).
    %(neighbours)s

    Returns
    -------
    float or ndarray
        The gamma of each q: m / b, where b is the largest value (found by bisection, to a
        relative 1e-12, from the safe side) with a + U(a, b) <= eps for replace-one and
        U(eps q, b) <= eps for add/remove, a = eps q / 2 and U the certified bound of
        max over r in [0, 1] of a r + log(1 + b r (1 - r)). 0 where even b = inf is allowed.

    Notes
    -----
    *The coupled bound.* Follow the proof of the paper's Theorem "Extended Objective
    Perturbation" (replace-one, the records z_n of X and z_n' of X' differing, C = gamma I
    + sum_{i < n} hess l(a; z_i) >= gamma I). At the output a, write p = sigma(a'z_n) and
    r = |p - y_n| in [0, 1]. The record's gradient is (p - y_n) z_n, of K-norm at most
    r Delta_K / 2, because Delta_K >= ||u z - (-u z)||_K = 2 ||u z||_K (u = +-1) for every
    record: the noise factor is at most exp(eps q (r + r') / 2) <= exp(eps q (1 + r) / 2).
    The record's Hessian is p (1 - p) z_n z_n' = r (1 - r) z_n z_n', so the Jacobian factor
    det(C + M_n) / det(C + M_n') <= det(I + C^{-1} M_n) <= 1 + r (1 - r) m / gamma.
    Both factors are at the same a and the same r, hence

        log pdf(a | X) / pdf(a | X') <= eps q / 2 + max_r [eps q r / 2 + log(1 + r (1 - r) m / gamma)].

    The paper's bound maximises the two terms separately (r = 1 for the noise, r = 1/2 for
    the Jacobian: eps q + log(1 + m / (4 gamma)), errata item 1); but a record whose gradient
    is largest adds no curvature. Under add/remove (X' = X plus z) the noise factor is at most
    exp(eps q r) with Delta_K the one-record sensitivity (>= ||u z||_K), and the Jacobian
    factor is at most 1 one way and 1 + r (1 - r) m / gamma the other: the bound is
    max_r [eps q r + log(1 + r (1 - r) m / gamma)]. As that replace-one bound dominates it
    term by term, the replace-one gamma is also valid under add/remove.

    f(r) = a r + log(1 + b r (1 - r)) is concave, so its maximum is bounded from above
    (:func:`_coupled_excess_bound`, a tangent-line certificate) rather than estimated.

    References
    ----------
    Paper Section 4, Theorem "Extended Objective Perturbation" and its proof (the change of
    variables); errata item 1 (gamma for the decoupled bound). The coupling of the noise and
    Jacobian factors through sigma' = r (1 - r) is this library's refinement of that proof.

    Examples
    --------
    >>> round(logistic_gamma(7, 1.0, 0.5), 4)  # against objective_gamma(7 / 4, 1.0, 0.5) = 2.6976
    2.0527
    """
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(f"neighbours must be 'replace' or 'add_remove'; got {neighbours!r}.")
    qs = np.asarray(q, dtype=float)
    out = _coupled_gamma(m, float(epsilon), qs.ravel(), neighbours).reshape(qs.shape)
    return float(out) if out.ndim == 0 else out


def _coupled_gamma(m, epsilon, q, neighbours):
    """The gamma of each q (an array): bisection on log2 b, b = m / gamma, from the safe side."""
    if neighbours == "replace":
        a, room = epsilon * q / 2.0, epsilon * (1.0 - q / 2.0)
    else:
        a, room = epsilon * q, np.full_like(q, epsilon)
    room = room * (1.0 - 1e-12)  # rounding margin of the bound's own arithmetic

    def ok(log2b):
        return _coupled_excess_bound(a, np.exp2(log2b)) <= room

    # b in [2^-500, 2^500] (no overflow below): beyond, gamma is refused by the caller either way.
    lo, hi = np.full_like(q, -500.0), np.full_like(q, 500.0)
    for _ in range(64):  # 1000 / 2^64: b to a relative 1e-16
        mid = 0.5 * (lo + hi)
        good = ok(mid)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    gamma = m / np.exp2(lo)
    gamma = np.where(ok(hi), 0.0, gamma)  # even b = 2^500 fits: gamma underflows (refused by the caller)
    return np.where(ok(lo) & (room >= a), gamma, math.inf)  # q so close to 1 that no gamma is enough


def _unit_noise_second_moment(ball):
    """E||V||_2^2 for K-norm noise of scale 1 on ``ball`` (public: no data).

    Closed forms for l_p balls of radius r (V = R U, R ~ Gamma(m+1) and U ~
    Uniform(K), or for l2 R ~ Gamma(m) times a unit direction, errata, facts):
    l_inf (m+1)(m+2) m r^2 / 3; l2 m (m+1) r^2; l1 (iid Laplace(r)) 2 m r^2; a ball
    with a closed-form ``uniform_second_moment`` E||U||^2 (the softmax ball):
    (m+1)(m+2) E||U||^2. Other balls: Monte Carlo with a fixed seed, so the value is
    deterministic (cached by the ball's parameters).
    """
    m = ball.dim
    if isinstance(ball, LpBall) and ball.p in (1.0, 2.0, math.inf):
        r2 = ball.radius**2
        return {math.inf: (m + 1) * (m + 2) * m / 3.0, 2.0: m * (m + 1.0), 1.0: 2.0 * m}[ball.p] * r2
    uniform = getattr(ball, "uniform_second_moment", None)
    if callable(uniform):
        return (m + 1) * (m + 2) * float(uniform())
    key = ball.cache_key
    if key is not None and key in _MC_CACHE:
        return _MC_CACHE[key]
    v = KNormNoise(ball, 1.0).public_law_sample(_MC_SIZE, seed=_MC_SEED)
    value = float(np.mean(np.einsum("ij,ij->i", v, v)))
    if key is not None:
        _MC_CACHE[key] = value
    return value


def auto_q(n_samples, ball, sensitivity, epsilon, *, n_classes=2, tau2=TAU2_POINT):
    """Return the q of the data-independent ``q='auto'`` rule, minimising a predicted squared error.

    Parameters
    ----------
    n_samples : int or None
        Number of records n (public under replace-one neighbours). None (for
        add/remove neighbours, where n is private) uses the limit n -> inf of the
        same rule, which does not depend on n (see Notes).
    ball : NormBall
        Unit ball K of the noise, of dimension d = (k - 1) m (m features with the
        intercept column, k classes; d = m for two classes).
    sensitivity : float
        Gradient sensitivity Delta_K.
    epsilon : float
        Budget of the objective-perturbation release.
    n_classes : int, default 2
        Number k of classes of the (multinomial) model.
    tau2 : tuple of float, default (1, 64)
        The range of tau^2 / d, the size of the coefficients relative to the dimension,
        over which the rule is minimax (see Notes); ``TAU2_INFERENCE`` = (1/16, 1) for a
        fit that also releases its Fisher information.

    Returns
    -------
    float
        The q of the grid of step 0.005 in [0.005, 0.995] whose predicted error is
        closest to the best q's, in ratio, over every coefficient size in the range the rule
        considers (see Notes).

    Notes
    -----
    Only (n, d, k, eps, K, Delta) enter; no record does, so choosing q this way costs
    no privacy. In the scaled coordinates of the mechanism, the perturbed optimum
    theta_DP solves grad L_n(theta) + gamma theta + V = 0 (sum form), and the
    unperturbed MLE theta_hat solves grad L_n(theta) = 0. One Newton step from
    theta_hat gives

        theta_DP - theta_hat ~ -(n H + gamma I)^{-1} (gamma theta_hat + V),

    with H the Hessian of the mean loss. Replacing H by h I, and since E V = 0
    and V is independent of the data,

        R(q, tau) = E||theta_DP - theta_hat||_2^2 ~ (gamma(q)^2 tau^2 + E||V||_2^2) / (n h + gamma(q))^2,

    where gamma(q) is that of :func:`perturbation_gamma` (the coupled gamma for two
    classes) and E||V||_2^2 = c_K (Delta / (eps q))^2 with c_K the second moment of
    unit-scale noise (closed form for l_1, l_2, l_inf; a fixed-seed Monte Carlo
    otherwise). h = (k - 1) / (3 k^2) is the mean eigenvalue of the Hessian at theta = 0
    for features filling [-1, 1] (1/12 for k = 2: sigma'(0) = 1/4 times E x^2 = 1/3).

    The size tau^2 = ||theta_hat||^2 of the coefficients is not public, and it moves the
    best q a long way: a large gamma (small eps (1 - q)) costs bias gamma^2 tau^2, a
    small eps q costs noise. The rule is therefore minimax in ratio over
    tau^2 in [d, 64 d] (coefficients from 1 to 8 per coordinate in the scaled units; the
    California housing model of the paper's Section 5.3 has tau^2 = 46 d): it returns the q
    minimising max over tau of R(q, tau) / min_q' R(q', tau). As n -> inf the denominator
    is (n h)^2 whatever q, so the same rule on gamma(q)^2 tau^2 + E||V||_2^2 is the limit
    used when n is not public. It is a heuristic beyond the paper, which leaves the choice
    of q under DP open (Section 4.2).

    *With intervals* (``tau2 = TAU2_INFERENCE``, what :class:`~knorm.models.LogisticRegression`
    uses when ``inference_share > 0``): the bias gamma theta is then part of the intervals'
    model (the bootstrap reproduces it and the correction undoes it), while the noise V is
    what the one-step linearisation of the bootstrap must carry. The rule is minimax over
    small coefficients, tau^2 in [d / 16, d], which puts more of epsilon on the noise side
    (q = 0.95-0.96 on the paper's simulation, against 0.72 for a point estimate): coverage
    of the MLE at eps = 1/4, n = 10^4 went from 0.86-0.92 at q = 0.72 to 0.94-0.98 (120 fits),
    with 3 refusals instead of 13.

    References
    ----------
    Paper Section 4.2 (q = 1/2 and q = 0.85 compared, tuning q left open).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> auto_q(10_000, LpBall(7, float("inf")), 2.0, 1.0)
    0.72
    >>> auto_q(None, LpBall(7, float("inf")), 2.0, 1.0)  # the n -> inf limit
    0.805
    """
    d = ball.dim
    k = int(n_classes)
    m = d // (k - 1)
    q = _Q_GRID
    neighbours = "replace" if n_samples is not None else "add_remove"
    gamma = perturbation_gamma(m, epsilon, q, n_classes=k, neighbours=neighbours)
    noise = _unit_noise_second_moment(ball) * (sensitivity / ((1.0 - OUTPUT_SHARE) * epsilon * q)) ** 2
    tau2 = d * np.geomspace(tau2[0], tau2[1], 25)[:, None]
    risk = gamma**2 * tau2 + noise
    if n_samples is not None:
        curvature = (k - 1) / (3.0 * k * k)
        risk = risk / (n_samples * curvature + gamma) ** 2
    regret = np.max(risk / np.min(risk, axis=1, keepdims=True), axis=0)
    return round(float(q[np.argmin(regret)]), 3)


@fill_doc
def perturbation_gamma(m, epsilon, q, *, n_classes=2, neighbours="replace"):
    """Return the gamma of :func:`fit_objective_perturbation` at its share of epsilon.

    Parameters
    ----------
    m : int
        Number of features of the model (intercept included); lambda = m / 4 for two
        classes.
    epsilon : float
        The whole budget of the release.
    q : float or array_like
        Share of the objective-perturbation budget spent on the noise V.
    n_classes : int, default 2
        Number k of classes: the multinomial loss has per-record Hessians of rank
        k - 1 whose mean eigenvalue is at most m T / (k - 1), T of
        :func:`~knorm.models.losses.hessian_trace_bound`.
    %(neighbours)s

    Returns
    -------
    float or ndarray
        With eps_op = (1 - OUTPUT_SHARE) epsilon: for two classes the coupled gamma of
        :func:`logistic_gamma`; for k > 2 classes errata item 1 with rank r = k - 1,
        (m T / r) / (exp(eps_op (1 - q) / r) - 1) (:func:`objective_gamma`).
    """
    return _gamma(logistic_loss(n_classes), m, epsilon, q, neighbours)


def _gamma(loss, m, epsilon, q, neighbours="replace"):
    """The gamma of the loss at eps_op = (1 - OUTPUT_SHARE) epsilon: coupled for the binary loss, errata item 1 otherwise."""
    eps_op = (1.0 - OUTPUT_SHARE) * epsilon
    if isinstance(loss, BinaryLogisticLoss):  # the audit's test substitutes this very call
        return logistic_gamma(m, eps_op, q, neighbours=neighbours)
    return objective_gamma(loss.hessian_bound(m), eps_op, q, rank=loss.rank)


def logistic_newton(Z, y, *, gamma=0.0, linear=None, max_iter=100, tol=1e-8, theta0=None):
    """Minimise F(t) = sum_i [log(1 + e^{z_i't}) - y_i z_i't] + gamma/2 ||t||^2 + V't (no privacy).

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Records (rows).
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    gamma : float, default 0.0
        Ridge term; 0 gives the maximum likelihood estimate.
    linear : ndarray of shape (m,), optional
        The linear term V (zero by default).
    max_iter : int, default 100
        Newton iterations.
    tol : float, default 1e-8
        Stop when the Newton decrement is at most ``tol``.
    theta0 : ndarray of shape (m,), optional
        Starting point.

    Returns
    -------
    theta : ndarray of shape (m,)
        The minimiser.
    n_iter : int
        Iterations used.
    converged : bool
        Whether the decrement reached ``tol``.

    Notes
    -----
    The solver of :func:`fit_objective_perturbation` with the binary loss
    (:class:`~knorm.models.losses.BinaryLogisticLoss`): damped Newton with the exact
    Hessian; F is smooth and, for gamma > 0, strongly convex, so the minimiser is unique.
    Stops when the Newton decrement sqrt(g' H^{-1} g) (about ||t - t*||_H) is <= tol,
    after taking that last step.
    """
    loss = BinaryLogisticLoss()
    return _newton(loss, Z, loss.targets(y), gamma, linear, max_iter, tol, theta0)


def _newton(loss, Z, Y, gamma, linear, max_iter, tol, theta0):
    """Damped Newton on F(t) = sum_i l(t; z_i) + gamma/2 ||t||^2 + V't: (theta, n_iter, converged).

    Exact Hessian, backtracking (Armijo) line search; stops when the Newton decrement
    sqrt(g' H^{-1} g) is <= tol, after taking that last step.
    """
    d = loss.dim(Z.shape[1])
    V = np.zeros(d) if linear is None else np.asarray(linear, dtype=float)
    # A warm start changes the path, not the (unique, for gamma > 0) minimiser.
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=float).reshape(d)
    S = loss.raw(Z, theta)
    F = loss.value(S, Y) + 0.5 * gamma * (theta @ theta) + V @ theta
    diagonal = np.diag_indices(d)
    for it in range(1, max_iter + 1):
        g, H = loss.gradient_hessian(Z, S, Y)
        g = g + gamma * theta + V
        H[diagonal] += gamma
        try:
            step = -cho_solve(cho_factor(H), g)
        except LinAlgError:  # only without ridge (gamma = 0, or underflowed) on degenerate data
            step = -np.linalg.lstsq(H, g, rcond=None)[0]
        dec2 = -float(g @ step)
        if dec2 <= tol**2:
            return theta + step, it, True
        t = 1.0
        while True:  # backtracking (Armijo); near the optimum the full step is taken
            new = theta + t * step
            S_new = loss.raw(Z, new)
            F_new = loss.value(S_new, Y) + 0.5 * gamma * (new @ new) + V @ new
            if F_new <= F - 0.25 * t * dec2 or dec2 < 1e-8:
                break
            t *= 0.5
            if t < 1e-12:
                return theta, it, False
        theta, S, F = new, S_new, F_new
    return theta, max_iter, False


@dataclass(frozen=True)
class ObjectiveFit:
    """The outcome of :func:`fit_objective_perturbation`: the release, its public terms, the solver's diagnostics.

    Parameters
    ----------
    release : Release
        The published minimiser theta_DP (scaled units; flattened by class for k > 2).
    gamma : float
        The regularisation gamma of the perturbed objective (0 when not private).
    q : float
        Share of the objective-perturbation budget spent on the noise V.
    epsilon : float
        The budget of the release as requested (``release.epsilon`` is inf when not
        private).
    private : bool
        False inside :func:`~knorm.mechanisms.nonprivate`: no noise, gamma = 0.
    n_iter : int
        Newton iterations (curator-only diagnostic).
    converged : bool
        Whether the Newton decrement reached ``tol`` (curator-only diagnostic).
    """

    release: Release
    gamma: float
    q: float
    epsilon: float
    private: bool
    n_iter: int
    converged: bool

    @property
    def theta(self):
        """The published minimiser: ``release.value``."""
        return self.release.value


@fill_doc
def fit_objective_perturbation(
    loss,
    Z,
    y,
    *,
    ball,
    sensitivity,
    epsilon,
    q,
    rng=None,
    accountant=None,
    max_iter=100,
    tol=1e-8,
    theta0=None,
    label="objective perturbation",
    sampler="auto",
    neighbours="replace",
):
    """Release theta_DP of Algorithm "Extended Objective Perturbation" for a logistic loss.

    Parameters
    ----------
    loss : BinaryLogisticLoss or MultinomialLogisticLoss
        The loss (:func:`~knorm.models.losses.logistic_loss`); it gives lambda and the rank
        r of gamma, and theta has dimension ``loss.dim(m)``.
    Z : ndarray of shape (n, m)
        Records already in [-1, 1] (intercept column included); not checked here.
    y : ndarray of shape (n,)
        Labels in {0, 1} (binary) or class indices in 0, ..., k - 1 (0 the baseline).
    ball : NormBall
        The K-norm of the noise, of dimension ``loss.dim(m)``.
    sensitivity : Sensitivity or float
        Certified gradient sensitivity Delta_K (of ``loss.gradient_space(m)``).
    epsilon : float
        The whole budget of the release.
    q : float
        Share of the objective-perturbation budget spent on the noise, in (0, 1).
    %(rng)s
    %(accountant)s
    max_iter : int, default 100
        Newton iterations.
    tol : float, default 1e-8
        Newton decrement at which the minimiser is accepted.
    theta0 : ndarray, optional
        Starting point (a warm start changes the path, not the unique minimiser).
    label : str, default "objective perturbation"
        Label of the release.
    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        How the noise is drawn (:class:`~knorm.mechanisms.KNormMechanism`): 'auto' is the
        exact lattice release where the ball allows it.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation of ``sensitivity``: it sets the coupled gamma of the binary
        loss (:func:`logistic_gamma`; the replace-one gamma is valid for both).

    Returns
    -------
    ObjectiveFit
        The release with gamma, q, epsilon, whether it is private, and Newton's
        iterations and convergence (the last two for the curator only).

    Raises
    ------
    ConvergenceError
        If Newton's method stops above the certified gradient tolerance (nothing is
        published; the charge stands).
    ValueError
        If gamma underflows (epsilon (1 - q) too large for a strongly convex objective).

    Notes
    -----
    *Mechanism.* With eps_op = (1 - OUTPUT_SHARE) epsilon (99%), V has density
    proportional to exp(-eps_op q ||V||_K / Delta_K), and theta_DP minimises
    sum_i l(theta; z_i) + gamma/2 ||theta||^2 + V'theta with the gamma of
    :func:`perturbation_gamma`: for the binary loss the coupled gamma of
    :func:`logistic_gamma` (the noise and Jacobian factors below bounded jointly, which is
    smaller than errata item 1's (m / 4) / (exp(eps_op (1 - q)) - 1)); for the multinomial
    loss gamma = lambda / (exp(eps_op (1 - q) / r) - 1), lambda = m T / r and r = k - 1. The minimiser is published only if
    ||grad F||_2 <= 1e-8 (certified), with output noise of the remaining 1% of epsilon
    covering the distance to the exact minimiser (approximate minima perturbation;
    :meth:`~knorm.mechanisms.KNormMechanism.release_objective`, the release path).
    Inside :func:`~knorm.mechanisms.nonprivate` (decided here, once) gamma = 0 and
    V = 0: the release is the maximum likelihood estimate.

    *Privacy: paper Theorem "Extended Objective Perturbation", with per-record Hessians
    of rank r (replace-one).* The first-order condition gives V(a; X) = -(sum_i
    grad l(a; z_i) + gamma a), a bijection with Jacobian -(C + M_n), where
    C = sum_{i < n} hess l(a; z_i) + gamma I >= gamma I and M_n = hess l(a; z_n). So
    pdf(a | X) / pdf(a | X') is the product of

    - the noise factor f(V(a; X)) / f(V(a; X')) <= exp(eps_op q ||grad l(a; z_n) -
      grad l(a; z_n')||_K / Delta_K) <= exp(eps_op q), as Delta_K bounds the gradient
      differences over all theta (triangle inequality);
    - the Jacobian factor det(C + M_n') / det(C + M_n) <= det(I + C^{-1} M_n'), because
      M_n is positive semi-definite, and det(I + C^{-1} M) <= det(I + M / gamma) =
      prod_{i <= r} (1 + mu_i / gamma) over the nonzero eigenvalues mu_i of M. For the
      binary loss r = 1 and mu <= lambda = m / 4 (errata item 1). For the multinomial
      loss M = A kron z z', A = diag(p) - p p', its eigenvalues are those of A times
      ||z||^2 <= m, their sum is at most m T, and the arithmetic-geometric mean
      inequality bounds the product by (1 + lambda / gamma)^r = exp(eps_op (1 - q)).

    The product is at most exp(eps_op), and the output noise adds the rest of
    epsilon. For the binary loss both factors depend on the same r = |sigma(a'z_n) - y_n|
    (the gradient is r z_n in size, the Hessian r (1 - r) z_n z_n'), and
    :func:`logistic_gamma` bounds their product jointly instead of each at its own worst r. The multinomial bound uses only the trace of A, and is not attained for
    k >= 3 (tr A = T only at p uniform over the k - 1 classes, where A has the
    eigenvalue 0), so its gamma is slightly larger than needed.

    *Add/remove neighbours* (X' = X plus one record z; the 1/n factors do not move the
    argmin, so use the sum form). V(a; X') = V(a; X) - grad l(a; z), and pdf(a | X') =
    f(V(a; X')) |det(C + hess l(a; z))| with C = sum_{i in X} hess l(a; z_i) + gamma I.
    The noise factor is at most exp(eps q) when Delta >= sup_{theta, z} ||grad l(theta;
    z)||_K (the one-record space of ``loss.gradient_space(m, neighbours='add_remove')``).
    For the binary loss (sigma - y) z lies in [-1, 1]^m and every point of that cube is
    a limit (y = 1, theta = -t z, t -> inf gives -z), so the hull is the cube: Delta = 1
    (l_inf), sqrt(m) (l2), m (l1), half the replace-one values. The Hessian
    factor is det C / det(C + hess l(a; z)) <= 1 one way and det(I + C^{-1} hess l(a; z))
    <= exp(eps (1 - q)) the other, as above (also for an empty X). So the same lambda and
    gamma give exp(eps) in both directions.

    References
    ----------
    Paper Section 4, Algorithm and Theorem "Extended Objective Perturbation" (proof in
    the appendix); Section 4.1 (the logistic loss, lambda = m/4); Remark on
    add/delete-DP (Section 2); errata item 1 (gamma). Kifer, Smith & Thakurta (2012)
    (the proof technique); Iyengar, Near, Song, Thakkar, Thakurta & Wang (2019)
    (approximate minima perturbation).

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.geometry import LpBall
    >>> from knorm.models.losses import logistic_loss
    >>> rng = np.random.default_rng(0)
    >>> Z = np.column_stack([rng.uniform(-1, 1, size=(5000, 2)), np.ones(5000)])
    >>> y = (rng.random(5000) < 1 / (1 + np.exp(-2 * Z[:, 0]))).astype(float)
    >>> fit = fit_objective_perturbation(
    ...     logistic_loss(2), Z, y, ball=LpBall(3, float("inf")), sensitivity=2.0, epsilon=1.0, q=0.5, rng=0
    ... )
    >>> fit.theta.shape, fit.release.epsilon, round(fit.gamma, 4), fit.converged
    ((3,), 1.0, 0.8916, True)
    """
    m = Z.shape[1]
    private = not nonprivate_active()
    gamma = _gamma(loss, m, epsilon, q, neighbours) if private else 0.0
    if private and gamma == math.inf:
        raise ValueError(
            f"The 'q' parameter of objective perturbation must leave some epsilon for the Jacobian factor: "
            f"no gamma makes q = {q!r} private at epsilon = {epsilon!r}. Use q below 1 - 1e-9."
        )
    if private and not gamma >= _GAMMA_MIN:
        raise ValueError(
            f"The 'epsilon' parameter of objective perturbation is too large for q = {q:g}: gamma = "
            f"lambda / (exp(eps (1 - q) / r) - 1) = {gamma:.3g} (lambda = {loss.hessian_bound(m):g}, r = "
            f"{loss.rank}) underflows, so the objective is not strongly convex enough for a certified minimiser. "
            f"Got epsilon = {epsilon!r} instead: use q closer to 1 (q='auto' adapts) or a smaller epsilon."
        )
    eps_op = (1.0 - OUTPUT_SHARE) * epsilon
    mechanism = KNormMechanism(ball, sensitivity, eps_op * q, sampler=sampler)
    Y = loss.targets(y)
    diagnostics = {}

    def minimise(V):
        theta, diagnostics["n_iter"], diagnostics["converged"] = _newton(loss, Z, Y, gamma, V, max_iter, tol, theta0)
        gradient = loss.gradient(Z, loss.raw(Z, theta), Y) + gamma * theta + V
        return theta, float(np.linalg.norm(gradient))

    release = mechanism.release_objective(
        minimise, epsilon=epsilon, strong_convexity=gamma, rng=rng, accountant=accountant, label=label
    )
    return ObjectiveFit(release, gamma, q, epsilon, private, diagnostics["n_iter"], diagnostics["converged"])


@fill_doc
def objective_perturbation(
    Z,
    y,
    *,
    ball,
    sensitivity,
    epsilon,
    q,
    rng=None,
    accountant=None,
    max_iter=100,
    tol=1e-8,
    theta0=None,
    label="objective perturbation",
    sampler="auto",
):
    """Release theta_DP of Algorithm "Extended Objective Perturbation" for the binary logistic loss.

    :func:`fit_objective_perturbation` with the binary loss
    (:class:`~knorm.models.losses.BinaryLogisticLoss`), returning a tuple.

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Records already in [-1, 1] (intercept column included); not checked here.
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    ball : NormBall
        The K-norm of the noise.
    sensitivity : Sensitivity or float
        Certified gradient sensitivity Delta_K.
    epsilon : float
        The whole budget.
    q : float
        Share of epsilon spent on the noise, in (0, 1).
    %(rng)s
    %(accountant)s
    max_iter : int, default 100
        Newton iterations.
    tol : float, default 1e-8
        Newton decrement at which the minimiser is accepted.
    theta0 : ndarray, optional
        Starting point (a warm start changes the path, not the unique minimiser).
    label : str, default "objective perturbation"
        Label of the release.
    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        How the noise is drawn (:class:`~knorm.mechanisms.KNormMechanism`): 'auto' is the
        exact lattice release where the ball allows it.

    Returns
    -------
    release : Release
        The published minimiser theta_DP (scaled units).
    %(objective_diagnostics)s

    Notes
    -----
    gamma = (m/4) / (exp(eps_op (1 - q)) - 1) with eps_op = 0.99 epsilon (paper Section 4
    with errata item 1); the mechanism and its proof are in the Notes of
    :func:`fit_objective_perturbation`.

    References
    ----------
    Paper Section 4, Algorithm and Theorem "Extended Objective Perturbation";
    Section 4.1 (the logistic loss, lambda = m/4); errata item 1. Iyengar, Near, Song,
    Thakkar, Thakurta & Wang (2019), approximate minima perturbation.

    Examples
    --------
    Records in [-1, 1]^2 with an intercept column (m = 3), l_inf noise with the
    certified gradient sensitivity 2 (paper Section 4.1):

    >>> import numpy as np
    >>> from knorm.geometry import LpBall
    >>> rng = np.random.default_rng(0)
    >>> Z = np.column_stack([rng.uniform(-1, 1, size=(5000, 2)), np.ones(5000)])
    >>> y = (rng.random(5000) < 1 / (1 + np.exp(-2 * Z[:, 0]))).astype(float)
    >>> release, n_iter, converged = objective_perturbation(
    ...     Z, y, ball=LpBall(3, float("inf")), sensitivity=2.0, epsilon=1.0, q=0.5, rng=0
    ... )
    >>> release.value.shape, release.epsilon, round(release.noise_scale, 4), converged
    ((3,), 1.0, 4.0404, True)
    """
    fit = fit_objective_perturbation(
        BinaryLogisticLoss(),
        Z,
        y,
        ball=ball,
        sensitivity=sensitivity,
        epsilon=epsilon,
        q=q,
        rng=rng,
        accountant=accountant,
        max_iter=max_iter,
        tol=tol,
        theta0=theta0,
        label=label,
        sampler=sampler,
    )
    return fit.release, fit.n_iter, fit.converged
