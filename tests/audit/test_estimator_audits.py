"""Empirical privacy audits of the private estimators, on neighbouring datasets that
differ in one record at the extremes of the declared domain.

Each output is one private fit, so these audits use 3000 (logistic) or 4000
(linear) fits per side, a quarter of them for choosing the event: enough to
flag the paper's printed gamma (errata item 1), whose loss is unbounded here. Confidence 1 - ALPHA: a sound
estimator is flagged with probability at most ALPHA = 1e-3 for a random seed.
"""

import importlib.util
from unittest import mock

import numpy as np
import pytest

from knorm.audit.suite import estimator_cases, run_case
from tests.settings import ALPHA, SEED

logistic = pytest.importorskip("knorm.models.logistic")

CONFIDENCE = 1.0 - ALPHA
N_SAMPLES = 200_000  # times the rows' sample_factor (0.015 or 0.02): 3000 or 4000 fits per side
CASES = estimator_cases()


def test_rows_exist_for_the_available_estimators():
    names = " | ".join(c.name for c in CASES)
    assert "logistic, objective perturbation" in names and "printed gamma" in names
    if importlib.util.find_spec("knorm.models.linear") is not None:
        assert "linear, functional mechanism" in names


# The sound rows (about 10 s each) run with the slow tests in CI; the broken row, which shows
# the audit catching an estimator, runs in the default suite.
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.sound else []) for c in CASES]
)
def test_estimator_audit_verdict(case):
    seed = np.random.SeedSequence([SEED, 1000 + CASES.index(case)])
    res = run_case(case, n_samples=N_SAMPLES, confidence=CONFIDENCE, rng=seed)
    assert res.n_test == round(0.75 * case.sample_factor * N_SAMPLES)
    if case.sound:
        assert res.passed, str(res)
        if case.true_epsilon is not None:  # the K-norm release itself: the audit finds most of its loss
            assert res.eps_lower > 0.5 * case.true_epsilon, str(res)
    else:
        assert res.violates(res.claimed_epsilon) and res.eps_lower > res.claimed_epsilon, str(res)


def test_the_library_refuses_the_printed_gamma_the_broken_row_uses():
    # The broken row reproduces the unguarded algorithm with gamma = lambda / (exp(eps (q - 1)) - 1)
    # (the paper's print, errata item 1), negative for q < 1. The library itself refuses such a
    # gamma, so the fault cannot reach a real fit.
    from knorm.audit.suite import _LOGISTIC_X, _LOGISTIC_Y, _printed_gamma, printed_gamma_logistic
    from knorm.models import objective

    assert _printed_gamma(0.5, 1.0, 0.5) == pytest.approx(0.5 / np.expm1(-0.5))
    assert _printed_gamma(0.5, 1.0, 0.5) < 0
    assert printed_gamma_logistic(_LOGISTIC_X, _LOGISTIC_Y)(3, np.random.default_rng(SEED)).shape == (3, 2)
    est = logistic.LogisticRegression(epsilon=1.0, q=0.5, bounds_X=(-1.0, 1.0), classes=[0, 1], random_state=SEED)
    assert est.fit(_LOGISTIC_X, _LOGISTIC_Y).gamma_ > 0

    def printed(m, epsilon, q, neighbours="replace"):  # the binary loss's gamma, replaced by the print
        return _printed_gamma(m / 4.0, epsilon, q)

    with mock.patch.object(objective, "logistic_gamma", printed), pytest.raises(ValueError, match="gamma"):
        est.fit(_LOGISTIC_X, _LOGISTIC_Y)
