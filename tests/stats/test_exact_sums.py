"""Exact fixed-point sums of knorm.stats on a lattice release (Casacuberta et al. 2022).

Float sums of many records depend on their order and blocking, and their rounding can push
the difference of neighbouring statistics past the declared sensitivity. On a lattice
release each record is rounded to the fine grid q = gamma 2^-20, the integers are added
exactly in int64 and the sum is rounded to gamma in integer arithmetic: the statistic is
the same for every order and blocking, and the noise covers Delta plus the certified
error of that rounding.
"""

import numpy as np
import pytest

import knorm.stats as dp
from knorm._exact import FIXED_POINT_BITS, RecordSums
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism
from tests.settings import SEED

N = 1_000_000


@pytest.fixture(scope="module")
def adversarial():
    # Magnitudes from 1 down to 2^-60, in orders where sequential float sums lose the small ones.
    rng = np.random.default_rng(SEED)
    x = np.concatenate([[1.0, -1.0, 0.999999999], rng.uniform(-1, 1, N - 3) * 2.0 ** -rng.integers(0, 60, N - 3)])
    return np.column_stack([x, x[::-1].copy()])


LINF = LpBall(2, np.inf)


def _fixed(X, gamma, ball=LINF):
    return RecordSums((X, np.ones(X.shape[1]), True)).on_lattice(gamma, ball)


def test_float_sums_depend_on_the_order_and_fixed_point_sums_do_not(adversarial):
    X, gamma = adversarial, np.array([2.0**-20, 2.0**-18])
    orders = [np.arange(N), np.arange(N)[::-1], np.argsort(X[:, 0]), np.random.default_rng(SEED).permutation(N)]
    floats = {tuple(np.cumsum(X[o], axis=0)[-1]) for o in orders}  # sequential float sums
    assert len(floats) > 1, "the hazard: float sums of the same records differ with their order"
    exact = {tuple(_fixed(X[o], gamma)[0]) for o in orders}
    assert len(exact) == 1
    da = pytest.importorskip("dask.array")
    assert tuple(_fixed(da.from_array(X, chunks=(77_777, 2)), gamma)[0]) in exact  # any blocking
    # The result: gamma round(sum_i round(x_i / q) / 2^20), checked in Python integers.
    q = gamma / 2**FIXED_POINT_BITS
    units = [sum(int(u) for u in np.rint(X[:, j] / q[j])) for j in range(2)]
    expected = [round(u / 2**FIXED_POINT_BITS) * g for u, g in zip(units, gamma)]  # round half to even
    assert next(iter(exact)) == tuple(expected)


def test_neighbours_differ_within_delta_plus_the_covered_error(adversarial):
    X = adversarial
    release = dp.sum(X, (-1, 1), epsilon=1.0, rng=SEED)
    gamma = release.lattice_spacing
    assert gamma is not None and "exact fixed point" in release.sampler
    # Opposite corners, one half a grid step inside: per-record rounding at its worst.
    q = gamma / 2**FIXED_POINT_BITS
    a, b = np.array([1.0, -1.0]), np.array([-1.0, 1.0]) + q / 2 * np.array([1, -1])
    X1, X2 = X.copy(), X.copy()
    X1[0], X2[0] = a, b
    (t1, err), (t2, _) = _fixed(X1, gamma, release.ball), _fixed(X2, gamma, release.ball)
    d = (t1 - t2) / gamma  # lattice steps
    assert np.array_equal(d, np.rint(d))
    # Before the final rounding the difference is within Delta + err: the law covers Delta + err + slack,
    # strictly more than the same lattice without the computation's error.
    plain = KNormMechanism(release.ball, release.sensitivity, 1.0, lattice_spacing=gamma).lattice.sensitivity
    assert release.noise_scale * 1.0 > plain and release.noise_scale * 1.0 >= plain + err * (1 - 1e-9)
    assert 0 < err <= 1e-6 * release.sensitivity.value


def test_fixed_point_sums_stay_within_n_q_of_the_float_sums():
    rng = np.random.default_rng(SEED)
    X = rng.uniform(0, 1, (100_000, 2))
    gamma = np.array([2.0**-8, 2.0**-10, 2.0**-10, 2.0**-12, 2.0**-12])
    sums = RecordSums(RecordSums.exact(len(X)), (X, 1.0, True), (X * X, 1.0, False))
    got, err = sums.on_lattice(gamma, LpBall(5, np.inf))
    floats = sums.resolve()
    assert got[0] == len(X) and np.all(np.rint(got[1:] / gamma[1:]) * gamma[1:] == got[1:])
    # Per-record rounding to q adds at most n q / 2, then one rounding to gamma.
    assert np.all(np.abs(got[1:] - floats[1:]) <= len(X) * gamma[1:] / 2**FIXED_POINT_BITS / 2 + gamma[1:] / 2)
    assert err == pytest.approx(np.sum(gamma[1:] / 2**FIXED_POINT_BITS + np.array([0, 0, 1, 1]) * 2.0**-52), rel=1e-6)


def test_moments_and_covariance_release_exact_fixed_point_sums():
    X = np.random.default_rng(SEED).uniform(0, 1, (2000, 3))
    for release in (
        dp.var(X[:, 0], (0, 1), epsilon=1.0, rng=SEED),
        dp.mean_and_covariance(X, ([0] * 3, [1] * 3), epsilon=1.0, rng=SEED),
    ):
        raw = release.parent
        if raw.lattice_spacing is not None:
            assert "exact fixed point" in raw.sampler
            assert np.array_equal(raw.value, np.rint(raw.value / raw.lattice_spacing) * raw.lattice_spacing)


@pytest.mark.parametrize("block", [1, 7, 4096, 1 << 15, 1 << 22])
def test_sums_do_not_depend_on_the_block_size_nor_the_summation_path(adversarial, monkeypatch, block):
    """Blocks of any size give the same bits, on the float path (block sums below 2^53) and on the int64 one."""
    import knorm._exact as exact

    X = adversarial[: 200_000 if block >= 4096 else 20_000]  # tiny blocks: fewer rows (one Python step each)
    whole = RecordSums((X, np.ones(2), True))
    monkeypatch.setattr(exact, "_BLOCK_VALUES", block)
    for gamma in (np.array([2.0**-20, 2.0**-18]), np.array([2.0**-40, 2.0**-38])):  # the second: int64 halves
        q = gamma / 2**FIXED_POINT_BITS
        units = [sum(int(u) for u in np.rint(X[:, j] / q[j])) for j in range(2)]  # Python integers, one record each
        expected = [round(u / 2**FIXED_POINT_BITS) * g for u, g in zip(units, gamma)]
        assert whole.on_lattice(gamma, LINF)[0].tolist() == expected


def test_records_clip_block_by_block_like_the_clipped_data():
    """Records clips each block to the declared bounds: the sums are those of np.clip(x), bit for bit."""
    from knorm._exact import Records

    rng = np.random.default_rng(SEED)
    x = rng.normal(5, 4, (100_003, 1))  # a quarter outside [0, 10]
    gamma = np.array([2.0**-6, 2.0**-2])
    lo, hi = np.zeros(1), np.full(1, 10.0)
    lazy = RecordSums((Records(x, lo, hi, fn=lambda b: np.hstack([b, b * b]), width=2), [10.0, 100.0], [True, False]))
    c = np.clip(x, 0, 10)
    eager = RecordSums((np.hstack([c, c * c]), [10.0, 100.0], [True, False]))
    ball = LpBall(2, np.inf)
    (got, err), (want, want_err) = lazy.on_lattice(gamma, ball), eager.on_lattice(gamma, ball)
    assert np.array_equal(got, want) and err == want_err
    assert np.array_equal(lazy.resolve(), eager.resolve())


def test_mean_makes_no_copy_of_the_data():
    """The door scans and the sums read the data block by block: nothing of the data's size is allocated."""
    import tracemalloc

    x = np.random.default_rng(SEED).uniform(0, 10, 1_000_000)
    dp.mean(x, (0, 10), epsilon=1.0, rng=SEED)  # the choice of the ball is cached after this one
    tracemalloc.start()
    try:
        dp.mean(x, (-0.1, 9.9), epsilon=1.0, rng=SEED + 1)  # 1% clipped (block by block)
        dp.mean(x, (0, 10), epsilon=1.0, rng=SEED + 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * x.nbytes


def _rational_units(T, q):
    """sum_i round(T_ij / q_j) in exact rational arithmetic (round of a Fraction: half to even; no np.rint)."""
    from fractions import Fraction

    return [sum(round(Fraction(float(t)) / Fraction(float(q[j]))) for t in T[:, j]) for j in range(len(q))]


def _tricky_records(q, magnitude, n, rng):
    """Records that break a wrong grid rounding or a wrong recovery of wrapped sums, on the grid q.

    Exact ties k q + q / 2 (k even and odd, both signs), one double on either side of a
    tie, +-0, subnormals, the extremes +-magnitude in long runs (block sums near m U / 2),
    cancelling pairs of huge and tiny values, and uniform values spread over 60 binades.
    """
    k = rng.integers(-(2**20), 2**20, n)
    ties = (k + 0.5) * q
    near = np.nextafter(ties, rng.choice([-np.inf, np.inf], n))
    huge = rng.choice([-magnitude, magnitude], n)
    spread = rng.uniform(-1, 1, n) * magnitude * 2.0 ** -rng.integers(0, 60, n)
    special = rng.choice([0.0, -0.0, 5e-324, -5e-324, 2.0**-1022, q / 2, -q / 2, 1.5 * q, -2.5 * q], n)
    cancel = np.repeat(rng.choice([-magnitude, magnitude], n // 2), 2) * np.tile([1.0, -1.0], n // 2)
    runs = np.full(n, magnitude)  # one sign over whole blocks: block sums at their largest
    parts = [ties, near, huge, spread, special, cancel, runs, -runs]
    return np.clip(np.concatenate(parts), -magnitude, magnitude)


@pytest.mark.parametrize("q_exp", [-20, -40, -60])
def test_grid_sums_equal_exact_rational_rounding_on_adversarial_records(monkeypatch, q_exp):
    """Both exact paths (the bit patterns of t + 1.5 2^52 q, and the int64 halves) give the rational sums.

    With magnitude 2^-9: q = 2^-20 and 2^-40 have U = 2 magnitude / q + 1 below 2^50 (the bit
    path, its uint64 block sums wrapping many times), q = 2^-60 has U above 2^50 (the int64
    halves); blocks from 1 row to all of them.
    """
    import knorm._exact as exact

    rng = np.random.default_rng(SEED)
    q, magnitude = 2.0**q_exp, 2.0**-9
    x = _tricky_records(q, magnitude, 3000, rng)
    X = np.column_stack([x, rng.permutation(x)])
    expected = _rational_units(X, [q, 2 * q])
    for block in (1, 3, 1 << 12, 1 << 20):
        monkeypatch.setattr(exact, "_BLOCK_VALUES", block)
        units = exact._numpy_units(exact.Records(X), np.array([q, 2 * q]), np.array([magnitude, magnitude]))
        assert units == expected, block


@pytest.mark.parametrize("block", [1 << 15, 1 << 16])
def test_grid_sums_recover_block_sums_near_two_to_the_63(monkeypatch, block):
    """The bit path's uint64 sums wrap many times; block sums just under 2^63 come back exact.

    q = 2^-40 and records at magnitude q (2^48 - 1): U = 2^49 - 1. Blocks of 2^15 rows have
    m U = 2^64 - 2^15 (the bit path, sums of +-(2^63 - 2^15): the edge); blocks of 2^16 rows
    would reach 2^64 and take the int64 halves.
    """
    import knorm._exact as exact

    monkeypatch.setattr(exact, "_BLOCK_VALUES", block)
    q = 2.0**-40
    magnitude = q * (2.0**48 - 1)
    X = np.full((3 * block, 1), magnitude)
    X[block : 2 * block] *= -1  # the middle block: the most negative sum
    units = exact._numpy_units(exact.Records(X), np.array([q]), np.array([magnitude]))
    assert units == [block * (2**48 - 1)]  # +, -, + blocks of k = 2^48 - 1 each


def test_grid_sums_of_the_mean_focus_equal_exact_rational_rounding():
    """(sum u, sum u^2), u = (x - c) / w rounded as the mean computes it, on its lattice q = 2^-32, bit for bit."""
    from knorm._exact import Records
    from knorm.stats.moments import _Standardised

    rng = np.random.default_rng(SEED)
    lo, hi = -3.3, 7.1
    c, w = (lo + hi) / 2, hi - lo
    x = np.concatenate([rng.uniform(lo, hi, 20_000), [lo, hi, c, np.nextafter(c, hi)], rng.normal(c, 10, 1000)])
    rows = Records(x[:, None], np.array([lo]), np.array([hi]), fn=_Standardised(c, w), width=2)
    q = np.full(2, 2.0**-32)
    import knorm._exact as exact

    u = (np.clip(x, lo, hi) - c) / w
    assert exact._numpy_units(rows, q, np.array([4.0, 2.0])) == _rational_units(np.column_stack([u, u * u]), q)


def test_grid_sums_never_write_into_the_data():
    """The grid is put in place on the blocks the sums own (clipped or mapped), never on views of the data."""
    from knorm._exact import Records

    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, (50_000, 3))
    before = X.copy()
    gamma = np.full(3, 2.0**-10)
    for rows in (Records(X), Records(X, -np.ones(3), np.ones(3), clip=False), Records(X, fn=lambda b: b)):
        RecordSums((rows, 1.0, True)).on_lattice(gamma, LpBall(3, np.inf))
    dp.mean(X[:, 0], (-1, 1), epsilon=1.0, rng=SEED)
    dp.sum(X, (-1, 1), epsilon=1.0, rng=SEED)
    assert np.array_equal(X, before)
