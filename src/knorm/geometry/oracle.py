"""Norm balls known only through a membership oracle and a bounding box."""

from __future__ import annotations

import numpy as np

from knorm._validation import check_count, check_dim, check_positive, check_rng
from knorm.geometry.base import NormBall, NotANormBallError

__all__ = ["OracleBall"]

# Relative tolerance of the gauge bisection.
_GAUGE_RTOL = 1e-12
_MAX_BISECTIONS = 200
# Inner-radius search: halve from the smallest box half-width at most this often.
_MAX_HALVINGS = 60
# The check run by __init__: cheap, and deterministic through a fixed seed.
_INIT_CHECK_POINTS = 2000
_INIT_CHECK_SEED = 0x6B6E6F72
# Boundary points used by check() are pulled inside by this relative margin so
# that rounding in the oracle cannot produce a false convexity witness.
_BOUNDARY_MARGIN = 1e-8


class OracleBall(NormBall):
    """A norm ball given by a vectorised membership function and a bounding box.

    Parameters
    ----------
    member : callable
        ``member(U)`` takes an array of shape (n, dim) and returns a boolean array
        of shape (n,): whether each row lies in K (a closed set).
    bounding_box : float or array_like of shape (dim,)
        Certified half-widths b with K inside [-b, b]; a scalar needs ``dim``.
    dim : int, optional
        Dimension; inferred from ``bounding_box`` when it is an array.
    inner_radius : float, optional
        A radius r such that the 2 dim points ±r e_j are members; by convexity
        and symmetry the cross-polytope r B_1 then lies in K, which brackets the
        gauge from above by ||u||_1 / r. It is verified. By default the largest
        r = min(b) 2^-k (k = 0, 1, ...) for which those points are members is used.
    name : str, optional
        Label for ``repr``.
    validate : bool, default True
        Run a cheap, deterministic :meth:`check` (2000 points, fixed seed) now.

    Raises
    ------
    NotANormBallError
        If the origin or the points ±r e_j are not members, or the initial check
        finds a violation.

    Notes
    -----
    The gauge ||u||_K = inf{t > 0 : u / t in K} is found by vectorised bisection
    on t, to relative tolerance 1e-12, between max_j |u_j| / b_j (K lies in the
    box) and ||u||_1 / r (r B_1 lies in K); membership of u / t is monotone in t
    because K is convex and contains 0. The brief suggested an inner cube found
    from its corners; the cross-polytope needs 2 dim oracle calls instead of 2^dim
    and gives the same certified bracket up to a factor of at most dim.

    The volume is a labelled Monte Carlo estimate and sampling is exact rejection
    from the bounding box (Algorithm "Sampling from K-Norm Mechanism with
    Rejection Sampling" of the paper's appendix). The support function is
    unknown.

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (norm balls) and the appendix, Subsection
    "Implementing K-Norm Mechanisms" (sampling from a membership function I_K).

    Examples
    --------
    >>> import numpy as np
    >>> disk = OracleBall(lambda U: (U**2).sum(axis=1) <= 1.0, 1.0, dim=2)
    >>> round(float(disk.norm([3.0, 4.0])), 9)
    5.0
    """

    def __init__(self, member, bounding_box, *, dim=None, inner_radius=None, name=None, validate=True):
        owner = "OracleBall"
        if not callable(member):
            raise TypeError(
                f"The 'member' parameter of {owner} must be a callable. Got {type(member).__name__} instead."
            )
        box, dim = _check_box(bounding_box, dim, owner)
        super().__init__(dim)
        self.member = member
        self._box = box
        self.name = None if name is None else str(name)
        if not self._member(np.zeros((1, dim)))[0]:
            raise NotANormBallError(
                f"{owner}: the origin is not a member, so the set is not absorbing (not a norm ball)."
            )
        if inner_radius is None:
            self.inner_radius = self._find_inner_radius()
        else:
            r = check_positive(inner_radius, "inner_radius", owner)
            witness = self._axis_witness(r)
            if witness is not None:
                raise NotANormBallError(
                    f"{owner}: the given inner_radius {r!r} is too large: the point {witness.tolist()!r} "
                    "is not a member (every ±inner_radius e_j must be)."
                )
            self.inner_radius = r
        if validate:
            self._falsify(_INIT_CHECK_POINTS, np.random.default_rng(_INIT_CHECK_SEED))

    # -- public ------------------------------------------------------------
    def check(self, n=20_000, *, rng=None):
        """Search for a witness that K is not a norm ball; raise if one is found.

        This is a falsification search, not a proof: passing it means no violation
        was found among the points tried. Points are drawn uniformly from boxes
        s [-b, b] at scales s = 2, 1, 1/2, ... down to about the inner radius,
        and the members found are also moved radially to just inside the boundary.
        Then it tests that

        - bounded: no member lies outside the bounding box;
        - symmetric: -u is a member for each member u;
        - convex: random convex combinations of pairs of members are members;
        - absorbing: the origin and ±r e_j (r the inner radius) are members.

        Parameters
        ----------
        n : int, default 20000
            Number of box points drawn (the oracle is called on a few times more).
        rng : None, int, SeedSequence or Generator
            Randomness of the search.

        Returns
        -------
        OracleBall
            This ball, unchanged, when no violation was found.

        Raises
        ------
        NotANormBallError
            With the witness point(s), if a violation is found.
        """
        n = check_count(n, "n", "OracleBall.check")
        if n < 1:
            raise ValueError(f"The 'n' parameter of OracleBall.check must be an int >= 1. Got {n!r} instead.")
        self._falsify(n, check_rng(rng))
        return self

    # -- private -------------------------------------------------------------
    def _cache_key(self):
        # The membership function is a parameter of the ball: the key holds it, not its id.
        return ("OracleBall", self.dim, self.member, tuple(self._box.tolist()), self.inner_radius)

    def _member(self, U):
        """Call the oracle on rows U (n, dim) and check its answer."""
        if len(U) == 0:
            return np.zeros(0, dtype=bool)
        res = np.asarray(self.member(U))
        if res.shape != (len(U),) or res.dtype.kind not in "biu":
            raise TypeError(
                f"The 'member' function of OracleBall must return a boolean array of shape "
                f"({len(U)},) for an input of shape {U.shape}. Got {res.dtype} of shape {res.shape} instead."
            )
        return res.astype(bool, copy=False)

    def _axis_witness(self, r):
        """A point ±r e_j that is not a member, or None."""
        P = np.vstack([r * np.eye(self.dim), -r * np.eye(self.dim)])
        bad = ~self._member(P)
        return P[np.argmax(bad)] if bad.any() else None

    def _find_inner_radius(self):
        r = float(self._box.min())
        for _ in range(_MAX_HALVINGS):
            if self._axis_witness(r) is None:
                return r
            r *= 0.5
        raise NotANormBallError(
            f"OracleBall: no inner radius r >= {r:.3g} has all ±r e_j as members, so the set "
            "is not absorbing (the origin is not interior)."
        )

    def _bisect(self, flat):
        """Brackets lo <= ||u||_K <= hi for rows of ``flat`` (hi - lo <= 1e-12 hi)."""
        a = np.abs(flat)
        lo = (a / self._box).max(axis=1)
        hi = a.sum(axis=1) / self.inner_radius
        active = np.flatnonzero(hi - lo > _GAUGE_RTOL * hi)
        for _ in range(_MAX_BISECTIONS):
            if not len(active):
                break
            mid = 0.5 * (lo[active] + hi[active])
            inside = self._member(flat[active] / mid[:, None])
            hi[active] = np.where(inside, mid, hi[active])
            lo[active] = np.where(inside, lo[active], mid)
            active = active[hi[active] - lo[active] > _GAUGE_RTOL * hi[active]]
        return lo, hi

    def _gauge(self, u):
        flat = u.reshape(-1, self.dim)
        lo, hi = self._bisect(flat)
        return (0.5 * (lo + hi)).reshape(u.shape[:-1])[()]

    def _contains(self, u):
        return self._member(u.reshape(-1, self.dim)).reshape(u.shape[:-1])[()]

    def _bounding_box(self):
        return self._box

    def _falsify(self, n, rng):
        m, b, r = self.dim, self._box, self.inner_radius
        note = f"(found by a falsification search over {n} points; passing it is not a proof)"
        witness = np.zeros(m) if not self._member(np.zeros((1, m)))[0] else self._axis_witness(r)
        if witness is not None:
            raise NotANormBallError(
                f"OracleBall: not absorbing: {witness.tolist()!r} (the origin or a point ±{r:g} e_j) "
                f"is not a member {note}."
            )
        # Scales 2, 1, 1/2, ... reach thin sets and probe outside the box.
        n_scales = int(np.clip(np.ceil(np.log2(2.0 * b.max() / r)) + 1, 2, 12))
        scales = 2.0 ** -np.arange(-1, n_scales - 1)
        per = max(1, n // n_scales)
        found = []
        for s in scales:
            U = rng.uniform(-s * b, s * b, size=(per, m))
            found.append(U[self._member(U)])
        M = np.vstack(found)

        out = np.abs(M) > b
        if out.any():
            i, j = np.argwhere(out)[0]
            raise NotANormBallError(
                f"OracleBall: not bounded by the bounding box: u = {M[i].tolist()!r} is a member "
                f"but |u[{j}]| > b[{j}] = {float(b[j])!r} {note}."
            )

        M = M[np.any(M != 0, axis=1)]
        _, hi = self._bisect(M)
        edge = M / hi[:, None] * (1.0 - _BOUNDARY_MARGIN)
        bad = ~self._member(edge)
        if bad.any():
            k = int(np.argmax(bad))
            x = M[k] / hi[k]
            if self._member(x[None])[0]:
                raise NotANormBallError(
                    f"OracleBall: not convex: 0 and x = {x.tolist()!r} are members but "
                    f"(1 - {_BOUNDARY_MARGIN:g}) x = {edge[k].tolist()!r} is not {note}."
                )
            raise NotANormBallError(
                f"OracleBall: not convex: {edge[k].tolist()!r} lies in the convex hull of the "
                f"members ±{r:g} e_j (it has l1 norm <= {r:g}) but is not a member {note}."
            )
        P = np.vstack([M, edge])
        if not len(P):
            return  # no member found besides 0: nothing more to test

        bad = ~self._member(-P)
        if bad.any():
            w = P[np.argmax(bad)]
            raise NotANormBallError(f"OracleBall: not symmetric: u = {w.tolist()!r} is a member but -u is not {note}.")

        i = rng.integers(len(P), size=2 * len(P))
        j = rng.integers(len(P), size=2 * len(P))
        lam = rng.uniform(size=(2 * len(P), 1))
        lam[: len(P)] = 0.5  # midpoints, and random combinations
        Z = (1.0 - lam) * P[i] + lam * P[j]
        bad = ~self._member(Z)
        if bad.any():
            k = int(np.argmax(bad))
            raise NotANormBallError(
                f"OracleBall: not convex: x = {P[i[k]].tolist()!r} and y = {P[j[k]].tolist()!r} "
                f"are members but (1 - t) x + t y = {Z[k].tolist()!r} (t = {lam[k, 0]:.6g}) is not {note}."
            )

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"OracleBall({label}dim={self.dim}, inner_radius={self.inner_radius:g})"


def _check_box(bounding_box, dim, owner):
    rule = "a positive finite float or an array of them"
    try:
        box = np.asarray(bounding_box, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"The 'bounding_box' parameter of {owner} must be {rule}. Got {bounding_box!r} instead."
        ) from err
    if box.ndim > 1 or not np.all(np.isfinite(box)) or np.any(box <= 0) or box.size == 0:
        raise ValueError(f"The 'bounding_box' parameter of {owner} must be {rule}. Got {bounding_box!r} instead.")
    if box.ndim == 0:
        if dim is None:
            raise TypeError(
                f"The 'dim' parameter of {owner} is required when 'bounding_box' is a scalar. Got None instead."
            )
        dim = check_dim(dim, owner)
        return np.full(dim, float(box)), dim
    if dim is not None and check_dim(dim, owner) != box.size:
        raise ValueError(
            f"The 'dim' parameter of {owner} must equal len(bounding_box) = {box.size}. Got {dim!r} instead."
        )
    return box.copy(), box.size
