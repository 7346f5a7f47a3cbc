"""Ellipsoids around a sensitivity space, for Gaussian noise shaped to the statistic, certified.

N(0, Sigma) added to T is rho-zCDP iff sup over u in S_T of u' Sigma^{-1} u <= 2 rho: for
two Gaussians of the same covariance, D_alpha(N(u, Sigma) || N(0, Sigma)) =
alpha u' Sigma^{-1} u / 2 (Bun & Steinke 2016, Lemma 2.4 and Proposition 1.6, whose proof
carries over to any positive definite Sigma by the change of variables Sigma^{-1/2}). So
Sigma must make the ellipsoid {u : u' Sigma^{-1} u <= 2 rho} contain S_T, equivalently
(the quadratic form is convex) the vertices of a polytope containing S_T.

This module

1. lists certified points V with S_T in conv(V) (:func:`hull_points`): for a finite record
   domain its points; for a degree-2 statistic on a box, the images of the vertices of a
   product of triangles (see :func:`hull_points`);
2. finds a shape: the minimum-trace ellipsoid around V (an SDP, with cvxpy) or the
   minimum-volume one (Khachiyan's algorithm), each by cutting planes over V;
3. certifies it (:func:`certify`): an upper bound on sup_{v in V} v' Sigma0^{-1} v for the
   binary64 factor L actually used (Sigma0 = L L'), rigorous against every rounding, so that
   the noise scale paid is never below what the vertices need. The solver is never trusted.

References
----------
M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications, Extensions, and
Lower Bounds", TCC 2016, arXiv:1605.02065, Proposition 1.6 and Lemma 2.4.
L. G. Khachiyan, "Rounding of polytopes in the real number model of computation",
Mathematics of Operations Research 21(2), 1996; M. J. Todd and E. A. Yildirim, "On
Khachiyan's algorithm for the computation of minimum-volume enclosing ellipsoids",
Discrete Applied Mathematics 155, 2007.
N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM 2002,
Section 3.1 (the bound gamma_n on inner products).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from knorm.sensitivity import SensitivitySpace
from knorm.sensitivity.quadratic import QuadraticStatistic

__all__ = [
    "HullPoints",
    "certify",
    "certify_precision",
    "gram_lower_bound",
    "hull_points",
    "min_trace_shape",
    "min_volume_shape",
]

#: The most record points a shaped Gaussian certifies (pairs: their square). Measured on the
#: 2-core reference machine, a first covariance release under rho fits and certifies 3^6 = 729
#: points in about 8 s and 3^7 = 2187 in about 94 s: beyond 1024 the spherical Gaussian is used.
MAX_POINTS = 1024
_U = 2.0**-53


def _gamma(n):
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of an n-term inner product."""
    return n * _U / (1 - n * _U)


@dataclass(frozen=True)
class HullPoints:
    """Certified points whose hull holds S_T: P - P (replace-one) or P and -P (add/remove-one).

    Parameters
    ----------
    records : ndarray of shape (k, m)
        The points P (binary64; ``error`` bounds their distance to the exact points).
    neighbours : {'replace', 'add_remove'}
        How S_T is built from P.
    method : str
        How P was obtained, for reports.
    error : float, default 0.0
        A bound on the relative rounding of each entry of ``records`` (0 when exact).
    """

    records: np.ndarray
    neighbours: str
    method: str
    error: float = 0.0

    def differences(self):
        """The points of V: P_i - P_j (i < j) or P (its negatives are symmetric), deduplicated.

        Returns
        -------
        ndarray of shape (n, m)
            Rows v with S_T in conv(V union -V). Floating point: for the fit only.
        """
        P = self.records
        if self.neighbours != "replace":
            return np.unique(P, axis=0)
        i, j = np.triu_indices(len(P), 1)
        return np.unique(P[i] - P[j], axis=0)


def _triangle(lo, hi):
    """Vertices of a triangle holding {(z, z^2) : z in [lo, hi]}: the chord's ends and the tangents' meeting point.

    The curve is convex, so it lies above its tangents at lo and hi and below its chord:
    in the triangle (lo, lo^2), (hi, hi^2), ((lo + hi) / 2, lo hi).
    """
    return ((lo, lo * lo), (hi, hi * hi), ((lo + hi) / 2, lo * hi))


def _quadratic_points(stat):
    """P for t(z) = z' A_j z + b_j' z on a box: t~ at the vertices of a product of triangles and intervals.

    Put s_i for z_i^2. Then t~(z, s) = sum_i A_j[i, i] s_i + sum_{i != k} A_j[i, k] z_i z_k + b_j' z
    is affine in each factor (z_i, s_i) when the others are fixed, and (z_i, s_i) lies in
    the triangle of :func:`_triangle` (or z_i in [lo_i, hi_i] when no z_i^2 appears). The
    image of a product of polytopes under a map affine in each factor lies in the hull of
    the images of the products of their vertices (fix all factors but one: the image of
    that factor is in the hull of its vertices' images; induct). So
    t(D) is in Hull(t~(vertices)) =: Hull(P). Computed exactly (integers over a power of two),
    then rounded once.
    """
    A, b = np.asarray(stat.A, float), np.asarray(stat.b, float)
    const = np.asarray(stat.const, float)  # cancels in P - P; part of t(D) for add/remove neighbours
    d = stat.record_dim
    squared = [bool(np.any(A[:, i, i] != 0)) for i in range(d)]
    lows = [Fraction(float(v)) for v in stat.lower]
    highs = [Fraction(float(v)) for v in stat.upper]
    factors = [_triangle(lo, hi) if sq else ((lo, None), (hi, None)) for lo, hi, sq in zip(lows, highs, squared)]
    count = math.prod(len(f) for f in factors)
    if count > MAX_POINTS:
        raise ValueError(
            f"The shaped Gaussian needs the {count} vertex images of the statistic's relaxation, more than "
            f"{MAX_POINTS} (their pairs are certified one by one): use shape='spherical'."
        )
    # Exact rationals as integers over one power-of-two denominator each (every binary64 number, and the
    # triangles' (lo + hi) / 2 and lo hi, is a dyadic rational): the sums below are exact integer arithmetic.
    z_num, z_den = _dyadic([c[0] for f in factors for c in f])
    s_num, s_den = _dyadic([c[1] if c[1] is not None else c[0] * c[0] for f in factors for c in f])
    a_num, a_den = _dyadic(A.ravel().tolist())
    b_num, b_den = _dyadic(b.ravel().tolist())
    c_num, c_den = _dyadic(const.tolist())
    den = max(a_den * s_den, a_den * z_den * z_den, b_den * z_den, c_den)  # all powers of two: a common multiple
    starts = np.cumsum([0] + [len(f) for f in factors])
    index = np.array(list(itertools.product(*[range(len(f)) for f in factors])), dtype=np.int64).reshape(count, d)
    Z = np.array(z_num, dtype=object)[index + starts[:-1]]  # (count, d) numerators of z
    S = np.array(s_num, dtype=object)[index + starts[:-1]]
    An = np.array(a_num, dtype=object).reshape(stat.dim, d, d)
    diag = np.stack([An[:, i, i] for i in range(d)])  # (d, m)
    off = An.copy()
    for i in range(d):
        off[:, i, i] = 0
    ZZ = (Z[:, :, None] * Z[:, None, :]).reshape(count, d * d)
    num = (S @ diag) * (den // (a_den * s_den))
    num = num + (ZZ @ off.reshape(stat.dim, d * d).T) * (den // (a_den * z_den * z_den))
    num = num + (Z @ np.array(b_num, dtype=object).reshape(stat.dim, d).T) * (den // (b_den * z_den))
    num = num + np.array(c_num, dtype=object)[None, :] * (den // c_den)
    rows = np.empty(num.shape)
    exact = True
    for idx, v in np.ndenumerate(num):
        f = int(v) / den  # Python's int true division: correctly rounded
        p, q = f.as_integer_ratio()
        exact = exact and p * den == int(v) * q
        rows[idx] = f
    return rows, (0.0 if exact else _U)


def _dyadic(values):
    """(integer numerators, D): values = numerators / D exactly, D a power of two (binary64 or dyadic Fractions)."""
    fr = [Fraction(v) for v in values]
    den = max((f.denominator for f in fr), default=1)
    assert den & (den - 1) == 0, "dyadic rationals only"
    return [f.numerator * (den // f.denominator) for f in fr], den


def hull_points(space):
    """Return certified points whose hull holds the sensitivity space S_T of ``space``.

    Parameters
    ----------
    space : SensitivitySpace
        With finite ``record_points``, or an additive statistic given as a
        :class:`~knorm.sensitivity.quadratic.QuadraticStatistic` on a box.

    Returns
    -------
    HullPoints
        P, with S_T in conv(P - P) (replace-one) or conv(P union -P) (add/remove-one).

    Raises
    ------
    ValueError
        For any other space: no finite certified point set is known for it.

    Notes
    -----
    Replace-one neighbours: S_T = t(D) - t(D) (paper Section 2; errata item 5), so
    t(D) in Hull(P) gives S_T in Hull(P) - Hull(P) = Hull(P - P). Add/remove-one:
    S_T = t(D) union -t(D). For a degree-2 statistic P is the relaxation of
    :func:`_quadratic_points`, an outer approximation (exact for multilinear statistics).
    """
    if not isinstance(space, SensitivitySpace):
        raise TypeError(f"hull_points needs a SensitivitySpace. Got {type(space).__name__} instead.")
    if space.record_points is not None:
        P = np.asarray(space.record_points, float)
        method, error = "the finite record domain", 0.0
    elif isinstance(space.statistic, QuadraticStatistic):
        P, error = _quadratic_points(space.statistic)
        method = "vertex images of a product of triangles around (z_i, z_i^2) (a degree-2 statistic on a box)"
    else:
        raise ValueError(
            f"The shaped Gaussian needs certified vertices of S_T: a sensitivity space with finite record_points or "
            f"a degree-2 statistic on a box (QuadraticStatistic). Got {space!r}, which has neither; use "
            "shape='spherical' with its l2 sensitivity."
        )
    if P.ndim != 2 or P.shape[1] != space.dim:
        raise ValueError(
            f"The shaped Gaussian needs record points of the space's dimension {space.dim}. Got points of shape "
            f"{P.shape} instead (a reduced or flat space): use shape='spherical'."
        )
    if len(P) > MAX_POINTS:
        raise ValueError(
            f"The shaped Gaussian certifies every pair of the {len(P)} record points, more than {MAX_POINTS}: use "
            "shape='spherical'."
        )
    return HullPoints(P, space.neighbours, method, error)


# -- the shapes --------------------------------------------------------------------------------
def _start(V, k=500):
    norms = np.einsum("ij,ij->i", V, V)
    return list(np.argsort(-norms)[: min(k, len(V))])


def _refine(V, solve, *, tol=1e-6, add=300, max_rounds=60):
    """Cutting planes: fit M on a working set, add the points of V with v' M v > 1, until none is (within tol)."""
    work = _start(V)
    for _ in range(max_rounds):
        M = solve(V[work])
        q = np.einsum("ij,jk,ik->i", V, M, V)
        worst = float(q.max())
        if worst <= 1 + tol:
            return M / max(worst, 1.0)
        known = set(work)
        new = [int(i) for i in np.argsort(-q)[:add] if q[i] > 1 + tol / 10 and int(i) not in known]
        if not new:
            return M / worst
        work += new
    return M / worst  # the certification pays any excess; this only loses tightness


def min_trace_shape(V, *, solver=None, basis=None):
    """Return M, positive definite, with v' M v <= 1 on V (nearly) and tr(M^{-1}) minimal: the min-trace ellipsoid.

    Parameters
    ----------
    V : ndarray of shape (n, m)
        Points (the ellipsoid is centred; -V is covered by symmetry).
    solver : str, optional
        A cvxpy solver name ('CLARABEL' by default, else 'SCS').
    basis : sequence of ndarray of shape (m, m), optional
        Symmetric matrices B_i: M is sought as sum theta_i B_i (a family invariant under the
        symmetries of V holds the optimum, and the SDP then has len(basis) variables).

    Returns
    -------
    ndarray of shape (m, m)
        The shape, from the solver: to be certified (:func:`certify`), never trusted.

    Raises
    ------
    ImportError
        Without cvxpy (``pip install knorm[zcdp]``).
    """
    try:
        import cvxpy as cp
    except ImportError as err:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "shape='trace' needs cvxpy, an optional dependency: pip install 'knorm[zcdp]' (or use shape='volume', "
            "which needs nothing more, or 'spherical')."
        ) from err
    m = V.shape[1]
    name = solver or ("CLARABEL" if "CLARABEL" in cp.installed_solvers() else "SCS")
    if basis is not None:
        B = [np.asarray(b, dtype=float) for b in basis]

        def solve_family(W):
            theta = cp.Variable(len(B))
            F = np.stack([np.einsum("ij,jk,ik->i", W, b, W) for b in B], axis=1)  # v' B_i v
            M = cp.sum([theta[i] * B[i] for i in range(len(B))])
            problem = cp.Problem(cp.Minimize(cp.tr_inv(M)), [F @ theta <= 1])
            problem.solve(solver=name)
            if theta.value is None:
                raise RuntimeError(f"cvxpy ({name}) found no minimum-trace ellipsoid: status {problem.status}.")
            out = sum(t * b for t, b in zip(theta.value, B))
            out = (out + out.T) / 2
            w, U = np.linalg.eigh(out)
            if w.min() <= 0:
                raise RuntimeError(f"cvxpy ({name}) returned a shape that is not positive definite.")
            return out

        return _refine(V, solve_family)

    def solve(W):
        M = cp.Variable((m, m), PSD=True)
        problem = cp.Problem(cp.Minimize(cp.tr_inv(M)), [cp.sum(cp.multiply(W @ M, W), axis=1) <= 1])
        problem.solve(solver=name)
        if M.value is None:
            raise RuntimeError(f"cvxpy ({name}) found no minimum-trace ellipsoid: status {problem.status}.")
        out = (M.value + M.value.T) / 2
        w, U = np.linalg.eigh(out)
        return (U * np.maximum(w, 1e-12 * w.max())) @ U.T  # positive definite, for the factor

    return _refine(V, solve)


def min_volume_shape(V, *, tol=1e-4, max_iter=100_000):
    """Return M with v' M v <= 1 on V (nearly) and det M largest: the centred minimum-volume ellipsoid.

    Parameters
    ----------
    V : ndarray of shape (n, m)
        Points spanning R^m (the ellipsoid is centred; -V is covered by symmetry).
    tol : float, default 1e-4
        Khachiyan's stopping rule: max_i kappa_i <= m (1 + tol).
    max_iter : int, default 100000
        Iterations per working set.

    Returns
    -------
    ndarray of shape (m, m)
        The shape: to be certified (:func:`certify`), never trusted.

    Notes
    -----
    Khachiyan's algorithm for the centred (symmetric) case, on the dual: weights u on the
    points, X(u) = sum_i u_i v_i v_i', kappa_i = v_i' X^{-1} v_i; step towards the point of
    largest kappa_j with lambda = (kappa_j - m) / (m (kappa_j - 1)), or, when the held point
    of smallest kappa_i is further from m, away from it (Todd & Yildirim 2007, whose away
    steps make the convergence linear); X^{-1} and every kappa are updated by
    Sherman-Morrison. At the optimum M = X^{-1} / m.
    """
    m = V.shape[1]

    def solve(W):
        n = len(W)
        u = np.full(n, 1.0 / n)
        Xi = np.linalg.inv(W.T @ (W * u[:, None]))
        kappa = np.einsum("ij,jk,ik->i", W, Xi, W)
        for it in range(max_iter):
            if it % 1000 == 999:  # refresh the incrementally updated kappa against drift
                kappa = np.einsum("ij,jk,ik->i", W, Xi, W)
            j = int(np.argmax(kappa))
            held = np.flatnonzero(u > 0)
            i = int(held[np.argmin(kappa[held])])
            up, down = kappa[j] / m - 1, 1 - kappa[i] / m
            if up <= tol:
                break
            if up >= down:  # Khachiyan's step towards the point of largest kappa
                k, lam = j, (kappa[j] - m) / (m * (kappa[j] - 1))
            else:  # Todd & Yildirim's away step: weight off the held point of smallest kappa
                k = i
                lam = max(-u[i] / (1 - u[i]), (kappa[i] - m) / (m * (kappa[i] - 1)))
            u *= 1 - lam
            u[k] += lam
            u[u < 0] = 0.0
            # X' = (1 - lam) X + lam v v': Sherman-Morrison on X^{-1} / (1 - lam), and on every kappa_i.
            y = Xi @ W[k]
            c = lam / (1 - lam + lam * kappa[k])
            Xi = (Xi - np.outer(y, y) * c) / (1 - lam)
            kappa = (kappa - c * (W @ y) ** 2) / (1 - lam)
        return Xi / m

    return _refine(V, solve, tol=tol)


# -- the certificate ------------------------------------------------------------------------------
def _frac_matrix(a):
    return [[Fraction(float(x)) for x in row] for row in np.asarray(a)]


def _inverse_error(R, L):
    """An upper bound on ||R L - I||_F, computed exactly (R and L are binary64, hence rationals)."""
    Rf, Lf = _frac_matrix(R), _frac_matrix(L)
    m = len(Rf)
    total = Fraction(0)
    for i in range(m):
        for j in range(m):
            e = sum((Rf[i][k] * Lf[k][j] for k in range(m)), Fraction(0)) - (1 if i == j else 0)
            total += e * e
    return math.sqrt(total) * (1 + 1e-15) + 1e-300  # sqrt rounded up (one rounding, then a relative pad)


def certify(factor, points):
    """Return s >= sup over v in V of v' (L L')^{-1} v, for the binary64 factor L, rigorously.

    Parameters
    ----------
    factor : ndarray of shape (m, m)
        L: the noise is c L Z, Z standard normal, of covariance c^2 L L'.
    points : HullPoints
        The certified points: V = P - P or P union -P.

    Returns
    -------
    float
        An upper bound s on sup_V v' (L L')^{-1} v = sup_V ||L^{-1} v||^2; the release of
        N(0, c^2 L L') is then (s / (2 c^2))-zCDP.

    Notes
    -----
    R is a binary64 inverse of L and E = R L - I is computed exactly in rationals. Then
    L^{-1} = (I + E)^{-1} R, so ||L^{-1} v|| <= ||R v|| / (1 - ||E||_2) when ||E||_F < 1.
    ||R v|| for v = p_i - p_j is bounded from the computed rows R p: each entry of
    fl(R p) is within gamma_{m+2} (|R| |p|) of R p (Higham 2002, Section 3.1; the +2 covers
    the relative rounding ``error`` of P), so |(R v)_k| <= |fl(R p_i)_k - fl(R p_j)_k| + e_ik
    + e_jk, and the sum of squares of these bounds, computed in binary64, is padded by
    gamma_{m+4} for its own roundings. No step trusts the solver that chose L.
    """
    L = np.asarray(factor, float)
    m = L.shape[0]
    R = np.linalg.inv(L)
    err = _inverse_error(R, L)
    if not err < 0.5:
        raise ValueError(
            f"The shaped Gaussian's factor is too ill-conditioned to certify (||R L - I||_F = {err:.3g} >= 0.5)."
        )
    P = points.records
    g = _gamma(m + 2) + points.error * (1 + _gamma(m + 2))
    RP = P @ R.T
    E = (np.abs(P) @ np.abs(R).T) * (g * (1 + 4 * _U))
    pad = 1 + _gamma(m + 4)
    if points.neighbours != "replace":
        worst = float(np.max(np.sum((np.abs(RP) + E) ** 2, axis=1)))
    else:
        worst = 0.0
        for start in range(0, len(P), 256):
            stop = min(len(P), start + 256)
            diff = np.abs(RP[start:stop, None, :] - RP[None, :, :]) * (1 + _U)  # the subtraction's rounding
            bound = diff + E[start:stop, None, :] + E[None, :, :]
            worst = max(worst, float(np.max(np.sum(bound * bound, axis=2))))
    return worst * pad / (1 - err) ** 2 * (1 + 4 * _U)


def _pad(n):
    """1 + 4 gamma_{n + 4}: covers the relative rounding of a float computation of n non-negative terms and a few more."""
    return 1.0 + 4.0 * _gamma(n + 4)


def certify_precision(A, points):
    """Return s >= sup over v in V of v' A v for the binary64 matrix A, rigorously.

    Parameters
    ----------
    A : ndarray of shape (m, m)
        A symmetric matrix (its binary64 entries are the exact numbers certified).
    points : HullPoints
        The certified points: V = P - P (replace-one) or P union -P (add/remove-one).

    Returns
    -------
    float
        An upper bound on sup_V v' A v, hence (A positive semi-definite, S_T in the hull
        of V, the form convex) on sup over S_T of u' A u.

    Notes
    -----
    With H = fl(P A) and G = fl(H P'), each entry an inner product of length m, Higham
    (2002, Section 3.1) gives |G - P A P'| <= gamma_m (|H| |P'| + |P| |A| |P'|); the exact
    records P* (within the relative ``error`` e of P) add (2e + e^2) |P| |A| |P'|. Call that
    bound W, computed in binary64 from non-negative terms and padded by 1 + 4 gamma_{m+4}
    (such a computation underestimates by at most about 2 gamma_m). Then for v = p_i - p_j,
    v' A v <= G_ii - 2 G_ij + G_jj + W_ii + 2 W_ij + W_jj, evaluated in binary64 and raised
    by 4 gamma_10 times the sum of the magnitudes involved (an absolute allowance: the
    evaluation, cancellation included, errs by at most about 8u of them); for add/remove
    v = +-p_i, G_ii + W_ii likewise. The largest value is padded by 1 + 4u at the end. The diagonal entries are computed separately (rowwise inner
    products), each bounded the same way.
    """
    A = np.asarray(A, dtype=float)
    P = np.asarray(points.records, dtype=float)
    m = A.shape[0]
    e = float(points.error)
    g = _gamma(m)
    c = (g + 2 * e + e * e) * (1 + _U)
    H = P @ A
    absP, absH = np.abs(P), np.abs(H)
    PA = absP @ np.abs(A)
    pad = _pad(m)
    gdiag = np.einsum("ij,ij->i", H, P)
    wdiag = (g * np.einsum("ij,ij->i", absH, absP) + c * np.einsum("ij,ij->i", PA, absP)) * pad
    slack = 4 * _gamma(10)
    if points.neighbours != "replace":
        worst = float(np.max(gdiag + wdiag + slack * (np.abs(gdiag) + wdiag)))
    else:
        worst = -math.inf
        k = len(P)
        for start in range(0, k, 512):
            stop = min(k, start + 512)
            G = H[start:stop] @ P.T
            W = (g * (absH[start:stop] @ absP.T) + c * (PA[start:stop] @ absP.T)) * pad
            T = (gdiag[start:stop, None] + gdiag[None, :] - 2 * G) + (wdiag[start:stop, None] + wdiag[None, :] + 2 * W)
            mag = np.abs(gdiag[start:stop, None]) + np.abs(gdiag[None, :]) + 2 * np.abs(G)
            mag = mag + wdiag[start:stop, None] + wdiag[None, :] + 2 * W
            U = T + slack * mag
            rows = np.arange(start, stop)
            U[rows - start, rows] = -math.inf  # v = 0 is not a difference
            worst = max(worst, float(np.max(U)))
    if not worst > 0:
        raise ValueError("The certified points give no positive v' A v: A is not positive definite on S_T.")
    return math.nextafter(worst * (1 + 4 * _U), math.inf)


def gram_lower_bound(A, F):
    """Return beta, a Fraction with lambda_min(F' A F) >= beta, rigorously (binary64 A symmetric, F square).

    Parameters
    ----------
    A : ndarray of shape (m, m)
        A symmetric matrix (exactly: A == A.T).
    F : ndarray of shape (m, m)
        A factor (binary64).

    Returns
    -------
    Fraction
        A lower bound beta on the least eigenvalue of the exact F' A F. With beta > 0, F is invertible
        and ||F^{-1} u||^2 <= u' A u / beta for every u (put u = F w: u' A u = w' F'AF w >= beta ||w||^2).

    Notes
    -----
    C = fl(F' A) and B = fl(C F) satisfy |B - F' A F| <= gamma_m (|C| |F| + |F'| |A| |F|)
    (Higham 2002, Section 3.1): W, computed from non-negative terms and padded by
    1 + 4 gamma_{m+4}. For a float s0 (the median of diag B), D = fl(B - s0 I) is off by at
    most u |D_ii| on the diagonal. F' A F is symmetric, so by Weyl's inequality its least
    eigenvalue is at least s0 - ||F' A F - s0 I||_2 >= s0 - ||E||_F with E = |D| (1 + 2u on
    the diagonal) + W, whose Frobenius norm is computed in binary64 and padded by
    1 + 4 gamma_{m^2 + 4}. The subtraction s0 - ||E||_F is exact (rationals).
    """
    A = np.asarray(A, dtype=float)
    F = np.asarray(F, dtype=float)
    m = A.shape[0]
    g = _gamma(m)
    C = F.T @ A
    B = C @ F
    absF = np.abs(F)
    W = g * (np.abs(C) @ absF + (absF.T @ np.abs(A)) @ absF) * _pad(m)
    s0 = float(np.median(np.diag(B)))
    D = np.abs(B - s0 * np.eye(m))
    D[np.diag_indices(m)] *= 1 + 2 * _U
    fro = math.sqrt(float(np.sum((D + W) ** 2))) * _pad(m * m)
    return Fraction(s0) - Fraction(math.nextafter(fro, math.inf))
