"""Property-based tests of every norm ball: the gauge is a norm, and the ball's
membership, support function, sampler and volume agree with it."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knorm.geometry import LpBall, Polytope
from tests.property.strategies import (
    ALL_KINDS,
    EXACT_VOLUME_KINDS,
    PROPERTY_SETTINGS,
    RTOL,
    balls,
    point_polytopes,
    seeds,
    vectors,
)

# Each ball kind gets its own examples (a single strategy over all kinds would
# let hypothesis spend most of them on the kinds with the most entropy).
every_kind = pytest.mark.parametrize("kind", ALL_KINDS)
exact_kinds = pytest.mark.parametrize("kind", EXACT_VOLUME_KINDS)
SUPPORT_KINDS = pytest.mark.parametrize("kind", [k for k in ALL_KINDS if k != "intersection"])

# Scalars of homogeneity; magnitudes below 1e-100 are left to the explicit
# underflow test below (K_2's closed-form gauge squares its input).
scalars = st.one_of(
    st.floats(-50.0, 50.0, allow_nan=False).filter(lambda a: a == 0 or abs(a) >= 1e-100),
    st.sampled_from([0.0, -1.0, 1e-3, 1e3, 1e-100]),
)


@every_kind
@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, a=scalars)
def test_gauge_is_a_norm(kind, data, seed, a):
    ball = data.draw(balls((kind,)), label="ball")
    u = vectors(ball.dim, 40, seed)
    v = vectors(ball.dim, 40, seed + 1)
    nu, nv = ball.norm(u), ball.norm(v)
    # ||u|| = 0 iff u = 0
    zero = ~np.any(u != 0, axis=1)
    assert np.all(nu[zero] == 0) and np.all(nu[~zero] > 0)
    # positive homogeneity ||a u|| = |a| ||u||, and symmetry
    np.testing.assert_allclose(ball.norm(a * u), abs(a) * nu, rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(ball.norm(-u), nu, rtol=RTOL)
    # triangle inequality
    assert np.all(ball.norm(u + v) <= (nu + nv) * (1 + RTOL) + 1e-12)


@every_kind
@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds, margin=st.floats(1e-6, 0.5))
def test_contains_iff_gauge_at_most_one(kind, data, seed, margin):
    ball = data.draw(balls((kind,)), label="ball")
    x = vectors(ball.dim, 60, seed)
    x = x[np.any(x != 0, axis=1)]
    boundary = x / ball.norm(x)[:, None]
    # Points a relative margin inside / outside the boundary: no float ties.
    assert np.all(ball.contains(boundary * (1 - margin)))
    assert not np.any(ball.contains(boundary * (1 + margin)))
    # Arbitrary points away from the unit sphere: contains agrees with the gauge.
    g = ball.norm(x)
    off = np.abs(g - 1) > 1e-9
    np.testing.assert_array_equal(ball.contains(x[off]), g[off] <= 1)
    assert ball.contains(np.zeros(ball.dim))


@SUPPORT_KINDS
@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds)
def test_support_gauge_duality(kind, data, seed):
    ball = data.draw(balls((kind,)), label="ball")
    # c . u <= h_K(c) ||u||_K (Hoelder for the gauge and its dual), tight on K's boundary.
    c = vectors(ball.dim, 30, seed)
    u = vectors(ball.dim, 30, seed + 7)
    h = ball.support(c)
    lhs = c @ u.T
    assert np.all(lhs <= h[:, None] * ball.norm(u)[None, :] * (1 + RTOL) + 1e-12)
    # h is the max over K: no uniform point of K exceeds it, and it is attained
    # on the boundary (for polytopes at a vertex).
    pts = ball.sample_uniform(500, rng=seed)
    assert np.all(pts @ c.T <= h[None, :] * (1 + RTOL) + 1e-12)
    vertices = getattr(ball, "vertices", None)
    if vertices is not None:
        np.testing.assert_allclose((c @ vertices.T).max(axis=1), h, rtol=1e-9, atol=1e-12)


@every_kind
@PROPERTY_SETTINGS
@given(data=st.data(), seed=seeds)
def test_uniform_samples_lie_in_the_ball(kind, data, seed):
    ball = data.draw(balls((kind,)), label="ball")
    pts = ball.sample_uniform(300, rng=seed)
    assert pts.shape == (300, ball.dim)
    assert np.all(ball.norm(pts) <= 1 + 1e-12)
    assert np.all(np.abs(pts) <= ball.bounding_box() * (1 + 1e-12))


@exact_kinds
@PROPERTY_SETTINGS
@given(data=st.data(), c=st.floats(0.05, 20.0), seed=seeds)
def test_scaling_scales_volume_by_c_to_the_m_and_gauge_by_one_over_c(kind, data, c, seed):
    ball = data.draw(balls((kind,)), label="ball")
    scaled = ball.scaled(c)
    vol, svol = ball.volume(), scaled.volume()
    assert vol.exact and svol.exact
    assert float(svol) == _approx(c**ball.dim * float(vol))
    assert float(scaled.log_volume()) == _approx(float(ball.log_volume()) + ball.dim * math.log(c), abs_=1e-9)
    u = vectors(ball.dim, 30, seed)
    np.testing.assert_allclose(scaled.norm(u), ball.norm(u) / c, rtol=RTOL)


@PROPERTY_SETTINGS
@given(dim=st.integers(1, 6), p=st.one_of(st.floats(1.0, 8.0), st.just(math.inf)), r=st.floats(0.05, 20.0), seed=seeds)
def test_lp_radius_is_a_scaling(dim, p, r, seed):
    # An independent path: the radius enters the closed-form volume (Wang 2005) directly.
    unit, big = LpBall(dim, p), LpBall(dim, p, radius=r)
    assert float(big.volume()) == _approx(r**dim * float(unit.volume()))
    u = vectors(dim, 30, seed)
    np.testing.assert_allclose(big.norm(u), unit.norm(u) / r, rtol=RTOL)


@PROPERTY_SETTINGS
@given(ball=point_polytopes(), c=st.floats(0.1, 10.0), seed=seeds)
def test_polytope_of_scaled_points_is_the_scaled_polytope(ball, c, seed):
    # qhull recomputes the hull of c V from scratch: its volume and gauge must scale.
    big = Polytope.from_points(c * ball._points)
    assert float(big.volume()) == _approx(c**ball.dim * float(ball.volume()), rel=1e-7)
    u = vectors(ball.dim, 30, seed)
    np.testing.assert_allclose(big.norm(u), ball.norm(u) / c, rtol=1e-7)


def _approx(x, rel=1e-9, abs_=0.0):
    return pytest.approx(x, rel=rel, abs=abs_)


def test_k2_gauge_of_a_tiny_nonzero_vector_is_positive():
    # Regression test: the gauge once computed 2 a^2 / (4a - b), which underflowed
    # to 0 for |u| below about 1e-154 (found by hypothesis).
    from knorm.geometry import K2Ball

    u = np.array([[4e-172, 1e-172]])
    assert K2Ball().norm(u)[0] == pytest.approx(2 * 4e-172 * 4e-172 / (16e-172 - 1e-172))
