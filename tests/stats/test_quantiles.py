"""knorm.stats.quantile / median: the exact law of the sampler, privacy, accuracy, rules and bad inputs.

* The sampler's law is enumerated exactly (tests/noise/enumeration.py drives it with a fake
  Generator that enumerates its random input) and compared with exp(-rate s_c) / Z at 60
  digits: one trial with its rejection as a restart (tight bounds), and the whole
  rejection loop (bounds by the pruned mass).
* Privacy: the exact output law (the same rank scores and rate, whose sampling the
  enumeration checks) on every pair of neighbouring datasets of a small domain has a log
  ratio of at most epsilon, for both neighbouring relations.
* Accuracy with fixed seeds: the rank guarantee (score_error) at alpha = 1e-3 for each of
  40 seeds (a failure rate of at most 40 x 1e-3 = 4% over seeds; fixed seeds make the
  outcome deterministic), and the mean absolute error of the median.
"""

import itertools
import math
from decimal import localcontext
from fractions import Fraction

import numpy as np
import pytest

import knorm.stats as dp
from knorm.accounting import PrivacyAccountant, SeedReuseError
from knorm.mechanisms import nonprivate
from knorm.mechanisms.exponential import ExponentialRelease, _propose, _weights, exact_rate, sample_index
from knorm.stats.quantiles import _cell_counts, rank_scores
from tests.noise.enumeration import check_law, dec, enumerate_law, exp_neg
from tests.settings import SEED

RESTART = -1  # _propose's "no proposal kept"


def _scores(x, grid, q):
    return rank_scores(_cell_counts(np.asarray(x, float), np.asarray(grid, float)), Fraction(q))


def _target(gaps, rate):
    """P(c) = exp(-rate gap_c) / sum_c' exp(-rate gap_c'), to 60 digits."""
    weights = [exp_neg(rate * g) for g in gaps]
    with localcontext() as ctx:
        ctx.prec = 60
        total = sum(weights)
        return lambda c: weights[c] / total if 0 <= c < len(gaps) else 0


# -- the exact law ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data, q, epsilon",
    [
        ([1.0, 2.0, 2.0, 7.0], Fraction(1, 2), 1.0),  # rate 1/4 per score unit, exact
        ([0.5, 3.0, 3.5, 6.0, 8.0], Fraction(1, 3), 0.75),  # rate 1/8 (Delta = 3 units of 1/3)
        ([1.0, 5.0, 6.0], Fraction(1, 2), 0.1),  # 0.1 / 4 has no short denominator: rounded down to m / 2^62
    ],
)
def test_one_trial_law_is_exact(data, q, epsilon):
    grid = [0.0, 2.0, 4.0, 6.0, 8.0]
    scores = [int(s) for s in _scores(data, grid, q)]
    rate = exact_rate(epsilon, q.denominator)  # Delta = 1 record = b score units (replace-one)
    assert rate <= Fraction(epsilon) / (2 * q.denominator)
    assert float(rate) == pytest.approx(epsilon / (2 * q.denominator), rel=2**-40)
    gaps = [s - min(scores) for s in scores]
    whole, frac, den = _weights(gaps, rate)
    law = enumerate_law(lambda rng: _propose(whole, frac, den, rng, 1), threshold=Fraction(1, 10**12), restart=RESTART)
    check_law(law, _target(gaps, rate), max_pruned=Fraction(1, 10**6))
    assert set(law.atoms) == set(range(len(grid)))  # every candidate is possible


def test_rejection_loop_law_is_exact():
    """The whole loop of sample_index (one proposal per batch), its deep paths pruned."""
    grid = [0.0, 4.0, 8.0]
    scores = _scores([1.0, 2.0, 2.0, 7.0], grid, 0.5)
    rate = exact_rate(1.0, 2)
    gaps = [int(s - scores.min()) for s in scores]
    law = enumerate_law(lambda rng: sample_index(scores, rate, rng, batch=1), threshold=Fraction(1, 10**6))
    check_law(law, _target(gaps, rate), max_pruned=Fraction(1, 10**2))


@pytest.mark.parametrize("rate", [Fraction(3, 8), exact_rate(0.1, 7), Fraction(2**61 + 1, 2**62)])
def test_weights_split_the_exponent_exactly(rate):
    """x_c = whole_c + frac_c / den exactly, in int64 and (past int64) in Python integers."""
    for gaps in ([0, 1, 5, 40], [0, 3, 2**40, 2**62]):
        whole, frac, den = _weights(np.array(gaps, dtype=np.int64), rate)
        for g, w, f in zip(gaps, whole, frac):
            assert int(w) + Fraction(int(f), den) == rate * g and 0 <= int(f) < den


def test_rank_scores_match_the_definition():
    """S_j / b = dist(q n, [#{x~ < c_j}, #{x~ <= c_j}]) for the data x~ rounded to the nearest candidate (ties down)."""
    rng = np.random.default_rng(SEED)
    grid = np.array([0.0, 1.0, 2.5, 4.0, 7.0, 10.0])
    for _ in range(50):
        x = rng.choice([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 7.0, 9.0, 10.0], size=rng.integers(1, 9))
        q = Fraction(int(rng.integers(0, 8)), 7)
        snapped = np.array([grid[int(np.argmin(np.abs(grid - v)))] for v in x])  # argmin: ties to the lower
        n = len(x)
        for j, s in enumerate(rank_scores(_cell_counts(x, grid), q)):
            lo = int(np.sum(snapped < grid[j]))
            hi = int(np.sum(snapped <= grid[j]))
            dist = max(Fraction(0), lo - q * n, q * n - hi)
            assert Fraction(int(s), q.denominator) == dist


# -- privacy -------------------------------------------------------------------------------------
def _log_law(scores, rate):
    x = -float(rate) * np.asarray(scores, float)
    return x - np.logaddexp.reduce(x)


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(1, 5), Fraction(1), Fraction(0)])
def test_density_ratio_at_most_epsilon(neighbours, q):
    """Every output's probability on neighbouring datasets differs by a factor of at most exp(epsilon)."""
    epsilon = 0.9
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    values = [0.0, 0.5, 1.0, 2.0, 3.0]
    delta = Fraction(1) if neighbours == "replace" else max(q, 1 - q)
    rate = exact_rate(epsilon, delta * q.denominator)
    worst = 0.0
    for data in itertools.combinations_with_replacement(values, 3):
        base = _log_law(_scores(data, grid, q), rate)
        if neighbours == "replace":
            others = [data[:i] + (v,) + data[i + 1 :] for i in range(3) for v in values]
        else:
            others = [data[:i] + data[i + 1 :] for i in range(3)] + [data + (v,) for v in values]
        for other in others:
            worst = max(worst, float(np.max(np.abs(base - _log_law(_scores(other, grid, q), rate)))))
    assert worst <= epsilon + 1e-12
    assert worst > 0.2 * epsilon  # the test can see a leak: the ratio is far from 1


def test_release_law_matches_the_scores_law():
    """The released values of quantile() follow the law the privacy test checks (a chi-square sanity check)."""
    x = [1.0, 2.0, 2.0, 7.0]
    grid = [0.0, 2.0, 4.0, 6.0, 8.0]
    p = np.exp(_log_law(_scores(x, grid, 0.5), exact_rate(1.0, 2)))
    gen = np.random.default_rng(SEED)
    draws = np.array([float(dp.median(x, (0, 8), epsilon=1.0, candidates=5, rng=gen)) for _ in range(3000)])
    counts = np.array([np.sum(draws == g) for g in grid])
    chi2 = float(np.sum((counts - 3000 * p) ** 2 / (3000 * p)))
    assert chi2 < 18.5  # chi-square with 4 degrees of freedom: P(> 18.5) < 0.001


# -- accuracy --------------------------------------------------------------------------------
@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_rank_guarantee_holds(neighbours):
    """With probability 1 - alpha the released candidate's rounded rank is within score_error of q n."""
    rng = np.random.default_rng(SEED)
    x = rng.gamma(2.0, 2.0, 3000).clip(0, 30)
    grid = np.linspace(0, 30, 1025)
    levels = [0.1, 0.5, 0.9]
    counts = _cell_counts(x, grid)
    upto = np.cumsum(counts)
    for seed in range(40):
        release = dp.quantile(x, levels, (0, 30), epsilon=1.0, candidates=1025, neighbours=neighbours, rng=seed)
        t = release.score_error(1e-3)
        assert np.all(t > 0)
        for value, q, tq in zip(release.value, levels, t):
            j = int(np.searchsorted(grid, value))
            assert grid[j] == value  # released values are candidates
            below = upto[j - 1] if j else 0
            assert below - tq <= q * len(x) <= upto[j] + tq


def test_median_accuracy():
    """Mean absolute error over 30 fixed seeds, uniform and normal data, n = 1000, epsilon = 1."""
    rng = np.random.default_rng(SEED)
    for x, bounds, limit in [
        (rng.uniform(0, 10, 1000), (0, 10), 0.05),
        (rng.normal(0, 1, 1000).clip(-5, 5), (-5, 5), 0.02),
    ]:
        truth = np.median(x)
        errors = [abs(float(dp.median(x, bounds, epsilon=1.0, rng=s)) - truth) for s in range(30)]
        assert np.mean(errors) < limit


def test_nonprivate_releases_the_snapped_quantile():
    x = np.random.default_rng(SEED).uniform(0, 10, 501)
    grid = np.linspace(0, 10, 101)
    with nonprivate():
        release = dp.quantile(x, [0.3, 0.5, 1.0, 0.0], (0, 10), epsilon=1.0, candidates=grid)
    nearest = np.array(
        [grid[int(np.argmin(np.abs(grid - v)))] for v in np.quantile(x, [0.3, 0.5, 1.0, 0.0], method="inverted_cdf")]
    )
    np.testing.assert_array_equal(release.value[:3], nearest[:3])
    assert release.value[3] <= nearest[3]  # q = 0: any candidate up to the (rounded) minimum
    assert release.epsilon == math.inf and release.noise_scale == 0.0
    assert "NON-PRIVATE" in release.caveats[0]
    np.testing.assert_array_equal(release.score_error(), 0.0)


def test_levels_split_epsilon_and_name_themselves():
    x = np.arange(100.0)
    release = dp.quantile(x, [0.1, 0.5], (0, 100), epsilon=1.0, rng=3)
    assert isinstance(release, ExponentialRelease)
    assert release.epsilon == 1.0 and release.method == "exponential mechanism"
    assert release.names == ("quantile 1/10", "quantile 1/2")
    assert "epsilon / 2 per quantile (sequential composition)" in release.sampler
    assert "0.1 as 1/10" in release.sampler
    assert release.rates == (exact_rate(0.5, 10), exact_rate(0.5, 2))
    # t = (2 Delta / eps') ln(|C| / alpha) records, Delta = 1, eps' = 1/2
    np.testing.assert_allclose(release.score_error(0.05), 4 * math.log(65537 / 0.05))
    levels = [0.1, 0.3, 0.5, 0.7, 0.9]  # 1.0 / 5 rounds up in binary64: the shares are rounded down
    odd = dp.quantile(x, levels, (0, 100), epsilon=1.0, rng=3)
    spent = sum(2 * Fraction(q).limit_denominator(100).denominator * r for q, r in zip(levels, odd.rates))
    assert odd.epsilon == 1.0 and spent <= 1  # eps' = 2 Delta rate per level, Delta = b units of 1 / b
    scalar = dp.quantile(x, 0.5, (0, 100), epsilon=1.0, rng=3)
    assert scalar.value.shape == (1,) and scalar.names == ("quantile 1/2",)


def test_conf_int_refuses_with_the_rank_bound():
    release = dp.median(np.arange(10.0), (0, 10), epsilon=1.0, rng=1)
    with pytest.raises(ValueError, match=r"exponential mechanism.*score_error\(alpha\)"):
        release.conf_int(0.05)


def test_pandas_and_dask_agree_with_numpy():
    pd = pytest.importorskip("pandas")
    da = pytest.importorskip("dask.array")
    x = np.random.default_rng(SEED).normal(3, 1, 500).clip(0, 6)
    ref = dp.quantile(x, [0.25, 0.75], (0, 6), epsilon=1.0, rng=9).value
    np.testing.assert_array_equal(dp.quantile(pd.Series(x), [0.25, 0.75], (0, 6), epsilon=1.0, rng=9).value, ref)
    dx = da.from_array(x, chunks=100)
    np.testing.assert_array_equal(dp.quantile(dx, [0.25, 0.75], (0, 6), epsilon=1.0, rng=9).value, ref)


# -- the privacy rules ---------------------------------------------------------------------------
def test_accountant_is_charged_and_refuses_a_seed():
    accountant = PrivacyAccountant(total_epsilon=2.0)
    x = np.arange(50.0)
    release = dp.quantile(x, [0.25, 0.75], (0, 50), epsilon=0.6, accountant=accountant, rng=11)
    assert release.ledger_entry is not None and release.ledger_entry.epsilon == 0.6
    assert accountant.spent == pytest.approx(0.6)
    with pytest.raises(SeedReuseError):
        dp.median(x, (0, 50), epsilon=0.1, accountant=accountant, rng=11)
    assert accountant.spent == pytest.approx(0.6)


def test_budget_refused_before_any_draw():
    from knorm.accounting import BudgetExceededError

    class NoDraws(np.random.Generator):
        def integers(self, *args, **kwargs):
            raise AssertionError("drew before the charge")

    accountant = PrivacyAccountant(total_epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        dp.median(np.arange(10.0), (0, 10), epsilon=1.0, accountant=accountant, rng=NoDraws(np.random.PCG64(1)))


def test_fixed_seed_warns_without_accountant():
    from knorm.exceptions import PrivacyWarning

    with pytest.warns(PrivacyWarning, match="fixed seed"):
        dp.median(np.arange(10.0), (0, 10), epsilon=1.0, rng=5)


def test_clipping_is_counted_and_warned():
    from knorm.exceptions import ClippingWarning

    x = np.concatenate([np.linspace(0, 1, 90), np.full(10, 5.0)])
    with pytest.warns(ClippingWarning, match="10.0% of the values"):
        release = dp.median(x, (0, 1), epsilon=1.0, rng=2)
    assert "10" not in repr(release.caveats)


# -- bad inputs ----------------------------------------------------------------------------------
X = np.linspace(0, 1, 20)


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        (dict(q=1.5), ValueError, ["'q' parameter of knorm.stats.quantile", "[0, 1]", "Got 1.5"]),
        (dict(q=-0.1), ValueError, ["'q' parameter", "Got -0.1"]),
        (dict(q=[0.5, float("nan")]), ValueError, ["'q' parameter", "[0.5, nan]"]),
        (dict(q=[]), ValueError, ["'q' parameter", "non-empty"]),
        (dict(q=[[0.5]]), ValueError, ["'q' parameter", "1-D sequence"]),
        (dict(q="half"), TypeError, ["'q' parameter", "Got 'half'"]),
        (dict(q=True), TypeError, ["'q' parameter", "Got True"]),
        (dict(bounds=(1, 0)), ValueError, ["'bounds' parameter of knorm.stats.quantile", "lower < upper"]),
        (dict(bounds=None), ValueError, ["'bounds' parameter", "never read from the data"]),
        (dict(bounds=(0, np.inf)), ValueError, ["'bounds' parameter", "finite"]),
        (dict(epsilon=0.0), ValueError, ["'epsilon' parameter of knorm.stats.quantile", "(0, inf)", "Got 0.0"]),
        (dict(epsilon=np.inf), ValueError, ["'epsilon' parameter", "Got inf"]),
        (dict(epsilon="1"), TypeError, ["'epsilon' parameter", "Got '1'"]),
        (dict(candidates=1), ValueError, ["'candidates' parameter", "[2, 4194304]", "Got 1"]),
        (dict(candidates=[0.5, 0.2]), ValueError, ["'candidates' parameter", "strictly increasing"]),
        (dict(candidates=[0.5, 2.0]), ValueError, ["'candidates' parameter", "within the bounds"]),
        (dict(candidates=10**9), ValueError, ["'candidates' parameter", "Got 1000000000"]),
        (dict(neighbours="both"), ValueError, ["'neighbours' parameter", "Got 'both'"]),
        (dict(x=np.ones((5, 2))), ValueError, ["'x' parameter", "one column", "2 columns"]),
        (dict(x=[0.1, np.nan]), ValueError, ["'x' parameter", "NaN"]),
        (dict(rng=True), TypeError, ["'rng' parameter", "bool"]),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, exc, words):
    args = dict(x=X, q=0.5, bounds=(0, 1), epsilon=1.0) | kwargs
    x, q, bounds = args.pop("x"), args.pop("q"), args.pop("bounds")
    with pytest.raises(exc) as info:
        dp.quantile(x, q, bounds, **args)
    for word in words:
        assert word in str(info.value)


def test_median_errors_name_median():
    with pytest.raises(ValueError, match="'epsilon' parameter of knorm.stats.median"):
        dp.median(X, (0, 1), epsilon=-1.0)


def test_messages_do_not_echo_data():
    secret = 0.123456789
    with pytest.raises(ValueError) as info:
        dp.quantile([secret, 0.5], 0.5, (0, 1), epsilon=1.0, candidates=[0.2, 0.1])
    assert "0.1234" not in str(info.value)
    assert str(dec(Fraction(1, 3)))[:5] == "0.333"  # the helper is the enumeration's
