"""Shared plumbing of knorm.stats: declared domains, data in any container, the release itself."""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import replace

import numpy as np

from knorm._validation import check_positive, numeric_input, param_error
from knorm.exceptions import ClippingWarning
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, rank_mechanisms

__all__ = ["as_columns", "check_bounds", "check_ddof", "check_neighbours", "clip_count", "publish", "total"]

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
    return lo, hi


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


def as_columns(x, owner, name="x", *, ndim=None):
    """Return ``x`` as a 2-D float array of shape (n, p) (numpy) or a 2-D Dask array.

    Accepts numpy arrays, lists, pandas Series and DataFrames, and Dask arrays, Series and
    DataFrames. NaN is refused (nothing is silently dropped); so is an empty column.
    """
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
        dtypes = [x.dtypes] if hasattr(x.dtypes, "kind") else list(x.dtypes)  # a Series has one dtype
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


def n_records(arr):
    """Return the number of records (rows) of a numpy or Dask array."""
    n = arr.shape[0]
    if isinstance(n, numbers.Integral):
        return int(n)
    return int(arr.map_blocks(lambda b: np.array([len(b)]), chunks=(1,)).sum().compute())


def publish(value, candidates, space, epsilon, *, rng, accountant, label, names=(), owner="knorm.stats", key=None):
    """Release ``value`` with the best certified candidate ball, stating its gain over Laplace.

    Parameters
    ----------
    value : ndarray
        The statistic (in the candidates' coordinates).
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

    Returns
    -------
    Release
        By the candidate first in the volume order (paper Theorem "Entropy Ordering"), with
        ``gain`` = how many times more epsilon Laplace needs for the same entropy.
    """
    epsilon = check_positive(epsilon, "epsilon", owner)
    candidates = dict(candidates)
    candidates.setdefault("l1", LpBall(space.dim, 1))
    best, sensitivity, gain = _choose(candidates, space, key)
    mechanism = KNormMechanism(candidates[best], sensitivity, epsilon)
    release = mechanism.release(value, rng=rng, accountant=accountant, label=label)
    return replace(release, ball_name=best, gain=gain, names=tuple(names))


_CHOICES: dict = {}
_MAX_CHOICES = 256


def _choose(candidates, space, key):
    """(best candidate in the volume order, its certified sensitivity, its gain over 'l1')."""
    full_key = None if key is None else (key, space.dim, tuple(candidates))
    if full_key is not None and full_key in _CHOICES:
        return _CHOICES[full_key]
    # Epsilon scales every candidate alike, so the order and the gain do not depend on it.
    mechanisms = {name: KNormMechanism(ball, space.sensitivity(ball), 1.0) for name, ball in candidates.items()}
    report = rank_mechanisms(mechanisms)
    factors = {r["name"]: r["epsilon_factor"] for r in report.rows}
    choice = report.best, mechanisms[report.best].sensitivity, factors["l1"] / factors[report.best]
    if full_key is not None:
        if len(_CHOICES) >= _MAX_CHOICES:
            _CHOICES.pop(next(iter(_CHOICES)))
        _CHOICES[full_key] = choice
    return choice


def finite_or_nan(x):
    """Return float(x), or nan for values that are not finite."""
    x = float(x)
    return x if math.isfinite(x) else math.nan
