"""The Tulap distribution and the exact DP-UMP test of a binomial proportion (knorm.noise.tulap).

The CDF is checked against a brute-force sum over the discrete Laplace atoms and against draws
(KS, rate ALPHA); the type-I error of the p-values is computed exactly, as a sum over the
binomial outcomes and the discrete Laplace noise of the released count with the measure of the
public uniform (no Monte Carlo, and nothing of the module's CDF: an independent computation);
the power of Release.test on counts released by knorm.stats.count is checked by Monte Carlo
against the same exact computation (Z_MAX standard errors: a correct implementation fails with
probability about 6e-5 for a random seed).
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

import knorm.stats as dp
from knorm.mechanisms import nonprivate
from knorm.noise.tulap import binomial_pvalue, count_pvalue, tulap_cdf
from tests.settings import ALPHA, SEED, Z_MAX

_K = np.arange(-400, 401)  # discrete Laplace atoms kept: b^400 < 1e-80 for b <= e^-0.5


def _dlaplace(b):
    """P(L = k) over _K, proportional to b^|k| (brute force, normalised by its own sum)."""
    w = np.power(b, np.abs(_K).astype(float))
    return w / w.sum()


def _cdf_brute(x, b, m=0.0):
    """P(m + L + U <= x): sum over the atoms of L of the uniform's share below x."""
    x = np.atleast_1d(np.asarray(x, dtype=float))[:, None]
    return (_dlaplace(b) * np.clip(x - m - _K + 0.5, 0.0, 1.0)).sum(axis=1)


@pytest.mark.parametrize("b", [0.0, 0.05, math.exp(-1.0), 0.9])
def test_cdf_matches_the_sum_over_the_atoms(b):
    x = np.linspace(-12.3, 12.7, 1001)
    np.testing.assert_allclose(tulap_cdf(x, b), _cdf_brute(x, b), rtol=0, atol=1e-13)
    np.testing.assert_allclose(tulap_cdf(x, b, m=2.25), _cdf_brute(x, b, m=2.25), rtol=0, atol=1e-13)
    assert np.all(np.diff(tulap_cdf(x, b)) >= 0)


def test_cdf_matches_draws_of_geometric_minus_geometric_plus_uniform():
    # Tulap(0, b, 0) = G1 - G2 + U, G geometric on {0, 1, ...} of success probability 1 - b.
    b, n = math.exp(-0.7), 200_000
    rng = np.random.default_rng(SEED)
    draws = rng.geometric(1 - b, n) - rng.geometric(1 - b, n) + rng.uniform(-0.5, 0.5, n)
    assert stats.kstest(draws, lambda t: tulap_cdf(t, b)).pvalue > ALPHA


def _count_law(n, theta, b):
    """(c, P(X + L = c)) for X ~ Binomial(n, theta), L discrete Laplace(b): an exact convolution."""
    pmf = stats.binom.pmf(np.arange(n + 1), n, theta)
    law = np.convolve(pmf, _dlaplace(b))
    return np.arange(len(law)) + _K[0], law


def _rejection(n, theta, b, alpha, theta0, alternative):
    """P_theta(p <= alpha) exactly: sum over the released count c of P(c) |{u : p(c + u) <= alpha}|.

    The p-value is monotone in z (decreasing for 'greater'), so the rejection region is a half
    line z >= z* (or z <= z*); z* is found on the module's p-value, the probability is computed
    here from the count's exact law and the uniform's measure only.
    """
    c, law = _count_law(n, theta, b)
    if alternative == "two-sided":  # p_g + p_l = 1 > alpha: the two tails are disjoint
        return sum(_rejection(n, theta, b, alpha / 2, theta0, side) for side in ("greater", "less"))
    p = lambda z: binomial_pvalue(z, n, theta0, b, alternative) - alpha  # noqa: E731
    z_star = optimize.brentq(p, -60.0, n + 60.0, xtol=1e-13)
    if alternative == "greater":  # reject when z = c + u >= z*
        share = np.clip(c + 0.5 - z_star, 0.0, 1.0)
    else:
        share = np.clip(z_star - (c - 0.5), 0.0, 1.0)
    return float(law @ share)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("n, theta0, eps", [(10, 0.2, 1.0), (30, 0.5, 0.5), (60, 0.3, 2.0)])
def test_type_one_error_is_exactly_alpha_at_the_null_and_at_most_alpha_inside_it(alternative, n, theta0, eps):
    b = math.exp(-eps)
    for alpha in (0.05, 0.1):
        assert _rejection(n, theta0, b, alpha, theta0, alternative) == pytest.approx(alpha, abs=1e-9)
        if alternative == "greater":
            inside = [theta0 * 0.5, theta0 * 0.9]
        elif alternative == "less":
            inside = [theta0 + (1 - theta0) * 0.1, theta0 + (1 - theta0) * 0.5]
        else:
            continue
        for theta in inside:
            assert _rejection(n, theta, b, alpha, theta0, alternative) <= alpha + 1e-12


def test_the_test_has_power_and_the_p_values_are_symmetric():
    b, n = math.exp(-1.0), 50
    assert _rejection(n, 0.6, b, 0.05, 0.3, "greater") > 0.9  # far alternatives are found
    z = 17.3
    g, lo = binomial_pvalue(z, n, 0.3, b, "greater"), binomial_pvalue(z, n, 0.3, b, "less")
    assert g + lo == pytest.approx(1.0, abs=1e-12)  # Z is continuous
    assert binomial_pvalue(z, n, 0.3, b, "two-sided") == pytest.approx(2 * min(g, lo), abs=1e-15)


def test_b_zero_is_the_randomised_exact_binomial_test():
    # Tulap(0, 0, 0) is Uniform(-1/2, 1/2): P(X + U >= c + u) = P(X > c) + P(X = c) (1/2 - u).
    n, theta, c, u = 40, 0.25, 14, 0.2
    expected = stats.binom.sf(c, n, theta) + stats.binom.pmf(c, n, theta) * (0.5 - u)
    assert binomial_pvalue(c + u, n, theta, 0.0) == pytest.approx(expected, rel=1e-12)


def test_count_pvalue_adds_a_public_uniform_from_rng():
    p1, p2 = count_pvalue(30, 100, 0.3, 0.5, rng=7), count_pvalue(30, 100, 0.3, 0.5, rng=7)
    assert p1 == p2
    u = np.random.default_rng(7).uniform(-0.5, 0.5)
    assert p1 == binomial_pvalue(30 + u, 100, 0.3, 0.5)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tulap_cdf(0.0, 1.0), "'b' parameter .* range \\[0, 1\\)"),
        (lambda: binomial_pvalue(1.0, 0, 0.5, 0.5), "'n' parameter"),
        (lambda: binomial_pvalue(1.0, 10, 1.5, 0.5), "'theta0' parameter"),
        (lambda: binomial_pvalue(math.nan, 10, 0.5, 0.5), "'z' parameter"),
        (lambda: binomial_pvalue(1.0, 10, 0.5, 0.5, "both"), "'alternative' parameter"),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- Release.test on counts released by knorm.stats.count ------------------------------------


def test_release_test_on_a_count_rejects_at_the_exact_rate_by_monte_carlo():
    n, eps, theta0, theta1, reps = 200, 1.0, 0.3, 0.38, 400
    gen = np.random.default_rng(SEED)
    rejected = []
    for _ in range(reps):
        x = (gen.random(n) < theta1).astype(int)
        release = dp.count(x, epsilon=eps, neighbours="replace", rng=gen)
        rejected.append(release.test(theta0, "greater", rng=gen) <= 0.05)
    logpmf = release.noise_law.noise.unnormalised_logpmf  # the geometric mechanism's law: b^|k|
    b = math.exp(float(logpmf(np.array([1]))) - float(logpmf(np.array([0]))))
    assert b == pytest.approx(math.exp(-eps), rel=1e-9)  # the rate eps, rounded down by < 2^-39 (dyadic)
    power = _rejection(n, theta1, b, 0.05, theta0, "greater")
    assert 0.05 < power < 0.95  # a regime where the check has power against a wrong p-value
    assert abs(np.mean(rejected) - power) <= Z_MAX * math.sqrt(power * (1 - power) / reps)


def test_release_test_on_a_count_inside_nonprivate_is_the_randomised_binomial_test():
    x = np.r_[np.ones(12), np.zeros(28)].astype(int)
    with nonprivate():
        release = dp.count(x, epsilon=1.0, neighbours="replace")
    u = np.random.default_rng(3).uniform(-0.5, 0.5)
    expected = stats.binom.sf(12, 40, 0.2) + stats.binom.pmf(12, 40, 0.2) * (0.5 - u)
    assert release.test(0.2, "greater", rng=3) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda x: dp.count(x, epsilon=1.0), "add/remove neighbours the number of records n is private"),
        (lambda x: dp.histogram(x, [0, 0.5, 1], epsilon=1.0), "is not one raw count"),
        (lambda x: dp.var(x, (0, 1), epsilon=1.0), "Tests are defined for the mean or the sum"),
        (lambda x: dp.moments(x, (0, 1), epsilon=1.0), "needs a sampling model"),
    ],
)
def test_release_test_is_refused_where_it_is_not_defined(make, match):
    x = (np.random.default_rng(SEED).random(100) < 0.5).astype(int)
    with pytest.raises(ValueError, match=match):
        make(x).test(0.5)


def test_release_test_checks_its_inputs():
    release = dp.count(np.ones(50, dtype=int), epsilon=1.0, neighbours="replace", rng=SEED)
    with pytest.raises(ValueError, match="'value' parameter of Release.test must be a proportion"):
        release.test(1.5)
    with pytest.raises(ValueError, match="'alternative' parameter of Release.test"):
        release.test(0.5, "above")
    with pytest.raises(TypeError, match="'value' parameter of Release.test"):
        release.test("0.5")
