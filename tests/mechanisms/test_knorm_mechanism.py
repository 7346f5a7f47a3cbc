import math

import numpy as np
import pytest

from knorm import KNormMechanism, LpBall, Sensitivity
from knorm.sensitivity import UnsafeSensitivityError
from tests.settings import SEED

SQRT2 = math.sqrt(2)
DELTA = {1: 3.125, 2: 0.25 * math.sqrt(71 + 8 * SQRT2), math.inf: 2.0}


def example_21_space(n=2000, seed=SEED):
    """Points of S_T for Example 2.1: (x1 - x2, 2 x1^2 - 2 x2^2), x in [-1, 1]."""
    x = np.random.default_rng(seed).uniform(-1, 1, size=(n, 2))
    x = np.vstack([x, [[1, -1], [-1, 1], [1, 0], [0.25, -1], [1.25 / 2, -0.625]]])
    return np.stack([x[:, 0] - x[:, 1], 2 * x[:, 0] ** 2 - 2 * x[:, 1] ** 2], axis=1)


@pytest.mark.parametrize("p", [1, 2, math.inf])
def test_privacy_loss_on_sensitivity_space(p):
    mech = KNormMechanism(LpBall(2, p), DELTA[p], epsilon=0.8)
    u = example_21_space()
    loss = mech.privacy_loss(u)
    np.testing.assert_allclose(loss, 0.8 * np.linalg.norm(u, ord=p, axis=1) / DELTA[p])
    assert loss.max() <= 0.8 + 1e-12
    assert loss.max() > 0.8 * 0.99  # the exact sensitivity is (nearly) attained


def test_privacy_loss_exact_values():
    mech = KNormMechanism(LpBall(3, 1), sensitivity=4.0, epsilon=0.5)
    assert mech.privacy_loss([1.0, -2.0, 1.0]) == 0.5
    assert mech.privacy_loss([0.0, 0.0, 0.0]) == 0.0
    assert mech.privacy_loss([8.0, 0.0, 0.0]) == 1.0


@pytest.mark.parametrize("p", [1, 2, 3, math.inf])
def test_brute_force_density_ratio_agrees_with_privacy_map(p):
    # log f(z - t) - log f(z - t') over many outputs z never exceeds eps ||u||/Delta,
    # and reaches it on the ray beyond t' away from t.
    mech = KNormMechanism(LpBall(2, p), 2.0, epsilon=1.3)
    t, t2 = np.array([0.3, -0.2]), np.array([-1.1, 0.4])
    loss = mech.privacy_loss(t - t2)
    z = t + mech.sample_noise(100_000, rng=SEED)
    ratio = mech.log_density_ratio(z, t, t2)
    assert ratio.max() <= loss + 1e-9
    far = t + 50 * (t - t2)
    assert mech.log_density_ratio(far, t, t2) == pytest.approx(loss, rel=1e-9)


def test_release_shapes_and_rng():
    mech = KNormMechanism(LpBall(3, math.inf), 2.0, 1.0)
    t = np.array([1.0, 2.0, 3.0])
    assert mech.release(t, rng=1).value.shape == (3,)
    assert np.asarray(mech.release(np.tile(t, (5, 1)), rng=1)).shape == (5, 3)
    np.testing.assert_array_equal(mech.release(t, rng=9).value, mech.release(t, rng=9).value)
    # The default lattice release lands on gamma Z^3 exactly.
    gamma = mech.lattice.spacing
    units = mech.release(t, rng=9).value / gamma
    np.testing.assert_array_equal(units, np.round(units))
    # The continuous release adds exactly the noise sample_noise draws from the same seed.
    cont = KNormMechanism(LpBall(3, math.inf), 2.0, 1.0, sampler="continuous")
    np.testing.assert_allclose(cont.release(t, rng=9).value - t, cont.sample_noise(rng=9))


def test_noise_scale_is_delta_over_epsilon():
    mech = KNormMechanism(LpBall(4, 2), 3.0, 0.25)
    assert mech.noise.scale == 12.0
    v = mech.sample_noise(50_000, rng=SEED)
    # E||V|| = m * Delta/eps for Gamma(m, Delta/eps); a mechanism whose noise
    # ignored epsilon would fail this.
    assert np.linalg.norm(v, axis=1).mean() == pytest.approx(4 * 12.0, rel=0.02)


def test_sensitivity_kinds():
    ball = LpBall(2, 2)
    for kind in ("exact", "bound", "declared"):
        assert KNormMechanism(ball, Sensitivity(2.0, kind), 1.0).sensitivity.value == 2.0
    est = Sensitivity(2.0, "estimate", "max over 10^4 sampled pairs")
    with pytest.raises(
        UnsafeSensitivityError, match="exact or a certified upper bound.*unsafe_allow_estimated_sensitivity"
    ):
        KNormMechanism(ball, est, 1.0)
    mech = KNormMechanism(ball, est, 1.0, unsafe_allow_estimated_sensitivity=True)
    assert mech.sensitivity.kind == "estimate"


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (
            dict(epsilon=0),
            ValueError,
            "'epsilon' parameter of KNormMechanism must be a float in the range \\(0, inf\\). Got 0.0 instead",
        ),
        (dict(epsilon=-1), ValueError, "'epsilon' .* Got -1.0"),
        (dict(epsilon=math.inf), ValueError, "'epsilon' .* Got inf"),
        (dict(epsilon=math.nan), ValueError, "'epsilon' .* Got nan"),
        (dict(epsilon="1"), TypeError, "'epsilon'"),
        (
            dict(sensitivity=0),
            ValueError,
            "'sensitivity' parameter of KNormMechanism must be a float in the range \\(0, inf\\). Got 0.0",
        ),
        (dict(sensitivity=-2.0), ValueError, "'sensitivity'"),
        (dict(sensitivity=math.nan), ValueError, "'sensitivity'"),
        (dict(ball="l2"), TypeError, "'ball' parameter of KNormMechanism must be a NormBall"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    args = dict(ball=LpBall(2, 2), sensitivity=1.0, epsilon=1.0) | kwargs
    with pytest.raises(exc, match=match):
        KNormMechanism(**args)


def test_bad_release_input():
    mech = KNormMechanism(LpBall(2, 2), 1.0, 1.0)
    with pytest.raises(ValueError, match="'value' parameter of KNormMechanism.release must have last axis of length 2"):
        mech.release([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"finite values. Got 1 NaN value\(s\) instead"):  # a count: value is data
        mech.release([1.0, np.nan])
    with pytest.raises(ValueError, match="'u' parameter of KNormMechanism.privacy_loss"):
        mech.privacy_loss([1.0])
