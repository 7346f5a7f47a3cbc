"""Every figure of ``knorm reproduce`` reads from its PNG alone.

Each figure function is drawn from a small synthetic table and its matplotlib Figure is
inspected: every panel has axis labels and a title, the caption is a text artist under the
axes, a log axis reads as plain numbers, no point sits on the frame, and every value that is
a Monte Carlo estimate carries an error bar of the size its table says. matplotlib and pandas
are optional extras: without them the module is skipped.
"""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

from matplotlib.container import ErrorbarContainer  # noqa: E402
from scipy import stats  # noqa: E402

from knorm.experiments import (  # noqa: E402
    example21,
    linear_intervals,
    linear_sim,
    logistic_intervals,
    logistic_sim,
    realdata,
)
from knorm.experiments._runner import figure_caption, mean_se, median_band  # noqa: E402

REPS = 7


def _logistic_raw(rng):
    rows = []
    for n in logistic_sim.NS:
        for rep in range(REPS):
            rows.append(dict(n=n, rep=rep, eps=np.nan, mechanism="MLE", q=np.nan, error=0.1 + 0.01 * rng.random()))
            for name in logistic_sim.MECHANISMS:
                for eps in logistic_sim.EPSILONS:
                    rows.append(
                        dict(n=n, rep=rep, eps=eps, mechanism=name, q=0.5, error=rng.lognormal(-np.log(eps), 0.5))
                    )
    return pd.DataFrame(rows)


def _linear_raw(rng):
    rows = []
    for n in linear_sim.NS:
        for rep in range(REPS):
            rows.append(dict(n=n, rep=rep, eps=np.nan, mechanism="OLS", coverage=0.96, clipped=0))
            for name in linear_sim.MECHANISMS:
                for eps in linear_sim.EPSILONS:
                    share = rng.binomial(linear_sim.P, min(1.0, eps / 2)) / linear_sim.P
                    rows.append(dict(n=n, rep=rep, eps=eps, mechanism=name, coverage=share, clipped=0, error=1.0))
    return pd.DataFrame(rows)


def _realdata_raw(rng):
    rows = [
        dict(rep=rep, eps=eps, mechanism=name, chosen=name, distance=rng.lognormal(0.5, 0.3))
        for rep in range(REPS)
        for name in realdata.MECHANISMS
        for eps in realdata.EPSILONS
    ]
    return pd.DataFrame(rows)


def _linear_intervals_tables(rng):
    index = pd.MultiIndex.from_product([linear_intervals.NS, linear_intervals.EPSILONS], names=["n", "eps"])
    coverage = pd.DataFrame(rng.uniform(0.9, 1.0, (len(index), 6)), index=index, columns=linear_intervals.NAMES)
    coverage.iloc[0, 0] = 1.0  # a point at 1.00 must not sit on the frame
    ratio = pd.DataFrame(rng.uniform(1.0, 20.0, (len(index), 6)), index=index, columns=linear_intervals.NAMES)
    return coverage, ratio


def _logistic_intervals_tables(rng):
    rows = []
    for eps in logistic_intervals.EPSILONS:
        for j, b in enumerate(logistic_intervals.BETA):
            k = int(rng.integers(REPS - 1, REPS + 1))
            lo, hi = (
                stats.beta.ppf(0.025, k, REPS - k + 1),
                1.0 if k == REPS else stats.beta.ppf(0.975, k + 1, REPS - k),
            )
            rows.append(
                dict(eps=eps, coef=j, beta=b, coverage=k / REPS, cp_low=lo, cp_high=hi, width_ratio=1 + 1 / eps)
            )
    mle = pd.Series(rng.uniform(0.9, 1.0, logistic_intervals.BETA.size))
    return pd.DataFrame(rows), mle


def _figures():
    rng = np.random.default_rng(20261127)
    logistic = logistic_sim.error_summary(_logistic_raw(rng))
    linear = linear_sim.coverage_summary(_linear_raw(rng))
    real = realdata.distance_summary(_realdata_raw(rng))
    coverage, ratio = _linear_intervals_tables(rng)
    table, mle = _logistic_intervals_tables(rng)
    return {
        "figure1_example21": (example21.figure(), None),
        "logistic_error": (logistic_sim.figure(logistic), logistic),
        "linear_coverage": (linear_sim.figure(linear), linear),
        "realdata_distance": (realdata.figure(real, 1.7, "California housing", 20_433, 12), real),
        "linear_intervals": (linear_intervals.figure(coverage, ratio, REPS), coverage),
        "logistic_intervals": (logistic_intervals.figure(table, mle, REPS), table),
    }


@pytest.fixture(scope="module")
def figures():
    import matplotlib.pyplot as plt

    drawn = _figures()
    yield drawn
    for fig, _ in drawn.values():
        plt.close(fig)


NAMES = [
    "figure1_example21",
    "logistic_error",
    "linear_coverage",
    "realdata_distance",
    "linear_intervals",
    "logistic_intervals",
]
# The figures whose points are Monte Carlo estimates over replicates.
ESTIMATES = NAMES[1:]


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


@pytest.mark.parametrize("name", NAMES)
def test_every_panel_has_axis_labels_and_a_title(figures, name):
    fig, _ = figures[name]
    panels = _panels(fig)
    for ax in panels:
        assert ax.get_xlabel().strip(), f"{name}: a panel without an x label"
        assert ax.get_title().strip(), f"{name}: a panel without a title"
    # Figure 1's panels share their y axis, labelled once on the left.
    labelled = panels[:1] if name == "figure1_example21" else panels
    assert all(ax.get_ylabel().strip() for ax in labelled), f"{name}: a panel without a y label"


@pytest.mark.parametrize("name", NAMES)
def test_the_caption_is_in_the_figure_under_the_axes(figures, name):
    fig, _ = figures[name]
    caption = figure_caption(fig)
    assert caption is not None, f"{name}: no caption text artist"
    assert len(caption.get_text()) > 150
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    top = caption.get_window_extent(renderer).y1
    lowest = min(ax.get_tightbbox(renderer).y0 for ax in _panels(fig))
    assert top <= lowest + 1, f"{name}: the caption overlaps the axes"
    inside = fig.bbox
    assert caption.get_window_extent(renderer).x1 <= inside.x1 and caption.get_window_extent(renderer).y0 >= 0


@pytest.mark.parametrize("name", ESTIMATES)
def test_the_replicate_count_is_shown(figures, name):
    fig, _ = figures[name]
    count = f"{REPS} replicates"
    assert count in figure_caption(fig).get_text().replace("\n", " ")
    assert any(count in ax.get_title() for ax in _panels(fig))


@pytest.mark.parametrize("name", ESTIMATES)
def test_every_estimate_has_a_monte_carlo_error_bar(figures, name):
    fig, _ = figures[name]
    coverage_panels = [ax for ax in _panels(fig) if "width" not in ax.get_title()]
    for ax in coverage_panels:
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer) and c.has_yerr]
        assert bars, f"{name}: no error bars on {ax.get_title()!r}"


def _bar_extents(container):
    """(x, y low, y high) of each bar of an ErrorbarContainer."""
    segments = container.lines[2][0].get_segments()
    return [(s[0][0], s[0][1], s[1][1]) for s in segments]


def test_logistic_bars_are_the_order_statistics_of_the_median(figures):
    fig, table = figures["logistic_error"]
    ax = fig.axes[0]
    first = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    rows = table[(table.n == logistic_sim.NS[0]) & (table.mechanism == "l1")].sort_values("eps")
    lows, highs = zip(*[(lo, hi) for _, lo, hi in _bar_extents(first)])
    np.testing.assert_allclose(sorted(lows), sorted(rows.low))
    np.testing.assert_allclose(sorted(highs), sorted(rows.high))
    assert (rows.low < rows["median"]).any() and (rows.high > rows["median"]).any()


def test_linear_coverage_bars_are_one_standard_error(figures):
    fig, table = figures["linear_coverage"]
    ax = fig.axes[0]
    first = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    rows = table[(table.n == linear_sim.NS[0]) & (table.mechanism == "l1")].sort_values("eps")
    half = sorted((hi - lo) / 2 for _, lo, hi in _bar_extents(first))
    np.testing.assert_allclose(half, sorted(rows.se))
    assert rows.se.gt(0).any()


def test_linear_intervals_bars_are_binomial_standard_errors(figures):
    fig, coverage = figures["linear_intervals"]
    ax = fig.axes[0]
    first = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    c = coverage.loc[linear_intervals.NS[0]]["intercept"]
    half = sorted((hi - lo) / 2 for _, lo, hi in _bar_extents(first))
    np.testing.assert_allclose(half, sorted(np.sqrt(c * (1 - c) / REPS)))


def test_no_point_sits_on_the_frame(figures):
    fig, coverage = figures["linear_intervals"]
    for ax in fig.axes[::2]:  # the coverage panels
        assert ax.get_ylim()[1] > 1.0 + 0.005
    fig, _ = figures["linear_coverage"]
    for ax in fig.axes:
        low, high = ax.get_ylim()
        assert low < -0.01 and high > 1.01


def test_log_axes_read_as_plain_numbers(figures):
    for name in ("realdata_distance", "linear_intervals", "logistic_intervals", "logistic_error"):
        fig, _ = figures[name]
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_yscale() != "log":
                continue
            labels = [t.get_text() for t in ax.get_yticklabels() + ax.get_yticklabels(minor=True) if t.get_text()]
            assert labels, f"{name}: no y tick labels"
            for text in labels:
                assert "times" not in text and "e-" not in text and "^" not in text, f"{name}: tick {text!r}"
                float(text)


def test_the_legend_of_linear_coverage_leaves_the_reference_line_visible(figures):
    fig, _ = figures["linear_coverage"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            # Outside the plotting area: it can hide no line.
            assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1


def test_no_series_is_drawn_on_top_of_another(figures):
    # Series of one panel are shifted sideways (dodged): no two share their x positions.
    for name in ("logistic_error", "linear_coverage", "realdata_distance", "linear_intervals"):
        fig, _ = figures[name]
        ax = fig.axes[0]
        xs = [tuple(np.round(c.lines[0].get_xdata(), 9)) for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(xs) > 1 and len(set(xs)) == len(xs), name


def test_median_band_covers_the_median_with_at_least_68_percent():
    # The band of m replicates is the j-th and (m + 1 - j)-th order statistics; its coverage of the
    # true median is exactly P(j <= Binomial(m, 1/2) <= m - j), and j is the largest rank that keeps it
    # at 68.27% or more (a looser band would pass a weaker test).
    for m in range(2, 400):
        _, low, high = median_band(np.arange(m))
        j = int(low) + 1
        assert high == m - j
        covered = stats.binom.cdf(m - j, m, 0.5) - stats.binom.cdf(j - 1, m, 0.5)
        assert covered >= 0.6827 or j == 1  # with m = 2 the widest band, min to max, covers 50%
        if j + 1 <= m - j - 1:
            tighter = stats.binom.cdf(m - j - 1, m, 0.5) - stats.binom.cdf(j, m, 0.5)
            assert tighter < 0.6827
    assert median_band([3.0]) == (3.0, 3.0, 3.0)


def test_mean_se():
    mean, se = mean_se([0.0, 1.0, 1.0, 0.0])
    assert mean == 0.5 and se == pytest.approx(np.std([0, 1, 1, 0], ddof=1) / 2)
    assert mean_se([0.4]) == (0.4, 0.0)
