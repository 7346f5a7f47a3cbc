"""Our own claim beside the paper's Section 5.2: do the private confidence intervals cover?

The paper's linear simulation (Algorithm "Simulate Confidence Coverage"): p = 5,
beta = (0, -1.5, -0.75, 0, 0.75, 1.5), X0 ~ U[-1, 1], Y ~ N(X beta, 1), with the public
response bound of :mod:`knorm.experiments.linear_sim` (|Y| <= 8.5). The paper asks how
often the DP *estimate* falls inside the non-private OLS interval. We ask what a
statistician publishing the DP fit needs: how often the 95% interval of
``LinearRegression.conf_int`` (default settings: the whole Gram matrix of (1, x, y)
released once with the split norm that 'auto' picks, the median eigenvalue floor, and
the parametric bootstrap of the release) covers the true coefficient, at n = 10^4 and
10^5 and eps in {1/4, 1, 4}, and how wide it is beside the non-private OLS t-interval
on the same data.
"""

from __future__ import annotations

import numpy as np

from knorm.experiments._runner import Claim, Result, pmap, save_figure, skipped_claims, subplots, task_rng
from knorm.experiments.linear_sim import BETA, BOUND_Y, P

__all__ = ["run", "EPSILONS", "NS", "LEVEL", "BAND"]

NS = [10_000, 100_000]
EPSILONS = [0.25, 1.0, 4.0]
LEVEL = 0.95
BAND = (0.93, 0.97)  # the claim: actual coverage of every coefficient within this band
NAMES = ["intercept"] + [f"x{j + 1}" for j in range(P)]
FULL_REPS, QUICK_REPS = 2000, 20


def _task(args):
    from scipy import stats

    from knorm.models import LinearRegression

    seed, n, rep = args
    rng = task_rng(seed, "linear_intervals", n, rep)
    X = rng.uniform(-1, 1, size=(n, P))
    y = BETA[0] + X @ BETA[1:] + rng.standard_normal(n)
    D = np.column_stack([np.ones(n), X])
    G = D.T @ D
    ols = np.linalg.solve(G, D.T @ y)
    resid = y - D @ ols
    se = np.sqrt(resid @ resid / (n - P - 1) * np.diag(np.linalg.inv(G)))
    half = stats.t.ppf(0.5 + LEVEL / 2, n - P - 1) * se
    rows = [_row(n, rep, np.nan, "OLS", ols - half, ols + half)]
    for eps in EPSILONS:
        reg = LinearRegression(epsilon=eps, bounds_X=(-1, 1), bounds_y=(-BOUND_Y, BOUND_Y), random_state=rng)
        ci = reg.fit(X, y).conf_int(alpha=1 - LEVEL)
        rows.append(_row(n, rep, eps, f"DP ({reg.norm_})", ci[:, 0], ci[:, 1]))
    return rows


def _row(n, rep, eps, method, lo, hi):
    row = dict(n=n, rep=rep, eps=eps, method=method)
    for name, b, a, c in zip(NAMES, BETA, lo, hi):
        row[f"covers {name}"] = bool(a <= b <= c)
        row[f"width {name}"] = float(c - a)
    return row


def run(config):
    """Run the ``linear_intervals`` experiment: coverage of the private 95% intervals (ours).

    Parameters
    ----------
    config : Config
        The run's settings (``quick``: n = 10^4 only and 20 replicates instead of
        n = 10^4 and 10^5 with 2,000).

    Returns
    -------
    Result
        Raw rows (one per replicate, n and eps: coverage and width of every coefficient),
        coverage and width tables, the figure, and our claims.
    """
    import pandas as pd

    ns = NS[:1] if config.quick else NS
    reps = QUICK_REPS if config.quick else FULL_REPS
    tasks = [(config.seed, n, r) for n in ns for r in range(reps)]
    raw = pd.DataFrame([row for rows in pmap(_task, tasks, config, "linear_intervals") for row in rows])
    cov_cols = [f"covers {c}" for c in NAMES]
    wid_cols = [f"width {c}" for c in NAMES]
    dp = raw[raw.method != "OLS"]
    coverage = dp.groupby(["n", "eps"])[cov_cols].mean()
    coverage.columns = NAMES
    ols_cov = raw[raw.method == "OLS"].groupby("n")[cov_cols].mean()
    ols_cov.columns = NAMES
    ols_width = raw[raw.method == "OLS"].groupby("n")[wid_cols].mean()
    ols_width.columns = NAMES
    width = dp.groupby(["n", "eps"])[wid_cols].mean()
    width.columns = NAMES
    ratio = width.div(ols_width, level="n")
    fig = _figure(coverage, ratio, reps, config.out / "linear_intervals.png")

    se = (LEVEL * (1 - LEVEL) / reps) ** 0.5
    claims = []
    for n in ns:
        c = coverage.loc[n]
        lo_v, hi_v = float(c.to_numpy().min()), float(c.to_numpy().max())
        where = c.stack().idxmin()
        inside = BAND[0] <= lo_v and hi_v <= BAND[1]
        claims.append(
            Claim(
                "linear_intervals",
                f"n={n}: (ours) 95% intervals of LinearRegression.conf_int cover every coefficient "
                f"within [{BAND[0]}, {BAND[1]}] at eps = 1/4, 1, 4",
                "not in paper",
                f"coverage {lo_v:.3f} to {hi_v:.3f} (lowest: {where[1]} at eps = {where[0]:g})",
                None if config.quick else inside,
                (
                    f"quick mode: {reps} replicates (binomial s.e. {se:.3f}) are too few to judge"
                    if config.quick
                    else f"{reps} replicates per setting: binomial s.e. {se:.4f}; the bootstrap's fixed "
                    "Monte Carlo seed adds a common error of a few thousandths"
                ),
                source="ours",
            )
        )
        r4 = ratio.loc[(n, max(EPSILONS))]
        r_small = ratio.loc[(n, min(EPSILONS))]
        claims.append(
            Claim(
                "linear_intervals",
                f"n={n}: (ours) private interval width over the non-private OLS width (slopes)",
                "not in paper",
                f"{r_small[NAMES[1:]].mean():.1f}x at eps = {min(EPSILONS):g}, "
                f"{r4[NAMES[1:]].mean():.2f}x at eps = {max(EPSILONS):g}",
                None,
                "context: the price of privacy in interval length; OLS coverage "
                + ", ".join(f"{v:.3f}" for v in ols_cov.loc[n]),
                source="ours",
            )
        )
    if len(ns) == 1:
        claims += skipped_claims(claims, NS[0], NS[1:], f"quick mode runs n = {NS[0]} only")
    summary = (
        f"Coverage of the 95% intervals of LinearRegression.conf_int (parametric bootstrap of the release), "
        f"paper Section 5.2 simulation (p = {P}, bounds_y = ±{BOUND_Y}), {reps} replicates per setting; "
        f"binomial s.e. {se:.4f}\n"
    )
    for n in ns:
        summary += f"\nn = {n}: coverage by coefficient (rows: eps)\n"
        summary += coverage.loc[n].to_string(float_format=lambda x: f"{x:.3f}") + "\n"
        summary += "non-private OLS t-interval: " + " ".join(f"{v:.3f}" for v in ols_cov.loc[n]) + "\n"
        summary += "mean width, private / OLS (rows: eps)\n"
        summary += ratio.loc[n].to_string(float_format=lambda x: f"{x:.2f}") + "\n"
    tables = {
        "linear_intervals_raw": raw,
        "linear_intervals_coverage": coverage.reset_index(),
        "linear_intervals_width": width.reset_index(),
        "linear_intervals_width_ratio": ratio.reset_index(),
    }
    return Result("linear_intervals", tables, [fig], summary, claims, replicates=(reps, FULL_REPS))


def _figure(coverage, ratio, reps, path):
    ns = sorted(coverage.index.get_level_values("n").unique())
    fig, axes = subplots(len(ns), 2, figsize=(10, 3.8 * len(ns)), squeeze=False)
    se = (LEVEL * (1 - LEVEL) / reps) ** 0.5
    for (ax_c, ax_w), n in zip(axes, ns):
        c, r = coverage.loc[n], ratio.loc[n]
        for name in NAMES:
            ax_c.plot(c.index, c[name], "o-", ms=4, label=name)
            ax_w.plot(r.index, r[name], "o-", ms=4, label=name)
        ax_c.axhspan(*BAND, color="grey", alpha=0.2, label=f"claim [{BAND[0]}, {BAND[1]}]")
        ax_c.axhline(LEVEL, color="k", lw=1)
        ax_c.set_ylim(min(0.85, float(c.to_numpy().min()) - 2 * se), 1.0)
        ax_c.set_title(f"coverage of 95% intervals, n = {n:,} ({reps} replicates)")
        ax_w.axhline(1.0, color="k", lw=1)
        ax_w.set_yscale("log")
        ax_w.set_title(f"width / non-private OLS width, n = {n:,}")
        for ax in (ax_c, ax_w):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("$\\epsilon$")
        ax_c.legend(fontsize=7, ncol=2, loc="lower right")
    return save_figure(fig, path)
