"""Sensitivity spaces S_T and certified sensitivities (paper Section 2, Definitions
"Sensitivity Space" and "K-norm Sensitivity").

For an additive statistic T = sum_i t(x_i) with records in a domain D, replacing
one record gives S_T = t(D) - t(D), and Hull(S_T) = P - P with P = Hull(t(D)), whose
support function is h(c) = max_z c.t(z) - min_z c.t(z) (errata item 5). Since a
norm is convex, Delta_K(T) = sup over S_T of ||u||_K = sup over Hull(S_T), and by
duality Delta_K = sup_{c in K°} h(c), K° the polar of K. Every sensitivity below
is derived from h or from a finite enumeration, never from data or sampling,
unless it says kind='estimate'.
"""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_count, check_dim, check_rng, check_vectors
from knorm.geometry import LpBall, NormBall, ScaledBall
from knorm.geometry.duality import largest_norm
from knorm.geometry.induced._common import InducedBall
from knorm.sensitivity import hull_cache
from knorm.sensitivity.additive import black_box_parts, finite_parts, point_parts, quadratic_parts
from knorm.sensitivity.bounds import MAX_POLAR_DIM, block_bound, enumerate_sensitivity, polar_bound
from knorm.sensitivity.certificate import Sensitivity
from knorm.sensitivity.closed_hulls import finite_exact_hull
from knorm.sensitivity.domains import Box, FiniteDomain
from knorm.sensitivity.hull import TIME_LIMIT, certified_hull, inner_hull, outer_hull, support_points
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.reduction import AffineReduction, reduction_from_basis, span_basis

__all__ = ["SensitivitySpace"]


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
        Maps rows c to points of S_T attaining h(c) (used for lower bounds and
        inner hulls).
    sampler : callable, optional
        Maps (n, rng) to n points of S_T, for diagnostics and estimates only.
    record_points : array_like of shape (k, m), optional
        Finite set of per-record values t(z) whose hull is P (Hull S_T = P - P,
        or the hull of P and -P for add/remove neighbours), giving exact
        sensitivities for any norm by enumeration.
    statistic : QuadraticStatistic or callable, optional
        The per-record map t, when T = sum_i t(x_i).
    hull : NormBall, optional
        A ball known to be exactly Hull(S_T) (a closed form). For a flat space it may
        be a flat induced ball (:class:`~knorm.geometry.HistogramBall`,
        :class:`~knorm.geometry.VoteBall`) of the released coordinates, whose
        ``stat_dim`` is ``dim``: it then fixes the reduction and is the hull of
        :meth:`reduced`.
    candidates : dict of str to NormBall, optional
        Further certified balls worth ranking for this statistic.
    name : str, default ""
        Label for reports.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Replace-one (bounded) neighbours, the paper's Definition "DP", or
        add/remove-one (the paper's Remark on add/delete-DP), where
        S_T = t(D) and -t(D).
    support_exact : bool, default True
        False when ``support`` is only an upper bound of h (still certified);
        sensitivities derived from it are then labelled 'bound', not 'exact'.
    reduction : AffineReduction, optional
        Set when this space lives in the released coordinates of a flat statistic:
        how the full statistic is rebuilt from them (see :meth:`reduced`).
    record_point : array_like of shape (m,), optional
        One per-record value t(z) (any record), for spaces given by a support function
        only: it fixes where T lies, so that a flat space's dropped coordinates can be
        rebuilt (it plays no part in any sensitivity).

    Attributes
    ----------
    dim : int
        Dimension m.
    neighbours : str
        The neighbouring relation.
    statistic : QuadraticStatistic, callable or None
        The per-record map.
    hull : NormBall or None
        The exact Hull(S_T), when a closed form is known.
    candidates : dict of str to NormBall
        Extra candidate balls for :func:`knorm.mechanisms.choose_mechanism`.
    record_points : ndarray or None
        Per-record values whose hull is P, when finitely many suffice.
    name : str
        Label.
    support_exact : bool
        Whether the support function is exact rather than an upper bound.
    reduction : AffineReduction or None
        How the full statistic is rebuilt from this space's coordinates, when they
        are the released coordinates of a flat statistic.

    References
    ----------
    Paper Section 2, Definitions "Sensitivity Space" and "K-norm Sensitivity";
    errata item 5 (Hull(S_T) = P - P and its support function).

    Examples
    --------
    A count-like statistic whose records take the values 0, 1 or 3:

    >>> space = SensitivitySpace.additive(lambda z: z, FiniteDomain([[0.0], [1.0], [3.0]]))
    >>> space.sensitivity(1).value
    3.0

    A two-coordinate statistic of records in a box, with an exact support function:

    >>> from knorm.sensitivity import Box, QuadraticStatistic
    >>> t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [-1.0], [1.0])  # t(z) = (z, z^2)
    >>> space = SensitivitySpace.additive(t, Box([-1.0], [1.0]))
    >>> s = space.sensitivity(float("inf"))
    >>> s.kind, round(s.value, 6)
    ('exact', 2.0)
    """

    def __init__(
        self,
        dim,
        *,
        support=None,
        extreme_points=None,
        sampler=None,
        record_points=None,
        statistic=None,
        hull=None,
        candidates=None,
        name="",
        neighbours="replace",
        support_exact=True,
        reduction=None,
        record_point=None,
    ):
        self.dim = check_dim(dim, "SensitivitySpace")
        self.support_exact = bool(support_exact)
        self.neighbours = _check_neighbours(neighbours, "SensitivitySpace")
        self._support = support
        self._extreme_points = extreme_points
        self._sampler = sampler
        self.record_points = None if record_points is None else np.asarray(record_points, float)
        self.statistic = statistic
        self._flat_hull = None
        if isinstance(hull, InducedBall) and hull.flat and hull.stat_dim == self.dim:
            self._flat_hull, hull = hull, None  # the hull of the released coordinates
        self.hull = _check_ball(hull, self.dim, "hull")
        self.candidates = {str(k): _check_ball(b, self.dim, "candidates") for k, b in (candidates or {}).items()}
        self.name = name
        if reduction is not None and not isinstance(reduction, AffineReduction):
            raise TypeError(
                f"The 'reduction' parameter of SensitivitySpace must be an AffineReduction. Got {reduction!r} instead."
            )
        self.reduction = reduction
        self._record_point = (
            None
            if record_point is None
            else check_vectors(record_point, self.dim, "record_point", "SensitivitySpace", public=True)
        )
        self._known = {}  # ball key -> Sensitivity from a closed form (a proof)
        self._affine = _UNSET  # the detected affine reduction, once computed

    # -- construction ---------------------------------------------------------
    @classmethod
    def additive(cls, t, domain, *, name="", neighbours="replace", hull=None, candidates=None):
        """Build S_T for an additive statistic T = sum_i t(x_i) with records in a declared ``domain``.

        Parameters
        ----------
        t : QuadraticStatistic or callable
            The per-record map. A :class:`QuadraticStatistic` (degree <= 2
            polynomials on a box) gets an exact support function by face
            enumeration; a plain callable (vectorised, (k, d) -> (k, m)) does only
            on a :class:`FiniteDomain`, and is otherwise limited to estimates.
        domain : Box, FiniteDomain or None
            The declared record domain. For a :class:`QuadraticStatistic` it must be
            its box, or None for that box.
        name : str, default ""
            Label for reports.
        neighbours : {'replace', 'add_remove'}, default 'replace'
            For add/remove, S_T = t(D) and -t(D): h(c) = max(max c.t, -min c.t).
        hull : NormBall, optional
            A ball known to be exactly Hull(S_T) (a closed form).
        candidates : dict of str to NormBall, optional
            Further certified balls worth ranking.

        Returns
        -------
        SensitivitySpace
            S_T = t(D) - t(D) (replace-one) or t(D) and -t(D) (add/remove), with an
            exact support function unless ``t`` is a black-box map on a box.
        """
        add_remove = _check_neighbours(neighbours, "SensitivitySpace.additive") == "add_remove"
        if isinstance(t, QuadraticStatistic):
            parts = quadratic_parts(t, domain, add_remove)
        elif not callable(t):
            raise TypeError(
                f"The 't' parameter of SensitivitySpace.additive must be callable. Got {type(t).__name__} instead."
            )
        elif isinstance(domain, FiniteDomain):
            parts = finite_parts(t, domain, add_remove)
        elif isinstance(domain, Box):
            parts = black_box_parts(t, domain, add_remove)
        else:
            raise TypeError(
                "The 'domain' parameter of SensitivitySpace.additive must be a Box or FiniteDomain. "
                f"Got {type(domain).__name__} instead."
            )
        return cls(statistic=t, hull=hull, candidates=candidates, name=name, neighbours=neighbours, **parts)

    @classmethod
    def from_support(
        cls,
        dim,
        support,
        *,
        sampler=None,
        extreme_points=None,
        name="",
        exact=False,
        hull=None,
        candidates=None,
        neighbours="replace",
        record_point=None,
    ):
        """Build S_T from a certified support function of its hull (the user's proof).

        Parameters
        ----------
        dim : int
            Dimension m.
        support : callable
            Maps rows c to h(c); it must never under-state the support function.
        sampler : callable, optional
            Maps (n, rng) to n points of S_T, for diagnostics only.
        extreme_points : callable, optional
            Maps rows c to points of S_T attaining h(c).
        name : str, default ""
            Label.
        exact : bool, default False
            Pass True only if ``support`` equals h(c): sensitivities over facets are
            then labelled 'exact' instead of 'bound'.
        hull : NormBall, optional
            A ball known to be exactly Hull(S_T).
        candidates : dict of str to NormBall, optional
            Further certified balls worth ranking.
        neighbours : {'replace', 'add_remove'}, default 'replace'
            The neighbouring relation the support function is for.
        record_point : array_like of shape (dim,), optional
            One per-record value t(z): lets a flat space rebuild its dropped coordinates
            (see :meth:`affine_reduction`); never used for a sensitivity.

        Returns
        -------
        SensitivitySpace
            The space, with sensitivities labelled 'bound' unless ``exact``.
        """
        if not callable(support):
            raise TypeError(
                f"The 'support' parameter of SensitivitySpace.from_support must be callable. Got {type(support).__name__} instead."
            )
        return cls(
            dim,
            support=support,
            sampler=sampler,
            extreme_points=extreme_points,
            name=name,
            support_exact=exact,
            hull=hull,
            candidates=candidates,
            neighbours=neighbours,
            record_point=record_point,
        )

    def register_exact(self, ball, value, method):
        """Attach a closed-form sensitivity of ``ball`` (a proof in the paper or the errata).

        Parameters
        ----------
        ball : NormBall
            The ball; an equal ball (same parameters) gets the same value.
        value : float
            Delta_K(T), exactly.
        method : str
            The proof it comes from.
        """
        self._register(ball, Sensitivity(value, "exact", method))

    def register_bound(self, ball, value, method):
        """Attach a proved upper bound on the sensitivity of ``ball``.

        Parameters
        ----------
        ball : NormBall
            The ball.
        value : float
            An upper bound on Delta_K(T).
        method : str
            The proof it comes from.
        """
        self._register(ball, Sensitivity(value, "bound", method))

    def _register(self, ball, sens):
        if _check_ball(ball, self.dim, "ball") is None:
            raise TypeError(
                "The 'ball' parameter of SensitivitySpace.register_exact must be a NormBall. Got None instead."
            )
        self._check_registered(ball, sens)
        self._known[_ball_key(ball)] = sens

    def _check_registered(self, ball, sens):
        """Refuse a registered value that points of S_T we can reach cheaply already exceed.

        A proof can be attached to the wrong statistic. The points attaining h(c) along the
        coordinate axes (cheap: an axis involves few record variables) and, when the space
        can sample, 256 points of S_T give lower bounds on Delta_K that the value must meet.
        """
        points = []
        if self._extreme_points is not None:
            points.append(self.extreme_points(np.vstack([np.eye(self.dim), -np.eye(self.dim)])))
        if self._sampler is not None:
            points.append(self.sample(256, rng=0))
        if not points:
            return
        lower = float(np.max(ball.norm(np.vstack(points))))
        if lower > sens.value * (1 + 1e-8):
            raise ValueError(
                f"The 'value' parameter of SensitivitySpace.register_{sens.kind} must be at least the K-norm of "
                f"every point of S_T, and a point of S_T has norm {lower!r} in {ball!r}: the proof does not "
                f"match this statistic. Got {sens.value!r} instead."
            )

    # -- the set ----------------------------------------------------------------
    @property
    def has_support(self):
        """Whether a certified support function is available."""
        return self._support is not None

    def support(self, c):
        """Return the certified support function h(c) = sup over Hull(S_T) of c.u.

        Parameters
        ----------
        c : array_like of shape (m,) or (..., m)
            Directions.

        Returns
        -------
        ndarray of shape (...)
            The support function at each direction: exact, or a certified upper
            bound when ``support_exact`` is False.

        Raises
        ------
        NotImplementedError
            If the space has no certified support function (a black-box statistic).
        """
        if self._support is None:
            raise NotImplementedError(
                "This sensitivity space has no certified support function: give the statistic as a "
                "QuadraticStatistic, a FiniteDomain, or SensitivitySpace.from_support."
            )
        c = check_vectors(c, self.dim, "c", "SensitivitySpace.support", public=True)
        return self._h(np.atleast_2d(c)).reshape(c.shape[:-1])

    def _h(self, c):
        """The user's support function at the rows of ``c``, checked: finite and >= 0 (0 is in S_T)."""
        h = np.asarray(self._support(c), float)
        # Rounding may give -1e-14 along a flat direction: tolerated, and raised to 0 (never lowered).
        tiny = 1e-9 * (1.0 + float(np.max(np.abs(h), initial=0.0, where=np.isfinite(h))))
        bad = ~np.isfinite(h) | (h < -tiny)
        if np.any(bad):
            i = int(np.flatnonzero(bad.ravel())[0])
            raise ValueError(
                "The 'support' function of SensitivitySpace must return finite values >= 0 (0 is in S_T). "
                f"Got {float(h.ravel()[i])!r} at c = {np.round(np.atleast_2d(c)[i], 6).tolist()} instead."
            )
        return np.maximum(h, 0.0)

    def sample(self, n, *, rng=None):
        """Draw points of S_T from random neighbouring pairs, for diagnostics only.

        Parameters
        ----------
        n : int
            Number of points.
        rng : None, int, SeedSequence or Generator
            Source of randomness.

        Returns
        -------
        ndarray of shape (n, m)
            Differences T(X) - T(X') for random neighbours: they may miss the extreme
            parts of S_T, so nothing certified is ever derived from them.
        """
        if self._sampler is None:
            raise NotImplementedError("This sensitivity space has no sampler.")
        n, gen = check_count(n, "n", "SensitivitySpace"), check_rng(rng, "SensitivitySpace.sample")
        return np.asarray(self._sampler(n, gen), float)

    def extreme_points(self, c):
        """Return points of S_T attaining h(c), one for each row of ``c``.

        Parameters
        ----------
        c : array_like of shape (m,) or (k, m)
            Directions.

        Returns
        -------
        ndarray of shape (k, m)
            For each direction, a point u of S_T with c.u = h(c) (up to rounding).

        Raises
        ------
        NotImplementedError
            If the space has no extreme-point oracle.
        """
        c = np.atleast_2d(check_vectors(c, self.dim, "c", "SensitivitySpace.extreme_points", public=True))
        if self._extreme_points is None:
            raise NotImplementedError("This sensitivity space has no extreme-point oracle.")
        return np.asarray(self._extreme_points(c), float)

    def project(self, indices):
        """Return the sensitivity space of the sub-statistic T[indices].

        Parameters
        ----------
        indices : array_like of int
            Coordinates of T to keep, in order.

        Returns
        -------
        SensitivitySpace
            Its support function is h at directions supported on ``indices``, and
            its sampler, extreme points and record points are projected likewise (for
            a :class:`QuadraticStatistic` it is the space of the restricted statistic);
            registered closed forms are not carried over.
        """
        idx = np.asarray(indices, int)
        if isinstance(self.statistic, QuadraticStatistic):
            return self.restricted(idx)

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
            record_point=None if self._record_point is None else self._record_point[idx],
        )

    def restricted(self, rows, variables=None):
        """Return the space of the sub-statistic made of the coordinates ``rows`` of a QuadraticStatistic.

        Parameters
        ----------
        rows : array_like of int
            Output coordinates to keep, in order.
        variables : array_like of int, optional
            Record variables to keep (the rows must involve no other).

        Returns
        -------
        SensitivitySpace
            :meth:`additive` of ``statistic.restrict(rows, variables)``, same neighbours.
            It is the projection of S_T onto those coordinates, so its hull contains the
            projection of Hull(S_T).
        """
        t = self.statistic
        if not isinstance(t, QuadraticStatistic):
            raise TypeError(
                "SensitivitySpace.restricted needs a space built from a QuadraticStatistic. "
                f"Got a statistic of type {type(t).__name__} instead."
            )
        rows = np.asarray(rows, int)
        return SensitivitySpace.additive(
            t.restrict(rows, variables), None, name=f"{self.name}[{rows.tolist()}]", neighbours=self.neighbours
        )

    @property
    def blocks(self):
        """The separable blocks of T: lists of coordinates, each depending on its own record variables.

        For a :class:`QuadraticStatistic` on a box these are the blocks of
        :meth:`QuadraticStatistic.blocks`: Hull(S_T) is the product of the blocks'
        hulls under replace-one neighbours (see :mod:`knorm.sensitivity.product`).
        Otherwise one block holding every coordinate.
        """
        return [rows for rows, _ in self._statistic_blocks()]

    def _statistic_blocks(self):
        """(coordinates, variables) of each separable block, computed once."""
        if getattr(self, "_blocks", None) is None:
            t = self.statistic
            self._blocks = t.blocks() if isinstance(t, QuadraticStatistic) else [(np.arange(self.dim), None)]
        return self._blocks

    # -- flat spaces --------------------------------------------------------------
    def affine_reduction(self):
        """Return how a flat S_T is reduced to its affine span, or None when it is full-dimensional.

        Returns
        -------
        AffineReduction or None
            The released coordinates and the exact reconstruction of the others (see
            :mod:`knorm.sensitivity.reduction`); None when S_T spans R^m.

        Notes
        -----
        Detected exactly where the statistic says so: for a :class:`QuadraticStatistic`
        from the linear dependencies of its coefficient rows (a combination lambda with
        lambda.t(z) constant; under add/remove the constants too); for finite record
        values from their affine (add/remove: linear) span; for a flat induced hull from
        the ball; otherwise from the support function, where a direction c with
        h(c) + h(-c) = 0 (to 1e-8 of the largest width) is flat, found among the
        complements of the span of points attaining h and checked on a basis.
        """
        if self._affine is _UNSET:
            self._affine = self._detect_reduction()
        return self._affine

    def _detect_reduction(self):
        m = self.dim
        add_remove = self.neighbours == "add_remove"
        names = tuple(getattr(self.statistic, "names", ()))
        ball = self._flat_hull
        if ball is not None:
            # Its coordinates sum to n per_record_total: the last is rebuilt from the others.
            per = np.array([0.0 if add_remove else float(ball.per_record_total or 0.0)])
            return AffineReduction(m, np.arange(m - 1), -np.ones((1, m - 1)), per, f"the flat hull {ball!r}", names)
        t = self.statistic
        if isinstance(t, QuadraticStatistic):
            rows = t.coefficient_rows(with_const=add_remove)
            B = span_basis(rows.T)
            t0 = np.zeros(m) if add_remove else t(t._base)
            how = "linear dependencies of the coefficient rows"
        elif self.record_points is not None:
            pts = self.record_points
            B = span_basis(pts if add_remove else pts - pts[0])
            t0 = np.zeros(m) if add_remove else pts[0]
            how = "the affine span of the record values" if not add_remove else "the span of the record values"
        elif self._support is not None:
            B = self._support_span()
            t0 = np.zeros(m) if add_remove else self._record_point
            how = "directions c with h(c) + h(-c) = 0"
        else:
            return None
        if B.shape[1] == m:
            return None
        return reduction_from_basis(B, t0, how, names=names)

    def _support_span(self):
        """Span of Hull(S_T) from the support function alone: the complement of its verified flat directions.

        Points attaining h at generic directions (the extreme-point oracle, or gradients
        of h) span the hull up to rounding; the complement of their span proposes the flat
        directions, put in reduced row echelon form and rounded to 8, 6 or 4 decimals (so
        that rational relations such as sum u = 0 become exact despite the gradients'
        rounding), and they are kept only if h(c) + h(-c) <= 1e-8 times the largest
        coordinate width for each.
        """
        m = self.dim
        gen = np.random.default_rng(0x5EED)
        axes = np.vstack([np.eye(m), -np.eye(m)])
        scale = float(np.max(self._h(axes)))
        pts, _ = support_points(self, gen.standard_normal((4 * m + 8, m)))  # generic: no ties, no kinks
        for _ in range(3):
            B = span_basis(pts, rtol=1e-7)
            if B.shape[1] == m:
                return B
            N = np.linalg.svd(B, full_matrices=True)[0][:, B.shape[1] :].T  # complement, one row per direction
            flat = _verified_flat(self, N, scale)
            if flat is not None:
                return np.linalg.svd(flat.T, full_matrices=True)[0][:, len(flat) :]
            more, _ = support_points(self, gen.standard_normal((4 * m, m)))
            pts = np.vstack([pts, more])
        return np.eye(m)

    def reduced(self):
        """Return the space of the released coordinates of a flat statistic (itself when full-dimensional).

        Returns
        -------
        SensitivitySpace
            The projection of S_T onto the coordinates :meth:`affine_reduction` releases:
            full-dimensional, with ``reduction`` set so that the full statistic can be
            rebuilt from a release (:meth:`AffineReduction.expand`). For a
            :class:`QuadraticStatistic` it is the space of the restricted statistic; a
            flat induced hull becomes its ``hull``.

        Examples
        --------
        Counts of 3 categories (one per record) sum to n: two are released.

        >>> import numpy as np
        >>> space = SensitivitySpace.additive(lambda z: z, FiniteDomain(np.eye(3)))
        >>> sub = space.reduced()
        >>> sub.dim, sub.reduction.expand([4.0, 1.0], n_records=10).tolist()
        (2, [4.0, 1.0, 5.0])
        """
        red = self.affine_reduction()
        if red is None:
            return self
        idx = red.released
        name = f"{self.name or 'T'} (released coordinates {idx.tolist()})"
        t = self.statistic
        if isinstance(t, QuadraticStatistic):
            sub = SensitivitySpace.additive(t.restrict(idx), None, name=name, neighbours=self.neighbours)
        elif self.record_points is not None:
            parts = point_parts(self.record_points[:, idx], self.neighbours == "add_remove")
            sub = SensitivitySpace(name=name, neighbours=self.neighbours, **parts)
        else:
            sub = self.project(idx)
            sub.name = name
        flat_hull = self._flat_hull
        if flat_hull is None and self.record_points is not None and not isinstance(t, QuadraticStatistic):
            found = finite_exact_hull(self.record_points, self.neighbours)
            if found is not None and found[0].dim == len(idx) and np.array_equal(idx, np.arange(len(idx))):
                flat_hull = found[0]  # a flat induced ball of the first coordinates (histogram, votes)
        if flat_hull is not None:
            sub.hull = flat_hull
            sub.register_exact(flat_hull, 1.0, "the exact hull of the released coordinates (Joseph & Yu 2023)")
            if isinstance(flat_hull, InducedBall):  # its l_p maxima are the exact l_p sensitivities
                for p in (1.0, 2.0, math.inf):
                    sub.register_exact(LpBall(sub.dim, p), *flat_hull.max_lp_norm(p))
        sub.reduction = red
        return sub

    # -- sensitivities ------------------------------------------------------------
    def coordinate_sensitivities(self):
        """Return the per-coordinate sensitivities Delta(T_j) = h(e_j).

        Returns
        -------
        ndarray of shape (m,)
            Exact when the support function is, else certified upper bounds.
        """
        return self.support(np.eye(self.dim))

    def naive_sensitivity(self, p):
        """Return the per-coordinate bound ||(Delta(T_j))_j||_p of the paper's Eq. (ApproximateSensitivity).

        Parameters
        ----------
        p : float
            Exponent of the l_p norm, in [1, inf].

        Returns
        -------
        Sensitivity
            Kind 'bound': certified, since |u_j| <= Delta(T_j) for every u in S_T,
            but usually larger than the exact l_p sensitivity.
        """
        d = self.coordinate_sensitivities()
        val = float(np.linalg.norm(d, ord=p))
        return Sensitivity(val, "bound", f"naive per-coordinate bound (paper Eq. ApproximateSensitivity), p={p:g}")

    def sensitivity(self, ball):
        """Return Delta_K(T) = sup over S_T of ||u||_K, exact or as a certified upper bound.

        Parameters
        ----------
        ball : NormBall or float
            The ball K; a number p means the unit l_p ball.

        Returns
        -------
        Sensitivity
            Of kind 'exact' (closed form, enumeration, or support over facets) or
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
        known = self._known.get(_ball_key(ball))
        if known is not None:
            return known
        if isinstance(ball, ScaledBall):
            s = self._sensitivity(ball.base)
            f = ball.factor
            return Sensitivity(s.value / f, s.kind, s.method, None if s.lower is None else s.lower / f)
        if isinstance(ball, LpBall) and ball.radius != 1.0:
            unit = self._known.get(_ball_key(LpBall(ball.dim, ball.p)))
            if unit is not None:  # r B_p: sensitivity divided by r
                r = ball.radius
                return Sensitivity(
                    unit.value / r, unit.kind, unit.method, None if unit.lower is None else unit.lower / r
                )
        if self.record_points is not None:
            return enumerate_sensitivity(self, ball)
        if self._support is not None and self.dim == 1:
            # In R^1 every ball is [-r, r]: Delta = h(1) ||1||_K.
            val = float(self._h(np.ones((1, 1)))[0] * ball._gauge(np.ones(1)))
            kind = "exact" if self.support_exact else "bound"
            return Sensitivity(val, kind, f"{kind}: h(1) ||1||_K in dimension 1")
        if isinstance(ball, LpBall) and self._support is not None and len(self.blocks) > 1:
            return self._block_lp_sensitivity(ball)
        if self._support is None:
            raise NotImplementedError(
                "No certified sensitivity is available for a black-box statistic on a box: give t as a "
                "QuadraticStatistic, use a FiniteDomain, or supply a support function. "
                "estimate_sensitivity() gives an estimate, which mechanisms refuse by default."
            )
        over = largest_norm(ball, support=self._h)
        if over is not None:
            kind = "exact" if self.support_exact else "bound"
            return Sensitivity(over[0], kind, f"{kind}: {over[2]}")
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
        if self.dim <= MAX_POLAR_DIM:
            return polar_bound(self, ball)
        if isinstance(ball, LpBall):
            return block_bound(self, ball)
        raise NotImplementedError(
            f"No certified sensitivity method for {ball!r} in dimension {self.dim}: use a polytope, an l_p ball, "
            "an intersection of low-dimensional balls, or register a closed form."
        )

    def _block_lp_sensitivity(self, ball):
        """l_p sensitivity of a separable statistic from its blocks' (module notes of product).

        Under replace-one neighbours Hull(S_T) is the product of the blocks' hulls, and
        the supremum of sum_b ||u_b||_p^p over a product is the sum of the blocks'
        suprema: Delta_p = (sum_b Delta_p(T_b)^p)^(1/p) (the maximum for p = inf),
        exact when every block's is. Under add/remove S_T lies in the product of the
        blocks' own spaces, so the same value is a certified upper bound.
        """
        p, r = ball.p, ball.radius
        parts, seen = [], {}
        for rows, variables in self._statistic_blocks():
            sub = self.restricted(rows, variables)
            key = hull_cache.space_key(sub, f"lp-{p}")  # identical blocks (same columns) are computed once
            if key not in seen:
                seen[key] = sub._sensitivity(LpBall(len(rows), p))
            parts.append(seen[key])
        val = max(s.value for s in parts) if math.isinf(p) else sum(s.value**p for s in parts) ** (1 / p)
        exact = self.neighbours == "replace" and all(s.kind == "exact" for s in parts)
        kind = "exact" if exact else "bound"
        lows = [s.lower if s.lower is not None else s.value for s in parts]
        lower = None
        if not exact and self.neighbours == "replace":
            lower = max(lows) if math.isinf(p) else sum(v**p for v in lows) ** (1 / p)
        method = f"{kind}: l_p over the product of {len(parts)} separable blocks"
        return Sensitivity(val / r, kind, method, None if lower is None else lower / r)

    def estimate_sensitivity(self, ball, n=100_000, *, rng=None):
        """Return the largest ||u||_K over sampled points of S_T: an estimate, NOT safe for privacy.

        Parameters
        ----------
        ball : NormBall or float
            The ball K; a number p means the unit l_p ball.
        n : int, default 100000
            Number of sampled points of S_T (the extreme points in the coordinate
            directions are added when available).
        rng : None, int, SeedSequence or Generator
            Source of randomness.

        Returns
        -------
        Sensitivity
            Kind 'estimate': a lower bound on Delta_K, which mechanisms refuse
            unless the caller accepts the risk explicitly.
        """
        if not isinstance(ball, NormBall):
            ball = LpBall(self.dim, ball)
        u = self.sample(n, rng=rng)
        if self._extreme_points is not None:
            u = np.vstack([u, self.extreme_points(np.eye(self.dim))])
        return Sensitivity(float(np.max(ball._gauge(u))), "estimate", f"maximum over {len(u)} sampled points of S_T")

    # -- hulls ----------------------------------------------------------------------
    def inner_hull(self, n=20_000, *, rng=None):
        """Return the symmetric hull of sampled points of S_T, for diagnostics only.

        See :func:`knorm.sensitivity.hull.inner_hull`: the ball is flagged
        ``estimated`` and mechanisms refuse it by default.

        Parameters
        ----------
        n : int, default 20000
            Number of sampled points.
        rng : None, int, SeedSequence or Generator
            Randomness of the sample.

        Returns
        -------
        Polytope
            The hull of the sample, flagged ``estimated``.
        """
        return inner_hull(self, n, rng=rng)

    def outer_hull(self, directions=None, *, n_directions=None, rng=None, n_volume=200_000, time_limit=TIME_LIMIT):
        """Return a certified outer polytope of Hull(S_T) (see :func:`knorm.sensitivity.hull.outer_hull`).

        Parameters
        ----------
        directions : array_like of shape (k, m), optional
            Cutting directions; by default chosen adaptively.
        n_directions : int, optional
            Number of random directions (the original non-adaptive rule).
        rng : None, int, SeedSequence or Generator
            Randomness of the directions and of Monte Carlo volumes.
        n_volume : int, default 200000
            Monte Carlo points for the sandwich beyond qhull's reach.
        time_limit : float, default 3.0
            Seconds for the adaptive rule.

        Returns
        -------
        CertifiedHull
            The certified outer polytope, an inner polytope, their volume ratio, and any
            qhull failure.
        """
        return outer_hull(
            self, directions, n_directions=n_directions, rng=rng, n_volume=n_volume, time_limit=time_limit
        )

    def certified_hull(self, *, time_limit=TIME_LIMIT, progress=None, cache=True, rng=None):
        """Return the exact hull or a certified outer ball, structure first (see :func:`knorm.sensitivity.hull.certified_hull`).

        The ball's sensitivity (1, attained) is registered on this space.

        Parameters
        ----------
        time_limit : float, default 3.0
            Seconds for the build.
        progress : bool or None, default None
            A tqdm bar: None past two seconds, True always, False never.
        cache : bool, default True
            Reuse hulls built before for this statistic (memory and disk).
        rng : None, int, SeedSequence or Generator
            Randomness of candidate directions and Monte Carlo sandwiches.

        Returns
        -------
        CertifiedHull
            The ball, whether exact, its sandwich, build time, cache use and qhull failures.
        """
        return certified_hull(self, time_limit=time_limit, progress=progress, cache=cache, rng=rng)


_UNSET = object()


def _verified_flat(space, N, scale):
    """Rows spanning the proposed flat directions N, made exact where possible and checked on h; or None."""
    _, _, piv = _pivoted_qr(N)
    R = np.linalg.solve(N[:, piv[: len(N)]], N)  # reduced row echelon form: a canonical basis
    for rows in (np.round(R, 8), np.round(R, 6), np.round(R, 4), R):
        unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        width = space._h(unit) + space._h(-unit)
        if np.all(width <= 1e-8 * scale):
            return unit
    return None


def _pivoted_qr(N):
    """Column pivots of N (largest remaining column norm first), as in QR with column pivoting."""
    A = np.array(N, dtype=float)
    k, m = A.shape
    piv = np.arange(m)
    for i in range(min(k, m)):
        j = i + int(np.argmax(np.linalg.norm(A[i:, i:], axis=0)))
        A[:, [i, j]], piv[[i, j]] = A[:, [j, i]], piv[[j, i]]
        v = A[i:, i].copy()
        v[0] += np.copysign(np.linalg.norm(v), v[0] if v[0] != 0 else 1.0)
        nv = np.linalg.norm(v)
        if nv > 0:
            v /= nv
            A[i:, :] -= 2.0 * np.outer(v, v @ A[i:, :])
    return None, None, piv


def _check_neighbours(neighbours, owner):
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(
            f"The 'neighbours' parameter of {owner} must be 'replace' or 'add_remove'. Got {neighbours!r} instead."
        )
    return neighbours


def _ball_key(ball):
    """Registry key of a ball: its parameters, or the ball itself when it has none (never its id)."""
    key = ball.cache_key
    return ("instance", ball) if key is None else key


def _check_ball(ball, dim, name):
    if ball is None:
        return None
    if not isinstance(ball, NormBall) or ball.dim != dim:
        raise ValueError(
            f"The {name!r} parameter of SensitivitySpace must hold NormBalls of dimension {dim}. Got {ball!r} instead."
        )
    return ball
