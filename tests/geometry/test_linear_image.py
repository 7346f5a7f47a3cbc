"""LinearImage: the ball A K, checked against its base ball and independent computations."""

import math

import numpy as np
import pytest
from scipy import stats

from knorm.geometry import K2Ball, LinearImage, LpBall, NotANormBallError, k3_ball
from knorm.geometry.duality import largest_norm
from knorm.noise import KNormNoise
from tests.settings import ALPHA, SEED, Z_MAX

MATRICES = {
    "K2 sheared": (K2Ball(), np.array([[5.0, 0.0], [50.0, 12.5]])),
    "l1 rotated": (LpBall(2, 1), np.array([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]]) * 2),
    "K3 diagonal": (k3_ball(), np.array([1.0, 3.0, 0.25])),
    "l2 general 3d": (LpBall(3, 2), np.array([[1.0, 0.5, 0.0], [0.0, 2.0, -1.0], [0.3, 0.0, 1.5]])),
}


@pytest.fixture(params=list(MATRICES), ids=list(MATRICES))
def image(request):
    base, A = MATRICES[request.param]
    return base, LinearImage(base, A)


def test_gauge_support_and_membership_follow_the_map(image):
    base, ball = image
    rng = np.random.default_rng(SEED)
    u = rng.standard_normal((500, base.dim))
    v = u @ ball.matrix.T
    np.testing.assert_allclose(ball.norm(v), base.norm(u), rtol=1e-10)
    np.testing.assert_array_equal(ball.contains(v), base.contains(u))
    c = rng.standard_normal((200, base.dim))
    # support = max over the image of boundary points, independently: max_u c.(A u) over sampled u
    pts = ball.sample_uniform(20_000, rng=rng)
    assert np.all(ball.support(c) >= (c @ pts.T).max(axis=1) - 1e-12)
    np.testing.assert_allclose(ball.support(c), base.support(c @ ball.matrix), rtol=1e-12)


def test_volume_is_det_times_base_and_matches_monte_carlo(image):
    base, ball = image
    assert float(ball.volume()) == pytest.approx(abs(np.linalg.det(ball.matrix)) * float(base.volume()), rel=1e-9)
    mc = LinearImage.__mro__[1]._volume(ball, np.random.default_rng(SEED), 200_000)  # box Monte Carlo
    assert abs(float(mc) - float(ball.volume())) <= Z_MAX * mc.stderr


def test_uniform_sampler_and_knorm_law(image):
    # For U uniform in K (dimension m), ||U||_K^m is Uniform(0, 1); for K-norm noise,
    # ||V||_K ~ Gamma(m, scale). KS tests at level ALPHA (failure rate 1e-3 each).
    base, ball = image
    m = ball.dim
    u = ball.sample_uniform(20_000, rng=SEED)
    assert stats.kstest(ball.norm(u) ** m, "uniform").pvalue > ALPHA
    noise = KNormNoise(ball, 0.7)
    v = noise.sample(20_000, rng=SEED + 1)
    assert stats.kstest(ball.norm(v), stats.gamma(a=m, scale=0.7).cdf).pvalue > ALPHA


def test_largest_norm_goes_through_the_polar_rows():
    ball = LinearImage(LpBall(2, math.inf), [2.0, 0.5])
    value, _, _ = largest_norm(ball, support=LpBall(2, 1).support)  # sup over the l1 ball of ||.||_{box}
    assert value == pytest.approx(2.0)  # attained at (0, +-1): 1 / 0.5


def test_singular_and_bad_matrices_are_refused():
    with pytest.raises(NotANormBallError, match="singular"):
        LinearImage(LpBall(2, 1), [[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(ValueError, match=r"'matrix' parameter of LinearImage must have shape \(2, 2\)"):
        LinearImage(LpBall(2, 1), np.eye(3))
    with pytest.raises(TypeError, match="'base' parameter of LinearImage must be a NormBall"):
        LinearImage("l1", np.eye(2))
