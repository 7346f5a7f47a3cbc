"""Induced-norm balls of Joseph & Yu (sum, count, histogram, vote): K-norm noise throughput.

Noise vectors per second of ``KNormNoise(ball, 1).sample(n)`` (Gamma(m + 1)
radius times the ball's exact vectorised uniform sampler) at d = 10 and d = 100,
for each ball; target >= 20,000 vectors/s at d = 100 on one core. Joseph &
Yu's research code (google-research, ``k_norm``) draws 17 to 216 vectors/s at
d = 100 because it loops in Python per sample; that is the figure quoted in
issue 16, not re-measured here (the research code is not installed or run).

Standalone: ``python -m benchmarks.bench_induced [--quick]`` prints the table.
``run(config)`` is the section entry point for ``python -m benchmarks`` once it
is registered in ``benchmarks.SECTIONS``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks._harness import BenchConfig, fmt_rate, md_table, paired_timings

TITLE = "Induced-norm balls (Joseph & Yu): sum, count, histogram and vote noise"

TARGET = 20_000
RESEARCH_CODE = "17 to 216 vectors/s at d = 100 (Joseph & Yu's research code, quoted in issue 16)"


def balls(d):
    """(label, ball) pairs at statistic dimension d; l0 bounds d // 4 (at least 2)."""
    from knorm.geometry.induced import CountBall, HistogramBall, SumBall, VoteBall

    k = max(2, d // 4)
    return [
        (f"SumBall(d, {k})", SumBall(d, k)),
        (f"SumBall(d, {k}, add-remove)", SumBall(d, k, neighbours="add_remove")),
        (f"CountBall(d, {k})", CountBall(d, k)),
        (f"CountBall(d, {k}, add-remove)", CountBall(d, k, neighbours="add_remove")),
        ("HistogramBall(d)", HistogramBall(d)),
        ("VoteBall(d)", VoteBall(d)),
        ("VoteBall(d, add-remove)", VoteBall(d, neighbours="add_remove")),
    ]


def run(config):
    from knorm.noise import KNormNoise

    dims = (10, 100)
    rows = []
    for d in dims:
        for label, ball in balls(d):
            noise = KNormNoise(ball, 1.0)
            rng = config.rng("induced", label, d)
            n = 2_000 if config.quick else 20_000
            t = paired_timings(
                {"noise": lambda noise=noise, rng=rng, n=n: noise.sample(n, rng=rng)},
                config.repeats,
                config.target_seconds,
            )
            rate = n / float(np.min(t["noise"]))  # the machine is shared: the best repeat is the least disturbed
            median = n / float(np.median(t["noise"]))
            verdict = ("meets" if rate >= TARGET else "**misses**") if d == 100 else ""
            rows.append([label, d, ball.dim, fmt_rate(rate), fmt_rate(median), verdict])
            config.log(f"  {label} d={d}: {fmt_rate(rate)}/s")
    table = md_table(
        ["ball", "d", "released dim", "vectors/s (best)", "vectors/s (median)", f"target {fmt_rate(TARGET)}/s"], rows
    )
    return (
        f"{table}\n\nRates are the best and the median of {config.repeats} repeats of "
        f"`KNormNoise(ball, 1).sample(n)` with n = {2_000 if config.quick else 20_000}, "
        "single-threaded numpy; rough on a shared machine. "
        f"Reference: {RESEARCH_CODE}.\n"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_induced", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke run)")
    args = ap.parse_args(argv)
    config = BenchConfig.make(quick=args.quick, target_seconds=None if args.quick else 0.2)
    t0 = time.perf_counter()
    print(f"## {TITLE}\n")
    print(run(config))
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
