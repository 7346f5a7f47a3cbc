"""Tests of objective perturbation written once: the loss objects, gamma from the loss, the typed result.

The binary loss is the k = 2 case of the family: the same value, derivatives, lambda and
rank as the multinomial loss with two classes, and the same release as before the loss
objects (objective_perturbation and multinomial_objective_perturbation are thin forms of
fit_objective_perturbation). No statistical test here: every assertion is exact or a
deterministic numerical identity.
"""

import dataclasses
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from knorm.geometry import LpBall
from knorm.mechanisms import nonprivate
from knorm.mechanisms.knorm_mechanism import OUTPUT_SHARE
from knorm.models import logistic_newton, objective_gamma, objective_perturbation
from knorm.models.losses import BinaryLogisticLoss, MultinomialLogisticLoss, logistic_loss
from knorm.models.multinomial import multinomial_objective_perturbation, softmax_newton
from knorm.models.objective import ObjectiveFit, fit_objective_perturbation, logistic_gamma, perturbation_gamma
from knorm.sensitivity.softmax import SoftmaxBall
from tests.settings import SEED


def records(rng, n, m):
    """Records in [-1, 1]^m with the intercept column last, half of the entries at the corners."""
    x = np.where(rng.random((n, m - 1)) < 0.5, rng.choice([-1.0, 1.0], (n, m - 1)), rng.uniform(-1, 1, (n, m - 1)))
    return np.column_stack([x, np.ones(n)])


def per_record_hessian(loss, z, theta):
    """hess l(theta; z) of one record, from the loss's own Hessian (the label does not enter it)."""
    Z = z[None, :]
    y = loss.targets(np.zeros(1, dtype=int))
    return loss.gradient_hessian(Z, loss.raw(Z, theta), y)[1]


def test_binary_loss_is_the_multinomial_loss_with_two_classes():
    rng = np.random.default_rng(SEED)
    Z, y = records(rng, 200, 4), rng.integers(0, 2, 200)
    theta = 3.0 * rng.standard_normal(4)
    b, mu = BinaryLogisticLoss(), MultinomialLogisticLoss(2)
    assert (b.rank, b.dim(4), b.hessian_bound(4)) == (mu.rank, mu.dim(4), mu.hessian_bound(4)) == (1, 4, 1.0)
    Sb, Sm = b.raw(Z, theta), mu.raw(Z, theta)
    Yb, Ym = b.targets(y), mu.targets(y)
    assert b.value(Sb, Yb) == pytest.approx(mu.value(Sm, Ym), rel=1e-13)
    gb, Hb = b.gradient_hessian(Z, Sb, Yb)
    gm, Hm = mu.gradient_hessian(Z, Sm, Ym)
    assert_allclose(gb, gm, rtol=1e-12, atol=1e-12)
    assert_allclose(Hb, Hm, rtol=1e-12, atol=1e-12)
    assert_allclose(b.gradient(Z, Sb, Yb), gb, rtol=0, atol=0)
    assert type(logistic_loss(2)) is BinaryLogisticLoss and logistic_loss(3).rank == 2


@pytest.mark.parametrize("k", [2, 3, 4])
def test_gradient_and_hessian_are_the_derivatives_of_the_value(k):
    rng = np.random.default_rng([SEED, k])
    loss, m = logistic_loss(k), 3
    Z, y = records(rng, 50, m), rng.integers(0, k, 50)
    Y, theta = loss.targets(y), rng.standard_normal(loss.dim(m))
    g, H = loss.gradient_hessian(Z, loss.raw(Z, theta), Y)
    h = 1e-5
    for j in range(loss.dim(m)):
        e = np.zeros(loss.dim(m))
        e[j] = h
        up, down = theta + e, theta - e
        # Central differences: error O(h^2) times the third derivative (bounded by n m^3).
        assert (loss.value(loss.raw(Z, up), Y) - loss.value(loss.raw(Z, down), Y)) / (2 * h) == pytest.approx(
            g[j], abs=1e-6
        )
        dg = (loss.gradient(Z, loss.raw(Z, up), Y) - loss.gradient(Z, loss.raw(Z, down), Y)) / (2 * h)
        assert_allclose(dg, H[:, j], atol=1e-6)
    assert_allclose(H, H.T, atol=1e-12)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_per_record_hessian_respects_the_lambda_and_rank_of_gamma(k):
    # gamma's proof (errata item 1; rank r: Notes of fit_objective_perturbation) needs, for
    # every record in [-1, 1]^m and every theta, at most r nonzero eigenvalues with mean <= lambda.
    rng = np.random.default_rng([SEED, 10 + k])
    loss, m = logistic_loss(k), 3
    r, lam = loss.rank, loss.hessian_bound(m)
    worst = 0.0
    for z in records(rng, 300, m):
        theta = rng.standard_normal(loss.dim(m)) * 4.0 * rng.random()
        eig = np.linalg.eigvalsh(per_record_hessian(loss, z, theta))[::-1]
        assert eig[-1] >= -1e-12 and np.all(np.abs(eig[r:]) <= 1e-12)
        worst = max(worst, eig[:r].mean() / lam)
    assert worst <= 1.0 + 1e-12
    if k == 2:  # the binary bound is attained: theta = 0 (sigma' = 1/4) at a corner (||z||^2 = m)
        corner = per_record_hessian(loss, np.ones(m), np.zeros(m))
        assert np.linalg.eigvalsh(corner)[-1] == pytest.approx(lam, rel=1e-14)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_gamma_from_the_loss_meets_the_proof_with_equality(k):
    m, eps, q = 5, 1.3, 0.4
    loss = logistic_loss(k)
    gamma = perturbation_gamma(m, eps, q, n_classes=k)
    eps_op = (1.0 - OUTPUT_SHARE) * eps
    if k == 2:  # the coupled bound (its own tests in test_logistic.py), below errata item 1's
        assert gamma == logistic_gamma(m, eps_op, q) < objective_gamma(m / 4.0, eps_op, q)
        return
    # (1 + lambda / gamma)^r = exp(eps_op (1 - q)): errata item 1 with rank r = k - 1.
    assert (1.0 + loss.hessian_bound(m) / gamma) ** loss.rank == pytest.approx(math.exp(eps_op * (1 - q)), rel=1e-12)


def test_fit_is_typed_frozen_and_the_thin_forms_release_the_same_law():
    rng = np.random.default_rng(SEED)
    Z = records(rng, 2000, 3)
    y2 = (rng.random(2000) < 1 / (1 + np.exp(-2 * Z[:, 0]))).astype(float)
    y3 = np.digitize(Z[:, 0] + 0.3 * rng.standard_normal(2000), [-0.3, 0.3])
    common = dict(sensitivity=2.0, epsilon=1.0, q=0.5, rng=SEED)
    fit = fit_objective_perturbation(logistic_loss(2), Z, y2, ball=LpBall(3, math.inf), **common)
    assert isinstance(fit, ObjectiveFit) and fit.private and fit.converged
    assert fit.gamma == perturbation_gamma(3, 1.0, 0.5) and fit.q == 0.5 and fit.epsilon == 1.0
    assert fit.theta is fit.release.value and fit.release.epsilon == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.gamma = 0.0  # type: ignore[misc]
    release, n_iter, converged = objective_perturbation(Z, y2, ball=LpBall(3, math.inf), **common)
    assert_allclose(release.value, fit.theta, rtol=0, atol=0)
    assert (n_iter, converged) == (fit.n_iter, fit.converged) and release.noise_scale == fit.release.noise_scale

    multi = fit_objective_perturbation(MultinomialLogisticLoss(3), Z, y3, ball=SoftmaxBall(3, 3), **common)
    release3, _, _ = multinomial_objective_perturbation(Z, y3, 3, ball=SoftmaxBall(3, 3), **common)
    assert_allclose(release3.value, multi.theta, rtol=0, atol=0)
    assert multi.gamma == perturbation_gamma(3, 1.0, 0.5, n_classes=3) and multi.theta.shape == (6,)


def test_nonprivate_is_decided_in_the_release_gamma_zero_and_the_mle():
    rng = np.random.default_rng(SEED)
    Z = records(rng, 1000, 3)
    y = (rng.random(1000) < 1 / (1 + np.exp(-Z[:, 0]))).astype(float)
    with nonprivate():
        fit = fit_objective_perturbation(
            logistic_loss(2), Z, y, ball=LpBall(3, math.inf), sensitivity=2.0, epsilon=1.0, q=0.5, rng=SEED
        )
    assert not fit.private and fit.gamma == 0.0 and fit.release.epsilon == math.inf and fit.epsilon == 1.0
    mle, _, ok = logistic_newton(Z, y, tol=1e-12)
    assert ok
    assert_allclose(fit.theta, mle, atol=1e-9)


def test_one_solver_for_both_losses():
    # softmax_newton with two classes and logistic_newton run the same Newton on the two
    # forms of one loss: the same minimiser, from cold and from a warm start.
    rng = np.random.default_rng(SEED)
    Z = records(rng, 500, 3)
    y = rng.integers(0, 2, 500)
    V = rng.standard_normal(3)
    a, _, ok_a = softmax_newton(Z, y, 2, gamma=0.3, linear=V, tol=1e-12)
    b, _, ok_b = logistic_newton(Z, y, gamma=0.3, linear=V, tol=1e-12)
    c, n_warm, ok_c = logistic_newton(Z, y, gamma=0.3, linear=V, tol=1e-12, theta0=b)
    assert ok_a and ok_b and ok_c and n_warm == 1
    assert_allclose(a, b, atol=1e-10)
    assert_allclose(c, b, atol=1e-10)
