"""Exact facets, vertices and cone triangulations of polytopes with the origin inside.

The qhull side of :class:`~knorm.geometry.polytope.Polytope`. From points or from
halfspaces, :func:`triangulate` finds the facets and the vertices of K, merging
coplanar qhull facets and dropping points that are not vertices, and cuts K into
simplicial cones from the origin with disjoint interiors. These cones give the
exact volume and the exact uniform sampler (:func:`sample_cones`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError

__all__ = ["ConeTriangulation", "TriangulationError", "sample_cones", "triangulate"]

# Facets whose vertices stray more than _RTOL * R from their hyperplane are refused (R = max ||x||).
_RTOL = 1e-9
#: Largest vertex count of a polytope given by halfspaces that is triangulated exactly
#: (826 at d = 6 takes a second; beyond, the volume is estimated and the gauge stays exact).
MAX_VERTICES = 2000


class TriangulationError(RuntimeError):
    """Signal that qhull failed, or that its output did not give flat facets that close up."""


@dataclass(frozen=True, eq=False)
class ConeTriangulation:
    """A polytope K cut into the simplicial cones conv(0, vertices[s]), one per row s of ``simplices``.

    Build it with :func:`triangulate`.

    Parameters
    ----------
    vertices : ndarray of shape (n_vertices, m)
        The extreme points of K.
    facets : ndarray of shape (n_facets, m)
        Normalized facet rows g, with K = {u : g . u <= 1 for every row}.
    simplices : ndarray of shape (n_cones, m)
        Row numbers in ``vertices`` of the m vertices of each cone's base.
    dets : ndarray of shape (n_cones,)
        |det(vertices[s])| for each row s of ``simplices``: m! times the cone's volume.

    Examples
    --------
    >>> import numpy as np
    >>> square = triangulate(halfspaces=np.vstack([np.eye(2), -np.eye(2)]))
    >>> square.vertices.shape, square.simplices.shape, square.volume
    ((4, 2), (4, 2), 4.0)
    """

    vertices: np.ndarray
    facets: np.ndarray
    simplices: np.ndarray
    dets: np.ndarray

    @property
    def volume(self):
        """The volume of K: the sum over the cones of |det| / m!."""
        return float(self.dets.sum()) / math.factorial(self.vertices.shape[1])

    @property
    def cone_cdf(self):
        """Cumulative cone probabilities, proportional to the cone volumes."""
        cdf = np.cumsum(self.dets) / self.dets.sum()
        cdf[-1] = 1.0
        return cdf


def sample_cones(points, cones, cdf, n, rng):
    """Draw points uniformly from a union of simplicial cones from the origin.

    Parameters
    ----------
    points : ndarray of shape (k, m)
        Vertices of the cones' bases.
    cones : ndarray of shape (n_cones, m)
        Row numbers in ``points`` of each cone's base; the apex is 0.
    cdf : ndarray of shape (n_cones,)
        Cumulative cone probabilities, proportional to the cone volumes.
    n : int
        Number of points.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray of shape (n, m)
        Uniform points of the union, if the cones have disjoint interiors.

    Notes
    -----
    A cone is picked with probability proportional to its volume, then a point
    with Dirichlet(1, ..., 1) barycentric weights over its m + 1 vertices (the
    apex 0 drops out), drawn as standard exponentials over their sum: the
    uniform law on a simplex is the flat Dirichlet law's barycentric image.

    References
    ----------
    Devroye (1986), "Non-Uniform Random Variate Generation", Springer,
    Chapters V (uniform spacings) and XI (points in a simplex).

    Examples
    --------
    >>> import numpy as np
    >>> tri = triangulate(halfspaces=np.vstack([np.eye(2), -np.eye(2)]))
    >>> u = sample_cones(tri.vertices, tri.simplices, tri.cone_cdf, 5, np.random.default_rng(0))
    >>> u.shape, bool(np.all(np.abs(u) <= 1))
    ((5, 2), True)
    """
    m = cones.shape[1]
    k = np.searchsorted(cdf, rng.random(n), side="right")
    k = np.minimum(k, len(cones) - 1)  # guards a draw equal to the last cdf value
    e = rng.standard_exponential((n, m + 1))
    w = e[:, 1:] / e.sum(axis=1, keepdims=True)
    idx = cones[k]
    out = np.zeros((n, m))
    for i in range(m):
        out += w[:, i : i + 1] * points[idx[:, i]]
    return out


def triangulate(*, points=None, halfspaces=None):
    """Find the facets and vertices of a polytope K and cut it into cones from the origin.

    Give exactly one of ``points`` or ``halfspaces``; the origin must be interior
    to K (true of norm balls).

    Parameters
    ----------
    points : ndarray of shape (n, m), optional
        K is their convex hull. Any of them may be interior, on a face without
        being a vertex, or repeated.
    halfspaces : ndarray of shape (k, m), optional
        Normalized rows G, with K = {u : G u <= 1}. Any of them may be redundant
        or repeated.

    Returns
    -------
    ConeTriangulation
        The vertices, the facet rows and the cones of K.

    Raises
    ------
    TriangulationError
        If qhull fails, or if its output does not give flat facets that close
        up; the message says why.

    Notes
    -----
    **Facets and vertices.** qhull (Barber, Dobkin & Huhdanpaa 1996), with its
    default options, merges coplanar facets (within its roundoff, relative to
    the largest coordinates; exact pre-merges 'Qx' from dimension 5) and reports
    each as simplices sharing its hyperplane row exactly: those are grouped back
    here. A facet that is one simplex has m points, all extreme. A point listed
    only by merged facets is a vertex exactly when those facets meet in it
    alone: a point inside a face of dimension >= 1 lies only on facets holding
    that face, each listing its (>= 2) vertices. Other points are dropped. From
    halfspaces, each (merged) facet of qhull's dual hull is a vertex of K, with
    the rows through it; a row is a facet when its vertices are not a proper
    subset of another row's. Facet rows (from points) or vertices (from
    halfspaces) are re-fitted by least squares. Refused: a facet whose vertices
    stray over 1e-9 R from its hyperplane (R = max ||x||), and a boundary that
    does not close up (below). Joggle ('QJ') is not used: it cuts coplanar
    facets into slivers that are not faces of K.

    **Lattice.** Every face of K is an intersection of facets, so the facets
    of a face S (as vertex sets) are the inclusion-maximal proper sets S cap F
    over the facets F of K.

    **Triangulation, and why the cones tile K.** Each facet is cut by the
    pulling triangulation (Lee 1991; De Loera, Rambau & Santos 2010, Chapter
    4, pulling refinements): a face that is a simplex is its own triangulation; otherwise, with v
    the vertex of the face F of least number, T(F) = {conv(v, s) : s in T(G),
    G a facet of F not holding v}.

    (i) T(F) tiles F (union F, disjoint relative interiors), by induction on
    dim F. Union: for x in F, x != v, let y be the last point of F on the ray
    from v through x. If every facet of F through y held v, the smallest face
    of F holding y would hold v, and as y is in its relative interior the ray
    would go on inside it past y; so some facet G through y misses v, and
    x = v + t (y - v), t in (0, 1], lies in conv(v, G), in the conv(v, s)
    with y in s. Disjoint interiors: v lies strictly inside the halfspace of
    aff F that cuts out G, so conv(v, G) is a pyramid whose interior points
    are v + t (y - v) with y in relint G, t in (0, 1), and y is where their ray
    from v leaves F. Relative interiors of distinct facets are disjoint, and so
    by induction are those of the s in T(G); hence so are the interiors.

    (ii) The cones conv(0, s), s in T(F), F a facet of K, tile K: the same
    argument with apex 0, interior to K, and exit point x / ||x||_K.

    So vol K = sum |det(s)| / m! over the cones, exact up to rounding (about
    1e-15 relative per cone), and :func:`sample_cones` is exactly uniform on
    K. The proof needs all the facets of K and only them, which a closure
    check guards: pulling by one vertex order gives each face the same
    triangulation seen from any facet holding it (the memoized T(S) is used
    for every face S), so the facets' simplices form a closed surface, in
    which every (m-2)-face of a simplex lies in exactly two simplices. A
    missing facet leaves a hole, and the check fails.

    References
    ----------
    Barber, Dobkin & Huhdanpaa (1996), "The Quickhull algorithm for convex
    hulls", ACM TOMS 22(4). Lee (1991), "Regular triangulations of convex
    polytopes", DIMACS Series 4. De Loera, Rambau & Santos (2010),
    "Triangulations", Springer, Chapter 4. Awan & Slavkovic (2021), Section 2
    (norm balls) and Section 5.1 (K_3, a polytope with square facets).

    Examples
    --------
    >>> import numpy as np
    >>> cube = triangulate(points=np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 1) for z in (-1, 1)], float))
    >>> len(cube.vertices), len(cube.facets), len(cube.simplices), cube.volume
    (8, 6, 12, 8.0)
    """
    if (points is None) == (halfspaces is None):
        raise TypeError("triangulate takes exactly one of 'points' and 'halfspaces'.")
    try:
        if points is not None:
            return _from_points(np.asarray(points, dtype=float))
        return _from_halfspaces(np.asarray(halfspaces, dtype=float))
    except (QhullError, np.linalg.LinAlgError) as err:
        lines = str(err).strip().splitlines()
        raise TriangulationError(f"qhull failed: {lines[0] if lines else type(err).__name__}") from err


# -- from points ----------------------------------------------------------------------
def _from_points(P):
    m = P.shape[1]
    P = _unique_rows(P)  # repeats only cost qhull time
    hull = ConvexHull(P)
    R = float(np.linalg.norm(P, axis=1).max())
    eq, simp = hull.equations, hull.simplices
    group = _first_order_groups(eq)
    n_groups = int(group.max()) + 1
    alone = np.bincount(group, minlength=n_groups)[group] == 1  # a facet that is one qhull simplex
    simplicial = simp[alone]
    # Point sets of the merged facets, and which points are vertices.
    many = np.flatnonzero(~alone)
    pairs = np.unique(np.column_stack([np.repeat(group[many], m), simp[many].ravel()]), axis=0)
    cut = np.flatnonzero(np.diff(pairs[:, 0])) + 1
    merged = [frozenset(s.tolist()) for s in np.split(pairs[:, 1], cut)] if len(pairs) else []
    merged_groups = pairs[np.r_[0, cut], 0] if len(pairs) else np.empty(0, dtype=int)
    is_vertex = np.zeros(len(P), dtype=bool)
    is_vertex[simplicial.ravel()] = True
    listing: dict = {}
    for f in merged:
        for p in f:
            if not is_vertex[p]:
                listing.setdefault(p, []).append(f)
    for p, fs in listing.items():
        is_vertex[p] = len(frozenset.intersection(*fs)) == 1
    vpoints = np.flatnonzero(is_vertex)
    vnum = np.full(len(P), -1)
    vnum[vpoints] = np.arange(len(vpoints))
    V = P[vpoints]
    merged = [frozenset(int(vnum[p]) for p in f if is_vertex[p]) for f in merged]
    if any(len(f) < m for f in merged):
        raise TriangulationError(f"a merged facet has {min(map(len, merged))} vertices, fewer than {m}")
    # Facet rows: qhull's g = n / -c (0 is interior, so c < 0), re-fitted to the vertices.
    row_of = np.zeros(n_groups, dtype=int)
    row_of[group[::-1]] = np.arange(len(group))[::-1]  # first simplex of each group
    qrows = eq[:, :-1] / -eq[:, -1:]
    ids = vnum[simplicial]  # qhull's own simplices, in its order: unchanged draws on simplicial hulls
    rows1 = _fit(V, qrows[alone], ids)
    rows2 = _fit(V, qrows[row_of[merged_groups]], [sorted(f) for f in merged])
    return _finish(V, ids, rows1, merged, rows2, R)


def _unique_rows(P):
    """P without exact repeated rows, first occurrences in their order (0.0 == -0.0)."""
    Q = np.ascontiguousarray(P + 0.0)
    _, first = np.unique(Q.view(np.dtype((np.void, Q.dtype.itemsize * Q.shape[1]))).ravel(), return_index=True)
    return P if len(first) == len(P) else P[np.sort(first)]


def _first_order_groups(rows):
    """Group number of each row among equal rows, numbered by first occurrence."""
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=int)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inverse.ravel()]


# -- from halfspaces ------------------------------------------------------------------
def _from_halfspaces(G):
    m = G.shape[1]
    hs = HalfspaceIntersection(np.hstack([G, -np.ones((len(G), 1))]), np.zeros(m))
    if len(hs.intersections) > MAX_VERTICES:  # the cones would exhaust memory (13,432 vertices at d = 8 did)
        raise TriangulationError(
            f"{len(hs.intersections)} vertices exceed the exact triangulation's budget of {MAX_VERTICES}"
        )
    lists = [np.asarray(d, dtype=int) for d in hs.dual_facets]  # vertex i of K lies on the rows lists[i]
    R = float(np.linalg.norm(hs.intersections, axis=1).max())
    held: dict = {}
    first_row: dict = {}
    holders: dict = {}
    for i, d in enumerate(lists):
        for j in d.tolist():
            held.setdefault(j, []).append(i)
    for j, vs in held.items():
        first_row.setdefault(frozenset(vs), j)  # rows holding the same vertices are the same candidate
    sets = [S for S in first_row if len(S) >= m]
    for a, S in enumerate(sets):
        for v in S:
            holders.setdefault(v, []).append(a)
    # Any superset of S holds its least-held vertex v.
    facets = [S for S in sets if not any(S < sets[b] for b in holders[min(S, key=lambda v: len(holders[v]))])]
    V = _fit(G, hs.intersections, lists)  # each vertex re-fitted to the rows through it
    simplex = [S for S in facets if len(S) == m]
    ids = np.array([sorted(S) for S in simplex], dtype=int).reshape(-1, m)
    rows1 = G[[first_row[S] for S in simplex]].reshape(-1, m)
    merged = [S for S in facets if len(S) > m]
    rows2 = G[[first_row[S] for S in merged]].reshape(-1, m)
    return _finish(V, ids, rows1, merged, rows2, R)


def _fit(A, start, index):
    """Rows x with A[index[i]] x = 1 by least squares, kept where they fit better than qhull's ``start``."""
    out = np.array(start, dtype=float).reshape(-1, A.shape[1])
    sizes = np.array([len(i) for i in index], dtype=int)
    for k in np.unique(sizes):
        who = np.flatnonzero(sizes == k)
        M = A[np.array([index[i] for i in who], dtype=int)]
        ones = np.ones((len(who), k))
        if k == A.shape[1]:
            fit = np.linalg.solve(M, ones[..., None])[..., 0]
        else:
            fit = np.einsum("bmk,bk->bm", np.linalg.pinv(M), ones)
        worst = [np.abs(np.einsum("bkm,bm->bk", M, x) - 1).max(axis=1) for x in (fit, out[who])]
        better = worst[0] < worst[1]
        out[who[better]] = fit[better]
    return out


# -- the face lattice -------------------------------------------------------------------
class _Faces:
    """Faces of K as frozensets of vertex numbers, with memoized facets and pulling triangulations."""

    def __init__(self, facet_sets):
        self.facet_sets = facet_sets
        self.inc: dict = {}
        for j, f in enumerate(facet_sets):
            for v in f:
                self.inc.setdefault(v, []).append(j)
        self._sub = {}
        self._tri = {}

    def subfaces(self, S, d):
        """Facets of the d-face S: the maximal proper sets S cap F over the facets F of K."""
        out = self._sub.get(S)
        if out is None:
            near = {j for v in S for j in self.inc[v]}
            # A facet of a d-face has >= d vertices, and for d <= 3 the smaller faces
            # (of dimension <= 1 then) have fewer: only then is the maximality test needed.
            cands = {T for T in (S & self.facet_sets[j] for j in near) if d <= len(T) < len(S)}
            if d <= 3:
                out = list(cands)
            else:
                out = []
                for T in sorted(cands, key=len, reverse=True):  # a superset comes before its subsets
                    if not any(T < U for U in out):
                        out.append(T)
            self._sub[S] = out
        return out

    def pulling(self, S, d):
        """Pulling triangulation of the d-face S, as tuples of d + 1 vertex numbers."""
        if len(S) == d + 1:
            return [tuple(sorted(S))]
        if d == 0 or len(S) < d + 1:
            raise TriangulationError(f"inconsistent face lattice: a {d}-face with {len(S)} vertices")
        out = self._tri.get(S)
        if out is None:
            v = min(S)
            out = [(v, *s) for R in self.subfaces(S, d) if v not in R for s in self.pulling(R, d - 1)]
            self._tri[S] = out
        return out


def _finish(V, ids, rows1, merged, rows2, R):
    """Check the facets (flat, closed up), triangulate them and cone them from the origin.

    ``ids`` (f1, m) are the simplicial facets, as vertex numbers, with rows
    ``rows1``; ``merged`` are the other facets as frozensets, with rows ``rows2``.
    """
    m = V.shape[1]
    if len(V) <= m or len(ids) + len(merged) <= m:
        raise TriangulationError(f"found {len(V)} vertices and {len(ids) + len(merged)} facets: too few in R^{m}")
    sizes = np.array([len(f) for f in merged], dtype=int)
    for k in np.unique(sizes):
        who = np.flatnonzero(sizes == k)
        pts, g = V[np.array([sorted(merged[f]) for f in who])], rows2[who]
        dev = np.abs(np.einsum("fkm,fm->fk", pts, g) - 1.0) / np.linalg.norm(g, axis=1, keepdims=True)
        if dev.max() > _RTOL * R:
            raise TriangulationError(f"a facet is not flat: a vertex lies {dev.max():.3g} off its hyperplane")
    simplices = [ids]
    if merged:
        in_merged = np.zeros(len(V), dtype=bool)
        in_merged[[v for f in merged for v in f]] = True
        touching = [frozenset(s.tolist()) for s in ids[np.any(in_merged[ids], axis=1)]]
        faces = _Faces(list(merged) + touching)
        for S in merged:
            simplices.append(np.array(faces.pulling(S, m - 1), dtype=int).reshape(-1, m))
    simplices_arr = np.vstack(simplices)
    # Pulling by one vertex order triangulates every face the same way from each side,
    # so the facets' simplices form a closed surface: each (m-2)-face in exactly two.
    drop = np.array([[i for i in range(m) if i != j] for j in range(m)], dtype=int).reshape(m, m - 1)
    ridges = np.ascontiguousarray(np.sort(simplices_arr, axis=1)[:, drop].reshape(-1, m - 1))
    _, counts = np.unique(ridges.view(np.dtype((np.void, ridges.itemsize * (m - 1)))).ravel(), return_counts=True)
    if np.any(counts != 2):
        raise TriangulationError(
            f"the facets do not close up: {int(np.sum(counts != 2))} faces of the boundary simplices lie in "
            f"{sorted(set(counts[counts != 2].tolist()))} of them instead of 2 (a facet missing or spurious)"
        )
    facets = np.vstack([rows1, rows2])
    return ConeTriangulation(V, facets, simplices_arr, np.abs(np.linalg.det(V[simplices_arr])))
