"""Exact laws of the lattice samplers (l_inf tables, polytope rejection, blocks, histograms), by enumeration.

The harness is :mod:`tests.noise.enumeration` (see tests/noise/test_enumeration.py). Where a
whole release loop would make the tree too large, one proposal is enumerated and the loop
around it (rejected proposals are proposed afresh, accepted ones kept in order) is argued:
each such test says which.
"""

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from knorm.geometry import HistogramBall, LpBall, RejectionStats
from knorm.mechanisms.lattice import BlockLatticeNoise, HistogramLatticeNoise
from knorm.noise import discrete, linf
from knorm.noise.lattice import LatticeKNormNoise, RationalPolytope
from knorm.noise.linf import GeometricSumSampler, InversionTable, LinfLatentSampler, uniform_rows
from tests.noise.enumeration import check_law, enumerate_law, exp_neg, spot_check


def _series(term, tol=Decimal("1e-70")):
    """sum_{L >= 0} term(L) for a positive, eventually decreasing series, to 60 digits."""
    with localcontext() as ctx:
        ctx.prec = 60
        total, L, last = Decimal(0), 0, None
        while True:
            t = term(L)
            total += t
            if L > 10 and t < tol * total and (last is None or t <= last):
                return total
            last, L = t, L + 1


def _power(q, n):
    with localcontext() as ctx:
        ctx.prec = 60
        return q**n


# -- bounded uniforms ------------------------------------------------------------------------
@pytest.mark.parametrize("bound", [[3], [3, 2], [[3, 5]], [[6, 1], [2, 3]], [[1, 1]]])
def test_uniform_rows_exact(bound):
    """uniform_rows (Lemire on 32-bit halves, rejected words redrawn): exactly uniform, nothing pruned."""
    bound = np.array(bound, dtype=np.int64)
    d = 2
    law = enumerate_law(lambda rng: tuple(uniform_rows(bound, d, rng).ravel().tolist()), threshold=Fraction(0))
    full = np.broadcast_to(bound[:, None] if bound.ndim == 1 else bound, (len(bound), d))
    p = Fraction(1, math.prod(int(h) for h in full.ravel()))
    assert law.pruned == 0 and len(law.atoms) == p.denominator
    assert all(v == p for v in law.atoms.values())


# -- the radius tables -------------------------------------------------------------------------
def _weight(m, j, h):
    top = 1 << (j + 1)
    return math.prod(mi * (top * (h + 1) - 2) + 1 for mi in m)


@pytest.mark.parametrize(
    "m, j, beta", [((1, 1), 0, Fraction(2)), ((1, 1, 1), 0, Fraction(5, 2)), ((3, 1), 1, Fraction(3, 2))]
)
def test_inversion_table_exact(m, j, beta):
    """InversionTable: P(h) proportional to prod_i B_{h,i} q^h (its docstring), by classes of the
    top 62 bits between consecutive brackets lo_x, hi_x; W undecided by the table (the lazy path,
    about 2^-60) and W beyond it (tail below 2^-64) are pruned."""
    table = InversionTable(m, j, beta)
    law = spot_check(lambda rng: int(table.sample(1, rng)[0]), threshold=Fraction(0))
    q = exp_neg(beta)
    Z = _series(lambda h: _weight(m, j, h) * _power(q, h))
    check_law(law, lambda h: _weight(m, j, h) * _power(q, h) / Z, max_pruned=Fraction(1, 2**50))


def _latent_target(m, a):
    """P(L, k) = q^L 1{|k_i| <= m_i L} / Z, Z = sum_L prod_i (2 m_i L + 1) q^L (LinfLatentSampler Notes)."""
    q = exp_neg(a)
    Z = _series(lambda L: math.prod(2 * mi * L + 1 for mi in m) * _power(q, L))

    def target(x):
        L, k = x
        return _power(q, L) / Z if all(abs(ki) <= mi * L for ki, mi in zip(k, m)) else 0

    return target, Z


def test_linf_latent_coarse_exact():
    """LinfLatentSampler with j = 0 (no rejection): the joint law of (L, k) of one draw, exactly."""
    m, a = (1, 1), Fraction(2)
    sampler = LinfLatentSampler(m, a)
    assert sampler.j == 0

    def run(rng):
        L, k, _ = sampler.draw(1, rng)
        return int(L[0]), tuple(k[0].tolist())

    law = enumerate_law(run, threshold=Fraction(1, 10**7))
    target, _ = _latent_target(m, a)
    check_law(law, target, max_pruned=Fraction(1, 10**4))


def test_linf_latent_coarse_box_exact():
    """The same with multipliers m = (2, 1) (the polytope sampler's box proposal)."""
    m, a = (2, 1), Fraction(5, 2)
    sampler = LinfLatentSampler(m, a)
    assert sampler.j == 0

    def run(rng):
        L, k, _ = sampler.draw(1, rng)
        return int(L[0]), tuple(k[0].tolist())

    law = enumerate_law(run, threshold=Fraction(1, 10**7))
    check_law(law, _latent_target(m, a)[0], max_pruned=Fraction(1, 10**4))


@pytest.mark.parametrize(
    "a, d, threshold",
    [
        (Fraction(1, 8), 1, Fraction(1, 10**5)),
        (Fraction(3, 4), 1, Fraction(1, 10**5)),
        pytest.param(Fraction(1, 8), 1, Fraction(1, 10**6), marks=pytest.mark.slow),
        (Fraction(3, 4), 2, Fraction(1, 10**5)),
    ],
)
def test_linf_latent_fine_proposal_exact(monkeypatch, a, d, threshold):
    """LinfLatentSampler with j > 0: one proposal (H by the table, R, the Algorithm-1 test of
    exp(-a R) (the beta <= 1 branch for a = 1/8, bernoulli_exp for a = 3/4, beta = 3/2), the box coordinates).

    The table-size limit is lowered so that a coarse rate gets j > 0 with a small table
    (the code path is the one fine lattices take). Enumerated: the accepted proposals' law
    P(L, k, accepted) = 2^-j q^L / Z_H, Z_H = sum_h prod_i B_{h,i} exp(-a 2^j h), for every
    (L, k) (LinfLatentSampler Notes). Argued: draw() proposes rejected rows again, so its
    law is this one conditioned on acceptance, which is proportional to q^L 1{|k_i| <= L}.
    """
    monkeypatch.setattr(linf, "_RADIUS_TABLE", 64)
    m = (1,) * d
    sampler = LinfLatentSampler(m, a)
    j, beta = sampler.j, sampler.beta
    assert j > 0 and (beta <= 1) == (a == Fraction(1, 8))

    def run(rng):
        L, k, ok = sampler._proposals(1, rng)
        return (int(L[0]), tuple(k[0].tolist())) if ok[0] else None

    law = enumerate_law(run, threshold=threshold)
    q = exp_neg(a)
    ZH = _series(lambda h: _weight(m, j, h) * _power(exp_neg(beta), h))
    Zlat = _series(lambda L: (2 * L + 1) ** d * _power(q, L))
    with localcontext() as ctx:
        ctx.prec = 60
        accept = Zlat / ZH / (1 << j)  # sum over (L, k) of the target below

    def target(x):
        if x is None:  # the proposal is rejected
            return 1 - accept
        L, k = x
        return _power(q, L) / ZH / (1 << j) if all(abs(ki) <= L for ki in k) else 0

    check_law(law, target, max_pruned=Fraction(1, 5) if threshold > Fraction(1, 10**6) else Fraction(1, 20))
    assert accept > Decimal("0.3")


def test_geometric_sum_proposal_exact():
    """GeometricSumSampler: one proposal, L a sum of d + 1 = 2 exact geometrics (fast path, j = 0) and
    the box coordinates realising the acceptance (2L + 1) / (2 (L + 1)).

    Enumerated: P(L, k, accepted) = (1 - q)^2 q^L / 2 for |k| <= L (negative binomial
    (L + 1)(1 - q)^2 q^L times 1 / (2 (L + 1)) per box point; GeometricSumSampler docstring).
    """
    a = Fraction(2)
    sampler = GeometricSumSampler((1,), a)

    def run(rng):
        L, k, ok = sampler._proposals(1, rng)
        return (int(L[0]), int(k[0, 0])) if ok[0] else None

    law = enumerate_law(run, threshold=Fraction(1, 10**8))
    q = exp_neg(a)

    def target(x):
        if x is None:  # rejected: 1 - sum_L (2L + 1) (1 - q)^2 q^L / 2 = 1 - (1 + q) / 2
            with localcontext() as ctx:
                ctx.prec = 60
                return (1 - q) / 2
        L, k = x
        with localcontext() as ctx:
            ctx.prec = 60
            return (1 - q) ** 2 * q**L / 2 if abs(k) <= L else 0

    check_law(law, target, max_pruned=Fraction(1, 10**5))


# -- the polytope rejection sampler -------------------------------------------------------------
POLYTOPES = {
    # name: (N, D, rate); the first gets the cube proposal (c = 3), the second the box (m = (3, 1), c = 5)
    "cube": ([[4, 0], [0, 4], [3, 3], [3, -3]], 16, Fraction(8)),
    "box": ([[2, 8], [2, -8]], 16, Fraction(5)),
}


@pytest.mark.parametrize(
    "name, threshold",
    [
        ("box", Fraction(1, 10**5)),
        ("cube", Fraction(1, 10**5)),
        pytest.param("box", Fraction(1, 10**6), marks=pytest.mark.slow),
        pytest.param("cube", Fraction(1, 10**6), marks=pytest.mark.slow),
    ],
)
def test_polytope_proposal_exact(name, threshold):
    """LatticeKNormNoise on a small 2-D polytope: one outer proposal (the l_inf (or box) latent
    proposal, the tilted index i, the test n(k) <= c (L - shift) + i), exactly.

    Enumerated: P(k, accepted) = exp(-r ||k||_K') exp(-r0 shift) / ((1 - q0) Z) at every k, with
    Z = sum_L prod_i (2 m_i L + 1) q0^L (LatticeKNormNoise Notes: the accepted law is
    proportional to exp(-r ||k||_K')). ||k||_K' = max_i N_i k / D is computed here in Python
    ints. Argued: _draw keeps the accepted rows of independent proposals in order, so a
    release is this law conditioned on acceptance.
    """
    N, D, rate = POLYTOPES[name]
    noise = LatticeKNormNoise(RationalPolytope(N, D), rate)
    assert (noise._m is None) == (name == "cube") and noise._c >= 3
    r, r0, shift = noise.effective_rate, noise._r0, noise._shift
    m = noise._m or (1, 1)
    rows = [tuple(row) for row in N] + [tuple(-v for v in row) for row in N]

    def run(rng):
        k = noise._propose(1, rng, RejectionStats())
        return tuple(k[0].tolist()) if len(k) else None

    law = enumerate_law(run, threshold=threshold)
    q0 = exp_neg(r0)
    Z = _series(lambda L: math.prod(2 * mi * L + 1 for mi in m) * _power(q0, L))
    with localcontext() as ctx:
        ctx.prec = 60
        const = exp_neg(r0 * shift) / ((1 - q0) * Z)

    @functools.cache
    def density(gauge):
        return exp_neg(r * gauge)

    def gauge(k):
        return Fraction(max(sum(a * b for a, b in zip(row, k)) for row in rows), D)

    R = 60  # exp(-r ||k||) below 1e-40 beyond: the accepted mass, summed
    with localcontext() as ctx:
        ctx.prec = 60
        accepted = const * sum(density(gauge(k)) for k in _points(range(-R, R + 1), 2))

    def target(k):
        if k is None:  # the proposal is rejected
            return 1 - accepted
        with localcontext() as ctx:
            ctx.prec = 60
            return density(gauge(k)) * const

    check_law(
        law,
        target,
        max_pruned=Fraction(1, 10) if threshold > Fraction(1, 10**6) else Fraction(1, 50),
        tol=Decimal("1e-35"),
    )
    assert len(law.atoms) > 40


def test_polytope_classes_are_honest():
    N, D, rate = POLYTOPES["box"]
    noise = LatticeKNormNoise(RationalPolytope(N, D), rate)

    def run(rng):
        k = noise._propose(1, rng, RejectionStats())
        return tuple(k[0].tolist()) if len(k) else None

    spot_check(run, threshold=Fraction(1, 10**4))


# -- block and histogram laws ---------------------------------------------------------------------
def test_block_lattice_exact():
    """BlockLatticeNoise: an l1 block (1 coordinate, rate 1: the fast path with j = 0) and an l_inf
    block (2 coordinates, rate 3) give the product of their laws, on the right coordinates.

    Target: (1 - q1) / (1 + q1) q1^|k_0| times q3^||k_{1,2}||_inf / (1 + 8 q3 / (1 - q3)^2)
    (BlockLatticeNoise docstring; the l_inf normaliser counts 8 M points at sup-norm M).
    The whole sample() call is enumerated (the l_inf law has no rejection at j = 0).
    """
    l1 = LatticeKNormNoise(LpBall(1, p=1), Fraction(1))
    li = LatticeKNormNoise(LpBall(2, p=float("inf")), Fraction(3))
    noise = BlockLatticeNoise(3, [([1, 2], li), ([0], l1)])
    law = enumerate_law(lambda rng: tuple(noise.sample(rng=rng).tolist()), threshold=Fraction(1, 10**7))
    q1, q3 = exp_neg(1), exp_neg(3)

    def target(k):
        with localcontext() as ctx:
            ctx.prec = 60
            lap = (1 - q1) / (1 + q1) * q1 ** abs(k[0])
            return lap * q3 ** max(abs(k[1]), abs(k[2])) / (1 + 8 * q3 / (1 - q3) ** 2)

    check_law(law, target, max_pruned=Fraction(1, 10**3))


@pytest.mark.parametrize("stat_dim", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_histogram_lattice_exact(stat_dim, monkeypatch):
    """HistogramLatticeNoise: d discrete Laplaces conditioned on a zero sum, last coordinate dropped.

    Target: P(k) proportional to exp(-r gamma (||k||_1 + |sum k|) / 2) on Z^(d-1)
    (HistogramLatticeNoise Notes; Joseph & Yu 2023). sample() proposes batches of at least 16
    rows of d - 1 discrete Laplaces of rate rho = r gamma / 2 and keeps a row with probability
    exp(-rho |sum|). Here row 0 of the first batch is a real proposal with its real keep step
    (both enumerated: the fast path at rate 1, j = 0, and Bernoulli(exp(-|sum|))) and the other
    rows are rejected, so the first batch's output is row 0's law on acceptance; a second batch
    returns a marked row: a restart (P(k) = P_1(k) / (1 - P_restart)). Argued: the batch's
    rows are iid and the first accepted one is kept. Mutation check: a keep step of
    exp(-rho |sum| / 2) fails this test.
    """
    S = 2**40
    hist = HistogramLatticeNoise(HistogramBall(stat_dim), 1.0, Fraction(2))
    real_laplace, real_keep = discrete._discrete_laplace, hist._keep
    batches = {"n": 0}

    def one_live_row(num, den, n, gen):
        batches["n"] += 1
        out = np.zeros((n // hist.dim, hist.dim), dtype=np.int64)
        if batches["n"] == 1:
            out[0] = real_laplace(num, den, hist.dim, gen)
        else:
            out[0, 0] = S  # the restart marker
        return out.reshape(-1)

    def keep_row_0(sums, gen):
        keep = np.zeros(len(sums), dtype=bool)
        keep[0] = bool(real_keep(sums[:1], gen)[0]) if batches["n"] == 1 else True
        return keep

    monkeypatch.setattr(discrete, "_discrete_laplace", one_live_row)  # the module attribute the sampler reads
    hist._keep = keep_row_0

    def run(rng):
        batches["n"] = 0
        return tuple(hist.sample(rng=rng).tolist())

    law = enumerate_law(run, threshold=Fraction(1, 10**7) if stat_dim == 2 else Fraction(1, 10**6))
    restart_key = (S,) + (0,) * (stat_dim - 2)
    law.restart = law.atoms.pop(restart_key, Fraction(0))
    rho = hist.effective_rate / 2  # r gamma / 2 with gamma = 1
    q = exp_neg(rho)
    R = 40
    with localcontext() as ctx:
        ctx.prec = 60
        pw = [q**n for n in range(4 * R + 1)]
        grid = range(-R, R + 1)
        Z = sum(pw[sum(map(abs, k)) + abs(sum(k))] for k in _points(grid, stat_dim - 1))

    def target(k):
        with localcontext() as ctx:
            ctx.prec = 60
            return q ** (sum(map(abs, k)) + abs(sum(k))) / Z

    check_law(law, target, max_pruned=Fraction(1, 20), tol=Decimal("1e-30"))


def _points(grid, dim):
    import itertools

    return itertools.product(grid, repeat=dim)
