"""Subprocess of the Dask section: one measurement per process, so its peak RSS is clean.

Run as ``python benchmarks/_dask_worker.py MODE JSON-ARGS`` with ``src/`` on
PYTHONPATH (``bench_dask.py`` does this); prints one JSON line. Modes:

``memory``
    Generate n x p in memory, then time ``sufficient_statistics`` on the numpy
    arrays and on the same arrays wrapped by ``da.from_array`` in row chunks,
    back to back in every repeat (one warm-up call each).
``generated``
    Out of core: a Dask array of n rows built with ``map_blocks`` from a seeded
    numpy Generator per row block (never materialised). Every repeat times a
    generation-only pass (blocks generated and summed) and then
    ``sufficient_statistics`` on the same lazy array; blocks generated per pass
    are counted.

Peak memory is the process's RSS high-water mark ``VmHWM`` from
``/proc/self/status`` (kernel-maintained, so short spikes count), reported with
the RSS right after the imports; a sampling thread reading ``VmRSS`` every 20 ms
is a cross-check. ``ru_maxrss`` is not used: Linux carries it over ``exec``
from the forked parent, so it would include the runner's RSS at spawn time.
"""

import json
import resource
import sys
import threading
import time

import numpy as np


def _status(field):
    """A size field of /proc/self/status, in bytes (0 if absent)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _rss_now():
    return _status("VmRSS")


class _Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.peak = max(self.peak, _rss_now())
            self._halt.wait(0.02)

    def stop(self):
        self._halt.set()
        self.join()
        self.peak = max(self.peak, _rss_now())


def _data(n, p, seed):
    rng = np.random.default_rng([seed, 0])
    beta = np.linspace(-1.0, 1.0, p)
    X = rng.uniform(-1.0, 1.0, size=(n, p))
    y = X @ beta + rng.standard_normal(n)
    return X, y


def _block(block_id, *, seed, p, beta, counter):
    """Rows of block ``block_id``: (x, y) from their own seeded Generator."""
    counter.append(block_id)
    b, rows = block_id
    rng = np.random.default_rng([seed, 1, b])
    out = np.empty((rows, p + 1))
    out[:, :p] = rng.uniform(-1.0, 1.0, size=(rows, p))
    out[:, p] = out[:, :p] @ beta + rng.standard_normal(rows)
    return out


def _generated(n, p, chunk, seed, counter):
    import dask.array as da

    beta = np.linspace(-1.0, 1.0, p)
    chunks = [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])

    def make(block_info=None):
        loc = block_info[None]["chunk-location"][0]
        rows = block_info[None]["chunk-shape"][0]
        return _block((loc, rows), seed=seed, p=p, beta=beta, counter=counter)

    D = da.map_blocks(make, dtype=float, chunks=(tuple(chunks), (p + 1,)), meta=np.empty((0, p + 1)))
    return D[:, :p], D[:, p]


def main():
    mode, args = sys.argv[1], json.loads(sys.argv[2])
    import dask

    from knorm.models.sufficient import sufficient_statistics

    n, p, seed, repeats = int(args["n"]), int(args["p"]), int(args["seed"]), int(args["repeats"])
    bounds_y = (-args["bound_y"], args["bound_y"])
    dask.config.set(scheduler="threads", num_workers=int(args.get("workers", 2)))
    base = _rss_now()
    sampler = _Sampler()
    sampler.start()
    out = {"mode": mode, "n": n, "p": p, "rss_after_imports": base}
    stats = None
    if mode == "memory":
        import dask.array as da

        t0 = time.perf_counter()
        X, y = _data(n, p, seed)
        out["generate_seconds"] = time.perf_counter() - t0
        Xd = da.from_array(X, chunks=(int(args["chunk"]), p))
        yd = da.from_array(y, chunks=int(args["chunk"]))
        calls = {
            "numpy": lambda: sufficient_statistics(X, y, bounds_X=(-1.0, 1.0), bounds_y=bounds_y),
            "dask-memory": lambda: sufficient_statistics(Xd, yd, bounds_X=(-1.0, 1.0), bounds_y=bounds_y),
        }
    elif mode == "generated":
        counter = []
        X, y = _generated(n, p, int(args["chunk"]), seed, counter)
        out["n_blocks"] = X.numblocks[0]

        def generate_only():
            counter.clear()
            dask.compute(X.sum() + y.sum())  # each block generated once, reduced to a scalar
            out["blocks_generated_generate"] = len(counter)

        def statistics():
            counter.clear()
            res = sufficient_statistics(X, y, bounds_X=(-1.0, 1.0), bounds_y=bounds_y)
            out["blocks_generated_statistics"] = len(counter)
            return res

        calls = {"generate": generate_only, "statistics": statistics}
    else:
        raise SystemExit(f"unknown mode {mode}")
    if args.get("warmup", True):
        for fn in calls.values():
            fn()
    times = {name: [] for name in calls}
    for _ in range(repeats):  # candidates back to back in every repeat
        for name, fn in calls.items():
            t0 = time.perf_counter()
            res = fn()
            times[name].append(time.perf_counter() - t0)
            if res is not None:
                stats = res
    sampler.stop()
    out["seconds"] = times
    # VmHWM: the kernel's high-water mark of this process image's RSS. (ru_maxrss is not used
    # as the measure: Linux carries it over exec from the forked parent, so it would include the
    # RSS of the benchmark runner at spawn time.)
    out["peak_rss"] = _status("VmHWM")
    out["ru_maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    out["peak_rss_sampled"] = sampler.peak
    if stats is not None:
        out["n_samples"] = stats.n_samples
        out["n_clipped"] = stats.n_clipped
    print(json.dumps(out))


if __name__ == "__main__":
    main()
