"""Counts are integers, drawn exactly (issue 21, items 4 and 5): int64 values, exact integer noise, bounded edges."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

import knorm.stats as dp
from knorm.geometry import CountBall, HistogramBall, VoteBall
from knorm.mechanisms import build_lattice_law
from knorm.mechanisms.lattice import MAX_COUNT_RATE, _count_polytope
from tests.settings import ALPHA, SEED


def _releases(x, n, **kw):
    """n releases of dp.count(x) with fresh OS entropy (the publishing default), as one int array."""
    out = [dp.count(x, epsilon=1.0, **kw) for _ in range(n)]
    assert all(r.value.dtype == np.int64 for r in out)
    return np.array([r.value for r in out]), out[0]


def test_count_outputs_are_all_possible_under_the_neighbour():
    # The issue measured 43% of count(np.zeros(50)) outputs impossible under the neighbouring count 1 with
    # continuous binary64 noise. With integer noise every output is an integer, and every integer has
    # positive probability under the neighbour's law (a discrete Laplace around 1): 0 impossible outputs.
    zero, release = _releases(np.zeros(50), 2000)
    one, _ = _releases(np.r_[np.zeros(49), 1.0], 2000)
    assert release.caveats == () and "discrete Laplace" in release.sampler
    for draws in (zero, one):
        assert draws.dtype == np.int64
        assert np.all(draws == np.round(draws))  # every output is an integer, the support of both laws
    assert len(np.unique(zero)) > 5 and abs(one.mean() - zero.mean() - 1) < 0.3  # noise, centred on the count


def test_histogram_outputs_are_integers_that_sum_to_n():
    x = np.random.default_rng(SEED).uniform(0, 1, 300)
    for neighbours in ("replace", "add_remove"):
        values = np.array(
            [dp.histogram(x, np.linspace(0, 1, 6), epsilon=1.0, neighbours=neighbours).value for _ in range(300)]
        )
        assert values.dtype == np.int64
        if neighbours == "replace":
            assert np.all(values.sum(axis=1) == 300)


@pytest.mark.parametrize(
    "call",
    [
        lambda: dp.count(np.ones((20, 3)), epsilon=0.5),
        lambda: dp.count(np.eye(4)[[0, 1, 2, 3, 0]], epsilon=0.5, l0_bound=1, neighbours="replace"),
        lambda: dp.histogramdd(np.zeros((10, 2)), [[0, 1, 2], [0, 1, 2]], epsilon=1.0),
        lambda: dp.vote(np.array([[0, 1, 2], [2, 1, 0]]), epsilon=1.0),
        lambda: dp.vote(np.array([[0, 1, 2], [2, 1, 0]]), epsilon=1.0, neighbours="add_remove"),
    ],
)
def test_counts_and_votes_are_int64_with_exact_integer_noise(call):
    release = call()
    parent = release.parent or release
    assert release.value.dtype == np.int64
    assert parent.sampler.startswith("lattice, exact in integer arithmetic") and parent.caveats == ()


@pytest.mark.parametrize(("d", "k", "neighbours"), [(2, 1, "replace"), (3, 2, "add_remove"), (4, 2, "replace")])
def test_count_ball_polytope_is_the_ball_exactly(d, k, neighbours):
    ball = CountBall(d, k, neighbours=neighbours)
    P = _count_polytope(ball)
    pts = np.array(list(itertools.product(range(-3, 4), repeat=d)))
    exact = np.array([float(v) for v in P.norm(pts)])
    np.testing.assert_allclose(exact, ball.norm(pts.astype(float)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("d", "neighbours"), [(2, "replace"), (3, "add_remove"), (4, "replace"), (4, "add_remove")])
def test_vote_ball_polytope_is_the_ball_exactly(d, neighbours):
    ball = VoteBall(d, neighbours=neighbours)
    P = _count_polytope(ball)
    pts = np.array(list(itertools.product(range(-4, 5), repeat=ball.dim)))
    exact = np.array([float(v) for v in P.norm(pts)])
    np.testing.assert_allclose(exact, ball.norm(pts.astype(float)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_vote_density_ratio_of_neighbours_is_at_most_exp_epsilon_exactly(neighbours):
    d, eps = 3, Fraction(1, 2)
    ball = VoteBall(d, neighbours=neighbours)
    law = build_lattice_law(ball, 1.0, float(eps), spacing=1.0, on_lattice=True)
    rate = Fraction(law.noise.effective_rate)
    ranks = [np.array(p) for p in itertools.permutations(range(d))]
    if neighbours == "replace":
        diffs = [(a - b)[: d - 1] for a in ranks for b in ranks]
    else:
        diffs = [s * a for a in ranks for s in (1, -1)]
    outputs = np.array(list(itertools.product(range(-5, 6), repeat=ball.dim)))
    worst = max(max(rate * (law.noise.norm(outputs - u) - law.noise.norm(outputs))) for u in diffs)
    assert worst == rate <= eps


@pytest.mark.parametrize(("d", "k", "neighbours"), [(1, 1, "add_remove"), (3, 2, "add_remove"), (3, 1, "replace")])
def test_count_density_ratio_of_neighbours_is_at_most_exp_epsilon_exactly(d, k, neighbours):
    # P(o | c) / P(o | c') = exp(-r (||o - c||_K - ||o - c'||_K)) with the law's exact rate r and norm:
    # r (||o - c'|| - ||o - c||) <= r ||c - c'||_K <= eps for every neighbour difference c - c' in S_T.
    eps = Fraction(7, 10)
    ball = CountBall(d, k, neighbours=neighbours)
    law = build_lattice_law(ball, 1.0, float(eps), spacing=1.0, on_lattice=True)
    noise = law.noise
    rate = Fraction(noise.effective_rate)
    assert rate <= eps  # rounded down: only more noise
    records = [np.array(r) for r in itertools.product((0, 1), repeat=d) if sum(r) <= k]
    if neighbours == "replace":
        diffs = [a - b for a in records for b in records]
    else:
        diffs = [s * a for a in records for s in (1, -1)]
    c = np.zeros(d, dtype=np.int64)
    outputs = np.array(list(itertools.product(range(-3, 4), repeat=d)))
    worst = Fraction(0)
    for u in diffs:
        loss = rate * (noise.norm(outputs - (c + u)) - noise.norm(outputs - c))
        worst = max(worst, max(loss))
    # Attained up to the rate's rounding down (a 1-D count is drawn as an interval, whose radius is rational).
    assert eps * Fraction(99, 100) < worst <= eps


def test_histogram_density_ratio_of_neighbours_is_at_most_exp_epsilon_exactly():
    eps = 1.3
    law = build_lattice_law(HistogramBall(4), 1.0, eps, spacing=1.0, on_lattice=True)
    rate = Fraction(law.noise.effective_rate)
    outputs = np.array(list(itertools.product(range(-4, 5), repeat=3)))
    worst = Fraction(0)
    for a, b in itertools.permutations(range(4), 2):  # a record moves from bin a to bin b (reduced: first 3)
        u = np.zeros(4, dtype=np.int64)
        u[a], u[b] = 1, -1
        loss = rate * (law.noise.norm(outputs - u[:3]) - law.noise.norm(outputs))
        worst = max(worst, max(loss))
    assert worst == rate <= Fraction(eps)


def test_counts_and_votes_at_huge_epsilon_are_exact():
    # Before issue 21 a count at eps = 1e9 took 346 s (an O(x) loop in exp(-x)); the rate is capped at 64.
    X = (np.random.default_rng(SEED).random((40, 3)) < 0.5).astype(float)
    for eps in (1e9, 1e300):
        release = dp.count(np.ones(40), epsilon=eps)
        assert release.value.tolist() == [40] and release.caveats == ()
        for neighbours in ("add_remove", "replace"):  # the count ball's polytope law
            release = dp.count(X, epsilon=eps, neighbours=neighbours)
            assert release.value.tolist() == X.sum(axis=0).astype(int).tolist() and release.ball_name == "count ball"
        ballots = np.array([np.random.default_rng(i).permutation(4) for i in range(9)])
        release = dp.vote(ballots, epsilon=eps)
        assert release.value.tolist() == ballots.sum(axis=0).tolist()  # P(noise != 0) < 2 m exp(-64)
    law = build_lattice_law(CountBall(1, 1), 1.0, 1e300, spacing=1.0, on_lattice=True)
    assert Fraction(law.noise.effective_rate) <= MAX_COUNT_RATE


@pytest.mark.parametrize("owner", ["count", "histogram"])
def test_tiny_epsilon_is_refused_naming_epsilon(owner):
    # Below the exact discrete Laplace's floor, epsilon / Delta = 2^-46 (1.4e-14): refused, never continuous.
    with pytest.raises(ValueError, match=r"'epsilon' parameter of .* at least 2\^-4[56]"):
        if owner == "count":
            dp.count(np.ones(10), epsilon=1e-15)
        else:
            dp.histogram(np.zeros(10), [0, 1, 2, 3], epsilon=1e-15)


@pytest.mark.parametrize("eps", [1e-9, 1e-12])
def test_counts_at_tiny_epsilon_are_exact(eps):
    for release in (dp.count(np.ones(10), epsilon=eps), dp.histogram(np.zeros(10), [0, 1, 2, 3], epsilon=eps)):
        assert release.value.dtype == np.int64 and "exact" in release.sampler and release.caveats == ()


def test_small_epsilon_histogram_is_exact():
    release = dp.histogram(np.zeros(10), np.arange(101.0), epsilon=1e-6)
    assert release.value.dtype == np.int64 and release.value.sum() == 10 and release.parent.caveats == ()


@pytest.mark.parametrize(("bins", "eps"), [(700, 1.0), (10_000, 1.0), (100, 1e9), (2_000, 1e-3)])
def test_histograms_at_the_edges_are_exact_and_bounded(bins, eps):
    # Before issue 21: 700 bins raised OverflowError, eps = 1e9 took minutes (102 s at 100 bins).
    x = np.random.default_rng(SEED).uniform(0, 1, 500)
    release = dp.histogram(x, np.linspace(0, 1, bins + 1), epsilon=eps)
    assert release.value.dtype == np.int64 and release.value.sum() == 500
    assert "histogram ball" in release.parent.sampler and release.parent.caveats == ()


@pytest.mark.slow
@pytest.mark.parametrize("eps", [1.0, 1e-8])
def test_histogram_of_100000_bins_is_exact_and_bounded(eps):
    # Before issue 21: over 120 s. Now about sqrt(pi d) proposals of d - 1 discrete Laplaces (5.6e7 draws):
    # 4 to 12 s typically on 2 loaded cores, a geometric number of batches (tail to 37 s measured under load).
    x = np.random.default_rng(SEED).uniform(0, 1, 500)
    release = dp.histogram(x, np.linspace(0, 1, 100_001), epsilon=eps, rng=SEED)
    assert release.value.dtype == np.int64 and release.value.sum() == 500
    assert "histogram ball" in release.parent.sampler


@pytest.mark.parametrize(
    "ball", [CountBall(2, 2, neighbours="add_remove"), CountBall(2, 1), VoteBall(3, neighbours="replace")]
)
def test_induced_polytope_laws_match_the_exact_pmf(ball):
    # The exact polytope of the count and vote balls, with its exact box (tighter than the LP box):
    # chi-square of 200,000 draws against P(k) proportional to exp(-r ||k||_K), failure rate ALPHA.
    law = build_lattice_law(ball, 1.0, 0.9, spacing=1.0, on_lattice=True)
    rate = float(law.noise.effective_rate)
    grid = np.array(list(itertools.product(range(-40, 41), repeat=2)))
    weights = np.exp(-rate * np.array([float(v) for v in law.noise.norm(grid)]))
    p = weights / weights.sum()  # the tail beyond 40 lattice units is below exp(-30)
    inside = np.abs(grid).max(axis=1) <= 6
    draws = law.noise.sample(200_000, rng=SEED)
    index = {tuple(k): i for i, k in enumerate(grid[inside].tolist())}
    counts = np.zeros(inside.sum() + 1)
    for k in map(tuple, draws.tolist()):
        counts[index.get(k, len(index))] += 1
    expected = np.append(p[inside], p[~inside].sum()) * len(draws)
    assert sps.chisquare(counts, expected).pvalue > ALPHA


def test_exp_bracket_of_a_huge_argument_is_immediate_and_valid():
    # 2^prec exp(-x) < 1 for x >= prec: the bracket [0, 1] (the O(x) power loop took minutes at 5e8).
    from knorm.noise.discrete import _exp_neg_floor, _exp_neg_interval

    assert _exp_neg_interval(Fraction(5 * 10**8), 80) == (0, 1)
    assert _exp_neg_floor(Fraction(10**9, 3), 104) == 0
    for x in (Fraction(80), Fraction(81), Fraction(163, 2)):  # around the cut: both branches bracket exp(-x)
        lo, hi = _exp_neg_interval(x, 80)
        assert (
            lo <= hi and lo <= 2**80 * np.exp(-float(x)) * (1 + 1e-12) and hi >= 2**80 * np.exp(-float(x)) * (1 - 1e-12)
        )
