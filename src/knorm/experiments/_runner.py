"""Shared machinery of ``knorm reproduce``: configuration, seeded parallel maps, claims."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "Claim",
    "Config",
    "Result",
    "caption_figure",
    "dodge",
    "epsilon_to_match",
    "figure_caption",
    "legend",
    "mean_se",
    "median_band",
    "plain_log_yaxis",
    "pmap",
    "save_figure",
    "skipped_claims",
    "subplots",
    "task_rng",
]


@dataclass
class Config:
    """Settings of one reproduction run.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    quick : bool, default False
        Small replicate counts, for a run of every experiment in under 2 minutes.
    out : str or Path, default Path("knorm-results")
        Folder for CSV and PNG files (stored as a Path).
    jobs : int, default 1
        Worker processes.
    seed : int, default 2021
        Root seed; every task derives its own stream from (seed, experiment, task),
        so results do not depend on ``jobs`` or on the order tasks finish.
    data, target : str or None, default None
        A CSV and its response column for the ``realdata`` experiment.
    progress : bool, default True
        Show progress bars (on stderr).
    """

    quick: bool = False
    out: Path = Path("knorm-results")
    jobs: int = 1
    seed: int = 2021
    data: str | None = None
    target: str | None = None
    progress: bool = True

    def __post_init__(self):
        self.out = Path(self.out)


@dataclass
class Claim:
    """A statement set beside our reproduced value.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    experiment : str
        Name of the experiment making the claim.
    claim : str
        The statement.
    paper : str
        The paper's value or answer ('not in paper' for our own claims).
    ours : str
        The reproduced value or answer ('not run' when the run skipped it).
    agrees : bool or None
        Whether they agree by the rule in ``note``; None for context rows that are
        not a test, and for claims not run.
    note : str, default ""
        The agreement rule, or why we differ.
    source : {'paper', 'ours'}, default 'paper'
        A claim of the paper, or our own beyond it.
    run : bool, default True
        False when this run did not test it (quick mode).
    """

    experiment: str
    claim: str
    paper: str
    ours: str
    agrees: bool | None
    note: str = ""
    source: str = "paper"
    run: bool = True


def skipped_claims(claims, run_setting, skipped_settings, reason):
    """Return the claims of ``run_setting`` restated for settings this run skipped, marked not run.

    Claims are labelled "n=<setting>: ..."; each one tested at ``run_setting`` is repeated for
    every skipped setting with ``ours='not run'`` and the ``reason``.
    """
    prefix = f"n={run_setting}:"
    out = []
    for skipped in skipped_settings:
        for c in claims:
            if c.claim.startswith(prefix):
                text = f"n={skipped}:" + c.claim[len(prefix) :]
                out.append(Claim(c.experiment, text, c.paper, "not run", None, reason, c.source, run=False))
    return out


@dataclass
class Result:
    """What an experiment produced.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    name : str
        Name of the experiment.
    tables : dict of str to pandas.DataFrame, default {}
        Tables by name, also written as CSV files.
    figures : list of Path, default []
        PNG files written.
    summary : str, default ""
        Text printed after the run.
    claims : list of Claim, default []
        The paper's statements beside the reproduced values.
    captions : dict of str to str, default {}
        A one-line caption per figure, keyed by the figure's file name.
    replicates : tuple of (int, int) or None, default None
        The replicates per setting of this run and of the full run, which the screen
        states beside a quick run's verdicts; None for an exact computation.
    """

    name: str
    tables: dict = field(default_factory=dict)  # name -> pandas DataFrame (also written as CSV)
    figures: list = field(default_factory=list)
    summary: str = ""
    claims: list = field(default_factory=list)
    captions: dict = field(default_factory=dict)
    replicates: tuple[int, int] | None = None


def task_rng(seed, *key):
    """The Generator of one task: a function of the root seed and the task's key only."""
    words = [int(seed)] + [int(k) if isinstance(k, (int, np.integer)) else _hash(k) for k in key]
    return np.random.default_rng(np.random.SeedSequence(words))


def _hash(text):
    import zlib

    return zlib.crc32(str(text).encode())


def pmap(fn, tasks, config, desc):
    """[fn(t) for t in tasks] over ``config.jobs`` processes, in task order, with a progress bar."""
    tasks = list(tasks)
    bar = _bar(len(tasks), desc, config.progress)
    try:
        if config.jobs <= 1 or len(tasks) <= 1:
            out = []
            for t in tasks:
                out.append(fn(t))
                bar.update(1)
            return out
        # Each worker runs one BLAS thread: the pool, not BLAS, uses the cores.
        env = {k: os.environ.get(k) for k in _THREAD_VARS}
        os.environ.update({k: "1" for k in _THREAD_VARS})
        try:
            with ProcessPoolExecutor(max_workers=config.jobs) as pool:
                out = []
                for r in pool.map(fn, tasks, chunksize=max(1, len(tasks) // (8 * config.jobs))):
                    out.append(r)
                    bar.update(1)
                return out
        finally:
            for k, v in env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    finally:
        bar.close()


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _bar(total, desc, enabled):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # progress is optional
        tqdm = None
    if tqdm is None or not enabled:
        return _NoBar()
    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True)


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def subplots(*args, **kwargs):
    """``matplotlib.pyplot.subplots`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


_MECHANISM_LABELS = {
    "l1": "$\\ell_1$ (Laplace)",
    "l2": "$\\ell_2$",
    "linf": "$\\ell_\\infty$",
    "K_T": "$K_T$",
    "cut ball": "cut ball",
    "auto": "auto",
}


def mechanism_label(name):
    """Return the legend label of a mechanism, named as the docs name it ('linf q=0.85' -> 'ℓ∞, q=0.85').

    Parameters
    ----------
    name : str
        A column name of an experiment's table: a ball ('l1', 'l2', 'linf', 'K_T', 'cut ball',
        'auto') optionally followed by a variant ('q=0.85', '+ floor', '(ours)').

    Returns
    -------
    str
        A matplotlib mathtext label.
    """
    for key in sorted(_MECHANISM_LABELS, key=len, reverse=True):
        if name == key or name.startswith(key + " "):
            rest = name[len(key) :].strip()
            if rest.startswith("q="):
                rest = ", " + rest
            elif rest:
                rest = " " + rest
            return _MECHANISM_LABELS[key] + rest
    return name


def log_epsilon_axis(ax):
    """Put epsilon on a base-2 log x axis, labelled as the privacy budget (it spans octaves)."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel("privacy budget $\\epsilon$ (log scale)")


def plain_log_yaxis(ax):
    """Put ``ax`` on a log y axis whose ticks read as plain numbers (0.1, 2, 30; never 2x10^0 or 1e-01)."""
    from matplotlib.ticker import LogFormatter

    class _Plain(LogFormatter):
        # LogFormatter decides which ticks get a label (all minor ones on a short axis); %g writes it.
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_Plain(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(_Plain(labelOnlyBase=False))


def legend(ax, **kwargs):
    """``ax.legend`` with the entries in the order they were drawn (error bars before reference lines)."""
    from matplotlib.container import ErrorbarContainer

    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(handles)), key=lambda i: not isinstance(handles[i], ErrorbarContainer))
    return ax.legend([handles[i] for i in order], [labels[i] for i in order], **kwargs)


def dodge(x, i, k, width=0.25):
    """Shift the points ``x`` of series ``i`` of ``k`` on a base-2 log axis, so no series hides another.

    The ``k`` series spread over ``width`` octaves centred on the true ``x``; the shift is
    for legibility only (the caption says so), the values are unchanged.
    """
    return np.asarray(x, float) * 2.0 ** ((i - (k - 1) / 2) * width / max(k - 1, 1))


def median_band(values):
    """Median of ``values`` and the order statistics around it that cover it with 68% probability.

    A distribution-free Monte Carlo error bar of a median: with m replicates, the j-th and
    (m + 1 - j)-th smallest values, j the 15.87% quantile of Binomial(m, 1/2), bracket the
    true median with probability at least 68.3%, the coverage of +-1 standard error
    (the distribution-free interval for a quantile; David & Nagaraja 2003, Order Statistics). With one replicate the band is the
    value itself.

    Parameters
    ----------
    values : array_like
        The replicates of one setting.

    Returns
    -------
    tuple of float
        (median, low, high).
    """
    from scipy import stats

    v = np.sort(np.asarray(values, float))
    m = v.size
    j = max(int(stats.binom.ppf(0.15866, m, 0.5)), 1)  # a 1-based rank
    return float(np.median(v)), float(v[j - 1]), float(v[m - j])


def mean_se(values):
    """Mean of ``values`` and its Monte Carlo standard error, sd / sqrt(m) (0 for one value).

    Parameters
    ----------
    values : array_like
        The replicates of one setting.

    Returns
    -------
    tuple of float
        (mean, standard error).
    """
    v = np.asarray(values, float)
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
    return float(v.mean()), se


#: Font size of the caption printed under every figure, in points.
CAPTION_SIZE = 9


def caption_figure(fig, caption):
    """Print ``caption`` under the axes of ``fig``, wrapped to its width, and lay the figure out.

    The figure grows by the caption's height, so the axes keep their size; the caption is
    a text artist with gid 'caption'. A figure is then readable from its PNG alone.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, with its axes drawn.
    caption : str
        One paragraph: what is plotted, over how many replicates, what the bars are.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig``.
    """
    import textwrap

    fig.tight_layout()  # the axes as they are laid out without a caption, then moved up as a block
    width, height = fig.get_size_inches()
    # About 14.5 characters per inch at 9 points (DejaVu Sans), less a margin.
    text = textwrap.fill(" ".join(caption.split()), width=int((width - 0.3) * 72 / (0.55 * CAPTION_SIZE)))
    artist = fig.text(0.012, 0, text, ha="left", va="bottom", fontsize=CAPTION_SIZE, gid="caption")
    margin = 6 / 72  # inches below the caption; above it, tight_layout's padding and 4 points more
    extra = artist.get_window_extent(fig.canvas.get_renderer()).height / fig.dpi + margin + 4 / 72
    total = height + extra
    positions = [ax.get_position() for ax in fig.axes]
    fig.set_size_inches(width, total)
    for ax, pos in zip(fig.axes, positions):
        ax.set_position([pos.x0, (pos.y0 * height + extra) / total, pos.width, pos.height * height / total])
    suptitle = getattr(fig, "_suptitle", None)  # kept at the same distance from the top
    if suptitle is not None:
        suptitle.set_y(1 - (1 - suptitle.get_position()[1]) * height / total)
    artist.set_y(margin / total)
    return fig


def figure_caption(fig):
    """Return the caption text artist of ``fig`` (see :func:`caption_figure`), or None."""
    return next((t for t in fig.texts if t.get_gid() == "caption"), None)


def save_figure(fig, path):
    """Write ``fig`` as a PNG at ``path`` (creating folders), close it, return the path.

    A figure with a caption (:func:`caption_figure`) keeps the layout made there.
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    if figure_caption(fig) is None:
        fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def epsilon_to_match(eps, errors_ref, errors_other, target_eps):
    """Budget at which ``errors_other`` (a median curve) reaches ``errors_ref`` at ``target_eps``.

    Log-log interpolation of the decreasing curve; nan if out of range.
    """
    target = np.interp(np.log(target_eps), np.log(eps), errors_ref)
    le, lo = np.log(eps), np.log(errors_other)
    if not (lo.min() <= np.log(target) <= lo.max()):
        return float("nan")
    order = np.argsort(lo)
    return float(np.exp(np.interp(np.log(target), lo[order], le[order])))
