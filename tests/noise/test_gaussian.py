"""The exact discrete Gaussian: its law by enumeration, by sampling, and its Renyi divergences (zCDP)."""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from knorm.noise import gaussian
from knorm.noise.gaussian import DiscreteGaussianNoise, GaussianNoise, discrete_gaussian, lattice_sigma2
from tests.noise.enumeration import check_law, dec, enumerate_law, spot_check

# The output of a rejected proposal: a restart of CKS Algorithm 3 (enumeration.Law.restart).
REJECT = "rejected"


def _target(sigma2):
    """P(Y = y) = exp(-y^2 / (2 sigma^2)) / sum_k exp(-k^2 / (2 sigma^2)), to 60 digits (independent of knorm)."""
    with localcontext() as ctx:
        ctx.prec = 60
        two_s2 = 2 * dec(sigma2)
        reach = int(40 * math.sqrt(float(sigma2))) + 40  # exp(-reach^2 / (2 sigma^2)) < 1e-300
        norm = sum((-(Decimal(k * k)) / two_s2).exp() for k in range(-reach, reach + 1))

    def target(y):
        with localcontext() as ctx:
            ctx.prec = 60
            return (-(Decimal(y * y)) / two_s2).exp() / norm

    return target


def _one_attempt(sigma2):
    params = gaussian._parameters(Fraction(sigma2), "test")

    def run(rng):
        y, ok = gaussian._attempt(*params, 1, rng)
        return int(y[0]) if ok[0] else REJECT

    return run


@pytest.mark.parametrize(
    "sigma2, threshold, max_pruned",
    [
        (Fraction(1), Fraction(1, 10**7), Fraction(1, 500)),  # t = 1
        (Fraction(1, 3), Fraction(1, 10**7), Fraction(1, 500)),  # sigma < 1: a = 3, b = 1, den = 6
        (Fraction(2), Fraction(1, 10**6), Fraction(1, 100)),  # t = 2: exponent (2|y| - 2)^2 / 16
        (Fraction(9, 4), Fraction(1, 10**6), Fraction(1, 100)),  # a rational sigma^2, t = 2
        pytest.param(Fraction(5), Fraction(1, 10**7), Fraction(1, 100), marks=pytest.mark.slow),  # t = 4
    ],
)
def test_discrete_gaussian_law_is_exact(sigma2, threshold, max_pruned):
    """CKS Algorithm 3, one attempt enumerated: every random input of the discrete Laplace proposal (the fast
    dyadic path, its negative-zero redraws followed as they come) and of the exact Bernoulli(exp(-q))
    acceptance, down to paths of probability ``threshold``. A rejection is a restart (Law.restart): the
    sampler's loop redraws rejected entries independently, so P(y) = P_1(y) / (1 - P_reject), and the
    target N_Z(0, sigma^2) must lie within the exact bounds at every atom."""
    law = enumerate_law(_one_attempt(sigma2), threshold=threshold, restart=REJECT)
    check_law(law, _target(sigma2), max_pruned=max_pruned)
    assert 0 in law.atoms and 1 in law.atoms and -1 in law.atoms


def test_discrete_gaussian_classes_are_honest():
    spot_check(_one_attempt(Fraction(9, 4)), threshold=Fraction(1, 10**4), restart=REJECT)


def test_a_biased_acceptance_is_caught():
    """Mutation check: accepting with exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) for a sigma^2 1% off fails."""
    sigma2 = Fraction(2)
    wrong = gaussian._parameters(Fraction(202, 100), "test")
    right_t = gaussian._parameters(sigma2, "test")[0]

    def run(rng):
        y, ok = gaussian._attempt(right_t, *wrong[1:], 1, rng)
        return int(y[0]) if ok[0] else REJECT

    law = enumerate_law(run, threshold=Fraction(1, 10**6), restart=REJECT)
    with pytest.raises(AssertionError):
        check_law(law, _target(sigma2), max_pruned=Fraction(1, 100))


@pytest.mark.parametrize("num, den", [(4, 1), (1000, 3), (10**6, 1)])
def test_discrete_gaussian_sampled(num, den):
    """10^5 draws against the exact pmf: chi-square on the central atoms (tails pooled)."""
    sigma2 = Fraction(num, den)
    y = discrete_gaussian(num, den, 100_000, rng=20_261_127)
    assert y.dtype == np.int64
    target = _target(sigma2)
    s = math.sqrt(sigma2)
    edges = np.unique(np.round(np.linspace(-3 * s, 3 * s, 31)).astype(int))
    values = np.arange(edges[0] - 200 * int(s + 1), edges[-1] + 200 * int(s + 1))
    p = np.array([float(target(int(v))) for v in values]) if s < 100 else stats.norm.pdf(values, scale=s)
    p = p / p.sum()
    cells = np.searchsorted(edges, values, side="right")
    expected = np.bincount(cells, weights=p) * y.size
    observed = np.bincount(np.searchsorted(edges, y, side="right"), minlength=expected.size)[: expected.size]
    assert observed.sum() == y.size
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    assert abs(y.var() / float(sigma2) - 1) < 0.02


def test_lattice_sigma2_rounds_up_little():
    for target in (Fraction(1, 3), Fraction(7, 2), Fraction(1000), Fraction(10**6) + Fraction(1, 7), Fraction(2**55)):
        s2 = lattice_sigma2(target)
        assert target <= s2 <= target * (1 + Fraction(1, 4096)) + Fraction(1, 4096)
        gaussian._parameters(s2, "test")  # the exact sampler takes it


def test_refusals():
    with pytest.raises(ValueError, match=r"The 'num' parameter of discrete_gaussian must be an int >= 1"):
        discrete_gaussian(0, 1)
    with pytest.raises(TypeError, match=r"The 'den' parameter of discrete_gaussian must be an int >= 1"):
        discrete_gaussian(1, 0.5)
    with pytest.raises(ValueError, match=r"The 'sigma2' parameter of discrete_gaussian must give the exact sampler"):
        discrete_gaussian(2**61 + 1, 3)


# -- the zCDP claim on small cases: Renyi divergences of shifted discrete Gaussians -----------------
def _renyi(sigma2, shift, alpha, reach=400):
    """D_alpha(N_Z(shift, sigma^2) || N_Z(0, sigma^2)), summed over the support (floats, far tails cut)."""
    y = np.arange(-reach, reach + 1, dtype=float)
    logp = -((y - shift) ** 2) / (2 * sigma2)
    logq = -(y**2) / (2 * sigma2)
    lz = np.logaddexp.reduce(logq)  # the same normaliser for both (an integer shift)
    return np.logaddexp.reduce(alpha * (logp - lz) + (1 - alpha) * (logq - lz)) / (alpha - 1)


@pytest.mark.parametrize("sigma2", [0.3, 1.0, 2.25, 10.0])
@pytest.mark.parametrize("shift", [1, 2, 3])
def test_renyi_divergence_within_zcdp(sigma2, shift):
    """CKS 2020 Theorem 14 in one dimension: D_alpha <= alpha shift^2 / (2 sigma^2) for every alpha, with equality
    where alpha * shift is an integer, so rho = shift^2 / (2 sigma^2) is tight and has no discrete correction."""
    rho = shift**2 / (2 * sigma2)
    for alpha in (1.01, 1.5, 2.0, 3.0, 7.5, 20.0):
        d = _renyi(sigma2, shift, alpha)
        assert d <= alpha * rho * (1 + 1e-12) + 1e-12
        if float(alpha * shift).is_integer():
            assert d == pytest.approx(alpha * rho, rel=1e-9)


def test_discrete_gaussian_noise_law():
    law = DiscreteGaussianNoise(Fraction(100), 3)
    draws = law.sample(4, rng=1)
    assert draws.shape == (4, 3) and draws.dtype == np.int64
    assert law.scale == 10.0 and "exact discrete Gaussian" in law.sampler
    half = np.asarray(law.marginal_half_width(0.05))
    assert np.all(half == half[0]) and 19 <= half[0] <= 21  # about 1.96 sigma, integer, conservative
    cont = GaussianNoise(np.diag([1.0, 2.0]), "diagonal")
    np.testing.assert_allclose(np.asarray(cont.marginal_half_width(0.05)), 1.959964 * np.array([1.0, 2.0]), rtol=1e-6)
    assert cont.sample(3, rng=0).shape == (3, 2)
