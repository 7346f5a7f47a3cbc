"""Bad input to knorm.stats: each error names the parameter, the rule and the value, before any charge."""

import math

import numpy as np
import pytest

import knorm.stats as dp
from knorm import PrivacyAccountant
from knorm.sensitivity import Box, FiniteDomain, QuadraticStatistic

X = np.random.default_rng(0).uniform(0, 1, size=(20, 2))
x = X[:, 0]
NAN = np.array([0.5, np.nan, 0.2])
T = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [1.0])

EPSILON_CASES = [
    (0, ValueError, "Got 0.0 instead"),
    (-1, ValueError, "Got -1.0 instead"),
    (math.inf, ValueError, "Got inf instead"),
    (math.nan, ValueError, "Got nan instead"),
    ("1", TypeError, "Got '1' instead"),
]
# Every public function, called with valid arguments and a given epsilon.
FUNCTIONS = {
    "sum": lambda eps: dp.sum(x, (0, 1), epsilon=eps),
    "count": lambda eps: dp.count(x > 0.5, epsilon=eps),
    "mean": lambda eps: dp.mean(x, (0, 1), epsilon=eps),
    "moments": lambda eps: dp.moments(x, (0, 1), epsilon=eps),
    "var": lambda eps: dp.var(x, (0, 1), epsilon=eps),
    "std": lambda eps: dp.std(x, (0, 1), epsilon=eps),
    "covariance": lambda eps: dp.covariance(X, (0, 1), epsilon=eps),
    "mean_and_covariance": lambda eps: dp.mean_and_covariance(X, (0, 1), epsilon=eps),
    "histogram": lambda eps: dp.histogram(x, [0, 0.5, 1], epsilon=eps),
    "histogramdd": lambda eps: dp.histogramdd(X, [[0, 0.5, 1]] * 2, epsilon=eps),
    "vote": lambda eps: dp.vote(np.array([[0, 1, 2], [2, 0, 1]]), epsilon=eps),
    "release": lambda eps: dp.release(T, x[:, None], epsilon=eps),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("epsilon, exc, got", EPSILON_CASES)
def test_epsilon_outside_zero_inf_is_refused(name, epsilon, exc, got):
    rule = rf"The 'epsilon' parameter of knorm\.stats\.{name} must be a float in the range \(0, inf\)\. {got}"
    with pytest.raises(exc, match=rule):
        FUNCTIONS[name](epsilon)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_no_budget_is_refused_naming_epsilon_and_rho(name):
    # epsilon=None is "not given" now that rho may be given instead (see tests/stats/test_zcdp.py for rho)
    rule = rf"knorm\.stats\.{name} needs exactly one of 'epsilon' .* and 'rho' .*\. Got neither instead"
    with pytest.raises(TypeError, match=rule):
        FUNCTIONS[name](None)


BOUNDS_RULE = r"The 'bounds' parameter of knorm\.stats\.{} must "
CASES = [
    # bounds: missing, inverted, equal, not finite, malformed, wrong length
    (
        lambda: dp.sum(x, None, epsilon=1),
        ValueError,
        BOUNDS_RULE.format("sum") + r"be given as.*declared.*Got None instead",
    ),
    (
        lambda: dp.mean(x, (1, 0), epsilon=1),
        ValueError,
        BOUNDS_RULE.format("mean")
        + r"satisfy lower < upper.*Got lower = 1.0 >= upper = 0.0 at index 0 \(bounds \(1, 0\)\)",
    ),
    (
        lambda: dp.var(x, (1, 1), epsilon=1),
        ValueError,
        BOUNDS_RULE.format("var") + r"satisfy.*\(bounds \(1, 1\)\) instead",
    ),
    (
        lambda: dp.sum(x, (0, math.inf), epsilon=1),
        ValueError,
        BOUNDS_RULE.format("sum") + r"have finite.*Got \(0, inf\)",
    ),
    (lambda: dp.moments(x, (math.nan, 1), epsilon=1), ValueError, BOUNDS_RULE.format("moments") + r".*Got \(nan, 1\)"),
    (
        lambda: dp.sum(x, (0, 1, 2), epsilon=1),
        ValueError,
        BOUNDS_RULE.format("sum") + r"be a pair \(lower, upper\) of finite numbers.*Got \(0, 1, 2\)",
    ),
    (lambda: dp.covariance(X, ([0] * 3, [1] * 3), epsilon=1), ValueError, BOUNDS_RULE.format("covariance")),
    # NaN, empty, non-numeric, wrong shapes
    (
        lambda: dp.sum(NAN, (0, 1), epsilon=1),
        ValueError,
        r"'x' parameter of knorm\.stats\.sum must not hold NaN.*1 NaN",
    ),
    (lambda: dp.histogram(NAN, [0, 0.5, 1], epsilon=1), ValueError, "'x' parameter of knorm.stats.histogram must not"),
    (
        lambda: dp.mean(np.array([]), (0, 1), epsilon=1),
        ValueError,
        r"must be a non-empty array \(at least one record\)",
    ),
    (lambda: dp.sum(np.zeros((3, 0)), (0, 1), epsilon=1), ValueError, "at least one column. Got 'shape .3, 0.'"),
    (lambda: dp.sum(np.zeros((3, 2, 2)), (0, 1), epsilon=1), ValueError, "must be a 1-D or 2-D array of numbers"),
    (
        lambda: dp.sum(["a", "b"], (0, 1), epsilon=1),
        TypeError,
        "must be an array of real numbers. Got 2 non-numeric value",
    ),
    (lambda: dp.var(X, (0, 1), epsilon=1), ValueError, r"'x' parameter of knorm\.stats\.var must be one column. Got 2"),
    (lambda: dp.moments(X, (0, 1), epsilon=1), ValueError, r"knorm\.stats\.moments must be one column"),
    (lambda: dp.histogram(X, [0, 1, 2], epsilon=1), ValueError, r"knorm\.stats\.histogram must be one column"),
    (lambda: dp.covariance(x, (0, 1), epsilon=1), ValueError, r"'X' parameter .* at least 2 columns. Got 1 instead"),
    # neighbours
    (lambda: dp.sum(x, (0, 1), epsilon=1, neighbours="add"), ValueError, "'neighbours' .* 'replace' or 'add_remove'"),
    (lambda: dp.histogram(x, [0, 1, 2], epsilon=1, neighbours=None), ValueError, "Got None instead"),
    # ddof
    (lambda: dp.var(x, (0, 1), epsilon=1, ddof=-1), ValueError, r"'ddof' .* an int in the range \[0, 19\]"),
    (lambda: dp.std(x, (0, 1), epsilon=1, ddof=20), ValueError, r"below the number of records n = 20\). Got 20"),
    (lambda: dp.covariance(X, (0, 1), epsilon=1, ddof=20), ValueError, r"'ddof' parameter of knorm\.stats\.covariance"),
    (lambda: dp.var(x, (0, 1), epsilon=1, ddof=0.5), TypeError, "'ddof' parameter .* must be an int >= 0. Got 0.5"),
    (lambda: dp.var(x, (0, 1), epsilon=1, ddof=-1, neighbours="add_remove"), ValueError, "an int >= 0. Got -1"),
    # bins
    (lambda: dp.histogram(x, [0, 0.5, 0.3, 1], epsilon=1), ValueError, "'bins' .* strictly increasing finite edges"),
    (lambda: dp.histogram(x, [0, 1], epsilon=1), ValueError, r"at least 3 strictly increasing .* Got \[0, 1\]"),
    (lambda: dp.histogram(x, 10, epsilon=1), ValueError, "declared from the data's domain. Got 10 instead"),
    (lambda: dp.histogram(x, [0, math.nan, 1], epsilon=1), ValueError, "finite edges"),
    (lambda: dp.histogram(x, ["a", "b", "c"], epsilon=1), ValueError, "finite edges"),
    (lambda: dp.histogramdd(X, 5, epsilon=1), ValueError, "'bins' .* a sequence of declared edges, one array per"),
    (lambda: dp.histogramdd(X, [[0, 1, 2]], epsilon=1), ValueError, "edges for each of the 2 columns. Got 1"),
    # counts, sums with l0_bound, votes, moments order
    (lambda: dp.count(X, epsilon=1), ValueError, "'x' parameter of knorm.stats.count must hold 0/1 indicators"),
    (lambda: dp.count(np.ones((2, 3)), epsilon=1, l0_bound=2), ValueError, "at most l0_bound = 2 ones per record"),
    (lambda: dp.count(np.ones((2, 3)), epsilon=1, l0_bound=0), ValueError, r"'l0_bound' .* \[1, 3\].*Got 0"),
    (lambda: dp.count(np.ones((2, 3)), epsilon=1, l0_bound=1.5), TypeError, "'l0_bound' .* Got 1.5"),
    (lambda: dp.sum(X, (0, 1), epsilon=1, l0_bound=1), ValueError, r"'bounds' .* must be symmetric, \[-b, b\]"),
    (lambda: dp.sum(X, (-1, 1), epsilon=1, l0_bound=3), ValueError, r"'l0_bound' parameter of knorm\.stats\.sum"),
    (lambda: dp.vote(np.array([[0, 1, 1]]), epsilon=1), ValueError, "one permutation of 0, ..., d - 1 per voter"),
    (lambda: dp.vote(np.zeros((3, 1)), epsilon=1), ValueError, "one column per candidate, at least 2. Got 1"),
    (lambda: dp.moments(x, (0, 1), epsilon=1, order=3), ValueError, "'order' .* must be 1 or 2. Got 3"),
    (lambda: dp.var(x, (0, 1), epsilon=1, norm="sum"), ValueError, "'norm' .* must be 'hull' or 'mean'. Got 'sum'"),
    (
        lambda: dp.std(x, (0, 1), epsilon=1, norm="mean", neighbours="add_remove"),
        ValueError,
        "'norm' parameter of knorm.stats.std must be 'hull' under add/remove",
    ),
    # the generic release
    (lambda: dp.release(T, X, epsilon=1), ValueError, r"'data' .* one column per coordinate of a record \(1"),
    (lambda: dp.release(T, x, FiniteDomain([0.0, 1.0]), epsilon=1), TypeError, "must be a Box .* Got FiniteDomain"),
    (
        lambda: dp.release(T, x, Box([0.0], [2.0]), epsilon=1),
        ValueError,
        "must equal the box of the QuadraticStatistic",
    ),
    (lambda: dp.release(np.sum, x, Box([0.0], [1.0]), epsilon=1), TypeError, "a callable with a FiniteDomain"),
    (
        lambda: dp.release(lambda z: z, x + 5, FiniteDomain([0.0, 1.0]), epsilon=1),
        ValueError,
        "records of the declared",
    ),
]


@pytest.mark.parametrize("call, exc, match", CASES)
def test_bad_input_gets_a_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_dask_inputs_get_the_same_checks():
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="must not hold NaN.*Got 1 NaN"):
        dp.sum(da.from_array(NAN, chunks=2), (0, 1), epsilon=1)
    with pytest.raises(ValueError, match="must be a non-empty array"):
        dp.mean(da.zeros((0, 2), chunks=1), (0, 1), epsilon=1)
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match="must be an array of real numbers. Got 'a Dask column of dtype"):
        dp.sum(dd.from_pandas(pd.Series(["a", "b"]), npartitions=1), (0, 1), epsilon=1)


def test_nothing_is_charged_when_the_input_is_refused():
    acc = PrivacyAccountant(1.0)
    for call in (
        lambda: dp.var(x, (0, 1), epsilon=0.5, ddof=20, accountant=acc),
        lambda: dp.histogram(NAN, [0, 0.5, 1], epsilon=0.5, accountant=acc),
        lambda: dp.covariance(X, (1, 0), epsilon=0.5, accountant=acc),
    ):
        with pytest.raises(ValueError):
            call()
    assert acc.spent == 0
