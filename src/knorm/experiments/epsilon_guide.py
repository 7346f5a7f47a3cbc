"""Error against epsilon on real data: the figure and the numbers of the guide page on epsilon.

Two releases on the packaged California housing data (20,640 block groups; Pace & Barry 1997),
each repeated at every epsilon of a grid with a fixed seed:

* the mean of ``median_income`` (tens of thousands of dollars, declared bounds [0, 15]) by
  :func:`knorm.stats.mean`, on all the rows and on a fixed tenth of them; its error is
  |released mean - true mean|. Under replace-one neighbours the sum has sensitivity 15
  (one record moves anywhere in [0, 15]), so the mean gets noise of scale 15 / (n eps),
  Laplace-shaped on a fine lattice, whose median absolute value is ln 2 x 15 / (n eps);
* the linear regression of ``median_house_value`` (bounds [0, 500001]) on ``median_income``
  ([0, 15]) and ``housing_median_age`` ([0, 52]) by :class:`knorm.models.LinearRegression`
  (default settings); its error is the l2 distance of the two private slopes from the
  least-squares slopes, over the l2 norm of the latter.

Every bound is the column's public top-code (15, 52 and 500,001), not read from the data; the
49 incomes recorded as 15.0001 are clipped to 15 (0.24% of the rows, counted, below the 5% at
which the curator is warned).
The page docs/guide/epsilon.md quotes this run::

    python -m knorm.experiments.epsilon_guide --out docs/figures

which writes ``epsilon_error.png`` and ``epsilon_error.csv`` there (about two minutes on one core).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from knorm.experiments._runner import (
    caption_figure,
    dodge,
    legend,
    log_epsilon_axis,
    median_band,
    plain_log_yaxis,
    save_figure,
    subplots,
    task_rng,
)

__all__ = ["EPSILONS", "REPS", "SEED", "caption", "error_table", "figure", "main", "markdown_table"]

#: The epsilon grid, 1/16 to 16 by octaves.
EPSILONS = [2.0**k for k in range(-4, 5)]
#: Replicates per (release, epsilon) of the page's run.
REPS = 200
#: Root seed of the page's run.
SEED = 2024
INCOME_BOUNDS = (0.0, 15.0)
X_BOUNDS = ([0.0, 0.0], [15.0, 52.0])  # median_income, housing_median_age
Y_BOUNDS = (0.0, 500_001.0)  # median_house_value (top-coded at 500,001)
FEATURES = ["median_income", "housing_median_age"]
TARGET = "median_house_value"
SUBSAMPLE = 10  # the small sample: every 10th row (a public rule, not a data-dependent one)


def _data():
    import pandas as pd

    from knorm.experiments.data import housing_path

    return pd.read_csv(housing_path())


def error_table(reps=REPS, seed=SEED):
    """Return the median error of each release at each epsilon, with its Monte Carlo error bar.

    Parameters
    ----------
    reps : int, default REPS
        Replicates per (release, epsilon).
    seed : int, default SEED
        Root seed; each (release, epsilon) draws from its own stream of it.

    Returns
    -------
    pandas.DataFrame
        One row per (release, n, eps): replicates, median, low and high (the order statistics
        that bracket the median with 68% probability, about +-1 standard error) and, for the
        mean, the median absolute value of Laplace noise of scale 15 / (n eps) (``laplace``).
    """
    import pandas as pd
    from sklearn.linear_model import LinearRegression as OLS

    import knorm.stats as dp
    from knorm.models import LinearRegression

    data = _data()
    income = data["median_income"].to_numpy()
    samples = {"mean, all rows": income, "mean, a tenth of the rows": income[::SUBSAMPLE]}
    X, y = data[FEATURES].to_numpy(), data[TARGET].to_numpy()
    slopes = OLS().fit(X, y).coef_
    width = INCOME_BOUNDS[1] - INCOME_BOUNDS[0]
    rows = []
    for i, eps in enumerate(EPSILONS):
        for name, x in samples.items():
            rng = task_rng(seed, "epsilon_guide", name, i)
            truth = float(x.mean())
            errors = [abs(float(dp.mean(x, INCOME_BOUNDS, epsilon=eps, rng=rng).value[0]) - truth) for _ in range(reps)]
            laplace = math.log(2) * width / (x.size * eps)
            rows.append(_row(name, x.size, eps, errors, laplace))
        rng = task_rng(seed, "epsilon_guide", "regression", i)
        errors = []
        for _ in range(reps):
            fit = LinearRegression(epsilon=eps, bounds_X=X_BOUNDS, bounds_y=Y_BOUNDS, random_state=rng).fit(X, y)
            errors.append(float(np.linalg.norm(fit.coef_ - slopes) / np.linalg.norm(slopes)))
        rows.append(_row("linear regression", len(y), eps, errors, math.nan))
    return pd.DataFrame(rows)


def _row(name, n, eps, errors, laplace):
    median, low, high = median_band(errors)
    return dict(release=name, n=n, eps=eps, replicates=len(errors), median=median, low=low, high=high, laplace=laplace)


def caption(reps):
    """Return the caption of the figure for ``reps`` replicates per point.

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
        "Error against ε on the California housing data (20,640 block groups), every bound declared "
        "from the data's public top-codes (income 15, age 52, value 500,001), not read from the data (the "
        "49 incomes of 15.0001 are clipped to 15). Left: the private mean of median_income (bounds [0, 15], "
        "in $10,000) on all the rows and on every 10th row; its error is the absolute difference from "
        "the true mean; dashed, the median of Laplace noise of scale 15 / (n ε), the mean's noise. "
        "Right: the private linear regression (knorm.models.LinearRegression, default settings) of "
        "median_house_value on median_income and housing_median_age; its error is the ℓ2 distance "
        "of the two slopes from the least-squares slopes, relative to their size. Each point is the "
        f"median over {reps:,} replicates (releases); its bar spans the order statistics that bracket the true "
        "median with 68% probability (about ±1 Monte Carlo standard error)."
    )


def figure(table):
    """Draw the error of the mean and of the regression against epsilon.

    Parameters
    ----------
    table : pandas.DataFrame
        The table of :func:`error_table`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with its caption.
    """
    fig, (left, right) = subplots(1, 2, figsize=(11, 4.2))
    reps = int(table.replicates.max())
    means = [r for r in table.release.unique() if r.startswith("mean")]
    for i, (name, marker) in enumerate(zip(means, "os")):
        t = table[table.release == name].sort_values("eps")
        bars = [t["median"] - t.low, t.high - t["median"]]
        label = f"{name} (n = {int(t.n.iloc[0]):,})"
        line = left.errorbar(
            dodge(t.eps, i, len(means), 0.15), t["median"], yerr=bars, fmt=marker + "-", ms=4, capsize=2, label=label
        )
        left.plot(
            t.eps,
            t.laplace,
            "--",
            color=line.lines[0].get_color(),
            lw=1,
            label=f"ln 2 × 15 / (n ε), n = {int(t.n.iloc[0]):,}",
        )
    left.set_ylabel("median |private mean − true mean| ($10,000)")
    left.set_title(f"mean of median_income ({reps:,} replicates)")
    t = table[table.release == "linear regression"].sort_values("eps")
    bars = [t["median"] - t.low, t.high - t["median"]]
    right.errorbar(
        t.eps, t["median"], yerr=bars, fmt="^-", ms=4, capsize=2, color="tab:green", label="LinearRegression"
    )
    right.set_ylabel("median relative error of the slopes")
    right.set_title(f"regression of median_house_value ({reps:,} replicates)")
    for ax in (left, right):
        log_epsilon_axis(ax)
        plain_log_yaxis(ax)
        legend(ax, fontsize=8, loc="lower left")
    return caption_figure(fig, caption(reps))


def _fraction(eps):
    return f"1/{round(1 / eps)}" if eps < 1 else f"{eps:g}"


def markdown_table(table):
    """Return the medians of ``table`` as the markdown table that docs/guide/epsilon.md shows.

    Parameters
    ----------
    table : pandas.DataFrame
        The table of :func:`error_table` (or ``epsilon_error.csv`` read back).

    Returns
    -------
    str
        One row per epsilon: the median error of each mean in dollars and the regression's in
        percent (3 significant digits).
    """
    releases = list(dict.fromkeys(table.release))
    header = ["ε"] + [f"{r} (n = {int(table[table.release == r].n.iloc[0]):,})" for r in releases]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for eps in sorted(table.eps.unique()):
        row = [_fraction(eps)]
        for r in releases:
            value = float(table[(table.release == r) & (table.eps == eps)]["median"].iloc[0])
            row.append(f"${value * 1e4:,.3g}" if r.startswith("mean") else f"{100 * value:.3g}%")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Write ``epsilon_error.png`` and ``epsilon_error.csv`` (``python -m knorm.experiments.epsilon_guide``).

    Parameters
    ----------
    argv : list of str, optional
        ``--out FOLDER`` (default docs/figures), ``--reps N`` (default :data:`REPS`) and
        ``--seed S`` (default :data:`SEED`); default: the command line.

    Returns
    -------
    int
        0.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m knorm.experiments.epsilon_guide", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", default="docs/figures", help="folder for epsilon_error.png and .csv")
    parser.add_argument("--reps", type=int, default=REPS, help=f"replicates per point (default {REPS})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"root seed (default {SEED})")
    args = parser.parse_args(argv)
    out = Path(args.out)
    table = error_table(args.reps, args.seed)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "epsilon_error.csv", index=False, float_format="%.6g")
    save_figure(figure(table), out / "epsilon_error.png")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\nThe table of docs/guide/epsilon.md:\n\n" + markdown_table(table))
    print(f"wrote {out / 'epsilon_error.png'} and {out / 'epsilon_error.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
