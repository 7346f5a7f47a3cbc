"""Support functions of additive statistics T = sum_i t(x_i) from their per-record map.

Replacing one record gives S_T = t(D) - t(D), and Hull(S_T) = P - P with P = Hull(t(D)),
so h(c) = max_z c.t(z) - min_z c.t(z) (errata item 5); for add/remove neighbours
S_T = t(D) and -t(D), so h(c) = max(max_z c.t(z), -min_z c.t(z)).
"""

from __future__ import annotations

import numpy as np

from knorm._validation import check_vectors
from knorm.sensitivity.domains import Box

__all__ = ["black_box_parts", "finite_parts", "point_parts", "quadratic_parts"]

#: Multilinear statistics on at most this many record variables get the values at the 2^d
#: box vertices as record points (exact sensitivities by enumerating pairs).
MAX_VERTEX_DIM = 10


def _record_values(t, records):
    """t(records) for a user's per-record map ``t``, checked: shape (k, m) and finite."""
    pts = np.asarray(t(records), float)
    if pts.ndim != 2 or len(pts) != len(records):
        raise ValueError(
            f"The per-record map 't' must return shape (k, m) for k records. Got {pts.shape} for k = {len(records)} "
            "instead."
        )
    return check_vectors(pts, pts.shape[1], "t(records)", "SensitivitySpace.additive", public=True)


def _random_sign_rows(a, rng):
    return np.where(rng.random((len(a), 1)) < 0.5, -a, a)


def quadratic_parts(t, domain, add_remove):
    """Return the exact support and extreme points of a degree-2 statistic on its box.

    Parameters
    ----------
    t : QuadraticStatistic
        The per-record map, with its record box.
    domain : Box or None
        The declared domain; it must equal the box of ``t`` (None means that box).
    add_remove : bool
        True for add/remove neighbours, False for replace-one.

    Returns
    -------
    dict
        Keyword arguments of :class:`SensitivitySpace`: ``dim``, ``support`` (exact,
        by the face enumeration of :meth:`QuadraticStatistic.extremes`),
        ``extreme_points``, ``sampler``, and ``record_points`` (t at the box vertices
        when t is multilinear, else None).
    """
    if isinstance(domain, Box) and not (
        np.array_equal(domain.lower, t.lower) and np.array_equal(domain.upper, t.upper)
    ):
        raise ValueError(
            "The 'domain' parameter of SensitivitySpace.additive must equal the box of the QuadraticStatistic "
            f"(lower={t.lower.tolist()}, upper={t.upper.tolist()}) or be None. "
            f"Got lower={domain.lower.tolist()}, upper={domain.upper.tolist()} instead."
        )
    box = Box(t.lower, t.upper)

    def support(c):
        hi, lo, _, _ = t.extremes(c)
        return np.maximum(hi, -lo) if add_remove else hi - lo

    def extreme(c):
        hi, lo, zhi, zlo = t.extremes(c)
        if add_remove:
            return np.where((hi >= -lo)[:, None], t(zhi), -t(zlo))
        return t(zhi) - t(zlo)

    def sampler(n, rng):
        if add_remove:
            return _random_sign_rows(t(box.sample(n, rng)), rng)
        return t(box.sample(n, rng)) - t(box.sample(n, rng))

    # Enumerating pairs of the 2^d vertex values is exact and fast only for small d.
    points = t(t.vertices()) if t.is_multilinear and t.record_dim <= MAX_VERTEX_DIM else None
    return dict(dim=t.dim, support=support, extreme_points=extreme, sampler=sampler, record_points=points)


def finite_parts(t, domain, add_remove):
    """Return the exact support and extreme points over the finitely many record values t(z).

    Parameters
    ----------
    t : callable
        The per-record map, vectorised: (k, d) -> (k, m).
    domain : FiniteDomain
        The declared records.
    add_remove : bool
        True for add/remove neighbours, False for replace-one.

    Returns
    -------
    dict
        Keyword arguments of :class:`SensitivitySpace`: ``dim``, ``support`` (exact:
        a maximum over the record values), ``extreme_points``, ``sampler`` and
        ``record_points`` (the values t(z)).
    """
    return point_parts(_record_values(t, domain.records), add_remove)


def point_parts(pts, add_remove):
    """Return the exact support and extreme points over finitely many record values.

    Parameters
    ----------
    pts : ndarray of shape (k, m)
        The record values t(z).
    add_remove : bool
        True for add/remove neighbours, False for replace-one.

    Returns
    -------
    dict
        Keyword arguments of :class:`SensitivitySpace`, as :func:`finite_parts`.
    """

    def support(c):
        v = np.atleast_2d(c) @ pts.T
        return np.maximum(v.max(axis=1), -v.min(axis=1)) if add_remove else v.max(axis=1) - v.min(axis=1)

    def extreme(c):
        v = np.atleast_2d(c) @ pts.T
        if add_remove:
            hi = v.max(axis=1) >= -v.min(axis=1)
            return np.where(hi[:, None], pts[v.argmax(axis=1)], -pts[v.argmin(axis=1)])
        return pts[v.argmax(axis=1)] - pts[v.argmin(axis=1)]

    def sampler(n, rng):
        i, j = rng.integers(len(pts), size=(2, n))
        return _random_sign_rows(pts[i], rng) if add_remove else pts[i] - pts[j]

    return dict(dim=pts.shape[1], support=support, extreme_points=extreme, sampler=sampler, record_points=pts)


def black_box_parts(t, domain, add_remove):
    """Return the parts of a black-box map on a box: only a sampler, never a certificate.

    Parameters
    ----------
    t : callable
        The per-record map, vectorised: (k, d) -> (k, m).
    domain : Box
        The declared record box.
    add_remove : bool
        True for add/remove neighbours, False for replace-one.

    Returns
    -------
    dict
        Keyword arguments of :class:`SensitivitySpace`: ``dim`` and ``sampler`` (points
        of S_T from records of :meth:`Box.sample`, for diagnostics and estimates).
    """
    probe = _record_values(t, domain.sample(2, np.random.default_rng(0)))

    def sampler(n, rng):
        a = np.asarray(t(domain.sample(n, rng)), float)
        return _random_sign_rows(a, rng) if add_remove else a - np.asarray(t(domain.sample(n, rng)), float)

    return dict(dim=probe.shape[1], sampler=sampler)
