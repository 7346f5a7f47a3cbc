"""Targeted atom tests: the power to see a 0.5 % bias at one atom of an exact integer law.

An event audit (:mod:`knorm.audit.core`) bounds eps from below with confidence
intervals on events it picks itself; against a bias of 1 % at one atom of a
discrete law it has no power at any practical sample size. An exact lattice law
gives a sharper test: for two sets of lattice points A and B the law fixes

    P(A) / P(B) = sum_{a in A} w(a) / sum_{b in B} w(b),    w(k) = exp(-r ||k||_K'),

so, given the number m of draws that fall in A or B, the count in A is
Binomial(m, p) with p = P(A) / (P(A) + P(B)) exactly. The test statistic is the
standardised count z; |z| > 4.5 has probability about 7e-6 under the exact law
(two-sided normal tail; m is in the tens of thousands or more, where the
binomial's normal approximation is accurate to well below that), so a failure is
a finding, not noise. The estimate log(c_A / c_B) is the *realised* log ratio,
which for an output and its neighbour's preimage is the privacy loss the sampler
actually delivers at that output.

Issue 21 found the fast discrete Laplace over-weighting 0 by 1.2 % at rate 1/128
(a negative zero kept after a redrawn low part): z = 11 at 3e8 draws here, and
the chi-square law tests with 1e6 draws never saw it. :func:`standard_atom_cases`
lists the atoms that matter for every exact sampler of the release path (0, its
neighbours, a boundary corner and a far shell), and :class:`ZeroHeavyNoise` is a
deliberately broken law (a 1 % excess at 0) that the suite must flag.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from knorm._validation import check_count, check_rng

__all__ = [
    "AtomCase",
    "AtomResult",
    "ZeroHeavyNoise",
    "audit_atoms",
    "format_atom_table",
    "release_atom_pairs",
    "run_atom_suite",
    "standard_atom_cases",
]

# |z| above this is a finding: two-sided normal tail 6.8e-6 per comparison.
Z_MAX = 4.5
_CHUNK = 10_000_000


@dataclass(frozen=True)
class AtomResult:
    """One comparison of two sets of atoms.

    Parameters
    ----------
    name : str
        What is compared (e.g. ``"0 vs +-1"``).
    count_a, count_b : int
        Draws that fell in A and in B.
    log_ratio : float
        The exact log(P(A) / P(B)) under the target law.
    z : float
        The standardised count of A given count_a + count_b (0 when no draw fell in A or B).
    """

    name: str
    count_a: int
    count_b: int
    log_ratio: float
    z: float

    @property
    def estimate(self):
        """The realised log(P(A) / P(B)), log(count_a / count_b) (nan if either count is 0)."""
        if self.count_a == 0 or self.count_b == 0:
            return math.nan
        return math.log(self.count_a / self.count_b)

    @property
    def standard_error(self):
        """Standard error of :attr:`estimate`, sqrt(1/count_a + 1/count_b)."""
        if self.count_a == 0 or self.count_b == 0:
            return math.inf
        return math.sqrt(1 / self.count_a + 1 / self.count_b)

    @property
    def excess(self):
        """The realised ratio over the exact one, exp(estimate - log_ratio) (1 under the exact law)."""
        return math.exp(self.estimate - self.log_ratio)

    def passed(self, z_max=Z_MAX):
        """Return whether |z| <= z_max.

        Parameters
        ----------
        z_max : float, default 4.5
            The bound on |z| (two-sided normal tail 6.8e-6 at 4.5).

        Returns
        -------
        bool
            True when the counts agree with the exact law.
        """
        return abs(self.z) <= z_max


def _as_points(points, dim):
    arr = np.asarray(points, dtype=np.int64)
    return arr.reshape(-1, dim)


def _log_weight(points, logpmf):
    lw = np.asarray(logpmf(points), dtype=float).reshape(-1)
    top = float(lw.max())
    return top + math.log(math.fsum(np.exp(lw - top)))


def audit_atoms(draw, logpmf, pairs, *, dim=1, n, chunk=_CHUNK, rng=None):
    """Count draws in sets of atoms and test each ratio against the exact law.

    Parameters
    ----------
    draw : callable
        ``draw(m, gen)`` returns m draws of the law, int64 of shape (m,) or (m, dim).
    logpmf : callable
        The law's unnormalised log pmf on an int array of shape (k, dim): only
        differences matter.
    pairs : sequence of (str, array_like, array_like)
        ``(name, A, B)`` with A and B lattice points of shape (k, dim) (or (k,) for dim 1).
    dim : int, default 1
        Dimension of the law.
    n : int
        Total draws.
    chunk : int, default 10**7
        Draws per call of ``draw`` (memory: about 8 dim chunk bytes).
    rng : None, int, SeedSequence or Generator, optional
        Source of randomness.

    Returns
    -------
    list of AtomResult
        One per pair, in order.

    Examples
    --------
    >>> from knorm.noise.discrete import discrete_laplace
    >>> draw = lambda m, gen: discrete_laplace(1, 8, m, rng=gen)
    >>> logpmf = lambda k: -np.abs(k[:, 0]) / 8
    >>> [r] = audit_atoms(draw, logpmf, [("0 vs +-1", [0], [-1, 1])], n=200_000, rng=0)
    >>> r.passed(), round(r.log_ratio, 4)  # log(1 / (2 e^-1/8)) = 1/8 - log 2
    (True, -0.5681)
    """
    n = check_count(n, "n", "audit_atoms")
    chunk = check_count(chunk, "chunk", "audit_atoms")
    gen = check_rng(rng, "audit_atoms")
    sets = [(name, _as_points(a, dim), _as_points(b, dim)) for name, a, b in pairs]
    radius = max(int(np.abs(np.concatenate([a, b])).max()) for _, a, b in sets)
    width = 2 * radius + 1
    if width**dim > 2**26:
        raise ValueError(f"audit_atoms: the atoms span a box of {width}^{dim} cells; keep them nearer 0.")
    place = width ** np.arange(dim, dtype=np.int64)  # mixed-radix cell index of a point of the box
    cells = np.zeros(width**dim, dtype=np.int64)
    done = 0
    while done < n:
        m = min(chunk, n - done)
        k = np.asarray(draw(m, gen), dtype=np.int64).reshape(m, dim)
        done += m
        near = k[np.all(np.abs(k) <= radius, axis=1)] if dim > 1 else k[np.abs(k[:, 0]) <= radius]
        cells += np.bincount((near + radius) @ place, minlength=cells.size)
    out = []
    for name, a, b in sets:
        ca, cb = (int(cells[(pts + radius) @ place].sum()) for pts in (a, b))
        lr = _log_weight(a, logpmf) - _log_weight(b, logpmf)
        p = 1.0 / (1.0 + math.exp(-lr))
        m = ca + cb
        z = 0.0 if m == 0 else (ca - m * p) / math.sqrt(m * p * (1 - p))
        out.append(AtomResult(name, ca, cb, lr, z))
    return out


def release_atom_pairs(law, direction):
    """The output-0 pair of a lattice release: the atom 0 and the neighbour's preimage of 0.

    On neighbouring datasets whose rounded statistics differ by ``u`` lattice units,
    the output 0 comes from the noise k = 0 under one and k = -u under the other,
    so log P(0) - log P(-u) is the privacy loss realised at that output; it must
    be at most eps (it is r ||gamma u||_K' exactly).

    Parameters
    ----------
    law : LatticeLaw
        The mechanism's lattice law (``KNormMechanism(...).lattice``).
    direction : array_like of shape (m,)
        A difference of the statistic on neighbouring data, T(X') - T(X) (in S_T).

    Returns
    -------
    list of (str, ndarray, ndarray)
        Pairs for :func:`audit_atoms`.
    """
    u = np.rint(np.asarray(direction, dtype=float) / law.spacing).astype(np.int64)
    return [("output 0: k = 0 vs k = -u (realised privacy loss)", u * 0, -u)]


class ZeroHeavyNoise:
    """DELIBERATELY BROKEN: an exact integer law with ``excess`` more mass at the atom 0.

    With probability ``excess P(0)`` a draw is replaced by 0, so P'(0) is
    about (1 + excess) P(0): the kind of bias issue 21 found (1.2 % at rate 1/128).
    For audits only; the replacement uses floating-point coin flips.

    Parameters
    ----------
    noise : object
        A law with ``sample(size, rng=...)`` and ``unnormalised_logpmf``.
    p0 : float
        P(0) under the sound law.
    excess : float, default 0.01
        The relative bias at 0.
    """

    def __init__(self, noise, p0, excess=0.01):
        self.noise, self.p0, self.excess = noise, float(p0), float(excess)
        self.unnormalised_logpmf = noise.unnormalised_logpmf

    def sample(self, size=None, *, rng=None):
        """Draw from the broken law.

        Parameters
        ----------
        size : int, optional
            Number of draws (None: one).
        rng : None, int, SeedSequence or Generator, optional
            Source of randomness.

        Returns
        -------
        ndarray of int64
            The draws, shaped as the sound law's.
        """
        gen = check_rng(rng, "ZeroHeavyNoise.sample")
        k = np.asarray(self.noise.sample(size, rng=gen))
        hit = gen.random(k.shape[0] if k.ndim else 1) < self.excess * self.p0
        k[hit] = 0
        return k


@dataclass(frozen=True)
class AtomCase:
    """One law of the atom suite.

    Parameters
    ----------
    name : str
        The law, as printed.
    noise : object
        Has ``sample(size, rng=...)`` (int64 draws) and ``unnormalised_logpmf``.
    pairs : list of (str, ndarray, ndarray)
        The atoms compared.
    dim : int
        Dimension of a draw.
    draws : int
        Default number of draws (scaled by :func:`run_atom_suite`'s ``scale``).
    sound : bool
        False for the deliberately broken law, which must be flagged.
    """

    name: str
    noise: object
    pairs: list
    dim: int
    draws: int
    sound: bool = True


class _Laplace1D:
    """discrete_laplace(s, t) as a law object (sample, unnormalised_logpmf)."""

    def __init__(self, s, t, signed=True):
        self.s, self.t, self.signed = s, t, signed

    def sample(self, size=None, *, rng=None):
        from knorm.noise.discrete import discrete_laplace, geometric

        return (discrete_laplace if self.signed else geometric)(self.s, self.t, size, rng=rng)

    def unnormalised_logpmf(self, k):
        return -np.abs(np.asarray(k, dtype=float)).reshape(-1) * (self.s / self.t)


def _ring(r, dim):
    """Lattice points of Z^dim with ||k||_inf = r."""
    grid = np.stack(np.meshgrid(*[np.arange(-r, r + 1)] * dim, indexing="ij"), axis=-1).reshape(-1, dim)
    return grid[np.abs(grid).max(axis=1) == r]


def _laplace_pairs(rate):
    mid = max(1, round(math.log(2) / float(rate)))  # the median of |Y|: a mid-range atom
    far = max(2, round(5 * math.log(2) / float(rate)))  # P(|Y| >= far) is about 1/32: the tail
    return [
        ("0 vs +-1", [0], [-1, 1]),
        (f"0 vs {mid}", [0], [mid]),
        (f"-{mid} vs {mid}", [-mid], [mid]),
        (f"{far} vs {far + 1}", [far], [far + 1]),
    ]


def standard_atom_cases():
    """The suite: every exact sampler on the release path, and one broken law.

    Returns
    -------
    list of AtomCase
        Discrete Laplace on the dyadic fast path (rates 1/128, 1/64, 3/1024) and the
        CKS path (1/3), the geometric law, the default l1 release at eps = 1 and 0.1
        (output 0), the l_inf lattice law (2-D, a fine lattice), the K_3 polytope's
        rejection sampler, and :class:`ZeroHeavyNoise` with a 1 % excess at 0.
    """
    from knorm.geometry import LpBall, k3_ball
    from knorm.mechanisms import KNormMechanism
    from knorm.noise.lattice import LatticeKNormNoise

    cases = []
    for s, t in [(1, 128), (1, 64), (3, 1024), (1, 3)]:
        path = "dyadic fast path" if t & (t - 1) == 0 else "CKS path"
        # With 6e8 draws a 0.5 % bias at 0 is 6 standard errors at rate 1/128 (4 at 3/1024);
        # the CKS path's rate 1/3 (P(0) = 0.17) sees it with 3e7 (8 standard errors).
        draws = 600_000_000 if t & (t - 1) == 0 else 30_000_000
        cases.append(
            AtomCase(
                f"discrete Laplace, rate {s}/{t} ({path})", _Laplace1D(s, t), _laplace_pairs(Fraction(s, t)), 1, draws
            )
        )
    geo_mid = round(math.log(2) * 128)
    cases.append(
        AtomCase(
            "geometric, rate 1/128",
            _Laplace1D(1, 128, signed=False),
            [("0 vs 1", [0], [1]), (f"0 vs {geo_mid}", [0], [geo_mid])],
            1,
            300_000_000,
        )
    )
    for eps in (1.0, 0.1):
        law = KNormMechanism(LpBall(1, 1), 1.0, eps).lattice
        pairs = release_atom_pairs(law, [1.0]) + [("0 vs +-1", [0], [-1, 1])]
        draws = 300_000_000 if eps == 1 else 100_000_000
        cases.append(AtomCase(f"l1 release, Delta = 1, eps = {eps:g} (default lattice)", law.noise, pairs, 1, draws))
    linf = LatticeKNormNoise(LpBall(2, np.inf), Fraction(1, 16))
    shell = 8  # corners and axis points of one shell: the box edge of the latent-radius sampler
    corners = np.array([[a, b] for a in (-shell, shell) for b in (-shell, shell)])
    axis = np.array([[shell, 0], [-shell, 0], [0, shell], [0, -shell]])
    cases.append(
        AtomCase(
            "l_inf lattice law, 2-D, rate 1/16",
            linf,
            [
                ("0 vs ring 1", np.zeros((1, 2)), _ring(1, 2)),
                (f"corners vs axis points of ring {shell}", corners, axis),
                ("ring 1 vs ring 2", _ring(1, 2), _ring(2, 2)),
            ],
            2,
            100_000_000,
        )
    )
    k3 = LatticeKNormNoise(k3_ball(), Fraction(2), axis_scale=[1 / 4] * 3)
    cases.append(
        AtomCase(
            "K_3 polytope lattice law, 3-D, rate 2, spacing 1/4 (rejection)",
            k3,
            [("0 vs ring 1", np.zeros((1, 3)), _ring(1, 3)), ("ring 1 vs ring 2", _ring(1, 3), _ring(2, 3))],
            3,
            20_000_000,
        )
    )
    p0 = math.tanh(1 / 256)  # P(0) = (1 - q) / (1 + q) with q = e^{-1/128}
    cases.append(
        AtomCase(
            "BROKEN: discrete Laplace 1/128 with 1 % excess at 0",
            ZeroHeavyNoise(_Laplace1D(1, 128), p0, 0.01),
            [("0 vs +-1", [0], [-1, 1])],
            1,
            300_000_000,
            sound=False,
        )
    )
    return cases


def run_atom_suite(cases=None, *, scale=1.0, seed=20261126, chunk=_CHUNK):
    """Run the atom suite.

    Parameters
    ----------
    cases : list of AtomCase, optional
        By default :func:`standard_atom_cases`.
    scale : float, default 1.0
        Multiplies every case's draws (the tests use 1/60; the power quoted in
        ``docs/audit.md`` is at scale 1).
    seed : int, default 20261126
        Seed of the suite (each case gets a child stream).
    chunk : int, default 10**7
        Draws per sampler call.

    Returns
    -------
    list of (AtomCase, list of AtomResult)
        The results, case by case.
    """
    cases = standard_atom_cases() if cases is None else cases
    streams = np.random.SeedSequence(seed).spawn(len(cases))
    out = []
    for case, stream in zip(cases, streams):
        noise = case.noise
        draw: Callable = lambda m, gen, noise=noise: noise.sample(m, rng=gen)  # noqa: E731
        results = audit_atoms(
            draw,
            noise.unnormalised_logpmf,
            case.pairs,
            dim=case.dim,
            n=max(1, int(case.draws * scale)),
            chunk=chunk,
            rng=np.random.default_rng(stream),
        )
        out.append((case, results))
    return out


def format_atom_table(rows):
    """The suite's results as a markdown table (one line per comparison).

    Parameters
    ----------
    rows : list of (AtomCase, list of AtomResult)
        What :func:`run_atom_suite` returns.

    Returns
    -------
    str
        The table: law, atoms, draws in A and B, exact and realised log ratio, z, verdict.
    """
    lines = [
        "| law | atoms A vs B | in A | in B | exact log P(A)/P(B) | realised | excess | z | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for case, results in rows:
        for r in results:
            flag = "pass" if r.passed() else "BIAS"
            lines.append(
                f"| {case.name} | {r.name} | {r.count_a:,} | {r.count_b:,} | {r.log_ratio:.6f} | {r.estimate:.6f} "
                f"| {r.excess:.4f} | {r.z:+.2f} | {flag} |"
            )
    return "\n".join(lines)
