"""Fit time against scikit-learn and IBM diffprivlib (issue "Benchmarks against peers", part b).

Linear regression on n = 10^4, 10^6 and 10^7 rows with p = 10, logistic regression
on n = 10^4 and 10^5 rows with m = 7, all at eps = 1. knorm and scikit-learn are
timed in this process; diffprivlib in its own environment and process
(``benchmarks/_diffprivlib.py``), where the worker times its fits itself, so
process start-up, IPC and data loading are excluded. In every repeat the three
are timed back to back (sklearn, knorm, diffprivlib) on the same data, and ratios
are medians of per-repeat ratios.
"""

from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np

from benchmarks._harness import SectionSkipped, fmt_ratio, fmt_seconds, md_table, sampler_kind

TITLE = "Fit time against scikit-learn and diffprivlib"

P_LINEAR = 10
BETA_LINEAR = np.linspace(-1.0, 1.0, P_LINEAR)
BOUND_Y = 10.0  # |x'beta| <= 5.56, plus 4 noise sd, rounded up
BETA_LOG = np.array([0, -1, -0.5, -0.25, 0, 0.75, 1.5])


def _time(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def _number(once, target):
    return max(1, min(1000, math.ceil(target / max(once, 1e-9))))


def _bench(config, calls, dpl, repeats):
    """Per-repeat seconds per fit of each local call and of the worker call ``dpl``.

    ``calls``: name -> zero-argument callable (timed here); ``dpl``: callable
    (number) -> seconds per fit measured in the worker, or None.
    """
    number = {}
    for name, fn in calls.items():
        fn()  # warm-up (caches of knorm, lazy imports)
        number[name] = _number(_time(fn, 1), config.target_seconds)
    if dpl is not None:
        number["diffprivlib"] = _number(dpl(1), config.target_seconds)  # also the warm-up
    out = {name: np.empty(repeats) for name in number}
    for r in range(repeats):
        for name, fn in calls.items():
            out[name][r] = _time(fn, number[name])
        if dpl is not None:
            out["diffprivlib"][r] = dpl(number["diffprivlib"])
    return out, number


def _row(label, n, t, number):
    sk, kn = t["sklearn"], t["knorm"]
    row = [label, f"{n:,}", fmt_seconds(np.median(sk)), fmt_seconds(np.median(kn))]
    if "diffprivlib" in t:
        dp = t["diffprivlib"]
        row += [
            fmt_seconds(np.median(dp)),
            fmt_ratio(float(np.median(kn / sk))),
            fmt_ratio(float(np.median(dp / sk))),
            fmt_ratio(float(np.median(kn / dp))),
        ]
    else:
        row += ["—", fmt_ratio(float(np.median(kn / sk))), "—", "—"]
    row.append(f"{len(sk)} x {number['knorm']}")
    return row


def _linear(config, worker):
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    from knorm.models.linear import LinearRegression

    sizes = [10_000, 100_000] if config.quick else [10_000, 1_000_000, 10_000_000]
    n_max = sizes[-1]
    rng = config.rng("regression", "linear")
    t0 = time.perf_counter()
    X = rng.uniform(-1.0, 1.0, size=(n_max, P_LINEAR))
    y = X @ BETA_LINEAR + rng.standard_normal(n_max)
    config.log(f"  linear data {n_max:,} x {P_LINEAR} generated in {time.perf_counter() - t0:.1f}s")
    params = dict(bounds_X=[[-1.0] * P_LINEAR, [1.0] * P_LINEAR], bounds_y=[-BOUND_Y, BOUND_Y], fit_intercept=True)
    if worker is not None:
        worker.load("lin", X, y)
    rows, mech = [], None
    try:
        for n in sizes:
            Xn, yn = X[:n], y[:n]
            knorm = LinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-BOUND_Y, BOUND_Y), random_state=0)
            calls = {
                "sklearn": lambda Xn=Xn, yn=yn: SkLinearRegression().fit(Xn, yn),
                "knorm": lambda Xn=Xn, yn=yn, m=knorm: m.fit(Xn, yn),
            }
            dpl = None if worker is None else (lambda k, n=n: worker.time_fit("linear", "lin", params, 1.0, k, rows=n))
            repeats = min(config.repeats, 3) if n >= 10**7 else min(config.repeats, 5) if n >= 10**6 else config.repeats
            t, number = _bench(config, calls, dpl, repeats)
            mech = (knorm.norm_, sampler_kind(knorm.release_.sampler))
            rows.append(_row("linear", n, t, number))
            config.log(f"  linear n={n:,} timed")
    finally:
        if worker is not None:
            worker.free("lin")
    return rows, mech


def _logistic(config, worker):
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    from knorm.models.logistic import LogisticRegression

    sizes = [10_000] if config.quick else [10_000, 100_000]
    n_max = sizes[-1]
    rng = config.rng("regression", "logistic")
    X = rng.uniform(-1.0, 1.0, size=(n_max, len(BETA_LOG)))
    y = (rng.random(n_max) < 1 / (1 + np.exp(-X @ BETA_LOG))).astype(int)
    params = dict(data_norm=math.sqrt(len(BETA_LOG)), fit_intercept=False)
    if worker is not None:
        worker.load("log", X, y)
    rows, kind = [], None
    try:
        for n in sizes:
            Xn, yn = X[:n], y[:n]
            knorm = LogisticRegression(
                epsilon=1.0, bounds_X=(-1, 1), fit_intercept=False, classes=[0, 1], random_state=0
            )
            sk = SkLogisticRegression(C=np.inf, fit_intercept=False)
            calls = {
                "sklearn": lambda Xn=Xn, yn=yn, sk=sk: sk.fit(Xn, yn),
                "knorm": lambda Xn=Xn, yn=yn, knorm=knorm: knorm.fit(Xn, yn),
            }
            dpl = (
                None if worker is None else (lambda k, n=n: worker.time_fit("logistic", "log", params, 1.0, k, rows=n))
            )
            t, number = _bench(config, calls, dpl, config.repeats)
            kind = ", ".join(sorted({sampler_kind(r.sampler) for r in knorm.releases_}))
            rows.append(_row("logistic", n, t, number))
            config.log(f"  logistic n={n:,} timed")
    finally:
        if worker is not None:
            worker.free("log")
    return rows, kind


def run(config):
    try:
        import sklearn
    except ImportError as err:  # pragma: no cover
        raise SectionSkipped(f"scikit-learn is not installed ({err})") from err
    from benchmarks._diffprivlib import start_worker, versions_line

    worker, note = start_worker(config)
    load0 = os.getloadavg()[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lin, mech = _linear(config, worker)
            log, log_kind = _logistic(config, worker)
        dpl_line = versions_line(worker) if worker is not None else None
        load1 = os.getloadavg()[0]
    finally:
        if worker is not None:
            worker.close()
    if worker is None:
        peer = f"**diffprivlib was not run: {note}.** Only knorm and scikit-learn are timed."
    else:
        peer = (
            f"diffprivlib: {dpl_line}, in an isolated virtual environment ({note}), timed inside its worker "
            "process (`benchmarks/_diffprivlib_worker.py`) with `time.perf_counter` around the fits only."
        )
    headers = [
        "model",
        "n",
        "sklearn fit (time)",
        "knorm fit (time)",
        "diffprivlib fit (time)",
        "knorm / sklearn",
        "diffprivlib / sklearn",
        "knorm / diffprivlib",
        "repeats x fits",
    ]
    table = md_table(headers, lin + log, "lrrrrrrrl")
    return f"""{peer} scikit-learn {sklearn.__version__} (this environment).

Every candidate gets a warm-up fit, then each repeat times all three back to back on the same
float64 arrays (the worker holds its own copy, loaded once; the n rows are the leading rows of
one generated array). Times are medians; ratios are medians of per-repeat ratios; *repeats x
fits* is the number of repeats times the fits looped per timing for knorm. eps = 1 throughout. Ratios are
of fit times: below 1 the numerator is faster. knorm runs with its default `sampler='auto'`: the linear fits
drew {mech[1]} noise, the logistic fits {log_kind} (the lattice laws are built by the warm-up fit, so
the times below are warm; their first-build cost is in the [lattice section](#lattice-noise-exact-integer-samplers)).
Load average (1 min) before / after the section: {load0:.1f} / {load1:.1f} on 2 cores: other jobs shared
the machine, and multi-threaded BLAS calls (sklearn's lstsq, the Gram products) suffer most from that.

* **Linear**: X uniform on [-1, 1]^10, y = X beta + N(0, 1) with beta evenly spaced in [-1, 1],
  intercept fitted. knorm `LinearRegression(epsilon=1, bounds_X=(-1, 1), bounds_y=(-10, 10))`
  (mechanism 'auto' = '{mech[0]}' at p = 10, postprocess 'eigen'; warm: its per-p caches are filled by
  the warm-up fit, the cold first fit is in the linear-regression section); sklearn
  `LinearRegression()` (lstsq on the centred data); diffprivlib
  `LinearRegression(epsilon=1, bounds_X, bounds_y, fit_intercept=True)` (clipping, private means,
  Laplace-perturbed monomials, then `scipy.optimize.minimize`).
* **Logistic**: the paper's Section 4.2 model (m = 7, X uniform on [-1, 1], no intercept). knorm
  `LogisticRegression(epsilon=1, bounds_X=(-1, 1), fit_intercept=False, classes=[0, 1])` (Newton on
  the perturbed objective, q = 'auto'); sklearn `LogisticRegression(C=inf, fit_intercept=False)` (lbfgs,
  unpenalised); diffprivlib `LogisticRegression(epsilon=1, data_norm=sqrt(7), fit_intercept=False)`
  (lbfgs on the perturbed, C = 1 regularised objective).

{table}

**Noise sampler throughput** (part c of the issue) is not repeated here: the
[samplers](#noise-samplers) section measures every ball (l1, l2, l_inf, l_p, polytopes, K_T,
the hull ball) against numpy uniforms and lists, from the expected acceptance of exact rejection
sampling, the dimensions where exact sampling stays practical; the
[regression balls](#regression-balls-section-51-k_t-and-the-tighter-cut-ball) section gives the
throughput of the Section 5.1 balls (K_T and the cut hull ball) for p = 1..8. A fit draws one
noise vector, so sampling is a negligible part of the times above except for 'auto' at larger p
(see the thresholds of norm='auto' in the linear-regression section).
"""
