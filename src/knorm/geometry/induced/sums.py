"""The sum ball of Joseph & Yu: [-r, r]^d intersected with the l1 ball of radius r k."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from knorm._validation import check_dim
from knorm.geometry.induced._common import InducedBall, check_l0_bound, check_neighbours
from knorm.geometry.induced._slices import capped_cube_counts, capped_gauge, sample_capped_cube, top_k_sum

__all__ = ["SumBall"]


class SumBall(InducedBall):
    """The convex hull of the sensitivity space of a sum of l0-bounded vectors in [-1, 1]^d.

    Each record contributes t(x) = x with x in [-1, 1]^d and at most ``l0_bound``
    non-zero entries (Joseph & Yu's Sum), and the statistic is sum_i x_i.

    Parameters
    ----------
    dim : int
        Dimension d of the statistic.
    l0_bound : int
        The largest number k of non-zero entries of one record, in [1, d].
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation: replacing one record (the library's
        convention) or adding or removing one (Joseph & Yu's).

    Attributes
    ----------
    radius : float
        r = 2 for replace-one, 1 for add-remove.
    stat_dim : int
        d; the ball is full-dimensional, so it releases every coordinate.

    Notes
    -----
    Let C_k = {u : ||u||_inf <= 1, ||u||_1 <= k}. The records fill
    t(D) = {x : ||x||_inf <= 1, ||x||_0 <= k}, whose hull is C_k: its vertices,
    the vectors with k entries ±1 and the rest 0, are records, and every record
    lies in C_k. t(D) is symmetric, so under add-remove S = t(D) u -t(D) has
    hull C_k, and under replace-one S = t(D) - t(D) has hull C_k - C_k = 2 C_k.
    The ball is K = r C_k.

    - Gauge: ||u||_K = max(||u||_inf, ||u||_1 / k) / r.
    - Support: h_K(c) = r times the sum of the k largest |c_i| (the best vertex).
    - Volume: (2 r)^d vol(T) with T = {x in [0, 1]^d : sum x <= k}, and
      d! vol(T) = sum_{i=0}^{k} (-1)^i C(d, i) (k - i)^d = sum_{j<k} A(d, j)
      (Irwin-Hall; Eulerian numbers A, Stanley 1977); exact in rationals.
    - Sensitivities of the statistic: sup over S of ||u||_p = r k^(1/p), so
      Delta_1 = r k, Delta_2 = r sqrt(k), Delta_inf = r (attained at a vertex),
      and 1 in the ball's own norm.
    - Sampling: random signs times a uniform point of T, drawn exactly by
      Stanley's slice bijection (see ``knorm.geometry.induced._slices``).
      Joseph & Yu's research code does the same one sample at a time.

    For k = 1 the ball is the l1 ball of radius r, and for k = d the cube
    [-r, r]^d.

    References
    ----------
    M. Joseph and A. Yu, "Private, Efficient, and Optimal K-Norm and Elliptic
    Gaussian Noise for Sum, Count, and Vote", arXiv:2309.15790 (2023), Sum.
    R. P. Stanley, "Eulerian partitions of a unit hypercube", in Higher
    Combinatorics (1977). Awan & Slavkovic (2021), Section 2: the hull of S is
    the optimal ball.

    Examples
    --------
    >>> ball = SumBall(3, 2, neighbours="add_remove")
    >>> float(ball.norm([1.0, 1.0, 0.0])), float(ball.norm([0.5, 0.5, 0.5]))
    (1.0, 0.75)
    >>> float(ball.volume())  # 8 (1 - 1/6)
    6.666666666666667
    >>> SumBall(3, 2).max_lp_norm(1)[0]
    4.0
    """

    def __init__(self, dim, l0_bound, *, neighbours="replace"):
        owner = "SumBall"
        super().__init__(check_dim(dim, owner))
        self.l0_bound = check_l0_bound(l0_bound, self.dim, owner)
        self.neighbours = check_neighbours(neighbours, owner)
        self.radius = 2.0 if self.neighbours == "replace" else 1.0
        self.stat_dim = self.dim
        self._volume_method = "closed form (Irwin-Hall / Eulerian numbers, exact rational)"

    def _cache_key(self):
        return ("SumBall", self.dim, self.l0_bound, self.neighbours)

    def _gauge(self, u):
        return (capped_gauge(u, self.l0_bound) / self.radius)[()]

    def _support(self, c):
        return (self.radius * top_k_sum(np.abs(c), self.l0_bound))[()]

    def _bounding_box(self):
        return np.full(self.dim, self.radius)

    def _volume_fraction(self):
        d = self.dim
        r = int(self.radius)
        return Fraction((2 * r) ** d * capped_cube_counts(d, self.l0_bound)[d], math.factorial(d))

    def _lp_sensitivity(self, p):
        k, r = self.l0_bound, self.radius
        value = r * (k if p == 1 else math.sqrt(k) if p == 2 else 1.0)
        return value, f"r k^(1/p) at a vertex of t(D), r = {r:g} ({self.neighbours})"

    def _sample_uniform(self, n, rng):
        x = sample_capped_cube(np.full(n, self.dim), self.l0_bound, self.dim, rng)
        x *= np.where(rng.random((n, self.dim)) < 0.5, -self.radius, self.radius)
        return x

    def __repr__(self):
        return f"SumBall(dim={self.dim}, l0_bound={self.l0_bound}, neighbours={self.neighbours!r})"
