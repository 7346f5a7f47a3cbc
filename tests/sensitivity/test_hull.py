"""Certified hulls: closed forms, products of blocks, cutting planes, the cache, qhull reports, progress."""

import sys
import types

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import QhullError

from knorm.geometry import IntersectionBall, K2Ball, LinearImage, LpBall, Polytope, k3_ball
from knorm.sensitivity import QuadraticStatistic, SensitivitySpace, hull_cache
from knorm.sensitivity import hull as hull_module
from knorm.sensitivity.product import BlockProduct, RejectionIntersection
from tests.sensitivity.statistics import grid_pairs_support, identity, moments, second_moments
from tests.settings import ALPHA, SEED, Z_MAX


def _directions(m, n=400, seed=SEED):
    return np.random.default_rng(seed).normal(size=(n, m))


def _contains_s_t(space, ball, seed=SEED, n=400):
    """Largest gauge over points of S_T: maximisers along random directions and sampled differences."""
    u = np.vstack([space.extreme_points(_directions(space.dim, n, seed)), space.sample(4000, rng=seed)])
    return float(np.max(ball.norm(u)))


def _one_variable(C, lower, upper):
    """t(x) = C (x, x^2): rows of C are (coefficient of x, coefficient of x^2)."""
    C = np.asarray(C, float)
    return QuadraticStatistic(C[:, 1, None, None] * np.ones((1, 1, 1)), C[:, :1], [lower], [upper])


CLOSED = {
    "(x, x^2) on [0, 10]": lambda: _one_variable([[1, 0], [0, 1]], 0.0, 10.0),
    "(x, x^2) on [-3, 1]": lambda: _one_variable([[1, 0], [0, 1]], -3.0, 1.0),
    "mixed C (x, x^2) on [2, 5]": lambda: _one_variable([[1, 2], [0.5, -1]], 2.0, 5.0),
    "x + x^2 (one coordinate)": lambda: _one_variable([[1, 1]], -1.0, 2.0),
    "(x, y, xy) off-centre": lambda: QuadraticStatistic(
        np.array([np.zeros((2, 2)), np.zeros((2, 2)), [[0, 0.5], [0.5, 0]]]),
        [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
        [0.0, -1.0],
        [2.0, 3.0],
    ),
    "linear, square": lambda: QuadraticStatistic(
        np.zeros((4, 4, 4)), np.random.default_rng(3).normal(size=(4, 4)), -np.ones(4), 2 * np.ones(4)
    ),
    "linear, zonotope": lambda: QuadraticStatistic(
        np.zeros((3, 5, 5)), np.random.default_rng(4).normal(size=(3, 5)), np.zeros(5), np.ones(5)
    ),
    "sum of 6 columns": lambda: identity(6, [1.0, 2.0, 3.0, 0.5, 1.0, 4.0]),
    "moments of 3 columns": lambda: moments([0.0, -1.0, 2.0], [1.0, 1.0, 7.0], interleave=True),
}


@pytest.mark.parametrize("case", sorted(CLOSED))
def test_closed_forms_are_exactly_the_hull(case):
    # Closed convex sets with equal support functions are equal: the ball is Hull(S_T).
    space = SensitivitySpace.additive(CLOSED[case](), None)
    res = space.certified_hull()
    assert res.exact and res.sandwich == 1.0 and res.sandwich.exact
    c = _directions(space.dim)
    h, exact = space.support(c), res.outer.support(c)
    assert np.all(exact <= h * (1 + 1e-9)) and np.all(h - exact <= 1e-7 * (1 + h))  # h has a 1e-10 slack
    s = space.sensitivity(res.outer)
    assert s.kind == "exact" and s.value == 1.0
    assert 1 - 1e-9 <= _contains_s_t(space, res.outer) <= 1 + 1e-9  # attained, never exceeded


def test_one_variable_hull_against_a_grid_of_records():
    # Independent of the face enumeration: pairs of records on a grid.
    t = _one_variable([[1, 0], [0, 1]], 0.0, 10.0)
    hull = SensitivitySpace.additive(t, None).certified_hull().outer
    assert isinstance(hull, LinearImage) and isinstance(hull.base, K2Ball)
    c = _directions(2, 200)
    brute = grid_pairs_support(t, c, n=4001)
    h = hull.support(c)
    assert np.all(h >= brute - 1e-9) and np.all(h - brute <= 1e-3 * (1 + np.abs(h)))


def test_block_product_volume_and_exact_uniform_sampler():
    ball = BlockProduct(
        6, [([0, 3], LinearImage(K2Ball(), [2.0, 0.5])), ([1], LpBall(1, np.inf, radius=2.0)), ([2, 4, 5], k3_ball())]
    )
    assert ball.volume().exact
    assert float(ball.volume()) == pytest.approx(40 / 3 * 1.0 * 4 * 160 / 3)
    u = ball.sample_uniform(4000, rng=SEED)
    # For U uniform in a ball K of R^m, ||U||_K^m is uniform on [0, 1] (the cone measure).
    assert stats.kstest(ball.norm(u) ** 6, "uniform").pvalue > ALPHA
    c = _directions(6)
    parts = [
        LinearImage(K2Ball(), [2.0, 0.5]).support(c[:, [0, 3]]),
        2 * np.abs(c[:, 1]),
        k3_ball().support(c[:, [2, 4, 5]]),
    ]
    np.testing.assert_allclose(ball.support(c), sum(parts), rtol=1e-12)
    with pytest.raises(ValueError, match="disjoint"):
        BlockProduct(2, [([0, 1], LpBall(2, 1)), ([1], LpBall(1, 1))])


def test_rejection_intersection_samples_and_measures_through_its_proposal():
    ball = RejectionIntersection(3, [([0, 1, 2], LpBall(3, 1))], proposal=LpBall(3, np.inf))
    u = ball.sample_uniform(3000, rng=SEED)
    assert stats.kstest(LpBall(3, 1).norm(u) ** 3, "uniform").pvalue > ALPHA
    v = ball.volume(rng=SEED, n_samples=200_000)
    assert not v.exact and abs(float(v) - 8 / 6) <= Z_MAX * v.stderr


def test_refined_hull_in_low_dimension_is_certified_and_tight():
    # (sum_j x_j, sum_j x_j^2) over 3 variables: one block, no closed form: facet refinement.
    A = np.zeros((2, 3, 3))
    A[1] = np.eye(3)
    t = QuadraticStatistic(A, [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], np.zeros(3), np.ones(3))
    space = SensitivitySpace.additive(t, None)
    res = space.certified_hull()
    assert isinstance(res.outer, Polytope) and not res.exact
    assert res.sandwich.exact and res.sandwich > 0.99 and res.epsilon_gap < 1.006
    assert _contains_s_t(space, res.outer) <= 1 + 1e-9
    assert space.sensitivity(res.outer).kind == "exact" and space.sensitivity(res.outer).value == pytest.approx(1.0)


def test_cylinders_and_cuts_in_higher_dimension():
    # (x, x x') for x in [-1, 1]^3, 9 coordinates: K_2 and K_3 cylinders, then exact greedy cuts.
    space = SensitivitySpace.additive(second_moments(3), None)
    res = space.certified_hull(time_limit=1.5, rng=SEED)
    assert isinstance(res.outer, IntersectionBall)
    names = [type(b).__name__ for _, b in res.outer.constraints]
    assert names.count("LinearImage") == 3 + 3  # K_2 on (x_j, x_j^2), K_3 on (x_j, x_k, x_j x_k)
    assert 1 - 1e-9 <= _contains_s_t(space, res.outer) <= 1 + 1e-9
    assert space.sensitivity(res.outer).kind == "exact" and space.sensitivity(res.outer).value == 1.0
    # The cuts remove volume from the cylinders: a uniform point of the cylinders is cut off.
    base = RejectionIntersection(9, list(res.outer.constraints[1:]), res.outer.proposal)
    u = base.sample_uniform(2000, rng=SEED)
    assert "greedy exact cuts" in res.method and not res.outer.contains(u).all()


def test_add_remove_product_is_an_outer_ball():
    space = SensitivitySpace.additive(moments([0.0, 0.0], [1.0, 3.0]), None, neighbours="add_remove")
    res = space.certified_hull()
    assert isinstance(res.outer, BlockProduct) and not res.exact and "not the hull" in res.method
    assert _contains_s_t(space, res.outer) <= 1 + 1e-9


def test_support_function_only_is_enough():
    # No extreme-point oracle: support gradients stand in for the inner points (labelled).
    space = SensitivitySpace.from_support(2, K2Ball().support, exact=True)
    res = space.outer_hull()
    assert any("gradients" in note for note in res.notes)
    edge = K2Ball().sample_uniform(3000, rng=SEED)
    edge /= K2Ball().norm(edge)[:, None]  # boundary points of the hull
    assert np.all(res.outer.norm(edge) <= 1 + 1e-9)


def _refine_space():
    A = np.zeros((2, 4, 4))
    A[1] = np.eye(4)
    t = QuadraticStatistic(A, [[1.0, 1.0, 1.0, 1.0], [0.0] * 4], np.zeros(4), np.ones(4))
    return SensitivitySpace.additive(t, None)


def test_second_build_is_a_load_from_memory_then_disk(hull_cache_dir):
    first = _refine_space().certified_hull()
    assert not first.from_cache and len(list(hull_cache_dir.glob("*.npz"))) == 1
    assert _refine_space().certified_hull() is first  # same process: memory
    hull_cache.clear_memory()
    again = _refine_space().certified_hull()
    assert again.from_cache and again is not first
    c = _directions(2)
    np.testing.assert_allclose(again.outer.support(c), first.outer.support(c), rtol=1e-6)


@pytest.mark.parametrize("tamper", ["shrunk support", "random directions", "garbage"])
def test_a_tampered_cache_file_cannot_weaken_privacy(hull_cache_dir, tamper):
    _refine_space().certified_hull()
    hull_cache.clear_memory()
    (path,) = hull_cache_dir.glob("*.npz")
    rng = np.random.default_rng(SEED)
    if tamper == "shrunk support":  # an attacker adds tiny offsets: they are never read
        with np.load(path) as f:
            d = f["directions"]
        np.savez(path, directions=d, support=np.full(len(d), 1e-6), h=np.full(len(d), 1e-6))
    elif tamper == "random directions":
        np.savez(path, directions=rng.normal(size=(5, 2)))
    else:
        path.write_bytes(b"not an npz file")
    space = _refine_space()
    res = space.certified_hull()
    assert res.from_cache == (tamper != "garbage")
    assert _contains_s_t(space, res.outer) <= 1 + 1e-9
    s = space.sensitivity(res.outer)
    assert s.kind == "exact" and s.value == pytest.approx(1.0, rel=1e-9)


def test_disabled_cache_writes_nothing(hull_cache_dir, monkeypatch):
    monkeypatch.setenv(hull_cache.CACHE_ENV, "off")
    assert hull_cache.cache_dir() is None
    _refine_space().certified_hull()
    assert not hull_cache_dir.exists()


def test_qhull_failures_are_reported(monkeypatch):
    real = hull_module.ConvexHull
    calls = {"n": 0}

    def flaky(points, qhull_options=None):
        calls["n"] += 1
        if calls["n"] == 1:
            raise QhullError("QH6271 qhull topology error (qh_check_dupridge): wide merge\nERRONEOUS FACET: ...")
        return real(points, qhull_options=qhull_options)

    monkeypatch.setattr(hull_module, "ConvexHull", flaky)
    res = _refine_space().certified_hull(cache=False)
    (err,) = [e for e in res.qhull_errors if "QH6271" in e]
    assert "retried with joggled input" in err and "ERRONEOUS" not in err
    assert res.evidence()["qhull_errors"] == list(res.qhull_errors)


class _FakeBar:
    made = []

    def __init__(self, **kwargs):
        self.kwargs, self.closed, self.n = kwargs, False, 0
        _FakeBar.made.append(self)

    def set_postfix_str(self, text, refresh=False):
        self.text = text

    def refresh(self):
        pass

    def close(self):
        self.closed = True


def test_progress_bar_past_its_threshold_and_without_tqdm(monkeypatch):
    monkeypatch.setattr(hull_module, "PROGRESS_AFTER", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=_FakeBar))
    _FakeBar.made.clear()
    _refine_space().certified_hull(cache=False)
    assert len(_FakeBar.made) == 1 and _FakeBar.made[0].closed and "cuts" in _FakeBar.made[0].text
    _refine_space().certified_hull(cache=False, progress=False)
    assert len(_FakeBar.made) == 1
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # tqdm missing: no bar, no error
    assert _refine_space().certified_hull(cache=False).outer is not None


def test_time_limit_keeps_a_certified_ball():
    space = SensitivitySpace.additive(second_moments(4), None)
    res = space.certified_hull(time_limit=0.3, rng=SEED)
    assert any("time limit" in note for note in res.notes)
    assert _contains_s_t(space, res.outer, n=200) <= 1 + 1e-9


def test_bad_time_limit():
    with pytest.raises(ValueError, match="'time_limit' parameter of certified_hull must be a float in the range"):
        _refine_space().certified_hull(time_limit=0)
