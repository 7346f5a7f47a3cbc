import math

import numpy as np
import pytest
from scipy import stats

from knorm.geometry import LpBall, NotANormBallError
from knorm.geometry.oracle import OracleBall
from knorm.geometry.regression import k3_ball
from tests.settings import ALPHA, SEED, Z_MAX


def disk(U):
    return (U**2).sum(axis=1) <= 1.0


def shifted_disk(U):
    # Convex, bounded, contains 0 in its interior, but not symmetric.
    return ((U - [0.3, 0.0]) ** 2).sum(axis=1) <= 1.0


def cross(U):
    # Union of two thin rectangles: symmetric, bounded, absorbing, not convex.
    a = np.abs(U)
    return ((a[:, 0] <= 1) & (a[:, 1] <= 0.1)) | ((a[:, 0] <= 0.1) & (a[:, 1] <= 1))


def star(U):
    # Union of the l1 ball and a smaller square: star-shaped about 0 and containing
    # the hull of ±e_j, so only a pair of members exposes the non-convexity.
    a = np.abs(U)
    return (a.sum(axis=1) <= 1) | (a.max(axis=1) <= 0.6)


def test_l2_oracle_matches_lp_ball():
    ball, ref = OracleBall(disk, 1.0, dim=2), LpBall(2, 2)
    rng = np.random.default_rng(SEED)
    u = rng.normal(size=(500, 2)) * np.exp(rng.normal(size=(500, 1)))  # many scales
    np.testing.assert_allclose(ball.norm(u), ref.norm(u), rtol=1e-9)
    np.testing.assert_array_equal(ball.contains(u), disk(u))
    assert ball.norm(np.zeros(2)) == 0 and ball.norm(u.reshape(5, 100, 2)).shape == (5, 100)
    assert ball.inner_radius == 1.0


def test_monte_carlo_volume_of_l2_oracle():
    vol = OracleBall(disk, [1.0, 1.0]).volume(rng=SEED, n_samples=400_000)
    assert not vol.exact and vol.stderr > 0
    assert abs(vol - math.pi) < Z_MAX * vol.stderr  # two-sided normal rate ~6e-5


def test_oracle_sampler_is_uniform():
    ball = OracleBall(disk, 1.0, dim=2)
    u = ball.sample_uniform(20_000, rng=SEED)
    assert np.all(disk(u))
    # ||U||^2 ~ U(0, 1) for U uniform on the disk. Failure rate ALPHA under the null.
    assert stats.kstest((u**2).sum(axis=1), "uniform").pvalue > ALPHA
    assert ball.sampler_stats.acceptance_rate == pytest.approx(math.pi / 4, abs=0.02)


@pytest.mark.parametrize("r", [1e-3, 1.0, 1e4])
def test_gauge_of_polytope_oracle_across_scales(r):
    k3 = k3_ball()
    ball = OracleBall(lambda U: k3.contains(U / r), 2 * r * (1 + 1e-9), dim=3)
    ball.check(n=5000, rng=SEED)  # a valid ball raises nothing
    u = np.random.default_rng(SEED).normal(size=(200, 3))
    np.testing.assert_allclose(ball.norm(u), k3.norm(u) / r, rtol=1e-9)


@pytest.mark.parametrize(
    "member, box, match",
    [
        (shifted_disk, 1.5, "not symmetric: u = .* is a member but -u is not"),
        (cross, 1.0, "not convex"),
        (star, 1.0, "not convex: x = .* and y = .* are members"),
        (lambda U: (U**2).sum(axis=1) <= 2.0, 1.0, "not bounded by the bounding box"),
    ],
    ids=["shifted-disk", "cross", "star", "box-too-small"],
)
def test_check_finds_violations(member, box, match):
    ball = OracleBall(member, box, dim=2, validate=False)
    with pytest.raises(NotANormBallError, match=match + ".*falsification search"):
        ball.check(n=20_000, rng=SEED)
    # The cheap deterministic check in __init__ catches these too.
    with pytest.raises(NotANormBallError, match=match):
        OracleBall(member, box, dim=2)


def test_not_absorbing():
    with pytest.raises(NotANormBallError, match="origin is not a member"):
        OracleBall(lambda U: np.abs((U**2).sum(axis=1) - 0.5) <= 0.25, 1.0, dim=2)
    with pytest.raises(NotANormBallError, match="inner_radius 0.9 is too large"):
        OracleBall(lambda U: np.abs(U).sum(axis=1) <= 0.5, 1.0, dim=2, inner_radius=0.9)
    ball = OracleBall(lambda U: np.abs(U).sum(axis=1) <= 0.5, 1.0, dim=2, inner_radius=0.4)
    assert ball.inner_radius == 0.4 and ball.norm([0.25, 0.25]) == pytest.approx(1.0, rel=1e-11)


def test_no_support_function():
    ball = OracleBall(disk, 1.0, dim=2)
    assert not ball.has_support
    with pytest.raises(NotImplementedError):
        ball.support([1.0, 0.0])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(member="disk", bounding_box=1.0, dim=2), TypeError, "'member' parameter of OracleBall must be a call"),
        (dict(member=disk, bounding_box=1.0), TypeError, "'dim' parameter of OracleBall is required"),
        (dict(member=disk, bounding_box=[1.0, -1.0]), ValueError, "'bounding_box' parameter"),
        (dict(member=disk, bounding_box=[1.0, np.nan]), ValueError, "'bounding_box' parameter"),
        (dict(member=disk, bounding_box=[1.0, 1.0], dim=3), ValueError, "'dim' parameter of OracleBall must equal"),
        (dict(member=lambda U: np.ones((len(U), 1), bool), bounding_box=1.0, dim=2), TypeError, "boolean array"),
        (dict(member=disk, bounding_box=1.0, dim=2, inner_radius=-1.0), ValueError, "'inner_radius' parameter"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        OracleBall(**kwargs)


def test_check_parameters():
    ball = OracleBall(disk, 1.0, dim=2)
    assert ball.check(n=100, rng=1) is ball
    with pytest.raises(ValueError, match="'n' parameter of OracleBall.check"):
        ball.check(n=0)
