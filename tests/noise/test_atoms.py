"""Targeted atom tests of the exact samplers: enough draws to see a 0.5-1% bias at one atom (slow, issue 21).

Each test counts draws at a few atoms whose exact probabilities (or ratios) are known and
asserts |z| < 4.5 for a binomial z-score; a correct sampler fails one such test with
probability about 7e-6 (two-sided, 4.5 sigma) for a random seed. The seeds are fixed.

The discrete Laplace's zero atom at rates 1/128, 1/64 and 3/1024 (6e8 draws each) is in the
audit's atom suite, ``python -m knorm.audit --atoms`` (knorm.audit.atoms), which CI runs at full
size. Mutation check: with ``src/knorm/noise/discrete.py`` as it was before commit 5ed9d48 (a
negative zero kept when R is redrawn to 0), that test gave z = +15.7 at rate 1/128, as in issue 21.
The tests here add absolute atoms (P(0) against the normaliser), the geometric's tail past the
inversion table, and the polytope sampler's box proposal.
"""

import math

import numpy as np
import pytest

from knorm.geometry import LpBall
from knorm.noise import discrete
from knorm.noise.lattice import LatticeKNormNoise, RationalPolytope
from tests.settings import SEED

Z_ATOM = 4.5
CHUNK = 10_000_000

pytestmark = pytest.mark.slow


def _z(count, n, p):
    """z-score of ``count`` successes in ``n`` Bernoulli(p) trials."""
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def _counts(draw, total, keys):
    """Draw ``total`` values in chunks; count the values in each of ``keys`` (functions of a chunk)."""
    rng = np.random.default_rng(SEED)
    out = np.zeros(len(keys), dtype=np.int64)
    done = 0
    while done < total:
        n = min(CHUNK, total - done)
        x = draw(n, rng)
        out += [int(np.count_nonzero(key(x))) for key in keys]
        done += n
    return out


@pytest.mark.parametrize("s, t", [(1, 128), (3, 1024)])
def test_geometric_end_atoms(s, t):
    """Geometric fast path, 2e8 draws: P(G = 0) = 1 - q, P(G = 1) / P(G <= 1) = q / (1 + q), and the
    tail P(G >= 2^j q*) = q^(2^j q*) where the inversion table ends and memorylessness restarts it."""
    tau = t.bit_length() - 1
    j = discrete._block_bits(s, tau)
    end = discrete._geometric_table(s << j, t).qstar << j
    n = 200_000_000
    n0, n1, ntail = _counts(
        lambda m, rng: discrete._geometric(s, t, m, rng),
        n,
        [
            lambda x: x == 0,
            lambda x: x == 1,
            lambda x: x >= end,
        ],
    )
    q = math.exp(-s / t)
    zs = [_z(n0, n, 1 - q), _z(n1, n0 + n1, q / (1 + q)), _z(ntail, n, q**end)]
    assert max(map(abs, zs)) < Z_ATOM, f"z = {zs}"


def test_linf_lattice_atoms():
    """The l_inf lattice law in 2-D at rate 1/4 (j = 0), 1e8 draws: P(0) = 1 / Z and P(||k||_inf = 1) = 8 q / Z,
    Z = 1 + 8 q / (1 - q)^2 (the law P(k) proportional to q^||k||_inf)."""
    noise = LatticeKNormNoise(LpBall(2, p=float("inf")), 0.25)
    q = math.exp(-float(noise.effective_rate))
    Z = 1 + 8 * q / (1 - q) ** 2
    n = 100_000_000
    sup = lambda x: np.abs(x).max(axis=1)  # noqa: E731
    n0, n1 = _counts(lambda m, rng: noise.sample(m, rng=rng), n, [lambda x: sup(x) == 0, lambda x: sup(x) == 1])
    zs = [_z(n0, n, 1 / Z), _z(n1, n, 8 * q / Z)]
    assert max(map(abs, zs)) < Z_ATOM, f"z = {zs}"


def test_polytope_lattice_atoms():
    """The polytope rejection sampler (box proposal) on |x| / 8 + |y| / 2 <= 1 at rate 2, 5e7 draws:
    P(0) (about 1/16, standard error 0.06%) and P(k = (1, 0)) against exp(-r ||k||_K') / Z, Z summed
    over a box (floats, relative 1e-12)."""
    N, D = [[2, 8], [2, -8]], 16
    noise = LatticeKNormNoise(RationalPolytope(N, D), 2)
    assert noise._m is not None
    r = float(noise.effective_rate)
    R = 400
    g = np.arange(-R, R + 1)
    kx, ky = np.meshgrid(g, g, indexing="ij")
    gauge = np.maximum(np.abs(2 * kx + 8 * ky), np.abs(2 * kx - 8 * ky)) / D
    Z = float(np.exp(-r * gauge).sum())
    n = 50_000_000
    n0, n1 = _counts(
        lambda m, rng: noise.sample(m, rng=rng),
        n,
        [lambda x: (x == 0).all(axis=1), lambda x: (x[:, 0] == 1) & (x[:, 1] == 0)],
    )
    zs = [_z(n0, n, 1 / Z), _z(n1, n, math.exp(-r * 2 / D) / Z)]
    assert max(map(abs, zs)) < Z_ATOM, f"z = {zs}"
