"""A cache of built hulls: in memory, and on disk as cutting directions only.

A certified outer hull is {u : c_k.u <= h(c_k)} over its cutting directions c_k. Finding
good directions takes time; certifying them takes one exact support evaluation each. So
the disk cache stores only the directions, and :func:`load_directions` hands them back
for h(c_k) to be recomputed exactly from the statistic (as the shipped regression table
does, :mod:`knorm.sensitivity.cut_ball`). Whatever a cache file holds, every cut is then
c.u <= h(c) with the true h: the ball still contains S_T and its sensitivity is computed
afresh, so a stale or tampered file can cost volume, never privacy. Files that are not
a finite array of the right shape are ignored (and the hull rebuilt).

Location: ``$KNORM_CACHE_DIR/hulls`` if that variable is set (set it to an empty string,
``0`` or ``off`` to disable the disk cache), else ``$XDG_CACHE_HOME/knorm/hulls``, else
``~/.cache/knorm/hulls``. Keys hash the statistic's coefficients, its record domain, the
neighbouring relation and the builder's version, so a hull is built once per statistic.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["cache_dir", "clear_memory", "load_directions", "space_key", "store_directions"]

#: Environment variable relocating (or, set to "", "0" or "off", disabling) the disk cache.
CACHE_ENV = "KNORM_CACHE_DIR"
# Bump when a builder changes what its directions mean.
_VERSION = "hull-1"
_OFF = {"", "0", "off", "no", "none", "false"}
_MEMORY: dict = {}


def cache_dir():
    """Return the directory of the disk cache of hulls, or None when it is disabled.

    Returns
    -------
    pathlib.Path or None
        See the module notes for the order of the environment variables.
    """
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return None if env.strip().lower() in _OFF else Path(env).expanduser() / "hulls"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "knorm" / "hulls"


def space_key(space, tag):
    """Return a hex key for a space's statistic and domain, or None when it has no fingerprint.

    Parameters
    ----------
    space : SensitivitySpace
        A space built from a :class:`~knorm.sensitivity.QuadraticStatistic` (its
        coefficients and box) or from finitely many record values.
    tag : str
        What is cached (the builder and its settings).

    Returns
    -------
    str or None
        A SHA-256 over the builder version, the tag, the neighbouring relation, the
        dimension and the statistic's arrays; None for spaces given only by a support
        function (a function has no stable fingerprint).
    """
    from knorm.sensitivity.quadratic import QuadraticStatistic

    t = space.statistic
    arrays: tuple[np.ndarray, ...]
    if isinstance(t, QuadraticStatistic):
        arrays = (t.A, t.b, t.lower, t.upper)
    elif space.record_points is not None:
        arrays = (np.asarray(space.record_points),)
    else:
        return None
    h = hashlib.sha256(f"{_VERSION}|{tag}|{space.neighbours}|{space.dim}".encode())
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def memory_get(key):
    """Return the object built in this process under ``key``, or None."""
    return None if key is None else _MEMORY.get(key)


def memory_put(key, value):
    """Keep ``value`` for this process under ``key``."""
    if key is not None:
        _MEMORY[key] = value


def clear_memory():
    """Forget every hull built in this process (the disk cache is kept)."""
    _MEMORY.clear()


def load_directions(key, dim):
    """Return the cached cutting directions for ``key``, or None.

    Parameters
    ----------
    key : str or None
        From :func:`space_key`.
    dim : int
        Their expected length.

    Returns
    -------
    ndarray of shape (k, dim) or None
        Finite, non-zero rows; None if absent, disabled, unreadable or malformed.
        They are directions only: the caller recomputes h(c) for each (module notes).
    """
    folder = cache_dir()
    if key is None or folder is None:
        return None
    path = folder / f"{key}.npz"
    try:
        with np.load(path, allow_pickle=False) as f:
            c = np.asarray(f["directions"], dtype=float)
    except (OSError, KeyError, ValueError):
        return None
    if c.ndim != 2 or c.shape[1] != dim or not len(c) or not np.all(np.isfinite(c)):
        return None
    c = c[np.any(c != 0, axis=1)]
    return c if len(c) else None


def store_directions(key, directions):
    """Write cutting directions for ``key`` (atomically); return the path, or None if not written.

    Parameters
    ----------
    key : str or None
        From :func:`space_key`.
    directions : ndarray of shape (k, m)
        The cutting directions (never their support values: they are recomputed).

    Returns
    -------
    pathlib.Path or None
        Where the file was written; None when the cache is disabled or not writable.
    """
    folder = cache_dir()
    if key is None or folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npz")
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, directions=np.asarray(directions, dtype=float))
        path = folder / f"{key}.npz"
        os.replace(tmp, path)
        return path
    except OSError:
        return None
