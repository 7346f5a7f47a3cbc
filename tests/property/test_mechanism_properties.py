"""Property-based tests of the K-norm mechanism's privacy map and of the audit's bounds."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from knorm import KNormMechanism
from knorm.audit import clopper_pearson, eps_lower_bound
from tests.property.strategies import EXACT_VOLUME_KINDS, PROPERTY_SETTINGS, RTOL, balls, seeds, vectors

epsilons = st.floats(0.01, 10.0)
sensitivities = st.floats(0.1, 10.0)
# Balls with an exact volume: logpdf's normaliser is then closed form (a Monte
# Carlo volume would be recomputed for every new ball; it cancels in ratios anyway).
exact_kinds = pytest.mark.parametrize("kind", EXACT_VOLUME_KINDS)


@exact_kinds
@PROPERTY_SETTINGS
@given(data=st.data(), eps=epsilons, delta=sensitivities, seed=seeds)
def test_privacy_loss_is_at_most_eps_on_delta_k(kind, data, eps, delta, seed):
    ball = data.draw(balls((kind,)), label="ball")
    mech = KNormMechanism(ball, delta, eps)
    u = delta * ball.sample_uniform(200, rng=seed)  # changes allowed by sensitivity Delta
    loss = mech.privacy_loss(u)
    assert np.all(loss <= eps * (1 + RTOL))
    np.testing.assert_allclose(loss, eps * ball.norm(u) / delta, rtol=RTOL)
    # on the sphere of radius Delta the loss is exactly eps
    x = vectors(ball.dim, 20, seed)[:-3]
    x = x[np.any(x != 0, axis=1)]
    np.testing.assert_allclose(mech.privacy_loss(delta * x / ball.norm(x)[:, None]), eps, rtol=1e-9)


@exact_kinds
@PROPERTY_SETTINGS
@given(data=st.data(), eps=epsilons, delta=sensitivities, seed=seeds, shift=st.floats(0.05, 3.0))
def test_realised_log_density_ratio_never_exceeds_privacy_loss(kind, data, eps, delta, seed, shift):
    ball = data.draw(balls((kind,)), label="ball")
    mech = KNormMechanism(ball, delta, eps)
    rng = np.random.default_rng(seed)
    t = rng.standard_normal(ball.dim) * 5
    t2 = t - shift * delta * ball.sample_uniform(1, rng=rng)[0]  # any neighbour, inside or outside Delta K
    bound = mech.privacy_loss(t - t2)
    z = np.vstack(
        [
            mech.release(np.tile(t, (200, 1)), rng=rng).value,  # outputs on t
            mech.release(np.tile(t2, (200, 1)), rng=rng).value,  # outputs on t'
            t + 1e3 * (t - t2),
        ]
    )  # far on the ray, where the bound is attained
    ratio = mech.log_density_ratio(z, t, t2)
    tol = 1e-9 * (1 + np.abs(mech.noise.logpdf(z - t)))  # cancellation in the difference of logpdfs
    assert np.all(ratio <= bound + tol)
    assert np.all(-ratio <= bound + tol)  # and with the roles swapped
    assert ratio[-1] == pytest.approx(bound, rel=1e-6, abs=1e-9)


@PROPERTY_SETTINGS
@given(n=st.integers(1, 10**6), frac=st.floats(0, 1), beta=st.floats(1e-9, 0.49))
def test_clopper_pearson_brackets_the_estimate(n, frac, beta):
    k = int(round(frac * n))
    lo, hi = clopper_pearson(k, n, beta)
    assert 0 <= lo <= k / n <= hi <= 1
    lo2, hi2 = clopper_pearson(k, n, beta / 10)  # higher confidence, wider interval
    assert lo2 <= lo and hi2 >= hi


@PROPERTY_SETTINGS
@given(n=st.integers(10, 10**6), fa=st.floats(0, 1), fb=st.floats(0, 1), beta=st.floats(1e-9, 0.2))
def test_eps_lower_bound_is_below_the_plug_in_ratio(n, fa, fb, beta):
    ka, kb = int(fa * n), int(fb * n)
    bound = eps_lower_bound(ka, n, kb, n, beta)
    if ka > 0 and kb > 0:
        assert bound <= np.log(ka / kb) + 1e-12
    assert bound <= np.log(n) + 1e-12 or kb == 0
