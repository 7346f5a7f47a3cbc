"""choose_mechanism picks the hull by default: closed forms, products, the affine span, the evidence."""

import math

import numpy as np
import pytest
from scipy.spatial import QhullError
from scipy.special import gammaln

from knorm.geometry import K2Ball, LinearImage, LpBall, Polytope, VoteBall
from knorm.geometry.base import LowAcceptanceError
from knorm.mechanisms import choose_mechanism, default_candidates, nonprivate
from knorm.sensitivity import FiniteDomain, QuadraticStatistic, SensitivitySpace, hull_cache
from knorm.sensitivity import hull as hull_module
from knorm.sensitivity.product import BlockProduct
from tests.sensitivity.statistics import identity, moments, second_moments, vote_support
from tests.settings import SEED


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv(hull_cache.CACHE_ENV, str(tmp_path))
    hull_cache.clear_memory()
    yield
    hull_cache.clear_memory()


def _log_vol_l1(m, radius):
    return m * math.log(2 * radius) - gammaln(m + 1)


def test_moments_of_one_column_pick_the_exact_hull():
    # (sum x, sum x^2) for x in [0, 10]: Delta_1 = 110 (x = 10 against 0); the hull is M K_2 with
    # M = [[5, 0], [50, 12.5]] (x = 5 + 5 z), of area 62.5 * 40 / 3. Gain = sqrt(vol ratio).
    t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0])
    choice = choose_mechanism(SensitivitySpace.additive(t, None), 1.0, rng=SEED)
    expected = math.exp((_log_vol_l1(2, 110.0) - math.log(62.5 * 40 / 3)) / 2)
    assert choice.name == "hull" and isinstance(choice.mechanism.ball.base, K2Ball)
    assert choice.gain >= 4 and choice.gain == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(5.389, abs=1e-3)


def test_moments_of_eight_columns_are_a_product_of_exact_hulls():
    # Per column on [0, 1]: Delta_1 = 2 and vol(M K_2) = det(M) 40 / 3 with det M = 1/16, so with
    # 8 columns Delta_1 = 16 in R^16 and the gain is (vol(16 B_1) / (40 / 48)^8)^(1/16) = 5.155.
    space = SensitivitySpace.additive(moments(np.zeros(8), np.ones(8)), None)
    choice = choose_mechanism(space, 1.0, rng=SEED)
    expected = math.exp((_log_vol_l1(16, 16.0) - 8 * math.log(40 / 48)) / 16)
    assert choice.name == "hull" and isinstance(choice.mechanism.ball, BlockProduct)
    assert choice.gain >= 4.6 and choice.gain == pytest.approx(expected, rel=1e-6)
    assert choice.evidence["hull"]["exact"] and choice.evidence["l1_sensitivity"].startswith("exact")


@pytest.mark.parametrize("d", [32, 100])
def test_sum_statistic_releases_with_its_exact_box(d):
    # t(z) = z on [0, 1]^d: Hull(S_T) = [-1, 1]^d, never through its 2^d vertices.
    space = SensitivitySpace.additive(identity(d), None)
    assert space.record_points is None
    choice = choose_mechanism(space, 1.0, rng=SEED)
    ball = choice.mechanism.ball
    assert choice.name == "hull" and isinstance(ball, LinearImage) and ball.base.p == math.inf
    np.testing.assert_allclose(ball.matrix, np.eye(d))
    assert choice.gain == pytest.approx(math.exp((_log_vol_l1(d, d) - d * math.log(2)) / d), rel=1e-6)
    x = np.random.default_rng(SEED).random((50, d))
    release = choice.release(x.sum(axis=0), rng=SEED)
    assert release.value.shape == (d,) and release.sensitivity.value == 1.0


def _counts(k):
    return SensitivitySpace.additive(lambda z: z, FiniteDomain(np.eye(k)))


def _votes(k):
    return SensitivitySpace.from_support(
        k, vote_support, exact=True, hull=VoteBall(k), record_point=np.arange(k, dtype=float)
    )


@pytest.mark.parametrize("k", [20, 100])
@pytest.mark.parametrize("kind", ["counts", "votes"])
def test_counts_and_votes_release_in_their_affine_span(kind, k):
    rng = np.random.default_rng(SEED)
    n = 40
    if kind == "counts":
        space, per = _counts(k), 1.0
        T = rng.multinomial(n, np.full(k, 1 / k)).astype(float)
    else:
        space, per = _votes(k), k * (k - 1) / 2
        T = np.array([rng.permutation(k) for _ in range(n)], dtype=float).sum(axis=0)
    choice = choose_mechanism(space, 1.0, rng=SEED)
    assert choice.name == "hull" and choice.mechanism.dim == k - 1
    assert choice.reduction.released.tolist() == list(range(k - 1))
    with nonprivate():  # the arithmetic: the reduction is undone exactly
        exact = choice.release(T, n_records=n)
    np.testing.assert_allclose(exact.value, T, rtol=1e-12)
    noisy = choice.release(T, n_records=n, rng=SEED + 1)
    assert noisy.value.shape == (k,) and noisy.value.sum() == pytest.approx(n * per, rel=1e-12)
    # The full statistic is a post-processing of the released coordinates, and they are its parent.
    assert noisy.parent.value.shape == (k - 1,) and noisy.epsilon == noisy.parent.epsilon == 1.0
    np.testing.assert_array_equal(choice.expand(noisy.parent, n_records=n), noisy.value)
    with pytest.raises(ValueError, match="'n_records' parameter"):
        choice.release(T, rng=SEED + 2)


def test_votes_known_only_by_their_support_function():
    k = 20
    space = SensitivitySpace.from_support(k, vote_support, exact=True, record_point=np.arange(k, dtype=float))
    choice = choose_mechanism(space, 1.0, rng=SEED, time_limit=0.5, progress=False)
    assert choice.mechanism.dim == k - 1 and "flat" in choice.evidence["reduction"]
    out = choice.release(np.full(k, 10 * (k - 1) / 2), n_records=10, rng=SEED).value
    assert out.sum() == pytest.approx(10 * k * (k - 1) / 2)
    # l1's sensitivity is a certified bound here (block bound), said so in the evidence.
    assert choice.evidence["l1_sensitivity"].startswith("bound")


def test_acceptance_floor_refuses_and_names_the_alternative():
    # The l1 ball of R^8 as a polytope without qhull: rejection from the cube accepts 1/8! = 2.5e-5.
    m = 8
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * m)).reshape(m, -1).T
    thin = Polytope.from_halfspaces(signs, np.ones(len(signs)), max_qhull_dim=0)
    with pytest.raises(LowAcceptanceError, match="below the floor 0.0001.*choose_mechanism skips this candidate"):
        thin.sample_uniform(1000, rng=SEED)
    space = SensitivitySpace.additive(lambda z: z, FiniteDomain(np.eye(m)), neighbours="add_remove")
    choice = choose_mechanism(space, 1.0, {"thin": thin, "linf": LpBall(m, math.inf)}, rng=SEED)
    assert choice.report.best == "thin" and choice.name == "linf"
    assert choice.skipped["thin"].startswith("sampler refused")


def test_qhull_failures_appear_in_the_evidence(monkeypatch):
    real = hull_module.ConvexHull
    calls = {"n": 0}

    def flaky(points, qhull_options=None):
        calls["n"] += 1
        if calls["n"] == 1:
            raise QhullError("QH6297 Qhull precision error (qh_check_maxout): large increase in qh.max_outside")
        return real(points, qhull_options=qhull_options)

    monkeypatch.setattr(hull_module, "ConvexHull", flaky)
    A = np.zeros((2, 3, 3))
    A[1] = np.eye(3)
    t = QuadraticStatistic(A, [[1.0, 1.0, 1.0], [0.0] * 3], np.zeros(3), np.ones(3))
    choice = choose_mechanism(SensitivitySpace.additive(t, None), 1.0, rng=SEED)
    assert any("QH6297" in e for e in choice.evidence["qhull_errors"])
    assert "qhull failure: inner hull" in str(choice)
    # A candidate polytope that recorded its own qhull failure is reported too.
    box = Polytope.from_halfspaces(np.vstack([np.eye(2), -np.eye(2)]), np.full(4, 3.0))
    box.qhull_error = "QH6271 qhull topology error"
    ex = choose_mechanism(SensitivitySpace.additive(t, None), 1.0, {"box": box}, rng=SEED)
    assert ex.evidence["qhull_errors"] == ["candidate 'box': QH6271 qhull topology error"]


def test_default_candidates_and_the_report():
    space = SensitivitySpace.additive(moments([0.0], [10.0]), None)
    assert sorted(default_candidates(space)) == ["hull", "l1", "l2", "linf"]
    assert sorted(default_candidates(space, build_hull=False)) == ["l1", "l2", "linf"]
    choice = choose_mechanism(space, 1.0, rng=SEED)
    text = str(choice)
    assert "l1 (Laplace) needs 5.389x the epsilon" in text and "hull: t = C (x, x^2)" in text
    # Given candidates are ranked as given: no build.
    given = choose_mechanism(space, 1.0, {"linf": LpBall(2, math.inf)}, rng=SEED)
    assert "hull" not in given.evidence and not math.isnan(given.gain)


def test_second_moments_get_a_certified_ball_within_the_time_limit():
    space = SensitivitySpace.additive(second_moments(3), None)
    choice = choose_mechanism(space, 1.0, rng=SEED, time_limit=1.0, progress=False)
    assert choice.name == "outer hull" and choice.gain > 1.5
    assert choice.mechanism.sensitivity.kind == "exact" and choice.mechanism.sensitivity.value == 1.0
