"""knorm.stats.release sums its records in exact fixed point on a lattice release (Casacuberta et al. 2022)."""

import numpy as np

from knorm.sensitivity import FiniteDomain, QuadraticStatistic
from knorm.stats import release
from knorm.stats.generic import _quadratic_error_magnitude


def _moments():
    return QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [1e6], names=["sum x", "sum x^2"])


def test_release_is_order_invariant_bit_for_bit():
    # Casacuberta et al. 2022: a binary64 sum depends on the order of the records. Here the exact
    # sum sits just above a rounding midpoint of the lattice, 2.5 gamma: added one by one to the big
    # record the two tiny ones are lost (0.375 ulp each: the midpoint, which rounds half to even,
    # down), added to each other first they are not (0.75 ulp: up).
    t = QuadraticStatistic([[[0.0]]], [[1.0]], [0.0], [1.0], names=["sum x"])
    gamma = float(release(t, np.zeros((1, 1)), epsilon=1.0, rng=0).lattice_spacing[0])
    tiny = 0.375 * np.spacing(2.5 * gamma)
    big_first, small_first = np.array([[2.5 * gamma], [tiny], [tiny]]), np.array([[tiny], [tiny], [2.5 * gamma]])
    floats = [np.rint(np.sum(t(v), axis=0) / gamma) for v in (big_first, small_first)]
    assert floats[0] != floats[1], "the binary64 sums should round to different lattice points"
    outs = [release(t, v, epsilon=1.0, rng=5).value for v in (big_first, small_first)]
    assert np.array_equal(outs[0], outs[1])


def test_release_states_fixed_point_and_lattice():
    r = release(_moments(), np.linspace(0, 1e6, 1000)[:, None], epsilon=1.0, rng=0)
    assert "exact in integer arithmetic" in r.sampler and "fixed point" in r.sampler


def test_finite_domain_release_is_exact_fixed_point():
    records = np.array([[0.0], [1.0], [2.0]])
    data = records[np.random.default_rng(3).integers(0, 3, 5000)]
    r = release(lambda z: np.c_[z, z**2], data, FiniteDomain(records), epsilon=1.0, rng=1)
    assert "fixed point" in r.sampler


def test_quadratic_error_bound_covers_binary64_evaluation():
    # Against exact rational arithmetic on random records of a 3-variable quadratic statistic.
    from fractions import Fraction

    rng = np.random.default_rng(11)
    A = rng.normal(size=(2, 3, 3))
    t = QuadraticStatistic(A, rng.normal(size=(2, 3)), [-5.0] * 3, [7.0] * 3, const=[0.3, -1.1])
    bound = _quadratic_error_magnitude(t) * 2.0**-53
    X = rng.uniform(-5, 7, size=(200, 3))
    got = t(X)
    for x, g in zip(X, got):
        for j in range(2):
            xs = [Fraction(v) for v in x]
            exact = sum(Fraction(t.A[j, a, b]) * xs[a] * xs[b] for a in range(3) for b in range(3))
            exact += sum(Fraction(t.b[j, a]) * xs[a] for a in range(3)) + Fraction(t.const[j])
            assert abs(Fraction(g[j]) - exact) <= Fraction(bound[j])
