"""Empirical privacy audits of the K-norm mechanisms: sound ones pass, broken ones fail.

Every audit here is a lower confidence bound on eps at confidence 1 - ALPHA
(tests/settings.py): a sound mechanism is flagged with probability at most
ALPHA = 1e-3 for a seed drawn at random (the false-alarm rate); the seeds are
fixed, so each run is deterministic. The rows come from the one table of
knorm.audit.suite, so a mechanism added there is audited here too.
"""

import math

import numpy as np
import pytest

from knorm import KNormMechanism, LpBall
from knorm.audit import adversarial_neighbours, audit_knorm
from knorm.audit.suite import EpsilonIgnoringMechanism, HalvedNoiseMechanism, run_case, standard_cases
from knorm.geometry import K2Ball, k3_ball
from knorm.sensitivity import kt_ball, linear_regression_space, regression_cut_ball, squared_statistic_space
from tests.settings import ALPHA, SEED

CONFIDENCE = 1.0 - ALPHA  # false-alarm rate ALPHA per audit
# Outputs per side (and per candidate pair on the selection quarter); the
# regression rows use half (sample_factor), keeping tests/audit well under 60 s.
N_SAMPLES = 100_000

CASES = standard_cases(estimators=False)  # estimators: test_estimator_audits.py
SOUND = [c for c in CASES if c.sound]
BROKEN = [c for c in CASES if not c.sound]


def _seed(case):
    return [SEED, CASES.index(case)]


def test_the_table_covers_the_required_mechanisms():
    names = " | ".join(c.name for c in CASES)
    for needed in ("l1,", "l2,", "l_inf,", "l3,", "polytope", "K_2,", "K_T, regression", "cut ball, regression"):
        assert needed in names
    broken = " | ".join(c.name for c in BROKEN)
    for needed in ("half the noise", "Delta/2", "Delta_inf", "ignores eps", "seed reused", "4 rho", "smaller space"):
        assert needed in broken


@pytest.mark.parametrize("case", SOUND, ids=[c.name for c in SOUND])
def test_sound_mechanism_passes(case):
    res = run_case(case, n_samples=N_SAMPLES, confidence=CONFIDENCE, rng=np.random.SeedSequence(_seed(case)))
    assert res.confidence == CONFIDENCE
    assert res.passed, str(res)
    assert not res.violates(res.claimed_epsilon)
    # The audit has power: it finds most of the loss that is really there, so a
    # pass is informative (the bound is not trivially 0).
    assert res.eps_lower > case.power * case.true_epsilon, str(res)


@pytest.mark.parametrize("case", BROKEN, ids=[c.name for c in BROKEN])
def test_audit_flags_broken_mechanism(case):
    res = run_case(case, n_samples=N_SAMPLES, confidence=CONFIDENCE, rng=np.random.SeedSequence(_seed(case)))
    assert res.violates(res.claimed_epsilon), str(res)
    assert res.eps_lower > res.claimed_epsilon
    assert not res.passed and res.verdict == "VIOLATION"
    # A lower bound: it never exceeds the true loss (up to the same false-alarm rate).
    assert res.eps_lower <= case.true_epsilon


def test_halved_scale_via_knorm_noise_is_flagged_without_a_space():
    # Sampler bug audited against the mechanism's own claim (neighbours at ||u||_K = Delta).
    mech = HalvedNoiseMechanism(LpBall(3, 1), 2.0, 1.0)
    res = audit_knorm(mech, n_samples=40_000, confidence=CONFIDENCE, rng=SEED)
    assert res.violates(1.0) and res.eps_lower > 1.5


def test_declared_half_sensitivity_is_flagged_by_the_domain_space():
    # Noise built with Delta/2 while claiming eps: consistent with its own claim,
    # so only the data domain's sensitivity space exposes it.
    space = squared_statistic_space()
    mech = KNormMechanism(K2Ball(), 0.5, 1.0)
    own = audit_knorm(mech, n_samples=40_000, confidence=CONFIDENCE, rng=SEED)
    assert own.passed
    res = audit_knorm(mech, space, n_samples=40_000, confidence=CONFIDENCE, rng=SEED)
    assert res.violates(1.0) and res.eps_lower > 1.5


def test_noise_independent_of_epsilon_is_flagged_at_every_small_epsilon():
    for eps in (0.1, 0.5):
        mech = EpsilonIgnoringMechanism(LpBall(2, 2), 1.0, eps)
        res = audit_knorm(mech, n_samples=40_000, confidence=CONFIDENCE, rng=SEED)
        assert res.violates(eps), str(res)


def test_adversarial_neighbours_attain_the_exact_sensitivities():
    # ERRATA.md "Facts worth having": Example 2.1 has Delta_1 = 3.125 at u1 = 5/4,
    # Delta_2 = sqrt(71 + 8 sqrt 2) / 4, Delta_inf = 2; K_2 = Hull(S_T) has Delta = 1.
    space = squared_statistic_space()
    exact = {1: 3.125, 2: 0.25 * math.sqrt(71 + 8 * math.sqrt(2)), math.inf: 2.0}
    for p, delta in exact.items():
        U = adversarial_neighbours(LpBall(2, p), space, n_directions=4000, rng=SEED)
        np.testing.assert_allclose(np.linalg.norm(U, ord=p, axis=1), delta, rtol=1e-4)
    U = adversarial_neighbours(LpBall(2, 1), space, rng=SEED)
    np.testing.assert_allclose(np.abs(U[0]), [1.25, 1.875])
    np.testing.assert_allclose(K2Ball().norm(adversarial_neighbours(K2Ball(), space, rng=SEED)), 1.0)


@pytest.mark.parametrize(
    "ball_fn",
    [lambda: kt_ball(2), lambda: regression_cut_ball(2, n_train=20_000, per_block=40)[0]],
    ids=["K_T", "cut"],
)
def test_regression_neighbours_are_extreme_points_with_norm_one(ball_fn):
    ball = ball_fn()
    space = linear_regression_space(2)
    U = adversarial_neighbours(ball, space, n=4, rng=SEED)
    assert len(U) == 4
    np.testing.assert_allclose(ball.norm(U), 1.0, rtol=1e-9)
    # They are differences of two records' statistics: within the support function.
    c = np.random.default_rng(SEED).standard_normal((50, space.dim))
    assert np.all(U @ c.T <= space.support(c)[None, :] + 1e-9)


def test_space_without_extreme_points_is_sampled():
    # The logistic gradient space (paper Section 4.1) has a sampler but no extreme-point oracle.
    from knorm.sensitivity import logistic_gradient_space

    space = logistic_gradient_space(3)
    U = adversarial_neighbours(LpBall(3, math.inf), space, n=2, n_directions=200, rng=SEED)
    assert U.shape[1] == 3 and 1.5 < np.abs(U).max() <= 2.0  # inside [-2, 2]^3, near its l_inf radius


def test_neighbours_without_space_sit_on_the_sphere_of_radius_delta():
    for ball in (LpBall(3, 1), LpBall(3, math.inf), k3_ball(), K2Ball()):
        U = adversarial_neighbours(ball, sensitivity=1.7, n=3)
        np.testing.assert_allclose(ball.norm(U), 1.7)
    U = adversarial_neighbours(k3_ball(), sensitivity=1.0, n=1)
    assert any(np.allclose(U[0], v) for v in k3_ball().vertices)  # a vertex first
