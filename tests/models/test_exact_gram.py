"""Tests of the exact regression statistic (paper Section 5.1; Casacuberta et al. 2022).

Casacuberta, Shoemate, Vadhan & Wagaman (2022) show that float sums depend on the order
and blocking of the rows and can exceed a declared sensitivity. Here each scaled record is
rounded to the grid 2^-32 and T is summed exactly: these tests check that T is bit for bit
the same whatever the order, block size or Dask partitioning, that it equals an independent
computation in Python integers and fractions, and that it reaches the lattice release
rounded exactly. Every test is deterministic (fixed seeds, no statistical test).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

import knorm.models.sufficient as suff
from knorm.mechanisms import KNormMechanism, nonprivate
from knorm.models import LinearRegression, functional_mechanism
from knorm.models._base import to_unit_box
from knorm.models.functional import _certified
from knorm.models.sufficient import GRID_BITS, ExactStatistic, sufficient_statistics
from knorm.sensitivity import RegressionLayout
from tests.settings import SEED

ONE = 2**GRID_BITS


def adversarial(n, p=2, seed=SEED):
    """Huge and tiny values interleaved (Casacuberta et al. 2022), in the box [-1, 1]^(p+1).

    Huge: +-(1 - u), u < 2^-10 (high limbs odd or even); tiny: below 2^-20 in magnitude, and values off the
    grid 2^-32, so that the rounding to the grid is exercised too.
    """
    rng = np.random.default_rng(seed)
    huge = rng.choice([-1.0, 1.0], size=(n, p + 1)) * (1 - rng.uniform(0, 2.0**-10, size=(n, p + 1)))
    tiny = rng.uniform(-1, 1, size=(n, p + 1)) * 2.0**-20
    Z = np.where((np.arange(n)[:, None] + np.arange(p + 1)) % 2 == 0, huge, tiny)
    return Z[:, :p], Z[:, p]


def huge_n_data(reps):
    """A base block of 2^12 adversarial rows with x huge in every row, repeated ``reps`` times.

    Returns X, y and the exact T of all rows: reps times that of the base block, in fractions.
    """
    base_X, base_y = adversarial(1 << 12, p=1, seed=SEED + 2)
    base_X[:, 0] = np.where(np.abs(base_X[:, 0]) > 0.5, base_X[:, 0], 1 - base_X[:, 0])
    reference = [r * reps for r in exact_reference(base_X, base_y, -np.ones(2), np.ones(2))]
    return np.tile(base_X, (reps, 1)), np.tile(base_y, reps), reference


def orders(X, seed=SEED):
    """The adversarial orders: sorted by magnitude, reversed, shuffled."""
    by_size = np.argsort(np.abs(X[:, 0]), kind="stable")
    return {"sorted": by_size, "reversed": by_size[::-1], "shuffled": np.random.default_rng(seed).permutation(len(X))}


def float_gram(X, y):
    """The old computation: binary64 BLAS sums of the scaled records."""
    Z = np.column_stack([X, y])
    return Z.T @ Z


def exact_reference(X, y, lo, hi):
    """T in Python fractions, independently: the per-record map, then exact sums.

    The map is the documented one: to_unit_box (binary64, per record), then the nearest
    point of the grid 2^-32, ties to even (Python's round of a Fraction).
    """
    Z, _ = to_unit_box(np.column_stack([X, y]), lo, hi)
    V = np.array([[round(Fraction(v) * ONE) for v in row] for row in Z.tolist()], dtype=object)
    G = V.T @ V  # Python ints: exact
    s = V.sum(axis=0)
    p = X.shape[1]
    T = []
    T += [Fraction(s[j], ONE) for j in range(p)]
    T += [Fraction(G[j, k], ONE**2) for j in range(p) for k in range(j + 1, p)]
    T += [Fraction(2 * G[j, j], ONE**2) for j in range(p)]
    T += [Fraction(s[p], ONE)]
    T += [Fraction(G[j, p], ONE**2) for j in range(p)]
    return T


def as_fractions(exact):
    return [Fraction(int(u), 2**ExactStatistic.SCALE_BITS) for u in exact.units]


def stats(X, y, **kw):
    return sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1), **kw)


# -- order, blocking, partitioning --------------------------------------------------------
def test_adversarial_orders_and_blocks_give_bit_identical_T(monkeypatch):
    X, y = adversarial(3000)
    order = orders(X)
    # The test can fail: the old float computation differs between these orders.
    floats = [float_gram(X[o], y[o]) for o in order.values()]
    assert not all(np.array_equal(floats[0], f) for f in floats[1:])
    reference = exact_reference(X, y, -np.ones(3), np.ones(3))
    for rows in (7, 1000, 1 << 17):
        monkeypatch.setattr(suff, "_BLOCK_ROWS", rows)
        for name, o in order.items():
            got = stats(X[o], y[o]).exact
            assert as_fractions(got) == reference, (rows, name)
    assert any(r != Fraction(float(r)) for r in reference)  # some exact values need more than 53 bits


def test_dask_chunkings_equal_numpy_bit_for_bit():
    da = pytest.importorskip("dask.array")
    X, y = adversarial(3000)
    ref = stats(X, y).exact.units
    o = orders(X)["reversed"]
    for chunks in (100, 1111, 3000):
        got = stats(da.from_array(X[o], chunks=(chunks, 1)), da.from_array(y[o], chunks=777)).exact
        assert np.array_equal(got.units, ref), chunks


def test_general_bounds_match_the_fraction_reference():
    # Non-dyadic data and bounds (clipping included): the same exact T in any order.
    rng = np.random.default_rng(SEED + 1)
    lo, hi = np.array([0.0, -3.7, 1.9]), np.array([1.9, 6.3, 7.7])
    X = rng.uniform(lo[:2] - 0.1, hi[:2] + 0.1, size=(1500, 2))
    y = rng.uniform(1.8, 7.8, size=1500)
    X[:3] = lo[:2]
    X[3:6] = hi[:2]  # the bounds themselves
    reference = exact_reference(X, y, lo, hi)
    for o in orders(X).values():
        got = sufficient_statistics(X[o], y[o], bounds_X=(lo[:2], hi[:2]), bounds_y=(lo[2], hi[2])).exact
        assert as_fractions(got) == reference


def test_huge_n_is_exact_where_float_sums_are_not(monkeypatch):
    # n = 2^22 rows: a base block of 2^12 adversarial rows repeated 2^10 times, in three orders.
    # The exact T is 2^10 times that of the base block (computed in fractions). Float sums of
    # the same rows differ between the orders (checked: the test can fail). Sum x^2 is ~2^54 in
    # units of 2^-64 (odd high limbs): a block of all 2^22 rows would round it, but blocks are
    # capped at 2^20 rows, so even _BLOCK_ROWS = 2^23 stays exact.
    X, y, reference = huge_n_data(1 << 10)
    by_size = np.argsort(np.abs(X[:, 0]), kind="stable")
    floats = []
    for o in (slice(None), by_size, by_size[::-1]):
        Xo, yo = X[o], y[o]
        floats.append(float_gram(Xo, yo))
        assert as_fractions(stats(Xo, yo).exact) == reference
    assert not all(np.array_equal(floats[0], f) for f in floats[1:])
    monkeypatch.setattr(suff, "_BLOCK_ROWS", 1 << 23)
    assert as_fractions(stats(X, y).exact) == reference  # one 2^22-row block would err here by 2^-22


def test_huge_n_on_dask_with_chunks_beyond_the_exact_block():
    # Dask chunks of 2.5 million rows (> 2^21: sum x^2 would pass 2^53 in one BLAS call) are
    # split into exact sub-blocks inside the task.
    da = pytest.importorskip("dask.array")
    X, y, reference = huge_n_data(1 << 10)
    for chunks in (2_500_000, 1 << 18):
        got = stats(da.from_array(X, chunks=(chunks, 1)), da.from_array(y, chunks=chunks)).exact
        assert as_fractions(got) == reference


def test_sums_of_blocks_beyond_int64_stay_exact():
    # No int64 limit on n: block partials are added as Python ints. Two partials whose sum
    # exceeds 2^63 (as 2^31 blocks of full records would) add exactly.
    q = 2
    big = np.full((2 * q + 1, 2 * q + 1), 3 * 2**61, dtype=object)
    total, n, n_clipped, n_bad = suff._sum_partials([(big, 1, 0, 0), (big + 1, 2, 3, 0)], q)
    assert total[0, 0] == 6 * 2**61 + 1 > 2**63 and isinstance(total[0, 0], int)
    assert (n, n_clipped, n_bad) == (3, 3, 0)


def test_on_lattice_refuses_quotients_beyond_2_53():
    G = np.array([[2**120, 0], [0, 0]], dtype=object)
    exact = ExactStatistic(G, [0, 0], 10)
    with pytest.raises(ValueError, match=r"coordinate 1 is beyond 2\^53 lattice steps.*its size is not shown"):
        exact.on_lattice(np.full(4, 2.0**-9))
    assert exact.on_lattice(np.full(4, 2.0**5))[0][1] == 2.0**57  # 2 * 2^120 / 2^64, a coarser lattice


# -- the scaling and the grid ---------------------------------------------------------------
@pytest.mark.parametrize("width", [1.9, 3.7, 6.3, 0.1, 1e-3, 123.456, 2.0**40 / 3])
def test_bounds_map_to_exactly_plus_minus_one(width):
    # For these widths (x - lo) * fl(2 / w) - 1 alone maps hi to 1 - 2^-52 (1.9, 3.7, 6.3).
    lo = np.array([-0.3])
    hi = lo + width
    x = np.array([[lo[0]], [hi[0]], [np.nextafter(hi[0], -np.inf)], [hi[0] + 1], [lo[0] - 1]])
    z, n_clipped = to_unit_box(x, lo, hi)
    assert z[:, 0].tolist()[:2] == [-1.0, 1.0] and z[3, 0] == 1.0 and z[4, 0] == -1.0
    assert np.all(np.abs(z) <= 1.0) and n_clipped == 2
    # Records at the bounds give T of records +-1 exactly: 2 records (lo, hi) and (hi, lo).
    got = sufficient_statistics(
        np.array([[lo[0]], [hi[0]]]), np.array([hi[0], lo[0]]), bounds_X=(lo, hi), bounds_y=(lo[0], hi[0])
    )
    assert got.T.tolist() == [0.0, 4.0, 0.0, -2.0]


def test_to_unit_box_never_leaves_the_box():
    rng = np.random.default_rng(SEED)
    lo = rng.uniform(-100, 100, size=2000)
    hi = lo + np.exp(rng.uniform(-10, 10, size=2000))
    x = np.stack([lo, hi, np.nextafter(hi, -np.inf), rng.uniform(lo, hi)])
    z, _ = to_unit_box(x, lo, hi)
    assert np.all(z[0] == -1.0) and np.all(z[1] == 1.0) and np.all(np.abs(z) <= 1.0)


def test_on_lattice_rounds_half_to_even_like_fractions():
    rng = np.random.default_rng(SEED)
    p = 2
    lay = RegressionLayout(p)
    for _ in range(50):
        gram = rng.integers(-(2**62), 2**62, size=(p + 1, p + 1)).astype(object) * rng.integers(1, 2**8)
        gram = gram + gram.T
        sums = rng.integers(-(2**40), 2**40, size=p + 1).astype(object)
        exact = ExactStatistic(gram, sums, 100)
        gamma = 2.0 ** rng.integers(-30, 3, size=lay.dim)
        # Put ties on the lattice's midpoints in some coordinates (both parities of the quotient).
        units = exact.units
        tie = [int((2 * k + 1) * Fraction(g) / 2 * 2**64) for k, g in zip(rng.integers(-9, 9, lay.dim), gamma)]
        G2 = gram.copy()
        G2[0, 1] = G2[1, 0] = tie[lay.cross[0]]
        exact = ExactStatistic(G2, sums, 100)
        units = exact.units
        want = [float(round(Fraction(int(u), 2**64) / Fraction(g)) * Fraction(g)) for u, g in zip(units, gamma)]
        assert exact.on_lattice(gamma)[0].tolist() == want
    assert round(Fraction(5, 2)) == 2 and round(Fraction(-5, 2)) == -2  # Python rounds ties to even


def test_on_lattice_checks_the_spacing():
    exact = ExactStatistic(np.zeros((2, 2), dtype=object), [0, 0], 1)
    with pytest.raises(ValueError, match="must hold positive powers of two. Got 0.3 at index 2"):
        exact.on_lattice([1.0, 1.0, 0.3, 1.0])
    with pytest.raises(ValueError, match=r"must have shape \(4,\)"):
        exact.on_lattice([1.0, 1.0])
    with pytest.raises(ValueError, match="powers of two"):
        exact.on_lattice([1.0, -1.0, 1.0, 1.0])


def test_units_of_every_layout_agree_with_the_float_layout():
    X, y = adversarial(500, p=3)
    exact = stats(X, y).exact
    Z, _ = to_unit_box(np.column_stack([X, y]), -np.ones(4), np.ones(4))
    Z = np.rint(Z * ONE) / ONE
    for neighbours in ("replace", "add_remove"):
        for square in (False, True):
            lay = RegressionLayout(3, neighbours, response_square=square)
            want = lay.from_gram(Z.T @ Z, Z.sum(axis=0), 500)
            assert_allclose(exact.with_layout(lay).value, want, rtol=1e-12, atol=1e-12)
            assert exact.with_layout(lay).units.shape == (lay.dim,)
    assert exact.with_layout(RegressionLayout(3, "add_remove")).units[0] == 500 * 2**64


# -- the release ----------------------------------------------------------------------------
def _tie_statistic(gamma):
    """An exact T whose cross coordinate is a lattice midpoint plus 2^-64: its double is the midpoint."""
    k = 2**20  # even: the double rounds down (ties to even), the exact value up
    gram = np.zeros((3, 3), dtype=object)
    gram[0, 1] = gram[1, 0] = int((2 * k + 1) * Fraction(gamma) / 2 * 2**64) + 1
    return ExactStatistic(gram, [0, 0, 0], 10), k


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_functional_mechanism_releases_the_exact_rounding(neighbours):
    ball, sens = _certified("linf", 2, neighbours, "paper", None)
    gamma = KNormMechanism(ball, sens, 1.0).lattice.spacing
    layout = RegressionLayout(2, neighbours)
    exact, k = _tie_statistic(gamma[layout.cross[0]])
    assert float(exact.value[RegressionLayout(2).cross[0]]) == (k + 0.5) * gamma[layout.cross[0]]
    kw = dict(p=2, norm="linf", epsilon=1.0, neighbours=neighbours, postprocess="pinv")
    got = functional_mechanism(exact, 10, rng=SEED, **kw).release
    floated = functional_mechanism(exact.value, 10, rng=SEED, **kw).release
    diff = (got.value - floated.value) / gamma
    # The exact T rounds up, its double (the midpoint) rounds to even, down: one step apart.
    assert diff[layout.cross[0]] == 1.0 and np.count_nonzero(diff) == 1
    assert "T summed exactly" in got.sampler and "T summed exactly" not in floated.sampler
    if neighbours == "replace":  # the released value is the exact rounding plus the same lattice noise
        same = functional_mechanism(exact.on_lattice(gamma)[0], 10, rng=SEED, **kw)
        assert np.array_equal(same.release.value, got.value)


def test_functional_mechanism_continuous_and_nonprivate_take_the_double():
    exact, _ = _tie_statistic(2.0**-9)
    kw = dict(p=2, norm="linf", epsilon=1.0, postprocess="pinv")
    cont = functional_mechanism(exact, 10, rng=SEED, sampler="continuous", **kw).release
    assert cont.sampler.startswith("continuous") and "exactly" not in cont.sampler
    with nonprivate():
        free = functional_mechanism(exact, 10, **kw).release
    assert np.array_equal(free.value, exact.value)


def test_functional_mechanism_checks_the_exact_statistic():
    exact, _ = _tie_statistic(2.0**-9)
    with pytest.raises(ValueError, match="must be the statistic of p=3 features. Got an ExactStatistic of p=2"):
        functional_mechanism(exact, 10, p=3, norm="linf", epsilon=1.0)
    with pytest.raises(
        ValueError, match=r"'n' parameter of functional_mechanism must equal the number of records of T. Got 11"
    ):
        functional_mechanism(exact, 11, p=2, norm="linf", epsilon=1.0)


@pytest.mark.parametrize("statistic", ["paper", "gram"])
def test_fit_matches_the_old_float_path_at_large_epsilon(statistic):
    # Utility: the grid moves each scaled value by <= 2^-33, so a fit at large epsilon is the
    # fit of the old float sums (same seed, same lattice noise) to far better than 1e-4.
    # (eps = 1000: beyond ~10^4 the l_inf lattice sampler is not practical and the release is continuous.)
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    y = X @ [0.5, -1.0, 2.0] + 0.3 * rng.standard_normal(20_000)
    kw = dict(bounds_X=(-1, 1), bounds_y=(-5, 5))
    new = LinearRegression(epsilon=1e3, norm="linf", statistic=statistic, random_state=7, **kw).fit(X, y)
    assert "T summed exactly" in new.release_.sampler
    Z, _ = to_unit_box(np.column_stack([X, y]), np.array([-1, -1, -1, -5.0]), np.array([1, 1, 1, 5.0]))
    T_old = RegressionLayout(3, response_square=statistic == "gram").from_data(Z[:, :3], Z[:, 3])
    old = functional_mechanism(
        T_old, len(X), p=3, norm="linf", epsilon=1e3, rng=7, statistic=statistic, floor_level=0.5
    ).coefficients(([-1.0] * 3, [1.0] * 3), (-5.0, 5.0))
    assert_allclose(new.coef_, old[0], rtol=1e-4)
    assert new.intercept_ == pytest.approx(old[1], abs=1e-4)
    assert math.isclose(np.max(np.abs(new.coef_ - [0.5, -1.0, 2.0])), 0.0, abs_tol=0.02)


def test_linear_regression_at_huge_epsilon_finishes_and_is_accurate():
    # The lattice spacing scales with 1/epsilon above 1 (default_share): at epsilon = 1e6 the
    # lattice pilot used to crawl (rate per lattice unit ~1e4) and the release was all rounding.
    from knorm.models import LinearRegression

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    y = X @ [0.5, -0.25, 0.1] + 0.1 * rng.standard_normal(20_000)
    # The split ball's rational polytope needs D >= 2^8 beta: at epsilon = 1e6 the default sampler refuses
    # (naming epsilon) rather than switch silently to binary64 noise; the continuous sampler is asked for.
    with pytest.raises(ValueError, match=r"'epsilon' parameter of KNormMechanism must be at most 2\^"):
        LinearRegression(epsilon=1e6, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=3).fit(X, y)
    fit = LinearRegression(epsilon=1e6, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=3, sampler="continuous").fit(
        X, y
    )
    ols = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[fit.intercept_, fit.coef_], ols, rtol=0, atol=2e-3)
