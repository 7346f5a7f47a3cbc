"""Exact facets, vertices and cone triangulations of polytopes with the origin inside.

The qhull side of :class:`~knorm.geometry.polytope.Polytope`. From points or from
halfspaces, :func:`triangulate` finds the facets and the vertices of K, merging
coplanar qhull facets and dropping points that are not vertices, and cuts K into
simplicial cones from the origin with disjoint interiors. These cones give the
exact volume and the exact uniform sampler (:func:`sample_cones`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError, cKDTree

__all__ = ["ConeTriangulation", "TriangulationError", "sample_cones", "triangulate"]

# Facets whose vertices stray more than _RTOL * R from their hyperplane are refused,
# and joggled hyperplanes within _RTOL * R of each other merged; R = max ||x||.
_RTOL = 1e-9
# qhull options tried in order: qhull's defaults (merged coplanar facets, exact
# pre-merges 'Qx' from dimension 5), then joggled input 'QJ'.
_QHULL_OPTIONS = (None, "QJ")


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
    qhull_options : str
        The qhull options that succeeded: "" for qhull's defaults, or "QJ".

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
    qhull_options: str = ""

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
    A cone is picked with probability proportional to its volume, then a point of
    it with Dirichlet(1, ..., 1) barycentric weights over its m + 1 vertices (the
    apex 0 drops out): the uniform law on a simplex is the image of the flat
    Dirichlet law under the barycentric map, and Dirichlet(1, ..., 1) is a vector
    of standard exponentials divided by their sum.

    References
    ----------
    Devroye (1986), "Non-Uniform Random Variate Generation", Springer,
    Sections V.2 and XI.2.1.

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
        If qhull fails with its default options and with joggle ('QJ'), or if
        its output does not give flat facets that close up; the message gives
        the reason for each attempt.

    Notes
    -----
    **Facets and vertices.** qhull (Barber, Dobkin & Huhdanpaa 1996) merges the
    coplanar facets of a hull, deciding coplanarity from its roundoff error,
    which is relative to the largest coordinates, and then reports each merged
    facet as simplices that share its hyperplane row exactly. Those simplices are
    grouped back into facets (with 'QJ', whose facets are all simplices, rows
    within 1e-9 R of each other are grouped, R = max ||x||). A simplicial facet
    has exactly m points, all extreme. A point listed only by non-simplicial
    facets is a vertex exactly when those facets meet in it alone: a point in the
    relative interior of a face of dimension >= 1 lies only on facets that hold
    the whole face, and each of them lists the face's (at least two) vertices.
    Every other point (interior, or inside a face) is dropped. From halfspaces,
    each facet of qhull's dual hull is a vertex of K, listing the rows through
    it, and a row is a facet of K when the set of vertices it holds is not inside
    another row's (a face of K that is not a facet lies in a facet). Facet rows
    are re-fitted to their vertices (from points) and vertices to their facet
    rows (from halfspaces) by least squares; a facet whose vertices stray more
    than 1e-9 R from its hyperplane is refused, and so is a set of facets whose
    ridges (the facets of facets) do not each lie in exactly two facets.

    **Lattice.** Every face of K is an intersection of facets, so the facets of
    a face S (as vertex sets) are the inclusion-maximal proper subsets among the
    S cap F over the facets F of K.

    **Triangulation, and why the cones tile K.** Each facet is cut into
    (m - 1)-simplices by the pulling triangulation (Lee 1991; De Loera, Rambau
    & Santos 2010, Section 4.3): a face that is a simplex is its own
    triangulation, and otherwise, with v the vertex of the face F of least
    number, T(F) = {conv(v, s) : s in T(G), G a facet of F with v not in G}.

    (i) T(F) tiles F (union F, disjoint relative interiors), by induction on
    dim F. Union: a point x of F other than v lies on the ray from v through
    x, which leaves F at a point y of some facet G of F; G does not hold v,
    for then the segment [v, y], and x on it, would lie in G, and the ray
    would have left F at v's side already; so x = v + t (y - v) with t in
    (0, 1] lies in conv(v, G), hence in conv(v, s) for the s in T(G) holding
    y. Disjoint interiors: v is not in aff(G) (G is a facet of F without v,
    so the supporting hyperplane of G in aff(F) leaves v strictly on one
    side), so each conv(v, s) is a full simplex of aff(F). The relative
    interior of conv(v, G) is {v + t (y - v) : y in relint G, t in (0, 1)},
    and the exit point y of the ray from v is unique, so pyramids over two
    facets G != G' (disjoint relative interiors) have disjoint interiors;
    inside one pyramid the radial map from v takes the interiors of the
    conv(v, s) onto the disjoint relative interiors of the s in T(G).

    (ii) The cones conv(0, s), s in T(F), F a facet of K, tile K. Union: 0 is
    interior, so each x != 0 of K is t y with y = x / ||x||_K on the boundary,
    in some facet F, t in (0, 1], and y lies in some s of T(F). Disjoint
    interiors: the radial map x -> x / ||x||_K takes the interior of
    conv(0, s) onto the relative interior of s; these are disjoint within a
    facet by (i), and two facets have disjoint relative interiors.

    So vol K = sum |det(s)| / m! over the cones, exact up to float rounding
    (about 1e-15 relative per cone), and :func:`sample_cones` is exactly
    uniform on K. The proof needs the facets of K; the closure check above is
    what guards it against a missing or spurious facet.

    References
    ----------
    Barber, Dobkin & Huhdanpaa (1996), "The Quickhull algorithm for convex
    hulls", ACM TOMS 22(4). Lee (1991), "Regular triangulations of convex
    polytopes", DIMACS Series 4. De Loera, Rambau & Santos (2010),
    "Triangulations", Springer, Section 4.3. Awan & Slavkovic (2021), Section 2
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
    errors = []
    for options in _QHULL_OPTIONS:
        try:
            if points is not None:
                return _from_points(np.asarray(points, dtype=float), options)
            return _from_halfspaces(np.asarray(halfspaces, dtype=float), options)
        except (QhullError, TriangulationError, np.linalg.LinAlgError) as err:
            lines = str(err).strip().splitlines()
            errors.append(f"{options or 'default options'}: {lines[0] if lines else type(err).__name__}")
    raise TriangulationError("qhull could not resolve the polytope (" + "; ".join(errors) + ")")


# -- from points ----------------------------------------------------------------------
def _from_points(P, options):
    m = P.shape[1]
    P = _unique_rows(P)  # repeats only cost qhull time (and a joggle would split them)
    hull = ConvexHull(P, qhull_options=options)
    R = float(np.linalg.norm(P, axis=1).max())
    eq, simp = hull.equations, hull.simplices
    group = _cluster(eq, R) if options == "QJ" else _first_order_groups(eq)
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
    listing = {}
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
    # Facet rows: qhull's g = n / -c (0 is interior, so c < 0), re-fitted to the vertices.
    row_of = np.zeros(n_groups, dtype=int)
    row_of[group[::-1]] = np.arange(len(group))[::-1]  # first simplex of each group
    qrows = eq[:, :-1] / -eq[:, -1:]
    ids = vnum[simplicial]  # qhull's own simplices, in its order: unchanged draws on simplicial hulls
    rows1 = _fit(V, qrows[alone], ids)
    rows2 = _fit(V, qrows[row_of[merged_groups]], [np.array(sorted(f)) for f in merged])
    return _finish(V, ids, rows1, merged, rows2, R, options)


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


def _cluster(eq, R):
    """Group qhull rows n . x + c <= 0 whose hyperplanes agree within _RTOL R over ||x|| <= R."""
    z = np.hstack([eq[:, :-1] * R, eq[:, -1:]])  # n . x + c moves by at most |dn| R + |dc| there
    pairs = cKDTree(z).query_pairs(_RTOL * R, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(z), len(z)))
    return _first_order_groups(connected_components(graph, directed=False)[1][:, None])


# -- from halfspaces ------------------------------------------------------------------
def _from_halfspaces(G, options):
    m = G.shape[1]
    hs = HalfspaceIntersection(np.hstack([G, -np.ones((len(G), 1))]), np.zeros(m), qhull_options=options)
    lists = [np.asarray(d, dtype=int) for d in hs.dual_facets]  # vertex i of K lies on the rows lists[i]
    R = float(np.linalg.norm(hs.intersections, axis=1).max())
    held = {}
    for i, d in enumerate(lists):
        for j in d.tolist():
            held.setdefault(j, []).append(i)
    first_row = {}
    for j, vs in held.items():
        first_row.setdefault(frozenset(vs), j)  # rows holding the same vertices are the same candidate
    sets = [S for S in first_row if len(S) >= m]
    holders = {}
    for a, S in enumerate(sets):
        for v in S:
            holders.setdefault(v, []).append(a)
    facets = []
    for S in sets:
        v = min(S, key=lambda v: len(holders[v]))  # any superset of S holds v
        if not any(len(sets[b]) > len(S) and S < sets[b] for b in holders[v]):
            facets.append(S)
    V = _fit(G, hs.intersections, lists)  # each vertex re-fitted to the rows through it
    simplex = [S for S in facets if len(S) == m]
    ids = np.array([sorted(S) for S in simplex], dtype=int).reshape(-1, m)
    rows1 = G[[first_row[S] for S in simplex]].reshape(-1, m)
    merged = [S for S in facets if len(S) > m]
    rows2 = G[[first_row[S] for S in merged]].reshape(-1, m)
    return _finish(V, ids, rows1, merged, rows2, R, options)


def _fit(A, start, index):
    """Rows x with A[index[i]] x = 1 (least squares), or ``start[i]`` where that fits no better.

    ``index`` holds index arrays (the vertices of a facet, or the rows through a
    vertex). Square systems are solved, longer ones use the pseudo-inverse; the
    fit replaces qhull's value ``start`` only where its largest residual is smaller.
    """
    out = np.array(start, dtype=float).reshape(-1, A.shape[1])
    sizes = np.array([len(i) for i in index], dtype=int)
    for k in np.unique(sizes):
        who = np.flatnonzero(sizes == k)
        M = A[np.array([index[i] for i in who])]
        ones = np.ones((len(who), k))
        if k == A.shape[1]:
            fit = np.linalg.solve(M, ones[..., None])[..., 0]
        else:
            fit = np.einsum("bmk,bk->bm", np.linalg.pinv(M), ones)
        new = np.abs(np.einsum("bkm,bm->bk", M, fit) - 1).max(axis=1)
        old = np.abs(np.einsum("bkm,bm->bk", M, out[who]) - 1).max(axis=1)
        better = new < old
        out[who[better]] = fit[better]
    return out


# -- the face lattice -------------------------------------------------------------------
class _Faces:
    """Faces of K as frozensets of vertex numbers, with memoized facets and pulling triangulations."""

    def __init__(self, facet_sets):
        self.facet_sets = facet_sets
        self.inc = {}
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


def _finish(V, ids, rows1, merged, rows2, R, options):
    """Check the facets (flat, closed up), triangulate them and cone them from the origin.

    ``ids`` (f1, m) are the simplicial facets, as vertex numbers, with rows
    ``rows1``; ``merged`` are the other facets as frozensets, with rows ``rows2``.
    """
    m = V.shape[1]
    if len(V) <= m or len(ids) + len(merged) <= m:
        raise TriangulationError(f"found {len(V)} vertices and {len(ids) + len(merged)} facets: too few in R^{m}")
    sizes = np.array([len(f) for f in merged], dtype=int)
    if np.any(sizes < m):
        raise TriangulationError(f"a facet has {sizes.min()} vertices, fewer than {m}")
    for k in np.unique(sizes):
        who = np.flatnonzero(sizes == k)
        pts = V[np.array([sorted(merged[f]) for f in who])]
        g = rows2[who]
        dev = np.abs(np.einsum("fkm,fm->fk", pts, g) - 1.0) / np.linalg.norm(g, axis=1, keepdims=True)
        if dev.max() > _RTOL * R:
            raise TriangulationError(f"a facet is not flat: a vertex lies {dev.max():.3g} off its hyperplane")
    # Ridges: the (m-1)-subsets of the simplicial facets, the lattice's for the others.
    drop = np.array([[i for i in range(m) if i != j] for j in range(m)], dtype=int).reshape(m, m - 1)
    small = [np.sort(ids, axis=1)[:, drop].reshape(-1, m - 1)]
    big = Counter()
    simplices = [ids]
    if merged:
        in_merged = np.zeros(len(V), dtype=bool)
        in_merged[[v for f in merged for v in f]] = True
        touching = [frozenset(s.tolist()) for s in ids[np.any(in_merged[ids], axis=1)]]
        faces = _Faces(list(merged) + touching)
        for S in merged:
            for r in faces.subfaces(S, m - 1):
                if len(r) == m - 1:
                    small.append(np.array(sorted(r))[None, :])
                else:
                    big[r] += 1
            simplices.append(np.array(faces.pulling(S, m - 1), dtype=int).reshape(-1, m))
    if m > 1:
        _, counts = np.unique(np.vstack(small), axis=0, return_counts=True)
        bad = sorted({int(c) for c in counts if c != 2} | {c for c in big.values() if c != 2})
        if bad:
            raise TriangulationError(f"the facets do not close up: some ridges lie in {bad} facets instead of 2")
    simplices = np.vstack(simplices)
    facets = np.vstack([rows1, rows2])
    return ConeTriangulation(V, facets, simplices, np.abs(np.linalg.det(V[simplices])), options or "")
