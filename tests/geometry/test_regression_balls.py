import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from knorm.geometry.regression import K2Ball, k3_ball
from tests.settings import ALPHA, SEED, Z_MAX


def k2_top(a):
    # Upper boundary of K_2 at |u1| = a <= 2, from Section 5.1 / ERRATA item 3.
    return np.where(a <= 1, 2.0, 2.0 - 2.0 * (a - 1.0) ** 2)


def k2_member(u):
    a, b = np.abs(u[..., 0]), np.abs(u[..., 1])
    return (a <= 2) & (b <= k2_top(a))


def appendix_member(u):
    # The appendix's printed set (no factor 2): valid but too large (ERRATA item 3).
    a, b = np.abs(u[..., 0]), np.abs(u[..., 1])
    return (a <= 2) & (b <= np.where(a <= 1, 2.0, 2.0 - (a - 1.0) ** 2))


def bisection_gauge(u, member, iters=80):
    lo, hi = np.zeros(len(u)), np.full(len(u), 10.0 * np.abs(u).max() + 1)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        inside = member(u / mid[:, None])
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    return hi


def k2_boundary(n=100_001):
    a = np.linspace(0, 2, n)
    top = np.stack([a, k2_top(a)], axis=1)
    return np.vstack([top * s for s in itertools.product((-1, 1), repeat=2)])


def test_k2_gauge_against_bisection_on_membership():
    u = np.random.default_rng(SEED).uniform(-4, 4, size=(3000, 2))
    u[:20, 0] = 0.0  # on the axes
    u[20:40, 1] = 0.0
    u[40:60, 1] = 2 * u[40:60, 0]  # on the seam b = 2a of the two branches
    np.testing.assert_allclose(K2Ball().norm(u), bisection_gauge(u, k2_member), rtol=1e-10)
    np.testing.assert_array_equal(K2Ball().contains(u), k2_member(u))


def test_k2_gauge_is_continuous_on_the_seam():
    a = np.linspace(0.1, 2, 50)
    ball = K2Ball()
    for eps in (1e-9, -1e-9):
        u = np.stack([a, 2 * a * (1 + eps)], axis=1)
        np.testing.assert_allclose(ball.norm(u), a, rtol=1e-8)


def test_k2_support_against_boundary_brute_force():
    c = np.random.default_rng(SEED).normal(size=(200, 2))
    c[:5, 1] = 0.0
    c[5:10, 0] = 0.0
    brute = (c @ k2_boundary().T).max(axis=1)
    np.testing.assert_allclose(K2Ball().support(c), brute, rtol=1e-9)


def test_k2_is_the_hull_of_the_example_2_1_sensitivity_space():
    # S_T = {(x1 - x2, 2 x1^2 - 2 x2^2) : x1, x2 in [-1, 1]} (Example 2.1).
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-1, 1, size=(200_000, 2))
    x[:100] = np.sign(x[:100])
    s = np.stack([x[:, 0] - x[:, 1], 2 * x[:, 0] ** 2 - 2 * x[:, 1] ** 2], axis=1)
    ball = K2Ball()
    assert np.all(ball.norm(s) <= 1 + 1e-12)
    # Hull(S_T) = P - P: h(c) = max_x c.t(x) - min_x c.t(x), t(x) = (x, 2x^2) (ERRATA item 5).
    grid = np.linspace(-1, 1, 200_001)
    t = np.stack([grid, 2 * grid**2], axis=1)
    c = rng.normal(size=(100, 2))
    proj = c @ t.T
    np.testing.assert_allclose(ball.support(c), proj.max(axis=1) - proj.min(axis=1), rtol=1e-8)


def test_k2_known_sensitivities():
    # ERRATA "Facts worth having": Delta_1 = 3.125, Delta_2 = sqrt(71 + 8 sqrt 2)/4, Delta_inf = 2.
    ball = K2Ball()
    assert ball.support([1.0, 1.0]) == pytest.approx(3.125, rel=1e-15)  # max of |u1| + |u2|
    assert np.linalg.norm(k2_boundary(), axis=1).max() == pytest.approx(math.sqrt(71 + 8 * math.sqrt(2)) / 4, rel=1e-9)
    np.testing.assert_array_equal(ball.bounding_box(), [2.0, 2.0])


def test_k2_volume_exact_quadrature_and_monte_carlo():
    ball = K2Ball()
    vol = ball.volume()
    assert vol.exact and vol == 40 / 3
    assert ball.log_volume() == pytest.approx(math.log(40 / 3), rel=1e-15)
    quad = 4 * integrate.quad(lambda a: float(k2_top(a)), 0, 2, points=[1.0])[0]
    assert quad == pytest.approx(40 / 3, rel=1e-10)
    mc = super(K2Ball, ball)._volume(np.random.default_rng(SEED), 400_000)
    assert not mc.exact and abs(mc - 40 / 3) < Z_MAX * mc.stderr  # two-sided normal rate ~6e-5


def test_appendix_version_is_strictly_larger():
    # ERRATA item 3: the printed appendix set has area 44/3 > 40/3 and contains K_2.
    quad = 4 * integrate.quad(lambda a: 2.0 if a <= 1 else 2.0 - (a - 1) ** 2, 0, 2, points=[1.0])[0]
    assert quad == pytest.approx(44 / 3, rel=1e-10)
    ball = K2Ball()
    u = ball.sample_uniform(20_000, rng=SEED)
    assert np.all(appendix_member(u))
    witness = np.array([1.5, 1.7])
    assert appendix_member(witness) and not ball.contains(witness)


def test_k2_sampler_is_uniform():
    ball = K2Ball()
    u = ball.sample_uniform(40_000, rng=SEED)
    g = ball.norm(u)
    assert u.shape == (40_000, 2) and np.all(g <= 1)
    # ||U||_K^2 ~ U(0, 1) for U uniform on K. Failure rate ALPHA under the null.
    assert stats.kstest(g**2, "uniform").pvalue > ALPHA

    # |U1| has density proportional to the section height (independent of the gauge).
    def cdf(a):
        a = np.asarray(a)
        inner = 2.0 * np.minimum(a, 1)
        arc = np.where(a > 1, 2 * (a**2 - 1) - (2 / 3) * (a**3 - 1), 0.0)  # int_1^a 4x - 2x^2
        return (inner + arc) / (10 / 3)

    assert stats.kstest(np.abs(u[:, 0]), cdf).pvalue > ALPHA  # failure rate ALPHA
    st = ball.sampler_stats
    rate = 40 / 48
    z = (st.accepted - st.proposed * rate) / math.sqrt(st.proposed * rate * (1 - rate))
    assert abs(z) < Z_MAX  # two-sided normal rate ~6e-5


def test_k3_ball_is_the_hull_for_x_y_xy():
    ball = k3_ball()
    assert ball.dim == 3 and len(ball.vertices) == 12
    assert ball.volume().exact and ball.volume() == pytest.approx(160 / 3, rel=1e-12)
    u = np.random.default_rng(SEED).uniform(-3, 3, size=(5000, 3))
    member = (np.abs(u).max(axis=1) <= 2) & (np.abs(u).sum(axis=1) <= 4)
    np.testing.assert_array_equal(ball.contains(u), member)
    # Hull(S_T) = P - P with t(x, y) = (x, y, xy) multilinear, so its extremes are at corners.
    corners = np.array([[x, y, x * y] for x in (-1, 1) for y in (-1, 1)], dtype=float)
    c = np.random.default_rng(SEED + 1).normal(size=(100, 3))
    proj = c @ corners.T
    np.testing.assert_allclose(ball.support(c), proj.max(axis=1) - proj.min(axis=1), rtol=1e-12)
