"""The lattice release: the statistic rounded to gamma Z^m plus exact lattice K-norm noise.

A continuous K-norm mechanism computed in binary64 is not what its proof describes: the set
of doubles that T + V can take depends on T, and Mironov (2012) turns that into an infinite
privacy loss. The lattice release removes floating point from the argument:

1. the statistic is rounded to the lattice gamma Z^m, gamma_j powers of two, chosen from
   public quantities only (the ball and Delta);
2. noise k gamma with k in Z^m, P(k) proportional to exp(-eps ||diag(gamma) k||_K / Delta~),
   is drawn exactly in integer arithmetic (:class:`knorm.noise.lattice.LatticeKNormNoise`);
3. the output gamma (round(T / gamma) + k) is a double computed exactly.

Privacy (the proof, on the lattice). Let R(T) = gamma round(T / gamma), so each coordinate
of R(T) - T is at most gamma_j / 2 in absolute value. For neighbours X, X' with
u = T(X) - T(X'), ||u||_K <= Delta (the certified sensitivity), and
R(T(X)) - R(T(X')) = u + w with |w_j| <= gamma_j, so by the triangle inequality
||R(T(X)) - R(T(X'))||_K <= Delta + s(gamma) = Delta~, with the rounding slack
s(gamma) = sup_{|w_j| <= gamma_j} ||w||_K. The output o has
P(o | X) / P(o | X') = exp(-r (||o - R(T(X))||_K - ||o - R(T(X'))||_K)) <= exp(r Delta~)
with r = eps / Delta~: eps-DP, with no real number rounded anywhere. (For polytopes the law
uses an outward-rounded rational K' containing K, whose norm is smaller, so the same chain
holds in K'; rates are rounded down, which only adds noise.)

The default gamma makes s(gamma) <= 1/2 % of Delta: the rounding costs at most 1/2 % of the budget, so the
noise's scale, and the median error of a release, stays within 1% of the continuous release's (issue 13).
Above epsilon = 1 the share halves with each doubling of epsilon (:func:`default_share`), so the
lattice also stays fine against the noise scale Delta / epsilon.
"""

from __future__ import annotations

import copy
import itertools
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from knorm._validation import check_rng, param_error
from knorm.geometry import CountBall, HistogramBall, LpBall, RejectionStats, ScaledBall, VoteBall
from knorm.noise import discrete
from knorm.noise.lattice import MIN_ACCEPTANCE, LatticeKNormNoise, RationalPolytope, to_rational_polytope
from knorm.sensitivity import BlockSumBall

__all__ = [
    "BlockLatticeNoise",
    "LatticeLaw",
    "LatticeUnavailable",
    "ROUNDING_SHARE",
    "default_share",
    "build_lattice_law",
    "choose_spacing",
    "lattice_noise",
]

#: Largest share of Delta that the rounding slack s(gamma) may take at the default spacing.
ROUNDING_SHARE = 0.005
#: The largest rate per unit of ||.||_K of a law on a declared lattice (counts); see _build.
MAX_COUNT_RATE = Fraction(64)
# Integers of a released lattice point stay below 2^53, so gamma k is an exact double.
_EXACT_INT = 2**53


class LatticeUnavailable(ValueError):
    """The ball has no practical exact lattice sampler (it is not a polytope, or rejection is too rare)."""


@dataclass(frozen=True)
class LatticeLaw:
    """The lattice noise of one mechanism: spacing, covered sensitivity and the exact sampler.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    noise : LatticeKNormNoise or BlockLatticeNoise
        The integer law, of rate eps / Delta~ in statistic units.
    spacing : ndarray of shape (m,)
        The lattice spacings gamma_j (powers of two).
    sensitivity : float
        Delta~ = Delta + s(gamma), rounded up to a double.
    slack : Fraction
        The rounding slack s(gamma), exactly (0 for a statistic declared on the lattice).
    on_lattice : bool, default False
        The statistic was declared to lie in gamma Z^m: a value off it is refused.
    """

    noise: LatticeKNormNoise | BlockLatticeNoise | HistogramLatticeNoise
    spacing: np.ndarray
    sensitivity: float
    slack: Fraction
    on_lattice: bool = False

    @property
    def sampler(self):
        """How the noise is drawn, for the Release record."""
        return f"lattice, exact in integer arithmetic ({self.noise.sampler})"

    def release(self, value, size, gen):
        """Return gamma (round(value / gamma) + k), k drawn exactly, as exact doubles.

        Parameters
        ----------
        value : ndarray of shape (m,) or (..., m)
            The statistic (rows released independently).
        size : tuple or None
            The leading shape of ``value`` (None for one vector).
        gen : numpy.random.Generator
            The randomness (only its ``integers`` method is used).

        Returns
        -------
        ndarray
            The released values, on the lattice: int64 for a statistic declared on Z^m
            (``on_lattice`` with spacing 1, counts), exact doubles otherwise.
        """
        units = np.rint(value / self.spacing)
        if self.on_lattice and not np.array_equal(units, value / self.spacing):
            raise ValueError(
                "The 'value' parameter of KNormMechanism.release must lie on the declared lattice "
                f"(gamma = {self.spacing.tolist()}, no rounding slack was paid for). Got a value off it instead."
            )
        if not np.all(np.abs(units) < _EXACT_INT // 2):
            raise ValueError(
                "The 'value' parameter of KNormMechanism.release is too large for its lattice: "
                f"|value / gamma| must stay below 2^52 (gamma = {self.spacing.tolist()}). Use a coarser "
                "lattice_spacing, or sampler='continuous'."
            )
        k = self.noise.sample(size, rng=gen)
        out = units.astype(np.int64) + k
        if not np.all(np.abs(out) < _EXACT_INT):
            raise ValueError("KNormMechanism.release: a lattice output left the exactly representable range 2^53.")
        if self.on_lattice and np.all(self.spacing == 1):
            return out  # integers (counts): released as int64, never through a float
        return out * self.spacing


def default_share(epsilon):
    """Return the default rounding share: ROUNDING_SHARE, halved for each doubling of epsilon above 1.

    The slack is then at most 1/2 % of Delta and, for epsilon > 1, at most 1/2 % of the noise
    scale Delta / epsilon (up to a factor 2): the rounding stays negligible against the noise
    at any epsilon, and the sampler's rate per lattice unit stays small (a lattice fixed by
    Delta alone made the release at epsilon = 10^6 all rounding, and its sampler crawl).

    Parameters
    ----------
    epsilon : float
        The budget (public).

    Returns
    -------
    float
        The largest s(gamma) / Delta for :func:`choose_spacing`.
    """
    return ROUNDING_SHARE * 2.0 ** -max(0, math.ceil(math.log2(float(epsilon))))


def choose_spacing(ball, sensitivity, *, share=ROUNDING_SHARE):
    """Return power-of-two spacings gamma_j with rounding slack at most ``share`` x Delta.

    Parameters
    ----------
    ball : NormBall
        The unit ball K (public).
    sensitivity : float
        Delta (public).
    share : float, default 0.005
        The largest s(gamma) / Delta.

    Returns
    -------
    ndarray of shape (m,)
        The spacings gamma_j, proportional (up to powers of two) to the extent of Delta K along axis j,
        the largest such lattice whose slack, computed exactly on the lattice ball, is at
        most share x Delta.
    """
    key = ("spacing", _ball_key(ball), float(sensitivity), float(share))
    return _cached(key, lambda: _choose_spacing(ball, sensitivity, share)).copy()


def _choose_spacing(ball, sensitivity, share):
    extent = sensitivity * np.asarray(ball.bounding_box(), dtype=float)
    base = 2.0 ** np.floor(np.log2(extent))
    # s(gamma) <= sum_j gamma_j ||e_j||_K (triangle inequality): a cheap first guess, then the
    # exact slack on the lattice ball decides (one rational conversion instead of two).
    upper = float(np.sum(base * ball.norm(np.eye(ball.dim)))) * (1 + 1e-9)
    shift = math.floor(math.log2(share * sensitivity / upper))
    gamma = np.ldexp(base, shift)
    # The outward rounding of a polytope depends (slightly) on the spacing: check, halve if needed.
    while float(_slack(ball, gamma)) > share * sensitivity:
        gamma = gamma / 2.0
    return gamma


def _dedicated(ball, gamma):
    """Whether LatticeKNormNoise has a dedicated (non-polytope) sampler for ``ball`` on ``gamma``."""
    base = ball.base if isinstance(ball, ScaledBall) else ball
    return isinstance(base, LpBall) and (base.p == 1 or (math.isinf(base.p) and len(set(gamma.tolist())) == 1))


def _as_interval(ball):
    """A 1-D ball is an interval [-r, r]: the l1 ball of radius r, with the exact discrete Laplace sampler.

    A 1-D l_p ball is that interval exactly, for every p. Any other 1-D ball (a linear image,
    a polytope, a count ball) lies inside [-b, b], b its certified bounding box widened by a
    relative 1e-12 against the rounding of its product: the norm of [-b, b] is at most the
    ball's, so its certified sensitivity stays valid there (as for the outward rational
    polytope). The discrete Laplace then serves every rate in its range (2^-46 to 2^62 per
    lattice unit), where the polytope sampler's N k overflowed int64 at epsilon = 1e-9 and
    needed more denominator bits at epsilon = 1e9 (issue 21).
    """
    if ball.dim != 1:
        return ball
    base, factor = (ball.base, ball.factor) if isinstance(ball, ScaledBall) else (ball, None)
    if isinstance(base, LpBall):
        if base.p == 1:
            return ball
        interval = LpBall(1, 1, radius=base.radius)
        return interval if factor is None else ScaledBall(interval, factor)
    radius = float(ball.bounding_box()[0])
    if not (math.isfinite(radius) and radius > 0):
        return ball
    return LpBall(1, 1, radius=math.nextafter(radius * (1 + 1e-12), math.inf))


def _count_rows(ball):
    """Integer rows N (and D = k) with ||u||_K = max_i N_i . u / k, exactly, for a CountBall.

    With g(x) = max(||x||_inf, ||x||_1 / k) on x >= 0 (CountBall, Notes), k g(u+) is the largest
    of 0 and a . u over P' = {k e_i} u {1_T : |T| > k} (a . u <= a . u+ as a >= 0, with equality
    for T the positive coordinates; 1_T with |T| <= k is dominated by k e_i). Replace-one:
    the gauge max(g(u+), g(u-)) has rows P' u -P'. Add/remove: g(u+) + g(u-) has rows a - b
    for a, b in P' u {0} with disjoint supports, not both 0. No rounding: K' = K.
    """
    d, k = ball.dim, ball.l0_bound
    eye = np.eye(d, dtype=np.int64)
    plus = [k * e for e in eye]
    for size in range(k + 1, d + 1):
        for subset in itertools.combinations(range(d), size):
            row = np.zeros(d, dtype=np.int64)
            row[list(subset)] = 1
            plus.append(row)
    if ball.neighbours == "replace":
        return np.array(plus), k
    rows = list(plus)
    for a in plus:
        for b in plus:
            if not np.any((a != 0) & (b != 0)):
                rows.append(a - b)
    return np.array(rows), k


def _vote_rows(ball):
    """Integer rows N and D with ||v||_K = max_i N_i . v / D, exactly, for a VoteBall.

    The centred permutohedron Pi has gauge max over proper subsets A (|A| = s) of
    2 sum_{i in A} y_i / (s (d - s)) (Rado's facets, VoteBall Notes). Replace-one: K = 2 Pi in
    the released coordinates v, y = (v, -sum v), so the row of A is (1_A - [d in A] 1) / (s (d - s))
    on v. Add/remove: y = u - t 1 with t = mean u, rows 2 (d 1_A - s 1) / (d s (d - s)), and
    the cylinder's ends 2 |t| / (d - 1), rows +-2 1 / (d (d - 1)). D is the common denominator.
    """
    d = ball.stat_dim
    flat = ball.neighbours == "replace"
    D = math.lcm(*[(1 if flat else d) * s * (d - s) for s in range(1, d)])
    rows = []
    for mask in range(1, 2**d - 1):
        A = np.array([(mask >> i) & 1 for i in range(d)], dtype=np.int64)
        size = int(A.sum())
        if flat:
            rows.append((A[:-1] - A[-1]) * (D // (size * (d - size))))
        else:
            rows.append(2 * (d * A - size) * (D // (d * size * (d - size))))
    if not flat:
        rows.append(np.full(d, 2 * D // (d * (d - 1)), dtype=np.int64))
    return np.array(rows), D


#: An induced ball (count, vote) gets an exact rational polytope only with at most this many rows.
_MAX_INDUCED_ROWS = 1 << 14


def _count_polytope(ball):
    """The exact RationalPolytope of a CountBall or VoteBall in lattice units at spacing 1, or ValueError."""
    if isinstance(ball, VoteBall):
        rows = 2**ball.stat_dim
        build = _vote_rows
    else:
        d, k = ball.dim, ball.l0_bound
        plus = d + sum(math.comb(d, s) for s in range(k + 1, d + 1))
        rows = plus * (plus if ball.neighbours == "add_remove" else 1)
        build = _count_rows
    if rows > _MAX_INDUCED_ROWS:
        raise ValueError(f"the ball's exact polytope would have over {_MAX_INDUCED_ROWS} rows")
    box = np.asarray(ball.bounding_box(), dtype=float)
    share = math.exp(math.log(float(ball.volume())) - float(np.sum(np.log(2 * box))))
    if share < MIN_ACCEPTANCE / 100:  # the rejection from the box would accept far too rarely (pilot skipped)
        raise ValueError(f"the ball fills {share:.2g} of its box: rejection from l_inf would accept too rarely")
    P = RationalPolytope(*build(ball))
    # The ball's own box is exact (1 for counts, d - 1 for votes: the l_inf sensitivities); the LP box
    # is padded by one lattice unit, which at spacing 1 doubled the count ball's proposal box (an
    # acceptance 2^-d lower). Rows and box are exact integers, so the tighter box is certified.
    if np.all(box == np.round(box)) and np.all(box <= P.box):
        P.box = box.astype(np.int64)
    return P


def _lattice_ball(ball, gamma):
    """The ball LatticeKNormNoise samples with: K itself, or its rational polytope K' (cached)."""
    ball = _as_interval(ball)
    if isinstance(ball, CountBall) and ball.dim == 1:  # [-1, 1] under both relations
        ball = LpBall(1, 1)
    if _dedicated(ball, gamma):
        return ball, gamma
    if isinstance(ball, (CountBall, VoteBall)) and np.all(gamma == 1):
        return _cached(("K'", _ball_key(ball), 1.0), lambda: _count_polytope(ball)), None
    key = ("K'", _ball_key(ball), tuple(gamma.tolist()))
    return _cached(key, lambda: to_rational_polytope(ball, axis_scale=gamma)), None


def _slack(ball, gamma):
    """s(gamma) = sup_{|w_j| <= gamma_j} ||w||_K (in the lattice ball actually used), exactly.

    For a block-sum norm sum_i w_i ||u_i||_{K_i} the supremum over the box separates:
    sum_i w_i s_i(gamma_i).
    """
    if isinstance(ball, BlockSumBall):
        return sum(Fraction(w) * _slack(b, gamma[i]) for i, b, w in ball.blocks)
    if isinstance(ball, HistogramBall):  # sup of (||w||_1 + |sum w|) / 2 over |w_j| <= gamma: w = gamma 1
        return ball.dim * Fraction(HistogramLatticeNoise.equal_spacing(gamma))
    lattice_ball, scale = _lattice_ball(ball, gamma)
    # The slack does not depend on the rate: take about 1 per lattice unit, always inside the sampler's range
    # (the l1 / l_inf ball's radius in statistic units: 1 / gamma alone was 2^-257 per unit for bounds 2^256).
    extent = 1 if scale is None else Fraction(float(np.max(lattice_ball.bounding_box())))
    rate = 1 if scale is None else extent / Fraction(float(np.min(gamma)))
    return LatticeKNormNoise(lattice_ball, rate, axis_scale=scale).rounding_slack(gamma if scale is not None else 1)


class BlockLatticeNoise:
    """The lattice law of a block-sum norm: independent lattice laws on the blocks.

    P(k) proportional to exp(-r sum_i w_i ||gamma_i k_i||_{K_i}) is the product of the laws
    of rates r w_i on the blocks (the density factorises, :class:`BlockSumBall` Notes).

    Parameters
    ----------
    dim : int
        Dimension m.
    parts : sequence of (indices, LatticeKNormNoise)
        The blocks' coordinates and laws.
    """

    def __init__(self, dim, parts):
        self.dim = dim
        self.parts = tuple(parts)
        self.sampler = "blocks: " + "; ".join(noise.sampler for _, noise in self.parts)

    @property
    def expected_acceptance(self):
        """The smallest acceptance among the blocks' samplers."""
        return min(noise.expected_acceptance for _, noise in self.parts)

    def sample(self, size=None, *, rng=None):
        """Draw lattice noise, int64 of shape (m,) or (*size, m), block by block.

        Parameters
        ----------
        size : int or tuple of ints, optional
            Number (or shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            The noise, in lattice units.
        """
        gen = check_rng(rng, "BlockLatticeNoise.sample")
        shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
        out = np.empty((*shape, self.dim), dtype=np.int64)
        for idx, noise in self.parts:
            out[..., idx] = noise.sample(size, rng=gen)
        return out


class HistogramLatticeNoise:
    """The lattice law of the histogram ball (replace-one counts, Joseph & Yu 2023), exactly.

    Parameters
    ----------
    ball : HistogramBall
        K = {v : ||v||_1 + |sum v| <= 2} in the d - 1 released coordinates.
    gamma : float
        The lattice spacing (equal on every coordinate; 1 for counts).
    rate : Fraction
        The rate r per unit of ||.||_K.

    Notes
    -----
    With z = (k, -sum k) in Z^d, ||gamma k||_K = gamma (||k||_1 + |sum k|) / 2 = gamma ||z||_1 / 2,
    so P(k) proportional to exp(-r ||gamma k||_K) = prod_{i < d} exp(-rho |k_i|) exp(-rho |sum k|)
    with rho = r gamma / 2: d - 1 independent discrete Laplaces of rate rho (drawn exactly,
    :func:`knorm.noise.discrete.discrete_laplace`, rho rounded down to a dyadic rate, which only
    adds noise) kept with probability exp(-rho |sum k|) (an exact Bernoulli, CKS Algorithm 1, in
    integer arithmetic): the acceptance ratio of the target to the proposal, at most 1. No float
    decides anything. (It is d discrete Laplaces conditioned on a zero sum, the last one dropped;
    drawing the last one and rejecting a non-zero sum, as before issue 21, accepted (1 - q) / (1 + q)
    times less: at small rates the cost grew like 1 / epsilon.)

    The acceptance E exp(-rho |S|), S the sum of the d - 1 proposals, is
    P(sum of d = 0) (1 + q) / (1 - q) with q = exp(-rho), P(sum of d = 0) = (1/pi) int_0^pi
    phi(t)^d dt and phi(t) = (1 - q)^2 / (1 - 2 q cos t + q^2): about 1 / sqrt(pi d) at small
    rates whatever rho (0.18 at d = 10, 0.0018 at d = 10^5), and near 1 at large rates. A draw
    costs about d sqrt(pi d) discrete Laplaces at most: 10^5 bins take about 2 s.

    References
    ----------
    Joseph & Yu (2023), arXiv:2309.15790 (the count ball); Canonne, Kamath & Steinke (2020)
    (exact discrete Laplace, Bernoulli(exp(-x))); paper Section 2 (K-norm mechanism).
    """

    def __init__(self, ball, gamma, rate):
        self.dim = ball.dim
        g = self._gamma = Fraction(self.equal_spacing(gamma))
        # One coordinate gives the per-unit rate, rounded down to a dyadic (d coordinates cost d Fractions).
        self._inner = LatticeKNormNoise(LpBall(1, 1), Fraction(rate) * g / 2)
        self._rho = Fraction(self._inner.effective_rate)  # dyadic: s / 2^tau
        self.effective_rate = self._rho * 2 / g
        self.sampler = (
            f"histogram ball: {ball.stat_dim} discrete Laplaces conditioned on a zero sum "
            "(the last by rejection, exp(-rate |sum|))"
        )
        self.sampler_stats = RejectionStats()
        self._acceptance = None

    @staticmethod
    def equal_spacing(gamma):
        """The one spacing of ``gamma`` (the histogram ball is symmetric in its coordinates)."""
        values = set(np.atleast_1d(np.asarray(gamma, dtype=float)).tolist())
        if len(values) != 1:
            raise ValueError(f"the histogram ball's lattice needs equal spacings; got {sorted(values)}")
        return values.pop()

    @property
    def expected_acceptance(self):
        """E exp(-rho |S|) = P(sum of d = 0) (1 + q) / (1 - q), by quadrature of the characteristic function."""
        if self._acceptance is None:
            self._acceptance = self._acceptance_value()
        return self._acceptance

    def _acceptance_value(self):
        from scipy.integrate import quad

        rho = float(self._rho)
        if rho > 40:  # q < 4e-18: every proposal is 0 but for an event below 1e-16
            return 1.0
        q, one_q = math.exp(-rho), -math.expm1(-rho)  # 1 - q without cancellation
        d = self.dim + 1
        var = 2 * q / one_q**2

        def f(t):  # phi(t)^d, with 1 - 2 q cos t + q^2 = (1 - q)^2 + 4 q sin^2(t / 2)
            return math.exp(d * (2 * math.log(one_q) - math.log(one_q**2 + 4 * q * math.sin(t / 2) ** 2)))

        cut = min(math.pi, 12 / math.sqrt(d * var))  # phi^d is negligible beyond 12 standard deviations
        value = quad(f, 0, cut, limit=200)[0] + (quad(f, cut, math.pi, limit=200)[0] if cut < math.pi else 0.0)
        return min(1.0, value / math.pi * (1 + q) / one_q)

    def norm(self, k):
        """Return ||gamma k||_K = gamma (||k||_1 + |sum k|) / 2 exactly, one Fraction per lattice point.

        Parameters
        ----------
        k : array_like of int, shape (..., d - 1)
            Lattice points.

        Returns
        -------
        ndarray of Fraction (object dtype)
            One exact norm per point (at least 1-D).
        """
        k = np.atleast_2d(np.asarray(k, dtype=np.int64))
        twice = np.abs(k).sum(axis=-1) + np.abs(k.sum(axis=-1))
        return np.array([int(v) * self._gamma / 2 for v in twice.ravel()], dtype=object).reshape(twice.shape)

    def unnormalised_logpmf(self, k):
        """Return the log of the unnormalised pmf, -effective_rate ||gamma k||_K.

        Parameters
        ----------
        k : array_like of int, shape (..., d - 1)
            Lattice points.

        Returns
        -------
        ndarray of float
            The log pmf up to its additive log normaliser, which is not computed.
        """
        k = np.asarray(k, dtype=np.int64)
        twice = np.abs(k).sum(axis=-1) + np.abs(k.sum(axis=-1))
        return -float(self.effective_rate * self._gamma / 2) * twice.astype(float)

    def _keep(self, sums, gen):
        """Bernoulli(exp(-rho |sum|)) per entry of the int64 array ``sums``, exactly.

        rho |sum| = I + f / 2^tau is split in Python integers (it can exceed int64);
        exp(-I) is drawn as I Bernoulli(exp(-1)) all true, in chunks below 2^62.
        """
        num, den = self._rho.numerator, self._rho.denominator
        prods = [abs(int(v)) * num for v in sums.tolist()]
        whole = [p // den for p in prods]
        frac = np.array([p - w * den for p, w in zip(prods, whole)], dtype=np.int64)
        keep = discrete._bernoulli_exp_frac(frac, den, gen)
        left = np.array(whole, dtype=object)
        chunk = 1 << 62
        while keep.any() and any(left[keep] > 0):
            idx = np.flatnonzero(keep & (left > 0))
            step = np.array([min(int(v), chunk) for v in left[idx]], dtype=np.int64)
            keep[idx] &= discrete._bernoulli_exp_int(step, gen)
            left[idx] -= step
        return keep

    def sample(self, size=None, *, rng=None):
        """Draw lattice noise, int64 of shape (d - 1,) or (*size, d - 1).

        Parameters
        ----------
        size : int or tuple of ints, optional
            Number (or shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            The noise, in lattice units.
        """
        gen = check_rng(rng, "HistogramLatticeNoise.sample")
        shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
        n = math.prod(shape)
        acc = max(self.expected_acceptance, MIN_ACCEPTANCE)
        num, den = self._rho.numerator, self._rho.denominator  # the proposals' one rate, dyadic
        out = np.empty((n, self.dim), dtype=np.int64)
        have = proposed = 0
        while have < n:
            batch = int(min(max(16, 1.2 * (n - have) / acc), max(16, (1 << 22) // self.dim)))
            z = discrete._discrete_laplace(num, den, batch * self.dim, gen).reshape(batch, self.dim)
            keep = z[self._keep(z.sum(axis=1), gen)]
            take = min(len(keep), n - have)
            out[have : have + take] = keep[:take]
            have, proposed = have + take, proposed + batch
            self.sampler_stats.proposed += batch
            self.sampler_stats.accepted += len(keep)
            if proposed > 64 * n / acc + (1 << 20):
                raise RuntimeError("HistogramLatticeNoise: far fewer acceptances than expected; refusing to loop on.")
        return out.reshape(*shape, self.dim)


def lattice_noise(ball, gamma, rate):
    """Return the exact lattice law P(k) proportional to exp(-rate ||diag(gamma) k||_K).

    Parameters
    ----------
    ball : NormBall
        K (l1 and l_inf balls, polytopes and what converts to them, block-sum norms of those).
    gamma : ndarray of shape (m,)
        The lattice spacings.
    rate : Fraction
        The rate per unit of ||.||_K (eps / Delta~ for a mechanism).

    Returns
    -------
    LatticeKNormNoise or BlockLatticeNoise
        The law; ``sample`` returns int64 lattice units.
    """
    if isinstance(ball, BlockSumBall):
        parts = [(i, lattice_noise(b, gamma[i], rate * Fraction(w))) for i, b, w in ball.blocks]
        return BlockLatticeNoise(ball.dim, parts)
    if isinstance(ball, HistogramBall):
        return HistogramLatticeNoise(ball, gamma, rate)
    lattice_ball, scale = _lattice_ball(ball, gamma)
    return LatticeKNormNoise(lattice_ball, rate, axis_scale=scale)


def build_lattice_law(ball, sensitivity, epsilon, *, spacing=None, on_lattice=False):
    """Return the :class:`LatticeLaw` of a K-norm mechanism, or raise LatticeUnavailable.

    Parameters
    ----------
    ball : NormBall
        The unit ball K.
    sensitivity : float
        The certified Delta.
    epsilon : float
        The budget.
    spacing : float or array_like, optional
        The lattice spacings gamma_j (positive powers of two); by default
        :func:`choose_spacing`.
    on_lattice : bool, default False
        Declared: the statistic takes values in gamma Z^m on every dataset (counts with
        gamma = 1). Nothing is rounded, so Delta~ = Delta (no slack), and a release of a
        value off the lattice is refused.

    Returns
    -------
    LatticeLaw
        The law, with rate eps / Delta~ and Delta~ = Delta + s(gamma) (Delta when
        ``on_lattice``).

    Raises
    ------
    LatticeUnavailable
        If the ball cannot be made a rational polytope (l2, l_p, oracle balls) or its
        rejection sampler would accept too rarely.
    ValueError
        If the ball has an exact lattice sampler (at epsilon = 1) but not at this
        epsilon: the message names 'epsilon' and the range that is served. A default
        ('auto') mechanism does not fall back to continuous noise then (a silent change
        of sampler is a change of guarantee); sampler='continuous' asks for it.
    """
    try:
        return _law(ball, sensitivity, epsilon, spacing, on_lattice)
    except LatticeUnavailable as err:
        bound = _served_epsilon(ball, sensitivity, epsilon, spacing, on_lattice)
        if bound is None:
            raise
        side, k = bound
        why = str(err).split(": ", 1)[-1].rstrip(".")
        rule = f"at least 2^{k} = {2.0**k:.3g}" if side == "low" else f"at most 2^{k} = {2.0**k:.3g}"
        raise ValueError(
            f"The 'epsilon' parameter of KNormMechanism must be {rule} for the exact lattice sampler of {ball!r} "
            f"with sensitivity {float(sensitivity):.6g} (checked at powers of two; epsilon = 1 is served). Got "
            f"{float(epsilon):.6g} instead: {why}. The default sampler does not switch silently to continuous "
            "binary64 noise, whose guarantee is weaker (the least-significant-bit attack of Mironov 2012); pass "
            "sampler='continuous' to accept it."
        ) from None


def _served_epsilon(ball, sensitivity, epsilon, spacing, on_lattice):
    """('low', k) or ('high', k): 2^k is the last power of two served between epsilon and 1; None if 1 fails.

    The lattice law exists on an interval of epsilon (the per-unit rate grows with epsilon
    below 1, the lattice refines with it above); the boundary is found by bisection on the
    exponent, each probe a (cached) build.
    """

    def served(e):
        try:
            _law(ball, sensitivity, e, spacing, on_lattice)
        except (LatticeUnavailable, RuntimeError, OverflowError):  # a probe that fails to build is not served
            return False
        return True

    epsilon = float(epsilon)
    if epsilon == 1.0 or not served(1.0):
        return None
    if epsilon < 1.0:  # the smallest served exponent in (log2 epsilon, 0]
        bad, good = math.floor(math.log2(epsilon)), 0
        while good - bad > 1:
            mid = (bad + good) // 2
            bad, good = (bad, mid) if served(2.0**mid) else (mid, good)
        return "low", good
    good, bad = 0, math.ceil(math.log2(epsilon))
    while bad - good > 1:
        mid = (bad + good) // 2
        good, bad = (mid, bad) if served(2.0**mid) else (good, mid)
    return "high", good


def _law(ball, sensitivity, epsilon, spacing, on_lattice):
    """build_lattice_law at one epsilon (LatticeUnavailable if it has no law there).

    The law or the refusal is cached, keyed on public inputs only (the ball's parameters,
    Delta, epsilon, the declared spacing): a refused ball was tried again on every release,
    0.5-1 ms each (issue 22).
    """
    gamma = None if spacing is None else check_spacing(spacing, ball.dim)
    spacing_key = None if gamma is None else tuple(gamma.tolist())
    key = ("law or refusal", _ball_key(ball), float(sensitivity), float(epsilon), spacing_key, bool(on_lattice))
    return _cached(key, lambda: _law_uncached(ball, sensitivity, epsilon, spacing, gamma, on_lattice))


def _law_uncached(ball, sensitivity, epsilon, spacing, gamma, on_lattice):
    try:
        if gamma is None:
            gamma = choose_spacing(ball, sensitivity, share=default_share(epsilon))
        if on_lattice and spacing is None:
            raise ValueError("on_lattice=True needs the lattice spacing the statistic lives on")
        key = ("law", _ball_key(ball), float(sensitivity), float(epsilon), tuple(gamma.tolist()), bool(on_lattice))
        return _cached(key, lambda: _build(ball, sensitivity, epsilon, gamma, on_lattice))
    except (ValueError, TypeError) as err:
        if isinstance(err, LatticeUnavailable):
            raise
        raise LatticeUnavailable(f"no exact lattice sampler for {ball!r}: {err}") from None


def _build(ball, sensitivity, epsilon, gamma, on_lattice=False):
    # A statistic declared on the lattice is never rounded: neighbours differ by u in S_T itself.
    slack = Fraction(0) if on_lattice else _slack(ball, gamma)
    delta_tilde = Fraction(sensitivity) + slack
    rate = Fraction(epsilon) / delta_tilde
    if on_lattice:
        # Counts at a huge epsilon: the rate is capped at 64 (rounded down), which only adds noise, so
        # the law stays eps-DP (it is then min(eps, 64 Delta)-DP); a non-zero lattice point has
        # ||k||_K >= 1 here, so P(noise != 0) is about 2 m exp(-64) = m 3e-28 or less. Uncapped,
        # eps = 1e300 gave a rate outside the exact samplers' int64 range, and the l_inf latent
        # sampler of the count and vote polytopes took minutes at rates of 2^16 and more.
        rate = min(rate, MAX_COUNT_RATE)
    noise = lattice_noise(ball, gamma, rate)
    acceptance = noise.expected_acceptance  # a pilot run (fixed seed): deterministic
    if acceptance < MIN_ACCEPTANCE:
        raise LatticeUnavailable(
            f"no practical exact lattice sampler for {ball!r}: its rejection step accepts about {acceptance:.2g} "
            f"of its proposals, below the floor {MIN_ACCEPTANCE:g}"
        )
    law = LatticeLaw(noise, gamma, math.nextafter(float(delta_tilde), math.inf), slack)
    return replace(law, on_lattice=True) if on_lattice else law


# Built lattice laws, rational polytopes and spacings, by the ball's parameters (never id()):
# a fit that builds a new mechanism per call reuses them. Bounded, least recently used first out.
_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 128
_LOCK = threading.RLock()


def _ball_key(ball):
    key = ball.cache_key
    return ("instance", ball) if key is None else key


def _cached(key, build):
    """``build()`` once per key; a refusal (ValueError, TypeError) is cached and raised again."""
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            value = _CACHE[key]
        else:
            try:
                value = build()
            except (ValueError, TypeError) as err:
                value = err
            _CACHE[key] = value
            if len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    if isinstance(value, Exception):
        raise copy.copy(value)  # a fresh instance: raising the stored one grew its traceback on every call
    return value


def check_spacing(spacing, dim, owner="KNormMechanism"):
    """Return ``spacing`` as an array of ``dim`` positive powers of two, or raise ValueError."""
    try:
        gamma = np.broadcast_to(np.asarray(spacing, dtype=float), (dim,)).copy()
    except (TypeError, ValueError):
        raise param_error("lattice_spacing", owner, f"None, or {dim} positive powers of two", spacing) from None
    mantissa, _ = np.frexp(gamma)
    if not (np.all(np.isfinite(gamma)) and np.all(gamma > 0) and np.all(mantissa == 0.5)):
        raise param_error("lattice_spacing", owner, f"None, or {dim} positive powers of two", spacing)
    return gamma
