"""Privacy of every knorm.stats function, checked against brute force over records.

One table of cases (numpyro style): for each function, neighbouring relation and declared
domain, a finite set of records that contains the domain's extreme records. From it:

* S_T by brute force: t(a) - t(b) over all record pairs (replace-one) or +-t(a) (add/remove),
  with t(a) the raw statistic of the one-record dataset, computed by the function itself
  inside nonprivate(). The release's certified sensitivity must cover every point (the ball's
  norm over Delta is <= 1), and reach it (the records include the extremes, so the
  sensitivity is exact, not loose).
* The density ratio of the noise law at the released value, and at Monte Carlo draws of the
  public law around it, between the worst-case neighbouring datasets never exceeds
  exp(epsilon); far out on the ray from T(X') through T(X) it equals exp(epsilon).
"""

import functools
import itertools
import math

import numpy as np
import pytest

import knorm.stats as dp
from knorm.sensitivity import QuadraticStatistic
from tests.settings import SEED
from tests.stats._helpers import (
    grid_records,
    log_density_ratio,
    noise_draws,
    raw_value,
    record_values,
    root,
    worst_pair,
)

EPS = 0.7
_MOMENTS_T = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0], names=["sum x", "sum x^2"])


def _line(lo, hi, k=41):
    return np.linspace(lo, hi, k)[:, None]


def _sparse_records(p, b, levels=5):
    """Records of [-b, b]^p with at most one non-zero entry."""
    grid = grid_records(-b, b, levels) if p == 1 else grid_records([-b] * p, [b] * p, levels)
    return grid[(grid != 0).sum(axis=1) <= 1]


def _binary_records(d, k):
    cube = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    return cube[cube.sum(axis=1) <= k]


# (id, function, keyword arguments, records that include the domain's extremes)
CASES = [
    ("sum 1 column", dp.sum, dict(bounds=(0, 10)), _line(0, 10)),
    ("sum 2 columns", dp.sum, dict(bounds=([0, -1], [1, 3])), grid_records([0, -1], [1, 3], 5)),
    ("sum l0_bound", dp.sum, dict(bounds=(-2, 2), l0_bound=1), _sparse_records(3, 2.0)),
    ("mean 2 columns", dp.mean, dict(bounds=([0, -1], [1, 3])), grid_records([0, -1], [1, 3], 5)),
    ("moments", dp.moments, dict(bounds=(0, 10)), _line(0, 10)),
    ("var", dp.var, dict(bounds=(-3, 5), ddof=0), _line(-3, 5)),
    ("covariance", dp.mean_and_covariance, dict(bounds=([0, -1], [2, 1])), grid_records([0, -1], [2, 1], 5)),
    ("histogram", dp.histogram, dict(bins=[0, 1, 2, 3, 4]), _line(0.5, 3.5, 4)),
    ("histogramdd", dp.histogramdd, dict(bins=[[0, 1, 2], [0, 1, 2, 3]]), grid_records([0.5, 0.5], [1.5, 2.5], 3)),
    ("vote", dp.vote, {}, np.array(list(itertools.permutations(range(4))), dtype=float)),
    ("count", dp.count, dict(l0_bound=2), _binary_records(3, 2)),
    ("release", functools.partial(dp.release, _MOMENTS_T), {}, _line(0, 10, 6)),  # 60 ms a call: few records
]
PARAMS = [
    pytest.param(fn, kwargs, records, neighbours, id=f"{name}, {neighbours}")
    for name, fn, kwargs, records in CASES
    for neighbours in ("replace", "add_remove")
] + [  # norm='mean' exists under replace-one neighbours only (refused under add/remove)
    pytest.param(dp.var, dict(bounds=(-3.3, 7.1), norm="mean"), _line(-3.3, 7.1), "replace", id="var mean focus"),
    pytest.param(dp.moments, dict(bounds=(0, 10), norm="mean"), _line(0, 10), "replace", id="moments mean focus"),
]


@pytest.mark.parametrize("fn, kwargs, records, neighbours", PARAMS)
def test_certified_sensitivity_covers_brute_force_space_and_is_attained(fn, kwargs, records, neighbours):
    values = record_values(fn, records, epsilon=EPS, neighbours=neighbours, **kwargs)
    release = fn(records, epsilon=EPS, neighbours=neighbours, rng=SEED, **kwargs)
    largest, _, _ = worst_pair(release, values, neighbours)
    assert largest <= 1 + 1e-9, "a point of S_T lies outside the certified Delta K"
    assert largest >= 1 - 1e-9, "the certified sensitivity is not attained by the extreme records"
    assert root(release).sensitivity.kind in ("exact", "bound")
    scale = root(release).sensitivity.value / EPS
    if root(release).lattice_spacing is None:
        assert root(release).noise_scale == pytest.approx(scale, rel=1e-12)
    else:  # the lattice covers Delta + its rounding slack, at most 1% more (0.1% for norm='mean')
        assert scale <= root(release).noise_scale <= (1.001 if "norm" in kwargs else 1.01) * scale


@pytest.mark.parametrize("fn, kwargs, records, neighbours", PARAMS)
def test_density_ratio_between_worst_case_neighbours_is_at_most_exp_epsilon(fn, kwargs, records, neighbours):
    values = record_values(fn, records, epsilon=EPS, neighbours=neighbours, **kwargs)
    release0 = fn(records, epsilon=EPS, neighbours=neighbours, rng=SEED, **kwargs)
    _, a, b = worst_pair(release0, values, neighbours)
    base = records[np.random.default_rng(SEED).integers(0, len(records), 30)]
    data = np.vstack([base, records[a : a + 1]])
    # Replace-one: the record a becomes b. Add/remove: a is removed.
    neighbour = np.vstack([base, records[b : b + 1]]) if neighbours == "replace" else base
    t = raw_value(fn, data, epsilon=EPS, neighbours=neighbours, **kwargs)
    t2 = raw_value(fn, neighbour, epsilon=EPS, neighbours=neighbours, **kwargs)
    release = fn(data, epsilon=EPS, neighbours=neighbours, rng=SEED + 1, **kwargs)
    z = root(release).value
    around = noise_draws(release, t, 2000, SEED)
    ratios = log_density_ratio(release, np.vstack([z, around]), t, t2)
    assert np.max(np.abs(ratios)) <= EPS * (1 + 1e-9)
    # Far out on the ray from T(X') through T(X) the ratio is epsilon (worst case attained);
    # on a lattice, eps ||rint(t/g) - rint(t2/g)||_K / Delta~, within the 1% slack and rounding.
    far = t + 1e3 * (t - t2)
    worst = float(log_density_ratio(release, far, t, t2))
    if root(release).lattice_spacing is None:
        assert worst == pytest.approx(EPS, rel=1e-6)
    else:
        assert EPS * 0.97 <= worst <= EPS * (1 + 1e-9)


def test_the_density_ratio_check_can_fail():
    # Half the certified sensitivity: the same worst-case neighbours then exceed exp(epsilon).
    records = _line(0, 10)
    values = record_values(dp.moments, records, bounds=(0, 10), epsilon=EPS)
    release = dp.moments(records, (0, 10), epsilon=EPS, rng=SEED)
    largest, a, b = worst_pair(release, values, "replace")
    halved = root(release).sensitivity.value / 2
    t, t2 = values[a], values[b]
    loss = float(np.asarray(root(release).ball.norm(t - t2))) / halved * EPS
    assert largest == pytest.approx(1.0) and loss == pytest.approx(2 * EPS)
    assert not math.isclose(loss, EPS)
