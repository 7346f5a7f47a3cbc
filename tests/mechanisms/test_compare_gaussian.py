"""The paper's orders for Gaussian noise, and pure K-norm against Gaussian at one (epsilon, delta)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from knorm.accounting.zcdp import epsilon_from_rho
from knorm.geometry import LpBall
from knorm.geometry.polytope import Polytope
from knorm.mechanisms import KNormMechanism
from knorm.mechanisms.compare_gaussian import (
    compare_gaussians,
    compare_pure_and_gaussian,
    gaussian_conditional_variance,
    gaussian_entropy,
    knorm_noise_second_moment,
    rho_for_target,
)
from knorm.sensitivity import sum_product_space


def _spd(m, seed):
    A = np.random.default_rng(seed).normal(size=(m, m))
    return A @ A.T + 0.5 * np.eye(m)


def test_entropy_matches_scipy():
    cov = _spd(4, 1)
    assert gaussian_entropy(cov) == pytest.approx(stats.multivariate_normal(cov=cov).entropy(), rel=1e-12)


def test_conditional_variance_matches_quadrature_on_the_line():
    # Independent check: the density restricted to the line t e, normalised by quadrature.
    cov = _spd(3, 2)
    e = np.array([1.0, -2.0, 0.5])
    u = e / np.linalg.norm(e)
    dens = stats.multivariate_normal(cov=cov)
    mass = integrate.quad(lambda t: dens.pdf(t * u), -50, 50)[0]
    second = integrate.quad(lambda t: t * t * dens.pdf(t * u), -50, 50)[0]
    assert gaussian_conditional_variance(cov, e) == pytest.approx(second / mass, rel=1e-7)
    rows = gaussian_conditional_variance(cov, np.stack([e, 2 * e]))
    assert rows == pytest.approx([second / mass] * 2, rel=1e-7)


def test_loewner_order_and_stochastic_tightness():
    a = _spd(3, 3)
    b = a + np.diag([0.3, 0.0, 1.0])  # a <= b
    result = compare_gaussians(a, b)
    assert result.first_contained and not result.second_contained
    assert result.entropy_difference < 0 and result.trace_ratio < 1
    assert result.ratio == pytest.approx(max(np.linalg.eigvals(np.linalg.solve(b, a)).real), rel=1e-10)
    # Anderson: the tighter law puts more mass in a symmetric convex set (a box), Monte Carlo with 5-sigma slack.
    gen = np.random.default_rng(4)
    n = 200_000
    inside = [np.mean(np.all(np.abs(gen.multivariate_normal(np.zeros(3), c, n)) < 1.0, axis=1)) for c in (a, b)]
    assert inside[0] > inside[1]
    # Neither contains the other when the difference is indefinite.
    c = a + np.diag([0.5, -0.2, 0.0])
    if np.all(np.linalg.eigvalsh(c) > 0):
        r = compare_gaussians(a, c)
        assert not r.first_contained and not r.second_contained


@pytest.mark.parametrize("p", [1, 2, math.inf])
def test_knorm_second_moment_closed_forms_match_the_sampler(p):
    # Monte Carlo of the mechanism's own sampler: each diagonal entry within 5 standard errors (failure ~1e-6 per entry).
    mech = KNormMechanism(LpBall(3, p), sensitivity=1.0, epsilon=2.0)
    moment, method = knorm_noise_second_moment(mech)
    assert method == "closed form"
    draws = mech.sample_noise(100_000, rng=7)
    sq = draws**2
    se = sq.std(axis=0) / math.sqrt(len(sq))
    assert np.all(np.abs(np.diag(moment) - sq.mean(axis=0)) < 5 * se)
    assert np.allclose(moment - np.diag(np.diag(moment)), 0)


def test_knorm_second_moment_of_a_polytope_by_monte_carlo():
    ball = Polytope.from_points(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    mech = KNormMechanism(ball, sensitivity=1.0, epsilon=1.0)
    moment, method = knorm_noise_second_moment(mech)
    assert "Monte Carlo" in method
    draws = mech.sample_noise(200_000, rng=8)
    empirical = draws.T @ draws / len(draws)
    assert np.allclose(moment, empirical, rtol=0.05, atol=0.05)


def test_rho_for_target_is_the_largest_feasible_rho():
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-5), (8.0, 1e-9)]:
        rho = rho_for_target(eps, delta)
        assert epsilon_from_rho(rho, delta) <= eps
        assert epsilon_from_rho(rho * (1 + 1e-6), delta) > eps


def test_pure_wins_in_low_dimension_gaussian_in_high():
    # Three dimensions at a small delta: the pure K-norm (the hull, the paper's optimum) wins.
    low = compare_pure_and_gaussian(sum_product_space(), 1.0, 1e-6)
    assert low.winner.startswith("K-norm") and low.ratio("spherical") > 1
    # The spherical Gaussian's error is m Delta_2^2 / (2 rho) (Bun & Steinke 2016, Proposition 1.6), plus
    # at most 2% for the exact lattice law's rounding slack (gamma sqrt(m) <= 0.5% of Delta_2).
    delta2 = sum_product_space().sensitivity(2).value
    assert 1 <= low.gaussian_mse["spherical"] / (3 * delta2**2 / (2 * low.rho)) <= 1.02


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="'delta'"):
        compare_pure_and_gaussian(sum_product_space(), 1.0, 0.0)
    with pytest.raises(ValueError, match="'epsilon'"):
        rho_for_target(-1.0, 1e-6)
    with pytest.raises(ValueError, match="one dimension"):
        compare_gaussians(np.eye(2), np.eye(3))


def test_gaussian_wins_for_a_box_sum_in_high_dimension():
    # Sums of records in [-1, 1]^d: the K-norm's error grows like d^3 (l_inf ball), the Gaussian's like d^2 log(1/delta).
    from knorm.sensitivity import sum_space

    space = sum_space(100, 100, neighbours="add_remove")
    high = compare_pure_and_gaussian(space, 1.0, 1e-6, hull=False, candidates={"l_inf": LpBall(100, math.inf)})
    assert high.winner == "Gaussian (spherical)"
    # Both closed forms, checked by hand: (m + 1)(m + 2) m / (3 eps^2) and m Delta_2^2 / (2 rho) with Delta_2 = 10.
    assert high.knorm_mse == pytest.approx(101 * 102 * 100 / 3, rel=1e-9)
    assert 1 <= high.gaussian_mse["spherical"] / (100 * 100 / (2 * high.rho)) <= 1.02


def test_closed_form_shape_enters_the_comparison():
    # Counts with l0 bound 50 of 100: the shape a I + b 11' (Joseph & Yu's elliptic Gaussian) is a candidate,
    # and beats the spherical Gaussian by about 0.6x in total variance.
    from knorm.mechanisms.gaussian_shapes import count_shape
    from knorm.sensitivity import count_space

    space = count_space(100, 50, neighbours="add_remove")
    result = compare_pure_and_gaussian(space, 2.0, 1e-6, shapes=lambda: (count_shape(100, 50),), hull=False)
    names = list(result.gaussian_mse)
    assert names[0] == "spherical" and len(names) == 2
    assert 0.55 < result.gaussian_mse[names[1]] / result.gaussian_mse["spherical"] < 0.65
    assert result.winner.startswith("Gaussian")
