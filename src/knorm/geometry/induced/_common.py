"""What the induced-norm balls share: neighbour relations, exact volumes, sensitivities, reduced coordinates."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from knorm._validation import check_count, check_vectors, param_error
from knorm.geometry import NormBall, Volume

__all__ = ["NEIGHBOURS", "InducedBall", "check_neighbours", "check_l0_bound", "exact_volume", "exact_log_volume"]

#: "replace": neighbours differ in one record, S = t(D) - t(D) (the library's
#: convention, knorm.sensitivity); "add_remove": one record is added or removed,
#: S = t(D) u -t(D) (Joseph & Yu's convention).
NEIGHBOURS = ("replace", "add_remove")

_P_RULE = "1, 2 or inf"


def check_neighbours(neighbours, owner):
    """Return ``neighbours`` if it is one of :data:`NEIGHBOURS`."""
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise param_error("neighbours", owner, f"one of {NEIGHBOURS}", neighbours)
    return neighbours


def check_l0_bound(l0_bound, dim, owner):
    """Return ``l0_bound`` as an int in [1, dim]."""
    rule = f"an int in the range [1, {dim}] (the dimension)"
    if isinstance(l0_bound, bool) or not isinstance(l0_bound, numbers.Integral):
        raise param_error("l0_bound", owner, rule, l0_bound, TypeError)
    if not 1 <= int(l0_bound) <= dim:
        raise param_error("l0_bound", owner, rule, l0_bound)
    return int(l0_bound)


def _check_p(p, owner):
    if p is None:
        return None
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or float(p) not in (1.0, 2.0, math.inf):
        raise param_error("p", owner, _P_RULE, p, TypeError if not isinstance(p, numbers.Real) else ValueError)
    return float(p)


def exact_volume(frac, method):
    """A rational volume as an exact :class:`Volume` (inf past the float range: use the log-volume)."""
    try:
        value = float(frac)
    except OverflowError:
        value = math.inf
    return Volume(value, exact=True, method=method)


def exact_log_volume(frac, method):
    """Take the log of a positive rational, from the logs of its integer numerator and denominator (no overflow)."""
    frac = Fraction(frac)
    return Volume(math.log(frac.numerator) - math.log(frac.denominator), exact=True, method=method)


class InducedBall(NormBall):
    """Base of the balls induced by a statistic's sensitivity space (the convex hull of S).

    Subclasses set ``stat_dim``, ``neighbours``, ``flat`` and ``per_record_total``
    and implement ``_volume_fraction`` (the exact volume as a Fraction),
    ``_lp_sensitivity(p)`` and ``_volume_method``.

    Parameters
    ----------
    dim : int
        Dimension of the released coordinates.
    """

    #: True when S spans a hyperplane {sum t = const}: the ball lives in the first
    #: stat_dim - 1 coordinates and the last one is reconstructed exactly.
    flat = False
    #: For flat balls, the sum of each record's contribution t(x) (public).
    per_record_total: float | None = None
    _volume_method = ""
    #: Dimension of the full statistic (dim + 1 for flat balls).
    stat_dim: int
    neighbours: str

    def _volume_fraction(self):
        """Return the exact volume as a Fraction (subclasses)."""
        raise NotImplementedError

    def _lp_sensitivity(self, p):
        """Return (max over K of ||u||_p, formula) for p in {1, 2, inf} (subclasses)."""
        raise NotImplementedError

    # -- reduced coordinates ---------------------------------------------------
    def reduce(self, t):
        """Map full statistics to the coordinates this ball releases.

        Parameters
        ----------
        t : array_like of shape (..., stat_dim)
            Values of the full statistic.

        Returns
        -------
        ndarray of shape (..., dim)
            The first ``dim`` coordinates (all of them unless the ball is flat).
        """
        t = check_vectors(t, self.stat_dim, "t", f"{type(self).__name__}.reduce")
        return t[..., : self.dim].copy()

    def expand(self, v, n_records=None):
        """Map released coordinates back to the full statistic.

        Parameters
        ----------
        v : array_like of shape (..., dim)
            Released (for instance noisy) coordinates.
        n_records : int, optional
            The public number of records, needed when the ball is flat: the
            dropped coordinate is n_records * per_record_total - sum(v).
            Ignored otherwise.

        Returns
        -------
        ndarray of shape (..., stat_dim)
            The full statistic; for flat balls its coordinates sum to
            n_records * per_record_total exactly (up to rounding).
        """
        owner = f"{type(self).__name__}.expand"
        v = check_vectors(v, self.dim, "v", owner)
        if not self.flat:
            return v.copy()
        if n_records is None:
            raise param_error("n_records", owner, "an int >= 0 (the public number of records)", n_records, TypeError)
        total = check_count(n_records, "n_records", owner) * self.per_record_total
        return np.concatenate([v, (total - v.sum(axis=-1))[..., None]], axis=-1)

    def _embed(self, v):
        """Released coordinates of a sensitivity vector -> its full form (last = -sum)."""
        if not self.flat:
            return v
        return np.concatenate([v, -v.sum(axis=-1, keepdims=True)], axis=-1)

    # -- exact quantities ------------------------------------------------------
    def _volume(self, rng=None, n_samples=None):
        return exact_volume(self._volume_fraction(), self._volume_method)

    def _log_volume(self, rng=None, n_samples=None):
        return exact_log_volume(self._volume_fraction(), self._volume_method)

    def max_lp_norm(self, p):
        """Return the largest l_p norm of a point of the ball, with the formula used.

        K is the convex hull of the sensitivity space S and a norm is convex, so this is
        also sup over S of ||u||_p: the statistic's exact l_p sensitivity
        (:func:`knorm.sensitivity.induced_space` registers it as such).

        Parameters
        ----------
        p : {1, 2, inf}
            The exponent, in the released coordinates.

        Returns
        -------
        value : float
            max over K of ||u||_p.
        method : str
            The closed form.
        """
        p = _check_p(p, f"{type(self).__name__}.max_lp_norm")
        if p is None:
            raise param_error("p", f"{type(self).__name__}.max_lp_norm", _P_RULE, p, TypeError)
        value, method = self._lp_sensitivity(p)
        return float(value), method
