"""l_p balls for every p in [1, inf]."""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.special import gammaln

from knorm._validation import check_dim, check_positive, param_error
from knorm.geometry.base import NormBall, Volume

__all__ = ["LpBall"]


def _check_p(p, owner="LpBall"):
    rule = "a float in the range [1, inf]"
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise param_error("p", owner, rule, p, TypeError)
    p = float(p)
    if not (p >= 1):  # also rejects nan
        raise param_error("p", owner, rule, p)
    return p


def lp_norm(u, p):
    """||u||_p over the last axis, for p in [1, inf] (no checking)."""
    a = np.abs(u)
    if p == 1:
        return a.sum(axis=-1)
    if p == 2:
        return np.sqrt(np.einsum("...i,...i->...", a, a))
    if np.isinf(p):
        return a.max(axis=-1)
    # Scale by the max entry so a**p neither overflows nor underflows.
    mx = a.max(axis=-1, keepdims=True)
    safe = np.where(mx > 0, mx, 1.0)
    return safe[..., 0] * ((a / safe) ** p).sum(axis=-1) ** (1.0 / p)


def dual_exponent(p):
    """Hoelder conjugate p* with 1/p + 1/p* = 1."""
    if p == 1:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


class LpBall(NormBall):
    """The ball {u in R^dim : ||u||_p <= radius}, for any p in [1, inf].

    Parameters
    ----------
    dim : int
        Dimension m.
    p : float
        Exponent in [1, inf].
    radius : float, default 1.0
        Radius (> 0).

    Notes
    -----
    Volume: 2^m Gamma(1 + 1/p)^m / Gamma(1 + m/p) radius^m, the paper's
    Proposition on l_p volumes (Wang 2005), Section 3.5. The support function is
    radius ||c||_{p*} (Hoelder). Uniform sampling is exact (Barthe, Guedon,
    Mendelson & Naor 2005): with Y_i iid of density proportional to
    exp(-|y|^p) and W ~ Exp(1), Y / (||Y||_p^p + W)^{1/p} is uniform on the unit ball.

    References
    ----------
    Paper Section 3.5 (Proposition on l_p volumes, after Wang 2005); Barthe,
    Guedon, Mendelson & Naor (2005), "A probabilistic approach to the geometry of
    the l_p^n-ball", Annals of Probability 33(2).

    Examples
    --------
    >>> ball = LpBall(3, p=2)
    >>> float(ball.norm([3.0, 4.0, 0.0])), round(float(ball.volume()), 4)  # 4 pi / 3
    (5.0, 4.1888)
    >>> float(LpBall(2, p=1, radius=2.0).support([1.0, -3.0]))  # 2 ||c||_inf
    6.0
    >>> ball.sample_uniform(4, rng=0).shape
    (4, 3)
    """

    def __init__(self, dim, p, radius=1.0):
        super().__init__(check_dim(dim, "LpBall"))
        self.p = _check_p(p)
        self.radius = check_positive(radius, "radius", "LpBall")

    def _cache_key(self):
        return ("LpBall", self.dim, self.p, self.radius)

    def lp_parts(self):
        """Return (self, None): an l_p ball is itself, unscaled.

        Returns
        -------
        tuple of (LpBall, None)
            This ball and no factor.
        """
        return self, None

    def _gauge(self, u):
        return lp_norm(u, self.p) / self.radius

    def _support(self, c):
        return self.radius * lp_norm(c, dual_exponent(self.p))

    def _bounding_box(self):
        return np.full(self.dim, self.radius)

    def _log_volume(self, rng=None, n_samples=None):
        m, p = self.dim, self.p
        if math.isinf(p):
            log_unit = m * math.log(2.0)
        else:
            log_unit = m * math.log(2.0) + m * gammaln(1 + 1 / p) - gammaln(1 + m / p)
        return Volume(log_unit + m * math.log(self.radius), exact=True, method="closed form (Wang 2005)")

    def _volume(self, rng=None, n_samples=None):
        lv = self._log_volume()
        return Volume(math.exp(lv), exact=True, method=lv.method)

    def _sample_uniform(self, n, rng):
        m, p = self.dim, self.p
        if math.isinf(p):
            return rng.uniform(-self.radius, self.radius, size=(n, m))
        if p == 2:
            z = rng.standard_normal((n, m))
            r = rng.uniform(size=(n, 1)) ** (1.0 / m)
            return self.radius * r * z / lp_norm(z, 2)[:, None]
        y = generalized_gaussian(rng, p, (n, m))
        w = rng.standard_exponential((n, 1))
        s = (np.sum(np.abs(y) ** p, axis=1, keepdims=True) + w) ** (1.0 / p)
        return self.radius * y / s

    def __repr__(self):
        p = "inf" if math.isinf(self.p) else f"{self.p:g}"
        return f"LpBall(dim={self.dim}, p={p}, radius={self.radius:g})"


def generalized_gaussian(rng, p, size):
    """Draws with density proportional to exp(-|y|^p): sign * Gamma(1/p)^(1/p)."""
    g = rng.standard_gamma(1.0 / p, size=size) ** (1.0 / p)
    return np.where(rng.random(size) < 0.5, -g, g)
