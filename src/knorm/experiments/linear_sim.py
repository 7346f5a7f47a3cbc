"""Paper Algorithm "Simulate Confidence Coverage" (Section 5.2, Figure "SimulationFigure").

p = 5, beta = (0, -1.5, -0.75, 0, 0.75, 1.5), X0 ~ U[-1, 1], Y ~ N(X beta, 1),
n = 10^4 and 10^6, 200 replicates. The DP estimate is the functional mechanism
of Section 5.1 with l1, l_inf, the paper's K_T and our tighter cut ball, each
post-processed by the paper's pseudo-inverse; our default eigenvalue floor is
shown for the cut ball too. Coverage: the fraction of the last p entries of
beta_DP inside the 95% OLS confidence intervals.

The response is unbounded in the paper. We bound it publicly from the design:
|X beta| <= sum |beta_j| = 4.5, plus 4 noise standard deviations, so
bounds_y = (-8.5, 8.5); Y is clipped there (about 6e-5 of the records, counted)
and rescaled to [-1, 1] by the functional mechanism, as Section 5.1 requires.
"""

from __future__ import annotations

import math

import numpy as np

from knorm.experiments._runner import (
    Claim,
    Result,
    caption_figure,
    dodge,
    legend,
    log_epsilon_axis,
    mean_se,
    mechanism_label,
    pmap,
    save_figure,
    skipped_claims,
    subplots,
    task_rng,
)

__all__ = ["run", "BETA", "EPSILONS", "MECHANISMS", "BOUND_Y", "caption", "coverage_summary", "figure"]

# Replicates per setting: the full run, and quick mode (knorm reproduce --quick).
FULL_REPS, QUICK_REPS = 200, 10

P = 5
BETA = np.concatenate([[0.0], np.linspace(-1.5, 1.5, P)])
BOUND_Y = float(np.abs(BETA).sum() + 4.0)
EPSILONS = [2.0**k for k in range(-4, 3)]  # 1/16 ... 4
NS = [10_000, 1_000_000]
# name -> (mechanism of LinearRegression, postprocess)
MECHANISMS = {
    "l1": ("l1", "pinv"),
    "linf": ("linf", "pinv"),
    "K_T": ("kt", "pinv"),
    "cut ball": ("cut", "pinv"),
    "cut ball + floor (ours)": ("cut", "eigen"),
}


def _task(args):
    from knorm.models import functional_mechanism, sufficient_statistics

    seed, n, rep = args
    rng = task_rng(seed, "linear", n, rep)
    X = rng.uniform(-1, 1, size=(n, P))
    y = BETA[0] + X @ BETA[1:] + rng.standard_normal(n)
    D = np.column_stack([np.ones(n), X])
    G = D.T @ D
    ols = np.linalg.solve(G, D.T @ y)
    resid = y - D @ ols
    se = math.sqrt(resid @ resid / (n - P - 1)) * np.sqrt(np.diag(np.linalg.inv(G)))
    lo_ci, hi_ci = ols - 1.959964 * se, ols + 1.959964 * se
    one = np.ones(P)
    stats = sufficient_statistics(X, y, bounds_X=(-one, one), bounds_y=(-BOUND_Y, BOUND_Y))
    # The exact statistic: the lattice release rounds T itself, not a float sum (Casacuberta et al. 2022).
    T, n_rec, clipped = stats.exact, stats.n_samples, stats.n_clipped
    rows = [
        dict(
            n=n,
            rep=rep,
            eps=math.nan,
            mechanism="OLS",
            coverage=float(np.mean((BETA[1:] >= lo_ci[1:]) & (BETA[1:] <= hi_ci[1:]))),
            clipped=clipped,
        )
    ]
    for name, (mech, post) in MECHANISMS.items():
        for eps in EPSILONS:
            fm = functional_mechanism(T, n_rec, p=P, norm=mech, epsilon=eps, rng=rng, postprocess=post)
            coef, icpt = fm.coefficients((-one, one), (-BOUND_Y, BOUND_Y))
            inside = (coef >= lo_ci[1:]) & (coef <= hi_ci[1:])
            rows.append(
                dict(
                    n=n,
                    rep=rep,
                    eps=eps,
                    mechanism=name,
                    coverage=float(inside.mean()),
                    clipped=clipped,
                    error=float(np.linalg.norm(np.concatenate([[icpt], coef]) - ols)),
                )
            )
    return rows


def eps_to_reach(eps, curve, level):
    """Smallest budget (log-linear interpolation) at which an increasing curve reaches ``level``."""
    curve = np.maximum.accumulate(np.asarray(curve, float))
    if level > curve[-1] or level < curve[0]:
        return math.nan
    return float(np.exp(np.interp(level, curve, np.log(eps))))


def run(config):
    """Run the ``linear`` experiment: coverage of the DP regression estimates (paper Section 5.2).

    Parameters
    ----------
    config : Config
        The run's settings (``quick``: n = 10^4 only and 10 replicates instead of
        n = 10^4 and 10^6 with 200).

    Returns
    -------
    Result
        Raw rows and mean coverage per (n, mechanism, eps), the coverage figure,
        and the paper's claims beside ours.
    """
    import pandas as pd

    ns = NS[:1] if config.quick else NS
    reps = QUICK_REPS if config.quick else FULL_REPS
    tasks = [(config.seed, n, r) for n in ns for r in range(reps)]
    raw = pd.DataFrame([row for rows in pmap(_task, tasks, config, "linear") for row in rows])
    dp = raw[raw.mechanism != "OLS"]
    cov = dp.groupby(["n", "mechanism", "eps"])["coverage"].mean().unstack("mechanism")[list(MECHANISMS)]
    ols_cov = raw[raw.mechanism == "OLS"].groupby("n")["coverage"].mean()
    bars = coverage_summary(raw)
    fig = save_figure(figure(bars), config.out / "linear_coverage.png")
    claims = []
    for n in ns:
        c = cov.loc[n]
        eps = np.array(c.index)
        ratios = []
        for e in (1 / 4, 1 / 2, 1):
            level = float(np.interp(math.log(e), np.log(eps), c["l1"]))
            ratios.append(eps_to_reach(eps, c["linf"].to_numpy(), level) / e)
        ok = bool(np.nanmedian(ratios) <= 0.65)
        claims.append(
            Claim(
                "linear",
                f"n={n}: l_inf reaches l1's coverage with about half the epsilon",
                "about 1/2 (n=10^6: l1 ~0.7 at eps=1/2, l_inf at 1/4)",
                "eps ratio " + ", ".join(f"{r:.2f}" for r in ratios) + " at eps_l1 = 1/4, 1/2, 1",
                ok,
                "agreement means a median ratio <= 0.65",
            )
        )
        gap = float((c["K_T"] - c["linf"]).abs().max())
        claims.append(
            Claim(
                "linear",
                f"n={n}: the 'optimal' K_T performs very similarly to l_inf",
                "yes",
                f"max coverage gap {gap:.3f}",
                gap <= 0.1,
                "agreement means a gap <= 0.1",
            )
        )
        better = bool((c["cut ball"] >= c["K_T"] - 0.02).all())
        claims.append(
            Claim(
                "linear",
                f"n={n}: (ours) the tighter cut ball is at least as good as K_T",
                "not in paper",
                "yes" if better else "no",
                better,
                "coverage within 0.02 or better at every eps",
                source="ours",
            )
        )
        mono = bool((np.diff(c.to_numpy(), axis=0) >= -0.05).all())
        claims.append(
            Claim(
                "linear",
                f"n={n}: coverage increases with epsilon for every mechanism",
                "yes",
                "yes" if mono else "no",
                mono,
                "allowing Monte Carlo dips of 0.05",
            )
        )
    if len(ns) > 1:
        same = bool(((cov.loc[ns[1]] - cov.loc[ns[0]]) >= -0.05).all().all())
        claims.append(Claim("linear", "larger n improves every method", "yes", "yes" if same else "no", same))
    else:
        reason = f"quick mode runs n = {NS[0]} only"
        claims += skipped_claims(claims, NS[0], NS[1:], reason)
        claims.append(Claim("linear", "larger n improves every method", "yes", "not run", None, reason, run=False))
    summary = f"Linear regression coverage (Algorithm 'Simulate Confidence Coverage'), p = {P}, {reps} replicates, bounds_y = ±{BOUND_Y}\n"
    for n in ns:
        summary += f"\nn = {n}: OLS coverage {ols_cov[n]:.3f}; records clipped per replicate {raw[raw.n == n].clipped.mean():.1f}\n"
        summary += cov.loc[n].to_string(float_format=lambda x: f"{x:.3f}") + "\n"
    return Result(
        "linear",
        {"linear_raw": raw, "linear_coverage": cov.reset_index(), "linear_coverage_se": bars},
        [fig],
        summary,
        claims,
        {"linear_coverage.png": caption(reps)},
        replicates=(reps, FULL_REPS),
    )


def coverage_summary(raw):
    """Return the mean coverage of every setting with its Monte Carlo standard error.

    Parameters
    ----------
    raw : pandas.DataFrame
        One row per replicate, n, mechanism and eps (columns n, rep, eps, mechanism,
        coverage), as the experiment's ``linear_raw`` table; the OLS rows have eps NaN.

    Returns
    -------
    pandas.DataFrame
        One row per (n, mechanism, eps): replicates, coverage (the mean over replicates of
        the share of the p slopes covered) and se (sd / sqrt(replicates): the p slopes of one
        replicate are not independent, so a binomial error over p x replicates would be too small).
    """
    import pandas as pd

    rows = []
    for (n, name, eps), g in raw.groupby(["n", "mechanism", "eps"], dropna=False, sort=True):
        mean, se = mean_se(g.coverage)
        rows.append(dict(n=n, mechanism=name, eps=eps, replicates=len(g), coverage=mean, se=se))
    return pd.DataFrame(rows)


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
        f"Paper Section 5.2 (its Algorithm 'Simulate Confidence Coverage'; p = {P} predictors uniform on "
        "[-1, 1], Y normal around Xβ): how often the private regression coefficients land inside the "
        "non-private OLS 95% confidence interval, against ε, for the functional mechanism with ℓ1, ℓ∞, "
        "the paper's K_T and our tighter cut ball (pseudo-inverse), and the cut ball with our "
        f"eigenvalue floor. Each point is the mean over {reps:,} replicates of the share of the {P} slopes "
        "inside their interval; bars: ±1 Monte Carlo standard error over the replicates. Points are "
        "shifted sideways a little so that none hides another. Black line: how often the OLS interval "
        "covers the true β (about 0.95). Higher is better."
    )


_STYLES = {"l1": "o-", "linf": "^-", "K_T": "s-", "cut ball": "d-", "cut ball + floor (ours)": "x--"}


def figure(coverage):
    """Draw the coverage of the private linear regressions against epsilon, one panel per n.

    Parameters
    ----------
    coverage : pandas.DataFrame
        The table of :func:`coverage_summary` (the experiment's ``linear_coverage_se``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with its caption.
    """
    ns = sorted(coverage.n.unique())
    fig, axes = subplots(len(ns), 1, figsize=(8.8, 4.0 * len(ns)), squeeze=False)
    names = [m for m in MECHANISMS if m in set(coverage.mechanism)]
    reps = int(coverage.replicates.max())
    for ax, n in zip(axes[:, 0], ns):
        c = coverage[coverage.n == n]
        for i, name in enumerate(names):
            t = c[c.mechanism == name].sort_values("eps")
            x = dodge(t.eps, i, len(names), 0.35)
            ax.errorbar(
                x, t.coverage, yerr=t.se, fmt=_STYLES.get(name, "o-"), ms=4, capsize=2, label=mechanism_label(name)
            )
        ols = c[c.mechanism == "OLS"].coverage
        if len(ols):
            ax.axhline(float(ols.iloc[0]), color="k", lw=1, label="OLS interval covers the true $\\beta$")
        log_epsilon_axis(ax)
        ax.set_ylim(-0.04, 1.06)  # room around 0 and 1: no point sits on the frame
        ax.set_ylabel("coverage: share of DP coefficients\ninside the OLS 95% interval")
        ax.set_title(f"linear regression, p = {P}, n = {n:,} ({reps:,} replicates)")
    legend(axes[0, 0], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return caption_figure(fig, caption(reps))
