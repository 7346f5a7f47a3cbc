"""Shared plumbing of knorm.stats: declared domains, data in any container, the release itself."""

from __future__ import annotations

import math
import numbers
import warnings
from fractions import Fraction

import numpy as np

from knorm._validation import check_bounds_scale, numeric_input, param_error, refuse_complex
from knorm.exceptions import ClippingWarning
from knorm.geometry import LpBall
from knorm.mechanisms import choose_mechanism

__all__ = [
    "RecordSums",
    "as_columns",
    "check_bounds",
    "check_ddof",
    "check_neighbours",
    "clip_count",
    "publish",
    "standard_box",
    "total",
]

#: Fixed-point sums use the grid q = gamma / 2^FIXED_POINT_BITS (gamma: the release's lattice).
FIXED_POINT_BITS = 20
_INT64_ROOM = 2.0**62
# Fixed-point sums are added in two int64 halves of 31 bits: at most this many records.
_MAX_RECORDS = 1 << 31

#: Warn the curator when more than this fraction of the values was clipped.
CLIP_WARNING_FRACTION = 0.05


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


def check_bounds(bounds, p, owner, name="bounds"):
    """Return declared (lower, upper) arrays of length ``p``, finite with lower < upper.

    Bounds are part of the privacy guarantee: they come from the data's declared domain,
    never from the data.
    """
    rule = "a pair (lower, upper) of finite numbers (or arrays, one entry per column) with lower < upper"
    if bounds is None:
        raise param_error(name, owner, rule + ", declared from the data's domain (never read from the data)", None)
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (p,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (p,)).copy()
    except (TypeError, ValueError):
        raise param_error(name, owner, rule, bounds) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise param_error(name, owner, rule, bounds)
    check_bounds_scale(lo, hi, name, owner)
    return lo, hi


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


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


def as_columns(x, owner, name="x", *, ndim=None):
    """Return ``x`` as a 2-D float array of shape (n, p) (numpy) or a 2-D Dask array.

    Accepts numpy arrays, lists, pandas Series and DataFrames, and Dask arrays, Series and
    DataFrames. NaN is refused (nothing is silently dropped); so is an empty column.
    """
    refuse_complex(x, name, owner)
    if _is_dask(x):
        return _dask_columns(x, owner, name)
    with numeric_input(owner, TypeError, **{name: x}):
        arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or (ndim is not None and np.ndim(x) != ndim):
        raise param_error(name, owner, f"a {ndim or '1-D or 2-'}D array of numbers", f"shape {np.shape(x)}")
    if arr.shape[0] == 0:
        raise param_error(name, owner, "a non-empty array (at least one record)", "an empty array")
    if arr.shape[1] == 0:
        raise param_error(name, owner, "an array with at least one column", f"shape {np.shape(x)}")
    _refuse_nan(int(np.isnan(arr).sum()), int(np.isinf(arr).sum()), owner, name)
    return arr


def _refuse_nan(count, infinite, owner, name):
    if count:
        raise ValueError(
            f"The {name!r} parameter of {owner} must not hold NaN: drop or impute the missing values first "
            f"(nothing is dropped silently). Got {count} NaN value(s) instead."
        )
    if infinite:  # clipping inf to a bound would hide a data error
        raise ValueError(
            f"The {name!r} parameter of {owner} must hold finite values: inf is not clipped silently. "
            f"Got {infinite} infinite value(s) instead."
        )


def _dask_columns(x, owner, name):
    """The Dask branch of :func:`as_columns`: the same rules, checked in one pass over the data."""
    import dask
    import dask.array as da

    if hasattr(x, "to_dask_array"):  # a Dask Series or DataFrame: refuse text before converting it
        dtypes = [x.dtype] if x.ndim == 1 else list(x.dtypes)  # a Series: .dtype (dask 2024.1 has no .dtypes)
        bad = [dt for dt in dtypes if getattr(dt, "kind", "O") not in "biuf"]
        if bad:
            raise param_error(name, owner, "an array of real numbers", f"a Dask column of dtype {bad[0]}", TypeError)
        x = x.to_dask_array(lengths=True)
    arr = x
    if not isinstance(arr, da.Array) or arr.ndim not in (1, 2):
        raise param_error(name, owner, "a 1-D or 2-D array of numbers", type(x).__name__, TypeError)
    if arr.dtype.kind not in "biuf":  # astype(float) would fail only later, inside compute
        raise param_error(name, owner, "an array of real numbers", f"a Dask array of dtype {arr.dtype}", TypeError)
    arr = arr.astype(float)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.shape[1] == 0:
        raise param_error(name, owner, "an array with at least one column", f"shape {arr.shape}")
    rows, nans, infs = dask.compute(
        arr.shape[0] if isinstance(arr.shape[0], int) else arr[:, 0].size, da.isnan(arr).sum(), da.isinf(arr).sum()
    )
    if int(rows) == 0:
        raise param_error(name, owner, "a non-empty array (at least one record)", "an empty array")
    _refuse_nan(int(nans), int(infs), owner, name)
    return arr


def clip_count(arr, lo, hi, owner):
    """Return (arr clipped to [lo, hi], the number of clipped entries), warning above 5%.

    The count is for the curator and is not stored in any release.
    """
    outside = (arr < lo) | (arr > hi)
    count = outside.sum()
    count = int(count.compute() if _is_dask(count) else count)
    total = int(np.prod(arr.shape)) if not _is_dask(arr) else int(arr.size)
    if total and count / total > CLIP_WARNING_FRACTION:
        warnings.warn(
            f"{owner}: {count / total:.1%} of the values were outside the declared bounds and were clipped (more "
            f"than {CLIP_WARNING_FRACTION:.0%}). The release is private, but biased: declare bounds that cover the "
            "data's domain. This message is for the curator and is not stored.",
            ClippingWarning,
            stacklevel=3,
        )
    return (arr.clip(lo, hi) if _is_dask(arr) else np.clip(arr, lo, hi)), count


def total(values):
    """Return the column sums of per-record values (numpy or Dask), as a float array."""
    s = values.sum(axis=0)
    return np.asarray(s.compute() if _is_dask(s) else s, dtype=float)


class RecordSums:
    """A statistic sum_i t(x_i), kept as per-record columns until the release's lattice is known.

    Parameters
    ----------
    *parts : RecordSums.exact(values) or (rows, magnitude, exact)
        In coordinate order: exact coordinates (such as the count n), or per-record values
        ``rows`` (numpy or Dask, shape (n,) or (n, k)) whose column sums are the next
        coordinates, with a public bound ``magnitude`` on |t_j(x)| over the declared
        domain and whether the rows are exact (clipped data) or computed in binary64
        (products, rounded once).

    Notes
    -----
    On a lattice release of spacing gamma (:meth:`on_lattice`), each record is rounded
    to the fine grid q = gamma 2^-20, the integers are added exactly in int64 (any order,
    any blocking: the float-sum hazard of Casacuberta et al. 2022 is gone), and the sum is
    rounded to gamma in integer arithmetic. Neighbours then differ by d with
    |d_j - u_j| <= q_j + 2^-52 magnitude_j (per-record rounding, and the product's one
    rounding when inexact) for some u in S_T, so ||d||_K <= Delta + e with
    e = sum_j (q_j + 2^-52 magnitude_j) ||e_j||_K (triangle inequality): the mechanism
    covers Delta + e (``KNormMechanism(computation_error=e)``), about 1e-8 of Delta.
    """

    #: Appended to the Release's sampler on a lattice release.
    note = f"sums in exact fixed point (grid gamma 2^-{FIXED_POINT_BITS})"

    def __init__(self, *parts):
        self.parts = parts

    @staticmethod
    def exact(values):
        """Mark ``values`` as exact coordinates (taken as they are)."""
        return ("exact", np.atleast_1d(np.asarray(values, dtype=float)))

    def _blocks(self):
        at = 0
        for part in self.parts:
            if isinstance(part[0], str):  # ("exact", values)
                yield at, part[1], None, True
                at += len(part[1])
                continue
            rows, magnitude, exact = part
            rows = rows[:, None] if rows.ndim == 1 else rows
            yield at, rows, np.broadcast_to(np.asarray(magnitude, dtype=float), (rows.shape[1],)), exact
            at += rows.shape[1]

    def resolve(self):
        """Return the statistic as binary64 column sums (continuous or non-private releases)."""
        return np.concatenate([rows if mag is None else total(rows) for _, rows, mag, _ in self._blocks()])

    def on_lattice(self, spacing, ball):
        """Return (the statistic rounded to ``spacing``, exactly; the certified computation error e)."""
        gamma = np.asarray(spacing, dtype=float)
        q = np.ldexp(gamma, -FIXED_POINT_BITS)
        out, err = [], np.zeros(len(gamma))
        for at, rows, mag, exact in self._blocks():
            k = len(rows) if mag is None else rows.shape[1]
            g, qq = gamma[at : at + k], q[at : at + k]
            if mag is None:  # exact coordinates: the release rounds them
                out.append(rows)
                continue
            if float(np.max(mag / qq)) >= _INT64_ROOM:  # public: the domain, the lattice (epsilon)
                raise ValueError(
                    f"The 'epsilon' parameter of knorm.stats is too large for exact fixed-point sums: its lattice "
                    f"(gamma = {g.tolist()}) is so fine that one record's value, up to {mag.tolist()}, is 2^62 "
                    "grid steps or more. Use a smaller epsilon (the default lattice halves with each doubling of "
                    "epsilon above 1), or sampler='continuous' where the estimator offers it."
                )
            n = n_records(rows)
            if n >= _MAX_RECORDS:
                raise ValueError(
                    f"knorm.stats: {n} records exceed the exact int64 range of the fixed-point sums (at most "
                    f"2^{_MAX_RECORDS.bit_length() - 1}): split the data and release parts separately."
                )
            units = (rows / qq).round().astype(np.int64)  # q a power of two: exact division, |units| < 2^62
            # Sums in two int64 halves (each below n 2^31 < 2^63), joined in Python integers: exact for any
            # record value on the grid, whatever n (a one-part int64 sum overflowed at epsilon = 1e9).
            high, low = units >> 31, units & ((1 << 31) - 1)
            parts = [high.sum(axis=0), low.sum(axis=0)]
            parts = [np.asarray(v.compute() if _is_dask(v) else v, dtype=np.int64) for v in parts]
            scale = 1 << FIXED_POINT_BITS
            rounded = []
            for hi_sum, lo_sum in zip(parts[0].tolist(), parts[1].tolist()):
                q_j, rest = divmod((hi_sum << 31) + lo_sum, scale)
                half = scale >> 1
                rounded.append(q_j + (rest > half or (rest == half and q_j % 2 == 1)))  # half to even
            # exact doubles below 2^53 (the release refuses 2^52 and above)
            out.append(np.array([float(v) for v in rounded]) * g)
            err[at : at + k] = qq + (0.0 if exact else 2.0**-52) * mag
        axes = np.asarray(ball.norm(np.eye(len(gamma))), dtype=float)
        return np.concatenate(out), float(np.sum(err * axes)) * (1 + 1e-9)


def n_records(arr):
    """Return the number of records (rows) of a numpy or Dask array."""
    n = arr.shape[0]
    if isinstance(n, numbers.Integral):
        return int(n)
    return int(arr.map_blocks(lambda b: np.array([len(b)]), chunks=(1,)).sum().compute())


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
    value : ndarray or RecordSums
        The statistic (in the candidates' coordinates). A :class:`RecordSums` is summed
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
        By the candidate :func:`~knorm.mechanisms.choose_mechanism` picks (first in the
        volume order, paper Theorem "Entropy Ordering", unless ``counts`` or
        ``prefer_lattice`` asks for a switch, which the release's ``sampler`` states), with
        ``gain`` = how many times more epsilon Laplace needs for the same entropy.
    """
    candidates = dict(candidates)
    candidates.setdefault("l1", LpBall(space.dim, 1))
    if counts and space.dim > 1:  # l_inf also has an exact integer law (better than l1 for many counts)
        candidates.setdefault("l_inf", LpBall(space.dim, math.inf))
    choice = choose_mechanism(
        space,
        epsilon,
        candidates,
        prefer_lattice=prefer_lattice,
        integer=counts,
        rounding_share=rounding_share,
        key=key,
        reduce=False,
        time_budget=None,  # these candidates all sample fast; the choice must not depend on the machine's load
        owner=owner,
    )
    return choice.release(value, rng=rng, accountant=accountant, label=label, names=names)


def finite_or_nan(x):
    """Return float(x), or nan for values that are not finite."""
    x = float(x)
    return x if math.isfinite(x) else math.nan
