"""Shared plumbing of knorm.stats: declared domains, data in any container, the release itself."""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from fractions import Fraction

import numpy as np

from knorm._exact import FIXED_POINT_BITS, ExactSums
from knorm._ingest import as_columns, check_bounds, is_dask, n_records, scan, warn_clipping
from knorm._validation import check_positive, param_error
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, nonprivate_active, rank_mechanisms
from knorm.mechanisms.lattice import LatticeUnavailable, choose_spacing

__all__ = [
    "check_ddof",
    "check_neighbours",
    "ingest",
    "publish",
    "standard_box",
    "total",
]


def check_neighbours(neighbours, owner):
    """Return ``neighbours`` if it is 'replace' or 'add_remove'."""
    if neighbours not in ("replace", "add_remove"):
        raise param_error("neighbours", owner, "'replace' or 'add_remove'", neighbours)
    return neighbours


def check_ddof(ddof, n, owner):
    """Return ``ddof`` if it is an int >= 0, and below ``n`` when n is public (not None).

    Under add/remove neighbours n is private: ddof is then not compared with it (that
    would be a data-dependent error); the released count is floored at ddof + 1 instead.
    """
    if isinstance(ddof, bool) or not isinstance(ddof, numbers.Integral):
        raise param_error("ddof", owner, "an int >= 0", ddof, TypeError)
    if ddof < 0 or (n is not None and ddof >= n):
        rule = "an int >= 0" if n is None else f"an int in the range [0, {n - 1}] (below the number of records n = {n})"
        raise param_error("ddof", owner, rule, ddof)
    return int(ddof)


def standard_box(lo, hi):
    """Return (c, a): doubles with [c - a, c + a] containing [lo, hi] exactly, a about (hi - lo) / 2.

    Standardised values (x - c) / a then lie in [-1, 1] for every x in [lo, hi] as real
    numbers, which is what the certified balls of the standardised statistics assume: c and
    a are rounded, so a is raised ulp by ulp until the containment holds in exact rational
    arithmetic (usually at once: for bounds such as (0, 10) both are exact).

    Parameters
    ----------
    lo, hi : array_like of shape (p,)
        The declared bounds (lo < hi).

    Returns
    -------
    c, a : ndarray of shape (p,)
        The centre and the half-width.
    """
    lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
    c = lo / 2.0 + hi / 2.0  # no overflow for huge bounds
    a = hi / 2.0 - lo / 2.0
    for j in range(len(lo)):  # a handful of columns
        while not (
            Fraction(c[j]) - Fraction(a[j]) <= Fraction(lo[j]) and Fraction(hi[j]) <= Fraction(c[j]) + Fraction(a[j])
        ):
            a[j] = math.nextafter(a[j], math.inf)
    return c, a


def total(values):
    """Return the column sums of per-record values (numpy or Dask), as a float array."""
    s = values.sum(axis=0)
    return np.asarray(s.compute() if is_dask(s) else s, dtype=float)


def publish(
    value,
    candidates,
    space,
    epsilon,
    *,
    rng,
    accountant,
    label,
    names=(),
    owner="knorm.stats",
    key=None,
    counts=False,
    rounding_share=None,
    prefer_lattice=False,
):
    """Release ``value`` with the best certified candidate ball, stating its gain over Laplace.

    Parameters
    ----------
    value : ndarray or ExactSums
        The statistic (in the candidates' coordinates). An exact statistic (such as
        :class:`~knorm._exact.RecordSums`) is summed
        once the mechanism is chosen: in exact fixed point on a lattice release.
    candidates : dict of str to NormBall
        The balls to rank; 'l1' is added for the gain if absent.
    space : SensitivitySpace
        The statistic's sensitivity space: it certifies every candidate's sensitivity.
    epsilon : float
        The budget.
    rng, accountant, label, names, owner
        As for :meth:`knorm.mechanisms.KNormMechanism.release`.
    key : hashable, optional
        The public inputs that determine ``space`` and ``candidates`` completely (the
        function, its bounds or sizes, the neighbours). With a key, the choice (the best
        ball, its certified sensitivity and the gain) is computed once per key: it depends
        on nothing else, never on the data, and the sensitivities and Monte Carlo volumes
        behind it can take seconds.
    counts : bool, default False
        The statistic is integer on every dataset (counts): it is released on the lattice
        Z^m without rounding or slack where the ball has a lattice sampler (for l1, the
        geometric mechanism).
    rounding_share : float, optional
        The largest share of Delta that the lattice's rounding slack may take (default:
        :data:`knorm.mechanisms.lattice.ROUNDING_SHARE`, 1%); a release that claims to
        match a one-dimensional optimum asks for less.
    prefer_lattice : bool, default False
        When the volume-best candidate has no practical lattice sampler, use the first
        lattice-capable candidate in the volume order instead (Notes).

    Returns
    -------
    Release
        By the candidate first in the volume order (paper Theorem "Entropy Ordering"), with
        ``gain`` = how many times more epsilon Laplace needs for the same entropy.

    Notes
    -----
    The exact lattice release (:mod:`knorm.mechanisms.lattice`) needs a practical lattice
    sampler; a ball whose rejection step accepts too rarely would fall back to continuous
    noise in binary64, with its floating-point caveat. With ``prefer_lattice``, when the
    volume-best candidate has no practical lattice law at this epsilon, the first candidate
    in the volume order that has one is used instead, and the release's ``sampler`` states
    the switch and its cost: how many times more epsilon the chosen ball needs for the
    entropy of the best (its ``gain`` is then its own, over Laplace). When no candidate has
    a lattice law the volume-best is released continuously. The switch is opt-in: its cost
    can be large (1.62x for the vote ball of 5 candidates under replace-one neighbours).
    """
    epsilon = check_positive(epsilon, "epsilon", owner)
    candidates = dict(candidates)
    candidates.setdefault("l1", LpBall(space.dim, 1))
    if counts and space.dim > 1:  # l_inf also has an exact integer law (better than l1 for many counts)
        candidates.setdefault("l_inf", LpBall(space.dim, math.inf))
    ranked = _choose(candidates, space, key)
    best, sensitivity, gain, _ = ranked[0]
    switch = ""
    if counts:
        mechanism, chosen = _count_mechanism(ranked, candidates, epsilon, owner)
        if chosen != best:
            factor = next(f for name, _, _, f in ranked if name == chosen)
            switch = (
                f"; {best!r}, first in the volume order, has no exact integer sampler at this size: {chosen!r} is "
                f"used, which needs {factor:.3g}x the epsilon for the same entropy"
            )
            best, sensitivity, gain = next((n, s, g) for n, s, g, _ in ranked if n == chosen)
    else:
        mechanism = _mechanism(candidates[best], sensitivity, epsilon, rounding_share)
        if prefer_lattice and not nonprivate_active() and mechanism.lattice is None:
            for name, sens, g, factor in ranked[1:]:  # the first lattice-capable ball in the volume order
                other = _mechanism(candidates[name], sens, epsilon, rounding_share)
                if other.lattice is not None:
                    switch = (
                        f"; {best!r}, first in the volume order, has no practical lattice sampler: {name!r} is "
                        f"used, which needs {factor:.3g}x the epsilon for the same entropy"
                    )
                    best, sensitivity, gain, mechanism = name, sens, g, other
                    break
    if isinstance(value, ExactSums):
        lattice = None if nonprivate_active() else mechanism.lattice
        if lattice is None:
            value = value.resolve()
        else:  # exact fixed-point sums; the noise covers their certified error too
            value, error = value.on_lattice(lattice.spacing, candidates[best])
            mechanism = KNormMechanism(
                candidates[best], sensitivity, epsilon, lattice_spacing=lattice.spacing, computation_error=error
            )
    release = mechanism.release(value, rng=rng, accountant=accountant, label=label)
    if mechanism.computation_error:
        release = replace(
            release, sampler=f"{release.sampler}; sums in exact fixed point (grid gamma 2^-{FIXED_POINT_BITS})"
        )
    if switch:
        release = replace(release, sampler=release.sampler + switch)
    return replace(release, ball_name=best, gain=gain, names=tuple(names))


def _count_mechanism(ranked, candidates, epsilon, owner):
    """The K-norm mechanism of an integer statistic: exact integer noise on Z^m, never continuous.

    The candidates are tried in the volume order; the first with an exact lattice law at
    spacing 1 is used (the l1 ball, the geometric mechanism, always has one for rates
    eps / Delta in [2^-46, 2^62]). None: the release is refused, naming epsilon.
    """
    reasons = []
    for name, sens, _, _ in ranked:
        ball = candidates[name]
        if Fraction(epsilon) / Fraction(float(sens.value)) < MIN_COUNT_RATE:
            continue
        try:
            mechanism = KNormMechanism(
                ball, sens, epsilon, sampler="lattice", lattice_spacing=np.ones(ball.dim), on_lattice=True
            )
        except LatticeUnavailable as err:
            reasons.append(str(err))
            continue
        return mechanism, name
    low = float(MIN_COUNT_RATE) * min(float(s.value) for _, s, _, _ in ranked)
    raise ValueError(
        f"The 'epsilon' parameter of {owner} is too small for an exact integer release (counts get exact "
        f"integer noise, never continuous noise, and the exact discrete Laplace serves rates epsilon / Delta "
        f"of at least 2^-46), so epsilon >= {low:.3g} here. Got {float(epsilon):.3g} instead."
    )


#: The smallest rate epsilon / Delta of an integer release: the exact discrete Laplace's floor, where
#: its draws still stay far inside the integers a double holds (knorm.noise.discrete; memory is bounded).
MIN_COUNT_RATE = Fraction(1, 2**46)


def _mechanism(ball, sensitivity, epsilon, share):
    """The K-norm mechanism, on a lattice whose rounding slack is at most ``share`` x Delta when given."""
    if share is None:
        return KNormMechanism(ball, sensitivity, epsilon)
    try:
        spacing = choose_spacing(ball, float(sensitivity.value), share=share)
    except (ValueError, TypeError):  # no lattice for this ball: the mechanism finds out and samples continuously
        return KNormMechanism(ball, sensitivity, epsilon)
    return KNormMechanism(ball, sensitivity, epsilon, lattice_spacing=spacing)


_CHOICES: dict = {}
_MAX_CHOICES = 256


def _choose(candidates, space, key):
    """The candidates in the volume order: (name, certified sensitivity, gain over 'l1', epsilon factor) each.

    The epsilon factor is how many times more epsilon than the first the candidate needs
    for the same entropy (1 for the first).
    """
    full_key = None if key is None else (key, space.dim, tuple(candidates))
    if full_key is not None and full_key in _CHOICES:
        return _CHOICES[full_key]
    # Epsilon scales every candidate alike, so the order and the gain do not depend on it.
    mechanisms = {name: KNormMechanism(ball, space.sensitivity(ball), 1.0) for name, ball in candidates.items()}
    report = rank_mechanisms(mechanisms)
    factors = {r["name"]: r["epsilon_factor"] for r in report.rows}
    ranked = tuple(
        (r["name"], mechanisms[r["name"]].sensitivity, factors["l1"] / r["epsilon_factor"], r["epsilon_factor"])
        for r in report.rows
    )
    if full_key is not None:
        if len(_CHOICES) >= _MAX_CHOICES:
            _CHOICES.pop(next(iter(_CHOICES)))
        _CHOICES[full_key] = ranked
    return ranked


def finite_or_nan(x):
    """Return float(x), or nan for values that are not finite."""
    x = float(x)
    return x if math.isfinite(x) else math.nan


def ingest(x, bounds, owner, *, one_column=False):
    """The door of a bounded statistic: (x as columns, lower, upper, how many values lie outside).

    Checks the data (:func:`knorm._ingest.as_columns`), the declared bounds, and counts the
    values outside them in the same pass that refuses NaN and inf (:func:`knorm._ingest.scan`;
    the curator is warned above 5%). The data is not copied: the private code clips it
    block by block where it reads it (:class:`knorm._exact.Records`).
    """
    X = as_columns(x, owner, finite=False)
    if one_column and X.shape[1] != 1:
        raise ValueError(f"The 'x' parameter of {owner} must be one column. Got {X.shape[1]} columns instead.")
    lo, hi = check_bounds(bounds, X.shape[1], owner)
    outside = scan(X, lo, hi, owner, warn=False)
    warn_clipping(outside, n_records(X) * X.shape[1], owner)  # points at the caller of the public function
    return X, lo, hi, outside
