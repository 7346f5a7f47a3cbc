"""IBM diffprivlib for the peer benchmarks, in its own virtual environment and process.

diffprivlib 0.6.6 needs scikit-learn < 1.7, while knorm's development environment
has a newer scikit-learn, so diffprivlib is never imported here nor by knorm.
:func:`start_worker` makes (once, outside the repository) a virtual environment

    ``$KNORM_BENCH_DIFFPRIVLIB_VENV``, else ``${XDG_CACHE_HOME:-~/.cache}/knorm-bench/diffprivlib-venv``

with ``python -m venv`` and ``pip install "diffprivlib==0.6.6" "scikit-learn<1.7" numpy``,
and starts ``benchmarks/_diffprivlib_worker.py`` under it. The parent talks to the
worker with JSON lines and exchanges arrays as ``.npy`` files in a temporary
directory. The venv is reused by later runs; delete the folder to rebuild it.
Quick mode never creates it (a missing venv then just skips diffprivlib).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["REQUIREMENTS", "venv_dir", "clean_env", "ensure_venv", "start_worker", "DiffprivlibWorker", "versions_line"]

REQUIREMENTS = ("diffprivlib==0.6.6", "scikit-learn<1.7", "numpy")
WORKER = Path(__file__).resolve().parent / "_diffprivlib_worker.py"
_MARKER = "knorm-bench-ready.json"  # written only after a successful install


def venv_dir():
    """Where the isolated diffprivlib environment lives (outside the repository)."""
    override = os.environ.get("KNORM_BENCH_DIFFPRIVLIB_VENV")
    if override:
        return Path(override).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "knorm-bench" / "diffprivlib-venv"


def _python(venv):
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def clean_env():
    """Environment for child processes: no PYTHONPATH (src/ and the dev venv stay out)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def ensure_venv(create, log):
    """(python path or None, note). Builds the venv if ``create`` and it is missing."""
    venv = venv_dir()
    py = _python(venv)
    if (venv / _MARKER).exists() and py.exists():
        return py, f"reused `{venv}`"
    if not create:
        return None, f"its isolated environment `{venv}` does not exist, and quick mode does not create it"
    if venv.exists():  # a half-built environment from an interrupted run; it is ours (no marker yet)
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log(f"  creating the diffprivlib environment {venv} (pip install {' '.join(REQUIREMENTS)})")
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *REQUIREMENTS],
    ]
    for cmd in steps:
        try:
            res = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"its environment could not be built (`{' '.join(cmd[:4])} ...` failed: {exc})"
        if res.returncode != 0:
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            return None, (
                f"pip could not install it (`{' '.join(cmd[2:5])} ...` exited with "
                f"{res.returncode}: {' / '.join(tail)})"
            )
    (venv / _MARKER).write_text(json.dumps({"requirements": REQUIREMENTS}), encoding="utf-8")
    return py, f"created `{venv}` in this run"


class DiffprivlibWorker:
    """A running ``_diffprivlib_worker.py``; use as a context manager."""

    def __init__(self, python, note):
        self.note = note
        self.tmp = Path(tempfile.mkdtemp(prefix="knorm-bench-dpl-"))
        self._err = open(self.tmp / "worker.stderr", "w+", encoding="utf-8")
        self._proc = subprocess.Popen(
            [str(python), "-u", str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            env=clean_env(),
            cwd=self.tmp,
        )
        self._n = 0
        self.versions = self.call({"cmd": "versions"})

    def call(self, cmd):
        """Send one command, return its reply (raises RuntimeError on a worker error)."""
        self._proc.stdin.write(json.dumps(cmd) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            self._err.seek(0)
            raise RuntimeError("the diffprivlib worker died:\n" + self._err.read()[-2000:])
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"diffprivlib worker: {reply.get('error')}\n{reply.get('traceback', '')}")
        return reply

    def load(self, name, X, y):
        """Write X, y as .npy and have the worker load them under ``name``."""
        px, py = self.tmp / f"{name}_X.npy", self.tmp / f"{name}_y.npy"
        np.save(px, np.ascontiguousarray(X, dtype=np.float64))
        np.save(py, np.asarray(y))
        self.call({"cmd": "load", "name": name, "X": str(px), "y": str(py)})
        px.unlink()
        py.unlink()

    def free(self, name):
        self.call({"cmd": "free", "name": name})

    def coefs(self, model, data, params, epsilons, repeats, seed):
        """(len(epsilons), repeats, 1 + p) array of (intercept, coef...) and the warning counts."""
        self._n += 1
        out = self.tmp / f"coefs_{self._n}.npy"
        reply = self.call(
            {
                "cmd": "coefs",
                "model": model,
                "data": data,
                "params": params,
                "epsilons": [float(e) for e in epsilons],
                "repeats": int(repeats),
                "seed": int(seed),
                "out": str(out),
            }
        )
        arr = np.load(out)
        out.unlink()
        return arr, reply["warnings"]

    def time_fit(self, model, data, params, epsilon, number, rows=None):
        """Seconds per fit on the first ``rows`` rows, measured inside the worker."""
        cmd = {
            "cmd": "time",
            "model": model,
            "data": data,
            "params": params,
            "epsilon": float(epsilon),
            "number": int(number),
        }
        if rows is not None:
            cmd["rows"] = int(rows)
        return self.call(cmd)["seconds_per_fit"]

    def quantile(self, data, bounds, epsilon, q, repeats, seed):
        """(repeats,) array of diffprivlib's released q-quantiles of the first column of ``data``."""
        self._n += 1
        out = self.tmp / f"quantile_{self._n}.npy"
        cmd = {
            "cmd": "quantile",
            "data": data,
            "bounds": [float(b) for b in bounds],
            "epsilon": float(epsilon),
            "q": float(q),
            "repeats": int(repeats),
            "seed": int(seed),
            "out": str(out),
        }
        self.call(cmd)
        arr = np.load(out)
        out.unlink()
        return arr

    def close(self):
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=30)
            except (OSError, subprocess.SubprocessError):
                self._proc.kill()
                self._proc.wait()
        self._err.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def start_worker(config):
    """(DiffprivlibWorker or None, note). Quick mode does not create a missing venv."""
    py, note = ensure_venv(create=not config.quick, log=config.log)
    if py is None:
        return None, note
    try:
        return DiffprivlibWorker(py, note), note
    except (OSError, RuntimeError, ValueError) as exc:
        return None, f"its worker failed to start ({exc})"


def versions_line(worker):
    v = worker.versions
    return (
        f"diffprivlib {v['diffprivlib']} with scikit-learn {v['sklearn']}, numpy {v['numpy']}, "
        f"scipy {v['scipy']} (Python {v['python']})"
    )
