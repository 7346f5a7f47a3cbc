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

    X = adversarial[:200_000]
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
