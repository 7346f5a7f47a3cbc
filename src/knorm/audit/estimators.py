"""Audits of private estimators (scikit-learn style) on neighbouring datasets.

Each output is one private fit on a fixed dataset with a fresh ``random_state``,
so an audit costs one fit per output: use small datasets, which is also where
privacy failures are largest (one record is a large share of the data).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from knorm._validation import check_count, check_rng
from knorm.audit.core import NeighbourPair, audit_pairs
from knorm.audit.mechanisms import _search_directions
from knorm.exceptions import PrivacyWarning

__all__ = ["adversarial_records", "audit_estimator", "coefficients", "estimator_sampler"]


def coefficients(estimator):
    """Return the released vector of a fitted linear model: ``coef_`` then ``intercept_`` (if any).

    Parameters
    ----------
    estimator : estimator
        A fitted model with ``coef_`` (and possibly ``intercept_``).

    Returns
    -------
    ndarray of shape (k,)
        The raveled coefficients followed by the raveled intercept, as floats.
    """
    parts = [np.ravel(estimator.coef_)]
    if hasattr(estimator, "intercept_"):
        parts.append(np.ravel(estimator.intercept_))
    return np.concatenate(parts).astype(float)


def estimator_sampler(estimator, X, y, *, output=coefficients, context=None):
    """Return a sampler ``(n, rng) -> (n, k)`` of the outputs of n private fits on (X, y).

    Parameters
    ----------
    estimator : estimator
        Unfitted, with a ``random_state`` parameter; it is cloned (an
        ``accountant`` parameter is set to None: audit fits on synthetic data
        are not releases). Parameters are validated once, by a first fit.
    X, y : array_like
        The dataset.
    output : callable, default :func:`coefficients`
        Fitted estimator -> released vector.
    context : callable, optional
        A context-manager factory entered around the fits (for instance to
        inject a deliberate fault when showing that the audit can fail).

    Returns
    -------
    callable
        ``sample(n, rng)``: fits a clone n times, each with a fresh
        ``random_state`` drawn from the Generator ``rng``, and returns the outputs
        as an ndarray of shape (n, k).

    Notes
    -----
    Convergence warnings are silenced inside the sampler: the audit is about
    the law of what is released, converged or not.
    """
    from sklearn import config_context
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning

    est = clone(estimator)
    if "accountant" in est.get_params():
        est.set_params(accountant=None)
    X = np.asarray(X)
    y = np.asarray(y)
    validated: list[bool] = []

    def sample(n, rng):
        out = []
        seeds = rng.integers(0, 2**32, size=n)
        with warnings.catch_warnings(), context() if context is not None else contextlib.nullcontext():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # Each fit has its own seed, drawn from the audit's Generator: fresh noise, nothing to warn about.
            warnings.simplefilter("ignore", PrivacyWarning)
            start = 0
            if not validated and n:  # the first fit validates the parameters
                out.append(output(est.set_params(random_state=int(seeds[0])).fit(X, y)))
                validated.append(True)
                start = 1
            with config_context(skip_parameter_validation=True):
                for s in seeds[start:]:
                    out.append(output(est.set_params(random_state=int(s)).fit(X, y)))
        return np.array(out, dtype=float).reshape(n, -1)

    return sample


def audit_estimator(
    estimator,
    X,
    y,
    X_neighbour,
    y_neighbour,
    *,
    output=coefficients,
    statistics=None,
    claimed_epsilon=None,
    context=None,
    rng=None,
    label=None,
    **options,
):
    """Audit a private estimator on two neighbouring datasets.

    Parameters
    ----------
    estimator : estimator
        Unfitted, with ``random_state`` (and ``epsilon``, the default claim).
    X, y, X_neighbour, y_neighbour : array_like
        Neighbouring datasets (differing in one record, for instance at the
        extremes of the declared domain).
    output : callable, default :func:`coefficients`
        Fitted estimator -> released vector.
    statistics : mapping or callable, optional
        Test statistics of the released vectors; by default 1-D projections (on
        the mean difference fitted on the selection split, and on each coordinate).
    claimed_epsilon : float, optional
        Defaults to ``estimator.epsilon``.
    context : callable, optional
        Context-manager factory entered around the fits (see :func:`estimator_sampler`).
    rng : None, int, SeedSequence or Generator
        Randomness of the fits (each gets a fresh ``random_state``).
    label : str, optional
        Name of the audit; the estimator's class name by default.
    **options
        Passed to :func:`~knorm.audit.audit_pairs`.

    Returns
    -------
    AuditResult
        The lower confidence bound on eps and the verdict against the claim.

    Notes
    -----
    Each output is one fit, so an audit costs ``n_samples`` fits per dataset; small
    datasets are cheap and are where one record weighs most.

    Examples
    --------
    Objective perturbation on two records that differ in one feature value, at the
    extremes of the declared domain:

    >>> import numpy as np
    >>> from knorm.models import LogisticRegression
    >>> est = LogisticRegression(epsilon=1.0, bounds_X=(-1.0, 1.0), classes=[0, 1], inference_share=0)
    >>> X, X_neighbour, y = np.array([[1.0], [1.0]]), np.array([[1.0], [-1.0]]), np.array([1, 0])
    >>> res = audit_estimator(est, X, y, X_neighbour, y, n_samples=200, rng=0)  # 400 fits
    >>> res.claimed_epsilon, res.passed, res.n_test
    (1.0, True, 150)

    So few outputs give weak evidence; the audit suite (``python -m knorm.audit``)
    uses far more.
    """
    pair = NeighbourPair(
        estimator_sampler(estimator, X, y, output=output, context=context),
        estimator_sampler(estimator, X_neighbour, y_neighbour, output=output, context=context),
        statistics,
        "neighbouring datasets",
    )
    if claimed_epsilon is None:
        claimed_epsilon = getattr(estimator, "epsilon", None)
    return audit_pairs(
        [pair],
        claimed_epsilon=claimed_epsilon,
        rng=rng,
        label=label if label is not None else type(estimator).__name__,
        **options,
    )


def adversarial_records(statistic, ball, *, n_directions=2000, rng=None):
    """Return two records z, z' of the domain whose statistics differ the most in K-norm.

    Parameters
    ----------
    statistic : QuadraticStatistic
        The per-record map t on its box domain (for instance the ``statistic``
        of :func:`~knorm.sensitivity.linear_regression_space`).
    ball : NormBall
        The mechanism's ball K.
    n_directions : int, default 2000
        Random directions, added to the coordinate and sign directions and the
        facet normals of K, in which the exact maximisers and minimisers of
        c.t(z) over the box are computed (:meth:`QuadraticStatistic.extremes`).
    rng : None, int, SeedSequence or Generator
        Randomness of the search directions.

    Returns
    -------
    z : ndarray of shape (record_dim,)
        A record attaining the maximum of c.t over the box in the best direction c.
    z_prime : ndarray of shape (record_dim,)
        A record attaining the minimum there. Datasets that differ only in
        replacing z by z' are adversarial neighbours: t(z) - t(z') is a point of
        S_T with the largest K-norm found.
    """
    gen = check_rng(rng)
    c = np.vstack(
        [
            _search_directions(ball),
            gen.standard_normal((check_count(n_directions, "n_directions", "adversarial_records"), ball.dim)),
        ]
    )
    _, _, zhi, zlo = statistic.extremes(c)
    k = int(np.argmax(ball.norm(statistic(zhi) - statistic(zlo))))
    return zhi[k], zlo[k]
