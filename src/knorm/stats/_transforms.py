"""Post-processing maps of released statistics (picklable, vectorised over rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CovarianceFromMoments",
    "Expand",
    "MeanFromStandardised",
    "MeanFromSums",
    "MomentsFromStandardised",
    "RoundToIntegers",
    "VarianceFromMoments",
]


@dataclass(frozen=True)
class MeanFromSums:
    """(sums) / n with n public, or (count, sums) -> sums / max(count, 1) when n is released."""

    n: float | None = None

    @property
    def coordinate_scale(self):
        """1 / n when n is public (the map is then a positive scaling), else None."""
        return None if self.n is None else 1.0 / self.n

    def __call__(self, v):
        v = np.asarray(v, dtype=float)
        if self.n is not None:
            return v / self.n
        return v[..., 1:] / np.maximum(v[..., :1], 1.0)


@dataclass(frozen=True)
class MeanFromStandardised:
    """(sum u, sum u^2) of u = (x - c) / w, n public -> the mean c + w sum u / n (or the sum n c + w sum u).

    The release of one column's mean (or sum) with the mean's focus (:func:`knorm.stats.mean`):
    an affine map of the first coordinate alone, so its noise intervals are the parent's,
    scaled and shifted (``coordinate_affine``), in closed form where the parent's are.
    """

    n: float
    centre: float
    width: float
    total: bool = False

    @property
    def coordinate_affine(self):
        """(index, scale, offset): value = offset + scale * parent[index], scale > 0."""
        if self.total:
            return (0,), (self.width,), (self.n * self.centre,)
        return (0,), (self.width / self.n,), (self.centre,)

    def __call__(self, v):
        v = np.asarray(v, dtype=float)
        if self.total:
            return self.n * self.centre + self.width * v[..., :1]
        return self.centre + self.width * (v[..., :1] / self.n)


@dataclass(frozen=True)
class VarianceFromMoments:
    """(S1, S2) or (N, S1, S2) -> (mean, variance), the variance clipped at 0 (ddof as numpy).

    A released S2 - S1^2 / n can be negative when the noise dominates; a variance cannot,
    so it is clipped at 0 (post-processing, free in privacy; it biases the estimate upwards
    when the truth is near 0). With a released count N, N is floored at ddof + 1.

    With ``centre`` c and ``width`` w the moments are those of the standardised values
    u = (x - c) / w: the mean is c + w S1 / n and the variance w^2 times that of u (no
    cancellation between large sums).
    """

    n: float | None = None
    ddof: int = 0
    std: bool = False
    centre: float = 0.0
    width: float = 1.0

    def __call__(self, v):
        v = np.asarray(v, dtype=float)
        if self.n is None:
            n, s1, s2 = np.maximum(v[..., 0], self.ddof + 1.0), v[..., 1], v[..., 2]
        else:
            n, s1, s2 = self.n, v[..., 0], v[..., 1]
        mean = self.centre + self.width * (s1 / n)
        var = self.width**2 * (np.maximum(s2 - s1 * s1 / n, 0.0) / (n - self.ddof))
        return np.stack([mean, np.sqrt(var) if self.std else var], axis=-1)


@dataclass(frozen=True)
class MomentsFromStandardised:
    """(sum u, sum u^2) of u = (x - c) / w, n public -> (sum x, sum x^2), an affine map.

    sum x = n c + w sum u and sum x^2 = n c^2 + 2 c w sum u + w^2 sum u^2.
    """

    n: float
    centre: float
    width: float

    def __call__(self, v):
        v = np.asarray(v, dtype=float)
        a, b = v[..., 0], v[..., 1]
        c, w = self.centre, self.width
        return np.stack([self.n * c + w * a, self.n * c * c + 2.0 * c * w * a + w * w * b], axis=-1)


@dataclass(frozen=True)
class CovarianceFromMoments:
    """Released first and second moments of p columns -> (means, covariance entries).

    The input holds the sums of x_j (p), of x_j x_k for j < k (in ``pairs`` order) and of
    x_j^2 (p), after the count N when n is released. The covariance is projected on the
    positive semi-definite matrices (eigenvalues clipped at 0; post-processing). Returns the
    p means followed by the p (p + 1) / 2 entries of the upper triangle, row by row.

    With ``centre`` c and ``scale`` a (p each) the sums are those of the standardised
    columns z_j = (x_j - c_j) / a_j: the means are c + a mean(z) and the covariance
    diag(a) cov(z) diag(a), projected in the units of x.
    """

    p: int
    n: float | None = None
    ddof: int = 0
    centre: tuple | None = None
    scale: tuple | None = None

    def __call__(self, v):
        v = np.asarray(v, dtype=float)
        lead = v.shape[:-1]
        v = v.reshape(-1, v.shape[-1])
        if self.n is None:
            n, v = np.maximum(v[:, 0], self.ddof + 1.0), v[:, 1:]
        else:
            n = np.full(len(v), float(self.n))
        p = self.p
        iu = np.triu_indices(p, 1)
        s1 = v[:, :p]
        S = np.zeros((len(v), p, p))
        S[:, iu[0], iu[1]] = v[:, p : p + len(iu[0])]
        S = S + S.transpose(0, 2, 1)
        S[:, np.arange(p), np.arange(p)] = v[:, p + len(iu[0]) :]
        mean = s1 / n[:, None]
        cov = (S - n[:, None, None] * mean[:, :, None] * mean[:, None, :]) / (n - self.ddof)[:, None, None]
        if self.scale is not None:
            a = np.asarray(self.scale, dtype=float)
            cov = cov * a[:, None] * a[None, :]
            mean = mean * a
        if self.centre is not None:
            mean = mean + np.asarray(self.centre, dtype=float)
        lam, U = np.linalg.eigh(cov)
        cov = (U * np.maximum(lam, 0.0)[:, None, :]) @ U.transpose(0, 2, 1)
        tri = np.triu_indices(p)
        out = np.concatenate([mean, cov[:, tri[0], tri[1]]], axis=1)
        return out.reshape(*lead, out.shape[-1])


@dataclass(frozen=True)
class Expand:
    """Released reduced coordinates -> the full statistic, through a ball's exact ``expand``."""

    ball: Any
    n: float | None = None

    def __call__(self, v):
        v = np.asarray(v)
        if np.issubdtype(v.dtype, np.integer) and self.ball.flat and self.n is not None:
            # integer counts stay integers: the dropped one is n * per_record_total - sum, in int64
            total = np.int64(int(self.n) * int(self.ball.per_record_total))
            return np.concatenate([v, (total - v.sum(axis=-1))[..., None]], axis=-1)
        return self.ball.expand(v, self.n)


@dataclass(frozen=True)
class RoundToIntegers:
    """Continuous noisy counts -> the nearest integers, int64 (a post-processing: free in privacy).

    Counts are integers; a shaped Gaussian release of them is continuous, and rounding it
    keeps the zCDP guarantee of the continuous release (post-processing) while the
    released counts stay integers.
    """

    def __call__(self, v):
        return np.rint(np.asarray(v, dtype=float)).astype(np.int64)
