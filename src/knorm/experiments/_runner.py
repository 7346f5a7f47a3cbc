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
    "epsilon_to_match",
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


def save_figure(fig, path):
    """Write ``fig`` as a PNG at ``path`` (creating folders), close it, return the path."""
    import matplotlib.pyplot as plt

    path = Path(path)
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
