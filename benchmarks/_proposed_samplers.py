"""Exact noise samplers proposed for ``knorm.noise.samplers``.

The l1, l_inf and l_p proposals below were adopted by the library (and are now
re-exported from it); the l2 Gaussian scale mixture was not, since it saves only
~10% over the paper's algorithm, which the library keeps. The notes below record
the original profiling. Not part of the library: the samplers section times these next to the library's
and checks their laws before quoting any number. Each function has the signature
of its counterpart in :mod:`knorm.noise.samplers` and returns float64 rows of
shape (n, dim) with density proportional to exp(-||v||_K / scale).

What the library versions spend their time on (cProfile and line timings,
numpy 2.x, PCG64; costs in units of one ``rng.uniform`` draw, about 2 ns here):

* ``rng.laplace`` inverts the CDF with a ``log`` per draw: about 5.7 units.
  ``standard_exponential`` (ziggurat) costs 1.3 units and a sign bit taken from
  ``rng.bytes`` about 0.05 units.
* ``rng.gamma`` costs about 7 units per draw whatever the shape. One radius per
  vector is negligible for large dim but dominates dim 2.
* Broadcasting a row factor of shape (n, 1) over a short last axis (dim 2) runs
  numpy's inner loop once per row: multiplying column by column is 3-4x faster.
* ``l2_noise`` also computes ``abs``, ``einsum``, ``sqrt`` and two temporaries for
  ``r * z / norm``; ``standard_normal`` alone costs about 3.8 units, which is a
  floor for any l2 sampler built on numpy normals.
* ``lp_noise`` recomputes ``||Y||_p`` with ``abs``, ``max``, a division and a
  ``power`` although ``|Y_i|^p`` is the gamma draw it started from.

References
----------
Awan & Slavkovic (2021), appendix "Implementing K-Norm Mechanisms"; ERRATA.md
("Facts worth having": ||V||_K ~ Gamma(m, scale) for every K).
"""

from __future__ import annotations

import numpy as np

__all__ = ["laplace_noise", "l2_noise", "linf_noise", "lp_noise"]

# Gamma(k) with integer k <= this is drawn as a sum of k exponentials (1.3 units
# each) rather than by rng.standard_gamma (about 7 units).
_EXP_SUM_MAX_SHAPE = 4


# Up to this many columns, scaling rows column by column beats broadcasting an (n, 1)
# factor (numpy's inner loop would run once per row); same threshold as the library's.
_COLUMNWISE_MAX_DIM = 16

# l1, l_inf and l_p were adopted by the library: they come from there.
from knorm.noise import samplers as _lib  # noqa: E402
from knorm.noise.samplers import laplace_noise, linf_noise  # noqa: E402


def _scale_rows(x, r):
    """x *= r[:, None] in place (a local copy of the library's private helper)."""
    if x.shape[1] <= _COLUMNWISE_MAX_DIM:
        for j in range(x.shape[1]):
            x[:, j] *= r
    else:
        x *= r[:, None]
    return x


def _standard_gamma_half(k2, n, rng):
    """n draws of Gamma(k2 / 2, 1) for a positive int ``k2``.

    Small shapes use exact sums: Gamma(j) = E_1 + ... + E_j and
    Gamma(1/2) = Z^2 / 2, with E iid Exp(1) and Z standard normal.
    """
    j, half = divmod(k2, 2)
    if j > _EXP_SUM_MAX_SHAPE:
        return rng.standard_gamma(k2 / 2.0, size=n)
    out = np.zeros(n)
    if j:
        e = rng.standard_exponential((j, n))  # rows are contiguous, so the sum is fast
        for row in e:
            out += row
    if half:
        z = rng.standard_normal(n)
        z *= z
        z *= 0.5
        out += z
    return out


def l2_noise(dim, scale, n, rng):
    """l2 noise as a Gaussian scale mixture: scale * sqrt(S) * Z, S ~ Gamma((dim + 1)/2, 2).

    Notes
    -----
    For Z standard normal in R^m and S > 0 independent with density proportional to
    s^((m+1)/2 - 1) exp(-s/2), sqrt(S) Z has density proportional to
    int s^(-1/2) exp(-(r^2/s + s)/2) ds = 2 r^(1/2) K_(1/2)(r) = sqrt(2 pi) exp(-r)
    with r = ||v||_2 (the Bessel function K_(1/2) is elementary). This is exact, and
    it needs no norm of Z: ||sqrt(S) Z||_2 ~ Gamma(m, 1) follows, as for every
    K-norm law (ERRATA, "Facts worth having").
    """
    z = rng.standard_normal((n, dim))
    s = _standard_gamma_half(dim + 1, n, rng)  # S / 2
    s *= 2.0 * scale * scale
    np.sqrt(s, out=s)
    return _scale_rows(z, s)


def lp_noise(dim, p, scale, n, rng):
    """The library's l_p sampler, with the scale-mixture l2 above for p = 2."""
    return l2_noise(dim, scale, n, rng) if p == 2 else _lib.lp_noise(dim, p, scale, n, rng)
