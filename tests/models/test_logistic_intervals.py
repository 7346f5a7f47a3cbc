"""Coverage of the logistic intervals, their refusal and the corrected estimate, on the regimes of issue 23.

Each regime is fitted 40 times with fresh noise (and, for the paper's simulation, fresh
data); the non-private maximum likelihood estimate (MLE) of each data set is the target.
A fit whose intervals are refused counts as covering nothing. The 40-fit versions are slow
(CI runs them with ``pytest -m slow``); a fast smoke version of each runs by default.

Failure rates: under intervals that cover the MLE with probability >= 0.95 (measured:
0.99-1.0 on the paper's simulation), 40 fits fall below 34 (85%) with probability < 1e-3
per coefficient. Refusal on the README design was measured in 160 of 160 fits.
"""

import numpy as np
import pytest
from scipy.special import expit

from knorm.experiments.data import shared_data_dir
from knorm.mechanisms import nonprivate
from knorm.models import LogisticRegression
from tests.settings import SEED

BETA = np.array([0, -1, -0.5, -0.25, 0, 0.75, 1.5])  # paper Algorithm "Logistic Regression on Simulated Data"
FITS = 40


def readme_data(rng, n=10_000):
    """The README's example: three features declared in [0, 10], y = 1[x1 - 2 x2 + 0.5 x3 + N(0, 1) > 0]."""
    X = rng.uniform(0, 10, size=(n, 3))
    return X, (X @ [1.0, -2.0, 0.5] + rng.normal(size=n) > 0).astype(int)


def paper_data(rng, n=10_000):
    X = rng.uniform(-1, 1, size=(n, BETA.size))
    return X, (rng.random(n) < expit(X @ BETA)).astype(int)


def banknote_data():
    folder = shared_data_dir()
    path = None if folder is None else folder / "banknote_authentication.csv"
    if path is None or not path.exists():
        pytest.skip("the banknote data (../shared/data/banknote_authentication.csv) is not here")
    D = np.loadtxt(path, delimiter=",")
    return D[:, :4], D[:, 4].astype(int)


def mle_of(X, y, bounds, fit_intercept):
    with nonprivate():
        ref = LogisticRegression(classes=[0, 1], bounds_X=bounds, fit_intercept=fit_intercept).fit(X, y)
    return np.concatenate([ref.intercept_, ref.coef_[0]]) if fit_intercept else ref.coef_[0]


def run_fits(data, fits, *, epsilon, bounds, fit_intercept, share, seed):
    """(covered (fits, p), refused (fits,), corrected-not-further (list of bool)) over ``fits`` fits.

    ``data`` is a pair (X, y) reused by every fit, or a function of a Generator drawing fresh data.
    """
    rng = np.random.default_rng(seed)
    covered, refused, not_further = [], [], []
    for _ in range(fits):
        X, y = data(rng) if callable(data) else data
        mle = mle_of(X, y, bounds, fit_intercept)
        clf = LogisticRegression(
            epsilon=epsilon,
            classes=[0, 1],
            bounds_X=bounds,
            fit_intercept=fit_intercept,
            inference_share=share,
            random_state=rng,
        )
        s = clf.fit(X, y).summary()
        refused.append(s.refusal is not None)
        ci = s.conf_int
        covered.append((ci[:, 0] <= mle) & (mle <= ci[:, 1]))  # NaN ends (refused) cover nothing
        if np.all(np.isfinite(s.corrected)):
            not_further.append(np.linalg.norm(s.corrected - mle) <= np.linalg.norm(s.coef - mle))
    return np.array(covered), np.array(refused), not_further


# -- fast smoke versions ---------------------------------------------------------------------------------------
def test_paper_regime_smoke():
    # Eight fits at eps = 1 with the 'auto' share: none refused, every interval covers the MLE.
    covered, refused, not_further = run_fits(
        paper_data, 8, epsilon=1.0, bounds=(-1, 1), fit_intercept=False, share="auto", seed=SEED
    )
    assert not refused.any() and covered.all() and all(not_further)


def test_readme_regime_smoke():
    X, y = readme_data(np.random.default_rng(SEED))
    covered, refused, _ = run_fits((X, y), 4, epsilon=1.0, bounds=(0, 10), fit_intercept=True, share=0.5, seed=SEED)
    assert refused.all() and not covered.any()


def test_banknote_smoke():
    X, y = banknote_data()
    _, refused, _ = run_fits((X, y), 3, epsilon=8.0, bounds=(-15, 20), fit_intercept=True, share="auto", seed=SEED)
    assert refused.all()


# -- the 40-fit criteria ---------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("share", ["auto", 0.25, 0.5])
def test_readme_regime_is_refused(share):
    # Issue 23: on the README regime the intervals are refused with a public reason in at least
    # 95% of the fits (or cover the MLE in 85%). Measured: refused in all.
    X, y = readme_data(np.random.default_rng(SEED))
    covered, refused, not_further = run_fits(
        (X, y), FITS, epsilon=1.0, bounds=(0, 10), fit_intercept=True, share=share, seed=SEED + 1
    )
    assert refused.mean() >= 0.95, refused.mean()
    assert all(not_further)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.25, 1.0, 4.0])
def test_paper_regime_covers_the_mle(epsilon):
    # The paper's simulation as the logistic_intervals experiment runs it (share 'auto'): every
    # coefficient's 95% interval covers the MLE in at least 85% of 40 fits, refusals counting
    # as misses; a corrected estimate, where shown, is never further from the MLE than the release.
    covered, refused, not_further = run_fits(
        paper_data, FITS, epsilon=epsilon, bounds=(-1, 1), fit_intercept=False, share="auto", seed=SEED + 2
    )
    assert covered.mean(axis=0).min() >= 0.85, (covered.mean(axis=0), refused.mean())
    assert all(not_further)


@pytest.mark.slow
@pytest.mark.parametrize("share", ["auto", 0.5])
def test_banknote_is_covered_or_refused(share):
    # Banknote authentication (n = 1372, features declared in [-15, 20]) at eps = 8: for each
    # coefficient, the intervals cover the MLE or are refused in at least 85% of the fits.
    # Measured: refused in all (near-separable: the information is floored or the correction too large).
    X, y = banknote_data()
    covered, refused, not_further = run_fits(
        (X, y), FITS, epsilon=8.0, bounds=(-15, 20), fit_intercept=True, share=share, seed=SEED + 3
    )
    assert (covered | refused[:, None]).mean(axis=0).min() >= 0.85
    assert all(not_further)
