"""Shared machinery for benchmark sections: configuration, timing, machine facts, markdown.

Every section module receives one :class:`BenchConfig` and returns markdown. The
timing helpers here implement the house rules of the benchmark page:
``time.perf_counter``, a warm-up call, an inner loop long enough that each timing
lasts about ``config.target_seconds``, several repeats, medians, and candidates
measured back to back inside each repeat so that a noisy machine slows them alike.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "BenchConfig",
    "SectionSkipped",
    "choose_n",
    "paired_timings",
    "machine_info",
    "md_table",
    "fmt_rate",
    "fmt_seconds",
    "fmt_ratio",
    "fmt_prob",
    "sampler_kind",
    "SamplerLog",
]

REPO_ROOT = Path(__file__).resolve().parents[1]


class SectionSkipped(Exception):
    """Raised by a section's ``run`` when it cannot run here (a missing optional dependency).

    The runner writes the message into the page instead of a table.
    """


@dataclass(frozen=True)
class BenchConfig:
    """Settings shared by every section.

    Parameters
    ----------
    quick : bool
        Smoke-run mode: small sizes and few repeats; numbers are not meant to be read.
    repeats : int
        Number of timed repeats; tables report medians over them.
    target_seconds : float
        Each single timing (one repeat of one candidate) lasts about this long.
    max_entries : int
        Cap on ``n * dim`` per call, which bounds memory (8 bytes per entry).
    seed : int
        Root seed; every case derives its own Generator from it (no global state).
    figures_dir : Path or None
        Where sections may save PNG figures; None disables figures.
    figures_href : str
        Path of ``figures_dir`` relative to the markdown page, for links.
    """

    quick: bool = False
    repeats: int = 7
    target_seconds: float = 0.06
    max_entries: int = 1 << 20
    seed: int = 20_240_601
    figures_dir: Path | None = None
    figures_href: str = "figures"
    verbose: bool = True
    _t0: float = field(default_factory=time.perf_counter, compare=False)

    @classmethod
    def make(cls, *, quick=False, **overrides):
        """Defaults for full or quick mode, with explicit ``overrides`` (None ones ignored)."""
        base = dict(repeats=3, target_seconds=0.005, max_entries=1 << 15) if quick else {}
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(quick=quick, **base)

    def rng(self, *key):
        """A fresh PCG64 Generator for the case named by ``key``, reproducible from ``seed``.

        Distinct cases get independent streams, and a case's stream does not depend
        on which other sections or cases ran before it.
        """
        tag = zlib.crc32(repr(key).encode())
        return np.random.default_rng([self.seed, tag])

    def log(self, msg):
        """Progress on stderr (stdout may carry the page in quick mode)."""
        if self.verbose:
            print(f"[{time.perf_counter() - self._t0:7.1f}s] {msg}", file=sys.stderr, flush=True)


# -- timing ------------------------------------------------------------------
def _time_calls(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def choose_n(make_call, n_max, target_seconds, n_pilot=16):
    """Pick ``n`` (vectors per call) so that one call takes about ``target_seconds``.

    Parameters
    ----------
    make_call : callable
        ``make_call(n)`` returns a zero-argument callable drawing ``n`` vectors.
    n_max : int
        Upper bound on ``n`` (the memory cap); fast samplers hit it and are then
        looped by :func:`paired_timings` instead.
    target_seconds : float
        Desired duration of one call.
    n_pilot : int
        Size of the pilot call used to estimate the cost per vector.

    Returns
    -------
    int
    """
    n0 = max(1, min(n_max, n_pilot))
    call = make_call(n0)
    call()  # warm-up: caches, lazy set-up, the rejection sampler's acceptance estimate
    per_vector = _time_calls(call, 1) / n0
    return int(max(1, min(n_max, target_seconds / max(per_vector, 1e-12))))


def paired_timings(calls, repeats, target_seconds):
    """Seconds per call of each candidate, measured back to back in every repeat.

    Parameters
    ----------
    calls : dict of str to callable
        Zero-argument callables to time (for instance a sampler and the numpy
        uniform baseline for the same ``n`` and ``dim``).
    repeats : int
        Number of repeats.
    target_seconds : float
        Each candidate is looped ``number`` times per repeat, with ``number``
        chosen so that one repeat of it lasts about this long.

    Returns
    -------
    dict of str to ndarray
        Per-repeat seconds per call, shape (repeats,). Take medians; ratios of two
        candidates are best taken per repeat, since both ran within milliseconds.
    """
    number = {}
    for name, fn in calls.items():
        fn()  # warm-up
        once = _time_calls(fn, 1)
        number[name] = max(1, min(10_000, math.ceil(target_seconds / max(once, 1e-9))))
    out = {name: np.empty(repeats) for name in calls}
    for r in range(repeats):
        for name, fn in calls.items():
            out[name][r] = _time_calls(fn, number[name])
    return out


# -- machine -------------------------------------------------------------------
def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_revision():
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not rev:
        return "unknown"
    return f"{rev} (src/ has uncommitted changes)" if dirty else rev


def machine_info():
    """Facts about this machine and software, as (label, value) pairs for the page."""
    import scipy

    import knorm

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return [
        ("Date (UTC)", _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M")),
        ("CPU", _cpu_model()),
        ("Logical cores (usable)", f"{os.cpu_count()} ({usable})"),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", platform.python_version()),
        ("numpy", np.__version__),
        ("scipy", scipy.__version__),
        ("Bit generator", f"{type(np.random.default_rng().bit_generator).__name__} (np.random.default_rng)"),
        (
            "knorm",
            f"{knorm.__version__} from `{Path(knorm.__file__).resolve().parent.relative_to(REPO_ROOT)}`"
            if Path(knorm.__file__).resolve().is_relative_to(REPO_ROOT)
            else f"{knorm.__version__} from {knorm.__file__}",
        ),
        ("Git revision", _git_revision()),
    ]


# -- markdown ----------------------------------------------------------------------
def md_table(headers, rows, align=None):
    """A GitHub markdown table; ``align`` is a string of 'l'/'r' per column (default all left)."""
    align = align or "l" * len(headers)
    sep = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_rate(per_second):
    """A rate with an SI prefix, e.g. ``12.3 M``."""
    if not np.isfinite(per_second):
        return "—"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_second >= div:
            return f"{per_second / div:.3g} {unit}"
    return f"{per_second:.3g}"


def fmt_seconds(seconds):
    """A duration with a sensible unit, e.g. ``85 ns`` or ``2.6 ms``."""
    if not np.isfinite(seconds):
        return "—"
    for mult, unit in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")):
        if seconds * mult < 1000:
            return f"{seconds * mult:.3g} {unit}"
    return f"{seconds:.3g} s"


def fmt_ratio(r):
    """A ratio like ``2.1x``."""
    return "—" if r is None or not np.isfinite(r) else f"{r:.2f}x" if r < 10 else f"{r:.3g}x"


def fmt_prob(p):
    """A probability or rate, plain for moderate values, scientific when tiny."""
    if p is None or not np.isfinite(p):
        return "—"
    return f"{p:.3g}" if p >= 1e-3 else f"{p:.2e}"


# -- samplers ----------------------------------------------------------------------
def sampler_kind(sampler):
    """A short label for a Release's ``sampler`` string: which noise actually ran.

    'lattice' (exact integer noise on a lattice, the default ``sampler='auto'`` where the
    ball allows it), 'continuous' (binary64 noise), or for objective perturbation
    'objective: V continuous + lattice output' / 'objective: all continuous'.
    """
    s = str(sampler)
    if s.startswith("objective perturbation"):
        return (
            "objective: V continuous + lattice output" if "rounded to a lattice" in s else "objective: all continuous"
        )
    return "lattice" if s.startswith("lattice") else "continuous"


class SamplerLog:
    """Counts which sampler ran in the fits of a section, and the fits that fell back.

    ``fit(model, X, y)`` fits ``model``; if its ``sampler='auto'`` fit raises the
    lattice spacing error of knorm 95c8bd1 (a ValueError from ``choose_spacing`` when the
    output lattice of objective perturbation would be finer than 2^-40, i.e. at small
    epsilon; see the report of the benchmark run), the fit is redone with
    ``sampler='continuous'`` and counted as a fallback, so that the section still runs
    and says so.
    """

    def __init__(self):
        self.counts = {}
        self.fallbacks = 0

    def record(self, releases):
        for r in releases:
            kind = sampler_kind(r.sampler)
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def fit(self, model, X, y):
        try:
            model.fit(X, y)
        except ValueError as err:
            if model.get_params().get("sampler") != "auto" or "per-lattice-unit rate" not in str(err):
                raise
            self.fallbacks += 1
            model.set_params(sampler="continuous")
            try:
                model.fit(X, y)
            finally:
                model.set_params(sampler="auto")
        releases = getattr(model, "releases_", None) or (model.release_,)
        self.record(releases)
        return model

    def summary(self):
        """One sentence for the page."""
        if not self.counts:
            return "No release was recorded."
        total = sum(self.counts.values())
        parts = ", ".join(f"{kind}: {c:,} of {total:,}" for kind, c in sorted(self.counts.items()))
        text = f"Samplers that ran (releases): {parts}."
        if self.fallbacks:
            text += (
                f" **{self.fallbacks:,} fits fell back to `sampler='continuous'`** because `sampler='auto'` "
                "raised a ValueError in `knorm.mechanisms.lattice.choose_spacing` (the output lattice of "
                "objective perturbation is finer than 2^-40 at small epsilon: a bug of the library at this "
                "revision, reported)."
            )
        return text
