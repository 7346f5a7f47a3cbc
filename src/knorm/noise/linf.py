"""The exact l_inf lattice law, sampled through tabulated radius laws.

The law P(k) proportional to q^{||k||_inf} on Z^d (q = exp(-a), a a positive
dyadic rational) is sampled with a latent radius L: the pair (L, k) with
P(L, k) proportional to q^L 1{||k||_inf <= L} has marginal
P(k) proportional to q^{||k||_inf}, because sum_{L >= M} q^L = q^M / (1 - q)
(:class:`knorm.noise.lattice.LatticeKNormNoise`, Notes). Given L, k is uniform on
{-L, ..., L}^d. L is written 2^j H + R: H is drawn by exact inversion of its
tabulated law (:class:`InversionTable`), R uniformly, and the pair is kept by
exact Bernoulli trials, one of which is realised by the box coordinates
themselves (:class:`LinfLatentSampler`, Notes). On coarse lattices j = 0 and L
comes straight from its law P(L) proportional to (2L + 1)^d q^L, with no
rejection; on fine ones j keeps the table at most 2^15 entries long and the
acceptance is about exp(-a 2^j), above 0.98 for d <= 100.

Every decision compares integers; randomness comes from ``rng.integers`` only.

References
----------
Awan & Slavkovic (2021), appendix "Implementing K-Norm Mechanisms" (the
continuous l_inf sampler: a Gamma radius, then a uniform point of the cube;
ERRATA.md item 4); Canonne, Kamath & Steinke (2020), arXiv:2004.00010.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from knorm.noise import discrete
from knorm.noise.discrete import _exp_neg_interval

__all__ = ["GeometricSumSampler", "InversionTable", "LinfLatentSampler", "linf_latent", "linf_sampler"]

# Uniform bits compared with the tabulated thresholds (the top of a 64-bit word; 62 keeps
# every threshold, up to 2^62, in int64).
_BITS = 62
# Largest table (entries); its build costs a few microseconds per entry.
MAX_TABLE = 1 << 17
# A radius table is used when its estimated length is at most this.
_RADIUS_TABLE = 1 << 15
# The table stops where the tail mass is below 2^-this (it also bounds the relative error of the
# normaliser, so the brackets stay a few units wide); rarer draws go through the exact lazy path.
_TABLE_TAIL_BITS = 64
# Box coordinates are drawn in blocks of about this many entries.
_BOX_BLOCK = 1 << 15
_U32 = 1 << 32
# Thresholds looked up per guide cell before falling back to a binary search.
_GUIDE_STEPS = 2
# Beyond this dimension the radius tables take seconds to build: sums of geometrics instead.
_MAX_TABLE_DIM = 200


class TableTooLarge(ValueError):
    """The law needs more than MAX_TABLE entries before its tail becomes negligible."""


class _Underflow(ArithmeticError):
    """The fixed-point bracket of q^x lost its relative precision."""


class InversionTable:
    """Exact inversion sampler of the radius law P(h) proportional to w(h) q^h on {0, 1, 2, ...}.

    The weight is w(h) = prod_i B_{h,i} with B_{h,i} = m_i (2^(j+1) (h + 1) - 2) + 1
    and q = exp(-beta); for j = 0 and every m_i = 1 it is (2h + 1)^d q^h, the
    l_inf lattice radius law (:class:`LinfLatentSampler`).

    Parameters
    ----------
    m : tuple of int
        Per-axis multipliers m_i >= 1 (its length is the dimension d).
    j : int
        Digit shift (>= 0) of :class:`LinfLatentSampler`.
    beta : Fraction
        The rate: q = exp(-beta), beta > 0 rational.
    bits : int, default 62
        Bits of the uniform compared with the table; smaller values (tests) make
        the exact tie path frequent.
    max_size : int, default 2^17
        Largest table; a law that needs more raises ``TableTooLarge``.

    Notes
    -----
    With U uniform on [0, 1), X = min{x : U < F(x)} has the law, F the CDF. F(x)
    is a rational function of q with rational coefficients and q is
    transcendental (Lindemann 1882), so F(x) is irrational and U = F(x) has
    probability 0. The table holds integers lo_x <= 2^bits F(x) <= hi_x, from
    fixed-point brackets of q^x (:func:`~knorm.noise.geometric_table._exp_neg_interval`,
    rounding down and up), exact integer weights, and a bound on the tail
    sum_{y > e} w(y) q^y <= t_e rho / (1 - rho), rho = w(e + 1) q / w(e) (the ratio
    w(y + 1) / w(y) decreases in y). For the first ``bits`` bits
    W of U, W < lo_x proves U < F(x) and W >= hi_x proves U >= F(x); otherwise
    (probability about 2^-60 per draw at the default) more bits of U are drawn,
    64 at a time, and compared with finer brackets of F until one decides. The
    table stops once the tail is below 2^-64; a draw beyond it is resolved the
    same exact way. The prefix sums are kept truncated to bits + 64 bits, always
    rounded so that the brackets stay valid.
    """

    def __init__(self, m, j, beta, *, bits=_BITS, max_size=MAX_TABLE):
        self.m, self.j, self.beta = tuple(int(v) for v in m), int(j), Fraction(beta)
        self.d = len(self.m)
        self.bits, self.max_size = int(bits), int(max_size)
        top = 1 << (self.j + 1)
        groups = [(v, self.m.count(v)) for v in sorted(set(self.m))]
        if len(groups) == 1:  # one multiplier (the l_inf law): a single power
            ((v, c),) = groups
            self._weight = lambda h: (v * (top * (h + 1) - 2) + 1) ** c
        else:
            self._weight = lambda h: math.prod((v * (top * (h + 1) - 2) + 1) ** c for v, c in groups)
        self._lazy_scan: dict = {}
        # Bits by which q^x shrinks over the expected range (doubled on underflow).
        self._depth = 32 + math.ceil(1.5 * float(self.beta) * _estimated_length(self.d, self.beta) * math.log2(math.e))
        prec = self.bits + 48 + max_size.bit_length()
        sums, Zl, Zh, end = self._scan(prec, 0, _TABLE_TAIL_BITS, self.bits)
        lo = np.empty(end + 1, dtype=np.int64)
        hi = np.empty(end + 1, dtype=np.int64)
        for x in range(end + 1):
            lo[x], hi[x] = _bracket(sums[x], Zl, Zh, self.bits)
        self.lo, self.hi = lo, hi
        self._hi_pad = np.append(hi, 1 << self.bits)  # hi[-1] reads as "certainly above" never
        # Guide table (Chen & Asau 1974) on the top g bits of w: the answer for w in cell c is
        # start[c] plus the number of lo_x <= w among the next _GUIDE_STEPS thresholds, when the
        # cell holds at most that many of them; other cells (the thin tails) use a binary search.
        g = min(16, max(8, (2 * len(lo)).bit_length()), self.bits)
        self._gshift = np.int64(self.bits - g)
        cells = np.arange((1 << g) + 1, dtype=np.int64) << self._gshift
        first = np.searchsorted(lo, cells, side="right")  # first x with lo_x > c 2^s
        self._start = first[:-1]
        self._wide = (np.searchsorted(lo, cells[1:] - 1, side="right") - first[:-1]) > _GUIDE_STEPS
        self._lo_pad = np.append(lo, np.full(_GUIDE_STEPS + 1, 1 << self.bits))

    # -- exact brackets ------------------------------------------------------------
    def _terms(self, prec):
        """Yield (x, w(x), lower, upper) with lower <= 2^P q^x <= upper, x = 0, 1, ..., P = prec + depth.

        The extra ``depth`` bits keep q^x, which shrinks to 2^-(beta x log2 e), at a
        relative precision of 2^-prec; once it falls below (:class:`_Underflow`),
        the caller starts again with twice the depth.
        """
        P = prec + self._depth
        ql, qh = _exp_neg_interval(self.beta, P)
        pl = ph = 1 << P
        floor = 1 << prec
        x = 0
        while True:
            if pl < floor:
                raise _Underflow
            yield x, self._weight(x), pl, ph
            pl, ph = (pl * ql) >> P, -((-ph * qh) >> P)
            x += 1

    def _scan(self, prec, need, tail_bits, out_bits):
        """(sums, Zl, Zh, end): Zl <= 2^P Z <= Zh, end >= need with the tail beyond it below 2^-tail_bits of Z.

        ``sums[x]`` is (al, ah, s) with al 2^s <= 2^P S(x) <= (ah + 1) 2^s, S the prefix
        sums of the weights, truncated to out_bits + 64 bits (enough for thresholds of
        out_bits). P = prec + the current depth; an underflow of q^x doubles the depth.
        """
        while True:
            try:
                return self._scan_at(prec, need, tail_bits, out_bits + 64)
            except _Underflow:
                self._depth *= 2

    def _scan_at(self, prec, need, tail_bits, keep):
        P = prec + self._depth
        _, qh = _exp_neg_interval(self.beta, P)
        Sl = Sh = 0
        sums = []
        for x, w, pl, ph in self._terms(prec):
            Sl, Sh = Sl + w * pl, Sh + w * ph
            cut = max(0, Sh.bit_length() - keep)
            sums.append((Sl >> cut, Sh >> cut, cut))
            if x >= need and x % 16 == 15:  # the (costly) tail test every 16 terms
                w1 = self._weight(x + 1)
                den = (w << P) - w1 * qh  # 2^P w (1 - rho_upper)
                if den > 0:
                    tail = -(-(w * ph * w1 * qh) // den)  # >= t_x rho / (1 - rho), scaled
                    if tail << tail_bits <= Sl:
                        return sums, Sl, Sh + tail, x
            if x >= need + self.max_size:  # (the lazy path's scans reach past the table: cap relative to need)
                raise TableTooLarge(
                    f"the radius law (d = {self.d}, j = {self.j}) needs more than {self.max_size} table entries"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def _cdf_bracket(self, x, prec):
        """Integers lo <= 2^prec F(x) <= hi, hi - lo small (computed afresh; cached per precision)."""
        key = prec
        scan = self._lazy_scan.get(key)
        if scan is None or x > scan[3]:
            inner = prec + 48 + max(x, len(self.lo)).bit_length()
            scan = self._scan(inner, x, prec + 8, prec)
            if len(self._lazy_scan) >= 4:  # the lazy path is rare: keep a few precisions only
                self._lazy_scan.pop(next(iter(self._lazy_scan)))
            self._lazy_scan[key] = scan
        sums, Zl, Zh, _ = scan
        return _bracket(sums[x], Zl, Zh, prec)

    # -- sampling --------------------------------------------------------------------
    def sample(self, n, rng):
        """Draw n values of the law exactly.

        Parameters
        ----------
        n : int
            Number of draws.
        rng : numpy.random.Generator
            Source of randomness (only ``integers`` is called).

        Returns
        -------
        ndarray of int64, shape (n,)
            The draws.
        """
        w = (rng.integers(0, 2**64, size=n, dtype=np.uint64) >> np.uint64(64 - self.bits)).view(np.int64)
        cell = w >> self._gshift
        x = self._start[cell]  # first x with lo_x > w: certainly U < F(x)
        for _ in range(_GUIDE_STEPS):
            x += self._lo_pad[x] <= w
        wide = np.flatnonzero(self._wide[cell])
        if wide.size:
            x[wide] = np.searchsorted(self.lo, w[wide], side="right")
        # Undecided: beyond the table, or w < hi_{x-1} (U < F(x - 1) not excluded).
        prev = self._hi_pad[x - 1]
        open_ = (x == len(self.lo)) | ((x > 0) & (w < prev))
        if open_.any():
            for e in np.flatnonzero(open_):
                x[e] = self._invert_lazy(int(w[e]), rng)
        return x.astype(np.int64, copy=False)

    def _invert_lazy(self, w, rng):
        """min{x : U < F(x)} for U with first bits w, drawing further bits of U as needed."""
        chunks: list = []

        def below(x):  # U < F(x)?
            m = 0
            while True:
                prec = self.bits + 64 * m
                lo, hi = self._cdf_bracket(x, prec)
                u = w
                for c in chunks[:m]:
                    u = (u << 64) | c
                if u + 1 <= lo:  # U < (u + 1) / 2^prec <= F(x)
                    return True
                if u >= hi:  # U >= u / 2^prec >= F(x)
                    return False
                if len(chunks) == m:
                    chunks.append(int(rng.integers(0, 2**64, dtype=np.uint64)))
                m += 1

        # hi is non-decreasing: every x with hi_x <= w has U >= F(x) for sure.
        lo_x = int(np.searchsorted(self.hi, w, side="right"))
        hi_x = int(np.searchsorted(self.lo, w, side="right"))
        if hi_x == len(self.lo):  # beyond the table: search upward
            step = max(1, len(self.lo))
            while not below(hi_x):
                lo_x, hi_x = hi_x + 1, hi_x + step
                step *= 2
        while lo_x < hi_x:  # smallest x in [lo_x, hi_x] with U < F(x); U < F(hi_x) holds
            mid = (lo_x + hi_x) // 2
            if below(mid):
                hi_x = mid
            else:
                lo_x = mid + 1
        return lo_x


def _bracket(entry, Zl, Zh, bits):
    """Integers lo <= 2^bits S / Z <= hi from a truncated prefix sum and Zl <= Z <= Zh (same scale).

    entry = (al, ah, s) with al 2^s <= S <= (ah + 1) 2^s; Z is truncated to about bits + 64
    bits too, rounding so that both bounds stay valid (lower over upper, upper over lower).
    """
    al, ah, s = entry
    t = max(0, Zl.bit_length() - (bits + 64))
    zh, zl = (Zh >> t) + 1, Zl >> t  # Zh <= zh 2^t, Zl >= zl 2^t
    e = s + bits - t
    if e >= 0:
        lo, hi = (al << e) // zh, -(-((ah + 1) << e) // zl)
    else:
        lo, hi = al // (zh << -e), -(-(ah + 1) // (zl << -e))
    return lo, min(hi, 1 << bits)


@functools.lru_cache(maxsize=32)
def _table(m, j, beta):
    return InversionTable(m, j, beta)


def _estimated_length(d, rate):
    """Rough table length (a bound in practice) of a law close to Gamma(d + 1, rate): mean plus 12 sd plus a margin."""
    return (d + 1 + 12 * math.sqrt(d + 1) + 40) / float(rate)


# -- box coordinates ----------------------------------------------------------------
def uniform_rows(bound, d, rng):
    """Uniform integers W_ri on {0, ..., bound_ri - 1}, as int64 of shape (rows, d).

    ``bound`` is int64 >= 1 of shape (rows,) (one bound per row) or (rows, d).
    Lemire's (2019) multiply-and-reject on the 32-bit halves of uniform words when
    every bound is at most 2^32: with x a uniform 32-bit word, x h / 2^32 is kept
    unless (x h mod 2^32) < 2^32 mod h; the rare rejected words are redrawn with
    numpy's bounded integers (exact too). numpy's bounded integers otherwise.
    """
    h = bound[:, None] if bound.ndim == 1 else bound
    full = np.broadcast_to(h, (len(bound), d))
    if not h.size or int(h.max()) >= _U32:
        return discrete._uniform_below(np.ascontiguousarray(full), rng)
    size = len(bound) * d
    m = rng.integers(0, 2**64, size=(size + 1) // 2, dtype=np.uint64).view(np.uint32)[:size].reshape(-1, d) * h.view(
        np.uint64
    )
    low = m.view(np.uint32)[:, 0::2]  # x h mod 2^32 (little-endian halves)
    if not np.little_endian:  # pragma: no cover - big-endian machines
        low = (m & np.uint64(_U32 - 1)).astype(np.uint32)
    # Rejection needs low < 2^32 mod h, so low < h: test that cheap bound, then the exact one there.
    sus = np.flatnonzero(low < h.astype(np.uint32))
    w = (m >> np.uint64(32)).view(np.int64)
    if sus.size:
        r, c = np.divmod(sus, d)
        hs = full[r, c].astype(np.uint64)
        bad = low[r, c] < (np.uint64(_U32) - hs) % hs
        if bad.any():  # numpy's bounded integers are exact too (rejection), and cheap for a few
            w[r[bad], c[bad]] = rng.integers(0, full[r[bad], c[bad]])
    return w


# -- the sampler of (L, k) -------------------------------------------------------------
class LinfLatentSampler:
    """Exact draws of (L, k) with P(L, k) proportional to q^L 1{|k_i| <= m_i L for all i}, q = exp(-a).

    With every m_i = 1 the marginal of k is the l_inf lattice law
    P(k) proportional to q^{||k||_inf}; in general it is q^{max_i ceil(|k_i| / m_i)},
    the proposal of :class:`knorm.noise.lattice.LatticeKNormNoise` for polytopes
    whose box is far from a cube.

    Parameters
    ----------
    m : tuple of int
        Per-axis multipliers m_i >= 1 (its length is the dimension d).
    a : Fraction
        The rate a > 0 per unit of L.

    Attributes
    ----------
    j : int
        Digits of L below the tabulated part: L = 2^j H + R.
    acceptance : float or None
        1.0 when j = 0 (no rejection), else None (about exp(-a 2^j)).

    Notes
    -----
    L = 2^j H + R with R on {0, ..., 2^j - 1}. H is drawn from its tabulated law
    P(H = h) proportional to prod_i B_{h,i} exp(-a 2^j h),
    B_{h,i} = m_i (2^(j+1) (h + 1) - 2) + 1 (:class:`InversionTable`), R
    uniformly; then (H, R) is kept with probability exp(-a R) (CKS Algorithm 1)
    times prod_i (2 m_i L + 1) / B_{h,i}, the second factor realised by uniform
    integers W_i on {0, ..., B_{h,i} - 1}: kept iff every W_i <= 2 m_i L, and
    then k_i = W_i - m_i L is uniform on {-m_i L, ..., m_i L}. B_{h,i} >= 2 m_i L + 1
    because L <= 2^j h + 2^j - 1. The accepted (h, r, k) have probability
    proportional to q^(2^j h) exp(-a r) 1{|k_i| <= m_i L} = q^L 1{|k_i| <= m_i L},
    the latent law; summing over L >= max_i ceil(|k_i| / m_i) gives the marginal.
    With j = 0, B_{h,i} = 2 m_i L + 1 and nothing is rejected. j is the smallest
    with a table of at most 2^15 entries, so beta = a 2^j is at most about
    (d + 12 sqrt(d) + 40) / 2^15 and the acceptance about exp(-beta).
    """

    def __init__(self, m, a):
        self.m, self.a = tuple(int(v) for v in m), Fraction(a)
        self.d = d = len(self.m)
        j = 0
        while _estimated_length(d, self.a * (1 << j)) > _RADIUS_TABLE:
            j += 1
        self.j, self.beta = j, self.a * (1 << j)
        self.table = _table(self.m, j, self.beta)
        self.acceptance = 1.0 if j == 0 else None
        self._mv: Any = None if set(self.m) == {1} else np.array(self.m, dtype=np.int64)

    def _proposals(self, n, rng):
        """n proposals (L, k) and whether each is accepted (k is that of the proposal either way)."""
        d, j, a, mv = self.d, self.j, self.a, self._mv
        H = self.table.sample(n, rng)
        ok: Any = None
        if j:
            R = rng.integers(0, 1 << j, size=n, dtype=np.int64)
            if self.beta <= 1:  # a R < 1: CKS Algorithm 1; its first round fails but with probability a R
                num = R * a.numerator
                ok = rng.integers(0, a.denominator, size=n, dtype=np.int64) >= num  # round 1 failed: K = 1
                idx = np.flatnonzero(~ok)  # round 1 succeeded (probability a R): go on
                if idx.size:
                    ok[idx] = discrete._continue_alg1(num[idx], a.denominator, 2, rng)
            else:
                ok = discrete._bernoulli_exp(R * a.numerator, np.int64(a.denominator), rng)
            L = (H << j) + R
            top = ((H + 1) << (j + 1)) - 2  # B_{h,i} = m_i top + 1
        else:
            L = H
            top = 2 * H
        if mv is None:
            top += 1  # the bound B_h itself
        k = np.empty((n, d), dtype=np.int64)
        rows = max(1, _BOX_BLOCK // d)
        for s in range(0, n, rows):  # blocks of rows keep the (rows, d) temporaries small
            Lb, tb = L[s : s + rows], top[s : s + rows]
            half = Lb[:, None] if mv is None else Lb[:, None] * mv  # m_i L
            w = uniform_rows(tb if mv is None else tb[:, None] * mv + 1, d, rng)
            if j:  # kept iff every W_i <= 2 m_i L: find the few failing entries
                fail = np.flatnonzero(w > 2 * half)
                if fail.size:
                    ok[s + fail // d] = False
            np.subtract(w, half, out=k[s : s + rows])
        return L, k, ok

    def draw(self, n, rng):
        """Draw n accepted pairs (L, k); rejected proposals are proposed again, row by row.

        Parameters
        ----------
        n : int
            Number of pairs.
        rng : numpy.random.Generator
            Source of randomness (only ``integers`` is called).

        Returns
        -------
        L : ndarray of int64, shape (n,)
            The latent radii.
        k : ndarray of int64, shape (n, d)
            The lattice points.
        proposals : int
            Proposals used (n when j = 0).
        """
        L, k, ok = self._proposals(n, rng)
        proposals = n
        bad = np.empty(0, dtype=np.intp) if ok is None else np.flatnonzero(~ok)
        while bad.size:  # each row is its own run of the rejection sampler
            L2, k2, ok2 = self._proposals(bad.size, rng)
            proposals += bad.size
            good = bad[ok2]
            L[good], k[good] = L2[ok2], k2[ok2]
            bad = bad[~ok2]
        return L, k, proposals


class GeometricSumSampler(LinfLatentSampler):
    """The same latent law for large d, without a table: L from a sum of d + 1 exact geometrics.

    The radius tables' weights have about d log2(L) bits, so their build grows like d^2
    and takes seconds beyond a few hundred dimensions. Here L is proposed from the
    negative binomial P(L) proportional to C(L + d, d) q^L (d + 1 exact geometrics,
    :func:`knorm.noise.discrete._geometric`) and kept with probability
    prod_i (2 m_i L + 1) / (2 m_i (L + i)), realised by uniform integers W_i on
    {0, ..., 2 m_i (L + i) - 1}: kept iff every W_i <= 2 m_i L, and then
    k_i = W_i - m_i L. C(L + d, d) is proportional to prod_i (L + i), so the kept pairs have
    probability proportional to q^L prod_i (2 m_i L + 1) times the uniform law on the box,
    the latent law. The acceptance is about exp(-d a / 2) (pilot-estimated by callers).

    Parameters
    ----------
    m : tuple of int
        Per-axis multipliers m_i >= 1.
    a : Fraction
        The rate a > 0 per unit of L.
    """

    def __init__(self, m, a):
        self.m, self.a = tuple(int(v) for v in m), Fraction(a)
        self.d = len(self.m)
        self.j, self.beta, self.table = 0, self.a, None
        self.acceptance = None
        self._mv = np.array(self.m, dtype=np.int64)
        self._steps = np.arange(1, self.d + 1, dtype=np.int64)

    def _proposals(self, n, rng):
        d, a, mv = self.d, self.a, self._mv
        L = discrete._geometric(a.numerator, a.denominator, n * (d + 1), rng).reshape(n, d + 1).sum(axis=1)
        ok = np.ones(n, dtype=bool)
        k = np.empty((n, d), dtype=np.int64)
        rows = max(1, _BOX_BLOCK // d)
        for s in range(0, n, rows):
            Lb = L[s : s + rows, None]
            w = uniform_rows(2 * mv * (Lb + self._steps), d, rng)
            half = Lb * mv
            fail = np.flatnonzero(w > 2 * half)
            if fail.size:
                ok[s + fail // d] = False
            np.subtract(w, half, out=k[s : s + rows])
        return L, k, ok


@functools.lru_cache(maxsize=64)
def linf_sampler(d, s, t, m=None):
    """Return the (cached) :class:`LinfLatentSampler` of rate s / t, multipliers m (default all 1).

    Parameters
    ----------
    d : int
        Dimension.
    s, t : int
        The rate a = s / t.
    m : tuple of int, optional
        Per-axis multipliers (length d); all ones by default.

    Returns
    -------
    LinfLatentSampler
        The sampler (a :class:`GeometricSumSampler` beyond 200 dimensions, or when the
        radius table would exceed ``MAX_TABLE`` entries).
    """
    m = m or (1,) * d
    if d <= _MAX_TABLE_DIM:
        try:
            return LinfLatentSampler(m, Fraction(s, t))
        except TableTooLarge:  # the length estimate was short: no table, the same law
            pass
    return GeometricSumSampler(m, Fraction(s, t))


def linf_latent(d, s, t, n, rng, m=None):
    """Draw n exact pairs (L, k) with P(L, k) proportional to q^L 1{|k_i| <= m_i L}, q = exp(-s/t).

    Parameters
    ----------
    d : int
        Dimension.
    s, t : int
        The rate s / t per unit of L.
    n : int
        Number of pairs.
    rng : numpy.random.Generator
        Source of randomness (only ``integers`` is called).
    m : tuple of int, optional
        Per-axis multipliers (length d); all ones by default.

    Returns
    -------
    L : ndarray of int64, shape (n,)
        The latent radii.
    k : ndarray of int64, shape (n, d)
        The lattice points.
    """
    sampler = linf_sampler(d, s, t, m)
    cap = max(64, (1 << 22) // (d + 1))
    if n <= cap:
        L, k, _ = sampler.draw(n, rng)
        return L, k
    L_out = np.empty(n, dtype=np.int64)
    k_out = np.empty((n, d), dtype=np.int64)
    for start in range(0, n, cap):
        stop = min(n, start + cap)
        L_out[start:stop], k_out[start:stop], _ = sampler.draw(stop - start, rng)
    return L_out, k_out
