"""Shared plumbing of knorm.stats: declared domains, data in any container, the release itself."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from knorm._docs import fill_doc
from knorm._ingest import as_columns, check_bounds, is_dask, n_records, scan, warn_clipping
from knorm._validation import check_positive, param_error
from knorm.geometry import LpBall
from knorm.mechanisms import choose_gaussian, choose_mechanism
from knorm.stats._transforms import RoundToIntegers

__all__ = [
    "Request",
    "check_budget",
    "check_ddof",
    "check_neighbours",
    "check_one_column",
    "ingest",
    "publish",
    "publish_gaussian",
    "standard_box",
    "total",
]


@dataclass(frozen=True)
class Request:
    """The options of one release, checked once at the public function's door.

    The private helpers of :mod:`knorm.stats` pass this one object down to :func:`publish`
    instead of five loose arguments.

    Parameters
    ----------
    epsilon : float or None
        The pure epsilon-DP budget, already checked; None under rho.
    rng, accountant
        As for :meth:`knorm.mechanisms.KNormMechanism.release` (checked where the noise is drawn).
    label : str or None
        The caller's label; None (or '') lets each release name itself (:meth:`labelled`).
    owner : str
        The public function's name, for messages.
    rho : float or None, default None
        The rho-zCDP budget, already checked; None under epsilon. Exactly one of
        ``epsilon`` and ``rho`` is set.
    """

    epsilon: float | None
    rng: Any
    accountant: Any
    label: str | None
    owner: str
    rho: float | None = None

    @classmethod
    def checked(cls, owner, epsilon=None, *, rng, accountant, label, rho=None):
        """The request of the public function ``owner``, with exactly one of ``epsilon`` and ``rho`` checked."""
        epsilon, rho = check_budget(owner, epsilon, rho)
        return cls(epsilon, rng, accountant, label, owner, rho)

    def labelled(self, default):
        """This request, labelled ``default`` unless the caller gave a label."""
        return replace(self, label=self.label or default)

    def release(self, choice, value, names):
        """Release ``value`` by a chosen mechanism (:func:`~knorm.mechanisms.choose_mechanism`) for this request."""
        return choice.release(value, rng=self.rng, accountant=self.accountant, label=self.label, names=names)


def check_budget(owner, epsilon, rho):
    """Return (epsilon, rho), exactly one of them a checked float in (0, inf) and the other None.

    Neither is a TypeError (as a missing argument is), both a ValueError; each names both
    parameters and what they mean.
    """
    if epsilon is None and rho is None:
        raise TypeError(
            f"{owner} needs exactly one of 'epsilon' (a pure epsilon-DP budget) and 'rho' (a rho-zCDP budget, "
            "released with Gaussian noise). Got neither instead."
        )
    if epsilon is not None and rho is not None:
        raise ValueError(
            f"{owner} takes exactly one of 'epsilon' (a pure epsilon-DP budget) and 'rho' (a rho-zCDP budget, "
            f"released with Gaussian noise). Got epsilon={epsilon!r} and rho={rho!r} instead."
        )
    if rho is not None:
        return None, check_positive(rho, "rho", owner)
    return check_positive(epsilon, "epsilon", owner), None


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


def standard_box(lo, hi):
    """Return (c, a): doubles with [c - a, c + a] containing [lo, hi] exactly, a about (hi - lo) / 2.

    Standardised values (x - c) / a then lie in [-1, 1] for every x in [lo, hi] as real
    numbers, which is what the certified balls of the standardised statistics assume: c and
    a are rounded, so a is raised ulp by ulp until the containment holds in exact rational
    arithmetic (usually at once: for bounds such as (0, 10) both are exact).

    Parameters
    ----------
    lo, hi : array_like of shape (p,)
        The declared bounds (lo < hi).

    Returns
    -------
    c, a : ndarray of shape (p,)
        The centre and the half-width.
    """
    lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
    c = lo / 2.0 + hi / 2.0  # no overflow for huge bounds
    a = hi / 2.0 - lo / 2.0
    for j in range(len(lo)):  # a handful of columns
        while not (
            Fraction(c[j]) - Fraction(a[j]) <= Fraction(lo[j]) and Fraction(hi[j]) <= Fraction(c[j]) + Fraction(a[j])
        ):
            a[j] = math.nextafter(a[j], math.inf)
    return c, a


def total(values):
    """Return the column sums of per-record values (numpy or Dask), as a float array."""
    s = values.sum(axis=0)
    return np.asarray(s.compute() if is_dask(s) else s, dtype=float)


@fill_doc
def publish(
    value,
    candidates,
    space,
    request,
    *,
    names,
    key,
    counts=False,
    rounding_share=None,
    prefer_lattice=False,
    shapes=None,
    hull=None,
    basis=None,
    full=None,
):
    """Release ``value`` with the best certified candidate ball (epsilon) or Gaussian shape (rho).

    Parameters
    ----------
    value : ndarray or ExactSums
        The statistic (in the candidates' coordinates). An exact statistic (such as
        :class:`~knorm._exact.RecordSums`) is summed
        once the mechanism is chosen: in exact fixed point on a lattice release.
    candidates : dict of str to NormBall
        The balls to rank; 'l1' is added for the gain if absent.
    space : SensitivitySpace
        The statistic's sensitivity space: it certifies every candidate's sensitivity.
    request : Request
        epsilon, rng, accountant, label (already defaulted: :meth:`Request.labelled`) and
        owner of the release.
    names : tuple of str
        The names of the coordinates of ``value``.
    key : hashable or None
        The public inputs that determine ``space`` and ``candidates`` completely (the
        function, its bounds or sizes, the neighbours). With a key, the choice (the best
        ball, its certified sensitivity and the gain) is computed once per key: it depends
        on nothing else, never on the data, and the sensitivities and Monte Carlo volumes
        behind it can take seconds.
    counts : bool, default False
        The statistic is integer on every dataset (counts): it is released on the lattice
        Z^m without rounding or slack where the ball has a lattice sampler (for l1, the
        geometric mechanism).
    rounding_share : float, optional
        The largest share of Delta that the lattice's rounding slack may take (default:
        :data:`knorm.mechanisms.lattice.ROUNDING_SHARE`, 1%); a release that claims to
        match a one-dimensional optimum asks for less.
    prefer_lattice : bool, default False
        When the volume-best candidate has no practical lattice sampler, use the first
        lattice-capable candidate in the volume order instead (Notes).
    shapes : callable, optional
        Under rho: returns the closed-form Gaussian shapes of the statistic (a tuple of
        :class:`~knorm.mechanisms.gaussian_shapes.CertifiedShape`), built once per ``key``.
    hull : bool or HullPoints, optional
        Under rho: also fit the min-trace shape on certified vertices of S_T (True:
        :func:`~knorm.mechanisms.ellipsoid.hull_points` of ``space``; or the points).
    basis : sequence of ndarray, optional
        The symmetric family the fitted shape is sought in (see
        :func:`~knorm.mechanisms.gaussian_shapes.hull_shape`).
    full : ndarray of shape (m_full, m) or callable returning one, optional
        Under rho, for a statistic released in reduced coordinates: the linear map of the
        released noise to the noise of the full statistic the caller rebuilds; the shapes
        are ranked by the total variance there. A callable is called only under rho (the map is dense).

    Returns
    -------
    Release
        Under epsilon, by the candidate :func:`~knorm.mechanisms.choose_mechanism` picks
        (first in the volume order, paper Theorem "Entropy Ordering", unless ``counts`` or
        ``prefer_lattice`` asks for a switch, which the release's ``sampler`` states), with
        ``gain`` = how many times more epsilon Laplace needs for the same entropy. Under
        rho, by the Gaussian shape of least total variance (:func:`publish_gaussian`).
    """
    if request.rho is not None:
        return publish_gaussian(
            value, space, request, names=names, key=key, counts=counts, shapes=shapes, hull=hull, basis=basis, full=full
        )
    candidates = dict(candidates)
    candidates.setdefault("l1", LpBall(space.dim, 1))
    if counts and space.dim > 1:  # l_inf also has an exact integer law (better than l1 for many counts)
        candidates.setdefault("l_inf", LpBall(space.dim, math.inf))
    choice = choose_mechanism(
        space,
        request.epsilon,
        candidates,
        prefer_lattice=prefer_lattice,
        integer=counts,
        rounding_share=rounding_share,
        key=key,
        reduce=False,
        time_budget=None,  # these candidates all sample fast; the choice must not depend on the machine's load
        owner=request.owner,
    )
    return request.release(choice, value, names)


def publish_gaussian(value, space, request, *, names, key, counts=False, shapes=None, hull=None, basis=None, full=None):
    """Release ``value`` under rho-zCDP with the Gaussian shape of least total variance.

    Parameters
    ----------
    value : ndarray or ExactSums
        The statistic, in the coordinates of ``space``.
    space : SensitivitySpace
        Its sensitivity space: the spherical candidate's l2 sensitivity, the hull's vertices.
    request : Request
        With ``rho`` set.
    names : tuple of str
        The coordinates' names.
    key : hashable or None
        The public inputs that determine ``space`` and the shapes; the shapes and the
        choice at each rho are then built once and kept (a bounded cache).
    counts : bool, default False
        An integer statistic: the spherical candidate is the exact discrete Gaussian on
        Z^m, and a shaped (continuous) release is rounded to integers afterwards.
    shapes, hull, basis, full
        As for :func:`publish`.

    Returns
    -------
    Release
        With ``rho`` set. The candidates: the spherical Gaussian on the certified l2
        sensitivity (the exact lattice sampler), the closed-form shapes, and the fitted
        min-trace shape; the least total variance wins, but a shaped law (continuous, with
        the floating-point caveat) replaces the exact spherical one only when it cuts the
        total variance by more than 1% (:data:`knorm.mechanisms.choose_gaussian.SHAPE_MIN_GAIN`). The release's ``sampler``
        states the choice. For counts a shaped release is rounded to integers (a
        post-processing: its ``parent`` is the continuous release).
    """
    choice = choose_gaussian(
        space,
        request.rho,
        shapes=shapes,
        hull=hull,
        basis=basis,
        full=full() if callable(full) else full,  # a dense map, built only here (under rho)
        integer=counts,
        key=key,
        owner=request.owner,
    )
    mech, note = choice.mechanism, choice.note
    raw = mech.release(
        value, rng=request.rng, accountant=request.accountant, label=request.label, names=names, note=note
    )
    if counts and mech.lattice is None:
        return raw.postprocess(RoundToIntegers(), label=request.label, names=names)
    return raw


def finite_or_nan(x):
    """Return float(x), or nan for values that are not finite."""
    x = float(x)
    return x if math.isfinite(x) else math.nan


def check_one_column(X, owner):
    """Return the columns ``X`` if there is one, else refuse 'x'."""
    if X.shape[1] != 1:
        raise ValueError(f"The 'x' parameter of {owner} must be one column. Got {X.shape[1]} columns instead.")
    return X


def ingest(x, bounds, owner, *, one_column=False):
    """The door of a bounded statistic: (x as columns, lower, upper, how many values lie outside).

    Checks the data (:func:`knorm._ingest.as_columns`), the declared bounds, and counts the
    values outside them in the same pass that refuses NaN and inf (:func:`knorm._ingest.scan`;
    the curator is warned above 5%). The data is not copied: the private code clips it
    block by block where it reads it (:class:`knorm._exact.Records`).
    """
    X = as_columns(x, owner, finite=False)
    if one_column:
        check_one_column(X, owner)
    lo, hi = check_bounds(bounds, X.shape[1], owner)
    outside = scan(X, lo, hi, owner, warn=False)
    warn_clipping(outside, n_records(X) * X.shape[1], owner)  # points at the caller of the public function
    return X, lo, hi, outside
