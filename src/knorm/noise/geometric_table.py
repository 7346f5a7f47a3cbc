"""Exact inversion of the geometric law: exact digits of exp(-x) and the threshold table.

:func:`_exp_neg_interval` brackets 2^prec exp(-x) by integers and :func:`_exp_neg_floor`
gives floor(2^bits exp(-x)) exactly (exp(-x) is irrational for rational x > 0, so the
floor is always decided). :class:`_GeometricTable` compares the first bits of a uniform
with those exact thresholds, with a guide table (Chen & Asau 1974), to draw a geometric
Q exactly; it is the Q of the dyadic fast path (:mod:`knorm.noise.dyadic`).

References
----------
Chen & Asau (1974), "On generating random variates from an empirical
distribution", AIIE Transactions 6(2) (guide tables for inversion).
Lindemann (1882), "Ueber die Zahl pi", Math. Annalen 20 (exp(x) is
transcendental for algebraic x != 0).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np


def _exp_neg_interval(x, prec):
    """Integers lo <= 2^prec exp(-x) <= hi for a rational x >= 0 (exact arithmetic).

    exp(-x) = exp(-y)^m with y = x / m <= 1, m = max(1, ceil(x)). The Taylor terms
    y^k / k! of exp(-y) decrease from k = 1 on, so consecutive partial sums of the
    alternating series bracket exp(-y); the m-th power is taken in fixed point
    with 16 + 2 log2(m) guard bits, rounding lo down and hi up. For x >= prec,
    2^prec exp(-x) < 1 and [0, 1] is returned at once (the power loop is O(x): at the rate
    5 x 10^8 of a histogram at epsilon = 10^9 it took minutes).
    """
    if x >= prec:  # 2^prec exp(-x) <= (2 / e)^prec < 1: the bracket [0, 1], without ceil(x) powers
        return 0, 1  # (a count at epsilon = 1e9, rate 1e9 per unit, took 346 s of them; issue 21)
    m = max(1, math.ceil(x))
    y = Fraction(x) / m
    p = prec + 16 + 2 * m.bit_length()
    total, term, k = Fraction(1), Fraction(1), 0
    tiny = Fraction(1, 1 << (p + 2))
    while True:
        k += 1
        term = term * y / k
        new = total - term if k % 2 else total + term
        if term < tiny:
            break
        total = new
    lo_f, hi_f = min(total, new), max(total, new)
    lo = lo_f.numerator * (1 << p) // lo_f.denominator
    hi = -(-hi_f.numerator * (1 << p) // hi_f.denominator)
    lo_m, hi_m = lo, hi
    for _ in range(m - 1):
        lo_m = (lo_m * lo) >> p
        hi_m = -((-hi_m * hi) >> p)
    return lo_m >> (p - prec), -((-hi_m) >> (p - prec))


@functools.lru_cache(maxsize=4096)
def _exp_neg_floor(x, bits):
    """floor(2^bits exp(-x)) exactly for a rational x >= 0 (cached: ties reuse their digits).

    For x > 0, exp(-x) is irrational (Lindemann 1882), so 2^bits exp(-x) is not an
    integer and a fine enough bracket always decides its floor.
    """
    if x == 0:
        return 1 << bits
    prec = bits + 32
    while True:
        lo, hi = _exp_neg_interval(x, prec)
        a, b = lo >> (prec - bits), hi >> (prec - bits)
        if a == b:
            return a
        prec *= 2


# Uniform bits compared with the inversion thresholds: the top 40 of a word (the other
# 24 feed the uniform part R, the first round of its acceptance test and a sign).
_W_BITS = 40
_W_SHIFT = 64 - _W_BITS
# Top bits of that uniform indexing the guide table (2^14 cells of width 2^26).
_GUIDE_BITS = 14
# The inversion table stops at q* with exp(-beta q*) < 2^-8; beyond, memorylessness restarts it.
_TAIL_BITS = 8
_U64_63 = np.uint64(63)


class _GeometricTable:
    """Exact inversion sampler of Q with P(Q >= q) = exp(-beta q) on q >= 0, for a rational beta > 0.

    With U uniform on [0, 1), Q >= q iff U < exp(-beta q). The first ``w_bits`` bits
    W of U are compared with the exact integers T_q = floor(2^w_bits exp(-beta q)):
    W < T_q implies U < exp(-beta q) and W > T_q the converse; only W = T_q (a tie)
    needs more bits, drawn 64 at a time and compared with the next digits of
    exp(-beta q) (computed exactly, on demand). The table stops at q* where
    T_q* < 2^(w_bits - 8): if U < exp(-beta q*), Q = q* + Q' with a fresh Q'
    (memorylessness of the geometric law). A guide table on the top ``guide_bits``
    bits of W lists the thresholds above each cell, so a draw costs one lookup and
    a fixed number of comparisons (Chen & Asau 1974).
    """

    def __init__(self, beta, w_bits=_W_BITS, guide_bits=_GUIDE_BITS, tail_bits=_TAIL_BITS):
        self.beta = Fraction(beta)
        self.w_bits, self.guide_bits = w_bits, guide_bits
        prec = w_bits + 40
        lo1, hi1 = _exp_neg_interval(self.beta, prec)
        lo, hi = 1 << prec, 1 << prec
        T: list = []
        while True:
            lo, hi = (lo * lo1) >> prec, -((-hi * hi1) >> prec)  # bracket of 2^prec exp(-beta q)
            q = len(T) + 1
            a, b = lo >> (prec - w_bits), hi >> (prec - w_bits)
            T.append(a if a == b else _exp_neg_floor(self.beta * q, w_bits))
            if T[-1] < 1 << (w_bits - tail_bits):
                break
        self.qstar = len(T)
        shift = w_bits - guide_bits
        desc = np.array(T, dtype=np.uint64)[::-1]  # ascending
        tops = np.arange(1, (1 << guide_bits) + 1, dtype=np.uint64) << np.uint64(shift)
        # base[c] = number of thresholds >= the top of cell c (all certainly above W there).
        base = len(T) - np.searchsorted(desc, tops, side="left")
        inside = np.searchsorted(desc, tops, side="left") - np.searchsorted(desc, tops - (1 << shift), side="left")
        self.n_inside = max(1, int(inside.max()))
        padded = np.array([0, *T] + [0] * self.n_inside, dtype=np.uint64)  # T[q], zero-padded
        self.base = base.astype(np.uint64)
        # nxt[i - 1][c] = T[base[c] + i]: the thresholds that may fall inside cell c.
        self.nxt = [padded[base + i] for i in range(1, self.n_inside + 1)]
        self._T_int = [0, *T]
        self.shift = np.uint64(shift)
        self.wshift = np.uint64(64 - w_bits)

    def count(self, words, rng):
        """min(Q, q*) for each uniform 64-bit word (its top ``w_bits`` bits are W), as uint64.

        Ties are resolved here (extra bits from ``rng``); a value q* means Q >= q*.
        """
        w = words >> self.wshift
        cell = (w >> self.shift).view(np.int64)
        q = self.base[cell]
        tie: Any = None
        for nxt in self.nxt:
            thr = nxt[cell]
            q += (w - thr) >> _U64_63  # 1 iff w < thr (both below 2^63)
            eq = w == thr
            tie = eq if tie is None else tie | eq
        if tie.any():  # probability about 2^-w_bits per draw
            for e in tie.nonzero()[0]:
                q[e] = self._resolve_tie(int(w[e]), int(q[e]), rng)
        return q

    def sample(self, n, rng):
        """n draws of Q (int64)."""
        q = self.count(rng.integers(0, 2**64, size=n, dtype=np.uint64), rng).view(np.int64)
        tail = (q >= self.qstar).nonzero()[0]
        if tail.size:  # memorylessness: Q = q* + a fresh Q
            q[tail] += self.sample(tail.size, rng)
        return q

    def _resolve_tie(self, w, count, rng):
        """Q for a draw whose first bits W equal thresholds T_q, from more bits of U drawn lazily.

        ``count`` is the vectorised count (thresholds strictly above W). With
        U = (W + V) / 2^w_bits and q_1 < ... < q_m the indices with T_q = W, the
        events U < exp(-beta q_i), i.e. V < frac(2^w_bits exp(-beta q_i)), are nested,
        so Q = q_1 - 1 + #{i : V < frac(...)}: V is compared with each fraction in
        turn, 64 bits at a time (the same bits for all), until they differ.
        """
        tied = [q for q in range(1, self.qstar + 1) if self._T_int[q] == w]
        if not tied:  # W matched the zero padding beyond q*, not a threshold
            return count
        chunks: list = []
        q = tied[0] - 1
        for qi in tied:
            x, k = self.beta * qi, 0
            while True:
                if k == len(chunks):
                    chunks.append(int(rng.integers(0, 2**64, dtype=np.uint64)))
                digit = _exp_neg_floor(x, self.w_bits + 64 * (k + 1)) & (2**64 - 1)
                if chunks[k] != digit:
                    break
                k += 1
            if chunks[k] > digit:  # U > exp(-beta qi)
                return q
            q = qi
        return q


@functools.lru_cache(maxsize=64)
def _geometric_table(num, den):
    return _GeometricTable(Fraction(num, den))
