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

from knorm.experiments._runner import (
    Claim,
    Result,
    caption_figure,
    dodge,
    legend,
    log_epsilon_axis,
    plain_log_yaxis,
    pmap,
    save_figure,
    skipped_claims,
    subplots,
    task_rng,
)
from knorm.experiments.linear_sim import BETA, BOUND_Y, P

__all__ = ["run", "EPSILONS", "NS", "LEVEL", "BAND", "caption", "figure"]

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
    fig = save_figure(figure(coverage, ratio, reps), config.out / "linear_intervals.png")

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
    captions = {"linear_intervals.png": caption(reps)}
    return Result("linear_intervals", tables, [fig], summary, claims, captions, replicates=(reps, FULL_REPS))


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
        "Ours, beyond the paper (its Section 5.2 simulation: p = 5 predictors uniform on [-1, 1], Y normal "
        "around Xβ, |Y| bounded by 8.5): left, how often the 95% interval of LinearRegression.conf_int "
        "(default settings) covers the true coefficient, for the intercept and each slope, against ε; "
        f"each point is the share of {reps:,} replicates, its bar ±1 binomial Monte Carlo standard error; "
        "the grey band is the claim [0.93, 0.97], the black line the nominal 0.95. Right: the mean width "
        "of the private interval over that of the non-private OLS t-interval on the same data (1 = no "
        "price for privacy; log scale); the five slopes' widths nearly coincide. Points are shifted "
        "sideways a little so that none hides another."
    )


_MARKERS = ["o", "s", "^", "v", "D", "P"]
_LINES = ["-", "--", "-.", ":", "-", "--"]


def figure(coverage, ratio, reps):
    """Draw the coverage and the relative width of the private intervals, one row of panels per n.

    Parameters
    ----------
    coverage : pandas.DataFrame
        Coverage per coefficient (columns), indexed by (n, eps) (the experiment's
        ``linear_intervals_coverage`` table, indexed).
    ratio : pandas.DataFrame
        Mean width over the OLS width, indexed and laid out as ``coverage``.
    reps : int
        Replicates per setting (for the binomial error bars and the titles).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with its caption.
    """
    ns = sorted(coverage.index.get_level_values("n").unique())
    fig, axes = subplots(len(ns), 2, figsize=(11.5, 3.9 * len(ns)), squeeze=False)
    k = len(NAMES)
    for (ax_c, ax_w), n in zip(axes, ns):
        c, r = coverage.loc[n], ratio.loc[n]
        for i, name in enumerate(NAMES):
            style = dict(marker=_MARKERS[i % 6], ls=_LINES[i % 6], ms=4, label=name)
            se = np.sqrt(c[name] * (1 - c[name]) / reps)
            ax_c.errorbar(dodge(c.index, i, k, 0.5), c[name], yerr=se, capsize=2, **style)
            ax_w.plot(dodge(r.index, i, k, 0.5), r[name], **style)
        ax_c.axhspan(*BAND, color="grey", alpha=0.2, label=f"claim [{BAND[0]}, {BAND[1]}]")
        ax_c.axhline(LEVEL, color="k", lw=1, label=f"nominal {LEVEL}")
        se = np.sqrt(c * (1 - c) / reps)
        low, high = float((c - se).to_numpy().min()), float((c + se).to_numpy().max())
        # Room beyond the bars and the band: a point at 1.00 does not sit on the frame.
        ax_c.set_ylim(min(0.9, low - 0.01), max(BAND[1], high) + 0.01)
        ax_c.set_ylabel("coverage of the true coefficient")
        ax_c.set_title(f"coverage of 95% intervals, n = {n:,} ({reps:,} replicates)")
        ax_w.axhline(1.0, color="k", lw=1)
        plain_log_yaxis(ax_w)
        ax_w.set_ylabel("mean width / OLS width (log scale)")
        ax_w.set_title(f"width / non-private OLS width, n = {n:,}")
        for ax in (ax_c, ax_w):
            log_epsilon_axis(ax)
    legend(axes[0, 1], fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    keep = [i for i, lab in enumerate(labels) if lab not in NAMES]  # the band and the nominal line
    axes[0, 0].legend([handles[i] for i in keep], [labels[i] for i in keep], fontsize=8, loc="lower left")
    return caption_figure(fig, caption(reps))
