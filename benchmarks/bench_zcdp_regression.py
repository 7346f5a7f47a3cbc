"""Linear regression under rho-zCDP: knorm's Gaussian functional mechanism against AdaSSP at equal rho.

For each data set (the packaged California housing data prepared as in the paper's Section
5.3, and the paper's simulation of Section 5.2, ``knorm.experiments.linear_sim``) and each
rho, ``reps`` releases of:

* **knorm, spherical**: ``LinearRegression(rho=...)``'s mechanism
  (:func:`knorm.models.functional_gaussian.gaussian_functional_mechanism`): the Gram matrix of
  (1, x', y') with exact discrete Gaussian noise on the certified l2 sensitivity p + 2;
* **knorm, split**: the same with ``shape='split'``;
* **AdaSSP** (Wang 2018, "Revisiting differentially private linear regression: optimal and
  adaptive prediction & estimation in unbounded domain", UAI, Algorithm 2), in its Gaussian
  form calibrated in zCDP, a reference implemented here only (not a library feature): rho split
  in three equal parts; lambda_min(Z'Z) released with sensitivity B^2 (Weyl: one replaced
  record changes Z'Z by z z' - w w', whose eigenvalues lie in [-B^2, B^2]); its high-probability
  lower bound lambda~ = max(lambda_min + sigma_1 N - sigma_1 sqrt(2 log(1 / p_fail)), 0); the
  upper triangle of Z'Z with sensitivity sqrt(2) B^2 (||z z' - w w'||_F^2 =
  ||z||^4 + ||w||^4 - 2 (z'w)^2 <= 2 B^4); Z'y' with sensitivity 2 B; the ridge
  lambda = max(0, sqrt(d log(2 d^2 / p_fail)) sigma_2 - lambda~); theta = (Z'Z~ + lambda I)^+ Z'y~.
  Z = (1, x') with x' in [-1, 1]^p, so B^2 = p + 1, and y' in [-1, 1]; replace-one neighbours
  for both. Each Gaussian release goes through :class:`knorm.mechanisms.GaussianMechanism`
  (continuous sampler: AdaSSP has no lattice form here).

Errors are of (intercept, coef) against the non-private OLS fit of the same data, in the
original units: the mean squared l2 error over the releases, and the median l2 error.
Ratios below 1 favour knorm. Run: ``python -m benchmarks.bench_zcdp_regression [--quick]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

TITLE = "Linear regression under rho-zCDP: knorm's Gaussian functional mechanism against AdaSSP"

RHOS = [0.005, 0.02, 0.08, 0.32, 1.28]
P_FAIL = 0.05  # AdaSSP's failure probability (Wang 2018 uses 0.05)


def _cases(quick, seed=0):
    from knorm.experiments.data import HOUSING_LOG, HOUSING_TARGET, housing_path, prepare_regression_data
    from knorm.experiments.linear_sim import BETA, BOUND_Y, P

    rng = np.random.default_rng(seed)
    n = 10_000
    X = rng.uniform(-1, 1, size=(n, P))
    y = np.clip(BETA[0] + X @ BETA[1:] + rng.standard_normal(n), -BOUND_Y, BOUND_Y)
    d = prepare_regression_data(housing_path(), HOUSING_TARGET, log_columns=HOUSING_LOG)
    cases = [
        dict(name=f"simulation (p = {P}, n = {n:,})", X=X, y=y, by=(-BOUND_Y, BOUND_Y)),
        dict(name=f"housing (p = {d.X.shape[1]}, n = {len(d.y):,})", X=d.X, y=d.y, by=(-1.0, 1.0)),
    ]
    return cases


def _adassp(Z, ys, rho, rng, bounds_X, bounds_y):
    """AdaSSP (Wang 2018, Algorithm 2) under rho-zCDP: (intercept, coef) in original units."""
    from knorm.mechanisms import GaussianMechanism
    from knorm.models import solve_coefficients

    d = Z.shape[1]
    B2 = float(d)  # ||z||^2 <= 1 + p for z = (1, x'), x' in [-1, 1]^p
    part = rho / 3
    A, b = Z.T @ Z, Z.T @ ys
    lam_min = float(np.linalg.eigvalsh(A)[0])
    m1 = GaussianMechanism(B2, part, dim=1, sampler="continuous")
    lam_noisy = float(m1.release([lam_min], rng=rng).value[0])
    lam_low = max(lam_noisy - m1.sigma * math.sqrt(2 * math.log(1 / P_FAIL)), 0.0)
    iu = np.triu_indices(d)
    m2 = GaussianMechanism(math.sqrt(2) * B2, part, dim=len(iu[0]), sampler="continuous")
    upper = m2.release(A[iu], rng=rng).value
    A_noisy = np.zeros((d, d))
    A_noisy[iu] = upper
    A_noisy = A_noisy + np.triu(A_noisy, 1).T
    m3 = GaussianMechanism(2 * math.sqrt(B2), part, dim=d, sampler="continuous")
    b_noisy = m3.release(b, rng=rng).value
    ridge = max(0.0, math.sqrt(d * math.log(2 * d * d / P_FAIL)) * m2.sigma - lam_low)
    coef, icpt = solve_coefficients(A_noisy + ridge * np.eye(d), b_noisy, bounds_X, bounds_y, pinv=True)
    return np.concatenate([[icpt], coef])


def measure(quick=False, reps=None, seed=0, log=print):
    """Return rows (data set, rho, eps at delta 1e-6, method, mean squared error, median error) and timings."""
    from knorm.accounting.zcdp import epsilon_from_rho
    from knorm.models import sufficient_statistics
    from knorm.models.functional_gaussian import gaussian_functional_mechanism

    reps = reps or (20 if quick else 200)
    rows = []
    for case in _cases(quick, seed):
        X, y, by = case["X"], case["y"], case["by"]
        n, p = X.shape
        one = np.ones(p)
        bx = (-one, one)
        Z = np.column_stack([np.ones(n), X])
        ols = np.linalg.lstsq(Z, y, rcond=None)[0]
        stats = sufficient_statistics(X, y, bounds_X=bx, bounds_y=by)
        lo_y, hi_y = by
        ys = (2 * y - (hi_y + lo_y)) / (hi_y - lo_y)
        for rho in RHOS:
            rng = np.random.default_rng([seed, int(rho * 1e6), p])
            errs = {}
            for shape in ("spherical", "split"):
                t0 = time.perf_counter()
                out = []
                for _ in range(reps):
                    fm = gaussian_functional_mechanism(
                        stats.exact, n, p=p, rho=rho, shape=shape, rng=rng, statistic="gram"
                    )
                    coef, icpt = fm.coefficients(bx, by)
                    out.append(np.concatenate([[icpt], coef]) - ols)
                errs[f"knorm {shape}"] = (np.array(out), time.perf_counter() - t0)
            t0 = time.perf_counter()
            out = [_adassp(Z, ys, rho, rng, bx, by) - ols for _ in range(reps)]
            errs["AdaSSP"] = (np.array(out), time.perf_counter() - t0)
            for name, (E, secs) in errs.items():
                sq = np.sum(E * E, axis=1)
                rows.append(
                    dict(
                        data=case["name"],
                        rho=rho,
                        eps=epsilon_from_rho(rho, 1e-6),
                        method=name,
                        mse=float(np.mean(sq)),
                        median=float(np.median(np.sqrt(sq))),
                        secs=secs / reps,
                    )
                )
            cell = {r["method"]: r for r in rows[-3:]}
            log(
                f"{case['name']}, rho {rho:g}: "
                + ", ".join(f"{k} mse {v['mse']:.4g} med {v['median']:.4g}" for k, v in cell.items())
            )
    return rows


def table(rows):
    """Markdown: per (data set, rho), the errors and the ratios knorm / AdaSSP."""
    from benchmarks._harness import md_table

    out = []
    keys = sorted({(r["data"], r["rho"]) for r in rows}, key=lambda k: (k[0], k[1]))
    for data, rho in keys:
        cell = {r["method"]: r for r in rows if r["data"] == data and r["rho"] == rho}
        ada = cell["AdaSSP"]
        sph, spl = cell["knorm spherical"], cell["knorm split"]
        out.append(
            [
                data,
                f"{rho:g}",
                f"{ada['eps']:.2f}",
                f"{ada['mse']:.3g}",
                f"{sph['mse']:.3g}",
                f"{spl['mse']:.3g}",
                f"{sph['mse'] / ada['mse']:.2f}",
                f"{spl['mse'] / ada['mse']:.2f}",
                f"{sph['median'] / ada['median']:.2f}",
                f"{spl['median'] / ada['median']:.2f}",
            ]
        )
    headers = [
        "data",
        "rho",
        "eps (delta 1e-6)",
        "MSE AdaSSP",
        "MSE spherical",
        "MSE split",
        "MSE ratio spherical / AdaSSP",
        "MSE ratio split / AdaSSP",
        "median ratio spherical / AdaSSP",
        "median ratio split / AdaSSP",
    ]
    return md_table(headers, out, "lrrrrrrrrr")


def run(config):
    """The benchmark section (the harness's interface)."""
    rows = measure(quick=config.quick, seed=config.seed, log=lambda *a: None)
    return f"{__doc__.split(chr(10), 2)[2]}\n\n{table(rows)}\n"


if __name__ == "__main__":  # pragma: no cover
    rows = measure(quick="--quick" in sys.argv, log=lambda s: print(s, file=sys.stderr, flush=True))
    print(table(rows))
