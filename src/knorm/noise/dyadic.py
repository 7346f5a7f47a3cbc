"""The exact fast path of geometric and discrete Laplace draws at dyadic rates s / 2^tau.

G = R + 2^j Q with a block 2^j such that s 2^j <= 2^(tau - 5): R uniform on
{0, ..., 2^j - 1} kept by CKS Algorithm 1 (:mod:`knorm.noise.bernoulli`), Q geometric
by exact inversion (:mod:`knorm.noise.geometric_table`), one uniform 64-bit word per
draw (see the :mod:`knorm.noise.discrete` docstring, and :func:`_fast_dyadic`).

References
----------
Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential
Privacy", NeurIPS, arXiv:2004.00010, Algorithms 1 and 2.
"""

from __future__ import annotations

import functools

import numpy as np

from knorm.noise.bernoulli import _bernoulli_exp_frac, _continue_alg1
from knorm.noise.geometric_table import _W_SHIFT, _geometric_table
from knorm.noise.integers import _random_bits

# Block 2^j of the uniform part R: rate * 2^j <= 2^-5, so the rate beta of Q is in
# (2^-6, 2^-5] and consecutive thresholds above 2^(40-8) are more than 2^26 apart: a guide
# cell holds at most two of them.
_BLOCK_RATE_BITS = 5
# Bits of the word for R: 24 minus the sign bit and the _BLOCK_RATE_BITS bits of A.
_MAX_BLOCK_BITS = _W_SHIFT - 1 - _BLOCK_RATE_BITS
# Draws processed together by the fast path: its temporaries (128 KiB) then stay in cache and
# below glibc's mmap threshold (larger fresh arrays cost page faults, about 5 ns per entry).
_CHUNK = 1 << 14
_U64_ONE = np.uint64(1)


def _tilted_block(s, tau, j, n, rng):
    """n draws of R on {0, ..., 2^j - 1} with P(R = r) proportional to exp(-s r / 2^tau), s 2^j <= 2^tau.

    R is uniform (j bits) and kept when CKS Algorithm 1 with gamma = s R / 2^tau <= 1
    ends with K odd.
    """
    out = np.empty(n, dtype=np.int64)
    idx = np.arange(n)
    while idx.size:
        r = rng.integers(0, 1 << j, size=idx.size)
        out[idx] = r
        idx = idx[~_bernoulli_exp_frac(r * s, 1 << tau, rng)]
    return out


@functools.lru_cache(maxsize=256)
def _block_bits(s, tau, cap=_MAX_BLOCK_BITS):
    """Largest j in [0, cap] with s 2^j <= 2^(tau - _BLOCK_RATE_BITS) (0 if there is none); kept per rate."""
    j = 0
    while j < cap and tau >= _BLOCK_RATE_BITS and s << (j + 1) <= 1 << (tau - _BLOCK_RATE_BITS):
        j += 1
    return j


def _wide_dyadic(s, tau, j, n, rng, signed):
    """n draws of G (or of the discrete Laplace if ``signed``) of rate s / 2^tau below 2^-23: G = R + 2^j Q.

    The same decomposition as :func:`_fast_dyadic` with a block 2^j too wide for the bits
    of one word (j > _MAX_BLOCK_BITS): R is drawn by :func:`_tilted_block` (j uniform bits,
    kept by CKS Algorithm 1, acceptance above exp(-1/32)) and Q by the inversion table of
    rate beta = s 2^j / 2^tau in (2^-6, 2^-5], so the table has a few hundred entries at
    every rate (a table of rate s 2^18 / 2^tau grew like 2^tau / s: 2.4 GB at 2^-37,
    issue 21). A negative zero (G = 0 under a minus sign) is rejected and drawn again.
    """
    if signed:
        return _signed(lambda m: _wide_dyadic(s, tau, j, m, rng, False), n, rng)
    q = _geometric_table(s << j, 1 << tau).sample(n, rng)
    # 2^j <= 2^41 at rates >= 2^-46, so Q < 2^21 keeps G in int64: P(Q >= 2^21) <= exp(-2^15).
    if int(q.max(initial=0)) >= 1 << (62 - j):
        raise OverflowError("geometric: a draw left the int64 range; this has probability below exp(-2^15).")
    return _tilted_block(s, tau, j, n, rng) + (q << j)


def _signed(magnitudes, n, rng):
    """n discrete Laplace draws from a geometric sampler ``magnitudes(m)``: a fair sign, (-, 0) drawn again.

    CKS Algorithm 2: every y != 0 gets (1 - q) q^|y| / 2 and 0 gets (1 - q) / 2 once the
    negative zero is rejected, which is the discrete Laplace law (1 - q) / (1 + q) q^|y|
    after normalising; a rejected pair is drawn again whole.
    """
    out = np.empty(n, dtype=np.int64)
    pend = np.arange(n)
    while pend.size:
        g = magnitudes(pend.size)
        neg = _random_bits(pend.size, rng)
        ok = ~(neg & (g == 0))  # -0 would count zero twice
        np.negative(g, out=g, where=neg)
        out[pend[ok]] = g[ok]
        pend = pend[~ok]
    return out


def _joined(parts):
    """The index arrays of ``parts`` end to end (the one array itself when there is one chunk)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _fast_dyadic(s, tau, n, rng, signed):
    """n draws of G (or of the discrete Laplace if ``signed``) of rate s / 2^tau: G = R + 2^j Q.

    With a block 2^j such that s 2^j <= 2^(tau - 5), R (on {0, ..., 2^j - 1} with
    P(R = r) proportional to exp(-s r / 2^tau)) and Q (geometric of rate
    beta = s 2^j / 2^tau, by exact inversion) are independent, and
    (R, Q) -> R + 2^j Q is a bijection onto g >= 0 with
    exp(-s R / 2^tau) exp(-beta Q) = exp(-s (R + 2^j Q) / 2^tau).

    One uniform 64-bit word per draw, cut into independent fields: bits 63..24 are
    the inversion uniform W of Q, bits 23..24-j the uniform R, bits 5..1 the top
    five bits of the uniform A (on tau bits) of the first round of R's Algorithm-1
    acceptance test, bit 0 the sign. As s R < 2^(tau - 5), that round ([A < s R])
    fails, which keeps R, whenever those five bits are not all zero; only then
    (probability 1/32) are A's other bits drawn and the test finished. Rare work
    (Q beyond q*, those tests, negative zeros) is gathered over all chunks and
    done at the end, where its index lists are short; signs are applied at once,
    as the rare work keeps every sign. A negative zero (G = 0 under a minus sign)
    is rejected on the *final* G: the first proposal's, or the one left after R
    is redrawn (a redrawn R = 0 with Q = 0 is a negative zero too; missing it
    over-weighted 0 by about 1% at rate 1/128, issue 21).
    """
    j = _block_bits(s, tau, cap=tau)
    if j > _MAX_BLOCK_BITS:  # the block does not fit in the word's bits: draw R separately
        return _wide_dyadic(s, tau, j, n, rng, signed)
    table = _geometric_table(s << j, 1 << tau)
    g = np.empty(n, dtype=np.int64)
    tails, lows, zeros = [], [], []
    atop = np.uint64(((1 << _BLOCK_RATE_BITS) - 1) << 1)
    rshift, rmask = np.uint64(_W_SHIFT - j), np.uint64((1 << j) - 1)
    qstar = np.uint64(table.qstar)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        words = rng.integers(0, 2**64, size=stop - start, dtype=np.uint64)
        q = table.count(words, rng)
        if q.max() >= qstar:
            tails.append(start + (q >= qstar).nonzero()[0])
        if j:
            q <<= np.uint64(j)
            q |= (words >> rshift) & rmask
            low = ((words & atop) == 0).nonzero()[0]
            if low.size:
                lows.append(start + low)
        mag = q.view(np.int64)
        if signed:
            neg = -(words & _U64_ONE).view(np.int64)  # 0 or -1
            if not mag.all():  # a zero magnitude (probability about the rate): is its sign bit set?
                z = ((mag | (neg + 1)) == 0).nonzero()[0]  # G = 0 with the sign bit set: a negative zero
                if z.size:
                    zeros.append(start + z)
            mag ^= neg
            mag -= neg  # -G where the sign bit is set
        g[start:stop] = mag
    # Rare work, on signed values: |g| is the magnitude. A zero magnitude is never
    # touched below (it is no tail, and R = 0 passes Algorithm 1 at once).
    if tails:  # Q = q* + a fresh Q (memorylessness)
        idx = _joined(tails)
        add = table.sample(idx.size, rng) << j
        g[idx] += np.where(g[idx] < 0, -add, add)
    if lows:
        idx = _joined(lows)
        gi = g[idx]
        r = np.abs(gi) & ((1 << j) - 1)
        sr = r * s
        hit = (rng.integers(0, 1 << (tau - _BLOCK_RATE_BITS), size=idx.size) < sr).nonzero()[0]
        if hit.size:  # round 1 succeeded (K >= 2): finish Algorithm 1, redraw R where K is even
            redo = hit[~_continue_alg1(sr[hit], 1 << tau, 2, rng)]
            if redo.size:
                delta = _tilted_block(s, tau, j, redo.size, rng) - r[redo]
                neg = gi[redo] < 0  # R > 0 here, so the first proposal's sign is readable
                g[idx[redo]] += np.where(neg, -delta, delta)
                if signed:  # the redrawn R may be 0 with Q = 0: under a minus sign, a negative zero too
                    z = (neg & (g[idx[redo]] == 0)).nonzero()[0]
                    if z.size:
                        zeros.append(idx[redo[z]])
    if zeros:  # a negative zero would count zero twice: redraw (probability below s / 2^(tau + 1))
        idx = _joined(zeros)
        g[idx] = _fast_dyadic(s, tau, idx.size, rng, True)
    return g
