"""The front door of every estimator: data, declared bounds and clipping, checked once.

A public function (``knorm.stats.mean``, ``LinearRegression.fit``) calls these helpers
once, at its entry; the private code behind it trusts what they return (STYLE.md,
"Validate at the door"). What they check:

* the data: a numeric numpy, pandas or Dask array of a known shape, never complex, with
  no NaN (nothing is dropped silently) and no inf (clipping it would hide a data error);
* the declared bounds: finite, lower < upper, of a sane scale (bounds come from the
  data's declared domain, never from the data);
* clipping: how many values lie outside the bounds, a count for the curator only (warned
  above :data:`CLIP_WARNING_FRACTION`, never stored in a release).

Errors name the parameter, the rule and the value for declared inputs; for the data they
give counts at most (:mod:`knorm._validation`).

The scan of a numpy array is done in row blocks that stay in cache, with no temporary of
the data's size: the column minima and maxima of a block show NaN (a NaN minimum), inf
and whether anything lies outside the bounds, so values are compared one by one only in
the blocks that need it.
"""

from __future__ import annotations

import warnings

import numpy as np

from knorm._validation import check_bounds_scale, numeric_input, param_error, refuse_complex
from knorm.exceptions import ClippingWarning

__all__ = [
    "BLOCK_VALUES",
    "CLIP_WARNING_FRACTION",
    "as_columns",
    "clip_count",
    "check_bounds",
    "scan",
    "is_dask",
    "n_records",
    "refuse_nonfinite",
    "row_blocks",
    "warn_clipping",
]

#: Warn the curator when more than this fraction of the values was clipped.
CLIP_WARNING_FRACTION = 0.05

#: Values per row block of a scan (256 KiB of doubles: the block stays in cache).
BLOCK_VALUES = 1 << 15


def is_dask(obj):
    """Return whether ``obj`` is a Dask array, DataFrame or Series, without importing dask.

    Parameters
    ----------
    obj : object
        Any input.

    Returns
    -------
    bool
        True for Dask collections (a ``__dask_graph__`` from a dask module).
    """
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


def check_bounds(bounds, p, owner, name="bounds"):
    """Return declared (lower, upper) arrays of length ``p``, finite with lower < upper.

    ``bounds`` is a pair (lower, upper) of scalars or arrays (one entry per column, or
    feature). Bounds are part of the privacy guarantee: they come from the data's declared
    domain, never from the data, so a missing bound is an error that says how to give it.
    They are public, so the errors echo them; each error names the rule it breaks.
    """
    if bounds is None:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be given as (lower, upper): the declared domain of the data, for "
            f"example {name}=(0, 100) or {name}=([0, 0], [10, 1]) with one entry per column. Bounds are never read "
            "from the data and never derived from the data, since that would leak privacy. Got None instead."
        )
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (p,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (p,)).copy()
    except (TypeError, ValueError):
        rule = f"a pair (lower, upper) of finite numbers or arrays of length {p} (one entry per column)"
        raise param_error(name, owner, rule, bounds) from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"The {name!r} parameter of {owner} must have finite bounds. Got {bounds!r} instead.")
    if not np.all(lo < hi):
        j = int(np.argmin(hi - lo))
        raise ValueError(
            f"The {name!r} parameter of {owner} must satisfy lower < upper for every feature (column). Got lower = "
            f"{float(lo[j])!r} >= upper = {float(hi[j])!r} at index {j} (bounds {bounds!r}) instead."
        )
    check_bounds_scale(lo, hi, name, owner)
    return lo, hi


def as_columns(x, owner, name="x", *, ndim=None, finite=True):
    """Return ``x`` as a 2-D float array of shape (n, p) (numpy) or a 2-D Dask array, checked once.

    Accepts numpy arrays, lists, pandas Series and DataFrames, and Dask arrays, Series and
    DataFrames. Complex and non-numeric entries are refused, so are an empty array and,
    with ``finite``, NaN (nothing is silently dropped) and inf. ``finite=False`` leaves
    those two to :func:`scan`, which checks them in its one pass with the bounds. A float64
    numpy array is not copied.
    """
    refuse_complex(x, name, owner)
    if is_dask(x):
        return _dask_columns(x, owner, name, finite)
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
    if finite:
        for block in row_blocks(arr):
            low, high = block.min(axis=0), block.max(axis=0)  # NaN propagates; inf shows at an end
            if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
                refuse_nonfinite(int(np.isnan(arr).sum()), int(np.isinf(arr).sum()), owner, name)
    return arr


def row_blocks(arr, values=BLOCK_VALUES):
    """Yield consecutive row blocks (views) of a 2-D numpy array, about ``values`` entries each."""
    rows = max(1, values // max(1, arr.shape[1] if arr.ndim > 1 else 1))
    for start in range(0, arr.shape[0], rows):
        yield arr[start : start + rows]


def refuse_nonfinite(nans, infinite, owner, name):
    """Raise the error for ``nans`` NaN or ``infinite`` inf entries of the data (counts only)."""
    if nans:
        raise ValueError(
            f"The {name!r} parameter of {owner} must not hold NaN: drop or impute the missing values first "
            f"(nothing is dropped silently). Got {nans} NaN value(s) instead."
        )
    if infinite:  # clipping inf to a bound would hide a data error
        raise ValueError(
            f"The {name!r} parameter of {owner} must hold finite values (no infinity: inf is not clipped silently). "
            f"Got {infinite} infinite value(s) instead."
        )


def _dask_columns(x, owner, name, finite=True):
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
    checks = (da.isnan(arr).sum(), da.isinf(arr).sum()) if finite else ()
    rows, *bad = dask.compute(arr.shape[0] if isinstance(arr.shape[0], int) else arr[:, 0].size, *checks)
    if int(rows) == 0:
        raise param_error(name, owner, "a non-empty array (at least one record)", "an empty array")
    if bad:
        refuse_nonfinite(int(bad[0]), int(bad[1]), owner, name)
    return arr


def scan(arr, lo, hi, owner, name="x", *, warn=True):
    """Refuse NaN and inf in ``arr`` (from :func:`as_columns`) and count its entries outside [lo, hi].

    One pass over the data. The count is for the curator: it is not stored in any
    release. Above :data:`CLIP_WARNING_FRACTION` of the entries the curator is warned
    (``warn``). The data is not changed: the private code clips it where it reads it.

    Returns
    -------
    int
        The number of entries outside the declared bounds (to be clipped).
    """
    if is_dask(arr):
        import dask
        import dask.array as da

        nans, infs, count = dask.compute(da.isnan(arr).sum(), da.isinf(arr).sum(), ((arr < lo) | (arr > hi)).sum())
        refuse_nonfinite(int(nans), int(infs), owner, name)
        count = int(count)
    else:
        count = 0
        for block in row_blocks(arr):
            low, high = block.min(axis=0), block.max(axis=0)  # NaN propagates; inf shows at an end
            if np.all(low >= lo) and np.all(high <= hi):
                continue  # the common case: finite and inside, nothing to count
            if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
                refuse_nonfinite(int(np.isnan(arr).sum()), int(np.isinf(arr).sum()), owner, name)
            count += int(np.count_nonzero(block < lo)) + int(np.count_nonzero(block > hi))
    if warn:
        warn_clipping(count, int(np.prod(arr.shape)) if not is_dask(arr) else int(arr.size), owner)
    return count


def warn_clipping(count, total, owner, what="values", stacklevel=4):
    """Warn the curator when more than :data:`CLIP_WARNING_FRACTION` of ``total`` entries were clipped."""
    fraction = count / total if total else 0.0
    if fraction > CLIP_WARNING_FRACTION:
        warnings.warn(
            f"{owner}: {fraction:.1%} of the {what} were outside the declared bounds and were clipped (more than "
            f"{CLIP_WARNING_FRACTION:.0%}). The release is private, but biased: declare bounds that cover the "
            "data's domain. This message is for the curator and is not stored.",
            ClippingWarning,
            stacklevel=stacklevel,
        )
    return fraction


def n_records(arr):
    """Return the number of records (rows) of a numpy or Dask array."""
    n = arr.shape[0]
    if isinstance(n, (int, np.integer)):
        return int(n)
    return int(arr.map_blocks(lambda b: np.array([len(b)]), chunks=(1,)).sum().compute())


def clip_count(arr, lo, hi, owner, name="x"):
    """Return (``arr`` clipped to [lo, hi], the number of clipped entries), warning above 5%.

    For the estimators that need the clipped data itself (histograms, generic statistics);
    the sums of :mod:`knorm._exact` clip block by block instead. The count is for the
    curator and is not stored in any release.
    """
    count = scan(arr, lo, hi, owner, name, warn=False)
    warn_clipping(count, int(np.prod(arr.shape)) if not is_dask(arr) else int(arr.size), owner)
    if not count:
        return arr, 0
    return (arr.clip(lo, hi) if is_dask(arr) else np.clip(arr, lo, hi)), count
