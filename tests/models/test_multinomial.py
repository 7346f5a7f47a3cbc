"""Tests of multiclass logistic regression: the softmax gradient ball, gamma, exact privacy, the fits.

Statistical tests use fixed seeds; the failure rate stated for each is the chance that it
fails for a seed drawn at random under a correct implementation.
"""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import expit, softmax
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from knorm.accounting import PrivacyAccountant
from knorm.exceptions import IntervalUnavailableError
from knorm.geometry import LpBall
from knorm.mechanisms import nonprivate
from knorm.mechanisms.knorm_mechanism import OUTPUT_SHARE
from knorm.models import LogisticRegression
from knorm.models.multinomial import softmax_newton
from knorm.models.objective import hessian_trace_bound, objective_gamma, perturbation_gamma
from knorm.sensitivity.softmax import SoftmaxBall, multinomial_gradient_space
from tests.settings import ALPHA, SEED, Z_MAX


def per_record_gradients(rng, n, k, m, scale=8.0):
    """Gradients (p - e_y)_{-0} z' of random records, labels and (often extreme) Theta, flattened."""
    theta = rng.standard_normal((n, k - 1, m)) * scale * rng.random((n, 1, 1))
    z = np.where(rng.random((n, m)) < 0.5, rng.choice([-1.0, 1.0], size=(n, m)), rng.uniform(-1, 1, (n, m)))
    logits = np.concatenate([np.zeros((n, 1)), np.einsum("nim,nm->ni", theta, z)], axis=1)
    p = softmax(logits, axis=1)
    y = np.eye(k)[rng.integers(0, k, size=n)]
    return ((p - y)[:, 1:, None] * z[:, None, :]).reshape(n, (k - 1) * m)


# -- the ball ----------------------------------------------------------------------------------
@pytest.mark.parametrize("k, m", [(2, 3), (3, 2), (4, 2), (6, 1)])
def test_softmax_ball_gauge_support_and_volume(k, m):
    ball = SoftmaxBall(k, m)
    rng = np.random.default_rng(SEED)
    r = k - 1
    # Vertices of C, one column at a time: 0, e_i, -e_j and e_i - e_j all have gauge <= 1.
    eye = np.eye(r)
    verts = np.vstack([np.zeros(r), eye, -eye] + [eye[i] - eye[j] for i in range(r) for j in range(r) if i != j])
    assert np.all(ball.norm(np.repeat(verts, m, axis=1)) <= 1 + 1e-12)  # every column the same vertex
    # The support function is attained at the vertices (columns chosen independently).
    c = rng.standard_normal((50, ball.dim))
    cols = c.reshape(50, r, m)
    best = np.max(np.einsum("vr,nrm->nvm", verts, cols), axis=1).sum(axis=1)
    assert_allclose(ball.support(c), best, rtol=1e-12)
    # Gauge and support are dual: c.u <= h(c) ||u|| for every pair.
    u = rng.uniform(-1.5, 1.5, size=(50, ball.dim))
    assert np.all(np.sum(c * u, axis=1) <= ball.support(c) * ball.norm(u) + 1e-12)
    # Volume against Monte Carlo in the cube [-1, 1]^d: z-test, |z| <= Z_MAX (rate 6e-5).
    pts = rng.uniform(-1, 1, size=(400_000, ball.dim))
    frac = ball.contains(pts).mean()
    expected = float(ball.volume()) / 2.0**ball.dim
    assert abs(frac - expected) <= Z_MAX * math.sqrt(expected * (1 - expected) / len(pts)) + 1e-15
    assert float(ball.volume()) == pytest.approx(
        (math.comb(2 * r, r) / math.factorial(r)) ** m, rel=1e-12
    )  # binom(2r, r)/r! per column


@pytest.mark.parametrize("k, m", [(3, 2), (5, 2), (10, 1)])
def test_softmax_ball_sampler_is_uniform(k, m):
    ball = SoftmaxBall(k, m)
    u = ball.sample_uniform(20_000, rng=SEED)
    assert np.all(ball.norm(u) <= 1 + 1e-12)
    # For U uniform in a star body, ||U||^d is Uniform(0, 1): KS at level ALPHA (rate 1e-3).
    assert stats.kstest(ball.norm(u) ** ball.dim, "uniform").pvalue > ALPHA
    # The number of positive entries of a column is s with probability binom(r, s)^2 / binom(2r, r):
    # chi-square at level ALPHA.
    r = k - 1
    s = (u.reshape(-1, r, m) > 0).sum(axis=1).ravel()
    expected = np.array([math.comb(r, j) ** 2 for j in range(r + 1)]) / math.comb(2 * r, r)
    counts = np.bincount(s, minlength=r + 1)
    assert stats.chisquare(counts, expected * len(s)).pvalue > ALPHA


@pytest.mark.parametrize("k, m", [(2, 3), (3, 2), (10, 2)])
def test_softmax_ball_second_moment(k, m):
    # The closed form E||U||^2 (uniform in the ball) that auto_q uses, against 200k uniform
    # draws: z-test, |z| <= Z_MAX (rate 6e-5).
    ball = SoftmaxBall(k, m)
    sq = (ball.sample_uniform(200_000, rng=SEED) ** 2).sum(axis=1)
    z = (sq.mean() - ball.uniform_second_moment()) / (sq.std() / math.sqrt(len(sq)))
    assert abs(z) <= Z_MAX


def test_softmax_ball_for_two_classes_is_the_cube():
    ball, cube = SoftmaxBall(2, 4), LpBall(4, math.inf)
    u = np.random.default_rng(SEED).uniform(-2, 2, size=(100, 4))
    assert_allclose(ball.norm(u), cube.norm(u))
    assert float(ball.volume()) == pytest.approx(float(cube.volume())) == 16.0


# -- the sensitivity space ----------------------------------------------------------------------
@pytest.mark.parametrize("k, m", [(3, 2), (4, 3), (7, 2)])
def test_every_per_record_gradient_lies_in_the_ball(k, m):
    # Brute force over random records, labels and Theta up to |theta| ~ 8 (probabilities near
    # the simplex's vertices): every per-record gradient has gauge <= 1, so replace-one
    # differences have gauge <= 2 = Delta (and add/remove ones <= 1).
    rng = np.random.default_rng(SEED)
    g = per_record_gradients(rng, 200_000, k, m)
    ball = SoftmaxBall(k, m)
    gauge = ball.norm(g)
    assert gauge.max() <= 1 + 1e-12
    assert gauge.max() >= 0.99  # teeth: the vertices are approached, the bound is not loose
    diff = ball.norm(g[: len(g) // 2] - g[len(g) // 2 :])
    assert diff.max() <= 2 + 1e-12
    space = multinomial_gradient_space(k, m)
    for b in (ball, LpBall(ball.dim, math.inf), LpBall(ball.dim, 2), LpBall(ball.dim, 1)):
        sens = space.sensitivity(b)
        assert sens.certified and b.norm(g[: len(g) // 2] - g[len(g) // 2 :]).max() <= sens.value + 1e-12
    one = multinomial_gradient_space(k, m, neighbours="add_remove")
    assert one.sensitivity(ball).value == 1.0 and one.sensitivity(LpBall(ball.dim, 1)).value == 2.0 * m


def test_the_ball_is_tighter_than_linf_for_several_classes():
    # Sensitivity 2 in both, but vol(C)^(1/r) shrinks: 0.87 of the cube's per coordinate for
    # k = 3 and 0.40 for k = 10 (the noise's mean radius per coordinate shrinks alike).
    for k, ratio in ((3, 0.866), (10, 0.40)):
        per_coordinate = math.exp((SoftmaxBall(k, 1).log_volume() - (k - 1) * math.log(2.0)) / (k - 1))
        assert per_coordinate == pytest.approx(ratio, abs=0.005)


# -- gamma for rank k - 1 Hessians ------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_hessian_trace_bound_and_the_determinant_factor(k):
    # Brute force over probabilities p of the non-baseline classes on a grid of the simplex
    # (and its faces): tr(diag(p) - pp') <= T, attained; and det(I + ||z||^2 A / gamma) is at
    # most exp(eps_op (1 - q)), the Jacobian factor of the proof.
    r = k - 1
    grid = np.linspace(0, 1, 21 if r <= 3 else 11)  # holds 1/(k-1) or comes within 0.02 of it
    P = np.array([p for p in itertools.product(grid, repeat=r) if sum(p) <= 1 + 1e-12])
    A = P[:, :, None] * np.eye(r) - P[:, :, None] * P[:, None, :]
    trace = np.trace(A, axis1=1, axis2=2)
    T = hessian_trace_bound(k)
    assert trace.max() <= T + 1e-12 and trace.max() >= T - 0.01
    m, eps, q = 5, 1.0, 0.6
    # k = 2: errata item 1's rank-one gamma (the binary model uses the smaller coupled one).
    gamma = (
        objective_gamma(m / 4, (1 - OUTPUT_SHARE) * eps, q) if k == 2 else perturbation_gamma(m, eps, q, n_classes=k)
    )
    factor = np.linalg.det(np.eye(r) + (m / gamma) * A)
    bound = math.exp((1 - OUTPUT_SHARE) * eps * (1 - q))
    assert factor.max() <= bound + 1e-12
    assert factor.max() >= 1 + 0.8 * (bound - 1)  # the bound is not loose by much
    if k == 2:
        assert gamma == pytest.approx((m / 4) / math.expm1((1 - OUTPUT_SHARE) * eps * (1 - q)), rel=1e-14)


# -- exact privacy on a small example ------------------------------------------------------------
K3, M1 = 3, 1  # three classes, one feature: Theta in R^2
COMMON3 = [(0.0, 0), (0.0, 1), (0.0, 2)]  # z = 0: no curvature, so the Jacobian bound is tight
EXTREMES3 = [(z, y) for z in (-1.0, 0.0, 1.0) for y in range(K3)]
GRID3 = np.stack(np.meshgrid(np.linspace(-12, 12, 161), np.linspace(-12, 12, 161)), axis=-1).reshape(-1, 2)


def log_density3(records, gamma, scale):
    """log pdf of Theta_DP on GRID3 (up to a constant shared by neighbours), by the change of variables."""
    z, y = (np.array(v) for v in zip(*records))
    S = GRID3[:, None, :] * z[None, :, None]  # (grid, records, 2) logits of classes 1 and 2
    P = softmax(np.concatenate([np.zeros(S.shape[:2] + (1,)), S], axis=2), axis=2)[:, :, 1:]
    Y = np.eye(K3)[y][:, 1:]
    grad = ((P - Y[None]) * z[None, :, None]).sum(axis=1)
    V = -(grad + gamma * GRID3)
    A = P[:, :, :, None] * np.eye(2) - P[:, :, :, None] * P[:, :, None, :]
    J = (A * (z**2)[None, :, None, None]).sum(axis=1) + gamma * np.eye(2)
    gauge = SoftmaxBall(K3, M1).norm(V)
    return -gauge / scale + np.log(np.abs(np.linalg.det(J)))


def max_log_ratio3(gamma, scale):
    """max over replace-one neighbours (the last record among EXTREMES3) and the grid."""
    dens = np.array([log_density3(COMMON3 + [z], gamma, scale) for z in EXTREMES3])
    return float(np.max(dens.max(axis=0) - dens.min(axis=0)))


def test_exact_density_ratio_of_the_multinomial_release():
    # The released Theta's density ratio on replace-one neighbours, over a grid of Theta:
    # at most eps_op (the output noise adds the rest), with the multiclass gamma; a gamma ten
    # times smaller breaks it (teeth), and the noise factor alone is exactly eps_op q at worst.
    eps, q = 1.0, 0.5
    eps_op = (1 - OUTPUT_SHARE) * eps
    X = np.array([[r[0]] for r in COMMON3 + [(1.0, 1)]])
    clf = LogisticRegression(classes=[0, 1, 2], epsilon=eps, q=q, bounds_X=(-1, 1), fit_intercept=False)
    clf.fit(X, [r[1] for r in COMMON3] + [1])
    assert clf.gamma_ == pytest.approx(perturbation_gamma(1, eps, q, n_classes=3), rel=1e-14)
    assert clf.sensitivity_.value == 2.0 and clf.release_.ball_name == "softmax"
    scale = clf.sensitivity_.value / (eps_op * q)
    worst = max_log_ratio3(clf.gamma_, scale)
    assert worst <= eps_op + 1e-9
    assert worst >= eps_op * q - 1e-9
    assert max_log_ratio3(clf.gamma_ / 10, scale) > eps


# -- fits ------------------------------------------------------------------------------------------
def three_classes(rng, n, p=3):
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.digitize(X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(n), [-0.4, 0.4])
    return X, y


def test_nonprivate_limit_reproduces_unpenalised_sklearn():
    rng = np.random.default_rng(SEED)
    lo, hi = np.array([-2.0, 0.0, -1.0]), np.array([3.0, 1.0, 1.0])
    X = rng.uniform(lo, hi, size=(4000, 3))
    y = np.digitize(X[:, 0] - 2 * X[:, 1] + 0.5 * rng.standard_normal(4000), [-0.5, 1.0])
    with nonprivate():
        ours = LogisticRegression(classes=[0, 1, 2], bounds_X=(lo, hi)).fit(X, y)
    ref = SkLogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X, y)
    # sklearn's rows are symmetric; ours take class 0 as the baseline: compare differences.
    assert_allclose(ours.coef_, ref.coef_ - ref.coef_[0], atol=1e-4)
    assert_allclose(ours.intercept_, ref.intercept_ - ref.intercept_[0], atol=1e-4)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    assert ours.gamma_ == 0.0 and ours.release_.epsilon == math.inf


def test_softmax_newton_with_two_classes_is_the_binary_solver():
    from knorm.models.objective import logistic_newton

    rng = np.random.default_rng(SEED)
    Z = np.column_stack([rng.uniform(-1, 1, (2000, 2)), np.ones(2000)])
    y = (rng.random(2000) < expit(Z @ [1.0, -1.0, 0.3])).astype(int)
    V = np.array([3.0, -2.0, 1.0])
    a, _, ok_a = softmax_newton(Z, y, 2, gamma=0.7, linear=V)
    b, _, ok_b = logistic_newton(Z, y.astype(float), gamma=0.7, linear=V)
    assert ok_a and ok_b
    assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("multi_class", ["multinomial", "ovr"])
def test_multiclass_predictions_are_consistent(multi_class):
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 3000)
    clf = LogisticRegression(
        classes=[0, 1, 2], epsilon=4.0, bounds_X=(-1, 1), multi_class=multi_class, random_state=rng
    ).fit(X, y)
    d = clf.decision_function(X[:50])
    proba = clf.predict_proba(X[:50])
    assert d.shape == (50, 3) and proba.shape == (50, 3)
    assert_allclose(proba.sum(axis=1), 1.0)
    assert_allclose(np.exp(clf.predict_log_proba(X[:50])), proba)
    assert np.array_equal(clf.predict(X[:50]), clf.classes_[np.argmax(d, axis=1)])
    assert np.array_equal(np.argmax(proba, axis=1), np.argmax(d, axis=1))
    assert clf.score(X, y) > 0.6  # the classes are learnable at eps = 4 (chance is 1/3)
    if multi_class == "multinomial":
        assert np.all(clf.coef_[0] == 0) and clf.intercept_[0] == 0  # the baseline class
        assert clf.release_.ball_name == "softmax" and clf.release_.value.shape == (8,)


def test_one_vs_rest_splits_epsilon_k_ways():
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 600)
    acc = PrivacyAccountant(2.0)
    clf = LogisticRegression(
        classes=["a", "b", "c"], epsilon=1.5, bounds_X=(-1, 1), multi_class="ovr", accountant=acc, random_state=rng
    ).fit(X, np.array(["a", "b", "c"])[y])
    assert clf.release_ is None and len(clf.releases_) == 3
    assert [e.epsilon for e in acc.ledger] == pytest.approx([0.5, 0.5, 0.5])
    assert [r.label.split("linf, ")[1] for r in clf.releases_] == [f"class {c!r} vs rest)" for c in "abc"]
    assert clf.gamma_ == pytest.approx(perturbation_gamma(4, 0.5, clf.q_))


def test_declared_classes_never_reveal_which_occur():
    # Declared classes fit data where a class is absent, with the same shapes and charges;
    # a label outside them is refused whichever labels occur.
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 500)
    present = LogisticRegression(classes=[0, 1, 2, 3], bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert present.coef_.shape == (4, 3) and present.classes_.tolist() == [0, 1, 2, 3]
    assert present.release_.value.shape == (12,)
    with pytest.raises(ValueError, match=r"declared classes=\[0, 1, 2\]. Got \d+ rows with another label"):
        LogisticRegression(classes=[0, 1, 2], bounds_X=(-1, 1)).fit(X, np.where(y == 2, 5, y))


def test_multiclass_has_no_intervals():
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 300)
    clf = LogisticRegression(classes=[0, 1, 2], bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.inference_share_ == 0.0 and clf.information_release_ is None
    with pytest.raises(IntervalUnavailableError, match="gives intervals for two classes only: this fit has 3 classes"):
        clf.conf_int()
    with pytest.raises(ValueError, match="is for two classes; this fit has 3"):
        clf.summary()
    with pytest.raises(ValueError, match="release_information is for two classes; this fit has 3"):
        clf.release_information(X, 1.0)
    with pytest.raises(ValueError, match="'inference_share' parameter of LogisticRegression must be 0 or 'auto' for"):
        LogisticRegression(classes=[0, 1, 2], inference_share=0.2, bounds_X=(-1, 1)).fit(X, y)


def test_multiclass_norms_and_their_dimension():
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 300, p=2)  # m = 3, d = 2 x 3
    for norm, name, value in (("auto", "softmax", 2.0), ("linf", "linf", 2.0), ("l2", "l2", 2 * math.sqrt(6.0))):
        clf = LogisticRegression(classes=[0, 1, 2], norm=norm, bounds_X=(-1, 1), random_state=0).fit(X, y)
        assert clf.release_.ball_name == name and clf.sensitivity_.value == pytest.approx(value)
    with pytest.raises(ValueError, match=r"NormBall of dimension \(n_classes - 1\) \(n_features \+ fit_intercept\)"):
        LogisticRegression(classes=[0, 1, 2], norm=LpBall(3, 2), bounds_X=(-1, 1)).fit(X, y)
    ovr = LogisticRegression(
        classes=[0, 1, 2], norm=LpBall(3, 3.0), multi_class="ovr", bounds_X=(-1, 1), random_state=0
    ).fit(X, y)
    assert ovr.sensitivity_.certified


def test_multinomial_under_add_remove_uses_the_one_record_space():
    rng = np.random.default_rng(SEED)
    X, y = three_classes(rng, 300, p=2)
    clf = LogisticRegression(classes=[0, 1, 2], neighbours="add_remove", bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.sensitivity_.value == 1.0
    from knorm.models.objective import auto_q

    assert clf.q_ == auto_q(None, SoftmaxBall(3, 3), 1.0, 1.0, n_classes=3)
