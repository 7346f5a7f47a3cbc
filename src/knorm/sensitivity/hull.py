"""Certified hulls of sensitivity spaces: closed forms, products of blocks, and cutting planes.

Every cutting plane c.u <= h(c), with h the (certified) support function of Hull(S_T),
contains S_T, so any intersection of such planes is a certified outer ball (paper Theorem
"Optimal K-mech": the hull is optimal, and any ball containing S_T is valid). Points of S_T
attaining h(c) span an inner polytope; the ratio of the two volumes bounds how far the
outer ball can be from the optimum.

:func:`certified_hull` puts structure before brute force:

1. closed forms (:mod:`knorm.sensitivity.closed_hulls`): exact hulls recognised from the
   statistic;
2. separable statistics: the hull (replace-one) is the product of the blocks' hulls
   (:class:`~knorm.sensitivity.product.BlockProduct`), each built on its own;
3. dimension <= 8: cutting planes chosen at the facets of the current inner hull (the
   directions where it is furthest from the outer one), until every facet of the inner
   hull is within a factor 1 + tol of the support function; adding those facets as cuts
   certifies outer <= (1 + tol) inner, so the sandwich is at least (1 + tol)^(-m);
4. higher dimension: for a :class:`~knorm.sensitivity.QuadraticStatistic`, an
   intersection of cylinders over the exact (or certified) hulls of its one- and
   two-variable sub-statistics (K_2 on (x_j, x_j^2) and K_3 on (x_j, x_k, x_j x_k) for
   the second moments: the K_T of the paper's Section 5.1 read as in errata item 5), then
   exact cuts chosen greedily to remove the most volume; otherwise the box of the
   coordinate widths, then cuts.

Builds stop at a time limit (the ball found so far is certified at every step), show a
progress bar (tqdm, optional) past two seconds, and are cached (:mod:`hull_cache`: only
directions are stored; h is recomputed at load). qhull failures are kept in
:attr:`CertifiedHull.qhull_errors`, never swallowed.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, QhullError

from knorm._validation import check_count, check_positive, check_rng, check_vectors, param_error
from knorm.geometry import IntersectionBall, LinearImage, LpBall, NormBall, Polytope, Volume
from knorm.geometry.base import LowAcceptanceError
from knorm.geometry.duality import sign_vectors
from knorm.sensitivity import hull_cache
from knorm.sensitivity.closed_hulls import finite_exact_hull, quadratic_block_hull
from knorm.sensitivity.product import BlockProduct, RejectionIntersection
from knorm.sensitivity.quadratic import QuadraticStatistic

__all__ = ["CertifiedHull", "certified_hull", "inner_hull", "outer_hull", "support_points"]

# A width below this fraction of the largest one means S_T is flat. It is well above
# the 1e-10 relative slack of QuadraticStatistic's extremes.
_FLAT_TOL = 1e-8
#: Default time limit, in seconds, of a hull build.
TIME_LIMIT = 3.0
#: A build shows a progress bar (when tqdm is installed) once it has run this long.
PROGRESS_AFTER = 2.0
# Largest dimension of the facet-refinement builder (qhull on the inner hull).
_MAX_REFINE_DIM = 6
# Stop refining when every inner facet is within this factor of the support function.
_REFINE_TOL = 2e-3
# Points of the inner hull beyond which qhull gets slow, by dimension.
_MAX_INNER_POINTS = {1: 2, 2: 4000, 3: 3000, 4: 2000, 5: 1200, 6: 500}
# Cutting planes of a refined hull used as a mechanism's ball (qhull on the outer polytope:
# its vertices, volume and triangulation grow fast with the number of cuts), and of one
# used as a cylinder inside a larger ball (gauge only: a matrix product per point).
_MAX_CUTS_QHULL = {1: 2, 2: 1000, 3: 600, 4: 250, 5: 150, 6: 100}
_MAX_CUTS_CYLINDER = {1: 2, 2: 400, 3: 400, 4: 400, 5: 400, 6: 400}
# Uniform points of the outer ball used to choose greedy cuts (and to estimate the sandwich).
_N_TRAIN = 20_000
# Points whose inner gauge (a linear program each) estimates a high-dimensional sandwich.
_N_RADIAL = 150


@dataclass(frozen=True)
class CertifiedHull:
    """A certified outer ball of Hull(S_T), with how it was built and how close it is.

    Returned by :func:`certified_hull` and :func:`outer_hull`; each parameter is kept
    as the attribute of the same name.

    Parameters
    ----------
    outer : NormBall
        A ball containing Hull(S_T) (certified): a closed form, a product of blocks, an
        intersection of cylinders and cuts, or the polytope {u : c_k.u <= h(c_k)}.
    inner : Polytope or None, default None
        Symmetric hull of points of S_T attaining h(c_k): inside Hull(S_T) (None when
        ``outer`` is exact or is a product).
    sandwich : Volume or None, default None
        A lower bound on vol(Hull S_T) / vol(outer): 1 for exact hulls, the qhull
        volume ratio vol(inner) / vol(outer) in low dimension, a product over blocks,
        or a labelled Monte Carlo estimate in high dimension.
    method : str, default ""
        How ``outer`` was built.
    exact : bool, default False
        True when ``outer`` is exactly Hull(S_T) (a proof, not a numerical claim).
    seconds : float, default 0.0
        Wall-clock time of the build.
    from_cache : bool, default False
        True when the cutting directions came from the cache (their h was recomputed).
    qhull_errors : tuple of str, default ()
        Every qhull failure met during the build, with where it happened.
    notes : tuple of str, default ()
        Other facts worth reporting (time limit reached, a sampler refused, ...).
    """

    outer: NormBall
    inner: Polytope | None = None
    sandwich: Volume | None = None
    method: str = ""
    exact: bool = False
    seconds: float = 0.0
    from_cache: bool = False
    qhull_errors: tuple = ()
    notes: tuple = ()

    @property
    def epsilon_gap(self):
        """Return the sandwich as an epsilon factor: outer needs at most this much more epsilon than the hull.

        For equal entropy the budget scales with vol^(1/m) (paper Proposition "Entropy
        of K-mech"), so this is sandwich^(-1/m) (nan when the sandwich is unknown).
        """
        if self.sandwich is None or not float(self.sandwich) > 0:
            return math.nan
        return float(self.sandwich) ** (-1.0 / self.outer.dim)

    def evidence(self):
        """Return the build's record as a plain dict, for reports.

        Returns
        -------
        dict
            The keys method, exact, seconds, from_cache, sandwich (value, exact,
            method), epsilon_gap, qhull_errors and notes.
        """
        sw = self.sandwich
        return {
            "method": self.method,
            "exact": self.exact,
            "seconds": round(self.seconds, 3),
            "from_cache": self.from_cache,
            "sandwich": None if sw is None else {"value": float(sw), "exact": sw.exact, "method": sw.method},
            "epsilon_gap": self.epsilon_gap,
            "qhull_errors": list(self.qhull_errors),
            "notes": list(self.notes),
        }


class _Clock:
    """A wall-clock deadline."""

    def __init__(self, seconds):
        self.start = time.perf_counter()
        self.end = self.start + seconds

    def left(self):
        return self.end - time.perf_counter()

    def expired(self):
        return time.perf_counter() >= self.end

    def elapsed(self):
        return time.perf_counter() - self.start


class _Progress:
    """A tqdm bar of the elapsed time against the limit, opened once the build runs past PROGRESS_AFTER."""

    def __init__(self, enabled, total, desc):
        self.enabled, self.total, self.desc = enabled, float(total), desc
        self.start = time.perf_counter()
        self.bar = None

    def __call__(self, note=""):
        if self.enabled is False:
            return
        elapsed = time.perf_counter() - self.start
        if self.bar is None:
            if elapsed < (0.0 if self.enabled else PROGRESS_AFTER):
                return
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm is optional: no bar without it
                self.enabled = False
                return
            fmt = "{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s{postfix}"
            self.bar = tqdm(total=round(self.total, 1), desc=self.desc, bar_format=fmt, leave=False)
        self.bar.n = round(min(elapsed, self.total), 1)
        self.bar.set_postfix_str(note, refresh=False)
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def inner_hull(space, n=20_000, *, rng=None):
    """Return the symmetric hull of sampled points of S_T, for plots and diagnostics only.

    Parameters
    ----------
    space : SensitivitySpace
        The space, with a sampler.
    n : int, default 20000
        Number of sampled points of S_T.
    rng : None, int, SeedSequence or Generator
        Randomness of the sample.

    Returns
    -------
    Polytope
        Flagged ``estimated``: it may miss parts of S_T, so mechanisms refuse it unless
        the caller accepts the risk explicitly.
    """
    ball = Polytope.from_points(space.sample(n, rng=rng))
    ball.estimated = True
    return ball


# -- helpers --------------------------------------------------------------------------------
def _unit(c):
    c = np.atleast_2d(np.asarray(c, dtype=float))
    n = np.linalg.norm(c, axis=1, keepdims=True)
    return c[n[:, 0] > 0] / n[n[:, 0] > 0]


def _dedupe(c, decimals=10):
    """Unit rows without (near) repeats."""
    c = _unit(c)
    _, first = np.unique(np.round(c, decimals), axis=0, return_index=True)
    return c[np.sort(first)]


def support_points(space, c):
    """Return points of Hull(S_T) attaining h at the rows of c: the extreme-point oracle, else support gradients.

    Parameters
    ----------
    space : SensitivitySpace
        A space with a certified support function.
    c : ndarray of shape (k, m)
        Directions.

    Returns
    -------
    points : ndarray of shape (k, m)
        A maximiser of c.u over Hull(S_T) for each direction.
    approximate : bool
        False for the space's extreme-point oracle. Without one, the gradient of h at
        c (central differences) is the maximiser wherever h is differentiable: a point
        of the hull up to the step's error, so an inner hull built from it is labelled
        approximate.
    """
    if space._extreme_points is not None:
        return np.asarray(space._extreme_points(c), dtype=float), False
    m = space.dim
    step = 1e-6
    eye = np.eye(m) * step
    plus = space._h((c[:, None, :] + eye[None]).reshape(-1, m)).reshape(len(c), m)
    minus = space._h((c[:, None, :] - eye[None]).reshape(-1, m)).reshape(len(c), m)
    return (plus - minus) / (2 * step), True


def _support_within(space, c, clock, at_least=1):
    """h at the rows of c, in chunks, stopping when the clock runs out: (h of the rows done, their count).

    A support evaluation can be costly (3^a face solves for a variables coupled by cross
    terms), so a build never commits to thousands of them at once: at least
    ``at_least`` rows are evaluated, then more while time is left.
    """
    n = len(c)
    out = np.empty(n)
    done, step = 0, 16
    while done < n:
        t0 = time.perf_counter()
        k = min(step, n - done)
        out[done : done + k] = space._h(c[done : done + k])
        done += k
        per = (time.perf_counter() - t0) / k
        if done >= at_least and clock.expired():
            break
        step = int(min(4096, max(16, 0.25 * max(clock.left(), 0.0) / max(per, 1e-9))))
    return out[:done], done


def _first_line(err):
    """The first line of a qhull message (its code and reason; the rest is a facet dump)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _qhull_error_of(poly, where):
    """The qhull failure recorded by (or evident from) a Polytope, as a message, or None."""
    err = getattr(poly, "qhull_error", None)
    if err:
        return f"{where}: {_first_line(err)}"
    if 2 <= poly.dim <= 8 and poly.vertices is None and poly.halfspaces is not None:  # Polytope's qhull range
        return f"{where}: qhull failed (its message was not kept by this Polytope); exact volume and sampler lost"
    return None


def _structured_directions(space, m):
    """Axes, sign vectors (m <= 6), and e_i +- e_j: directions from the coordinate structure."""
    parts = [np.eye(m)]
    if m <= 6:
        parts.append(sign_vectors(m))
    if m >= 2:
        i, j = np.triu_indices(m, 1)
        pair = np.zeros((2 * len(i), m))
        pair[np.arange(len(i)), i] = 1.0
        pair[np.arange(len(i)), j] = 1.0
        pair[len(i) + np.arange(len(i)), i] = 1.0
        pair[len(i) + np.arange(len(i)), j] = -1.0
        parts.append(pair)
    return np.vstack(parts)


def _check_full_dimensional(space, owner):
    red = space.affine_reduction()
    if red is not None:
        raise ValueError(
            f"{owner}: the sensitivity space is not full-dimensional: it lies in a subspace of dimension "
            f"{red.dim} < {space.dim} (a constant or duplicated coordinate of T, or another linear dependence "
            f"between coordinates: {red.describe()}). No ball of R^{space.dim} fits it; work in its affine span "
            "with space.reduced() (choose_mechanism does), which releases the informative coordinates and "
            "rebuilds the rest exactly."
        )


# -- low dimension: facets of the inner hull ------------------------------------------------
def _refine(space, directions, clock, progress, max_cuts, tol=_REFINE_TOL):
    """Cutting planes at the facets of the inner hull where h exceeds them most, until within 1 + tol.

    Each round computes the inner hull's facets (qhull), evaluates h on their normals and
    adds the facets with the largest ratio h(n) / offset as cuts, with their maximisers as
    new inner points (the cut and the point meet there, so the gap closes locally). The
    largest ratio, ``gap``, certifies Hull(S_T) <= gap * inner. Returns (directions, h,
    points, gap, approximate, qhull errors, converged).
    """
    m = space.dim
    C = _dedupe(directions)
    H = space._h(C)
    P, approx = support_points(space, C)
    errors = []
    gap, converged = math.inf, False
    cap = _MAX_INNER_POINTS[m]
    while True:
        try:
            hull = ConvexHull(np.vstack([P, -P]))
        except QhullError as err:
            errors.append(f"inner hull ({len(P)} points in R^{m}): {_first_line(err)}; retried with joggled input")
            try:  # joggling only moves the facet normals, which serve as directions: h is exact anyway
                hull = ConvexHull(np.vstack([P, -P]), qhull_options="QJ")
            except QhullError as err2:
                errors.append(f"inner hull ({len(P)} points in R^{m}), joggled: {_first_line(err2)}")
                break
        N, b = hull.equations[:, :-1], -hull.equations[:, -1]
        keep = b > 0
        N, b = N[keep], b[keep]
        N, first = np.unique(np.round(N, 10), axis=0, return_index=True)
        b = b[first]
        N = _unit(N)
        order = np.random.default_rng(len(C)).permutation(len(N))  # if time runs short, a fair subset
        N, b = N[order], b[order]
        hn, done = _support_within(space, N, clock, at_least=min(len(N), 2 * m))
        complete = done == len(N)
        N, b = N[:done], b[:done]
        ratio = hn / b
        gap = float(ratio.max()) if complete else math.inf  # a certificate only over every facet
        progress(f"{len(C)} cuts, facet gap {float(ratio.max()) - 1:.2%}")
        converged = gap <= 1 + tol
        room = min(max_cuts - len(C), cap - len(P))
        if converged or clock.expired() or room <= 0:
            break
        order = np.argsort(-ratio)
        sel = order[ratio[order] > 1 + 0.25 * tol][: min(room, max(2 * m, len(C) // 2))]
        C, H = np.vstack([C, N[sel]]), np.concatenate([H, hn[sel]])
        newp, _ = support_points(space, N[sel])
        P = np.vstack([P, newp])
    return C, H, P, gap, approx, errors, converged


def _refined_hull(space, clock, progress, cache, max_cuts=None, qhull=True):
    """The low-dimensional builder: cached directions, facet refinement, exact qhull sandwich."""
    m = space.dim
    max_cuts = (_MAX_CUTS_QHULL if qhull else _MAX_CUTS_CYLINDER)[m] if max_cuts is None else max_cuts
    key = hull_cache.space_key(space, f"refine-{max_cuts}") if cache else None
    start = _structured_directions(space, m)
    cached = hull_cache.load_directions(key, m)
    if cached is not None:
        start = np.vstack([start, cached])
    C, H, P, gap, approx, errors, converged = _refine(space, start, clock, progress, max_cuts)
    outer = Polytope.from_halfspaces(
        np.vstack([C, -C]), np.concatenate([H, H]), name="certified outer hull", max_qhull_dim=8 if qhull else 0
    )
    inner = Polytope.from_points(P, name="inner hull", max_qhull_dim=8 if qhull else 0)
    for poly, where in ((outer, "outer polytope"), (inner, "inner polytope")):
        msg = _qhull_error_of(poly, where) if qhull else None
        if msg:
            errors.append(msg)
    notes = []
    if approx:
        notes.append("no extreme-point oracle: inner points are support-function gradients (approximate)")
    if not converged:
        notes.append(f"stopped at {len(C)} cuts and {len(P)} inner points: facet gap {gap - 1:.3%}")
    sandwich = None
    if qhull and not approx:
        vi = inner.volume(rng=0, n_samples=2)  # exact with qhull, else not used
        vo = outer.volume(rng=0, n_samples=2)
        if vi.exact and vo.exact:
            sandwich = Volume(min(1.0, vi / vo), exact=True, method="qhull volumes, inner / outer")
    if sandwich is None and math.isfinite(gap) and not approx:
        sandwich = Volume(gap ** (-m), exact=False, method="lower bound (1 / facet gap)^m of inner / hull")
    if key is not None and cached is None:
        hull_cache.store_directions(key, C)
    shown = f"facet gap {max(gap - 1, 0):.2%}" if math.isfinite(gap) else "facet gap not measured: time limit"
    method = f"{len(C)} cutting planes at inner-hull facets ({shown})"
    return CertifiedHull(outer, inner, sandwich, method, False, 0.0, cached is not None, tuple(errors), tuple(notes))


# -- high dimension: cylinders and greedy cuts -------------------------------------------------
def _interval(width):
    return LpBall(1, math.inf, radius=float(width))


def _cylinders(space, t, clock, progress, cache, rng):
    """Cylinders over the one- and two-variable sub-statistics of t, each with its exact or certified hull.

    The projection of S_T on the coordinates that depend only on some record variables
    V is the sensitivity space of that sub-statistic, so its hull (or any certified
    outer ball of it) gives a cylinder containing S_T: closed forms for one variable
    (K_2 images) and for (x_j, x_k, x_j x_k) (K_3 images), refined cutting planes for the
    other two-variable sub-statistics.
    """
    m = t.dim
    uses = t._uses
    sets = [tuple(np.flatnonzero(uses[j]).tolist()) for j in range(m)]
    single: dict[int, list[int]] = {}
    pair: dict[tuple[int, ...], list[int]] = {}
    for j, s in enumerate(sets):
        if len(s) == 1:
            single.setdefault(s[0], []).append(j)
        elif len(s) == 2:
            pair.setdefault(s, []).append(j)
    linear = {v: [j for j in rows if not np.any(t.A[j])] for v, rows in single.items()}
    cons, covered = [], np.zeros(m, bool)
    errors, notes = [], []
    built: dict = {}
    n_k3 = n_pair = 0
    for v, rows in sorted(single.items()):
        res = _block_hull(space.restricted(rows, [v]), clock, progress, cache, rng, built, share=0.05)
        cons.append((rows, res.outer))
        covered[rows] = True
        errors += res.qhull_errors
    for (j, k), rows2 in sorted(pair.items()):
        closed = set()
        for r, lj, lk in itertools.product(rows2, linear.get(j, []), linear.get(k, [])):
            if r in closed:
                continue
            sub = space.restricted([lj, lk, r], [j, k])
            found = quadratic_block_hull(sub.statistic, sub._h)
            if found is not None:
                cons.append(([lj, lk, r], found[0]))
                closed.add(r)
                covered[[lj, lk, r]] = True
                n_k3 += 1
        if closed == set(rows2):
            continue  # closed forms cover it; greedy cuts on its coordinates do the rest
        rows = sorted(single.get(j, []) + single.get(k, []) + rows2)
        n_pair += 1
        res = _block_hull(space.restricted(rows, [j, k]), clock, progress, cache, rng, built, share=0.25)
        cons.append((rows, res.outer))
        covered[rows] = True
        errors += res.qhull_errors
    for j in np.flatnonzero(~covered).tolist():
        cons.append(([int(j)], _interval(space._h(np.eye(m)[j : j + 1])[0])))
    notes.append(
        f"cylinders: {len(single)} one-variable, {n_k3} K_3 images, {n_pair} two-variable hulls "
        f"({len(built)} distinct builds in all), {int((~covered).sum())} intervals"
    )
    return cons, errors, notes


def _block_hull(space, clock, progress, cache, rng, built, share):
    """The hull of a small sub-space used as a cylinder, built once per distinct statistic."""
    key = hull_cache.space_key(space, "cylinder") or id(space)
    if key not in built:
        sub_clock = _Clock(max(0.05, share * max(clock.left(), 0.0)))
        built[key] = _build(space, sub_clock, progress, cache, rng, cylinder=True)
    return built[key]


def _proposal(dim, cons, box):
    """An exactly sampleable superset: the disjoint constraints with exact samplers, times the box elsewhere."""
    used = np.zeros(dim, bool)
    blocks = []
    for idx, ball in cons:
        idx = np.asarray(idx)
        if not used[idx].any() and not isinstance(ball, IntersectionBall) and ball.dim <= 3:
            blocks.append((idx, ball))
            used[idx] = True
    rest = np.flatnonzero(~used)
    if len(rest):
        blocks.append((rest, LinearImage(LpBall(len(rest), math.inf), box[rest])))
    return BlockProduct(dim, blocks, name="proposal")


def _block_directions(space, t, n, rng):
    """Random directions supported on the coordinates of two- and three-variable subsets (half sparse in {-1, 0, 1})."""
    m = space.dim
    if t is None:
        groups = [list(g) for g in itertools.combinations(range(m), 2)]
    else:
        uses = t._uses
        d = t.record_dim
        groups = []
        for size in (2, 3):
            for vs in itertools.combinations(range(d), size):
                rows = np.flatnonzero(~np.any(uses[:, [i for i in range(d) if i not in vs]], axis=1) & uses.any(1))
                if len(rows) >= 2:
                    groups.append(rows.tolist())
        if not groups:
            groups = [list(g) for g in itertools.combinations(range(m), 2)]
    pick = rng.integers(len(groups), size=n)
    out = np.zeros((n, m))
    for gi in np.unique(pick):
        rows = np.flatnonzero(pick == gi)
        g = groups[gi]
        vals = rng.standard_normal((len(rows), len(g)))
        sparse = rng.random(len(rows)) < 0.5
        vals[sparse] = rng.integers(-1, 2, size=(int(sparse.sum()), len(g)))
        out[np.ix_(rows, g)] = vals
    return out[np.any(out != 0, axis=1)]


def _greedy_cuts(space, base_cons, proposal, clock, progress, rng, cached, n_train=_N_TRAIN):
    """Exact cuts c.u <= h(c), chosen greedily to remove the most uniform points of the current ball.

    Candidates: random directions on the coordinates of two- and three-variable
    sub-statistics (the statistic's blocks of interaction), and directions toward uniform
    points of the current ball (where the support function's maximisers are furthest from
    it), refreshed as cuts are chosen. Each pick is the candidate removing the most points
    still alive (maximum coverage, with exact score updates).
    """
    m = space.dim
    t = space.statistic if isinstance(space.statistic, QuadraticStatistic) else None
    base = RejectionIntersection(m, base_cons, proposal, name="cylinders")
    notes = []
    try:
        U = base.sample_uniform(n_train, rng=rng)
    except LowAcceptanceError as err:
        notes.append(f"no greedy cuts: {err}")
        return base, np.zeros((0, m)), None, notes
    if cached is not None:
        chosen = cached
    else:
        chosen = []
        alive = np.ones(len(U), bool)
        min_gain = max(5, int(1e-3 * n_train))

        def candidates(points, n_block):
            pool = [_block_directions(space, t, n_block, rng)] if n_block else []
            if len(points):
                pool.append(points[rng.integers(len(points), size=min(400, len(points)))])
            cand = _unit(np.vstack(pool))
            h, done = _support_within(space, cand, clock, at_least=min(len(cand), 8))
            return cand[:done], cand[:done] / h[:, None]

        cand, rows = candidates(U, 1500)
        scores = _violations(U, rows)
        while not clock.expired() and len(chosen) < 8 * m:
            k = int(np.argmax(scores))
            if scores[k] < min_gain:
                if len(chosen) and len(cand) < 20_000:  # one refresh toward the points left
                    more, mrows = candidates(U[alive], 0)
                    cand, rows = np.vstack([cand, more]), np.vstack([rows, mrows])
                    scores = np.concatenate([scores, _violations(U[alive], mrows)])
                    if scores[-len(more) :].max(initial=0) >= min_gain:
                        continue
                break
            cut = alive & (U @ rows[k] > 1)
            scores -= _violations(U[cut], rows)
            alive &= ~cut
            chosen.append(cand[k])
            if len(chosen) % max(4, m // 2) == 0:
                progress(f"{len(chosen)} cuts, {1 - alive.mean():.1%} of the cylinders' volume removed")
                more, mrows = candidates(U[alive], 0)
                cand, rows = np.vstack([cand, more]), np.vstack([rows, mrows])
                scores = np.concatenate([scores, _violations(U[alive], mrows)])
        chosen = np.array(chosen).reshape(-1, m)
    if not len(chosen):
        return base, chosen, U, notes
    H = space._h(chosen)
    axes = np.eye(m)
    G = np.vstack([chosen / H[:, None], axes / space._h(axes)[:, None]])
    cuts = Polytope.from_halfspaces(np.vstack([G, -G]), np.ones(2 * len(G)), max_qhull_dim=0, name="cuts")
    # The cuts reject most candidates in one matrix product: check them first.
    ball = RejectionIntersection(m, [(list(range(m)), cuts)] + list(base_cons), proposal, name="cylinders and cuts")
    return ball, chosen, U[ball.contains(U)], notes


def _violations(U, rows, block=1 << 22):
    """For each row g, the number of points u with g.u > 1 (in bounded memory)."""
    out = np.zeros(len(rows))
    if not len(U):
        return out
    step = max(1, block // max(1, len(rows)))
    for s in range(0, len(U), step):
        out += np.count_nonzero(U[s : s + step] @ rows.T > 1, axis=0)
    return out


def _radial_sandwich(space, outer, U, cut_dirs, rng, n=_N_RADIAL):
    """Monte Carlo of vol(inner) / vol(outer) = E[(||u||_outer / ||u||_inner)^m], u uniform in outer.

    The inner hull is that of the maximisers at the cut directions, the axes and the pair
    directions; its gauge is a linear program per point (hence the small sample). Returns
    a labelled estimate, or None when too few uniform points are available.
    """
    m = space.dim
    if U is None or len(U) < 20 or space._extreme_points is None:
        return None
    u = U[rng.permutation(len(U))[:n]]
    # Maximisers along the cuts, the coordinate pairs and toward the outer ball's mass.
    toward = U[rng.permutation(len(U))[: 10 * m]]
    C = _dedupe(np.vstack([_structured_directions(space, m)[: m + m * (m - 1)], cut_dirs.reshape(-1, m), toward]))
    V = space._extreme_points(C)
    go = outer._gauge(u)
    Vt = np.hstack([V.T, -V.T])
    cost = np.ones(Vt.shape[1])
    gi = np.empty(len(u))
    for i, row in enumerate(u):
        res = linprog(cost, A_eq=Vt, b_eq=row, bounds=(0, None), method="highs")
        gi[i] = res.fun if res.status == 0 else np.inf
    w = np.where(np.isfinite(gi), (go / gi) ** m, 0.0)
    est = float(w.mean())
    se = float(w.std(ddof=1) / math.sqrt(len(w)))
    return Volume(
        est,
        exact=False,
        stderr=se,
        method=f"radial Monte Carlo over {len(u)} uniform outer points, inner gauge by linear programs",
    )


def _cylinder_hull(space, clock, progress, cache, rng):
    """The high-dimensional builder: cylinders (or the coordinate box), then greedy exact cuts."""
    m = space.dim
    t = space.statistic if isinstance(space.statistic, QuadraticStatistic) else None
    errors, notes = [], []
    widths = space._h(np.eye(m))
    if t is not None:
        cons, errors, notes = _cylinders(space, t, clock, progress, cache, rng)
        what = "cylinders over one- and two-variable sub-statistics"
    else:
        cons = [(list(range(m)), LinearImage(LpBall(m, math.inf), widths, name="coordinate box"))]
        what = "the coordinate box"
    box = np.minimum.reduce([_embed_box(m, idx, ball) for idx, ball in cons])
    proposal = _proposal(m, cons, box)
    key = hull_cache.space_key(space, f"cuts-{_N_TRAIN}") if cache else None
    cached = hull_cache.load_directions(key, m)
    ball, chosen, U, more = _greedy_cuts(space, cons, proposal, clock, progress, rng, cached)
    notes += more
    if key is not None and cached is None and len(chosen):
        hull_cache.store_directions(key, chosen)
    sandwich = None
    if clock.left() > 0.5:
        sandwich = _radial_sandwich(space, ball, U, chosen, rng)
    else:
        notes.append("sandwich not estimated: the time limit was reached")
    method = f"{what} ({len(cons)} constraints) and {len(chosen)} greedy exact cuts"
    return CertifiedHull(ball, None, sandwich, method, False, 0.0, cached is not None, tuple(errors), tuple(notes))


def _embed_box(m, idx, ball):
    out = np.full(m, np.inf)
    out[np.asarray(idx)] = ball.bounding_box()
    return out


# -- the orchestrator ------------------------------------------------------------------------------
def _exact(ball, method):
    return CertifiedHull(ball, None, Volume(1.0, exact=True, method="exact hull"), method, True)


def _closed_form(space):
    """An exact hull from the space or its statistic, or None."""
    if space.hull is not None:
        return _exact(space.hull, "the space's known hull")
    replace = space.neighbours == "replace"
    t = space.statistic
    if isinstance(t, QuadraticStatistic) and replace and (len(space.blocks) == 1 or t.is_linear):
        found = quadratic_block_hull(t, space._h)
        if found is not None:
            return _exact(*found)
    if space.record_points is not None and not isinstance(t, QuadraticStatistic):
        found = finite_exact_hull(space.record_points, space.neighbours)
        if found is not None and found[0].dim == space.dim:
            return _exact(*found)
    return None


def _product(space, clock, progress, cache, rng):
    """Blockwise hulls of a separable statistic, as a BlockProduct."""
    m = space.dim
    t = space.statistic
    parts, errors, notes = [], [], []
    exact = space.neighbours == "replace"
    log_sw, sw_exact, sw_known = 0.0, True, True
    built = {}
    for k, (rows, vars_) in enumerate(t.blocks()):
        sub = space.restricted(rows, vars_)
        left = len(space.blocks) - k
        key = hull_cache.space_key(sub, "block")
        if key not in built:
            sub_clock = _Clock(max(0.05, clock.left() / max(left, 1)))
            built[key] = _build(sub, sub_clock, progress, cache, rng)
        res = built[key]
        parts.append((rows, res.outer))
        exact &= res.exact
        errors += list(res.qhull_errors)
        notes += list(res.notes)
        if res.sandwich is None:
            sw_known = False
        else:
            log_sw += math.log(max(float(res.sandwich), 1e-300))
            sw_exact &= res.sandwich.exact
    ball = BlockProduct(m, parts, name=f"product of {len(parts)} blocks")
    sandwich = None
    if sw_known:
        sandwich = Volume(math.exp(log_sw), exact=sw_exact, method="product of the blocks' sandwiches")
    why = "the hull of a separable statistic is the product of its blocks' hulls (replace-one)"
    if space.neighbours == "add_remove":
        why = "a product of the blocks' add/remove hulls contains S_T (an outer ball, not the hull)"
    method = f"{len(parts)} blocks ({len(built)} distinct): {why}"
    return CertifiedHull(ball, None, sandwich, method, exact, 0.0, False, tuple(errors), tuple(dict.fromkeys(notes)))


def _build(space, clock, progress, cache, rng, cylinder=False):
    """Dispatch: closed form, product of blocks, facet refinement (m <= 6) or cylinders and cuts.

    ``cylinder`` marks a sub-statistic's hull used only as a cylinder of a larger ball:
    its gauge matters, not its sampler or exact volume, so qhull is skipped on it.
    """
    key = hull_cache.space_key(space, f"built-{cylinder}") if cache else None
    hit = hull_cache.memory_get(key)
    if hit is not None:
        return hit
    start = time.perf_counter()
    res = _closed_form(space)
    if res is None and isinstance(space.statistic, QuadraticStatistic) and len(space.blocks) > 1:
        res = _product(space, clock, progress, cache, rng)
    if res is None and space.dim <= _MAX_REFINE_DIM:
        res = _refined_hull(space, clock, progress, cache, qhull=not cylinder)
    if res is None:
        res = _cylinder_hull(space, clock, progress, cache, rng)
    res = _with_seconds(res, time.perf_counter() - start)
    if res.exact or not clock.expired():  # a build cut short by its time limit is not kept
        hull_cache.memory_put(key, res)
    return res


def _with_seconds(res, seconds):
    return dataclasses.replace(res, seconds=seconds)


def certified_hull(space, *, time_limit=TIME_LIMIT, progress=None, cache=True, rng=None):
    """Return the exact Hull(S_T) or a certified outer ball of it, structure before brute force.

    Parameters
    ----------
    space : SensitivitySpace
        A full-dimensional space with a certified support function (use
        :meth:`SensitivitySpace.reduced` first for a flat one).
    time_limit : float, default 3.0
        Seconds for the build; the ball found when it runs out is returned (every step
        is certified). Closed forms and products of closed forms take milliseconds.
    progress : bool or None, default None
        None shows a tqdm bar once the build runs past two seconds (when tqdm is
        installed), True from the start, False never.
    cache : bool, default True
        Reuse hulls built before for the same statistic and domain: in memory, and on
        disk as cutting directions whose support values are recomputed (see
        :mod:`knorm.sensitivity.hull_cache`).
    rng : None, int, SeedSequence or Generator
        Randomness of the candidate directions and Monte Carlo sandwiches (no data).

    Returns
    -------
    CertifiedHull
        The ball (``outer``), whether it is exactly the hull, its sandwich, the time
        taken, whether it came from the cache, and every qhull failure met.

    Raises
    ------
    NotImplementedError
        If the space has no certified support function.
    ValueError
        If the space is flat (not full-dimensional).

    Notes
    -----
    Closed forms (:mod:`knorm.sensitivity.closed_hulls`), then products over the blocks
    of a separable statistic (:mod:`knorm.sensitivity.product`), then cutting planes
    (module notes). Any ball {u : c_k.u <= h(c_k)} intersected with cylinders over
    certified hulls of projections contains S_T (paper Theorem "Optimal K-mech": the
    hull is optimal, any containing ball is valid; errata item 5 for h).

    References
    ----------
    Paper Theorem "Optimal K-mech" and Section 5.1 (K_T); errata items 3 and 5.

    Examples
    --------
    >>> from knorm.sensitivity import QuadraticStatistic, SensitivitySpace
    >>> t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0])  # (x, x^2), x in [0, 10]
    >>> hull = certified_hull(SensitivitySpace.additive(t, None))
    >>> hull.exact, hull.outer.name
    (True, 'hull of (x, x^2)')
    """
    owner = "certified_hull"
    if not hasattr(space, "has_support") or not hasattr(space, "dim"):
        raise TypeError(
            f"The 'space' parameter of {owner} must be a SensitivitySpace. Got {type(space).__name__} instead."
        )
    if progress not in (None, True, False):
        raise param_error("progress", owner, "True, False or None", progress, TypeError)
    limit = check_positive(time_limit, "time_limit", owner)
    gen = check_rng(rng, owner)
    if not space.has_support:
        space.support(np.zeros(space.dim))  # raises the space's own NotImplementedError
    _check_full_dimensional(space, owner)
    clock = _Clock(limit)
    bar = _Progress(progress, limit, "knorm: building the hull")
    try:
        res = _build(space, clock, bar, bool(cache), gen)
    finally:
        bar.close()
    if res.exact or isinstance(res.outer, IntersectionBall):
        kind = "exact" if space.support_exact or res.exact else "bound"
        (space.register_exact if kind == "exact" else space.register_bound)(
            res.outer, 1.0, f"{res.method}: every constraint is the hull of a projection of S_T or a tight cut"
        )
    if clock.expired() and not res.exact:
        res = dataclasses.replace(res, notes=res.notes + (f"time limit of {limit:g} s reached",))
    return res


# -- explicit cutting directions (the original interface) ------------------------------------------
def outer_hull(space, directions=None, *, n_directions=None, rng=None, n_volume=200_000, time_limit=TIME_LIMIT):
    """Return a certified outer polytope of Hull(S_T) from cutting planes c.u <= h(c).

    Parameters
    ----------
    space : SensitivitySpace
        The space, with a certified support function (an extreme-point oracle gives an
        inner polytope and a sandwich; without one, support gradients stand in).
    directions : array_like of shape (k, m), optional
        Cutting directions. By default they are chosen adaptively (dimension <= 8: at
        the facets of the inner hull, until within 0.2% of the support function or the
        time limit; above: the axes, the pairs e_i +- e_j and ``n_directions`` random
        Gaussian directions).
    n_directions : int, optional
        Number of random Gaussian directions added to the axes and sign vectors (the
        original non-adaptive rule, 60 m when ``directions`` is None in dimension > 8).
    rng : None, int, SeedSequence or Generator
        Randomness of the directions and of Monte Carlo volumes.
    n_volume : int, default 200000
        Points of Monte Carlo volumes beyond qhull's reach.
    time_limit : float, default 3.0
        Seconds for the adaptive rule.

    Returns
    -------
    CertifiedHull
        The outer polytope {u : c.u <= h(c)} over the directions and their
        negatives, the inner polytope of the points attaining h(c), their volume
        ratio, and any qhull failure.

    Raises
    ------
    ValueError
        For a zero direction, directions that do not span R^m, or a space that is not
        full-dimensional (a width h(c) + h(-c) of about 0, as for a constant or
        duplicated coordinate of T): no polytope of R^m can then be a norm ball around
        it; :meth:`SensitivitySpace.reduced` works in its affine span.
    """
    dim = space.dim
    gen = check_rng(rng, "outer_hull")
    if n_directions is not None:
        n_directions = check_count(n_directions, "n_directions", "outer_hull")
    if not space.has_support:
        space.support(np.zeros(dim))
    start = time.perf_counter()
    if directions is None:
        _check_full_dimensional(space, "outer_hull")
    if directions is None and n_directions is None and dim <= _MAX_REFINE_DIM:
        clock = _Clock(check_positive(time_limit, "time_limit", "outer_hull"))
        bar = _Progress(None, time_limit, "knorm: outer hull")
        try:
            res = _refined_hull(space, clock, bar, cache=False)
        finally:
            bar.close()
        return _with_seconds(res, time.perf_counter() - start)
    if directions is None:
        n_directions = 60 * dim if n_directions is None else n_directions
        parts = [np.eye(dim), gen.standard_normal((n_directions, dim))]
        if dim <= 10:
            parts.append(sign_vectors(dim))
        directions = np.vstack(parts)
    c = np.atleast_2d(check_vectors(directions, dim, "directions", "outer_hull", public=True))
    norms = np.linalg.norm(c, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(
            "The 'directions' parameter of outer_hull must have non-zero rows. "
            f"Got a zero row at index {int(np.flatnonzero(norms == 0)[0])} instead."
        )
    rank = int(np.linalg.matrix_rank(c))
    if rank < dim:
        raise ValueError(f"The 'directions' parameter of outer_hull must span R^{dim}. Got rank {rank} instead.")
    c = c / norms
    h = space.support(c)
    # Hull(S_T) is symmetric, so its width along c is h(c) + h(-c) = 2 h(c).
    flat = h <= _FLAT_TOL * np.max(h)
    if np.any(flat):
        i = int(np.flatnonzero(flat)[0])
        raise ValueError(
            "outer_hull: the sensitivity space is not full-dimensional: its width h(c) + h(-c) along "
            f"c = {np.round(c[i], 6).tolist()} is {2 * h[i]:.3g}, next to a largest width of {2 * np.max(h):.3g} "
            "(a constant or duplicated coordinate of T, or another linear dependence between coordinates). "
            "Work in its affine span with space.reduced() (choose_mechanism does)."
        )
    outer = Polytope.from_halfspaces(np.vstack([c, -c]), np.concatenate([h, h]), name="certified outer hull")
    pts, approx = support_points(space, c)
    inner = Polytope.from_points(pts, name="inner hull")
    errors = [m for m in (_qhull_error_of(outer, "outer polytope"), _qhull_error_of(inner, "inner polytope")) if m]
    sandwich = _volume_ratio(inner, outer, gen, n_volume, space, pts, c)
    notes = ("inner points are support-function gradients (approximate)",) if approx else ()
    return CertifiedHull(
        outer,
        inner,
        sandwich,
        f"{len(c)} given cutting directions",
        False,
        time.perf_counter() - start,
        False,
        tuple(errors),
        notes,
    )


def _volume_ratio(inner, outer, rng, n, space, pts, c):
    vi, vo = inner.volume(rng=rng, n_samples=2), outer.volume(rng=rng, n_samples=2)
    if vi.exact and vo.exact:
        return Volume(vi / vo, exact=True, method="qhull volumes")
    try:
        u = outer.sample_uniform(min(n, 2000), rng=rng)
    except LowAcceptanceError:
        return None
    return _radial_sandwich(space, outer, u, c, rng)
