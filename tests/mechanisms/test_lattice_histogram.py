"""The exact lattice law of the histogram ball (replace-one counts): discrete Laplaces conditioned on a zero sum."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from knorm import stats
from knorm.geometry import HistogramBall
from knorm.mechanisms import KNormMechanism, build_lattice_law, choose_spacing
from knorm.mechanisms.lattice import HistogramLatticeNoise, _slack
from tests.settings import ALPHA, SEED


def _pmf_window(a, radius):
    """Exact pmf P(k) proportional to exp(-a (||k||_1 + |k_1 + k_2|)) on the window |k_j| <= radius (d = 3)."""
    grid = np.arange(-radius, radius + 1)
    k1, k2 = np.meshgrid(grid, grid, indexing="ij")
    w = np.exp(-a * (np.abs(k1) + np.abs(k2) + np.abs(k1 + k2)))
    total = sum(
        math.exp(-a * (abs(i) + abs(j) + abs(i + j))) for i in range(-400, 401) for j in range(-400, 401)
    )  # the whole lattice (the tail beyond 400 is below 1e-100 at a >= 0.3)
    return k1, k2, w / total


def test_chi_square_against_the_exact_pmf():
    # Failure rate ALPHA under a correct sampler (fixed seed: deterministic in CI).
    law = build_lattice_law(HistogramBall(3), 1.0, 0.8, spacing=1.0, on_lattice=True)
    a = float(law.noise.effective_rate) / 2  # per lattice unit of ||z||_1
    draws = law.noise.sample(200_000, rng=SEED)
    k1, k2, p = _pmf_window(a, 6)
    idx = {(i, j): n for n, (i, j) in enumerate(zip(k1.ravel(), k2.ravel()))}
    counts = np.zeros(len(idx) + 1)
    for i, j in draws:
        counts[idx.get((i, j), len(idx))] += 1
    expected = np.append(p.ravel(), 1 - p.sum()) * len(draws)
    assert sps.chisquare(counts, expected).pvalue > ALPHA


def test_acceptance_matches_quadrature():
    law = build_lattice_law(HistogramBall(10), 1.0, 1.0, spacing=1.0, on_lattice=True)
    law.noise.sample(50_000, rng=SEED)
    stats_ = law.noise.sampler_stats
    p, n = law.noise.expected_acceptance, stats_.proposed
    assert abs(stats_.accepted / n - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_slack_is_exact_and_spacings_must_be_equal():
    # sup over |w_j| <= gamma of (||w||_1 + |sum w|) / 2 is (d - 1) gamma, at w = gamma 1; brute force
    # over the corners of the box (the norm is convex, so the sup is at a corner).
    gamma = np.full(4, 0.25)
    corners = np.array(list(np.ndindex(*[2] * 4))) * 0.5 - 0.25
    brute = max((np.abs(w).sum() + abs(w.sum())) / 2 for w in corners)
    assert _slack(HistogramBall(5), gamma) == Fraction(brute) == 1
    gamma = choose_spacing(HistogramBall(5), 1.0)
    assert float(_slack(HistogramBall(5), gamma)) <= 0.005
    with pytest.raises(ValueError, match="equal spacings"):
        HistogramLatticeNoise(HistogramBall(3), np.array([1.0, 0.5]), Fraction(1))


@pytest.mark.parametrize("bins", [10, 100])
def test_replace_one_histograms_release_on_the_lattice(bins):
    x = np.random.default_rng(SEED).uniform(0, 1, 2000)
    r = stats.histogram(x, np.linspace(0, 1, bins + 1), epsilon=1.0, rng=1)
    assert "conditioned on a zero sum" in r.parent.sampler and r.parent.caveats == ()
    assert r.value.sum() == 2000 and np.array_equal(r.value, np.round(r.value))


def test_mechanism_density_ratio_on_neighbours_is_exp_epsilon():
    # Neighbours move one record between bins: counts differ by e_a - e_b (reduced coordinates).
    mech = KNormMechanism(HistogramBall(4), 1.0, 0.7, lattice_spacing=1.0, on_lattice=True)
    rate = mech.lattice.noise.effective_rate
    c = np.array([5, 3, 9])
    for u in ([1, -1, 0], [1, 0, 0], [0, -1, 0]):
        c2 = c + np.array(u)
        worst = max(
            rate
            * Fraction(int(np.abs(o - c2).sum() + abs((o - c2).sum()) - np.abs(o - c).sum() - abs((o - c).sum())), 2)
            for o in (c + np.array(v) for v in np.ndindex(7, 7, 7))
        )
        assert worst <= Fraction(0.7)
