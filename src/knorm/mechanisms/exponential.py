"""The exponential mechanism on a finite public candidate set, sampled exactly in integer arithmetic.

The candidate c is released with probability proportional to exp(-eps s(c) / (2 Delta))
(McSherry & Talwar 2007, Theorem 6; Dwork & Roth 2014, Theorem 3.10), where the score
vector s(X) = (s(c))_c has l_inf sensitivity Delta: ||s(X) - s(X')||_inf <= Delta on
neighbours (OpenDP's measurements take the same input: a score vector under the
``LInfDistance`` metric, ``make_report_noisy_max_gumbel`` at scale 2 Delta / eps).

Scores are integers, so each candidate's weight exp(-x_c) has a rational exponent
x_c = rate (s(c) - min s), with rate = eps / (2 Delta) rounded *down* to a dyadic rational
m / 2^62 when its exact denominator does not fit in int64 (the law sampled is then the
exponential mechanism at eps' = 2 Delta m / 2^62 <= eps, which is eps'-DP, so eps-DP; the
shortfall is below 2^-61 (2 Delta) and the Release states the exact rate). The sampler
proposes candidates uniformly and keeps a proposal with probability exp(-x_c), by
Canonne, Kamath & Steinke's Bernoulli(exp(-x)) for rational x (their Algorithm 1; the
samplers of :mod:`knorm.noise.discrete`): a kept proposal has law proportional to
exp(-x_c), exactly, with no floating point anywhere. The best candidate has weight 1, so
at most n_C proposals are expected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from knorm._validation import check_positive, check_probability, param_error
from knorm.geometry import LpBall
from knorm.mechanisms._mode import ReleaseRules, nonprivate_active
from knorm.mechanisms.release import Release
from knorm.noise import discrete
from knorm.sensitivity import Sensitivity

__all__ = ["ExponentialMechanism", "ExponentialRelease"]

#: The rate's denominator when eps / (2 Delta) has no exact one below 2^62.
RATE_BITS = 62
#: Proposals per batch are at least this many (and at most :data:`MAX_BATCH`).
MIN_BATCH = 64
MAX_BATCH = 1 << 16
_NONPRIVATE_CAVEAT = "NON-PRIVATE: released inside knorm.mechanisms.nonprivate(), the best candidate, no noise"
TIMING_CAVEAT = (
    "the exact sampler rejects proposals: its running time depends on the scores (a timing channel, as for any "
    "rejection sampler of the exponential mechanism); the released value does not"
)


def exact_rate(epsilon, sensitivity):
    """Return eps / (2 Delta) as a Fraction, rounded down to m / 2^62 if its denominator exceeds 2^62.

    Parameters
    ----------
    epsilon : float
        The budget of one selection (a binary64 number, hence an exact dyadic rational).
    sensitivity : int or Fraction
        Delta, the l_inf sensitivity of the integer score vector.

    Returns
    -------
    Fraction
        A rate r <= eps / (2 Delta) with denominator at most 2^62; sampling at r is
        (2 Delta r)-DP (McSherry & Talwar 2007, Theorem 6).
    """
    rate = Fraction(epsilon) / (2 * Fraction(sensitivity))
    if rate.denominator <= 1 << RATE_BITS:
        return rate
    return Fraction(math.floor(rate * (1 << RATE_BITS)), 1 << RATE_BITS)


def _weights(gaps, rate):
    """x_c = rate gap_c split as (whole, frac): x_c = whole_c + frac_c / den, in Python integers."""
    num, den = rate.numerator, rate.denominator
    top = int(np.max(gaps)) if len(gaps) else 0
    if top * num <= discrete.INT64_MAX:  # the common case, in int64 (exact: no product overflows)
        prod = np.asarray(gaps, dtype=np.int64) * np.int64(num)
        return prod // np.int64(den), prod % np.int64(den), den
    prods = [int(g) * num for g in gaps]
    whole = [p // den for p in prods]
    frac = np.array([p - w * den for p, w in zip(prods, whole)], dtype=np.int64)
    return np.array(whole, dtype=object), frac, den


def _keep(idx, whole, frac, den, gen):
    """Bernoulli(exp(-x_c)) for the proposals ``idx``: exp(-frac / den), then exp(-1) whole times (CKS Algorithm 1)."""
    keep = discrete._bernoulli_exp_frac(frac[idx], den, gen)
    left = whole[idx].copy()
    chunk = 1 << 62
    while keep.any() and any(left[keep] > 0):
        sel = np.flatnonzero(keep & (left > 0))
        step = np.array([min(int(v), chunk) for v in left[sel]], dtype=np.int64)
        keep[sel] &= discrete._bernoulli_exp_int(step, gen)
        left[sel] -= step
    return keep


def _propose(whole, frac, den, gen, batch):
    """One batch of uniform proposals: the index of the first kept one, or -1 if none is kept."""
    idx = gen.integers(0, len(frac), size=batch)
    hit = np.flatnonzero(_keep(idx, whole, frac, den, gen))
    return int(idx[hit[0]]) if hit.size else -1


def sample_index(scores, rate, gen, *, batch=None):
    """Draw index c with probability proportional to exp(-rate scores[c]), exactly.

    Parameters
    ----------
    scores : sequence of int
        Integer scores, lower is better.
    rate : Fraction
        The rate (:func:`exact_rate`).
    gen : numpy.random.Generator
        Source of randomness; only ``integers`` is called.
    batch : int, optional
        Proposals per batch (default: n_C within [64, 2^16]); the law does not depend on it.

    Returns
    -------
    int
        The index drawn.

    Notes
    -----
    Proposals are i.i.d. uniform on the candidates and each is kept with probability
    exp(-x_c) <= 1, x_c = rate (s_c - min s); the first kept one, across batches, has
    P(c) = exp(-x_c) / sum_c' exp(-x_c') (rejection sampling; the shift by min s cancels).
    """
    scores = np.asarray(scores, dtype=np.int64)  # the caller's integer scores, below 2^63
    whole, frac, den = _weights(scores - scores.min(), rate)
    batch = batch or min(max(len(scores), MIN_BATCH), MAX_BATCH)
    while True:
        found = _propose(whole, frac, den, gen, batch)
        if found >= 0:
            return found


@dataclass(frozen=True, repr=False)  # Release.__repr__: the public summary
class ExponentialRelease(Release):
    """A Release of the exponential mechanism: candidates chosen by score, with their utility guarantee.

    Besides the fields of :class:`Release` (``method='exponential mechanism'``, ``ball`` the
    l_inf ball of the score vector, ``sensitivity`` its l_inf sensitivity Delta in the
    scores' real units (the largest over rows), ``noise_scale`` = 2 Delta / eps' of that
    row, the scale of the equivalent Gumbel noisy max), it keeps the public terms of the
    guarantee.

    Parameters
    ----------
    value, epsilon, ball, ball_name, sensitivity, noise_scale, label, ledger_entry : object
        As for :class:`Release`.
    method, sampler, caveats, gain, names, parent, transform, lattice_spacing, noise_law : object
        As for :class:`Release` (``noise_law`` is None: the value is not the statistic plus noise).
    rho : None
        As for :class:`Release`: None, the exponential mechanism is pure epsilon-DP.
    population : None
        As for :class:`Release`: None, no population inference is defined for it.
    n_candidates : int
        The number n_C of public candidates of each row.
    rates : tuple of Fraction
        The exact rate of each row per integer score unit (eps'_row / (2 Delta_row), Delta_row
        in integer units); empty inside ``nonprivate()``.
    units : tuple of Fraction
        What one integer score unit of each row is worth in real units (for a quantile with
        q = a / b, 1 / b of a record).
    """

    n_candidates: int = 0
    rates: tuple = ()
    units: tuple = ()

    def score_error(self, alpha=0.05):
        """Return, per row, t with P(s(released) > min_c s(c) + t) <= alpha, in the scores' real units.

        Parameters
        ----------
        alpha : float, default 0.05
            The failure probability of each row's bound.

        Returns
        -------
        ndarray of float
            The bound t = unit ln(n_C / alpha) / rate, that is (2 Delta / eps') ln(n_C / alpha): the
            utility theorem of the exponential mechanism (McSherry & Talwar 2007; Dwork &
            Roth 2014, Theorem 3.11: P(s >= OPT + (2 Delta / eps')(ln n_C + u)) <= exp(-u),
            the scores here being losses). Public: it depends on epsilon, Delta and n_C
            only. Inside ``nonprivate()`` the best candidates were released: t = 0.
        """
        alpha = check_probability(alpha, "alpha", "ExponentialRelease.score_error")
        if not self.rates:  # non-private: the best candidate was released
            return np.zeros(np.size(self.value))
        log_ratio = math.log(self.n_candidates / alpha)
        return np.array([log_ratio * float(u / r) if r else math.inf for r, u in zip(self.rates, self.units)])

    def conf_int(self, alpha=0.05, *, kind="noise", n_draws=None):
        """Refuse: an exponential-mechanism release has no value interval made of public quantities.

        Parameters
        ----------
        alpha : float, default 0.05
            Unused.
        kind : {'noise', 'population'}, default 'noise'
            Unused: neither kind is defined.
        n_draws : int, optional
            Unused.

        Raises
        ------
        ValueError
            Always, with what the release's guarantee is instead.
        """
        raise ValueError(
            "Release.conf_int covers additive releases only; this one is 'exponential mechanism' ("
            f"{self.label}), which chooses a candidate by its score. Its guarantee is on the score (a rank for "
            "a quantile), not on the value: turning a rank into a value interval needs the data's distribution, "
            "which is private. Use release.score_error(alpha): with probability 1 - alpha the released "
            "candidate's score is within it of the best."
        )


def _per_row(value, rows, name, owner):
    """``value`` (one Fraction for every row, or one per row) as a tuple of positive Fractions."""
    values = list(value) if isinstance(value, (list, tuple)) else [value] * rows
    rule = "a positive int or Fraction, or one per row"
    if len(values) != rows:
        raise param_error(name, owner, rule, value)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, Fraction)) or v <= 0:
            raise param_error(name, owner, rule, value)
    return tuple(Fraction(v) for v in values)


class ExponentialMechanism(ReleaseRules):
    """The exponential mechanism over public candidates, sampled exactly (module docstring).

    Parameters
    ----------
    epsilon : float
        The budget of each selection (row), in (0, inf).
    owner : str, default 'ExponentialMechanism'
        The public entry point, for error messages.

    Notes
    -----
    Releases go through ``_publish`` of :class:`~knorm.mechanisms._mode.ReleaseRules`, the one
    path of the privacy rules that every mechanism inherits (accountant charged before any
    draw, seeds refused or warned, the non-private mode).

    References
    ----------
    McSherry & Talwar (2007), "Mechanism design via differential privacy", FOCS, Theorem 6.
    Canonne, Kamath & Steinke (2020), arXiv:2004.00010, Algorithm 1.
    """

    def __init__(self, epsilon, *, owner="ExponentialMechanism"):
        self.epsilon = check_positive(epsilon, "epsilon", owner)
        self.owner = owner

    def release(
        self,
        scores,
        candidates,
        *,
        sensitivity,
        unit=1,
        rng=None,
        accountant=None,
        label="exponential mechanism",
        names=(),
        note="",
        total_epsilon=None,
    ):
        """Release one candidate per row of ``scores``: the exponential mechanism, charged once per row.

        Parameters
        ----------
        scores : sequence of sequences of int
            Integer scores (lower is better), one row per selection, one entry per candidate.
        candidates : array_like of shape (n_candidates,)
            The public candidates; row i releases ``candidates[c_i]``.
        sensitivity : int or Fraction, or a sequence of them (one per row)
            Delta, a certified bound on the l_inf sensitivity of each row's score vector on
            neighbours, in real units.
        unit : int or Fraction, or a sequence of them (one per row), default 1
            The real value of one integer score unit; Delta / unit must be an integer.
        rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
            Source of the randomness; a fixed seed is identified by its state, as in
            :meth:`KNormMechanism.release`.
        accountant : PrivacyAccountant, optional
            Charged rows x epsilon before anything is drawn; it refuses a seed (state) it has recorded.
        label : str
            What is released.
        names : tuple of str
            Names of the released coordinates.
        note : str
            Appended to the record's ``sampler``.
        total_epsilon : float, optional
            The budget charged and recorded, at least rows x epsilon in exact arithmetic
            (a budget split in k parts whose float sum is not exactly it); default rows x
            epsilon.

        Returns
        -------
        ExponentialRelease
            ``epsilon`` = rows x epsilon (sequential composition, Dwork & Roth 2014,
            Theorem 3.16), with the exact rate of each row.
        """
        candidates = np.asarray(candidates, dtype=float)
        rows = [np.asarray(r, dtype=np.int64) for r in scores]
        deltas = _per_row(sensitivity, len(rows), "sensitivity", self.owner)
        units = _per_row(unit, len(rows), "unit", self.owner)
        for r, d, u in zip(rows, deltas, units):
            if len(r) != len(candidates) or (d / u).denominator != 1:
                raise ValueError(
                    f"{self.owner}: a score row needs one score per candidate ({len(candidates)}) and an integer "
                    f"sensitivity in score units. Got {len(r)} scores and Delta / unit = {d / u} instead."
                )
        rates = tuple(exact_rate(self.epsilon, d / u) for d, u in zip(deltas, units))
        total = self.epsilon * len(rows) if total_epsilon is None else total_epsilon
        if Fraction(self.epsilon) * len(rows) > Fraction(total):
            raise param_error(
                "total_epsilon", self.owner, f"at least rows x epsilon = {len(rows)} x {self.epsilon!r}", total_epsilon
            )

        def draw(gen):
            if nonprivate_active():
                return candidates[[int(np.argmin(r)) for r in rows]]
            return candidates[[sample_index(r, rate, gen) for r, rate in zip(rows, rates)]]

        worst = max(range(len(rows)), key=lambda i: deltas[i])
        eps_row = [float(2 * d / u * r) for d, u, r in zip(deltas, units, rates)]
        describe = (
            f"exponential mechanism over {len(candidates)} public candidates, exact: uniform proposals kept with "
            "probability exp(-rate score) by Bernoulli(exp(-x)) (Canonne, Kamath & Steinke 2020); rates "
            f"{', '.join(str(r) for r in rates)} per score unit (eps' = {min(eps_row):.17g} per row at least)"
            + (f"; {note}" if note else ""),
            (TIMING_CAVEAT,),
        )
        return self._publish(
            draw,
            epsilon=total,
            rng=rng,
            accountant=accountant,
            label=label,
            owner=self.owner,
            method="exponential mechanism",
            describe=describe,
            record=dict(
                names=tuple(names),
                n_candidates=len(candidates),
                rates=rates,
                units=units,
                delta=deltas[worst],
                scale=float(2 * deltas[worst]) / eps_row[worst],
            ),
        )

    def _record(
        self,
        value,
        *,
        epsilon,
        label,
        entry,
        method,
        noiseless=False,
        describe=None,
        names=(),
        n_candidates,
        rates,
        units,
        delta,
        scale,
    ):
        """Build the one ExponentialRelease of a draw: nothing downstream edits it."""
        sampler, caveats = ("none (non-private)", (_NONPRIVATE_CAVEAT,)) if noiseless else describe[:2]
        return ExponentialRelease(
            value=value,
            epsilon=epsilon,
            ball=LpBall(n_candidates, math.inf),
            ball_name="linf (score vector)",
            sensitivity=Sensitivity(
                float(delta), "bound", "l_inf sensitivity of the score vector, certified by the caller"
            ),
            noise_scale=0.0 if noiseless else scale,
            label=str(label),
            ledger_entry=entry,
            method=method,
            sampler=sampler,
            caveats=tuple(caveats),
            names=tuple(names),
            n_candidates=n_candidates,
            rates=() if noiseless else rates,
            units=units,
        )

    def __repr__(self):
        return f"ExponentialMechanism(epsilon={self.epsilon:g})"
