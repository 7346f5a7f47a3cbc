"""Helpers shared by the tests of knorm.stats: containers, noiseless values, S_T by brute force."""

import itertools
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from knorm.mechanisms import nonprivate
from knorm.mechanisms.lattice import lattice_noise
from knorm.noise import KNormNoise

CONTAINERS = ["numpy", "pandas", "dask"]


def container(X, kind):
    """``X`` (1-D or 2-D numpy) as a numpy array, a pandas Series/DataFrame or a Dask array/DataFrame."""
    if kind == "numpy":
        return X
    if kind == "pandas":
        pd = pytest.importorskip("pandas")
        return pd.Series(X) if X.ndim == 1 else pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        return da.from_array(X, chunks=max(1, len(X) // 3))
    if kind == "dask dataframe":
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(container(X, "pandas"), npartitions=3)
    raise ValueError(kind)


def root(release):
    """The raw release a post-processed value comes from (or the release itself)."""
    return release if release.parent is None else release.parent


def noiseless(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` inside nonprivate(): the exact statistic, no noise, no charge."""
    with nonprivate():
        return fn(*args, **kwargs)


def raw_value(fn, *args, **kwargs):
    """The raw statistic (the coordinates the noise is added to) of ``fn`` on the data, exactly."""
    return np.asarray(root(noiseless(fn, *args, **kwargs)).value)


def record_values(fn, records, **kwargs):
    """t(x) for each record: the raw statistic of the one-record dataset, in released coordinates."""
    return np.array([raw_value(fn, r[None, :], **kwargs) for r in records])


def sensitivity_space(values, neighbours):
    """Points of S_T from per-record values: t(a) - t(b) for all pairs (replace) or +-t(a) (add/remove)."""
    if neighbours == "replace":
        return (values[:, None, :] - values[None, :, :]).reshape(-1, values.shape[1])
    return np.vstack([values, -values])


def worst_pair(release, values, neighbours):
    """(largest ||u||_K / Delta over the points u of S_T, index a, index b) for the release's ball."""
    ball, delta = root(release).ball, root(release).sensitivity.value
    if neighbours == "replace":
        g = np.asarray(ball.norm(values[:, None, :] - values[None, :, :])) / delta
        a, b = np.unravel_index(np.argmax(g), g.shape)
        return float(g[a, b]), int(a), int(b)
    g = np.asarray(ball.norm(values)) / delta
    a = int(np.argmax(g))
    return float(g[a]), a, None


def grid_records(lo, hi, levels):
    """All records of a product grid of ``levels`` values per column between lo and hi."""
    axes = [np.linspace(a, b, levels) for a, b in zip(np.atleast_1d(lo), np.atleast_1d(hi))]
    return np.array(list(itertools.product(*axes)), dtype=float)


def lattice_law(release):
    """(integer noise law, spacing) of a release drawn on a lattice, or None for a continuous release.

    Rebuilt from the record alone: the ball, the spacing and the noise scale Delta~ / eps
    (whatever Delta~ covers: rounding slack, computation error, or neither for counts).
    """
    r = root(release)
    if r.lattice_spacing is None:
        return None
    return SimpleNamespace(
        noise=lattice_noise(r.ball, r.lattice_spacing, Fraction(1.0 / r.noise_scale)), spacing=r.lattice_spacing
    )


def log_density_ratio(release, z, t, t2):
    """log f(z | T = t) - log f(z | T = t2) for the release's noise law, from its norm.

    Continuous: the density is proportional to exp(-||v||_K / scale), scale = Delta /
    epsilon, so the normalising constants cancel. Lattice: z = gamma (round(T / gamma) + k)
    and the exact pmf of k is proportional to exp(-eps ||k||_K / Delta~) (its
    ``unnormalised_logpmf``), z given in lattice units of the release.
    """
    r = root(release)
    law = lattice_law(release)
    if law is not None:
        k = np.rint(np.asarray(z) / law.spacing).astype(np.int64)
        lp = law.noise.unnormalised_logpmf
        units = [np.rint(np.asarray(v) / law.spacing).astype(np.int64) for v in (t, t2)]
        return np.asarray(lp(k - units[0])) - np.asarray(lp(k - units[1]))
    norm = r.ball.norm
    return (np.asarray(norm(np.asarray(z) - t2)) - np.asarray(norm(np.asarray(z) - t))) / r.noise_scale


def noise_draws(release, t, n, seed):
    """``n`` outputs of the release's mechanism at T = t (on its lattice when it has one)."""
    r = root(release)
    law = lattice_law(release)
    if law is not None:
        return (np.rint(t / law.spacing) + law.noise.sample(n, rng=seed)) * law.spacing
    return t + KNormNoise(r.ball, r.noise_scale).public_law_sample(n, seed=seed)
