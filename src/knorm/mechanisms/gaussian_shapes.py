"""Gaussian noise shaped to the statistic: closed forms with proofs, and fitted shapes certified.

N(0, Sigma) added to T is rho-zCDP iff sup over u in S_T of u' Sigma^{-1} u <= 2 rho
(Bun & Steinke 2016, Lemma 2.4 and Proposition 1.6; :mod:`knorm.mechanisms.ellipsoid`). A
:class:`CertifiedShape` is a positive definite matrix A (the shape of the ellipsoid, the
noise's precision up to scale) with a certified upper bound s on sup_{u in S_T} u' A u;
:class:`~knorm.mechanisms.GaussianMechanism` then adds N(0, c^2 A^{-1}) with
c^2 >= s / (2 rho), so the least total variance for the shape is c^2 tr(A^{-1}).

**The closed forms** (after Joseph & Yu, "Some Constructions of Private, Efficient, and
Optimal K-Norm and Elliptic Gaussian Noise", arXiv 2309.15790, whose elliptic Gaussian
they are; the reductions and proofs below are written out here). Counts, l0-bounded sums
and votes are symmetric under permutations of the d coordinates. The min-trace problem
(minimise tr(M^{-1}) over M > 0 with u' M u <= 1 on S_T) is convex and S_T is invariant,
so averaging an optimal M over the permutations keeps it feasible and does not raise the
trace: an optimum has the form M = a I + b 11', eigenvalue lambda = a on 1-perp and
mu = a + d b on 1. Then tr(M^{-1}) = (d - 1) / lambda + 1 / mu and

    u' M u = a ||u||^2 + b (1'u)^2 = lambda (||u||^2 - (1'u)^2 / d) + mu (1'u)^2 / d,

which depends on u only through (||u||^2, (1'u)^2). For each statistic a short proof
(in each function's Notes) reduces sup_{S_T} u' M u to a maximum over a few such pairs
("rows"), linear in (lambda, mu); the optimum of the 2-variable convex problem is found
numerically, and then the bound is **recomputed exactly in rationals** for the binary64
matrix actually stored (A_ii = fl(a + b), A_ij = fl(b), so A = a' I + b' 11' with
a' = A_ii - A_ij and b' = A_ij exactly). Nothing about privacy rests on the optimiser.

**Fitted shapes** (:func:`hull_shape`): the minimum-trace ellipsoid around certified
vertices of S_T (cvxpy), optionally restricted to a family spanned by given symmetric
matrices (the invariant family of a symmetric statistic, which keeps the problem small),
with the bound certified by :func:`knorm.mechanisms.ellipsoid.certify_precision`
(rigorous against every rounding; the solver is never trusted).

References
----------
M. Joseph and C. Yu, "Some Constructions of Private, Efficient, and Optimal K-Norm and
Elliptic Gaussian Noise", arXiv:2309.15790, 2023 (the elliptic Gaussian for sum, count
and vote). M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications,
Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from knorm._validation import check_count, param_error

__all__ = [
    "CertifiedShape",
    "box_sum_shape",
    "count_shape",
    "histogram_shape",
    "hull_shape",
    "sum_shape",
    "vote_shape",
]

_JY = "Joseph & Yu (2023, arXiv 2309.15790), elliptic Gaussian; reduction proved in knorm.mechanisms.gaussian_shapes"


def _float_up(x):
    """The smallest binary64 number >= the rational ``x``."""
    out = float(x)
    return out if Fraction(out) >= x else math.nextafter(out, math.inf)


@dataclass(frozen=True)
class CertifiedShape:
    """A Gaussian shape: the quadratic form A of the ellipsoid and a certified sup of u' A u over S_T.

    Parameters
    ----------
    precision : array_like of shape (m, m)
        A, symmetric positive definite (binary64; the bound is for these exact numbers).
        The noise is N(0, c^2 A^{-1}): A is its precision up to the scale c^2.
    bound : float
        A certified upper bound on sup over u in S_T of u' A u (rounded up).
    name : str
        What the shape is, for reports.
    proof : str
        Why ``bound`` holds: the citation and the reduction, or how it was certified.

    Examples
    --------
    >>> shape = vote_shape(4, "add_remove")
    >>> shape.dim, round(shape.bound, 6)
    (4, 1.0)
    >>> round(shape.trace(rho=0.5) / (4 * 14 / 1.0), 3)  # against the spherical N(0, Delta_2^2 / (2 rho) I)
    0.844
    """

    precision: np.ndarray
    bound: float
    name: str
    proof: str

    def __post_init__(self):
        owner = "CertifiedShape"
        A = np.array(self.precision, dtype=float)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1 or not np.all(np.isfinite(A)):
            raise param_error("precision", owner, "a finite square matrix", f"shape {A.shape}")
        if not np.array_equal(A, A.T):
            raise param_error("precision", owner, "a symmetric matrix (exactly, A == A.T)", "an asymmetric matrix")
        bound = float(self.bound)
        if not (math.isfinite(bound) and bound > 0):
            raise param_error("bound", owner, "a float in the range (0, inf)", self.bound)
        A.setflags(write=False)
        object.__setattr__(self, "precision", A)
        object.__setattr__(self, "bound", bound)

    @property
    def dim(self):
        """The dimension m of the statistic."""
        return self.precision.shape[0]

    @property
    def cache_key(self):
        """A hashable key of the shape: its name, the entries of A and the bound."""
        return ("CertifiedShape", self.name, self.precision.tobytes(), self.bound)

    def trace(self, rho):
        """Return the total variance bound / (2 rho) x tr(A^{-1}) of the shape at ``rho`` (binary64, for ranking).

        Parameters
        ----------
        rho : float
            The zCDP budget.

        Returns
        -------
        float
            The trace of Sigma = bound / (2 rho) A^{-1}: the expected squared l2 error.
        """
        return float(self.bound / (2.0 * float(rho)) * np.trace(np.linalg.inv(self.precision)))


# -- the two-level family a I + b 11' -------------------------------------------------------------
def _optimal_two_level(d, rows):
    """(a, b) minimising tr((a I + b 11')^{-1}) with a n2 + b s2 <= 1 on every row (n2, s2), numerically.

    In (lambda, mu) = (a, a + d b): minimise (d - 1) / lambda + 1 / mu subject to lambda p + mu q
    <= 1 with p = n2 - s2 / d, q = s2 / d. Along a ray mu = t lambda the largest feasible lambda is
    1 / max(p + t q), so the trace is g(t) = ((d - 1) + 1 / t) max(p + t q), minimised over a
    log grid of t and refined. Privacy does not rest on this (the bound is recomputed exactly).
    """
    n2 = np.array([float(r[0]) for r in rows])
    s2 = np.array([float(r[1]) for r in rows])
    p, q = n2 - s2 / d, s2 / d
    if d == 1:  # one coordinate: M = a (lambda unused), the constraint a n2 <= 1
        a = 1.0 / float(n2.max())
        return a, 0.0
    if not np.any(q > 0):
        raise ValueError("the rows never move 1'u: the two-level family is degenerate (use the reduced coordinates)")

    def g(t):
        t = np.atleast_1d(t)
        top = np.max(p[:, None] + t[None, :] * q[:, None], axis=0)
        return ((d - 1) + 1.0 / t) * top

    grid = np.exp(np.linspace(math.log(1e-9), math.log(1e9), 8001))
    values = g(grid)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    for _ in range(200):  # golden section on [lo, hi] (g is continuous; the grid has bracketed its minimum)
        m1, m2 = lo + 0.382 * (hi - lo), hi - 0.382 * (hi - lo)
        if g(m1)[0] <= g(m2)[0]:
            hi = m2
        else:
            lo = m1
    t = (lo + hi) / 2 if g((lo + hi) / 2)[0] <= values[i] else grid[i]
    lam = 1.0 / float(np.max(p + t * q))
    mu = t * lam
    return lam, (mu - lam) / d


def _two_level_shape(d, rows, name, proof, *, scale=Fraction(1), fixed=None):
    """The CertifiedShape a I + b 11' for the rows, its bound max(a' n2 + b' s2) recomputed exactly.

    ``rows`` hold exact (n2, s2) (ints or Fractions); ``scale`` multiplies every row (the
    statistic in units r: u = r u0, so u' A u = r^2 u0' A u0). ``fixed`` = (a, b) skips the fit.
    """
    a, b = _optimal_two_level(d, rows) if fixed is None else fixed
    off = float(b)
    diag = float(a) + off
    A = np.full((d, d), off)
    np.fill_diagonal(A, diag)
    a_exact = Fraction(diag) - Fraction(off) if d > 1 else Fraction(diag)
    b_exact = Fraction(off) if d > 1 else Fraction(0)
    if not (a_exact > 0 and a_exact + d * b_exact > 0):
        raise ArithmeticError(f"{name}: the fitted a I + b 11' is not positive definite (a = {a}, b = {b})")
    sup = max(a_exact * Fraction(n2) + b_exact * Fraction(s2) for n2, s2 in rows) * scale
    return CertifiedShape(A, _float_up(sup), name, proof)


def count_shape(dim, l0_bound, neighbours="add_remove"):
    """Return the min-trace Gaussian shape a I + b 11' for counts where a record adds 1 to at most k of d counts.

    Parameters
    ----------
    dim : int
        The number of counts d.
    l0_bound : int
        The most counts one record adds to, k in [1, d].
    neighbours : {'add_remove', 'replace'}, default 'add_remove'
        The neighbouring relation.

    Returns
    -------
    CertifiedShape
        The shape and its exact bound.

    Notes
    -----
    A record is t(x) in {0, 1}^d with at most k ones, and every such vector is a record.

    * add/remove: S_T = {+-v : v in {0, 1}^d, |v| = j <= k}; for |v| = j, ||u||^2 = j and
      (1'u)^2 = j^2, so sup u' A u = max over j = 1..k of a j + b j^2 (the rows (j, j^2)).
    * replace: S_T = {v - w} is exactly the set of u in {-1, 0, 1}^d with P <= k entries +1
      and N <= k entries -1 (take v = 1 on the P entries, w = 1 on the N others; conversely
      v - w has at most |v| +1s and |w| -1s). Then ||u||^2 = P + N and 1'u = P - N =: s, and
      (a > 0) for a fixed s the form is largest at the largest P + N: P = min(k, floor((d + s) / 2)),
      N = P - s, feasible for 0 <= s <= k. By the symmetry u -> -u, sup = max over s = 0..k of
      a (2 P_s - s) + b s^2.

    For d = 100, k = 50 under add/remove the trace is 0.60x that of the spherical Gaussian
    on the l2 sensitivity sqrt(k) at equal rho (0.53x at d = 1000, k = 500).

    Examples
    --------
    >>> shape = count_shape(100, 50)
    >>> round(shape.trace(rho=0.5) / (100 * 50 / 1.0), 3)
    0.599
    """
    owner = "count_shape"
    d = check_count(dim, "dim", owner)
    k = check_count(l0_bound, "l0_bound", owner)
    if not 1 <= k <= d:
        raise param_error("l0_bound", owner, f"an int in the range [1, {d}]", l0_bound)
    if neighbours == "add_remove":
        rows = [(j, j * j) for j in range(1, k + 1)]
        why = "S_T = +-{0,1}^d with <= k ones: rows (j, j^2), j = 1..k"
    elif neighbours == "replace":
        rows = []
        for s in range(k + 1):
            P = min(k, (d + s) // 2)
            rows.append((2 * P - s, s * s))
        why = "S_T = {u in {-1,0,1}^d: <= k (+1)s, <= k (-1)s}: rows (2 P_s - s, s^2), P_s = min(k, (d + s) // 2)"
    else:
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    return _two_level_shape(d, rows, f"count (d={d}, k={k}, {neighbours})", f"{_JY}: {why}")


def sum_shape(dim, l0_bound, neighbours="replace", *, radius=1.0):
    """Return the min-trace shape a I + b 11' for sums of records in [-r, r]^d with at most k non-zero entries.

    Parameters
    ----------
    dim : int
        The number of coordinates d.
    l0_bound : int
        The most non-zero entries of a record, k in [1, d].
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.
    radius : float or array_like of shape (d,), default 1.0
        The bound r: entry j of a record lies in [-r_j, r_j].

    Returns
    -------
    CertifiedShape
        The shape a I + b 11' and its exact bound; with radii that differ, the diagonal
        shape diag(1 / (k r_j^2)) (the spherical shape of x_j / r_j), whose bound is the
        sum of the k largest m_j r_j^2 (times 4 under replace).

    Notes
    -----
    Let S = {x in [-r, r]^d : ||x||_0 <= k}, symmetric, and Q(u) = u' A u, convex (A > 0)
    and even. S is the union of the cubes [-r, r]^J, |J| = k, and a convex function is
    largest on a cube at a vertex: x = r sigma on J, sigma in {-1, 1}^J, where
    ||x||^2 = r^2 k and 1'x = r (P - N), P + N = k. So sup_S Q = r^2 max over P = 0..k of
    a k + b (2P - k)^2 (add/remove: S_T = S). Replace: S_T = S - S, and
    Q(x - y) = 4 Q((x + (-y)) / 2) <= 2 Q(x) + 2 Q(-y) <= 4 sup_S Q, attained at y = -x:
    the bound is 4 times the add/remove one, and the optimal shape the same.

    Examples
    --------
    >>> shape = sum_shape(10, 3, "add_remove")
    >>> shape.dim, shape.name
    (10, 'sum (d=10, k=3, add_remove, r=1)')
    """
    owner = "sum_shape"
    d = check_count(dim, "dim", owner)
    k = check_count(l0_bound, "l0_bound", owner)
    if not 1 <= k <= d:
        raise param_error("l0_bound", owner, f"an int in the range [1, {d}]", l0_bound)
    if neighbours not in ("replace", "add_remove"):
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    radii = np.broadcast_to(np.asarray(radius, dtype=float), (d,))
    if not (np.all(np.isfinite(radii)) and np.all(radii > 0)):
        raise param_error("radius", owner, "a float in the range (0, inf), or d of them", radius)
    times = 4 if neighbours == "replace" else 1
    if not np.all(radii == radii[0]):
        m = 1.0 / (k * radii**2)
        terms = sorted((Fraction(float(mj)) * Fraction(float(rj)) ** 2 for mj, rj in zip(m, radii)), reverse=True)
        why = "diagonal: sup of sum m_j x_j^2 over S is the sum of the k largest m_j r_j^2 (times 4 under replace)"
        return CertifiedShape(
            np.diag(m), _float_up(times * sum(terms[:k])), f"sum (d={d}, k={k}, {neighbours}, diagonal)", why
        )
    r = float(radii[0])
    rows = [(k, (2 * P - k) ** 2) for P in range(k + 1)]
    scale = Fraction(r) ** 2 * times
    why = "vertices of the cubes of S = {x in [-r, r]^d, ||x||_0 <= k}: rows (k, (2P - k)^2) times r^2" + (
        "; replace: sup over S - S is 4 sup over S (convex, even form)" if neighbours == "replace" else ""
    )
    return _two_level_shape(d, rows, f"sum (d={d}, k={k}, {neighbours}, r={r:g})", f"{_JY}: {why}", scale=scale)


def box_sum_shape(lower, upper, neighbours="replace"):
    """Return a min-trace Gaussian shape for the column sums of records in a box [lower, upper].

    Parameters
    ----------
    lower, upper : array_like of shape (d,)
        The declared box (lower < upper).
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.

    Returns
    -------
    CertifiedShape
        Diagonal, or a I + b 11' for add/remove neighbours and equal bounds on every column.

    Notes
    -----
    Replace: S_T = [-w, w] (w = upper - lower), invariant under each coordinate's sign flip,
    so the optimum is diagonal, M = diag(m), and sup_{S_T} u' M u = sum m_j w_j^2 (each term
    largest at |u_j| = w_j); m_j = 1 / (w_j sum w) gives tr(M^{-1}) = (sum w)^2, against
    d sum w_j^2 for the spherical shape (Cauchy-Schwarz): a gain only when the widths differ.

    Add/remove with the same bounds [l, h] on every column: S_T = +-[l, h]^d, and a convex
    even form is largest at a corner, x in {l, h}^d with j entries h:
    ||x||^2 = j h^2 + (d - j) l^2, 1'x = j h + (d - j) l: the rows, j = 0..d. (For data in
    [0, h] these are the count rows with k = d.) Other bounds under add/remove: diagonal,
    sup = sum m_j max(l_j^2, h_j^2), m_j proportional to 1 / max(|l_j|, |h_j|).

    Examples
    --------
    >>> shape = box_sum_shape([0.0] * 5, [1.0] * 5, "add_remove")
    >>> round(shape.trace(rho=0.5) / (5 * 5 / 1.0), 3)  # spherical: Delta_2^2 = 5
    0.514
    """
    owner = "box_sum_shape"
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    hi = np.atleast_1d(np.asarray(upper, dtype=float))
    if lo.shape != hi.shape or lo.ndim != 1 or not np.all(np.isfinite(lo)) or not np.all(lo < hi):
        raise param_error("lower", owner, "finite bounds with lower < upper, one per column", (lower, upper))
    if neighbours not in ("replace", "add_remove"):
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    d = len(lo)
    if neighbours == "add_remove" and np.all(lo == lo[0]) and np.all(hi == hi[0]) and d > 1:
        lf, hf = Fraction(float(lo[0])), Fraction(float(hi[0]))
        rows = [(j * hf * hf + (d - j) * lf * lf, (j * hf + (d - j) * lf) ** 2) for j in range(d + 1)]
        why = "a convex even form is largest at a corner of the box: rows (j h^2 + (d-j) l^2, (j h + (d-j) l)^2)"
        return _two_level_shape(d, rows, f"box sum (d={d}, [{lf}, {hf}], add_remove)", f"{_JY}: {why}")
    if neighbours == "replace":
        w = [Fraction(float(h)) - Fraction(float(lw)) for lw, h in zip(lo, hi)]
        why = "S_T = [-w, w]: sup of sum m_j u_j^2 is sum m_j w_j^2"
    else:
        w = [max(abs(Fraction(float(lw))), abs(Fraction(float(h)))) for lw, h in zip(lo, hi)]
        why = "S_T = +-[l, h]: sup of sum m_j u_j^2 is sum m_j max(l_j^2, h_j^2)"
    total = float(sum(w))
    m = np.array([1.0 / (float(wj) * total) for wj in w])
    sup = sum(Fraction(float(mj)) * wj * wj for mj, wj in zip(m, w))
    return CertifiedShape(np.diag(m), _float_up(sup), f"box sum (d={d}, diagonal, {neighbours})", why)


def vote_shape(n_candidates, neighbours="replace"):
    """Return the min-trace Gaussian shape of Borda vote totals (each voter scores d candidates 0, ..., d - 1).

    Parameters
    ----------
    n_candidates : int
        The number of candidates d >= 2.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under replace-one neighbours the totals sum to a public constant: the shape is for
        the first d - 1 totals (the released coordinates; the last is rebuilt).

    Returns
    -------
    CertifiedShape
        Of dimension d (add/remove) or d - 1 (replace).

    Notes
    -----
    Add/remove: S_T = +-{permutations of v = (0, ..., d - 1)}; every u in S_T has
    ||u||^2 = S2 = sum i^2 and (1'u)^2 = (d (d - 1) / 2)^2, so u' A u is constant on S_T
    (one row) and the optimum is, with alpha = d (d^2 - 1) / 12 and beta = d (d - 1)^2 / 4,
    of trace (sqrt((d - 1) alpha) + sqrt(beta))^2 / (2 rho): 0.35x the spherical Gaussian's
    d S2 / (2 rho) at d = 100.

    Replace: 1'u = 0 on S_T, and in the released coordinates u' = (u_1, ..., u_{d-1}),
    u_d = -1'u', so A = I + 11' gives u'' A u' = ||u'||^2 + u_d^2 = ||u||^2, whose sup over
    S_T is ||v - reverse(v)||^2 = d (d^2 - 1) / 3 (rearrangement inequality). The permutations
    act irreducibly on the sum-zero subspace, so no shape beats this one (the sphere of that
    subspace) there; in the released coordinates its trace is only (d - 1) / d (times
    d (d^2 - 1) / 3 over the released l2 sensitivity squared) of the spherical Gaussian's on
    those d - 1 totals: under replace-one the gain from shaping is small.

    Examples
    --------
    >>> shape = vote_shape(100, "add_remove")
    >>> s2 = sum(i * i for i in range(100))
    >>> round(shape.trace(rho=0.5) / (100 * s2 / 1.0), 3)
    0.345
    """
    owner = "vote_shape"
    d = check_count(n_candidates, "n_candidates", owner)
    if d < 2:
        raise param_error("n_candidates", owner, "an int >= 2", n_candidates)
    if neighbours == "add_remove":
        s2 = sum(i * i for i in range(d))
        s = d * (d - 1) // 2
        why = "every u in S_T = +-permutations of (0..d-1) has ||u||^2 = sum i^2 and 1'u = d(d-1)/2: one row"
        return _two_level_shape(d, [(s2, s * s)], f"vote (d={d}, add_remove)", f"{_JY}: {why}")
    if neighbours != "replace":
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    m = d - 1
    full = d * (d * d - 1) // 3
    why = (
        "released u' = u[:d-1], 1'u = 0: u'' (I + 11') u' = ||u||^2 <= ||v - reverse(v)||^2 = d(d^2-1)/3 "
        "(rearrangement inequality)"
    )
    A = np.eye(m) + 1.0
    return CertifiedShape(A, float(full), f"vote (d={d}, replace, sphere of the sum-zero subspace)", f"{_JY}: {why}")


def histogram_shape(n_categories, neighbours="replace"):
    """Return the min-trace Gaussian shape of a histogram (each record in exactly one of k categories).

    Parameters
    ----------
    n_categories : int
        The number of categories k >= 2.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under replace-one neighbours the counts sum to the public n: the shape is for the
        first k - 1 counts (the released coordinates; the last is rebuilt).

    Returns
    -------
    CertifiedShape
        Replace: A = I + 11' on the k - 1 released counts with bound 2. Add/remove: the
        count shape with l0 bound 1 (the spherical one: S_T = {+-e_i}).

    Notes
    -----
    Replace: S_T = {e_i - e_j}, 1'u = 0, so in the released coordinates u'' (I + 11') u' =
    ||u||^2 = 2 for every u in S_T. Among a I + b 11' (the symmetry of the released
    coordinates) the constraints are 2a <= 1 (i, j both released) and a + b <= 1 (one of
    them the last), and the trace (k - 2) / a + 1 / (a + (k - 1) b) is least at
    a = b = 1/2: this shape. In the released coordinates its trace is (k - 1) / k of the
    spherical Gaussian's; on all k counts (the last rebuilt) it is half of it.

    Examples
    --------
    >>> histogram_shape(5).bound
    2.0
    """
    owner = "histogram_shape"
    k = check_count(n_categories, "n_categories", owner)
    if k < 2:
        raise param_error("n_categories", owner, "an int >= 2", n_categories)
    if neighbours == "add_remove":
        return count_shape(k, 1, "add_remove")
    if neighbours != "replace":
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    why = "S_T = {e_i - e_j}, 1'u = 0: in the released coordinates u'' (I + 11') u' = ||u||^2 = 2"
    return CertifiedShape(np.eye(k - 1) + 1.0, 2.0, f"histogram (k={k}, replace)", f"{_JY}: {why}")


def hull_shape(points, *, basis=None, solver=None, name="min-trace ellipsoid"):
    """Return the min-trace shape around certified vertices of S_T, with its bound certified.

    Parameters
    ----------
    points : HullPoints
        Certified points whose hull holds S_T (:func:`knorm.mechanisms.ellipsoid.hull_points`).
    basis : sequence of ndarray of shape (m, m), optional
        Symmetric matrices B_i: the shape is restricted to M = sum theta_i B_i (the
        invariant family of a symmetric statistic, where the optimum lies when the points
        are invariant; a few parameters instead of m (m + 1) / 2).
    solver : str, optional
        The cvxpy solver (see :func:`knorm.mechanisms.ellipsoid.min_trace_shape`).
    name : str, default "min-trace ellipsoid"
        The shape's name.

    Returns
    -------
    CertifiedShape
        A = the fitted M (symmetrised), with bound >= sup over V of v' A v certified by
        :func:`knorm.mechanisms.ellipsoid.certify_precision`.

    Raises
    ------
    ImportError
        Without cvxpy.
    """
    from knorm.mechanisms.ellipsoid import certify_precision, min_trace_shape

    M = min_trace_shape(points.differences(), basis=basis, solver=solver)
    A = (M + M.T) / 2.0
    bound = certify_precision(A, points)
    proof = f"min-trace ellipsoid (cvxpy) around certified points ({points.method}), the bound certified rigorously"
    if basis is not None:
        proof += f"; fitted in a family of {len(basis)} symmetric matrices"
    return CertifiedShape(A, bound, name, proof)
