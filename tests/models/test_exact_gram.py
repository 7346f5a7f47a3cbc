"""Exact regression sums (issue 13; Casacuberta et al. 2022): order-, block- and partition-invariant."""

from fractions import Fraction

import numpy as np
import pytest

import knorm.models.sufficient as suff
from knorm.models import LinearRegression
from knorm.models.sufficient import GRID_BITS, ExactStatistic, exact_statistic, sufficient_statistics
from tests.settings import SEED

BOX_LO, BOX_HI = np.array([-3.0, 0.0, -50.0]), np.array([7.0, 1e-3, 50.0])


def _data(n, seed=SEED):
    # Casacuberta et al.: entries of very different magnitudes (here after scaling to [-1, 1]: a few
    # huge-leverage rows among many tiny ones), so a binary64 sum depends on the order of the rows.
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-3, 7, n), rng.uniform(0, 1e-3, n)])
    X[:: max(n // 50, 1), 0] = 7.0
    y = rng.uniform(-1, 1, n) * 1e-3
    y[:: max(n // 50, 1)] = 50.0
    return X, y


def _float_T(X, y):
    """The old computation: binary64 BLAS sums of the scaled records (order-dependent)."""
    Z = np.column_stack([X, y])
    Z = (Z - BOX_LO) * (2.0 / (BOX_HI - BOX_LO)) - 1.0
    return np.concatenate([(Z.T @ Z).ravel(), Z.sum(axis=0)])


def _T(X, y):
    return sufficient_statistics(X, y, bounds_X=(BOX_LO[:2], BOX_HI[:2]), bounds_y=(BOX_LO[2], BOX_HI[2])).T


def test_adversarial_orders_blocks_and_partitions_give_the_same_bits(monkeypatch):
    X, y = _data(200_000)
    orders = [
        np.arange(len(y)),
        np.argsort(X[:, 0]),
        np.argsort(-X[:, 0]),
        np.random.default_rng(1).permutation(len(y)),
    ]
    floats = [_float_T(X[o], y[o]) for o in orders]
    assert any(not np.array_equal(floats[0], f) for f in floats[1:]), "binary64 sums should depend on the order"
    exact = [_T(X[o], y[o]) for o in orders]
    monkeypatch.setattr(suff, "_BLOCK_ROWS", 777)
    monkeypatch.setattr(suff, "_EXACT_ROWS", 333)
    exact.append(_T(X[orders[2]], y[orders[2]]))
    da = pytest.importorskip("dask.array")
    for chunks in (1_000, 65_537):
        exact.append(_T(da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=chunks)))
    for other in exact[1:]:
        np.testing.assert_array_equal(other, exact[0])


def test_statistic_equals_python_integer_arithmetic():
    X, y = _data(3_000)
    stat, n, _ = exact_statistic(X, y, BOX_LO, BOX_HI, "test")
    Z = (np.column_stack([X, y]) - BOX_LO) * (2.0 / (BOX_HI - BOX_LO)) - 1.0
    K = [[int(v) for v in row] for row in np.clip(np.rint(np.ldexp(Z, GRID_BITS)), -(2**16), 2**16)]
    B = GRID_BITS
    # Layout of paper Section 5.1, p = 2: x1, x2, x1 x2, 2 x1^2, 2 x2^2, y, x1 y, x2 y.
    ref = [
        sum(r[0] for r in K) << B,
        sum(r[1] for r in K) << B,
        sum(r[0] * r[1] for r in K),
        2 * sum(r[0] * r[0] for r in K),
        2 * sum(r[1] * r[1] for r in K),
        sum(r[2] for r in K) << B,
        sum(r[0] * r[2] for r in K),
        sum(r[1] * r[2] for r in K),
    ]
    assert stat.units.tolist() == ref and stat.exponent == -2 * B and n == 3_000


def test_huge_n_is_exact_where_binary64_is_not():
    # 4 million rows: the running sum of the products grows past 2^21, i.e. 2^53 units of 2^-32, where
    # binary64 accumulation loses low bits; the int64 reference is exact (|sum| < 2^63).
    n = 4_000_000
    rng = np.random.default_rng(SEED)
    K = rng.integers(2**15, 2**16 + 1, size=(n, 2), dtype=np.int64)  # same signs: the sums grow to ~2^21
    X = np.ldexp(K[:, :1].astype(float), -GRID_BITS)
    y = np.ldexp(K[:, 1].astype(float), -GRID_BITS)
    stat, _, _ = exact_statistic(X, y, np.array([-1.0, -1.0]), np.array([1.0, 1.0]), "test")
    exact_xy = int((K[:, 0] * K[:, 1]).sum())
    assert int(stat.units[-1]) == exact_xy  # x y, in units of 2^-32
    sequential = np.cumsum(X[:, 0] * y)[-1]  # the binary64 running sum of the same products
    assert Fraction(sequential) != Fraction(exact_xy, 2**32)


def test_on_lattice_rounds_half_to_even_like_fractions():
    rng = np.random.default_rng(SEED)
    units = rng.integers(-(2**40), 2**40, size=200, dtype=np.int64)
    units[:20] = (rng.integers(-1000, 1000, size=20) * 2 + 1) << 9  # exact midpoints at gamma = 2^-22
    stat = ExactStatistic(units, -32)
    for gamma in (2.0**-22, 2.0**-40, 4.0):
        got = stat.on_lattice(np.full(200, gamma))
        for u, g in zip(units.tolist(), got.tolist()):
            assert Fraction(g) == round(Fraction(u, 2**32) / Fraction(gamma)) * Fraction(gamma)  # half to even
    with pytest.raises(ValueError, match="powers of two"):
        stat.on_lattice(np.full(200, 0.3))


def test_record_limit_and_bounds_edges(monkeypatch):
    X = np.array([[0.1], [0.7]])
    stat, _, _ = exact_statistic(X, np.array([0.1, 0.7]), np.array([0.1, 0.1]), np.array([0.7, 0.7]), "test")
    assert stat.to_float()[0] == 0.0  # -1 + 1: the bounds map to exactly -1 and +1 on the grid
    monkeypatch.setattr(suff, "MAX_RECORDS", 1)
    with pytest.raises(ValueError, match="records exceed the 1 that the exact int64 sums"):
        exact_statistic(X, np.array([0.1, 0.7]), np.array([0.1, 0.1]), np.array([0.7, 0.7]), "test")


@pytest.mark.parametrize("epsilon", [1e4, 1e6])  # 1e6 hung in the lattice pilot when gamma ignored epsilon
def test_linear_regression_releases_exact_sums_and_keeps_its_accuracy(epsilon):
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    y = X @ [0.5, -0.25, 0.1] + 0.1 * rng.standard_normal(20_000)
    fit = LinearRegression(epsilon=epsilon, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=SEED).fit(X, y)
    assert "sums exact" in fit.release_.sampler or epsilon > 1e5  # at 1e6 the lattice may step aside
    ols = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[fit.intercept_, fit.coef_], ols, rtol=0, atol=2e-3)
