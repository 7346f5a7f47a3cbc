"""Audits of K-norm mechanisms on adversarial neighbours.

For the K-norm mechanism with noise density proportional to exp(-||v||_K / s),
the log-likelihood ratio of an output z between the inputs t and t' is
(||z - t'||_K - ||z - t||_K) / s. Its level sets do not depend on the scale s,
so thresholding the *score* (||z - t'||_K - ||z - t||_K) / ||t - t'||_K, which
lies in [-1, 1], gives the Neyman-Pearson events for every noise scale at once:
the most powerful events against a mechanism whose scale is wrong (halved noise,
a sensitivity of the wrong norm, noise that ignores epsilon). The privacy loss
eps ||t - t'||_K / Delta is largest for neighbours whose difference u = t - t'
is a point of the sensitivity space S_T with the largest K-norm: those are found
among the points of S_T attaining its support function in many directions
(paper Definition "K-norm Sensitivity"; h_K by errata item 5).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from knorm._validation import check_count, check_positive, check_rng, check_vectors, param_error
from knorm.audit.core import NeighbourPair, audit_pairs
from knorm.geometry import LpBall, NormBall
from knorm.geometry.duality import sign_vectors

__all__ = ["adversarial_neighbours", "audit_knorm", "audit_mechanism", "knorm_statistics", "projection_statistics"]

# Neighbour differences whose K-norm is within this relative distance of the
# largest one found count as maximisers of the privacy loss.
_TIE_RTOL = 1e-6
# Sign vectors are used as search directions up to this dimension (2^(m-1) of them).
_MAX_SIGN_DIM = 10
# The score is rounded to this many decimals so that rounding noise in the
# gauges does not split the atom of the score at its maximum 1 (polytope norms).
_SCORE_DECIMALS = 9
# Points of S_T sampled per search direction when the space has no extreme-point oracle.
_SAMPLES_PER_DIRECTION = 10
# Step of the central differences giving the outer normal of K at a boundary point.
_NORMAL_STEP = 1e-6


def projection_statistics(u):
    """Return the projection of the outputs on the direction of u = value - neighbour.

    A test that uses no density, for mechanisms without a ball.

    Parameters
    ----------
    u : array_like of shape (m,)
        The non-zero difference T(X) - T(X') of the neighbouring inputs.

    Returns
    -------
    dict of str to callable
        ``{'proj(u)': z -> z @ u / ||u||_2}``, mapping outputs of shape (n, m) to (n,).
    """
    u = np.asarray(u, dtype=float)
    c = u / np.linalg.norm(u)
    return {"proj(u)": lambda z, c=c: z @ c}


def knorm_statistics(ball, value, neighbour):
    """Return test statistics for a K-norm mechanism on the neighbours ``value`` and ``neighbour``.

    Parameters
    ----------
    ball : NormBall
        The mechanism's ball K.
    value : array_like of shape (m,)
        The statistic t = T(X).
    neighbour : array_like of shape (m,)
        The statistic t' = T(X') of the neighbouring dataset; it must differ from t.

    Returns
    -------
    dict of str to callable
        ``'llr'``: the score (||z - t'||_K - ||z - t||_K) / ||t - t'||_K, a
        scale-free version of the log-likelihood ratio (see the module notes);
        ``'proj(u)'``: the projection on u = t - t'; ``'proj(normal)'``: the
        projection on the outer normal of K at u / ||u||_K, the direction c in
        which u attains the support function of ||u||_K K.
    """
    if not isinstance(ball, NormBall):
        raise param_error("ball", "knorm_statistics", "a NormBall", ball, TypeError)
    t = check_vectors(value, ball.dim, "value", "knorm_statistics")
    t2 = check_vectors(neighbour, ball.dim, "neighbour", "knorm_statistics")
    u = t - t2
    g = float(ball.norm(u))
    if not g > 0:
        raise ValueError("knorm_statistics: 'value' and 'neighbour' must differ.")

    def llr(z):
        s = (ball.norm(z - t2) - ball.norm(z - t)) / g
        return np.round(np.clip(s, -1.0, 1.0), _SCORE_DECIMALS)

    out: dict[str, Callable] = {"llr": llr}
    out.update(projection_statistics(u))
    normal = _outer_normal(ball, u / g)
    if normal is not None and abs(float(normal @ u)) < (1 - 1e-9) * float(np.linalg.norm(u)):
        out["proj(normal)"] = lambda z, c=normal: z @ c
    return out


def _outer_normal(ball, x):
    """Unit outer normal of K at the boundary point x, by central differences of the gauge."""
    m = ball.dim
    h = _NORMAL_STEP * max(1.0, float(np.abs(x).max()))
    steps = h * np.eye(m)
    grad = (ball.norm(x + steps) - ball.norm(x - steps)) / (2 * h)
    n = float(np.linalg.norm(grad))
    return grad / n if n > 0 and np.all(np.isfinite(grad)) else None


def _release_sampler(mechanism, value):
    value = np.asarray(value, dtype=float)

    def sample(n, rng):
        return np.asarray(mechanism.release(np.broadcast_to(value, (n, value.shape[-1])), rng=rng))

    return sample


def audit_mechanism(mechanism, value, neighbour, *, statistics=None, claimed_epsilon=None, rng=None, **options):
    """Audit any mechanism with a ``release(values, rng=...)`` method on one neighbour pair.

    Parameters
    ----------
    mechanism : object
        Has ``release(values, rng=...)`` accepting a batch of shape (n, m) and
        releasing each row independently (as :class:`~knorm.mechanisms.KNormMechanism`).
    value, neighbour : array_like of shape (m,)
        T(X) and T(X') for neighbouring datasets X, X'.
    statistics : mapping, optional
        Test statistics; by default :func:`knorm_statistics` when the mechanism
        has a ``ball``, else :func:`projection_statistics`.
    claimed_epsilon : float, optional
        Defaults to ``mechanism.epsilon`` when it exists.
    rng : None, int, SeedSequence or Generator
        Randomness of the releases.
    **options
        Passed to :func:`~knorm.audit.audit_pairs` (``n_samples``, ``confidence``, ...).

    Returns
    -------
    AuditResult
        The lower confidence bound on eps and the verdict against the claim.
    """
    value = np.asarray(value, dtype=float)
    neighbour = np.asarray(neighbour, dtype=float)
    if statistics is None:
        ball = getattr(mechanism, "ball", None)
        if isinstance(ball, NormBall):
            statistics = knorm_statistics(ball, value, neighbour)
        else:
            statistics = projection_statistics(value - neighbour)
    if claimed_epsilon is None:
        claimed_epsilon = getattr(mechanism, "epsilon", None)
    pair = NeighbourPair(
        _release_sampler(mechanism, value),
        _release_sampler(mechanism, neighbour),
        statistics,
        f"u = {_fmt(value - neighbour)}",
    )
    options.setdefault("label", repr(mechanism))
    return audit_pairs([pair], claimed_epsilon=claimed_epsilon, rng=rng, **options)


def adversarial_neighbours(ball, space=None, *, sensitivity=None, n=4, n_directions=1000, rng=None):
    """Return neighbour differences u = T(X) - T(X') with the largest privacy loss ||u||_K.

    Parameters
    ----------
    ball : NormBall
        The mechanism's ball K.
    space : SensitivitySpace, optional
        The statistic's sensitivity space. Its extreme points (the points of S_T
        attaining the support function) are computed in the coordinate and sign
        directions, the facet normals of polytope balls (and of the sub-balls of
        intersections), and ``n_directions`` random directions; those with the
        largest K-norm are returned: the adversarial neighbours of the data domain.
        A space without an extreme-point oracle is sampled instead (10 points per
        direction), which finds less extreme neighbours.
    sensitivity : float, optional
        Without a space: the declared Delta; u = Delta x / ||x||_K for x the
        vertices of K (when known), e_1, the all-ones and the alternating-sign
        vectors, so that ||u||_K = Delta, the largest change allowed.
    n : int, default 4
        Largest number of differences returned (distinct up to sign, spread out).
    n_directions : int, default 1000
        Random search directions (with a space).
    rng : None, int, SeedSequence or Generator
        Randomness of the search directions (with a space).

    Returns
    -------
    ndarray of shape (k, m), k <= n
        The differences, largest K-norm first.
    """
    owner = "adversarial_neighbours"
    if not isinstance(ball, NormBall):
        raise param_error("ball", owner, "a NormBall", ball, TypeError)
    n = check_count(n, "n", owner)
    if n < 1:
        raise param_error("n", owner, "an int >= 1", n)
    m = ball.dim
    if space is not None:
        if space.dim != m:
            raise ValueError(f"The 'space' parameter of {owner} must have dimension {m}. Got {space.dim} instead.")
        gen = check_rng(rng)
        n_random = check_count(n_directions, "n_directions", owner)
        dirs = np.vstack([_search_directions(ball), gen.standard_normal((n_random, m))])
        try:
            U = space.extreme_points(dirs)
        except NotImplementedError:  # no extreme-point oracle: sampled points of S_T (weaker, still neighbours)
            U = space.sample(len(dirs) * _SAMPLES_PER_DIRECTION, rng=gen)
        g = ball.norm(U)
        keep = g >= (1.0 - _TIE_RTOL) * g.max()
        U, g = U[keep], g[keep]
        U = U[np.argsort(-g, kind="stable")]
    else:
        if sensitivity is None:
            raise TypeError(f"{owner} needs a 'space' or a 'sensitivity'.")
        delta = check_positive(float(sensitivity), "sensitivity", owner)
        X = _boundary_candidates(ball)
        U = delta * X / ball.norm(X)[:, None]
    return _spread(U, n)


def _search_directions(ball):
    m = ball.dim
    parts = [np.eye(m), -np.eye(m)]
    if m <= _MAX_SIGN_DIM:
        parts.append(sign_vectors(m))
    parts += _facet_rows(ball)
    return np.vstack(parts)


def _facet_rows(ball, embed=None):
    """Facet normals of polytope balls, and of the sub-balls of intersections, in R^m."""
    rows = []
    hs = getattr(ball, "halfspaces", None)
    if hs is not None:
        rows.append(hs[0])
    for idx, sub in getattr(ball, "constraints", ()):
        for r in _facet_rows(sub) + [np.eye(sub.dim)] + ([sign_vectors(sub.dim)] if sub.dim <= _MAX_SIGN_DIM else []):
            full = np.zeros((len(r), ball.dim))
            full[:, idx] = r
            rows.append(full)
    return rows


def _boundary_candidates(ball):
    m = ball.dim
    parts = []
    vertices = getattr(ball, "vertices", None)
    if vertices is not None:
        parts.append(np.asarray(vertices, float))
    elif isinstance(ball, LpBall) and math.isinf(ball.p):
        parts.append(np.ones((1, m)))  # a vertex of the cube
    alt = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    parts += [np.eye(m)[:1], np.ones((1, m)), alt[None, :]]
    return np.vstack(parts)


def _spread(U, n):
    """Up to n rows, distinct up to sign, chosen greedily far apart (the first row first)."""
    scale = np.linalg.norm(U, axis=1, keepdims=True)
    D = U / np.where(scale > 0, scale, 1.0)
    chosen = [0]
    dist = np.minimum(np.linalg.norm(D - D[0], axis=1), np.linalg.norm(D + D[0], axis=1))
    while len(chosen) < n:
        j = int(np.argmax(dist))
        if dist[j] < 1e-6:
            break
        chosen.append(j)
        dist = np.minimum(dist, np.minimum(np.linalg.norm(D - D[j], axis=1), np.linalg.norm(D + D[j], axis=1)))
    return U[chosen]


def audit_knorm(
    mechanism,
    space=None,
    *,
    sensitivity=None,
    value=None,
    n_pairs=4,
    n_directions=1000,
    claimed_epsilon=None,
    rng=None,
    **options,
):
    """Audit a K-norm mechanism on adversarial neighbours.

    The candidate pairs are (value, value - u) for the differences u of
    :func:`adversarial_neighbours`; the selection split chooses among them and
    among the statistics of :func:`knorm_statistics`.

    Parameters
    ----------
    mechanism : KNormMechanism
        Any object with ``ball``, ``release(values, rng=...)`` and ``epsilon``.
    space : SensitivitySpace, optional
        The true sensitivity space of the statistic: neighbours are its extreme
        points. This catches a sensitivity that is too small for the data domain.
    sensitivity : float, optional
        Without a space, the declared Delta (default: the mechanism's own); the
        neighbours are then at K-norm Delta. This audits the sampler and the
        noise scale against the mechanism's own claim.
    value : array_like of shape (m,), optional
        T(X); zero by default (the mechanism is translation-equivariant).
    n_pairs : int, default 4
        Candidate neighbour pairs.
    n_directions : int, default 1000
        Random search directions for the extreme points.
    claimed_epsilon : float, optional
        Defaults to ``mechanism.epsilon``.
    rng : None, int, SeedSequence or Generator
        Randomness of the search directions and of the releases.
    **options
        Passed to :func:`~knorm.audit.audit_pairs` (``n_samples``, ``confidence``, ...).

    Returns
    -------
    AuditResult
        The lower confidence bound on eps over the candidate pairs, the event
        attaining it, and the verdict against ``claimed_epsilon``.

    Examples
    --------
    >>> from knorm import KNormMechanism, LpBall
    >>> mech = KNormMechanism(LpBall(2, 1), sensitivity=2.0, epsilon=1.0)
    >>> res = audit_knorm(mech, n_samples=20_000, confidence=0.99, rng=3)
    >>> res.passed, res.eps_lower <= 1.0
    (True, True)
    """
    ball = getattr(mechanism, "ball", None)
    if not isinstance(ball, NormBall):
        rule = "a K-norm mechanism (with a NormBall 'ball')"
        raise param_error("mechanism", "audit_knorm", rule, mechanism, TypeError)
    gen = check_rng(rng)
    if space is None and sensitivity is None:
        sensitivity = float(mechanism.sensitivity.value)
    U = adversarial_neighbours(ball, space, sensitivity=sensitivity, n=n_pairs, n_directions=n_directions, rng=gen)
    t = np.zeros(ball.dim) if value is None else check_vectors(value, ball.dim, "value", "audit_knorm")
    pairs = []
    sample_t = _release_sampler(mechanism, t)  # one object: the pairs share the outputs at t
    for u in U:
        t2 = t - u
        pairs.append(
            NeighbourPair(sample_t, _release_sampler(mechanism, t2), knorm_statistics(ball, t, t2), f"u = {_fmt(u)}")
        )
    if claimed_epsilon is None:
        claimed_epsilon = getattr(mechanism, "epsilon", None)
    options.setdefault("label", repr(mechanism))
    return audit_pairs(pairs, claimed_epsilon=claimed_epsilon, rng=gen, **options)


def _fmt(u):
    return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(u, float).ravel()) + ")"
