"""Regression under rho-zCDP: the certified bounds, the Gaussian functional mechanism, the estimators, the ledger."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import minimize

from knorm.accounting import BudgetExceededError, PrivacyAccountant, PureEpsilonLedgerError
from knorm.exceptions import InvalidParameterError
from knorm.mechanisms import GaussianMechanism, nonprivate
from knorm.models import LinearRegression, LogisticRegression, sufficient_statistics
from knorm.models.functional_gaussian import (
    ScaledStatistic,
    gaussian_functional_mechanism,
    l2_sensitivity,
    shape_scales,
    weighted_sensitivity,
)
from knorm.models.release_plan import check_fit_budget
from knorm.sensitivity import RegressionLayout

SEED = 20_261_125


def _stat(p, statistic="gram", neighbours="replace"):
    return RegressionLayout(p, neighbours, response_square=statistic == "gram")


def _weights(layout, s0, sx, sy, tx, ty):
    w = np.empty(layout.dim)
    w[layout.lin], w[layout.cross], w[layout.sq] = s0 * sx, sx * sx, tx
    w[layout.y], w[layout.xy] = s0 * sy, sx * sy
    if layout.yy is not None:
        w[layout.yy] = ty
    return w


def _largest_found(p, w, statistic, starts, rng):
    """The largest sum_j w_j u_j^2 found over S_T: the vertices {-1, 0, 1}^q and local maximisation."""
    lay = _stat(p, statistic)
    t = lay.statistic()
    q = p + 1
    grid = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=q)))
    P = t(grid)
    best = 0.0
    for i in range(len(P)):
        d = P[i] - P
        best = max(best, float(np.max(d * d @ w)))

    def neg(v):
        u = t(v[None, :q])[0] - t(v[None, q:])[0]
        return -float(u * u @ w)

    for _ in range(starts):
        r = minimize(neg, rng.uniform(-1, 1, 2 * q), bounds=[(-1, 1)] * (2 * q), method="L-BFGS-B")
        best = max(best, -r.fun)
    return best


# -- the certified bounds ---------------------------------------------------------------------------
@pytest.mark.parametrize("p", range(1, 13))
def test_l2_sensitivity_closed_form(p):
    N = p + 2
    sens = l2_sensitivity(p)
    assert sens.value**2 == pytest.approx(max(N * N, (N * N + 7 * N - 6) / 2), rel=1e-15)
    assert Fraction(sens.value) ** 2 >= max(Fraction(N * N), Fraction(N * N + 7 * N - 6, 2))  # rounded up
    witness = 4 * (N // 2) * (N - N // 2)  # records 1 and 1 with floor(N/2) of the entries of (1, z) flipped
    if p >= 4 and N % 2 == 0:
        assert sens.kind == "exact" and sens.value == N
    else:
        assert sens.kind == "bound" and sens.lower == pytest.approx(math.sqrt(max(witness, 0)))
    # Against the per-coordinate bound 2 sqrt(d) that SensitivitySpace.naive_sensitivity gives.
    assert sens.value < 2 * math.sqrt(_stat(p).dim)


@pytest.mark.parametrize("p, statistic", [(1, "gram"), (1, "paper"), (2, "gram"), (3, "gram"), (4, "paper")])
def test_the_bounds_hold_against_an_independent_search(p, statistic):
    rng = np.random.default_rng(SEED + p)
    lay = _stat(p, statistic)
    for k in range(4):
        s = (1.0, *np.exp(rng.uniform(-1, 1, 4))) if k else (1.0, 1.0, 1.0, 1.0, 1.0)
        sens = weighted_sensitivity(p, s, statistic=statistic)
        found = _largest_found(p, _weights(lay, *s), statistic, starts=40, rng=rng)
        assert found <= sens.value**2 * (1 + 1e-12), (s, found, sens)
        # Not vacuous: within 30% of what is found, and attained exactly at p = 4 with equal weights.
        assert sens.value**2 <= 1.3 * found, (s, found, sens)


def test_an_interior_point_beats_the_vertices_and_the_bound_covers_it():
    """Power: without the squares term c_i, G would not be a bound (at p = 1 an interior z beats N^2 = 9)."""
    lay = _stat(1)
    w = _weights(lay, 1.0, 1.0, 1.0, 1.0, 1.0)
    found = _largest_found(1, w, "gram", starts=40, rng=np.random.default_rng(SEED))
    # (A^2 + B^2) / 2 alone: vertices give at most N^2 = 9 for p = 1; S_T reaches more than 11.
    assert found > 11 and l2_sensitivity(1).value ** 2 >= found


def test_add_remove_bound_is_the_sum_of_the_weights():
    lay = _stat(3, neighbours="add_remove")
    assert weighted_sensitivity(3, neighbours="add_remove").value == pytest.approx(math.sqrt(lay.dim))
    rng = np.random.default_rng(SEED)
    w = np.exp(rng.uniform(-1, 1, lay.dim))
    sens = weighted_sensitivity(3, w, neighbours="add_remove")
    t = lay.statistic()
    Z = np.concatenate([rng.uniform(-1, 1, (2000, 4)), np.ones((1, 4))])
    vals = np.sum(w * t(Z) ** 2, axis=1)
    assert vals.max() <= sens.value**2 * (1 + 1e-12) and vals[-1] == pytest.approx(sens.value**2)


@pytest.mark.parametrize("p, neighbours", [(2, "replace"), (5, "replace"), (3, "add_remove")])
def test_split_scales_are_certified_by_their_weights(p, neighbours):
    c, sens = shape_scales(p, neighbours, "gram", "split")
    lay = _stat(p, neighbours=neighbours)
    assert c.shape == (lay.dim,) and np.all(c > 0)
    assert np.min(c[lay.xy]) > np.max(c[lay.cross]) if neighbours == "replace" else True
    # ||C u||^2 over a search of S_T stays below the certified bound.
    if neighbours == "replace":
        found = _largest_found(p, c * c, "gram", starts=20, rng=np.random.default_rng(SEED))
        assert found <= sens.value**2 * (1 + 1e-12)
    assert shape_scales(p, neighbours, "gram", "split")[0] is c  # public and cached: a function of p only


def test_scaled_statistic_rounds_C_T_exactly():
    rng = np.random.default_rng(SEED)
    X, y = rng.uniform(-1, 1, (300, 2)), rng.uniform(-1, 1, 300)
    exact = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1)).exact.with_layout(_stat(2))
    scales = shape_scales(2, shape="split")[0]
    spacing = np.full(len(scales), 2.0**-10)
    value, error = ScaledStatistic(exact, scales).on_lattice(spacing)
    assert error == 0.0
    for u, c, v in zip(exact.units, scales, value):
        target = Fraction(int(u), 2**64) * Fraction(c) / Fraction(2**-10)
        assert abs(Fraction(v) / Fraction(2**-10) - target) <= Fraction(1, 2)  # the nearest lattice point
        assert Fraction(v / 2**-10).denominator == 1


# -- the mechanism ----------------------------------------------------------------------------------
def _data(n=2000, p=2, seed=SEED):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = X @ np.linspace(1, -0.5, p) + 0.2 * rng.standard_normal(n)
    return X, np.clip(y, -3, 3)


@pytest.mark.parametrize("shape", ["spherical", "split"])
def test_the_noise_has_the_certified_scale(shape):
    """Empirical variance of the noise on T over 300 releases: within chi-square limits (failure rate ~1e-6)."""
    X, y = _data(200)
    stats = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-3, 3))
    T = stats.exact.with_layout(_stat(2)).value
    rng = np.random.default_rng(SEED)
    draws = np.array(
        [
            gaussian_functional_mechanism(stats.exact, 200, p=2, rho=0.5, shape=shape, rng=rng).released - T
            for _ in range(300)
        ]
    )
    fm = gaussian_functional_mechanism(stats.exact, 200, p=2, rho=0.5, shape=shape, rng=1)
    c, sens = shape_scales(2, shape=shape)
    # sigma >= Delta / sqrt(2 rho), with Delta the certified bound of ||C u||_2; the noise on T is sigma / c_j.
    assert fm.noise_sd * c == pytest.approx(np.full(len(c), fm.noise_sd[0] * c[0]))
    assert fm.noise_sd[0] * c[0] >= sens.value / math.sqrt(2 * 0.5)
    ratio = draws.var(axis=0, ddof=1) / fm.noise_sd**2  # ~ chi2_299 / 299 each
    assert np.all((ratio > 0.70) & (ratio < 1.35)), ratio


def test_the_privacy_loss_of_S_T_stays_below_rho():
    rng = np.random.default_rng(SEED)
    lay = _stat(3)
    t = lay.statistic()
    for shape in ("spherical", "split"):
        c, sens = shape_scales(3, shape=shape)
        mech = GaussianMechanism(sens, 0.25, dim=lay.dim)
        Z, W = rng.choice([-1.0, 0.0, 1.0], (20_000, 4)), rng.uniform(-1, 1, (20_000, 4))
        U = c * (t(Z) - t(rng.permutation(np.concatenate([Z[:10_000], W[:10_000]]))))
        assert np.max(mech.privacy_loss(U)) <= 0.25


# -- LinearRegression(rho=...) -------------------------------------------------------------------------
def test_linear_regression_under_rho_reports_and_charges_rho_once():
    X, y = _data()
    acc = PrivacyAccountant(total_rho=1.0)
    reg = LinearRegression(rho=0.25, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, random_state=SEED).fit(X, y)
    assert (reg.rho_, reg.epsilon_) == (0.25, None)
    assert (reg.release_.rho, reg.release_.epsilon, reg.release_.budget) == (0.25, None, "rho")
    assert reg.release_.method == "Gaussian" and reg.norm_ == "gaussian (spherical)"
    assert "exact discrete Gaussian" in reg.release_.sampler and "T summed exactly" in reg.release_.sampler
    assert [(e.rho, e.epsilon) for e in acc.ledger] == [(0.25, None)]
    assert reg.coef_ == pytest.approx([1.0, -0.5], abs=0.1)
    assert reg.conf_int().shape == (3, 2) and "rho:" in str(reg.summary())
    assert reg.sensitivity_.value == l2_sensitivity(2).value


def test_linear_regression_epsilon_default_and_charges_a_rho_ledger_its_square_half():
    X, y = _data()
    reg = LinearRegression(norm="linf", bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=SEED).fit(X, y)
    assert reg.epsilon is None and (reg.epsilon_, reg.rho_) == (1.0, None) and reg.release_.epsilon == 1.0
    acc = PrivacyAccountant(total_rho=1.0)
    LinearRegression(epsilon=1.0, norm="linf", bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc).fit(X, y)
    assert acc.spent_rho == pytest.approx(0.5)


def test_linear_regression_refusals_under_rho():
    X, y = _data()
    base = dict(bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=SEED)
    with pytest.raises(InvalidParameterError, match="'epsilon' and 'rho' parameters of LinearRegression are exclusive"):
        LinearRegression(epsilon=1.0, rho=0.5, **base).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'norm' parameter of LinearRegression must be 'auto' with rho"):
        LinearRegression(rho=0.5, norm="linf", **base).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'xy_share' parameter of LinearRegression must be 'auto' with rho"):
        LinearRegression(rho=0.5, xy_share=0.3, **base).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'shape' parameter of LinearRegression must be 'spherical'"):
        LinearRegression(epsilon=1.0, shape="split", **base).fit(X, y)
    acc = PrivacyAccountant(1.0)
    reg = LinearRegression(rho=0.5, accountant=acc, **base)
    with pytest.raises(PureEpsilonLedgerError, match="Nothing was charged"):
        reg.fit(X, y)
    assert acc.ledger == [] and not hasattr(reg, "coef_")
    acc = PrivacyAccountant(total_rho=0.2)
    with pytest.raises(BudgetExceededError, match="Spending rho=0.5"):
        LinearRegression(rho=0.5, accountant=acc, **base).fit(X, y)


@pytest.mark.parametrize("neighbours, statistic", [("replace", "paper"), ("add_remove", "gram")])
def test_linear_regression_under_rho_other_layouts_and_the_noise_free_limit(neighbours, statistic):
    X, y = _data()
    kw = dict(rho=1.0, bounds_X=(-1, 1), bounds_y=(-3, 3), neighbours=neighbours, statistic=statistic)
    reg = LinearRegression(**kw, shape="split", random_state=SEED).fit(X, y)
    assert reg.coef_ == pytest.approx([1.0, -0.5], abs=0.15) and reg.conf_int().shape == (3, 2)
    with nonprivate():
        exact = LinearRegression(**kw, random_state=SEED).fit(X, y)
    Z = np.column_stack([np.ones(len(y)), X])
    ols = np.linalg.lstsq(Z, y, rcond=None)[0]
    assert exact.coef_ == pytest.approx(ols[1:], abs=1e-6) and exact.intercept_ == pytest.approx(ols[0], abs=1e-6)


def test_intervals_under_rho_cover_at_their_level():
    """Coverage of the slope by 90% bootstrap intervals over 40 fits: at least 27 (binomial lower tail ~1e-3)."""
    rng = np.random.default_rng(SEED)
    hits = 0
    for _ in range(40):
        X = rng.uniform(-1, 1, (500, 1))
        y = np.clip(0.5 * X[:, 0] + 0.3 * rng.standard_normal(500), -2, 2)
        reg = LinearRegression(rho=0.5, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=rng).fit(X, y)
        lo, hi = reg.conf_int(0.1)[1]
        hits += lo <= 0.5 <= hi
    assert hits >= 27, hits


# -- LogisticRegression(rho=...) -----------------------------------------------------------------------
def _labels(n=3000, seed=SEED):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    return X, y


def test_logistic_regression_under_rho_spends_at_most_rho():
    X, y = _labels()
    acc = PrivacyAccountant(total_rho=0.5)
    clf = LogisticRegression(
        rho=0.5, bounds_X=(-1, 1), classes=[0, 1], inference_share="auto", accountant=acc, random_state=SEED
    ).fit(X, y)
    assert (clf.rho_, clf.epsilon_) == (0.5, None)
    model, info = acc.ledger
    eps = [model.epsilon, info.epsilon]
    assert [r.epsilon for r in clf.releases_] == eps and all(r.rho is None for r in clf.releases_)
    assert 0.5 * (1 - 1e-9) <= acc.spent_rho <= 0.5
    # The shares of epsilon are those the epsilon fit would use, scaled so that sum eps^2 / 2 = rho.
    share = clf.inference_share_
    assert eps[1] / eps[0] == pytest.approx(share / (1 - share))
    assert math.fsum(e * e / 2 for e in eps) == pytest.approx(0.5)
    assert "rho" in str(clf.summary())


def test_logistic_one_vs_rest_under_rho_splits_rho_evenly():
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = np.digitize(X[:, 0], [-0.3, 0.3])
    acc = PrivacyAccountant(total_rho=0.6)
    LogisticRegression(rho=0.6, bounds_X=(-1, 1), classes=[0, 1, 2], multi_class="ovr", accountant=acc).fit(X, y)
    eps = [e.epsilon for e in acc.ledger]
    assert len(eps) == 3 and eps[0] == eps[1] == eps[2] == pytest.approx(math.sqrt(2 * 0.6 / 3))
    assert acc.spent_rho <= 0.6


def test_logistic_refuses_both_budgets():
    with pytest.raises(InvalidParameterError, match="'epsilon' and 'rho' parameters of LogisticRegression"):
        LogisticRegression(epsilon=1.0, rho=0.5, bounds_X=(-1, 1), classes=[0, 1]).fit(*_labels(200))


# -- check_fit_budget on rho ledgers (it read total_epsilon and spent, which a rho ledger lacks) -------
def test_check_fit_budget_reads_a_rho_ledger_in_rho():
    acc = PrivacyAccountant(total_rho=0.5)
    acc.spend(rho=0.2, label="earlier")
    # eps = (0.6, 0.4): charged 0.18 + 0.08 = 0.26 > 0.3 left? No: fits. Their sum 1.0 > sqrt(0.6) = 0.77 does not matter.
    check_fit_budget(acc, "Example", epsilons=[0.6, 0.4])
    with pytest.raises(
        BudgetExceededError, match=r"Spending rho=0.5 on 'Example.fit' would exceed the total 0.5 \(spent 0.2"
    ):
        check_fit_budget(acc, "Example", epsilons=[0.8, 0.6])  # 0.32 + 0.18
    with pytest.raises(BudgetExceededError, match="Spending rho=0.4"):
        check_fit_budget(acc, "Example", rhos=[0.2, 0.2])
    eps_ledger = PrivacyAccountant(1.0)
    with pytest.raises(PureEpsilonLedgerError, match="pure epsilon ledger"):
        check_fit_budget(eps_ledger, "Example", rhos=[0.1, 0.1])
    with pytest.raises(BudgetExceededError, match=r"Spending epsilon=1.2 on 'Example.fit' would exceed the total 1"):
        check_fit_budget(eps_ledger, "Example", epsilons=[0.6, 0.6])
    check_fit_budget(eps_ledger, "Example", epsilons=[0.5, 0.5])
    check_fit_budget(acc, "Example", epsilons=[5.0])  # one release: the accountant's own charge refuses


def test_scales_are_rounded_below_the_exact_weights():
    """c_j^2 <= w_j in exact arithmetic (the bound is certified for w; a smaller weight only lowers ||C u||)."""
    from knorm.models.functional_gaussian import _scales_below

    rng = np.random.default_rng(SEED)
    w = [Fraction(int(a), int(b)) for a, b in rng.integers(1, 10**6, size=(500, 2))] + [Fraction(1, 3), Fraction(2)]
    c = _scales_below(w)
    assert all(Fraction(x) ** 2 <= v for x, v in zip(c, w))
    assert all(Fraction(x) ** 2 >= v * (1 - Fraction(1, 10**15)) for x, v in zip(c, w))
