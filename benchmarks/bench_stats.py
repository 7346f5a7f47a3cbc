"""knorm.stats against diffprivlib's tools at equal total epsilon, and the time per release (issue 16).

Utility: on real columns (California housing, shipped with knorm.experiments) and on
simulations, with the same declared bounds and the same total epsilon, the median absolute
error of

* the mean and variance of one column: knorm's ``stats.var`` (one joint release of
  (sum x, sum x^2) through the exact hull, and with ``norm='mean'`` through the l1 ball of
  the standardised moments) against diffprivlib's ``tools.mean`` and ``tools.var`` at
  eps / 2 each;
* the covariance of 3 columns: knorm's ``stats.covariance`` (one joint release of the first and
  second moments) against a composition of diffprivlib tools: the means of the 3 columns and
  of their 6 pairwise products, eps / 9 each, and cov_jk = mean(x_j x_k) - mean(x_j) mean(x_k);
* a histogram: knorm's ``stats.histogram`` against diffprivlib's ``tools.histogram`` (both
  Laplace-type noise per bin under add/remove neighbours, the optimal mechanism there);

and the **eps ratio**: the eps at which knorm's median error equals diffprivlib's at eps,
divided by eps (log-log interpolation on a grid of eps factors). Targets: <= 0.5 for the mean
and variance pair, <= 0.6 for the 3-column covariance, 1 for histograms.

Time: seconds per release of each knorm.stats function against numpy's non-private answer
and diffprivlib's tool where there is one (n = 10,000 records).

diffprivlib runs under its own interpreter, in the isolated environment that
``benchmarks/_diffprivlib.py`` builds; this module sends it one job file and reads back arrays.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

from benchmarks._harness import SectionSkipped, fmt_ratio, fmt_seconds, md_table, paired_timings

TITLE = "knorm.stats against diffprivlib's tools"

TARGETS = {"mean and variance": 0.5, "covariance (3 columns)": 0.6, "histogram": 1.0}

# Run by diffprivlib's interpreter (it imports neither knorm nor this package): reads the job
# file named by argv[1], writes one array per job to the .npz it names, prints a JSON line.
_DPL_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np
from diffprivlib import tools
from diffprivlib.accountant import BudgetAccountant

spec = json.load(open(sys.argv[1]))
data = np.load(spec["data"])
out, counts = {}, {}


def acc():
    return BudgetAccountant()  # a fresh, unlimited ledger per call


def mean_var(x, lo, hi, eps, seed):
    m = tools.mean(x, epsilon=eps / 2, bounds=(lo, hi), random_state=seed, accountant=acc())
    v = tools.var(x, epsilon=eps / 2, bounds=(lo, hi), random_state=seed + 1, accountant=acc())
    return [m, v]


def cov3(X, lo, hi, eps, seed):
    p = X.shape[1]
    pairs = [(j, k) for j in range(p) for k in range(j, p)]
    e = eps / (p + len(pairs))
    m = [tools.mean(X[:, j], epsilon=e, bounds=(lo[j], hi[j]), random_state=seed + j, accountant=acc()) for j in range(p)]
    out = []
    for i, (j, k) in enumerate(pairs):
        corners = [a * b for a in (lo[j], hi[j]) for b in (lo[k], hi[k])]
        b = (min(corners), max(corners)) if j != k else (0.0 if lo[j] <= 0 <= hi[j] else min(corners), max(corners))
        mjk = tools.mean(X[:, j] * X[:, k], epsilon=e, bounds=b, random_state=seed + p + i, accountant=acc())
        out.append(mjk - m[j] * m[k])
    return out


def hist(x, edges, eps, seed):
    h, _ = tools.histogram(x, epsilon=eps, bins=edges, range=(edges[0], edges[-1]), random_state=seed, accountant=acc())
    return h


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for job in spec["jobs"]:
        seeds = np.random.default_rng(job["seed"]).integers(0, 2**31 - 100, size=job["reps"])
        kind = job["kind"]
        if kind == "mean_var":
            x = data[job["x"]]
            res = [mean_var(x, *job["bounds"], job["eps"], int(s)) for s in seeds]
        elif kind == "cov3":
            X = data[job["x"]]
            res = [cov3(X, job["lo"], job["hi"], job["eps"], int(s)) for s in seeds]
        elif kind == "hist":
            res = [hist(data[job["x"]], job["edges"], job["eps"], int(s)) for s in seeds]
        elif kind == "time":
            x, fn = data[job["x"]], job["fn"]
            calls = {
                "mean": lambda: tools.mean(x, epsilon=1.0, bounds=(0.0, 10.0), accountant=acc()),
                "var": lambda: tools.var(x, epsilon=1.0, bounds=(0.0, 10.0), accountant=acc()),
                "histogram": lambda: tools.histogram(x, epsilon=1.0, bins=np.linspace(0, 10, 11), range=(0, 10), accountant=acc()),
            }
            calls[fn]()
            t0 = time.perf_counter()
            for _ in range(job["reps"]):
                calls[fn]()
            res = [(time.perf_counter() - t0) / job["reps"]]
        out[job["id"]] = np.asarray(res, dtype=float)
for w in caught:
    counts[w.category.__name__] = counts.get(w.category.__name__, 0) + 1
np.savez(spec["out"], **out)
import diffprivlib, sklearn
print(json.dumps({"warnings": counts, "diffprivlib": diffprivlib.__version__, "numpy": np.__version__}))
"""


def _run_diffprivlib(python, arrays, jobs, log):
    """Run the jobs under diffprivlib's interpreter; (dict of id -> array, info) or raise RuntimeError."""
    from benchmarks._diffprivlib import clean_env

    with tempfile.TemporaryDirectory(prefix="knorm-bench-stats-") as tmp:
        tmp = Path(tmp)
        np.savez(tmp / "data.npz", **arrays)
        spec = dict(data=str(tmp / "data.npz"), out=str(tmp / "out.npz"), jobs=jobs)
        (tmp / "jobs.json").write_text(json.dumps(spec), encoding="utf-8")
        (tmp / "worker.py").write_text(_DPL_SCRIPT, encoding="utf-8")
        log(f"  stats: {len(jobs)} diffprivlib jobs")
        res = subprocess.run(
            [str(python), str(tmp / "worker.py"), str(tmp / "jobs.json")],
            capture_output=True,
            text=True,
            env=clean_env(),
            cwd=tmp,
            timeout=900,
        )
        if res.returncode != 0:
            raise RuntimeError(f"the diffprivlib run failed: {res.stderr.strip()[-1500:]}")
        with np.load(tmp / "out.npz") as f:
            out = {k: f[k] for k in f.files}
    return out, json.loads(res.stdout.strip().splitlines()[-1])


# -- data ------------------------------------------------------------------------------------
def _housing():
    import pandas as pd

    from knorm.experiments.data import housing_path

    df = pd.read_csv(housing_path())
    return df


def _cases(config):
    """Columns with declared bounds: (name, array, lower, upper)."""
    n_sim = 2_000 if config.quick else 10_000
    gen = config.rng("stats", "simulations")
    normal = gen.normal(4, 2, n_sim).clip(0, 10)
    small = gen.uniform(0, 1, 1_000)
    cov_sim = np.column_stack([gen.normal(0, 1, n_sim), gen.normal(0, 1, n_sim), gen.normal(0, 1, n_sim)])
    cov_sim[:, 1] = 0.6 * cov_sim[:, 0] + 0.8 * cov_sim[:, 1]
    cov_sim = cov_sim.clip(-3, 3)
    hh = _housing()
    income, age, lat = (hh[c].to_numpy(float) for c in ("median_income", "housing_median_age", "latitude"))
    one = [
        (f"simulation: N(4, 2^2) clipped, n = {n_sim:,}", normal, 0.0, 10.0),
        ("simulation: U(0, 1), n = 1,000", small, 0.0, 1.0),
        (f"housing: median_income, n = {len(income):,}", income, 0.0, 16.0),
        (f"housing: housing_median_age, n = {len(age):,}", age, 0.0, 52.0),
    ]
    three = [
        (f"simulation: 3 correlated N(0, 1) clipped, n = {n_sim:,}", cov_sim, [-3.0] * 3, [3.0] * 3),
        (
            f"housing: income, age, latitude, n = {len(income):,}",
            np.column_stack([income, age, lat]),
            [0.0, 0.0, 32.0],
            [16.0, 52.0, 42.0],
        ),
    ]
    hists = [
        (f"simulation: N(4, 2^2) clipped, n = {n_sim:,}, 10 bins", normal, np.linspace(0, 10, 11)),
        (f"housing: median_income, n = {len(income):,}, 16 bins", income, np.linspace(0, 16, 17)),
    ]
    return one, three, hists


# -- knorm -----------------------------------------------------------------------------------
def _knorm_errors(config, fn, truth, grid, reps, key):
    """Median over releases of each coordinate's absolute error (mean and variance: 2 columns), per eps."""
    out = []
    for eps in grid:
        gen = config.rng("stats", *key, float(eps))
        errs = [np.abs(fn(float(eps), gen) - truth) for _ in range(reps)]
        out.append(np.median(np.array(errs).reshape(reps, -1), axis=0))
    return np.array(out)


def _match(grid, med, target):
    """(eps at which the median error ``med`` (decreasing in eps) equals ``target``, relation)."""
    below = np.nonzero(med <= target)[0]
    if len(below) == 0:
        return grid[-1], ">"
    i = below[0]
    if i == 0:
        return grid[0], "<="
    x0, x1 = np.log(grid[i - 1]), np.log(grid[i])
    y0, y1 = np.log(med[i - 1]), np.log(med[i])
    t = 0.0 if y1 == y0 else (np.log(target) - y0) / (y1 - y0)
    return float(np.exp(x0 + t * (x1 - x0))), "="


def _ratio_text(eps_k, rel, eps):
    r = eps_k / eps
    return {"=": f"{r:.2f}", "<=": f"<= {r:.2f}", ">": f"> {r:.2f}"}[rel], (r if rel != ">" else math.inf)


def _cov_error(upper, truth):
    """Frobenius norm of the covariance matrix error, from the 6 upper-triangle entries."""
    d = np.asarray(upper) - truth
    return math.sqrt(float(np.sum(d**2) + np.sum(d[[1, 2, 4]] ** 2)))


# -- timing ----------------------------------------------------------------------------------
def _timings(config, python):
    import knorm.stats as dp
    from knorm.sensitivity import QuadraticStatistic

    gen = config.rng("stats", "timing")
    n = 10_000
    x = gen.normal(4, 2, n).clip(0, 10)
    X = gen.uniform(-1, 1, size=(n, 3))
    ballots = np.argsort(gen.random((n, 5)), axis=1).astype(float)
    ones = (gen.random((n, 5)) < 0.3).astype(float)
    edges = np.linspace(0, 10, 11)
    t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0])
    cases = [
        ("sum", lambda: dp.sum(x, (0, 10), epsilon=1.0), lambda: x.sum(), None),
        ("mean", lambda: dp.mean(x, (0, 10), epsilon=1.0), lambda: x.mean(), "mean"),
        ("moments", lambda: dp.moments(x, (0, 10), epsilon=1.0), lambda: (x.sum(), (x * x).sum()), None),
        ("var (mean and variance)", lambda: dp.var(x, (0, 10), epsilon=1.0), lambda: (x.mean(), x.var()), "var"),
        ("std", lambda: dp.std(x, (0, 10), epsilon=1.0), lambda: (x.mean(), x.std()), None),
        ("covariance (3 columns)", lambda: dp.covariance(X, (-1, 1), epsilon=1.0), lambda: np.cov(X.T), None),
        (
            "histogram (10 bins)",
            lambda: dp.histogram(x, edges, epsilon=1.0),
            lambda: np.histogram(x, edges),
            "histogram",
        ),
        (
            "histogramdd (10 x 4 cells)",
            lambda: dp.histogramdd(np.column_stack([x, X[:, 0]]), [edges, [-1, -0.5, 0, 0.5, 1]], epsilon=1.0),
            lambda: np.histogramdd(np.column_stack([x, X[:, 0]]), [edges, [-1, -0.5, 0, 0.5, 1]]),
            None,
        ),
        ("vote (5 candidates)", lambda: dp.vote(ballots, epsilon=1.0), lambda: ballots.sum(axis=0), None),
        ("count (5 columns)", lambda: dp.count(ones, epsilon=1.0), lambda: ones.sum(axis=0), None),
        (
            "release (sum x, sum x^2)",
            lambda: dp.release(t, x[:, None], epsilon=1.0),
            lambda: t(x[:, None]).sum(0),
            None,
        ),
    ]
    dpl = {}
    if python is not None:
        reps = 50 if config.quick else 300
        jobs = [
            dict(id=f"time_{fn}", kind="time", x="tx", fn=fn, reps=reps, seed=0) for fn in ("mean", "var", "histogram")
        ]
        res, _ = _run_diffprivlib(python, {"tx": x}, jobs, config.log)
        dpl = {fn: float(res[f"time_{fn}"][0]) for fn in ("mean", "var", "histogram")}
    from benchmarks._harness import sampler_kind

    rows = []
    for name, private, plain, peer in cases:
        times = paired_timings({"knorm": private, "numpy": plain}, config.repeats, config.target_seconds)
        k, p = float(np.median(times["knorm"])), float(np.median(times["numpy"]))
        ratio = float(np.median(times["knorm"] / times["numpy"]))
        d = dpl.get(peer) if peer else None
        out = private()
        kind = sampler_kind(out.sampler) if hasattr(out, "sampler") else "—"
        rows.append([name, fmt_seconds(k), fmt_seconds(p), fmt_ratio(ratio), fmt_seconds(d) if d else "—", kind])
        config.log(f"  stats timing: {name} {k * 1e3:.2f} ms")
    return md_table(
        [
            "function",
            "knorm.stats (time)",
            "numpy, not private (time)",
            "knorm / numpy time (lower is better)",
            "diffprivlib (time)",
            "knorm sampler",
        ],
        rows,
        "lrrrrl",
    )


# -- the section -----------------------------------------------------------------------------
def run(config):
    try:
        import pandas  # noqa: F401
    except ImportError as err:  # pragma: no cover
        raise SectionSkipped(f"pandas is not installed ({err})") from err
    import knorm.stats as dp
    from benchmarks._diffprivlib import REQUIREMENTS, ensure_venv

    python, note = ensure_venv(create=not config.quick, log=config.log)
    reps = 30 if config.quick else 150
    dpl_eps = [0.1, 1.0] if not config.quick else [1.0]
    factors = 2.0 ** np.arange(-4.5, 1 + 1e-9, 1.0 if config.quick else 0.5)  # 2^-4.5 .. 2, half-octaves
    one, three, hists = _cases(config)

    # diffprivlib first (one process), then knorm on the grid of eps factors. diffprivlib's
    # releases are cheap: 5x as many sharpen its medians, and each eps gets its own seeds.
    dpl_reps = 5 * reps
    arrays, jobs = {}, []
    for i, (_, x, lo, hi) in enumerate(one):
        arrays[f"one{i}"] = x
        jobs += [
            dict(
                id=f"mv{i}_{e}",
                kind="mean_var",
                x=f"one{i}",
                bounds=[lo, hi],
                eps=e,
                reps=dpl_reps,
                seed=1100 + 10 * i + j,
            )
            for j, e in enumerate(dpl_eps)
        ]
    for i, (_, X, lo, hi) in enumerate(three):
        arrays[f"three{i}"] = X
        jobs += [
            dict(
                id=f"cv{i}_{e}", kind="cov3", x=f"three{i}", lo=lo, hi=hi, eps=e, reps=dpl_reps, seed=2300 + 10 * i + j
            )
            for j, e in enumerate(dpl_eps)
        ]
    for i, (_, x, edges) in enumerate(hists):
        arrays[f"hist{i}"] = x
        jobs += [
            dict(
                id=f"h{i}_{e}",
                kind="hist",
                x=f"hist{i}",
                edges=edges.tolist(),
                eps=e,
                reps=dpl_reps,
                seed=3700 + 10 * i + j,
            )
            for j, e in enumerate(dpl_eps)
        ]
    dpl, info = ({}, {})
    if python is not None:
        try:
            dpl, info = _run_diffprivlib(python, arrays, jobs, config.log)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            python, note = None, f"its run failed ({exc})"

    rows, checks = [], []

    def add_rows(statistic, data_name, dpl_key, med_k, dpl_err, labels, eps_list, targets):
        for j, e in enumerate(eps_list):
            for c, label in enumerate(labels):
                g = int(np.argmin(np.abs(factors * e - e)))
                k_err = med_k[j][g, c]
                if dpl_err is None:
                    rows.append([statistic + label, data_name, f"{e:g}", "—", f"{k_err:.3g}", "—", "—"])
                    continue
                d = float(dpl_err[j][c])
                eps_k, rel = _match(factors * e, med_k[j][:, c], d)
                text, value = _ratio_text(eps_k, rel, e)
                target = targets[label]
                ok = value <= target * (1 + 1e-9) if target < 1 else abs(value - 1) <= 0.15
                rows.append(
                    [
                        statistic + label,
                        data_name,
                        f"{e:g}",
                        f"{d:.3g}",
                        f"{k_err:.3g}",
                        text,
                        "meets" if ok else "**misses**",
                    ]
                )
                checks.append(ok)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)  # knorm's PrivacyWarning for fixed seeds: benchmark only
        for i, (name, x, lo, hi) in enumerate(one):
            truth = np.array([x.mean(), x.var()])
            dpl_err = [np.median(np.abs(dpl[f"mv{i}_{e}"] - truth), axis=0) for e in dpl_eps] if dpl else None
            # The default (norm='hull', the hull) and norm='mean' (the l1 ball of the standardised
            # moments: the mean at the Laplace optimum), on the same data and diffprivlib runs.
            for norm, tag in (("hull", ""), ("mean", " (norm='mean')")):
                med_k = [
                    _knorm_errors(
                        config,
                        lambda eps, g, x=x, lo=lo, hi=hi, norm=norm: (
                            dp.var(x, (lo, hi), epsilon=eps, norm=norm, rng=g).value
                        ),
                        truth,
                        factors * e,
                        reps,
                        ("mv", i, e) if norm == "hull" else ("mv", norm, i, e),
                    )
                    for e in dpl_eps
                ]
                add_rows(
                    f"mean and variance{tag}: ",
                    name,
                    "mv",
                    med_k,
                    dpl_err,
                    ["mean", "variance"],
                    dpl_eps,
                    {"mean": 0.5, "variance": 0.5},
                )
            config.log(f"  stats: {name} done")
        for i, (name, X, lo, hi) in enumerate(three):
            truth = np.cov(X, rowvar=False, ddof=0)[np.triu_indices(3)]
            med_k = []
            for e in dpl_eps:
                errs = []
                for eps in factors * e:
                    gen = config.rng("stats", "cov", i, float(eps))
                    errs.append(
                        [
                            np.median(
                                [
                                    _cov_error(dp.covariance(X, (lo, hi), epsilon=float(eps), rng=gen).value, truth)
                                    for _ in range(reps)
                                ]
                            )
                        ]
                    )
                med_k.append(np.array(errs))
            dpl_err = [[np.median([_cov_error(r, truth) for r in dpl[f"cv{i}_{e}"]])] for e in dpl_eps] if dpl else None
            add_rows("covariance (3 columns)", name, "cv", med_k, dpl_err, [""], dpl_eps, {"": 0.6})
            config.log(f"  stats: {name} done")
        for i, (name, x, edges) in enumerate(hists):
            truth = np.histogram(x, edges)[0]
            med_k = []
            for e in dpl_eps:
                errs = []
                for eps in factors * e:
                    gen = config.rng("stats", "hist", i, float(eps))
                    releases = [
                        dp.histogram(x, edges, epsilon=float(eps), neighbours="add_remove", rng=gen).value
                        for _ in range(reps)
                    ]
                    errs.append([np.median(np.abs(np.array(releases) - truth).mean(axis=1))])
                med_k.append(np.array(errs))
            dpl_err = [[np.median(np.abs(dpl[f"h{i}_{e}"] - truth).mean(axis=1))] for e in dpl_eps] if dpl else None
            add_rows("histogram", name, "h", med_k, dpl_err, [""], dpl_eps, {"": 1.0})
            config.log(f"  stats: {name} done")
        timing = _timings(config, python)

    table = md_table(
        [
            "statistic",
            "data",
            "diffprivlib eps",
            "diffprivlib median error",
            "knorm median error (same eps)",
            "eps ratio",
            "target",
        ],
        rows,
        "llrrrrl",
    )
    if python is None or not dpl:
        peer = f"**diffprivlib was not run: {note}.** Only knorm's errors are shown."
    else:
        peer = (
            f"diffprivlib {info.get('diffprivlib')} (numpy {info.get('numpy')}) in an isolated virtual environment "
            f"({note}; `pip install {' '.join(repr(r) for r in REQUIREMENTS)}`), run as a subprocess; knorm never "
            f"imports it. Warnings inside diffprivlib: {info.get('warnings') or 'none'}."
        )
    met = f"{sum(checks)} of {len(checks)} rows meet their target." if checks else ""
    return f"""{peer}

**Metric.** Error of one release = |released - exact| on the given data (for the covariance, the
Frobenius norm of the 3 x 3 matrix error; for histograms, the mean over bins of |count error|);
the median over {reps} releases per eps for knorm and {5 * reps} for diffprivlib, each with its own seed. knorm ran at eps = f x (diffprivlib's
eps) for {len(factors)} factors f from 2^-4.5 to 2 in {"octave" if config.quick else "half-octave"} steps;
**eps ratio** = the eps at which knorm's median error equals diffprivlib's, over diffprivlib's eps
(log-log interpolation; `<=` / `>` when the grid's end already beats / does not reach it). Targets:
{TARGETS["mean and variance"]} for the mean and for the variance (the pair), {TARGETS["covariance (3 columns)"]}
for the covariance, 1 +- 0.15 for histograms. {met}

**Settings.** Same declared bounds for both libraries, replace-one neighbours for the moments (n
public; diffprivlib's mean and var assume it too), add/remove for histograms (diffprivlib's noise,
sensitivity 1 per record, is eps-DP there). knorm: `stats.var(x, bounds, epsilon)` (mean and variance
from one release of (sum x, sum x^2) through the exact hull M K_2),
`stats.covariance(X, bounds, epsilon)` (one release of the 9 first and second moments through the
K_T-style ball, eigenvalues clipped at 0), `stats.histogram(x, bins, epsilon, neighbours='add_remove')`.
diffprivlib: `tools.mean` + `tools.var` at eps / 2 each; for the covariance, 9 `tools.mean` calls at
eps / 9 (3 columns, 6 products with their box's bounds); `tools.histogram(x, eps, bins, range)`.

{table}

**Why some rows miss.** *The mean of the pair*: knorm spends the whole eps on one release of
(sum x, sum x^2) through the exact hull, optimal for the pair in the volume order (paper Theorem
"Optimal K-mech"), not for each coordinate. The hull's marginal on sum x has median |V_1| =
0.965 (hi - lo) / eps (Monte Carlo of the public law; on the sum), against (hi - lo) ln 2 / (eps / 2) for
diffprivlib's mean at eps / 2: a ratio of 0.70 whatever the data (these two constants are properties of
the noise laws, not measurements of this run), while the variance gains far more (the table). The median of
{reps} releases moves each ratio by about 10 %. *norm='mean'* (`stats.var(..., norm='mean')`) is the other end
of that trade-off: (sum u, sum u^2) of u = (x - m) / r, m the midpoint and r = hi - lo, through the unit l1
ball, certified with Delta = 1 (replace-one neighbours move them by (d, d (u + v)), |u + v| <= 1 - |d|). Its
noise on the mean is Laplace of scale r / (n eps), exactly the Laplace mechanism of the mean alone at the full
eps: a ratio of 0.5 (0.5005 with the lattice's rounding slack) whatever the data, right at the target, so about
half of these rows land on either side of it by sampling error alone. Its variance gets, to first order,
(z_2 + k z_1) r^2 / (n eps) with k = 2 (m - mean) / r: against Laplace at eps / 2, a ratio of
median|z_2 + k z_1| / (2 ln 2), 0.50 at k = 0, 0.53 at k = 0.2, 0.63 at k = 0.5; diffprivlib's `tools.var`
adds 1.78x that noise (LaplaceBoundedDomain's scale on [0, inf)), so its rows show about 0.3 - 0.35 (0.30 in a
direct run of 4,000 releases on the first simulation, eps = 1, where the hull gives 0.13). *Histograms*: both libraries add two-sided geometric
(integer) noise under add/remove, of mean absolute error 2 e^-eps / (1 - e^-2 eps) per bin: knorm
releases the integer counts on the lattice Z^m without rounding (`KNormMechanism(on_lattice=True)`;
the l1 ball is the exact hull there), so the ratios should be 1 up to the medians' sampling error.
The timing table below uses replace-one neighbours (the default), where the histogram ball is
still sampled continuously; its last column says which sampler ran.

**Time per release** (n = 10,000; knorm with fresh OS entropy and no accountant; diffprivlib timed
inside its own process, {50 if config.quick else 300} calls). A function's first call also builds
and ranks its balls and builds its lattice law, both cached per declared domain (not timed here); the
times below are for later calls. Every function runs with its default sampler ('auto': the exact lattice release where
the ball allows it); the last column says which one ran.

{timing}
"""
