"""The noise-free regression statistic T of the paper's Section 5.1, exactly, chunk by chunk.

T depends on the data only through the Gram matrix and the column sums of the
scaled records z' = (x', y') in [-1, 1]^(p+1), which are sums over rows. Floating-point
sums of those depend on the order and blocking of the rows and can move a statistic
beyond its declared sensitivity (Casacuberta et al. 2022). So each scaled record is
rounded to the dyadic grid 2^-32 (a per-record map into [-1, 1]^(p+1): a valid record,
so the sensitivity space S_T is unchanged), split into two 16-bit integer limbs, and the
Gram matrix of the limbs is computed with binary64 BLAS, which is exact on such integers
for blocks of at most 2^20 rows. Blocks are added as Python integers. T is then an exact
rational with denominator 2^64, identical bit for bit whatever the row order, the block
size or the Dask partitioning (:class:`ExactStatistic`).

numpy arrays are reduced in row blocks of bounded memory, Dask arrays and DataFrames
block by block out of core (on a dask.distributed cluster too, through ``dask.compute``),
and the partial sums are added on the driver.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from knorm._exact import ExactSums, lattice_round
from knorm._ingest import check_bounds, is_dask, refuse_nonfinite
from knorm._validation import numeric_input
from knorm.models._base import unit_factor
from knorm.sensitivity import RegressionLayout

__all__ = ["ExactStatistic", "GRID_BITS", "RegressionStatistics", "sufficient_statistics"]

#: Each scaled record value is rounded to the grid 2^-GRID_BITS (ties to even).
GRID_BITS = 32
# The grid value is held as two integer limbs of LIMB_BITS bits: hi 2^16 + lo with
# |hi| <= 2^16 and |lo| <= 2^15, so every product of limbs is at most 2^32.
_LIMB_BITS = 16
# Largest block whose limb Gram matrix binary64 computes exactly: 2^20 products of at
# most 2^32 sum to at most 2^52 < 2^53 in any order.
_EXACT_ROWS = 1 << 20
# Rows per block: the buffers (3 (p + 1) + 1 doubles a row, 550 KB at p = 10) stay in cache.
_BLOCK_ROWS = 1 << 11
# fl(v + _ROUNDER) - _ROUNDER rounds |v| <= 2^32 to a multiple of 2^16, ties to even (the unit of the binade
# [2^68, 2^69) is 2^16, and _ROUNDER / 2^16 = 1.5 2^52 is even, so the tie goes to an even multiple).
_ROUNDER = 1.5 * 2.0 ** (52 + _LIMB_BITS)
# int64 totals of at most this many rows: entries below 2^30 2^32 = 2^62, flushed into Python integers.
_FLUSH_ROWS = 1 << 30


class ExactStatistic(ExactSums):
    """The regression statistic T of grid-rounded records, held exactly as integers.

    Built by :func:`sufficient_statistics` (its ``exact`` attribute) and
    :class:`~knorm.models.LinearRegression`; handed to
    :func:`~knorm.models.functional_mechanism`, which rounds it to the release's lattice
    in integer arithmetic.

    Parameters
    ----------
    gram : ndarray of object (Python int), shape (p + 1, p + 1)
        The Gram matrix sum_i v_i v_i' in units of 2^-64, v_i the grid-rounded scaled record.
    sums : ndarray of object (Python int), shape (p + 1,)
        The sums sum_i v_i in units of 2^-32.
    n : int
        Number of records.
    layout : RegressionLayout, optional
        The coordinates of T (default: ``RegressionLayout(p)``, the paper's).

    Attributes
    ----------
    SCALE_BITS : int
        T = units 2^-SCALE_BITS, coordinate by coordinate (64).
    layout : RegressionLayout
        The coordinates of T.
    n_samples : int
        Number of records n.

    Notes
    -----
    Each record is clipped and scaled to z in [-1, 1]^(p+1) (:func:`~knorm.models._base.to_unit_box`,
    binary64, per record), then rounded to v = 2^-32 round(2^32 z), ties to even, which
    lies in [-1, 1]^(p+1) too. That is a deterministic map of each record into the
    declared domain, so T of the rounded records differs between neighbours by a point of
    S_T (paper Section 5.1): no computation error enters the privacy argument, and T
    itself (not a float approximation of it) is what the lattice release rounds
    (:mod:`knorm.mechanisms.lattice`). The rounding moves each z by at most 2^-33, so a
    product v_j v_k by at most 2^-32 + 2^-66: a bias of at most n (2^-32 + 2^-66) on an
    entry of T (twice that on a doubled square), far below any privacy noise.

    The limbs are integers below 2^16 in magnitude, so each of their products is an
    integer of at most 2^32 and every partial sum of a block of at most 2^20 rows an
    integer of at most 2^52: binary64 adds them exactly in any order, with or without
    fused multiply-add, which is why a BLAS Gram product is exact here and the result
    does not depend on the blocking (Casacuberta et al. 2022 show the float sums that
    do). Blocks are added as Python integers, so n is not limited.

    References
    ----------
    Paper Section 5.1 (the statistic T, its rescaling to [-1, 1] and to sensitivity 2).
    Casacuberta, Shoemate, Vadhan & Wagaman (2022), "Widespread
    underestimation of sensitivity in differentially private libraries and how to fix
    it", ACM CCS.

    Examples
    --------
    >>> import numpy as np
    >>> X, y = np.array([[0.5], [-0.25]]), np.array([0.75, 1.0])
    >>> exact = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1)).exact
    >>> exact.layout.names, exact.value.tolist()
    (['x1', '2x1^2', 'y', 'x1y'], [0.25, 0.625, 1.75, 0.125])
    >>> value, error = exact.on_lattice(np.array([0.5, 0.5, 1.0, 0.25]))  # 0.625 / 0.5 = 1.25 rounds to 1
    >>> value.tolist(), error
    ([0.0, 0.5, 2.0, 0.0], 0.0)
    """

    SCALE_BITS = 2 * GRID_BITS
    note = f"T summed exactly in integers (records on the grid 2^-{GRID_BITS}) and rounded to the lattice exactly"

    def __init__(self, gram, sums, n, layout=None):
        gram, sums = _as_ints(gram), _as_ints(sums)
        q = len(sums)
        if gram.shape != (q, q) or q < 2:
            raise ValueError(
                "The 'gram' parameter of ExactStatistic must have shape (p + 1, p + 1) for sums of length p + 1 >= 2. "
                f"Got shapes {gram.shape} and {sums.shape} instead."
            )
        self._gram, self._sums, self.n_samples = gram, sums, int(n)
        self.layout = RegressionLayout(q - 1) if layout is None else layout
        if self.layout.p != q - 1:
            raise ValueError(
                f"The 'layout' parameter of ExactStatistic must have p = {q - 1}. Got p = {self.layout.p} instead."
            )

    def with_layout(self, layout):
        """Return the same statistic in other coordinates (neighbours, response square).

        Parameters
        ----------
        layout : RegressionLayout
            With the same p.

        Returns
        -------
        ExactStatistic
            The same sums, released in the coordinates of ``layout``.
        """
        return ExactStatistic(self._gram, self._sums, self.n_samples, layout)

    @property
    def units(self):
        """Return the integers u with T = u 2^-64, in :attr:`layout` order (object ndarray).

        Under add/remove neighbours the count n comes first and the squares are not doubled
        (the vector (n, T') that :func:`~knorm.models.functional_mechanism` releases).
        """
        lay, G, s = self.layout, self._gram, self._sums
        p, w, one = lay.p, int(lay.square_weight), 1 << GRID_BITS
        u = np.empty(lay.dim, dtype=object)
        if lay.count is not None:
            u[lay.count] = self.n_samples << self.SCALE_BITS
        j, k = np.array(lay.pairs, dtype=int).reshape(-1, 2).T
        u[lay.lin] = s[:p] * one
        u[lay.cross] = G[j, k]
        u[lay.sq] = G[np.arange(p), np.arange(p)] * w
        u[lay.y] = s[p] * one
        u[lay.xy] = G[:p, p]
        if lay.yy is not None:
            u[lay.yy] = G[p, p] * w
        return u

    @property
    def value(self):
        """Return T as floats: each coordinate the exact value rounded once (to nearest, ties to even)."""
        # int -> float is correctly rounded in Python; the power-of-two scaling is exact.
        return np.array([math.ldexp(float(u), -self.SCALE_BITS) for u in self.units])

    def __array__(self, dtype=None, copy=None):
        """Return :attr:`value`, so that ``np.asarray(exact)`` is the float statistic."""
        return self.value if dtype is None else self.value.astype(dtype)

    def resolve(self):
        """Return T as floats: the statistic of a continuous or non-private release.

        Returns
        -------
        ndarray of float, shape (d,)
            :attr:`value`: each coordinate the exact value rounded once.
        """
        return self.value

    def on_lattice(self, spacing, ball=None):
        """Return (T rounded to the lattice ``spacing`` Z^d in integer arithmetic, 0.0).

        Parameters
        ----------
        spacing : array_like of shape (d,)
            Positive powers of two gamma_j, as ``KNormMechanism.lattice.spacing``.
        ball : NormBall, optional
            The release's ball (the interface of :class:`knorm._exact.ExactSums`); unused:
            T is exact, so the computation adds nothing to a neighbour difference.

        Returns
        -------
        value : ndarray of float, shape (d,)
            The lattice point gamma_j round(T_j / gamma_j), ties to even, exactly: no float
            rounding comes between the exact T and the lattice point.
        computation_error : float
            0.0: T is the exact statistic of the grid-rounded records, which are records of
            the declared domain (Notes).

        Raises
        ------
        ValueError
            If a spacing is not a positive power of two, or a quotient reaches 2^53 (it
            would not be an exact double).

        Notes
        -----
        T_j = u_j 2^-64 and gamma_j = 2^e_j, so T_j / gamma_j = u_j 2^-(64 + e_j): an
        integer shift (ties to even, :func:`knorm._exact.lattice_round`, as for
        :class:`knorm._exact.RecordSums`). The lattice release of
        :mod:`knorm.mechanisms.lattice` assumes exactly this rounding of the exact
        statistic: its slack covers |R(T) - T| <= gamma / 2.
        """
        units = self.units
        value = lattice_round(units, [-self.SCALE_BITS] * len(units), spacing, "ExactStatistic.on_lattice")
        return value, 0.0

    def __repr__(self):
        return f"ExactStatistic(p={self.layout.p}, n={self.n_samples}, names={self.layout.names!r})"


def _as_ints(values):
    """An object array of Python ints (exact whatever their size)."""
    arr = np.asarray(values, dtype=object)
    return np.vectorize(int, otypes=[object])(arr) if arr.size else arr


class _Statistics(NamedTuple):
    T: np.ndarray
    n_samples: int
    n_clipped: int


class RegressionStatistics(_Statistics):
    """Output of :func:`sufficient_statistics`, a named tuple ``(T, n_samples, n_clipped)``.

    It unpacks into three values as before; the exact statistic rides along as the
    attribute ``exact``.

    Parameters
    ----------
    T : ndarray of shape (d,)
        The Section 5.1 statistic of the scaled data, in the order of
        :class:`~knorm.sensitivity.RegressionLayout` (squares doubled, so every
        entry has replace-one sensitivity 2): ``exact`` rounded once. Not private.
    n_samples : int
        Number of rows n.
    n_clipped : int
        Entries of X and y outside their bounds (clipped before scaling). Not private.
    exact : ExactStatistic, optional
        The same statistic held exactly: what :func:`~knorm.models.functional_mechanism`
        should receive, so that a lattice release rounds T itself, not its float.
    """

    exact: ExactStatistic | None

    def __new__(cls, T, n_samples, n_clipped, exact=None):
        self = super().__new__(cls, T, n_samples, n_clipped)
        self.exact = exact  # an attribute, not a field: unpacking still gives three values
        return self


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
        clipped entries, and as attribute ``exact`` the statistic held exactly
        (:class:`ExactStatistic`). None of it is private: T is the input of a
        mechanism (:func:`~knorm.models.functional_mechanism`, which should get
        ``exact``), not a release.

    Raises
    ------
    ValueError
        For NaN or infinite entries, shapes that do not match, or bad bounds.

    Notes
    -----
    Each scaled record is rounded to the grid 2^-32 and T is summed exactly in integer
    arithmetic (:class:`ExactStatistic`): the result does not depend on the row order,
    the block size or the Dask partitioning, bit for bit (the float sums it replaces did;
    Casacuberta et al. 2022). The rounding moves each scaled value by at most 2^-33.

    Dask inputs are reduced block by block (one small partial sum per block,
    then one ``dask.compute``); nothing of size n is brought to the driver. Row
    blocks of X and y must line up: Dask arrays are rechunked so that they do,
    and a Dask DataFrame and Series must have the same number of partitions.

    References
    ----------
    Paper Section 5.1 (the statistic T and its rescaling to sensitivity 2). Casacuberta,
    Shoemate, Vadhan & Wagaman (2022), "Widespread underestimation of sensitivity in
    differentially private libraries and how to fix it", ACM CCS.

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
    lo_x, hi_x = check_bounds(bounds_X, p, owner, "bounds_X")
    lo_y, hi_y = check_bounds(bounds_y, 1, owner, "bounds_y")
    return _statistics(X, y, lo_x, hi_x, lo_y, hi_y, owner)


def _statistics(X, y, lo_x, hi_x, lo_y, hi_y, owner):
    """T, n and clip count for validated bounds (dispatch on the input type)."""
    lo = np.concatenate([lo_x, lo_y])
    hi = np.concatenate([hi_x, hi_y])
    dask = is_dask(X) or is_dask(y)
    if not dask:
        X, y = _as_numpy(X, y, len(lo) - 1, owner)
    exact, n_clipped = exact_statistic(X, y, lo, hi, owner, dask=dask)
    return RegressionStatistics(exact.value, exact.n_samples, int(n_clipped), exact)


def exact_statistic(X, y, lo, hi, owner, *, dask):
    """(ExactStatistic, clip count) of checked inputs: numpy arrays in row blocks, or Dask block by block.

    Parameters
    ----------
    X, y : ndarray or Dask collection
        The records; numpy inputs already of shape (n, p) and (n,).
    lo, hi : ndarray of shape (p + 1,)
        The declared box of (x, y).
    owner : str
        The public function named in error messages.
    dask : bool
        Whether X or y is a Dask collection (found once, at the door).

    Returns
    -------
    exact : ExactStatistic
        The exact statistic.
    n_clipped : int
        Clipped values (curator-only).
    """
    return _dask_partials(X, y, lo, hi, owner) if dask else _numpy_partials(X, y, lo, hi, owner)


class _LimbKernel:
    """The exact limb Gram matrix of row blocks, with buffers reused from block to block.

    Variables are laid out one per row (shape (p + 1, m)): the elementwise steps then run
    over long contiguous rows, and the Gram product K K' is one BLAS call. Blocks of m
    rows (at most 2^20) stay in cache. For each block:

    1. z = fl(fl(x - lo) f) - 1 with the factor f of :func:`~knorm.models._base.to_unit_box`, capped to
       [-1, 1]: for every finite x this is exactly :func:`~knorm.models._base.to_unit_box` (clipping x to
       [lo, hi] first maps it to exactly -1 or 1, and so does the cap, the map being
       monotone). It is computed as fl(fl(x - lo) (f 2^32)) - 2^32 capped to
       [-2^32, 2^32], which is 2^32 z exactly (a power-of-two scaling commutes with
       rounding; a subnormal fl(x - lo) f only moves z within one rounding of -1, which
       the grid below rounds to -1 either way);
    2. the smallest and the largest mapped value of the block (every column shares the
       range [-2^32, 2^32]) show NaN, inf and values beyond the bounds; only then are the
       raw values read again and counted (NaN and inf set to 0 and reported by the
       caller, values outside the bounds counted as clipped) and the cap applied (a
       finite x far outside the bounds may map to +-inf: the cap takes it to +-2^32);
    3. v = round(2^32 z), ties to even: the record on the grid 2^-32;
    4. the limbs high = round(v 2^-16) (ties to even) and low = v - 2^16 high
       (|low| <= 2^15), exact integer arithmetic: 2^16 high is fl(2^32 v + R) - R with
       R = 1.5 2^68, whose binade has the unit 2^16; K = [2^16 high, low, 1];
    5. K K' (one BLAS call) holds every limb product and every limb sum, times 2^32,
       2^16 or 1: exact, since a power-of-two multiple of integers below 2^52 (see
       ExactStatistic, Notes) is summed exactly in any order; the powers of two are
       divided out exactly, and the integers added into int64 totals that are moved into
       Python integers long before they could overflow.

    The result is the summed matrix [high, low, 1] [high, low, 1]' of the records, in the
    layout of :func:`_from_limbs`.
    """

    def __init__(self, lo, hi, rows):
        q = len(lo)
        self.q, self.lo, self.hi = q, lo[:, None], hi[:, None]
        self.scale = (unit_factor(lo, hi) * 2.0**GRID_BITS)[:, None]  # exact: a power of two
        self.Z = np.empty((q, rows))
        self.K = np.empty((2 * q + 1, rows))
        self.K[2 * q] = 1.0
        d = np.r_[np.full(q, 2.0**-_LIMB_BITS), np.ones(q + 1)]
        self.unscale = np.outer(d, d)
        self.total = np.zeros((2 * q + 1, 2 * q + 1), dtype=object)
        self.acc = np.zeros((2 * q + 1, 2 * q + 1), dtype=np.int64)
        self.acc_rows = self.n_clipped = self.n_bad = 0

    def add(self, Xb, yb):
        """Add a block of at most ``rows`` rows (X block of shape (m, p), y block of shape (m,))."""
        m, q, one = len(yb), self.q, 2.0**GRID_BITS
        Z = self.Z[:, :m] if m < self.Z.shape[1] else self.Z
        K = self.K[:, :m] if m < self.K.shape[1] else self.K
        with np.errstate(over="ignore"):  # x far outside the bounds: +-inf, capped below
            np.subtract(Xb.T, self.lo[:-1], out=Z[:-1])  # the copy into the layout, and x - lo, in one pass
            np.subtract(yb, self.lo[-1], out=Z[-1])
            Z *= self.scale
        Z -= one
        low_end, high_end = Z.min(), Z.max()  # NaN propagates; inf and values beyond the bounds show here
        if not (low_end >= -one and high_end <= one):  # read the raw values (a huge finite x can map to inf)
            raw = np.empty_like(Z)
            raw[:-1] = Xb.T
            raw[-1] = yb
            finite = np.isfinite(raw)
            if not finite.all():
                self.n_bad += raw.size - int(np.count_nonzero(finite))
                raw[~finite] = Z[~finite] = 0.0  # reported by the caller; keeps the sums finite
            self.n_clipped += int(np.count_nonzero(raw < self.lo)) + int(np.count_nonzero(raw > self.hi))
            np.clip(Z, -one, one, out=Z)  # an overflow to +-inf (x far outside) is capped too
        np.rint(Z, out=Z)  # v 2^32: the record on the grid 2^-32, ties to even
        top, low = K[:q], K[q : 2 * q]
        np.add(Z, _ROUNDER, out=top)  # fl(v 2^32 + 1.5 2^68): the binade's unit is 2^16
        top -= _ROUNDER  # 2^16 high, high = round(v 2^16), ties to even: exact
        np.subtract(Z, top, out=low)  # v 2^32 = 2^16 high + low, |low| <= 2^15: exact
        G = K @ K.T  # exact: 2^32, 2^16 or 1 times integers below 2^52 (scaled sums are exact)
        G *= self.unscale  # the powers of two out: the limb Gram matrix [high, low, 1] [high, low, 1]'
        self.acc += G.astype(np.int64)
        self.acc_rows += m
        if self.acc_rows >= _FLUSH_ROWS:
            self.flush()

    def flush(self):
        """Move the int64 totals into the Python-integer ones (before 2^63 could be reached)."""
        self.total = self.total + self.acc.astype(object)
        self.acc[:] = 0
        self.acc_rows = 0


def _block_partials(Xb, yb, lo, hi):
    """(limb Gram matrix as Python ints, n, n_clipped, n_nonfinite) of one row block of any size.

    Sub-blocks of at most 2^20 rows are exact in binary64 (:class:`_LimbKernel`); their
    integer totals are added exactly.
    """
    Xb = np.asarray(Xb, dtype=float)
    yb = np.asarray(yb, dtype=float).reshape(-1)
    if len(Xb) != len(yb):
        raise ValueError(f"Row blocks of X and y must line up. Got blocks of {len(Xb)} and {len(yb)} rows instead.")
    Xb = Xb.reshape(len(yb), -1)
    rows = max(1, min(_BLOCK_ROWS, _EXACT_ROWS, len(yb)))
    kernel = _LimbKernel(lo, hi, rows)
    for start in range(0, len(yb), rows):
        kernel.add(Xb[start : start + rows], yb[start : start + rows])
    kernel.flush()
    return kernel.total, len(yb), kernel.n_clipped, kernel.n_bad


def _from_limbs(total, q):
    """ExactStatistic from the summed limb Gram matrix [high, low, 1] [high, low, 1]'."""
    hh, hl, ll = total[:q, :q], total[:q, q : 2 * q], total[q : 2 * q, q : 2 * q]
    s_high, s_low = total[2 * q, :q], total[2 * q, q : 2 * q]
    # v = (high 2^16 + low) 2^-32: v v' = (hh 2^32 + (hl + lh) 2^16 + ll) 2^-64.
    gram = hh * (1 << (2 * _LIMB_BITS)) + (hl + hl.T) * (1 << _LIMB_BITS) + ll
    sums = s_high * (1 << _LIMB_BITS) + s_low
    return ExactStatistic(gram, sums, int(total[2 * q, 2 * q]))


def _check_finite(n_nonfinite, owner, X, y):
    """Refuse NaN and inf, which the kernel found (``n_nonfinite``), naming the input that holds them.

    Only on that error path are the inputs read again, to count (for the curator) what
    each holds.
    """
    if not n_nonfinite:
        return
    for name, data in (("X", X), ("y", y)):
        if is_dask(data):
            import dask

            data = data.to_dask_array(lengths=True) if hasattr(data, "to_dask_array") else data
            nans, infs = dask.compute(dask.array.isnan(data).sum(), dask.array.isinf(data).sum())
        else:
            with numeric_input(owner, **{name: data}):
                data = np.asarray(data, dtype=float)
            nans, infs = np.isnan(data).sum(), np.isinf(data).sum()
        refuse_nonfinite(int(nans), int(infs), owner, name)
    raise ValueError(f"Input X or y of {owner} contains {n_nonfinite} NaN or infinite value(s).")  # not reached


def _numpy_partials(X, y, lo, hi, owner):
    """(ExactStatistic, n_clipped) of numpy X, y (blocks of bounded memory)."""
    total, _, n_clipped, n_bad = _block_partials(X, y, lo, hi)
    _check_finite(n_bad, owner, X, y)
    return _from_limbs(total, len(lo)), n_clipped


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
    if is_dask(X):
        return len(X.columns) if hasattr(X, "columns") else int(X.shape[1])
    shape = np.shape(X)
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D of shape (n_samples, n_features). Got shape {shape} instead.")
    return shape[1]


def _dask_blocks(X, y, owner):
    """Pairs of delayed row blocks (X_b, y_b) that line up."""
    import dask.array as da

    frames = [is_dask(v) and not isinstance(v, da.Array) for v in (X, y)]
    # optimize_graph=False keeps the original task keys, so blocks that X and y
    # share upstream (e.g. generated together) are computed once, not twice.
    if all(frames) and X.npartitions == y.npartitions:
        return list(zip(X.to_delayed(optimize_graph=False), y.to_delayed(optimize_graph=False)))
    # Otherwise work on Dask arrays; frames get their partition lengths (one pass).
    X = X.to_dask_array(lengths=True) if hasattr(X, "to_dask_array") else X
    y = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
    if not isinstance(X, da.Array):
        with numeric_input(owner, X=X):
            X = da.from_array(np.asarray(X, dtype=float), chunks=(_BLOCK_ROWS, -1))
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
        with numeric_input(owner, y=y):
            y = da.from_array(np.asarray(y, float), chunks=X.chunks[0])
    return list(zip(X.to_delayed(optimize_graph=False).ravel(), y.to_delayed(optimize_graph=False).ravel()))


def _check_dask_numeric(owner, **arrays):
    """Refuse a Dask input of a non-numeric dtype before computing: numpy's error would quote a value."""
    for name, v in arrays.items():
        if not is_dask(v):
            continue
        dt = getattr(v, "dtypes", None)  # a frame's dtypes, a Series' one dtype; arrays have dtype only
        dtypes = [v.dtype] if dt is None else [dt] if hasattr(dt, "kind") else list(dt)
        bad = [dt for dt in dtypes if getattr(dt, "kind", "O") not in "biuf"]
        if bad:  # a dtype is the schema, not the data
            raise TypeError(
                f"The {name!r} parameter of {owner} must be an array of real numbers. Got a Dask column of dtype "
                f"{bad[0]} instead."
            )


def _dask_partials(X, y, lo, hi, owner):
    """(ExactStatistic, n_clipped) of Dask X, y: integer partial sums per block, added on the driver."""
    import dask

    _check_dask_numeric(owner, X=X, y=y)
    parts = [dask.delayed(_block_partials)(xb, yb, lo, hi) for xb, yb in _dask_blocks(X, y, owner)]
    total = dask.delayed(_sum_partials)(parts, len(lo))
    G, n, n_clipped, n_bad = dask.compute(total)[0]
    _check_finite(n_bad, owner, X, y)
    exact = _from_limbs(G, len(lo))
    if exact.n_samples != n:  # the ones row counts the rows: a consistency check
        raise RuntimeError(f"{owner}: {exact.n_samples} rows summed but {n} seen.")
    return exact, n_clipped


def _sum_partials(parts, q):
    G = np.zeros((2 * q + 1, 2 * q + 1), dtype=object)
    for part in parts:
        G = G + part[0]  # Python ints: exact in any order
    return G, sum(p[1] for p in parts), sum(p[2] for p in parts), sum(p[3] for p in parts)
