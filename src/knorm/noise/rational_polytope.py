"""Norm balls made rational: the polytope K' = {u : N u <= D} with integer N and D.

A :class:`RationalPolytope` has an exact rational gauge on lattice points (the
integers N_i . k, formed in int64 or, where that is exact, in binary64), a certified
box from linear programs, and exact rounding slacks; :func:`to_rational_polytope`
rounds a norm ball outward to one. They are the balls of the polytope sampler of
:class:`~knorm.noise.lattice.LatticeKNormNoise`.

References
----------
Awan & Slavkovic (2021), Section 2 (K-norm mechanisms, norm balls).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import linprog

from knorm._validation import param_error
from knorm.geometry import (
    IntersectionBall,
    K2Ball,
    LinearImage,
    LpBall,
    NormBall,
    Polytope,
    ScaledBall,
)
from knorm.noise import discrete
from knorm.noise.discrete import INT64_MAX

__all__ = ["RationalPolytope", "to_rational_polytope"]

# Directions on the half circle of K2Ball's outer polygon (each used with its opposite).
_K2_DIRECTIONS = 64
# Relative widening of a support value computed in binary64 (covers its rounding).
_SUPPORT_WIDENING = Fraction(1e-12)
# l1 balls are converted (2^d facets) only up to this dimension.
_MAX_L1_FACET_DIM = 12
# Relative and absolute padding of the LP box of a RationalPolytope (HiGHS's
# tolerances are about 1e-9 relative on these exactly representable data).
_BOX_PAD_REL = 1e-7
_BOX_PAD_ABS = 1
# Products N k are formed in blocks of at most this many entries.
_GAUGE_BLOCK = 1 << 20
# Proposals per chunk of RationalPolytope._numerator_below (keeps its (rows, chunk) products in cache).
_GAUGE_CHUNK = 1 << 13
# Products N k are formed in binary64 (BLAS) when sum_j |N_ij| |k_j| stays below this (exact there).
_FLOAT_EXACT = 1 << 53
# Largest m n k of one binary64 product: OpenBLAS runs single-threaded up to 2^18 (its threads cost
# milliseconds per call on small products, measured 7-8 ms on a 2-core machine).
_BLAS_MNK = 1 << 18


# -- exact rationals --------------------------------------------------------------
def _fraction(value, name, owner, *, positive=True):
    """``value`` (int, Fraction, or finite float, read exactly) as a positive Fraction."""
    rule = "a positive finite rational (int, float or fractions.Fraction)"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise param_error(name, owner, rule, value, TypeError)
    if isinstance(value, numbers.Rational):
        frac = Fraction(int(value.numerator), int(value.denominator))
    else:
        value = float(value)
        if not math.isfinite(value):
            raise param_error(name, owner, rule, value)
        frac = Fraction(value)
    if positive and frac <= 0:
        raise param_error(name, owner, rule, value)
    return frac


def _check_axis_scale(axis_scale, dim, owner):
    """A tuple of ``dim`` Fractions, each a positive power of two, or None."""
    if axis_scale is None:
        return None
    rule = f"None or {dim} positive powers of two (floats)"
    arr = np.atleast_1d(np.asarray(axis_scale, dtype=object))
    if arr.ndim != 1 or len(arr) not in (1, dim):
        raise param_error("axis_scale", owner, rule, axis_scale)
    out = []
    for v in arr:
        f = _fraction(v, "axis_scale", owner)
        if f.numerator & (f.numerator - 1) or f.denominator & (f.denominator - 1):
            raise param_error("axis_scale", owner, rule, v)
        out.append(f)
    return tuple(out * dim if len(out) == 1 else out)


# -- rational polytopes -------------------------------------------------------------
class RationalPolytope:
    """A symmetric polytope K' = {u : N u <= D} with an integer matrix N and a positive integer D.

    The gauge of a lattice point, ||k||_{K'} = max_i N_i . k / D, is an exact
    rational: the integers N_i . k are formed in int64, or in binary64 (BLAS) when
    every partial sum stays below 2^53, where binary64 is exact.

    Parameters
    ----------
    N : array_like of int, shape (m, d)
        Integer rows; the opposite of every row is added if missing, zero rows
        are dropped and repeated rows kept once.
    D : int
        Common positive denominator (at most 2^62).

    Attributes
    ----------
    N : ndarray of int64, shape (m, d)
        The rows, sorted and symmetric.
    D : int
        The denominator.
    box : ndarray of int64, shape (d,)
        Half-widths B with K' inside [-B, B] (linear programs, rounded up and padded).
    dim : int
        Dimension d.

    Raises
    ------
    NotANormBallError
        If K' is unbounded.

    Notes
    -----
    The box comes from d linear programs max u_j over K' = {u : (N / D) u <= 1}
    (HiGHS; max -u_j is the same by symmetry); the optimum is rounded up after a
    relative padding of 1e-7 and one more unit, far above the solver's tolerance.

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (norm balls).

    Examples
    --------
    >>> P = RationalPolytope([[1, 1], [1, -1]], 4)  # the l1 ball of radius 4
    >>> P.box.tolist(), int(P.gauge_numerator([3, -1])), P.D
    ([5, 5], 4, 4)
    >>> P.norm([3, -1]).tolist()
    [Fraction(1, 1)]
    """

    def __init__(self, N, D):
        owner = "RationalPolytope"
        try:
            arr = np.asarray(N)
        except (TypeError, ValueError) as err:
            raise param_error("N", owner, "a 2-D array of ints", N, TypeError) from err
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise param_error("N", owner, "a 2-D array of ints with at least one row", N)
        arr = discrete._check_int_array(arr, "N", owner, -INT64_MAX)
        self.D = discrete._check_int(D, "D", owner, 1, 2**62)
        arr = arr[np.any(arr != 0, axis=1)]
        arr = np.unique(np.vstack([arr, -arr]), axis=0)
        if not len(arr):
            raise _not_a_ball("every row of N is zero, so K' is all of R^d")
        self.N = arr
        self.dim = arr.shape[1]
        absn = np.abs(arr)
        if absn.sum(axis=1, dtype=np.float64).max() < 2.0**62:  # the int64 sums cannot wrap around
            self._row_l1 = int(absn.sum(axis=1).max())
        else:
            self._row_l1 = max(sum(row) for row in absn.tolist())
        self.box = self._lp_box()
        # Row blocks of 16, 64, 256, ... rows, in a fixed shuffled order, for early rejection; binary64
        # copies (exact: |N_ij| <= row_l1 < 2^53) for the float gauge (see _float_exact).
        order = np.random.default_rng(len(arr)).permutation(len(arr))
        self._blocks, start, size = [], 0, 16
        while start < len(arr):
            self._blocks.append(arr[order[start : start + size]].copy())
            start, size = start + size, 4 * size
        self._float = self._row_l1 < _FLOAT_EXACT
        self._blocks_f: Any = [b.astype(np.float64) for b in self._blocks] if self._float else None
        self._N_f: Any = arr.astype(np.float64) if self._float else None

    def _lp_box(self):
        d = self.dim
        # The same set, well scaled for the solver: {u = S v : (N S / D) v <= 1} with S = D / max |N_ij|, so
        # the coefficients are at most 1 and v is of order 1 (with N / D, about 2e-8 on fine lattices, HiGHS
        # returned a box 9 % short of the vertices of K' and the sampler refused; issue 21).
        S = self.D / float(np.abs(self.N).max())
        A = self.N * (S / self.D)
        b = np.ones(len(A))
        box = np.zeros(d, dtype=np.int64)
        for j in range(d):
            cost = np.zeros(d)
            cost[j] = -1.0  # by symmetry max u_j = max -u_j
            for method in ("highs", "highs-ipm"):
                res = linprog(cost, A_ub=A, b_ub=b, bounds=(None, None), method=method)
                if res.status in (0, 2, 3):
                    break
            if res.status in (2, 3):
                raise _not_a_ball(f"maximizing u[{j}] over K' is unbounded")
            if res.status != 0:
                raise RuntimeError(f"RationalPolytope: linprog failed while bounding u[{j}]: {res.message}")
            box[j] = math.floor(-res.fun * S * (1 + _BOX_PAD_REL)) + _BOX_PAD_ABS
        return box

    def _check_points(self, k, owner):
        k = discrete._check_int_array(k, "k", owner, -INT64_MAX)
        if k.ndim == 0 or k.shape[-1] != self.dim:
            raise ValueError(
                f"The 'k' parameter of {owner} must have last axis of length {self.dim}. Got shape {k.shape} instead."
            )
        # Every N_i . k is then within int64: |N_i . k| <= ||N_i||_1 ||k||_inf.
        if k.size and int(np.abs(k).max()) > INT64_MAX // self._row_l1:
            raise ValueError(
                f"The 'k' parameter of {owner} must have entries of absolute value at most "
                f"{INT64_MAX // self._row_l1} (so that N k fits in int64). Got {int(np.abs(k).max())} instead."
            )
        return k

    @staticmethod
    def _block_max(rows, pts):
        """int64 max_i rows_i . p for each point p of ``pts``, in pieces of at most _BLAS_MNK multiply-adds.

        For binary64 ``rows``/``pts`` the products must be exact integers (see :meth:`_float_exact`);
        the maximum of exactly represented integers is exact, so it is taken in binary64 and only
        the maxima are converted to int64 (exactly). The product is laid out with the longer
        of (rows, points) along the contiguous axis, where numpy's maximum is fast.
        """
        if rows.size > _BLAS_MNK and len(rows) > 1:  # too many rows for one call even with one point: split them
            part = max(1, _BLAS_MNK // rows.shape[1])
            out = RationalPolytope._block_max(rows[:part], pts)
            for s in range(part, len(rows), part):
                np.maximum(out, RationalPolytope._block_max(rows[s : s + part], pts), out=out)
            return out
        step = max(1, _BLAS_MNK // rows.size)
        wide = len(rows) <= min(len(pts), step)  # (rows, points) layout, maximum over axis 0
        if len(pts) <= step:
            if wide:
                return (rows @ pts.T).max(axis=0).astype(np.int64, copy=False)
            return (pts @ rows.T).max(axis=1).astype(np.int64, copy=False)
        out = np.empty(len(pts), dtype=np.int64)
        for s in range(0, len(pts), step):
            if wide:
                out[s : s + step] = (rows @ pts[s : s + step].T).max(axis=0)
            else:
                out[s : s + step] = (pts[s : s + step] @ rows.T).max(axis=1)
        return out

    def _float_exact(self, k):
        """Whether N k may be formed in binary64 for the int64 points k: row_l1 max|k| < 2^53.

        Proof of exactness. Every |N_ij| <= row_l1 = max_i sum_j |N_ij| and every |k_j| <= max|k|
        is below 2^53, so both convert to binary64 exactly. Each product N_ij k_j and each partial
        sum of them, in any order and grouping, is an integer of absolute value at most
        sum_j |N_ij| |k_j| <= row_l1 max|k| < 2^53, and every such integer is a binary64 number:
        a correctly rounded multiply, add or fused multiply-add of exact values whose exact result
        is representable returns that result. So a BLAS dgemm, which forms each entry of N k as a
        sum of its d products (any summation order, blocking, vectorisation, FMA or not), returns
        the exact integers N_i . k; their maximum is exact too, and it is converted back to
        int64 (exactly) before any comparison with a limit. The only assumption is that the
        dgemm computes sums of those products (true of OpenBLAS, MKL, BLIS, Accelerate and
        numpy's own loops; a Strassen-type algorithm would form other intermediates, and none
        of these uses one for dgemm).
        """
        if not self._float:
            return False
        if not k.size:
            return True
        return self._row_l1 * max(int(k.max()), -int(k.min())) < _FLOAT_EXACT

    def _numerator(self, k, use_float=None):
        """max_i N_i . k for checked int64 rows k (shape (..., d)), block by block.

        ``use_float``: form N k in binary64 (exact, see :meth:`_float_exact`); None decides by the
        bound, True is only for tests (wrong beyond the bound).
        """
        flat = k.reshape(-1, self.dim)
        if use_float is None:
            use_float = self._float_exact(flat)
        out = np.empty(len(flat), dtype=np.int64)
        step = max(1, _GAUGE_BLOCK // len(self.N))
        N = self._N_f if use_float else self.N
        for s in range(0, len(flat), step):
            part = flat[s : s + step]
            out[s : s + step] = self._block_max(N, part.astype(np.float64) if use_float else part)
        return out.reshape(k.shape[:-1])

    def _numerator_below(self, k, limit, use_float=None):
        """(alive, num): the rows of ``k`` with max_i N_i . k < limit, and that maximum for them.

        Rows of N are tried in growing blocks, in a fixed shuffled order, and a point
        leaves as soon as one row reaches its limit (most rejected proposals do so in
        the first block). Points go through in chunks of 8192; N k is formed in binary64
        when :meth:`_float_exact` allows (exact integers, whose maxima are converted to
        int64 before any comparison), in int64 otherwise. ``use_float`` as in :meth:`_numerator`.
        """
        if use_float is None:
            use_float = self._float_exact(k)
        blocks = self._blocks_f if use_float else self._blocks
        alive_parts, num_parts = [], []
        for s in range(0, len(k), _GAUGE_CHUNK):
            kc = k[s : s + _GAUGE_CHUNK]
            if use_float:
                kc = kc.astype(np.float64)
            lim = limit[s : s + _GAUGE_CHUNK]
            run = self._block_max(blocks[0], kc)
            idx = np.flatnonzero(run < lim)
            run = run[idx]
            for rows in blocks[1:]:
                if not idx.size:
                    break
                v = self._block_max(rows, kc[idx])
                np.maximum(v, run, out=v)
                keep = v < lim[idx]
                idx, run = idx[keep], v[keep]
            alive_parts.append(idx + s)
            num_parts.append(run)
        if not alive_parts:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int64)
        return np.concatenate(alive_parts), np.concatenate(num_parts)

    def gauge_numerator(self, k):
        """Return the integer D ||k||_{K'} = max_i N_i . k of lattice points.

        Parameters
        ----------
        k : array_like of int, shape (..., d)
            Lattice points, with entries small enough for N k to fit in int64.

        Returns
        -------
        int64 or ndarray of int64
            One numerator per point; ||k||_{K'} is it divided by :attr:`D`.
        """
        return self._numerator(self._check_points(k, "RationalPolytope.gauge_numerator"))[()]

    def norm(self, k):
        """Return ||k||_{K'} exactly.

        Parameters
        ----------
        k : array_like of int, shape (..., d)
            Lattice points.

        Returns
        -------
        ndarray of Fraction (object dtype)
            One exact norm per point (at least 1-D).
        """
        num = np.atleast_1d(self.gauge_numerator(k))
        return np.array([Fraction(int(v), self.D) for v in num.ravel()], dtype=object).reshape(num.shape)

    def contains(self, k):
        """Return whether each lattice point lies in K' (N k <= D).

        Parameters
        ----------
        k : array_like of int, shape (..., d)
            Lattice points.

        Returns
        -------
        bool or ndarray of bool
            One flag per point.
        """
        return self.gauge_numerator(k) <= self.D

    def rounding_slack(self, gammas):
        """Return sup ||w||_{K'} over the box |w_j| <= gammas_j, exactly.

        Parameters
        ----------
        gammas : float or sequence of floats
            Half-widths of the box, positive (read exactly).

        Returns
        -------
        Fraction
            The value max_i sum_j |N_ij| gammas_j / D: the norm of a vector w of
            the box is max_i N_i . w / D, and each N_i . w peaks at the corner
            sign(N_i) gammas.
        """
        g = _gammas(gammas, self.dim, "RationalPolytope.rounding_slack")
        absn = np.abs(self.N)
        # Rank the rows in binary64 (each sum is within a relative 1e-12 of its exact value),
        # then take the exact maximum over the rows that can still be the largest.
        approx = absn.astype(float) @ np.array([float(v) for v in g])
        candidates = np.flatnonzero(approx >= approx.max() * (1 - 1e-9))
        exact = (sum((int(absn[i, j]) * g[j] for j in range(self.dim)), Fraction(0)) for i in candidates)
        return max(exact) / self.D

    def __repr__(self):
        return f"RationalPolytope(dim={self.dim}, {len(self.N)} rows, D=2^{math.log2(self.D):g})"


def _not_a_ball(why):
    from knorm.geometry import NotANormBallError

    return NotANormBallError(f"RationalPolytope: the set is not a norm ball because {why}.")


def _gammas(gammas, dim, owner):
    arr = np.atleast_1d(np.asarray(gammas, dtype=object))
    if arr.ndim != 1 or len(arr) not in (1, dim):
        raise param_error("gammas", owner, f"a positive float or {dim} positive floats", gammas)
    out = [_fraction(v, "gammas", owner) for v in arr]
    return out * dim if len(out) == 1 else out


# -- conversion of balls --------------------------------------------------------------
def _halfspaces(ball, owner):
    """Rows (c_i, h_i) with K inside every {u : c_i . u <= h_i}, and a certified box of K.

    c_i are float vectors (exact dyadic rationals), h_i positive Fractions, the box
    a float array of half-widths.
    """
    if isinstance(ball, ScaledBall):
        rows, box = _halfspaces(ball.base, owner)
        f = Fraction(ball.factor)
        return [(c, h * f) for c, h in rows], box * ball.factor
    if isinstance(ball, Polytope):
        hs = ball.halfspaces
        if hs is None:
            raise ValueError(
                f"{owner} cannot convert {ball!r}: its facets are unknown (a Polytope.from_points above "
                "max_qhull_dim); build it with Polytope.from_halfspaces or a larger max_qhull_dim."
            )
        G, _ = hs
        return [(g, Fraction(1)) for g in G], ball.bounding_box()
    if isinstance(ball, LpBall):
        d, rho = ball.dim, Fraction(ball.radius)
        if math.isinf(ball.p):
            eye = np.eye(d)
            return [(s * e, rho) for e in eye for s in (1.0, -1.0)], ball.bounding_box()
        if ball.p == 1 and d <= _MAX_L1_FACET_DIM:
            signs = np.array(np.meshgrid(*([[-1.0, 1.0]] * d), indexing="ij")).reshape(d, -1).T
            return [(s, rho) for s in signs], ball.bounding_box()
        what = f"an l1 ball in dimension {d} > {_MAX_L1_FACET_DIM} (2^d facets)" if ball.p == 1 else f"{ball!r}"
        raise ValueError(
            f"{owner} cannot convert {what}: only polytopes have an exact rational form; use the "
            "continuous KNormNoise, or LatticeKNormNoise directly on an l1 / l_inf LpBall."
        )
    if isinstance(ball, K2Ball):
        theta = np.pi * np.arange(_K2_DIRECTIONS) / _K2_DIRECTIONS
        dirs = np.stack([np.cos(theta), np.sin(theta)], axis=1)
        dirs[_K2_DIRECTIONS // 2] = (0.0, 1.0)  # exact axis directions
        dirs = np.vstack([dirs, -dirs])
        h = ball.support(dirs)
        return [(c, Fraction(float(v)) * (1 + _SUPPORT_WIDENING)) for c, v in zip(dirs, h)], ball.bounding_box()
    if isinstance(ball, LinearImage):
        # A K = {v : c . A^{-1} v <= h}: map each row of the base, then take the exact support
        # of A K in the mapped direction (widened against rounding), so every row is a true
        # tangent halfspace of A K whatever the rounding of A^{-T} c.
        rows, base_box = _halfspaces(ball.base, owner)
        inv_t = np.linalg.inv(ball.matrix).T
        dirs = np.array([inv_t @ c for c, _ in rows])
        try:
            h = ball.support(dirs)
        except NotImplementedError:
            # No support function (e.g. an intersection): c' . A u = c . u + (A^T c' - c) . u, so
            # h_{AK}(c') <= h_K(c) + ||A^T c' - c||_1 max|u_i| over the certified box of K.
            err = np.abs(dirs @ ball.matrix - np.array([c for c, _ in rows])).sum(axis=1)
            h = np.array([float(hk) for _, hk in rows]) + err * float(np.max(base_box)) * 2
        return [(c, Fraction(float(v)) * (1 + _SUPPORT_WIDENING)) for c, v in zip(dirs, h)], ball.bounding_box()
    if isinstance(ball, IntersectionBall):
        rows = []
        for idx, sub in ball.constraints:
            sub_rows, _ = _halfspaces(sub, owner)
            for c, h in sub_rows:
                full = np.zeros(ball.dim)
                full[idx] = c
                rows.append((full, h))
        return rows, ball.bounding_box()
    raise ValueError(
        f"{owner} cannot convert {ball!r}: only Polytope, ScaledBall, K2Ball, LinearImage and IntersectionBall of "
        "those, and "
        "l1 / l_inf LpBall have an exact rational outer polytope; use the continuous KNormNoise."
    )


def to_rational_polytope(ball, *, axis_scale=None, denominator_bits=30):
    """Round a norm ball outward to a :class:`RationalPolytope` K' that contains it.

    Parameters
    ----------
    ball : NormBall
        A :class:`~knorm.geometry.Polytope` (with known facets), a
        :class:`~knorm.geometry.ScaledBall` of a convertible ball, a
        :class:`~knorm.geometry.K2Ball`, an :class:`~knorm.geometry.IntersectionBall`
        of convertible balls, or an l_inf (any dimension) or l1 (dimension <= 12)
        :class:`~knorm.geometry.LpBall`.
    axis_scale : float or sequence of floats, optional
        Lattice spacings gamma_j, positive powers of two: K' is then the ball in
        lattice units, {k : diag(gamma) k in K}.
    denominator_bits : int, default 30
        D = 2^denominator_bits (at most 2^62).

    Returns
    -------
    RationalPolytope
        K', which contains the ball (in lattice units when ``axis_scale`` is given).

    Raises
    ------
    ValueError
        If the ball cannot be converted (continuous l2 / l_p balls, oracle balls,
        polytopes without facets), or D is too small for its box.

    Notes
    -----
    Write K = {u : g_i . u <= 1} with rows g_i (in lattice units) and let b be a
    certified box of K (the ball's own ``bounding_box``), beta = ||b||_1 < D.
    Rows are rounded toward zero: N_i = trunc((D - beta) g_i), so |N_ij - (D - beta)
    g_ij| < 1 and, for u in K,
    N_i . u <= (D - beta) g_i . u + sum_j |u_j| <= (D - beta) + beta = D.
    This is the outward rounding N = floor(D G / (1 + delta)) with
    delta = beta / (D - beta); rounding toward zero keeps N_{-i} = -N_i, so K' is
    symmetric. Hence K is inside K' and every gauge shrinks:
    ||u||_{K'} <= ||u||_K, so Delta_{K'} <= Delta_K and a certified K-sensitivity
    stays valid for K'.

    K2Ball becomes the outer polygon of its tangent lines c . u <= h(c) for 128
    directions c (64 on a half circle, with their opposites), where h is its exact
    support function widened by a relative 1e-12 to cover binary64 rounding.

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (norm balls, support functions) and
    Section 5.1 (K_2, K_3); ERRATA.md item 3 (K_2).

    Examples
    --------
    >>> from knorm.geometry import k3_ball
    >>> P = to_rational_polytope(k3_ball(), axis_scale=2.0**-4)
    >>> P.dim, len(P.N), P.box.tolist()
    (3, 14, [33, 33, 33])
    >>> bool(P.contains([32, 32, 0])), bool(P.contains([32, 32, 1]))  # a vertex of K_3, in lattice units
    (True, False)
    """
    owner = "to_rational_polytope"
    if not isinstance(ball, NormBall):
        raise TypeError(f"The 'ball' parameter of {owner} must be a NormBall. Got {type(ball).__name__} instead.")
    bits = discrete._check_int(denominator_bits, "denominator_bits", owner, 1, 62)
    scale = _check_axis_scale(axis_scale, ball.dim, owner)
    rows, box = _halfspaces(ball, owner)
    d = ball.dim
    scale = scale or (Fraction(1),) * d
    beta = sum((Fraction(float(b)) / a for b, a in zip(box, scale)), Fraction(0))
    D = 2**bits
    if beta >= D / 2:
        raise ValueError(
            f"The 'denominator_bits' parameter of {owner} must leave D = 2^bits above twice the l1 size "
            f"of the ball's box in lattice units ({float(beta):.4g}). Got {bits} instead."
        )
    factor = D - beta
    N = np.zeros((len(rows), d), dtype=object)
    for i, (c, h) in enumerate(rows):
        for j in np.flatnonzero(c):
            N[i, j] = math.trunc(factor * Fraction(float(c[j])) * scale[j] / h)
    if max((abs(int(v)) for v in N.ravel()), default=0) > 2**62 // d:
        raise ValueError(
            f"{owner}: the rounded rows exceed the int64 budget 2^62 / d; use fewer denominator_bits or a "
            "coarser axis_scale."
        )
    return RationalPolytope(N.astype(np.int64), D)
