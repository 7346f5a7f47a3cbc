"""Input checks shared by every public entry point.

Every error names the parameter, the rule and the value received, in the
scikit-learn format: "The 'epsilon' parameter of KNormMechanism must be a
float in the range (0, inf). Got -1 instead."
"""

from __future__ import annotations

import contextlib
import numbers
import sys
import warnings
from typing import Any

import numpy as np

__all__ = [
    "BOUND_LIMIT",
    "as_real_array",
    "ComplexInputError",
    "check_bounds_scale",
    "refuse_complex",
    "check_count",
    "check_dim",
    "check_rng",
    "check_positive",
    "check_probability",
    "check_vectors",
    "numeric_input",
    "param_error",
]


def param_error(name, owner, rule, value, exc=ValueError):
    """Build the one-format error for parameter ``name`` of ``owner``."""
    return exc(f"The {name!r} parameter of {owner} must be {rule}. Got {value!r} instead.")


_RNG_RULE = "None, an int >= 0, a SeedSequence or a numpy.random.Generator"


#: Declared bounds stay within [-2^256, 2^256] with widths of at least 2^-256: the sensitivities, the
#: squares and products of second-moment statistics and their lattices then stay finite, normal doubles
#: (bounds of 1e300 made a sensitivity inf and 1e-300 made it 0, in errors that named no parameter).
BOUND_LIMIT = 2.0**256


def check_bounds_scale(lo, hi, name, owner):
    """Refuse declared bounds (lo < hi, finite) beyond BOUND_LIMIT in magnitude or closer than 1 / BOUND_LIMIT."""
    if np.any(np.abs(lo) > BOUND_LIMIT) or np.any(np.abs(hi) > BOUND_LIMIT) or np.any(hi - lo < 1 / BOUND_LIMIT):
        j = int(np.argmax((np.abs(lo) > BOUND_LIMIT) | (np.abs(hi) > BOUND_LIMIT) | (hi - lo < 1 / BOUND_LIMIT)))
        rule = "within [-2^256, 2^256] (about 1.2e77) with upper - lower at least 2^-256 (about 8.6e-78)"
        raise param_error(name, owner, rule, (float(lo[j]), float(hi[j])))


class ComplexInputError(TypeError, ValueError):
    """Complex input where real numbers are needed: a TypeError, and a ValueError as scikit-learn's estimators raise."""


def refuse_complex(value, name, owner):
    """Raise TypeError naming ``name`` if ``value`` holds complex numbers (numpy would drop their imaginary part).

    Reads only dtypes (numpy, pandas, Dask); a list is converted once to find its dtype. The
    values themselves never enter the message.
    """
    dtypes: Any = getattr(value, "dtypes", None)  # a pandas or Dask DataFrame (a Series: one dtype)
    if dtypes is None:
        dtypes = getattr(value, "dtype", None)
    if dtypes is None:
        try:
            dtypes = np.asarray(value).dtype
        except (TypeError, ValueError):  # ragged or odd input: the caller's conversion reports it
            return
    kinds = [getattr(dt, "kind", "") for dt in dtypes] if hasattr(dtypes, "__iter__") else [dtypes.kind]
    if "c" in kinds:
        rule = "an array of real numbers (Complex data not supported: its imaginary part would be dropped)"
        raise param_error(name, owner, rule, "complex values", ComplexInputError)


def check_rng(rng, owner=None):
    """Turn ``rng`` (None, int seed, SeedSequence or Generator) into a Generator.

    ``None`` draws fresh entropy from the operating system; there is never any
    global random state (SPEC-7). ``owner`` names the entry point in the error;
    without it the message says only "The 'rng' parameter".
    """
    where = "" if owner is None else f" of {owner}"
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            f"The 'rng' parameter{where} must be {_RNG_RULE}. Got a legacy RandomState instead; wrap it as "
            "numpy.random.default_rng(seed)."
        )
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as err:
        # numpy's own words ('SeedSequence expects int ...') do not name the parameter.
        raise type(err)(f"The 'rng' parameter{where} must be {_RNG_RULE}. Got {rng!r} instead.") from err


def check_positive(value, name, owner, *, allow_inf=False):
    """Return ``value`` as a float, checking it is in (0, inf) or (0, inf]."""
    rule = f"a float in the range (0, {'inf]' if allow_inf else 'inf)'}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(name, owner, rule, value, TypeError)
    value = float(value)
    if np.isnan(value) or value <= 0 or (np.isinf(value) and not allow_inf):
        raise param_error(name, owner, rule, value)
    return value


def check_probability(value, name, owner, *, closed=False):
    """Return ``value`` as a float in (0, 1) (or [0, 1] if ``closed``)."""
    rule = "a float in the range " + ("[0, 1]" if closed else "(0, 1)")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(name, owner, rule, value, TypeError)
    value = float(value)
    ok = (0 <= value <= 1) if closed else (0 < value < 1)
    if not ok:
        raise param_error(name, owner, rule, value)
    return value


def check_vectors(u, dim, name="u", owner="NormBall"):
    """Return ``u`` as a float array of shape (..., dim) with finite entries.

    A single vector of shape (dim,) is accepted and kept 1-D; callers use the
    leading axes for vectorisation.
    """
    try:
        arr = np.asarray(u, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an array of real numbers. Got {type(u).__name__} instead."
        ) from err
    if arr.ndim == 0 or arr.shape[-1] != dim:
        raise ValueError(
            f"The {name!r} parameter of {owner} must have last axis of length {dim} "
            f"(the dimension). Got shape {arr.shape} instead."
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"The {name!r} parameter of {owner} must contain only finite values. "
            f"Got {float(arr[tuple(bad)])!r} at index {tuple(int(i) for i in bad)} instead."
        )
    return arr


def check_dim(dim, owner, name="dim"):
    """Return ``dim`` (a dimension, called ``name``) as a positive int."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        exc = TypeError if not isinstance(dim, numbers.Integral) else ValueError
        raise param_error(name, owner, "an int >= 1", dim, exc)
    return int(dim)


def check_count(n, name, owner):
    """Return ``n`` as a non-negative int (a number of draws)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise param_error(
            name, owner, "an int >= 0", n, TypeError if not isinstance(n, numbers.Integral) else ValueError
        )
    return int(n)


def _is_real_entry(v):
    """True unless ``v`` is an entry numpy cannot read as a real number.

    Numbers (complex too: callers reject those with their own message), missing
    markers (None, pandas NA / NaT: a NaN for the caller's finiteness check) and
    numeric strings such as '1.5' are readable. So are sequences: a ragged
    input is a shape error, for numpy's own message.
    """
    if v is None or isinstance(v, (numbers.Number, list, tuple, np.ndarray)):
        return True
    pd = sys.modules.get("pandas")  # no pandas NA can exist unless pandas is loaded
    if pd is not None and (v is pd.NA or v is pd.NaT):
        return True
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _non_numeric_entry(data):
    """``(entry,)`` for the first entry of ``data`` that is not a real number, or ``()``."""
    if hasattr(data, "tocsr"):  # scipy sparse: not ours to judge (scikit-learn says dense is needed)
        return ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> float warns; that is not a non-numeric entry
        try:
            np.asarray(data, dtype=float)
            return ()
        except (TypeError, ValueError):
            pass
    try:
        flat = np.asarray(data, dtype=object).ravel()
    except (TypeError, ValueError):
        return ()
    for v in flat:
        if not _is_real_entry(v):
            return (v.item() if isinstance(v, np.generic) else v,)
    return ()


@contextlib.contextmanager
def numeric_input(owner, exc=None, **arrays):
    """Re-raise a failed float conversion in the block as the one-format error naming the array.

    ``arrays`` maps parameter names to the inputs converted inside the block
    (``X=X, y=y``). If the block raises TypeError or ValueError and one of them
    holds a non-numeric entry, the error becomes "The 'X' parameter of {owner}
    must be an array of real numbers. Got the non-numeric value 'a' instead."
    Its class is ``exc``, or the original one (ValueError for strings, TypeError
    for other objects) so that callers catching numpy's error still do. Any other
    error passes through unchanged.
    """
    try:
        yield
    except (TypeError, ValueError) as err:
        for name, data in arrays.items():
            bad = _non_numeric_entry(data)
            if bad:
                msg = (
                    f"The {name!r} parameter of {owner} must be an array of real numbers. "
                    f"Got the non-numeric value {bad[0]!r} instead"
                )
                # For objects, keep numpy's wording too: scikit-learn's check_dtype_object matches it.
                msg += f" ({err})." if isinstance(err, TypeError) else "."
                raise (exc or type(err))(msg) from err
        raise


def as_real_array(value, name, owner):
    """``value`` as a float ndarray; a non-numeric entry is a TypeError naming it."""
    with numeric_input(owner, TypeError, **{name: value}):
        return np.asarray(value, dtype=float)
