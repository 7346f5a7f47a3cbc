"""Input checks shared by every public entry point.

Every error names the parameter, the rule and the value received, in the
scikit-learn format: "The 'epsilon' parameter of KNormMechanism must be a
float in the range (0, inf). Got -1 instead."

Nothing from the data in a message: errors and warnings are logs, and logs are not
private. A value received is echoed only when it is public (declared bounds, epsilon,
a parameter the user typed). For data (x, X, y, labels found in y, a statistic computed
from them) a message names the parameter and the rule, and at most counts the
offending entries: such a count comes from the data, so it is shown to the curator in
the exception and is never stored in a release. :func:`numeric_input` applies the rule
to numpy's and scikit-learn's own errors, which quote values and whole arrays.
"""

from __future__ import annotations

import contextlib
import numbers
import re
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
    "without_data",
]


def param_error(name, owner, rule, value, exc=ValueError):
    """Build the one-format error for parameter ``name`` of ``owner``."""
    return exc(f"The {name!r} parameter of {owner} must be {rule}. Got {value!r} instead.")


_RNG_RULE = "None, an int >= 0, a sequence of ints >= 0, a SeedSequence, a BitGenerator or a numpy.random.Generator"


def _is_bool_seed(rng):
    if isinstance(rng, (bool, np.bool_)):
        return True
    if isinstance(rng, (list, tuple, np.ndarray)):
        with contextlib.suppress(TypeError, ValueError):
            return np.asarray(rng).dtype == np.bool_
    return False


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
    """Turn ``rng`` into a numpy Generator; the one reading of every form of a seed.

    ``None`` draws fresh entropy from the operating system; there is never any
    global random state (SPEC-7). A fixed seed is anything numpy turns into a
    ``SeedSequence`` (an int >= 0, a sequence or array of such ints, a SeedSequence);
    a Generator is returned as it is, and a BitGenerator wrapped without a copy, so
    both advance as they draw. ``True`` and ``False`` are refused: a bool is a mistake,
    not the seed 1 or 0. ``owner`` names the entry point in the error; without it the
    message says only "The 'rng' parameter". How a ledger recognises a seed it has
    seen, in every form, is in :mod:`knorm._seeds`.
    """
    where = "" if owner is None else f" of {owner}"
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            f"The 'rng' parameter{where} must be {_RNG_RULE}. Got a legacy RandomState instead; wrap it as "
            "numpy.random.default_rng(seed)."
        )
    if _is_bool_seed(rng):
        raise TypeError(f"The 'rng' parameter{where} must be {_RNG_RULE}. Got {rng!r} instead; a bool is no seed.")
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


def check_vectors(u, dim, name="u", owner="NormBall", *, public=False):
    """Return ``u`` as a float array of shape (..., dim) with finite entries.

    A single vector of shape (dim,) is accepted and kept 1-D; callers use the
    leading axes for vectorisation. ``public=True`` marks a declared input (bounds,
    a domain, a polytope): its errors echo the first non-finite entry and its
    index. Otherwise ``u`` may come from the data (a statistic, a point handed to
    a norm) and the errors count the non-finite entries, nothing more.
    """
    try:
        arr = np.asarray(u, dtype=float)
    except (TypeError, ValueError):
        # from None: numpy's message quotes the entry, and ``u`` may be a statistic of the data.
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an array of real numbers. Got {type(u).__name__} instead."
        ) from None
    if arr.ndim == 0 or arr.shape[-1] != dim:
        raise ValueError(
            f"The {name!r} parameter of {owner} must have last axis of length {dim} "
            f"(the dimension). Got shape {arr.shape} instead."
        )
    if not np.all(np.isfinite(arr)) and public:
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"The {name!r} parameter of {owner} must contain only finite values. "
            f"Got {float(arr[tuple(bad)])!r} at index {tuple(int(i) for i in bad)} instead."
        )
    if not np.all(np.isfinite(arr)):
        # A count, not the value or where it is: ``u`` may be a statistic of the data.
        nan, inf = int(np.isnan(arr).sum()), int(np.isinf(arr).sum())
        got = " and ".join(f"{k} {what} value(s)" for k, what in ((nan, "NaN"), (inf, "infinite")) if k)
        raise ValueError(f"The {name!r} parameter of {owner} must contain only finite values. Got {got} instead.")
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


def check_size(size, owner):
    """Return the sample shape of ``size`` (None, an int or a tuple of ints) as a tuple of checked counts."""
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    return tuple(check_count(k, "size", owner) for k in shape)


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


def _non_numeric_count(data):
    """``(entries of data that are not real numbers, entries, the first of them)``, or ``(0, 0, None)``."""
    if hasattr(data, "tocsr"):  # scipy sparse: not ours to judge (scikit-learn says dense is needed)
        return 0, 0, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> float warns; that is not a non-numeric entry
        try:
            np.asarray(data, dtype=float)
            return 0, 0, None
        except (TypeError, ValueError):
            pass
    try:
        flat = np.asarray(data, dtype=object).ravel()
    except (TypeError, ValueError):
        return 0, 0, None
    bad = [v for v in flat if not _is_real_entry(v)]
    first = bad[0] if bad else None
    return len(bad), len(flat), (first.item() if isinstance(first, np.generic) else first)


# numpy's words for an object it cannot convert name the type only ("... not 'dict'"): safe to keep.
_TYPE_ONLY = re.compile(r"[\w() ]*argument must be a string or a (real )?number, not '[\w.]+'")
_NOT_2D = re.compile(r"Expected 2D array, got (1D|scalar) array instead")
# scikit-learn messages that hold counts only, kept whole.
_COUNTS_ONLY = re.compile(r"Found input variables with inconsistent numbers of samples: \[[\d, ]*\]")


def without_data(message):
    """``message`` (a numpy or scikit-learn error) cut before anything that can quote the data.

    scikit-learn appends the whole array to some errors ("array=[...]", or the array on
    the next line after "Complex data not supported"); numpy quotes the string it could
    not convert. What is kept is the first line, up to any "array=" or quoted value.
    """
    first = str(message).split("\n", 1)[0]
    first = first.split("array=", 1)[0]
    first = re.split(r"(?:[:=]\s*|\bgot\s+)['\"\[]", first, maxsplit=1)[0]
    return first.rstrip(" :,;") or "invalid input"


def _is_complex(data):
    try:
        return bool(np.iscomplexobj(data) or np.iscomplexobj(np.asarray(data)))
    except (TypeError, ValueError):
        return False


def _clean_error(err, owner, arrays, public=False):
    """``(the parameter to blame or None, the message to raise in place of err's)``."""
    for name, data in arrays.items():
        bad, total, first = _non_numeric_count(data)
        if bad:
            got = f"the non-numeric value {first!r}" if public else f"{bad} non-numeric value(s) (of {total} entries)"
            msg = f"The {name!r} parameter of {owner} must be an array of real numbers. Got {got} instead"
            # For objects, keep numpy's wording too (it names the type only): scikit-learn's
            # check_dtype_object matches it.
            if isinstance(err, TypeError) and _TYPE_ONLY.fullmatch(str(err)):
                msg += f" ({err})"
            return name, msg + "."
    text = str(err)
    shape = _NOT_2D.match(text)
    if shape:
        name = next(iter(arrays), "X")
        got = "a single value" if shape[1] == "scalar" else "a 1D array"
        # "2D array" and "Reshape your data": scikit-learn's estimator checks match these words.
        return name, (
            f"The {name!r} parameter of {owner} must be a 2D array of shape (n_samples, n_features). Got {got} "
            "instead. Reshape your data with X.reshape(-1, 1) if it has one feature, X.reshape(1, -1) if it is "
            "one sample."
        )
    if text.startswith("Complex data not supported"):
        name = next((k for k, v in arrays.items() if _is_complex(v)), next(iter(arrays), "X"))
        # scikit-learn's check_complex_data matches these first words.
        return name, f"Complex data not supported: the {name!r} parameter of {owner} must be an array of real numbers."
    if _COUNTS_ONLY.fullmatch(text):
        return None, text
    clean = without_data(text)
    return None, (clean if clean == text else clean + " (the rest of the message is withheld: it can quote the data).")


@contextlib.contextmanager
def numeric_input(owner, exc=None, *, public=False, **arrays):
    """Re-raise a failed conversion or validation in the block without the data it quotes.

    ``arrays`` maps parameter names to the inputs converted inside the block
    (``X=X, y=y``). If the block raises TypeError or ValueError and one of them
    holds a non-numeric entry, the error becomes "The 'X' parameter of {owner}
    must be an array of real numbers. Got 3 non-numeric value(s) (of 1000 entries)
    instead." (the count is the curator's: it depends on the data), or, for
    declared inputs (``public=True``), "Got the non-numeric value 'a' instead.". Its class is
    ``exc``, or the original one (ValueError for strings, TypeError for other
    objects) so that callers catching numpy's error still do. Any other
    TypeError or ValueError (scikit-learn's "Expected 2D array ... array=[...]",
    "Complex data not supported" followed by the array) keeps its class and loses
    every value it quotes. The new error is raised ``from None``, so a traceback
    does not show the original either.
    """
    try:
        yield
        return
    except (TypeError, ValueError) as err:
        kind = type(err)
        named, message = _clean_error(err, owner, arrays, public)
        if named is None and message == str(err) and err.__cause__ is None and err.__context__ is None:
            raise
    if named is not None and exc is not None:
        kind = exc
    elif kind not in (TypeError, ValueError):  # a subclass (scikit-learn's own) may not take one message
        kind = ValueError if issubclass(kind, ValueError) else TypeError
    raise kind(message) from None  # the original quotes the data: not even as __context__


def as_real_array(value, name, owner, *, public=False):
    """``value`` as a float ndarray; a non-numeric entry is a TypeError naming the parameter.

    The entry itself is shown only for a declared input (``public=True``): see :func:`check_vectors`.
    """
    with numeric_input(owner, TypeError, public=public, **{name: value}):
        return np.asarray(value, dtype=float)
