import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import ConvexHull

from knorm.geometry import LpBall, NotANormBallError
from knorm.geometry.polytope import Polytope
from tests.settings import ALPHA, SEED, Z_MAX


def cube(m, r=1.0):
    return Polytope.from_halfspaces(np.vstack([np.eye(m), -np.eye(m)]), np.full(2 * m, r))


def sign_vectors(m):
    return np.array(list(itertools.product((-1.0, 1.0), repeat=m)))


def k3_definition(u):
    # K_3 written out directly: the cube [-2, 2]^3 cut by the l1 ball of radius 4.
    return np.maximum(np.abs(u).max(axis=-1) / 2, np.abs(u).sum(axis=-1) / 4)


K3_A = np.vstack([np.eye(3), -np.eye(3), sign_vectors(3)])
K3_B = np.r_[np.full(6, 2.0), np.full(8, 4.0)]


@pytest.mark.parametrize("m", [1, 2, 3, 5])
@pytest.mark.parametrize(
    "build, p",
    [
        (lambda m: cube(m, 1.5), math.inf),
        (lambda m: Polytope.from_points(1.5 * sign_vectors(m)), math.inf),
        (lambda m: Polytope.from_points(1.5 * np.eye(m)), 1),
        (lambda m: Polytope.from_halfspaces(sign_vectors(m), np.full(2**m, 1.5)), 1),
    ],
    ids=["cube-halfspaces", "cube-points", "cross-points", "cross-halfspaces"],
)
def test_cube_and_cross_polytope_match_lp_balls(build, p, m):
    poly, ref = build(m), LpBall(m, p, radius=1.5)
    u = np.random.default_rng(SEED).normal(size=(300, m))
    np.testing.assert_allclose(poly.norm(u), ref.norm(u), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(poly.support(u), ref.support(u), rtol=1e-12)
    vol = poly.volume()
    assert vol.exact and vol == pytest.approx(float(ref.volume()), rel=1e-12)
    np.testing.assert_allclose(poly.bounding_box(), np.full(m, 1.5), rtol=1e-9)
    np.testing.assert_array_equal(poly.contains(u), poly.norm(u) <= 1)


def test_gauge_and_support_vectorise_over_leading_axes():
    poly = Polytope.from_halfspaces(K3_A, K3_B)
    u = np.random.default_rng(SEED).normal(size=(4, 5, 3))
    assert poly.norm(u).shape == (4, 5) and poly.support(u).shape == (4, 5)
    np.testing.assert_allclose(poly.norm(u), k3_definition(u), rtol=1e-12)
    assert np.isscalar(poly.norm(u[0, 0])) and poly.norm(np.zeros(3)) == 0


def test_k3_is_the_cuboctahedron():
    poly = Polytope.from_halfspaces(K3_A, K3_B)
    # The 12 vertices are the permutations of (±2, ±2, 0).
    expected = {p for s in itertools.product((-2, 2), repeat=2) for p in itertools.permutations((s[0], s[1], 0))}
    got = {tuple(int(round(x)) for x in v) for v in poly.vertices}
    assert len(poly.vertices) == 12 and got == expected
    np.testing.assert_allclose(poly.vertices, np.round(poly.vertices), atol=1e-12)
    assert poly.volume().exact and poly.volume() == pytest.approx(160 / 3, rel=1e-12)
    assert poly.qhull_error is None and len(poly.halfspaces[0]) == 14
    u = np.random.default_rng(SEED).uniform(-3, 3, size=(2000, 3))
    np.testing.assert_allclose(poly.norm(u), k3_definition(u), rtol=1e-12)
    # Support against brute force over the known vertices.
    c = np.random.default_rng(SEED + 1).normal(size=(50, 3))
    np.testing.assert_allclose(poly.support(c), (c @ np.array(sorted(expected), float).T).max(axis=1), rtol=1e-12)


def test_from_points_matches_halfspaces_of_its_own_facets_and_the_lp_gauge():
    rng = np.random.default_rng(SEED)
    V = rng.normal(size=(12, 3))
    hull = Polytope.from_points(V)
    G, ones = hull.halfspaces
    assert np.all(ones == 1) and hull.method == "facets"
    again = Polytope.from_halfspaces(G, ones)
    lp = Polytope.from_points(V, max_qhull_dim=0)  # independent: an LP per point
    assert lp.method == "lp" and lp.vertices is None and lp.halfspaces is None
    u = rng.normal(size=(60, 3))
    np.testing.assert_allclose(hull.norm(u), again.norm(u), rtol=1e-9)
    np.testing.assert_allclose(hull.norm(u), lp.norm(u), rtol=1e-7)
    # Support of the symmetric hull is max_i |c . v_i| (brute force over generators).
    brute = np.abs(u @ V.T).max(axis=1)
    for ball in (hull, again, lp):
        np.testing.assert_allclose(ball.support(u), brute, rtol=1e-9)
    assert again.volume() == pytest.approx(float(hull.volume()), rel=1e-9)
    assert hull.volume() == pytest.approx(ConvexHull(np.vstack([V, -V])).volume, rel=1e-12)
    # Extreme points: the same set from both constructions, all among ±V.
    key = lambda P: sorted(map(tuple, np.round(P, 8)))  # noqa: E731
    assert key(hull.vertices) == key(again.vertices)
    pm = np.vstack([V, -V])
    assert all(np.min(np.abs(pm - v).max(axis=1)) < 1e-12 for v in hull.vertices)
    np.testing.assert_allclose(hull.bounding_box(), np.abs(V).max(axis=0), rtol=1e-9)


def test_lp_gauge_is_a_norm_ball_gauge():
    rng = np.random.default_rng(SEED)
    lp = Polytope.from_points(rng.normal(size=(7, 3)), max_qhull_dim=0)
    u = rng.normal(size=(20, 3))
    g = lp.norm(u)
    np.testing.assert_allclose(lp.norm(2.5 * u), 2.5 * g, rtol=1e-7)
    np.testing.assert_allclose(lp.norm(-u), g, rtol=1e-7)
    assert np.all(lp.norm(u[:10] + u[10:]) <= g[:10] + g[10:] + 1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Polytope.from_halfspaces(K3_A, K3_B),
        lambda: Polytope.from_points(np.random.default_rng(SEED).normal(size=(9, 4))),
        lambda: Polytope.from_points([[0.7]]),
    ],
    ids=["K3", "random-4d", "interval"],
)
def test_uniform_sampler_is_exact(make):
    poly = make()
    m = poly.dim
    u = poly.sample_uniform(30_000, rng=SEED)
    g = poly.norm(u)
    assert u.shape == (30_000, m) and np.all(g <= 1 + 1e-12)
    # For U uniform on K, ||U||_K^m ~ U(0, 1). Failure rate ALPHA under the null.
    assert stats.kstest(g**m, "uniform").pvalue > ALPHA
    # Two-sample KS on projections against plain box rejection (independent, exact,
    # with membership decided by the halfspaces directly): each coordinate and one
    # random direction, Bonferroni-corrected, so the failure rate is ALPHA.
    G, _ = poly.halfspaces
    b = poly.bounding_box()
    rng = np.random.default_rng(SEED + 1)
    cand = rng.uniform(-b, b, size=(1_000_000, m))
    ref = cand[(cand @ G.T).max(axis=1) <= 1][:30_000]
    assert len(ref) == 30_000
    dirs = np.vstack([np.eye(m), np.random.default_rng(SEED + 2).normal(size=(1, m))])
    for d in dirs:
        assert stats.ks_2samp(u @ d, ref @ d).pvalue > ALPHA / len(dirs)
    # Mass of each facet's cone (the active halfspace), chi-square. Failure rate ALPHA.
    counts = np.array([np.bincount(np.argmax(x @ G.T, axis=1), minlength=len(G)) for x in (u, ref)])
    assert stats.chi2_contingency(counts[:, counts.sum(axis=0) > 0]).pvalue > ALPHA


def test_sampler_rng_contract():
    poly = Polytope.from_halfspaces(K3_A, K3_B)
    np.testing.assert_array_equal(poly.sample_uniform(7, rng=3), poly.sample_uniform(7, rng=np.random.default_rng(3)))
    assert poly.sample_uniform(0, rng=3).shape == (0, 3)


def irwin_hall_cdf(x, n):
    x = Fraction(x)
    return sum((-1) ** k * math.comb(n, k) * (x - k) ** n for k in range(int(x) + 1)) / math.factorial(n)


def test_high_dimension_falls_back_to_halfspaces_lp_and_rejection():
    m = 12
    poly = cube(m)
    assert poly.vertices is None and poly.method == "facets" and poly.qhull_error is None  # qhull not tried
    c = np.random.default_rng(SEED).normal(size=(5, m))
    np.testing.assert_allclose(poly.support(c), np.abs(c).sum(axis=1), rtol=1e-9)  # LP support
    np.testing.assert_allclose(poly.bounding_box(), np.ones(m), rtol=1e-8)
    vol = poly.volume(rng=SEED, n_samples=20_000)
    assert not vol.exact and vol == pytest.approx(2.0**m, rel=1e-6)
    u = poly.sample_uniform(1000, rng=SEED)
    assert np.all(np.abs(u) <= 1 + 1e-8) and poly.sampler_stats.acceptance_rate > 0.99


def test_high_dimension_rejection_acceptance_matches_irwin_hall():
    # K = [-1, 1]^10 cut by the slab |sum u| <= 1; P(box point in K) is exact via
    # the Irwin-Hall law: sum u = 2S - 10 with S ~ IrwinHall(10).
    m = 10
    A = np.vstack([np.eye(m), -np.eye(m), np.ones((1, m)), -np.ones((1, m))])
    poly = Polytope.from_halfspaces(A, np.ones(2 * m + 2))
    assert poly.vertices is None and poly.halfspaces[0].shape == (2 * m + 2, m)
    prob = float(irwin_hall_cdf(Fraction(11, 2), m) - irwin_hall_cdf(Fraction(9, 2), m))
    u = poly.sample_uniform(20_000, rng=SEED)
    assert np.all(np.abs(u) <= 1) and np.all(np.abs(u.sum(axis=1)) <= 1)
    st = poly.sampler_stats
    z = (st.accepted - st.proposed * prob) / math.sqrt(st.proposed * prob * (1 - prob))
    assert abs(z) < Z_MAX  # two-sided normal rate ~6e-5
    # For U uniform on K, ||U||_K^m ~ U(0, 1). Failure rate ALPHA.
    assert stats.kstest(poly.norm(u) ** m, "uniform").pvalue > ALPHA
    vol = poly.volume(rng=SEED, n_samples=400_000)
    assert not vol.exact and abs(vol - 2.0**m * prob) < Z_MAX * vol.stderr


def test_repr_and_direct_construction():
    assert "12 vertices" in repr(Polytope.from_halfspaces(K3_A, K3_B, name="K_3"))
    with pytest.raises(TypeError, match="from_halfspaces"):
        Polytope(np.eye(2), np.ones(2))


@pytest.mark.parametrize(
    "A, b, exc, match",
    [
        ([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -2.0]], [1, 1, 1, 1], NotANormBallError, "not symmetric.*Row 2"),
        ([[1.0, 0.0], [-1.0, 0.0]], [1, 1], NotANormBallError, "not bounded.*u\\[1\\]"),
        (
            [[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]],
            [1, 1, 0, 1],
            NotANormBallError,
            "b_i must be > 0\\). Got b\\[2\\] = 0.0",
        ),
        ([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]], [1, -1, 1, 1], NotANormBallError, "absorbing"),
        ([[1.0, np.nan], [-1.0, 0.0]], [1, 1], ValueError, "'A' parameter of Polytope.from_halfspaces .* Got nan"),
        ([[1.0, 0.0], [-1.0, 0.0]], [1, np.inf], ValueError, "'b' parameter .* finite values. Got inf"),
        ([1.0, -1.0], [1, 1], ValueError, "'A' parameter .* 2-D array"),
        ([[1.0], [-1.0]], [1, 1, 1], ValueError, "'b' parameter .* last axis of length 2"),
        ([["a"], ["b"]], [1, 1], TypeError, "'A' parameter .* real numbers"),
    ],
)
def test_from_halfspaces_rejects(A, b, exc, match):
    with pytest.raises(exc, match=match):
        Polytope.from_halfspaces(A, b)


def test_from_points_rejects():
    with pytest.raises(NotANormBallError, match="must span R\\^3\\). Got rank 2"):
        Polytope.from_points([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="finite values. Got nan"):
        Polytope.from_points([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(ValueError, match="'max_qhull_dim' parameter of Polytope.from_points must be an int >= 0"):
        Polytope.from_points(np.eye(2), max_qhull_dim=-1)
    assert issubclass(NotANormBallError, ValueError)


def test_qhull_failure_is_recorded_and_the_gauge_stays_exact():
    # The box [-1, 1]^2 x [-1e-15, 1e-15]: qhull finds its initial simplex flat.
    A = np.vstack([np.eye(3), -np.eye(3)])
    poly = Polytope.from_halfspaces(A, [1, 1, 1e-15, 1, 1, 1e-15])
    assert poly.qhull_error.startswith("qhull failed: QH") and poly.vertices is None
    u = np.random.default_rng(SEED).normal(size=(50, 3)) * [1, 1, 1e-15]
    np.testing.assert_allclose(poly.norm(u), np.abs(u / [1, 1, 1e-15]).max(axis=1), rtol=1e-12)
    vol = poly.volume(rng=SEED, n_samples=10_000)
    assert not vol.exact and "qhull failed" in vol.method and vol == pytest.approx(8e-15, rel=1e-8)
    x = poly.sample_uniform(100, rng=SEED)
    assert np.all(poly.norm(x) <= 1) and poly.sampler_stats.proposed >= 100
    # From points: the hull of (1, 0, 0), (0, 1, 0), (1, 1, 1e-14) and their negatives.
    thin = Polytope.from_points([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1e-14]])
    assert thin.qhull_error.startswith("qhull failed: QH") and thin.method == "lp" and thin.halfspaces is None
    assert thin.vertices is None and "LP gauge" in repr(thin)
