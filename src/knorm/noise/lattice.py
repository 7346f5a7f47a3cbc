"""Exact K-norm laws on the integer lattice (norm balls made rational: :mod:`knorm.noise.rational_polytope`).

The law of this module is P(k) proportional to exp(-r ||k||_K) on Z^d, for a
positive rational rate r and a norm ball K given in lattice units. It is what a
mechanism adds to a statistic rounded to gamma Z^d (issue 13): every output is
an int64 vector drawn with :mod:`knorm.noise.discrete`'s integer-only samplers,
so no floating-point rounding can reveal the input (Mironov 2012).

Three samplers, chosen by the ball:

* l1 (``LpBall(p=1)``): a product of discrete Laplaces.
* l_inf (``LpBall(p=inf)``): exact, through a latent radius (see
  :class:`LatticeKNormNoise`, Notes).
* Polytopes, given as or converted to a :class:`RationalPolytope`: exact
  rejection from the enclosing l_inf law.

Rates are exact rationals (``fractions.Fraction``; a float is read exactly). The
fast exact samplers take dyadic rates s / 2^tau, so a rate is rounded DOWN to one
(keeping about 40 significant bits) unless it already is: the noise is then
slightly larger, so privacy still holds. ``effective_rate`` reports the rate
actually used.

References
----------
Awan & Slavkovic (2021), Section 2 (K-norm mechanisms, norm balls); Canonne,
Kamath & Steinke (2020), arXiv:2004.00010 (exact discrete samplers); Mironov
(2012), "On significance of the least significant bits for differential privacy".
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from knorm._validation import check_count, check_rng
from knorm.geometry import LpBall, NormBall, RejectionStats, ScaledBall
from knorm.noise import discrete
from knorm.noise.discrete import INT64_MAX
from knorm.noise.law import NoiseLaw, ball_key
from knorm.noise.linf import linf_latent, linf_sampler

# Rational polytopes live in knorm.noise.rational_polytope; their names stay importable from here
# (patch them where they live).
from knorm.noise.rational_polytope import (  # noqa: F401
    _BLAS_MNK,
    _BOX_PAD_ABS,
    _BOX_PAD_REL,
    _FLOAT_EXACT,
    _GAUGE_BLOCK,
    _GAUGE_CHUNK,
    _K2_DIRECTIONS,
    _MAX_L1_FACET_DIM,
    _SUPPORT_WIDENING,
    RationalPolytope,
    _check_axis_scale,
    _fraction,
    _gammas,
    _halfspaces,
    _not_a_ball,
    to_rational_polytope,
)

__all__ = ["LatticeKNormNoise", "RationalPolytope", "to_rational_polytope"]

#: A sampler whose (pilot-estimated) acceptance is below this is refused.
MIN_ACCEPTANCE = 1e-4
# Significant bits kept when a rate is rounded down to a dyadic fraction s / 2^tau (the
# fast exact samplers need power-of-two denominators), and the largest tau: a polytope's
# proposal rate r c / D has denominator 2^(tau + 30), which must stay below 2^62.
_RATE_BITS = 40
_MAX_TAU = 62
_MAX_TAU_POLYTOPE = 32
# Pilot runs that estimate an acceptance: fixed seed, so the estimate (and a
# refusal) is deterministic; more proposals while fewer than _PILOT_HITS accept.
_PILOT_SEED = 0x1A77_1CE
_PILOT_PROPOSALS = 1 << 12
_PILOT_MAX_PROPOSALS = 1 << 17
_PILOT_HITS = 200
# A call to sample() gives up after this many times its expected number of proposals.
_PROPOSAL_SLACK = 50


# -- exact rationals --------------------------------------------------------------
def _round_down(x, bits=_RATE_BITS, max_tau=_MAX_TAU):
    """The dyadic fraction s / 2^tau <= x (x > 0) with s of about ``bits`` bits and tau <= max_tau.

    x itself when it is already dyadic with tau <= max_tau; otherwise s = floor(x 2^tau)
    with s >= 2^(bits - 1) unless tau is capped, a relative change below 2^(1 - bits).
    """
    den = x.denominator
    if den & (den - 1) == 0 and den.bit_length() - 1 <= max_tau:
        return x
    # x 2^tau >= 2^(bits - 1) for tau = bits - (bitlength(num) - bitlength(den)).
    tau = min(max_tau, bits - (x.numerator.bit_length() - den.bit_length()))
    tau = max(tau, 0)
    return Fraction(x.numerator * (1 << tau) // den, 1 << tau)


def _pilot_rng():
    """The Generator of pilot runs (a fixed seed, so acceptance estimates and refusals are deterministic)."""
    return np.random.default_rng(_PILOT_SEED)


# -- the lattice laws ---------------------------------------------------------------------
def _proposal_box(D, box, rate):
    """(m, c, shift) of the polytope sampler's l_inf proposal (see LatticeKNormNoise, Notes).

    The cube: m = None (every m_i = 1), c = floor(D / max B), shift 0. A box with
    integer multipliers m_i proportional to B_i (tried at 1, 2, 4 and 8 lattice units
    per step of L on the shortest axis): c = min_i floor(D m_i / B_i) and shift 1 (the
    ceil in Lmin costs one step of L, a factor exp(-rate c / D) of acceptance). The
    one with the smallest proposal volume prod_i (m_i D / c) times that factor wins;
    the box only when it is at least 10 % better.
    """
    box = [int(b) for b in box]
    c_cube = D // max(box)
    best: tuple[Any, int, int] = (None, c_cube, 0)
    cube_cost = math.log(D / c_cube) * len(box) if c_cube else math.inf
    cost = cube_cost
    for mu in (1, 2, 4, 8):
        m = tuple(max(1, round(mu * b / min(box))) for b in box)
        c = min(D * mi // b for mi, b in zip(m, box))
        if c < 1 or max(m) == 1 or max(m) > 1 << 20:
            continue
        trial = sum(math.log(mi * D / c) for mi in m) + float(rate) * c / D
        if trial < cost:
            best, cost = (m, c, 1), trial
    if best[0] is not None and cost > cube_cost + math.log(0.9):
        best = (None, c_cube, 0)
    return best


class LatticeKNormNoise(NoiseLaw):
    """The lattice K-norm law P(k) proportional to exp(-r ||k||_K) on Z^d, sampled exactly.

    Parameters
    ----------
    ball : NormBall or RationalPolytope
        The unit ball K (in the statistic's units; see ``axis_scale``). An l1 or
        l_inf :class:`~knorm.geometry.LpBall` (or a ScaledBall of one) gets a
        dedicated sampler; any other ball is converted by
        :func:`to_rational_polytope` and sampled by rejection.
    rate : int, float or Fraction
        The rate r > 0 per unit of ||k||_K, e.g. eps / Delta~ for a mechanism;
        read as an exact rational.
    axis_scale : float or sequence of floats, optional
        Lattice spacings gamma_j (positive powers of two). The law is then on
        lattice units k: P(k) proportional to exp(-r ||diag(gamma) k||_K), i.e. the
        ball K' = diag(1/gamma) K.

    Attributes
    ----------
    dim : int
        Dimension d.
    sampler : str
        ``"l1: discrete Laplace"``, ``"l_inf: latent radius"`` or
        ``"polytope: rejection from l_inf"``.
    effective_rate : Fraction
        The rate actually sampled, at most ``rate`` (rounded down to a dyadic
        fraction when needed; see Notes).
    polytope : RationalPolytope or None
        K' for the polytope sampler.
    sampler_stats : RejectionStats
        Proposals and acceptances of the outer rejection step so far.

    Raises
    ------
    TypeError
        If ``ball`` is not a NormBall or RationalPolytope.
    ValueError
        If ``rate`` or ``axis_scale`` is invalid or the ball cannot be converted.

    Notes
    -----
    **l1** (K = rho B_1): exp(-r sum_j gamma_j |k_j| / rho) is a product of
    discrete Laplaces of rates r gamma_j / rho (:func:`~knorm.noise.discrete.discrete_laplace`).

    **l_inf** (K = rho B_inf, equal spacings gamma): with rate a = r gamma / rho in
    lattice units and q = e^{-a}, q^M = (1 - q) sum_{L >= M} q^L, so the pair
    (k, L) with P(k, L) proportional to q^L 1{||k||_inf <= L} has marginal
    P(k) proportional to q^{||k||_inf}. Summing k out, P(L) is proportional to
    (2L + 1)^d q^L, and given L the coordinates of k are independent and uniform
    on {-L, ..., L}. The issue asked for "the exact law of the lattice radius,
    then a uniform lattice point"; this is the same law with the radius L of a
    uniform box point as the latent variable (L is not ||k||_inf, but k given L
    is uniform on the box of radius L, and the marginal of k is exact). L is
    drawn by exact inversion of its tabulated law while the table is small
    (no rejection); on finer lattices by rejection from the negative binomial
    C(L + d, d) (1 - q)^{d+1} q^L, itself drawn by exact inversion after a digit
    split, with the box coordinates realising the acceptance
    prod_j (2L + 1) / (2L + 2j) (about exp(-d a / 2)); for large d by sums of
    d + 1 exact geometrics (:mod:`knorm.noise.linf`). ``expected_acceptance``
    gives the acceptance for the parameters at hand.

    **Polytopes** K' = {u : N u <= D} (lattice units) with certified box B and
    c = floor(D / max B): the proposal is the l_inf law of rate r0 = r c / D
    (<= r / max B) together with its latent L, and k is accepted with probability
    exp(-(r ||k||_{K'} - r0 ||k||_inf)), which is in (0, 1] because
    ||k||_inf <= max B ||k||_{K'}. That Bernoulli is realised without a real
    exponent: with n(k) = D ||k||_{K'} and i drawn on {0, ..., c - 1} with
    P(i) proportional to exp(-r i / D), accept iff n(k) <= c L + i. Given k, L is
    ||k||_inf plus a geometric of rate r0 (memorylessness), so c L + i is
    c ||k||_inf plus a geometric of rate r / D, which is >= n(k) with probability
    exp(-(r / D)(n(k) - c ||k||_inf)), exactly the acceptance above. When B is
    far from a cube the proposal is a box instead: integer multipliers m_j
    proportional to B_j, the latent law P(L, k) proportional to
    q0^L 1{|k_j| <= m_j L} (:class:`knorm.noise.linf.LinfLatentSampler`), whose
    marginal is q0^Lmin(k) with Lmin(k) = max_j ceil(|k_j| / m_j), and
    c = min_j floor(D m_j / B_j). Because of the ceil, c (Lmin(k) - 1) <= n(k)
    is what the box guarantees, so the test is n(k) <= c (L - 1) + i, accepted
    with probability exp(-(r / D)(n(k) - c (Lmin(k) - 1))) <= 1; the accepted law
    is proportional to exp(-r0 Lmin(k)) exp(-(r / D)(n(k) - c Lmin(k))) =
    exp(-r ||k||_{K'}), as required, at the price of a factor exp(-r0) of
    acceptance. Each live proposal is checked against that bound (a wrong box
    raises instead of sampling a wrong law). The acceptance is about
    vol(K') / vol(proposal box); a pilot run estimates it and the
    sampler refuses (naming the continuous alternative) below 1e-4.

    The fast exact samplers need dyadic rates s / 2^tau (:mod:`knorm.noise.discrete`),
    so a rate that is not already one is rounded DOWN to the dyadic fraction with
    about 40 significant bits (relative change below 2^-39; for polytopes tau <= 32,
    a relative change below 2^-31 for rates above 1/2): the noise is never smaller
    than requested, so privacy still holds. ``effective_rate`` is the rate used.

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (K-norm mechanism) and appendix
    "Implementing K-Norm Mechanisms" (the continuous l_inf sampler whose latent
    form this mirrors; ERRATA.md item 4); Canonne, Kamath & Steinke (2020),
    arXiv:2004.00010 (exact discrete Laplace and Bernoulli samplers).

    Examples
    --------
    >>> from fractions import Fraction
    >>> from knorm.geometry import LpBall, k3_ball
    >>> noise = LatticeKNormNoise(LpBall(3, p=float("inf")), Fraction(1, 2))
    >>> noise.sampler
    'l_inf: latent radius'
    >>> k = noise.sample(5, rng=0)
    >>> k.shape, k.dtype
    ((5, 3), dtype('int64'))
    >>> k3 = LatticeKNormNoise(k3_ball(), 1.0, axis_scale=2.0**-3)
    >>> k3.sampler, k3.sample(rng=1).shape
    ('polytope: rejection from l_inf', (3,))
    >>> slack = k3.rounding_slack(2.0**-3)  # max over |w_j| <= 1/8 of ||w||_K3 = (3/8) / 4, rounded outward
    >>> type(slack).__name__, round(float(slack), 6)
    ('Fraction', 0.09375)
    """

    def __init__(self, ball, rate, *, axis_scale=None):
        owner = "LatticeKNormNoise"
        if not isinstance(ball, (NormBall, RationalPolytope)):
            raise TypeError(
                f"The 'ball' parameter of {owner} must be a NormBall or a RationalPolytope. "
                f"Got {type(ball).__name__} instead."
            )
        self.ball = ball
        self.rate = _fraction(rate, "rate", owner)
        self.dim = ball.dim
        self.axis_scale = _check_axis_scale(axis_scale, self.dim, owner)
        self.sampler_stats = RejectionStats()
        self.polytope: Any = None
        self._expected = None
        scale = self.axis_scale or (Fraction(1),) * self.dim
        base: Any
        base, factor = (ball.base, Fraction(ball.factor)) if isinstance(ball, ScaledBall) else (ball, Fraction(1))
        lp = isinstance(base, LpBall) and (base.p == 1 or (math.isinf(base.p) and len(set(scale)) == 1))
        if lp:
            rho = Fraction(base.radius) * factor
            self._rho = rho
            a_min = min(scale)
            # Per-unit rate of the smallest spacing, rounded down; others are exact power-of-two multiples.
            unit = _round_down(self.rate * a_min / rho)
            self.effective_rate = unit * rho / a_min
            if base.p == 1:
                self.sampler = "l1: discrete Laplace"
                self._coord_rates = [unit * (a / a_min) for a in scale]
                self._expected = 1.0
            else:
                self.sampler = "l_inf: latent radius"
                self._unit = unit
        else:
            P = ball if isinstance(ball, RationalPolytope) else to_rational_polytope(ball, axis_scale=axis_scale)
            if isinstance(ball, RationalPolytope) and axis_scale is not None:
                raise ValueError(
                    f"The 'axis_scale' parameter of {owner} must be None for a RationalPolytope (already in "
                    f"lattice units). Got {axis_scale!r} instead."
                )
            self.polytope = P
            self.sampler = "polytope: rejection from l_inf"
            self.effective_rate = _round_down(self.rate, max_tau=_MAX_TAU_POLYTOPE)
            self._m, self._c, self._shift = _proposal_box(P.D, P.box, self.effective_rate)
            self._mv = None if self._m is None else np.array(self._m, dtype=np.int64)
            if self._c < 1:
                raise ValueError(f"{owner}: the polytope's box exceeds its denominator D; use more denominator_bits.")
            self._r0 = self.effective_rate * self._c / P.D
            r = self.effective_rate
            if r.numerator * self._c > INT64_MAX or r.denominator * P.D > INT64_MAX:
                raise ValueError(
                    f"The 'rate' parameter of {owner} is too large for the polytope's denominator D "
                    f"(r c and D / r must stay in int64). Got {self.rate} instead."
                )
        self._check_rates()

    def _check_rates(self):
        """Refuse a per-unit rate whose draws would leave the exact integer ranges (ValueError).

        The discrete samplers take rates in [2^-46, 2^62] (:mod:`knorm.noise.discrete`). The
        noise must also stay far inside the range the release keeps exact (integers below
        2^52, :mod:`knorm.mechanisms.lattice`) and, for a polytope, the range in which N k
        is formed (int64): its latent radius L, about Gamma(d + 1) / rate, exceeds a
        limit x with probability below exp(-50) when rate x >= 2 d + 66.
        """
        d = self.dim
        if self.sampler.startswith("l1"):
            rates, limit = self._coord_rates, None
        elif self.sampler.startswith("l_inf"):
            rates, limit = [self._unit], 1 << 52
        else:
            widest = 1 if self._m is None else max(self._m)
            rates, limit = [self._r0], min(1 << 52, INT64_MAX // (self.polytope._row_l1 * widest))
        for q in rates:
            low = q.numerator > discrete.MAX_S or q.denominator > discrete.MAX_T or q.denominator > q.numerator << 46
            if low or (limit is not None and q * limit < 2 * d + 66):
                floor = "2^-46" if limit is None else f"max(2^-46, (2 d + 66) / {float(limit):.3g})"
                raise ValueError(
                    f"The 'rate' parameter of LatticeKNormNoise gives a per-lattice-unit rate {float(q):.3g} "
                    f"outside the exact range of its {self.sampler} sampler: [{floor}, 2^62] (the noise must stay "
                    "far inside the exact integer ranges); choose a coarser or finer axis_scale."
                )

    # -- acceptance ------------------------------------------------------------
    @property
    def acceptance_rate(self):
        """Fraction of proposals accepted so far by the outer rejection step (nan before any)."""
        return self.sampler_stats.acceptance_rate

    @property
    def expected_acceptance(self):
        """Acceptance of the outer rejection step: 1 for l1, a pilot estimate otherwise (cached).

        The pilot uses a fixed seed and at least 4096 proposals (up to 131072
        while fewer than 200 are accepted); it is an estimate from sampling.
        """
        if self._expected is None and self.sampler.startswith("l_inf"):
            self._expected = linf_sampler(self.dim, self._unit.numerator, self._unit.denominator).acceptance
        if self._expected is None:
            stats = RejectionStats()
            rng = _pilot_rng()
            n = _PILOT_PROPOSALS
            while True:
                self._propose(n, rng, stats, pilot=True)
                if stats.accepted >= _PILOT_HITS or stats.proposed >= _PILOT_MAX_PROPOSALS:
                    break
                n = min(stats.proposed, _PILOT_MAX_PROPOSALS - stats.proposed)
            self._expected = stats.acceptance_rate
        return self._expected

    def _check_acceptance(self):
        acc = self.expected_acceptance
        if acc < MIN_ACCEPTANCE:
            alt = (
                "use a finer lattice (a smaller axis_scale) so that 1/rate spans many lattice units, "
                "or the continuous knorm.noise.KNormNoise"
            )
            raise ValueError(
                f"LatticeKNormNoise: the {self.sampler} sampler accepts about {acc:.2g} of its proposals "
                f"(pilot estimate), below the floor {MIN_ACCEPTANCE:g}; {alt}."
            )
        return acc

    # -- sampling --------------------------------------------------------------------
    def _propose(self, n, rng, stats, pilot=False):
        """One batch of n outer proposals; returns the accepted rows (pilot: only counts)."""
        if self.sampler.startswith("l_inf"):
            _, k, used = linf_sampler(self.dim, self._unit.numerator, self._unit.denominator).draw(n, rng)
            stats.proposed += used
            stats.accepted += n
            return k
        P, c = self.polytope, self._c
        r0 = self._r0
        L, k = linf_latent(self.dim, r0.numerator, r0.denominator, n, rng, m=self._m)
        base = c * (L - self._shift)
        # num = D ||k||_{K'} where it can matter (below base + c); larger values reject anyway.
        # N k must fit in int64: |k_j| <= m_j L (m_j = 1 for the cube), so bound it through L.
        if L.size and int(L.max()) * (1 if self._m is None else max(self._m)) > INT64_MAX // P._row_l1:
            raise OverflowError("LatticeKNormNoise: a proposal left the int64 range of N k.")
        alive, num = P._numerator_below(k, base + c)
        self._check_box(k[alive], num)
        nb = base[alive]
        now = num <= nb  # n(k) <= c L: accepted whatever i is
        ok = np.zeros(n, dtype=bool)
        ok[alive[now]] = True
        mid = np.flatnonzero(~now)  # c L < n(k) < c L + c: accepted iff n(k) - c L <= i
        if mid.size:
            ok[alive[mid]] = num[mid] - nb[mid] <= self._tilted_index(mid.size, rng)
        stats.proposed += n
        stats.accepted += int(ok.sum())
        return k[ok]

    def _check_box(self, k, num):
        """Refuse to go on if c (Lmin(k) - shift) > n(k) for a live proposal (the box bound failed).

        The acceptance exp(-(r / D)(n(k) - c (Lmin(k) - shift))) is a probability only
        when that bound holds; it follows from K' inside its certified box, and this
        check makes a wrong box loud instead of a silently wrong law.
        """
        if not len(k):
            return
        a = np.abs(k)
        mv = self._mv
        lmin = a.max(axis=1) if mv is None else ((a + (mv - 1)) // mv).max(axis=1)
        if np.any(self._c * (lmin - self._shift) > num):
            raise RuntimeError(
                "LatticeKNormNoise: a proposal lies outside the certified box of the polytope "
                "(c Lmin(k) > D ||k||_K'); refusing to sample a wrong law."
            )

    def _tilted_index(self, n, rng):
        """n draws of i on {0, ..., c - 1} with P(i) proportional to exp(-r i / D) (uniform, then Bernoulli)."""
        r, D, c = self.effective_rate, self.polytope.D, self._c
        out = np.empty(n, dtype=np.int64)
        pend = np.arange(n)
        while pend.size:
            i = discrete._uniform_below(np.full(pend.size, c, dtype=np.int64), rng)
            keep = discrete._bernoulli_exp(r.numerator * i, np.int64(r.denominator * D), rng)
            out[pend[keep]] = i[keep]
            pend = pend[~keep]
        return out

    def _l1_groups(self):
        """The distinct per-unit rates of an l1 law as (numerator, denominator, columns), in first-seen order.

        Computed once and kept (the rates are fixed at construction): hashing d Fractions
        on every draw cost about 100 us at d = 100 (issue 22).
        """
        groups = self.__dict__.get("_l1_rate_groups")
        if groups is None:
            cols: dict = {}
            for j, q in enumerate(self._coord_rates):
                cols.setdefault(q, []).append(j)
            groups = tuple((q.numerator, q.denominator, c) for q, c in cols.items())
            self._l1_rate_groups = groups
        return groups

    def _draw(self, n, rng):
        d = self.dim
        if self.sampler.startswith("l1"):
            groups = self._l1_groups()
            if len(groups) == 1:  # one call for all n d coordinates
                s, t, _ = groups[0]
                return discrete._discrete_laplace(s, t, n * d, rng).reshape(n, d)
            out = np.empty((n, d), dtype=np.int64)
            for s, t, cols in groups:  # one call per distinct rate
                out[:, cols] = discrete._discrete_laplace(s, t, n * len(cols), rng).reshape(n, -1)
            return out
        acc = self._check_acceptance()
        if self.sampler.startswith("l_inf"):  # exactly n draws, rejected rows proposed again in place
            return self._propose(n, rng, self.sampler_stats)
        out = np.empty((n, d), dtype=np.int64)
        have = proposed = 0
        budget = _PROPOSAL_SLACK * (n / acc) + (1 << 16)
        while have < n:
            rate = have / proposed if have else acc
            batch = int(min(max(64, 1.02 * (n - have) / max(rate, MIN_ACCEPTANCE)), max(64, (1 << 22) // (d + 1))))
            k = self._propose(batch, rng, self.sampler_stats)
            proposed += batch
            take = min(len(k), n - have)
            out[have : have + take] = k[:take]
            have += take
            if proposed > budget:
                raise RuntimeError(
                    f"LatticeKNormNoise: {proposed} proposals gave {have} of {n} draws, far below the expected "
                    f"acceptance {acc:.3g}; refusing to loop on."
                )
        return out

    def sample(self, size=None, *, rng=None):
        """Draw lattice noise: int64 of shape (d,) if ``size`` is None, else ``(*size, d)``.

        Parameters
        ----------
        size : int or tuple of ints, optional
            Number (or shape) of vectors.
        rng : None, int, SeedSequence or numpy.random.Generator, optional
            Source of randomness; only its ``integers`` method is called.

        Returns
        -------
        ndarray of int64
            The noise vectors, in lattice units.
        """
        owner = "LatticeKNormNoise.sample"
        gen = check_rng(rng, owner)
        if size is None:
            return self._draw(1, gen)[0]
        shape = (size,) if np.ndim(size) == 0 else tuple(size)
        shape = tuple(check_count(s, "size", owner) for s in shape)
        return self._draw(math.prod(shape), gen).reshape(*shape, self.dim)

    rvs = sample

    # -- the norm and the pmf -------------------------------------------------------------
    def _gauge_parts(self, k):
        """(integer numerators, Fraction factor) with ||k||_{K'} = numerator * factor."""
        k = discrete._check_int_array(k, "k", "LatticeKNormNoise", -INT64_MAX)
        if k.ndim == 0 or k.shape[-1] != self.dim:
            raise ValueError(
                f"The 'k' parameter of LatticeKNormNoise must have last axis of length {self.dim}. "
                f"Got shape {k.shape} instead."
            )
        if self.polytope is not None:
            return self.polytope.gauge_numerator(k), Fraction(1, self.polytope.D)
        scale = self.axis_scale or (Fraction(1),) * self.dim
        a_min = min(scale)
        mult = np.array([int(a / a_min) for a in scale], dtype=np.int64)
        ak = np.abs(k)
        if ak.size and int(ak.max()) > INT64_MAX // (int(mult.sum()) or 1):
            raise ValueError("The 'k' parameter of LatticeKNormNoise has entries too large for int64 gauges.")
        num = (ak * mult).sum(axis=-1) if self.sampler.startswith("l1") else (ak * mult).max(axis=-1)
        return num, a_min / self._rho

    def norm(self, k):
        """Return ||k||_{K'} of lattice points exactly.

        Parameters
        ----------
        k : array_like of int, shape (..., d)
            Lattice points.

        Returns
        -------
        ndarray of Fraction (object dtype)
            One exact norm per point (at least 1-D).
        """
        num, factor = self._gauge_parts(k)
        num = np.atleast_1d(num)
        return np.array([int(v) * factor for v in num.ravel()], dtype=object).reshape(num.shape)

    def unnormalised_logpmf(self, k):
        """Return the log of the unnormalised pmf, -effective_rate ||k||_{K'}.

        Parameters
        ----------
        k : array_like of int, shape (..., d)
            Lattice points.

        Returns
        -------
        float or ndarray of float
            The log pmf up to its additive log normaliser, which is not computed.
        """
        num, factor = self._gauge_parts(k)
        return -float(self.effective_rate * factor) * np.asarray(num, dtype=float)

    def rounding_slack(self, gammas):
        """Return sup ||w||_K over |w_j| <= gammas_j (statistic units), exactly.

        Parameters
        ----------
        gammas : float or sequence of floats
            Half-widths of the rounding error per coordinate, in the units of the
            statistic (e.g. the lattice spacings for rounding down).

        Returns
        -------
        Fraction
            For l1 sum_j gamma_j / rho, for l_inf max_j gamma_j / rho, for polytopes
            max_i sum_j |N_ij| gamma_j / (axis_scale_j D), the ball K' actually used
            (which contains K, so this bounds the slack of K too). The mechanism
            adds it to Delta (the rounding is covered by the triangle inequality).
        """
        g = _gammas(gammas, self.dim, "LatticeKNormNoise.rounding_slack")
        scale = self.axis_scale or (Fraction(1),) * self.dim
        if self.polytope is not None:
            return self.polytope.rounding_slack([gj / aj for gj, aj in zip(g, scale)])
        return (sum(g) if self.sampler.startswith("l1") else max(g)) / self._rho

    # -- the noise-law interface (knorm.noise.law) ---------------------------------------
    @property
    def scale(self):
        """1 / effective_rate: the law is proportional to exp(-||gamma k||_K / scale) (statistic units)."""
        return float(1 / self.effective_rate)

    @property
    def cache_key(self):
        """The ball's key, the effective rate and the spacings: equal keys are the same law."""
        return ("LatticeKNormNoise", ball_key(self.ball), self.effective_rate, self.axis_scale)

    def _closed_half_width(self, alpha):
        """Discrete Laplace coordinates (l1, and l_inf in 1-D): the smallest m with P(|k_j| > m) <= alpha.

        A coordinate of rate a per lattice unit, q = exp(-a), has P(k) = (1 - q) q^|k| / (1 + q)
        (the discrete Laplace of Canonne, Kamath & Steinke 2020), so P(|k| > m) = 2 q^(m+1) / (1 + q)
        (two geometric tails); m >= log(alpha (1 + q) / 2) / log(q) - 1 gives at most alpha, in
        lattice units. The l1 law is a product of such coordinates (class Notes, l1).
        """
        if self.sampler.startswith("l1"):
            rates = self._coord_rates
        elif self.sampler.startswith("l_inf") and self.dim == 1:
            rates = [self._unit]
        else:
            return None
        a = np.array([float(r) for r in rates])
        q = np.exp(-a)
        return np.maximum(np.ceil(np.log(alpha * (1 + q) / 2) / np.log(q) - 1), 0)

    def __repr__(self):
        return f"LatticeKNormNoise({self.ball!r}, rate={self.rate}, sampler={self.sampler!r})"
