"""The l_inf lattice law's tabulated radius laws: exact thresholds, exact laws, the lazy path.

Statistical tests use fixed seeds; each fails with probability ALPHA (1e-3) for a
random seed under a correct sampler.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from knorm.geometry import LpBall
from knorm.noise import linf
from knorm.noise.lattice import LatticeKNormNoise
from knorm.noise.linf import InversionTable, LinfLatentSampler
from tests.noise.test_discrete import chi2_pvalue, integers_only
from tests.settings import ALPHA, SEED


def radius_pmf(d, j, beta, n):
    """P(h) proportional to (2^(j+1) (h + 1) - 1)^d exp(-beta h), h < n, in binary64 (log space)."""
    h = np.arange(n)
    logw = d * np.log(2.0 ** (j + 1) * (h + 1) - 1) - float(beta) * h
    w = np.exp(logw - logw.max())
    return w / w.sum()


TABLES = [(3, 0, Fraction(1, 4)), (2, 1, Fraction(1, 2)), (5, 0, Fraction(1, 8)), (1, 3, Fraction(3, 2))]


@pytest.mark.parametrize("d, j, beta", TABLES)
def test_thresholds_bracket_the_cdf(d, j, beta):
    # Independent check in binary64: lo_x / 2^bits <= F(x) <= hi_x / 2^bits (to 1e-12).
    table = InversionTable((1,) * d, j, beta)
    F = np.cumsum(radius_pmf(d, j, beta, 50 * len(table.lo)))[: len(table.lo)]
    scale = 2.0**table.bits
    assert np.all(table.lo / scale <= F + 1e-12)
    assert np.all(table.hi / scale >= F - 1e-12)
    assert np.all(np.diff(table.hi) >= 0) and np.all(table.hi - table.lo <= 4)
    assert 1 - F[-1] < 2.0**-39  # the table covers all but a negligible tail (2^-40 by its bound)


@pytest.mark.parametrize("bits", [62, 6, 3])
@pytest.mark.parametrize("d, j, beta", TABLES)
def test_inversion_law(d, j, beta, bits):
    # Chi-square against the exact pmf; bits = 6 and 3 send most draws through the lazy
    # exact path (finer brackets, extra bits, the tail beyond the table).
    table = InversionTable((1,) * d, j, beta, bits=bits)
    x = table.sample(20_000, integers_only(SEED + bits))
    p = radius_pmf(d, j, beta, 50 * len(table.lo) + 100)
    counts = np.bincount(x, minlength=len(p))[: len(p)]
    assert counts.sum() == len(x)
    assert chi2_pvalue(counts, p) > ALPHA


def test_lazy_path_runs_and_agrees(monkeypatch):
    # With 3 bits almost every draw is undecided by the table; the lazy path is exercised.
    calls = []
    table = InversionTable((1, 1), 0, Fraction(1, 2), bits=3)
    lazy = table._invert_lazy
    monkeypatch.setattr(table, "_invert_lazy", lambda w, rng: calls.append(w) or lazy(w, rng))
    table.sample(500, integers_only(SEED))
    assert len(calls) > 100
    assert max(calls) == 7  # the top cell: beyond the table


def k_pmf(m, a, radius):
    """Exact law (binary64) of k on the box |k_i| <= m_i radius: P(k) proportional to q^Lmin(k).

    Lmin(k) = max_i ceil(|k_i| / m_i); the normaliser sums q^l over the shells Lmin = l.
    """
    m = np.asarray(m)
    axes = [np.arange(-mi * radius, mi * radius + 1) for mi in m]
    pts = np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(m), -1).T
    lmin = (-(-np.abs(pts) // m)).max(axis=1)
    q = math.exp(-float(a))
    ell = np.arange(60 * radius, dtype=float)
    count = np.prod(2 * np.outer(ell, m) + 1, axis=1) - np.prod(np.maximum(2 * np.outer(ell - 1, m) + 1, 0), axis=1)
    count[0] = 1
    return pts, q**lmin / np.sum(count * q**ell)


@pytest.mark.parametrize("m", [(1, 1), (1, 3)])
@pytest.mark.parametrize("table_cap", [None, 16, 64, "geometric sums"])
def test_latent_sampler_law_of_k(monkeypatch, table_cap, m):
    # The marginal of k is P(k) proportional to q^max_i ceil(|k_i| / m_i) (for m = 1, exp(-a ||k||_inf)),
    # with j = 0 (no rejection), with a small table cap forcing j > 0 (digit split, tilt and
    # box rejections), and with the large-d sampler (sums of geometrics, no table).
    d, a = 2, Fraction(1, 2)
    if table_cap == "geometric sums":
        monkeypatch.setattr(linf, "_MAX_TABLE_DIM", 1)
    elif table_cap is not None:
        monkeypatch.setattr(linf, "_RADIUS_TABLE", table_cap)
    linf.linf_sampler.cache_clear()
    try:
        sampler = linf.linf_sampler(d, a.numerator, a.denominator, m)
        assert isinstance(sampler, linf.GeometricSumSampler) == (table_cap == "geometric sums")
        assert (sampler.j > 0) == isinstance(table_cap, int)
        L, k = linf.linf_latent(d, a.numerator, a.denominator, 40_000, integers_only(SEED), m=m)
    finally:
        linf.linf_sampler.cache_clear()
    mv = np.array(m)
    assert np.all((np.abs(k) <= L[:, None] * mv).all(axis=1))
    # The latent radius: P(L) proportional to prod_i (2 m_i L + 1) q^L.
    ell = np.arange(400)
    pl = np.prod(2 * np.outer(ell, mv) + 1.0, axis=1) * np.exp(-float(a) * ell)
    assert chi2_pvalue(np.bincount(L, minlength=400)[:400], pl / pl.sum()) > ALPHA
    radius = 14
    pts, p = k_pmf(m, a, radius)
    index = {tuple(v): i for i, v in enumerate(pts)}
    inside = (np.abs(k) <= radius * mv).all(axis=1)
    counts = np.bincount([index[tuple(v)] for v in k[inside]], minlength=len(pts))
    assert chi2_pvalue(np.append(counts, (~inside).sum()), np.append(p, 1 - p.sum())) > ALPHA


def test_acceptance_of_split_sampler_matches_series(monkeypatch):
    # Acceptance = sum_L (2L + 1)^d q^L / (2^j sum_h B_h^d q^(2^j h)), against the pilot.
    monkeypatch.setattr(linf, "_RADIUS_TABLE", 64)
    d, a = 3, Fraction(1, 4)
    linf.linf_sampler.cache_clear()
    noise = LatticeKNormNoise(LpBall(d, np.inf), a)
    try:
        j = linf.linf_sampler(d, noise._unit.numerator, noise._unit.denominator).j
        assert j > 0
        q, L, h = math.exp(-float(a)), np.arange(4000.0), np.arange(4000.0)
        B = 2.0 ** (j + 1) * (h + 1) - 1
        exact = np.sum((2 * L + 1) ** d * q**L) / (2**j * np.sum(B**d * q ** (2**j * h)))
        se = math.sqrt(exact * (1 - exact) / 4096)
        assert abs(noise.expected_acceptance - exact) < 5 * se
    finally:
        linf.linf_sampler.cache_clear()


def test_integers_only_and_reproducible():
    sampler = LinfLatentSampler((1,) * 4, Fraction(1, 3000))
    assert sampler.j > 0
    a = sampler.draw(3000, integers_only(SEED))
    b = sampler.draw(3000, integers_only(SEED))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2] > 3000


def test_uniform_rows_is_uniform_including_redraws():
    # Bounds near 2^32 make Lemire's rejection frequent; each row must stay uniform.
    bound = np.array([3, 2**31 + 3, 2**32 - 5, 7], dtype=np.int64)
    w = linf.uniform_rows(np.repeat(bound, 5000), 4, integers_only(SEED)).reshape(4, 5000, 4)
    for i, b in enumerate(bound):
        assert w[i].min() >= 0 and w[i].max() < b
        bins = min(int(b), 8)  # small bounds: each value; large ones: 8 equal bins (to 2^-28)
        cells = w[i].ravel() * bins // b
        assert chi2_pvalue(np.bincount(cells, minlength=bins), np.full(bins, 1 / bins)) > ALPHA


def test_table_too_large_falls_back_to_geometric_sums(monkeypatch):
    # If the length estimate is short, the sampler is the table-free one, not an error.
    def too_large(*args):
        raise linf.TableTooLarge("needs more entries")

    monkeypatch.setattr(linf, "_table", too_large)
    linf.linf_sampler.cache_clear()
    try:
        assert isinstance(linf.linf_sampler(2, 1, 2), linf.GeometricSumSampler)
        L, k = linf.linf_latent(2, 1, 2, 100, integers_only(SEED))
        assert k.shape == (100, 2) and np.all(np.abs(k).max(axis=1) <= L)
    finally:
        linf.linf_sampler.cache_clear()
