"""Multiclass logistic regression: multinomial against one-vs-rest, and against diffprivlib, at equal epsilon.

On the three multiclass data sets that ship with scikit-learn (iris, wine, digits),
the test accuracy of knorm's multinomial release (the default: the softmax ball of the
joint gradient space, ``knorm.sensitivity.softmax``), the same release with l_inf
noise, knorm's one-vs-rest (epsilon / k per class), and IBM diffprivlib's
``LogisticRegression`` (one-vs-rest with epsilon / k per class, l2 objective
perturbation; run in its own virtual environment, see ``benchmarks/_diffprivlib.py``).

Declared bounds (never read from the data that are fitted):

* digits: pixel counts in [0, 16] (the data description: "integer pixels in the range
  0..16");
* iris and wine: the Min/Max columns of the "Summary Statistics" tables of the data
  descriptions (``load_iris().DESCR``, ``load_wine().DESCR``), rounded outward. Those
  tables were computed by the data's publishers from the same records, so here they
  stand for public knowledge of the measurement ranges; a real release would take
  them from the instruments or the domain.

diffprivlib gets the same information: the features mapped onto [-1, 1] by the
declared bounds (a public transformation) and ``data_norm = sqrt(p)``, the largest
l2 norm of such a row, so its clipping never binds.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from benchmarks._harness import SamplerLog, SectionSkipped, md_table

TITLE = "Multiclass logistic regression: multinomial, one-vs-rest and diffprivlib at equal epsilon"

EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
IRIS_BOUNDS = ([4.0, 2.0, 1.0, 0.0], [8.0, 4.5, 7.0, 2.5])
WINE_BOUNDS = (
    [11.0, 0.5, 1.0, 10.0, 70.0, 0.5, 0.0, 0.1, 0.4, 1.0, 0.4, 1.2, 250.0],
    [15.0, 6.0, 3.5, 30.0, 170.0, 4.0, 5.5, 0.7, 3.6, 13.0, 1.8, 4.0, 1700.0],
)
DIGITS_BOUNDS = (0.0, 16.0)
VARIANTS = {
    "knorm multinomial (softmax, default)": dict(multi_class="multinomial"),
    "knorm multinomial (l_inf)": dict(multi_class="multinomial", norm="linf"),
    "knorm one-vs-rest": dict(multi_class="ovr"),
}

# Run by diffprivlib's own interpreter (never imported here): fits on the splits of a job
# file and writes the test accuracies.
_DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
import diffprivlib, sklearn
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import LogisticRegression

job = json.load(open(sys.argv[1]))
acc, counts = {}, {}
for case in job["cases"]:
    d = np.load(case["path"])
    out = []
    for eps, seed in zip(case["eps"], case["seeds"]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = LogisticRegression(epsilon=eps, data_norm=case["data_norm"], random_state=seed,
                                     accountant=BudgetAccountant()).fit(d["Xtr"], d["ytr"])
        for w in caught:
            counts[w.category.__name__] = counts.get(w.category.__name__, 0) + 1
        out.append(float(np.mean(clf.predict(d["Xte"]) == d["yte"])))
    acc[case["name"]] = out
json.dump({"acc": acc, "warnings": counts, "versions": {"diffprivlib": diffprivlib.__version__,
           "sklearn": sklearn.__version__, "numpy": np.__version__}}, open(job["out"], "w"))
"""


def _datasets():
    from sklearn.datasets import load_digits, load_iris, load_wine

    return {
        "iris": (*load_iris(return_X_y=True), IRIS_BOUNDS),
        "wine": (*load_wine(return_X_y=True), WINE_BOUNDS),
        "digits": (*load_digits(return_X_y=True), DIGITS_BOUNDS),
    }


def _scaled(X, bounds):
    lo, hi = (np.broadcast_to(np.asarray(b, float), X.shape[1:]) for b in bounds)
    return np.clip((X - lo) / (hi - lo) * 2.0 - 1.0, -1.0, 1.0)


def _splits(config, name, X, y, reps):
    from sklearn.model_selection import train_test_split

    for r in range(reps):
        seed = int(config.rng("multiclass", name, "split", r).integers(2**31))
        yield train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


def _knorm(config, data, reps_by_name):
    import warnings

    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    from knorm.models import LogisticRegression

    acc = {}
    reference = {}
    logs = {v: SamplerLog() for v in VARIANTS}
    for name, (X, y, bounds) in data.items():
        reps = reps_by_name[name]
        classes = np.unique(y)
        for v in VARIANTS:
            acc[name, v] = np.empty((len(EPSILONS), reps))
        sk = []
        for r, (Xtr, Xte, ytr, yte) in enumerate(_splits(config, name, X, y, reps)):
            for i, eps in enumerate(EPSILONS):
                for v, kw in VARIANTS.items():
                    rng = config.rng("multiclass", name, v, r, eps)
                    clf = LogisticRegression(epsilon=eps, bounds_X=bounds, classes=classes, random_state=rng, **kw)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # PrivacyWarning does not apply: Generators
                        acc[name, v][i, r] = logs[v].fit(clf, Xtr, ytr).score(Xte, yte)
            ref = SkLogisticRegression(max_iter=5000).fit(_scaled(Xtr, bounds), ytr)
            sk.append(ref.score(_scaled(Xte, bounds), yte))
        reference[name] = (float(np.mean(sk)), float(np.max(np.bincount(y)) / len(y)))
        config.log(f"  multiclass: knorm on {name} done")
    return acc, reference, logs


def _diffprivlib(config, data, reps_by_name):
    """(accuracies by data set, shape (eps, reps), or None; a note)."""
    from benchmarks._diffprivlib import clean_env, ensure_venv

    python, note = ensure_venv(create=not config.quick, log=config.log)
    if python is None:
        return None, note, {}
    with tempfile.TemporaryDirectory(prefix="knorm-bench-mc-") as tmp:
        tmp = Path(tmp)
        cases = []
        for name, (X, y, bounds) in data.items():
            for r, (Xtr, Xte, ytr, yte) in enumerate(_splits(config, name, X, y, reps_by_name[name])):
                path = tmp / f"{name}_{r}.npz"
                np.savez(path, Xtr=_scaled(Xtr, bounds), ytr=ytr, Xte=_scaled(Xte, bounds), yte=yte)
                seeds = config.rng("multiclass", name, "diffprivlib", r).integers(2**31, size=len(EPSILONS))
                cases.append(
                    dict(
                        name=f"{name}/{r}",
                        path=str(path),
                        eps=EPSILONS,
                        seeds=seeds.tolist(),
                        data_norm=math.sqrt(X.shape[1]),
                    )
                )
        job = tmp / "job.json"
        job.write_text(json.dumps({"cases": cases, "out": str(tmp / "out.json")}))
        script = tmp / "run.py"
        script.write_text(_DPL_SCRIPT)
        res = subprocess.run(
            [str(python), str(script), str(job)], env=clean_env(), capture_output=True, text=True, timeout=3600
        )
        if res.returncode != 0:
            return None, f"its run failed: {' / '.join(res.stderr.strip().splitlines()[-3:])}", {}
        out = json.loads((tmp / "out.json").read_text())
    acc = {name: np.array([out["acc"][f"{name}/{r}"] for r in range(reps_by_name[name])]).T for name in data}
    v = out["versions"]
    note = f"diffprivlib {v['diffprivlib']} with scikit-learn {v['sklearn']}, numpy {v['numpy']} ({note})"
    return acc, note, out["warnings"]


def run(config):
    try:
        import sklearn  # noqa: F401
    except ImportError as err:  # pragma: no cover
        raise SectionSkipped(f"scikit-learn is not installed ({err})") from err
    data = _datasets()
    # Digits fits take about a second each (585 coefficients) and each eps builds its lattice
    # law: 2 splits there (4 before the lattice release) keep the section near two minutes.
    reps_by_name = {name: 2 if config.quick else (2 if name == "digits" else 20) for name in data}
    acc, reference, logs = _knorm(config, data, reps_by_name)
    dpl, dpl_note, dpl_warnings = _diffprivlib(config, data, reps_by_name)
    config.log(
        "  multiclass: diffprivlib done" if dpl is not None else f"  multiclass: diffprivlib skipped ({dpl_note})"
    )
    columns = list(VARIANTS) + ["diffprivlib (one-vs-rest)"]
    tables = []
    wins = {name: 0 for name in data}
    for name, (X, y, _) in data.items():
        k, p, reps = len(np.unique(y)), X.shape[1], reps_by_name[name]
        rows = []
        for i, eps in enumerate(EPSILONS):
            means = [acc[name, v][i].mean() for v in VARIANTS]
            sems = [acc[name, v][i].std(ddof=1) / math.sqrt(reps) if reps > 1 else 0.0 for v in VARIANTS]
            if dpl is not None:
                means.append(dpl[name][i].mean())
                sems.append(dpl[name][i].std(ddof=1) / math.sqrt(reps) if reps > 1 else 0.0)
            best = int(np.argmax(means))
            wins[name] += int(means[0] >= means[2])
            cells = [f"{mu:.3f} ± {se:.3f}" for mu, se in zip(means, sems)]
            cells[best] = f"**{cells[best]}**"
            rows.append([f"{eps:g}"] + cells + ([] if dpl is not None else ["not run"]))
        sk, majority = reference[name]
        head = (
            f"**{name}** (k = {k} classes, p = {p} features, n = {len(y)}: {int(round(0.7 * len(y)))} train / "
            f"{len(y) - int(round(0.7 * len(y)))} test; {reps} splits); non-private scikit-learn (L2-penalised, C = 1, features "
            f"mapped by the declared bounds): {sk:.3f}; majority class: {majority:.3f}."
        )
        tables.append(head + "\n\n" + md_table(["eps"] + columns, rows, "l" + "r" * len(columns)))
    verdict = ", ".join(f"{name}: {wins[name]} of {len(EPSILONS)}" for name in data)
    peer = (
        f"diffprivlib: {dpl_note}; features mapped onto [-1, 1] by the declared bounds, `data_norm = sqrt(p)`."
        if dpl is not None
        else f"**diffprivlib was not run: {dpl_note}.**"
    )
    warn = ""
    if dpl_warnings:
        warn = " Warnings inside diffprivlib's fits: " + ", ".join(f"{k} x{v}" for k, v in dpl_warnings.items()) + "."
    return (
        "Test accuracy, mean ± standard error over stratified 70/30 splits (each split and each fit its "
        "own seed), at equal total epsilon; the best of each row in bold. knorm: `LogisticRegression` with "
        "declared `classes` and `bounds_X`, q = 'auto'; one-vs-rest spends epsilon / k per class, like "
        f"diffprivlib. {peer}{warn} Multinomial (softmax ball) at least as accurate as one-vs-rest at "
        f"{verdict} values of eps, hence the default `multi_class='multinomial'`. Entries are test accuracies "
        "(higher is better).\n\nknorm's fits use the default `sampler='auto'`. "
        + " ".join(f"{v}: {log.summary()}" for v, log in logs.items())
        + "\n\n"
        + "\n\n".join(tables)
    )
