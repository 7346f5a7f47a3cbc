"""The noise-free regression statistic T of the paper's Section 5.1, chunk by chunk.

T depends on the data only through the Gram matrix and the column sums of the
scaled records z' = (x', y') in [-1, 1]^(p+1), which are sums over rows. So T
is computed block by block: numpy arrays in row blocks of bounded memory, Dask
arrays and DataFrames block by block out of core (on a dask.distributed cluster
too, through ``dask.compute``), and the partial sums are added on the driver.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from knorm._validation import numeric_input
from knorm.models._base import check_bounds, to_unit_box
from knorm.sensitivity import RegressionLayout

__all__ = ["RegressionStatistics", "sufficient_statistics", "is_dask_collection"]

# Rows per block of the numpy path: bounds the temporaries (about 1 MB per column).
_BLOCK_ROWS = 1 << 17


class RegressionStatistics(NamedTuple):
    """Output of :func:`sufficient_statistics`, a named tuple ``(T, n_samples, n_clipped)``.

    Parameters
    ----------
    T : ndarray of shape (d,)
        The Section 5.1 statistic of the scaled data, in the order of
        :class:`~knorm.sensitivity.RegressionLayout` (squares doubled, so every
        entry has replace-one sensitivity 2). Not private.
    n_samples : int
        Number of rows n.
    n_clipped : int
        Entries of X and y outside their bounds (clipped before scaling). Not private.
    """

    T: np.ndarray
    n_samples: int
    n_clipped: int


def is_dask_collection(obj):
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


def sufficient_statistics(X, y, *, bounds_X, bounds_y):
    """Compute the noise-free scaled statistic T, n and the clip count of a regression dataset.

    Each column of X is clipped to its declared bounds and mapped affinely onto
    [-1, 1], and so is y; T then holds the unique non-constant entries of X'X
    and X'Y for the design [1, X] (paper Section 5.1).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite features: a numpy array, pandas DataFrame, Dask array or Dask DataFrame.
    y : array-like of shape (n_samples,)
        Finite response: a numpy array, pandas Series, Dask array or Dask Series.
    bounds_X : pair (lower, upper)
        Declared domain of the features: scalars or arrays of length n_features.
    bounds_y : pair (lower, upper)
        Declared domain of the response: scalars.

    Returns
    -------
    RegressionStatistics
        ``(T, n_samples, n_clipped)``: the statistic in
        :class:`~knorm.sensitivity.RegressionLayout` order, n and the number of
        clipped entries. None of it is private: T is the input of a mechanism
        (:func:`~knorm.models.functional_mechanism`), not a release.

    Raises
    ------
    ValueError
        For NaN or infinite entries, shapes that do not match, or bad bounds.

    Notes
    -----
    Dask inputs are reduced block by block (one small partial sum per block,
    then one ``dask.compute``); nothing of size n is brought to the driver. Row
    blocks of X and y must line up: Dask arrays are rechunked so that they do,
    and a Dask DataFrame and Series must have the same number of partitions.

    References
    ----------
    Paper Section 5.1 (the statistic T and its rescaling to sensitivity 2).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [10.0]])
    >>> stats = sufficient_statistics(X, np.array([1.0, -1.0]), bounds_X=(0, 10), bounds_y=(-1, 1))
    >>> stats.T.tolist(), stats.n_samples, stats.n_clipped  # (x, 2x^2, y, xy)
    ([0.0, 4.0, 0.0, -2.0], 2, 0)
    """
    owner = "sufficient_statistics"
    p = _n_columns(X)
    if p < 1:
        raise ValueError(
            f"The 'X' parameter of {owner} must have at least one feature column. Got shape {np.shape(X)} instead."
        )
    lo_x, hi_x = check_bounds(bounds_X, p, "bounds_X", owner)
    lo_y, hi_y = check_bounds(bounds_y, 1, "bounds_y", owner)
    return _statistics(X, y, lo_x, hi_x, lo_y, hi_y, owner)


def _statistics(X, y, lo_x, hi_x, lo_y, hi_y, owner):
    """T, n and clip count for validated bounds (dispatch on the input type)."""
    lo = np.concatenate([lo_x, lo_y])
    hi = np.concatenate([hi_x, hi_y])
    if is_dask_collection(X) or is_dask_collection(y):
        G, s, n, n_clipped = _dask_partials(X, y, lo, hi, owner)
    else:
        X, y = _as_numpy(X, y, len(lo) - 1, owner)
        G, s, n, n_clipped = _numpy_partials(X, y, lo, hi, owner)
    return RegressionStatistics(RegressionLayout(len(s) - 1).from_gram(G, s, n), int(n), int(n_clipped))


def _block_partials(Xb, yb, lo, hi):
    """(G, s, n, n_clipped, n_nonfinite) of one row block."""
    Xb = np.asarray(Xb, dtype=float)
    yb = np.asarray(yb, dtype=float).reshape(-1)
    if len(Xb) != len(yb):
        raise ValueError(f"Row blocks of X and y must line up. Got blocks of {len(Xb)} and {len(yb)} rows instead.")
    Z = np.empty((len(yb), len(lo)))
    Z[:, :-1] = Xb.reshape(len(yb), -1)
    Z[:, -1] = yb
    bad = int(np.count_nonzero(~np.isfinite(Z)))
    if bad:
        Z[~np.isfinite(Z)] = 0.0  # reported by the caller; keeps the sums finite
    Z, n_clipped = to_unit_box(Z, lo, hi)
    return Z.T @ Z, Z.sum(axis=0), len(Z), n_clipped, bad


def _check_finite(n_nonfinite, owner):
    if n_nonfinite:
        raise ValueError(
            f"Input X or y of {owner} contains {n_nonfinite} NaN or infinite value(s). "
            "Drop or impute them first: clipping cannot place a missing value."
        )


def _numpy_partials(X, y, lo, hi, owner):
    m = len(lo)
    G, s = np.zeros((m, m)), np.zeros(m)
    n_clipped = n_bad = 0
    for start in range(0, len(X), _BLOCK_ROWS):
        g, t, _, c, b = _block_partials(X[start : start + _BLOCK_ROWS], y[start : start + _BLOCK_ROWS], lo, hi)
        G += g
        s += t
        n_clipped += c
        n_bad += b
    _check_finite(n_bad, owner)
    return G, s, len(X), n_clipped


def _as_numpy(X, y, p, owner):
    with numeric_input(owner, X=X, y=y):
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
        raise ValueError(
            f"The inputs of {owner} must be X of shape (n_samples, n_features) and y of shape (n_samples,). "
            f"Got X of shape {X.shape} and y of shape {y.shape} instead."
        )
    return X, y


def _n_columns(X):
    if is_dask_collection(X):
        return len(X.columns) if hasattr(X, "columns") else int(X.shape[1])
    shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D of shape (n_samples, n_features). Got shape {shape} instead.")
    return shape[1]


def _dask_blocks(X, y, owner):
    """Pairs of delayed row blocks (X_b, y_b) that line up."""
    import dask.array as da

    frames = [is_dask_collection(v) and not isinstance(v, da.Array) for v in (X, y)]
    # optimize_graph=False keeps the original task keys, so blocks that X and y
    # share upstream (e.g. generated together) are computed once, not twice.
    if all(frames) and X.npartitions == y.npartitions:
        return list(zip(X.to_delayed(optimize_graph=False), y.to_delayed(optimize_graph=False)))
    # Otherwise work on Dask arrays; frames get their partition lengths (one pass).
    X = X.to_dask_array(lengths=True) if hasattr(X, "to_dask_array") else X
    y = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
    X = X if isinstance(X, da.Array) else da.from_array(np.asarray(X, dtype=float), chunks=(_BLOCK_ROWS, -1))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(
            f"The inputs of {owner} must be X of shape (n_samples, n_features) and y of shape (n_samples,). "
            f"Got X of shape {X.shape} and y of shape {y.shape} instead."
        )
    X = X.rechunk({1: -1})
    if isinstance(y, da.Array):
        y = y.rechunk({0: X.chunks[0]})
    else:
        y = da.from_array(np.asarray(y, float), chunks=X.chunks[0])
    return list(zip(X.to_delayed(optimize_graph=False).ravel(), y.to_delayed(optimize_graph=False).ravel()))


def _dask_partials(X, y, lo, hi, owner):
    import dask

    parts = [dask.delayed(_block_partials)(xb, yb, lo, hi) for xb, yb in _dask_blocks(X, y, owner)]
    total = dask.delayed(_sum_partials)(parts)
    G, s, n, n_clipped, n_bad = dask.compute(total)[0]
    _check_finite(n_bad, owner)
    return G, s, n, n_clipped


def _sum_partials(parts):
    G = sum(p[0] for p in parts)
    s = sum(p[1] for p in parts)
    return G, s, sum(p[2] for p in parts), sum(p[3] for p in parts), sum(p[4] for p in parts)
