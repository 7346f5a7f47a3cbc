"""Declared record domains: a box, or a finite set of records (never read from the data)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knorm._validation import as_real_array, check_vectors

__all__ = ["Box", "FiniteDomain"]


@dataclass(frozen=True)
class Box:
    """A box record domain lower <= z <= upper (declared, never taken from data)."""

    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        lo = np.atleast_1d(as_real_array(self.lower, "lower", "Box"))
        hi = np.atleast_1d(as_real_array(self.upper, "upper", "Box"))
        if lo.shape != hi.shape or lo.ndim != 1:
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must be 1-D of equal length. Got shapes {lo.shape} and {hi.shape} instead."
            )
        if len(lo) == 0:
            raise ValueError("The 'lower' and 'upper' parameters of Box must have length >= 1. Got length 0 instead.")
        check_vectors(lo, len(lo), "lower", "Box")
        check_vectors(hi, len(hi), "upper", "Box")
        if not np.all(lo < hi):
            j = int(np.argmin(hi - lo))
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must satisfy lower < upper. Got lower[{j}] = {float(lo[j])!r} >= upper[{j}] = {float(hi[j])!r} instead."
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def dim(self):
        return len(self.lower)

    def sample(self, n, rng):
        """Records for diagnostics: half uniform, half on random faces and vertices."""
        z = rng.uniform(self.lower, self.upper, size=(n, self.dim))
        k = n // 2
        pin = rng.random((k, self.dim)) < 0.5
        ends = np.where(rng.random((k, self.dim)) < 0.5, self.lower, self.upper)
        z[:k] = np.where(pin, ends, z[:k])
        return z


@dataclass(frozen=True)
class FiniteDomain:
    """A finite record domain: the rows of ``records``."""

    records: np.ndarray

    def __post_init__(self):
        r = as_real_array(self.records, "records", "FiniteDomain")
        r = r[:, None] if r.ndim == 1 else r
        check_vectors(r, r.shape[-1], "records", "FiniteDomain")
        if r.ndim != 2 or len(r) < 2:
            raise ValueError(
                f"The 'records' parameter of FiniteDomain must hold at least 2 records as rows. Got shape {r.shape} instead."
            )
        object.__setattr__(self, "records", r)

    @property
    def dim(self):
        return self.records.shape[1]

    def sample(self, n, rng):
        return self.records[rng.integers(len(self.records), size=n)]
