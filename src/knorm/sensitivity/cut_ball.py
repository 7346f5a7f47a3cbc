"""A certified ball between Hull(S_T) and the paper's K_T for the regression statistic.

K_T (paper Section 5.1, read as in errata item 5) is an outer approximation of the hull.
Cutting it by planes c.u <= h(c), with h the exact support function of Hull(S_T), keeps a
certified ball (it still contains S_T) of smaller volume.

For the statistic completed by the response square (``response_square=True``) the same
cut directions are used, padded with a zero on the new coordinate: projected on the old
coordinates the completed S_T is the old S_T, so every cut stays a valid support plane (its
h is recomputed exactly on the completed statistic and is the same), and the ball gains
the K_2 cylinder of K_T on (sum y, sum 2 y^2).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from knorm.geometry import IntersectionBall, Polytope
from knorm.sensitivity.layout import RegressionLayout, kt_ball

_CUTS_FILE = Path(__file__).with_name("data") / "regression_cuts.npz"
_DEFAULTS = (0, 100_000, 200)  # seed, n_train, per_block of the shipped table

__all__ = ["CutBallReport", "build_cut_table", "regression_cut_ball", "has_shipped_cuts"]


def has_shipped_cuts(p):
    """Return whether the cut directions for p predictors ship with the package.

    Parameters
    ----------
    p : int
        Number of predictors.

    Returns
    -------
    bool
        True for p <= 8 in a normal install: the cut ball then loads in well under a second.
    """
    if not _CUTS_FILE.exists():
        return False
    with np.load(_CUTS_FILE) as table:
        return f"directions_{int(p)}" in table.files


@dataclass
class CutBallReport:
    """How the tighter regression ball was built and how much it gains.

    Returned by :func:`regression_cut_ball`; each parameter is kept as the
    attribute of the same name.

    Parameters
    ----------
    n_cuts : int
        Cutting planes c.u <= h(c) added to K_T (h exact, so each is certified).
    volume_ratio : float
        The ratio vol(ball) / vol(K_T), a Monte Carlo estimate on fresh uniform
        points of K_T.
    volume_ratio_se : float
        Its binomial standard error.
    witness : ndarray
        A point of K_T outside the ball: with the convexity of K_T this shows
        the volume is strictly smaller (a cut removes an open piece of K_T).
    """

    n_cuts: int
    volume_ratio: float
    volume_ratio_se: float
    witness: np.ndarray


def _candidate_directions(layout, rng, per_block):
    """Random directions supported on the coordinates of 2- or 3-variable blocks.

    For a block V of record variables, the coordinates of T that depend only on
    V span a small subspace; cuts there are cheap to certify (3^|V| faces).
    """
    p = layout.p
    variables = list(range(p + 1))  # index p is y
    owners = {}  # coordinate -> set of record variables it involves
    for j in range(p):
        owners[int(layout.lin[j])] = {j}
        owners[int(layout.sq[j])] = {j}
        owners[int(layout.xy[j])] = {j, p}
    for c, (j, k) in zip(layout.cross, layout.pairs):
        owners[int(c)] = {j, k}
    owners[layout.y] = {p}
    out = []
    for size in (2, 3):
        for block in itertools.combinations(variables, size):
            coords = [c for c, v in owners.items() if v <= set(block)]
            dirs = np.zeros((per_block, layout.dim))
            g = rng.standard_normal((per_block, len(coords)))
            # Half the directions sparse with entries in {-1, 0, 1}: faces of K_T meet there.
            half = per_block // 2
            g[:half] = rng.integers(-1, 2, size=(half, len(coords)))
            dirs[:, coords] = g
            out.append(dirs[np.any(dirs != 0, axis=1)])
    return np.vstack(out)


def _select_cuts(p, seed, n_train, per_block, max_cuts):
    """Greedy choice of cut directions removing the most K_T volume (see regression_cut_ball)."""
    layout = RegressionLayout(p)
    t = layout.statistic()
    rng = np.random.default_rng(seed)
    cand = _candidate_directions(layout, rng, per_block)
    hi, lo, _, _ = t.extremes(cand)
    rows = cand / (hi - lo)[:, None]
    u = kt_ball(p).sample_uniform(n_train, rng=rng)
    # Lazy greedy cover: pick cuts removing the most K_T mass still alive.
    alive = np.ones(len(u), bool)
    scores = np.concatenate(
        [np.count_nonzero(u @ rows[s : s + 512].T > 1, axis=0) for s in range(0, len(rows), 512)]
    ).astype(float)
    chosen: list[int] = []
    while len(chosen) < max_cuts:
        k = int(np.argmax(scores))
        if scores[k] < 1e-3 * n_train:
            break
        fresh = np.count_nonzero((u[alive] @ rows[k]) > 1)
        if fresh >= np.partition(scores, -2)[-2]:
            chosen.append(k)
            alive &= (u @ rows[k]) <= 1
            scores[k] = -1
        else:
            scores[k] = fresh
    return cand[chosen], rng


def _cut_ball(p, directions, response_square=False):
    """K_T cut by c.u <= h(c) for each direction c, with h recomputed exactly here."""
    layout = RegressionLayout(p, response_square=response_square)
    if directions.shape[1] < layout.dim:  # paper-statistic directions: zero on the response square
        directions = np.pad(directions, ((0, 0), (0, layout.dim - directions.shape[1])))
    hi, lo, _, _ = layout.statistic().extremes(directions)
    G = directions / (hi - lo)[:, None]
    eye = np.eye(layout.dim) / 2.0  # each coordinate has sensitivity 2: keeps the cut polytope bounded
    cuts = Polytope.from_halfspaces(
        np.vstack([G, -G, eye, -eye]), np.ones(2 * len(G) + 2 * layout.dim), max_qhull_dim=0, name="cuts"
    )
    # The cut check is one matrix product and rejects most candidates: run it first.
    suffix = ", y^2" if response_square else ""
    return IntersectionBall(
        layout.dim, [(list(range(layout.dim)), cuts)] + layout.kt_constraints(), name=f"K_T cut (p={p}{suffix})"
    )


def _measure(p, ball, rng, n, response_square=False):
    test = kt_ball(p, response_square=response_square).sample_uniform(n, rng=rng)
    inside = ball.contains(test)
    frac = float(inside.mean())
    witness = test[~inside][0] if (~inside).any() else None
    return frac, math.sqrt(frac * (1 - frac) / n), witness


@functools.lru_cache(maxsize=16)
def _build(p, seed, n_train, per_block, max_cuts):
    directions, rng = _select_cuts(p, seed, n_train, per_block, max_cuts)
    ball = _cut_ball(p, directions)
    frac, se, witness = _measure(p, ball, rng, n_train)
    return directions, ball, CutBallReport(len(directions), frac, se, witness)


@functools.lru_cache(maxsize=16)
def _cut_ball_from_table(p):
    with np.load(_CUTS_FILE) as table:
        directions = table[f"directions_{p}"]
        frac, se = table[f"ratio_{p}"]
        witness = table[f"witness_{p}"]
    return directions, _cut_ball(p, directions), CutBallReport(len(directions), float(frac), float(se), witness)


# Uniform points of the completed K_T measuring the completed cut ball's volume ratio.
_SQUARE_MEASURE_POINTS = 20_000


@functools.lru_cache(maxsize=16)
def _with_response_square(p, directions_key, seed):
    """The cut ball of the completed statistic from paper-statistic directions, and its report."""
    directions = np.frombuffer(directions_key, dtype=float).reshape(-1, RegressionLayout(p).dim)
    ball = _cut_ball(p, directions, response_square=True)
    frac, se, witness = _measure(p, ball, np.random.default_rng(seed), _SQUARE_MEASURE_POINTS, True)
    return ball, CutBallReport(len(directions), frac, se, witness)


def build_cut_table(path=None, ps=range(1, 9)):
    """Rebuild the shipped table of cut directions (default settings) for ``ps``.

    Only the directions are trusted from the file; their support values are
    recomputed exactly when the ball is built, so the file cannot weaken privacy.
    This takes minutes for p = 8.

    Parameters
    ----------
    path : str or Path, optional
        Where to write the ``.npz`` table; by default the file shipped in
        ``knorm/sensitivity/data``.
    ps : iterable of int, default range(1, 9)
        Numbers of predictors to build.
    """
    out = {}
    for p in ps:
        directions, _, rep = _build(p, *_DEFAULTS, 4 * RegressionLayout(p).dim)
        out[f"directions_{p}"] = directions
        out[f"ratio_{p}"] = np.array([rep.volume_ratio, rep.volume_ratio_se])
        out[f"witness_{p}"] = rep.witness
    np.savez_compressed(path or _CUTS_FILE, **out)


def regression_cut_ball(p, *, seed=0, n_train=100_000, per_block=200, max_cuts=None, response_square=False):
    """Return a certified ball between Hull(S_T) and K_T, with strictly smaller volume than K_T.

    K_T intersected with cutting planes c.u <= h(c) whose h is computed exactly
    by face enumeration (:meth:`QuadraticStatistic.extremes`), so the ball
    contains S_T and Delta = 1 is certified. The cuts are chosen greedily, among
    random directions on the coordinates of 2- and 3-variable blocks, to remove
    the most volume of K_T (errata item 5 shows K_T is not the hull; its
    witness direction (0, 1, 1, 1) for p = 1 is such a block direction). The
    construction is deterministic for a given ``seed``. With the default
    settings and p <= 8 the chosen directions are read from a table shipped with
    the package (``build_cut_table`` rebuilds it); their support values are
    always recomputed exactly, so the table only saves the search.

    Parameters
    ----------
    p : int
        Number of predictors of the Section 5.1 statistic (replace-one neighbours).
    seed : int, default 0
        Seed of the candidate directions and of the uniform points of K_T; the
        ball depends only on it and the other settings, never on data.
    n_train : int, default 100000
        Uniform points of K_T used to choose the cuts, and again to measure the
        volume ratio.
    per_block : int, default 200
        Candidate directions per 2- or 3-variable block.
    max_cuts : int, optional
        Largest number of cuts (default 4 d, d the dimension of the paper's T).
    response_square : bool, default False
        The ball of the statistic completed by sum 2 y^2 (:class:`RegressionLayout`):
        the same cut directions with a zero on the new coordinate (module notes), and
        the K_2 cylinder on (sum y, sum 2 y^2). Delta = 1 stays exact.

    Returns
    -------
    ball : IntersectionBall
        The cut ball, named 'K_T cut (p=...)': exact gauge, exact rejection sampler
        from the bounding box. Results are cached per settings.
    report : CutBallReport
        The number of cuts, the estimated volume ratio to K_T and a witness point
        (with the response square: to the completed K_T, measured afresh on 20,000
        uniform points of it with the same ``seed``).

    References
    ----------
    Paper Section 5.1 (K_T) and Theorem "Optimal K-mech"; errata items 3 and 5.

    Examples
    --------
    >>> ball, report = regression_cut_ball(1)  # read from the shipped table
    >>> ball.dim, report.n_cuts, report.volume_ratio < 1
    (4, 12, True)
    >>> regression_cut_ball(1, response_square=True)[0].dim
    5
    """
    layout = RegressionLayout(p)
    default_cuts = 4 * layout.dim
    max_cuts = default_cuts if max_cuts is None else int(max_cuts)
    if (seed, n_train, per_block, max_cuts) == (*_DEFAULTS, default_cuts) and has_shipped_cuts(p):
        directions, ball, report = _cut_ball_from_table(int(p))
    else:
        directions, ball, report = _build(int(p), int(seed), int(n_train), int(per_block), max_cuts)
    if not response_square:
        return ball, report
    key = np.ascontiguousarray(directions, dtype=float).tobytes()
    return _with_response_square(int(p), key, int(seed))
