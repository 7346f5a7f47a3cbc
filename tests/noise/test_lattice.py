"""Lattice K-norm laws: exact privacy ratios, outward rounding, gauges, refusals.

The law tests of every lattice sampler (exact pmf, integers only, support, projections,
marginal half-widths) run over the one registry of noise laws, tests/noise/test_laws.py.
Statistical tests use fixed seeds; each fails with probability ALPHA (1e-3) for a random
seed under a correct sampler.
"""

import itertools
import traceback
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from knorm.geometry import K2Ball, LpBall, OracleBall, Polytope, k3_ball
from knorm.noise import discrete, lattice, rational_polytope
from knorm.noise.lattice import LatticeKNormNoise, RationalPolytope, to_rational_polytope
from tests.noise.test_discrete import chi2_pvalue
from tests.noise.test_laws import hexagon, k2_k3_intersection
from tests.settings import ALPHA, SEED


def test_d1_laws_agree_with_discrete_laplace():
    # d = 1: the l1, l_inf and interval-polytope laws are all the discrete Laplace of rate r / rho.
    rate = Fraction(3, 4)
    noises = [
        LatticeKNormNoise(LpBall(1, 1, radius=2.0), rate),
        LatticeKNormNoise(LpBall(1, np.inf, radius=2.0), rate),
        LatticeKNormNoise(Polytope.from_halfspaces([[1.0], [-1.0]], [2.0, 2.0]), rate),
    ]
    ks = np.array([[-3], [0], [5]])
    exact = [Fraction(3, 2), Fraction(0), Fraction(5, 2)]
    for nz in noises[:2]:
        assert nz.norm(ks).tolist() == exact
        assert nz.effective_rate == rate
    # The polytope is rounded outward (K inside K'), so its gauge is a hair smaller.
    for got, want in zip(noises[2].norm(ks), exact):
        assert want * (1 - Fraction(1, 10**8)) <= got <= want


# -- exact privacy ratios ----------------------------------------------------------------
@pytest.mark.parametrize(
    "build, axes",
    [(lambda: LpBall(2, 1), 0.25), (lambda: LpBall(2, np.inf), 0.25), (k3_ball, 0.5), (hexagon, 0.25), (K2Ball, 0.5)],
    ids=["l1", "linf", "K3", "hexagon", "K2"],
)
def test_exact_privacy_ratio_on_neighbours(build, axes):
    # Neighbouring statistics u, u' with u - u' in K (Delta_K = 1), rounded down to the
    # lattice: a - b is within Delta~ = 1 + rounding_slack of K', and for every output o
    # of a window, log pmf(o - a) - log pmf(o - b) = r (||o - b|| - ||o - a||) <= r Delta~,
    # in exact rational arithmetic.
    ball = build()
    noise = LatticeKNormNoise(ball, Fraction(1), axis_scale=axes)
    gamma = np.full(ball.dim, axes)
    delta = 1 + noise.rounding_slack(gamma)
    rng = np.random.default_rng(SEED)
    r = noise.effective_rate
    for _ in range(6):
        u = rng.uniform(-3, 3, size=ball.dim)
        v = ball.sample_uniform(1, rng=rng)[0]
        v = v / float(ball.norm(v))  # on the boundary: ||u - u'||_K = 1
        a = np.floor(u / gamma).astype(np.int64)
        b = np.floor((u - v) / gamma).astype(np.int64)
        dab = noise.norm(a - b)[0]
        assert dab <= delta
        window = np.array(list(itertools.product(range(-6, 7), repeat=ball.dim)), dtype=np.int64) + a
        na, nb = noise.norm(window - a), noise.norm(window - b)
        loss = [r * (y - x) for x, y in zip(na, nb)]  # log pmf(o - a) - log pmf(o - b), exactly
        assert max(loss) <= r * dab <= r * delta
        assert all(isinstance(x, Fraction) for x in na)


# -- outward rounding ---------------------------------------------------------------------------
def _contained(P, pts):
    """Every point u (floats, read exactly) satisfies N u <= D, in exact integer arithmetic.

    A float is m 2^e with integer m; scaling every point by 2^k (k = -min e) makes them
    integers, and N (2^k u) <= 2^k D is checked with Python integers (object arrays).
    """
    pts = np.asarray(pts, dtype=float)
    _, exps = np.frexp(pts)
    k = max(0, 53 - int(exps.min()))
    X = np.array([[int(Fraction(float(x)) * (1 << k)) for x in row] for row in pts], dtype=object)
    return bool(np.all(X @ P.N.T.astype(object) <= P.D << k))


def _boundary_points(ball, n, seed):
    u = ball.sample_uniform(n, rng=seed)
    return u / ball.norm(u)[:, None]


@pytest.mark.parametrize(
    "build, axes",
    [
        (k3_ball, None),
        (k3_ball, 2.0**-5),
        (hexagon, 0.125),
        (lambda: Polytope.from_points(np.random.default_rng(SEED).normal(size=(14, 4))), None),
        (lambda: LpBall(3, 1, radius=1.5), 0.5),
        (lambda: LpBall(4, np.inf, radius=0.75), (0.25, 0.5, 1.0, 1.0)),
        (lambda: 3.0 * k3_ball(), 1.0),
        (K2Ball, 2.0**-3),
        (k2_k3_intersection, 0.5),
    ],
    ids=["K3", "K3-lattice", "hexagon", "random-4d", "l1", "linf-axes", "scaled-K3", "K2", "intersection"],
)
def test_outward_rounding_contains_ball(build, axes):
    ball = build()
    P = to_rational_polytope(ball, axis_scale=axes)
    scale = np.ones(ball.dim) if axes is None else np.broadcast_to(np.asarray(axes, dtype=float), (ball.dim,))
    pts = _boundary_points(ball, 300, SEED)
    if getattr(ball, "vertices", None) is not None:
        pts = np.vstack([pts, ball.vertices])
    if isinstance(ball, K2Ball):  # the arc and the corners of K_2 exactly
        x = np.linspace(1, 2, 101)
        arc = np.stack([x, 4 * x - 2 * x * x], axis=1)
        pts = np.vstack([pts, arc, arc * [-1, 1], arc * [1, -1], -arc, [[1, 2], [-1, 2], [2, 0]]])
    assert _contained(P, pts / scale)
    # ... and K' is tight: boundary points of K are nearly on the boundary of K'.
    num = P._numerator(np.round(pts[:50] / scale * 1e3).astype(np.int64))
    assert np.all(num >= 1e3 * P.D * (1 - 0.02) / (1 + 1e-6) - P._row_l1 * 0.5)


def test_rational_polytope_symmetric_box_and_norm():
    P = RationalPolytope([[2, 1], [0, 3]], 6)
    assert len(P.N) == 4 and {tuple(r) for r in P.N} == {(2, 1), (-2, -1), (0, 3), (0, -3)}
    # Exact box: max u_1 over {|2u1 + u2| <= 6, |3 u2| <= 6} is 4 (u2 = -2); padded up.
    assert P.box.tolist()[0] >= 4 and P.box.tolist()[1] >= 2
    assert P.box.tolist()[0] <= 6
    assert P.norm([[1, 1], [-3, 2]]).tolist() == [Fraction(1, 2), Fraction(1)]  # rows (2, 1) and (0, 3)
    assert P.contains([4, -2]) and not P.contains([4, -1])
    with pytest.raises(ValueError, match="'k' parameter of RationalPolytope.gauge_numerator"):
        P.gauge_numerator([2**62, 0])


def _exact_numerators(P, k):
    """max_i N_i . k in Python integers (the reference of both gauge paths)."""
    prods = P.N.astype(object) @ k.reshape(-1, P.dim).T.astype(object)  # object dtype: Python ints
    return [int(v) for v in prods.max(axis=0)]


def _both_paths_agree(P, k, rng):
    """The binary64 and int64 gauges give the same integers, equal to the exact ones."""
    exact = _exact_numerators(P, k)
    for use_float in (True, False):
        assert P._numerator(k, use_float=use_float).tolist() == exact
    # _numerator_below, with limits around the true numerators (strict: v < limit).
    limit = np.array(exact, dtype=np.int64) + rng.integers(-2, 3, size=len(k))
    want = [i for i, (v, lim) in enumerate(zip(exact, limit)) if v < lim]
    for use_float in (True, False):
        alive, num = P._numerator_below(k, limit, use_float=use_float)
        assert alive.tolist() == want and num.tolist() == [exact[i] for i in want]


@pytest.mark.parametrize(
    "build",
    [
        lambda: to_rational_polytope(k3_ball(), axis_scale=2.0**-7),
        lambda: to_rational_polytope(Polytope.from_points(np.random.default_rng(5).normal(size=(17, 5)))),
        lambda: to_rational_polytope(K2Ball(), axis_scale=2.0**-4),
        lambda: RationalPolytope([[3, 1], [0, 2], [1, -1]], 6),
    ],
    ids=["K3-lattice", "random-5d", "K2", "small"],
)
def test_float_gauge_equals_int64_gauge(build):
    P = build()
    rng = np.random.default_rng(SEED)
    t = (2**53 - 1) // P._row_l1  # the largest max|k| of the binary64 path
    for size in (1, 1000, 2**20, t):  # up to the 2^53 bound, where products are largest
        k = rng.integers(-size, size + 1, size=(3000, P.dim))
        assert P._float_exact(k) == (P._row_l1 * int(np.abs(k).max()) < 2**53)
        _both_paths_agree(P, k, rng)
    # The block structure of _numerator_below across chunks (more points than one chunk).
    k = rng.integers(-300, 301, size=(lattice._GAUGE_CHUNK + 123, P.dim))
    _both_paths_agree(P, k, rng)


@pytest.mark.parametrize("mnk", [1, 40, 200, 5000])
def test_gauge_pieces_for_blas_are_exact(mnk, monkeypatch):
    # Small caps on one BLAS call: the products are split by points, by rows, or both, in either layout.
    monkeypatch.setattr(rational_polytope, "_BLAS_MNK", mnk)  # RationalPolytope lives there
    P = to_rational_polytope(Polytope.from_points(np.random.default_rng(7).normal(size=(12, 3))), axis_scale=2.0**-6)
    rng = np.random.default_rng(SEED)
    for n in (1, 5, 300):
        _both_paths_agree(P, rng.integers(-400, 401, size=(n, 3)), rng)


def test_float_gauge_switch_at_the_2_53_bound():
    # Rows of about 2^40 (row_l1 near 2^41): the bound max|k| < 2^53 / row_l1 is about 4096.
    N = [[2**40 + 1, 3], [5, -(2**40 - 7)], [2**39 + 11, 2**39 - 13]]
    P = RationalPolytope(N, 2**45)
    t = (2**53 - 1) // P._row_l1
    rng = np.random.default_rng(SEED)
    for m in (t - 1, t, t + 1, t + 2):
        k = rng.integers(-m, m + 1, size=(2000, 2))
        k[:, 0] = rng.choice([-m, m], size=len(k))  # max|k| = m exactly; the products are near 2^53
        assert P._float_exact(k) == (m <= t)
        assert P._numerator(k).tolist() == _exact_numerators(P, k)  # the automatic choice
        limit = P._numerator(k) + rng.integers(-1, 2, size=len(k))
        alive, num = P._numerator_below(k, limit)
        assert alive.tolist() == np.flatnonzero(np.array(_exact_numerators(P, k)) < limit).tolist()
        if m <= t:
            _both_paths_agree(P, k, rng)
    # Beyond the bound binary64 rounds: (2^52 + 1) 2 + 1 = 2^53 + 3 is not a double. The automatic
    # choice takes the int64 path there and stays exact.
    P = RationalPolytope([[2**52 + 1, 1], [0, 2**40]], 2**50)
    k = np.array([[2, 1]])
    assert not P._float_exact(k)
    assert int(P._numerator(k, use_float=True)[0]) != 2**53 + 3  # the test can see a rounding
    assert int(P._numerator(k)[0]) == int(P.gauge_numerator([2, 1])) == 2**53 + 3


def test_polytope_draws_do_not_depend_on_the_gauge_path(monkeypatch):
    # Both gauges are exact, so a seed gives the same draws (the accept/reject decisions are equal).
    ball = Polytope.from_points(np.random.default_rng(3).normal(size=(14, 4)))
    draws = LatticeKNormNoise(ball, 1, axis_scale=2.0**-5).sample(3000, rng=SEED)
    monkeypatch.setattr(RationalPolytope, "_float_exact", lambda self, k: False)
    noise = LatticeKNormNoise(ball, 1, axis_scale=2.0**-5)
    assert not noise.polytope._float_exact(draws)
    np.testing.assert_array_equal(noise.sample(3000, rng=SEED), draws)


def test_rounding_slack_formulas():
    g = (0.25, 0.5, 0.125)
    l1 = LatticeKNormNoise(LpBall(3, 1, radius=2.0), 1)
    linf = LatticeKNormNoise(LpBall(3, np.inf, radius=2.0), 1)
    assert l1.rounding_slack(g) == Fraction(7, 8) / 2
    assert linf.rounding_slack(g) == Fraction(1, 4)
    # Polytope: max_i sum_j |N_ij| gamma_j / D equals the largest norm over the corners
    # of the box |w_j| <= gamma_j (a convex function peaks at a corner), exactly.
    P = LatticeKNormNoise(k3_ball(), 1, axis_scale=0.125)
    slack = P.rounding_slack(g)
    corners = np.array(list(itertools.product((-1, 1), repeat=3))) * np.array(g) / 0.125
    best = max(
        max(sum(int(c) * Fraction(float(x)) for c, x in zip(row, w)) for row in P.polytope.N) / P.polytope.D
        for w in corners
    )
    assert slack == best
    # ... and it is (a hair below, K' containing K) the K_3 gauge of the worst corner:
    # max(||w||_inf / 2, ||w||_1 / 4) = max(1/4, 7/32) = 1/4.
    assert Fraction(1, 4) * (1 - Fraction(1, 10**6)) <= slack <= Fraction(1, 4)
    # With equal gammas the l1 facets win: max(1/8, 3/16) = 3/16 (a sum over three entries).
    slack = P.rounding_slack(0.25)
    assert Fraction(3, 16) * (1 - Fraction(1, 10**6)) <= slack <= Fraction(3, 16)


def test_round_down_is_dyadic_and_below():
    assert lattice._round_down(Fraction(3, 8)) == Fraction(3, 8)
    for x in (Fraction(1, 3), Fraction(10**9 + 7, 10**9), Fraction(1, 10**6), Fraction(123456789, 7)):
        y = lattice._round_down(x)
        assert y <= x and y.denominator & (y.denominator - 1) == 0
        assert (x - y) / x < Fraction(1, 2**39)
    tiny = Fraction(1, 10**8)  # tau capped at 62: s = floor(2^62 / 10^8) has 36 bits
    assert 0 < (tiny - lattice._round_down(tiny)) / tiny < Fraction(1, 2**35)
    assert lattice._round_down(Fraction(1, 3), max_tau=32).denominator <= 2**32


def test_l1_columns_are_grouped_by_rate_in_first_seen_order():
    """One discrete Laplace call per distinct per-unit rate, over its columns, in first-seen order."""
    noise = LatticeKNormNoise(LpBall(4, 1), Fraction(1, 3), axis_scale=(2.0, 1.0, 2.0, 1.0))
    assert [cols for _, _, cols in noise._l1_groups()] == [[0, 2], [1, 3]]
    draws = noise.sample(5, rng=SEED)
    gen = np.random.default_rng(SEED)
    expected = np.empty((5, 4), dtype=np.int64)
    for q, cols in ((noise._coord_rates[0], [0, 2]), (noise._coord_rates[1], [1, 3])):
        expected[:, cols] = discrete._discrete_laplace(q.numerator, q.denominator, 10, gen).reshape(5, 2)
    np.testing.assert_array_equal(draws, expected)


def test_a_refused_lattice_is_cached_and_raised_fresh(monkeypatch):
    """A refusal is kept by its public key (ball parameters, Delta, epsilon, spacing), not built again,
    and raised as a fresh exception each time (one stored instance grew its traceback on every raise)."""
    from knorm.mechanisms import lattice as mech

    monkeypatch.setattr(mech, "_LAWS", type(mech._LAWS)(128, refusals=(ValueError, TypeError)))  # an empty cache
    calls = []
    build = mech._law_uncached
    monkeypatch.setattr(mech, "_law_uncached", lambda *args: calls.append(1) or build(*args))
    ball = LpBall(3, 2)  # l2: no rational polytope, no exact lattice law
    errors, builds = [], []
    for _ in range(3):
        with pytest.raises(mech.LatticeUnavailable, match="no exact lattice sampler") as err:
            mech.build_lattice_law(ball, 1.25, 0.75)
        errors.append(err.value)
        builds.append(len(calls))
    assert builds == [2, 2, 2]  # epsilon 0.75, and the probe at epsilon 1 (_served_epsilon): once each
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[2])
    assert len(traceback.extract_tb(errors[2].__traceback__)) == len(traceback.extract_tb(errors[1].__traceback__))
    with pytest.raises(mech.LatticeUnavailable):
        mech.build_lattice_law(LpBall(3, 2), 1.25, 0.5)  # another epsilon: its own key, one more build
    assert len(calls) == 3


def test_effective_rate_and_shapes():
    noise = LatticeKNormNoise(LpBall(2, 1, radius=0.1), 0.1)  # 0.1 is read exactly, then rounded down
    assert noise.effective_rate <= Fraction(0.1)
    assert (Fraction(0.1) - noise.effective_rate) / Fraction(0.1) < Fraction(1, 2**39)
    assert noise.sample(rng=0).shape == (2,)
    assert noise.sample((2, 3), rng=0).shape == (2, 3, 2)
    assert np.array_equal(noise.sample(5, rng=3), noise.sample(5, rng=np.random.default_rng(3)))
    assert noise.unnormalised_logpmf([[0, 0], [1, -1]]).tolist() == [0.0, -float(noise.effective_rate) * 20]
    assert "l1" in repr(noise)


# -- acceptance and refusals --------------------------------------------------------------------
def test_linf_acceptance_is_one_on_coarse_lattices():
    # j = 0: L comes straight from its tabulated law, nothing is rejected.
    noise = LatticeKNormNoise(LpBall(3, np.inf), Fraction(1, 4))
    assert noise.expected_acceptance == 1.0
    noise.sample(2000, rng=SEED)
    assert noise.acceptance_rate == 1.0


def test_elongated_polytopes_get_a_box_proposal():
    # Along an axis a needle is no problem: the proposal is a box of multipliers m proportional to it.
    axis = Polytope.from_halfspaces(np.vstack([np.eye(3), -np.eye(3)]), [1.0, 1 / 16, 1 / 16] * 2)
    noise = LatticeKNormNoise(axis, 1, axis_scale=2.0**-7)
    assert noise._m is not None and noise._m[0] >= 8 * noise._m[1]
    assert noise.expected_acceptance > 0.5
    cube = LatticeKNormNoise(k3_ball(), 1, axis_scale=2.0**-7)
    assert cube._m is None and cube._shift == 0


def test_wrong_box_is_refused_loudly(monkeypatch):
    # If the certified box were wrong (c too large), a live proposal would break the bound.
    noise = LatticeKNormNoise(RationalPolytope([[1, 0], [0, 6], [1, 3]], 6), Fraction(1, 2))
    noise._c *= 4
    with pytest.raises(RuntimeError, match="certified box"):
        noise.sample(2000, rng=0)


def test_refuses_below_floor():
    # A needle along the diagonal (1, 1, 1): no box fits it; the volume ratio is about 1e-7.
    A = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 0.0], [1.0, 1.0, -2.0]])
    needle = Polytope.from_halfspaces(np.vstack([A, -A]), [1.0, 1e-3, 1e-3] * 2)
    noise = LatticeKNormNoise(needle, 1, axis_scale=2.0**-7)
    with pytest.raises(ValueError, match=r"accepts about .* below the floor 0.0001.*continuous knorm.noise.KNormNoise"):
        noise.sample(1, rng=0)
    # A coarse l_inf lattice (L = 0 almost always) is no longer a rejection problem: its
    # radius comes straight from the tabulated law.
    high_rate = LatticeKNormNoise(LpBall(8, np.inf), 50)
    assert high_rate.expected_acceptance == 1.0
    assert np.count_nonzero(high_rate.sample(1000, rng=0)) < 5  # P(k != 0) = 1 - 1/Z, about 3^8 e^-50


def test_proposal_budget_stops_a_runaway(monkeypatch):
    noise = LatticeKNormNoise(k3_ball(), 1, axis_scale=0.5)
    noise._expected = 0.5  # pretend the pilot was optimistic; the real sampler never accepts
    monkeypatch.setattr(noise, "_propose", lambda n, rng, stats, pilot=False: np.empty((0, 3), dtype=np.int64))
    monkeypatch.setattr(lattice, "_PROPOSAL_SLACK", 1)
    with pytest.raises(RuntimeError, match="refusing to loop on"):
        noise.sample(10, rng=0)


# -- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: LatticeKNormNoise(LpBall(2, 1), 0), ValueError, r"'rate' parameter of LatticeKNormNoise .* Got 0"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), -1.5), ValueError, r"'rate' parameter"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), float("nan")), ValueError, r"'rate' parameter"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), "1"), TypeError, r"'rate' parameter"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), True), TypeError, r"'rate' parameter"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), 1, axis_scale=3.0), ValueError, r"'axis_scale' .* powers of two"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), 1, axis_scale=(1, 2, 4)), ValueError, r"'axis_scale'"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), 1, axis_scale=-0.5), ValueError, r"'axis_scale'"),
        (lambda: LatticeKNormNoise("ball", 1), TypeError, r"'ball' parameter of LatticeKNormNoise"),
        (lambda: LatticeKNormNoise(LpBall(2, 2), 1), ValueError, r"cannot convert LpBall\(dim=2, p=2.*KNormNoise"),
        (
            lambda: LatticeKNormNoise(OracleBall(lambda U: (U**2).sum(1) <= 1, 1.0, dim=2), 1),
            ValueError,
            r"cannot convert OracleBall",
        ),
        (lambda: to_rational_polytope(LpBall(13, 1)), ValueError, r"l1 ball in dimension 13"),
        (
            lambda: to_rational_polytope(Polytope.from_points(np.eye(3), max_qhull_dim=2)),
            ValueError,
            r"facets are unknown",
        ),
        (lambda: to_rational_polytope(k3_ball(), denominator_bits=2), ValueError, r"'denominator_bits'"),
        (lambda: RationalPolytope([[0, 0]], 3), ValueError, r"not a norm ball because every row of N is zero"),
        (lambda: RationalPolytope([[1, 0]], 3), ValueError, r"not a norm ball because maximizing u\[1\]"),
        (lambda: RationalPolytope([[1.5, 0]], 3), TypeError, r"'N' parameter of RationalPolytope"),
        (lambda: RationalPolytope([[1, 0], [0, 1]], 0), ValueError, r"'D' parameter of RationalPolytope"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), 1).sample(-1), ValueError, r"'size' parameter"),
        (lambda: LatticeKNormNoise(LpBall(2, 1), 1).norm([1, 2, 3]), ValueError, r"last axis of length 2"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_chi2_helper_can_fail():
    # The goodness-of-fit helper rejects a wrong law (a check on the checker).
    rng = np.random.default_rng(SEED)
    x = rng.geometric(0.3, size=20_000) - 1
    q = 0.6  # wrong
    counts = np.bincount(np.minimum(x, 30), minlength=31)
    probs = (1 - q) * q ** np.arange(31.0)
    probs[-1] = q**30
    assert chi2_pvalue(counts, probs) < ALPHA
    assert stats.chisquare([10, 10], [10, 10]).pvalue == 1.0
