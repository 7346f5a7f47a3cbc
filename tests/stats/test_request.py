"""knorm.stats' release options (stats._core.Request): the labels every release and ledger entry gets."""

import dataclasses

import numpy as np
import pytest

import knorm.stats as dp
from knorm import PrivacyAccountant
from knorm.sensitivity import QuadraticStatistic
from knorm.stats._core import Request
from tests.settings import SEED

_RNG = np.random.default_rng(SEED)
_X = _RNG.uniform(0, 10, 200)
_X2 = _RNG.uniform(-1, 1, size=(200, 2))
_T = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0], names=["s", "s2"])

# (call, neighbours) -> the labels of the release and of its parents, outermost first, without a caller's label.
CASES = [
    (lambda **k: dp.sum(_X, (0, 10), **k), "replace", ["sum", "sum: moments"]),  # with the mean's focus
    (lambda **k: dp.count(np.ones(50), **k), "add_remove", ["count"]),
    (lambda **k: dp.mean(_X, (0, 10), **k), "replace", ["mean", "mean: moments"]),  # with the mean's focus
    (lambda **k: dp.mean(_X2, (-1, 1), **k), "replace", ["mean", "mean: sum"]),
    (lambda **k: dp.mean(_X, (0, 10), **k), "add_remove", ["mean", "mean: count and sums"]),
    (lambda **k: dp.moments(_X, (0, 10), **k), "replace", ["moments"]),
    (lambda **k: dp.moments(_X, (0, 10), order=1, **k), "replace", ["sum"]),
    (lambda **k: dp.moments(_X, (0, 10), norm="mean", **k), "replace", ["moments", "moments of u = (x - 5) / 10"]),
    (lambda **k: dp.var(_X, (0, 10), **k), "replace", ["variance", "variance: moments"]),
    (lambda **k: dp.std(_X, (0, 10), norm="mean", **k), "replace", ["std", "std: moments"]),
    (lambda **k: dp.histogram(_X, [0, 5, 10], **k), "replace", ["histogram", "histogram"]),
    (lambda **k: dp.histogramdd(_X2, [[-1, 0, 1], [-1, 0, 1]], **k), "add_remove", ["histogram"]),
    (lambda **k: dp.vote(np.array([[0, 1, 2], [2, 1, 0]] * 10), **k), "replace", ["vote", "vote"]),
    (
        lambda **k: dp.covariance(_X2, (-1, 1), **k),
        "replace",
        ["covariance", "moments of the standardised columns"],  # post-processings compose onto the raw parent
    ),
    (
        lambda **k: dp.mean_and_covariance(_X2, (-1, 1), **k),
        "add_remove",
        ["mean and covariance", "moments of the columns"],
    ),
    (lambda **k: dp.release(_T, _X[:, None], **k), "replace", ["statistic"]),
]


def _labels(release):
    out = []
    while release is not None:
        out.append(release.label)
        release = release.parent
    return out


@pytest.mark.parametrize("call, neighbours, expected", CASES)
@pytest.mark.parametrize("label", [None, "mine"])
def test_each_release_and_its_ledger_entry_carry_the_label(call, neighbours, expected, label):
    accountant = PrivacyAccountant(10.0)
    release = call(epsilon=0.5, neighbours=neighbours, rng=SEED, accountant=accountant, label=label)
    labels = _labels(release)
    assert labels == ([label] * len(expected) if label else expected)
    assert accountant.spent == 0.5 and release.ledger_entry.label == labels[-1]


def test_request_is_frozen_and_labelled_keeps_the_callers_label():
    request = Request.checked("knorm.stats.sum", 1.0, rng=SEED, accountant=None, label=None)
    assert request.labelled("sum").label == "sum" and request.label is None
    assert (
        Request.checked("knorm.stats.sum", 1.0, rng=SEED, accountant=None, label="mine").labelled("sum").label == "mine"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.label = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="'epsilon' parameter of knorm.stats.sum"):
        Request.checked("knorm.stats.sum", 0.0, rng=SEED, accountant=None, label=None)
