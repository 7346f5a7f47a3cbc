"""Lattice K-norm noise (issue 13): throughput of the exact integer samplers beside the continuous ones.

Run standalone from the repository root::

    python -m benchmarks.bench_lattice            # full run, prints a markdown section
    python -m benchmarks.bench_lattice --quick    # smoke run

Every case times, back to back in each repeat (:func:`benchmarks._harness.paired_timings`),
the exact lattice sampler (:class:`knorm.noise.lattice.LatticeKNormNoise`) and
today's continuous sampler of the same ball and scale, and reports vectors per
second and their ratio. Targets of the issue: the lattice l1 and l_inf samplers
reach at least 1/3 of the continuous ``laplace_noise`` / ``linf_noise`` throughput
at d = 5, 26, 100 and 1/r = 10^2 and 10^4 lattice units; the polytope sampler is
within 10x of ``KNormNoise(Polytope).sample`` for d <= 8. The module also defines
``TITLE`` and ``run(config)``, the interface of the page's sections, so that it can
be registered in :data:`benchmarks.SECTIONS`.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT / "src") not in sys.path:  # measure the working tree when run standalone
    sys.path.insert(0, str(REPO_ROOT / "src"))

from benchmarks._harness import BenchConfig, choose_n, fmt_rate, fmt_ratio, md_table, paired_timings  # noqa: E402

TITLE = "Lattice noise (exact integer samplers)"

DIMS = (5, 26, 100)
# 1/r in lattice units: the mechanism's rates (issue 13).
SCALES = (1e2, 1e4)
LP_TARGET = 1 / 3  # lattice throughput / continuous throughput, at least
POLY_TARGET = 1 / 10
# Spacing of the polytope lattices: K_3 (half-width 2) spans 2^8 lattice units.
POLY_SPACING = 2.0**-7


def _random_polytope(dim, seed):
    """The symmetric hull of 3 dim + 2 Gaussian points, each axis scaled to [-1, 1] (as in tests/noise)."""
    from knorm.geometry import Polytope

    pts = np.random.default_rng(seed).normal(size=(3 * dim + 2, dim))
    return Polytope.from_points(pts / np.abs(pts).max(axis=0))


def _random_halfspace_polytope(dim, seed):
    """The cube [-1, 1]^dim cut by 2 dim random symmetric halfspace pairs |a . u| <= 1 (a ~ N(0, I / dim))."""
    from knorm.geometry import Polytope

    a = np.random.default_rng(seed).normal(size=(2 * dim, dim)) / np.sqrt(dim)
    eye = np.eye(dim)
    A = np.vstack([eye, -eye, a, -a])
    return Polytope.from_halfspaces(A, np.ones(len(A)))


def _lp_cases():
    from knorm.geometry import LpBall
    from knorm.noise.samplers import laplace_noise, linf_noise

    for label, p, continuous in (("l1", 1.0, laplace_noise), ("l_inf", np.inf, linf_noise)):
        for dim in DIMS:
            for scale in SCALES:
                yield label, dim, scale, LpBall(dim, p, radius=scale), continuous


def _time_pair(lattice, continuous, dim, label, config, fixed=True):
    """Paired timings of ``lattice(n, rng)`` and ``continuous(n, rng)``; returns (n, t_lat, t_cont).

    ``fixed``: n is the memory cap (max_entries / dim vectors), so throughput is not
    swamped by per-call set-up; otherwise n is chosen for a call of about
    ``config.target_seconds`` (slow samplers), within the cap.
    """
    rng = config.rng("lattice", label, dim)
    n_max = max(1, config.max_entries // dim)
    n = n_max if fixed else choose_n(lambda k: lambda: lattice(k, rng), n_max, config.target_seconds)
    t = paired_timings(
        {"lattice": lambda: lattice(n, rng), "continuous": lambda: continuous(n, rng)},
        config.repeats,
        config.target_seconds,
    )
    return n, t["lattice"], t["continuous"]


def _row(label, dim, scale, n, t_lat, t_cont, target, acceptance):
    ratio = float(np.median(t_cont / t_lat))  # lattice throughput / continuous throughput
    verdict = "meets target" if ratio >= target else "**misses target**"
    return [
        label,
        dim,
        f"{scale:g}",
        f"{fmt_rate(n / np.median(t_lat))}/s",
        f"{fmt_rate(n / np.median(t_cont))}/s",
        fmt_ratio(ratio),
        f"{acceptance:.3f}",
        verdict,
    ], ratio


def run(config):
    """The section body: one table of l1 / l_inf cases and one of polytopes."""
    from knorm.geometry import k3_ball
    from knorm.noise import KNormNoise
    from knorm.noise.lattice import LatticeKNormNoise

    headers = ["law", "d", "1/r (lattice units)", "lattice", "continuous", "lattice / continuous", "acceptance", ""]
    rows, worst = [], {}
    for label, dim, scale, ball, continuous in _lp_cases():
        noise = LatticeKNormNoise(ball, 1)  # rate 1 per unit of ||.||_K, i.e. 1/scale per lattice unit
        config.log(f"lattice {label} d={dim} 1/r={scale:g}")
        n, t_lat, t_cont = _time_pair(
            lambda k, rng, noise=noise: noise.sample(k, rng=rng),
            lambda k, rng, dim=dim, scale=scale, continuous=continuous: continuous(dim, scale, k, rng),
            dim,
            (label, scale),
            config,
        )
        row, ratio = _row(label, dim, scale, n, t_lat, t_cont, LP_TARGET, noise.expected_acceptance)
        rows.append(row)
        worst[label] = min(worst.get(label, np.inf), ratio)

    poly_rows = []
    polys = [("K_3", k3_ball())]
    polys += [(f"random {d}-d, from_points", _random_polytope(d, 20_261_123 + d)) for d in (5, 8)]
    polys += [(f"random {d}-d, from_halfspaces", _random_halfspace_polytope(d, 20_261_123 + d)) for d in (5, 8)]
    for label, ball in polys:
        rate = Fraction(1)
        noise = LatticeKNormNoise(ball, rate, axis_scale=POLY_SPACING)
        scale = 1 / POLY_SPACING  # the same law in the statistic's units: scale 1 / rate
        cont = KNormNoise(ball, 1.0)
        config.log(f"lattice polytope {label}")
        n, t_lat, t_cont = _time_pair(
            lambda k, rng, noise=noise: noise.sample(k, rng=rng),
            lambda k, rng, cont=cont: cont.sample(k, rng=rng),
            ball.dim,
            label,
            config,
            fixed=False,
        )
        row, ratio = _row(label, ball.dim, scale, n, t_lat, t_cont, POLY_TARGET, noise.expected_acceptance)
        poly_rows.append(row)
        worst["polytope"] = min(worst.get("polytope", np.inf), ratio)

    summary = ", ".join(f"{k}: {fmt_ratio(v)}" for k, v in worst.items())
    return f"""Vectors per second of the exact lattice samplers (int64 output, integer-only randomness)
beside the continuous float samplers of the same ball and scale, timed back to back; ratios are
medians of per-repeat ratios. Targets: l1 and l_inf at least {LP_TARGET:.2g} of the continuous
throughput, polytopes at least {POLY_TARGET:g}. Acceptance is the outer rejection step's (1 for l1;
l_inf and polytopes from a fixed-seed pilot run). Worst ratio per law: {summary}.

{md_table(headers, rows, "lrrrrrrl")}

Polytopes (lattice spacing {POLY_SPACING:g}, rate 1; the continuous sampler is
`KNormNoise(ball, 1).sample`, the same law before rounding):

{md_table(headers, poly_rows, "lrrrrrrl")}
"""


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_lattice", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run (small sizes, 3 repeats)")
    ap.add_argument("--repeats", type=int, help="timed repeats per measurement (default 7; 3 with --quick)")
    args = ap.parse_args(argv)
    config = BenchConfig.make(quick=args.quick, repeats=args.repeats)
    sys.stdout.write(f"## {TITLE}\n\n{run(config).strip()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
