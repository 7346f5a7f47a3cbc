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

This module builds the law (:func:`build_lattice_law`, the spacing, the slack and the law's
cache); which lattice ball a norm ball is sampled with is in :mod:`knorm.mechanisms.lattice_balls`,
and the block and histogram laws are in :mod:`knorm.noise.lattice_laws`. Behaviour that depends
on the kind of ball (:func:`lattice_noise`, the slack) is chosen by ``functools.singledispatch``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import singledispatch

import numpy as np

from knorm._docs import fill_doc
from knorm._validation import param_error
from knorm.geometry import HistogramBall
from knorm.mechanisms._cache import PublicCache
from knorm.mechanisms.lattice_balls import _as_interval, _count_polytope, _dedicated, _integer_rows
from knorm.noise.lattice import MIN_ACCEPTANCE, LatticeKNormNoise, to_rational_polytope
from knorm.noise.lattice_laws import BlockLatticeNoise, HistogramLatticeNoise
from knorm.noise.law import NoiseLaw, ball_key
from knorm.sensitivity import BlockSumBall

__all__ = [
    "BlockLatticeNoise",
    "HistogramLatticeNoise",
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
class LatticeLaw(NoiseLaw):
    """The lattice noise of one mechanism: spacing, covered sensitivity and the exact sampler.

    Each parameter is kept as the attribute of the same name. As a
    :class:`~knorm.noise.law.NoiseLaw` it is the law of the noise gamma k in the
    statistic's units: what a release adds to the rounded statistic.

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

    # -- the noise-law interface (knorm.noise.law), in the statistic's units -----------------
    @property
    def dim(self):
        """Dimension m."""
        return self.noise.dim

    @property
    def scale(self):
        """The integer law's scale (1 / its effective rate, per unit of ||.||_K in the statistic's units)."""
        return self.noise.scale

    @property
    def expected_acceptance(self):
        """The integer law's acceptance."""
        return self.noise.expected_acceptance

    @property
    def cache_key(self):
        """The integer law's key and the spacings."""
        return ("LatticeLaw", self.noise.cache_key, tuple(np.asarray(self.spacing).tolist()))

    def sample(self, size=None, *, rng=None):
        """Draw the noise gamma k (exact doubles), k from the integer law.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of float
            Shape (m,) or ``(*size, m)``. Releases go through :meth:`release`, not here.
        """
        return self.noise.sample(size, rng=rng) * self.spacing

    def _half_width(self, alpha, n_draws):
        # |gamma_j k_j| <= gamma_j t_j exactly when |k_j| <= t_j: the integer law's half-widths, scaled.
        half = self.noise._half_width(alpha, n_draws)
        return replace(half, value=np.asarray(half) * self.spacing)

    def perturb(self, value, size, gen):
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


def _lattice_ball(ball, gamma):
    """The ball LatticeKNormNoise samples with: K itself, or its rational polytope K' (cached)."""
    ball = _as_interval(ball)
    if _dedicated(ball, gamma):
        return ball, gamma
    if np.all(gamma == 1) and _integer_rows(ball) is not None:  # count and vote balls: exact integer rows
        return _cached(("K'", _ball_key(ball), 1.0), lambda: _count_polytope(ball)), None
    key = ("K'", _ball_key(ball), tuple(gamma.tolist()))
    return _cached(key, lambda: to_rational_polytope(ball, axis_scale=gamma)), None


@singledispatch
def _slack(ball, gamma):
    """s(gamma) = sup_{|w_j| <= gamma_j} ||w||_K (in the lattice ball actually used), exactly.

    By the type of the ball: this default computes it on the lattice ball of
    :func:`_lattice_ball` (K or its outward rational polytope K', whose slack bounds K's).
    """
    lattice_ball, scale = _lattice_ball(ball, gamma)
    # The slack does not depend on the rate: take about 1 per lattice unit, always inside the sampler's range
    # (the l1 / l_inf ball's radius in statistic units: 1 / gamma alone was 2^-257 per unit for bounds 2^256).
    extent = 1 if scale is None else Fraction(float(np.max(lattice_ball.bounding_box())))
    rate = 1 if scale is None else extent / Fraction(float(np.min(gamma)))
    return LatticeKNormNoise(lattice_ball, rate, axis_scale=scale).rounding_slack(gamma if scale is not None else 1)


@_slack.register
def _(ball: BlockSumBall, gamma):
    # For a block-sum norm sum_i w_i ||u_i||_{K_i} the supremum over the box separates: sum_i w_i s_i(gamma_i).
    return sum(Fraction(w) * _slack(b, gamma[i]) for i, b, w in ball.blocks)


@_slack.register
def _(ball: HistogramBall, gamma):
    # sup of (||w||_1 + |sum w|) / 2 over |w_j| <= gamma: w = gamma 1.
    return ball.dim * Fraction(HistogramLatticeNoise.equal_spacing(gamma))


@singledispatch
def lattice_noise(ball, gamma, rate):
    """Return the exact lattice law P(k) proportional to exp(-rate ||diag(gamma) k||_K).

    The law is chosen by the type of the ball (this default: one
    :class:`~knorm.noise.lattice.LatticeKNormNoise` on K or its rational polytope K';
    block-sum norms get a :class:`~knorm.noise.lattice_laws.BlockLatticeNoise`, the
    histogram ball a :class:`~knorm.noise.lattice_laws.HistogramLatticeNoise`).

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
    NoiseLaw
        The law; ``sample`` returns int64 lattice units.
    """
    lattice_ball, scale = _lattice_ball(ball, gamma)
    return LatticeKNormNoise(lattice_ball, rate, axis_scale=scale)


@lattice_noise.register
def _(ball: BlockSumBall, gamma, rate):
    # The density factorises over blocks: independent laws of rates rate w_i (BlockSumBall Notes).
    parts = [(i, lattice_noise(b, gamma[i], rate * Fraction(w))) for i, b, w in ball.blocks]
    return BlockLatticeNoise(ball.dim, parts, scale=float(1 / Fraction(rate)))


@lattice_noise.register
def _(ball: HistogramBall, gamma, rate):
    return HistogramLatticeNoise(ball, gamma, rate)


@fill_doc
def build_lattice_law(ball, sensitivity, epsilon, *, spacing=None, on_lattice=False):
    """Return the :class:`LatticeLaw` of a K-norm mechanism, or raise LatticeUnavailable.

    Parameters
    ----------
    ball : NormBall
        The unit ball K.
    sensitivity : float
        The certified Delta.
    %(epsilon)s
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
# Laws and refusals by public inputs (ball, sensitivity, epsilon, spacing).
_LAWS = PublicCache(128, refusals=(ValueError, TypeError))


_ball_key = ball_key


def _cached(key, build):
    """``build()`` once per key; a refusal (ValueError, TypeError) is kept and raised again."""
    return _LAWS.get(key, build)


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
