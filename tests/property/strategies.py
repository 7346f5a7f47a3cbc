"""Hypothesis strategies for norm balls and vectors, and the shared settings.

Runs are reproducible: ``derandomize=True`` makes hypothesis derive its examples
from the test itself, and no example database is kept. Point clouds are drawn
with numpy from a hypothesis-chosen seed (so shrinking acts on the seed), while
structural choices (dimension, p, radius, scale) are drawn by hypothesis.
"""

import math

import numpy as np
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from knorm.geometry import IntersectionBall, K2Ball, LpBall, Polytope, k3_ball

PROPERTY_SETTINGS = settings(
    deadline=None,
    max_examples=60,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Relative tolerance of float identities of gauges (a few ulps of sums of |u|^p).
RTOL = 1e-9

seeds = st.integers(0, 2**32 - 1)
exponents = st.one_of(st.floats(1.0, 8.0), st.just(1.0), st.just(2.0), st.just(math.inf))


@st.composite
def lp_balls(draw, max_dim=6):
    dim = draw(st.integers(1, max_dim))
    p = draw(exponents)
    radius = draw(st.sampled_from([1.0, 0.3, 2.5, 7.0]))
    return LpBall(dim, p, radius)


@st.composite
def point_polytopes(draw, max_dim=4):
    """Symmetric hull of random points (dim 1..4), kept only when well conditioned."""
    dim = draw(st.integers(1, max_dim))
    n = draw(st.integers(dim, dim + 8))
    rng = np.random.default_rng(draw(seeds))
    V = rng.standard_normal((n, dim)) * draw(st.sampled_from([1.0, 0.5, 3.0]))
    s = np.linalg.svd(V, compute_uv=False)
    assume(s[-1] > 1e-2 * s[0])  # thin hulls make qhull's facets ill-conditioned
    return Polytope.from_points(V)


@st.composite
def halfspace_polytopes(draw, max_dim=4):
    """{u : |g_i . u| <= b_i} with the coordinate rows included (so it is bounded)."""
    dim = draw(st.integers(1, max_dim))
    rng = np.random.default_rng(draw(seeds))
    k = draw(st.integers(0, 6))
    G = np.vstack([np.eye(dim), rng.standard_normal((k, dim))])
    b = rng.uniform(0.5, 2.0, size=len(G))
    return Polytope.from_halfspaces(np.vstack([G, -G]), np.concatenate([b, b]))


@st.composite
def intersection_balls(draw, max_dim=5):
    """Cylinders over small l_p sub-balls on random coordinate subsets, covering every coordinate."""
    dim = draw(st.integers(2, max_dim))
    rng = np.random.default_rng(draw(seeds))
    cons = []
    for j in range(dim):  # each coordinate starts a block, so all are covered
        size = draw(st.integers(1, min(3, dim)))
        others = rng.permutation([i for i in range(dim) if i != j])[: size - 1]
        idx = [j, *map(int, others)]
        cons.append((idx, LpBall(size, draw(exponents), draw(st.sampled_from([1.0, 0.5, 2.0])))))
        if draw(st.booleans()):
            break  # fewer cylinders: the rest of the coordinates get one-dimensional ones
    covered = {i for idx, _ in cons for i in idx}
    cons += [([i], LpBall(1, 1, 1.5)) for i in range(dim) if i not in covered]
    return IntersectionBall(dim, cons)


_K2, _K3 = K2Ball(), k3_ball()  # built once: k3_ball() runs linear programs and qhull
_KINDS = {
    "lp": lp_balls,
    "points": point_polytopes,
    "halfspaces": halfspace_polytopes,
    "K2": lambda: st.just(_K2),
    "K3": lambda: st.just(_K3),
    "intersection": intersection_balls,
}
ALL_KINDS = tuple(_KINDS)
EXACT_VOLUME_KINDS = ("lp", "points", "halfspaces", "K2", "K3")


@st.composite
def balls(draw, kinds=tuple(_KINDS)):
    """A ball of a kind chosen uniformly (one_of would favour its first branches)."""
    kind = draw(st.sampled_from(kinds))
    return draw(_KINDS[kind]())


def exact_volume_balls():
    """Balls whose volume is exact (closed form or qhull triangulation)."""
    return balls(EXACT_VOLUME_KINDS)


def all_balls():
    """Every kind: l_p, polytopes from points and from halfspaces, K_2, K_3, intersections."""
    return balls()


def vectors(dim, n, seed, scale=3.0):
    """n vectors of R^dim mixing dense Gaussians, sparse ones, zeros and axis points."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n, dim)) * scale
    u[: n // 4] *= rng.random((n // 4, dim)) < 0.5  # sparse rows (faces, edges)
    u[n // 4 : n // 4 + 2] = 0.0
    u[-1] = 0.0
    u[-1, 0] = scale
    return u
