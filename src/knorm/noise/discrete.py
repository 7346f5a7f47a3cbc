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

import math

import numpy as np

from knorm._validation import check_rng, check_size
from knorm.noise import dyadic

# The building blocks live in knorm.noise.integers, .bernoulli, .geometric_table and .dyadic;
# their names stay importable from here (patch them where they live).
from knorm.noise.bernoulli import (  # noqa: F401
    _E1_ROUNDS,
    _MAX_BATCH,
    _batch_rounds,
    _bernoulli_exp,
    _bernoulli_exp1,
    _bernoulli_exp_frac,
    _bernoulli_exp_int,
    _continue_alg1,
    _later_rounds,
    bernoulli_exp,
)
from knorm.noise.dyadic import (  # noqa: F401
    _BLOCK_RATE_BITS,
    _CHUNK,
    _MAX_BLOCK_BITS,
    _U64_ONE,
    _block_bits,
    _fast_dyadic,
    _joined,
    _signed,
    _tilted_block,
    _wide_dyadic,
)
from knorm.noise.geometric_table import (  # noqa: F401
    _GUIDE_BITS,
    _TAIL_BITS,
    _U64_63,
    _W_BITS,
    _W_SHIFT,
    _exp_neg_floor,
    _exp_neg_interval,
    _geometric_table,
    _GeometricTable,
)
from knorm.noise.integers import (  # noqa: F401
    _MASK32,
    _U32,
    INT64_MAX,
    _bernoulli_ratio,
    _check_int,
    _check_int_array,
    _random_bits,
    _uniform_below,
)

__all__ = ["bernoulli_exp", "discrete_laplace", "geometric"]

# Limits of geometric / discrete_laplace (see the module docstring).
MAX_S = 2**62
MAX_T = 2**62
# The smallest rate is 2^-46: a draw then exceeds 2^52 (beyond which the lattice release's
# integers stop being exact doubles) with probability about exp(-64), and stays in int64.
MAX_MEAN = 2**46
# V >= this makes floor((U + t V) / s) leave the overflow-safe range; P = exp(-2^16) at most.
_MAX_V = 2**22


# -- argument checks ------------------------------------------------------------
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
    return None if size is None else check_size(size, owner)


def _geometric_e1(n, rng):
    """n draws of V with P(V = v) = (1 - e^-1) e^-v: successes of Bernoulli(e^-1) before a failure."""
    first = _bernoulli_exp1(n, rng)
    v = first.astype(np.int64)
    alive = first.nonzero()[0]
    while alive.size:
        alive = alive[_bernoulli_exp1(alive.size, rng)]
        v[alive] += 1
    return v


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
        return dyadic._fast_dyadic(s, t.bit_length() - 1, n, rng, False)
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
        return dyadic._fast_dyadic(s, t.bit_length() - 1, n, rng, True)
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
