"""Integer arguments and exact uniform integers, for the samplers of :mod:`knorm.noise.discrete`.

Argument checks for int and int64-array inputs, uniform integers below per-element
bounds (Lemire's multiply-and-reject method on 32-bit words; see the
:mod:`knorm.noise.discrete` docstring), Bernoulli(a / b) by comparing such a uniform
with a, and fair bits. Randomness comes from ``rng.integers`` only.

References
----------
Lemire (2019), "Fast random integer generation in an interval", ACM TOMACS 29(1).
"""

from __future__ import annotations

import numbers

import numpy as np

from knorm._validation import param_error

INT64_MAX = 2**63 - 1
_U32 = 2**32
_MASK32 = np.uint64(_U32 - 1)


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


# -- uniform integers -------------------------------------------------------------
def _uniform_below(high, rng):
    """Uniform integers on {0, ..., high - 1} for an int64 array ``high`` >= 1 (same shape).

    Bounds up to 2^32 use Lemire's multiply-and-reject method on the two 32-bit
    halves of uniform 64-bit words (:mod:`knorm.noise.discrete` docstring); larger ones numpy's own exact
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
