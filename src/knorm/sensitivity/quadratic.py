"""Exact extremes of degree-2 polynomial per-record statistics on a box.

For an additive statistic T = sum_i t(z_i) with records z in a box D, the hull of
the sensitivity space is P - P with P = Hull(t(D)) (errata item 5), so its
support function is h(c) = max_z c.t(z) - min_z c.t(z). When every coordinate of
t is a polynomial of degree <= 2, c.t(z) = z'Q z + g'z + const is a quadratic.

Its variables split into the connected components of the interaction graph (an
edge j - k when some coordinate has a cross term z_j z_k). Over a box, which is a
product, the quadratic is a sum of one quadratic per component, so its maximum is
the sum of the components' maxima. A one-variable component is maximised in closed
form (the two ends and the stationary point); a larger one by enumerating the
faces of its box: a maximiser lies in the relative interior of some face, where it
is a stationary point of the quadratic restricted to that face, i.e. solves a
linear system. When that system is singular the quadratic is constant on its
solution set, whose closure meets a lower-dimensional face, so the enumeration
still attains the optimum. Cost per direction: O(d) for linear and separable
statistics, and 3^a small solves for a component with a variables.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.sparse.csgraph import connected_components

from knorm._validation import check_vectors

__all__ = ["QuadraticStatistic"]

# Relative slack added to computed maxima (and taken from minima) so that
# floating-point error in the face solves can never under-state h(c). It is
# relative to a bound on |c.t(z)| over the whole box, not to the optimum alone.
_SLACK = 1e-10
# vertices() refuses boxes with more than 2^_MAX_VERTEX_DIM vertices.
_MAX_VERTEX_DIM = 24


class QuadraticStatistic:
    """Per-record map t: R^d -> R^m with t_j(z) = z' A_j z + b_j' z + c_j, on a box.

    Parameters
    ----------
    A : array_like of shape (m, d, d)
        Quadratic coefficients (symmetrised here).
    b : array_like of shape (m, d)
        Linear coefficients.
    lower, upper : array_like of shape (d,)
        The record domain, a box with lower < upper.
    const : array_like of shape (m,), optional
        Constants (they cancel in differences).
    names : list of str, optional
        Names of the m output coordinates (default 't0', 't1', ...).

    Attributes
    ----------
    dim : int
        Number m of output coordinates.
    record_dim : int
        Dimension d of a record.

    Notes
    -----
    Instances are callable: ``t(z)`` maps records of shape (..., d) to (..., m).
    For an additive statistic T = sum_i t(z_i), :meth:`extremes` gives the exact
    support function h(c) = max_z c.t(z) - min_z c.t(z) of Hull(S_T) (module notes;
    errata item 5).

    Examples
    --------
    The statistic of paper Example 2.1, t(z) = (z, 2 z^2) on [-1, 1]:

    >>> t = QuadraticStatistic([[[0.0]], [[2.0]]], [[1.0], [0.0]], [-1.0], [1.0])
    >>> t([0.5]).tolist()
    [0.5, 0.5]
    >>> hi, lo, zhi, zlo = t.extremes([1.0, 1.0])  # max and min of z + 2 z^2 on [-1, 1]
    >>> round(float(hi[0]), 6), round(float(lo[0]), 6), round(float(zlo[0, 0]), 6)
    (3.0, -0.125, -0.25)
    """

    def __init__(self, A, b, lower, upper, const=None, names=None):
        A = np.asarray(A, float)
        b = np.asarray(b, float)
        if A.ndim != 3 or A.shape[1] != A.shape[2] or b.shape != A.shape[:2]:
            raise ValueError(
                f"The 'A' and 'b' parameters of QuadraticStatistic must have shapes (m, d, d) and (m, d). "
                f"Got {A.shape} and {b.shape} instead."
            )
        check_vectors(A, A.shape[2], "A", "QuadraticStatistic", public=True)
        check_vectors(b, b.shape[1], "b", "QuadraticStatistic", public=True)
        self.dim, self.record_dim = A.shape[0], A.shape[1]
        self.A = 0.5 * (A + A.transpose(0, 2, 1))
        self.b = b
        self.const = np.zeros(self.dim)
        if const is not None:
            self.const = check_vectors(const, self.dim, "const", "QuadraticStatistic", public=True)
            if self.const.ndim != 1:
                raise ValueError(
                    f"The 'const' parameter of QuadraticStatistic must be 1-D of length {self.dim}. "
                    f"Got shape {self.const.shape} instead."
                )
        self.lower = check_vectors(lower, self.record_dim, "lower", "QuadraticStatistic", public=True)
        self.upper = check_vectors(upper, self.record_dim, "upper", "QuadraticStatistic", public=True)
        if not np.all(self.lower < self.upper):
            j = int(np.argmin(self.upper - self.lower))
            raise ValueError(
                f"The 'lower' and 'upper' parameters of QuadraticStatistic must satisfy lower < upper. "
                f"Got lower[{j}] = {float(self.lower[j])!r} >= upper[{j}] = {float(self.upper[j])!r} instead."
            )
        self.names = list(names) if names is not None else [f"t{j}" for j in range(self.dim)]

        self._structure()

    def _structure(self):
        """Precompute the interaction components and the separable blocks."""
        off = np.any(self.A != 0, axis=0)
        np.fill_diagonal(off, False)
        _, label = connected_components(off, directed=False)
        comps = [np.flatnonzero(label == k) for k in range(label.max() + 1 if label.size else 0)]
        self._single = np.array([c[0] for c in comps if len(c) == 1], dtype=int)
        self._multi = [c for c in comps if len(c) > 1]
        self._diag = self.A[:, self._single, self._single] if len(self._single) else np.zeros((self.dim, 0))
        self._uses = np.any(self.A != 0, axis=2) | (self.b != 0)  # (m, d): coordinate j involves variable i
        self._base = np.where((self.lower <= 0) & (self.upper >= 0), 0.0, self.lower)
        self._radius = np.maximum(np.abs(self.lower), np.abs(self.upper))

    @property
    def is_multilinear(self):
        """True if no coordinate has a squared term: t is affine in each variable."""
        return not np.any(np.einsum("mii->mi", self.A))

    @property
    def is_linear(self):
        """True if every coordinate is affine: t(z) = b z + const."""
        return not np.any(self.A)

    @property
    def components(self):
        """The connected components of the variables' interaction graph (cross terms), as index arrays."""
        return [np.array([i]) for i in self._single] + [c.copy() for c in self._multi]

    def variables_of(self, rows):
        """Return the record variables that the output coordinates ``rows`` involve.

        Parameters
        ----------
        rows : array_like of int
            Output coordinates.

        Returns
        -------
        ndarray of int
            Sorted indices of the variables with a non-zero coefficient in some row.
        """
        return np.flatnonzero(np.any(self._uses[np.asarray(rows, dtype=int)], axis=0))

    def blocks(self):
        """Return the separable blocks of t: output coordinates grouped with the record variables they use.

        Returns
        -------
        list of (ndarray, ndarray)
            Pairs (coordinates, variables), in order of their first coordinate:
            the connected components of the bipartite graph joining a coordinate to
            every variable it involves. Each coordinate depends only on its block's
            variables, and no variable is shared by two blocks, so t(D) is the
            product of the blocks' images (D is a box). A constant coordinate is a
            block with no variables.
        """
        m, d = self.dim, self.record_dim
        adj = np.zeros((m + d, m + d), dtype=bool)
        adj[:m, m:] = self._uses
        _, label = connected_components(adj, directed=False)
        out = []
        seen = set()
        for j in range(m):
            k = label[j]
            if k in seen:
                continue
            seen.add(k)
            members = np.flatnonzero(label == k)
            out.append((members[members < m], members[members >= m] - m))
        return out

    def coefficient_rows(self, with_const=False):
        """Return one row of coefficients per output coordinate (upper triangle of A_j, then b_j).

        Parameters
        ----------
        with_const : bool, default False
            Append the constant c_j.

        Returns
        -------
        ndarray of shape (m, d (d + 1) / 2 + d [+ 1])
            A linear dependence sum_j lambda_j row_j = 0 means lambda.t(z) is constant
            in z (and 0 when ``with_const``): the statistic is flat along lambda.
        """
        iu, ju = np.triu_indices(self.record_dim)
        w = np.where(iu == ju, 1.0, 2.0)  # z'A z counts each off-diagonal pair twice
        parts = [self.A[:, iu, ju] * w, self.b]
        if with_const:
            parts.append(self.const[:, None])
        return np.hstack(parts)

    def restrict(self, rows, variables=None, *, names=None):
        """Return the statistic made of the output coordinates ``rows`` (optionally on fewer variables).

        Parameters
        ----------
        rows : array_like of int
            Output coordinates to keep, in order.
        variables : array_like of int, optional
            Record variables to keep; the kept rows must not involve any other.
        names : list of str, optional
            Names of the kept coordinates (default: theirs).

        Returns
        -------
        QuadraticStatistic
            The map t restricted to those coordinates, on the box of the kept variables.

        Raises
        ------
        ValueError
            If a kept row involves a dropped variable.
        """
        rows = np.asarray(rows, dtype=int)
        A, b = self.A[rows], self.b[rows]
        lower, upper = self.lower, self.upper
        if variables is not None:
            v = np.asarray(variables, dtype=int)
            if not len(v):  # constant rows (a count): keep one variable they do not use
                v = np.zeros(1, dtype=int)
            dropped = np.setdiff1d(self.variables_of(rows), v)
            if len(dropped):
                raise ValueError(
                    "The 'variables' parameter of QuadraticStatistic.restrict must include every variable the kept "
                    f"rows involve. Got {v.tolist()}, missing {dropped.tolist()} instead."
                )
            A, b, lower, upper = A[:, v][:, :, v], b[:, v], lower[v], upper[v]
        names = [self.names[j] for j in rows] if names is None else names
        return QuadraticStatistic(A, b, lower, upper, const=self.const[rows], names=names)

    def __call__(self, z):
        """t(z) for records ``z`` of shape (..., d)."""
        z = np.asarray(z, float)
        quad = 0.0 if self.is_linear else np.einsum("...i,mij,...j->...m", z, self.A, z)
        return quad + z @ self.b.T + self.const

    def vertices(self):
        """Return the 2^d vertices of the record box.

        Returns
        -------
        ndarray of shape (2 ** d, d)
            Every choice of lower or upper bound per coordinate.

        Raises
        ------
        ValueError
            For d > 24 (more than 16 million vertices): use :meth:`extremes`, which
            never enumerates them.
        """
        if self.record_dim > _MAX_VERTEX_DIM:
            raise ValueError(
                f"QuadraticStatistic.vertices: the box has 2^{self.record_dim} vertices, more than "
                f"2^{_MAX_VERTEX_DIM} can be listed. Use extremes(c), which never enumerates them."
            )
        return np.array(list(itertools.product(*zip(self.lower, self.upper))))

    def extremes(self, c):
        """Return the exact max and min of c.t(z) over the box, with maximisers and minimisers.

        Parameters
        ----------
        c : array_like of shape (m,) or (k, m)
            Directions.

        Returns
        -------
        hi : ndarray of shape (k,)
            The maximum of c.t(z) over the box, raised by 1e-10 times a bound on
            |c.t(z) - c.const| over the box, so that rounding can never under-state
            it (certified).
        lo : ndarray of shape (k,)
            The minimum, lowered likewise.
        zhi : ndarray of shape (k, d)
            Records attaining the maximum (up to rounding).
        zlo : ndarray of shape (k, d)
            Records attaining the minimum.

        Notes
        -----
        The quadratic is a sum over the components of the interaction graph (module
        notes): closed form for one-variable components, face enumeration (3^a
        small linear solves for the a variables a direction involves) for larger ones.
        """
        c = np.atleast_2d(np.asarray(c, float))
        k = len(c)
        g = c @ self.b
        hi, lo, mag = np.zeros(k), np.zeros(k), np.zeros(k)
        zhi, zlo = np.tile(self._base, (k, 1)), np.tile(self._base, (k, 1))
        s = self._single
        if len(s):
            vh, vl, ah, al, mg = _separable_extremes(c @ self._diag, g[:, s], self.lower[s], self.upper[s])
            hi += vh
            lo += vl
            mag += mg
            zhi[:, s], zlo[:, s] = ah, al
        for comp in self._multi:
            Q = np.einsum("km,mij->kij", c, self.A[:, comp][:, :, comp])
            gc = g[:, comp]
            vh, vl, ah, al = _component_extremes(Q, gc, self.lower[comp], self.upper[comp], self._base[comp])
            r = self._radius[comp]
            hi += vh
            lo += vl
            mag += np.einsum("kij,i,j->k", np.abs(Q), r, r) + np.abs(gc) @ r
            zhi[:, comp], zlo[:, comp] = ah, al
        const = c @ self.const
        slack = _SLACK * (mag + 1.0)
        return hi + const + slack, lo + const - slack, zhi, zlo

    def face_work(self, c):
        """Face solves that :meth:`extremes` spends on each row of ``c``: sum over components of 3^a.

        ``a`` is the number of a component's variables that the direction involves; callers
        with an optional use of extremes (an attained lower bound) skip directions that
        would cost too much (3^a grows fast for statistics with many cross terms).

        Parameters
        ----------
        c : array_like of shape (k, m) or (m,)
            Directions in the statistic's space.

        Returns
        -------
        ndarray of shape (k,)
            The number of face solves per direction.
        """
        c = np.atleast_2d(np.asarray(c, float))
        involved = (np.abs(c) > 0).astype(float) @ self._uses.astype(float) > 0  # (k, d)
        work = np.zeros(len(c))
        for comp in self._multi:
            work += 3.0 ** involved[:, comp].sum(axis=1)
        return work


def _separable_extremes(q, g, lower, upper):
    """Extremes of sum_i q_i z_i^2 + g_i z_i over a box, per row: the two ends or the stationary point."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(q != 0, -g / (2.0 * np.where(q != 0, q, 1.0)), lower)
    stat = np.where((stat >= lower) & (stat <= upper), stat, lower)
    cand = np.stack(np.broadcast_arrays(lower, upper, stat))  # (3, k, n)
    vals = q * cand * cand + g * cand
    ih, il = vals.argmax(axis=0), vals.argmin(axis=0)
    vh = np.take_along_axis(vals, ih[None], axis=0)[0]
    vl = np.take_along_axis(vals, il[None], axis=0)[0]
    r = np.maximum(np.abs(lower), np.abs(upper))
    mag = (np.abs(q) * r * r + np.abs(g) * r).sum(axis=1)
    return (
        vh.sum(axis=1),
        vl.sum(axis=1),
        np.take_along_axis(cand, ih[None], axis=0)[0],
        np.take_along_axis(cand, il[None], axis=0)[0],
        mag,
    )


def _component_extremes(Q, g, lower, upper, base):
    """Face enumeration over one component's box: (max, min, argmax, argmin) per row of Q, g."""
    k, a = g.shape
    best_hi, best_lo = np.full(k, -np.inf), np.full(k, np.inf)
    zhi, zlo = np.tile(base, (k, 1)), np.tile(base, (k, 1))
    # Enumerate faces only over the variables each direction involves: 3^|active| solves.
    active = np.any(Q != 0, axis=1) | (g != 0)
    patterns, group = np.unique(active, axis=0, return_inverse=True)
    for gi, pattern in enumerate(patterns):
        rows = np.flatnonzero(group.ravel() == gi)
        _enumerate_faces(
            Q[rows], g[rows], np.flatnonzero(pattern), lower, upper, base, rows, best_hi, best_lo, zhi, zlo
        )
    # Directions involving no variable: the quadratic is 0 on the whole box.
    none = ~np.isfinite(best_hi)
    best_hi[none] = best_lo[none] = 0.0
    return best_hi, best_lo, zhi, zlo


def _enumerate_faces(Q, g, active, lower, upper, base, out_rows, best_hi, best_lo, zhi, zlo):
    """Face enumeration for directions sharing the active variables ``active``."""
    k = len(g)
    rows = np.arange(k)
    for n_free in range(len(active) + 1):
        for free in itertools.combinations(active.tolist(), n_free):
            fixed = [i for i in active.tolist() if i not in free]
            z = _face_points(Q, g, list(free), fixed, lower, upper, base)
            with np.errstate(invalid="ignore"):  # inf marks no stationary point; masked out below
                val = np.einsum("kci,kij,kcj->kc", z, Q, z) + np.einsum("kci,ki->kc", z, g)
            ok = np.all((z >= lower - 1e-12) & (z <= upper + 1e-12), axis=2)
            vhi = np.where(ok, val, -np.inf)
            vlo = np.where(ok, val, np.inf)
            ih, il = vhi.argmax(axis=1), vlo.argmin(axis=1)
            up = vhi[rows, ih] > best_hi[out_rows]
            best_hi[out_rows[up]] = vhi[rows, ih][up]
            zhi[out_rows[up]] = z[rows, ih][up]
            dn = vlo[rows, il] < best_lo[out_rows]
            best_lo[out_rows[dn]] = vlo[rows, il][dn]
            zlo[out_rows[dn]] = z[rows, il][dn]


def _face_points(Q, g, free, fixed, lower, upper, base):
    """Stationary points of the quadratic on every face with ``free`` variables free.

    Returns an array of shape (k, n_combos, a): one candidate per direction and per
    lower/upper assignment of the fixed variables.
    """
    k, a = g.shape
    corners = list(itertools.product(*[(lower[i], upper[i]) for i in fixed]))
    combos = np.array(corners, dtype=float).reshape(len(corners), len(fixed))
    z = np.broadcast_to(base, (k, len(combos), a)).copy()
    z[:, :, fixed] = combos[None]
    if free:
        qff = Q[:, free][:, :, free]
        # grad_F = 2 Q_FF z_F + 2 Q_FR z_R + g_F = 0
        rhs = -(g[:, free][:, :, None] + 2 * np.einsum("kfr,cr->kfc", Q[:, free][:, :, fixed], combos))
        sol = np.linalg.pinv(2 * qff) @ rhs  # (k, f, ncombo); pinv tolerates singular faces
        resid = np.abs(2 * qff @ sol - rhs).max(axis=1)
        scale = np.abs(rhs).max(axis=1) + np.abs(qff).max(axis=(1, 2))[:, None] + 1.0
        z[:, :, free] = sol.transpose(0, 2, 1)
        # Inconsistent systems have no stationary point: push them out of the box.
        z[resid > 1e-9 * scale] = np.inf
    return z
