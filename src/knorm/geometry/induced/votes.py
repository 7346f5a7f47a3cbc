"""The vote ball of Joseph & Yu: Borda scores, whose sensitivity hull is built on the permutohedron."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from knorm._validation import check_dim, param_error
from knorm.geometry.induced._common import InducedBall, check_neighbours

__all__ = ["VoteBall"]


def _uniform_permutohedron(n, d, rng):
    """Uniform points of the centred permutohedron Pi_d = Hull{sigma(0, ..., d-1)} - (d-1)/2, shape (n, d).

    Pi_d is the Voronoi cell of the lattice d A*_{d-1} = {d z - (sum z) 1 : z in Z^d}
    in the hyperplane sum y = 0. u uniform in [0, 1)^d maps to y0 = d (u - mean u),
    uniform modulo the lattice; y0 minus its nearest lattice point is uniform in
    the cell. That point comes from the representative r = u - z (z integer) of
    least variance, which subtracts 1 from the k largest u_i for the best k
    (McKilliam, Clarkson & Quinn 2008): one sort per row.

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Dimension of the permutohedron's ambient space, >= 2.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray of shape (n, d)
        Rows uniform in Pi_d; each sums to 0 (up to rounding).
    """
    u = rng.random((n, d))
    desc = -np.sort(-u, axis=1)
    top = np.concatenate([np.zeros((n, 1)), np.cumsum(desc, axis=1)[:, :-1]], axis=1)  # sums of the k largest
    k = np.arange(d)
    total = u.sum(axis=1, keepdims=True)
    # sum r^2 - (sum r)^2 / d, up to the constant sum u^2
    spread = k - 2.0 * top - (total - k) ** 2 / d
    best = np.argmin(spread, axis=1)
    cut = np.where(best > 0, desc[np.arange(n), np.maximum(best - 1, 0)], np.inf)
    r = u - (u >= cut[:, None])
    r -= r.mean(axis=1, keepdims=True)
    r *= d
    return r


def _permutohedron_gauge(y):
    """||y||_{Pi_d} = max_s 2 T_s(y) / (s (d - s)) for y with sum 0, T_s the sum of the s largest entries."""
    d = y.shape[-1]
    top = np.cumsum(-np.sort(-y, axis=-1), axis=-1)[..., :-1]
    s = np.arange(1, d)
    return np.max(top * (2.0 / (s * (d - s))), axis=-1)


def _permutohedron_support(c):
    """h_{Pi_d}(c) = sum_i c_(i) i - (d - 1)/2 sum c, c sorted ascending (rearrangement inequality)."""
    d = c.shape[-1]
    return np.sort(c, axis=-1) @ np.arange(d, dtype=float) - 0.5 * (d - 1) * c.sum(axis=-1)


class VoteBall(InducedBall):
    """The convex hull of the sensitivity space of Borda vote totals.

    Each record (voter) ranks the d candidates and gives them the scores
    w = (0, 1, ..., d - 1) in some order, t(x) = sigma(w) (Joseph & Yu's Vote);
    the statistic is the vector of total scores.

    Parameters
    ----------
    n_candidates : int
        Number d >= 2 of candidates.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Replacing one voter (the library's convention; then every record's
        scores sum to d(d-1)/2 and the ball is flat) or adding or removing one
        (Joseph & Yu's).

    Attributes
    ----------
    stat_dim : int
        d, the length of the full score vector.
    dim : int
        d - 1 for replace-one (the first d - 1 totals are released, the last is
        n d (d-1)/2 minus their sum, see :meth:`expand`), d for add-remove.

    Notes
    -----
    P = Hull(t(D)) is the permutohedron, centrally symmetric about
    c = (d-1)/2 (1, ..., 1); Pi = P - c. Its facets are
    sum_{i in A} y_i <= |A| (d - |A|) / 2 for proper subsets A (Rado 1952).

    - replace-one: S = {sigma(w) - tau(w)}, Hull(S) = P - P = Pi - Pi = 2 Pi, in
      the hyperplane sum u = 0. In released coordinates v, K = {v : (v, -sum v)
      in 2 Pi}: gauge max_s T_s(y) / (s (d - s)) with y = (v, -sum v) and T_s
      the sum of its s largest entries; support h(c) = 2 h_Pi((c, 0)) with
      h_Pi(c) = sum_i c_(i) i - (d-1)/2 sum c (c ascending). Volume
      2^(d-1) d^(d-2): the permutohedron has (d-1)-volume d^(d-2) sqrt(d) (a
      zonotope tiled by unit parallelepipeds, one per spanning tree of the
      complete graph: Cayley's count; Postnikov 2009), and dropping the last
      coordinate divides by sqrt(d). For 6 candidates: 41472.
    - add-remove: S = {sigma(w)} u {-sigma(w)} and -P = P - (d-1) 1, so Hull(S)
      = P + [-(d-1), 0] 1 = Pi + [-(d-1)/2, (d-1)/2] 1, Joseph & Yu's
      "cylinder of the permutohedron". With t = mean(u) and y = u - t, the gauge
      is max(||y||_Pi, 2 |t| / (d - 1)); the support h_Pi(c) + (d-1)/2 |sum c|;
      the volume d^(d-2) sqrt(d) times the height (d-1) sqrt(d), (d-1) d^(d-1).

    Sensitivities (exact): add-remove, ||w||_p: Delta_1 = d(d-1)/2,
    Delta_2 = sqrt((d-1) d (2d-1) / 6), Delta_inf = d - 1. replace-one, of the
    released d - 1 totals: Delta_inf = d - 1; Delta_1 = floor(d^2/2) - e and
    Delta_2 = sqrt(d (d^2 - 1)/3 - e), e = 1 if d is even else 0. The full-vector
    maxima d^2/2 and d(d^2-1)/3 come from the reversal (rearrangement), which
    for odd d has a zero middle entry to drop; for even d every full value is
    even (sum of the differences is 0), the l2 maximiser is unique and has no
    zero entry, and for l1 the largest d - 1 minus the smallest d - 1 of the
    remaining scores bound the sum by d^2/2 - 1. 1 in the ball's own norm.

    Sampling is exact and O(d log d) per point: Pi is the Voronoi cell of the
    lattice d A*_{d-1}, so a uniform point of the torus reduced to the cell by
    the nearest-point algorithm for A*_n is uniform in Pi (Conway & Sloane;
    McKilliam, Clarkson & Quinn 2008). This replaces Joseph & Yu's recursive
    star decomposition, which gives the same law.

    References
    ----------
    M. Joseph and A. Yu, "Private, Efficient, and Optimal K-Norm and Elliptic
    Gaussian Noise for Sum, Count, and Vote", arXiv:2309.15790 (2023), Vote.
    J. H. Conway and N. J. A. Sloane, Sphere Packings, Lattices and Groups,
    3rd ed. (1999), Ch. 21 (the Voronoi cell of A*_n is a permutohedron).
    R. G. McKilliam, I. V. L. Clarkson and B. G. Quinn, "An algorithm to compute
    the nearest point in the lattice A*_n", IEEE Trans. Inf. Theory 54 (2008).
    A. Postnikov, "Permutohedra, associahedra, and beyond", IMRN (2009).
    Awan & Slavkovic (2021), Section 2.

    Examples
    --------
    >>> ball = VoteBall(6)
    >>> ball.dim, float(ball.volume())
    (5, 41472.0)
    >>> scores = [[5.0, 4.0, 3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    >>> float(ball.norm(ball.reduce(scores[0]) - ball.reduce(scores[1])))
    1.0
    >>> VoteBall(3, neighbours="add_remove").dim
    3
    """

    def __init__(self, n_candidates, *, neighbours="replace"):
        owner = "VoteBall"
        d = check_dim(n_candidates, owner, "n_candidates")
        if d < 2:
            raise param_error("n_candidates", owner, "an int >= 2", n_candidates)
        self.neighbours = check_neighbours(neighbours, owner)
        self.flat = self.neighbours == "replace"
        super().__init__(d - 1 if self.flat else d)
        self.stat_dim = d
        self.per_record_total = d * (d - 1) // 2 if self.flat else None
        self._volume_method = "closed form (permutohedron volume d^(d-2) sqrt(d))"

    def _cache_key(self):
        return ("VoteBall", self.stat_dim, self.neighbours)

    def _gauge(self, u):
        d = self.stat_dim
        if self.flat:
            return (0.5 * _permutohedron_gauge(self._embed(u)))[()]
        t = u.mean(axis=-1)
        return np.maximum(_permutohedron_gauge(u - t[..., None]), np.abs(t) * (2.0 / (d - 1)))[()]

    def _support(self, c):
        d = self.stat_dim
        if self.flat:
            return (2.0 * _permutohedron_support(np.concatenate([c, np.zeros_like(c[..., :1])], axis=-1)))[()]
        return (_permutohedron_support(c) + 0.5 * (d - 1) * np.abs(c.sum(axis=-1)))[()]

    def _bounding_box(self):
        return np.full(self.dim, float(self.stat_dim - 1))

    def _volume_fraction(self):
        d = self.stat_dim
        if self.flat:
            return Fraction(2 ** (d - 1) * d ** (d - 2))
        return Fraction((d - 1) * d ** (d - 1))

    def _lp_sensitivity(self, p):
        d = self.stat_dim
        if not self.flat:
            value = d * (d - 1) / 2 if p == 1 else math.sqrt((d - 1) * d * (2 * d - 1) / 6) if p == 2 else d - 1.0
            return value, "||(0, 1, ..., d-1)||_p (add-remove)"
        even = 1 if d % 2 == 0 else 0
        value = d * d // 2 - even if p == 1 else math.sqrt(d * (d * d - 1) // 3 - even) if p == 2 else d - 1.0
        return value, "reversed ranking minus its smallest released entry (replace-one)"

    def _sample_uniform(self, n, rng):
        d = self.stat_dim
        y = _uniform_permutohedron(n, d, rng)
        if self.flat:
            return 2.0 * y[:, : d - 1]
        y += rng.uniform(-0.5 * (d - 1), 0.5 * (d - 1), size=(n, 1))
        return y

    def __repr__(self):
        return f"VoteBall(n_candidates={self.stat_dim}, neighbours={self.neighbours!r})"
