"""Multinomial (softmax) logistic regression by extended objective perturbation: solver and release.

The model has one coefficient row per class other than the baseline class 0:
P(y = i | z) = exp(theta_i'z) / (1 + sum_{l >= 1} exp(theta_l'z)) for i >= 1, and
1 / (1 + sum_l exp(theta_l'z)) for the baseline. Theta has shape (k - 1, m) and is
handled flattened row by row (class i, feature j at index i m + j), the layout of
:class:`~knorm.sensitivity.softmax.SoftmaxBall`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from knorm.mechanisms import KNormMechanism, nonprivate_active
from knorm.mechanisms.knorm_mechanism import OUTPUT_SHARE
from knorm.models.objective import _GAMMA_MIN, perturbation_gamma

__all__ = ["multinomial_objective_perturbation", "softmax_newton"]

# Rows of the records per block when the Hessian is accumulated: bounds the (rows, (k-1) m)
# work array to about 32 MiB.
_BLOCK_ENTRIES = 1 << 22


def _probabilities(S):
    """Class probabilities of the non-baseline classes and log(1 + sum exp(S)), stably, per row."""
    top = np.maximum(S.max(axis=1), 0.0)
    e = np.exp(S - top[:, None])
    total = np.exp(-top) + e.sum(axis=1)
    return e / total[:, None], top + np.log(total)


def _objective(Z, Y, theta, gamma, V):
    S = Z @ theta.T
    _, lse = _probabilities(S)
    return float(lse.sum() - np.sum(Y * S) + 0.5 * gamma * np.sum(theta * theta) + V @ theta.ravel())


def _gradient(Z, Y, theta, gamma, V):
    """grad F = (P - Y)' Z + gamma Theta + V (sum form), flattened by class."""
    P, _ = _probabilities(Z @ theta.T)
    return ((P - Y).T @ Z).ravel() + gamma * theta.ravel() + V


def _hessian(Z, P, gamma):
    """sum_i (diag(p_i) - p_i p_i') kron z_i z_i' + gamma I, accumulated block by block."""
    n, m = Z.shape
    r = P.shape[1]
    d = r * m
    H = np.zeros((d, d))
    rows = max(1, _BLOCK_ENTRIES // d)
    for start in range(0, n, rows):  # a loop over a few blocks of records, not over records
        Zb, Pb = Z[start : start + rows], P[start : start + rows]
        Q = (Pb[:, :, None] * Zb[:, None, :]).reshape(len(Zb), d)
        H -= Q.T @ Q
        for i in range(r):  # the diag(p) part: one m x m block Z' diag(p_i) Z per class
            H[i * m : (i + 1) * m, i * m : (i + 1) * m] += (Zb * Pb[:, i : i + 1]).T @ Zb
    H[np.diag_indices(d)] += gamma
    return H


def softmax_newton(Z, y, n_classes, *, gamma=0.0, linear=None, max_iter=100, tol=1e-8, theta0=None):
    """Minimise the multinomial objective sum_i l(Theta; z_i, y_i) + gamma/2 ||Theta||^2 + V'Theta (no privacy).

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Records (rows), intercept column included.
    y : ndarray of int of shape (n,)
        Class indices in 0, ..., k - 1; 0 is the baseline class.
    n_classes : int
        Number k >= 2 of classes.
    gamma : float, default 0.0
        Ridge term; 0 gives the maximum likelihood estimate (which may not exist for
        separable data).
    linear : ndarray of shape ((k - 1) m,), optional
        The linear term V (zero by default).
    max_iter : int, default 100
        Newton iterations.
    tol : float, default 1e-8
        Stop when the Newton decrement is at most ``tol``.
    theta0 : ndarray of shape ((k - 1) m,), optional
        Starting point.

    Returns
    -------
    theta : ndarray of shape ((k - 1) m,)
        The minimiser, flattened by class.
    n_iter : int
        Iterations used.
    converged : bool
        Whether the decrement reached ``tol``.

    Notes
    -----
    l(Theta; z, y) = log(1 + sum_{i >= 1} exp(theta_i'z)) - sum_{i >= 1} [y = i] theta_i'z,
    with gradient (p - e_y)_{-0} z' and Hessian (diag(p) - p p') kron z z' (p the
    probabilities of the non-baseline classes). Damped Newton with the exact Hessian;
    for gamma > 0 the objective is strongly convex, so the minimiser is unique. Stops
    when the Newton decrement sqrt(g' H^{-1} g) is <= tol, after taking that last step.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = np.column_stack([rng.uniform(-1, 1, 3000), np.ones(3000)])
    >>> y = np.digitize(Z[:, 0] + 0.3 * rng.standard_normal(3000), [-0.3, 0.3])
    >>> theta, n_iter, converged = softmax_newton(Z, y, 3)
    >>> theta.shape, converged
    ((4,), True)
    """
    k = int(n_classes)
    n, m = Z.shape
    r = k - 1
    Y = (np.asarray(y)[:, None] == np.arange(1, k)[None, :]).astype(float)
    V = np.zeros(r * m) if linear is None else np.asarray(linear, dtype=float)
    theta = np.zeros((r, m)) if theta0 is None else np.array(theta0, dtype=float).reshape(r, m)
    F = _objective(Z, Y, theta, gamma, V)
    for it in range(1, max_iter + 1):
        P, _ = _probabilities(Z @ theta.T)
        g = ((P - Y).T @ Z).ravel() + gamma * theta.ravel() + V
        H = _hessian(Z, P, gamma)
        try:
            step = -cho_solve(cho_factor(H), g)
        except LinAlgError:  # only without ridge (gamma = 0) on degenerate data
            step = -np.linalg.lstsq(H, g, rcond=None)[0]
        dec2 = -float(g @ step)
        if dec2 <= tol**2:
            return (theta.ravel() + step), it, True
        t = 1.0
        while True:  # backtracking (Armijo); near the optimum the full step is taken
            new = theta + t * step.reshape(r, m)
            F_new = _objective(Z, Y, new, gamma, V)
            if F_new <= F - 0.25 * t * dec2 or dec2 < 1e-8:
                break
            t *= 0.5
            if t < 1e-12:
                return theta.ravel(), it, False
        theta, F = new, F_new
    return theta.ravel(), max_iter, False


def multinomial_objective_perturbation(
    Z,
    y,
    n_classes,
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
    label="multinomial objective perturbation",
    sampler="auto",
):
    """Release Theta_DP of extended objective perturbation for the multinomial logistic loss.

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Records already in [-1, 1] (intercept column included); not checked here.
    y : ndarray of int of shape (n,)
        Class indices in 0, ..., k - 1 (0 the baseline).
    n_classes : int
        Number k >= 2 of classes.
    ball : NormBall
        The K-norm of the noise, of dimension (k - 1) m.
    sensitivity : Sensitivity or float
        Certified gradient sensitivity Delta_K (from
        :func:`~knorm.sensitivity.softmax.multinomial_gradient_space`).
    epsilon : float
        The whole budget of the release.
    q : float
        Share of the objective-perturbation budget spent on the noise, in (0, 1).
    rng : None, int, SeedSequence or Generator
        Source of the noise.
    accountant : PrivacyAccountant, optional
        Charged epsilon before the noise is drawn.
    max_iter : int, default 100
        Newton iterations.
    tol : float, default 1e-8
        Newton decrement at which the minimiser is accepted.
    theta0 : ndarray, optional
        Starting point.
    label : str, default "multinomial objective perturbation"
        Label of the release.

    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        How the noise is drawn (:class:`~knorm.mechanisms.KNormMechanism`): 'auto' is the
        exact lattice release where the ball allows it.

    Returns
    -------
    release : Release
        The published minimiser (scaled units, flattened by class).
    n_iter : int
        Newton iterations (curator-only diagnostic).
    converged : bool
        Whether the Newton decrement reached ``tol`` (curator-only diagnostic).

    Raises
    ------
    ConvergenceError
        If Newton's method stops above the certified gradient tolerance (nothing is
        published; the charge stands).
    ValueError
        If gamma underflows (epsilon (1 - q) too large for a strongly convex objective).

    Notes
    -----
    *Mechanism.* With eps_op = (1 - OUTPUT_SHARE) epsilon, V has density proportional
    to exp(-eps_op q ||V||_K / Delta_K) and Theta_DP minimises sum_i l(Theta; z_i, y_i)
    + gamma/2 ||Theta||^2 + V'Theta with gamma = (m T / r) / (exp(eps_op (1 - q) / r) - 1),
    r = k - 1 and T of :func:`~knorm.models.objective.hessian_trace_bound`
    (:func:`~knorm.models.objective.perturbation_gamma`). The minimiser is published
    only at the certified gradient tolerance, with output noise of the remaining 1% of
    epsilon (:meth:`~knorm.mechanisms.KNormMechanism.release_objective`).

    *Privacy: the multiclass version of the proof of paper Theorem "Extended Objective
    Perturbation" (replace-one; add/remove is the same with the one-record space).*
    The first-order condition gives V(a; X) = -(sum_i grad l(a; z_i) + gamma a), a
    bijection with Jacobian -(C + M_n), where C = sum_{i < n} hess l(a; z_i) + gamma I
    >= gamma I and M_n = hess l(a; z_n) = A kron z_n z_n', A = diag(p) - p p' of
    rank <= r. So pdf(a | X) / pdf(a | X') is the product of

    - the noise factor f(V(a; X)) / f(V(a; X')) <= exp(eps_op q ||grad l(a; z_n) -
      grad l(a; z_n')||_K / Delta_K) <= exp(eps_op q), as Delta_K bounds the gradient
      differences over all Theta (triangle inequality);
    - the Jacobian factor det(C + M_n') / det(C + M_n) <= det(C + M_n') / det(C) =
      det(I + C^{-1} M_n'), because M_n is positive semi-definite. The per-record
      Hessian no longer has rank one: the paper's step "at most one nonzero
      eigenvalue, at most lambda / gamma" is replaced by det(I + C^{-1} M) <=
      det(I + M / gamma) = prod_{i <= r} (1 + mu_i / gamma), mu_i the nonzero
      eigenvalues of M, which are those of A times ||z||^2 <= m. Their sum is at most
      m T, so by the arithmetic-geometric mean inequality the product is at most
      (1 + m T / (r gamma))^r = exp(eps_op (1 - q)) for this gamma
      (:func:`~knorm.models.objective.objective_gamma` with rank r).

    The product is at most exp(eps_op), and the output noise adds the rest of
    epsilon. For k = 2 (r = 1, T = 1/4) this is the binary algorithm with
    lambda = m / 4, and gamma is errata item 1's. The bound uses only the trace of A:
    the largest eigenvalue of A is at most 1/2 (Popoviciu's inequality), and the
    product bound is not attained for k >= 3 (tr A = T only at p uniform over the
    k - 1 classes, where A has the eigenvalue 0, not r equal ones), so this gamma is
    slightly larger than needed.

    References
    ----------
    Paper Section 4 (Algorithm and Theorem "Extended Objective Perturbation", proof in
    the appendix), Section 4.1 (the binary loss); errata item 1 (gamma); Kifer, Smith &
    Thakurta (2012) (the proof technique); Iyengar et al. (2019) (approximate minima
    perturbation).

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.sensitivity.softmax import SoftmaxBall
    >>> rng = np.random.default_rng(0)
    >>> Z = np.column_stack([rng.uniform(-1, 1, 3000), np.ones(3000)])
    >>> y = np.digitize(Z[:, 0] + 0.3 * rng.standard_normal(3000), [-0.3, 0.3])
    >>> release, n_iter, converged = multinomial_objective_perturbation(
    ...     Z, y, 3, ball=SoftmaxBall(3, 2), sensitivity=2.0, epsilon=1.0, q=0.8, rng=0
    ... )
    >>> release.value.shape, release.epsilon, converged
    ((4,), 1.0, True)
    """
    k = int(n_classes)
    m = Z.shape[1]
    eps_op = (1.0 - OUTPUT_SHARE) * epsilon
    gamma = 0.0 if nonprivate_active() else perturbation_gamma(m, epsilon, q, n_classes=k)
    if not (gamma >= _GAMMA_MIN or nonprivate_active()):
        raise ValueError(
            f"The 'epsilon' parameter of objective perturbation is too large for q = {q:g}: gamma = "
            f"{gamma:.3g} underflows, so the objective is not strongly convex enough for a certified minimiser. "
            f"Got epsilon = {epsilon!r} instead: use q closer to 1 (q='auto' adapts) or a smaller epsilon."
        )
    mechanism = KNormMechanism(ball, sensitivity, eps_op * q, sampler=sampler)
    Y = (np.asarray(y)[:, None] == np.arange(1, k)[None, :]).astype(float)
    diagnostics = {}

    def minimise(V):
        theta, diagnostics["n_iter"], diagnostics["converged"] = softmax_newton(
            Z, y, k, gamma=gamma, linear=V, max_iter=max_iter, tol=tol, theta0=theta0
        )
        grad = _gradient(Z, Y, theta.reshape(k - 1, m), gamma, V)
        return theta, float(np.linalg.norm(grad))

    release = mechanism.release_objective(
        minimise, epsilon=epsilon, strong_convexity=gamma, rng=rng, accountant=accountant, label=label
    )
    return release, diagnostics["n_iter"], diagnostics["converged"]
