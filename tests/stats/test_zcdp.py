"""knorm.stats under rho: every function takes rho (exactly one of epsilon and rho), reports and charges it,
keeps counts integers, and shaped Gaussian noise meets issue 25's done-when figures.

Statistical tests use fixed seeds; each states its failure rate (the chance that a correct
implementation fails it for a seed drawn at random).
"""

import math

import numpy as np
import pytest

import knorm.stats as dp
from knorm import PrivacyAccountant
from knorm.accounting import PureEpsilonLedgerError
from knorm.accounting.zcdp import rho_from_epsilon
from knorm.mechanisms import nonprivate
from knorm.sensitivity import QuadraticStatistic
from knorm.stats.quantiles import epsilon_from_rho
from tests.settings import SEED
from tests.stats import zcdp_gains

RHO = 0.5
_RNG = np.random.default_rng(SEED)
x = _RNG.uniform(0, 10, 300)
X = _RNG.uniform(-1, 1, size=(300, 3))
B = np.array([_RNG.permutation(5) for _ in range(40)])
T = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0], names=["sum x", "sum x^2"])

# Every public function of knorm.stats, with valid arguments and the budget keywords left to the caller.
FUNCTIONS = {
    "sum": lambda **k: dp.sum(x, (0, 10), **k),
    "count": lambda **k: dp.count(x > 5, **k),
    "mean": lambda **k: dp.mean(x, (0, 10), **k),
    "moments": lambda **k: dp.moments(x, (0, 10), **k),
    "var": lambda **k: dp.var(x, (0, 10), **k),
    "std": lambda **k: dp.std(x, (0, 10), **k),
    "covariance": lambda **k: dp.covariance(X, (-1, 1), **k),
    "mean_and_covariance": lambda **k: dp.mean_and_covariance(X, (-1, 1), **k),
    "histogram": lambda **k: dp.histogram(x, [0, 2, 5, 10], **k),
    "histogramdd": lambda **k: dp.histogramdd(X[:, :2], [[-1, 0, 1]] * 2, **k),
    "vote": lambda **k: dp.vote(B, **k),
    "release": lambda **k: dp.release(T, x[:, None], **k),
    "quantile": lambda **k: dp.quantile(x, [0.25, 0.75], (0, 10), **k),
    "median": lambda **k: dp.median(x, (0, 10), **k),
}
NOT_ADDITIVE = {"quantile", "median"}  # the exponential mechanism: conf_int refuses


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_epsilon_and_rho_together_are_refused_naming_both(name):
    rule = (
        rf"knorm\.stats\.{name} takes exactly one of 'epsilon' .* and 'rho' .*\. Got epsilon=1\.0 and rho=0\.5 instead"
    )
    with pytest.raises(ValueError, match=rule):
        FUNCTIONS[name](epsilon=1.0, rho=0.5)


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("rho, exc", [(0, ValueError), (-1.0, ValueError), (math.inf, ValueError), ("1", TypeError)])
def test_rho_outside_zero_inf_is_refused(name, rho, exc):
    with pytest.raises(
        exc, match=rf"The 'rho' parameter of knorm\.stats\.{name} must be a float in the range \(0, inf\)"
    ):
        FUNCTIONS[name](rho=rho)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_function_releases_under_rho_reports_it_and_charges_a_rho_ledger(name):
    acc = PrivacyAccountant(total_rho=1.0)
    release = FUNCTIONS[name](rho=RHO, rng=SEED, accountant=acc)
    assert release.rho == pytest.approx(RHO, rel=1e-15) and release.rho <= RHO and release.budget == "rho"
    root = release if release.parent is None else release.parent
    assert root.rho == release.rho
    assert acc.spent_rho == pytest.approx(RHO, rel=1e-12) and acc.spent_rho <= RHO
    assert len(acc.ledger) == 1
    if name in NOT_ADDITIVE:  # pure epsilon-DP at epsilon = sqrt(2 rho), rounded down: reported with both
        assert release.epsilon == math.nextafter(1.0, 0.0) and "epsilon = sqrt(2 rho)" in release.sampler
        return
    assert release.epsilon is None
    assert "least total variance" in root.sampler  # the choice among Gaussian shapes is stated
    intervals = np.asarray(release.conf_int(0.1))
    assert intervals.shape == (np.size(release.value), 2) and np.all(intervals[:, 0] <= intervals[:, 1])


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - NOT_ADDITIVE))
def test_a_pure_epsilon_ledger_refuses_a_rho_release_and_nothing_is_charged(name):
    acc = PrivacyAccountant(total_epsilon=10.0)
    with pytest.raises(PureEpsilonLedgerError, match="rho-zCDP release has no pure epsilon-DP guarantee"):
        FUNCTIONS[name](rho=RHO, rng=SEED, accountant=acc)
    assert acc.ledger == [] and acc.spent == 0


@pytest.mark.parametrize("name", sorted(NOT_ADDITIVE))
def test_quantiles_spend_rho_as_epsilon_sqrt_2_rho_on_either_ledger(name):
    """The exponential mechanism is epsilon-DP: a pure ledger is charged epsilon = sqrt(2 rho), truthfully."""
    acc = PrivacyAccountant(total_epsilon=10.0)
    release = FUNCTIONS[name](rho=0.125, rng=SEED, accountant=acc)
    eps = epsilon_from_rho(0.125)
    assert eps == pytest.approx(0.5, rel=1e-15) and eps <= 0.5
    assert acc.spent == eps and release.epsilon == eps and release.rho <= 0.125
    for rho in (0.3, 0.125, 2.0, 1e-6):  # rounded down just enough that the rho ledger's charge fits in rho
        eps = epsilon_from_rho(rho)
        assert rho_from_epsilon(eps) <= rho and rho_from_epsilon(math.nextafter(eps, 10.0)) > rho


@pytest.mark.parametrize(
    "call",
    [
        lambda **k: dp.count(np.ones((50, 6)), **k),
        lambda **k: dp.count((X > 0).astype(float), l0_bound=3, neighbours="replace", **k),
        lambda **k: dp.histogram(x, [0, 2, 5, 10], **k),
        lambda **k: dp.histogram(x, [0, 2, 5, 10], neighbours="add_remove", **k),
        lambda **k: dp.histogramdd(X[:, :2], [[-1, 0, 1]] * 2, **k),
        lambda **k: dp.vote(B, **k),
        lambda **k: dp.vote(B, neighbours="add_remove", **k),
    ],
    ids=["count", "count replace", "histogram", "histogram add_remove", "histogramdd", "vote", "vote add_remove"],
)
def test_counts_stay_integers_under_rho(call):
    release = call(rho=RHO, rng=SEED)
    assert release.value.dtype == np.int64 and release.rho == RHO
    root = release if release.parent is None else release.parent
    if root.noise_law is not None and type(root.noise_law).__name__ == "GaussianNoise":
        # a shaped (continuous) release, rounded afterwards: the rounding is post-processing, stated
        assert release.parent is not None and "shaped" in root.sampler and root.caveats


def test_replace_histograms_and_votes_keep_their_public_totals_under_rho():
    release = dp.histogram(x, [0, 2, 5, 10], rho=RHO, rng=SEED)
    assert int(release.value.sum()) == len(x)
    release = dp.vote(B, rho=RHO, rng=SEED)
    assert int(release.value.sum()) == len(B) * 5 * 4 // 2


def test_shaped_choice_and_spherical_choice_are_stated():
    shaped = dp.count(zcdp_gains.count_data(30, 6, 3, np.random.default_rng(SEED)), rho=RHO, l0_bound=3, rng=SEED)
    assert "count (d=6, k=3, add_remove): least total variance" in shaped.parent.sampler
    spherical = dp.histogram(x, [0, 2, 5, 10], neighbours="add_remove", rho=RHO, rng=SEED)
    assert spherical.sampler.startswith("lattice, exact in integer arithmetic (exact discrete Gaussian")
    assert "spherical: least total variance" in spherical.sampler


def test_nonprivate_mode_under_rho():
    with nonprivate():
        release = dp.sum(x, (0, 10), rho=RHO)
    assert release.epsilon == math.inf and release.rho is None
    assert float(release) == pytest.approx(x.sum())


def test_norm_mean_is_a_k_norm_choice_and_is_refused_under_rho():
    with pytest.raises(ValueError, match=r"'norm' parameter of knorm\.stats\.var must be 'hull' with rho"):
        dp.var(x, (0, 10), rho=RHO, norm="mean")


def test_intervals_of_shaped_and_spherical_releases_cover():
    """90% intervals of a shaped count (rounded: pushed through) and of a lattice sum, over 300 releases each:
    coverage of each coordinate checked at |z| <= 4.5 against Binomial(300, 0.9) (failure rate about 1e-4 in all)."""
    rng = np.random.default_rng(SEED)
    C = zcdp_gains.count_data(40, 6, 3, rng)
    truth = C.sum(axis=0)
    hits = np.zeros(6)
    for _ in range(300):
        iv = np.asarray(dp.count(C, rho=0.05, l0_bound=3, rng=rng).conf_int(0.1, n_draws=4000))
        hits += (iv[:, 0] <= truth) & (truth <= iv[:, 1])
    bound = 4.5 * math.sqrt(0.09 * 300)
    assert np.all(hits >= 270 - bound - 6)  # rounding makes the pushed intervals conservative, never short
    s = x.sum()
    hits = 0
    for _ in range(300):
        lo, hi = np.asarray(dp.sum(x, (0, 10), rho=0.05, rng=rng).conf_int(0.1))[0]
        hits += lo <= s <= hi
    assert abs(hits - 270) <= bound + 3


# -- issue 25's done-when ------------------------------------------------------------------------------------
def test_vote_add_remove_at_d_100_has_at_most_half_the_spherical_error():
    """Over 200 releases at rho = 0.5: measured 0.344x (the optimum 0.345x). The estimate's relative standard
    error is about 1%, so a correct 0.345x fails the 0.5x threshold with probability below 1e-30."""
    mse, spherical = zcdp_gains.vote_mse(d=100, releases=200)
    assert mse <= 0.5 * spherical
    assert mse >= 0.3 * spherical  # and it is the shaped law, not a broken zero noise


def test_count_at_d_100_k_50_has_at_most_0_7_of_the_spherical_error():
    """Over 200 releases at rho = 0.5, l0_bound = 50: measured 0.59x (the optimum 0.5995x, plus 1/12 from
    rounding to integers). Relative standard error about 1.5%: a correct release fails 0.7x at z > 7 (< 1e-11)."""
    mse, spherical = zcdp_gains.count_mse(d=100, k=50, releases=200)
    assert mse <= 0.7 * spherical
    assert mse >= 0.5 * spherical


def test_covariance_of_6_uniform_columns_has_at_most_half_the_spherical_frobenius_error():
    """Against the spherical Gaussian on the raw second moments (exact l2 sensitivity sqrt(27)) at rho = 0.5,
    n = 2000, 200 releases each: measured 0.26x; the ratio's relative standard error is about 2%, so a correct
    release fails 0.5x with probability below 1e-30."""
    X6 = np.random.default_rng(SEED).uniform(0, 1, size=(2000, 6))
    shaped, spherical, _ = zcdp_gains.covariance_errors(X6, np.zeros(6), np.ones(6), releases=200)
    assert shaped <= 0.5 * spherical


def test_covariance_of_6_housing_columns_has_at_most_half_the_spherical_frobenius_error():
    """The packaged California housing data (six columns with declared non-negative bounds), rho = 0.5, 200
    releases each: measured 0.0005x against the spherical Gaussian on the raw moments (whose l2 sensitivity is
    dominated by the widest columns) and 0.85x against an optimistic spherical Gaussian on the standardised
    moments; only the first is the done-when figure."""
    pytest.importorskip("pandas")
    Xh, lo, hi = zcdp_gains.housing_columns()
    with pytest.warns(Warning):  # the curator is told what was clipped
        shaped, spherical, standardised = zcdp_gains.covariance_errors(Xh, lo, hi, releases=200)
    assert shaped <= 0.5 * spherical
    assert shaped <= standardised
