"""Declared record domains: a box, or a finite set of records (never read from the data)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knorm._validation import as_real_array, check_vectors

__all__ = ["Box", "FiniteDomain"]


@dataclass(frozen=True)
class Box:
    """A box record domain lower <= z <= upper (declared, never taken from data).

    Parameters
    ----------
    lower, upper : array_like of shape (d,) or float
        Finite bounds with lower < upper in every coordinate; stored as 1-D float
        arrays.

    Examples
    --------
    >>> import numpy as np
    >>> box = Box([0.0, -1.0], [1.0, 1.0])
    >>> box.dim, box.sample(4, np.random.default_rng(0)).shape
    (2, (4, 2))
    """

    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        lo = np.atleast_1d(as_real_array(self.lower, "lower", "Box", public=True))
        hi = np.atleast_1d(as_real_array(self.upper, "upper", "Box", public=True))
        if lo.shape != hi.shape or lo.ndim != 1:
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must be 1-D of equal length. Got shapes {lo.shape} and {hi.shape} instead."
            )
        if len(lo) == 0:
            raise ValueError("The 'lower' and 'upper' parameters of Box must have length >= 1. Got length 0 instead.")
        check_vectors(lo, len(lo), "lower", "Box", public=True)
        check_vectors(hi, len(hi), "upper", "Box", public=True)
        if not np.all(lo < hi):
            j = int(np.argmin(hi - lo))
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must satisfy lower < upper. Got lower[{j}] = {float(lo[j])!r} >= upper[{j}] = {float(hi[j])!r} instead."
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def dim(self):
        """Dimension d of a record."""
        return len(self.lower)

    def sample(self, n, rng):
        """Draw records of the box for diagnostics and estimates (never for certificates).

        Parameters
        ----------
        n : int
            Number of records.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray of shape (n, d)
            Uniform records, except that in the first n // 2 each coordinate is
            moved, with probability 1/2, to a random end of its interval: points on
            random faces and vertices, where extremes of a statistic often lie.
        """
        z = rng.uniform(self.lower, self.upper, size=(n, self.dim))
        k = n // 2
        pin = rng.random((k, self.dim)) < 0.5
        ends = np.where(rng.random((k, self.dim)) < 0.5, self.lower, self.upper)
        z[:k] = np.where(pin, ends, z[:k])
        return z


@dataclass(frozen=True)
class FiniteDomain:
    """A finite record domain: the rows of ``records``.

    Parameters
    ----------
    records : array_like of shape (k, d) or (k,)
        At least 2 possible records, with finite entries; a 1-D array
        holds k records of dimension 1. Stored as a 2-D float array.
    """

    records: np.ndarray

    def __post_init__(self):
        r = as_real_array(self.records, "records", "FiniteDomain", public=True)
        r = r[:, None] if r.ndim == 1 else r
        check_vectors(r, r.shape[-1], "records", "FiniteDomain", public=True)
        if r.ndim != 2 or len(r) < 2:
            raise ValueError(
                f"The 'records' parameter of FiniteDomain must hold at least 2 records as rows. Got shape {r.shape} instead."
            )
        object.__setattr__(self, "records", r)

    @property
    def dim(self):
        """Dimension d of a record."""
        return self.records.shape[1]

    def sample(self, n, rng):
        """Draw records uniformly from the finite domain, with replacement, for diagnostics.

        Parameters
        ----------
        n : int
            Number of records.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        ndarray of shape (n, d)
            Rows of ``records``.
        """
        return self.records[rng.integers(len(self.records), size=n)]
