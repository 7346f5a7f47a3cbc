"""knorm.stats.release: any additive statistic with a declared domain, through choose_mechanism."""

import math

import numpy as np
import pytest

import knorm.stats as dp
from knorm import PrivacyAccountant
from knorm.exceptions import ClippingWarning
from knorm.sensitivity import Box, FiniteDomain, QuadraticStatistic
from tests.settings import SEED
from tests.stats._helpers import container, noiseless

# t(x) = (x1, x1 x2, x2^2) on [0, 2] x [-1, 1]
T = QuadraticStatistic(
    [np.zeros((2, 2)), [[0.0, 0.5], [0.5, 0.0]], [[0.0, 0.0], [0.0, 1.0]]],
    [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    [0.0, -1.0],
    [2.0, 1.0],
    names=["sum x1", "sum x1 x2", "sum x2^2"],
)


def _t(X):
    return np.column_stack([X[:, 0], X[:, 0] * X[:, 1], X[:, 1] ** 2])


@pytest.mark.parametrize("kind", ["numpy", "pandas", "dask"])
@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_quadratic_statistic_values_equal_the_sums_without_noise(kind, neighbours):
    X = np.random.default_rng(SEED).uniform([0, -1], [2, 1], size=(100, 2))
    release = noiseless(dp.release, T, container(X, kind), epsilon=1.0, neighbours=neighbours)
    np.testing.assert_allclose(release.value, _t(X).sum(axis=0), rtol=1e-13)
    assert release.names == ("sum x1", "sum x1 x2", "sum x2^2")


def test_quadratic_statistic_clips_to_its_box():
    X = np.random.default_rng(SEED).uniform([0, -1], [2, 1], size=(100, 2))
    X[:12, 0] = 5.0
    with pytest.warns(ClippingWarning, match="knorm.stats.release: 6.0% of the values"):
        release = noiseless(dp.release, T, X, Box([0.0, -1.0], [2.0, 1.0]), epsilon=1.0)
    np.testing.assert_allclose(release.value, _t(np.clip(X, [0, -1], [2, 1])).sum(axis=0))


def test_finite_domain_statistic_values_and_a_certified_release():
    domain = FiniteDomain([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]])
    X = domain.records[np.random.default_rng(SEED).integers(0, 4, 60)]
    release = noiseless(dp.release, _t, X, domain, epsilon=1.0)
    np.testing.assert_allclose(release.value, _t(X).sum(axis=0))
    private = dp.release(_t, X, domain, epsilon=1.0, rng=SEED)
    # Exact sensitivity by enumeration of the record pairs: every t(a) - t(b) is inside Delta K.
    values = _t(domain.records)
    u = (values[:, None] - values[None]).reshape(-1, 3)
    norms = np.asarray(private.ball.norm(u)) / private.sensitivity.value
    assert norms.max() == pytest.approx(1.0) and norms.max() <= 1 + 1e-9
    assert math.isfinite(private.gain) and private.names == ("t1", "t2", "t3")


def test_release_charges_its_epsilon_once():
    acc = PrivacyAccountant(1.0)
    X = np.random.default_rng(SEED).uniform([0, -1], [2, 1], size=(50, 2))
    release = dp.release(T, X, epsilon=0.3, accountant=acc)
    assert acc.spent == 0.3 and release.ledger_entry == acc.ledger[0]


def test_finite_domain_map_is_evaluated_on_the_declared_records_only():
    # A map that looks at its whole batch (here: centring) must not see the data: each record
    # contributes t evaluated on the declared records, the values its sensitivity space uses.
    domain = FiniteDomain([[0.0], [1.0], [3.0]])
    X = np.array([[0.0], [3.0], [3.0], [1.0]])
    release = noiseless(dp.release, lambda z: z - z.mean(axis=0), X, domain, epsilon=1.0)
    table = domain.records - domain.records.mean()
    np.testing.assert_allclose(release.value, [table[0, 0] + 2 * table[2, 0] + table[1, 0]])
