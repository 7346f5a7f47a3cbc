"""The release of the Fisher information at the released theta of a binary logistic fit, for intervals.

A share of a :class:`~knorm.models.LogisticRegression` fit's epsilon releases
I(theta_DP) = sum_i sigma'(theta_DP'z_i) z_i z_i' with l_inf K-norm noise: its per-record
terms have entries in [-1/4, 1/4] for any public theta
(:func:`~knorm.sensitivity.softmax.logistic_information_space`, Delta = 1/2 with the
diagonal doubled). theta_DP is public when the information is released, so the two
releases compose. What the intervals then compute from the two releases is post-processing
(:mod:`knorm.models.logistic_inference`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from knorm._docs import fill_doc
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism
from knorm.mechanisms.knorm_mechanism import GRADIENT_TOLERANCE, OUTPUT_SHARE
from knorm.models.logistic_inference import LogisticInference
from knorm.noise import KNormNoise
from knorm.sensitivity.softmax import information_layout_weights, logistic_information_space

__all__ = ["release_information"]


@fill_doc
def release_information(Z, fit, transform, *, epsilon, rng, neighbours, accountant, sampler, label):
    """Release I(theta_DP) with l_inf noise; return it and the linearised law of the fit built on it.

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        The scaled records of the fit (in [-1, 1], intercept column last when fitted).
    fit : ObjectiveFit
        The model's release (:func:`~knorm.models.objective.fit_objective_perturbation`,
        binary loss): theta_DP, gamma, its epsilon and whether it is private (only these
        public fields are read).
    transform : ndarray of shape (m, m)
        The map of the scaled coefficients to (intercept, coefficients) in the original
        units (:func:`~knorm.models.logistic_scaling.coefficient_transform`).
    epsilon : float
        The budget of this release.
    %(rng)s
    neighbours : {'replace', 'add_remove'}
        The neighbouring relation.
    accountant : PrivacyAccountant or None
        Charged epsilon before the noise is drawn.
    sampler : {'auto', 'lattice', 'continuous'}
        How the noise is drawn.
    label : str
        Label of the release.

    Returns
    -------
    release : Release
        The noisy information (upper triangle, diagonal doubled).
    inference : LogisticInference
        The linearised law of the fit, for standard errors and intervals (it floors the
        information's eigenvalues at m / 4 and counts them, ``n_floored``: public).

    Notes
    -----
    Below one record's largest curvature, lambda = m / 4 (paper Section 4.1), the
    released information says nothing, so its eigenvalues are floored there. The
    bootstrap's noise laws are the model's V (its ball and scale), the output noise
    of :meth:`~knorm.mechanisms.KNormMechanism.release_objective`, of scale
    2 tau / (gamma eps_W) with eps_W = OUTPUT_SHARE epsilon, and this release's own
    noise; all are absent when the fit is not private.

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.geometry import LpBall
    >>> from knorm.models.losses import logistic_loss
    >>> from knorm.models.objective import fit_objective_perturbation
    >>> rng = np.random.default_rng(0)
    >>> Z = np.column_stack([rng.uniform(-1, 1, size=(5000, 2)), np.ones(5000)])
    >>> y = (rng.random(5000) < 1 / (1 + np.exp(-2 * Z[:, 0]))).astype(float)
    >>> fit = fit_objective_perturbation(
    ...     logistic_loss(2), Z, y, ball=LpBall(3, float("inf")), sensitivity=2.0, epsilon=1.0, q=0.5, rng=0
    ... )
    >>> release, inference = release_information(
    ...     Z, fit, np.eye(3), epsilon=0.5, rng=1,
    ...     neighbours="replace", accountant=None, sampler="auto", label="information"
    ... )
    >>> release.value.shape, inference.n_floored, inference.bse().shape
    ((6,), 0, (3,))
    """
    m = Z.shape[1]
    theta = fit.theta
    rows, cols, weights = information_layout_weights(m, neighbours=neighbours)
    ball = LpBall(len(weights), math.inf)
    sens = logistic_information_space(m, neighbours=neighbours).sensitivity(ball)
    w = expit(Z @ theta)
    w *= 1.0 - w
    info = (Z * w[:, None]).T @ Z
    release = KNormMechanism(ball, sens, epsilon, sampler=sampler).release(
        weights * info[rows, cols], rng=rng, accountant=accountant, label=label
    )
    noisy = np.zeros((m, m))
    noisy[rows, cols] = release.value / weights
    noisy[cols, rows] = noisy[rows, cols]
    model = fit.release
    output_scale = 2.0 * GRADIENT_TOLERANCE / (fit.gamma * OUTPUT_SHARE * fit.epsilon) if fit.private else 0.0
    private_info = math.isfinite(release.epsilon)
    inference = LogisticInference(
        theta,
        noisy,
        fit.gamma,
        KNormNoise(model.ball, model.noise_scale) if fit.private else None,
        KNormNoise(LpBall(m, 2), output_scale) if fit.private else None,
        transform,
        information_noise=KNormNoise(ball, release.noise_scale) if private_info else None,
        neighbours=neighbours,
    )
    return release, inference
