"""Tests of the chunked regression statistic (paper Section 5.1) on numpy, pandas and Dask."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import knorm.models.sufficient as suff
from knorm.models._base import to_unit_box
from knorm.models.linear import LinearRegression
from knorm.models.sufficient import GRID_BITS, ExactStatistic, sufficient_statistics
from knorm.sensitivity import RegressionLayout
from tests.settings import SEED

LO, HI = np.array([-1.0, 0.0, 10.0]), np.array([1.0, 5.0, 20.0])
BY = (-20.0, 20.0)


def make_data(n=3000, seed=SEED):
    """Features slightly wider than the bounds, so that some entries are clipped."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(LO - 0.05 * (HI - LO), HI + 0.05 * (HI - LO), size=(n, 3))
    y = X @ [2.0, -1.0, 0.5] + 3 * rng.standard_normal(n)
    return X, y


def reference(X, y, grid=True):
    """The layout's float statistic of the scaled records, rounded to the grid 2^-32 (``grid``)."""
    Xs, cx = to_unit_box(X, LO, HI)
    ys, cy = to_unit_box(y[:, None], np.array([BY[0]]), np.array([BY[1]]))
    if grid:  # the records that the exact statistic sums (ExactStatistic, Notes)
        Xs, ys = (np.rint(v * 2.0**GRID_BITS) / 2.0**GRID_BITS for v in (Xs, ys))
    return RegressionLayout(3).from_data(Xs, ys[:, 0]), cx + cy


def test_numpy_matches_layout_and_counts_clipping():
    X, y = make_data()
    T, n_clip = reference(X, y)
    stats = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    # The float sums of the reference err by ~1e-13 relative; the exact T is rounded once.
    assert_allclose(stats.T, T, rtol=1e-12, atol=1e-9)
    # The grid moves each scaled value by at most 2^-33: an entry of T by at most 2 n (2^-32 + 2^-66).
    assert_allclose(stats.T, reference(X, y, grid=False)[0], rtol=0, atol=len(X) * 2.0**-30)
    assert stats.n_samples == len(X)
    assert stats.n_clipped == n_clip > 0
    # Direct count: entries outside the declared box.
    assert n_clip == np.count_nonzero((X < LO) | (X > HI)) + np.count_nonzero((y < BY[0]) | (y > BY[1]))


def test_result_unpacks_as_before_and_carries_the_exact_statistic():
    import pickle

    X, y = make_data(200)
    stats = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    T, n, n_clipped = stats  # three values, as before the exact statistic was added
    assert isinstance(stats.exact, ExactStatistic) and stats.exact.layout.names == RegressionLayout(3).names
    assert np.array_equal(T, stats.exact.value) and np.array_equal(np.asarray(stats.exact), T)
    assert (n, n_clipped) == (stats.exact.n_samples, stats.n_clipped) == (200, stats.n_clipped)
    back = pickle.loads(pickle.dumps(stats))  # the experiments ship it to worker processes
    assert np.array_equal(back.exact.units, stats.exact.units) and np.array_equal(back.T, T)


def test_block_loop_matches_one_block(monkeypatch):
    import knorm.models.sufficient as suff

    X, y = make_data()
    whole = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    monkeypatch.setattr(suff, "_BLOCK_ROWS", 257)
    blocks = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    assert np.array_equal(blocks.exact.units, whole.exact.units)  # exact: bit for bit
    assert_allclose(blocks.T, whole.T, rtol=0, atol=0)
    assert (blocks.n_samples, blocks.n_clipped) == (whole.n_samples, whole.n_clipped)


def test_pandas_equals_numpy():
    X, y = make_data()
    a = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    b = sufficient_statistics(pd.DataFrame(X, columns=["a", "b", "c"]), pd.Series(y), bounds_X=(LO, HI), bounds_y=BY)
    assert_allclose(b.T, a.T, rtol=0, atol=0)
    assert (b.n_samples, b.n_clipped) == (a.n_samples, a.n_clipped)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rejected(bad):
    X, y = make_data(50)
    X[7, 1] = bad
    with pytest.raises(ValueError, match=r"'X' parameter of sufficient_statistics must .*Got 1 (NaN|infinite) value"):
        sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    X[7, 1], y[3], y[4] = 0.0, bad, bad
    with pytest.raises(ValueError, match=r"'y' parameter of sufficient_statistics must .*Got 2 (NaN|infinite) value"):
        sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)


def test_shape_and_bounds_errors():
    X, y = make_data(50)
    with pytest.raises(ValueError, match="must be X of shape"):
        sufficient_statistics(X, y[:-1], bounds_X=(LO, HI), bounds_y=BY)
    with pytest.raises(ValueError, match="2-D"):
        sufficient_statistics(X[:, 0], y, bounds_X=(-1, 1), bounds_y=BY)
    with pytest.raises(ValueError, match="'bounds_X' parameter of sufficient_statistics must be given"):
        sufficient_statistics(X, y, bounds_X=None, bounds_y=BY)
    with pytest.raises(ValueError, match="lower < upper"):
        sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=(1, -1))
    with pytest.raises(ValueError, match="arrays of length 3"):
        sufficient_statistics(X, y, bounds_X=([0, 0], [1, 1]), bounds_y=BY)


# -- Dask ----------------------------------------------------------------------------------
def test_dask_array_equals_numpy():
    da = pytest.importorskip("dask.array")
    X, y = make_data()
    a = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    # Misaligned chunks on purpose: X by 700 rows and 2 columns, y by 900 rows.
    b = sufficient_statistics(
        da.from_array(X, chunks=(700, 2)), da.from_array(y, chunks=900), bounds_X=(LO, HI), bounds_y=BY
    )
    assert_allclose(b.T, a.T, rtol=0, atol=0)  # exact sums: the blocking does not matter
    assert (b.n_samples, b.n_clipped) == (a.n_samples, a.n_clipped)


def test_dask_dataframe_equals_numpy():
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    X, y = make_data()
    a = sufficient_statistics(X, y, bounds_X=(LO, HI), bounds_y=BY)
    ddf = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=4)
    for y_dask in (dd.from_pandas(pd.Series(y), npartitions=4), da.from_array(y, chunks=1000)):
        b = sufficient_statistics(ddf, y_dask, bounds_X=(LO, HI), bounds_y=BY)
        assert_allclose(b.T, a.T, rtol=0, atol=0)
        assert (b.n_samples, b.n_clipped) == (a.n_samples, a.n_clipped)


def test_dask_non_finite_rejected():
    da = pytest.importorskip("dask.array")
    X, y = make_data(500)
    X[321, 2] = np.nan
    with pytest.raises(ValueError, match="'X' parameter of sufficient_statistics must not hold NaN.*Got 1 NaN"):
        sufficient_statistics(
            da.from_array(X, chunks=100), da.from_array(y, chunks=100), bounds_X=(LO, HI), bounds_y=BY
        )


@pytest.fixture
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.mark.filterwarnings("ignore::knorm.exceptions.ClippingWarning")  # the data leave the bounds on purpose
def test_fit_on_distributed_cluster_equals_numpy(dask_client):
    da = pytest.importorskip("dask.array")
    X, y = make_data(20_000)
    Xd, yd = da.from_array(X, chunks=(3000, 3)), da.from_array(y, chunks=3000)
    assert Xd.numblocks[0] > 1
    params = dict(epsilon=1.0, norm="linf", bounds_X=(LO, HI), bounds_y=BY, random_state=SEED)
    a = LinearRegression(**params).fit(X, y)
    b = LinearRegression(**params).fit(Xd, yd)
    assert_allclose(b.statistic_noisy_, a.statistic_noisy_, rtol=0, atol=0)  # exact sums, same noise
    assert_allclose(b.coef_, a.coef_, rtol=0, atol=0)
    assert_allclose(b.intercept_, a.intercept_, rtol=0, atol=0)
    assert (b.n_samples_, b.fit_diagnostics_.n_clipped, b.n_features_in_) == (
        a.n_samples_,
        a.fit_diagnostics_.n_clipped,
        3,
    )
    pred = b.predict(Xd)
    assert isinstance(pred, da.Array)
    assert_allclose(pred.compute(), a.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore::knorm.exceptions.ClippingWarning")  # the data leave the bounds on purpose
def test_fit_on_dask_dataframe_keeps_feature_names():
    dd = pytest.importorskip("dask.dataframe")
    X, y = make_data(2000)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    params = dict(norm="linf", bounds_X=(LO, HI), bounds_y=BY, random_state=SEED)
    a = LinearRegression(**params).fit(df, y)
    b = LinearRegression(**params).fit(dd.from_pandas(df, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3))
    assert list(b.feature_names_in_) == ["a", "b", "c"]
    assert_allclose(b.coef_, a.coef_, rtol=1e-9)
    assert_allclose(b.predict(df), a.predict(df), rtol=1e-9)


def test_dask_blocks_shared_by_x_and_y_are_computed_once():
    da = pytest.importorskip("dask.array")
    import threading

    import dask

    from knorm.models.sufficient import sufficient_statistics

    calls = []
    lock = threading.Lock()

    def block(i):
        with lock:
            calls.append(i)
        rng = np.random.default_rng(i)
        return np.column_stack([rng.uniform(-1, 1, (50, 2)), rng.uniform(-1, 1, 50)])

    parts = [da.from_delayed(dask.delayed(block)(i), shape=(50, 3), dtype=float) for i in range(4)]
    Z = da.concatenate(parts)
    sufficient_statistics(Z[:, :2], Z[:, 2], bounds_X=(-1, 1), bounds_y=(-1, 1))
    assert sorted(calls) == [0, 1, 2, 3]


@pytest.mark.parametrize("rows", [1, 3, 1000])
def test_values_far_outside_the_bounds_are_clipped_and_counted_in_any_block(monkeypatch, rows):
    """Finite values far outside the bounds (whose mapped value overflows) are clipped like to_unit_box does."""
    rng = np.random.default_rng(7)
    X, y = rng.uniform(-2, 2, (2000, 2)), rng.uniform(-3, 3, 2000)
    X[5, 0], X[6, 1], y[7] = 1e308, -1e308, -1.7e308
    lo, hi = np.array([-1.0, -1.0, -2.0]), np.array([1.0, 1.0, 2.0])
    Z, clipped = to_unit_box(np.column_stack([X, y]), lo, hi)
    V = np.rint(Z * 2.0**GRID_BITS).astype(np.int64).astype(object)  # the records on the grid, as integers
    monkeypatch.setattr(suff, "_BLOCK_ROWS", rows)
    stats = sufficient_statistics(X, y, bounds_X=(lo[:2], hi[:2]), bounds_y=(lo[2], hi[2]))
    assert stats.n_clipped == clipped
    assert stats.exact._gram.tolist() == (V.T @ V).tolist() and stats.exact._sums.tolist() == V.sum(axis=0).tolist()
