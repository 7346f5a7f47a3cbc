"""The shaped (elliptic) discrete Gaussian on Z^m: P(x) proportional to exp(-x'Ax / 2), drawn exactly.

A is a symmetric positive definite *rational* matrix (the precision: in the continuous
limit the covariance is A^-1). Every decision of the samplers below is taken on integers
by the exact primitives of :mod:`knorm.noise.discrete` (CKS 2020 Algorithms 1-3), so the
law of a draw is exactly the stated one; no floating point enters it.

Privacy
-------
Let N_Z(c, A^-1) denote the law P(y) proportional to exp(-(y - c)'A(y - c) / 2) on Z^m,
and Theta(c) = sum_{y in Z^m} exp(-(y - c)'A(y - c) / 2) its normaliser.

1. *For an integer shift k the normaliser does not depend on k*: y -> y - k is a
   bijection of Z^m, so Theta(k) = Theta(0).
2. *Theta(c) <= Theta(0) for every real c.* With f(x) = exp(-x'Ax / 2), Poisson summation
   (f is a Schwartz function) gives Theta(c) = sum_{xi in Z^m} F(xi) cos(2 pi xi'c), where
   F(xi) = (2 pi)^(m/2) det(A)^(-1/2) exp(-2 pi^2 xi'A^-1 xi) > 0 is the Fourier transform
   of f. All coefficients are positive, so Theta(c) <= sum F(xi) = Theta(0). This is the
   multivariate form of the one-coordinate argument behind Canonne, Kamath & Steinke's
   (2020) Proposition 5 (the discrete Gaussian is concentrated DP); their multivariate
   result (Theorem 14) covers a diagonal A (independent coordinates) only, so the shaped
   case rests on the proof here, which is checked numerically in
   tests/noise/test_shaped_gaussian.py (Renyi divergences summed over a box).
3. *Renyi divergence.* For alpha > 1 and k in Z^m, with P = N_Z(k, A^-1) and
   Q = N_Z(0, A^-1) (one normaliser Z = Theta(0), by 1), completing the square in
   alpha (y - k)'A(y - k) + (1 - alpha) y'Ay = (y - alpha k)'A(y - alpha k)
   + alpha (1 - alpha) k'Ak gives

       sum_y P(y)^alpha Q(y)^(1 - alpha) = exp(alpha (alpha - 1) k'Ak / 2) Theta(alpha k) / Theta(0),

   so D_alpha(P || Q) = alpha k'Ak / 2 + log(Theta(alpha k) / Theta(0)) / (alpha - 1)
   <= alpha k'Ak / 2 by 2, with equality when alpha k is an integer vector. The same
   holds with P and Q exchanged (k -> -k).
4. *zCDP.* Release round(T / gamma) + X with X ~ N_Z(0, A^-1), or gamma times it. For
   neighbours the lattice shift k = round(T / gamma) - round(T' / gamma) is in Z^m, and
   post-processing costs nothing, so the release is rho-zCDP (Bun & Steinke 2016,
   Definition 1.1) with rho = sup_k k'Ak / 2 over the lattice shifts of neighbours
   (:meth:`ShapedDiscreteGaussianNoise.rho`). No discrete correction term appears, as
   for the spherical law (CKS 2020, Theorem 14, which is the case A = I / sigma^2).

Samplers
--------
*Spherical proposal, exact rejection* (any A). Draw x with independent N_Z(0, s^2)
coordinates (:func:`knorm.noise.gaussian.discrete_gaussian`, CKS Algorithm 3) and accept
it with probability exp(-x'(A - I / s^2)x / 2) (CKS Algorithm 1 for the rational
exponent); else draw again. The accepted law is proportional to
exp(-x'x / (2 s^2)) exp(-x'(A - I / s^2)x / 2) = exp(-x'Ax / 2), exactly, provided
B = A - I / s^2 is positive semidefinite, which makes the exponent >= 0. 1 / s^2 is a
rational just below the (floating-point) smallest eigenvalue of A, and B is then
*certified* PSD in exact integer arithmetic (Sylvester's criterion on its leading
principal minors, by Bareiss' fraction-free elimination; a PSD test by exact symmetric
elimination for a user's proposal), never trusted from floating point. The acceptance
is Theta_A(0) / Theta_s(0)^m >= (2 pi)^(m/2) det(A)^(-1/2) / Theta_s(0)^m (Poisson:
Theta_A(0) is at least its xi = 0 term), about sqrt(det(A) s^(2m))^-1: it falls
exponentially with m when A is far from spherical, so a law whose bound is below
``min_acceptance`` is refused at construction, with the cause, rather than sampled for
ever. For A = aI + b11' with b >= 0, 1 / s^2 = a (when the CKS sampler takes it) and the
acceptance exponent is b (1'x)^2 / 2: one Bernoulli per proposal, acceptance about
sqrt(a / (a + mb)).

*Latent integer, for A = aI - c11' with c > 0* (the shapes of counts and votes: more
noise along 1). Let v = a - mc > 0. The joint law on Z^m x Z

    pi(x, g) proportional to exp(-a ||x||^2 / 2 - c g^2 / 2 + c g 1'x)

has x-marginal exactly N_Z(0, A^-1): summing over g in Z gives
exp(c (1'x)^2 / 2) Theta_c(1'x) with Theta_c(1'x) = sum_g exp(-c (g - 1'x)^2 / 2), which
does not depend on the integer 1'x (point 1). Given g the coordinates are independent,
x_i ~ N_Z(mu, 1 / a) with mu = c g / a, and the g-marginal is proportional to
exp(-omega g^2 / 2) (Theta_a(mu) / Theta_a(0))^m with omega = c v / a. So: draw g from
N_Z(0, 1 / omega) (CKS Algorithm 3: discrete Laplace proposal, rational acceptance),
accept it with probability p(mu) = (Theta_a(mu) / Theta_a(0))^m <= 1 (point 2), else
draw g again; then draw each x_i from N_Z(mu, 1 / a) by CKS Algorithm 3 around
n = round(mu): y = x_i - n from a discrete Laplace of scale t accepted with probability
exp(-(a (y - f)^2 / 2 - |y| / t + |f| / t + 1 / (2 a t^2))), f = mu - n, an exponent
>= 0 with an integer numerator over the denominator 2 a D t^2 (a = alpha / D). p(mu) is
irrational; it is drawn exactly by comparing a uniform U, 64 bits at a time, with
rigorous rational brackets of p: first with the bound p >= ((1 - 2E) / (1 + 2E))^m,
E = sum_{xi >= 1} exp(-2 pi^2 xi^2 / a) (Poisson, as in point 2), which decides at
the first word unless U is within about 4 m E of 1 (E < 10^-8 for a <= 1, that is
sigma >= 1); then, rarely, with brackets of Theta_a summed term by term with
exact exp(-q) brackets (:func:`knorm.noise.geometric_table._exp_neg_interval`) and a
bounded tail, refined until U is decided. Nothing is rejected wholesale: the cost is
that of m + 1 one-dimensional discrete Gaussians. When the noise is small against the
lattice (a > 1) and m large, the bound on p weakens; below ``min_acceptance`` the
spherical proposal is used instead if it accepts often enough, else the law is refused.

Arithmetic. Every exponent q is an integer numerator over one integer denominator per
law; numerators are computed in int64 where a bound shows they fit (entry by entry in the
coordinate step) and in Python integers otherwise. A denominator beyond int64 is handled
by splitting q = floor(q) + r_0 / 2^62 + e, e < 2^-62: exp(-floor(q)) and
exp(-r_0 / 2^62) by the int64 primitives, and exp(-e) by Algorithm 1 with its
Bernoulli(e / K) rounds decided on 64-bit words against exact brackets (almost always at
the first word). Both are exact; the int64 path is about 20 times faster. For
A = aI - c11' the coordinate step's denominator is 2 a D^2 t^2 with D the common
denominator of a and c and t about 1 / sqrt(a): with a and c multiples of 2^-26 it stays
below 2^56 and the sampler runs at several million coordinates a second.

References
----------
C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010: Algorithms 1-3 (Section 5), Proposition 5
and Theorem 14 (numbering of the arXiv version cited throughout knorm).
M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications, Extensions,
and Lower Bounds", TCC 2016, Definition 1.1.
E. H. Bareiss, "Sylvester's identity and multistep integer-preserving Gaussian
elimination", Mathematics of Computation 22 (1968).
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction

import numpy as np

from knorm._validation import check_rng, check_size, param_error
from knorm.noise import discrete
from knorm.noise.bernoulli import _bernoulli_exp_frac, _bernoulli_exp_int
from knorm.noise.gaussian import _discrete_gaussian, _parameters, _proposal_t, lattice_sigma2
from knorm.noise.geometric_table import _exp_neg_interval
from knorm.noise.law import NoiseLaw

__all__ = ["MIN_ACCEPTANCE", "ShapedDiscreteGaussianNoise"]

#: A law whose rejection step accepts less often than this (lower bound) is refused.
MIN_ACCEPTANCE = 1e-3
#: A float entry of A must be an exact multiple of 2^-FLOAT_BITS (a dyadic rational).
FLOAT_BITS = 30
INT64_MAX = 2**63 - 1
# Arithmetic in int64 below this bound on every intermediate (else Python integers).
_SAFE = 2**62
_WORD = 1 << 64
# The dyadic part of an exponent whose denominator passes int64: r_0 / 2^_SPLIT.
_SPLIT = 62
# 2 pi^2 > 19.7392088 (2 pi^2 = 19.73920880217...): a rational lower bound, for E above.
_TWO_PI2_LOW = Fraction(197_392_088, 10**7)
# Bits of the Poisson bound's exp(-2 pi^2 / a) bracket.
_BOUND_BITS = 128


# -- exact arithmetic on Python integers ---------------------------------------------------------
def _as_objects(values):
    """An int64 (or object) array as an object array of Python ints."""
    return np.array([int(v) for v in np.ravel(values)], dtype=object).reshape(np.shape(values))


def _fits(bound):
    return bound < _SAFE


def _split_exponent(num, den):
    """(whole, frac) of num / den for an array of non-negative integers num and an int den >= 1.

    whole is int64 (an exponent beyond 2^63 - 1 has probability below exp(-2^63) of being
    met and is refused, as in :func:`knorm.noise.gaussian._acceptance`); frac is int64 when
    den fits int64, else an object array.
    """
    if num.dtype != object and den <= INT64_MAX:
        return np.divmod(num, den)
    num = num if num.dtype == object else _as_objects(num)
    whole = num // den
    frac = num - whole * den
    if whole.size and max(whole) > INT64_MAX:
        raise OverflowError(
            "ShapedDiscreteGaussianNoise: an acceptance exponent left int64; this has probability below exp(-2^62)."
        )
    whole = whole.astype(np.int64)
    return whole, (frac.astype(np.int64) if den <= INT64_MAX else frac)


def _bernoulli_exp_q(num, den, rng):
    """Bernoulli(exp(-num / den)) for each entry: num >= 0 integers (int64 or object array), den an int >= 1."""
    whole, frac = _split_exponent(num, den)
    out = _bernoulli_exp_frac(frac, den, rng) if den <= INT64_MAX else _bernoulli_exp_big(frac, den, rng)
    if np.any(whole):
        out &= _bernoulli_exp_int(whole, rng)
    return out


def _lazy_less(bracket, rng, first=None):
    """Whether U < p, for U uniform on [0, 1) drawn 64 bits at a time, exactly.

    ``bracket(prec)`` gives integers lo <= 2^prec p <= hi that tighten as prec grows
    (floor and ceiling for a rational p). ``first`` is U's first word if it is drawn
    already. After k words U lies in [w / 2^(64k), (w + 1) / 2^(64k)): it is below p if
    w + 1 <= lo, not below if w >= hi, else one more word is drawn.
    """
    w, k = (int(first), 1) if first is not None else (0, 0)
    if k:
        lo, hi = bracket(64)
        if w + 1 <= lo:
            return True
        if w >= hi:
            return False
    while True:
        lo, hi = bracket(64 * (k + 1))
        base = w << 64
        cut_lo, cut_hi = lo - base, hi - base  # the next word v: U < p if v < cut_lo, U >= p if v >= cut_hi
        v = int(rng.integers(0, _WORD, dtype=np.uint64))
        w, k = base | v, k + 1
        if v < cut_lo:  # w + 1 <= lo
            return True
        if v >= cut_hi:  # w >= hi
            return False


def _rational_bracket(num, den):
    """bracket(prec) = (floor, ceil) of 2^prec num / den, for :func:`_lazy_less`."""

    def bracket(prec):
        q, r = divmod(num << prec, den)
        return q, q + (r > 0)

    return bracket


def _bernoulli_exp_big(frac, den, rng):
    """Bernoulli(exp(-frac / den)) for an object array 0 <= frac < den, den > 2^63 - 1 (module docstring).

    frac / den = r_0 / 2^62 + e with r_0 = floor(2^62 frac / den) and 0 <= e < 2^-62:
    exp(-r_0 / 2^62) by the int64 primitive, then, where that is True, exp(-e) by CKS
    Algorithm 1, whose first round Bernoulli(e) is decided on one 64-bit word W against
    floor and ceil of 2^64 e (at most 4): W >= ceil ends the algorithm with K = 1 (True).
    """
    r0 = (frac << _SPLIT) // den
    out = _bernoulli_exp_frac(r0.astype(np.int64), 1 << _SPLIT, rng)
    e_num = (frac << _SPLIT) - r0 * den  # e = e_num / e_den, in [0, 2^-62)
    e_den = den << _SPLIT
    live = np.flatnonzero(out & (e_num != 0))
    if not live.size:
        return out
    en = e_num[live]
    lo64 = (en << 64) // e_den  # floor(2^64 e): W below it is a success of round 1
    hi64 = lo64 + ((en << 64) % e_den != 0)  # ceil(2^64 e): from it on, a failure
    words = rng.integers(0, _WORD, size=live.size, dtype=np.uint64)
    for i in np.flatnonzero(words < hi64.astype(np.uint64)):  # round 1 succeeded or is undecided (P < 2^-62)
        e = int(en[i])
        if _lazy_less(_rational_bracket(e, e_den), rng, words[i]):  # round 1 succeeded: K >= 2
            out[live[i]] = _alg1_from(2, e, e_den, rng)
    return out


def _alg1_from(k, num, den, rng):
    """Finish CKS Algorithm 1 for gamma = num / den after k - 1 successful rounds: whether K is odd."""
    while _lazy_less(_rational_bracket(num, den * k), rng):
        k += 1
    return k % 2 == 1


# -- exact input -----------------------------------------------------------------------------------
def _exact(value, name, owner, where=""):
    """An int, Fraction, rational or dyadic float (a multiple of 2^-FLOAT_BITS) as a Fraction."""
    rule = (
        "made of ints, Fractions, or floats that are exact multiples of 2^-30 (dyadic rationals such as 0.375; "
        "0.1 is not 1/10 in binary: pass Fraction(1, 10) or integers with a common denominator)"
    )
    shown = f"{value!r}{where}"
    if isinstance(value, (bool, np.bool_)):
        raise param_error(name, owner, rule, shown, TypeError)
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if not math.isfinite(x):
            raise param_error(name, owner, rule, shown)
        q = Fraction(x)
        if q.denominator > 2**FLOAT_BITS:
            raise param_error(
                name, owner, rule, f"{x!r}{where} (exactly {q}, denominator 2^{q.denominator.bit_length() - 1})"
            )
        return q
    raise param_error(name, owner, rule, shown, TypeError)


def _exact_matrix(precision, denominator, owner):
    """A as a square list of Fractions (precision / denominator), checked symmetric."""
    if isinstance(denominator, (bool, np.bool_)) or not isinstance(denominator, numbers.Integral):
        raise param_error("denominator", owner, "an int >= 1", denominator, TypeError)
    if denominator < 1:
        raise param_error("denominator", owner, "an int >= 1", denominator)
    try:
        arr = np.asarray(precision, dtype=object)
    except ValueError:  # ragged rows
        arr = np.empty(0, dtype=object)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise param_error("precision", owner, "a square matrix of shape (m, m), m >= 1", f"shape {arr.shape}")
    m = arr.shape[0]
    rows = [
        [_exact(arr[i, j], "precision", owner, f" at entry ({i}, {j})") / int(denominator) for j in range(m)]
        for i in range(m)
    ]
    for i in range(m):
        for j in range(i + 1, m):
            if rows[i][j] != rows[j][i]:
                raise param_error(
                    "precision",
                    owner,
                    "a symmetric matrix (A = A')",
                    f"entry ({i}, {j}) = {rows[i][j]} but entry ({j}, {i}) = {rows[j][i]}",
                )
    return rows


def _integer_form(rows):
    """(N, D): an object array of ints and an int with A = N / D (D the least common denominator)."""
    d = 1
    for row in rows:
        for v in row:
            d = math.lcm(d, v.denominator)
    n = np.array([[v.numerator * (d // v.denominator) for v in row] for row in rows], dtype=object)
    return n, d


def _leading_minors(n):
    """Leading principal minors of an integer matrix, by Bareiss' fraction-free elimination, up to the first <= 0.

    Step k replaces M_ij (i, j > k) by (M_kk M_ij - M_ik M_kj) / p, p the previous pivot; the
    division is exact and the pivot M_kk of step k is the leading minor of order k + 1.
    """
    mat = np.array(n, dtype=object)
    size = mat.shape[0]
    prev, out = 1, []
    for k in range(size):
        piv = mat[k, k]
        out.append(piv)
        if piv <= 0:
            break
        if k + 1 < size:
            mat[k + 1 :, k + 1 :] = (piv * mat[k + 1 :, k + 1 :] - np.outer(mat[k + 1 :, k], mat[k, k + 1 :])) // prev
            prev = piv
    return out


def _is_psd(n):
    """Whether the symmetric integer matrix n is positive semidefinite, exactly.

    Symmetric elimination: with a pivot p > 0, [p u'; u C] is PSD iff C - u u' / p is; with
    p = 0 iff u = 0 and C is PSD; with p < 0 never. Returns (bool, index of the failing pivot).
    """
    minors = _leading_minors(n)
    if len(minors) == len(n) and minors[-1] > 0:
        return True, None  # positive definite (Sylvester)
    s = [[Fraction(int(v)) for v in row] for row in n]
    size = len(s)
    for k in range(size):
        p = s[k][k]
        if p < 0 or (p == 0 and any(s[k][j] != 0 for j in range(k + 1, size))):
            return False, k
        if p == 0:
            continue
        for i in range(k + 1, size):
            if s[i][k]:
                r = s[i][k] / p
                for j in range(k + 1, size):
                    s[i][j] -= r * s[k][j]
    return True, None


# -- the theta-function ratio p(f) = (Theta_a(f) / Theta_a(0))^m -----------------------------------
def _poisson_low(a, m):
    """An integer T <= 2^64 ((1 - 2E) / (1 + 2E))^m <= 2^64 (Theta_a(f) / Theta_a(0))^m for every f (module docstring).

    E = sum_{xi >= 1} exp(-2 pi^2 xi^2 / a) <= eps / (1 - eps), eps >= exp(-2 pi^2 / a) an
    exact upper bracket; the m-th power is taken in fixed point, rounding down. 0 when the
    bound is void.
    """
    _, hi = _exp_neg_interval(_TWO_PI2_LOW / a, _BOUND_BITS)
    eps = Fraction(hi, 1 << _BOUND_BITS)
    if eps >= Fraction(1, 3):
        return 0
    e = eps / (1 - eps)
    ratio = (1 - 2 * e) / (1 + 2 * e)
    prec = _BOUND_BITS + 64
    base, out, k = (ratio.numerator << prec) // ratio.denominator, 1 << prec, m
    while k:  # floor at every product: each step stays a lower bound
        if k & 1:
            out = (out * base) >> prec
        base = (base * base) >> prec
        k >>= 1
    return out >> (prec - 64)


def _theta_bracket(a, f, prec):
    """Integers lo <= 2^prec Theta_a(f) <= hi, for rationals a > 0 and f, summed term by term.

    Terms with |y - f| < R are bracketed exactly; the others sum to at most
    2 exp(-a R^2 / 2) / (1 - exp(-a R)).
    """
    reach = math.isqrt(math.ceil(2 * (prec + 8) * Fraction(7, 10) / a)) + 2  # exp(-a R^2 / 2) < 2^-(prec + 8)
    lo = hi = 0
    base = math.floor(f)
    for y in range(base - reach + 1, base + reach + 1):  # every y with |y - f| < reach, and no other
        l_y, h_y = _exp_neg_interval(a * (y - f) ** 2 / 2, prec)
        lo += l_y
        hi += h_y
    _, t1 = _exp_neg_interval(a * reach * reach / 2, prec)
    _, t2 = _exp_neg_interval(a * reach, prec)
    if t2 >= 1 << prec:
        raise AssertionError("theta tail bound void")  # pragma: no cover - reach * a is large
    hi += -(-(2 * t1 << prec) // ((1 << prec) - t2))
    return lo, hi


@functools.lru_cache(maxsize=1024)
def _theta_ratio_bracket(a, f, m, prec):
    """Integers lo <= 2^prec (Theta_a(f) / Theta_a(0))^m <= hi (hi <= 2^prec: the ratio is at most 1)."""
    work = prec + 2 * (m * (prec + 64)).bit_length() + 16
    lf, hf = _theta_bracket(a, f, work)
    l0, h0 = _theta_bracket(a, Fraction(0), work)
    lo = (lf**m << prec) // h0**m
    hi = min(-(-(hf**m << prec) // l0**m), 1 << prec)
    return lo, hi


def _sigma2_above(target):
    """A rational s^2 >= target (> 0), within 2^-20 relative, that the CKS sampler takes (else lattice_sigma2's)."""
    k = max(0, 21 - math.floor(math.log2(target)))
    s2 = Fraction(math.ceil(target * 2**k), 2**k)
    try:
        _parameters(s2, "ShapedDiscreteGaussianNoise")
    except ValueError:
        return lattice_sigma2(target)
    return s2


# -- the samplers --------------------------------------------------------------------------------------
class _Spherical:
    """Spherical proposal N_Z(0, s^2 I) accepted with probability exp(-x'(A - I / s^2)x / 2)."""

    def __init__(self, sigma2, qform, den, dim, owner):
        self.sigma2 = sigma2
        self.params = _parameters(sigma2, owner)
        self.qform, self.den, self.dim = qform, den, dim

    def attempt(self, n, rng):
        """One round for n vectors: (proposals x of shape (n, m), whether each is accepted)."""
        x = _discrete_gaussian(self.params, n * self.dim, rng).reshape(n, self.dim)
        if self.qform is None:  # A = I / s^2: nothing to reject
            return x, np.ones(n, dtype=bool)
        return x, _bernoulli_exp_q(self.qform(x), self.den, rng)

    def sample(self, n, rng):
        out = np.empty((n, self.dim), dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            x, ok = self.attempt(todo.size, rng)
            out[todo[ok]] = x[ok]
            todo = todo[~ok]
        return out


def _dense_qform(mat):
    """x -> x'Mx for an integer matrix M (object array), row by row, exactly."""
    mmax = max(abs(int(v)) for v in mat.ravel())
    small = mat.astype(np.int64) if mmax < _SAFE else None

    def qform(x):
        l1 = max(int(np.abs(x).sum(axis=1).max(initial=0)), 1)
        if small is not None and _fits(mmax * l1 * l1):
            return np.einsum("ij,ij->i", x @ small, x)
        xo = _as_objects(x)
        return ((xo @ mat) * xo).sum(axis=1)

    return qform


def _compound_qform(p, r):
    """x -> p ||x||^2 + r (1'x)^2 for ints p, r (>= 0 together: A - tI is PSD), exactly."""

    def qform(x):
        big = max(int(np.abs(x).max(initial=0)), 1)  # >= 1: the coefficients themselves must fit too
        m = x.shape[1]
        if _fits(big * big * m * m) and _fits((abs(p) + abs(r)) * big * big * m * m):
            s = x.sum(axis=1)
            return p * np.einsum("ij,ij->i", x, x) + r * s * s
        xo = _as_objects(x)
        s = xo.sum(axis=1)
        return p * (xo * xo).sum(axis=1) + r * s * s

    return qform


class _Latent:
    """A = aI - c11', c > 0, through the latent integer g (module docstring)."""

    def __init__(self, a, c, dim, owner):
        self.a, self.c, self.dim = a, c, dim
        d = math.lcm(a.denominator, c.denominator)
        self.D, self.alpha, self.gamma = d, a.numerator * (d // a.denominator), c.numerator * (d // c.denominator)
        v = self.alpha - dim * self.gamma  # v D
        # omega = c v / a = gamma v / (alpha D), reduced.
        g = math.gcd(self.gamma * v, self.alpha * d)
        self.om_n, self.om_d = self.gamma * v // g, self.alpha * d // g
        self.t_g = _proposal_t(Fraction(self.om_d, self.om_n))  # a power of two >= 1 / sqrt(omega)
        self.den_g = 2 * self.om_n * self.om_d * self.t_g**2
        self.t_x = _proposal_t(Fraction(d, self.alpha))  # a power of two >= 1 / sqrt(a)
        self.den_x = 2 * self.alpha * d * self.t_x**2
        self.t_low = min(_poisson_low(a, dim), _WORD - 1)  # a first word below it accepts g (p > its bound)
        self.phi_dtype = np.int64 if self.alpha < _SAFE else object  # |phi| <= alpha / 2
        for t in (self.t_g, self.t_x):
            discrete._check_rate(1, t, owner)

    # g: N_Z(0, 1 / omega) by CKS Algorithm 3, then Bernoulli((Theta_a(mu) / Theta_a(0))^m).
    def g_attempt(self, n, rng):
        """One round for n latent draws: (g, phi, n_g, whether each is accepted).

        mu = gamma g / alpha = n_g + phi / alpha with n_g = round(mu), phi in [-alpha/2, alpha/2).
        """
        y = discrete._discrete_laplace(1, self.t_g, n, rng)
        big = max(int(np.abs(y).max(initial=0)), 1)
        if _fits((self.om_n * self.t_g * big + self.om_d) ** 2):
            num = (self.om_n * self.t_g * np.abs(y) - self.om_d) ** 2
        else:
            num = (self.om_n * self.t_g * np.abs(_as_objects(y)) - self.om_d) ** 2
        ok = _bernoulli_exp_q(num, self.den_g, rng)
        if _fits(2 * self.gamma * big + self.alpha):
            ng = (2 * self.gamma * y + self.alpha) // (2 * self.alpha)
            phi = self.gamma * y - self.alpha * ng
        else:
            yo = _as_objects(y)
            ng_o = (2 * self.gamma * yo + self.alpha) // (2 * self.alpha)
            phi = (self.gamma * yo - self.alpha * ng_o).astype(self.phi_dtype)
            ng = ng_o.astype(np.int64)
        idx = np.flatnonzero(ok)
        if idx.size:
            ok[idx] = self.theta_accept(phi[idx], rng)
        return y, phi, ng, ok

    def theta_accept(self, phi, rng):
        """Bernoulli((Theta_a(f) / Theta_a(0))^m), f = phi / alpha, for each entry, exactly (module docstring)."""
        t_low = self.t_low
        words = rng.integers(0, _WORD, size=phi.size, dtype=np.uint64)
        out = words < np.uint64(t_low)
        for i in np.flatnonzero(~out):  # U >= the Poisson bound: compare it with brackets of p(f) itself
            f = Fraction(abs(int(phi[i])), self.alpha)
            if f == 0:
                out[i] = True  # p = 1
                continue
            bracket = functools.partial(_theta_ratio_bracket, self.a, f, self.dim)
            out[i] = _lazy_less(bracket, rng, words[i])
        return out

    def _x_fits(self, ymax):
        """Whether every int64 intermediate of the coordinate exponent stays below 2^62 for |y| <= ymax."""
        t, alpha, d = self.t_x, self.alpha, self.D
        b = alpha * ymax + alpha // 2 + 1  # |alpha y - phi| <= b, as |phi| <= alpha / 2
        return alpha < _SAFE and _fits(b * b * t * t + 2 * d * t * b + d * d)

    def _x_numerators(self, y, phi):
        """(alpha y - phi)^2 t^2 - 2 alpha D t |y| + 2 D t |phi| + D^2, in int64 (bounds checked by the caller)."""
        t, alpha, d = self.t_x, self.alpha, self.D
        num = y * alpha
        num -= phi
        np.multiply(num, num, out=num)
        num *= t * t
        ay = np.abs(y)
        ay *= 2 * alpha * d * t
        num -= ay
        ap = np.abs(phi)
        ap *= 2 * d * t
        num += ap
        num += d * d
        return num

    def x_attempt(self, phi, rng):
        """One round for the offsets y = x_i - n_g, phi (one per entry) giving f = phi / alpha: (y, accepted).

        The exponent's integer numerator is computed in int64 when its bound fits (for the whole round at
        once, else entry by entry) and in Python integers for the entries where it does not.
        """
        t, alpha, d = self.t_x, self.alpha, self.D
        y = discrete._discrete_laplace(1, t, phi.size, rng)
        if phi.dtype != object and self._x_fits(int(np.abs(y).max(initial=0))):
            return y, _bernoulli_exp_q(self._x_numerators(y, phi), self.den_x, rng)
        ok = np.empty(y.size, dtype=bool)
        small = np.zeros(y.size, dtype=bool)
        if phi.dtype != object and alpha < _SAFE and d < _SAFE:
            # A float bound with a factor-2 margin for its rounding: with B = alpha |y| + |phi| + 1, every int64
            # intermediate is at most B^2 t^2 + 2 D t B + D^2 < 2^61.
            big = alpha * np.abs(y).astype(float) + np.abs(phi).astype(float) + 1.0
            small = big * big * float(t * t) + 2.0 * d * t * big + float(d) * d < 2.0**61
        idx = np.flatnonzero(small)
        if idx.size:
            ok[idx] = _bernoulli_exp_q(self._x_numerators(y[idx], phi[idx]), self.den_x, rng)
        idx = np.flatnonzero(~small)
        if idx.size:
            yo, po = _as_objects(y[idx]), _as_objects(phi[idx])
            num = (alpha * yo - po) ** 2 * (t * t) - (2 * alpha * d * t) * np.abs(yo) + (2 * d * t) * np.abs(po) + d * d
            ok[idx] = _bernoulli_exp_q(num, self.den_x, rng)
        return y, ok

    def draw_x(self, phi, ng, rng):
        """Rows x with x_i ~ N_Z(n_g + phi / alpha, 1 / a) independent, given accepted latent draws (phi, n_g)."""
        phis = np.repeat(phi, self.dim)
        y, ok = self.x_attempt(phis, rng)
        todo = np.flatnonzero(~ok)
        while todo.size:  # each rejected coordinate is proposed again, alone
            yy, ok = self.x_attempt(phis[todo], rng)
            y[todo[ok]] = yy[ok]
            todo = todo[~ok]
        return y.reshape(-1, self.dim) + ng[:, None]

    def sample(self, n, rng):
        phi = np.empty(n, dtype=self.phi_dtype)
        ng = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:  # a rejected latent draw is drawn again (nothing else was drawn for it)
            _, ph, nn, ok = self.g_attempt(todo.size, rng)
            phi[todo[ok]], ng[todo[ok]] = ph[ok], nn[ok]
            todo = todo[~ok]
        return self.draw_x(phi, ng, rng)


# -- the law --------------------------------------------------------------------------------------------
def _log_theta1(t):
    """log sum_y exp(-t y^2 / 2) for a float t > 0 (floats: for the acceptance estimate only)."""
    reach = int(math.ceil(math.sqrt(80.0 / t))) + 2
    y = np.arange(-reach, reach + 1, dtype=float)
    return float(np.logaddexp.reduce(-t * y * y / 2))


class ShapedDiscreteGaussianNoise(NoiseLaw):
    """The law on Z^m with P(x) proportional to exp(-x'Ax / 2), A rational symmetric positive definite, drawn exactly.

    Parameters
    ----------
    precision : array_like of shape (m, m)
        The precision matrix A times ``denominator``: ints, Fractions, or floats that are
        exact multiples of 2^-30 (each converted exactly; 0.1 is refused, as its binary
        value is not 1/10). Symmetric and positive definite, checked in exact arithmetic.
        A = aI + b11' (equal diagonal, equal off-diagonal entries) is recognised and
        drawn by the fast samplers of :meth:`compound`.
    denominator : int, default 1
        A common denominator: A = precision / denominator.
    proposal_sigma2 : Fraction, optional
        Force the spherical proposal N_Z(0, s^2 I) with this s^2 (refused unless
        A - I / s^2 is certified positive semidefinite); by default s^2 is chosen from A.
    min_acceptance : float, default 1e-3
        Refuse a law whose rejection step accepts less often than this (a lower bound is
        compared), instead of sampling for ever.

    Attributes
    ----------
    dim : int
        Dimension m.
    scale : float
        The largest marginal standard deviation of the continuous N(0, A^-1).
    sampler : str
        How the law is drawn.
    expected_acceptance : float
        A lower bound on the acceptance of the shape's rejection step: of a spherical
        proposal, or of the latent draw's theta-ratio step (about 1 for sigma >= 1); the
        one-dimensional CKS rounds inside each sampler (acceptance about 0.75) are not
        counted, as for :class:`~knorm.noise.gaussian.DiscreteGaussianNoise`.

    Notes
    -----
    Privacy (module docstring, proved there): releasing round(T / gamma) + X, X of this
    law, is rho-zCDP with rho = sup_k k'Ak / 2 over the lattice shifts k of neighbours
    (:meth:`rho`), as for the continuous Gaussian; the multivariate form of Canonne,
    Kamath & Steinke's (2020) argument (Proposition 5, Theorem 14). Samplers: a spherical
    discrete Gaussian proposal with exact rejection (certified in exact arithmetic), or,
    for A = aI - c11', an exact latent-integer construction without wholesale rejection.
    Keep A's common denominator moderate (2^26 or less) for the int64 fast path; any
    rational is exact, larger denominators only cost time.

    Examples
    --------
    >>> from fractions import Fraction
    >>> law = ShapedDiscreteGaussianNoise([[2, 1], [1, 3]], denominator=4)
    >>> law.sample(3, rng=0).shape
    (3, 2)
    >>> law.rho([[1, 0], [1, -1]])  # sup k'Ak / 2 over the shifts given
    Fraction(3, 8)
    """

    _plan: _Spherical | _Latent

    def __init__(self, precision, *, denominator=1, proposal_sigma2=None, min_acceptance=MIN_ACCEPTANCE):
        owner = "ShapedDiscreteGaussianNoise"
        rows = _exact_matrix(precision, denominator, owner)
        m = len(rows)
        diag, off = {rows[i][i] for i in range(m)}, {rows[i][j] for i in range(m) for j in range(m) if i != j}
        if len(diag) == 1 and len(off) <= 1:
            a = rows[0][0]
            b = off.pop() if off else Fraction(0)
            self._setup_compound(a - b, b, m, proposal_sigma2, min_acceptance, owner, "precision")
            return
        self._setup_dense(rows, proposal_sigma2, min_acceptance, owner)

    @classmethod
    def compound(cls, a, b, dim, *, proposal_sigma2=None, min_acceptance=MIN_ACCEPTANCE):
        """The law with precision A = aI + b11' in dimension ``dim``, without building the m x m matrix.

        Parameters
        ----------
        a, b : int, Fraction or dyadic float
            The precision's parts, exact rationals; A is positive definite iff a > 0 and
            a + dim b > 0.
        dim : int
            Dimension m >= 1.
        proposal_sigma2 : Fraction, optional
            As for the class (forces the spherical proposal).
        min_acceptance : float, default 1e-3
            As for the class.

        Returns
        -------
        ShapedDiscreteGaussianNoise
            The law. For b >= 0 the spherical proposal N_Z(0, 1/a) (one Bernoulli of
            exponent b (1'x)^2 / 2 per proposal, acceptance about sqrt(a / (a + m b)));
            for b < 0 the latent-integer sampler (no wholesale rejection).

        Examples
        --------
        >>> from fractions import Fraction
        >>> law = ShapedDiscreteGaussianNoise.compound(Fraction(1, 27), Fraction(-1, 3000), 100)
        >>> law.sample(2, rng=1).shape
        (2, 100)
        """
        owner = "ShapedDiscreteGaussianNoise.compound"
        a = _exact(a, "a", owner)
        b = _exact(b, "b", owner)
        if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral) or dim < 1:
            raise param_error(
                "dim", owner, "an int >= 1", dim, TypeError if not isinstance(dim, numbers.Integral) else ValueError
            )
        self = cls.__new__(cls)
        self._setup_compound(a, b, int(dim), proposal_sigma2, min_acceptance, owner, None)
        return self

    # -- construction ----------------------------------------------------------------------------------
    def _setup_compound(self, a, b, m, proposal_sigma2, min_acceptance, owner, matrix_name):
        min_acceptance = _check_min_acceptance(min_acceptance, owner)
        self.dim, self.kind, self.a, self.b = m, "compound", a, b
        lam_min, lam_max = min(a, a + m * b), max(a, a + m * b)  # eigenvalues: a (1'-orthogonal), a + m b (along 1)
        if lam_min <= 0:
            name = matrix_name or ("a" if a <= 0 else "b")
            raise param_error(
                name,
                owner,
                "such that A = aI + b11' is positive definite (a > 0 and a + m b > 0)",
                f"a = {a}, b = {b}, m = {m} (eigenvalues {a} and {a + m * b})",
            )
        self._lam = (lam_min, lam_max)
        if b < 0 and proposal_sigma2 is None:
            latent = _Latent(a, -b, m, owner)
            accept = latent.t_low / _WORD
            if accept >= min_acceptance:
                self._plan, self._acceptance = latent, accept
                self.sampler = (
                    f"exact shaped discrete Gaussian, A = ({a}) I - ({-b}) 11' on Z^{m}: latent integer g ~ N_Z(0, "
                    f"{Fraction(latent.om_d, latent.om_n)}) accepted with probability (Theta(mu)/Theta(0))^m by exact "
                    f"brackets, then x_i ~ N_Z(mu, {1 / a}) (CKS 2020 Algorithm 3 around round(mu)), all exact"
                )
                return
            # The theta step's bound is weak (noise small against the lattice): the spherical proposal, if it accepts.
            try:
                self._setup_spherical(a, b, m, None, min_acceptance, owner, matrix_name)
            except ValueError as err:
                raise param_error(
                    matrix_name or "a",
                    owner,
                    f"such that an exact sampler accepts with probability >= {min_acceptance:g}",
                    f"a = {a}, b = {b}, m = {m}: the latent sampler's theta step has the bound {accept:.3g} (the noise "
                    f"1/sqrt(a) = {1 / math.sqrt(a):.3g} is small against the lattice), and {err}",
                ) from err
            return
        self._setup_spherical(a, b, m, proposal_sigma2, min_acceptance, owner, matrix_name)

    def _setup_spherical(self, a, b, m, proposal_sigma2, min_acceptance, owner, matrix_name):
        """The spherical proposal for A = aI + b11' (any sign of b): 1 / s^2 <= min(a, a + m b), certified."""
        lam_min = min(a, a + m * b)
        t = self._proposal_precision(lam_min, proposal_sigma2, owner)
        if t > lam_min:
            raise param_error(
                "proposal_sigma2",
                owner,
                "a variance s^2 with A - I / s^2 positive semidefinite (1 / s^2 <= the smallest eigenvalue of A)",
                f"{Fraction(1) / t} (1 / s^2 = {t} > lambda_min(A) = {lam_min})",
            )
        # q = x'(A - tI)x / 2 = ((a - t) ||x||^2 + b (1'x)^2) / 2: integers p, r over one denominator. With b < 0,
        # q >= 0 still: x'(A - tI)x >= (lambda_min - t) ||x||^2 >= 0.
        den = math.lcm((a - t).denominator, b.denominator)
        p, r = int((a - t) * den), int(b * den)
        qform = None if p == 0 and r == 0 else _compound_qform(p, r)
        self._plan = plan = _Spherical(Fraction(1) / t, qform, 2 * den, m, owner)
        log_det = (m - 1) * math.log(a) + math.log(a + m * b)
        name = "proposal_sigma2" if proposal_sigma2 is not None else matrix_name or "b"
        self._acceptance = self._spherical_acceptance(float(t), log_det, m, min_acceptance, owner, name)
        self.sampler = _spherical_name(plan, f"A = ({a}) I + ({b}) 11' on Z^{m}")

    def _setup_dense(self, rows, proposal_sigma2, min_acceptance, owner):
        min_acceptance = _check_min_acceptance(min_acceptance, owner)
        m = len(rows)
        n, d = _integer_form(rows)
        minors = _leading_minors(n)
        if len(minors) < m or minors[-1] <= 0:
            k = len(minors)
            raise param_error(
                "precision",
                owner,
                "positive definite (every leading principal minor > 0, Sylvester's criterion, checked exactly)",
                f"leading principal minor of order {k} = {Fraction(minors[-1], d**k)}",
            )
        self.dim, self.kind, self._n, self._d = m, "dense", n, d
        # int / int is correctly rounded for any size (an object array divided by a huge int stays object on numpy 1.25).
        fl = _ratio_floats(n, d)
        eig = np.linalg.eigvalsh(fl)
        self._lam = (float(eig[0]), float(eig[-1]))
        if proposal_sigma2 is None:
            t = self._certified_t(n, d, float(eig[0]), float(eig[-1]), owner)
        else:
            t = self._proposal_precision(None, proposal_sigma2, owner)
            ok, k = _is_psd(self._shifted(n, d, t))
            if not ok:
                raise param_error(
                    "proposal_sigma2",
                    owner,
                    "a variance s^2 with A - I / s^2 positive semidefinite (certified exactly: symmetric elimination)",
                    f"{Fraction(1) / t} (A - I / s^2 fails at pivot {k}; lambda_min(A) is about {eig[0]:.6g})",
                )
        mat = self._shifted(n, d, t)
        den = 2 * d * t.denominator
        g = math.gcd(den, *(int(v) for v in mat.ravel()))
        mat = np.array([[int(v) // g for v in row] for row in mat], dtype=object)
        qform = None if not any(mat.ravel()) else _dense_qform(mat)
        self._plan = plan = _Spherical(Fraction(1) / t, qform, den // g, m, owner)
        log_det = float(np.linalg.slogdet(fl)[1])
        name = "proposal_sigma2" if proposal_sigma2 is not None else "precision"
        self._acceptance = self._spherical_acceptance(float(t), log_det, m, min_acceptance, owner, name)
        self.sampler = _spherical_name(plan, f"a dense A on Z^{m}")

    @staticmethod
    def _shifted(n, d, t):
        """The integer matrix (A - tI) D t.denominator."""
        out = np.array(n, dtype=object) * t.denominator
        for i in range(len(out)):
            out[i, i] -= d * t.numerator
        return out

    def _certified_t(self, n, d, lam, lam_max, owner):
        """A rational t < lambda_min(A) that the CKS sampler takes as 1 / s^2, with A - tI certified PD."""
        target = lam * (1 - 2**-30) - 1e-13 * lam_max  # below lambda_min by more than eigvalsh's error
        for _ in range(8):
            if target > 0:
                sigma2 = _sigma2_above(Fraction(1) / Fraction(target))  # >= 1 / target: t <= target
                t = Fraction(1) / sigma2
                minors = _leading_minors(self._shifted(n, d, t))
                if len(minors) == len(n) and minors[-1] > 0:  # Sylvester: A - tI is positive definite
                    return t
            target = target / 2 if target > 0 else lam / 2
        raise param_error(  # pragma: no cover - the float eigenvalue is off by more than 2^8
            "precision", owner, "a matrix whose smallest eigenvalue can be bracketed", f"lambda_min about {lam}"
        )

    @staticmethod
    def _proposal_precision(a, proposal_sigma2, owner):
        """t = 1 / s^2: the user's, or a = lambda_min(A) (when the CKS sampler takes 1 / a), or just below a."""
        if proposal_sigma2 is not None:
            s2 = _exact(proposal_sigma2, "proposal_sigma2", owner)
            if s2 <= 0:
                raise param_error("proposal_sigma2", owner, "a positive rational", proposal_sigma2)
            try:
                _parameters(s2, owner)
            except ValueError as err:
                raise param_error(
                    "proposal_sigma2", owner, "a variance the exact sampler takes (see lattice_sigma2)", s2
                ) from err
            return 1 / s2
        try:
            _parameters(1 / a, owner)
            return a
        except ValueError:
            return 1 / _sigma2_above(1 / a)

    def _spherical_acceptance(self, t, log_det, m, min_acceptance, owner, name):
        # Theta_A(0) >= (2 pi)^(m/2) det(A)^(-1/2) (Poisson: the xi = 0 term); the proposal's normaliser exactly (floats).
        log_acc = m / 2 * math.log(2 * math.pi) - log_det / 2 - m * _log_theta1(t)
        acc = math.exp(min(log_acc, 0.0))
        if acc < min_acceptance:
            lo, hi = (float(v) for v in self._lam)
            hint = (
                " A = aI + b11' with b < 0 has an exact sampler without this rejection (ShapedDiscreteGaussianNoise.compound)."
                if self.kind == "compound"
                else ""
            )
            raise param_error(
                name,
                owner,
                f"such that the exact rejection from a spherical proposal accepts with probability >= {min_acceptance:g} "
                "(acceptance >= sqrt(det(tI) / det(A)) / (proposal's theta factor)^m, t <= lambda_min(A))",
                f"an acceptance bound of {acc:.3g} (m = {m}, eigenvalues from {lo:.6g} to {hi:.6g}, condition number "
                f"{hi / lo:.4g}); it falls like (lambda_min / lambda)^(1/2) per direction.{hint}",
            )
        return acc

    # -- the interface -------------------------------------------------------------------------------
    @property
    def expected_acceptance(self):
        """A lower bound on the acceptance of the rejection step (float; module docstring)."""
        return self._acceptance

    @property
    def scale(self):
        """The largest marginal standard deviation of the continuous N(0, A^-1) (float)."""
        if self.kind == "compound":
            a, b, m = float(self.a), float(self.b), self.dim
            return math.sqrt((1 - b / (a + m * b)) / a)
        return float(np.sqrt(np.max(np.diag(self.covariance))))

    @property
    def covariance(self):
        """A^-1 in floats: the continuous Gaussian's covariance (the discrete law's is within rounding of it for sigma >= 1)."""
        if self.kind == "compound":
            a, b, m = float(self.a), float(self.b), self.dim
            return (np.eye(m) - b / (a + m * b) * np.ones((m, m))) / a
        return np.linalg.inv(_ratio_floats(self._n, self._d))

    @property
    def cache_key(self):
        """('ShapedDiscreteGaussianNoise', the exact parameters, the proposal)."""
        proposal = getattr(self._plan, "sigma2", None)
        if self.kind == "compound":
            return ("ShapedDiscreteGaussianNoise", "compound", self.a, self.b, self.dim, proposal)
        return ("ShapedDiscreteGaussianNoise", "dense", tuple(int(v) for v in self._n.ravel()), self._d, proposal)

    def precision_matrix(self):
        """A as an (m, m) object array of Fractions (a new array).

        Returns
        -------
        ndarray of Fraction
            The exact precision matrix.
        """
        if self.kind == "compound":
            out = np.full((self.dim, self.dim), self.b, dtype=object)
            for i in range(self.dim):
                out[i, i] = self.a + self.b
            return out
        return np.array([[Fraction(int(v), self._d) for v in row] for row in self._n], dtype=object)

    def quadratic_form(self, k):
        """Return k'Ak for integer vectors k, exactly.

        Parameters
        ----------
        k : array_like of int, shape (m,) or (n, m)
            Integer vectors (lattice shifts).

        Returns
        -------
        Fraction or list of Fraction
            The value k'Ak, one per row.
        """
        arr = np.asarray(k)
        if arr.dtype.kind not in "iu" or arr.shape[-1:] != (self.dim,) or arr.ndim > 2:
            raise param_error(
                "k", "ShapedDiscreteGaussianNoise.quadratic_form", f"integer vectors of length {self.dim}", arr.shape
            )
        rows = _as_objects(arr.reshape(-1, self.dim))
        if self.kind == "compound":
            s = rows.sum(axis=1)
            vals = [self.a * int(q) + self.b * int(t) * int(t) for q, t in zip((rows * rows).sum(axis=1), s)]
        else:
            vals = [Fraction(int(v), self._d) for v in ((rows @ self._n) * rows).sum(axis=1)]
        return vals[0] if arr.ndim == 1 else vals

    def rho(self, shifts):
        """Return the zCDP parameter sup_k k'Ak / 2 over the given lattice shifts, exactly.

        Parameters
        ----------
        shifts : array_like of int, shape (n, m)
            Every lattice shift round(T/gamma) - round(T'/gamma) of neighbours (or a set
            whose hull contains them all: k'Ak is convex in k).

        Returns
        -------
        Fraction
            The zCDP parameter rho: the release round(T / gamma) + X is rho-zCDP (module docstring, point 4).
        """
        vals = self.quadratic_form(np.atleast_2d(np.asarray(shifts)))
        return max(vals) / 2

    def unnormalised_logpmf(self, k):
        """Return -k'Ak / 2 in floats, for integer vectors k (tests and plots; the sampler never uses it).

        Parameters
        ----------
        k : array_like of int, shape (..., m)
            Lattice points.

        Returns
        -------
        ndarray of float
            The log of the unnormalised pmf.
        """
        x = np.asarray(k, dtype=float)
        if self.kind == "compound":
            s = x.sum(axis=-1)
            return -(float(self.a) * (x * x).sum(axis=-1) + float(self.b) * s * s) / 2
        a = _ratio_floats(self._n, self._d)
        return -np.einsum("...i,ij,...j->...", x, a, x) / 2

    def sample(self, size=None, *, rng=None):
        """Draw integer vectors of the law, exactly.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            Shape (dim,) or ``(*size, dim)``.
        """
        owner = "ShapedDiscreteGaussianNoise.sample"
        gen = check_rng(rng, owner)
        shape = check_size(size, owner)
        n = math.prod(shape)
        return self._plan.sample(n, gen).reshape((*shape, self.dim))

    def __repr__(self):
        if self.kind == "compound":
            return f"ShapedDiscreteGaussianNoise.compound(a={self.a}, b={self.b}, dim={self.dim})"
        return f"ShapedDiscreteGaussianNoise(dim={self.dim}, dense)"


def _ratio_floats(n, d):
    """The matrix n / d in binary64, each entry correctly rounded (int / int); n may hold ints beyond int64."""
    return np.array([[int(v) / d for v in row] for row in np.asarray(n)], dtype=float)


def _spherical_name(plan, what):
    """The sampler's description for reports."""
    rest = "" if plan.qform is None else " accepted with probability exp(-x'(A - I/s^2)x/2) (exact Bernoulli(exp(-q)))"
    return (
        f"exact shaped discrete Gaussian, {what}: spherical proposal N_Z(0, s^2 = {plan.sigma2}) (CKS 2020 Algorithm 3)"
        f"{rest}, A - I/s^2 certified PSD in exact arithmetic"
    )


def _check_min_acceptance(value, owner):
    rule = "a float in the range (0, 1]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise param_error("min_acceptance", owner, rule, value, TypeError)
    if not 0 < float(value) <= 1:
        raise param_error("min_acceptance", owner, rule, value)
    return float(value)
