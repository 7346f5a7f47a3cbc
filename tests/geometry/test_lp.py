import math

import numpy as np
import pytest
from scipy import integrate, stats

from knorm.geometry import LpBall, NotANormBallError, ScaledBall
from tests.settings import ALPHA, SEED, Z_MAX

PS = [1, 1.5, 2, 3, 8, math.inf]


@pytest.mark.parametrize("p", PS)
def test_gauge_is_lp_norm_over_radius(p):
    u = np.random.default_rng(SEED).normal(size=(50, 4))
    ref = np.linalg.norm(u, ord=p, axis=1)
    np.testing.assert_allclose(LpBall(4, p, radius=2.5).norm(u), ref / 2.5, rtol=1e-12)


def test_gauge_does_not_overflow_for_large_p():
    u = np.array([1e200, 3e200])
    np.testing.assert_allclose(LpBall(2, 50).norm(u), 3e200 * (1 + (1 / 3) ** 50) ** (1 / 50))


@pytest.mark.parametrize("p", PS)
def test_contains_iff_norm_at_most_one(p):
    ball = LpBall(3, p)
    u = np.random.default_rng(SEED).uniform(-1.2, 1.2, size=(2000, 3))
    np.testing.assert_array_equal(ball.contains(u), ball.norm(u) <= 1)


@pytest.mark.parametrize("p", PS)
def test_support_is_attained_and_never_exceeded(p):
    # Independent check: h(c) = max over the ball of c.u, by brute force on
    # boundary points of a dense 2-D grid of directions.
    ball = LpBall(2, p, radius=1.7)
    t = np.linspace(0, 2 * np.pi, 200_001)
    d = np.stack([np.cos(t), np.sin(t)], axis=1)
    boundary = d / ball.norm(d)[:, None]
    c = np.random.default_rng(SEED).normal(size=(20, 2))
    brute = (c @ boundary.T).max(axis=1)
    np.testing.assert_allclose(ball.support(c), brute, rtol=1e-6)


@pytest.mark.parametrize(
    "dim, p, expected",
    [(2, 2, math.pi), (3, 2, 4 * math.pi / 3), (2, 1, 2.0), (5, 1, 2**5 / 120), (4, math.inf, 16.0)],
)
def test_volume_closed_form_known_values(dim, p, expected):
    vol = LpBall(dim, p).volume()
    assert vol.exact
    assert vol == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("p", [1.5, 3, 8])
def test_volume_closed_form_against_quadrature_2d(p):
    # Area of {|x|^p + |y|^p <= 1} = 4 int_0^1 (1 - x^p)^(1/p) dx.
    area, _ = integrate.quad(lambda x: 4 * (1 - x**p) ** (1 / p), 0, 1)
    assert LpBall(2, p).volume() == pytest.approx(area, rel=1e-9)


@pytest.mark.parametrize("dim", [2, 5])
def test_volume_closed_form_against_monte_carlo(dim):
    ball = LpBall(dim, 3, radius=0.7)
    mc = super(LpBall, ball)._volume(np.random.default_rng(SEED), 400_000)
    assert not mc.exact and mc.stderr > 0
    assert abs(mc - ball.volume()) < Z_MAX * mc.stderr


def test_log_volume_finite_in_high_dimension():
    lv = LpBall(1000, 1).log_volume()
    assert lv == pytest.approx(1000 * math.log(2) - math.lgamma(1001))


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dim", [1, 2, 5, 26])
def test_uniform_sample_inside_with_uniform_radius(p, dim):
    ball = LpBall(dim, p, radius=3.0)
    u = ball.sample_uniform(20_000, rng=SEED)
    g = ball.norm(u)
    assert u.shape == (20_000, dim) and np.all(g <= 1 + 1e-12)
    # For U uniform on K, ||U||_K^m ~ U(0, 1). Failure rate ALPHA.
    assert stats.kstest(g**dim, "uniform").pvalue > ALPHA


@pytest.mark.parametrize("p", [1, 1.5, 2, 3, 8])
@pytest.mark.parametrize("dim", [2, 5, 26])
def test_uniform_sample_coordinate_marginal(p, dim):
    # Gamma-Dirichlet algebra: |U_1|^p ~ Beta(1/p, (m-1)/p + 1) on the unit l_p ball.
    u = LpBall(dim, p).sample_uniform(20_000, rng=SEED + 1)
    assert stats.kstest(np.abs(u[:, 0]) ** p, stats.beta(1 / p, (dim - 1) / p + 1).cdf).pvalue > ALPHA


@pytest.mark.parametrize("p", [1.5, 3])
def test_uniform_sample_matches_rejection_sampler(p):
    # Two-sample KS on a projection against plain box rejection, an independent exact sampler.
    ball = LpBall(3, p)
    a = ball.sample_uniform(20_000, rng=SEED) @ np.array([0.3, -0.5, 0.8])
    b = ball._rejection_from_box(20_000, np.random.default_rng(SEED + 7)) @ np.array([0.3, -0.5, 0.8])
    assert stats.ks_2samp(a, b).pvalue > ALPHA
    assert 0 < ball.sampler_stats.acceptance_rate < 1


def test_scaled_ball():
    base = LpBall(3, 2)
    s = 2.5 * base
    assert isinstance(s, ScaledBall) and s.factor == 2.5
    u = np.array([[1.0, 2.0, 2.0]])
    np.testing.assert_allclose(s.norm(u), base.norm(u) / 2.5)
    assert s.volume() == pytest.approx(2.5**3 * base.volume())
    assert s.log_volume() == pytest.approx(3 * math.log(2.5) + base.log_volume())
    np.testing.assert_allclose(s.support(u), 2.5 * base.support(u))
    assert np.all(s.norm(s.sample_uniform(100, rng=1)) <= 1)
    assert (2 * s).factor == 5.0 and (2 * s).base is base


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dim=0, p=2), "'dim' parameter of LpBall must be an int >= 1"),
        (dict(dim=2, p=0.5), "'p' parameter of LpBall must be a float in the range \\[1, inf\\]. Got 0.5"),
        (dict(dim=2, p=float("nan")), "'p' parameter"),
        (
            dict(dim=2, p=2, radius=-1),
            "'radius' parameter of LpBall must be a float in the range \\(0, inf\\). Got -1.0",
        ),
        (dict(dim=2, p=2, radius=math.inf), "'radius'"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LpBall(**kwargs)


def test_bad_vectors():
    ball = LpBall(3, 2)
    with pytest.raises(ValueError, match="last axis of length 3"):
        ball.norm(np.ones((4, 2)))
    # u may be data: the non-finite entries are counted, not shown.
    with pytest.raises(ValueError, match=r"finite values. Got 1 NaN value\(s\) instead"):
        ball.norm([1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match=r"finite values. Got 1 infinite value\(s\) instead"):
        ball.contains([1.0, np.inf, 0.0])
    with pytest.raises(TypeError, match="array of real numbers"):
        ball.norm(["a", "b", "c"])
    with pytest.raises(ValueError, match="'n' parameter of LpBall must be an int >= 0"):
        ball.sample_uniform(-1)
    with pytest.raises(TypeError, match="'factor' parameter"):
        ball.scaled("x")
    with pytest.raises(ValueError, match="'factor' parameter of ScaledBall must be a float in the range \\(0, inf\\)"):
        ball.scaled(-2)
    assert issubclass(NotANormBallError, ValueError)


def test_rng_contract():
    ball = LpBall(4, 3)
    np.testing.assert_array_equal(ball.sample_uniform(5, rng=3), ball.sample_uniform(5, rng=3))
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(ball.sample_uniform(5, rng=g), ball.sample_uniform(5, rng=3))
    assert not np.array_equal(ball.sample_uniform(5), ball.sample_uniform(5))
    with pytest.raises(TypeError, match="RandomState"):
        ball.sample_uniform(5, rng=np.random.RandomState(0))


def test_rejection_sampler_draws_do_not_depend_on_history():
    ball = LpBall(3, 1.5)
    first = ball._rejection_from_box(500, np.random.default_rng(5))
    ball._rejection_from_box(100_000, np.random.default_rng(6))  # changes the cumulative stats
    np.testing.assert_array_equal(ball._rejection_from_box(500, np.random.default_rng(5)), first)
