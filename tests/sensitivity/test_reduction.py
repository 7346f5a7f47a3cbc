"""Flat sensitivity spaces: detection, the released coordinates and the exact reconstruction."""

import numpy as np
import pytest

from knorm.geometry import HistogramBall, VoteBall
from knorm.sensitivity import FiniteDomain, QuadraticStatistic, SensitivitySpace
from tests.sensitivity.statistics import vote_extreme_points, vote_support
from tests.settings import SEED


def _data_statistic(t, X):
    return t(X).sum(axis=0)


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_quadratic_dependencies_are_found_and_undone_exactly(neighbours):
    # t = (x, y, x + 2 y + 3, x^2, 7): x + 2y + 3 and the constant 7 carry no information
    # under replace-one (n is public); under add/remove the constants make them informative.
    A = np.zeros((5, 2, 2))
    A[3, 0, 0] = 1.0
    b = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 2.0], [0.0, 0.0], [0.0, 0.0]])
    t = QuadraticStatistic(A, b, [-1.0, 0.0], [1.0, 2.0], const=[0.0, 0.0, 3.0, 0.0, 7.0])
    space = SensitivitySpace.additive(t, None, neighbours=neighbours)
    red = space.affine_reduction()
    X = np.random.default_rng(SEED).uniform([-1, 0], [1, 2], size=(37, 2))
    T = _data_statistic(t, X)
    if neighbours == "add_remove":
        # n is private: x + 2y + 3 is informative (it holds 3n), but 7 = 7/3 ((x + 2y + 3) - x - 2y)
        # for every record, so T_4 = 7/3 (T_2 - T_0 - 2 T_1) exactly, with no n.
        assert red.released.tolist() == [0, 1, 2, 3] and not red.needs_n
        np.testing.assert_allclose(red.expand(red.reduce(T)), T, rtol=1e-12)
        return
    assert red.released.tolist() == [0, 1, 3] and red.needs_n
    np.testing.assert_allclose(red.expand(red.reduce(T), n_records=len(X)), T, rtol=1e-12)
    sub = space.reduced()
    assert sub.dim == 3 and sub.reduction is red
    # The reduced space is the projection: same support as h at directions on the released coordinates.
    c = np.random.default_rng(1).normal(size=(50, 3))
    full = np.zeros((50, 5))
    full[:, red.released] = c
    np.testing.assert_allclose(sub.support(c), space.support(full), rtol=1e-9)


@pytest.mark.parametrize("k", [20, 100])
def test_histogram_records_reduce_to_the_histogram_ball(k):
    space = SensitivitySpace.additive(lambda z: z, FiniteDomain(np.eye(k)))
    red = space.affine_reduction()
    assert red.released.tolist() == list(range(k - 1)) and red.per_record.tolist() == [1.0]
    sub = space.reduced()
    assert isinstance(sub.hull, HistogramBall)
    # Equal support functions: the ball is exactly the hull of the reduced S_T.
    c = np.random.default_rng(SEED).normal(size=(200, k - 1))
    np.testing.assert_allclose(sub.hull.support(c), sub.support(c), rtol=1e-12)
    counts = np.random.default_rng(2).multinomial(500, np.full(k, 1 / k)).astype(float)
    assert red.expand(red.reduce(counts), n_records=500).tolist() == counts.tolist()


def test_flatness_from_the_support_function_alone():
    # Full Borda totals of 12 candidates, given only by their support function: the
    # totals sum to n d (d - 1) / 2, found from h(c) + h(-c) = 0 along (1, ..., 1).
    d = 12
    space = SensitivitySpace.from_support(d, vote_support, exact=True, record_point=np.arange(d, dtype=float))
    red = space.affine_reduction()
    assert red is not None and red.released.tolist() == list(range(d - 1))
    np.testing.assert_allclose(red.matrix, -np.ones((1, d - 1)))
    assert red.per_record.tolist() == [d * (d - 1) / 2]  # T_last = n d (d - 1) / 2 - the other totals
    rng = np.random.default_rng(SEED)
    votes = np.array([rng.permutation(d) for _ in range(30)], dtype=float)
    T = votes.sum(axis=0)
    np.testing.assert_allclose(red.expand(red.reduce(T), n_records=30), T, rtol=1e-12)
    # Without a record point the offset is unknown, and expand says what it needs.
    bare = SensitivitySpace.from_support(d, vote_support, exact=True, extreme_points=vote_extreme_points)
    with pytest.raises(TypeError, match="'per_record' parameter of AffineReduction.expand"):
        bare.affine_reduction().expand(np.zeros(d - 1), n_records=3)
    # A flat hull given for the full statistic fixes the reduction and becomes the reduced hull.
    given = SensitivitySpace.from_support(d, vote_support, exact=True, hull=VoteBall(d))
    sub = given.reduced()
    assert isinstance(sub.hull, VoteBall) and sub.sensitivity(sub.hull).value == 1.0


def test_full_dimensional_spaces_are_not_reduced():
    t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [1.0])
    space = SensitivitySpace.additive(t, None)
    assert space.affine_reduction() is None and space.reduced() is space


@pytest.mark.parametrize("k", [5, 20, 100])
def test_outer_hull_of_a_flat_space_fails_the_same_way_at_every_size(k):
    space = SensitivitySpace.additive(lambda z: z, FiniteDomain(np.eye(k)))
    with pytest.raises(ValueError, match="not full-dimensional.*space.reduced()"):
        space.outer_hull()
