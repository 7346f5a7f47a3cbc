"""Intersections of cylinders over coordinate subsets (the paper's Section 5.1 K_T)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from knorm._validation import check_dim
from knorm.geometry.base import NormBall, NotANormBallError

__all__ = ["IntersectionBall"]


class IntersectionBall(NormBall):
    """The set of u in R^dim with u[indices] in ball for every constraint.

    Each constraint ``(indices, ball)`` is a cylinder {u : u[indices] in ball}
    over a norm ball of dimension ``len(indices)``; K is their intersection.

    Parameters
    ----------
    dim : int
        Dimension m.
    constraints : sequence of (indices, NormBall)
        ``indices`` are distinct ints in [0, dim) with ``len(indices) == ball.dim``.
        Every coordinate must appear in at least one constraint.
    name : str, optional
        Label for ``repr``.

    Raises
    ------
    NotANormBallError
        If some coordinate is in no constraint (K would be unbounded along it).

    Notes
    -----
    K is convex, symmetric and absorbing because each cylinder is, and bounded
    once every coordinate is constrained. Its gauge is the largest of the
    cylinders' gauges, max_k ||u[idx_k]||_{K_k}, since u / t lies in every
    cylinder exactly when t is at least each of them. The bounding box takes, per
    coordinate, the smallest half-width over the constraints containing it, so it
    is certified whenever the sub-balls' boxes are.

    The support function is not known in general. The volume is a labelled Monte
    Carlo estimate, and uniform sampling is exact rejection from the bounding box
    in which membership evaluates the constraints in order and each one only on
    the candidates still alive.

    This is the structure of the paper's Section 5.1 K_T read as in errata item 5:
    every (u_xj, u_xjxj) in K_2 and every (u_xj, u_xk, u_xjxk) and (u_xj, u_y,
    u_xjy) in K_3. That K_T is a valid ball containing the sensitivity space, but
    an outer approximation of its convex hull.

    References
    ----------
    Awan & Slavkovic (2021), Section 5.1; errata item 5.

    Examples
    --------
    >>> from knorm.geometry.lp import LpBall
    >>> ball = IntersectionBall(3, [([0, 1], LpBall(2, 1)), ([1, 2], LpBall(2, 1))])
    >>> float(ball.norm([0.5, 0.25, -0.5]))
    0.75
    >>> ball.bounding_box().tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, dim, constraints, *, name=None):
        owner = "IntersectionBall"
        super().__init__(check_dim(dim, owner))
        self.constraints = _check_constraints(self.dim, constraints, owner)
        self.name = None if name is None else str(name)
        m = self.dim
        covered = np.zeros(m, dtype=bool)
        for idx, _ in self.constraints:
            covered[idx] = True
        if not covered.all():
            missing = np.flatnonzero(~covered).tolist()
            raise NotANormBallError(
                f"{owner}: the intersection is not a norm ball because it is not bounded "
                f"(rule: every coordinate must appear in at least one constraint). "
                f"Uncovered coordinates: {missing}."
            )
        box = np.full(m, np.inf)
        for idx, ball in self.constraints:
            box[idx] = np.minimum(box[idx], ball.bounding_box())
        self._box = box

    def _cache_key(self):
        keys = tuple(ball.cache_key for _, ball in self.constraints)
        if any(k is None for k in keys):
            return None
        return (
            "IntersectionBall",
            self.dim,
            tuple((tuple(idx.tolist()), k) for (idx, _), k in zip(self.constraints, keys)),
        )

    def _gauge(self, u):
        out = None
        for idx, ball in self.constraints:
            g = ball._gauge(u[..., idx])
            out = g if out is None else np.maximum(out, g)
        return np.asarray(out, dtype=float)[()]

    def _contains(self, u):
        flat = u.reshape(-1, self.dim)
        alive = np.arange(len(flat))
        for idx, ball in self.constraints:
            # Later constraints only see the candidates every earlier one accepted.
            sub = flat[alive[:, None], idx] if len(alive) < len(flat) else flat[:, idx]
            alive = alive[ball._contains(sub)]
            if not len(alive):
                break
        out = np.zeros(len(flat), dtype=bool)
        out[alive] = True
        return out.reshape(u.shape[:-1])[()]

    def _bounding_box(self):
        return self._box

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"IntersectionBall({label}dim={self.dim}, {len(self.constraints)} constraints)"


def _check_constraints(dim, constraints, owner):
    rule = "a non-empty sequence of (indices, NormBall) pairs"
    if isinstance(constraints, (str, bytes)) or not isinstance(constraints, Sequence) or not len(constraints):
        raise (TypeError if not isinstance(constraints, Sequence) else ValueError)(
            f"The 'constraints' parameter of {owner} must be {rule}. Got {constraints!r} instead."
        )
    out = []
    for k, item in enumerate(constraints):
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
            raise TypeError(
                f"The 'constraints' parameter of {owner} must be {rule}. Got {item!r} at position {k} instead."
            )
        indices, ball = item
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"The 'constraints' parameter of {owner} must be {rule}. Got a "
                f"{type(ball).__name__} as the ball of constraint {k} instead."
            )
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
            raise TypeError(
                f"The indices of constraint {k} of {owner} must be a non-empty 1-D sequence "
                f"of ints. Got {indices!r} instead."
            )
        if idx.min() < 0 or idx.max() >= dim:
            raise ValueError(
                f"The indices of constraint {k} of {owner} must be in the range [0, {dim}). "
                f"Got {idx.tolist()!r} instead."
            )
        if len(np.unique(idx)) != len(idx):
            raise ValueError(
                f"The indices of constraint {k} of {owner} must be distinct. Got {idx.tolist()!r} instead."
            )
        if ball.dim != len(idx):
            raise ValueError(
                f"The ball of constraint {k} of {owner} must have dimension len(indices) = "
                f"{len(idx)}. Got a ball of dimension {ball.dim} instead."
            )
        out.append((idx.astype(np.intp), ball))
    return tuple(out)
