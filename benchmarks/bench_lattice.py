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

from benchmarks._harness import (  # noqa: E402
    BenchConfig,
    choose_n,
    fmt_rate,
    fmt_ratio,
    fmt_seconds,
    md_table,
    paired_timings,
)

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


def _library_polytopes():
    """(label, ball, Delta) of balls that the library's releases use at d <= 8, from public calls only."""
    import warnings

    from knorm import stats
    from knorm.sensitivity import kt_ball, regression_cut_ball

    out = [
        ("K_T, p = 1 (regression)", kt_ball(1), 1.0),
        ("K_T, p = 2", kt_ball(2), 1.0),
        ("hull (cut) ball, p = 1", regression_cut_ball(1)[0], 1.0),
        ("hull (cut) ball, p = 2", regression_cut_ball(2)[0], 1.0),
    ]
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixed seeds without an accountant: this is a benchmark
        releases = {
            "stats.var: exact hull of (sum x, sum x^2), x in [0, 10]": stats.var(
                np.clip(rng.normal(4, 2, 2000), 0, 10), (0, 10), epsilon=1.0, rng=1
            ),
            "stats.covariance: 2 columns in [0, 1] (image of K_T)": stats.covariance(
                rng.uniform(0, 1, size=(2000, 2)), (0, 1), epsilon=1.0, rng=2
            ),
        }
    for label, r in releases.items():
        r = r.parent if getattr(r, "parent", None) is not None else r  # the one noisy release
        out.append((label, r.ball, float(r.sensitivity)))
    return out


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
    ratio = float(np.median(t_lat / t_cont))  # lattice time / continuous time, per vector
    verdict = "meets target" if ratio <= 1 / target else "**misses target**"
    return [
        label,
        dim,
        scale if isinstance(scale, str) else f"{scale:g}",
        fmt_seconds(np.median(t_lat) / n),
        fmt_seconds(np.median(t_cont) / n),
        fmt_ratio(ratio),
        f"{fmt_rate(n / np.median(t_lat))}/s",
        f"{acceptance:.3f}",
        verdict,
    ], ratio


def _build_costs(config):
    """First-build cost of lattice laws: ``build_lattice_law`` on an empty cache, then one draw."""
    import time

    from knorm.geometry import LpBall, k3_ball
    from knorm.mechanisms import lattice as lattice_mech
    from knorm.mechanisms.lattice import build_lattice_law
    from knorm.noise import KNormNoise
    from knorm.sensitivity import kt_ball, regression_cut_ball

    balls = [
        ("l1", LpBall(26, 1)),
        ("l_inf", LpBall(26, np.inf)),
        ("K_3 (regression, p = 1)", k3_ball()),
        ("random 5-d, from_points", _random_polytope(5, 20_261_123 + 5)),
        ("random 5-d, from_halfspaces", _random_halfspace_polytope(5, 20_261_123 + 5)),
        ("hull (cut) ball, p = 5", regression_cut_ball(5)[0]),
        ("K_T, p = 5", kt_ball(5)),
    ]
    if not config.quick:
        balls.append(("K_T, p = 8", kt_ball(8)))
    rows = []
    for label, ball in balls:
        cache = getattr(lattice_mech, "_CACHE", None)
        if cache is not None:
            cache.clear()  # a first build, as in a new process
        t0 = time.perf_counter()
        try:
            law = build_lattice_law(ball, 1.0, 1.0)
        except ValueError as err:  # LatticeUnavailable: no practical exact sampler
            rows.append([label, ball.dim, fmt_seconds(time.perf_counter() - t0), "—", "—", "—", "—", str(err)[:80]])
            continue
        build = time.perf_counter() - t0
        gen = config.rng("lattice", "build", label)
        value = np.zeros(ball.dim)
        cont = KNormNoise(ball, 1.0)
        cont.sample(rng=gen)
        t = paired_timings(
            {
                "lattice": lambda law=law, value=value, gen=gen: law.release(value, None, gen),
                "continuous": lambda cont=cont, gen=gen: cont.sample(rng=gen),
            },
            config.repeats,
            config.target_seconds,
        )
        one_l, one_c = float(np.median(t["lattice"])), float(np.median(t["continuous"]))
        rows.append(
            [
                label,
                ball.dim,
                fmt_seconds(build),
                fmt_seconds(one_l),
                fmt_seconds(one_c),
                fmt_ratio(float(np.median(t["lattice"] / t["continuous"]))),
                fmt_ratio(build / one_l),
                law.noise.sampler,
            ]
        )
        config.log(f"lattice build {label}: {build:.2f}s")
    headers = [
        "ball",
        "d",
        "first build (time)",
        "one lattice release (time)",
        "one continuous draw (time)",
        "one lattice / one continuous (above 1: lattice slower)",
        "build / one release",
        "lattice sampler",
    ]
    return md_table(headers, rows, "lrrrrrrl")


def run(config):
    """The section body: one table of l1 / l_inf cases and one of polytopes (BLAS on one thread)."""
    from threadpoolctl import threadpool_limits

    # On a 2-core machine OpenBLAS's threads (started above about 2^18 multiply-adds) cost
    # milliseconds per call and swamp both samplers' timings; one thread is fair to both.
    with threadpool_limits(1, user_api="blas"):
        return _run(config)


def _run(config):
    from knorm.geometry import k3_ball
    from knorm.mechanisms.lattice import build_lattice_law
    from knorm.noise import KNormNoise
    from knorm.noise.lattice import LatticeKNormNoise

    headers = [
        "law",
        "d",
        "1/r (lattice units)",
        "lattice (time / vector)",
        "continuous (time / vector)",
        "lattice / continuous time (lower is better)",
        "lattice (vectors / s)",
        "acceptance",
        "",
    ]
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
        worst[label] = max(worst.get(label, 0.0), ratio)

    poly_rows = []
    polys = [("K_3", k3_ball())]
    polys += [(f"random {d}-d, from_points", _random_polytope(d, 20_261_123 + d)) for d in (5, 8)]
    # d = 8 from_halfspaces is left out: 16 random cuts of the 8-cube give a polytope whose exact
    # triangulation (Polytope.from_halfspaces, qhull up to d = 8) exhausted 20 GB of memory.
    polys += [(f"random {d}-d, from_halfspaces", _random_halfspace_polytope(d, 20_261_123 + d)) for d in (5, 6)]
    cases = [(label, ball, None) for label, ball in polys] + _library_polytopes()
    for label, ball, delta in cases:
        if delta is None:  # a fixed lattice and rate
            noise = LatticeKNormNoise(ball, Fraction(1), axis_scale=POLY_SPACING)
            scale = 1 / POLY_SPACING  # the same law in the statistic's units: scale 1 / rate
            cont = KNormNoise(ball, 1.0)
        else:  # the law a release builds: its spacings gamma_j and rate eps / Delta~ (eps = 1)
            law = build_lattice_law(ball, delta, 1.0)
            noise = law.noise
            per_axis = law.sensitivity / np.asarray(law.spacing, dtype=float)  # 1 / (r gamma_j)
            lo, hi = float(per_axis.min()), float(per_axis.max())
            scale = f"{lo:.4g}" if lo == hi else f"{lo:.4g}-{hi:.4g}"
            label = f"{label} (release law)"
            cont = KNormNoise(ball, law.sensitivity)
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
        worst["polytope"] = max(worst.get("polytope", 0.0), ratio)

    summary = ", ".join(f"{k}: {fmt_ratio(v)}" for k, v in worst.items())
    builds = _build_costs(config)
    return f"""Time per vector of the exact lattice samplers (int64 output, integer-only randomness)
beside the continuous float samplers of the same ball and scale, timed back to back; ratios are
medians of per-repeat ratios of lattice time to continuous time (**above 1: the lattice sampler is
slower**). Targets: l1 and l_inf lattice time at most {1 / LP_TARGET:.3g}x the continuous time (at least
{LP_TARGET:.2g} of its throughput), polytopes at most {1 / POLY_TARGET:g}x. Acceptance is the outer rejection
step's: 1 for l1 and for l_inf on coarse lattices, where the radius comes straight from its
tabulated law (`knorm.noise.linf`); on fine l_inf lattices (the radius split as 2^j H + R) and for
polytopes, from a fixed-seed pilot run. Worst (largest) time ratio per law:
{summary}. Vectors per call: the memory cap ({config.max_entries:,} entries) divided by d for l1 and l_inf,
about {config.target_seconds * 1e3:.0f} ms of lattice sampling for polytopes. BLAS runs on one thread
for both samplers (on two cores OpenBLAS's threads cost milliseconds per call and swamp the timings).
On the finer l_inf lattices (1/r = 10^4) the table covers the radius's high digits H, and the low
digits R cost an exact Bernoulli(exp(-a R)) per vector and a rare rejection; the first build of a law
(below) pays for the table, up to 2^15 exact integer thresholds.

### l1 and l_inf balls

{md_table(headers, rows, "lrrrrrrrl")}

### Polytopes

Lattice spacing {POLY_SPACING:g}, rate 1; the continuous sampler is `KNormNoise(ball, 1).sample`, the same
law before rounding. Rows marked "(release law)" are balls that the library's releases use at d <= 8
(regression K_T and its cut ball, the exact hull of `stats.var` and the ball of a 2-column
`stats.covariance`), sampled with the law a release builds, `build_lattice_law(ball, Delta, eps = 1)`:
its own spacings gamma_j and rate eps / Delta~, so "1/r" is the range of Delta~ / gamma_j over the
axes, and the continuous sampler is `KNormNoise(ball, Delta~)`. The polytope sampler is rejection from
the l_inf law of the box around K' in lattice units, so its acceptance is about vol(K') / vol(box) and
each proposal (an l_inf lattice draw and the exact integer gauge max_i N_i . k) costs about the same
whatever K' is; the time per vector is close to (cost of a proposal) / acceptance. The random
`from_points` rows (the symmetric hull of 3d + 2 Gaussian points, each axis scaled to [-1, 1]) are kept
as stress cases: their acceptance, the volume ratio of a spiky hull to its box, is the limit of box
rejection, not of the gauge. Sizes: d = 5 and 6 for the random halfspace polytopes (cube [-1, 1]^d cut
by 2d random symmetric pairs): at d = 8 the polytope's exact triangulation in `Polytope.from_halfspaces`
ran out of memory (above 20 GB) on the reference machine, so that case is not run.

{md_table(headers, poly_rows, "lrrrrrrrl")}

### First build of a lattice law

What the first release of a mechanism costs with the default `sampler='auto'`:
`knorm.mechanisms.lattice.build_lattice_law(ball, Delta = 1, eps = 1)` on an empty law cache (the
spacing gamma with rounding slack at most 1 % of Delta, for polytopes the outward-rounded rational
polytope K', and the fixed-seed pilot run that estimates the acceptance), then the time of one lattice
release of a zero statistic (rounding, one exact draw, rescaling) beside one continuous draw
`KNormNoise(ball, 1).sample()`. Laws are cached by the ball's parameters, so later releases with the same
(ball, Delta, eps) pay only the release; a new eps builds a new law.

{builds}
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
