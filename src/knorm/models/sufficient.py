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

__all__ = ["ExactStatistic", "RegressionStatistics", "sufficient_statistics", "is_dask_collection"]

# Rows per block of the numpy path: bounds the temporaries (about 1 MB per column).
_BLOCK_ROWS = 1 << 17
#: Scaled records are rounded to the grid 2^-GRID_BITS of [-1, 1] (a per-record map into the box).
GRID_BITS = 16
# Rows per exact Gram product: entries are integers of magnitude <= 2^(2 GRID_BITS) = 2^32, so
# sums of up to 2^20 of them stay below 2^53 and binary64 adds them exactly, in any order.
_EXACT_ROWS = 1 << 20
# The largest n whose int64 sums (doubled squares: 2^33 per record) cannot overflow.
MAX_RECORDS = 1 << 29


class ExactStatistic:
    """A statistic known exactly: integers times 2^exponent, and its rounding to a release's lattice.

    Parameters
    ----------
    units : ndarray of int64, shape (d,)
        The statistic in units of 2^exponent.
    exponent : int
        The power of two of one unit.

    Notes
    -----
    :func:`sufficient_statistics` rounds each scaled record z in [-1, 1]^(p+1) to the grid
    2^-16 (a deterministic map of one record into the same box: the sensitivity space of
    paper Section 5.1 is unchanged) and sums the integer products exactly, so T is known as
    integers times 2^-32 whatever the order, blocking or Dask partitioning of the rows
    (Casacuberta et al. 2022 show binary64 sums that break the declared sensitivity).
    :meth:`on_lattice` hands a lattice release round(T / gamma) gamma computed in integer
    arithmetic: the mechanism's privacy argument then holds for the statistic as computed,
    with no computation error to cover.

    Examples
    --------
    >>> t = ExactStatistic(np.array([5, -3], dtype=np.int64), -2)  # (1.25, -0.75)
    >>> t.to_float().tolist(), t.on_lattice([0.5, 0.5]).tolist()  # half to even: 2.5 -> 2, -1.5 -> -2
    ([1.25, -0.75], [1.0, -1.0])
    """

    def __init__(self, units, exponent):
        self.units = np.asarray(units, dtype=np.int64)
        self.exponent = int(exponent)

    def to_float(self):
        """Return the statistic as doubles (one rounding of the exact value).

        Returns
        -------
        ndarray of float
            The values units * 2^exponent, each rounded to the nearest double.
        """
        return np.ldexp(self.units.astype(float), self.exponent)

    def with_count(self, n, halve=()):
        """Return (n, T) with the coordinates ``halve`` of T halved (add/remove layout of Section 5.1).

        Parameters
        ----------
        n : int
            The count, prepended.
        halve : sequence of index arrays
            Coordinates of T (before the count) to halve: the doubled squares, exactly even.

        Returns
        -------
        ExactStatistic
            The statistic with the count first.
        """
        units = self.units.copy()
        for idx in halve:
            if idx is not None:
                units[idx] //= 2  # 2 z^2 in units: even, so exact
        count = np.int64(int(n) << -self.exponent)
        return ExactStatistic(np.concatenate([[count], units]), self.exponent)

    def on_lattice(self, spacing):
        """Return round(T / gamma) gamma exactly (half to even), as exact doubles.

        Parameters
        ----------
        spacing : array_like of shape (d,)
            The lattice spacings gamma_j, powers of two.

        Returns
        -------
        ndarray of shape (d,)
            The rounded statistic.

        Raises
        ------
        ValueError
            If a spacing is not a power of two, or a rounded value has 2^53 lattice steps or more.
        """
        gamma = np.broadcast_to(np.asarray(spacing, dtype=float), self.units.shape)
        out = np.empty(self.units.shape)
        for j, (u, g) in enumerate(zip(self.units.tolist(), gamma.tolist())):
            mantissa, e = np.frexp(g)
            if mantissa != 0.5:
                raise ValueError(f"ExactStatistic.on_lattice: spacings must be powers of two. Got {g!r} instead.")
            shift = (int(e) - 1) - self.exponent  # gamma = 2^(exponent + shift)
            if shift <= 0:
                q = u << -shift
            else:
                q, rest = divmod(u, 1 << shift)
                half = 1 << (shift - 1)
                q += rest > half or (rest == half and q % 2 == 1)
            if abs(q) >= 1 << 53:
                raise ValueError(
                    f"ExactStatistic.on_lattice: the statistic spans 2^53 or more lattice steps of {g!r}; "
                    "use a coarser lattice."
                )
            out[j] = q * g
        return out

    def __repr__(self):
        return f"ExactStatistic(dim={len(self.units)}, unit=2^{self.exponent})"


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
    exact, n, n_clipped = exact_statistic(X, y, lo, hi, owner)
    return RegressionStatistics(exact.to_float(), int(n), int(n_clipped))


def exact_statistic(X, y, lo, hi, owner, *, response_square=False):
    """Return (ExactStatistic T, n, n_clipped) for the box [lo, hi] of (x, y) (replace-one layout).

    X and y may be numpy, pandas or Dask; ``response_square`` adds sum 2 y'^2
    (``statistic='gram'``).
    """
    if is_dask_collection(X) or is_dask_collection(y):
        G, s, n, n_clipped = _dask_partials(X, y, lo, hi, owner)
    else:
        X, y = _as_numpy(X, y, len(lo) - 1, owner)
        G, s, n, n_clipped = _numpy_partials(X, y, lo, hi, owner)
    if n > MAX_RECORDS:
        raise ValueError(
            f"{owner}: {n} records exceed the {MAX_RECORDS} that the exact int64 sums can hold. "
            "Fit on a sample, or release parts separately."
        )
    return _exact_layout(RegressionLayout(len(s) - 1, response_square=response_square), G, s), n, n_clipped


def _exact_layout(layout, G, s):
    """:meth:`RegressionLayout.from_gram` in integer units of 2^-2B (replace-one layout, no count)."""
    p, B = layout.p, GRID_BITS
    T = np.empty(layout.dim, dtype=np.int64)
    T[layout.lin] = s[:p] << B
    j, k = np.array(layout.pairs, dtype=int).reshape(-1, 2).T
    T[layout.cross] = G[j, k]
    w = int(layout.square_weight)
    T[layout.sq] = w * np.diag(G)[:p]
    T[layout.y] = s[p] << B
    T[layout.xy] = G[:p, p]
    if layout.yy is not None:
        T[layout.yy] = w * G[p, p]
    return ExactStatistic(T, -2 * B)


def _block_partials(Xb, yb, lo, hi):
    """(G, s, n, n_clipped, n_nonfinite) of one row block; G and s in int64 units of 2^-2B and 2^-B."""
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
    # Each record rounded to the grid 2^-B of [-1, 1]: integers K with |K| <= 2^B.
    K = np.clip(np.rint(np.ldexp(Z, GRID_BITS)), -(1 << GRID_BITS), 1 << GRID_BITS)
    G = np.zeros((K.shape[1], K.shape[1]), dtype=np.int64)
    s = np.zeros(K.shape[1], dtype=np.int64)
    for start in range(0, len(K), _EXACT_ROWS):
        part = K[start : start + _EXACT_ROWS]
        G += (part.T @ part).astype(np.int64)  # integers below 2^53: exact in any summation order
        s += part.sum(axis=0).astype(np.int64)
    return G, s, len(Z), n_clipped, bad


def _check_finite(n_nonfinite, owner):
    if n_nonfinite:
        raise ValueError(
            f"Input X or y of {owner} contains {n_nonfinite} NaN or infinite value(s). "
            "Drop or impute them first: clipping cannot place a missing value."
        )


def _numpy_partials(X, y, lo, hi, owner):
    m = len(lo)
    G, s = np.zeros((m, m), dtype=np.int64), np.zeros(m, dtype=np.int64)
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
