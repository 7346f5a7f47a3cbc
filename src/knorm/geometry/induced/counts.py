"""Count balls: Joseph & Yu's l0-bounded counts, and the histogram (one category per record)."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from knorm._validation import check_dim, param_error
from knorm.geometry.base import Volume
from knorm.geometry.induced._common import InducedBall, check_l0_bound, check_neighbours
from knorm.geometry.induced._slices import capped_cube_counts, capped_gauge, sample_capped_cube, top_k_sum

__all__ = ["CountBall", "HistogramBall"]


def _random_arrangement(w, rng):
    """Each row of ``w`` in a uniformly random order."""
    return np.take_along_axis(w, np.argsort(rng.random(w.shape), axis=1), axis=1)


def _split_rows(p, q, j):
    """Rows (p_1..p_j, -q_1..-q_{d-j}) from zero-padded p and q of shape (n, d)."""
    col = np.arange(p.shape[1])
    qs = np.take_along_axis(q, np.maximum(col - j[:, None], 0), axis=1)
    return np.where(col < j[:, None], p, -qs)


def _histogram_orthants(d):
    """P(j positive coordinates) proportional to C(d, j) C(d - 2, j - 1), j = 1, ..., d - 1.

    The integer weights' floats overflow from d = 700 on: their exact ratios are used up to
    d = 400, log-gamma weights beyond (exact integers there take seconds, d^2 digits).
    """
    if d <= 400:
        weights = [math.comb(d, j) * math.comb(d - 2, j - 1) for j in range(1, d)]
        total = sum(weights)
        return np.array([float(Fraction(w, total)) for w in weights])
    j = np.arange(1, d, dtype=float)
    lg = np.vectorize(math.lgamma)
    log_w = lg(d + 1.0) - lg(j + 1) - lg(d - j + 1) + lg(d - 1.0) - lg(j) - lg(d - j)
    p = np.exp(log_w - log_w.max())
    return p / p.sum()


@functools.lru_cache(maxsize=64)
def _count_orthants(d, k, neighbours):
    """(total weight, orthant probabilities) of CountBall(d, k, neighbours), kept per parameters.

    The weights are exact integers of hundreds of digits at d = 100 (0.6 ms a ball); the
    probabilities are returned read-only, as every ball of these parameters shares them.
    """
    s = capped_cube_counts(d, k)
    if neighbours == "replace":
        weights = [math.comb(d, j) ** 2 * s[j] * s[d - j] for j in range(d + 1)]  # d! C(d, j) V_j V_{d-j}
    else:
        weights = [math.comb(d, j) * s[j] * s[d - j] for j in range(d + 1)]
    total = sum(weights)
    p = np.array([float(Fraction(w, total)) for w in weights])
    p.flags.writeable = False
    return total, p


class CountBall(InducedBall):
    """The convex hull of the sensitivity space of d counts, each record adding 1 to at most k of them.

    Each record contributes t(x) = x in {0, 1}^d with at most ``l0_bound`` ones
    (Joseph & Yu's Count), and the statistic is sum_i x_i.

    Parameters
    ----------
    dim : int
        Number d of counts.
    l0_bound : int
        The largest number k of counts one record adds to, in [1, d].
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation: replacing one record (the library's
        convention) or adding or removing one (Joseph & Yu's).

    Attributes
    ----------
    stat_dim : int
        d; the ball is full-dimensional (the counts do not sum to a constant,
        since a record may add to fewer than k counts), so it releases every
        coordinate.

    Notes
    -----
    Write T = {x in [0, 1]^d : sum x <= k} = Hull(t(D)) (a totally unimodular
    system, so its vertices are the records), g(x) = max(||x||_inf, ||x||_1 / k)
    its gauge on x >= 0, and u = u+ - u- (positive and negative parts).

    - replace-one: S = t(D) - t(D) and K = T - T = {u : g(u+) <= 1, g(u-) <= 1}
      (u = a - b with a, b in T gives u+ <= a and u- <= b; conversely
      u = u+ - u-). Gauge max(||u||_inf, ||u+||_1 / k, ||u-||_1 / k); support
      h_T(c) + h_T(-c) with h_T(c) the sum of the k largest positive parts of c.
    - add-remove (Joseph & Yu): S = t(D) u -t(D) and K = Hull(T u -T), whose
      gauge is the infimal convolution min over u = a - b, a, b >= 0, of
      g(a) + g(b) = g(u+) + g(u-) (g is monotone on the orthant). Support
      max(h_T(c), h_T(-c)).

    Volume, by orthants with j positive coordinates, with V_m = vol T(m, k) =
    S_m / m! (see :class:`SumBall`): replace-one, sum_j C(d, j) V_j V_{d-j}; add-
    remove, sum_j C(d, j) V_j V_{d-j} j! (d-j)! / d!, since
    vol{g1(p) + g2(q) <= 1} = vol(B1) vol(B2) j! (d-j)! / d! for gauges g1, g2
    on R^j and R^(d-j) (integrate exp(-g1 - g2) both ways). This gives Joseph &
    Yu's orthant weights C(d, j) S_j S_{d-j}. Exact in rationals.

    Sensitivities of the counts (records with disjoint supports attain them):
    replace-one, Delta_1 = L = min(2 k, d), Delta_2 = sqrt(L), Delta_inf = 1;
    add-remove, Delta_1 = k, Delta_2 = sqrt(k), Delta_inf = 1; 1 in the ball's
    own norm.

    Sampling: pick j with the orthant weights and a uniformly random set of j
    positive coordinates; draw U+ uniform in T(j, k) and U- in T(d - j, k)
    (exact, ``_slices``). replace-one: u = (U+, -U-). add-remove: with
    G+ ~ Gamma(j + 1), G- ~ Gamma(d - j + 1) and E ~ Exp(1),
    X = (G+ U+, -G- U-) has density proportional to exp(-||x||_K) on the
    orthant (Hardt & Talwar 2010), and X / (||X||_K + E) is uniform there
    (||X||_K ~ Gamma(d) independent of X / ||X||_K).

    References
    ----------
    M. Joseph and A. Yu, "Private, Efficient, and Optimal K-Norm and Elliptic
    Gaussian Noise for Sum, Count, and Vote", arXiv:2309.15790 (2023), Count.
    M. Hardt and K. Talwar, "On the geometry of differential privacy", STOC
    (2010). Awan & Slavkovic (2021), Section 2.

    Examples
    --------
    >>> ball = CountBall(2, 2, neighbours="add_remove")  # the hexagon Hull([0,1]^2 u [-1,0]^2)
    >>> float(ball.norm([1.0, -1.0])), float(ball.norm([1.0, 1.0]))
    (2.0, 1.0)
    >>> float(ball.volume()), float(CountBall(2, 2).volume())
    (3.0, 4.0)
    """

    def __init__(self, dim, l0_bound, *, neighbours="replace"):
        owner = "CountBall"
        super().__init__(check_dim(dim, owner))
        self.l0_bound = check_l0_bound(l0_bound, self.dim, owner)
        self.neighbours = check_neighbours(neighbours, owner)
        self.stat_dim = self.dim
        self._volume_method = "closed form (orthants of capped cubes, exact rational)"
        self._weights_total, self._orthant_p = _count_orthants(self.dim, self.l0_bound, self.neighbours)

    def _cache_key(self):
        return ("CountBall", self.dim, self.l0_bound, self.neighbours)

    def _parts(self, u):
        k = self.l0_bound
        return capped_gauge(np.maximum(u, 0.0), k), capped_gauge(np.minimum(u, 0.0), k)

    def _gauge(self, u):
        gp, gm = self._parts(u)
        return (np.maximum(gp, gm) if self.neighbours == "replace" else gp + gm)[()]

    def _support(self, c):
        k = self.l0_bound
        hp = top_k_sum(np.maximum(c, 0.0), k)
        hm = top_k_sum(np.maximum(-c, 0.0), k)
        return (hp + hm if self.neighbours == "replace" else np.maximum(hp, hm))[()]

    def _bounding_box(self):
        return np.ones(self.dim)

    def _volume_fraction(self):
        return Fraction(self._weights_total, math.factorial(self.dim))

    def _lp_sensitivity(self, p):
        k, d = self.l0_bound, self.dim
        size = min(2 * k, d) if self.neighbours == "replace" else k
        value = size if p == 1 else math.sqrt(size) if p == 2 else 1.0
        return value, f"records with disjoint supports: {size} entries ±1 ({self.neighbours})"

    def _sample_uniform(self, n, rng):
        d, k = self.dim, self.l0_bound
        j = rng.choice(d + 1, size=n, p=self._orthant_p)
        both = sample_capped_cube(np.concatenate([j, d - j]), k, d, rng)
        p, q = both[:n], both[n:]
        if self.neighbours == "add_remove":
            gp = rng.standard_gamma(j + 1.0)
            gq = rng.standard_gamma(d - j + 1.0)
            norm = gp * capped_gauge(p, k) + gq * capped_gauge(q, k) + rng.standard_exponential(n)
            p *= (gp / norm)[:, None]
            q *= (gq / norm)[:, None]
        return _random_arrangement(_split_rows(p, q, j), rng)

    def __repr__(self):
        return f"CountBall(dim={self.dim}, l0_bound={self.l0_bound}, neighbours={self.neighbours!r})"


class HistogramBall(InducedBall):
    """The convex hull of the sensitivity space of a histogram, in its released coordinates.

    Each record falls in exactly one of d categories, t(x) = e_x, and the
    statistic is the vector of counts, which sums to the public number of
    records n. Neighbours replace one record (under add-remove the hull is the
    l1 ball, ``CountBall(d, 1, neighbours="add_remove")``).

    Parameters
    ----------
    n_categories : int
        Number d >= 2 of categories.

    Attributes
    ----------
    stat_dim : int
        d, the length of the full histogram.
    dim : int
        d - 1, the number of released counts.

    Notes
    -----
    S = {e_a - e_b} lies in the hyperplane sum u = 0, and its hull is the root
    polytope {u : sum u = 0, ||u||_1 <= 2} (a point with positive part p and
    negative part q, sum p = sum q = s <= 1, is sum_{a,b} p_a q_b / s (e_a - e_b)).
    The ball releases the first d - 1 counts v; the last is n - sum v, so the
    noisy histogram still sums to n (:meth:`expand`). In these coordinates
    K = {v : ||v||_1 + |sum v| <= 2}.

    - Gauge (||v||_1 + |sum v|) / 2; support max(c~) - min(c~), c~ = (c, 0).
    - Volume C(2d - 2, d - 1) / (d - 1)!: the orthant with j positive
      coordinates is {sum p = sum q <= 1}, of volume
      1 / ((d - 1) (j - 1)! (d - j - 1)!) in released coordinates, and
      sum_j C(d, j) C(d - 2, j - 1) = C(2d - 2, d - 1) (Vandermonde). Derived
      here (checked against qhull for d <= 8); (d - 1)! times it is C(2n, n),
      n = d - 1, the normalised volume of the root polytope of A_n.
    - Sensitivities of the released counts: Delta_1 = 2, Delta_2 = sqrt(2),
      Delta_inf = 1 for d >= 3 (e_a - e_b with a, b < d); all 1 for d = 2; and 1
      in the ball's own norm.
    - Sampling: j with weights C(d, j) C(d - 2, j - 1), j random positive
      coordinates, s ~ Beta(d - 1, 1), and s times independent Dirichlet(1, ..., 1)
      vectors for the positive and the negative part.

    References
    ----------
    M. Joseph and A. Yu, arXiv:2309.15790 (2023), Count (their counts are
    l0-bounded; this is the flat, exactly-one-category case).
    Awan & Slavkovic (2021), Section 2.

    Examples
    --------
    >>> ball = HistogramBall(3)
    >>> ball.dim, float(ball.volume())
    (2, 3.0)
    >>> ball.expand(ball.reduce([4.0, 1.0, 5.0]), n_records=10).tolist()
    [4.0, 1.0, 5.0]
    """

    flat = True
    per_record_total = 1

    def __init__(self, n_categories):
        owner = "HistogramBall"
        d = check_dim(n_categories, owner, "n_categories")
        if d < 2:
            raise param_error("n_categories", owner, "an int >= 2", n_categories)
        super().__init__(d - 1)
        self.stat_dim = d
        self.neighbours = "replace"
        self._volume_method = "closed form C(2d-2, d-1) / (d-1)! (orthants of the root polytope)"
        self._orthant_p = _histogram_orthants(d)

    def _cache_key(self):
        return ("HistogramBall", self.stat_dim)

    def _gauge(self, u):
        return (0.5 * (np.abs(u).sum(axis=-1) + np.abs(u.sum(axis=-1))))[()]

    def _support(self, c):
        full = np.concatenate([c, np.zeros_like(c[..., :1])], axis=-1)  # the dropped count moves with -sum v
        return (full.max(axis=-1) - full.min(axis=-1))[()]

    def _bounding_box(self):
        return np.ones(self.dim)

    def _volume_fraction(self):
        d = self.stat_dim
        return Fraction(math.comb(2 * d - 2, d - 1), math.factorial(d - 1))

    def _log_volume(self, rng=None, n_samples=None):
        d = self.stat_dim
        if d <= 400:
            return super()._log_volume(rng, n_samples)
        # The same closed form by log-gamma: the exact Fraction of 10^5 bins took 7 s (gcd of huge integers).
        value = math.lgamma(2 * d - 1) - 3 * math.lgamma(d)
        return Volume(value, exact=True, method=self._volume_method + ", in log-gamma")

    def _lp_sensitivity(self, p):
        if self.stat_dim == 2:
            return 1.0, "released e_1 - e_2 is ±1"
        value = 2.0 if p == 1 else math.sqrt(2.0) if p == 2 else 1.0
        return value, "e_a - e_b with a, b among the released categories"

    def _sample_uniform(self, n, rng):
        d = self.stat_dim
        j = 1 + rng.choice(d - 1, size=n, p=self._orthant_p)
        e = rng.standard_exponential((n, d))
        pos = np.arange(d) < j[:, None]
        s = rng.random(n) ** (1.0 / (d - 1))
        sp = np.where(pos, e, 0.0).sum(axis=1)
        sm = e.sum(axis=1) - sp
        w = e * np.where(pos, (s / sp)[:, None], (-s / sm)[:, None])
        return _random_arrangement(w, rng)[:, : d - 1]

    def __repr__(self):
        return f"HistogramBall(n_categories={self.stat_dim})"
