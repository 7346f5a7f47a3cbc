"""The estimators' conf_int: the same Intervals as a Release's, named, intercept first, the old array inside."""

import numpy as np
import pandas as pd
import pytest

from knorm.mechanisms import Intervals
from knorm.models import LinearRegression, LogisticRegression
from tests.settings import SEED

RNG = np.random.default_rng(SEED)
X = RNG.uniform(0, 1, size=(3000, 2))
Y = 1.0 + 2.0 * X[:, 0] - X[:, 1] + 0.1 * RNG.standard_normal(3000)
LABELS = RNG.uniform(size=3000) < 1 / (1 + np.exp(-(4 * X[:, 0] - 2)))


def _linear(**kw):
    return LinearRegression(epsilon=2.0, bounds_X=([0, 0], [1, 1]), bounds_y=(-2, 4), random_state=SEED, **kw)


def _logistic(**kw):
    return LogisticRegression(epsilon=2.0, bounds_X=([0, 0], [1, 1]), classes=[False, True], random_state=SEED, **kw)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_intervals_are_named_and_keep_the_old_array(fit_intercept):
    reg = _linear(fit_intercept=fit_intercept).fit(X, Y)
    intervals = reg.conf_int(0.1)
    assert isinstance(intervals, Intervals)
    assert intervals.names == ("intercept",) * fit_intercept + ("x1", "x2")
    assert np.array_equal(np.asarray(intervals), reg._inference().conf_int(0.1))  # what conf_int returned before
    assert intervals.alpha == 0.1 and "parametric bootstrap (2000 replicates" in intervals.method
    assert intervals.mc_error == pytest.approx(np.sqrt(0.05 * 0.95 / 2000))
    assert np.array_equal(intervals["x1"], np.asarray(intervals)[int(fit_intercept)])
    assert repr(intervals).splitlines()[2].split()[0] == intervals.names[0]


def test_logistic_intervals_are_named_after_the_dataframe_columns():
    frame = pd.DataFrame(X, columns=["income", "age"])
    clf = _logistic(inference_share=0.5).fit(frame, LABELS)  # the default share 0 buys no intervals
    intervals = clf.conf_int()
    assert intervals.names == ("intercept", "income", "age") == tuple(clf.summary().names)
    assert np.array_equal(np.asarray(intervals), clf._inference.conf_int(0.05))
    lo, hi = intervals["income"]
    assert lo < hi and intervals.shape == (3, 2)
