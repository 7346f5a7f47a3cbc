"""Gaussian shapes: each closed-form bound against a brute-force sup over S_T, each optimum against an
SDP over the enumerated S_T, the rigorous certificates against exact arithmetic, and the mechanism on them.

The closed forms (knorm.mechanisms.gaussian_shapes) claim sup over S_T of u' A u exactly (rounded up
once). Brute force enumerates S_T (or the vertices where a convex form peaks, plus random points of
the continuous set) in exact rationals: a bound below the brute-force sup is a privacy failure, one
far above it a lost tightness. No test here is statistical except the last, which states its rate.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from knorm.mechanisms import GaussianMechanism
from knorm.mechanisms.ellipsoid import HullPoints, certify_precision, gram_lower_bound, hull_points
from knorm.mechanisms.gaussian_shapes import (
    CertifiedShape,
    box_sum_shape,
    count_shape,
    histogram_shape,
    hull_shape,
    sum_shape,
    vote_shape,
)
from knorm.sensitivity import QuadraticStatistic, SensitivitySpace
from tests.settings import SEED


# -- brute force ----------------------------------------------------------------------------------------
def _exact_form(A, U):
    """max over the rows u of U of u' A u, in exact rationals (A's binary64 entries are exact)."""
    Af = [[Fraction(float(x)) for x in row] for row in np.asarray(A)]
    best = Fraction(-1)
    for u in U:
        uf = [Fraction(float(x)) for x in u]
        q = sum(uf[i] * Af[i][j] * uf[j] for i in range(len(uf)) for j in range(len(uf)) if uf[i] and uf[j])
        best = max(best, q)
    return best


def _differences(R):
    R = np.asarray(R, float)
    i, j = np.triu_indices(len(R), 1)
    return np.unique(np.concatenate([R[i] - R[j], R[j] - R[i]]), axis=0)


def _count_records(d, k):
    return np.array([v for v in itertools.product((0, 1), repeat=d) if 0 < sum(v) <= k], float)


def _count_space(d, k, neighbours):
    R = _count_records(d, k)
    return R if neighbours == "add_remove" else _differences(np.vstack([R, np.zeros(d)]))


def _sum_vertices(d, k, r):
    return np.array([v for v in itertools.product((-r, 0.0, r), repeat=d) if 0 < np.count_nonzero(v) <= k])


def _random_l0_points(d, k, r, n, rng):
    X = rng.uniform(-r, r, size=(n, d))
    for row in X:
        row[rng.permutation(d)[k:]] = 0.0
    return X


def _check_tight(shape, U):
    """The bound covers the brute-force sup and exceeds it by a rounding at most."""
    sup = _exact_form(shape.precision, U)
    assert Fraction(shape.bound) >= sup, (shape.name, float(sup), shape.bound)
    assert shape.bound <= float(sup) * (1 + 1e-12), (shape.name, float(sup), shape.bound)


# -- the closed forms: bound == brute-force sup ------------------------------------------------------------
@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize("d, k", [(1, 1), (3, 1), (3, 2), (4, 2), (5, 3), (5, 5), (6, 2), (6, 4)])
def test_count_bound_is_the_sup_over_the_enumerated_space(d, k, neighbours):
    _check_tight(count_shape(d, k, neighbours), _count_space(d, k, neighbours))


@pytest.mark.parametrize("d, k", [(4, 2), (5, 3)])
@pytest.mark.parametrize("a, b", [(1.0, 0.3), (1.0, -0.15), (0.7, 0.0), (0.5, 2.0)])
def test_count_rows_hold_for_any_two_level_form(d, k, a, b):
    """The reduction to rows holds for every a > 0 (and a + d b > 0), not only the fitted one: the sup of
    a ||u||^2 + b (1'u)^2 over the enumerated S_T equals the max over the rows."""
    from knorm.mechanisms.gaussian_shapes import _two_level_shape

    for neighbours in ("add_remove", "replace"):
        rows = (
            [(j, j * j) for j in range(1, k + 1)]
            if neighbours == "add_remove"
            else [(2 * min(k, (d + s) // 2) - s, s * s) for s in range(k + 1)]
        )
        shape = _two_level_shape(d, rows, "test", "test", fixed=(a, b))
        _check_tight(shape, _count_space(d, k, neighbours))


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize("d, k, r", [(3, 1, 1.0), (3, 2, 0.5), (4, 2, 2.0), (4, 4, 1.0), (5, 3, 1.0)])
def test_sum_bound_is_the_sup_over_vertices_and_no_point_exceeds_it(d, k, r, neighbours):
    shape = sum_shape(d, k, neighbours, radius=r)
    V = _sum_vertices(d, k, r)
    U = V if neighbours == "add_remove" else _differences(np.vstack([V, np.zeros(d)]))
    _check_tight(shape, U)
    rng = np.random.default_rng(SEED)
    X, Y = _random_l0_points(d, k, r, 4000, rng), _random_l0_points(d, k, r, 4000, rng)
    P = X if neighbours == "add_remove" else X - Y
    assert np.max(np.einsum("ij,jk,ik->i", P, shape.precision, P)) <= shape.bound


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
def test_sum_with_different_radii_is_diagonal_and_certified(neighbours):
    radii = np.array([1.0, 2.0, 0.5, 3.0])
    shape = sum_shape(4, 2, neighbours, radius=radii)
    assert np.count_nonzero(shape.precision - np.diag(np.diag(shape.precision))) == 0
    V = np.array([v for v in itertools.product(*[(-r, 0.0, r) for r in radii]) if 0 < np.count_nonzero(v) <= 2])
    U = V if neighbours == "add_remove" else _differences(np.vstack([V, np.zeros(4)]))
    _check_tight(shape, U)


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize(
    "lo, hi",
    [([0.0] * 4, [1.0] * 4), ([-1.0] * 3, [2.0] * 3), ([0.0, -1.0, 2.0], [1.0, 3.0, 2.5]), ([-2.0] * 3, [-0.5] * 3)],
)
def test_box_sum_bound_is_the_sup_over_corners_and_no_point_exceeds_it(lo, hi, neighbours):
    shape = box_sum_shape(lo, hi, neighbours)
    corners = np.array(list(itertools.product(*zip(lo, hi))))
    U = corners if neighbours == "add_remove" else _differences(corners)
    _check_tight(shape, U)
    rng = np.random.default_rng(SEED)
    X, Y = rng.uniform(lo, hi, size=(4000, len(lo))), rng.uniform(lo, hi, size=(4000, len(lo)))
    P = X if neighbours == "add_remove" else X - Y
    assert np.max(np.einsum("ij,jk,ik->i", P, shape.precision, P)) <= shape.bound


def _vote_space(d, neighbours):
    perms = np.array(list(itertools.permutations(range(d))), float)
    if neighbours == "add_remove":
        return perms
    return _differences(perms)[:, : d - 1]  # the released coordinates


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
def test_vote_bound_is_the_sup_over_the_enumerated_space(d, neighbours):
    shape = vote_shape(d, neighbours)
    assert shape.dim == (d if neighbours == "add_remove" else d - 1)
    _check_tight(shape, _vote_space(d, neighbours))


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_histogram_bound_is_the_sup_over_the_enumerated_space(k):
    E = np.eye(k)
    U = np.array([E[i] - E[j] for i in range(k) for j in range(k) if i != j])[:, : k - 1]
    _check_tight(histogram_shape(k), U)
    _check_tight(histogram_shape(k, "add_remove"), np.vstack([E, -E]))


# -- the optimum: the closed form against an SDP over the whole enumerated space ----------------------------
def _sdp_trace(U):
    """min tr(M^{-1}) over M > 0 with u' M u <= 1 on every row of U (cvxpy, all m (m + 1) / 2 entries free)."""
    cp = pytest.importorskip("cvxpy")
    m = U.shape[1]
    M = cp.Variable((m, m), PSD=True)
    problem = cp.Problem(cp.Minimize(cp.tr_inv(M)), [cp.sum(cp.multiply(U @ M, U), axis=1) <= 1])
    problem.solve(solver="CLARABEL" if "CLARABEL" in cp.installed_solvers() else "SCS")
    return float(problem.value)


def _normalised_trace(shape):
    return shape.bound * float(np.trace(np.linalg.inv(shape.precision)))


@pytest.mark.parametrize(
    "shape, U",
    [
        (count_shape(5, 2, "add_remove"), _count_space(5, 2, "add_remove")),
        (count_shape(5, 3, "add_remove"), _count_space(5, 3, "add_remove")),
        (count_shape(5, 2, "replace"), _count_space(5, 2, "replace")),
        (count_shape(4, 4, "replace"), _count_space(4, 4, "replace")),
        (vote_shape(5, "add_remove"), _vote_space(5, "add_remove")),
        (vote_shape(5, "replace"), _vote_space(5, "replace")),
        (
            histogram_shape(5),
            np.array([np.eye(5)[i] - np.eye(5)[j] for i in range(5) for j in range(5) if i != j])[:, :4],
        ),
        (box_sum_shape([0.0] * 4, [1.0] * 4, "add_remove"), np.array(list(itertools.product((0.0, 1.0), repeat=4)))),
        (
            box_sum_shape([0.0, 0.0, 0.0], [1.0, 2.0, 4.0], "replace"),
            _differences(list(itertools.product((0, 1), (0, 2), (0, 4)))),
        ),
        (sum_shape(4, 2, "add_remove"), _sum_vertices(4, 2, 1.0)),
    ],
    ids=["count52ar", "count53ar", "count52r", "count44r", "vote5ar", "vote5r", "hist5", "box01ar", "boxr", "sum42ar"],
)
def test_the_closed_form_is_the_min_trace_optimum(shape, U):
    """By symmetry the optimum lies in the closed form's family (module docstring): its trace, at the bound it
    certifies, matches the SDP with every entry free over the enumerated S_T (a solver tolerance apart)."""
    sdp = _sdp_trace(U)
    assert _normalised_trace(shape) == pytest.approx(sdp, rel=2e-3)


def test_the_issue_figures():
    """Traces against the spherical Gaussian on the exact l2 sensitivity (issue 25): count d = 100, k = 50 about
    0.60 (0.53 at d = 1000, k = 500); vote d = 100 under add/remove about 0.35 (0.28 at d = 1000)."""
    assert count_shape(100, 50).trace(0.5) / (100 * 50) == pytest.approx(0.5995, abs=5e-4)
    assert count_shape(1000, 500).trace(0.5) / (1000 * 500) == pytest.approx(0.5316, abs=5e-4)
    s2 = sum(i * i for i in range(100))
    assert vote_shape(100, "add_remove").trace(0.5) / (100 * s2) == pytest.approx(0.3453, abs=5e-4)
    s2 = sum(i * i for i in range(1000))
    assert vote_shape(1000, "add_remove").trace(0.5) / (1000 * s2) == pytest.approx(0.2783, abs=5e-4)
    # replace: the sphere of the sum-zero subspace; in the d - 1 released coordinates, (d - 1) / d of the spherical
    full, released = 100 * (100**2 - 1) // 3, 100 * (100**2 - 1) // 3 - 1
    assert vote_shape(100, "replace").trace(0.5) / (99 * released) == pytest.approx(0.99 * full / released, rel=1e-9)


# -- the certificates against exact arithmetic ----------------------------------------------------------------
def _moments_points(p, lo=0.0, hi=1.0, neighbours="replace"):
    pairs = list(itertools.combinations(range(p), 2))
    m = p + len(pairs) + p
    A, b = np.zeros((m, p, p)), np.zeros((m, p))
    b[np.arange(p), np.arange(p)] = 1.0
    for row, (j, k) in enumerate(pairs, start=p):
        A[row, j, k] = A[row, k, j] = 0.5
    for j in range(p):
        A[p + len(pairs) + j, j, j] = 1.0
    const = np.zeros(m)
    space = SensitivitySpace.additive(
        QuadraticStatistic(A, b, np.full(p, lo), np.full(p, hi), const=const), None, neighbours=neighbours
    )
    return hull_points(space)


@pytest.mark.parametrize("neighbours", ["replace", "add_remove"])
def test_certify_precision_covers_the_exact_sup_and_is_tight(neighbours):
    points = _moments_points(2, 0.0, 3.0, neighbours)
    rng = np.random.default_rng(SEED)
    G = rng.normal(size=(5, 5))
    A = G @ G.T + 0.5 * np.eye(5)
    A = (A + A.T) / 2
    V = points.differences()
    U = V if neighbours == "replace" else np.vstack([V, -V])
    exact = _exact_form(A, U)
    s = certify_precision(A, points)
    assert Fraction(s) >= exact and s <= float(exact) * (1 + 1e-12)


def test_certify_precision_pays_for_inexact_records():
    """Records known only within a relative error e: the bound grows by about (2e) of the form."""
    points = _moments_points(2, 0.0, 3.0)
    A = np.eye(5)
    loose = HullPoints(points.records, points.neighbours, "test", error=1e-6)
    assert certify_precision(A, loose) > certify_precision(A, points) * (1 + 1e-6)


def test_gram_lower_bound_is_below_the_least_eigenvalue_and_close_to_it():
    rng = np.random.default_rng(SEED)
    G = rng.normal(size=(30, 30))
    A = G @ G.T + np.eye(30)
    A = (A + A.T) / 2
    R = np.linalg.cholesky(A)
    L = np.linalg.inv(R).T
    beta = gram_lower_bound(A, L)
    assert 1 - 1e-9 < float(beta) <= 1  # L' A L = I up to rounding
    # a factor 0.1% too small: L' A L = 0.998 I, and the bound sees it
    beta = gram_lower_bound(A, 0.999 * L)
    assert float(beta) <= 0.999**2 and float(beta) > 0.999**2 - 1e-9


# -- the mechanism on a CertifiedShape --------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, U",
    [
        (count_shape(6, 3, "add_remove"), _count_space(6, 3, "add_remove")),
        (count_shape(5, 2, "replace"), _count_space(5, 2, "replace")),
        (vote_shape(5, "add_remove"), _vote_space(5, "add_remove")),
        (vote_shape(5, "replace"), _vote_space(5, "replace")),
    ],
)
def test_gaussian_mechanism_on_a_shape_is_rho_zcdp_on_every_difference(shape, U):
    """The zCDP of N(0, F F') for a shift u is u' (F F')^{-1} u / 2: at most rho on every u of S_T, and not much less."""
    mech = GaussianMechanism(None, 0.5, shape=shape)
    loss = mech.privacy_loss(U)
    assert np.max(loss) <= 0.5 and np.max(loss) >= 0.5 * (1 - 1e-9)
    assert mech.rho_certified <= Fraction(1, 2)
    assert mech.sampler_used == "continuous" and mech.lattice is None
    cov = shape.bound / (2 * 0.5) * np.linalg.inv(shape.precision)
    assert np.allclose(mech.covariance, cov, rtol=1e-9, atol=1e-9 * np.abs(cov).max())


def test_a_shape_is_refused_where_it_cannot_be_honoured():
    shape = count_shape(4, 2)
    with pytest.raises(ValueError, match=r"'sampler' parameter of GaussianMechanism must be 'continuous'.*count"):
        GaussianMechanism(None, 0.5, shape=shape, sampler="lattice")
    with pytest.raises(TypeError, match="must be None or a SensitivitySpace with a CertifiedShape"):
        GaussianMechanism(1.0, 0.5, shape=shape)
    with pytest.raises(
        ValueError, match="'dim' parameter of GaussianMechanism must be None or the shape's dimension 4"
    ):
        GaussianMechanism(None, 0.5, shape=shape, dim=3)
    with pytest.raises(ValueError, match="is not positive definite"):
        GaussianMechanism(None, 0.5, shape=CertifiedShape(np.diag([1.0, -1.0]), 1.0, "bad", "none"))
    with pytest.raises(ValueError, match="'precision' parameter of CertifiedShape must be a symmetric matrix"):
        CertifiedShape(np.array([[1.0, 0.1], [0.0, 1.0]]), 1.0, "bad", "none")
    with pytest.raises(
        ValueError, match=r"'bound' parameter of CertifiedShape must be a float in the range \(0, inf\)"
    ):
        CertifiedShape(np.eye(2), 0.0, "bad", "none")


def test_hull_shape_in_a_symmetric_family_matches_the_free_fit():
    """The moments of 2 columns on [-1, 1]: the fit restricted to the family invariant under signed permutations
    (knorm.stats.covariance._symmetric_basis) has the trace of the fit with all 15 entries free."""
    pytest.importorskip("cvxpy")
    from knorm.stats.covariance import _setup, _symmetric_basis

    _, space, _ = _setup((-1.0, -1.0), (1.0, 1.0), False)
    points = hull_points(space)
    free = hull_shape(points)
    sym = hull_shape(points, basis=_symmetric_basis(2))
    assert _normalised_trace(sym) == pytest.approx(_normalised_trace(free), rel=2e-3)
    V = points.differences()
    assert np.max(np.einsum("ij,jk,ik->i", V, sym.precision, V)) <= sym.bound


def test_shaped_draws_have_the_stated_covariance():
    """Failure rate: each of the 10 variances is checked at |z| <= 5 against its chi-square law (about 6e-6 in all)."""
    mech = GaussianMechanism(None, 0.5, shape=count_shape(10, 4))
    draws = mech.noise_law.sample(20_000, rng=np.random.default_rng(SEED))
    var = draws.var(axis=0)
    target = np.diag(mech.covariance)
    assert np.all(np.abs(var / target - 1) <= 5 * math.sqrt(2 / 20_000))
