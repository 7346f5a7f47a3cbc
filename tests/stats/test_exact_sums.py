"""Exact lattice accumulation of knorm.stats sums (issue: floating-point-safe release).

Float sums of many records depend on their order and blocking, and their rounding can
push the difference of neighbouring statistics past the declared sensitivity (Casacuberta
et al. 2022). On a lattice release each record is rounded to the lattice and the integers
are summed exactly, so the statistic is the same for every order, and neighbours differ
by gamma (round(a) - round(b)), which the lattice's rounding slack covers.
"""

import numpy as np
import pytest

import knorm.stats as dp
from knorm.mechanisms import KNormMechanism
from knorm.stats._core import RecordSums, total
from tests.settings import SEED

N = 1_000_000


@pytest.fixture(scope="module")
def adversarial():
    # Values of very different magnitudes, in an order where float sums lose the small ones.
    rng = np.random.default_rng(SEED)
    x = np.concatenate([[1.0, -1.0, 0.999999999], rng.uniform(-1, 1, N - 3) * 2.0 ** -rng.integers(0, 60, N - 3)])
    return np.column_stack([x, x[::-1].copy()])


def test_float_sums_depend_on_order_and_lattice_sums_do_not(adversarial):
    X = adversarial
    gamma = np.array([2.0**-20, 2.0**-18])
    orders = [np.arange(N), np.arange(N)[::-1], np.argsort(X[:, 0]), np.random.default_rng(SEED).permutation(N)]
    floats = {tuple(np.cumsum(X[o], axis=0)[-1]) for o in orders}  # sequential float sums
    assert len(floats) > 1, "the hazard: float sums of the same records differ with their order"
    exact = {tuple(total(X[o], gamma)) for o in orders}
    assert len(exact) == 1
    da = pytest.importorskip("dask.array")
    assert tuple(total(da.from_array(X, chunks=(77_777, 2)), gamma)) in exact  # any blocking
    # The lattice sum is gamma times the exact integer sum of the rounded records.
    units = np.rint(X / gamma).astype(np.int64).sum(axis=0)
    np.testing.assert_array_equal(next(iter(exact)), units * gamma)


def test_neighbours_differ_within_the_lattice_sensitivity(adversarial):
    # sum of 2 columns in [-1, 1]: replace the record that moves the lattice sum most.
    X = adversarial
    release = dp.sum(X, (-1, 1), epsilon=1.0, rng=SEED)
    mech = KNormMechanism(release.ball, release.sensitivity, 1.0)
    law = mech.lattice
    assert release.lattice_spacing is not None and np.array_equal(release.lattice_spacing, law.spacing)
    # Opposite corners, one of them half a lattice step inside: per-record rounding at its worst.
    g = law.spacing
    a = np.array([1.0, -1.0])
    b = np.array([-1.0, 1.0]) + g / 2 * np.array([1, -1])
    X1, X2 = X.copy(), X.copy()
    X1[0], X2[0] = a, b
    t1, t2 = total(X1, g), total(X2, g)
    diff = t1 - t2
    np.testing.assert_array_equal(diff, g * (np.rint(a / g) - np.rint(b / g)))
    assert float(release.ball.norm(diff)) <= law.sensitivity  # Delta~ = Delta + slack covers it
    assert float(release.ball.norm(a - b)) <= release.sensitivity.value


def test_records_are_rounded_only_on_a_lattice_release():
    X = np.random.default_rng(SEED).uniform(0, 1, (1000, 2))
    sums = RecordSums(RecordSums.exact(len(X)), X, X * X)
    np.testing.assert_allclose(sums.resolve(), np.concatenate([[1000], X.sum(0), (X * X).sum(0)]), rtol=1e-15)
    gamma = np.array([1.0, 2.0**-10, 2.0**-10, 2.0**-12, 2.0**-12])
    got = sums.resolve(gamma)
    assert got[0] == 1000 and np.all(np.rint(got[1:] / gamma[1:]) * gamma[1:] == got[1:])
    assert np.all(np.abs(got[1:] - sums.resolve()[1:]) <= 1000 * gamma[1:] / 2)
