"""The audit's statistics: Clopper-Pearson bounds, calibration of the false-alarm rate, API."""

import math

import numpy as np
import pytest
from scipy import stats

from knorm import KNormMechanism, LpBall
from knorm.audit import (
    AuditResult,
    NeighbourPair,
    audit_mechanism,
    audit_pairs,
    audit_samplers,
    clopper_pearson,
    eps_lower_bound,
)
from tests.settings import ALPHA, SEED


def laplace(loc, scale=1.0):
    return lambda n, rng: loc + scale * rng.laplace(size=n)


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (517, 4000), (1, 1)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    # Two one-sided bounds at error b each form the two-sided exact interval of level 1 - 2b.
    lo, hi = clopper_pearson(k, n, 0.025)
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert float(lo) == pytest.approx(ci.low, abs=1e-12)
    assert float(hi) == pytest.approx(ci.high, abs=1e-12)


def test_clopper_pearson_is_vectorised_and_monotone():
    k = np.arange(0, 101)
    lo, hi = clopper_pearson(k, 100, 1e-3)
    assert lo.shape == hi.shape == (101,)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0) and np.all(lo < k / 100 + 1e-15)
    assert lo[0] == 0.0 and hi[-1] == 1.0


def test_eps_lower_bound_limits_and_delta():
    assert eps_lower_bound(0, 100, 50, 100, 0.01) == -math.inf
    # With infinite data the bound tends to the log of the true ratio.
    assert eps_lower_bound(5 * 10**8, 10**9, 10**8, 10**9, 1e-3) == pytest.approx(math.log(5), abs=2e-3)
    assert eps_lower_bound(500, 1000, 100, 1000, 0.01, delta=0.2) < eps_lower_bound(500, 1000, 100, 1000, 0.01)


def test_bound_is_close_to_eps_for_laplace():
    # 1-D Laplace(1) on neighbours 0 and 1 is exactly 1-DP, the loss attained on half-lines.
    res = audit_samplers(
        laplace(0.0), laplace(1.0), claimed_epsilon=1.0, n_samples=200_000, confidence=1 - ALPHA, rng=SEED
    )
    assert res.passed and 0.93 < res.eps_lower <= 1.0
    assert res.event is not None and res.event.eps_lower == res.eps_lower
    assert len(res.events) <= 3 and res.n_test == 150_000 and res.n_select == 50_000


def test_identical_outputs_give_a_zero_bound():
    same = laplace(0.0)
    res = audit_samplers(same, same, claimed_epsilon=0.0, n_samples=50_000, confidence=1 - ALPHA, rng=SEED)
    assert res.eps_lower < 0.05  # no event separates two identical laws
    assert res.eps_lower >= 0.0


def test_false_alarm_rate_is_at_most_one_minus_confidence():
    # Calibration of the whole procedure (selection split + Bonferroni + CP) on a
    # mechanism whose best events attain its eps exactly, where the bound is
    # tightest: 300 audits at confidence 0.8 must not violate eps = 1 more often
    # than 20% of the time. The binomial test fails a calibrated audit with
    # probability <= ALPHA.
    runs, conf = 300, 0.8
    seeds = np.random.SeedSequence(SEED).spawn(runs)
    audits = (
        audit_samplers(laplace(0.0), laplace(1.0), n_samples=4000, confidence=conf, n_thresholds=32, rng=s)
        for s in seeds
    )
    flagged = sum(res.violates(1.0) for res in audits)
    assert stats.binomtest(flagged, runs, 1 - conf, alternative="greater").pvalue > ALPHA


def test_selection_chooses_among_pairs_and_shares_first_sampler():
    calls = []

    def sample_a(n, rng):
        calls.append(n)
        return rng.laplace(size=n)

    weak = NeighbourPair(sample_a, laplace(0.2), label="weak")
    strong = NeighbourPair(sample_a, laplace(2.0), label="strong")
    res = audit_pairs([weak, strong], n_samples=40_000, n_final=1, rng=SEED)
    assert res.event.pair == "strong" and res.eps_lower > 1.6
    assert calls == [10_000, 30_000]  # one draw per split, shared by both pairs


def test_generic_mechanism_without_ball_and_default_statistics():
    class TwoDimLaplace:
        epsilon = 1.0

        def release(self, values, rng=None):
            v = np.asarray(values, float)
            return v + np.random.default_rng(rng).laplace(size=v.shape)

    mech = TwoDimLaplace()
    res = audit_mechanism(mech, [0.0, 0.0], [1.0, 0.0], n_samples=60_000, rng=SEED)
    assert res.claimed_epsilon == 1.0 and res.passed and res.eps_lower > 0.8
    # samplers only, default statistics fitted on the selection split (mean difference, coordinates)
    res = audit_samplers(
        lambda n, rng: rng.laplace(size=(n, 2)),
        lambda n, rng: [0.0, 3.0] + rng.laplace(size=(n, 2)),
        n_samples=60_000,
        rng=SEED,
    )
    assert res.violates(1.0) and res.claimed_epsilon is None and res.verdict == "n/a"


def test_same_seed_same_result():
    mech = KNormMechanism(LpBall(2, 2), 1.0, 1.0)
    a = audit_mechanism(mech, [0.0, 0.0], [1.0, 0.0], n_samples=20_000, rng=123)
    b = audit_mechanism(mech, [0.0, 0.0], [1.0, 0.0], n_samples=20_000, rng=123)
    assert a.eps_lower == b.eps_lower and a.event == b.event


def test_result_api():
    res = audit_samplers(laplace(0.0), laplace(1.0), n_samples=10_000, rng=SEED)
    assert isinstance(res, AuditResult)
    with pytest.raises(ValueError, match="claimed epsilon"):
        res.passed
    assert res.violates(0.0) is True and res.violates(math.inf) is False
    assert "eps >=" in str(res) and "P_" in res.event.description


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"confidence": 1.0},
            r"The 'confidence' parameter of audit_pairs must be a float in the range \(0, 1\). Got 1.0",
        ),
        ({"n_samples": 10}, "The 'n_samples' parameter of audit_pairs must be large enough"),
        ({"claimed_epsilon": -1}, "The 'claimed_epsilon' parameter of audit_pairs must be None or a float"),
        ({"delta": 1.0}, "The 'delta' parameter of audit_pairs must be a float in the range \\[0, 1\\)"),
        ({"n_final": 0}, "The 'n_final' parameter of audit_pairs must be an int >= 1"),
        ({"select_fraction": 0.0}, "The 'select_fraction' parameter"),
    ],
)
def test_parameter_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit_samplers(laplace(0.0), laplace(1.0), **{"n_samples": 1000, **kwargs})


def test_bad_samplers_and_statistics_are_refused():
    with pytest.raises(ValueError, match="non-finite"):
        audit_samplers(lambda n, rng: np.full(n, np.nan), laplace(1.0), n_samples=1000)
    with pytest.raises(ValueError, match="shape"):
        audit_samplers(lambda n, rng: np.zeros(n + 1), laplace(1.0), n_samples=1000)
    with pytest.raises(ValueError, match="one value per output"):
        audit_samplers(laplace(0.0), laplace(1.0), statistics={"bad": lambda z: z[:2, 0]}, n_samples=1000)
    with pytest.raises(TypeError, match="NeighbourPair"):
        audit_pairs([(laplace(0.0), laplace(1.0))])
