"""Tests of the induced-norm balls of Joseph & Yu (sum, count, histogram, vote).

Every ball in CASES goes through the same suite, against independent
computations on the brute-force sensitivity space S of small domains: qhull
volumes, linear programs for the gauge, vertex maxima for the support function
and the sensitivities, Monte Carlo volumes, and uniformity of the exact sampler
against the box-rejection sampler. Statistical tests use fixed seeds; each
would fail with probability ALPHA (or ~6e-5 for |z| > Z_MAX) for a random seed.
"""

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linprog
from scipy.spatial import ConvexHull

from knorm.audit import audit_mechanism
from knorm.geometry import LpBall, NormBall
from knorm.geometry.induced import CountBall, HistogramBall, SumBall, VoteBall, _slices
from knorm.geometry.induced._slices import _permutations_with_descents, capped_cube_counts
from knorm.geometry.induced.votes import _uniform_permutohedron
from knorm.mechanisms import KNormMechanism
from knorm.noise import KNormNoise
from knorm.sensitivity import induced_space
from tests.settings import ALPHA, SEED, Z_MAX

AR = "add_remove"

# One row per ball: every generic test below runs on all of them.
CASES = {
    "sum-3-1": lambda: SumBall(3, 1),
    "sum-3-2": lambda: SumBall(3, 2),
    "sum-4-3": lambda: SumBall(4, 3),
    "sum-4-2-ar": lambda: SumBall(4, 2, neighbours=AR),
    "sum-2-2-ar": lambda: SumBall(2, 2, neighbours=AR),
    "count-3-1": lambda: CountBall(3, 1),
    "count-3-2": lambda: CountBall(3, 2),  # 2k > d: Delta_1 = d
    "count-4-2": lambda: CountBall(4, 2),
    "count-5-2": lambda: CountBall(5, 2),
    "count-4-1-ar": lambda: CountBall(4, 1, neighbours=AR),
    "count-4-2-ar": lambda: CountBall(4, 2, neighbours=AR),
    "count-3-3-ar": lambda: CountBall(3, 3, neighbours=AR),
    "histogram-2": lambda: HistogramBall(2),
    "histogram-3": lambda: HistogramBall(3),
    "histogram-5": lambda: HistogramBall(5),
    "vote-2": lambda: VoteBall(2),
    "vote-3": lambda: VoteBall(3),
    "vote-4": lambda: VoteBall(4),
    "vote-5": lambda: VoteBall(5),
    "vote-3-ar": lambda: VoteBall(3, neighbours=AR),
    "vote-4-ar": lambda: VoteBall(4, neighbours=AR),
}
IDS = list(CASES)


def records(ball):
    """The extreme records of the declared domain (every record lies in their hull)."""
    d = ball.stat_dim
    if isinstance(ball, SumBall):
        grid = itertools.product((-1.0, 0.0, 1.0), repeat=d)
        return np.array([x for x in grid if np.count_nonzero(x) <= ball.l0_bound])
    if isinstance(ball, CountBall):
        return np.array([x for x in itertools.product((0.0, 1.0), repeat=d) if sum(x) <= ball.l0_bound])
    if isinstance(ball, HistogramBall):
        return np.eye(d)
    return np.array(list(itertools.permutations(range(d))), dtype=float)  # Borda scores


def sensitivity_space(ball):
    """S in released coordinates: t(x) - t(x') (replace-one) or ±t(x) (add-remove)."""
    r = records(ball)
    if ball.neighbours == "replace":
        s = (r[:, None, :] - r[None, :, :]).reshape(-1, r.shape[1])
    else:
        s = np.vstack([r, -r])
    return np.unique(s[:, : ball.dim], axis=0)


@functools.cache
def case(name):
    ball = CASES[name]()
    s = sensitivity_space(ball)
    verts = s[ConvexHull(s).vertices] if ball.dim > 1 else s[[s.argmin(), s.argmax()]]
    return ball, s, verts


def hull_volume(points):
    return ConvexHull(points).volume if points.shape[1] > 1 else float(points.max() - points.min())


# -- the ball is the convex hull of S ------------------------------------------------
@pytest.mark.parametrize("name", IDS)
def test_ball_is_the_convex_hull_of_the_sensitivity_space(name):
    # S inside K (gauge <= 1, with equality somewhere) and vol(Hull S) = vol(K) force Hull S = K.
    ball, s, _ = case(name)
    g = ball.norm(s)
    assert g.max() == pytest.approx(1.0, abs=1e-12)
    assert np.all(g <= 1 + 1e-12)
    vol = ball.volume()
    assert vol.exact
    assert float(vol) == pytest.approx(hull_volume(s), rel=1e-10)
    assert float(ball.log_volume()) == pytest.approx(math.log(hull_volume(s)), abs=1e-10)


GRID = (
    [SumBall(d, k, neighbours=nb) for d in (2, 3, 4, 5) for k in range(1, d + 1) for nb in ("replace", AR)]
    + [CountBall(d, k, neighbours=nb) for d in (2, 3, 4, 5) for k in range(1, d + 1) for nb in ("replace", AR)]
    + [HistogramBall(d) for d in range(2, 9)]
    + [VoteBall(d, neighbours=nb) for d in (2, 3, 4, 5) for nb in ("replace", AR)]
)


@pytest.mark.parametrize("ball", GRID, ids=repr)
def test_volume_formulas_against_qhull_on_a_grid(ball):
    assert float(ball.volume()) == pytest.approx(hull_volume(sensitivity_space(ball)), rel=1e-10)


@pytest.mark.parametrize("name", IDS)
def test_gauge_matches_a_linear_program_over_the_vertices(name):
    # ||u||_{Hull S} = min sum(lambda) s.t. V' lambda = u, lambda >= 0 (S is symmetric).
    ball, _, verts = case(name)
    rng = np.random.default_rng(SEED)
    u = rng.standard_normal((8, ball.dim)) * rng.uniform(0.1, 3.0, size=(8, 1))
    u[0] = verts[0] * 0.3  # through a vertex
    lp = []
    for x in u:
        res = linprog(np.ones(len(verts)), A_eq=verts.T, b_eq=x, bounds=(0, None), method="highs")
        assert res.status == 0
        lp.append(res.fun)
    np.testing.assert_allclose(ball.norm(u), lp, rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(ball.contains(u), np.asarray(lp) <= 1.0)


@pytest.mark.parametrize("name", IDS)
def test_support_function_is_the_maximum_over_the_vertices(name):
    ball, s, _ = case(name)
    c = np.random.default_rng(SEED).standard_normal((50, ball.dim))
    c[0] = 0.0
    np.testing.assert_allclose(ball.support(c), (c @ s.T).max(axis=1), rtol=1e-12, atol=1e-12)
    assert np.ndim(ball.support(c[1])) == 0


@pytest.mark.parametrize("name", IDS)
def test_sensitivities_match_enumeration(name):
    ball, s, _ = case(name)
    space = induced_space(ball)
    for p in (1, 2, math.inf):
        sens = space.sensitivity(p)
        assert sens.kind == "exact"
        assert sens.value == pytest.approx(np.linalg.norm(s, ord=p, axis=1).max(), rel=1e-12)
        assert ball.max_lp_norm(p)[0] == sens.value
    own = space.sensitivity(ball)
    assert own.value == 1.0 == pytest.approx(ball.norm(s).max(), abs=1e-12)


@pytest.mark.parametrize("name", IDS)
def test_bounding_box_is_tight_and_certified(name):
    ball, s, _ = case(name)
    np.testing.assert_allclose(ball.bounding_box(), np.abs(s).max(axis=0), rtol=1e-12)


@pytest.mark.parametrize("name", IDS)
def test_exact_volume_agrees_with_monte_carlo(name):
    ball, _, _ = case(name)
    est = NormBall._volume(ball, np.random.default_rng(SEED), 100_000)
    z = (float(est) - float(ball.volume())) / est.stderr
    assert abs(z) < Z_MAX


# -- exact uniform sampling ------------------------------------------------------------
@pytest.mark.parametrize("name", IDS)
def test_uniform_sampler_is_uniform(name):
    ball, _, _ = case(name)
    rng = np.random.default_rng(SEED)
    n = 20_000
    u = ball.sample_uniform(n, rng=rng)
    assert u.shape == (n, ball.dim)
    g = ball.norm(u)
    assert np.all(g <= 1 + 1e-12)
    # ||U||_K^m ~ Uniform(0, 1) for U uniform in K.
    assert stats.kstest(g**ball.dim, "uniform").pvalue > ALPHA
    # Same law as the (exact, independent) rejection sampler: orthant x radius cells, and one projection.
    ref = ball._rejection_from_box(n, rng)

    def cells(x):
        signs = (x > 0) @ (1 << np.arange(ball.dim))
        return 2 * signs + (ball.norm(x) ** ball.dim < 0.5)

    table = np.array([np.bincount(cells(x), minlength=2 << ball.dim) for x in (u, ref)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > ALPHA
    c = rng.standard_normal(ball.dim)
    assert stats.ks_2samp(u @ c, ref @ c).pvalue > ALPHA


@pytest.mark.parametrize("name", IDS)
def test_knorm_noise_uses_the_ball(name):
    ball, _, _ = case(name)
    noise = KNormNoise(ball, 0.7)
    v = noise.sample(4000, rng=SEED)
    assert v.shape == (4000, ball.dim)
    # ||V||_K ~ Gamma(m, scale) (paper Lemma "K-norm Marginal Distribution").
    assert stats.kstest(ball.norm(v), stats.gamma(ball.dim, scale=0.7).cdf).pvalue > ALPHA
    assert np.isfinite(noise.entropy())


@pytest.mark.parametrize("name", IDS)
def test_sampler_rng_contract_and_empty_draws(name):
    ball, _, _ = case(name)
    np.testing.assert_array_equal(ball.sample_uniform(7, rng=3), ball.sample_uniform(7, rng=3))
    assert ball.sample_uniform(0, rng=3).shape == (0, ball.dim)


# -- privacy: the checked map and an empirical audit ----------------------------------
@pytest.mark.parametrize("name", IDS)
def test_privacy_loss_on_the_sensitivity_space_is_epsilon(name):
    ball, s, _ = case(name)
    mech = KNormMechanism(ball, induced_space(ball).sensitivity(ball), epsilon=0.8)
    assert mech.privacy_loss(s).max() == pytest.approx(0.8, abs=1e-12)


def test_empirical_audit_of_the_vote_mechanism_on_a_reversed_voter():
    # Audits are lower confidence bounds on eps at level 1 - ALPHA (knorm.audit): false alarm rate ALPHA.
    ball = VoteBall(4)
    value, neighbour = ball.reduce([3.0, 2.0, 1.0, 0.0]), ball.reduce([0.0, 1.0, 2.0, 3.0])
    sound = audit_mechanism(
        KNormMechanism(ball, induced_space(ball).sensitivity(ball), 1.0),
        value,
        neighbour,
        n_samples=50_000,
        confidence=1 - ALPHA,
        rng=SEED,
    )
    assert sound.passed, str(sound)
    assert sound.eps_lower > 0.75  # the audit has power
    # Half the sensitivity: the true loss is 2 against a claimed 1.
    broken = audit_mechanism(
        KNormMechanism(ball, 0.5, 1.0), value, neighbour, n_samples=50_000, confidence=1 - ALPHA, rng=SEED
    )
    assert broken.violates(1.0), str(broken)


# -- reduced coordinates ---------------------------------------------------------------
@pytest.mark.parametrize("name", IDS)
def test_reduce_and_expand_round_trip_a_statistic(name):
    ball, _, _ = case(name)
    rng = np.random.default_rng(SEED)
    recs = records(ball)
    n = 9
    stat = recs[rng.integers(len(recs), size=(4, n))].sum(axis=1)
    released = ball.reduce(stat)
    assert released.shape == (4, ball.dim)
    np.testing.assert_allclose(ball.expand(released, n_records=n), stat, atol=1e-12)
    noisy = ball.expand(released + ball.sample_uniform(4, rng=rng), n_records=n)
    if ball.flat:
        np.testing.assert_allclose(noisy.sum(axis=1), n * ball.per_record_total, rtol=1e-12)
        assert ball.dim == ball.stat_dim - 1
    else:
        assert ball.dim == ball.stat_dim


def test_flat_balls_need_the_number_of_records():
    with pytest.raises(TypeError, match="'n_records' parameter of VoteBall.expand"):
        VoteBall(4).expand(np.zeros(3))
    with pytest.raises(ValueError, match="'n_records' parameter of HistogramBall.expand must be an int >= 0"):
        HistogramBall(4).expand(np.zeros(3), n_records=-1)
    np.testing.assert_array_equal(SumBall(2, 1).expand([1.0, 2.0]), [1.0, 2.0])


# -- specific values -------------------------------------------------------------------
def test_borda_vote_ball_for_six_candidates_has_volume_41472():
    ball = VoteBall(6)
    assert ball.dim == 5
    assert float(ball.volume()) == 41472.0
    # Independent check: all of S is in K, and the points 2 sigma(w) - 5 = sigma(w) - reversed lie in S
    # and span a hull of volume 41472 (qhull), so Hull S = K.
    perms = np.array(list(itertools.permutations(range(6))), dtype=float)
    diffs = (perms[:, None, :] - perms[None, :, :]).reshape(-1, 6)[:, :5]
    assert np.all(ball.norm(diffs) <= 1 + 1e-12)
    assert ConvexHull(2 * perms[:, :5] - 5).volume == pytest.approx(41472, rel=1e-10)


def eulerian_row(m):
    """A(m, j), j = 0..m-1, by the recurrence (independent of the Irwin-Hall sum used by the balls)."""
    row = [1]
    for i in range(2, m + 1):
        row = [(j + 1) * (row[j] if j < len(row) else 0) + (i - j) * (row[j - 1] if j >= 1 else 0) for j in range(i)]
    return row


def test_capped_cube_counts_are_partial_eulerian_sums():
    for m in range(12):
        row = eulerian_row(m) if m else [1]
        for k in range(1, 12):
            assert capped_cube_counts(11, k)[m] == sum(row[:k])


def test_log_volumes_at_dimension_100_without_overflow():
    d, k = 100, 30
    s = [sum(eulerian_row(m)[:k]) if m else 1 for m in range(d + 1)]
    f = math.factorial
    expected = {
        SumBall(d, k): Fraction(4**d * s[d], f(d)),
        CountBall(d, k): sum(Fraction(math.comb(d, j) * s[j] * s[d - j], f(j) * f(d - j)) for j in range(d + 1)),
        CountBall(d, k, neighbours=AR): sum(Fraction(math.comb(d, j) * s[j] * s[d - j], f(d)) for j in range(d + 1)),
        HistogramBall(d): Fraction(math.comb(2 * d - 2, d - 1), f(d - 1)),
        VoteBall(d): Fraction(2 ** (d - 1) * d ** (d - 2)),
        VoteBall(d, neighbours=AR): Fraction((d - 1) * d ** (d - 1)),
    }
    for ball, vol in expected.items():
        lv = ball.log_volume()
        assert lv.exact
        assert float(lv) == pytest.approx(math.log(vol.numerator) - math.log(vol.denominator), rel=1e-13)
    assert float(VoteBall(d).log_volume()) == pytest.approx(99 * math.log(2) + 98 * math.log(100), rel=1e-14)


def test_count_orthant_weights_match_joseph_and_yu():
    # Their count test (d = 4, k = 2): classes with j positive entries weigh 3, 5, 6, 5, 3 over 22.
    np.testing.assert_allclose(CountBall(4, 2, neighbours=AR)._orthant_p, np.array([3, 5, 6, 5, 3]) / 22, rtol=1e-14)


def test_limits_are_the_l1_ball_and_the_cube():
    u = np.random.default_rng(SEED).standard_normal((100, 4))
    for r, neighbours in ((2.0, "replace"), (1.0, AR)):
        l1 = SumBall(4, 1, neighbours=neighbours)
        np.testing.assert_allclose(l1.norm(u), LpBall(4, 1, radius=r).norm(u), rtol=1e-14)
        assert float(l1.volume()) == pytest.approx(float(LpBall(4, 1, radius=r).volume()), rel=1e-14)
        cube = SumBall(4, 4, neighbours=neighbours)
        np.testing.assert_allclose(cube.norm(u), LpBall(4, math.inf, radius=r).norm(u), rtol=1e-14)
        assert float(cube.volume()) == (2 * r) ** 4
    np.testing.assert_allclose(CountBall(4, 1, neighbours=AR).norm(u), LpBall(4, 1).norm(u), rtol=1e-14)
    np.testing.assert_allclose(SumBall(1, 1).norm([[0.5], [-3.0]]), [0.25, 1.5])


# -- the exact discrete cores of the samplers ------------------------------------------
def descents(p):
    return int(np.count_nonzero(p[1:] < p[:-1]))


@pytest.mark.parametrize(("m", "k"), [(4, 2), (5, 3), (5, 5)])
def test_permutations_are_uniform_given_at_most_k_minus_1_descents(m, k):
    # A uniform point of T(m, k) needs the permutation of z uniform over those with < k descents.
    rng = np.random.default_rng(SEED)
    n = 30_000
    perm = _permutations_with_descents(np.full(n, m), k, m, rng)
    allowed = [p for p in itertools.permutations(range(1, m + 1)) if descents(np.array(p)) < k]
    index = {p: i for i, p in enumerate(allowed)}
    codes = np.array([index[tuple(p)] for p in perm.tolist()])  # KeyError if a forbidden one appears
    counts = np.bincount(codes, minlength=len(allowed))
    assert stats.chisquare(counts).pvalue > ALPHA


def test_permutations_with_per_row_lengths():
    rng = np.random.default_rng(SEED)
    m = rng.integers(0, 6, size=40_000)
    perm = _permutations_with_descents(m, 2, 5, rng)
    for mm in range(6):
        rows = perm[m == mm]
        np.testing.assert_array_equal(rows[:, mm:], np.broadcast_to(np.arange(mm + 1, 6), (len(rows), 5 - mm)))
        allowed = [p for p in itertools.permutations(range(1, mm + 1)) if descents(np.array(p)) < 2]
        index = {p: i for i, p in enumerate(allowed)}
        counts = np.bincount([index[tuple(p)] for p in rows[:, :mm].tolist()], minlength=len(allowed))
        if len(allowed) > 1:
            assert stats.chisquare(counts).pvalue > ALPHA


@pytest.mark.parametrize(("dim", "k"), [(1, 1), (2, 1), (5, 2), (10, 3), (30, 29), (100, 5)])
def test_few_rows_take_the_same_steps_in_python(dim, k, monkeypatch):
    """Up to _SCALAR_ROWS rows run row by row in Python from the same uniforms: the same permutations."""
    for n in (1, 2, _slices._SCALAR_ROWS):
        for seed in range(10):
            m = np.random.default_rng(seed).integers(0, dim + 1, n)
            rows = _permutations_with_descents(m, k, dim, np.random.default_rng(SEED + seed))
            with monkeypatch.context() as patch:
                patch.setattr(_slices, "_SCALAR_ROWS", 0)
                vectorised = _permutations_with_descents(m, k, dim, np.random.default_rng(SEED + seed))
            np.testing.assert_array_equal(rows, vectorised)


def test_cache_keys_are_the_parameters():
    """Equal parameters, equal keys (lattice laws and refusals are cached by them); never an instance."""
    assert SumBall(5, 2).cache_key == SumBall(5, 2).cache_key
    assert len({SumBall(5, 2).cache_key, SumBall(5, 3).cache_key, SumBall(5, 2, neighbours=AR).cache_key}) == 3
    assert HistogramBall(4).cache_key == HistogramBall(4).cache_key != HistogramBall(5).cache_key
    assert CountBall(6, 2).cache_key != CountBall(6, 2, neighbours=AR).cache_key


def test_count_orthants_are_shared_read_only():
    a, b = CountBall(8, 3), CountBall(8, 3)
    assert a._orthant_p is b._orthant_p and not a._orthant_p.flags.writeable
    assert float(a.volume()) == float(b.volume())


def test_permutohedron_points_are_in_the_cell_and_sum_to_zero():
    y = _uniform_permutohedron(5000, 7, np.random.default_rng(SEED))
    np.testing.assert_allclose(y.sum(axis=1), 0.0, atol=1e-12)
    # Rado: y is majorised by (0..6) - 3, i.e. each sum of the s largest is at most s (7 - s) / 2.
    top = np.cumsum(-np.sort(-y, axis=1), axis=1)[:, :-1]
    s = np.arange(1, 7)
    assert np.all(top <= s * (7 - s) / 2 + 1e-12)


# -- bad input -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "exc", "match"),
    [
        (lambda: SumBall(3, 0), ValueError, r"'l0_bound' parameter of SumBall must be an int in the range \[1, 3\]"),
        (lambda: SumBall(3, 4), ValueError, r"'l0_bound' parameter of SumBall .* Got 4 instead"),
        (lambda: CountBall(3, 1.5), TypeError, r"'l0_bound' parameter of CountBall"),
        (lambda: CountBall(3, True), TypeError, r"'l0_bound' parameter of CountBall"),
        (lambda: SumBall(0, 1), ValueError, r"'dim' parameter of SumBall must be an int >= 1"),
        (lambda: SumBall(3, 1, neighbours="swap"), ValueError, r"'neighbours' parameter of SumBall must be one of"),
        (lambda: VoteBall(1), ValueError, r"'n_candidates' parameter of VoteBall must be an int >= 2. Got 1"),
        (lambda: HistogramBall(1), ValueError, r"'n_categories' parameter of HistogramBall must be an int >= 2"),
        (lambda: VoteBall(3).max_lp_norm(p=3), ValueError, r"'p' parameter of VoteBall.max_lp_norm must be"),
        (lambda: VoteBall(3).max_lp_norm(p="1"), TypeError, r"'p' parameter of VoteBall.max_lp_norm must be"),
        (lambda: VoteBall(3).reduce([1.0, 2.0]), ValueError, r"'t' parameter of VoteBall.reduce"),
    ],
)
def test_bad_input_names_the_parameter(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


def test_repr():
    assert repr(VoteBall(4)) == "VoteBall(n_candidates=4, neighbours='replace')"
    assert repr(CountBall(4, 2, neighbours=AR)) == "CountBall(dim=4, l0_bound=2, neighbours='add_remove')"
    assert repr(SumBall(4, 2)) == "SumBall(dim=4, l0_bound=2, neighbours='replace')"
    assert repr(HistogramBall(4)) == "HistogramBall(n_categories=4)"
