"""The layout of the linear-regression statistic of the paper's Section 5.1, and its K_T.

T holds the unique non-constant entries of X'X and X'Y for a design X = [1, X0]
with X0 in [-1,1]^{n x p} and Y in [-1,1]^n, each rescaled to sensitivity 2 (the
sums of squares are doubled). Its length is d = (p+1)(p+2)/2 - 1 + (p+1).

With ``response_square=True`` one more coordinate, sum 2 Y^2, completes it to the whole
Gram matrix of (1, X0, Y), which identifies the residual variance (the paper's T does not).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from knorm.geometry import IntersectionBall, K2Ball, k3_ball
from knorm.sensitivity.quadratic import QuadraticStatistic

__all__ = ["RegressionLayout", "kt_ball"]


class RegressionLayout:
    """Coordinates of the Section 5.1 statistic for p predictors: the one owner of the layout.

    Replace-one neighbours (the paper's): T = (sum x_j (p), sum x_j x_k for j < k,
    sum 2 x_j^2 (p), sum y, sum x_j y (p)), squares doubled so that every entry has
    sensitivity 2; n is public. Add/remove neighbours: the released vector is
    (n, T') with the count first and the squares not doubled, so that every entry has
    add/remove sensitivity 1 (n is private there). With ``response_square=True`` the
    vector ends with one more coordinate, sum 2 y^2 (sum y^2 under add/remove), so that
    it holds the whole Gram matrix of (1, x, y); every other position is unchanged.

    Parameters
    ----------
    p : int
        Number of predictors, not counting the intercept.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation, which decides the released coordinates.
    response_square : bool, default False
        Append the sum of squares of the response (not in the paper's statistic).

    Attributes
    ----------
    dim : int
        Length of the released vector: (p+1)(p+2)/2 - 1 + (p+1), plus 1 for the count
        under add/remove (errata, facts: 26 for p = 5), plus 1 for the response square.
    lin, cross, sq, xy : ndarray of int
        Positions of sum x_j, sum x_j x_k (j < k, in the order of ``pairs``), the
        squares and sum x_j y in the released vector.
    y : int
        Position of sum y.
    yy : int or None
        Position of the response square (``response_square=True`` only), the last one.
    count : int or None
        Position of n (add/remove only).
    square_weight : float
        2 (replace: squares doubled) or 1 (add/remove).
    pairs : list of tuple
        The pairs (j, k), j < k.
    names : list of str
        Names of the released coordinates.

    Examples
    --------
    >>> RegressionLayout(1).names
    ['x1', '2x1^2', 'y', 'x1y']
    >>> RegressionLayout(1, neighbours="add_remove").names
    ['n', 'x1', 'x1^2', 'y', 'x1y']
    >>> RegressionLayout(1, response_square=True).names
    ['x1', '2x1^2', 'y', 'x1y', '2y^2']
    """

    def __init__(self, p, neighbours="replace", *, response_square=False):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"The 'p' parameter of RegressionLayout must be an int >= 1. Got {p!r} instead.")
        if neighbours not in ("replace", "add_remove"):
            raise ValueError(
                "The 'neighbours' parameter of RegressionLayout must be 'replace' or 'add_remove'. "
                f"Got {neighbours!r} instead."
            )
        self.p = p = int(p)
        self.neighbours = neighbours
        self.pairs = list(itertools.combinations(range(p), 2))
        off = 1 if neighbours == "add_remove" else 0
        self.count = 0 if off else None
        self.square_weight = 1.0 if off else 2.0
        self.lin = off + np.arange(p)
        self.cross = off + p + np.arange(len(self.pairs))
        self.sq = off + p + len(self.pairs) + np.arange(p)
        self.y = int(off + 2 * p + len(self.pairs))
        self.xy = self.y + 1 + np.arange(p)
        self.response_square = bool(response_square)
        self.yy = int(self.xy[-1] + 1) if self.response_square else None
        self.dim = int(self.xy[-1] + 1) + int(self.response_square)
        sq = "2{}^2" if not off else "{}^2"
        self.names = (
            (["n"] if off else [])
            + [f"x{j + 1}" for j in range(p)]
            + [f"x{j + 1}x{k + 1}" for j, k in self.pairs]
            + [sq.format(f"x{j + 1}") for j in range(p)]
            + ["y"]
            + [f"x{j + 1}y" for j in range(p)]
            + ([sq.format("y")] if self.response_square else [])
        )

    def statistic(self):
        """Return the per-record map t(x, y) of the released coordinates, on [-1, 1]^(p+1).

        Returns
        -------
        QuadraticStatistic
            Degree-2 polynomials, so its support function is exact (face enumeration).
        """
        p, d = self.p, self.dim
        A = np.zeros((d, p + 1, p + 1))
        b = np.zeros((d, p + 1))
        const = np.zeros(d)
        b[self.lin, np.arange(p)] = 1.0
        for c, (j, k) in zip(self.cross, self.pairs):
            A[c, j, k] = 1.0
        A[self.sq, np.arange(p), np.arange(p)] = self.square_weight
        b[self.y, p] = 1.0
        A[self.xy, np.arange(p), p] = 1.0
        if self.yy is not None:
            A[self.yy, p, p] = self.square_weight
        if self.count is not None:
            const[self.count] = 1.0
        return QuadraticStatistic(A, b, -np.ones(p + 1), np.ones(p + 1), const=const, names=self.names)

    def from_gram(self, G, s, n):
        """Return the released vector from the Gram matrix and sums of the scaled records.

        Parameters
        ----------
        G : ndarray of shape (p + 1, p + 1)
            The Gram matrix sum_i z_i z_i' of the scaled records z = (x', y') in
            [-1, 1]^(p+1).
        s : ndarray of shape (p + 1,)
            The sum sum_i z_i.
        n : int or float
            Number of records (a coordinate under add/remove only).

        Returns
        -------
        ndarray of shape (dim,)
            The statistic T in the order of :attr:`names` (not private).
        """
        p = self.p
        T = np.empty(self.dim)
        if self.count is not None:
            T[self.count] = n
        T[self.lin] = s[:p]
        j, k = np.array(self.pairs, dtype=int).reshape(-1, 2).T
        T[self.cross] = G[j, k]
        T[self.sq] = self.square_weight * np.diag(G)[:p]
        T[self.y] = s[p]
        T[self.xy] = G[:p, p]
        if self.yy is not None:
            T[self.yy] = self.square_weight * G[p, p]
        return T

    def from_data(self, X, y):
        """Return the released vector for data already in [-1, 1] (checked by the caller).

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Scaled predictors.
        y : ndarray of shape (n,)
            Scaled response.

        Returns
        -------
        ndarray of shape (dim,)
            The statistic T in the order of :attr:`names` (not private).
        """
        Z = np.column_stack([X, y])
        return self.from_gram(Z.T @ Z, Z.sum(axis=0), len(Z))

    @functools.cached_property
    def _gram_index(self):
        # Index of each Gram entry of (1, x') in the vector [n, T] (replace) or F (add/remove).
        p = self.p
        shift = 1 if self.count is None else 0
        idx = np.zeros((p + 1, p + 1), int)
        w = np.ones((p + 1, p + 1))
        idx[0, 0] = 0
        idx[0, 1:] = idx[1:, 0] = shift + self.lin
        diag = np.arange(1, p + 1)
        idx[diag, diag] = shift + self.sq
        w[diag, diag] = 1.0 / self.square_weight
        for c, (j, k) in zip(self.cross, self.pairs):
            idx[j + 1, k + 1] = idx[k + 1, j + 1] = shift + c
        idx_b = shift + np.concatenate([[self.y], self.xy])
        return idx, w, idx_b

    def gram_blocks(self, F, n=None):
        """Return the scaled Gram block of (1, x') and its cross products with y'.

        Parameters
        ----------
        F : ndarray of shape (..., dim)
            Released vectors (noisy or not); leading axes are vectorised over.
        n : float, optional
            The public number of records, required under replace-one neighbours (where it
            is not a coordinate).

        Returns
        -------
        A : ndarray of shape (..., p + 1, p + 1)
            The Gram block sum (1, x')(1, x')' with the intercept first.
        b : ndarray of shape (..., p + 1)
            The cross products sum (1, x') y'.
        """
        F = np.asarray(F, dtype=float)
        if self.count is None:
            if n is None:
                raise ValueError("RegressionLayout.gram_blocks needs the public n under replace-one neighbours.")
            F = np.concatenate([np.full(F.shape[:-1] + (1,), float(n)), F], axis=-1)
        idx, w, idx_b = self._gram_index
        return F[..., idx] * w, F[..., idx_b]

    def from_blocks(self, A, b, sum_y2=None):
        """Return released vectors from Gram blocks: the inverse of :meth:`gram_blocks`.

        Parameters
        ----------
        A : ndarray of shape (..., p + 1, p + 1)
            Gram blocks sum (1, x')(1, x')' with the intercept first; A[..., 0, 0] is the
            count (kept only under add/remove).
        b : ndarray of shape (..., p + 1)
            Cross products sum (1, x') y'.
        sum_y2 : float or ndarray of shape (...), optional
            The sum of y'^2, required exactly when the layout has the response square.

        Returns
        -------
        ndarray of shape (..., dim)
            The vectors in the order of :attr:`names`; leading axes are vectorised over.
        """
        A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float)
        if (sum_y2 is None) != (self.yy is None):
            raise ValueError(
                "RegressionLayout.from_blocks needs 'sum_y2' exactly when the layout has the response square."
            )
        p = self.p
        F = np.empty(A.shape[:-2] + (self.dim,))
        if self.count is not None:
            F[..., self.count] = A[..., 0, 0]
        F[..., self.lin] = A[..., 0, 1:]
        j, k = np.array(self.pairs, dtype=int).reshape(-1, 2).T
        F[..., self.cross] = A[..., j + 1, k + 1]
        F[..., self.sq] = self.square_weight * A[..., np.arange(1, p + 1), np.arange(1, p + 1)]
        F[..., self.y] = b[..., 0]
        F[..., self.xy] = b[..., 1:]
        if self.yy is not None:
            F[..., self.yy] = self.square_weight * np.asarray(sum_y2, dtype=float)
        return F

    def response_sum_of_squares(self, F):
        """Return sum y'^2 from released vectors (``response_square=True`` only).

        Parameters
        ----------
        F : ndarray of shape (..., dim)
            Released vectors (noisy or not); leading axes are vectorised over.

        Returns
        -------
        ndarray of shape (...)
            The response's sum of squares, the last entry undoubled.
        """
        if self.yy is None:
            raise ValueError(
                "RegressionLayout.response_sum_of_squares needs response_square=True: the paper's statistic "
                "(Section 5.1) does not hold sum y^2."
            )
        return np.asarray(F, dtype=float)[..., self.yy] / self.square_weight

    def kt_constraints(self):
        """Return the cylinders of K_T (errata item 5).

        Returns
        -------
        list of (list of int, NormBall)
            K_2 on (x_j, 2 x_j^2), and K_3 on (x_j, x_k, x_j x_k) and on (x_j, y, x_j y);
            with the response square also K_2 on (y, 2 y^2).

        Notes
        -----
        The added cylinder is exact for its pair: (sum y, sum 2 y^2) is the statistic of
        paper Example 2.1 in y, whose sensitivity hull is K_2 (errata item 3). Every
        other cylinder involves no y^2, so S_T still lies in each of them: the ball
        contains S_T and Delta_{K_T} = 1 still holds, attained at u = 2 e_1.
        """
        if self.count is not None:
            raise ValueError("K_T is derived for replace-one neighbours (paper Section 5.1).")
        k2, k3 = K2Ball(), k3_ball()
        cons = [([int(self.lin[j]), int(self.sq[j])], k2) for j in range(self.p)]
        cons += [([j, k, int(c)], k3) for c, (j, k) in zip(self.cross, self.pairs)]
        cons += [([j, self.y, int(self.xy[j])], k3) for j in range(self.p)]
        if self.yy is not None:
            cons.append(([self.y, self.yy], k2))
        return cons


@functools.lru_cache(maxsize=16)
def kt_ball(p, *, response_square=False):
    """Return the paper's Section 5.1 K_T for p predictors, as an :class:`IntersectionBall`.

    Parameters
    ----------
    p : int
        Number of predictors, not counting the intercept.
    response_square : bool, default False
        For the statistic completed by sum 2 y^2 (:class:`RegressionLayout`): K_T gains
        the K_2 cylinder on (sum y, sum 2 y^2).

    Returns
    -------
    IntersectionBall
        K_T in R^d, d = (p+1)(p+2)/2 - 1 + (p+1) (+ 1), in :class:`RegressionLayout` order:
        the cylinders of :meth:`RegressionLayout.kt_constraints`. Cached per arguments.

    Notes
    -----
    Read as in errata item 5: a valid norm ball containing S_T with
    Delta_{K_T} = 1, but an outer approximation of Hull(S_T). The response square
    changes neither: its cylinder is the exact K_2 of (y, 2 y^2) (paper Example 2.1,
    errata item 3).

    Examples
    --------
    >>> ball = kt_ball(1)
    >>> ball.dim, float(ball.norm([2.0, 0.0, 0.0, 0.0]))
    (4, 1.0)
    >>> kt_ball(1, response_square=True).dim
    5
    """
    layout = RegressionLayout(p, response_square=response_square)
    suffix = ", y^2" if response_square else ""
    return IntersectionBall(layout.dim, layout.kt_constraints(), name=f"K_T(p={p}{suffix})")
