"""Exact discrete primitives: Bernoulli(exp(-x)), geometric, discrete Laplace, bounded uniforms.

Statistical tests use fixed seeds; each fails with probability ALPHA (1e-3) for a
random seed under a correct sampler (tests/settings.py).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from knorm.noise import discrete, dyadic
from knorm.noise.discrete import bernoulli_exp, discrete_laplace, geometric
from tests.settings import ALPHA, SEED

FLOAT_METHODS = sorted(
    name
    for name in dir(np.random.Generator)
    if not name.startswith("_") and callable(getattr(np.random.Generator, name)) and name != "integers"
)


class IntegersOnly(np.random.Generator):
    """A Generator on which every method but ``integers`` raises (no float can enter a decision)."""

    calls = 0

    def integers(self, *args, **kwargs):
        IntegersOnly.calls += 1
        return super().integers(*args, **kwargs)


def _forbidden(name):
    def method(self, *args, **kwargs):
        raise AssertionError(f"Generator.{name} was called; only integers() may be")

    return method


for _name in FLOAT_METHODS:
    setattr(IntegersOnly, _name, _forbidden(_name))


def integers_only(seed):
    return IntegersOnly(np.random.PCG64(seed))


def chi2_pvalue(counts, probs):
    """Chi-square goodness of fit, pooling cells with expected count < 5 into the last one."""
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(probs, dtype=float) * counts.sum()
    keep = expected >= 5
    c = np.append(counts[keep], counts[~keep].sum())
    e = np.append(expected[keep], expected[~keep].sum())
    if e[-1] < 5:  # fold a small pooled cell into the smallest kept one
        i = int(np.argmin(e[:-1]))
        c[i] += c[-1]
        e[i] += e[-1]
        c, e = c[:-1], e[:-1]
    return stats.chisquare(c, e).pvalue


def geometric_pmf_cells(rate, n_cells):
    """P(G = 0..n_cells-1) and the tail P(G >= n_cells) for P(G = g) = (1 - q) q^g."""
    q = math.exp(-rate)
    p = (1 - q) * q ** np.arange(n_cells)
    return np.append(p, q**n_cells)


# -- Bernoulli(exp(-x)) -----------------------------------------------------------------
@pytest.mark.parametrize(
    "num, den",
    [
        (0, 7),  # exp(0) = 1
        (1, 7),
        (1, 2),
        (1, 1),  # exp(-1): integer part only
        (3, 2),
        (7, 3),
        (5, 1),
        (2**40 + 3, 2**41),  # one round per uniform (no batching)
        (2**62 + 11, 2**62 + 13),  # b j overflows from round 2 on: split Bernoullis
    ],
)
def test_bernoulli_exp_frequency(num, den):
    # Binomial test of the exact probability exp(-num/den); failure rate ALPHA.
    n = 40_000
    draws = bernoulli_exp(num, np.full(n, den), rng=SEED + num % 1000)
    p = math.exp(-Fraction(num, den))
    hits = int(draws.sum())
    if p == 1.0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > ALPHA


def test_bernoulli_exp_broadcasts_and_mixes_rates():
    num = np.array([[0], [1], [3]])
    den = np.array([2, 5])
    assert bernoulli_exp(num, den, rng=0).shape == (3, 2)
    # Many different rationals in one call, checked against the sum of their probabilities.
    rng = np.random.default_rng(SEED)
    den = rng.integers(1, 50, size=60_000)
    num = rng.integers(0, 120, size=60_000)
    hits = bernoulli_exp(num, den, rng=SEED + 1)
    p = np.exp(-num / den)
    z = (hits.sum() - p.sum()) / math.sqrt((p * (1 - p)).sum())
    assert abs(z) < stats.norm.isf(ALPHA / 2)


def test_algorithm1_continuation_rounds():
    # Batch only 1 round (cap) so that the continuation loop runs often: gamma = 9/10,
    # P(K > 1) = 0.9. Binomial test, failure rate ALPHA.
    rng = np.random.default_rng(SEED + 5)
    n = 40_000
    a = np.full(n, 9, dtype=np.int64)
    out = discrete._bernoulli_exp_frac(a, 10, rng, cap=1)
    assert stats.binomtest(int(out.sum()), n, math.exp(-0.9)).pvalue > ALPHA


def test_bernoulli_exp1_deep_rounds_parity():
    # exp(-1) via 20 rounds per uniform; with the batch capped at 3 rounds the rare
    # continuation (K > 3, probability 1/6) is exercised. Failure rate ALPHA.
    rng = np.random.default_rng(SEED + 6)
    n = 60_000
    out = discrete._bernoulli_exp1(n, rng, rounds=3)
    assert stats.binomtest(int(out.sum()), n, math.exp(-1)).pvalue > ALPHA


# -- bounded uniforms ----------------------------------------------------------------
@pytest.mark.parametrize("high", [1, 3, 7, 2**31 + 1, 2**32, 2**32 + 1, 2**40 + 7])
def test_uniform_below_is_uniform(high):
    # 2^31 + 1 rejects about half of the 32-bit words (Lemire's slow path); 2^32 + 1
    # uses numpy. Chi-square over 32 cells of exactly computed sizes; failure rate ALPHA.
    n = 64_000
    u = discrete._uniform_below(np.full(n, high, dtype=np.int64), np.random.default_rng(SEED + high % 997))
    assert u.min() >= 0 and u.max() < high
    cells = min(32, high)
    edges = [(c * high) // cells for c in range(cells + 1)]
    counts = np.histogram(u, bins=np.array(edges) - 0.5)[0] if high > 1 else np.array([n])
    sizes = np.diff(edges) / high
    if high > 1:
        assert chi2_pvalue(counts, sizes) > ALPHA


def test_uniform_below_rejects_the_biased_words():
    # h = 3 2^30: without Lemire's rejection, floor(3 x / 4) maps two 32-bit words to
    # every value divisible by 3 and one to the others, so residues mod 3 would be
    # (1/2, 1/4, 1/4) instead of uniform. Chi-square, failure rate ALPHA.
    h = 3 * 2**30
    u = discrete._uniform_below(np.full(60_000, h, dtype=np.int64), np.random.default_rng(SEED))
    assert chi2_pvalue(np.bincount(u % 3, minlength=3), [1 / 3] * 3) > ALPHA


def test_uniform_below_mixed_bounds():
    rng = np.random.default_rng(SEED)
    high = rng.integers(1, 12, size=(50_000, 3))
    u = discrete._uniform_below(high, np.random.default_rng(SEED + 1))
    assert u.shape == high.shape and np.all((u >= 0) & (u < high))
    # u / high is uniform on its support: P(u = high - 1) = 1 / high on average.
    p = 1.0 / high
    z = ((u == high - 1).sum() - p.sum()) / math.sqrt((p * (1 - p)).sum())
    assert abs(z) < stats.norm.isf(ALPHA / 2)


def test_floor_affine_matches_big_integers():
    rng = np.random.default_rng(SEED)
    for s in (3, 2**40 + 1, 2**62 - 57):
        a = s - 1 - int(rng.integers(0, min(s, 2**62) - 1))
        r = rng.integers(0, s, 500)
        v = rng.integers(0, 2000, 500)
        got = discrete._floor_affine(r, a, v, s)
        assert got.tolist() == [(int(ri) + a * int(vi)) // s for ri, vi in zip(r, v)]


# -- geometric and discrete Laplace ----------------------------------------------------
GEOMETRIC_RATES = [
    (1, 3),
    (3, 7),
    (2, 1),  # t = 1: U = 0
    (5, 2),
    (7, 64),  # dyadic (fast path)
    (1, 2**20),
    (2**61 + 1, 2**62 - 1),  # large s: the overflow-safe floor
    (3, 2**33),  # U on 2^33 values: one round per uniform
]


@pytest.mark.parametrize("s, t", GEOMETRIC_RATES)
def test_geometric_pmf(s, t):
    # Chi-square against P(G = g) = (1 - q) q^g on cells cut at exact quantiles of the
    # law (about 40 cells and a tail); failure rate ALPHA.
    n = 50_000
    rate = s / t
    g = geometric(s, t, n, rng=SEED + s % 1000 + t % 1000)
    assert g.dtype == np.int64 and g.min() >= 0
    # Cells [g_i, g_{i+1}) with P(G >= g) = q^g.
    q = math.exp(-rate)
    mean = q / (1 - q)
    edges = np.unique(np.floor(np.linspace(0, 6 * (mean + 1), 41)).astype(np.int64))
    counts = [np.count_nonzero((g >= lo) & (g < hi)) for lo, hi in zip(edges[:-1], edges[1:])]
    counts.append(np.count_nonzero(g >= edges[-1]))
    probs = [q ** float(lo) - q ** float(hi) for lo, hi in zip(edges[:-1], edges[1:])]
    probs.append(q ** float(edges[-1]))
    assert chi2_pvalue(counts, probs) > ALPHA


@pytest.mark.parametrize("s, t", [(1, 2), (3, 10), (7, 3), (5, 32), (1, 1)])
def test_discrete_laplace_pmf(s, t):
    # Chi-square against P(y) = (1 - q) / (1 + q) q^|y| on y in [-40, 40] and a pooled
    # tail; failure rate ALPHA.
    n = 60_000
    y = discrete_laplace(s, t, n, rng=SEED + 31 * s + t)
    q = math.exp(-s / t)
    support = np.arange(-40, 41)
    p = (1 - q) / (1 + q) * q ** np.abs(support)
    counts = [np.count_nonzero(y == v) for v in support] + [np.count_nonzero(np.abs(y) > 40)]
    assert chi2_pvalue(counts, np.append(p, 1 - p.sum())) > ALPHA
    # Symmetry: the sign is a fair coin given |y| > 0. Binomial test, failure rate ALPHA.
    nz = y[y != 0]
    assert stats.binomtest(int((nz > 0).sum()), len(nz), 0.5).pvalue > ALPHA


def test_scalar_and_shape():
    assert isinstance(geometric(1, 2, rng=0), int)
    assert isinstance(discrete_laplace(1, 2, rng=0), int)
    assert geometric(1, 2, (3, 4), rng=0).shape == (3, 4)
    assert discrete_laplace(1, 2, 0, rng=0).shape == (0,)


def test_seeds_reproduce():
    a = discrete_laplace(3, 100, 50, rng=7)
    b = discrete_laplace(3, 100, 50, rng=np.random.default_rng(7))
    assert np.array_equal(a, b)


def test_only_integers_is_called():
    # Every primitive, on every path (batched, unbatched, split, dyadic, t = 1).
    gen = integers_only(SEED)
    IntegersOnly.calls = 0
    bernoulli_exp([0, 1, 5, 2**62 + 11], [3, 2, 1, 2**62 + 13], rng=gen)
    for s, t in GEOMETRIC_RATES:
        geometric(s, t, 200, rng=gen)
        discrete_laplace(s, t, 200, rng=gen)
    discrete._uniform_below(np.array([3, 2**31 + 1, 2**40]), gen)
    assert IntegersOnly.calls > 0


def test_integers_only_wrapper_catches_floats():
    gen = integers_only(0)
    with pytest.raises(AssertionError, match="random"):
        gen.random()
    with pytest.raises(AssertionError, match="standard_exponential"):
        gen.standard_exponential(3)


# -- bad input -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: bernoulli_exp(-1, 2), ValueError, r"'num' parameter of bernoulli_exp .* Got -1"),
        (lambda: bernoulli_exp(1, 0), ValueError, r"'den' parameter of bernoulli_exp .* Got 0"),
        (lambda: bernoulli_exp(1.5, 2), TypeError, r"'num' parameter of bernoulli_exp must be an int"),
        (lambda: bernoulli_exp(2**63, 2), ValueError, r"'num' parameter of bernoulli_exp"),
        (lambda: bernoulli_exp(True, 2), TypeError, r"'num' parameter"),
        (lambda: geometric(0, 2), ValueError, r"'s' parameter of geometric must be an int in the range \[1, "),
        (lambda: geometric(1, 2**62 + 1), ValueError, r"'t' parameter of geometric"),
        (lambda: geometric(1, 2.0), TypeError, r"'t' parameter of geometric must be an int"),
        (lambda: geometric(1, 2**47), ValueError, r"rate s/t of geometric must be at least 2\^-46"),
        (lambda: discrete_laplace(1, 2, -1), ValueError, r"'size' parameter of discrete_laplace"),
        (lambda: discrete_laplace(1, 2, rng="x"), TypeError, r"'rng' parameter of discrete_laplace"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# -- the dyadic fast path ------------------------------------------------------------------
@pytest.mark.parametrize(
    "x", [Fraction(1, 3), Fraction(17, 1024), Fraction(9, 2), Fraction(1000, 7), Fraction(5, 2**40)]
)
def test_exp_neg_floor_matches_decimal(x):
    # floor(2^bits exp(-x)) against 120-digit Decimal arithmetic (independent of the series).
    from decimal import ROUND_FLOOR, Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 120
        for bits in (8, 40, 104, 200):
            e = (-Decimal(x.numerator) / Decimal(x.denominator)).exp()
            assert discrete._exp_neg_floor(x, bits) == int((Decimal(2) ** bits * e).to_integral_value(ROUND_FLOOR))
    lo, hi = discrete._exp_neg_interval(x, 80)
    assert lo <= discrete._exp_neg_floor(x, 80) <= hi


def test_inversion_counts_match_brute_force():
    table = discrete._GeometricTable(Fraction(3, 128))
    words = np.random.default_rng(SEED).integers(0, 2**64, size=4000, dtype=np.uint64)
    # Edge values of W: 0, the largest, and one above / below every threshold.
    edges = [0, 2**40 - 1] + [t + e for t in table._T_int[1:] for e in (-1, 1)]
    words = np.concatenate([words, np.array(edges, dtype=np.uint64) << np.uint64(24)])
    w = [int(v) >> 24 for v in words]
    brute = [sum(1 for q in range(1, table.qstar + 1) if wi < table._T_int[q]) for wi in w]
    assert table.count(words, np.random.default_rng(0)).tolist() == brute


@pytest.mark.parametrize("beta, w_bits", [(Fraction(1, 3), 8), (Fraction(1, 50), 6)])
def test_inversion_ties_and_restarts_are_exact(beta, w_bits):
    # With 8- or 6-bit uniforms, ties W = T_q (resolved with more bits; with beta = 1/50
    # several T_q share a value) and restarts beyond q* are frequent; the law must still
    # be geometric. Chi-square on cells cut at deciles and a tail; failure rate ALPHA.
    table = discrete._GeometricTable(beta, w_bits=w_bits, guide_bits=3, tail_bits=3)
    T = table._T_int[1:]
    if beta == Fraction(1, 50):
        assert len(set(T)) < len(T)  # equal thresholds
    rng = np.random.default_rng(SEED)
    w = rng.integers(0, 2**64, size=4000, dtype=np.uint64) >> np.uint64(64 - w_bits)
    assert np.isin(w, np.array(T, dtype=np.uint64)).sum() > 50  # the slow path is exercised
    q = table.sample(30_000, rng)
    b = float(beta)
    edges = np.unique(np.floor(np.linspace(0, 5 / b, 31)).astype(np.int64))
    counts = [np.count_nonzero((q >= lo) & (q < hi)) for lo, hi in zip(edges[:-1], edges[1:])]
    probs = [math.exp(-b * lo) - math.exp(-b * hi) for lo, hi in zip(edges[:-1], edges[1:])]
    counts.append(np.count_nonzero(q >= edges[-1]))
    probs.append(math.exp(-b * edges[-1]))
    assert chi2_pvalue(counts, probs) > ALPHA


def test_fast_path_uniform_part_with_strong_tilt(monkeypatch):
    # With one bit of A in the word (block rate up to 1/2), most draws go through the
    # low-bit path, Algorithm 1's later rounds and redraws of R. G mod 2^j (= R) and
    # G div 2^j (= Q) are checked separately against their exact laws; failure rate
    # 2 ALPHA.
    monkeypatch.setattr(dyadic, "_BLOCK_RATE_BITS", 1)  # the fast path lives in knorm.noise.dyadic
    monkeypatch.setattr(dyadic, "_MAX_BLOCK_BITS", discrete._W_SHIFT - 2)
    discrete._geometric_table.cache_clear()
    s, tau = 3, 12
    j = discrete._block_bits(s, tau)
    assert j >= 5 and s << j > 1 << (tau - 2)  # a block rate above 1/4
    g = discrete._geometric(s, 1 << tau, 60_000, np.random.default_rng(SEED))
    rho = s / 2**tau
    r, q = g % (1 << j), g >> j
    edges = np.linspace(0, 1 << j, 17).astype(np.int64)
    pr = np.exp(-rho * np.arange(1 << j))
    probs = np.add.reduceat(pr / pr.sum(), edges[:-1])
    assert chi2_pvalue(np.histogram(r, bins=edges)[0], probs) > ALPHA
    assert chi2_pvalue(np.bincount(np.minimum(q, 12), minlength=13), geometric_pmf_cells(rho * 2**j, 12)) > ALPHA
    discrete._geometric_table.cache_clear()


def test_tilted_block_law():
    # R on {0, ..., 15} with P(R = r) proportional to exp(-r / 16): Algorithm 1 with gamma up to 1.
    r = discrete._tilted_block(1, 4, 4, 40_000, np.random.default_rng(SEED))
    p = np.exp(-np.arange(16) / 16)
    assert chi2_pvalue(np.bincount(r, minlength=16), p / p.sum()) > ALPHA
