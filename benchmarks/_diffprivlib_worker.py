"""Worker run by the ISOLATED diffprivlib environment (see ``benchmarks/_diffprivlib.py``).

Not part of knorm and never imported by it: this script runs under
``<venv>/bin/python`` with diffprivlib 0.6.6 and scikit-learn < 1.7, and
imports neither knorm nor the ``benchmarks`` package. It reads one JSON command
per line on stdin and answers one JSON line on stdout; arrays travel as ``.npy``
files in a directory chosen by the parent. Commands:

``{"cmd": "versions"}``
    Versions of diffprivlib, scikit-learn, numpy, scipy.
``{"cmd": "load", "name": ..., "X": path, "y": path}``
    Load the arrays once and keep them (load time is reported, never timed as fit).
``{"cmd": "free", "name": ...}``
    Drop them.
``{"cmd": "coefs", "model": "linear"|"logistic", "data": name, "params": {...},
"epsilons": [...], "repeats": R, "seed": s, "out": path}``
    R fits per epsilon with seeds drawn from ``seed``; writes an array of shape
    (len(epsilons), R, 1 + n_features) holding (intercept, coef...) to ``out``.
``{"cmd": "time", "model": ..., "data": name, "params": {...}, "epsilon": e, "number": k, "rows": n}``
    Seconds per fit of ``k`` back-to-back fits on the first ``n`` rows (all if absent), timed here with
    ``time.perf_counter`` (process start-up and data loading excluded).
``{"cmd": "mean", "data": name, "bounds": [lo, hi], "epsilon": e, "number": k}``
    Seconds per call of ``tools.mean(x, bounds, epsilon)`` (a fresh accountant per call) and of
    numpy's ``x.mean()`` on the loaded X, each looped ``k`` times, back to back (the numpy time
    lets the parent compare through numpy, which it also times in its own process).
``{"cmd": "mean_peak", "data": name, "bounds": [lo, hi], "epsilon": e}``
    Peak bytes traced by ``tracemalloc`` (numpy's allocations included) during one ``tools.mean`` call.
``{"cmd": "quantile", "data": name, "bounds": [lo, hi], "epsilon": e, "q": q, "repeats": R, "seed": s, "out": path}``
    R calls of ``tools.quantile(x, q, epsilon=e, bounds=(lo, hi))`` on the loaded X (first column), each with a
    fresh accountant and a seed drawn from ``seed``; writes the R released values to ``out``.
``{"cmd": "quit"}``

Every answer holds ``ok`` and, on failure, ``error``; warnings raised during a
command are counted by category in ``warnings`` (with the first message of each).
"""

import json
import sys
import time
import traceback
import warnings

import numpy as np

_PROTOCOL = sys.stdout
sys.stdout = sys.stderr  # anything a library prints must not corrupt the protocol

DATA = {}


def _estimator(model, params, epsilon, seed):
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import LinearRegression, LogisticRegression

    acc = BudgetAccountant()  # a fresh, unlimited ledger per fit
    if model == "linear":
        bx = (np.asarray(params["bounds_X"][0], float), np.asarray(params["bounds_X"][1], float))
        by = (float(params["bounds_y"][0]), float(params["bounds_y"][1]))
        return LinearRegression(
            epsilon=epsilon,
            bounds_X=bx,
            bounds_y=by,
            fit_intercept=params["fit_intercept"],
            random_state=seed,
            accountant=acc,
        )
    if model == "logistic":
        # C, tol and max_iter are left at diffprivlib's defaults (1.0, 1e-4, 100).
        return LogisticRegression(
            epsilon=epsilon,
            data_norm=float(params["data_norm"]),
            fit_intercept=params["fit_intercept"],
            random_state=seed,
            accountant=acc,
        )
    raise ValueError(f"unknown model {model!r}")


def _flat(est, fit_intercept):
    coef = np.ravel(est.coef_)
    icpt = float(np.ravel(est.intercept_)[0]) if fit_intercept else 0.0
    return np.concatenate([[icpt], coef])


def _coefs(cmd):
    X, y = DATA[cmd["data"]]
    params = cmd["params"]
    eps_list, reps = cmd["epsilons"], int(cmd["repeats"])
    seeds = np.random.default_rng(int(cmd["seed"])).integers(0, 2**31 - 1, size=(len(eps_list), reps))
    out = np.empty((len(eps_list), reps, 1 + X.shape[1]))
    t0 = time.perf_counter()
    for i, eps in enumerate(eps_list):
        for r in range(reps):
            est = _estimator(cmd["model"], params, float(eps), int(seeds[i, r])).fit(X, y)
            out[i, r] = _flat(est, params["fit_intercept"])
    np.save(cmd["out"], out)
    return {"seconds": time.perf_counter() - t0}


def _time(cmd):
    X, y = DATA[cmd["data"]]
    rows = cmd.get("rows")
    if rows is not None:  # leading rows: views, no copy
        X, y = X[: int(rows)], y[: int(rows)]
    number = int(cmd["number"])
    est = _estimator(cmd["model"], cmd["params"], float(cmd["epsilon"]), 0)
    t0 = time.perf_counter()
    for _ in range(number):
        est.random_state = None if est.random_state is None else est.random_state + 1
        est.fit(X, y)
    return {"seconds_per_fit": (time.perf_counter() - t0) / number}


def _mean_call(cmd):
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant

    x = DATA[cmd["data"]][0]
    lo, hi = (float(b) for b in cmd["bounds"])
    eps = float(cmd["epsilon"])
    return x, lambda: tools.mean(x, bounds=(lo, hi), epsilon=eps, accountant=BudgetAccountant())


def _mean(cmd):
    x, call = _mean_call(cmd)
    number = int(cmd["number"])
    t0 = time.perf_counter()
    for _ in range(number):
        call()
    t1 = time.perf_counter()
    for _ in range(number):
        x.mean()
    t2 = time.perf_counter()
    return {"diffprivlib": (t1 - t0) / number, "numpy": (t2 - t1) / number}


def _mean_peak(cmd):
    import tracemalloc

    _, call = _mean_call(cmd)
    call()  # warm-up: lazy imports are not the call's memory
    tracemalloc.start()
    try:
        call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"peak_bytes": int(peak)}


def _quantile(cmd):
    from diffprivlib import tools
    from diffprivlib.accountant import BudgetAccountant

    x = DATA[cmd["data"]][0][:, 0]
    lo, hi = (float(b) for b in cmd["bounds"])
    reps = int(cmd["repeats"])
    seeds = np.random.default_rng(int(cmd["seed"])).integers(0, 2**31 - 1, size=reps)
    out = np.array(
        [
            tools.quantile(
                x,
                float(cmd["q"]),
                epsilon=float(cmd["epsilon"]),
                bounds=(lo, hi),
                random_state=int(s),
                accountant=BudgetAccountant(),
            )
            for s in seeds
        ]
    )
    np.save(cmd["out"], out)
    return {}


def _handle(cmd):
    kind = cmd["cmd"]
    if kind == "versions":
        import diffprivlib
        import scipy
        import sklearn

        return {
            "diffprivlib": diffprivlib.__version__,
            "sklearn": sklearn.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": sys.version.split()[0],
        }
    if kind == "load":
        t0 = time.perf_counter()
        DATA[cmd["name"]] = (np.load(cmd["X"]), np.load(cmd["y"]))
        return {"load_seconds": time.perf_counter() - t0}
    if kind == "free":
        DATA.pop(cmd["name"], None)
        return {}
    if kind == "coefs":
        return _coefs(cmd)
    if kind == "time":
        return _time(cmd)
    if kind == "mean":
        return _mean(cmd)
    if kind == "mean_peak":
        return _mean_peak(cmd)
    if kind == "quantile":
        return _quantile(cmd)
    raise ValueError(f"unknown command {kind!r}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        if cmd.get("cmd") == "quit":
            break
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                reply = {"ok": True, **_handle(cmd)}
            except Exception as exc:  # reported to the parent, which decides
                reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        counts = {}
        for w in caught:
            key = w.category.__name__
            if key not in counts:
                counts[key] = {"count": 0, "first": str(w.message)[:200]}
            counts[key]["count"] += 1
        reply["warnings"] = counts
        _PROTOCOL.write(json.dumps(reply) + "\n")
        _PROTOCOL.flush()


if __name__ == "__main__":
    main()
