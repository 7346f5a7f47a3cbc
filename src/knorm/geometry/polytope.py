"""Symmetric polytopes as norm balls, built from halfspaces or from points."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import cKDTree

from knorm._validation import check_count, check_vectors
from knorm.geometry.base import NormBall, NotANormBallError, Volume
from knorm.geometry.triangulation import TriangulationError, sample_cones, triangulate

__all__ = ["Polytope"]

# Largest matrix-product block (rows x halfspaces) evaluated at once; bounds memory.
_MAX_BLOCK_ENTRIES = 1 << 22
# Relative tolerance for matching a normalized row with the negation of another.
_SYMMETRY_RTOL = 1e-9
# Relative padding of computed bounding boxes: vertices and LP optima are exact up
# to rounding, and a box that is a hair too small would bias rejection.
_BOX_PAD_QHULL = 1e-12
_BOX_PAD_LP = 1e-9
# Default largest dimension in which qhull is used (facets, vertices, triangulation).
_MAX_QHULL_DIM = 8


def _check_matrix(x, name, owner):
    """A 2-D float array with at least one row and column and finite entries."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"The {name!r} parameter of {owner} must be a 2-D array of real numbers. Got {type(x).__name__} instead."
        ) from err
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be a 2-D array with at least one row "
            f"and one column. Got shape {arr.shape} instead."
        )
    return check_vectors(arr, arr.shape[1], name, owner, public=True)


def _check_symmetric(G, rows, owner):
    """Every normalized row g has -g among the rows (up to a relative tolerance).

    ``rows`` are the row numbers of ``G`` in the user's input, for the message.
    """
    dist, _ = cKDTree(G).query(-G)
    scale = np.linalg.norm(G, axis=1)
    bad = np.flatnonzero(dist > _SYMMETRY_RTOL * scale)
    if bad.size:
        i = int(bad[0])
        raise NotANormBallError(
            f"{owner}: the set {{u : A u <= b}} is not a norm ball because it is not "
            f"symmetric (rule: for every row (a_i, b_i) the normalized row -a_i/b_i must also "
            f"appear among the rows a_j/b_j). Row {int(rows[i])}, normalized {G[i].tolist()!r}, has no "
            f"opposite row (nearest is at distance {dist[i]:.3g})."
        )


def _lp_box(G, owner):
    """Half-widths max |u_j| over {G u <= 1}, by 2 m LPs; raises if unbounded."""
    k, m = G.shape
    ones = np.ones(k)
    box = np.zeros(m)
    for j in range(m):
        for sign in (1.0, -1.0):
            cost = np.zeros(m)
            cost[j] = -sign  # linprog minimizes, so this maximizes sign * u_j
            res = linprog(cost, A_ub=G, b_ub=ones, bounds=(None, None), method="highs")
            if res.status in (2, 3):  # 0 is feasible, so "infeasible or unbounded" means unbounded
                raise NotANormBallError(
                    f"{owner}: the set {{u : A u <= b}} is not a norm ball because it is not "
                    f"bounded (rule: max of ±u_j over the set must be finite). Maximizing "
                    f"{'+' if sign > 0 else '-'}u[{j}] is unbounded."
                )
            if res.status != 0:
                raise RuntimeError(f"{owner}: linprog failed while bounding u[{j}]: {res.message}")
            box[j] = max(box[j], -res.fun)
    return box * (1.0 + _BOX_PAD_LP)


def _blockwise_max(x, R):
    """max_i R_i . x for rows x of shape (..., m) and R of shape (k, m), in bounded memory."""
    flat = x.reshape(-1, x.shape[-1])
    out = np.empty(len(flat))
    step = max(1, _MAX_BLOCK_ENTRIES // max(1, len(R)))
    for s in range(0, len(flat), step):
        # (k, n) layout: the reduction runs over contiguous rows, several times
        # faster than a max over a short last axis.
        np.max(R @ flat[s : s + step].T, axis=0, out=out[s : s + step])
    return out.reshape(x.shape[:-1])


class Polytope(NormBall):
    """A symmetric convex polytope K in R^m, used as a norm ball.

    Build it with a named factory:

    - :meth:`from_halfspaces` for {u : A u <= b};
    - :meth:`from_points` for the symmetric convex hull of points V and -V.

    Parameters
    ----------
    *args, **kwargs
        Refused: the constructor raises TypeError and names the factories.

    Attributes
    ----------
    dim : int
        Dimension m.
    vertices : ndarray of shape (n_vertices, dim) or None
        The extreme points, when known (computed with qhull in low dimension);
        points that are not extreme are never listed.
    qhull_error : str or None
        Why qhull could not resolve K, or None (success, or not tried above
        ``max_qhull_dim``). After a failure the gauge stays exact but the
        volume is a labelled Monte Carlo estimate.
    method : str
        How the gauge is evaluated: ``"facets"`` (a matrix product over the
        normalized halfspaces) or ``"lp"`` (a linear program per point, used for
        :meth:`from_points` when the facets are not computed).
    name : str or None
        Optional label used in ``repr``.

    Notes
    -----
    With normalized rows g_i = a_i / b_i, the gauge is
    ||u||_K = max(0, max_i g_i . u). In dimension at most ``max_qhull_dim``
    (default 8), :func:`~knorm.geometry.triangulation.triangulate` finds the
    facets and vertices with qhull (Barber, Dobkin & Huhdanpaa 1996) and cuts
    K into simplicial cones from the origin with disjoint interiors (proved in
    its Notes): the volume is exact, sum |det| / m!, and sampling is exact (a
    cone picked with probability proportional to its volume, a point drawn in
    it with Dirichlet(1, ..., 1) weights). Otherwise, or if qhull fails, the
    volume is a labelled Monte Carlo estimate and sampling is exact rejection
    from the bounding box (acceptance in :attr:`sampler_stats`); without
    facets, :meth:`from_points` decides membership by one linear program per
    point (exact but slow).

    The polytopes of the paper's Section 5.1 (K_3, a cuboctahedron) are built
    this way; see :func:`knorm.geometry.regression.k3_ball`.

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (norm balls) and Section 5.1; ERRATA.md,
    "Facts worth having" (K_3).

    Examples
    --------
    >>> import numpy as np
    >>> cube = Polytope.from_halfspaces(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4))
    >>> float(cube.norm([0.5, -2.0]))
    2.0
    >>> float(cube.volume())
    4.0
    """

    name: str | None
    method: str
    vertices: Any  # ndarray or None
    qhull_error: str | None
    _G: Any  # ndarray or None
    _points: Any  # ndarray or None
    _box: Any  # ndarray or None
    _cones: Any  # ndarray or None
    _cone_cdf: Any  # ndarray or None
    _exact_volume: float | None
    _volume_method: str | None

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "Polytope cannot be instantiated directly; use Polytope.from_halfspaces(A, b) or Polytope.from_points(V)."
        )

    # -- factories -------------------------------------------------------------
    @classmethod
    def from_halfspaces(cls, A, b, *, max_qhull_dim=_MAX_QHULL_DIM, name=None):
        """The polytope {u : A u <= b}, checked to be a norm ball.

        Parameters
        ----------
        A : array_like of shape (k, m)
            Outer normals, one halfspace per row.
        b : array_like of shape (k,)
            Offsets; all must be > 0 so that the origin is interior.
        max_qhull_dim : int, default 8
            Largest dimension in which vertices, exact volume and the exact
            cone sampler are computed with qhull.
        name : str, optional
            Label for ``repr``.

        Returns
        -------
        Polytope

        Raises
        ------
        NotANormBallError
            If some b_i <= 0 (not absorbing), the set is not symmetric (some
            normalized row a_i/b_i has no opposite -a_i/b_i) or it is unbounded
            (checked by linear programs maximizing ±u_j).

        Notes
        -----
        The 2 m linear programs of the boundedness check also give a bounding
        box; in low dimension the box is recomputed from the vertices.
        """
        owner = "Polytope.from_halfspaces"
        A = _check_matrix(A, "A", owner)
        k, m = A.shape
        b = check_vectors(b, k, "b", owner, public=True)
        if b.ndim != 1:
            raise ValueError(
                f"The 'b' parameter of {owner} must be a 1-D array of length {k}. Got shape {b.shape} instead."
            )
        max_qhull_dim = check_count(max_qhull_dim, "max_qhull_dim", owner)
        if np.any(b <= 0):
            i = int(np.flatnonzero(b <= 0)[0])
            raise NotANormBallError(
                f"{owner}: the set {{u : A u <= b}} is not a norm ball because the origin is "
                f"not interior (absorbing rule: every offset b_i must be > 0). Got b[{i}] = {float(b[i])!r}."
            )
        G = A / b[:, None]
        rows = np.flatnonzero(np.any(G != 0, axis=1))  # 0 . u <= 1 holds everywhere
        if len(rows) == 0:
            raise NotANormBallError(f"{owner}: every row of A is zero, so the set is all of R^{m} (not bounded).")
        G = G[rows]
        _check_symmetric(G, rows, owner)
        G = np.unique(G, axis=0)
        box = _lp_box(G, owner)

        obj = cls._blank(m, name)
        obj._G = G
        obj._box = box
        if m == 1:
            obj._set_interval(1.0 / G[:, 0].max())
        elif m <= max_qhull_dim:
            try:
                obj._set_triangulation(triangulate(halfspaces=G))
            except TriangulationError as err:
                obj.qhull_error = str(err)  # keep the exact halfspace gauge; the volume is estimated
        return obj

    @classmethod
    def from_points(cls, V, *, max_qhull_dim=_MAX_QHULL_DIM, name=None):
        """The symmetric convex hull of the rows of V and -V.

        Parameters
        ----------
        V : array_like of shape (n, m)
            Points (for instance a sensitivity space sample).
        max_qhull_dim : int, default 8
            Largest dimension in which facets, vertices, exact volume and the
            exact cone sampler are computed with qhull. Above it, or if qhull
            fails, the gauge is a linear program per point, min{sum |lambda_i|
            : V^T lambda = u} (exact but slow), and :attr:`method` is ``"lp"``.
        name : str, optional
            Label for ``repr``.

        Returns
        -------
        Polytope

        Raises
        ------
        NotANormBallError
            If the points do not span R^m (then the hull has empty interior and
            is not absorbing).

        Notes
        -----
        The support function is max_i |c . v_i| and the bounding box max_i |v_ij|,
        both exact in any dimension.
        """
        owner = "Polytope.from_points"
        V = _check_matrix(V, "V", owner)
        max_qhull_dim = check_count(max_qhull_dim, "max_qhull_dim", owner)
        n, m = V.shape
        rank = int(np.linalg.matrix_rank(V))
        if rank < m:
            raise NotANormBallError(
                f"{owner}: the symmetric hull of the points is not a norm ball because it is "
                f"not absorbing (rule: the points must span R^{m}). Got rank {rank}."
            )
        obj = cls._blank(m, name)
        obj._points = V
        obj._box = np.abs(V).max(axis=0)
        if m == 1:
            obj._set_interval(float(obj._box[0]))
        elif m <= max_qhull_dim:
            try:
                tri = triangulate(points=np.vstack([V, -V]))
            except TriangulationError as err:
                obj.qhull_error = str(err)  # keep the exact LP gauge; the volume is estimated
            else:
                obj._G = tri.facets
                obj._set_triangulation(tri)
        if obj._G is None:
            obj.method = "lp"
        return obj

    @classmethod
    def _blank(cls, m, name):
        obj = cls.__new__(cls)
        NormBall.__init__(obj, m)
        obj.name = None if name is None else str(name)
        obj.method = "facets"
        obj.vertices = None
        obj._G = None  # normalized facet rows, when known
        obj._points = None  # generators of from_points
        obj._box = None
        obj._cones = None  # cone k has apex 0 and base vertices[_cones[k]]
        obj._cone_cdf = None
        obj._exact_volume = None
        obj._volume_method = None
        obj.qhull_error = None
        return obj

    def _set_interval(self, r):
        """Dimension 1: K = [-r, r], two cones [0, r] and [-r, 0]."""
        self._G = np.array([[1.0 / r], [-1.0 / r]])
        self.vertices = np.array([[r], [-r]])
        self._box = np.array([r])
        self._cones = np.array([[0], [1]])
        self._cone_cdf = np.array([0.5, 1.0])
        self._exact_volume = 2.0 * r
        self._volume_method = "closed form (interval)"

    def _set_triangulation(self, tri):
        """Vertices, box, exact volume and cone sampler from a :class:`ConeTriangulation`."""
        self.vertices = tri.vertices
        self._box = np.abs(tri.vertices).max(axis=0) * (1.0 + _BOX_PAD_QHULL)
        self._cones = tri.simplices
        self._cone_cdf = tri.cone_cdf
        self._exact_volume = tri.volume
        self._volume_method = "cones over the facets (qhull, pulling triangulation)"

    # -- properties ------------------------------------------------------------
    @property
    def halfspaces(self):
        """Normalized halfspaces (G, ones) with K = {u : G u <= 1}, or None if unknown.

        They are unknown only for :meth:`from_points` above ``max_qhull_dim``
        or when qhull failed (see :attr:`qhull_error`).
        """
        if self._G is None:
            return None
        return self._G.copy(), np.ones(len(self._G))

    # -- private computations -------------------------------------------------------
    def _gauge(self, u):
        if self._G is None:
            return self._lp_gauge(u)
        return np.maximum(_blockwise_max(u, self._G), 0.0)[()]

    def _lp_gauge(self, u):
        """min{sum |lambda| : V^T lambda = u}, one LP per row (exact, slow)."""
        Vt = self._points.T
        n = Vt.shape[1]
        A_eq = np.hstack([Vt, -Vt])
        cost = np.ones(2 * n)
        flat = u.reshape(-1, self.dim)
        out = np.empty(len(flat))
        for i, row in enumerate(flat):
            if not np.any(row):
                out[i] = 0.0
                continue
            res = linprog(cost, A_eq=A_eq, b_eq=row, bounds=(0, None), method="highs")
            if res.status != 0:  # the points span R^m, so the LP is feasible and bounded
                raise RuntimeError(f"Polytope: linprog failed for the gauge of {row.tolist()!r}: {res.message}")
            out[i] = res.fun
        return out.reshape(u.shape[:-1])[()]

    def _support(self, c):
        if self.vertices is not None:
            return _blockwise_max(c, self.vertices)[()]
        if self._points is not None:
            return _blockwise_max(c, np.vstack([self._points, -self._points]))[()]
        return self._lp_support(c)

    def _lp_support(self, c):
        """max{c . u : G u <= 1}, one LP per row."""
        G = self._G
        ones = np.ones(len(G))
        flat = c.reshape(-1, self.dim)
        out = np.empty(len(flat))
        for i, row in enumerate(flat):
            res = linprog(-row, A_ub=G, b_ub=ones, bounds=(None, None), method="highs")
            if res.status != 0:  # bounded and feasible by construction
                raise RuntimeError(f"Polytope: linprog failed for the support at {row.tolist()!r}: {res.message}")
            out[i] = -res.fun
        return out.reshape(c.shape[:-1])[()]

    def _bounding_box(self):
        return self._box

    def _volume(self, rng, n_samples):
        if self._exact_volume is not None:
            return Volume(self._exact_volume, exact=True, method=self._volume_method)
        vol = super()._volume(rng, n_samples)
        if self.qhull_error is not None:
            vol.method += " (qhull failed: see qhull_error)"
        return vol

    def _sample_uniform(self, n, rng):
        if self._cones is None:
            return self._rejection_from_box(n, rng)
        return sample_cones(self.vertices, self._cones, self._cone_cdf, n, rng)

    def _cache_key(self):
        # The set is determined by its facet rows (or, without them, its generating points).
        data = self._G if self._G is not None else self._points
        if data is None:
            return None
        digest = hashlib.sha256(np.ascontiguousarray(data, dtype=float).tobytes()).hexdigest()
        return ("Polytope", self.dim, data.shape, digest)

    def __repr__(self):
        parts = [f"dim={self.dim}"]
        if self.name:
            parts.insert(0, repr(self.name))
        if self._G is not None:
            parts.append(f"{len(self._G)} halfspaces")
        if self.vertices is not None:
            parts.append(f"{len(self.vertices)} vertices")
        if self.method == "lp":
            parts.append(f"{len(self._points)} generators, LP gauge")
        return f"Polytope({', '.join(parts)})"
