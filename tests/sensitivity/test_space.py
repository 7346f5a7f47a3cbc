import math

import numpy as np
import pytest

from knorm import KNormMechanism, LpBall
from knorm.sensitivity import (
    Box,
    FiniteDomain,
    QuadraticStatistic,
    SensitivitySpace,
    UnsafeSensitivityError,
    logistic_gradient_space,
    squared_statistic_space,
    sum_product_space,
)
from tests.settings import SEED

SQRT2 = math.sqrt(2)
EXACT = {1: 3.125, 2: 0.25 * math.sqrt(71 + 8 * SQRT2), math.inf: 2.0}


@pytest.fixture(scope="module")
def ex21():
    return squared_statistic_space()


@pytest.mark.parametrize("p", [1, 2, math.inf])
def test_example_21_closed_forms(ex21, p):
    s = ex21.sensitivity(p)
    assert s.kind == "exact" and s.value == pytest.approx(EXACT[p], rel=1e-15)
    assert ex21.sensitivity(LpBall(2, p, radius=2.0)).value == pytest.approx(EXACT[p] / 2)


@pytest.mark.parametrize("p", [1, 2, math.inf])
def test_example_21_generic_certified_computation(ex21, p):
    # The same values from the support function alone, without the closed forms.
    generic = SensitivitySpace(2, support=ex21._support, extreme_points=ex21._extreme_points)
    s = generic.sensitivity(p)
    assert s.kind in ("exact", "bound")
    assert s.value >= EXACT[p] * (1 - 1e-12)  # never below the truth: certified
    assert s.value == pytest.approx(EXACT[p], rel=1e-6)
    if s.lower is not None:
        assert s.lower <= EXACT[p] * (1 + 1e-12)


def test_example_21_sensitivity_attained_where_the_paper_says(ex21):
    # Delta_1 at u1 = 5/4 and Delta_2 at u1 = 3/2 - sqrt(2)/4 on the arc u2 = 2 - 2(u1 - 1)^2 (ERRATA).
    for p, u1 in ((1, 1.25), (2, 1.5 - SQRT2 / 4)):
        u = np.array([u1, 2 - 2 * (u1 - 1) ** 2])
        assert np.linalg.norm(u, ord=p) == pytest.approx(EXACT[p])
        # u is in S_T: u = (x1 - x2, 2x1^2 - 2x2^2) with x1 + x2 = u2 / (2 u1).
        s = u[1] / (2 * u[0])
        x1, x2 = (s + u[0]) / 2, (s - u[0]) / 2
        assert -1 <= x2 <= x1 <= 1


def test_example_21_naive_sensitivities(ex21):
    assert ex21.naive_sensitivity(1).value == pytest.approx(4.0)
    assert ex21.naive_sensitivity(2).value == pytest.approx(math.sqrt(8))
    assert ex21.naive_sensitivity(1).kind == "bound"


def test_example_21_hull_is_k2(ex21):
    # Equal support functions mean equal convex sets: K_2 = Hull(S_T), area 40/3.
    c = np.random.default_rng(SEED).normal(size=(2000, 2))
    np.testing.assert_allclose(ex21.support(c), ex21.hull.support(c), rtol=1e-8)
    assert ex21.hull.volume() == pytest.approx(40 / 3)
    hull = ex21.outer_hull(rng=SEED)
    assert hull.inner.volume() <= 40 / 3 <= hull.outer.volume()
    assert hull.sandwich.exact and hull.sandwich > 0.99


def test_sum_product_hull_is_k3():
    space = sum_product_space()
    c = np.random.default_rng(SEED).normal(size=(2000, 3))
    np.testing.assert_allclose(space.support(c), space.hull.support(c), rtol=1e-8)
    s = space.sensitivity(space.hull)
    assert s.kind == "exact" and s.value == pytest.approx(1.0)
    assert space.hull.volume() == pytest.approx(160 / 3)
    # Points of S_T from random pairs lie in K_3.
    assert np.all(space.hull.norm(space.sample(20_000, rng=SEED)) <= 1 + 1e-12)


def test_finite_domain_exact_by_enumeration():
    rec = np.random.default_rng(SEED).normal(size=(30, 2))
    space = SensitivitySpace.additive(
        lambda z: np.column_stack([z[:, 0], z[:, 0] * z[:, 1], z[:, 1] ** 2]), FiniteDomain(rec)
    )
    pts = np.column_stack([rec[:, 0], rec[:, 0] * rec[:, 1], rec[:, 1] ** 2])
    diff = pts[:, None] - pts[None]
    for p in (1, 2, 3, math.inf):
        s = space.sensitivity(p)
        assert s.kind == "exact"
        assert s.value == pytest.approx(np.linalg.norm(diff, ord=p, axis=-1).max())
    c = np.random.default_rng(1).normal(size=(5, 3))
    np.testing.assert_allclose(space.support(c), (diff @ c.T).max(axis=(0, 1)))


def test_black_box_statistic_only_estimates():
    space = SensitivitySpace.additive(
        lambda z: np.column_stack([np.sin(z[:, 0]), z[:, 0] * z[:, 1]]), Box([-1, -1], [1, 1])
    )
    with pytest.raises(NotImplementedError, match="No certified sensitivity.*estimate_sensitivity"):
        space.sensitivity(2)
    est = space.estimate_sensitivity(2, 5000, rng=SEED)
    assert est.kind == "estimate" and not est.certified
    with pytest.raises(UnsafeSensitivityError, match="must be exact or a certified upper bound"):
        KNormMechanism(LpBall(2, 2), est, 1.0)
    assert KNormMechanism(LpBall(2, 2), est, 1.0, unsafe_allow_estimated_sensitivity=True).sensitivity is est


def test_sampled_inner_hull_is_refused(ex21):
    inner = ex21.inner_hull(5000, rng=SEED)
    assert inner.estimated and inner.volume() < 40 / 3
    with pytest.raises(UnsafeSensitivityError, match="must not be estimated from samples"):
        KNormMechanism(inner, 1.0, 1.0)
    KNormMechanism(inner, 1.0, 1.0, unsafe_allow_estimated_sensitivity=True)
    # The certified outer hull is accepted.
    KNormMechanism(ex21.outer_hull(rng=SEED).outer, ex21.sensitivity(ex21.outer_hull(rng=SEED).outer), 1.0)


def test_logistic_gradient_space():
    space = logistic_gradient_space(7)
    u = space.sample(20_000, rng=SEED)
    assert np.all(np.abs(u) <= 2)
    assert space.sensitivity(math.inf).value == 2.0 and space.sensitivity(math.inf).kind == "exact"
    assert space.sensitivity(2).value == pytest.approx(2 * math.sqrt(7))
    assert space.sensitivity(1).value == 14.0 and space.sensitivity(1).kind == "bound"
    # The paper's points with one entry ±1 and the rest ±2 are (nearly) reached by sampling.
    assert np.abs(u).sum(axis=1).max() > 10


def test_bad_input():
    with pytest.raises(ValueError, match="lower < upper"):
        Box([0.0, 1.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="at least 2 records"):
        FiniteDomain([[1.0, 2.0]])
    with pytest.raises(ValueError, match="finite"):
        FiniteDomain([[1.0], [np.nan]])
    with pytest.raises(TypeError, match="must be callable"):
        SensitivitySpace.additive(3, Box([0], [1]))
    with pytest.raises(ValueError, match="must have dimension 2. Got 3"):
        squared_statistic_space().sensitivity(LpBall(3, 2))
    with pytest.raises(ValueError, match="'m' parameter of logistic_gradient_space"):
        logistic_gradient_space(0)


def test_add_remove_neighbours_finite_and_quadratic():
    from knorm.sensitivity import QuadraticStatistic

    rec = np.random.default_rng(SEED).normal(size=(25, 2))
    f = lambda z: np.column_stack([z[:, 0], z[:, 0] * z[:, 1] + 1.0])  # noqa: E731
    space = SensitivitySpace.additive(f, FiniteDomain(rec), neighbours="add_remove")
    pts = f(rec)
    for p in (1, 2, math.inf):
        assert space.sensitivity(p).value == pytest.approx(np.linalg.norm(pts, ord=p, axis=1).max())
    c = np.random.default_rng(2).normal(size=(7, 2))
    np.testing.assert_allclose(space.support(c), np.abs(pts @ c.T).max(axis=0))
    # Example 2.1 statistic under add/remove: S = ±(x, 2x^2), so Delta_inf = 2, Delta_1 = 3.
    A = np.zeros((2, 1, 1))
    A[1, 0, 0] = 2.0
    q = SensitivitySpace.additive(QuadraticStatistic(A, [[1.0], [0.0]], [-1.0], [1.0]), None, neighbours="add_remove")
    assert q.sensitivity(math.inf).value == pytest.approx(2.0)
    assert q.sensitivity(1).value == pytest.approx(3.0)
    assert np.all(np.abs(q.sample(1000, rng=SEED)[:, 0]) <= 1)
    with pytest.raises(
        ValueError, match="'neighbours' parameter of SensitivitySpace.additive must be 'replace' or 'add_remove'"
    ):
        SensitivitySpace.additive(f, FiniteDomain(rec), neighbours="swap")


def test_register_refuses_a_proof_below_a_point_of_the_space():
    # (z, z^2) on [-1, 1]: the point (2, 0) of S_T has l_inf norm 2, so a registered 1.5 is wrong.
    t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [-1.0], [1.0])
    space = SensitivitySpace.additive(t, Box([-1.0], [1.0]))
    with pytest.raises(ValueError, match="does not match this statistic"):
        space.register_exact(LpBall(2, np.inf), 1.5, "a wrong proof")
    space.register_exact(LpBall(2, np.inf), 2.0, "the right proof")
    assert space.sensitivity(LpBall(2, np.inf)).value == 2.0
