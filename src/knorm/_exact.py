"""Exact sums of per-record values: the statistics a lattice release rounds without float error.

A sum of per-record values computed in binary64 depends on the order and the blocking of
the records, and can move a statistic beyond its declared sensitivity (Casacuberta et al.
2022). Here every record's value is rounded to a dyadic grid and the integers are added
exactly, so the statistic is an exact rational, the same bit for bit whatever the order of
the rows, the block size or the Dask partitioning, and the lattice release rounds it to
its spacing in integer arithmetic.

:class:`ExactSums` is the interface the mechanism calls; two layouts implement it:

* :class:`RecordSums` (here): columns of per-record values, rounded to the grid
  gamma 2^-20 of the release's lattice (known only once the mechanism is chosen, so the
  sums are computed then, block by block);
* ``knorm.models.sufficient.ExactStatistic``: the regression statistic, records on the
  grid 2^-32, its Gram matrix from integer limbs.
"""

from __future__ import annotations

import math

import numpy as np

from knorm._ingest import is_dask, n_records

__all__ = ["FIXED_POINT_BITS", "ExactSums", "Records", "RecordSums", "lattice_round"]

#: Fixed-point sums use the grid q = gamma / 2^FIXED_POINT_BITS (gamma: the release's lattice).
FIXED_POINT_BITS = 20
_INT64_ROOM = 2.0**62
# Fixed-point sums are added in two int64 halves of 31 bits: at most this many records.
_MAX_RECORDS = 1 << 31
# The largest integer below which every integer is a double (2^53).
_EXACT_INT = 1 << 53
# Values per block of the fixed-point sums (256 KiB of doubles: the block and its temporaries stay in cache).
_BLOCK_VALUES = 1 << 15
# 1.5 2^52: the doubles of [2^52, 2^53) are the integers, so fl(t + 1.5 2^52 q) puts t on the grid q.
_GRID_SHIFT = 1.5 * 2.0**52
# The bit path needs |round(t / q)| < 2^49 (bound = 2 magnitude / q + 1 below this) ...
_BITS_ROOM = 2.0**50
# ... and a block's integer sum below 2^63 in magnitude (m bound below this), recovered modulo 2^64.
_UINT64_ROOM = 2.0**64


class ExactSums:
    """The interface of an exact statistic, as :meth:`KNormMechanism.release` uses it.

    The mechanism receives such a statistic in place of a value and rounds it itself: on a
    lattice release it calls ``on_lattice(spacing, ball)``, which returns the statistic
    rounded to ``spacing`` Z^m in exact arithmetic and a certified bound e, in the ball's
    norm, on how far the *computation* can move a difference of neighbours beyond S_T; the
    noise then covers Delta + e (Casacuberta, Shoemate, Vadhan & Wagaman 2022 show the
    float sums that exceed a declared sensitivity). Continuous and non-private releases
    call ``resolve()``.

    Attributes
    ----------
    note : str
        A short phrase for the release's sampler description (how the sums were made).
    """

    note = "sums in exact fixed point"

    def resolve(self):
        """Return the statistic in binary64 (continuous or non-private releases)."""
        raise NotImplementedError

    def on_lattice(self, spacing, ball):
        """Return (the statistic rounded exactly to ``spacing`` Z^m, the certified computation error).

        The error bounds, in ``ball``'s norm, how much further the computation can move the
        difference of two neighbours' statistics than the exact statistic's own sensitivity
        allows; 0.0 when the statistic is exact.
        """
        raise NotImplementedError


def lattice_round(units, exponents, spacing, owner):
    """Return the lattice points spacing_j round(u_j 2^e_j / spacing_j), ties to even, exactly.

    Parameters
    ----------
    units : sequence of int
        Python integers u_j.
    exponents : sequence of int
        The statistic is T_j = u_j 2^e_j.
    spacing : array_like of shape (m,)
        Positive powers of two gamma_j (the lattice's spacing).
    owner : str
        Named in the errors.

    Returns
    -------
    ndarray of float
        The lattice points: no float rounding comes between the exact T and them.

    Raises
    ------
    ValueError
        If a spacing is not a positive power of two, or a quotient reaches 2^53 (it would
        not be an exact double).

    Notes
    -----
    gamma_j = 2^g_j, so T_j / gamma_j = u_j 2^(e_j - g_j): an integer shift, with the
    remainder compared with half the divisor (ties to even). The lattice release of
    :mod:`knorm.mechanisms.lattice` assumes exactly this rounding: its slack covers
    |R(T) - T| <= gamma / 2.
    """
    gamma = np.asarray(spacing, dtype=float).reshape(-1)
    if gamma.shape != (len(units),):
        raise ValueError(
            f"The 'spacing' parameter of {owner} must have shape ({len(units)},). Got shape {gamma.shape} instead."
        )
    out = np.empty(len(units))
    for i, (u, e, g) in enumerate(zip(units, exponents, gamma.tolist())):
        mantissa, exponent = math.frexp(g) if math.isfinite(g) else (0.0, 0)
        if mantissa != 0.5:
            raise ValueError(
                f"The 'spacing' parameter of {owner} must hold positive powers of two. Got {g!r} at index {i} instead."
            )
        shift = exponent - 1 - int(e)  # T / gamma = u 2^-shift
        if shift <= 0:
            quotient = int(u) << -shift
        else:
            quotient, rest = divmod(int(u), 1 << shift)  # floor division: rest >= 0
            half = 1 << (shift - 1)
            quotient += rest > half or (rest == half and quotient % 2 == 1)
        if abs(quotient) >= _EXACT_INT:
            raise ValueError(
                f"{owner}: coordinate {i} is beyond 2^53 lattice steps, the exact range of a double (the statistic "
                "is data: its size is not shown). Use a coarser lattice_spacing, or sampler='continuous'."
            )
        out[i] = math.ldexp(float(quotient), exponent - 1)
    return out


class Records:
    """Per-record values computed block by block from the data: no array of the data's size is made.

    Parameters
    ----------
    source : ndarray or dask array of shape (n, p)
        The data, checked at the door (finite).
    lower, upper : ndarray of shape (p,), optional
        Declared bounds: each block is clipped to them before ``fn`` (when ``clip``).
    fn : callable, optional
        The per-record map of a block (rows in, rows out, an (m, k) array); it must act on
        each row alone (so the sums do not depend on the blocking). Default: identity. The
        sums overwrite a block that is a new float64 array (a clip's or a map's output), never
        one that shares memory with ``source``.
    width : int, optional
        k, the number of columns ``fn`` returns (default p).
    clip : bool, default True
        Whether some value lies outside the bounds (the door's count): when False the
        clipping, a no-op, is skipped.
    """

    def __init__(self, source, lower=None, upper=None, fn=None, width=None, clip=True):
        self.source, self.lower, self.upper, self.fn = source, lower, upper, fn
        self.clip = bool(clip) and lower is not None
        self.width = source.shape[1] if width is None else int(width)

    def _map(self, block):
        if self.clip:
            block = block.clip(self.lower, self.upper)
        return block if self.fn is None else self.fn(block)

    def blocks(self, values=None):
        """Yield the per-record values of consecutive row blocks (numpy source), about ``values`` values each."""
        values = _BLOCK_VALUES if values is None else values  # read when called: tests vary it
        rows = max(1, values // max(1, self.source.shape[1], self.width))
        for start in range(0, self.source.shape[0], rows):
            yield self._map(self.source[start : start + rows])

    def dask_rows(self):
        """The per-record values as one lazy Dask array (Dask source)."""
        return self._map(self.source)


class RecordSums(ExactSums):
    """A statistic sum_i t(x_i), kept as per-record columns until the release's lattice is known.

    Parameters
    ----------
    *parts : RecordSums.exact(values) or (rows, magnitude, exact)
        In coordinate order: exact coordinates (such as the count n), or per-record values
        ``rows`` (numpy or Dask, shape (n,) or (n, k), or :class:`Records` computed block
        by block) whose column sums are the next coordinates, with a public bound
        ``magnitude`` on |t_j(x)| over the declared domain (a scalar or one per column)
        and whether the rows are exact (clipped data) or computed in binary64 (products,
        rounded once): a bool, or one per column.

    Notes
    -----
    On a lattice release of spacing gamma (:meth:`on_lattice`), each record is rounded to
    the fine grid q = gamma 2^-20, the integers are added exactly (any order, any
    blocking: the float-sum hazard of Casacuberta et al. 2022 is gone), and the sum is
    rounded to gamma in integer arithmetic. Neighbours then differ by d with
    |d_j - u_j| <= q_j + 2^-52 magnitude_j (per-record rounding, and the product's one
    rounding when inexact) for some u in S_T, so ||d||_K <= Delta + e with
    e = sum_j (q_j + 2^-52 magnitude_j) ||e_j||_K (triangle inequality): the mechanism
    covers Delta + e (``KNormMechanism(computation_error=e)``), about 1e-8 of Delta.

    **Exactness of the sums.** q is a power of two, so the record's integer
    k = round(t / q) (ties to even) is a function of the record alone, the same whatever
    the block it is in. Let U = 2 magnitude / q + 1 (public), so |k| < U / 2.

    * When U < 2^50 (every default lattice; the mean's (sum u, sum u^2) has U = 2^35 + 1),
      a block's integers are read off one addition: with C = 1.5 2^52 q, the exact t + C
      lies in [2^52 q, 2^53 q), where consecutive doubles are exactly q apart, so the
      rounded fl(t + C) is the multiple of q nearest t + C, ties to the even mantissa,
      i.e. C + q k (C / q = 1.5 2^52 is even), and, in that binade, its bit pattern read as
      an unsigned 64-bit integer is bits(C) + k. The block's bit patterns are summed in
      uint64 arithmetic, which wraps modulo 2^64 (defined behaviour); minus m bits(C) this
      is sum k modulo 2^64, and |sum k| < m U / 2 < 2^63 (each block has m U < 2^64, checked),
      so the representative in [-2^63, 2^63) is the block's exact integer sum. The same k
      as t / q rounded by ``np.rint`` (the other branch), bit for bit, in one pass with no
      scaling and no rounding call.
    * Otherwise (a very fine lattice) the records are scaled by the power of two 1 / q
      (exact), rounded by ``np.rint``, and the integers, below 2^62 (checked), are split
      into two int64 halves of 31 bits, each summed exactly (below m 2^31 < 2^63).

    Block sums are added as Python integers. Hence the sum is the exact sum of the
    per-record integers: independent of the row order, the block size and the Dask
    partitioning, bit for bit.
    """

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
            if not isinstance(rows, Records):
                rows = rows[:, None] if rows.ndim == 1 else rows
                rows = Records(rows)
            yield at, rows, np.broadcast_to(np.asarray(magnitude, dtype=float), (rows.width,)), exact
            at += rows.width

    def resolve(self):
        """Return the statistic as binary64 column sums (continuous or non-private releases)."""
        out = []
        for _, rows, mag, _ in self._blocks():
            if mag is None:
                out.append(rows)
            elif is_dask(rows.source):
                s = rows.dask_rows().sum(axis=0)
                out.append(np.asarray(s.compute(), dtype=float))
            else:  # block sums added with fsum: as close to the exact sum as binary64 allows
                sums = [b.sum(axis=0) for b in rows.blocks()]
                out.append(np.array([math.fsum(col) for col in zip(*sums)], dtype=float))
        return np.concatenate(out)

    def on_lattice(self, spacing, ball):
        """Return (the statistic rounded to ``spacing``, exactly; the certified computation error e)."""
        gamma = np.asarray(spacing, dtype=float)
        q = np.ldexp(gamma, -FIXED_POINT_BITS)
        out, err = [], np.zeros(len(gamma))
        for at, rows, mag, exact in self._blocks():
            k = len(rows) if mag is None else rows.width
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
            n = n_records(rows.source)
            if n >= _MAX_RECORDS:
                raise ValueError(
                    f"knorm.stats: {n} records exceed the exact int64 range of the fixed-point sums (at most "
                    f"2^{_MAX_RECORDS.bit_length() - 1}): split the data and release parts separately."
                )
            units = _dask_units(rows, qq) if is_dask(rows.source) else _numpy_units(rows, qq, mag)
            exponents = [math.frexp(float(v))[1] - 1 for v in qq]  # q = 2^e
            out.append(lattice_round(units, exponents, g, "knorm.stats (exact sums)"))
            err[at : at + k] = qq + np.where(np.broadcast_to(exact, (k,)), 0.0, 2.0**-52) * mag
        axes = np.asarray(ball.norm(np.eye(len(gamma))), dtype=float)
        return np.concatenate(out), float(np.sum(err * axes)) * (1 + 1e-9)


def _numpy_units(rows, q, magnitude):
    """The exact sums of round(t_j(x_i) / q_j) as Python ints, block by block (RecordSums, Notes)."""
    bound = float(np.max(2.0 * magnitude / q)) + 1.0  # public: > 2 |round(t / q)| for every record
    shift = _GRID_SHIFT * q  # C_j: the doubles in [2^52 q_j, 2^53 q_j) are q_j apart
    base = [int(b) for b in shift.view(np.uint64)]  # the bit patterns of the C_j
    # q is public: the bit path needs 2^52 q_j and 2^53 q_j normal doubles (q_j in [2^-1074, 2^970]).
    on_bits = bound < _BITS_ROOM and bool(np.all((q >= 2.0**-1000) & (q <= 2.0**900)))
    inv = 1.0 / q  # q a power of two: 1 / q is one too, exactly
    totals = [0] * rows.width
    buffer = None
    for block in rows.blocks():
        m = len(block)
        if _scratch(block, rows.source):  # a new array of the clip or the map: the grid is put on it in place
            buffer = block
        elif buffer is None or buffer.shape != block.shape:
            buffer = np.empty_like(block, dtype=float)  # the block's memory order: contiguous columns stay so
        if on_bits and m * bound < _UINT64_ROOM:
            np.add(block, shift, out=buffer)  # C_j + q_j round(t / q_j), ties to even: the record on the grid
            bits = buffer.view(np.uint64)  # = bits(C_j) + round(t / q_j): one pass, no rint, no scaling
            sums = [_signed(s - m * b) for s, b in zip(_column_sums(bits), base)]  # uint64 sums wrap mod 2^64
        else:  # a very fine lattice: round(t / q) up to 2^62, in two int64 halves of 31 bits (each sum < m 2^31)
            np.multiply(block, inv, out=buffer)  # exact: a power of two
            np.rint(buffer, out=buffer)  # the record on the grid q, ties to even
            ints = buffer.astype(np.int64)
            high, low = ints >> 31, ints & ((1 << 31) - 1)
            sums = [(h << 31) + lo for h, lo in zip(_column_sums(high), _column_sums(low))]
        totals = [t + s for t, s in zip(totals, sums)]
    return totals


def _column_sums(block):
    """The column sums of an integer block, as Python ints (in the block's own dtype, which may wrap)."""
    if block.flags.f_contiguous:  # contiguous columns (the maps' layout): one reduction
        return np.add.reduce(block, axis=0).tolist()
    # Column by column: numpy's sum(axis=0) of a narrow C-ordered block is 10-70x slower than
    # the sums of its strided columns (measured on (16384, 2) blocks); the values are the same.
    return [int(block[:, j].sum()) for j in range(block.shape[1])]


def _scratch(block, source):
    """Whether ``block`` is a writeable float64 array of its own (not a view of the data): the sums may overwrite it."""
    return block.dtype == np.float64 and block.flags.writeable and not np.may_share_memory(block, source)


def _signed(value):
    """The integer in [-2^63, 2^63) congruent to ``value`` modulo 2^64."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _dask_units(rows, q):
    """The exact sums of round(t_j(x_i) / q_j) of Dask rows, as Python ints (int64 halves per block)."""
    units = (rows.dask_rows() / q).round().astype(np.int64)  # q a power of two: exact division, |units| < 2^62
    high, low = units >> 31, units & ((1 << 31) - 1)
    parts = [np.asarray(v.compute(), dtype=np.int64) for v in (high.sum(axis=0), low.sum(axis=0))]
    return [(h << 31) + lo for h, lo in zip(parts[0].tolist(), parts[1].tolist())]
