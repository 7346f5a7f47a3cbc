"""Input checks shared by every public entry point.

Every error names the parameter, the rule and the value received, in the
scikit-learn format: "The 'epsilon' parameter of KNormMechanism must be a
float in the range (0, inf). Got -1 instead."
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_rng",
    "check_positive",
    "check_probability",
    "check_vectors",
    "param_error",
]


def param_error(name, owner, rule, value, exc=ValueError):
    """Build the one-format error for parameter ``name`` of ``owner``."""
    return exc(f"The {name!r} parameter of {owner} must be {rule}. Got {value!r} instead.")


def check_rng(rng):
    """Turn ``rng`` (None, int seed, SeedSequence or Generator) into a Generator.

    ``None`` draws fresh entropy from the operating system; there is never any
    global random state (SPEC-7).
    """
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "The 'rng' parameter must be None, an int seed, a SeedSequence or a "
            "numpy.random.Generator. Got a legacy RandomState instead; wrap it as "
            "numpy.random.default_rng(seed)."
        )
    return np.random.default_rng(rng)


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
            f"The {name!r} parameter of {owner} must be an array of real numbers. "
            f"Got {type(u).__name__} instead."
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


def check_dim(dim, owner):
    """Return ``dim`` as a positive int."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise param_error("dim", owner, "an int >= 1", dim, TypeError if not isinstance(dim, numbers.Integral) else ValueError)
    return int(dim)


def check_count(n, name, owner):
    """Return ``n`` as a non-negative int (a number of draws)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise param_error(name, owner, "an int >= 0", n, TypeError if not isinstance(n, numbers.Integral) else ValueError)
    return int(n)
