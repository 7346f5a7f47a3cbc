"""The linear-regression statistic of the paper's Section 5.1, its K_T, and a tighter ball.

T holds the unique non-constant entries of X'X and X'Y for a design X = [1, X0]
with X0 in [-1,1]^{n x p} and Y in [-1,1]^n, each rescaled to sensitivity 2 (the
sums of squares are doubled). Its length is d = (p+1)(p+2)/2 - 1 + (p+1).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from knorm.geometry.intersection import IntersectionBall
from knorm.geometry.polytope import Polytope
from knorm.geometry.regression import K2Ball, k3_ball
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.space import SensitivitySpace

_CUTS_FILE = Path(__file__).with_name("data") / "regression_cuts.npz"
_DEFAULTS = (0, 100_000, 200)  # seed, n_train, per_block of the shipped table

__all__ = ["CutBallReport", "RegressionLayout", "kt_ball", "linear_regression_space", "regression_cut_ball"]


class RegressionLayout:
    """Coordinates of the Section 5.1 statistic for p predictors: the one owner of the layout.

    Replace-one neighbours (the paper's): T = (sum x_j (p), sum x_j x_k for j < k,
    sum 2 x_j^2 (p), sum y, sum x_j y (p)), squares doubled so that every entry has
    sensitivity 2; n is public. Add/remove neighbours: the released vector is
    (n, T') with the count first and the squares not doubled, so that every entry has
    add/remove sensitivity 1 (n is private there).

    Parameters
    ----------
    p : int
        Number of predictors, not counting the intercept.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation, which decides the released coordinates.

    Attributes
    ----------
    dim : int
        Length of the released vector: (p+1)(p+2)/2 - 1 + (p+1), plus 1 for the count
        under add/remove (errata, facts: 26 for p = 5).
    lin, cross, sq, xy : ndarray of int
        Positions of sum x_j, sum x_j x_k (j < k, in the order of ``pairs``), the
        squares and sum x_j y in the released vector.
    y : int
        Position of sum y.
    count : int or None
        Position of n (add/remove only).
    square_weight : float
        2 (replace: squares doubled) or 1 (add/remove).
    pairs : list of tuple
        The pairs (j, k), j < k.
    names : list of str
        Names of the released coordinates.

    Examples
    --------
    >>> RegressionLayout(1).names
    ['x1', '2x1^2', 'y', 'x1y']
    >>> RegressionLayout(1, neighbours="add_remove").names
    ['n', 'x1', 'x1^2', 'y', 'x1y']
    """

    def __init__(self, p, neighbours="replace"):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ValueError(f"The 'p' parameter of RegressionLayout must be an int >= 1. Got {p!r} instead.")
        if neighbours not in ("replace", "add_remove"):
            raise ValueError(
                "The 'neighbours' parameter of RegressionLayout must be 'replace' or 'add_remove'. "
                f"Got {neighbours!r} instead."
            )
        self.p = p = int(p)
        self.neighbours = neighbours
        self.pairs = list(itertools.combinations(range(p), 2))
        off = 1 if neighbours == "add_remove" else 0
        self.count = 0 if off else None
        self.square_weight = 1.0 if off else 2.0
        self.lin = off + np.arange(p)
        self.cross = off + p + np.arange(len(self.pairs))
        self.sq = off + p + len(self.pairs) + np.arange(p)
        self.y = int(off + 2 * p + len(self.pairs))
        self.xy = self.y + 1 + np.arange(p)
        self.dim = int(self.xy[-1] + 1)
        sq = "2x{}^2" if not off else "x{}^2"
        self.names = (
            (["n"] if off else [])
            + [f"x{j + 1}" for j in range(p)]
            + [f"x{j + 1}x{k + 1}" for j, k in self.pairs]
            + [sq.format(j + 1) for j in range(p)]
            + ["y"]
            + [f"x{j + 1}y" for j in range(p)]
        )

    def statistic(self):
        """Return the per-record map t(x, y) of the released coordinates, on [-1, 1]^(p+1).

        Returns
        -------
        QuadraticStatistic
            Degree-2 polynomials, so its support function is exact (face enumeration).
        """
        p, d = self.p, self.dim
        A = np.zeros((d, p + 1, p + 1))
        b = np.zeros((d, p + 1))
        const = np.zeros(d)
        b[self.lin, np.arange(p)] = 1.0
        for c, (j, k) in zip(self.cross, self.pairs):
            A[c, j, k] = 1.0
        A[self.sq, np.arange(p), np.arange(p)] = self.square_weight
        b[self.y, p] = 1.0
        A[self.xy, np.arange(p), p] = 1.0
        if self.count is not None:
            const[self.count] = 1.0
        return QuadraticStatistic(A, b, -np.ones(p + 1), np.ones(p + 1), const=const, names=self.names)

    def from_gram(self, G, s, n):
        """Return the released vector from the Gram matrix and sums of the scaled records.

        Parameters
        ----------
        G : ndarray of shape (p + 1, p + 1)
            sum_i z_i z_i' for the scaled records z = (x', y') in [-1, 1]^(p+1).
        s : ndarray of shape (p + 1,)
            sum_i z_i.
        n : int or float
            Number of records (a coordinate under add/remove only).

        Returns
        -------
        ndarray of shape (dim,)
        """
        p = self.p
        T = np.empty(self.dim)
        if self.count is not None:
            T[self.count] = n
        T[self.lin] = s[:p]
        j, k = np.array(self.pairs, dtype=int).reshape(-1, 2).T
        T[self.cross] = G[j, k]
        T[self.sq] = self.square_weight * np.diag(G)[:p]
        T[self.y] = s[p]
        T[self.xy] = G[:p, p]
        return T

    def from_data(self, X, y):
        """Return the released vector for data already in [-1, 1] (checked by the caller).

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Scaled predictors.
        y : ndarray of shape (n,)
            Scaled response.

        Returns
        -------
        ndarray of shape (dim,)
        """
        Z = np.column_stack([X, y])
        return self.from_gram(Z.T @ Z, Z.sum(axis=0), len(Z))

    @functools.cached_property
    def _gram_index(self):
        # Index of each Gram entry of (1, x') in the vector [n, T] (replace) or F (add/remove).
        p = self.p
        shift = 1 if self.count is None else 0
        idx = np.zeros((p + 1, p + 1), int)
        w = np.ones((p + 1, p + 1))
        idx[0, 0] = 0
        idx[0, 1:] = idx[1:, 0] = shift + self.lin
        diag = np.arange(1, p + 1)
        idx[diag, diag] = shift + self.sq
        w[diag, diag] = 1.0 / self.square_weight
        for c, (j, k) in zip(self.cross, self.pairs):
            idx[j + 1, k + 1] = idx[k + 1, j + 1] = shift + c
        idx_b = shift + np.concatenate([[self.y], self.xy])
        return idx, w, idx_b

    def gram_blocks(self, F, n=None):
        """Return the scaled Gram block of (1, x') and its cross products with y'.

        Parameters
        ----------
        F : ndarray of shape (..., dim)
            Released vectors (noisy or not); leading axes are vectorised over.
        n : float, optional
            The public number of records, required under replace-one neighbours (where it
            is not a coordinate).

        Returns
        -------
        A : ndarray of shape (..., p + 1, p + 1)
            The Gram block sum (1, x')(1, x')' with the intercept first.
        b : ndarray of shape (..., p + 1)
            sum (1, x') y'.
        """
        F = np.asarray(F, dtype=float)
        if self.count is None:
            if n is None:
                raise ValueError("RegressionLayout.gram_blocks needs the public n under replace-one neighbours.")
            F = np.concatenate([np.full(F.shape[:-1] + (1,), float(n)), F], axis=-1)
        idx, w, idx_b = self._gram_index
        return F[..., idx] * w, F[..., idx_b]

    def kt_constraints(self):
        """Return the cylinders of K_T (errata item 5).

        Returns
        -------
        list of (list of int, NormBall)
            K_2 on (x_j, 2 x_j^2), and K_3 on (x_j, x_k, x_j x_k) and on (x_j, y, x_j y).
        """
        if self.count is not None:
            raise ValueError("K_T is derived for replace-one neighbours (paper Section 5.1).")
        k2, k3 = K2Ball(), k3_ball()
        cons = [([int(self.lin[j]), int(self.sq[j])], k2) for j in range(self.p)]
        cons += [([j, k, int(c)], k3) for c, (j, k) in zip(self.cross, self.pairs)]
        cons += [([j, self.y, int(self.xy[j])], k3) for j in range(self.p)]
        return cons


@functools.lru_cache(maxsize=16)
def kt_ball(p):
    """The paper's Section 5.1 K_T for p predictors, as an :class:`IntersectionBall`.

    Notes
    -----
    Read as in ERRATA.md item 5: a valid norm ball containing S_T with
    Delta_{K_T} = 1, but an outer approximation of Hull(S_T).
    """
    layout = RegressionLayout(p)
    return IntersectionBall(layout.dim, layout.kt_constraints(), name=f"K_T(p={p})")


def linear_regression_space(p, *, neighbours="replace"):
    """Return the sensitivity space of the Section 5.1 statistic, with its exact support function.

    Parameters
    ----------
    p : int
        Number of predictors.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation; see :class:`RegressionLayout` for the released
        coordinates of each.

    Returns
    -------
    SensitivitySpace
        Its ``statistic`` is ``RegressionLayout(p, neighbours).statistic()``. Under
        replace-one neighbours Delta_{K_T} = 1 is registered (errata item 5) and the
        candidates are K_T ('kt') and, for p <= 8, the cut ball ('cut').

    Examples
    --------
    >>> space = linear_regression_space(1)
    >>> space.dim, sorted(space.candidates)
    (4, ['cut', 'kt'])
    """
    layout = RegressionLayout(p, neighbours)
    t = layout.statistic()
    if neighbours == "add_remove":
        return SensitivitySpace.additive(t, None, name=f"linear regression, p={p}, add/remove", neighbours=neighbours)
    candidates = {"kt": kt_ball(p)}
    if _shipped(p):  # cheap only when its cuts are in the shipped table
        candidates["cut"] = regression_cut_ball(p)[0]
    space = SensitivitySpace.additive(t, None, name=f"linear regression, p={p}", candidates=candidates)
    space.register_exact(kt_ball(p), 1.0, "S_T inside K_T: paper Section 5.1 read as errata item 5")
    if "cut" in candidates:
        space.register_exact(
            candidates["cut"],
            1.0,
            "S_T inside K_T (errata item 5) and inside every exact support plane; "
            "attained at u = 2 e_1, a point of S_T on both boundaries",
        )
    return space


def _shipped(p):
    if not _CUTS_FILE.exists():
        return False
    with np.load(_CUTS_FILE) as table:
        return f"directions_{int(p)}" in table.files


@dataclass
class CutBallReport:
    """How the tighter regression ball was built and how much it gains.

    Attributes
    ----------
    n_cuts : int
        Cutting planes c.u <= h(c) added to K_T (h exact, so each is certified).
    volume_ratio : float
        vol(ball) / vol(K_T), estimated on fresh uniform points of K_T.
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
    chosen = []
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


def _cut_ball(p, directions):
    """K_T cut by c.u <= h(c) for each direction c, with h recomputed exactly here."""
    layout = RegressionLayout(p)
    hi, lo, _, _ = layout.statistic().extremes(directions)
    G = directions / (hi - lo)[:, None]
    eye = np.eye(layout.dim) / 2.0  # each coordinate has sensitivity 2: keeps the cut polytope bounded
    cuts = Polytope.from_halfspaces(
        np.vstack([G, -G, eye, -eye]), np.ones(2 * len(G) + 2 * layout.dim), max_qhull_dim=0, name="cuts"
    )
    # The cut check is one matrix product and rejects most candidates: run it first.
    return IntersectionBall(
        layout.dim, [(list(range(layout.dim)), cuts)] + layout.kt_constraints(), name=f"K_T cut (p={p})"
    )


def _measure(p, ball, rng, n):
    test = kt_ball(p).sample_uniform(n, rng=rng)
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
    return _cut_ball(p, directions), CutBallReport(len(directions), float(frac), float(se), witness)


def build_cut_table(path=None, ps=range(1, 9)):
    """Rebuild the shipped table of cut directions (default settings) for ``ps``.

    Only the directions are trusted from the file; their support values are
    recomputed exactly when the ball is built, so the file cannot weaken privacy.
    """
    out = {}
    for p in ps:
        directions, _, rep = _build(p, *_DEFAULTS, 4 * RegressionLayout(p).dim)
        out[f"directions_{p}"] = directions
        out[f"ratio_{p}"] = np.array([rep.volume_ratio, rep.volume_ratio_se])
        out[f"witness_{p}"] = rep.witness
    np.savez_compressed(path or _CUTS_FILE, **out)


def regression_cut_ball(p, *, seed=0, n_train=100_000, per_block=200, max_cuts=None):
    """A certified ball between Hull(S_T) and K_T, with strictly smaller volume than K_T.

    K_T intersected with cutting planes c.u <= h(c) whose h is computed exactly
    by face enumeration (:meth:`QuadraticStatistic.extremes`), so the ball
    contains S_T and Delta = 1 is certified. The cuts are chosen greedily, among
    random directions on the coordinates of 2- and 3-variable blocks, to remove
    the most volume of K_T (ERRATA.md item 5 shows K_T is not the hull; its
    witness direction (0, 1, 1, 1) for p = 1 is such a block direction). The
    construction is deterministic for a given ``seed``. With the default
    settings and p <= 8 the chosen directions are read from a table shipped with
    the package (``build_cut_table`` rebuilds it); their support values are
    always recomputed exactly, so the table only saves the search.

    Returns
    -------
    ball : IntersectionBall
        Exact gauge, exact rejection sampler from the bounding box.
    report : CutBallReport
    """
    layout = RegressionLayout(p)
    default_cuts = 4 * layout.dim
    max_cuts = default_cuts if max_cuts is None else int(max_cuts)
    if (seed, n_train, per_block, max_cuts) == (*_DEFAULTS, default_cuts) and _shipped(p):
        return _cut_ball_from_table(int(p))
    return _build(int(p), int(seed), int(n_train), int(per_block), max_cuts)[1:]
