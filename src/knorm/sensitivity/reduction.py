"""Flat sensitivity spaces: release the coordinates that carry information, reconstruct the rest.

When the values t(z) of a per-record map all lie in an affine subspace t0 + L of R^m with
dim L = r < m (counts that sum to n, Borda totals, a constant or duplicated coordinate),
S_T = t(D) - t(D) lies in L and no ball of R^m fits it: a norm ball is absorbing. Pick r
coordinates I on which the projection of L is one-to-one. For every record,
t_J(z) - t0_J = R (t_I(z) - t0_I) on the other coordinates J, with R = B_J B_I^{-1} for
any basis B of L, so summing over the n records

    T_J = R T_I + n (t0_J - R t0_I).

Releasing T_I with a mechanism for the projected space S_{T_I} (the projection is
one-to-one on L, so nothing is lost) and computing T_J by this formula is
post-processing with the public n (replace-one neighbours, paper Definition "DP").
Under add/remove neighbours S_T = t(D) and -t(D) is flat only when t(D) lies in a
linear subspace, and then T_J = R T_I with no n at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from knorm._validation import check_count, check_vectors, param_error

__all__ = ["AffineReduction", "reduction_from_basis", "span_basis"]

# Singular values below this fraction of the largest are rounding: the span is smaller.
RANK_RTOL = 1e-9


@dataclass(frozen=True)
class AffineReduction:
    """How a flat statistic's released coordinates determine the others exactly.

    Built by :meth:`knorm.sensitivity.SensitivitySpace.affine_reduction`; each parameter
    is kept as the attribute of the same name.

    Parameters
    ----------
    full_dim : int
        Dimension m of the full statistic.
    released : ndarray of int, shape (r,)
        The released coordinates I, in increasing order.
    matrix : ndarray of shape (m - r, r)
        R with T_J = R T_I + n per_record on the other coordinates J (increasing order).
    per_record : ndarray of shape (m - r,) or None
        The offset t0_J - R t0_I for any record value t0: the part of T_J that each record adds
        whatever its value; all zeros under add/remove neighbours; None when unknown
        (a space given only by its support function, which says where S_T lies but not
        where T does).
    method : str
        How the flat directions were found.
    names : tuple of str, default ()
        Names of the full statistic's coordinates, when known.

    Notes
    -----
    The relation holds for every dataset of n records (module notes), so
    :meth:`expand` of a released T_I + V is post-processing of a private release.

    Examples
    --------
    Counts of 3 categories, which sum to n: the first two are released.

    >>> import numpy as np
    >>> red = AffineReduction(3, np.array([0, 1]), np.array([[-1.0, -1.0]]), np.array([1.0]), "histogram")
    >>> red.reduce([4.0, 1.0, 5.0]).tolist(), red.expand([4.0, 1.0], n_records=10).tolist()
    ([4.0, 1.0], [4.0, 1.0, 5.0])
    """

    full_dim: int
    released: np.ndarray
    matrix: np.ndarray
    per_record: np.ndarray | None
    method: str
    names: tuple = field(default=())

    @property
    def dim(self):
        """Number r of released coordinates."""
        return len(self.released)

    @property
    def dropped(self):
        """The reconstructed coordinates J, in increasing order."""
        return np.setdiff1d(np.arange(self.full_dim), self.released)

    @property
    def needs_n(self):
        """Whether :meth:`expand` needs the public number of records."""
        return self.per_record is None or bool(np.any(self.per_record != 0))

    def reduce(self, t):
        """Return the released coordinates T_I of full statistics.

        Parameters
        ----------
        t : array_like of shape (..., full_dim)
            Values of the full statistic.

        Returns
        -------
        ndarray of shape (..., dim)
            The released coordinates.
        """
        t = check_vectors(t, self.full_dim, "t", "AffineReduction.reduce")
        return t[..., self.released].copy()

    def expand(self, v, n_records=None, *, per_record=None):
        """Return the full statistic from released coordinates (exact post-processing).

        Parameters
        ----------
        v : array_like of shape (..., dim)
            Released (for instance noisy) coordinates T_I.
        n_records : int, optional
            The public number of records: needed unless :attr:`per_record` is all zeros.
        per_record : array_like of shape (full_dim - dim,), optional
            The per-record offset t0_J - R t0_I, required when :attr:`per_record` is
            None (spaces given by a support function only).

        Returns
        -------
        ndarray of shape (..., full_dim)
            T with T_I = v and T_J = R v + n per_record.
        """
        owner = "AffineReduction.expand"
        v = check_vectors(v, self.dim, "v", owner)
        offset = self.per_record
        if per_record is not None:
            offset = check_vectors(per_record, self.full_dim - self.dim, "per_record", owner)
        if offset is None:
            raise param_error(
                "per_record",
                owner,
                "given for a space known only through its support function (it says where S_T lies, not where T "
                "does): the value t0_J - R t0_I for any record value t0",
                None,
                TypeError,
            )
        out = np.empty(v.shape[:-1] + (self.full_dim,))
        out[..., self.released] = v
        rest = v @ self.matrix.T
        if np.any(offset != 0):
            if n_records is None:
                raise param_error(
                    "n_records", owner, "an int >= 0 (the public number of records)", n_records, TypeError
                )
            rest = rest + check_count(n_records, "n_records", owner) * offset
        out[..., self.dropped] = rest
        return out

    def lift(self, u):
        """Return the full difference vectors of released differences: u_J = R u_I.

        Parameters
        ----------
        u : array_like of shape (..., dim)
            Differences of released coordinates (points of the reduced S_T).

        Returns
        -------
        ndarray of shape (..., full_dim)
            The points of S_T they come from (the projection is one-to-one on L).
        """
        u = np.asarray(u, dtype=float)
        out = np.empty(u.shape[:-1] + (self.full_dim,))
        out[..., self.released] = u
        out[..., self.dropped] = u @ self.matrix.T
        return out

    def describe(self):
        """Return a one-line description for reports.

        Returns
        -------
        str
            Which coordinates are released and how the others are rebuilt.
        """
        names = self.names or tuple(f"t{j}" for j in range(self.full_dim))
        drop = ", ".join(names[j] for j in self.dropped)
        how = "from the released ones and n" if self.needs_n else "from the released ones"
        return f"flat: {self.dim} of {self.full_dim} coordinates released; {drop} rebuilt exactly {how} ({self.method})"


def span_basis(points, *, rtol=RANK_RTOL):
    """Return an orthonormal basis of the span of ``points`` (rows), by SVD with a relative rank tolerance.

    Parameters
    ----------
    points : array_like of shape (k, m)
        Vectors.
    rtol : float, default 1e-9
        Singular values at most rtol times the largest count as zero.

    Returns
    -------
    ndarray of shape (m, r)
        Orthonormal columns spanning the rows' span (r = 0 for all-zero input).
    """
    P = np.atleast_2d(np.asarray(points, dtype=float))
    m = P.shape[1]
    if not np.any(P):
        return np.zeros((m, 0))
    _, s, vt = np.linalg.svd(P, full_matrices=False)
    r = int(np.sum(s > rtol * s[0]))
    return vt[:r].T


def select_coordinates(B):
    """Return the first coordinates (in order) on which the column span of ``B`` projects one-to-one.

    Greedy: coordinate j is kept when its row of B is independent of the kept rows, so
    the earliest coordinates are released and the last ones reconstructed (as for the
    count and vote balls of :mod:`knorm.geometry.induced`).
    """
    m, r = B.shape
    keep: list[int] = []
    for j in range(m):
        trial = B[keep + [j]]
        s = np.linalg.svd(trial, compute_uv=False)
        if s[-1] > 1e-8 * max(1.0, s[0]):
            keep.append(j)
            if len(keep) == r:
                break
    return np.array(keep, dtype=int)


def reduction_from_basis(B, t0, method, *, names=()):
    """Return the :class:`AffineReduction` of a span L (columns of ``B``) through the record value ``t0``.

    Parameters
    ----------
    B : ndarray of shape (m, r)
        A basis of L, r < m.
    t0 : ndarray of shape (m,) or None
        Any per-record value t(z) (zeros for add/remove, None when unknown).
    method : str
        How L was found.
    names : tuple of str, optional
        Coordinate names.

    Returns
    -------
    AffineReduction
        Released coordinates I, R = B_J B_I^{-1} and the per-record offset.
    """
    m, r = B.shape
    kept = select_coordinates(B)
    rest = np.setdiff1d(np.arange(m), kept)
    R = _snap(B[rest] @ np.linalg.inv(B[kept]) if r else np.zeros((len(rest), 0)))
    per = None if t0 is None else _snap(np.asarray(t0, float)[rest] - R @ np.asarray(t0, float)[kept])
    return AffineReduction(m, kept, R, per, method, tuple(names))


def _snap(x):
    """Round entries that are within rounding error of a short decimal (-1 + 2e-16 -> -1), so that
    reconstructions of integer statistics stay integers; others are left alone."""
    x = np.asarray(x, dtype=float)
    short = np.round(x, 9)
    close = np.abs(x - short) <= 1e-13 * np.maximum(1.0, np.abs(x))
    return np.where(close, short, x)
