"""The coverage matrix: every interval knorm offers, over regimes it was not designed on.

Each *check* is one kind of interval (a release's noise interval, a population interval, a
regression's coefficient intervals, ...) and what it claims to cover. Each *cell* is one
regime: a data-generating process (simulated, or a real data set used as the population),
n and epsilon. A cell draws ``reps`` independent samples, releases, asks for the 95%
interval, and records whether it covers the target (for vectors, every coordinate is
checked and the cell shows the worst one) or whether the library refused to give one.

A cell below :data:`FLOOR` at nominal 0.95 is a defect: it is either fixed or refused in code,
and the page lists it. ``python -m knorm.experiments.coverage`` runs the matrix and writes
``docs/coverage/`` (the rows, as CSV, and the run's settings) and ``docs/coverage.md``
(rendered from them; a test checks the page is current).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import platform
import shlex
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

from knorm.exceptions import IntervalUnavailableError

__all__ = ["FLOOR", "Cell", "Check", "checks", "main", "render_page", "run_cell", "run_matrix", "store_run"]

#: Nominal level of every interval checked, and the floor a cell must reach.
LEVEL, FLOOR = 0.95, 0.90
#: Replicates per cell in the full run (Monte Carlo standard error about 1.5 points at 0.95).
REPS = 200
#: Replicates of the population mean's and sum's cells with n <= 10^4 (one interval: a sum with n
#: public is n times the mean, from the same release). At 200 a cell of true coverage 0.95 falls
#: below :data:`FLOOR` with probability 0.0012 (0.009 at 0.94); at 1,000, 4e-11 (3e-7). At
#: 200 the sum's cell n = 100, epsilon = 0.1 read 0.895: its first 200 noise draws held 22 beyond
#: the Laplace 95% quantile (10 expected; probability 5e-4); the same stream reads 0.934 over
#: 1,000 replicates and 0.950 over 2,000; three other streams of 2,000 read 0.951 to 0.958.
#: These cells cost 6 to 30 ms a replicate; those at n = 10^6 cost 60 to 80 ms and stay at
#: :data:`REPS`.
SMALL_SAMPLE_REPS = 1000
SEED = 20_261_127
_FIELDS = [
    "check",
    "regime",
    "n",
    "epsilon",
    "reps",
    "refused",
    "covered",
    "coverage",
    "mc_low",
    "mc_high",
    "worst",
    "status",
]


@dataclass(frozen=True)
class Cell:
    """One regime of a check: ``draw(rng) -> (covered or None, names)`` for one replicate.

    Parameters
    ----------
    regime : str
        The data-generating process, for the table.
    n : int
        Records per sample.
    epsilon : float
        The budget of each release.
    replicate : callable
        ``(rng) -> (covered, names)``: ``covered`` a boolean array (one per coordinate) or None
        when the library refused the interval; ``names`` the coordinates' names.
    reps : int or None, default None
        Replicates of this cell in a full run (default :data:`REPS`); an explicit ``--reps`` overrides it.
    """

    regime: str
    n: int
    epsilon: float
    replicate: Callable
    reps: int | None = None


@dataclass(frozen=True)
class Check:
    """One interval of the library and what it claims to cover.

    Parameters
    ----------
    name : str
        The interval (the call).
    claim : str
        What it covers.
    cells : list of Cell
        The regimes.
    """

    name: str
    claim: str
    cells: list


def _quiet(fn):
    def wrapped(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fixed-seed and clipping warnings: the replicates are independent draws
            return fn(*args, **kwargs)

    return wrapped


# -- data ------------------------------------------------------------------------------------------
def _beta_column(a, b, hi):
    return lambda n, rng: hi * rng.beta(a, b, n)


def _housing_column(name):
    """The packaged California housing column ``name`` (the population), or None without pandas."""
    import pandas as pd

    from knorm.experiments.data import housing_path

    return pd.read_csv(housing_path())[name].to_numpy(dtype=float)


# -- checks ----------------------------------------------------------------------------------------
def _mean_noise(sampler, bounds, n, eps):
    """dp.mean(...).conf_int(): covers the sample's (clipped) mean."""
    import knorm.stats as dp

    @_quiet
    def replicate(rng):
        x = sampler(n, rng)
        ci = np.asarray(dp.mean(x, bounds, epsilon=eps, rng=rng).conf_int(1 - LEVEL)).reshape(-1, 2)
        target = np.mean(np.clip(x, *bounds))
        return (ci[:, 0] <= target) & (target <= ci[:, 1]), ("mean",)

    return replicate


def _population(fn, sampler, bounds, n, eps, target, names, **kw):
    """``fn(x, bounds, epsilon=eps).conf_int(kind='population')``: covers the population parameter ``target``."""
    target = np.asarray(target, dtype=float)

    @_quiet
    def replicate(rng):
        x = sampler(n, rng)
        try:
            ci = np.asarray(fn(x, bounds, epsilon=eps, rng=rng, **kw).conf_int(1 - LEVEL, kind="population"))
        except IntervalUnavailableError:
            return None, names
        ci = ci.reshape(-1, 2)
        return (ci[:, 0] <= target) & (target <= ci[:, 1]), names

    return replicate


def _correlated(n, rng):
    """(x1, (x1 + u) / 2, u) with x1, u independent uniform on [0, 1]: a known covariance."""
    x1, u = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    return np.column_stack([x1, (x1 + u) / 2, u])


#: The population covariance of :func:`_correlated`, upper triangle row by row (1/12, 1/24, 0, 1/24, 1/24, 1/12).
_CORRELATED_COV = (1 / 12, 1 / 24, 0.0, 1 / 24, 1 / 24, 1 / 12)


def _logistic(draw, bounds, n, eps, *, fit_intercept=True):
    """LogisticRegression(inference_share='auto').conf_int(): covers the sample's non-private MLE."""
    from knorm.models import LogisticRegression, logistic_newton

    @_quiet
    def replicate(rng):
        X, y = draw(n, rng)
        Z = np.column_stack([np.ones(len(X)), X]) if fit_intercept else X  # intercept first, as conf_int
        mle = logistic_newton(Z, y.astype(float), max_iter=100, tol=1e-10)[0]
        names = (("intercept",) if fit_intercept else ()) + tuple(f"x{j + 1}" for j in range(X.shape[1]))
        clf = LogisticRegression(
            epsilon=eps,
            bounds_X=bounds,
            fit_intercept=fit_intercept,
            classes=[0, 1],
            inference_share="auto",
            random_state=rng,
        )
        try:
            ci = np.asarray(clf.fit(X, y).conf_int(1 - LEVEL))
        except IntervalUnavailableError:
            return None, names
        return (ci[:, 0] <= mle) & (mle <= ci[:, 1]), names

    return replicate


def _readme_logistic(n, rng):
    """The README's example: three features on [0, 10], y = 1[x1 - 2 x2 + 0.5 x3 + N(0, 1) > 0]."""
    X = rng.uniform(0, 10, (n, 3))
    return X, (X @ [1.0, -2.0, 0.5] + rng.normal(0, 1, n) > 0).astype(int)


def _paper_logistic(n, rng):
    """The paper's logistic simulation (knorm.experiments.logistic_intervals): beta on [-1, 1]^7, no intercept."""
    from scipy.special import expit

    from knorm.experiments.logistic_intervals import BETA

    X = rng.uniform(-1, 1, (n, BETA.size))
    return X, (rng.random(n) < expit(X @ BETA)).astype(int)


def _balanced_logistic(n, rng):
    """Small coefficients, balanced classes: y ~ Bernoulli(expit(0.5 x1 - 0.5 x2)), x uniform on [-1, 1]^2."""
    from scipy.special import expit

    X = rng.uniform(-1, 1, (n, 2))
    return X, (rng.random(n) < expit(0.5 * X[:, 0] - 0.5 * X[:, 1])).astype(int)


def _banknote():
    """The banknote authentication data (../shared/data), or None without it."""
    from knorm.experiments.data import shared_data_dir

    folder = shared_data_dir()
    path = None if folder is None else folder / "banknote_authentication.csv"
    if path is None or not path.exists():
        return None
    data = np.loadtxt(path, delimiter=",")
    return data[:, :4], data[:, 4].astype(int)


def _linear(beta, sigma, n, eps):
    """LinearRegression.conf_int(): covers the population coefficients of y = X beta + N(0, sigma^2)."""
    from knorm.models import LinearRegression

    beta = np.asarray(beta, dtype=float)
    names = ("intercept", *(f"x{j + 1}" for j in range(len(beta))))
    truth = np.r_[0.0, beta]
    bound_y = float(np.sum(np.abs(beta)) + 6 * sigma)  # clipping has probability below 1e-9 per record

    @_quiet
    def replicate(rng):
        X = rng.uniform(-1, 1, (n, len(beta)))
        y = X @ beta + rng.normal(0, sigma, n)
        model = LinearRegression(bounds_X=(-1, 1), bounds_y=(-bound_y, bound_y), epsilon=eps, random_state=rng)
        try:
            ci = np.asarray(model.fit(X, y).conf_int(1 - LEVEL))
        except IntervalUnavailableError:
            return None, names
        return (ci[:, 0] <= truth) & (truth <= ci[:, 1]), names

    return replicate


def _grid(make, ns, epsilons, regime, reps=None):
    """The cells of every (n, eps); ``reps`` an int, None (:data:`REPS`) or a function of n."""
    return [
        Cell(regime, n, eps, make(n, eps), reps=reps(n) if callable(reps) else reps) for n in ns for eps in epsilons
    ]


def _small_sample_reps(n):
    return SMALL_SAMPLE_REPS if n <= 10_000 else None


def checks():
    """Return the checks of the matrix: every interval the library offers, over its regimes.

    Returns
    -------
    list of Check
        In page order.
    """
    beta = _beta_column(2.0, 5.0, 10.0)
    grid_n, grid_eps = (100, 10_000, 1_000_000), (0.1, 1.0, 10.0)
    income = None
    try:
        income = _housing_column("median_income")
    except ImportError:  # pandas is an optional extra: the real-data cells need it
        pass
    mean_cells = _grid(
        lambda n, e: _mean_noise(beta, (0.0, 10.0), n, e), grid_n, grid_eps, "Beta(2, 5) x 10 on [0, 10]"
    )
    draw = None
    if income is not None:
        pop = income

        def draw(n, rng):
            return pop[rng.integers(0, len(pop), n)]

        mean_cells += _grid(
            lambda n, e: _mean_noise(draw, (0.0, 15.0), n, e),
            (1_000, 20_640),
            (0.1, 1.0),
            "housing median_income on [0, 15]",
        )
    import knorm.stats as dp

    a, b, top = 2.0, 5.0, 10.0
    mu, var = top * a / (a + b), top**2 * a * b / ((a + b) ** 2 * (a + b + 1))
    regime = "Beta(2, 5) x 10 on [0, 10]"
    pop_mean = _grid(
        lambda n, e: _population(dp.mean, beta, (0.0, 10.0), n, e, [mu], ("mean",)),
        grid_n,
        grid_eps,
        regime,
        reps=_small_sample_reps,
    )
    pop_var = _grid(
        lambda n, e: _population(dp.var, beta, (0.0, 10.0), n, e, [mu, var], ("mean", "variance")),
        grid_n,
        grid_eps,
        regime,
    )
    pop_std = _grid(
        lambda n, e: _population(dp.std, beta, (0.0, 10.0), n, e, [mu, math.sqrt(var)], ("mean", "std")),
        (1_000, 100_000),
        (1.0,),
        regime,
    )
    pop_sum = _grid(
        lambda n, e: _population(dp.sum, beta, (0.0, 10.0), n, e, [n * mu], ("sum",)),
        grid_n,
        (0.1, 1.0),
        regime,
        reps=_small_sample_reps,
    )
    edges = np.linspace(0.0, 10.0, 6)
    cells = np.diff(sps.beta.cdf(edges / top, a, b))
    pop_hist = _grid(
        lambda n, e: _population(
            lambda x, bounds, **kw: dp.histogram(x, edges, **kw),
            beta,
            None,
            n,
            e,
            cells,
            tuple(f"bin {j + 1}" for j in range(5)),
        ),
        grid_n,
        (0.1, 1.0),
        regime + ", 5 bins",
    )
    cov_names = ("cov 1,1", "cov 1,2", "cov 1,3", "cov 2,2", "cov 2,3", "cov 3,3")
    pop_cov = _grid(
        lambda n, e: _population(dp.covariance, _correlated, (0.0, 1.0), n, e, _CORRELATED_COV, cov_names),
        (1_000, 100_000),
        (0.1, 1.0, 10.0),
        "(x1, (x1 + u) / 2, u), x1 and u uniform on [0, 1]",
    )
    if income is not None:
        pop_mean += _grid(
            lambda n, e: _population(dp.mean, draw, (0.0, 15.0), n, e, [float(np.mean(income))], ("mean",)),
            (1_000, 10_000),
            (0.1, 1.0),
            "housing median_income on [0, 15] (the 20,640 districts as the population)",
            reps=_small_sample_reps,
        )
        pop_var += _grid(
            lambda n, e: _population(
                dp.var, draw, (0.0, 15.0), n, e, [float(np.mean(income)), float(np.var(income))], ("mean", "variance")
            ),
            (1_000, 10_000),
            (1.0,),
            "housing median_income on [0, 15] (the 20,640 districts as the population)",
        )
    logistic_cells = [
        Cell(
            "README example: 3 features on [0, 10], near-separable",
            10_000,
            1.0,
            _logistic(_readme_logistic, (0.0, 10.0), 10_000, 1.0),
            reps=100,
        ),
    ]
    logistic_cells += [
        Cell(
            "the paper's simulation (7 coefficients up to 1.5, no intercept)",
            10_000,
            e,
            _logistic(_paper_logistic, (-1.0, 1.0), 10_000, e, fit_intercept=False),
            reps=100,
        )
        for e in (0.25, 1.0, 4.0)
    ]
    logistic_cells += [
        Cell(
            "balanced classes, small coefficients (0.5, -0.5)",
            n,
            1.0,
            _logistic(_balanced_logistic, (-1.0, 1.0), n, 1.0),
            reps=100,
        )
        for n in (1_000, 100_000)
    ]
    banknote = _banknote()
    if banknote is not None:
        bX, by = banknote

        def resample(n, rng):
            idx = rng.integers(0, len(by), n)
            return bX[idx], by[idx]

        logistic_cells.append(
            Cell(
                "banknote authentication (resampled), features declared in [-15, 20]",
                len(by),
                8.0,
                _logistic(resample, (-15.0, 20.0), len(by), 8.0),
                reps=100,
            )
        )
    linear_cells = []
    for name, coef, sigma in (
        ("small coefficients", (0.5, -0.25, 0.1), 0.3),
        ("large coefficients", (3.0, -2.0, 1.0), 0.5),
    ):
        linear_cells += _grid(
            lambda n, e, c=coef, s=sigma: _linear(c, s, n, e),
            (100, 10_000, 1_000_000),
            (0.1, 1.0, 10.0),
            f"y = X b + N(0, {sigma}^2), {name}, X uniform on [-1, 1]^3",
        )
    return [
        Check("stats.mean(...).conf_int()", "the sample's mean (privacy noise only)", mean_cells),
        Check("stats.mean(...).conf_int(kind='population')", "the population mean (sampling and noise)", pop_mean),
        Check(
            "stats.var(...).conf_int(kind='population')",
            "the population mean and variance (sampling and noise)",
            pop_var,
        ),
        Check("stats.std(...).conf_int(kind='population')", "the population mean and standard deviation", pop_std),
        Check("stats.sum(...).conf_int(kind='population')", "n times the population mean (n public)", pop_sum),
        Check("stats.histogram(...).conf_int(kind='population')", "the population's cell probabilities", pop_hist),
        Check("stats.covariance(...).conf_int(kind='population')", "the population covariance entries", pop_cov),
        Check("LinearRegression(...).conf_int()", "the population coefficients (sampling and noise)", linear_cells),
        Check(
            "LogisticRegression(inference_share='auto').conf_int()",
            "the sample's non-private MLE (the mechanism's bias and noise)",
            logistic_cells,
        ),
    ]


# -- running ---------------------------------------------------------------------------------------
def _clopper_pearson(k, n, alpha=0.05):
    lo = 0.0 if k == 0 else sps.beta.ppf(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else sps.beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lo), float(hi)


def run_cell(check, cell, *, reps, rng):
    """Run one cell and return its row.

    Parameters
    ----------
    check : Check
        The interval checked.
    cell : Cell
        The regime.
    reps : int or None
        Replicates; None for the cell's own (:data:`REPS` unless it fixes its own).
    rng : numpy.random.Generator
        Source of the replicates' randomness.

    Returns
    -------
    list
        The row of :data:`_FIELDS`: coverage of the worst coordinate over the replicates that
        gave an interval, with its Clopper-Pearson 95% Monte Carlo interval, and the status
        'ok', 'LOW' (below :data:`FLOOR`) or 'refused' (every replicate refused).
    """
    reps = reps if reps is not None else (cell.reps or REPS)
    hits, refused, names = None, 0, ()
    for _ in range(reps):
        covered, names = cell.replicate(rng)
        if covered is None:
            refused += 1
            continue
        covered = np.asarray(covered, dtype=int)
        hits = covered if hits is None else hits + covered
    given = reps - refused
    if hits is None:
        return [check.name, cell.regime, cell.n, cell.epsilon, reps, refused, 0, "", "", "", "", "refused"]
    worst = int(np.argmin(hits))
    k = int(hits[worst])
    lo, hi = _clopper_pearson(k, given)
    status = "ok" if k / given >= FLOOR else "LOW"
    return [
        check.name,
        cell.regime,
        cell.n,
        cell.epsilon,
        reps,
        refused,
        k,
        f"{k / given:.3f}",
        f"{lo:.3f}",
        f"{hi:.3f}",
        names[worst],
        status,
    ]


def run_matrix(*, reps=None, seed=SEED, only=None, progress=None):
    """Run every cell of :func:`checks` and return the rows.

    Parameters
    ----------
    reps : int, optional
        Replicates of every cell; by default each cell's own (:data:`REPS`, fewer for slow cells, more
        for the small-sample population means and sums).
    seed : int, default 20261127
        Root seed; cell i of check j uses the seed (seed, j, i).
    only : str, optional
        Run only the checks whose name contains this string.
    progress : callable, optional
        Called with each finished row.

    Returns
    -------
    list of list
        One row per cell.
    """
    rows = []
    for j, check in enumerate(checks()):
        if only and only not in check.name:
            continue
        for i, cell in enumerate(check.cells):
            row = run_cell(check, cell, reps=reps, rng=np.random.default_rng([seed, j, i]))
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows


def store_run(rows, folder, *, command, reps, seed, seconds):
    """Write the rows (``coverage.csv``) and the run's settings (``run.json``) into ``folder``.

    Parameters
    ----------
    rows : list of list
        From :func:`run_matrix`.
    folder : str or pathlib.Path
        The folder.
    command : str
        The command that made them.
    reps : int or str
        Replicates per cell (or how they were chosen).
    seed : int
        The root seed.
    seconds : float
        Wall time.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "coverage.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(_FIELDS)
        writer.writerows(rows)
    machine = f"{platform.machine()}, Python {platform.python_version()}"
    meta = dict(command=command, reps=reps, seed=seed, seconds=round(seconds), machine=machine)
    (folder / "run.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def _number(x):
    x = float(x)
    return (
        f"{x:g}" if x < 1e4 else f"10^{round(math.log10(x))}" if float(10 ** round(math.log10(x))) == x else f"{x:,.0f}"
    )


def render_page(folder):
    """Return the markdown page of the run stored in ``folder``.

    Parameters
    ----------
    folder : str or pathlib.Path
        Written by :func:`store_run`.

    Returns
    -------
    str
        ``docs/coverage.md``.
    """
    folder = Path(folder)
    head = [
        "# Coverage of every interval",
        "",
        "<!-- Generated by `python -m knorm.experiments.coverage`; edit src/knorm/experiments/coverage.py, not this file. -->",
        "",
        f"Each cell draws independent samples of its regime, releases, and asks for the nominal {LEVEL:.0%} "
        "interval; it shows how often the interval covered its target (for a vector, the worst coordinate, "
        "named), with the Clopper-Pearson 95% Monte Carlo interval of that rate, and how many replicates the "
        f"library refused to give an interval for. A cell below {FLOOR:.2f} is listed at the end: each is "
        "either fixed or refused in code.",
        "",
    ]
    if not (folder / "run.json").exists():
        return "\n".join([*head, "(no stored run: `python -m knorm.experiments.coverage` writes one)", ""])
    meta = json.loads((folder / "run.json").read_text())
    with open(folder / "coverage.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    head += [
        f"Run: `{meta['command']}`, {meta['reps']} replicates per cell (the reps column), seed {meta['seed']}, "
        f"{meta['seconds']} s on {meta['machine']}.",
        "",
    ]
    body, low = [], []
    claims = {c.name: c.claim for c in checks()}
    for name in dict.fromkeys(r["check"] for r in rows):
        body += [f"## `{name}`", "", f"Covers {claims.get(name, '(see its docstring)')}.", ""]
        body += [
            "| regime | n | epsilon | coverage | MC 95% | worst | refused | status |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            if r["check"] != name:
                continue
            cov = r["coverage"] or "-"
            mc = f"[{r['mc_low']}, {r['mc_high']}]" if r["mc_low"] else "-"
            body.append(
                f"| {r['regime']} | {_number(r['n'])} | {float(r['epsilon']):g} | {cov} | {mc} | {r['worst'] or '-'} | "
                f"{r['refused']}/{r['reps']} | {r['status']} |"
            )
            if r["status"] == "LOW":
                low.append(
                    f"- `{name}`, {r['regime']}, n = {_number(r['n'])}, epsilon = {float(r['epsilon']):g}: {cov}"
                )
        body.append("")
    tail = ["## Cells below the floor", ""] + (low or [f"None: every cell shown is at least {FLOOR:.2f} or refused."])
    return "\n".join([*head, *body, *tail, ""])


_DEFAULT_REPS = (
    f"{REPS} ({SMALL_SAMPLE_REPS:,} for the population mean and sum at n <= 10^4, 100 for the logistic cells)"
)


def main(argv=None):
    """Run the matrix and write ``docs/coverage/`` and ``docs/coverage.md``.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status.
    """
    ap = argparse.ArgumentParser(prog="python -m knorm.experiments.coverage", description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, help=f"replicates of every cell (default: {_DEFAULT_REPS})")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", help="run only the checks whose name contains this")
    ap.add_argument("--docs", default="docs", help="the docs folder to write into (default docs)")
    args = ap.parse_args(argv)
    start = time.time()
    rows = run_matrix(
        reps=args.reps, seed=args.seed, only=args.only, progress=lambda r: print(*r, sep=" | ", flush=True)
    )
    docs = Path(args.docs)
    argv = sys.argv[1:] if argv is None else list(argv)
    command = " ".join(["python -m knorm.experiments.coverage", *map(shlex.quote, argv)])  # copy-pasteable
    seconds = time.time() - start
    if args.only and (docs / "coverage" / "coverage.csv").exists():  # splice the re-run checks into the stored run
        with open(docs / "coverage" / "coverage.csv", newline="") as fh:
            old = [list(r.values()) for r in csv.DictReader(fh)]
        rerun = {r[0] for r in rows}
        order = [c.name for c in checks()]
        kept = [r for r in old if r[0] not in rerun]
        rows = sorted(kept + rows, key=lambda r: order.index(r[0]) if r[0] in order else len(order))
        meta = json.loads((docs / "coverage" / "run.json").read_text())
        command, seconds = meta["command"] + f"; then {command}", meta["seconds"] + seconds
    reps = args.reps if args.reps is not None else _DEFAULT_REPS
    store_run(rows, docs / "coverage", command=command, reps=reps, seed=args.seed, seconds=seconds)
    (docs / "coverage.md").write_text(render_page(docs / "coverage"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
