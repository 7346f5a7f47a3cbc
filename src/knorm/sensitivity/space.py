"""Sensitivity spaces S_T and certified sensitivities (paper Section 2, Definitions
"Sensitivity Space" and "K-norm Sensitivity").

For an additive statistic T = sum_i t(x_i) with records in a domain D, replacing
one record gives S_T = t(D) - t(D), and Hull(S_T) = P - P with P = Hull(t(D)), whose
support function is h(c) = max_z c.t(z) - min_z c.t(z) (ERRATA.md item 5). Since a
norm is convex, Delta_K(T) = sup over S_T of ||u||_K = sup over Hull(S_T), and by
duality Delta_K = sup_{c in K°} h(c), K° the polar of K. Every sensitivity below
is derived from h or from a finite enumeration, never from data or sampling,
unless it says kind='estimate'.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import HalfspaceIntersection

from knorm._validation import as_real_array, check_count, check_dim, check_rng, check_vectors
from knorm.geometry.base import NormBall
from knorm.geometry.lp import LpBall
from knorm.geometry.scaled import ScaledBall
from knorm.sensitivity.certificate import Sensitivity
from knorm.sensitivity.quadratic import QuadraticStatistic

__all__ = ["Box", "FiniteDomain", "SensitivitySpace", "CertifiedHull"]

# Largest dimension where the polar polytope bound is computed with qhull.
_MAX_POLAR_DIM = 3
_POLAR_POINTS = {1: 2, 2: 4096, 3: 6000}
# Sign vectors enumerated for an exact l1 sensitivity: 2^(m-1) support evaluations.
_MAX_L1_ENUM_DIM = 14
# Pairs of record points compared at once in exact enumerations.
_PAIR_BLOCK = 1 << 20
# outer_hull: a width below this fraction of the largest one means S_T is flat.
# It is well above the 1e-10 relative slack of QuadraticStatistic's extremes.
_FLAT_TOL = 1e-8


@dataclass(frozen=True)
class Box:
    """A box record domain lower <= z <= upper (declared, never taken from data)."""

    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        lo = np.atleast_1d(as_real_array(self.lower, "lower", "Box"))
        hi = np.atleast_1d(as_real_array(self.upper, "upper", "Box"))
        if lo.shape != hi.shape or lo.ndim != 1:
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must be 1-D of equal length. Got shapes {lo.shape} and {hi.shape} instead."
            )
        if len(lo) == 0:
            raise ValueError("The 'lower' and 'upper' parameters of Box must have length >= 1. Got length 0 instead.")
        check_vectors(lo, len(lo), "lower", "Box")
        check_vectors(hi, len(hi), "upper", "Box")
        if not np.all(lo < hi):
            j = int(np.argmin(hi - lo))
            raise ValueError(
                f"The 'lower' and 'upper' parameters of Box must satisfy lower < upper. Got lower[{j}] = {float(lo[j])!r} >= upper[{j}] = {float(hi[j])!r} instead."
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def dim(self):
        return len(self.lower)

    def sample(self, n, rng):
        """Records for diagnostics: half uniform, half on random faces and vertices."""
        z = rng.uniform(self.lower, self.upper, size=(n, self.dim))
        k = n // 2
        pin = rng.random((k, self.dim)) < 0.5
        ends = np.where(rng.random((k, self.dim)) < 0.5, self.lower, self.upper)
        z[:k] = np.where(pin, ends, z[:k])
        return z


@dataclass(frozen=True)
class FiniteDomain:
    """A finite record domain: the rows of ``records``."""

    records: np.ndarray

    def __post_init__(self):
        r = as_real_array(self.records, "records", "FiniteDomain")
        r = r[:, None] if r.ndim == 1 else r
        check_vectors(r, r.shape[-1], "records", "FiniteDomain")
        if r.ndim != 2 or len(r) < 2:
            raise ValueError(
                f"The 'records' parameter of FiniteDomain must hold at least 2 records as rows. Got shape {r.shape} instead."
            )
        object.__setattr__(self, "records", r)

    @property
    def dim(self):
        return self.records.shape[1]

    def sample(self, n, rng):
        return self.records[rng.integers(len(self.records), size=n)]


@dataclass
class CertifiedHull:
    """Certified outer approximation of Hull(S_T), with an inner one and their sandwich.

    Attributes
    ----------
    outer : Polytope
        {u : c_k.u <= h(c_k)} for the directions c_k: contains Hull(S_T) (certified).
    inner : Polytope
        Symmetric hull of points of S_T attaining h(c_k): inside Hull(S_T).
    sandwich : Volume
        vol(inner) / vol(outer) <= vol(Hull S_T) / vol(outer): the outer ball is at
        most 1/sandwich times the optimal volume (exact with qhull in low dimension).
    """

    outer: object
    inner: object
    sandwich: object


class SensitivitySpace:
    """The sensitivity space S_T of a statistic T: X^n -> R^m.

    Build it with a factory: :meth:`additive` (a per-record map and a declared
    record domain) or :meth:`from_support` (a certified support function), or use
    the paper's closed forms in :mod:`knorm.sensitivity.closed_forms`.

    Parameters
    ----------
    dim : int
        Dimension m of T.
    support : callable, optional
        Certified support function h(c) of Hull(S_T), vectorised over rows of c.
    extreme_points : callable, optional
        c -> points of S_T attaining h(c) (used for lower bounds and inner hulls).
    sampler : callable, optional
        (n, rng) -> n points of S_T, for diagnostics and estimates only.
    record_points : array, optional
        Finite set of per-record values t(z) whose hull is P (Hull S_T = P - P,
        or the hull of P and -P for add/remove neighbours), giving exact
        sensitivities for any norm by enumeration.
    name : str
    support_exact : bool, default True
        False when ``support`` is only an upper bound of h (still certified);
        sensitivities derived from it are then labelled 'bound', not 'exact'.
    neighbours : {'replace', 'add_remove'}
        Replace-one (bounded) neighbours, the paper's Definition "DP", or
        add/remove-one (the paper's Remark on add/delete-DP), where
        S_T = t(D) and -t(D).
    """

    def __init__(
        self,
        dim,
        *,
        support=None,
        extreme_points=None,
        sampler=None,
        record_points=None,
        name="",
        neighbours="replace",
        support_exact=True,
    ):
        self.dim = check_dim(dim, "SensitivitySpace")
        self.support_exact = bool(support_exact)
        self.neighbours = _check_neighbours(neighbours, "SensitivitySpace")
        self._support = support
        self._extreme_points = extreme_points
        self._sampler = sampler
        self.record_points = None if record_points is None else np.asarray(record_points, float)
        self.name = name
        self._known = []  # (ball, Sensitivity) with closed-form values
        self.hull = None  # a ball known to be exactly Hull(S_T), if any

    # -- construction ---------------------------------------------------------
    @classmethod
    def additive(cls, t, domain, *, name="", neighbours="replace"):
        """S_T for T = sum_i t(x_i), records in a declared ``domain``.

        Parameters
        ----------
        t : QuadraticStatistic or callable
            The per-record map. A :class:`QuadraticStatistic` (degree <= 2
            polynomials on a box) gets an exact support function by face
            enumeration; a plain callable (vectorised, (k, d) -> (k, m)) does only
            on a :class:`FiniteDomain`, and is otherwise limited to estimates.
        domain : Box or FiniteDomain
        neighbours : {'replace', 'add_remove'}
            For add/remove, S_T = t(D) and -t(D): h(c) = max(max c.t, -min c.t).
        """
        add_remove = _check_neighbours(neighbours, "SensitivitySpace.additive") == "add_remove"
        if isinstance(t, QuadraticStatistic):
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

            points = t(t.vertices()) if t.is_multilinear else None
            return cls(
                t.dim,
                support=support,
                extreme_points=extreme,
                sampler=sampler,
                record_points=points,
                name=name,
                neighbours=neighbours,
            )
        if not callable(t):
            raise TypeError(
                f"The 't' parameter of SensitivitySpace.additive must be callable. Got {type(t).__name__} instead."
            )
        if isinstance(domain, FiniteDomain):
            pts = _record_values(t, domain.records)

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

            return cls(
                pts.shape[1],
                support=support,
                extreme_points=extreme,
                sampler=sampler,
                record_points=pts,
                name=name,
                neighbours=neighbours,
            )
        if not isinstance(domain, Box):
            raise TypeError(
                f"The 'domain' parameter of SensitivitySpace.additive must be a Box or FiniteDomain. Got {type(domain).__name__} instead."
            )
        probe = _record_values(t, domain.sample(2, np.random.default_rng(0)))

        def sampler(n, rng):
            a = np.asarray(t(domain.sample(n, rng)), float)
            return _random_sign_rows(a, rng) if add_remove else a - np.asarray(t(domain.sample(n, rng)), float)

        return cls(probe.shape[1], sampler=sampler, name=name, neighbours=neighbours)

    @classmethod
    def from_support(cls, dim, support, *, sampler=None, extreme_points=None, name="", exact=False):
        """S_T given by a certified support function of its hull (the user's proof).

        ``support`` must never under-state h(c); pass ``exact=True`` only if it
        equals h(c), which makes sensitivities over facets 'exact'.
        """
        if not callable(support):
            raise TypeError(
                f"The 'support' parameter of SensitivitySpace.from_support must be callable. Got {type(support).__name__} instead."
            )
        return cls(dim, support=support, sampler=sampler, extreme_points=extreme_points, name=name, support_exact=exact)

    def register_exact(self, ball, value, method):
        """Attach a closed-form sensitivity of ``ball`` (a proof in the paper or ERRATA)."""
        self._known.append((ball, Sensitivity(value, "exact", method)))

    # -- the set ----------------------------------------------------------------
    @property
    def has_support(self):
        return self._support is not None

    def support(self, c):
        """Certified support function h(c) = sup over Hull(S_T) of c.u."""
        if self._support is None:
            raise NotImplementedError(
                "This sensitivity space has no certified support function: give the statistic as a "
                "QuadraticStatistic, a FiniteDomain, or SensitivitySpace.from_support."
            )
        c = check_vectors(c, self.dim, "c", "SensitivitySpace.support")
        return self._h(np.atleast_2d(c)).reshape(c.shape[:-1])

    def _h(self, c):
        """The user's support function at the rows of ``c``, checked: finite and >= 0 (0 is in S_T)."""
        h = np.asarray(self._support(c), float)
        bad = ~np.isfinite(h) | (h < 0)
        if np.any(bad):
            i = int(np.flatnonzero(bad.ravel())[0])
            raise ValueError(
                "The 'support' function of SensitivitySpace must return finite values >= 0 (0 is in S_T). "
                f"Got {float(h.ravel()[i])!r} at c = {np.round(np.atleast_2d(c)[i], 6).tolist()} instead."
            )
        return h

    def sample(self, n, *, rng=None):
        """``n`` points of S_T from random neighbouring pairs (diagnostics only)."""
        if self._sampler is None:
            raise NotImplementedError("This sensitivity space has no sampler.")
        n, gen = check_count(n, "n", "SensitivitySpace"), check_rng(rng, "SensitivitySpace.sample")
        return np.asarray(self._sampler(n, gen), float)

    def extreme_points(self, c):
        """Points of S_T attaining h(c) for each row of ``c``."""
        c = np.atleast_2d(check_vectors(c, self.dim, "c", "SensitivitySpace.extreme_points"))
        if self._extreme_points is None:
            raise NotImplementedError("This sensitivity space has no extreme-point oracle.")
        return np.asarray(self._extreme_points(c), float)

    def project(self, indices):
        """The sensitivity space of the sub-statistic T[indices]."""
        idx = np.asarray(indices, int)

        def embed(c):
            full = np.zeros((len(c), self.dim))
            full[:, idx] = c
            return full

        sup = None if self._support is None else (lambda c: self._support(embed(np.atleast_2d(c))))
        ext = (
            None if self._extreme_points is None else (lambda c: self._extreme_points(embed(np.atleast_2d(c)))[:, idx])
        )
        smp = None if self._sampler is None else (lambda n, rng: self._sampler(n, rng)[:, idx])
        pts = None if self.record_points is None else self.record_points[:, idx]
        return SensitivitySpace(
            len(idx),
            support=sup,
            extreme_points=ext,
            sampler=smp,
            record_points=pts,
            name=f"{self.name}[{idx.tolist()}]",
            neighbours=self.neighbours,
            support_exact=self.support_exact,
        )

    # -- sensitivities ------------------------------------------------------------
    def coordinate_sensitivities(self):
        """Exact per-coordinate sensitivities Delta(T_j) = h(e_j)."""
        return self.support(np.eye(self.dim))

    def naive_sensitivity(self, p):
        """The per-coordinate bound of the paper's Eq. (ApproximateSensitivity): ||(Delta(T_j))_j||_p."""
        d = self.coordinate_sensitivities()
        val = float(np.linalg.norm(d, ord=p))
        return Sensitivity(val, "bound", f"naive per-coordinate bound (paper Eq. ApproximateSensitivity), p={p:g}")

    def sensitivity(self, ball):
        """Delta_K(T) = sup over S_T of ||u||_K, exact or as a certified upper bound.

        Parameters
        ----------
        ball : NormBall or float
            The ball K; a number p means the unit l_p ball.

        Returns
        -------
        Sensitivity
            kind 'exact' (closed form, enumeration, or support over facets) or
            'bound' (polar polytope or block bounds, with ``lower`` attained).

        Raises
        ------
        NotImplementedError
            If no certified method applies (a black-box statistic on a box); use
            :meth:`estimate_sensitivity` knowing that it is not safe.
        """
        if not isinstance(ball, NormBall):
            ball = LpBall(self.dim, ball)
        if ball.dim != self.dim:
            raise ValueError(
                f"The 'ball' parameter of SensitivitySpace.sensitivity must have dimension {self.dim}. Got {ball.dim} instead."
            )
        return self._sensitivity(ball)

    def _sensitivity(self, ball):
        for known, sens in self._known:
            if known is ball:
                return sens
        if isinstance(ball, ScaledBall):
            s = self._sensitivity(ball.base)
            f = ball.factor
            return Sensitivity(s.value / f, s.kind, s.method, None if s.lower is None else s.lower / f)
        if isinstance(ball, LpBall):
            for known, sens in self._known:
                if isinstance(known, LpBall) and known.p == ball.p and known.radius == 1.0 and known.dim == ball.dim:
                    r = ball.radius
                    return Sensitivity(
                        sens.value / r, sens.kind, sens.method, None if sens.lower is None else sens.lower / r
                    )
        if self.record_points is not None:
            return self._enumerate(ball)
        if self._support is None:
            raise NotImplementedError(
                "No certified sensitivity is available for a black-box statistic on a box: give t as a "
                "QuadraticStatistic, use a FiniteDomain, or supply a support function. "
                "estimate_sensitivity() gives an estimate, which mechanisms refuse by default."
            )
        rows = _facet_rows(ball)
        if rows is not None:
            kind = "exact" if self.support_exact else "bound"
            method = rows[1] if self.support_exact else "support bound over the facets"
            return Sensitivity(float(np.max(self._h(rows[0]))), kind, method)
        constraints = getattr(ball, "constraints", None)
        if constraints is not None:
            # ||u|| = max_j ||u[idx_j]||_{B_j}, so Delta = max_j Delta_{B_j}(T[idx_j]).
            parts = [self.project(idx)._sensitivity(b) for idx, b in constraints]
            kind = "exact" if all(s.kind == "exact" for s in parts) else "bound"
            lows = [s.lower if s.lower is not None else s.value for s in parts]
            return Sensitivity(
                max(s.value for s in parts),
                kind,
                "maximum over the intersected cylinders",
                max(lows) if kind == "bound" else None,
            )
        if self.dim <= _MAX_POLAR_DIM:
            return self._polar_bound(ball)
        if isinstance(ball, LpBall):
            return self._block_bound(ball)
        raise NotImplementedError(
            f"No certified sensitivity method for {ball!r} in dimension {self.dim}: use a polytope, an l_p ball, "
            "an intersection of low-dimensional balls, or register a closed form."
        )

    def _enumerate(self, ball):
        """Exact: max over pairs of record points of ||t_a - t_b||_K (vertices of P - P),
        or of ||t_a||_K for add/remove neighbours (vertices of Hull(P and -P))."""
        pts = self.record_points
        if self.neighbours == "add_remove":
            return Sensitivity(float(np.max(ball._gauge(pts))), "exact", f"enumeration of {len(pts)} record points")
        best, n = 0.0, len(pts)
        step = max(1, _PAIR_BLOCK // n)
        for s in range(0, n, step):
            diff = pts[s : s + step, None, :] - pts[None, :, :]
            best = max(best, float(np.max(ball._gauge(diff))))
        return Sensitivity(best, "exact", f"enumeration of {n} record points (extreme points of P)")

    def _polar_bound(self, ball):
        """Certified bound in dimension <= 3 through an outer polytope of the polar ball.

        For boundary points u_i of K, K° is inside Q = {c : c.u_i <= 1}, so
        Delta_K = sup_{K°} h <= max over the vertices of Q of h (h is convex).
        """
        m = self.dim
        dirs = _sphere_points(m, _POLAR_POINTS[m])
        u = dirs / ball._gauge(dirs)[:, None]
        if m == 1:
            verts = 1.0 / u
        else:
            hs = HalfspaceIntersection(np.hstack([u, -np.ones((len(u), 1))]), np.zeros(m))
            verts = hs.intersections
        upper = float(np.max(self._h(verts)))
        lower = None
        if self._extreme_points is not None:
            lower = float(np.max(ball._gauge(self._extreme_points(np.vstack([verts, dirs])))))
        return Sensitivity(upper, "bound", f"polar polytope bound ({len(u)} boundary points)", lower)

    def _block_bound(self, ball):
        """Certified l_p bound: ||u||_p^p is a sum over coordinate blocks of size <= 3."""
        p, r = ball.p, ball.radius
        blocks = [list(range(i, min(i + _MAX_POLAR_DIM, self.dim))) for i in range(0, self.dim, _MAX_POLAR_DIM)]
        parts = [self.project(b)._sensitivity(LpBall(len(b), p)) for b in blocks]
        if math.isinf(p):
            val = max(s.value for s in parts)
        else:
            val = sum(s.value**p for s in parts) ** (1 / p)
        method = f"block bound over {len(blocks)} coordinate blocks"
        naive = self.naive_sensitivity(p).value  # also certified; keep the smaller
        if naive < val:
            val, method = naive, "naive per-coordinate bound (smaller than the block bound)"
        lower = None
        if self._extreme_points is not None:
            c = np.vstack([np.eye(self.dim), _sphere_points(self.dim, 200)])
            lower = float(np.max(ball._gauge(self._extreme_points(c))))
        return Sensitivity(val / r, "bound", method, lower)

    def estimate_sensitivity(self, ball, n=100_000, *, rng=None):
        """Max of ||u||_K over sampled points of S_T: an estimate (a lower bound), NOT safe."""
        if not isinstance(ball, NormBall):
            ball = LpBall(self.dim, ball)
        u = self.sample(n, rng=rng)
        if self._extreme_points is not None:
            u = np.vstack([u, self.extreme_points(np.eye(self.dim))])
        return Sensitivity(float(np.max(ball._gauge(u))), "estimate", f"maximum over {len(u)} sampled points of S_T")

    # -- hulls ----------------------------------------------------------------------
    def inner_hull(self, n=20_000, *, rng=None):
        """Symmetric hull of sampled points of S_T: for plots and diagnostics only.

        The ball returned is flagged ``estimated``; mechanisms refuse it unless
        told that the risk is accepted.
        """
        from knorm.geometry.polytope import Polytope

        ball = Polytope.from_points(self.sample(n, rng=rng))
        ball.estimated = True
        return ball

    def outer_hull(self, directions=None, *, n_directions=None, rng=None, n_volume=200_000):
        """Certified outer polytope of Hull(S_T) from cutting planes c.u <= h(c).

        Parameters
        ----------
        directions : array (k, m), optional
            Cutting directions; by default the coordinate axes, the sign vectors
            (m <= 10) and random Gaussian directions.
        n_directions : int, optional
            Number of random directions (default 60 m).
        rng : None, int or Generator
        n_volume : int
            Monte Carlo points for the sandwich in dimensions beyond qhull's reach.

        Raises
        ------
        ValueError
            For a zero direction, directions that do not span R^m, or a space
            that is not full-dimensional (a width h(c) + h(-c) of about 0, as
            for a constant or duplicated coordinate of T): no polytope of R^m
            can then be a norm ball around it. Its sensitivities still work.
        """
        from knorm.geometry.polytope import Polytope

        gen = check_rng(rng, "outer_hull")
        if directions is None:
            n_directions = (
                60 * self.dim if n_directions is None else check_count(n_directions, "n_directions", "outer_hull")
            )
            parts = [np.eye(self.dim), gen.standard_normal((n_directions, self.dim))]
            if self.dim <= 10:
                parts.append(_sign_vectors(self.dim))
            directions = np.vstack(parts)
        c = np.atleast_2d(check_vectors(directions, self.dim, "directions", "outer_hull"))
        norms = np.linalg.norm(c, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise ValueError(
                "The 'directions' parameter of outer_hull must have non-zero rows. "
                f"Got a zero row at index {int(np.flatnonzero(norms == 0)[0])} instead."
            )
        rank = int(np.linalg.matrix_rank(c))
        if rank < self.dim:
            raise ValueError(
                f"The 'directions' parameter of outer_hull must span R^{self.dim}. Got rank {rank} instead."
            )
        c = c / norms
        h = self.support(c)
        # Hull(S_T) is symmetric, so its width along c is h(c) + h(-c) = 2 h(c).
        flat = h <= _FLAT_TOL * np.max(h)
        if np.any(flat):
            i = int(np.flatnonzero(flat)[0])
            raise ValueError(
                "outer_hull: the sensitivity space is not full-dimensional: its width h(c) + h(-c) along "
                f"c = {np.round(c[i], 6).tolist()} is {2 * h[i]:.3g}, next to a largest width of {2 * np.max(h):.3g} "
                "(a constant or duplicated coordinate of T, or another linear dependence between coordinates). "
                "Drop or merge that coordinate."
            )
        outer = Polytope.from_halfspaces(np.vstack([c, -c]), np.concatenate([h, h]))
        inner = Polytope.from_points(self.extreme_points(c))
        return CertifiedHull(outer, inner, _volume_ratio(inner, outer, gen, n_volume))


def _record_values(t, records):
    """t(records) for a user's per-record map ``t``, checked: shape (k, m) and finite."""
    pts = np.asarray(t(records), float)
    if pts.ndim != 2 or len(pts) != len(records):
        raise ValueError(
            f"The per-record map 't' must return shape (k, m) for k records. Got {pts.shape} for k = {len(records)} "
            "instead."
        )
    return check_vectors(pts, pts.shape[1], "t(records)", "SensitivitySpace.additive")


def _check_neighbours(neighbours, owner):
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(
            f"The 'neighbours' parameter of {owner} must be 'replace' or 'add_remove'. Got {neighbours!r} instead."
        )
    return neighbours


def _random_sign_rows(a, rng):
    return np.where(rng.random((len(a), 1)) < 0.5, -a, a)


def _volume_ratio(inner, outer, rng, n):
    from knorm.geometry.base import Volume

    vi, vo = inner.volume(rng=rng, n_samples=n), outer.volume(rng=rng, n_samples=n)
    if vi.exact and vo.exact:
        return Volume(vi / vo, exact=True, method="qhull volumes")
    u = outer.sample_uniform(min(n, 20_000), rng=rng)
    frac = float(np.mean(inner.contains(u)))
    se = math.sqrt(max(frac * (1 - frac), 1 / len(u)) / len(u))
    return Volume(frac, exact=False, stderr=se, method=f"fraction of {len(u)} uniform outer points in the inner hull")


def _facet_rows(ball):
    """Rows g_i with ||u||_K = max_i g_i.u, when K is a polytope (or l_inf, small l1)."""
    if isinstance(ball, LpBall):
        m, r = ball.dim, ball.radius
        if math.isinf(ball.p):
            return np.vstack([np.eye(m), -np.eye(m)]) / r, "exact: support over the coordinate axes"
        if ball.p == 1 and m <= _MAX_L1_ENUM_DIM:
            return _sign_vectors(m) / r, "exact: support over the sign vectors"
        return None
    hs = getattr(ball, "halfspaces", None)
    if hs is not None and getattr(ball, "constraints", None) is None:
        return hs[0], "exact: support over the facets"
    return None


def _sign_vectors(m):
    """The 2^(m-1) sign vectors with first entry +1 (their negatives complete the set)."""
    rest = list(itertools.product((1.0, -1.0), repeat=m - 1))
    return np.hstack([np.ones((len(rest), 1)), np.array(rest, dtype=float).reshape(len(rest), m - 1)])


def _sphere_points(m, n):
    """Deterministic, well-spread unit vectors in R^m (both signs included)."""
    if m == 1:
        return np.array([[1.0], [-1.0]])
    if m == 2:
        t = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return np.stack([np.cos(t), np.sin(t)], axis=1)
    if m == 3:
        i = np.arange(n) + 0.5
        phi = np.arccos(1 - 2 * i / n)
        theta = np.pi * (1 + 5**0.5) * i
        return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)
    g = np.random.default_rng(12345).standard_normal((n, m))
    return g / np.linalg.norm(g, axis=1, keepdims=True)
