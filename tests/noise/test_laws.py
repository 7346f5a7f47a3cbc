"""Every noise law, continuous and lattice, tested by one table of cases, numpyro style.

CASES lists (law factory, ball, dim, eps) rows: continuous K-norm laws, integer lattice laws
(:class:`LatticeKNormNoise`, the block and histogram lattice laws), lattice laws in the
statistic's units (:class:`LatticeLaw`, as a mechanism builds them) and the zero law. A new
ball or sampler is tested by adding a row. Generic tests run over every row (the interface,
the support, a goodness-of-fit test of a 1-D projection, the coverage of
``marginal_half_width``); the continuous rows also get the paper's laws of the norm, the
direction, the entropy, the concentration sets and the depth, and the integer rows a
chi-square test against their exact pmf.

Statistical tests use fixed seeds, so each is deterministic; each KS, chi-square or binomial
test fails with probability ALPHA (1e-3) for a random seed under a correct sampler, and each
Z_MAX check (coverage) with probability about 6e-5 per coordinate.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from knorm.geometry import CountBall, HistogramBall, IntersectionBall, K2Ball, LpBall, Polytope, k3_ball
from knorm.mechanisms.lattice import LatticeLaw, build_lattice_law, lattice_noise
from knorm.noise import KNormNoise, lattice
from knorm.noise.lattice import LatticeKNormNoise, RationalPolytope
from knorm.noise.law import MC_SEED, NoiseLaw, ZeroNoise
from knorm.noise.shaped_gaussian import ShapedDiscreteGaussianNoise
from knorm.sensitivity import BlockSumBall
from tests.noise.test_discrete import IntegersOnly, chi2_pvalue, integers_only
from tests.settings import ALPHA, SEED, Z_MAX


@dataclass(frozen=True)
class Case:
    """One row: how to build the law, on which ball, in which dimension, at which eps (or rate)."""

    id: str
    law: Callable[[], NoiseLaw]
    ball: Callable | None
    dim: int
    eps: object
    kind: str  # 'continuous', 'lattice' (integer lattice units or LatticeLaw) or 'zero'
    closed: bool = False  # marginal_half_width has a closed form

    def __repr__(self):
        return self.id


# -- the balls -------------------------------------------------------------------------------------
def _random_polytope(dim):
    if dim >= 10:
        # A box with cut corners, given by halfspaces: cheap gauge in any dimension.
        eye = np.eye(dim)
        ones = np.ones((1, dim))
        a = np.vstack([eye, -eye, ones, -ones])
        b = np.concatenate([np.full(2 * dim, 1.0), [0.8 * dim, 0.8 * dim]])
        return Polytope.from_halfspaces(a, b)
    pts = np.random.default_rng(SEED + dim).normal(size=(3 * dim + 2, dim))
    return Polytope.from_points(pts)


def hexagon():
    angles = np.pi / 3 * np.arange(3)
    return Polytope.from_points(np.stack([np.cos(angles), np.sin(angles)], axis=1))


def k2_k3_intersection():
    # Coordinates (x, 2x^2, y, xy)-like: K_2 on (0, 1) and K_3 on (0, 2, 3) (ERRATA item 5 structure).
    return IntersectionBall(4, [([0, 1], K2Ball()), ([0, 2, 3], k3_ball())])


def _block_ball():
    # A block-sum norm (BlockSumBall): an interval and a hexagon, half the weight each.
    return BlockSumBall(3, [([0], LpBall(1, 1), 0.5), ([1, 2], hexagon(), 0.5)])


# -- the table -------------------------------------------------------------------------------------
CONTINUOUS_SCALE = 0.7  # eps = Delta / scale with Delta = 1


def _continuous(name, ball, dim, closed=False):
    return Case(
        name,
        lambda: KNormNoise(ball(), scale=CONTINUOUS_SCALE),
        ball,
        dim,
        1 / CONTINUOUS_SCALE,
        "continuous",
        closed or dim == 1,
    )


def _integer(name, ball, dim, rate, axes=None, closed=False):
    return Case(
        f"{name}-r{rate}",
        lambda: LatticeKNormNoise(ball(), rate, axis_scale=axes),
        ball,
        dim,
        rate,
        "lattice",
        closed,
    )


def _cases():
    cases = []
    for dim in (1, 2, 5, 26):
        for name, p in (("l1", 1), ("l2", 2), ("linf", math.inf), ("l3", 3)):
            ball = lambda dim=dim, p=p: LpBall(dim, p, radius=1.5)  # noqa: E731
            cases.append(_continuous(f"{name}-{dim}", ball, dim, closed=p in (1, math.inf)))
        # A non-regular polytope: the symmetric hull of random points (exact triangulation
        # sampler in low dimension, rejection in 26).
        cases.append(_continuous(f"polytope-{dim}", lambda dim=dim: _random_polytope(dim), dim))
    cases.append(_continuous("K2-2", K2Ball, 2))
    cases.append(_continuous("K3-3", k3_ball, 3))
    cases.append(_continuous("scaled-l3-5", lambda: 0.4 * LpBall(5, 3), 5))
    cases.append(_continuous("scaled-linf-3", lambda: 0.4 * LpBall(3, math.inf), 3, closed=True))

    # Integer lattice laws P(k) proportional to exp(-r ||diag(axis_scale) k||_K).
    for rate in (Fraction(1, 2), Fraction(3, 2)):
        cases.append(_integer("l1-1", lambda: LpBall(1, 1), 1, rate, closed=True))
        cases.append(_integer("linf-1", lambda: LpBall(1, np.inf), 1, rate, closed=True))
    for rate in (Fraction(1), Fraction(3)):
        cases.append(_integer("l1-2", lambda: LpBall(2, 1, radius=2.0), 2, rate, closed=True))
    for rate in (Fraction(1), Fraction(2)):
        cases.append(_integer("l1-3", lambda: LpBall(3, 1), 3, rate, closed=True))
    cases.append(_integer("l1-2-axes", lambda: LpBall(2, 1), 2, Fraction(1, 2), (1.0, 2.0), closed=True))
    cases.append(_integer("l1-scaled", lambda: 0.5 * LpBall(2, 1), 2, Fraction(1, 3), closed=True))  # rounded down
    for rate in (Fraction(1, 2), Fraction(1)):
        cases.append(_integer("linf-2", lambda: LpBall(2, np.inf), 2, rate))
    for rate in (Fraction(3, 2), Fraction(3)):
        cases.append(_integer("linf-3", lambda: LpBall(3, np.inf, radius=2.0), 3, rate))
    cases.append(_integer("linf-2-axes", lambda: LpBall(2, np.inf), 2, Fraction(1, 2), (0.5, 1.0)))  # a box
    interval = lambda: Polytope.from_halfspaces([[1.0], [-1.0]], [2.0, 2.0])  # noqa: E731
    cases.append(_integer("interval-1", interval, 1, Fraction(1)))
    for rate in (Fraction(3, 2), Fraction(3)):
        cases.append(_integer("K3", k3_ball, 3, rate, 1.0))
    for rate in (Fraction(1, 2), Fraction(1)):
        cases.append(_integer("hexagon", hexagon, 2, rate, 0.25))
    cases.append(_integer("K2-outer", K2Ball, 2, Fraction(1), 0.5))
    for rate in (Fraction(1, 2), Fraction(1)):
        cases.append(_integer("rational", lambda: RationalPolytope([[3, 1], [0, 2], [1, -1]], 6), 2, rate))
    # An elongated polytope (box 6 x 1 in lattice units): the sampler's proposal is a box, not a cube.
    for rate in (Fraction(1), Fraction(2)):
        cases.append(_integer("elongated", lambda: RationalPolytope([[1, 0], [0, 6], [1, 3]], 6), 2, rate))

    # The block and histogram lattice laws, as the mechanisms build them (lattice_noise).
    gamma = np.array([1.0, 0.5, 0.5])
    cases.append(
        Case("block-l1-hexagon", lambda: lattice_noise(_block_ball(), gamma, Fraction(4)), _block_ball, 3, 4, "lattice")
    )
    for bins, rate in ((3, Fraction(1)), (4, Fraction(2))):
        ball = lambda bins=bins: HistogramBall(bins)  # noqa: E731
        law = lambda bins=bins, rate=rate: lattice_noise(HistogramBall(bins), np.ones(bins - 1), rate)  # noqa: E731
        cases.append(Case(f"histogram-{bins}-r{rate}", law, ball, bins - 1, rate, "lattice"))

    # LatticeLaw: a mechanism's lattice law in the statistic's units (rounding slack included).
    cases.append(
        Case(
            "law-K3-eps4",
            lambda: build_lattice_law(k3_ball(), 1.0, 4.0, spacing=0.5),
            k3_ball,
            3,
            4.0,
            "lattice",
        )
    )
    cases.append(
        Case(
            "law-l1-eps2",
            lambda: build_lattice_law(LpBall(2, 1), 1.0, 2.0, spacing=0.25),
            lambda: LpBall(2, 1),
            2,
            2.0,
            "lattice",
            True,
        )
    )
    counts = lambda: CountBall(3, 1, neighbours="add_remove")  # noqa: E731
    cases.append(
        Case(
            "law-counts-eps1",
            lambda: build_lattice_law(counts(), 1.0, 1.0, spacing=1.0, on_lattice=True),
            counts,
            3,
            1.0,
            "lattice",
        )
    )
    # The shaped discrete Gaussian on Z^m (exact): a dense A (spherical proposal), A = aI + b11' with b > 0
    # (spherical proposal, one Bernoulli) and with b < 0 (the latent-integer sampler).
    shaped = (
        ("shaped-dense-2", lambda: ShapedDiscreteGaussianNoise([[2, 1], [1, 3]], denominator=2), 2),
        ("shaped-compound-pos-3", lambda: ShapedDiscreteGaussianNoise.compound(1, Fraction(1, 4), 3), 3),
        ("shaped-compound-neg-3", lambda: ShapedDiscreteGaussianNoise.compound(Fraction(1, 2), Fraction(-1, 8), 3), 3),
    )
    for name, law, dim in shaped:
        cases.append(Case(name, law, None, dim, None, "lattice"))
    cases.append(Case("zero-3", lambda: ZeroNoise(3), None, 3, math.inf, "zero", True))
    return cases


CASES = _cases()
CONTINUOUS = [c for c in CASES if c.kind == "continuous"]
INTEGER = [c for c in CASES if c.kind == "lattice"]
_LAWS: dict = {}


def _law(case):
    """The law of a row, built once per session (lattice laws run a pilot when built)."""
    if case.id not in _LAWS:
        _LAWS[case.id] = case.law()
    return _LAWS[case.id]


def _integer_parts(law):
    """(the integer law of k, the spacings gamma): the noise is gamma k."""
    if isinstance(law, LatticeLaw):
        return law.noise, np.asarray(law.spacing, dtype=float)
    return law, np.ones(law.dim)


def _units(law, draws):
    """Draws of a lattice law as int64 lattice units (checked exact)."""
    noise, gamma = _integer_parts(law)
    k = np.rint(draws / gamma)
    assert np.array_equal(k * gamma, draws)
    return k.astype(np.int64)


def _seed(case):
    return SEED + zlib.crc32(case.id.encode()) % 1000


def enumerate_pmf(noise, tol=1e-10, max_points=3_000_000):
    """Lattice points of a window [-R, R]^d and their probabilities, normalised on the window.

    R grows until the mass on the window's outer shell is below ``tol`` of the total; the
    laws decay geometrically in ||k||_inf, so the mass outside is then of the order of tol.
    """
    d, R = noise.dim, 4
    while True:
        assert (2 * R + 1) ** d <= max_points, "test rates must keep the law on a small window"
        grid = (np.indices((2 * R + 1,) * d).reshape(d, -1).T - R).astype(np.int64)  # row-major over [-R, R]^d
        logw = np.asarray(noise.unnormalised_logpmf(grid), dtype=float)
        w = np.exp(logw - logw.max())
        if w[np.abs(grid).max(axis=1) == R].sum() < tol * w.sum():
            return grid, w / w.sum()
        R = math.ceil(1.5 * R)


# -- generic tests over every row ----------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_interface_and_shapes(case):
    law = _law(case)
    assert isinstance(law, NoiseLaw) and law.dim == case.dim
    assert isinstance(law.sampler, str) and law.sampler
    assert law.scale >= 0 and (law.scale > 0) == (case.kind != "zero")
    acc = law.expected_acceptance
    assert math.isnan(acc) or 0 < acc <= 1
    assert np.shape(law.sample(rng=1)) == (case.dim,)
    assert np.shape(law.sample(4, rng=1)) == (4, case.dim)
    assert np.shape(law.sample((2, 3), rng=1)) == (2, 3, case.dim)
    np.testing.assert_array_equal(law.sample(5, rng=7), law.sample(5, rng=7))
    assert law.public_draws(50).flags.writeable is False


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_support(case):
    law = _law(case)
    draws = np.asarray(law.sample(2000, rng=_seed(case)))
    if case.kind == "zero":
        assert np.all(draws == 0)
    elif case.kind == "continuous":  # R^m: finite, and no atom at 0
        assert draws.dtype == np.float64 and np.all(np.isfinite(draws)) and np.all(np.any(draws != 0, axis=1))
    else:  # gamma Z^m, exactly: int64 lattice units, or exact multiples of the spacings
        noise, _ = _integer_parts(law)
        assert noise.sample(10, rng=1).dtype == np.int64
        k = _units(law, draws)
        assert np.all(np.abs(k) < 2**52)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_projection_goodness_of_fit(case):
    # Continuous: two-sample KS of c.V against c.(R U), R ~ Gamma(m + 1, scale) and U uniform on K
    # (the construction of ERRATA.md "Samplers", independent of the l_p balls' samplers). Lattice:
    # chi-square of c.k against its exact pmf from enumeration. Failure rate ALPHA.
    law = _law(case)
    n, seed = 20_000, _seed(case) + 1
    draws = np.asarray(law.sample(n, rng=seed))
    if case.kind == "zero":
        assert np.all(draws == 0)
        return
    if case.kind == "continuous":
        c = np.random.default_rng(SEED).normal(size=case.dim)
        ball = law.ball
        radius = stats.gamma(case.dim + 1, scale=law.scale).rvs(n, random_state=seed + 1)
        reference = radius[:, None] * ball.sample_uniform(n, rng=seed + 2)
        assert stats.ks_2samp(draws @ c, reference @ c).pvalue > ALPHA
        return
    noise, _ = _integer_parts(law)
    k = _units(law, draws)
    c = np.array([1, 2, -1, 3][: case.dim], dtype=np.int64)
    grid, p = enumerate_pmf(noise)
    values, inverse = np.unique(grid @ c, return_inverse=True)
    pmf = np.bincount(inverse.ravel(), weights=p)
    projected = k @ c
    inside = (projected >= values[0]) & (projected <= values[-1])
    counts = np.bincount(np.searchsorted(values, projected[inside]), minlength=len(values)).astype(float)
    counts = np.append(counts, n - inside.sum())
    assert chi2_pvalue(counts, np.append(pmf, max(0.0, 1 - pmf.sum()))) > ALPHA


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_marginal_half_width_covers(case):
    # P(|V_j| > t_j) = alpha: exactly for continuous closed forms, within the Monte Carlo error of
    # the public draws otherwise; on a lattice t_j is the smallest value with tail at most alpha
    # (P(|k_j| >= floor(t_j)) >= alpha). Checked on independent draws (seed != MC_SEED); each check
    # allows Z_MAX standard errors (failure rate about 6e-5 per coordinate).
    law, alpha, n = _law(case), 0.1, 20_000
    half = law.marginal_half_width(alpha)
    t = np.asarray(half)
    assert t.shape == (case.dim,) and np.all(t >= 0)
    assert half.method == ("closed form" if case.closed else "Monte Carlo")
    assert (half.mc_error == 0) == case.closed
    draws = np.asarray(law.sample(n, rng=_seed(case) + 3))
    if case.kind == "zero":
        assert np.all(t == 0) and np.all(draws == 0)
        return
    assert _seed(case) + 3 != MC_SEED
    tol = Z_MAX * math.sqrt(alpha * (1 - alpha) / n + half.mc_error**2)
    if case.kind == "continuous":
        tail = (np.abs(draws) > t).mean(axis=0)
        assert np.all(np.abs(tail - alpha) <= tol), (tail, alpha, tol)
        return
    _, gamma = _integer_parts(law)
    k, m = np.abs(_units(law, draws)), t / gamma
    assert np.all((k > m).mean(axis=0) <= alpha + tol)
    assert np.all((k >= np.floor(m)).mean(axis=0) >= alpha - tol)


def test_half_width_is_checked_at_the_door():
    law = KNormNoise(LpBall(2, 2), 1.0)
    with pytest.raises(ValueError, match="'alpha' parameter of KNormNoise.marginal_half_width must be a float"):
        law.marginal_half_width(1.5)
    with pytest.raises(ValueError, match="'n_draws' parameter of KNormNoise.marginal_half_width must be an int >= 1"):
        law.marginal_half_width(0.1, n_draws=0)


# -- continuous rows: the laws of the paper -------------------------------------------------------------
@pytest.fixture(params=CONTINUOUS, ids=repr)
def noise(request):
    return _law(request.param)


def test_norm_law_is_gamma(noise):
    # Paper Lemma "K-norm Marginal Distribution": ||V||_K ~ Gamma(m, scale). Failure rate ALPHA.
    v = noise.sample(20_000, rng=SEED)
    assert v.shape == (20_000, noise.dim)
    g = noise.ball.norm(v)
    assert stats.kstest(g, stats.gamma(noise.dim, scale=noise.scale).cdf).pvalue > ALPHA
    assert stats.kstest(g, noise.norm_law().cdf).pvalue > ALPHA


def test_direction_is_cone_measure(noise):
    # V/||V||_K has the law of U/||U||_K for U uniform on K (paper Lemma "K-mech
    # Conditional Distribution"): two-sample KS on a fixed projection. Failure rate ALPHA.
    c = np.random.default_rng(1).normal(size=noise.dim)
    v = noise.sample(20_000, rng=SEED + 1)
    u = noise.ball.sample_uniform(20_000, rng=SEED + 2)
    a = (v / noise.ball.norm(v)[:, None]) @ c
    b = (u / noise.ball.norm(u)[:, None]) @ c
    assert stats.ks_2samp(a, b).pvalue > ALPHA


def test_uniform_sampler_inside_and_radially_uniform(noise):
    u = noise.ball.sample_uniform(20_000, rng=SEED + 3)
    g = noise.ball.norm(u)
    assert np.all(g <= 1 + 1e-9)
    assert stats.kstest(g**noise.dim, "uniform").pvalue > ALPHA


def test_entropy_matches_monte_carlo(noise):
    # Paper Proposition "Entropy of K-mech" against -mean log f(V).
    v = noise.sample(40_000, rng=SEED + 4)
    lp = noise.logpdf(v)
    mc, se = -lp.mean(), lp.std(ddof=1) / math.sqrt(len(lp))
    tol = Z_MAX * se + (noise.log_volume().stderr if not noise.log_volume().exact else 0) * Z_MAX
    assert abs(noise.entropy() - mc) < tol + 1e-9


def test_concentration_set_has_probability_alpha(noise):
    v = noise.sample(20_000, rng=SEED + 5)
    for alpha in (0.1, 0.5, 0.9):
        s = noise.concentration_set(alpha)
        hits = int(np.count_nonzero(s.contains(v)))
        assert stats.binomtest(hits, len(v), alpha).pvalue > ALPHA


def test_depth_is_probability_integral_transform(noise):
    # D(V) = P(||V'|| > ||V||) is Uniform(0, 1) when V follows the law itself.
    v = noise.sample(20_000, rng=SEED + 6)
    d = noise.depth(v)
    assert noise.depth(np.zeros(noise.dim)) == 1.0
    assert stats.kstest(d, "uniform").pvalue > ALPHA


# -- lattice rows: exact pmfs, integers only ---------------------------------------------------------------
@pytest.mark.parametrize("case", INTEGER, ids=repr)
def test_pmf_matches_enumeration(case):
    # Chi-square of the sampled lattice points against the exact pmf, every point of the window
    # with an expected count >= 5 a cell and the rest (window and outside) pooled; failure rate ALPHA.
    law = _law(case)
    noise, _ = _integer_parts(law)
    if isinstance(noise, LatticeKNormNoise) and isinstance(case.eps, Fraction):
        assert case.eps * (1 - Fraction(1, 2**30)) <= noise.effective_rate <= case.eps
    n = 30_000
    k = _units(law, np.asarray(law.sample(n, rng=_seed(case) + 5)))
    assert k.shape == (n, case.dim)
    grid, p = enumerate_pmf(noise)
    R = int(np.abs(grid).max())
    inside = np.all(np.abs(k) <= R, axis=1)
    idx = np.ravel_multi_index(tuple((k[inside] + R).T), (2 * R + 1,) * case.dim)  # row-major over [-R, R]^d
    counts = np.append(np.bincount(idx, minlength=len(grid)), n - inside.sum())
    assert chi2_pvalue(counts, np.append(p, max(0.0, 1.0 - p.sum()))) > ALPHA


@pytest.mark.parametrize("case", INTEGER, ids=repr)
def test_only_integers_is_called(case, monkeypatch):
    # The samplers and their pilot runs call nothing but Generator.integers.
    monkeypatch.setattr(lattice, "_pilot_rng", lambda: integers_only(1))
    law = case.law()  # a fresh law: its pilot runs under the patch
    IntegersOnly.calls = 0
    law.sample(300, rng=integers_only(SEED))
    assert IntegersOnly.calls > 0
    assert law.expected_acceptance > 0


# -- the tests above can fail ------------------------------------------------------------------------------
def test_projection_test_sees_a_ten_percent_error_of_rate():
    # The chi-square of a projection, as in test_projection_goodness_of_fit, rejects draws of rate
    # 0.9 r against the pmf of rate r (K3, rate 3/2, 20000 draws).
    right = LatticeKNormNoise(k3_ball(), Fraction(3, 2), axis_scale=1.0)
    wrong = LatticeKNormNoise(k3_ball(), Fraction(27, 20), axis_scale=1.0)
    k = wrong.sample(20_000, rng=SEED)
    c = np.array([1, 2, -1])
    grid, p = enumerate_pmf(right)
    values, inverse = np.unique(grid @ c, return_inverse=True)
    pmf = np.bincount(inverse.ravel(), weights=p)
    counts = np.bincount(np.searchsorted(values, k @ c), minlength=len(values)).astype(float)
    assert chi2_pvalue(np.append(counts, 0), np.append(pmf, max(0.0, 1 - pmf.sum()))) < ALPHA


def test_coverage_test_sees_a_five_percent_narrower_half_width():
    law, alpha, n = KNormNoise(LpBall(3, 1), 0.7), 0.1, 20_000
    t = 0.95 * np.asarray(law.marginal_half_width(alpha))
    tail = (np.abs(law.sample(n, rng=SEED)) > t).mean(axis=0)
    assert np.all(np.abs(tail - alpha) > Z_MAX * math.sqrt(alpha * (1 - alpha) / n))
