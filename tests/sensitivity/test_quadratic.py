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
