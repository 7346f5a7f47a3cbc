"""The edges of the parameter space (issue 21, item 5): exact and bounded, or refused naming the parameter.

A default release never switches silently to continuous binary64 noise: at an extreme but
legal epsilon it is either the exact lattice release (no caveat) or a ValueError that names
'epsilon', the range served and the explicit opt-in (sampler='continuous').
"""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

import knorm.stats as dp
from knorm import KNormMechanism, LpBall
from knorm.models import LinearRegression
from knorm.noise import discrete

EPSILONS = (1e-12, 1e-10, 3e-10, 1e-9, 1e6, 1e9)
_RNG = np.random.default_rng(20261126)
X1 = _RNG.uniform(0, 1, 60)
XR = _RNG.uniform(0, 1, (60, 2))
YR = XR @ [1.0, -0.5] + 0.1 * _RNG.standard_normal(60)


def _release(what, eps):
    if what == "l1":
        return KNormMechanism(LpBall(1, 1), 1.0, eps).release([0.5], rng=1)
    if what == "l_inf":
        return KNormMechanism(LpBall(3, math.inf), 1.0, eps).release([0.5, 0.1, 0.2], rng=1)
    if what == "mean":
        return dp.mean(X1, (0, 1), epsilon=eps, rng=1)
    if what == "var":
        return dp.var(X1, (0, 1), epsilon=eps, rng=1)
    if what == "count":
        return dp.count((X1 > 0.5).astype(float), epsilon=eps, rng=1)
    if what == "sum":
        return dp.sum(X1, (0, 1), epsilon=eps, rng=1)
    fit = LinearRegression(epsilon=eps, bounds_X=(0, 1), bounds_y=(-1, 2), random_state=1).fit(XR, YR)
    return fit.release_


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("what", ["l1", "l_inf", "mean", "var", "count", "sum", "LinearRegression"])
def test_extreme_epsilon_is_exact_or_refused_naming_epsilon(what, eps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping and fixed-seed warnings are not the point here
        try:
            release = _release(what, eps)
        except ValueError as err:
            message = str(err)
            assert "'epsilon' parameter" in message, message
            assert "sampler='continuous'" in message or "smaller epsilon" in message, message
            return
    assert release.sampler.startswith("lattice, exact"), release.sampler
    assert not release.caveats, release.caveats
    assert np.all(np.isfinite(release.value))


def test_the_refusal_states_the_served_bound_and_it_is_served():
    # l1: the per-unit rate of the default lattice must stay at or above 2^-46.
    with pytest.raises(ValueError, match=r"'epsilon' parameter of KNormMechanism must be at least 2\^(-\d+)") as info:
        KNormMechanism(LpBall(1, 1), 1.0, 1e-12).release([0.5], rng=1)
    k = int(info.value.args[0].split("at least 2^")[1].split(" ")[0])
    assert KNormMechanism(LpBall(1, 1), 1.0, 2.0**k).release([0.5], rng=1).sampler.startswith("lattice, exact")
    # The explicit opt-in still works, with its caveat.
    cont = KNormMechanism(LpBall(1, 1), 1.0, 1e-12, sampler="continuous").release([0.5], rng=1)
    assert cont.caveats and cont.sampler.startswith("continuous")


@pytest.mark.parametrize("eps", [3e-10, 1e-9])
def test_l1_release_at_tiny_epsilon_allocates_little(eps):
    # Before: an inversion table of ~5.5 / rate entries (2.4 GB at 1e-9, MemoryError at 3e-10).
    mech = KNormMechanism(LpBall(1, 1), 1.0, eps)
    tracemalloc.start()
    try:
        release = mech.release([0.5], rng=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert release.sampler.startswith("lattice, exact")
    assert peak < 64 * 2**20, peak


@pytest.mark.parametrize("s, t", [(1, 2**40), (3, 2**46), (5, 2**30)])
def test_tiny_dyadic_rates_use_a_small_table(s, t):
    draws = discrete.discrete_laplace(s, t, 1000, rng=5)
    assert draws.dtype == np.int64
    tau = t.bit_length() - 1
    j = discrete._block_bits(s, tau, cap=tau)
    assert j > discrete._MAX_BLOCK_BITS  # the wide path
    assert discrete._geometric_table(s << j, 1 << tau).qstar < 1024  # rate in (2^-6, 2^-5]: about 350 entries


@pytest.mark.parametrize("signed", [False, True])
def test_wide_block_path_has_the_exact_law(signed):
    # The wide path (R drawn separately, Q from a small table) at parameters small enough for a
    # chi-square over every atom: rate 2^-8 with a block 2^3 (beta = 2^-5).
    s, tau, j, n = 1, 8, 3, 400_000
    g = discrete._wide_dyadic(s, tau, j, n, np.random.default_rng(11), signed)
    rate = s / 2**tau
    q = math.exp(-rate)
    top = 600
    support = np.arange(-top, top + 1) if signed else np.arange(top + 1)
    pmf = q ** np.abs(support) * ((1 - q) / (1 + q) if signed else (1 - q))
    observed = np.array([np.sum(g == v) for v in support], dtype=float)
    expected = n * pmf
    tail_obs, tail_exp = n - observed.sum(), n - expected.sum()
    chi2 = np.sum((observed - expected) ** 2 / expected) + (tail_obs - tail_exp) ** 2 / tail_exp
    assert stats.chi2.sf(chi2, len(support)) > 1e-4


def test_tiny_rate_geometric_matches_its_exponential_tail():
    # Rate 2^-30 takes the wide path (block 2^25): P(G >= g) = exp(-rate g) exactly.
    rate = 2.0**-30
    g = discrete.geometric(1, 2**30, 100_000, rng=13) * rate
    assert stats.kstest(g, stats.expon.cdf).pvalue > 1e-4


def test_one_dimensional_balls_use_the_discrete_laplace():
    release = dp.mean(X1, (0, 1), epsilon=1e-9, rng=2)  # an OverflowError in the polytope pilot before
    assert "discrete Laplace" in release.sampler and not release.caveats


def test_fixed_point_sums_at_huge_epsilon_are_exact_for_many_records():
    x = np.random.default_rng(4).uniform(0, 1, 5000)
    release = dp.sum(x, (0, 1), epsilon=1e9, rng=4)  # 5000 records refused before (one int64 sum)
    assert release.sampler.startswith("lattice, exact") and not release.caveats
    assert abs(float(release.value[0]) - x.sum()) < 1e-3
