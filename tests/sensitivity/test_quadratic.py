import numpy as np
import pytest

from knorm.sensitivity import QuadraticStatistic
from tests.settings import SEED


def grid(lower, upper, n=81):
    axes = [np.linspace(lo, hi, n) for lo, hi in zip(lower, upper)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(lower))


@pytest.mark.parametrize("kind", ["random", "indefinite", "singular", "multilinear"])
def test_extremes_against_brute_force_grid(kind):
    rng = np.random.default_rng(SEED)
    A = rng.normal(size=(4, 3, 3))
    if kind == "indefinite":
        A[:, 0, 0], A[:, 1, 1] = 2.0, -2.0
    if kind == "singular":
        A = np.einsum("mi,mj->mij", rng.normal(size=(4, 3)), rng.normal(size=(4, 3)))  # rank one
    if kind == "multilinear":
        A[:, [0, 1, 2], [0, 1, 2]] = 0.0
    b = rng.normal(size=(4, 3))
    lower, upper = np.array([-1.0, -2.0, 0.0]), np.array([1.0, 1.0, 3.0])
    t = QuadraticStatistic(A, b, lower, upper)
    assert t.is_multilinear == (kind == "multilinear")
    c = rng.normal(size=(40, 4))
    hi, lo, zhi, zlo = t.extremes(c)
    v = t(grid(lower, upper)) @ c.T
    # Certified: never below the brute-force maximum (nor above the minimum) ...
    assert np.all(hi >= v.max(axis=0)) and np.all(lo <= v.min(axis=0))
    # ... and attained by the returned records, which lie in the box.
    np.testing.assert_allclose(np.einsum("km,km->k", t(zhi), c), hi, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.einsum("km,km->k", t(zlo), c), lo, rtol=1e-8, atol=1e-8)
    assert np.all((zhi >= lower - 1e-12) & (zhi <= upper + 1e-12))
    # The grid is within its resolution of the exact value.
    assert np.all(hi - v.max(axis=0) < 0.05 * (1 + np.abs(hi)))


def test_interior_maximum_found():
    # -(z - 0.3)^2 has its maximum inside the box, at a point no vertex reaches.
    t = QuadraticStatistic([[[-1.0]]], [[0.6]], [-1.0], [1.0])
    hi, lo, zhi, _ = t.extremes(np.array([[1.0]]))
    assert hi[0] == pytest.approx(0.09) and zhi[0, 0] == pytest.approx(0.3)
    assert lo[0] == pytest.approx(-1 - 0.6)


def test_bad_input():
    with pytest.raises(ValueError, match="shapes \\(m, d, d\\) and \\(m, d\\)"):
        QuadraticStatistic(np.zeros((2, 2)), np.zeros((2, 2)), [0, 0], [1, 1])
    with pytest.raises(ValueError, match="lower < upper. Got lower\\[1\\] = 2.0 >= upper\\[1\\] = 1.0"):
        QuadraticStatistic(np.zeros((1, 2, 2)), np.zeros((1, 2)), [0.0, 2.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        QuadraticStatistic(np.zeros((1, 1, 1)), np.zeros((1, 1)), [np.nan], [1.0])


def test_separable_statistic_in_high_dimension_by_columns():
    # 50 columns of (x, x^2): c.t(z) splits over the columns, so 1-D grids give an
    # independent brute force of the maximum (the old face enumeration needed 3^50 solves).
    from tests.sensitivity.statistics import moments

    rng = np.random.default_rng(SEED)
    d = 50
    lower = rng.uniform(-2, 1, d)
    upper = lower + rng.uniform(0.5, 3, d)
    t = moments(lower, upper)
    c = rng.normal(size=(20, 2 * d))
    hi, lo, zhi, zlo = t.extremes(c)
    grid = np.linspace(0, 1, 2001)[:, None] * (upper - lower) + lower  # (n, d)
    per = grid[None] * c[:, None, :d] + grid[None] ** 2 * c[:, None, d:]  # (k, n, d)
    brute_hi, brute_lo = per.max(axis=1).sum(axis=1), per.min(axis=1).sum(axis=1)
    assert np.all(hi >= brute_hi) and np.all(lo <= brute_lo)
    assert np.all(hi - brute_hi < 1e-4 * (1 + np.abs(hi))) and np.all(brute_lo - lo < 1e-4 * (1 + np.abs(lo)))
    np.testing.assert_allclose(np.einsum("km,km->k", t(zhi), c), hi, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.einsum("km,km->k", t(zlo), c), lo, rtol=1e-8, atol=1e-8)


def test_components_and_linear_statistics_against_brute_force():
    rng = np.random.default_rng(SEED + 1)
    # x0 x1 couples two variables; x2 is on its own (with a square): components {0, 1} and {2}.
    A = np.zeros((3, 3, 3))
    A[0, 0, 1] = 1.5
    A[1, 2, 2] = -2.0
    A[2, 0, 0] = 1.0
    b = rng.normal(size=(3, 3))
    lower, upper = np.array([-1.0, 0.0, -0.5]), np.array([2.0, 1.0, 1.5])
    t = QuadraticStatistic(A, b, lower, upper)
    assert sorted(map(list, t.components)) == [[0, 1], [2]]
    c = rng.normal(size=(30, 3))
    hi, lo, _, _ = t.extremes(c)
    v = t(grid(lower, upper)) @ c.T
    assert np.all(hi >= v.max(axis=0)) and np.all(hi - v.max(axis=0) < 0.05 * (1 + np.abs(hi)))
    # Linear: max of c.B z over a box is sum_i max(g_i lower_i, g_i upper_i), g = B'c.
    B = rng.normal(size=(4, 6))
    lo6, up6 = -rng.random(6), rng.random(6) + 0.1
    lin = QuadraticStatistic(np.zeros((4, 6, 6)), B, lo6, up6)
    assert lin.is_linear
    c = rng.normal(size=(25, 4))
    g = c @ B
    hi, lo, _, _ = lin.extremes(c)
    np.testing.assert_allclose(hi, np.maximum(g * lo6, g * up6).sum(axis=1), rtol=1e-9)
    np.testing.assert_allclose(lo, np.minimum(g * lo6, g * up6).sum(axis=1), rtol=1e-9)


def test_blocks_restrict_and_vertex_refusal():
    from tests.sensitivity.statistics import moments, second_moments

    t = moments([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    assert [(r.tolist(), v.tolist()) for r, v in t.blocks()] == [([0, 3], [0]), ([1, 4], [1]), ([2, 5], [2])]
    assert len(second_moments(3).blocks()) == 1
    sub = t.restrict([1, 4], [1])
    assert (sub.dim, sub.record_dim) == (2, 1) and sub([1.5]).tolist() == [1.5, 2.25]
    with pytest.raises(ValueError, match="must include every variable"):
        t.restrict([1, 4], [0])
    with pytest.raises(ValueError, match="2\\^30 vertices"):
        QuadraticStatistic(np.zeros((1, 30, 30)), np.ones((1, 30)), np.zeros(30), np.ones(30)).vertices()
