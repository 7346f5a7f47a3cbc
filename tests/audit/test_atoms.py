"""Targeted atom tests (knorm.audit.atoms): exact atom ratios that see a 1 % bias at one atom.

At test sizes (scale 1/100 of the suite, a few seconds) every sound law must pass
(|z| <= 4.5: false-failure rate about 7e-6 per comparison for a random seed; the
seeds are fixed) and a broken law with a 20 % excess at 0 must be flagged. The
full-size run, where a 1 % excess is flagged and the three discrete-Laplace rates
of issue 21 get 6e8 draws each, is ``python -m knorm.audit --atoms``, which CI runs
beside the slow tests.
"""

import math

import numpy as np
import pytest
from scipy import stats

from knorm.audit.atoms import (
    ZeroHeavyNoise,
    _Laplace1D,
    audit_atoms,
    format_atom_table,
    run_atom_suite,
    standard_atom_cases,
)
from tests.settings import SEED

CASES = standard_atom_cases()


def test_the_suite_covers_every_exact_sampler_and_a_broken_law():
    names = " | ".join(c.name for c in CASES)
    for needed in ("dyadic fast path", "CKS path", "geometric", "l1 release", "l_inf lattice", "polytope", "BROKEN"):
        assert needed in names
    rates = {c.name for c in CASES if "discrete Laplace" in c.name and c.sound}
    assert {r.split("rate ")[1].split(" ")[0] for r in rates} >= {"1/128", "1/64", "3/1024"}
    big = [c.draws for c in CASES if "dyadic" in c.name]
    assert min(big) >= 6e8  # the power the issue asks for at rates 1/128, 1/64, 3/1024


def test_z_is_the_standardised_binomial_count():
    """A fixed set of draws: counts, exact log ratio and z by hand, and the binomial test agrees."""
    draws = np.array([0] * 50 + [1] * 30 + [-1] * 40 + [5] * 7)
    logpmf = lambda k: -np.abs(k[:, 0]) * 0.25  # noqa: E731
    [r] = audit_atoms(lambda m, gen: draws[:m], logpmf, [("0 vs +-1", [0], [-1, 1])], n=draws.size, rng=0)
    assert (r.count_a, r.count_b) == (50, 70)
    assert r.log_ratio == pytest.approx(0.25 - math.log(2), abs=1e-15)
    p = 1 / (1 + math.exp(-r.log_ratio))
    assert r.z == pytest.approx((50 - 120 * p) / math.sqrt(120 * p * (1 - p)), abs=1e-12)
    two_sided = stats.binomtest(50, 120, p).pvalue
    assert two_sided == pytest.approx(2 * stats.norm.sf(abs(r.z)), rel=0.35)  # normal approximation of the test
    assert r.estimate == pytest.approx(math.log(50 / 70))


@pytest.mark.parametrize("case", [c for c in CASES if c.sound], ids=lambda c: c.name)
def test_sound_laws_pass_at_test_size(case):
    [(_, results)] = run_atom_suite([case], scale=1 / 100, seed=SEED)
    table = format_atom_table([(case, results)])
    assert all(r.passed() for r in results), table
    assert all(r.count_a > 0 and r.count_b > 0 for r in results), table  # every atom is actually reached


def test_a_zero_heavy_law_is_flagged():
    """Power: a 20 % excess at 0 at rate 1/128 is flagged with 4e6 draws (z about 8 expected)."""
    p0 = math.tanh(1 / 256)
    broken = ZeroHeavyNoise(_Laplace1D(1, 128), p0, excess=0.2)
    [r] = audit_atoms(
        lambda m, gen: broken.sample(m, rng=gen),
        broken.unnormalised_logpmf,
        [("0 vs +-1", [0], [-1, 1])],
        n=4_000_000,
        rng=SEED,
    )
    assert not r.passed() and r.excess == pytest.approx(1.2, abs=0.05)
