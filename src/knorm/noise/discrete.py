"""Exact discrete samplers in integer arithmetic: Bernoulli(exp(-x)), geometric, discrete Laplace.

Every sampler here draws its randomness from ``rng.integers`` only and takes
every accept/reject decision by comparing integers, so the law of each output
is exactly the stated one (no floating-point rounding anywhere; numpy bounds
its integers by rejection, and :func:`_uniform_below` below does the same).
This is what makes released values immune to Mironov's (2012) attack on the
least significant bits of floating-point noise.

The constructions are those of Canonne, Kamath & Steinke (2020):

* Algorithm 1, Bernoulli(exp(-gamma)) for a rational gamma in [0, 1]: set K = 1,
  then repeatedly draw A ~ Bernoulli(gamma / K) and increment K until A = 0;
  return whether K is odd. The first k rounds all succeed with probability
  gamma^k / k!, so P(K odd) = sum_k (-gamma)^k / k! = exp(-gamma). For gamma > 1,
  exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma))) is a product of
  independent Bernoullis.
* Algorithm 2's geometric step: X = U + t V with U uniform on {0, ..., t-1} kept
  with probability exp(-U / t) and V ~ Geometric(exp(-1)) has
  P(X = x) proportional to exp(-x / t), so G = floor(X / s) has
  P(G = g) = (1 - e^{-s/t}) e^{-g s/t}; a fair sign, rejecting (-, 0), gives the
  discrete Laplace law.

Exact speed-ups, each an identity in law:

* The first m rounds of Algorithm 1 come from ONE uniform integer W on
  {0, ..., b^m m! - 1} when gamma = a / b: the rounds 1..k all succeed iff
  W < a^k b^(m-k) m! / k!. These thresholds are integers, decrease in k and are
  hit with probability (a/b)^k / k!, exactly the law of the first m rounds; rounds
  beyond m (if all m succeed) continue one by one.
* Uniform integers below a per-element bound h <= 2^32 use Lemire's (2019)
  multiply-and-reject method on 32-bit words: x h / 2^32 is kept unless
  (x h mod 2^32) < 2^32 mod h, which leaves exactly floor(2^32 / h) words per value.
* Dyadic rates s / 2^tau (what :mod:`knorm.noise.lattice` uses) have a faster exact
  path: G = R + 2^j Q with a block 2^j such that s 2^j <= 2^(tau-5). R, on
  {0, ..., 2^j - 1} with P(R = r) proportional to exp(-s r / 2^tau), is uniform and
  kept by Algorithm 1 (gamma = s R / 2^tau <= 1/32); Q is geometric of rate
  beta = s 2^j / 2^tau in (2^-6, 2^-5], drawn by inversion: with U uniform on
  [0, 1), Q >= q iff U < exp(-beta q), and the first 40 bits W of U are compared
  with the integers T_q = floor(2^40 exp(-beta q)), computed exactly (rational
  Taylor brackets; exp(-x) is irrational for rational x > 0, so the floor is
  always decided). W < T_q and W > T_q decide; a tie W = T_q draws more bits of U
  and compares them with further exact digits. Past q* (T_q* < 2^32) the
  geometric's memorylessness restarts the inversion. R and Q are independent and
  (R, Q) -> R + 2^j Q is a bijection with exp(-s R / 2^tau) exp(-beta Q) =
  exp(-s (R + 2^j Q) / 2^tau). One uniform 64-bit word feeds a draw (W, R, the top
  five bits of R's first-round uniform, a sign), about 17 ns per discrete Laplace
  draw against about 5 ns for numpy's float Laplace on the reference machine.

References
----------
Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential
Privacy", NeurIPS, arXiv:2004.00010, Algorithms 1 and 2.
Lemire (2019), "Fast random integer generation in an interval", ACM TOMACS 29(1).
Chen & Asau (1974), "On generating random variates from an empirical
distribution", AIIE Transactions 6(2) (guide tables for inversion).
Lindemann (1882), "Ueber die Zahl pi", Math. Annalen 20 (exp(x) is
transcendental for algebraic x != 0).
Mironov (2012), "On significance of the least significant bits for differential
privacy", CCS.
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from knorm._validation import check_count, check_rng, param_error

__all__ = ["bernoulli_exp", "discrete_laplace", "geometric"]

INT64_MAX = 2**63 - 1
# Limits of geometric / discrete_laplace (see the module docstring).
MAX_S = 2**62
MAX_T = 2**62
# The smallest rate is 2^-46: a draw then exceeds 2^52 (beyond which the lattice release's
# integers stop being exact doubles) with probability about exp(-64), and stays in int64.
MAX_MEAN = 2**46
# V >= this makes floor((U + t V) / s) leave the overflow-safe range; P = exp(-2^16) at most.
_MAX_V = 2**22
_U32 = 2**32
_MASK32 = np.uint64(_U32 - 1)
# At most this many rounds of Algorithm 1 are batched into one uniform for
# per-element gamma (a cap on the threshold products computed per element).
_MAX_BATCH = 2
# exp(-1): the first 12 rounds from one uniform on {0, ..., 12! - 1} (12! < 2^32, so numpy
# draws it from 32 bits); the 13th round is reached with probability 1/12!.
_E1_ROUNDS = 12


# -- argument checks ------------------------------------------------------------
def _check_int(value, name, owner, low, high):
    rule = f"an int in the range [{low}, {high}]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise param_error(name, owner, rule, value, TypeError)
    value = int(value)
    if not low <= value <= high:
        raise param_error(name, owner, rule, value)
    return value


def _check_int_array(value, name, owner, low):
    """``value`` as an int64 array with entries in [low, 2^63 - 1]."""
    rule = f"an int or array of ints in the range [{low}, 2^63 - 1]"
    if isinstance(value, (bool, np.bool_)):
        raise param_error(name, owner, rule, value, TypeError)
    arr = np.asarray(value)
    if arr.dtype == object:
        try:
            if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
                bad = [int(v) for v in arr.flat if not low <= int(v) <= INT64_MAX]
                if bad:
                    raise param_error(name, owner, rule, bad[0])
                arr = arr.astype(np.int64)
        except (OverflowError, TypeError) as err:  # pragma: no cover - defensive
            raise param_error(name, owner, rule, value) from err
    if arr.dtype.kind not in "iu":
        raise param_error(name, owner, rule, value, TypeError)
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > INT64_MAX:
        raise param_error(name, owner, rule, int(arr.max()))
    arr = arr.astype(np.int64)
    if arr.size and int(arr.min()) < low:
        raise param_error(name, owner, rule, int(arr.min()))
    return arr


def _check_rate(s, t, owner):
    s = _check_int(s, "s", owner, 1, MAX_S)
    t = _check_int(t, "t", owner, 1, MAX_T)
    if t > MAX_MEAN * s:
        raise ValueError(
            f"The rate s/t of {owner} must be at least 2^-46 (t <= 2^46 s) so that draws stay far inside "
            f"int64. Got s={s!r}, t={t!r} instead."
        )
    return s, t


def _size_shape(size, owner):
    if size is None:
        return None
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    return tuple(check_count(k, "size", owner) for k in shape)


# -- uniform integers -------------------------------------------------------------
def _uniform_below(high, rng):
    """Uniform integers on {0, ..., high - 1} for an int64 array ``high`` >= 1 (same shape).

    Bounds up to 2^32 use Lemire's multiply-and-reject method on the two 32-bit
    halves of uniform 64-bit words (module docstring); larger ones numpy's own exact
    bounded generation.
    """
    high = np.asarray(high, dtype=np.int64)
    if high.size == 0:
        return np.zeros(high.shape, dtype=np.int64)
    if int(high.max()) > _U32:
        return rng.integers(0, high)
    h = np.ascontiguousarray(high).reshape(-1).view(np.uint64)
    n = h.size
    m = rng.integers(0, 2**64, size=(n + 1) // 2, dtype=np.uint64).view(np.uint32)[:n] * h  # below 2^64
    out = m >> np.uint64(32)
    lo = m & _MASK32
    # Only lo < h can fall below the threshold 2^32 mod h (< h): look there alone.
    sus = np.flatnonzero(lo < h)
    if sus.size:
        hs = h[sus]
        bad = lo[sus] < (np.uint64(_U32) - hs) % hs
        if bad.any():  # rejected words: draw those entries again
            out[sus[bad]] = _uniform_below(hs[bad].view(np.int64), rng).view(np.uint64)
    return out.view(np.int64).reshape(high.shape)


def _bernoulli_ratio(a, b, rng):
    """Bernoulli(a / b) for int64 arrays 0 <= a <= b, b >= 1: [uniform below b] < a."""
    a, b = np.broadcast_arrays(a, b)
    return _uniform_below(b, rng) < a


def _random_bits(n, rng):
    """n fair bits (bool), 64 per uniform word."""
    words = rng.integers(0, 2**64, size=-(-n // 64), dtype=np.uint64)
    return np.unpackbits(words.view(np.uint8), count=n).view(bool)


# -- Bernoulli(exp(-gamma)) ----------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _batch_rounds(bmax, cap):
    """Largest m <= cap with bmax^m m! <= 2^63 - 1 (at least 1); kept per (bmax, cap)."""
    m = 1
    while m < cap and bmax ** (m + 1) * math.factorial(m + 1) <= INT64_MAX:
        m += 1
    return m


def _later_rounds(a, b, j, rng):
    """Bernoulli(a / (b j)), splitting into Bernoulli(a / b) Bernoulli(1 / j) if b j overflows."""
    if np.ndim(b) == 0:
        b = int(b)
        if b <= INT64_MAX // j:
            return rng.integers(0, b * j, size=a.size) < a
        return (rng.integers(0, b, size=a.size) < a) & (rng.integers(0, j, size=a.size) == 0)
    if np.all(b <= INT64_MAX // j):
        return _bernoulli_ratio(a, b * j, rng)
    return _bernoulli_ratio(a, b, rng) & (_uniform_below(np.full(a.shape, j, dtype=np.int64), rng) == 0)


def _continue_alg1(a, b, j, rng):
    """Finish CKS Algorithm 1 (gamma = a/b) for entries whose rounds 1..j-1 succeeded: whether K is odd."""
    out = np.empty(a.shape, dtype=bool)
    rest = np.arange(a.size)
    scalar_b = np.ndim(b) == 0
    while rest.size:
        hit = _later_rounds(a[rest], b if scalar_b else b[rest], j, rng)
        out[rest[~hit]] = j % 2 == 1  # stopped with K = j
        rest = rest[hit]
        j += 1
    return out


def _bernoulli_exp_frac(a, b, rng, cap=_MAX_BATCH):
    """Bernoulli(exp(-a/b)) for int64 arrays 0 <= a <= b, b >= 1 (b may be a scalar).

    CKS Algorithm 1 with its first m <= cap rounds drawn from one uniform (module docstring).
    """
    a = np.asarray(a, dtype=np.int64)
    n = a.size
    if n == 0:
        return np.empty(0, dtype=bool)
    scalar_b = np.ndim(b) == 0
    if scalar_b:  # a Python int: b^m m! <= 2^63 - 1, so every product below fits int64
        b = int(b)
        m = _batch_rounds(b, cap)
    else:
        b = np.asarray(b, dtype=np.int64)
        m = _batch_rounds(int(b.max()), cap)
    span = b**m * math.factorial(m)
    w = rng.integers(0, span, size=n) if scalar_b else _uniform_below(span, rng)
    if m == 1:  # one round per uniform (b > 2^31.5, the dyadic rates): round 1 succeeds iff w < a
        first = w < a
        rest = first.nonzero()[0]
        out = ~first
        if rest.size:
            out[rest] = _continue_alg1(a[rest], b if scalar_b else b[rest], 2, rng)
        return out
    # count = number of leading successful rounds (capped at m): rounds 1..k succeed iff w < thr_k.
    count = np.zeros(n, dtype=np.int64)
    ak = np.ones(n, dtype=np.int64)
    for k in range(1, m + 1):
        ak = ak * a
        thr = ak * b ** (m - k) * (math.factorial(m) // math.factorial(k))
        count += w < thr
    out = count % 2 == 0  # K = count + 1 is odd
    rest = (count == m).nonzero()[0]
    if rest.size:
        out[rest] = _continue_alg1(a[rest], b if scalar_b else b[rest], m + 1, rng)
    return out


def _bernoulli_exp1(n, rng, rounds=_E1_ROUNDS):
    """n draws of Bernoulli(exp(-1)): CKS Algorithm 1 with gamma = 1, ``rounds`` (>= 3) rounds per uniform."""
    span = math.factorial(rounds)
    w = rng.integers(0, span, size=n)
    # Round 1 (probability 1/1) always succeeds, round k >= 2 iff w < span / k!; K = count + 1.
    out = (w < span // 2) & (w >= span // 6)  # exactly 2 successes: K = 3, odd
    deep = (w < span // 6).nonzero()[0]  # 3 or more successes, probability 1/6
    if deep.size:
        wd = w[deep]
        count = np.full(deep.size, 3, dtype=np.int64)
        for k in range(4, rounds + 1):
            count += wd < span // math.factorial(k)
        out[deep] = count % 2 == 0
        rest = deep[count == rounds]  # probability 1 / rounds!
        if rest.size:
            out[rest] = _continue_alg1(np.ones(rest.size, dtype=np.int64), 1, rounds + 1, rng)
    return out


def _geometric_e1(n, rng):
    """n draws of V with P(V = v) = (1 - e^-1) e^-v: successes of Bernoulli(e^-1) before a failure."""
    first = _bernoulli_exp1(n, rng)
    v = first.astype(np.int64)
    alive = first.nonzero()[0]
    while alive.size:
        alive = alive[_bernoulli_exp1(alive.size, rng)]
        v[alive] += 1
    return v


def _bernoulli_exp_int(count, rng):
    """Bernoulli(exp(-count)) for an int64 array ``count`` >= 0: count independent Bernoulli(e^-1) all true."""
    out = np.ones(count.shape, dtype=bool)
    alive = np.flatnonzero(count > 0)
    left = count[alive]
    while alive.size:
        ok = _bernoulli_exp1(alive.size, rng)
        out[alive[~ok]] = False
        left = left[ok] - 1
        alive = alive[ok]
        keep = left > 0
        alive, left = alive[keep], left[keep]
    return out


def bernoulli_exp(num, den, *, rng=None):
    """Draw Bernoulli(exp(-num/den)) exactly, for integer arrays num >= 0 and den > 0.

    Parameters
    ----------
    num : int or array_like of int
        Numerators, in [0, 2^63 - 1].
    den : int or array_like of int
        Denominators, in [1, 2^63 - 1]; broadcast against ``num``.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Source of randomness; only its ``integers`` method is called.

    Returns
    -------
    ndarray of bool
        One draw per entry of the broadcast shape, True with probability
        exp(-num/den) exactly.

    Raises
    ------
    TypeError
        If ``num`` or ``den`` is not made of integers.
    ValueError
        If an entry is outside its range.

    Notes
    -----
    With x = num/den = I + f/den (I = num // den), exp(-x) = exp(-1)^I exp(-f/den):
    the draw is True when I independent Bernoulli(exp(-1)) draws and one
    Bernoulli(exp(-f/den)) draw are all True, each by Canonne, Kamath & Steinke's
    Algorithm 1 (module docstring). The expected number of uniform draws is
    below 2 + 1.6 I per entry; entries are processed together, round by round.

    References
    ----------
    Canonne, Kamath & Steinke (2020), arXiv:2004.00010, Algorithm 1.

    Examples
    --------
    >>> draws = bernoulli_exp(1, 2, rng=0)  # exp(-1/2) = 0.607
    >>> draws.dtype, draws.shape
    (dtype('bool'), ())
    >>> bool(bernoulli_exp(0, 5, rng=0))  # exp(0) = 1
    True
    >>> freq = bernoulli_exp(3, [4] * 100_000, rng=1).mean()  # exp(-3/4) = 0.4724
    >>> bool(abs(freq - 0.4724) < 0.006)  # 4 standard errors
    True
    """
    owner = "bernoulli_exp"
    num = _check_int_array(num, "num", owner, 0)
    den = _check_int_array(den, "den", owner, 1)
    return _bernoulli_exp(num, den, check_rng(rng, owner))


def _bernoulli_exp(num, den, rng):
    """bernoulli_exp on checked int64 arrays (den may be a scalar)."""
    num, den = np.broadcast_arrays(num, den)
    shape = num.shape
    num, den = num.ravel(), den.ravel()
    whole = num // den
    out = _bernoulli_exp_frac(num - whole * den, den, rng)
    if np.any(whole):
        out &= _bernoulli_exp_int(whole, rng)
    return out.reshape(shape)


# -- exact exponentials for the dyadic fast path -----------------------------------
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


# -- the dyadic fast path --------------------------------------------------------------
# Uniform bits compared with the inversion thresholds: the top 40 of a word (the other
# 24 feed the uniform part R, the first round of its acceptance test and a sign).
_W_BITS = 40
_W_SHIFT = 64 - _W_BITS
# Top bits of that uniform indexing the guide table (2^14 cells of width 2^26).
_GUIDE_BITS = 14
# The inversion table stops at q* with exp(-beta q*) < 2^-8; beyond, memorylessness restarts it.
_TAIL_BITS = 8
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


# -- geometric and discrete Laplace -------------------------------------------------
def _uniform_exp_tilted(t, n, rng):
    """n draws of U on {0, ..., t-1} with P(U = u) proportional to exp(-u/t) (rejection, acceptance > 0.63)."""
    u = np.empty(n, dtype=np.int64)
    pend = np.arange(n)
    while pend.size:
        cand = rng.integers(0, t, size=pend.size)
        ok = _bernoulli_exp_frac(cand, t, rng)
        u[pend[ok]] = cand[ok]
        pend = pend[~ok]
    return u


def _floor_affine(r, a, v, s):
    """floor((r + a v) / s) for int64 arrays r, v >= 0 and ints 0 <= a < s <= 2^62, r < s, without overflow.

    a v is added bit by bit of v: x_b = (a 2^b) mod s and y_b = (a 2^b) div s are
    doubled with one reduction each, and every partial remainder stays below 2 s <= 2^63.
    """
    rem = r.copy()
    quo = np.zeros_like(r)
    xb, yb = a % s, a // s
    bits = v.copy()
    while np.any(bits):
        on = (bits & 1).astype(bool)
        rem[on] += xb
        quo[on] += yb
        over = rem >= s
        rem[over] -= s
        quo[over] += 1
        xb, yb = 2 * xb, 2 * yb
        if xb >= s:
            xb, yb = xb - s, yb + 1
        bits >>= 1
    return quo


def _geometric(s, t, n, rng):
    """n draws of the geometric law of rate s/t (checked arguments): dyadic fast path, else CKS."""
    if t & (t - 1) == 0:
        return _fast_dyadic(s, t.bit_length() - 1, n, rng, False)
    return _geometric_cks(s, t, n, rng)


def _geometric_cks(s, t, n, rng):
    """n draws of floor((U + t V) / s), computed without int64 overflow (checked arguments)."""
    v = _geometric_e1(n, rng)
    qt, rt = divmod(t, s)
    # The result is below (qt + 1) V + 2 qt + 1: V below this bound (at least 2^15 for
    # qt <= 2^46) keeps it in int64; P(V >= 2^15) = exp(-2^15) per draw.
    limit = min(_MAX_V, INT64_MAX // (2 * (qt + 1)))
    if int(v.max(initial=0)) >= limit:
        raise OverflowError(
            f"geometric: a draw left the int64 range (V >= {limit}); this has probability exp(-{limit})."
        )
    u = _uniform_exp_tilted(t, n, rng) if t > 1 else np.zeros(n, dtype=np.int64)
    # U + t V = (qu s + ru) + (qt s + rt) V with ru, rt < s and qt <= 2^46.
    qu, ru = np.divmod(u, s)
    if rt == 0 or int(v.max(initial=0)) <= (INT64_MAX - s) // rt:
        tail = (ru + rt * v) // s
    else:
        tail = _floor_affine(ru, rt, v, s)
    return v * qt + qu + tail


def geometric(s, t, size=None, *, rng=None):
    """Draw G with P(G = g) = (1 - e^{-s/t}) e^{-g s/t} on g >= 0, exactly.

    Parameters
    ----------
    s, t : int
        The rate s/t: s and t in [1, 2^62], with t <= 2^46 s.
    size : int or tuple of ints, optional
        Output shape; None draws one value.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Source of randomness; only its ``integers`` method is called.

    Returns
    -------
    int or ndarray of int64
        The draws.

    Raises
    ------
    TypeError
        If ``s`` or ``t`` is not an int.
    ValueError
        If ``s`` or ``t`` is outside its range.
    OverflowError
        If an intermediate leaves int64, an event of probability at most exp(-2^15).

    Notes
    -----
    Canonne, Kamath & Steinke's construction: U uniform on {0, ..., t-1} kept with
    probability exp(-U/t) (Algorithm 1), V ~ Geometric(e^-1) (successes of
    Bernoulli(e^-1) before a failure) and X = U + t V, so that
    P(X = x) = P(U = x mod t) P(V = x div t) is proportional to exp(-x/t) on
    x >= 0; then G = floor(X/s) has P(G >= g) = P(X >= g s) = e^{-g s/t}.

    References
    ----------
    Canonne, Kamath & Steinke (2020), arXiv:2004.00010, Algorithm 2 (steps 3-9).

    Examples
    --------
    >>> g = geometric(1, 100, 20_000, rng=0)  # mean e^-0.01 / (1 - e^-0.01) = 99.5
    >>> g.dtype, int(g.min()) >= 0
    (dtype('int64'), True)
    >>> round(float(g.mean()))
    100
    """
    owner = "geometric"
    s, t = _check_rate(s, t, owner)
    shape = _size_shape(size, owner)
    gen = check_rng(rng, owner)
    n = 1 if shape is None else math.prod(shape)
    out = _geometric(s, t, n, gen)
    return int(out[0]) if shape is None else out.reshape(shape)


def _discrete_laplace(s, t, n, rng):
    if t & (t - 1) == 0:
        return _fast_dyadic(s, t.bit_length() - 1, n, rng, True)
    return _signed(lambda m: _geometric_cks(s, t, m, rng), n, rng)


def discrete_laplace(s, t, size=None, *, rng=None):
    """Draw Y with P(Y = y) proportional to exp(-|y| s/t) on the integers, exactly.

    Parameters
    ----------
    s, t : int
        The rate s/t: s and t in [1, 2^62], with t <= 2^46 s.
    size : int or tuple of ints, optional
        Output shape; None draws one value.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Source of randomness; only its ``integers`` method is called.

    Returns
    -------
    int or ndarray of int64
        The draws.

    Raises
    ------
    TypeError
        If ``s`` or ``t`` is not an int.
    ValueError
        If ``s`` or ``t`` is outside its range.
    OverflowError
        If an intermediate leaves int64, an event of probability at most exp(-2^15).

    Notes
    -----
    With q = e^{-s/t}, P(Y = y) = (1 - q) / (1 + q) q^|y|. A geometric G
    (:func:`geometric`) with a fair sign B gives every y != 0 probability
    (1 - q) q^|y| / 2 and 0 probability (1 - q); rejecting (B = -, G = 0) halves
    the latter, which leaves the stated law (CKS Algorithm 2).

    References
    ----------
    Canonne, Kamath & Steinke (2020), arXiv:2004.00010, Algorithm 2.

    Examples
    --------
    >>> y = discrete_laplace(1, 10, 20_000, rng=0)
    >>> y.shape, y.dtype
    ((20000,), dtype('int64'))
    >>> round(float(abs(y).mean()))  # 2q / (1 - q^2) = 10.0 for q = e^-0.1
    10
    """
    owner = "discrete_laplace"
    s, t = _check_rate(s, t, owner)
    shape = _size_shape(size, owner)
    gen = check_rng(rng, owner)
    n = 1 if shape is None else math.prod(shape)
    out = _discrete_laplace(s, t, n, gen)
    return int(out[0]) if shape is None else out.reshape(shape)
