import itertools

import numpy as np
import pytest
from scipy import integrate, stats

from knorm.geometry import LpBall, NotANormBallError
from knorm.geometry.intersection import IntersectionBall
from knorm.geometry.regression import K2Ball, k3_ball
from tests.settings import ALPHA, SEED, Z_MAX


def k3_gauge(u):
    # K_3 from its definition: the cube [-2, 2]^3 cut by the l1 ball of radius 4.
    return np.maximum(np.abs(u).max(axis=-1) / 2, np.abs(u).sum(axis=-1) / 4)


def k3_section_area(t):
    # {(u1, u2) in [-2, 2]^2 : |u1| + |u2| <= 4 - |t|}: the square minus four corners.
    return 16 - 2 * t**2


def k2_height(t):
    # Length of the K_2 section at u1 = t (ERRATA item 3: factor 2 on the arc).
    a = abs(t)
    return 4.0 if a <= 1 else 2 * (4 * a - 2 * a * a)


@pytest.fixture(scope="module")
def two_k3():
    # Two K_3 cylinders sharing coordinate 2, as in the Section 5.1 K_T.
    k3 = k3_ball()
    return IntersectionBall(5, [([0, 1, 2], k3), ([2, 3, 4], k3)], name="two K3")


def test_gauge_is_max_of_cylinder_gauges(two_k3):
    u = np.random.default_rng(SEED).uniform(-3, 3, size=(2000, 5))
    expected = np.maximum(k3_gauge(u[:, :3]), k3_gauge(u[:, 2:]))
    np.testing.assert_allclose(two_k3.norm(u), expected, rtol=1e-12)
    # Membership uses the short-circuit path; it must agree with the gauge.
    np.testing.assert_array_equal(two_k3.contains(u), expected <= 1)
    assert two_k3.norm(u.reshape(40, 50, 5)).shape == (40, 50)
    assert two_k3.contains(u.reshape(40, 50, 5)).shape == (40, 50)
    assert two_k3.contains(np.zeros(5)) and not two_k3.contains(np.full(5, 2.0))


def test_bounding_box_is_smallest_over_constraints():
    ball = IntersectionBall(3, [([0, 1], LpBall(2, np.inf, radius=1.0)), ([2, 1], LpBall(2, 2, radius=3.0))])
    np.testing.assert_array_equal(ball.bounding_box(), [1.0, 1.0, 3.0])
    with pytest.raises(NotImplementedError):
        ball.support(np.ones(3))
    assert not ball.has_support


def test_monte_carlo_volume_against_quadrature(two_k3):
    # vol = int A(t)^2 dt, A the K_3 section area, by independence given u_2.
    exact, _ = integrate.quad(lambda t: k3_section_area(t) ** 2, -2, 2)
    vol = two_k3.volume(rng=SEED, n_samples=400_000)
    assert not vol.exact and vol.stderr > 0 and "Monte Carlo" in vol.method
    assert abs(vol - exact) < Z_MAX * vol.stderr  # two-sided normal rate ~6e-5


def test_uniform_sampler_shared_coordinate_marginal(two_k3):
    u = two_k3.sample_uniform(20_000, rng=SEED)
    g = two_k3.norm(u)
    assert u.shape == (20_000, 5) and np.all(g <= 1)
    # ||U||_K^m ~ U(0, 1) for U uniform on K. Failure rate ALPHA under the null.
    assert stats.kstest(g**5, "uniform").pvalue > ALPHA

    # The shared coordinate has density proportional to A(t)^2 on [-2, 2].
    def antiderivative(x):  # of (16 - 2t^2)^2 = 256 - 64 t^2 + 4 t^4
        return 256 * x - 64 * x**3 / 3 + 4 * x**5 / 5

    def cdf(x):
        return (antiderivative(x) - antiderivative(-2)) / (antiderivative(2) - antiderivative(-2))

    total = antiderivative(2) - antiderivative(-2)
    assert cdf(0.7) == pytest.approx(integrate.quad(lambda t: k3_section_area(t) ** 2, -2, 0.7)[0] / total)
    assert stats.kstest(u[:, 2], cdf).pvalue > ALPHA  # failure rate ALPHA
    st = two_k3.sampler_stats
    assert st.accepted >= 20_000 and 0 < st.acceptance_rate < 1


def test_regression_k_t_for_p_1_volume_and_acceptance():
    # K_T of Section 5.1 for p = 1 (ERRATA item 5), coordinates (x, 2x^2, y, xy):
    # (u0, u1) in K_2 and (u0, u2, u3) in K_3. Its volume is int h_2(t) A_3(t) dt,
    # so the box acceptance is that over 4^4 (ERRATA quotes about 0.73).
    ball = IntersectionBall(4, [([0, 1], K2Ball()), ([0, 2, 3], k3_ball())])
    exact = 2 * sum(integrate.quad(lambda t: k2_height(t) * k3_section_area(t), a, b)[0] for a, b in [(0, 1), (1, 2)])
    rate = exact / 4**4
    assert rate == pytest.approx(0.73125, abs=1e-12)
    u = ball.sample_uniform(20_000, rng=SEED)
    st = ball.sampler_stats
    z = (st.accepted - st.proposed * rate) / np.sqrt(st.proposed * rate * (1 - rate))
    assert abs(z) < Z_MAX  # two-sided normal rate ~6e-5
    assert stats.kstest(ball.norm(u) ** 4, "uniform").pvalue > ALPHA  # failure rate ALPHA


def test_regression_k_t_contains_the_sensitivity_space():
    # Differences of per-record statistics t(x, y) = (x, 2x^2, y, xy) for p = 1.
    ball = IntersectionBall(4, [([0, 1], K2Ball()), ([0, 2, 3], k3_ball())])
    rng = np.random.default_rng(SEED)
    z = rng.uniform(-1, 1, size=(50_000, 4))
    z[:1000] = np.sign(z[:1000])  # include the corners of the record domain

    def t(x, y):
        return np.stack([x, 2 * x**2, y, x * y], axis=1)

    s = t(z[:, 0], z[:, 1]) - t(z[:, 2], z[:, 3])
    assert np.all(ball.norm(s) <= 1 + 1e-12)


def test_uncovered_coordinate_raises():
    with pytest.raises(NotANormBallError, match="Uncovered coordinates: \\[1, 3\\]"):
        IntersectionBall(4, [([0, 2], LpBall(2, 1))])


@pytest.mark.parametrize(
    "constraints, exc, match",
    [
        ([([0, 3], LpBall(2, 1))], ValueError, "in the range \\[0, 3\\). Got \\[0, 3\\]"),
        ([([0, 0], LpBall(2, 1))], ValueError, "must be distinct. Got \\[0, 0\\]"),
        ([([0, 1, 2], LpBall(2, 1))], ValueError, "dimension len\\(indices\\) = 3. Got a ball of dimension 2"),
        ([([0.0, 1.0], LpBall(2, 1))], TypeError, "1-D sequence of ints"),
        ([([0, 1], "ball")], TypeError, "Got a str as the ball of constraint 0"),
        ([], ValueError, "'constraints' parameter of IntersectionBall must be a non-empty sequence"),
        (None, TypeError, "'constraints' parameter"),
    ],
)
def test_bad_constraints(constraints, exc, match):
    with pytest.raises(exc, match=match):
        IntersectionBall(3, constraints)


def test_bad_dim():
    with pytest.raises(ValueError, match="'dim' parameter of IntersectionBall must be an int >= 1"):
        IntersectionBall(0, [([0], LpBall(1, 1))])


def test_name_in_repr():
    ball = IntersectionBall(2, [([0, 1], LpBall(2, 1))], name="K")
    assert "'K'" in repr(ball) and "1 constraints" in repr(ball)
    assert list(itertools.chain.from_iterable(idx for idx, _ in ball.constraints)) == [0, 1]
