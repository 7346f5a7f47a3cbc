"""Coverage of the private logistic regression's confidence intervals (ours, beyond the paper).

The paper's logistic simulation (Algorithm "Logistic Regression on Simulated Data",
Section 4.2): beta = (0, -1, -1/2, -1/4, 0, 3/4, 3/2), m = 7, X_ij ~ U[-1, 1] (no
intercept), Y_i ~ Bernoulli(expit(X_i'beta)), n = 10^4. At eps in {1/4, 1, 4} the
default ``LogisticRegression`` (l_inf, q = 'auto') with ``inference_share = 'auto'`` is fitted
and its nominal 95% intervals (:meth:`~knorm.models.LogisticRegression.conf_int`) are
checked against the true beta, coefficient by coefficient, beside the non-private
Wald intervals of the MLE (beta_hat +- 1.96 sqrt(diag(I(beta_hat)^{-1}))). A fit whose
intervals are refused (``IntervalUnavailableError``) counts as covering nothing.
"""

from __future__ import annotations

import math

import numpy as np

from knorm.experiments._runner import (
    Claim,
    Result,
    caption_figure,
    legend,
    plain_log_yaxis,
    pmap,
    save_figure,
    subplots,
    task_rng,
)

__all__ = ["run", "BETA", "EPSILONS", "N", "LEVEL", "BAND", "caption", "figure"]

# Replicates per setting: the full run, and quick mode (knorm reproduce --quick).
FULL_REPS, QUICK_REPS = 1000, 8

BETA = np.array([0.0, -1.0, -0.5, -0.25, 0.0, 0.75, 1.5])
EPSILONS = [0.25, 1.0, 4.0]
N = 10_000
LEVEL = 0.95
BAND = (0.93, 0.97)
_Z = 1.959963984540054  # the 0.975 quantile of N(0, 1)


def _task(args):
    from scipy.special import expit

    from knorm.exceptions import IntervalUnavailableError
    from knorm.models import LogisticRegression, logistic_newton

    seed, rep = args
    rng = task_rng(seed, "logistic_intervals", rep)
    X = rng.uniform(-1, 1, size=(N, BETA.size))
    y = (rng.random(N) < expit(X @ BETA)).astype(int)
    mle, _, _ = logistic_newton(X, y.astype(float), max_iter=100, tol=1e-10)
    w = expit(X @ mle)
    se = np.sqrt(np.diag(np.linalg.inv((X * (w * (1 - w))[:, None]).T @ X)))
    rows = [
        dict(
            rep=rep,
            eps=math.nan,
            method="MLE (Wald)",
            coef=j,
            covered=bool(abs(mle[j] - BETA[j]) <= _Z * se[j]),
            width=2 * _Z * se[j],
            share=0.0,
            floored=0,
        )
        for j in range(BETA.size)
    ]
    for eps in EPSILONS:
        clf = LogisticRegression(
            epsilon=eps, bounds_X=(-1, 1), fit_intercept=False, classes=[0, 1], inference_share="auto", random_state=rng
        ).fit(X, y)
        try:
            ci = clf.conf_int(1 - LEVEL)
        except IntervalUnavailableError:  # counted as covering nothing
            ci = np.full((BETA.size, 2), math.nan)
        for j in range(BETA.size):
            rows.append(
                dict(
                    rep=rep,
                    eps=eps,
                    method="DP (ours)",
                    coef=j,
                    covered=bool(ci[j, 0] <= BETA[j] <= ci[j, 1]),
                    width=float(ci[j, 1] - ci[j, 0]),
                    share=clf.inference_share_,
                    floored=clf.n_floored_,
                    refused=bool(np.isnan(ci[0, 0])),
                )
            )
    return rows


def _clopper_pearson(k, n, alpha=0.05):
    from scipy import stats

    lo = stats.beta.ppf(alpha / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha / 2, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def run(config):
    """Run the ``logistic_intervals`` experiment: coverage of nominal 95% intervals (ours).

    Parameters
    ----------
    config : Config
        The run's settings (``quick``: 8 replicates instead of 1000, too few to judge
        the claims, which are then marked not run).

    Returns
    -------
    Result
        Raw rows (replicate, eps, coefficient: covered, width) and the coverage table
        per (eps, coefficient) with Clopper-Pearson 95% intervals and the mean widths
        beside the MLE's, the coverage figure, and our claims.
    """
    import pandas as pd

    reps = QUICK_REPS if config.quick else FULL_REPS
    tasks = [(config.seed, r) for r in range(reps)]
    raw = pd.DataFrame([row for rows in pmap(_task, tasks, config, "logistic_intervals") for row in rows])
    dp = raw[raw.method == "DP (ours)"]
    mle = raw[raw.method == "MLE (Wald)"]
    mle_width = mle.groupby("coef")["width"].mean()
    mle_cov = mle.groupby("coef")["covered"].mean()
    table = dp.groupby(["eps", "coef"]).agg(covered=("covered", "sum"), width=("width", "mean")).reset_index()
    table["coverage"] = table.covered / reps
    bounds = [_clopper_pearson(int(k), reps) for k in table.covered]
    table["cp_low"], table["cp_high"] = [b[0] for b in bounds], [b[1] for b in bounds]
    table["beta"] = BETA[table.coef.to_numpy()]
    table["mle_width"] = mle_width.loc[table.coef].to_numpy()
    table["width_ratio"] = table.width / table.mle_width
    shares = dp.groupby("eps")["share"].first()
    floored = dp.groupby(["eps", "rep"])["floored"].first().gt(0).groupby("eps").mean()
    refused = dp.groupby(["eps", "rep"])["refused"].first().groupby("eps").mean()
    table = table[["eps", "coef", "beta", "coverage", "cp_low", "cp_high", "width", "mle_width", "width_ratio"]]
    fig = save_figure(figure(table, mle_cov, reps), config.out / "logistic_intervals.png")

    claims = []
    judged = not config.quick
    reason = f"quick mode runs {reps} replicates: too few to judge coverage within +-0.02"
    for eps in EPSILONS:
        t = table[table.eps == eps]
        inside = bool(t.coverage.between(*BAND).all())
        ours = (
            f"{t.coverage.min():.3f}-{t.coverage.max():.3f} over the 7 coefficients "
            f"(mean {t.coverage.mean():.3f}; width {t.width_ratio.mean():.2f}x the MLE's)"
        )
        claims.append(
            Claim(
                "logistic_intervals",
                f"eps={eps:g}: nominal 95% intervals cover every coefficient {BAND[0]:.2f}-{BAND[1]:.2f} of the time",
                "not in paper",
                ours if judged else "not run",
                inside if judged else None,
                f"{reps} replicates of n = {N:,}; inference_share = {shares[eps]:g} (auto); binomial sd "
                f"{math.sqrt(LEVEL * (1 - LEVEL) / reps):.3f} per coefficient"
                if judged
                else reason,
                source="ours",
                run=judged,
            )
        )
        conservative = bool((t.cp_high >= BAND[0]).all())
        claims.append(
            Claim(
                "logistic_intervals",
                f"eps={eps:g}: no coefficient's coverage is significantly below {BAND[0]:.2f} (conservative at worst)",
                "not in paper",
                f"smallest Clopper-Pearson upper end {t.cp_high.min():.3f}" if judged else "not run",
                conservative if judged else None,
                "judged by the 95% Clopper-Pearson interval of each coverage" if judged else reason,
                source="ours",
                run=judged,
            )
        )
    summary = (
        f"Logistic regression intervals: coverage of nominal {LEVEL:.0%} intervals, paper's simulation "
        f"(m = 7, n = {N:,}, no intercept), {reps} replicates\n"
        f"MLE (Wald) coverage per coefficient: {', '.join(f'{c:.3f}' for c in mle_cov)}\n"
        + "".join(
            f"eps = {e:g}: inference_share {shares[e]:g}, replicates with a floored information {floored[e]:.3f}, "
            f"intervals refused {refused[e]:.3f}\n"
            for e in EPSILONS
        )
        + "\n"
        + table.to_string(index=False, float_format=lambda x: f"{x:.3f}")
        + "\n"
    )
    return Result(
        "logistic_intervals",
        {"logistic_intervals_raw": raw, "logistic_intervals_coverage": table},
        [fig],
        summary,
        claims,
        {"logistic_intervals.png": caption(reps)},
        replicates=(reps, FULL_REPS),
    )


def caption(reps):
    """Return the caption of the figure for ``reps`` replicates per setting.

    Parameters
    ----------
    reps : int
        Replicates per setting.

    Returns
    -------
    str
        The caption, one paragraph.
    """
    return (
        f"Ours, beyond the paper (its Section 4.2 simulation: 7 coefficients, X uniform on [-1, 1]^7, n = {N:,}): "
        "left, how often the nominal 95% interval of the default private LogisticRegression.conf_int covers "
        f"the true coefficient β_j, at three values of ε; each point is the share of {reps:,} replicates, its "
        "bar the 95% Clopper-Pearson interval of that share (Monte Carlo error); the black dashes are the "
        "non-private Wald intervals of the MLE on the same data, the grey band the claim [0.93, 0.97]. "
        "Right: the mean width of the private interval over that of the MLE's (1 = no price for privacy; "
        "log scale)."
    )


def figure(table, mle_cov, reps):
    """Draw the coverage and the relative width of the private logistic intervals by coefficient.

    Parameters
    ----------
    table : pandas.DataFrame
        The experiment's ``logistic_intervals_coverage`` table (eps, coef, beta, coverage,
        cp_low, cp_high, width_ratio, ...).
    mle_cov : pandas.Series
        The coverage of the MLE's Wald intervals, by coefficient.
    reps : int
        Replicates per setting (for the title and the caption).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with its caption.
    """
    fig, axes = subplots(1, 2, figsize=(13, 4.5))
    ax, bx = axes
    epsilons = sorted(table.eps.unique())
    # Side by side at each coefficient: the epsilons, then the MLE (no marker hides another).
    offsets = {e: (i - len(epsilons) / 2) * 0.2 for i, e in enumerate(epsilons)}  # -0.3, -0.1, 0.1
    for eps, marker in zip(epsilons, "os^v"):
        t = table[table.eps == eps]
        x = t.coef.to_numpy() + offsets[eps]
        err = np.vstack([t.coverage - t.cp_low, t.cp_high - t.coverage])
        ax.errorbar(x, t.coverage, yerr=err, fmt=marker, ms=5, capsize=3, label=f"DP, $\\epsilon$ = {eps:g}")
        bx.plot(t.coef, t.width_ratio, marker + "-", label=f"$\\epsilon$ = {eps:g}")
    mle_x = np.arange(len(mle_cov)) + len(epsilons) / 2 * 0.2  # +0.3
    ax.plot(mle_x, mle_cov.to_numpy(), "k_", ms=12, mew=2, label="MLE (Wald), not private")
    ax.axhspan(*BAND, color="grey", alpha=0.2, label=f"claim [{BAND[0]}, {BAND[1]}]")
    ax.axhline(LEVEL, color="k", lw=1, label=f"nominal {LEVEL}")
    low = float(min(table.cp_low.min(), mle_cov.min(), BAND[0]))
    high = float(max(table.cp_high.max(), mle_cov.max(), BAND[1]))
    pad = 0.1 * (high - low)
    ax.set_ylim(low - pad, min(high + pad, 1.0 + pad))
    ticks = np.arange(BETA.size)
    labels = [f"{j}\n({b:g})" for j, b in zip(ticks, BETA)]
    for a in axes:
        a.set_xticks(ticks, labels)
        a.set_xlabel("coefficient j (true $\\beta_j$)")
    ax.set_ylabel("coverage of the true $\\beta_j$")
    ax.set_title(f"coverage of nominal 95% intervals, n = {N:,} ({reps:,} replicates)")
    legend(ax, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    bx.axhline(1.0, color="k", lw=1)
    plain_log_yaxis(bx)
    bx.set_ylabel("mean width / MLE's (log scale)")
    bx.set_title("interval width relative to the non-private MLE")
    bx.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return caption_figure(fig, caption(reps))
