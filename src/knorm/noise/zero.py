"""The zero noise law: what a release adds inside :func:`knorm.mechanisms.nonprivate`."""

from __future__ import annotations

import numpy as np

__all__ = ["ZeroNoise"]


class ZeroNoise:
    """The law of V = 0 in R^m: the noise-free limit (epsilon = inf) of every K-norm law.

    The release path uses it inside :func:`knorm.mechanisms.nonprivate` instead of the
    mechanism's law, so that the non-private mode is one choice of law made in one place.
    Nothing released with it is private; the Release says so.

    Parameters
    ----------
    dim : int
        Dimension m.

    Examples
    --------
    >>> ZeroNoise(2).sample(3).shape
    (3, 2)
    """

    sampler = "none (non-private)"
    scale = 0.0
    expected_acceptance = 1.0

    def __init__(self, dim):
        self.dim = int(dim)

    def sample(self, size=None, *, rng=None):
        """Return zeros of shape (dim,) or ``size + (dim,)``; ``rng`` is not used."""
        shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
        return np.zeros((*shape, self.dim))

    def marginal_half_width(self, alpha):
        """Return zeros: the noise is 0 with probability one."""
        return np.zeros(self.dim)

    def __repr__(self):
        return f"ZeroNoise({self.dim})"
