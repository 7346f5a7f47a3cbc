"""Tests of the private linear regression (paper Section 5: functional mechanism, K-norm noise).

Statistical tests use fixed seeds; the failure rate stated for each is the chance
that it fails for a seed drawn at random under a correct implementation.
"""

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from knorm.accounting import BudgetExceededError, PrivacyAccountant
from knorm.mechanisms import nonprivate
from knorm.models import LinearRegression, auto_norm, noise_floor
from knorm.sensitivity import RegressionLayout
from tests.settings import SEED

# Paper Algorithm "Simulate Confidence Coverage": p = 5, beta = (0, -1.5, ..., 1.5).
BETA = np.linspace(-1.5, 1.5, 5)
# Y is unbounded; the declared bound is public: |x'beta| <= sum |beta| = 4.5 on the
# feature box, plus 4 noise standard deviations (clips ~6e-5 of the responses).
BOUNDS_Y_SIM = (-(np.abs(BETA).sum() + 4.0), np.abs(BETA).sum() + 4.0)


def simulate(rng, n):
    X = rng.uniform(-1, 1, size=(n, len(BETA)))
    return X, X @ BETA + rng.standard_normal(n)


def ols(X, y):
    sk = SkLinearRegression().fit(X, y)
    return np.concatenate([[sk.intercept_], sk.coef_])


def l2_errors(make, X, y, seeds):
    """||(intercept, coef) - OLS||_2 over private fits with the given seeds."""
    ref = ols(X, y)
    est = [make(s).fit(X, y) for s in seeds]
    return np.array([np.linalg.norm(np.concatenate([[e.intercept_], e.coef_]) - ref) for e in est])


# -- scikit-learn conformance -------------------------------------------------------------
# Every check runs twice: with DP noise at epsilon = 1, and in the explicit noise-free limit
# (knorm.mechanisms.nonprivate()), where every check passes (check_array_api_input is
# skipped by scikit-learn itself unless SCIPY_ARRAY_API is set). With noise exactly one
# check fails, as it should: check_regressors_train asks for R^2 > 0.5 on 200 standardised
# points, and with bounds of +-10 / +-100 the eps = 1 noise on X'X and X'Y swamps the signal
# of n = 200 records (privacy working, not a bug). Listed so the suite documents it; with
# xfail_strict its three variants (float64, float32 and read-only memmap inputs) must fail.
# The checks' data leave the bounds at times: clipping is counted and warned about.
_TRAIN_CHECK = "DP noise at epsilon=1 with bounds +-10/+-100 on 200 records: R^2 > 0.5 is not reachable"
_CHECKED = dict(norm="linf", bounds_X=(-10, 10), bounds_y=(-100, 100), random_state=0)


@parametrize_with_checks(
    [LinearRegression(epsilon=1.0, **_CHECKED)],
    expected_failed_checks=lambda est: {"check_regressors_train": _TRAIN_CHECK},
)
@pytest.mark.filterwarnings("ignore::knorm.exceptions.ClippingWarning")
def test_sklearn_conformance(estimator, check):
    check(estimator)


@parametrize_with_checks([LinearRegression(epsilon=1.0, **_CHECKED)])
@pytest.mark.filterwarnings("ignore::knorm.exceptions.ClippingWarning")
def test_sklearn_conformance_in_the_noise_free_limit(estimator, check):
    with nonprivate():
        check(estimator)


# -- agreement with OLS for huge epsilon ---------------------------------------------------------
def _box_data(rng, n=400):
    lo, hi = np.array([0.0, -5.0, 10.0]), np.array([2.0, 5.0, 20.0])
    X = rng.uniform(lo, hi, size=(n, 3))
    y = 3.0 + X @ [1.0, -2.0, 0.5] + rng.standard_normal(n)
    return X, y, (lo, hi), (-30.0, 50.0)  # asymmetric: the y shift must be mapped back


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    "mechanism,neighbours,postprocess",
    [
        ("linf", "replace", "eigen"),
        ("linf", "replace", "pinv"),
        ("kt", "replace", "eigen"),
        ("cut", "replace", "eigen"),
        ("l1", "replace", "eigen"),
        ("l2", "add_remove", "eigen"),
        ("auto", "add_remove", "pinv"),
    ],
)
def test_nonprivate_limit_reproduces_sklearn(fit_intercept, mechanism, neighbours, postprocess):
    # Inside nonprivate() the release is the exact statistic (no noise, floor 0), so the
    # estimate must be OLS in the original units: a check of the arithmetic.
    X, y, bx, by = _box_data(np.random.default_rng(SEED))
    reg = LinearRegression(
        epsilon=1.0,
        norm=mechanism,
        bounds_X=bx,
        bounds_y=by,
        fit_intercept=fit_intercept,
        neighbours=neighbours,
        postprocess=postprocess,
        random_state=1,
    )
    with nonprivate():
        reg.fit(X, y)
    sk = SkLinearRegression(fit_intercept=fit_intercept).fit(X, y)
    assert reg.fit_diagnostics_.n_clipped == 0 and reg.release_.epsilon == np.inf
    assert_allclose(reg.coef_, sk.coef_, rtol=1e-6, atol=1e-6)
    assert_allclose(reg.intercept_, sk.intercept_, rtol=1e-6, atol=1e-6)
    assert_allclose(reg.predict(X), sk.predict(X), rtol=1e-6, atol=1e-5)


# -- the paper's simulation (Section 5.2) ----------------------------------------------------------
def test_simulation_linf_beats_l1_at_eps_1():
    # Paper Section 5.2 / Figure "Simulation": l_inf needs about half the budget of l1.
    # Measured here: median errors ~0.19 (l_inf) vs ~0.43 (l1, per-coordinate bound 52
    # against 2); over 200 draws the two medians are ~20 standard errors apart, so the
    # failure rate for a random seed is far below 1e-6.
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 10_000)
    seeds = range(200)
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM)
    err = {
        m: np.median(l2_errors(lambda s, m=m: LinearRegression(norm=m, random_state=s, **kw), X, y, seeds))
        for m in ("linf", "l1")
    }
    assert err["linf"] < 0.7 * err["l1"]


def test_noise_scales_with_epsilon():
    # The DP pitfall of noise that ignores epsilon: with n = 10^4 the estimate is linear
    # in the noise, so the median error must scale like 1/eps. Expected ratio 4; the
    # interval [3, 5.3] is > 6 standard errors wide on each side (failure rate < 1e-6).
    rng = np.random.default_rng(SEED + 1)
    X, y = simulate(rng, 10_000)
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM)
    med = [
        np.median(l2_errors(lambda s, e=e: LinearRegression(epsilon=e, random_state=s, **kw), X, y, range(200)))
        for e in (1.0, 4.0)
    ]
    assert 3.0 < med[0] / med[1] < 5.3


# -- post-processing ------------------------------------------------------------------------
def test_floor_is_public_and_scales_with_noise():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 2000)
    reg = LinearRegression(epsilon=2.0, norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0)
    reg.fit(X, y)
    # The floor is the unit floor times the noise scale: Delta / eps, or Delta~ / eps on a lattice (<= 1% more).
    inflation = reg.noise_scale_ * 2.0 / reg.sensitivity_.value
    assert 1.0 <= inflation <= 1.01
    assert reg.floor_ == pytest.approx(inflation * noise_floor("linf", 5, 2.0, statistic="gram", level=0.5))
    assert noise_floor("linf", 5, 2.0, level=0.5) < noise_floor("linf", 5, 2.0)  # the median is below the 0.9-quantile
    assert noise_floor("linf", 5, 1.0) == pytest.approx(2 * noise_floor("linf", 5, 2.0))
    # The response square adds a coordinate to the noise, which grows with the dimension.
    assert noise_floor("linf", 5, 2.0, statistic="gram") > noise_floor("linf", 5, 2.0)
    # The floor does not depend on the data: refit on other data, same floor.
    X2, y2 = simulate(rng, 500)
    assert clone(reg).fit(X2, y2).floor_ == reg.floor_
    assert clone(reg).set_params(postprocess="pinv").fit(X, y).floor_ == 0.0


def test_eigen_equals_pinv_when_data_dominate():
    # n = 10^4, eps = 4: the smallest eigenvalue of the scaled Gram block (~n/3) is far
    # above the floor (~37 at eps = 4), so 'eigen' returns the paper's estimator.
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 10_000)
    kw = dict(epsilon=4.0, norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=3)
    a = LinearRegression(**kw).fit(X, y)
    b = LinearRegression(postprocess="pinv", **kw).fit(X, y)
    assert a.n_floored_ == 0 and a.floor_ < 0.05 * len(X) / 3
    assert_allclose(a.coef_, b.coef_, rtol=1e-10)


def _housing():
    """Paper Section 5.3 preprocessing on the California housing data, in [-1, 1] units."""
    from knorm.experiments.data import HOUSING_LOG, HOUSING_TARGET, housing_path, prepare_regression_data

    data = prepare_regression_data(housing_path(), HOUSING_TARGET, log_columns=HOUSING_LOG)
    return data.X, data.y


def test_housing_eigen_floor_beats_pinv():
    # Measured (200 draws, eps = 4, mechanism 'auto' = split at p = 12): median error ~1.3
    # ('eigen') vs ~3.6 ('pinv'), against ||beta_OLS|| ~1.7. Over 40 draws per rule the
    # medians are > 10 standard errors apart: failure rate far below 1e-6.
    X, y = _housing()
    assert X.shape == (20_433, 12)
    seeds = range(40)
    kw = dict(epsilon=4.0, bounds_X=(-1, 1), bounds_y=(-1, 1))
    med = {
        pp: np.median(l2_errors(lambda s, pp=pp: LinearRegression(postprocess=pp, random_state=s, **kw), X, y, seeds))
        for pp in ("eigen", "pinv")
    }
    assert med["eigen"] < 0.5 * med["pinv"]
    fit = LinearRegression(epsilon=4.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0).fit(X, y)
    assert fit.norm_ == "split" and fit.n_floored_ > 0  # the collinear log-count columns
    assert med["eigen"] < np.linalg.norm(ols(X, y))  # better than reporting zero


# -- fitted attributes, inputs, reproducibility -----------------------------------------------------
def test_n_clipped_counts_entries_outside_bounds():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 1000)
    X[:7, 0] = 3.0
    X[10:12, 4] = -2.0
    y[:5] = 100.0
    reg = LinearRegression(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0).fit(X, y)
    assert reg.fit_diagnostics_.n_clipped == 7 + 2 + 5 and not hasattr(reg, "n_clipped_")


def test_fitted_attributes():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 500)
    reg = LinearRegression(bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0).fit(X[:, :2], y)
    assert reg.norm_ == "split" and "xy share 0.47" in reg.release_.ball_name
    # Delta = 1, exact (regression_split_ball, Notes; recomputed from the blocks in test_regression).
    assert reg.sensitivity_.value == 1.0 and reg.sensitivity_.kind == "exact"
    cut = LinearRegression(norm="cut", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0).fit(X[:, :2], y)
    assert cut.sensitivity_.value == 1.0 and cut.release_.ball_name == "K_T cut (p=2, y^2)"
    assert reg.statistic_noisy_.shape == (RegressionLayout(2, response_square=True).dim,)
    assert reg.n_samples_ == 500 and reg.n_features_in_ == 2
    assert reg.coef_.shape == (2,) and isinstance(reg.intercept_, float)
    assert reg.sensitivity_.value <= reg.noise_scale_ <= 1.01 * reg.sensitivity_.value  # eps = 1; lattice slack
    d = RegressionLayout(5, response_square=True).dim
    lin = LinearRegression(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0).fit(X, y)
    assert lin.sensitivity_.value == pytest.approx(2.0)
    ar = LinearRegression(norm="linf", neighbours="add_remove", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM)
    ar.set_params(random_state=0).fit(X, y)
    assert ar.sensitivity_.value == pytest.approx(1.0)  # every add/remove coordinate has sensitivity 1
    assert ar.statistic_noisy_.shape == (d + 1,)
    assert ar.n_samples_ != 500 and abs(ar.n_samples_ - 500) < 100  # the released noisy count


def test_split_share_is_a_parameter():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 300)
    kw = dict(bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=0)
    reg = LinearRegression(xy_share=0.5, **kw).fit(X, y)
    assert reg.release_.ball_name == "split(p=5, y^2, xy share 0.5)"
    inflation = reg.noise_scale_ / reg.sensitivity_.value  # 1, or Delta~ / Delta <= 1.01 on a lattice
    unit = noise_floor("split", 5, 1.0, statistic="gram", xy_share=0.5, level=0.5)
    assert reg.floor_ == pytest.approx(inflation * unit)
    # A larger response share puts more noise on the design block: a larger floor.
    assert reg.floor_ > LinearRegression(xy_share=0.2, **kw).fit(X, y).floor_
    assert LinearRegression(norm="cut", xy_share=0.5, **kw).fit(X, y).release_.ball_name == "K_T cut (p=5, y^2)"
    with pytest.raises(ValueError, match=r"The 'xy_share' parameter of LinearRegression must be"):
        LinearRegression(xy_share=1.0, **kw).fit(X, y)


def test_auto_norm_thresholds():
    assert auto_norm(2) == "cut"
    assert auto_norm(16) == "linf"
    assert auto_norm(3, "add_remove") == "linf"
    assert auto_norm(3, "replace", "gram") == "cut"


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_gram_statistic_extends_the_papers(neighbours):
    # statistic='gram' releases the paper's T plus one last coordinate, the (doubled under
    # replace) sum of squares of the scaled response; 'paper' releases the paper's T.
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 300)
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, neighbours=neighbours, random_state=0)
    with nonprivate():
        paper = LinearRegression(statistic="paper", **kw).fit(X, y)
        gram = LinearRegression(**kw).fit(X, y)
    assert gram.statistic == "gram"
    assert_allclose(gram.statistic_noisy_[:-1], paper.statistic_noisy_, rtol=0, atol=0)
    weight = 2.0 if neighbours == "replace" else 1.0
    y_scaled = np.clip(y, *BOUNDS_Y_SIM) / BOUNDS_Y_SIM[1]
    y_scaled = np.rint(y_scaled * 2.0**32) / 2.0**32  # the records are summed on the grid 2^-32
    assert gram.statistic_noisy_[-1] == pytest.approx(weight * np.sum(y_scaled**2), rel=1e-12)
    assert_allclose(gram.coef_, paper.coef_, rtol=1e-12)
    # With noise: the same sensitivity for l_inf (every coordinate 2 under replace).
    noisy = [LinearRegression(statistic=st, **kw).fit(X, y) for st in ("paper", "gram")]
    assert noisy[0].sensitivity_.value == pytest.approx(noisy[1].sensitivity_.value)


def test_pandas_equals_numpy_and_feature_names():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 500)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)])
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=4)
    a = LinearRegression(**kw).fit(X, y)
    b = LinearRegression(**kw).fit(df, pd.Series(y))
    assert_allclose(b.coef_, a.coef_, rtol=0, atol=0)
    assert list(b.feature_names_in_) == list(df.columns)
    assert not hasattr(a, "feature_names_in_")
    assert_allclose(b.predict(df), a.predict(X))


def test_same_random_state_same_fit():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 500)
    X = X[:, :3]  # 'auto' (hull at p = 3) is part of what must be reproducible
    kw = dict(bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM)
    a = LinearRegression(random_state=11, **kw).fit(X, y)
    b = LinearRegression(random_state=11, **kw).fit(X, y)
    c = LinearRegression(random_state=12, **kw).fit(X, y)
    assert_allclose(a.statistic_noisy_, b.statistic_noisy_, rtol=0, atol=0)
    assert_allclose(a.coef_, b.coef_, rtol=0, atol=0)
    assert not np.allclose(a.coef_, c.coef_)


def test_accountant_charged_before_release_and_refuses():
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 300)
    acc = PrivacyAccountant(1.0)
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, accountant=acc)
    reg = LinearRegression(epsilon=0.75, **kw)
    reg.fit(X, y)
    assert acc.spent == pytest.approx(0.75)
    assert "LinearRegression" in acc.ledger[0].label
    fresh = clone(reg)
    with pytest.raises(BudgetExceededError):
        fresh.fit(X, y)
    assert acc.spent == pytest.approx(0.75)  # nothing charged
    with pytest.raises(NotFittedError):
        fresh.predict(X)  # nothing released


# -- errors ------------------------------------------------------------------------------------
def _fit(X=None, y=None, **params):
    rng = np.random.default_rng(SEED)
    X0, y0 = simulate(rng, 50)
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=(-10, 10), random_state=0)
    kw.update(params)
    return LinearRegression(**kw).fit(X0 if X is None else X, y0 if y is None else y)


@pytest.mark.parametrize("eps", [0, -1, math.inf, math.nan])
def test_epsilon_errors(eps):
    rule = r"The 'epsilon' parameter of LinearRegression must be a float in the range \(0(\.0)?, inf\) or None\. Got"
    with pytest.raises(ValueError, match=rule):
        _fit(epsilon=eps)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_data_rejected(bad):
    X, y = simulate(np.random.default_rng(0), 50)
    X[3, 2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        _fit(X, y)
    X[3, 2] = 0.0
    y[5] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        _fit(X, y)


def test_shape_errors():
    X, y = simulate(np.random.default_rng(0), 50)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        _fit(X, y[:-1])
    with pytest.raises(ValueError, match="2D array"):
        _fit(X[:, 0], y)
    reg = _fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features, but LinearRegression is expecting 5"):
        reg.predict(X[:, :4])


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(bounds_X=None), r"'bounds_X' parameter of LinearRegression must be given as \(lower, upper\).*never"),
        (dict(bounds_y=None), r"The 'bounds_y' parameter of LinearRegression must be given"),
        (dict(bounds_X=(1, -1)), r"'bounds_X' parameter of LinearRegression must satisfy lower < upper.*lower = 1\.0"),
        (dict(bounds_y=(5, 5)), r"The 'bounds_y' parameter of LinearRegression must satisfy lower < upper"),
        (dict(bounds_X=([0, 0], [1, 1])), r"'bounds_X' parameter of LinearRegression must be a pair .* of length 5"),
        (dict(bounds_y=([0, 0], [1, 1])), r"'bounds_y' parameter of LinearRegression must be a pair .* of length 1"),
        (dict(bounds_X=(-1, np.inf)), r"The 'bounds_X' parameter of LinearRegression must have finite bounds"),
        (dict(norm="l3"), r"The 'norm' parameter of LinearRegression must be a str among"),
        (dict(postprocess="ridge"), r"The 'postprocess' parameter of LinearRegression must be a str among"),
        (dict(statistic="full"), r"The 'statistic' parameter of LinearRegression must be a str among"),
        (dict(neighbours="swap"), r"The 'neighbours' parameter of LinearRegression must be a str among"),
        (
            dict(norm="kt", neighbours="add_remove"),
            r"'norm' parameter of LinearRegression must be one of \('l1', 'l2', 'linf'\) with "
            r"neighbours='add_remove'\. Got 'kt'",
        ),
        (dict(norm="cut", neighbours="add_remove"), r"Got 'cut' instead\. K_T and the cut ball were derived"),
    ],
)
def test_parameter_errors(params, match):
    with pytest.raises(ValueError, match=match):
        _fit(**params)


def test_init_stores_parameters_untouched():
    bx = ([0.0, 1.0], [1.0, 2.0])
    reg = LinearRegression(epsilon=2, bounds_X=bx, bounds_y=(0, 1))
    assert reg.get_params()["bounds_X"] is bx and reg.epsilon == 2 and reg.norm == "auto"
    X = np.random.default_rng(0).uniform([0, 1], [1, 2], size=(100, 2))
    reg.fit(X, X.sum(axis=1) / 3)
    assert reg.bounds_X is bx and reg.epsilon == 2 and reg.norm == "auto"


def test_release_does_not_depend_on_the_row_order():
    # The statistic is summed exactly (Casacuberta et al. 2022: float sums depend on the order),
    # so a fit on permuted rows releases the same vector, bit for bit: without noise (where the
    # float sums of the old computation differed in their last bits) and with the same seed.
    rng = np.random.default_rng(SEED)
    X, y = simulate(rng, 5000)
    kw = dict(norm="linf", bounds_X=(-1, 1), bounds_y=BOUNDS_Y_SIM, random_state=5)
    order = np.argsort(-np.abs(y))  # large responses first, then small ones
    with nonprivate():
        a = LinearRegression(**kw).fit(X, y)
        b = LinearRegression(**kw).fit(X[order], y[order])
    assert np.array_equal(a.statistic_noisy_, b.statistic_noisy_)
    a = LinearRegression(**kw).fit(X, y)
    b = LinearRegression(**kw).fit(X[order], y[order])
    assert np.array_equal(a.statistic_noisy_, b.statistic_noisy_) and np.array_equal(a.coef_, b.coef_)
    assert a.release_.sampler.startswith("lattice") and "T summed exactly" in a.release_.sampler
