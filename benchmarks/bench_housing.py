"""Linear regression at small epsilon: the default before and after, on housing and the paper's simulation.

Median over repeated releases of ||(intercept, coef) - OLS||_2 / ||OLS||_2 (both in the
scaled units of the data: housing prepared as in the paper's Section 5.3, already in
[-1, 1]; the simulation in its own units), at eps in {1/4, 1/2, 1, 2, 4, 8}, for:

* **before**: the default of LinearRegression before issue 14, i.e. the paper's statistic,
  norm 'auto' by the volume order (cut ball for p <= 8, K_T up to p = 15) and the eigenvalue
  floor at the 0.9-quantile (reproduced exactly by ``functional_mechanism`` with its defaults);
* **after**: today's default ``LinearRegression(epsilon, bounds_X, bounds_y)``: the whole Gram
  matrix of (1, x, y) released (for the intervals), the split norm, the median floor;
* the candidates measured on the way (see the text of the section), diffprivlib's
  LinearRegression at equal epsilon when its virtual environment builds, and an oracle that
  is not a mechanism: X'X known exactly and the whole budget on X'y, with the ridge chosen
  in hindsight, to show what is out of reach.

Every noisy value goes through ``KNormMechanism.release`` (directly or inside the estimator).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks._harness import SectionSkipped, md_table

TITLE = "Linear regression at small epsilon: housing and the paper's simulation, before and after"

EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
BETA = np.linspace(-1.5, 1.5, 5)
BOUND_Y_SIM = float(np.abs(BETA).sum() + 4.0)  # 8.5: |x'beta| <= 4.5 plus 4 noise sd (as linear_sim)
ADASSP_SHARE, ADASSP_RHO = 0.1, 0.05  # share of epsilon on lambda_min; failure probability of its bound


def _cases(config):
    from knorm.experiments.data import HOUSING_LOG, HOUSING_TARGET, housing_path, prepare_regression_data

    rng = config.rng("housing", "sim")
    n = 2_000 if config.quick else 10_000
    X = rng.uniform(-1, 1, size=(n, 5))
    y = X @ BETA + rng.standard_normal(n)
    d = prepare_regression_data(housing_path(), HOUSING_TARGET, log_columns=HOUSING_LOG)
    return [
        dict(name=f"housing (p = {d.X.shape[1]}, n = {len(d.y):,})", X=d.X, y=d.y, by=(-1.0, 1.0)),
        dict(
            name=f"simulation (p = 5, n = {n:,})",
            X=X,
            y=np.clip(y, -BOUND_Y_SIM, BOUND_Y_SIM),
            by=(-BOUND_Y_SIM, BOUND_Y_SIM),
        ),
    ]


def _flat(coef, intercept):
    return np.concatenate([[intercept], coef])


def _variants(X, y, by):
    """name -> fit(eps, rng) returning (intercept, coef...): each draws its noise through the release path."""
    from knorm.geometry import LpBall
    from knorm.mechanisms import KNormMechanism
    from knorm.models import LinearRegression, auto_norm, functional_mechanism, solve_coefficients
    from knorm.models.functional import noise_floor
    from knorm.sensitivity import RegressionLayout

    n, p = X.shape
    one = np.ones(p)
    bx = (-one, one)
    lo_y, hi_y = by
    xs, ys = X, (2 * y - (hi_y + lo_y)) / (hi_y - lo_y)  # X is already in [-1, 1]
    T_paper = RegressionLayout(p).from_data(xs, ys)
    T_gram = RegressionLayout(p, response_square=True).from_data(xs, ys)
    joint = auto_norm(p, "replace", "gram")
    Z = np.column_stack([np.ones(n), xs])
    lam_min = float(np.linalg.eigvalsh(Z.T @ Z)[0])  # released below with Laplace noise, never used raw

    def before(eps, rng):
        fm = functional_mechanism(T_paper, n, p=p, norm=auto_norm(p), epsilon=eps, rng=rng)
        return _flat(*fm.coefficients(bx, by))

    def after(eps, rng):
        r = LinearRegression(epsilon=eps, bounds_X=(-1, 1), bounds_y=by, random_state=rng).fit(X, y)
        return _flat(r.coef_, r.intercept_)

    def estimator(**kw):
        def fit(eps, rng):
            r = LinearRegression(epsilon=eps, bounds_X=(-1, 1), bounds_y=by, random_state=rng, **kw).fit(X, y)
            return _flat(r.coef_, r.intercept_)

        return fit

    def adassp(eps, rng):
        # AdaSSP-style (Wang 2018): lambda_min of the scaled Gram block released with a share of eps
        # (replace-one sensitivity ||z||_2^2 <= p + 1, Weyl), then a ridge of the size of the noise
        # where the data are weaker: lambda = max(0, tau - lower bound of lambda_min).
        eps0 = ADASSP_SHARE * eps
        lam = KNormMechanism(LpBall(1, 1), p + 1.0, eps0).release([lam_min], rng=rng).value[0]
        lam_low = max(lam - (p + 1.0) * math.log(1 / ADASSP_RHO) / eps0, 0.0)
        eps1 = eps - eps0
        fm = functional_mechanism(
            T_gram, n, p=p, norm=joint, epsilon=eps1, rng=rng, postprocess="pinv", statistic="gram"
        )
        tau = noise_floor(joint, p, eps1, statistic="gram")
        ridge = max(tau - lam_low, 0.0)
        return _flat(*solve_coefficients(fm.gram + ridge * np.eye(p + 1), fm.cross, bx, by))

    return {
        "before (paper's T, volume-order norm, floor q0.9)": before,
        "after (default: Gram with y^2, split, floor q0.5)": after,
        f"joint {joint} with y^2, floor q0.5 (no split)": estimator(norm=joint),
        "split, xy_share = 0.5": estimator(xy_share=0.5),
        "split, paper's T (no y^2)": estimator(statistic="paper"),
        f"AdaSSP-style ridge ({ADASSP_SHARE:.0%} of eps on lambda_min), joint {joint}": adassp,
    }


def _oracle(X, y, by, ref, grid, reps, config, key):
    """Not a mechanism: X'X exact, all of eps on X'y (l_inf), best ridge in hindsight (uses the OLS fit)."""
    from knorm.geometry import LpBall
    from knorm.mechanisms import KNormMechanism
    from knorm.models import solve_coefficients

    n, p = X.shape
    one = np.ones(p)
    lo_y, hi_y = by
    ys = (2 * y - (hi_y + lo_y)) / (hi_y - lo_y)
    Z = np.column_stack([np.ones(n), X])
    A, b = Z.T @ Z, Z.T @ ys
    ridges = np.concatenate([[0.0], np.logspace(-1, 4, 26)])
    out = []
    for eps in grid:
        rng = config.rng("housing", "oracle", key, eps)
        mech = KNormMechanism(LpBall(p + 1, math.inf), 2.0, eps)
        B = np.array([mech.release(b, rng=rng).value for _ in range(reps)])
        best = math.inf
        for lam in ridges:
            coef, icpt = solve_coefficients(
                np.broadcast_to(A + lam * np.eye(p + 1), (reps, p + 1, p + 1)), B, (-one, one), by
            )
            err = np.linalg.norm(np.column_stack([icpt, coef]) - ref, axis=1)
            best = min(best, float(np.median(err)))
        out.append(best)
    return out


def _diffprivlib(config, cases, reps):
    from benchmarks._diffprivlib import start_worker, versions_line

    worker, note = start_worker(config)
    if worker is None:
        return None, f"diffprivlib was not run: {note}."
    try:
        out = []
        for ci, case in enumerate(cases):
            p = case["X"].shape[1]
            params = dict(bounds_X=[[-1.0] * p, [1.0] * p], bounds_y=list(case["by"]), fit_intercept=True)
            worker.load("data", case["X"], case["y"])
            try:
                coefs, _ = worker.coefs("linear", "data", params, EPSILONS, reps, config.seed + 17 * ci)
            finally:
                worker.free("data")
            out.append(coefs)
        return out, f"diffprivlib: {versions_line(worker)}, in its own virtual environment ({note})."
    finally:
        worker.close()


def _weak_text(weak, oracle_eps1):
    """Why 0.5 at eps = 1 is out of reach on housing, with the numbers of this data set."""
    if weak is None:
        return ""
    evals, proj, norm, d = weak
    return (
        f"Why 0.5 at eps = 1 is out of reach on housing: the four smallest eigenvalues of the scaled design Gram "
        f"matrix (1, x)'(1, x) are {', '.join(f'{v:.3g}' for v in evals)}, small against the noise that any release "
        f"of (X'X, X'y) adds at eps = 1, and OLS puts {proj:.2f} of its norm {norm:.2f} in those directions. "
        "The oracle row is a bound no mechanism of this family can beat: X'X known exactly for free, all of eps "
        f"spent on the {d} coordinates of X'y, and the ridge tuned with the answer; it reaches {oracle_eps1:.3f} "
        f"at eps = 1, while any real release must also pay for X'X ({d * (d + 1) // 2} more coordinates) and "
        "cannot tune on the answer."
    )


def run(config):
    try:
        import sklearn  # noqa: F401
    except ImportError as err:  # pragma: no cover
        raise SectionSkipped(f"scikit-learn is not installed ({err})") from err
    # 100 releases per cell (200 before the lattice release): each (variant, eps) also builds its lattice law once.
    reps = 10 if config.quick else 100
    cases = _cases(config)
    dpl, dpl_note = _diffprivlib(config, cases, reps)
    blocks, checks, oracle_housing, weak = [], [], math.nan, None
    for ci, case in enumerate(cases):
        X, y, by = case["X"], case["y"], case["by"]
        Z = np.column_stack([np.ones(len(y)), X])
        ref = np.linalg.lstsq(Z, y, rcond=None)[0]
        scale = np.linalg.norm(ref)
        rows, med = [], {}
        for name, fit in _variants(X, y, by).items():
            cells = []
            for eps in EPSILONS:
                rng = config.rng("housing", ci, name, eps)
                err = [np.linalg.norm(fit(eps, rng) - ref) for _ in range(reps)]
                cells.append(float(np.median(err)) / scale)
            med[name] = cells
            rows.append([name, *(f"{c:.3f}" for c in cells)])
            config.log(f"  housing: {case['name']}: {name} done")
        if dpl is not None:
            d = np.median(np.linalg.norm(dpl[ci] - ref, axis=-1), axis=1) / scale
            rows.append(["diffprivlib LinearRegression (same eps)", *(f"{c:.3f}" for c in d)])
        oracle = np.array(_oracle(X, y, by, ref, EPSILONS, reps, config, ci)) / scale
        rows.append(
            ["oracle, not private: X'X exact, all eps on X'y, best ridge in hindsight", *(f"{c:.3f}" for c in oracle)]
        )
        table = md_table(
            ["median error / norm of OLS fit", *(f"eps = {e:g}" for e in EPSILONS)], rows, "l" + "r" * len(EPSILONS)
        )
        blocks.append(f"**{case['name']}**, ||beta_OLS|| = {scale:.3g}, {reps} releases per cell\n\n{table}\n")
        names = list(med)
        i1, i4 = EPSILONS.index(1.0), EPSILONS.index(4.0)
        if case["name"].startswith("housing"):
            oracle_housing = oracle[i1]
            evals, evecs = np.linalg.eigh(Z.T @ Z)  # the scaled design Gram matrix: public-free facts of the data
            weak = (evals[:4], float(np.linalg.norm(evecs[:, :4].T @ ref)), float(scale), Z.shape[1])
            checks.append(
                [
                    "housing: after <= 0.5 at eps = 1",
                    f"{med[names[1]][i1]:.3f}",
                    "met" if med[names[1]][i1] <= 0.5 else "**missed**",
                    f"the non-private oracle above reaches {oracle[i1]:.3f}",
                ]
            )
            checks.append(
                [
                    "housing: after <= before at eps = 4",
                    f"{med[names[1]][i4]:.3f} vs {med[names[0]][i4]:.3f}",
                    "met" if med[names[1]][i4] <= med[names[0]][i4] else "**missed**",
                    f"medians of {reps} independent noise draws: a few % Monte Carlo error",
                ]
            )
    summary = md_table(["target (issue 14)", "value", "status", "note"], checks, "lrll")
    return f"""Median over {reps} releases of ||(intercept, coef) - OLS||_2, divided by ||OLS||_2 (below 1: better
than reporting zero). Housing: California housing prepared as in the paper's Section 5.3
(`prepare_regression_data(housing_path(), HOUSING_TARGET, log_columns=HOUSING_LOG)`, every column in
[-1, 1], bounds (-1, 1)). Simulation: the paper's Section 5.2 design, response bound ±{BOUND_Y_SIM:g}.
{dpl_note}

Candidates, each measured on both data sets and kept only if it wins:
* **the response square** (needed for the intervals): one more coordinate costs every joint norm noise
  (d + 1 instead of d in the Gamma radius); compare *before* with *joint with y^2*.
* **the split norm** (kept: the default): design and response blocks released with a public split of eps as
  one K-norm release (`regression_split_ball`); it recovers the cost of y^2 and more where the response
  block dominates the error (the simulation), and a larger share (`xy_share=0.5`) gains more there.
* **the floor at the median** (kept for the estimator): the 0.9-quantile over-shrinks weakly identified
  directions at large eps on housing; the paper's experiments keep 0.9.
* **AdaSSP-style private ridge** (Wang 2018), {ADASSP_SHARE:.0%} of eps on lambda_min: compare its row with
  *joint with y^2* (the same release without the ridge). On housing the smallest eigenvalue of the design
  is small against the noise, so the ridge is large and shrinks the identified directions too; on the
  simulation lambda_min is far above the noise and the ridge is zero, so it only loses the {ADASSP_SHARE:.0%}.
* **per-feature scaling from the declared bounds**: already what the functional mechanism does (each
  column mapped affinely from its declared bounds onto [-1, 1]); both data sets declare (-1, 1) for every
  feature after preparation, so there is nothing further to scale without spending budget.

{_weak_text(weak, oracle_housing)}

All knorm releases here (estimator and `functional_mechanism` alike) use the default `sampler='auto'`:
the exact lattice release wherever the ball allows it (every ball here is a polytope or a block sum of
polytopes, so the lattice sampler ran), with its rounding costing at most 1 % of the budget.

{chr(10).join(blocks)}

{summary}
"""
