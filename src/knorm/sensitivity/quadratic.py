"""Exact extremes of degree-2 polynomial per-record statistics on a box.

For an additive statistic T = sum_i t(z_i) with records z in a box D, the hull of
the sensitivity space is P - P with P = Hull(t(D)) (errata item 5), so its
support function is h(c) = max_z c.t(z) - min_z c.t(z). When every coordinate of
t is a polynomial of degree <= 2, c.t(z) = z'Q z + g'z + const is a quadratic and
its extremes over the box are found exactly by enumerating the faces of the box:
a maximiser lies in the relative interior of some face, where it is a stationary
point of the quadratic restricted to that face, i.e. solves a linear system. When
that system is singular the quadratic is constant on its solution set, whose
closure meets a lower-dimensional face, so the enumeration still attains the
optimum. Cost: 3^d small linear solves per direction for d active variables.
"""

from __future__ import annotations

import itertools

import numpy as np

from knorm._validation import check_vectors

__all__ = ["QuadraticStatistic"]

# Relative slack added to computed maxima (and taken from minima) so that
# floating-point error in the face solves can never under-state h(c).
_SLACK = 1e-10


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
        check_vectors(A, A.shape[2], "A", "QuadraticStatistic")
        check_vectors(b, b.shape[1], "b", "QuadraticStatistic")
        self.dim, self.record_dim = A.shape[0], A.shape[1]
        self.A = 0.5 * (A + A.transpose(0, 2, 1))
        self.b = b
        self.const = np.zeros(self.dim)
        if const is not None:
            self.const = check_vectors(const, self.dim, "const", "QuadraticStatistic")
            if self.const.ndim != 1:
                raise ValueError(
                    f"The 'const' parameter of QuadraticStatistic must be 1-D of length {self.dim}. "
                    f"Got shape {self.const.shape} instead."
                )
        self.lower = check_vectors(lower, self.record_dim, "lower", "QuadraticStatistic")
        self.upper = check_vectors(upper, self.record_dim, "upper", "QuadraticStatistic")
        if not np.all(self.lower < self.upper):
            j = int(np.argmin(self.upper - self.lower))
            raise ValueError(
                f"The 'lower' and 'upper' parameters of QuadraticStatistic must satisfy lower < upper. "
                f"Got lower[{j}] = {float(self.lower[j])!r} >= upper[{j}] = {float(self.upper[j])!r} instead."
            )
        self.names = list(names) if names is not None else [f"t{j}" for j in range(self.dim)]

    @property
    def is_multilinear(self):
        """True if no coordinate has a squared term: t is affine in each variable."""
        return not np.any(np.einsum("mii->mi", self.A))

    def __call__(self, z):
        """t(z) for records ``z`` of shape (..., d)."""
        z = np.asarray(z, float)
        return np.einsum("...i,mij,...j->...m", z, self.A, z) + z @ self.b.T + self.const

    def vertices(self):
        """Return the 2^d vertices of the record box.

        Returns
        -------
        ndarray of shape (2 ** d, d)
            Every choice of lower or upper bound per coordinate.
        """
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
            The maximum of c.t(z) over the box, raised by a relative 1e-10 so that
            rounding can never under-state it (certified).
        lo : ndarray of shape (k,)
            The minimum, lowered likewise.
        zhi : ndarray of shape (k, d)
            Records attaining the maximum (up to rounding).
        zlo : ndarray of shape (k, d)
            Records attaining the minimum.

        Notes
        -----
        Face enumeration (module notes): 3^a small linear solves per direction, for
        the a record variables that the direction involves.
        """
        c = np.atleast_2d(np.asarray(c, float))
        Q = np.einsum("km,mij->kij", c, self.A)
        g = c @ self.b
        k, d = g.shape
        base = np.where((self.lower <= 0) & (self.upper >= 0), 0.0, self.lower)  # any point for inactive vars
        best_hi, best_lo = np.full(k, -np.inf), np.full(k, np.inf)
        zhi, zlo = np.tile(base, (k, 1)), np.tile(base, (k, 1))
        # Enumerate faces only over the variables each direction involves: 3^|active| solves.
        active = np.any(Q != 0, axis=1) | (g != 0)
        patterns, group = np.unique(active, axis=0, return_inverse=True)
        for gi, pattern in enumerate(patterns):
            rows = np.flatnonzero(group.ravel() == gi)
            self._extremes_group(Q[rows], g[rows], np.flatnonzero(pattern), base, rows, best_hi, best_lo, zhi, zlo)
        const = c @ self.const
        scale = np.maximum(np.abs(best_hi), np.abs(best_lo)) + 1.0
        return best_hi + const + _SLACK * scale, best_lo + const - _SLACK * scale, zhi, zlo

    def _extremes_group(self, Q, g, active, base, out_rows, best_hi, best_lo, zhi, zlo):
        """Face enumeration for directions sharing the active variables ``active``."""
        k = len(g)
        rows = np.arange(k)
        for n_free in range(len(active) + 1):
            for free in itertools.combinations(active.tolist(), n_free):
                fixed = [i for i in active.tolist() if i not in free]
                for z in self._face_points(Q, g, list(free), fixed, base):
                    val = np.einsum("kci,kij,kcj->kc", z, Q, z) + np.einsum("kci,ki->kc", z, g)
                    ok = np.all((z >= self.lower - 1e-12) & (z <= self.upper + 1e-12), axis=2)
                    vhi = np.where(ok, val, -np.inf)
                    vlo = np.where(ok, val, np.inf)
                    ih, il = vhi.argmax(axis=1), vlo.argmin(axis=1)
                    up = vhi[rows, ih] > best_hi[out_rows]
                    best_hi[out_rows[up]] = vhi[rows, ih][up]
                    zhi[out_rows[up]] = z[rows, ih][up]
                    dn = vlo[rows, il] < best_lo[out_rows]
                    best_lo[out_rows[dn]] = vlo[rows, il][dn]
                    zlo[out_rows[dn]] = z[rows, il][dn]

    def _face_points(self, Q, g, free, fixed, base):
        """Stationary points of the quadratic on every face with ``free`` variables free.

        Yields arrays of shape (k, n_combos, d): one candidate per direction and
        per lower/upper assignment of the fixed variables.
        """
        k, d = g.shape
        corners = list(itertools.product(*[(self.lower[i], self.upper[i]) for i in fixed]))
        combos = np.array(corners, dtype=float).reshape(len(corners), len(fixed))
        z = np.broadcast_to(base, (k, len(combos), d)).copy()
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
        yield z
