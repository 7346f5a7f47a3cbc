"""Multinomial (softmax) logistic regression by extended objective perturbation: the solver and the release.

Thin forms, for the multinomial loss (:class:`~knorm.models.losses.MultinomialLogisticLoss`,
where the model and the layout of Theta are described), of the one solver and the one
release of :mod:`knorm.models.objective` (:func:`~knorm.models.objective.fit_objective_perturbation`,
whose Notes hold the multiclass privacy proof).
"""

from __future__ import annotations

from knorm._docs import fill_doc
from knorm.models.losses import MultinomialLogisticLoss
from knorm.models.objective import _newton, fit_objective_perturbation

__all__ = ["multinomial_objective_perturbation", "softmax_newton"]


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
    The solver of :func:`~knorm.models.objective.fit_objective_perturbation` with the
    multinomial loss (for any k >= 2, two classes included): damped Newton with the exact
    Hessian; for gamma > 0 the objective is strongly convex, so the minimiser is unique.
    Stops when the Newton decrement sqrt(g' H^{-1} g) is <= tol, after taking that last
    step.

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
    loss = MultinomialLogisticLoss(n_classes)
    return _newton(loss, Z, loss.targets(y), gamma, linear, max_iter, tol, theta0)


@fill_doc
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

    :func:`~knorm.models.objective.fit_objective_perturbation` with the multinomial loss
    (:class:`~knorm.models.losses.MultinomialLogisticLoss`), returning a tuple.

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
    %(rng)s
    %(accountant)s
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
    %(objective_diagnostics)s

    Notes
    -----
    gamma = (m T / r) / (exp(eps_op (1 - q) / r) - 1), r = k - 1, T of
    :func:`~knorm.models.losses.hessian_trace_bound` and eps_op = 0.99 epsilon
    (:func:`~knorm.models.objective.perturbation_gamma`); the mechanism and the multiclass
    version of the privacy proof are in the Notes of
    :func:`~knorm.models.objective.fit_objective_perturbation`.

    References
    ----------
    Paper Section 4 (Algorithm and Theorem "Extended Objective Perturbation"); errata
    item 1 (gamma).

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
    fit = fit_objective_perturbation(
        MultinomialLogisticLoss(n_classes),
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
