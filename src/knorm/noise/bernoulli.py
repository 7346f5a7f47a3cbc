"""Exact Bernoulli(exp(-x)) in integer arithmetic (Canonne, Kamath & Steinke 2020, Algorithm 1).

For a rational gamma = a / b in [0, 1], rounds of Bernoulli(gamma / K) run until one
fails and the draw is whether K is odd; the first rounds are batched into one uniform
integer, and exp(-x) for x > 1 is a product of exp(-1) factors and one fractional
draw (see the :mod:`knorm.noise.discrete` docstring). Randomness comes from
``rng.integers`` only.

References
----------
Canonne, Kamath & Steinke (2020), "The Discrete Gaussian for Differential
Privacy", NeurIPS, arXiv:2004.00010, Algorithm 1.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from knorm._validation import check_rng
from knorm.noise.integers import INT64_MAX, _bernoulli_ratio, _check_int_array, _uniform_below

__all__ = ["bernoulli_exp"]

# At most this many rounds of Algorithm 1 are batched into one uniform for
# per-element gamma (a cap on the threshold products computed per element).
_MAX_BATCH = 2
# exp(-1): the first 12 rounds from one uniform on {0, ..., 12! - 1} (12! < 2^32, so numpy
# draws it from 32 bits); the 13th round is reached with probability 1/12!.
_E1_ROUNDS = 12


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

    CKS Algorithm 1 with its first m <= cap rounds drawn from one uniform (:mod:`knorm.noise.discrete` docstring).
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
    Algorithm 1 (:mod:`knorm.noise.discrete` docstring). The expected number of uniform draws is
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
