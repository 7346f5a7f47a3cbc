"""The measured gains of shaped over spherical Gaussian noise in knorm.stats under rho (issue 25).

Used by tests/stats/test_zcdp.py (the done-when thresholds) and, run as a script, prints
the figures quoted in docs/guide/zcdp.md:

    cd knorm && PYTHONPATH=src python -m tests.stats.zcdp_gains

Each comparison is at equal rho. The spherical Gaussian is N(0, Delta_2^2 / (2 rho) I) on
the statistic's exact l2 sensitivity Delta_2, written here independently of knorm.stats.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import knorm.stats as dp
from knorm.mechanisms import nonprivate
from knorm.stats._core import standard_box
from knorm.stats._transforms import CovarianceFromMoments
from knorm.stats.covariance import covariance_matrix

RHO = 0.5


def ballots(n, d, rng):
    """n Borda ballots over d candidates: one random permutation of 0, ..., d - 1 per voter."""
    return np.array([rng.permutation(d) for _ in range(n)], dtype=float)


def vote_mse(d=100, releases=200, seed=0, neighbours="add_remove"):
    """(mean squared error of dp.vote(rho=RHO) over the d totals, that of the spherical Gaussian)."""
    rng = np.random.default_rng(seed)
    B = ballots(40, d, rng)
    truth = B.sum(axis=0)
    err = [np.sum((dp.vote(B, rho=RHO, neighbours=neighbours, rng=rng).value - truth) ** 2) for _ in range(releases)]
    if neighbours == "add_remove":
        delta2 = sum(i * i for i in range(d))  # ||(0, ..., d - 1)||^2
        spherical = d * delta2 / (2 * RHO)
    else:  # the spherical Gaussian on the d - 1 released totals (exact l2 sensitivity), the last rebuilt
        even = 1 if d % 2 == 0 else 0
        delta2 = d * (d * d - 1) // 3 - even
        spherical = 2 * (d - 1) * delta2 / (2 * RHO)
    return float(np.mean(err)), spherical


def count_data(n, d, k, rng):
    """n records of d indicators, each with exactly k ones (the l0 bound attained)."""
    X = np.zeros((n, d))
    for i in range(n):
        X[i, rng.choice(d, k, replace=False)] = 1.0
    return X


def count_mse(d=100, k=50, releases=200, seed=1):
    """(mean squared error of dp.count(rho=RHO, l0_bound=k) over the d counts, that of the spherical Gaussian)."""
    rng = np.random.default_rng(seed)
    X = count_data(60, d, k, rng)
    truth = X.sum(axis=0)
    out = []
    for _ in range(releases):
        r = dp.count(X, rho=RHO, l0_bound=k, rng=rng)
        assert r.value.dtype == np.int64
        out.append(np.sum((r.value - truth) ** 2))
    return float(np.mean(out)), d * k / (2 * RHO)  # spherical: Delta_2^2 = k


def _raw_moments(X):
    """(sum x_j, sum x_j x_k (j < k), sum x_j^2), the second-moment statistic in the units of x."""
    p = X.shape[1]
    pairs = list(itertools.combinations(range(p), 2))
    return np.concatenate([X.sum(axis=0), [np.dot(X[:, j], X[:, k]) for j, k in pairs], (X * X).sum(axis=0)])


def _raw_l2(lo, hi):
    """The exact l2 sensitivity of the raw second moments on a box with lo >= 0 (replace-one).

    Every coordinate (x_j, x_j x_k, x_j^2) is non-decreasing in each x_j on a non-negative
    box, so each moves most between the corners hi and lo, simultaneously.
    """
    assert np.all(lo >= 0)
    return float(np.linalg.norm(_raw_moments(hi[None, :]) - _raw_moments(lo[None, :])))


def covariance_errors(X, lo, hi, releases=200, seed=2):
    """Mean Frobenius errors of dp.covariance(rho=RHO) and of two spherical Gaussians at equal rho.

    Returns (shaped, spherical on the raw second moments with their exact l2 sensitivity,
    spherical on the standardised moments). The last works in knorm's own coordinates
    z = (x - c) / a in [-1, 1] and takes Delta_2 = max_s sqrt(4 s (1 + p - s)), a value S_T
    attains (z = 1 against z' = -1 on s columns): a lower bound on what any spherical
    Gaussian there must pay, so an optimistic peer. All go through the same post-processing
    (CovarianceFromMoments, projected on the positive semi-definite matrices); the error is
    against the covariance of the clipped data.
    """
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    Xc = np.clip(X, lo, hi)
    n, p = Xc.shape
    with nonprivate():
        truth = covariance_matrix(dp.covariance(Xc, (lo, hi), epsilon=1.0).value)
    shaped = [
        np.linalg.norm(covariance_matrix(dp.covariance(Xc, (lo, hi), rho=RHO, rng=rng).value) - truth)
        for _ in range(releases)
    ]
    t = _raw_moments(Xc)
    sigma = _raw_l2(lo, hi) / math.sqrt(2 * RHO)
    post = CovarianceFromMoments(p, n=n)
    spherical = [
        np.linalg.norm(covariance_matrix(post(t + sigma * rng.standard_normal(t.size))[p:]) - truth)
        for _ in range(releases)
    ]
    c, a = standard_box(lo, hi)
    tz = _raw_moments((Xc - c) / a)
    sigma_z = max(math.sqrt(4 * s * (1 + p - s)) for s in range(1, p + 1)) / math.sqrt(2 * RHO)
    post_z = CovarianceFromMoments(p, n=n, centre=tuple(c.tolist()), scale=tuple(a.tolist()))
    standardised = [
        np.linalg.norm(covariance_matrix(post_z(tz + sigma_z * rng.standard_normal(tz.size))[p:]) - truth)
        for _ in range(releases)
    ]
    return float(np.mean(shaped)), float(np.mean(spherical)), float(np.mean(standardised))


#: Six columns of the California housing data with declared non-negative bounds (under 5% clipped).
HOUSING_COLUMNS = {
    "housing_median_age": (0.0, 52.0),
    "median_income": (0.0, 10.0),
    "latitude": (32.0, 42.0),
    "total_rooms": (0.0, 6000.0),
    "population": (0.0, 3000.0),
    "households": (0.0, 1000.0),
}


def housing_columns():
    """(X, lo, hi) of the six housing columns (the packaged data)."""
    import pandas as pd

    from knorm.experiments.data import housing_path

    frame = pd.read_csv(housing_path())
    X = frame[list(HOUSING_COLUMNS)].to_numpy(dtype=float)
    lo = np.array([b[0] for b in HOUSING_COLUMNS.values()])
    hi = np.array([b[1] for b in HOUSING_COLUMNS.values()])
    return X, lo, hi


def main():  # pragma: no cover - prints the figures of docs/guide/zcdp.md
    mse, sph = vote_mse()
    print(f"vote, d = 100, add/remove: MSE {mse:.4g} vs spherical {sph:.4g}: {mse / sph:.3f}x")
    mse, sph = vote_mse(neighbours="replace")
    print(f"vote, d = 100, replace (on the d totals): MSE {mse:.4g} vs spherical {sph:.4g}: {mse / sph:.3f}x")
    mse, sph = count_mse()
    print(f"count, d = 100, k = 50, add/remove: MSE {mse:.4g} vs spherical {sph:.4g}: {mse / sph:.3f}x")
    rng = np.random.default_rng(3)
    uniform = rng.uniform(0, 1, size=(2000, 6))
    for what, (X, lo, hi) in [
        ("6 uniform columns on [0, 1], n = 2000", (uniform, np.zeros(6), np.ones(6))),
        ("6 housing columns, n = 20640", housing_columns()),
    ]:
        a, b, z = covariance_errors(X, lo, hi)
        print(
            f"covariance, {what}: Frobenius {a:.4g}; spherical on the raw moments {b:.4g} ({a / b:.3f}x), "
            f"on the standardised moments {z:.4g} ({a / z:.3f}x)"
        )


if __name__ == "__main__":  # pragma: no cover
    main()
