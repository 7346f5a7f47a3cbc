"""Shared pieces of the private estimators: declared bounds, counted clipping, rng."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_bounds", "to_unit_box", "resolve_random_state"]


def check_bounds(bounds, n_features, name, owner):
    """Declared bounds as two float arrays (lower, upper) of length ``n_features``.

    ``bounds`` is a pair (lower, upper) of scalars or arrays. Bounds are part of
    the privacy guarantee: they must come from the data's declared domain, never
    from the data, so a missing bound is an error that says how to give it.
    """
    if bounds is None:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be given as (lower, upper): the declared domain of the "
            f"data, for example {name}=(0, 100) or {name}=([0, 0], [10, 1]) with one entry per feature. "
            "Bounds are never derived from the data, since that would leak privacy."
        )
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (n_features,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (n_features,)).copy()
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be a pair (lower, upper) of scalars or arrays of length "
            f"{n_features}. Got {bounds!r} instead."
        ) from err
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError(f"The {name!r} parameter of {owner} must have finite bounds. Got {bounds!r} instead.")
    if not np.all(lo < hi):
        j = int(np.argmin(hi - lo))
        raise ValueError(
            f"The {name!r} parameter of {owner} must satisfy lower < upper for every feature. "
            f"Got lower = {float(lo[j])!r} >= upper = {float(hi[j])!r} at index {j} instead."
        )
    return lo, hi


def to_unit_box(X, lo, hi):
    """Clip ``X`` to [lo, hi] and map it affinely onto [-1, 1].

    Returns
    -------
    Z : ndarray
        The mapped data.
    n_clipped : int
        How many entries were outside the bounds (and clipped).
    """
    X = np.asarray(X, dtype=float)
    outside = (X < lo) | (X > hi)
    n_clipped = int(np.count_nonzero(outside))
    Z = np.clip(X, lo, hi) if n_clipped else X
    return (Z - lo) * (2.0 / (hi - lo)) - 1.0, n_clipped


def resolve_random_state(random_state):
    """A numpy Generator from None (OS entropy), an int, a Generator or a legacy RandomState.

    A RandomState (accepted for scikit-learn compatibility) seeds a new Generator
    from one draw of it; no global state is ever used.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, dtype=np.uint64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "The 'random_state' parameter must be None, an int, a numpy Generator or a RandomState. "
        f"Got {type(random_state).__name__} instead."
    )
