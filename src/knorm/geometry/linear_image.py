"""The image A K of a norm ball under an invertible linear map."""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_vectors
from knorm.geometry.base import NormBall, NotANormBallError, Volume

__all__ = ["LinearImage"]

# Relative tolerance of the invertibility check (condition number of A).
_MAX_CONDITION = 1e12


class LinearImage(NormBall):
    """The ball A K = {A u : u in K} for an invertible matrix A.

    Parameters
    ----------
    base : NormBall
        The ball K.
    matrix : array_like of shape (m, m)
        The invertible map A (m = base.dim); a 1-D array means the diagonal matrix.
    name : str, optional
        Label for ``repr``.

    Raises
    ------
    NotANormBallError
        If A is singular (or numerically so: condition number above 1e12); A K would
        then be flat, not absorbing.

    Notes
    -----
    A K is convex, bounded, symmetric and absorbing when K is and A is invertible, so it
    is a norm ball, with

    * gauge ||v||_{AK} = ||A^{-1} v||_K;
    * support h_{AK}(c) = h_K(A' c);
    * volume |det A| vol(K) (change of variables, the paper's Lemma on Lebesgue measure
      under linear maps, in the proof of its depth results);
    * exact uniform sampling: A U with U uniform on K (a linear map preserves uniformity
      up to the constant Jacobian);
    * a certified box: |(A u)_i| <= sum_j |A_ij| b_j for u in the box [-b, b] of K.

    Linear images carry exact hulls across affine changes of variables: the hull of the
    sensitivity space of (sum x, sum x^2) for x in [lo, hi] is the image of K_2 (paper
    Example 2.1, errata item 3) under the map of (z, 2 z^2) to (x, x^2), z = (2 x - lo - hi)
    / (hi - lo), because S_T only changes by that linear map (constants cancel in
    differences).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> box = LinearImage(LpBall(2, float("inf")), [2.0, 0.5])  # [-2, 2] x [-0.5, 0.5]
    >>> float(box.norm([1.0, 0.5])), float(box.volume())
    (1.0, 4.0)
    """

    def __init__(self, base, matrix, *, name=None):
        if not isinstance(base, NormBall):
            raise TypeError(
                f"The 'base' parameter of LinearImage must be a NormBall. Got {type(base).__name__} instead."
            )
        super().__init__(base.dim)
        A = np.asarray(matrix, dtype=float)
        diagonal = A.ndim == 1  # given as a diagonal: condition number and inverse in closed form (no SVD, no LU)
        if diagonal:
            A = np.diag(check_vectors(A, base.dim, "matrix", "LinearImage", public=True))
        if A.shape != (base.dim, base.dim):
            raise ValueError(
                f"The 'matrix' parameter of LinearImage must have shape ({base.dim}, {base.dim}) or ({base.dim},). "
                f"Got shape {A.shape} instead."
            )
        check_vectors(A, base.dim, "matrix", "LinearImage", public=True)
        if diagonal:
            a = np.abs(np.diag(A))
            cond = a.max() / a.min() if a.min() > 0 else math.inf
        else:
            cond = np.linalg.cond(A)
        if not cond < _MAX_CONDITION:
            raise NotANormBallError(
                # The bound, not the computed value: a singular matrix's condition number is
                # round-off (inf on one BLAS kernel, 6e16 on another).
                f"LinearImage: the matrix is singular (condition number above {_MAX_CONDITION:.0e}), "
                "so A K is flat and not absorbing (not a norm ball)."
            )
        self.base = base
        self.matrix = A
        self._inverse = np.diag(1.0 / np.diag(A)) if diagonal else np.linalg.inv(A)
        self.name = None if name is None else str(name)
        self._diagonal = np.array_equal(A, np.diag(np.diag(A)))
        self._box = np.abs(A) @ base.bounding_box()

    def _cache_key(self):
        key = self.base.cache_key
        return None if key is None else ("LinearImage", key, self.matrix.tobytes())

    def _apply(self, M, u):
        if self._diagonal:
            return u * np.diag(M)
        return u @ M.T

    def _gauge(self, u):
        return self.base._gauge(self._apply(self._inverse, u))

    def _contains(self, u):
        return self.base._contains(self._apply(self._inverse, u))

    def _support(self, c):
        return self.base._support(c @ self.matrix)

    @property
    def has_support(self):
        """Whether the base ball's support function is known."""
        return self.base.has_support

    def _bounding_box(self):
        return self._box

    def _log_volume(self, rng, n_samples):
        lv = self.base._log_volume(rng, n_samples)
        logdet = float(np.linalg.slogdet(self.matrix)[1])
        return Volume(lv + logdet, exact=lv.exact, stderr=lv.stderr, method=lv.method)

    def _volume(self, rng, n_samples):
        v = self.base._volume(rng, n_samples)
        det = abs(float(np.linalg.det(self.matrix)))
        return Volume(v * det, exact=v.exact, stderr=v.stderr * det, method=v.method)

    def _sample_uniform(self, n, rng):
        return self._apply(self.matrix, self.base._sample_uniform(n, rng))

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"LinearImage({label}{self.base!r}, det={math.exp(float(np.linalg.slogdet(self.matrix)[1])):.4g})"
