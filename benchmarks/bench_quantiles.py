"""Private medians against IBM diffprivlib at equal epsilon (issue 24, item 6).

knorm.stats.median (the exponential mechanism over the default public grid of 2^16 + 1
points over the declared bounds, sampled exactly) and diffprivlib 0.6.6
``tools.median`` (the exponential mechanism over the intervals between the sorted data,
Smith 2011, sampled in binary64, then uniform within the interval), on the same data
and bounds: the mean absolute error to the data's median (numpy's) over repeated
draws, with its standard error. Data: uniform, normal and log-normal (skewed) samples of
n = 1,000, and the real column ``median_income`` of the California housing data
(n = 20,640).

Both are the exponential mechanism with the rank utility at sensitivity 1, so their laws
nearly agree and Monte Carlo means of a few hundred draws (heavy-tailed errors) cannot
rank them. The table therefore also gives the **exact expected** absolute error of each,
computed from its law: knorm's P(c_j) proportional to exp(-eps S_j / (2 Delta)) on the
grid (the law the enumeration tests check its sampler against), and diffprivlib's
P(interval i) proportional to its length times exp(-eps |i - n/2| / 2), uniform within it
(its code, in exact arithmetic: its own sampler draws in binary64).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np

from benchmarks._harness import REPO_ROOT, md_table

GRID = (1 << 16) + 1  # knorm.stats.quantiles.GRID_SIZE, the default
FINE = (1 << 18) + 1

TITLE = "Medians against diffprivlib at equal epsilon"

HOUSING = REPO_ROOT.parent / "shared" / "data" / "california_housing.csv"
EPSILONS = (0.1, 1.0)


def _cases(config):
    rng = config.rng("quantiles", "data")
    n = 1_000
    cases = [
        ("uniform(0, 10), n = 1,000", rng.uniform(0, 10, n), (0.0, 10.0)),
        ("normal(0, 1), n = 1,000", rng.normal(0, 1, n).clip(-5, 5), (-5.0, 5.0)),
        ("log-normal(0, 1), n = 1,000", rng.lognormal(0, 1, n).clip(0, 20), (0.0, 20.0)),
    ]
    if HOUSING.exists():
        import csv

        with open(HOUSING, newline="") as fh:
            income = np.array([float(row["median_income"]) for row in csv.DictReader(fh)])
        cases.append(("California median_income, n = 20,640", income, (0.0, 15.0)))
    return cases


def _knorm(x, bounds, eps, reps, gen):
    import knorm.stats as dp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Generator is advanced, never reused; nothing to warn about
        return np.array([float(dp.median(x, bounds, epsilon=eps, rng=gen)) for _ in range(reps)])


def _knorm_exact(x, bounds, eps, m):
    """E|released - median| under knorm's law on the grid of m points (q = 1/2, replace-one: Delta = 2 units)."""
    from knorm.mechanisms.exponential import exact_rate
    from knorm.stats.quantiles import _cell_counts, rank_scores

    grid = np.linspace(*bounds, m)
    scores = rank_scores(_cell_counts(np.clip(x, *bounds), grid), Fraction(1, 2)).astype(float)
    logw = -float(exact_rate(eps, 2)) * scores
    p = np.exp(logw - logw.max())
    return float(np.sum(p * np.abs(grid - np.median(x))) / p.sum())


def _diffprivlib_exact(x, bounds, eps):
    """E|released - median| under diffprivlib 0.6.6 tools.quantile's law (q = 1/2), in float64."""
    k = len(x)
    ends = np.sort(np.append(np.clip(x, *bounds), bounds))
    lo, hi, length = ends[:-1], ends[1:], np.diff(ends)
    logw = -eps * np.abs(np.arange(k + 1) - k / 2) / 2
    p = np.exp(logw - logw.max()) * length
    m = np.median(x)
    inside = (lo <= m) & (m <= hi) & (length > 0)
    within = ((m - lo) ** 2 + (hi - m) ** 2) / (2 * np.where(length > 0, length, 1))
    return float(np.sum(p * np.where(inside, within, np.abs((lo + hi) / 2 - m))) / p.sum())


def _mae(values, truth):
    err = np.abs(values - truth)
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(len(err)))


def run(config):
    from benchmarks._diffprivlib import REQUIREMENTS, start_worker, versions_line

    reps = 20 if config.quick else 200
    worker, note = start_worker(config)
    rows = []
    try:
        for name, x, bounds in _cases(config):
            truth = float(np.median(x))
            if worker is not None:
                worker.load("q", x[:, None], np.zeros(len(x)))
            for eps in EPSILONS:
                config.log(f"quantiles: {name}, eps = {eps:g}")
                k_mae, k_se = _mae(_knorm(x, bounds, eps, reps, config.rng("quantiles", name, eps)), truth)
                if worker is not None:
                    seed = int(config.rng("quantiles", "dpl", name, eps).integers(2**31))
                    d_mae, d_se = _mae(worker.quantile("q", bounds, eps, 0.5, reps, seed), truth)
                    dpl = f"{d_mae:.4g} ± {d_se:.2g}"
                else:
                    dpl = "not run"
                k_exact, d_exact = _knorm_exact(x, bounds, eps, GRID), _diffprivlib_exact(x, bounds, eps)
                fine = _knorm_exact(x, bounds, eps, FINE)
                rows.append(
                    [
                        name,
                        f"{eps:g}",
                        f"{k_exact:.4g}",
                        f"{d_exact:.4g}",
                        f"{k_exact / d_exact:.3f}",
                        f"{fine / d_exact:.3f}",
                        f"{k_mae:.4g} ± {k_se:.2g}",
                        dpl,
                    ]
                )
            if worker is not None:
                worker.free("q")
        dpl_line = versions_line(worker) if worker is not None else f"diffprivlib was not run: {note}"
    finally:
        if worker is not None:
            worker.close()
    headers = [
        "data",
        "epsilon",
        "knorm expected error",
        "diffprivlib expected error",
        "ratio",
        "ratio, 2^18 + 1 points",
    ]
    table = md_table([*headers, "knorm MAE (draws)", "diffprivlib MAE (draws)"], rows, "lrrrrrrr")
    return f"""{__doc__.split(chr(10), 1)[1].strip()}

Expected absolute errors are exact (from the laws); ratios (knorm / diffprivlib) below 1 favour knorm; the
last ratio is knorm with ``candidates=2**18 + 1``. The draws columns are means ± standard errors over {reps}
releases of each library.

{dpl_line} (`pip install {" ".join(repr(r) for r in REQUIREMENTS)}`, run as a subprocess).

{table}
"""
