"""KNormNoise: limit cases, conditional variances, the scipy-style API and bad input.

The laws of every ball (norm, direction, entropy, concentration, depth, marginal
half-widths) are tested over the one registry of noise laws, tests/noise/test_laws.py.
"""

import math

import numpy as np
import pytest
from scipy import stats

from knorm.geometry import LpBall
from knorm.noise import KNormNoise
from tests.settings import ALPHA, SEED, Z_MAX


def test_logpdf_normalised_in_one_and_two_dimensions():
    from scipy import integrate

    total, _ = integrate.quad(lambda x: KNormNoise(LpBall(1, 3), 0.5).pdf([x]), -np.inf, np.inf)
    assert total == pytest.approx(1.0, abs=1e-8)
    # 2-D: the trapezoid rule on a fine grid (the density has kinks, so its error is O(h^2) ~ 1e-5).
    grid = np.linspace(-15, 15, 3001)
    X, Y = np.meshgrid(grid, grid, indexing="ij")
    for ball in (LpBall(2, 1.5), LpBall(2, math.inf)):
        dens = KNormNoise(ball, 0.5).pdf(np.stack([X, Y], axis=-1))
        assert integrate.trapezoid(integrate.trapezoid(dens, grid), grid) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("p", [1, 2, 3, math.inf])
def test_one_dimension_is_laplace(p):
    ball = LpBall(1, p, radius=2.0)
    noise = KNormNoise(ball, scale=0.3)
    lap = stats.laplace(scale=0.3 * 2.0)
    x = np.linspace(-5, 5, 41)[:, None]
    np.testing.assert_allclose(noise.logpdf(x), lap.logpdf(x[:, 0]), atol=1e-12)
    assert noise.entropy() == pytest.approx(lap.entropy())
    assert stats.kstest(noise.sample(20_000, rng=SEED)[:, 0], lap.cdf).pvalue > ALPHA


def test_one_dimension_polytope_is_laplace():
    from knorm.geometry.polytope import Polytope

    noise = KNormNoise(Polytope.from_points([[2.0]]), scale=0.3)
    lap = stats.laplace(scale=0.6)
    assert stats.kstest(noise.sample(20_000, rng=SEED)[:, 0], lap.cdf).pvalue > ALPHA
    assert noise.entropy() == pytest.approx(lap.entropy())


@pytest.mark.parametrize("ball", [LpBall(2, 1), LpBall(2, math.inf), LpBall(2, 3)], ids=["l1", "linf", "l3"])
def test_conditional_variance_by_monte_carlo(ball):
    # ERRATA item 2: given V in span(e), |V'e| ~ Gamma(m, rate ||e||_K / scale),
    # so Var(V'e) = m (m+1) scale^2 / ||e||_K^2. Condition on a thin cone around e.
    noise = KNormNoise(ball, scale=1.0)
    e = np.array([np.cos(0.4), np.sin(0.4)])
    v = noise.sample(4_000_000, rng=SEED)
    cosang = np.abs(v @ e) / np.linalg.norm(v, axis=1)
    proj = (v @ e)[cosang > math.cos(0.005)]
    assert len(proj) > 5000
    for signed, sample in ((True, proj), (False, np.abs(proj))):
        target = noise.conditional_variance(e, signed=signed)
        var, n = sample.var(ddof=1), len(sample)
        # Standard error of a sample variance: sqrt((mu4 - var^2) / n).
        mu4 = np.mean((sample - sample.mean()) ** 4)
        assert abs(var - target) < Z_MAX * math.sqrt((mu4 - var**2) / n) + 0.02 * target
    # The printed formula m Delta / (eps^2 ||e||_K) differs and would fail.
    printed = 2 * 1.0 / ball.norm(e)
    assert abs(proj.var() - printed) > 0.2 * printed


def test_conditional_variance_orders_contained_balls():
    # Paper Theorem "Conditional Variance": Delta_K K inside Delta_H H gives smaller variance.
    small, big = KNormNoise(LpBall(3, math.inf), 1.0), KNormNoise(LpBall(3, 1, radius=3.0), 1.0)
    dirs = np.random.default_rng(SEED).normal(size=(100, 3))
    assert np.all(small.conditional_variance(dirs) <= big.conditional_variance(dirs) + 1e-12)


def test_scipy_style_api():
    noise = KNormNoise(LpBall(3, 2), 2.0)
    assert noise.sample(rng=1).shape == (3,)
    assert noise.sample((4, 5), rng=1).shape == (4, 5, 3)
    np.testing.assert_array_equal(noise.rvs(3, rng=5), noise.sample(3, rng=5))
    assert noise.pdf(np.zeros(3)) == pytest.approx(math.exp(noise.logpdf(np.zeros(3))))
    assert noise.sampler == "gamma(m) x uniform direction"
    assert noise.concentration_set(0.5).volume() < noise.concentration_set(0.9).volume()


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: KNormNoise(LpBall(2, 2), 0),
            ValueError,
            "'scale' parameter of KNormNoise must be a float in the range \\(0, inf\\). Got 0.0",
        ),
        (lambda: KNormNoise(LpBall(2, 2), float("nan")), ValueError, "'scale'"),
        (lambda: KNormNoise("l2", 1), TypeError, "'ball' parameter of KNormNoise must be a NormBall"),
        (
            lambda: KNormNoise(LpBall(2, 2), 1).sample(-3),
            ValueError,
            "'size' parameter of KNormNoise must be an int >= 0. Got -3",
        ),
        (
            lambda: KNormNoise(LpBall(2, 2), 1).logpdf([1.0]),
            ValueError,
            "'x' parameter of KNormNoise must have last axis of length 2",
        ),
        (
            lambda: KNormNoise(LpBall(2, 2), 1).concentration_set(1.0),
            ValueError,
            "'alpha' parameter .* must be a float in the range \\(0, 1\\). Got 1.0",
        ),
        (lambda: KNormNoise(LpBall(2, 2), 1).conditional_variance([0.0, 0.0]), ValueError, "non-zero direction"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_random_signs_are_fair_and_independent_of_magnitude():
    from knorm.noise.samplers import _random_signs

    x = np.abs(np.random.default_rng(SEED).normal(size=(1000, 201)))
    mag = x.copy()
    out = _random_signs(x, np.random.default_rng(SEED + 1))
    np.testing.assert_array_equal(np.abs(out), mag)  # only the sign changes
    neg = out < 0
    assert stats.binomtest(int(neg.sum()), neg.size, 0.5).pvalue > ALPHA
    # No pattern across positions: each column is fair (Bonferroni over columns).
    col = stats.binomtest(int(neg[:, 7].sum()), 1000, 0.5).pvalue
    assert col > ALPHA / 201
    # Sign independent of magnitude: same mean |x| among negatives and positives.
    assert stats.ks_2samp(mag[neg], mag[~neg]).pvalue > ALPHA
