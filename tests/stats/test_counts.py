"""knorm.stats histograms, votes and counts: numpy's values, the exact balls of Joseph & Yu, scale."""

import itertools
import math

import numpy as np
import pytest
from scipy.spatial import ConvexHull

import knorm.stats as dp
from knorm.exceptions import ClippingWarning
from knorm.geometry import HistogramBall, LpBall
from knorm.sensitivity import vote_space
from tests.settings import SEED
from tests.stats._helpers import container, noiseless, record_values, sensitivity_space

EDGES = [0.0, 1.0, 2.5, 4.0, 10.0]


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(SEED).uniform(0, 10, 500)


@pytest.mark.parametrize(
    "kind, neighbours", [("numpy", "replace"), ("numpy", "add_remove"), ("pandas", "replace"), ("dask", "replace")]
)
def test_values_equal_numpy_without_noise(x, kind, neighbours):
    xs = np.concatenate([x, [0.0, 10.0, 2.5]])  # the edges: numpy's closed last bin, [a, b) elsewhere
    release = noiseless(dp.histogram, container(xs, kind), EDGES, epsilon=1.0, neighbours=neighbours)
    np.testing.assert_array_equal(release.value, np.histogram(xs, EDGES)[0])
    X = np.column_stack([xs, xs[::-1]])
    bins = [EDGES, [0, 5, 10]]
    release = noiseless(dp.histogramdd, container(X, kind), bins, epsilon=1.0, neighbours=neighbours)
    np.testing.assert_array_equal(release.value, np.histogramdd(X, bins)[0].ravel())
    ballots = np.argsort(np.random.default_rng(SEED).random((300, 5)), axis=1).astype(float)
    release = noiseless(dp.vote, container(ballots, kind), epsilon=1.0, neighbours=neighbours)
    np.testing.assert_array_equal(release.value, ballots.sum(axis=0))


def test_values_outside_the_edges_go_to_the_edge_bins_and_are_counted(x):
    # numpy drops them; a private histogram cannot (n is public under replace-one neighbours).
    xs = np.concatenate([x[:90], [-5.0] * 6, [20.0] * 4])
    with pytest.warns(ClippingWarning, match="10.0% of the values were outside"):
        release = noiseless(dp.histogram, xs, EDGES, epsilon=1.0)
    np.testing.assert_array_equal(release.value, np.histogram(np.clip(xs, 0, 10), EDGES)[0])


def test_histogram_under_replace_is_released_in_the_span_and_sums_to_n(x):
    release = dp.histogram(x, EDGES, epsilon=1.0, rng=SEED)
    assert release.parent.value.shape == (3,) and release.parent.ball_name == "histogram ball"
    assert repr(release.parent.ball) == "HistogramBall(n_categories=4)"
    assert release.value.sum() == pytest.approx(500, abs=1e-9)
    np.testing.assert_allclose(release.value[:3], release.parent.value)


def test_histogram_replace_hull_is_the_l1_ball_of_radius_2_in_the_sum_zero_plane():
    # S_T = {e_a - e_b}: in released coordinates its qhull volume is the ball's exact volume,
    # and on the plane sum u = 0 the ball's norm is ||u||_1 / 2.
    k = 5
    values = record_values(dp.histogram, np.arange(k)[:, None] + 0.5, bins=np.arange(k + 1.0), epsilon=1.0)
    u = sensitivity_space(values, "replace")
    ball = HistogramBall(k)
    assert float(ball.volume()) == pytest.approx(ConvexHull(u).volume, rel=1e-9)
    assert float(ball.volume()) == pytest.approx(math.comb(2 * k - 2, k - 1) / math.factorial(k - 1))
    full = np.random.default_rng(SEED).normal(size=(200, k))
    full -= full.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(ball.norm(ball.reduce(full)), np.abs(full).sum(axis=1) / 2)


def test_histogram_add_remove_hull_is_the_l1_ball_and_laplace_is_optimal(x):
    release = dp.histogram(x, EDGES, epsilon=1.0, neighbours="add_remove", rng=SEED)
    assert release.ball.cache_key == LpBall(4, 1).cache_key
    assert release.sensitivity.value == 1.0 and release.gain == 1.0


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_vote_ball_is_the_hull_of_the_permutation_differences(neighbours):
    d = 4
    ballots = np.array(list(itertools.permutations(range(d))), dtype=float)
    values = record_values(dp.vote, ballots, epsilon=1.0, neighbours=neighbours)
    u = sensitivity_space(values, neighbours)
    release = dp.vote(ballots, epsilon=1.0, neighbours=neighbours, rng=SEED)
    ball = release.parent.ball if release.parent is not None else release.ball
    assert release.value.dtype == np.int64 and ball.cache_key == vote_space(d, neighbours=neighbours).hull.cache_key
    assert ball.dim == (d - 1 if neighbours == "replace" else d)
    assert float(ball.volume()) == pytest.approx(ConvexHull(u).volume, rel=1e-9)
    assert np.asarray(ball.norm(u)).max() == pytest.approx(1.0)


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_count_ball_is_the_hull_of_the_l0_bounded_records(neighbours):
    d, k = 4, 2
    cube = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    records = cube[cube.sum(axis=1) <= k]
    values = record_values(dp.count, records, epsilon=1.0, l0_bound=k, neighbours=neighbours)
    u = sensitivity_space(values, neighbours)
    release = dp.count(records, epsilon=1.0, l0_bound=k, neighbours=neighbours, rng=SEED)
    assert float(release.ball.volume()) == pytest.approx(ConvexHull(u).volume, rel=1e-9)
    assert release.sensitivity.value == 1.0 and np.asarray(release.ball.norm(u)).max() == pytest.approx(1.0)


@pytest.mark.parametrize("k", [20, 100])
def test_histograms_and_votes_of_many_categories_release_in_the_affine_span(k):
    gen = np.random.default_rng(SEED)
    x = gen.uniform(0, 1, 400)
    release = dp.histogram(x, np.linspace(0, 1, k + 1), epsilon=1.0, rng=SEED)
    assert release.parent.value.shape == (k - 1,) and release.value.shape == (k,)
    assert release.value.sum() == pytest.approx(400, rel=1e-12)  # exact reconstruction of the last count
    assert release.gain > 1.0
    ballots = np.argsort(gen.random((60, k)), axis=1).astype(float)
    release = dp.vote(ballots, epsilon=1.0, rng=SEED)
    # Borda totals are integers: exact integer noise; the vote ball's exact polytope has 2^k rows, too many
    # here, so the first lattice-capable ball in the volume order is used, and the sampler says so
    assert release.parent.value.shape == (k - 1,) and release.parent.ball_name in ("l1", "l_inf")
    assert "'vote ball', first in the volume order" in release.parent.sampler and release.value.dtype == np.int64
    assert release.value.sum() == 60 * k * (k - 1) // 2
    counts = noiseless(dp.vote, ballots, epsilon=1.0).value
    np.testing.assert_array_equal(counts, ballots.sum(axis=0))


def test_counts_of_many_columns_release_with_the_count_ball():
    ones = (np.random.default_rng(SEED).random((100, 100)) < 0.02).astype(float)
    release = dp.count(ones, epsilon=1.0, l0_bound=10, rng=SEED)
    # The count ball is first in the volume order, but its exact polytope has too many rows at d = 100:
    # the first lattice-capable ball (l1) draws exact integer noise, and the sampler says so.
    assert release.ball_name == "l1" and "'count ball', first in the volume order" in release.sampler
    assert release.value.shape == (100,) and release.value.dtype == np.int64 and release.caveats == ()


@pytest.mark.parametrize("bad", [0.5, np.nan, np.inf, 1 - 2.0**-53, 2.0, -1.0])
def test_count_refuses_any_value_but_0_and_1_even_one_in_a_large_block(bad):
    X = np.zeros((70_000, 3))  # several row blocks of the one-pass check
    X[::7, 1] = 1.0
    X[66_000, 2] = bad
    with pytest.raises(ValueError, match="must hold 0/1 indicators"):
        dp.count(X, epsilon=1.0, rng=SEED)


def test_count_one_pass_counts_equal_the_column_sums():
    rng = np.random.default_rng(SEED)
    X = (rng.random((70_000, 4)) < 0.2).astype(float)
    release = noiseless(dp.count, X, epsilon=1.0)
    assert release.value.tolist() == X.sum(axis=0).astype(int).tolist()
