"""Logistic regression's default at small epsilon: test accuracy against diffprivlib (issue 23).

Test accuracy of ``LogisticRegression`` at eps in {0.1, 0.25} with its default
``inference_share=0`` (all of epsilon on the coefficients) and with ``inference_share='auto'``
(the former default, which buys the Fisher information behind the intervals with up to half
of epsilon), against IBM diffprivlib's ``LogisticRegression`` with its defaults and
``data_norm`` from the declared bounds, on two tasks:

* **housing**: the packaged California housing data prepared as in the paper's Section 5.3
  (:func:`knorm.experiments.data.prepare_regression_data`: logs, quantile truncation, every
  column in [-1, 1]), four features (longitude, latitude, housing median age, log median
  income), label: house value above its median; a fresh 80/20 train/test split per repeat;
* **simulation**: the paper's logistic simulation (m = 7, no intercept, n = 10^4), with a
  fresh training and test sample per repeat.

Each repeat uses the same split for every method, so the table also gives the paired
difference to diffprivlib with its standard error. diffprivlib runs in its own virtual
environment and process (``benchmarks/_diffprivlib.py``); quick mode never builds it.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

from benchmarks._harness import SectionSkipped, md_table

TITLE = "Logistic regression's default at small epsilon: accuracy against diffprivlib"

EPSILONS = [0.1, 0.25]
BETA = np.array([0, -1, -0.5, -0.25, 0, 0.75, 1.5])
HOUSING_FEATURES = ["longitude", "latitude", "housing_median_age", "log median_income"]
VARIANTS = {"knorm default (inference_share=0)": 0.0, "knorm inference_share='auto'": "auto"}

# Run by diffprivlib's own interpreter (never imported here): the fits of a job file.
_DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
import diffprivlib, sklearn
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LogisticRegression

job = json.load(open(sys.argv[1]))
acc = {}
for case in job["cases"]:
    d = np.load(case["path"])
    out = []
    for eps, seed in zip(job["eps"], case["seeds"]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = LogisticRegression(epsilon=eps, data_norm=case["data_norm"], fit_intercept=case["fit_intercept"],
                                     random_state=seed, accountant=BudgetAccountant()).fit(d["Xtr"], d["ytr"])
        out.append(float(np.mean(clf.predict(d["Xte"]) == d["yte"])))
    acc[case["name"]] = out
json.dump({"acc": acc, "versions": {"diffprivlib": diffprivlib.__version__, "sklearn": sklearn.__version__}},
          open(job["out"], "w"))
"""


def _tasks(config, reps):
    """{task: [(Xtr, Xte, ytr, yte), ...]} and the task's bounds, intercept and data_norm."""
    from scipy.special import expit
    from sklearn.model_selection import train_test_split

    from knorm.experiments.data import HOUSING_LOG, HOUSING_TARGET, housing_path, prepare_regression_data

    d = prepare_regression_data(housing_path(), HOUSING_TARGET, log_columns=HOUSING_LOG)
    X = d.X[:, [d.feature_names.index(c) for c in HOUSING_FEATURES]]
    y = (d.y > np.median(d.y)).astype(int)
    housing = [
        train_test_split(
            X, y, test_size=0.2, random_state=int(config.rng("logistic_default", "split", r).integers(2**31))
        )
        for r in range(reps)
    ]
    sims = []
    for r in range(reps):
        rng = config.rng("logistic_default", "sim", r)
        Xs = rng.uniform(-1, 1, size=(20_000, BETA.size))
        ys = (rng.random(20_000) < expit(Xs @ BETA)).astype(int)
        sims.append((Xs[:10_000], Xs[10_000:], ys[:10_000], ys[10_000:]))
    return {
        f"housing (4 features, n = {len(y):,}; 80/20 splits)": (housing, True, 2.0),
        "simulation (m = 7, n = 10,000, no intercept)": (sims, False, math.sqrt(BETA.size)),
    }


def _knorm(config, tasks):
    from knorm.models import LogisticRegression

    acc = {}
    for t, (splits, fit_intercept, _) in tasks.items():
        for v, share in VARIANTS.items():
            acc[t, v] = np.empty((len(EPSILONS), len(splits)))
            for r, (Xtr, Xte, ytr, yte) in enumerate(splits):
                for i, eps in enumerate(EPSILONS):
                    clf = LogisticRegression(
                        epsilon=eps,
                        bounds_X=(-1, 1),
                        fit_intercept=fit_intercept,
                        classes=[0, 1],
                        inference_share=share,
                        random_state=config.rng("logistic_default", t, v, r, eps),
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # PrivacyWarning does not apply: Generators
                        acc[t, v][i, r] = clf.fit(Xtr, ytr).score(Xte, yte)
        config.log(f"  logistic_default: knorm on {t} done")
    return acc


def _diffprivlib(config, tasks):
    """(accuracies by task, shape (eps, reps), or None; a note)."""
    from benchmarks._diffprivlib import clean_env, ensure_venv

    python, note = ensure_venv(create=not config.quick, log=config.log)
    if python is None:
        return None, note
    with tempfile.TemporaryDirectory(prefix="knorm-bench-ld-") as tmp:
        tmp = Path(tmp)
        cases = []
        for ti, (t, (splits, fit_intercept, data_norm)) in enumerate(tasks.items()):
            for r, (Xtr, Xte, ytr, yte) in enumerate(splits):
                path = tmp / f"{ti}_{r}.npz"
                np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
                seeds = config.rng("logistic_default", t, "diffprivlib", r).integers(2**31, size=len(EPSILONS))
                cases.append(
                    dict(
                        name=f"{ti}/{r}",
                        path=str(path),
                        seeds=seeds.tolist(),
                        data_norm=data_norm,
                        fit_intercept=fit_intercept,
                    )
                )
        job = tmp / "job.json"
        job.write_text(json.dumps({"cases": cases, "eps": EPSILONS, "out": str(tmp / "out.json")}))
        script = tmp / "run.py"
        script.write_text(_DPL_SCRIPT)
        res = subprocess.run(
            [str(python), str(script), str(job)], env=clean_env(), capture_output=True, text=True, timeout=3600
        )
        if res.returncode != 0:
            return None, f"its run failed: {' / '.join(res.stderr.strip().splitlines()[-3:])}"
        out = json.loads((tmp / "out.json").read_text())
    acc = {
        t: np.array([out["acc"][f"{ti}/{r}"] for r in range(len(splits))]).T
        for ti, (t, (splits, _, _)) in enumerate(tasks.items())
    }
    v = out["versions"]
    return acc, f"diffprivlib {v['diffprivlib']} with scikit-learn {v['sklearn']} ({note})"


def _cell(a):
    return f"{a.mean():.4f} ± {a.std(ddof=1) / math.sqrt(a.size):.4f}" if a.size > 1 else f"{a.mean():.4f}"


def run(config):
    try:
        import sklearn  # noqa: F401
    except ImportError as err:  # pragma: no cover
        raise SectionSkipped(f"scikit-learn is not installed ({err})") from err
    reps = 5 if config.quick else 100
    tasks = _tasks(config, reps)
    acc = _knorm(config, tasks)
    dpl, note = _diffprivlib(config, tasks)
    config.log("  logistic_default: diffprivlib done" if dpl is not None else f"  logistic_default: {note}")
    headers = ["task", "eps", *VARIANTS, "diffprivlib"] + [f"{v.split(' (')[0]} - diffprivlib" for v in VARIANTS]
    rows = []
    for t in tasks:
        for i, eps in enumerate(EPSILONS):
            row = [t, f"{eps:g}", *(_cell(acc[t, v][i]) for v in VARIANTS)]
            if dpl is not None:
                row.append(_cell(dpl[t][i]))
                row += [_cell(acc[t, v][i] - dpl[t][i]) for v in VARIANTS]
            else:
                row += ["not run"] * (1 + len(VARIANTS))
            rows.append(row)
    peer = (
        f"{note}: `LogisticRegression(epsilon, data_norm, fit_intercept)` with its other defaults (C = 1), "
        "`data_norm` the largest l2 norm of a row inside the declared box [-1, 1]^p"
        if dpl is not None
        else f"**diffprivlib was not run: {note}.**"
    )
    return (
        f"Test accuracy, mean ± standard error over {reps} repeats (each its own split or sample and its "
        "own noise; the same split for every method, so the last columns are paired differences). knorm: "
        "`LogisticRegression(epsilon, bounds_X=(-1, 1), classes=[0, 1])` with q = 'auto', its default "
        f"`inference_share=0` and the former default 'auto'. {peer}. Features already in [-1, 1] for both "
        "(the housing columns by the paper's Section 5.3 preparation, whose truncation quantiles are not "
        "private, as in the paper).\n\n" + md_table(headers, rows, "ll" + "r" * (len(headers) - 2))
    )
