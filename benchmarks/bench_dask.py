"""Dask: out-of-core sufficient statistics (issue "Benchmarks against peers", part d).

``knorm.models.sufficient.sufficient_statistics`` on n = 10^8 rows, p = 10,
generated block by block inside the Dask graph (never materialised), with the
process's peak memory; and rows per second against the numpy path on 10^7 rows
held in memory. Every measurement runs in its own fresh subprocess
(``benchmarks/_dask_worker.py``), so its peak RSS is its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from benchmarks._harness import REPO_ROOT, SectionSkipped, fmt_rate, fmt_ratio, fmt_seconds, md_table

TITLE = "Dask: out-of-core sufficient statistics"

WORKER = REPO_ROOT / "benchmarks" / "_dask_worker.py"
P = 10
BOUND_Y = 10.0
WORKERS = 2
MEMORY_LIMIT = 2 * 1024**3


def _run_worker(mode, args, timeout=1800):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT / "src")
    res = subprocess.run(
        [sys.executable, str(WORKER), mode, json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
    )
    if res.returncode != 0:
        raise RuntimeError(f"_dask_worker.py {mode} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _gib(b):
    return f"{b / 1024**3:.2f} GiB" if b >= 1024**3 else f"{b / 1024**2:.0f} MiB"


def run(config):
    try:
        import dask
    except ImportError as err:
        raise SectionSkipped(f"dask is not installed ({err})") from err

    if config.quick:
        n_mem, n_big, chunk, reps_mem, reps_big = 200_000, 2_000_000, 100_000, 2, 1
    else:
        n_mem, n_big, chunk, reps_mem, reps_big = 10_000_000, 100_000_000, 500_000, min(config.repeats, 5), 3
    common = dict(p=P, bound_y=BOUND_Y, workers=WORKERS, seed=config.seed)
    load0 = os.getloadavg()[0]
    mem = _run_worker("memory", {**common, "n": n_mem, "repeats": reps_mem, "chunk": chunk})
    config.log(f"  dask: in-memory pair done, peak {_gib(mem['peak_rss'])}")
    big = _run_worker("generated", {**common, "n": n_big, "repeats": reps_big, "chunk": chunk, "warmup": False})
    config.log(f"  dask: out-of-core run done, peak {_gib(big['peak_rss'])}")
    load1 = os.getloadavg()[0]

    t_np = np.array(mem["seconds"]["numpy"])
    t_dm = np.array(mem["seconds"]["dask-memory"])
    t_gen = np.array(big["seconds"]["generate"])
    t_st = np.array(big["seconds"]["statistics"])
    numpy_rate = n_mem / np.median(t_np)
    dup = big.get("blocks_generated_statistics", 0) / max(1, big["n_blocks"])

    def spread(t):
        return f"{fmt_seconds(t.min())} – {fmt_seconds(t.max())}"

    under = "yes" if big["peak_rss"] < MEMORY_LIMIT else "**no**"
    mem_peak = [_gib(mem["peak_rss"]), _gib(mem["peak_rss_sampled"]), _gib(mem["rss_after_imports"]), "—"]
    big_peak = [_gib(big["peak_rss"]), _gib(big["peak_rss_sampled"]), _gib(big["rss_after_imports"]), under]
    rows = [
        [
            "numpy path, in memory",
            f"{n_mem:,}",
            "2^17 (internal)",
            "—",
            len(t_np),
            fmt_seconds(np.median(t_np)),
            spread(t_np),
            fmt_rate(numpy_rate),
            "1.00x",
            *mem_peak,
        ],
        [
            "Dask array (`da.from_array`) of the same in-memory data",
            f"{n_mem:,}",
            f"{chunk:,}",
            "threads (2)",
            len(t_dm),
            fmt_seconds(np.median(t_dm)),
            spread(t_dm),
            fmt_rate(n_mem / np.median(t_dm)),
            fmt_ratio(float(np.median(t_np / t_dm))),
            *mem_peak,
        ],
        [
            "Dask, generated per block, out of core: `sufficient_statistics` (incl. generation)",
            f"{n_big:,}",
            f"{chunk:,}",
            "threads (2)",
            len(t_st),
            fmt_seconds(np.median(t_st)),
            spread(t_st),
            fmt_rate(n_big / np.median(t_st)),
            fmt_ratio(n_big / np.median(t_st) / numpy_rate) + " *",
            *big_peak,
        ],
        [
            "Dask, generated per block, out of core: generation only",
            f"{n_big:,}",
            f"{chunk:,}",
            "threads (2)",
            len(t_gen),
            fmt_seconds(np.median(t_gen)),
            spread(t_gen),
            fmt_rate(n_big / np.median(t_gen)),
            fmt_ratio(n_big / np.median(t_gen) / numpy_rate) + " *",
            *big_peak,
        ],
    ]
    notes = []
    if dup > 1.01:
        notes.append(
            f"In each statistics pass every row block was generated {dup:.0f} times "
            f"({big['blocks_generated_statistics']} generations for {big['n_blocks']} blocks; the generation-only "
            "pass generates each once). Cause, in `knorm.models.sufficient._dask_blocks`: X and y are turned into "
            "delayed blocks by two separate `to_delayed()` calls, each optimising (fusing) its own graph, so a task "
            "shared by X and y - here the block that holds both - gets two different fused keys and runs twice. "
            "`to_delayed(optimize_graph=False)` (or taking X and y blocks from one graph) would share it; checked on "
            "a 4-block toy graph (8 block computations with the default, 4 with optimize_graph=False). Data that are "
            "read from storage would be read twice for the same reason. Left for the owners of src/ (not changed "
            "here)."
        )
    headers = [
        "run",
        "rows",
        "rows per block",
        "scheduler",
        "repeats",
        "median time",
        "range",
        "rows/s",
        "rows/s vs numpy path",
        "peak RSS (VmHWM)",
        "peak RSS (sampled)",
        "RSS after imports",
        "peak < 2 GiB",
    ]
    table = md_table(headers, rows, "lrrlrrrrrrrrl")
    # Seconds per row of the statistics alone: the out-of-core time minus the generations it ran.
    per_row = np.median(t_st) / n_big - dup * np.median(t_gen) / n_big
    stats_only = 1.0 / per_row if per_row > 0 else float("nan")
    note_txt = ("\n\n" + "\n\n".join(notes)) if notes else ""
    basis = (
        f"{dup:.0f} x the generation-only time, since each statistics pass generates every block {dup:.0f} time(s)"
        if dup > 1.01
        else "the generation-only time"
    )
    if np.isfinite(stats_only):
        split = (
            f"Subtracting the generation time ({basis}) from the out-of-core time leaves about "
            f"{fmt_rate(stats_only)} rows/s for the statistics alone (a rough split: generation and reduction "
            "share the 2 cores), to compare with the Dask in-memory row."
        )
    else:
        split = (
            f"The generation time ({basis}) is not smaller than the out-of-core time here, so the two cannot "
            "be separated (they overlap on the 2 cores)."
        )
    return f"""`sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-10, 10))` with p = {P}: X uniform on
[-1, 1]^{P}, y = X beta + N(0, 1), beta evenly spaced in [-1, 1] (nothing is clipped). Dask {dask.__version__}
with the **threaded scheduler, 2 workers** (`dask.config.set(scheduler="threads", num_workers=2)`; the
machine has 2 cores; numpy's BLAS keeps its default threads). No LocalCluster: one process keeps the
peak-memory measurement clean.

Two subprocesses (`benchmarks/_dask_worker.py`), each measured on its own:

1. *In memory*, {n_mem:,} rows ({_gib(n_mem * (P + 1) * 8)} of X and y, generated first): the library's
   numpy path (its own loop over row blocks of 2^17) and the same arrays as a Dask array (`da.from_array`, row
   chunks of {chunk:,}), timed back to back in each of {reps_mem} repeats after one warm-up call each; the
   Dask/numpy ratio is the median of per-repeat ratios.
2. *Out of core*, {n_big:,} rows ({_gib(n_big * (P + 1) * 8)} if materialised): a Dask array built with
   `da.map_blocks` from a numpy Generator seeded per block (`[seed, 1, block index]`), X and y column slices of
   it; nothing of size n exists at any time. Each of {reps_big} repeats times a generation-only pass (the blocks
   generated and summed) and then `sufficient_statistics` on the same lazy array, whose time includes
   generating the data. Rows marked * are compared with the numpy rate of the other process.

Peak RSS is the kernel's high-water mark `VmHWM` of each process (`/proc/self/status`; short spikes count);
*sampled* is a thread reading `VmRSS` every 20 ms (a cross-check); the RSS after importing numpy, dask and
knorm is the baseline. (`ru_maxrss` is not used: Linux carries it over `exec` from the forked parent, so it
reports the runner's own RSS at spawn time; checked: spawned from a process holding 800 MB, a small run
reported ru_maxrss 827 MB against VmHWM 226 MB.) The peak of the in-memory process includes its data.
Load average (1 min) before / after the section: {load0:.1f} / {load1:.1f} on 2 cores (other jobs share the
machine; *range* shows the spread of the repeats).

{table}

{split}{note_txt}
"""
