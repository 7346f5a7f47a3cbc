"""Standard errors and confidence intervals of private logistic regression, by parametric bootstrap.

Post-processing only: everything here is computed from released quantities (theta_DP
and the noisy Fisher information, both :class:`~knorm.mechanisms.Release` records)
and public ones (the declared bounds, epsilon, q, gamma, the noise laws). It reads no
record. The Monte Carlo draws are of public laws (a normal law with the released
information, the K-norm noise laws), from a fixed seed, so the intervals are
deterministic functions of the releases.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from knorm._docs import fill_doc
from knorm._validation import check_probability
from knorm.geometry import LpBall
from knorm.models.objective import _unit_noise_second_moment
from knorm.noise import KNormNoise
from knorm.sensitivity.softmax import information_layout_weights

__all__ = ["InferenceSummary", "LogisticInference", "auto_inference_share", "floor_information", "logistic_summary"]

#: Bootstrap draws and their fixed seed (Monte Carlo of public laws only).
BOOTSTRAP_DRAWS = 2000
_BOOTSTRAP_SEED = 20_260_114
# The 'auto' share: the 0.9-quantile of the spectral norm of the information noise must be at
# most _NOISE_TO_INFORMATION times the public guess n / 12 of the information's eigenvalues,
# with the share kept in [_SHARE_MIN, _SHARE_MAX]; _SHARE_ADD_REMOVE when n is not public.
_NOISE_TO_INFORMATION = 0.35
_SHARE_MIN, _SHARE_MAX, _SHARE_ADD_REMOVE = 0.05, 0.5, 0.25
_CURVATURE = 1.0 / 12.0
_NORM_SEED, _NORM_DRAWS = 20_240_602, 1000
# Monte Carlo covariance of noise laws without a closed form (fixed seed: public).
_COV_SEED, _COV_DRAWS = 20_240_603, 20_000


@functools.lru_cache(maxsize=64)
def _unit_noise_norm(m, neighbours):
    """0.9-quantile of ||E||_2 for the information noise at scale 1 (fixed-seed Monte Carlo of the public law)."""
    rows, cols, weights = information_layout_weights(m, neighbours=neighbours)
    v = KNormNoise(LpBall(len(weights), math.inf), 1.0).public_law_sample(_NORM_DRAWS, seed=_NORM_SEED) / weights
    E = np.zeros((_NORM_DRAWS, m, m))
    E[:, rows, cols] = v
    E[:, cols, rows] = v
    return float(np.quantile(np.abs(np.linalg.eigvalsh(E)).max(axis=1), 0.9))


@fill_doc
def auto_inference_share(n_samples, m, epsilon, sensitivity=0.5, *, neighbours="replace"):
    """Return the share of epsilon that ``inference_share='auto'`` spends on the Fisher information.

    Parameters
    ----------
    n_samples : int
        Number of records n (public under replace-one neighbours; unused under
        add/remove).
    m : int
        Dimension of theta (the intercept column counts).
    epsilon : float
        The whole budget of the fit.
    sensitivity : float, default 0.5
        The l_inf sensitivity of the released information vector
        (:func:`~knorm.sensitivity.softmax.logistic_information_space`).
    %(neighbours)s

    Returns
    -------
    float
        A share in [0.05, 0.5], rounded up to 0.01; 0.25 under add/remove neighbours.

    Notes
    -----
    Data-independent: only (n, m, eps) enter. The released information is
    I + E, with E the K-norm noise (l_inf in m (m + 1) / 2 dimensions, scale
    Delta / (s eps)). Intervals are reliable when E is small against I: the rule asks
    the 0.9-quantile of ||E||_2 (a fixed-seed Monte Carlo of the public law, linear in
    the scale) to be at most 0.35 times the public guess n / 12 of the eigenvalues of
    I (sigma' = 1/4 at theta = 0 times E x^2 = 1/3 for features filling [-1, 1], the
    constant of :func:`~knorm.models.objective.auto_q`), and spends the smallest
    such share, between 0.05 and 0.5. The constant 0.35 was calibrated on the
    paper's simulation (m = 7, n = 10^4), where shares of 0.15 at eps = 1 and 0.4-0.5
    at eps = 1/4 gave near-nominal coverage and the narrowest intervals. Pure DP costs
    about m^2 / eps per entry of the released information, so for large m or small n
    the cap binds and the intervals are wide (and conservative). Under add/remove
    neighbours n is private, so the share is a fixed 0.25.

    Examples
    --------
    >>> auto_inference_share(10_000, 7, 1.0), auto_inference_share(10_000, 7, 0.25)
    (0.16, 0.5)
    """
    if neighbours == "add_remove":
        return _SHARE_ADD_REMOVE
    noise = _unit_noise_norm(int(m), neighbours) * sensitivity / epsilon
    share = noise / (_NOISE_TO_INFORMATION * max(n_samples, 1) * _CURVATURE)
    return float(min(_SHARE_MAX, max(_SHARE_MIN, math.ceil(share * 100 - 1e-9) / 100)))


def floor_information(information, floor):
    """Return the information with its eigenvalues raised to at least ``floor``, and how many were.

    Parameters
    ----------
    information : ndarray of shape (m, m)
        A released (noisy, symmetric) Fisher information.
    floor : float
        The smallest eigenvalue kept, > 0.

    Returns
    -------
    floored : ndarray of shape (m, m)
        U diag(max(w, floor)) U', w and U the eigenvalues and vectors: positive
        definite, equal to the input when no eigenvalue is below the floor.
    n_floored : int
        Eigenvalues raised (public: a function of the release).

    Examples
    --------
    >>> floored, k = floor_information(np.array([[2.0, 0.0], [0.0, -1.0]]), 0.5)
    >>> np.diag(floored).tolist(), k
    ([2.0, 0.5], 1)
    """
    w, U = np.linalg.eigh(0.5 * (information + information.T))
    low = w < floor
    return (U * np.where(low, floor, w)) @ U.T, int(np.count_nonzero(low))


def _noise_covariance(noise):
    """Covariance of a K-norm noise law: closed form for l1, l2, l_inf balls, else fixed-seed Monte Carlo."""
    d = noise.dim
    ball = noise.ball
    if isinstance(ball, LpBall) and ball.p in (1.0, 2.0, math.inf):
        # Symmetric under coordinate permutations and sign changes: a multiple of I.
        return _unit_noise_second_moment(ball) * noise.scale**2 / d * np.eye(d)
    v = noise.public_law_sample(_COV_DRAWS, seed=_COV_SEED)
    return v.T @ v / len(v)


class LogisticInference:
    """The linearised law of a released logistic fit, and its bootstrap intervals.

    Parameters
    ----------
    theta : array_like of shape (m,)
        The released theta_DP, in the scaled coordinates of the mechanism.
    information : array_like of shape (m, m)
        Positive definite Fisher information used (the released one, floored).
    gamma : float
        The ridge term of objective perturbation (0 in the noise-free limit).
    noise : KNormNoise or None
        The law of the objective-perturbation noise V (None: no noise).
    output_noise : KNormNoise or None
        The law of the output noise W of the certified release (None: no noise).
    transform : array_like of shape (p, m)
        The linear map from scaled theta to the reported coefficients (original
        units, intercept first).

    Attributes
    ----------
    theta, information, transform : ndarray
        As given.
    gamma : float
        As given.
    noise, output_noise : KNormNoise or None
        As given.

    Notes
    -----
    *Model of the release* (scaled coordinates, sum form). Let I be the Fisher
    information of the data at the truth theta_0. The MLE is approximately
    N(theta_0, I^{-1}) (sampling error, conditional on the design). Objective
    perturbation returns the root of grad L(theta) + gamma theta + V = 0; one Newton
    step from the MLE gives

        theta_DP ~ theta_MLE - (I + gamma Id)^{-1} (gamma theta_MLE + V) + W,

    W the output noise of the certified release
    (:meth:`~knorm.mechanisms.KNormMechanism.release_objective`). The information is
    released at theta_DP, where the Jacobian of the map V -> theta_DP is exactly
    -(I(theta_DP) + gamma Id)^{-1} (the matrix of the privacy proof's change of
    variables), so the step is linearised where the released point lies. On the
    paper's simulation (m = 7, n = 10^4, eps = 1/4), against exact re-solves for the
    same draws of V, the linearised spread of theta_DP is unbiased on average over
    released points (within 1.5% per coefficient) and within 13% at the worst point
    (``tests/models/test_logistic_inference.py``): a random error of the width that
    costs about 0.001 of coverage.

    *Bias correction.* In this model theta_DP = M I theta_MLE - M V + W with
    M = (I + gamma Id)^{-1} (using Id - gamma M = M I): the ridge term shrinks the
    estimate by M I. Undoing it, theta_c = (M I)^{-1} theta_DP = theta_DP +
    gamma I^{-1} theta_DP has the error

        theta_c - theta_0 = (theta_MLE - theta_0) - I^{-1} V + (Id + gamma I^{-1}) W,

    whose law does not depend on theta_0: a pivot. (A basic bootstrap centred at
    theta_DP instead corrects the shrinkage with the noisy -gamma M theta_DP, whose own
    noise it ignores: on the paper's simulation at eps = 1/4 that left the intervals
    about 8% too narrow, with coverage 0.93 instead of 0.95.)

    *Parametric bootstrap* (Ferrando, Wang & Sheldon 2022). Draws of the pivot, from
    N(0, I^{-1}) and the public noise laws of V* and W*, mapped to the reported units
    by ``transform``; the interval for phi = a'theta is [phi_c - q_{1 - alpha/2},
    phi_c - q_{alpha/2}], q the quantiles of the draws and phi_c = a'theta_c. It covers
    the sampling error and the noise V and W, which are not normal (l_inf noise is a
    Gamma radius times a uniform point of the cube). The standard errors are the exact
    standard deviations of the same linear model, sqrt(diag(T (I^{-1} +
    I^{-1} Sigma_V I^{-1} + B Sigma_W B') T')), B = Id + gamma I^{-1}, with Sigma_V and
    Sigma_W the noise covariances (E||V||^2 / m Id for l1, l2 and l_inf balls).

    *What it assumes.* The logistic model holds (the bootstrap is parametric), n is
    large enough for the normal approximation of the MLE, and the released
    information is close to I. The last is the price of privacy: the information
    carries K-norm noise E. Where the noise makes it indefinite, eigenvalues are
    raised to a floor (:func:`floor_information`), which widens the intervals. To
    second order E[(I + E)^{-1}] = I^{-1} + I^{-1} E[E I^{-1} E] I^{-1} > I^{-1}, so
    noise in the information errs on the side of wider, conservative intervals.

    References
    ----------
    C. Ferrando, S. Wang and D. Sheldon, "Parametric Bootstrap for Differentially
    Private Confidence Intervals", AISTATS (2022). Paper Section 4 (objective
    perturbation), Proposition "Postprocessing" (nothing here costs privacy).

    Examples
    --------
    The noise-free limit (gamma = 0, no noise) gives the Wald intervals of the maximum
    likelihood estimate:

    >>> inf = LogisticInference([0.5, -1.0], np.diag([400.0, 100.0]), 0.0, None, None, np.eye(2))
    >>> inf.bse().round(4).tolist()
    [0.05, 0.1]
    >>> inf.conf_int(0.05).round(1).tolist()
    [[0.4, 0.6], [-1.2, -0.8]]
    """

    def __init__(self, theta, information, gamma, noise, output_noise, transform):
        self.theta = np.asarray(theta, dtype=float)
        self.information = np.asarray(information, dtype=float)
        self.gamma = float(gamma)
        self.noise = noise
        self.output_noise = output_noise
        self.transform = np.asarray(transform, dtype=float)

    @functools.cached_property
    def _maps(self):
        inv = np.linalg.inv(self.information)
        inv = 0.5 * (inv + inv.T)
        return inv, np.eye(len(self.theta)) + self.gamma * inv, np.linalg.cholesky(self.information)

    def estimate(self):
        """Return the bias-corrected coefficients that the intervals are centred on.

        Returns
        -------
        ndarray of shape (p,)
            T (theta_DP + gamma I^{-1} theta_DP): the ridge term's shrinkage undone
            (class Notes).
        """
        return self.transform @ (self.theta + self.gamma * np.linalg.solve(self.information, self.theta))

    def covariance(self):
        """Return the covariance of the bias-corrected coefficients' error under the linearised model.

        Returns
        -------
        ndarray of shape (p, p)
            T (I^{-1} + I^{-1} Sigma_V I^{-1} + B Sigma_W B') T' with B = Id + gamma I^{-1}
            (class Notes).
        """
        inv, back, _ = self._maps
        cov = inv.copy()
        if self.noise is not None:
            cov = cov + inv @ _noise_covariance(self.noise) @ inv
        if self.output_noise is not None:
            cov = cov + back @ _noise_covariance(self.output_noise) @ back.T
        return self.transform @ cov @ self.transform.T

    def bse(self):
        """Return the standard errors of the reported coefficients.

        Returns
        -------
        ndarray of shape (p,)
            Square roots of the diagonal of :meth:`covariance`.
        """
        return np.sqrt(np.diag(self.covariance()))

    @functools.cached_property
    def deviations(self):
        """Bootstrap draws of the bias-corrected coefficients' error, shape (B, p).

        ``BOOTSTRAP_DRAWS`` draws from a fixed seed (class Notes): a deterministic
        function of the releases.
        """
        inv, back, L = self._maps
        m = len(self.theta)
        seeds = np.random.SeedSequence(_BOOTSTRAP_SEED).spawn(3)
        # theta_MLE - theta_0 ~ N(0, I^{-1}): L^{-T} times standard normals, I = L L'.
        gen = np.random.default_rng(seeds[0])
        dev = np.linalg.solve(L.T, gen.standard_normal((m, BOOTSTRAP_DRAWS))).T
        if self.noise is not None:
            dev -= self.noise.public_law_sample(BOOTSTRAP_DRAWS, seed=seeds[1]) @ inv
        if self.output_noise is not None:
            dev += self.output_noise.public_law_sample(BOOTSTRAP_DRAWS, seed=seeds[2]) @ back.T
        return dev @ self.transform.T

    def conf_int(self, alpha=0.05):
        """Return basic parametric-bootstrap intervals of the reported coefficients.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the nominal coverage, in (0, 1).

        Returns
        -------
        ndarray of shape (p, 2)
            Lower and upper ends: [phi - q_{1 - alpha/2}, phi - q_{alpha/2}] with q the
            quantiles of :attr:`deviations`.
        """
        alpha = check_probability(alpha, "alpha", "LogisticInference.conf_int")
        phi = self.estimate()
        lo_q, hi_q = np.quantile(self.deviations, [alpha / 2, 1 - alpha / 2], axis=0)
        return np.column_stack([phi - hi_q, phi - lo_q])


class InferenceSummary:
    """A statsmodels-like table of a private fit: coefficients, standard errors, intervals, privacy terms.

    Built by :meth:`knorm.models.LogisticRegression.summary` from released and public
    quantities only; ``print`` it, or read its attributes.

    Parameters
    ----------
    title : str
        First line.
    names : list of str
        Names of the coefficients (intercept first).
    coef : array_like of shape (p,)
        The released coefficients.
    corrected : array_like of shape (p,)
        The bias-corrected coefficients the intervals are centred on.
    bse : array_like of shape (p,)
        Standard errors.
    conf_int : array_like of shape (p, 2)
        Interval ends.
    alpha : float
        One minus the nominal coverage.
    terms : list of (str, str)
        The privacy terms, as (name, value) lines.
    notes : list of str
        Lines printed under the table.

    Attributes
    ----------
    title, names, coef, corrected, bse, conf_int, alpha, terms, notes
        As given (arrays as float ndarrays).

    Examples
    --------
    >>> s = InferenceSummary("fit", ["x0"], [0.9], [1.0], [0.1], [[0.8, 1.2]], 0.05, [("epsilon", "1")], [])
    >>> print(s)  # doctest: +NORMALIZE_WHITESPACE
    fit
    ======================================================================
    epsilon: 1
    ----------------------------------------------------------------------
                     coef  corrected    std err     [0.025     0.975]
    x0             0.9000     1.0000     0.1000     0.8000     1.2000
    ======================================================================
    """

    def __init__(self, title, names, coef, corrected, bse, conf_int, alpha, terms, notes):
        self.title = str(title)
        self.names = [str(n) for n in names]
        self.coef = np.asarray(coef, dtype=float)
        self.corrected = np.asarray(corrected, dtype=float)
        self.bse = np.asarray(bse, dtype=float)
        self.conf_int = np.asarray(conf_int, dtype=float)
        self.alpha = float(alpha)
        self.terms = list(terms)
        self.notes = list(notes)

    def __str__(self):
        width = max(12, *(len(n) for n in self.names))
        rule = max(70, width + 58)
        lo, hi = f"[{self.alpha / 2:g}", f"{1 - self.alpha / 2:g}]"
        lines = [self.title, "=" * rule]
        lines += [f"{k}: {v}" for k, v in self.terms]
        lines += ["-" * rule, f"{'':<{width}} {'coef':>10} {'corrected':>10} {'std err':>10} {lo:>10} {hi:>10}"]
        for name, c, cc, s, (a, b) in zip(self.names, self.coef, self.corrected, self.bse, self.conf_int):
            lines.append(f"{name:<{width}} {c:>10.4f} {cc:>10.4f} {s:>10.4f} {a:>10.4f} {b:>10.4f}")
        lines.append("=" * rule)
        lines += self.notes
        return "\n".join(lines)

    __repr__ = __str__


def logistic_summary(clf, inference, alpha):
    """Return the :class:`InferenceSummary` of a fitted binary LogisticRegression.

    Parameters
    ----------
    clf : LogisticRegression
        Fitted with two classes and a released Fisher information; only its released
        and public attributes are read.
    inference : LogisticInference
        The linearised law of its release.
    alpha : float
        One minus the nominal coverage of the intervals, in (0, 1) (checked by the caller).

    Returns
    -------
    InferenceSummary
        The coefficients, the bias-corrected ones, standard errors, intervals and the
        privacy terms of the two releases.
    """
    inf = inference
    names = list(clf._coefficient_names())  # the names of conf_int's rows
    coef = np.concatenate([clf.intercept_ if clf.fit_intercept else [], clf.coef_[0]])
    model, info = clf.release_, clf.information_release_
    eps_model = model.epsilon
    budget = (
        ("epsilon", f"{clf.epsilon_:g} = {eps_model:g} (objective perturbation) + {info.epsilon:g}")
        if getattr(clf, "rho_", None) is None
        else ("rho", f"{clf.rho_:g} >= {eps_model:g}^2 / 2 (objective perturbation) + {info.epsilon:g}^2 / 2")
    )
    terms = [
        ("classes", f"{clf.classes_.tolist()} (positive: {clf.classes_.tolist()[1]!r})"),
        (budget[0], f"{budget[1]} (Fisher information); neighbours: {clf.neighbours}"),
        (
            "model noise",
            f"{model.ball_name} ball, sensitivity {model.sensitivity.value:g} ({model.sensitivity.kind}), "
            f"noise scale {model.noise_scale:.4g}, q = {clf.q_:g}, gamma = {clf.gamma_:.4g}",
        ),
        (
            "information noise",
            f"{info.ball_name} ball, sensitivity {info.sensitivity.value:g} ({info.sensitivity.kind}), "
            f"noise scale {info.noise_scale:.4g}, eigenvalues floored: {clf.n_floored_}",
        ),
    ]
    notes = [
        "coef: the release. corrected: coef with the shrinkage of objective perturbation's ridge term undone;",
        f"std err and the interval are the corrected estimate's: parametric bootstrap ({BOOTSTRAP_DRAWS} draws,",
        "fixed seed) covering sampling error and privacy noise, from released and public quantities only.",
    ]
    if clf.n_floored_:
        notes.append(
            f"{clf.n_floored_} eigenvalue(s) of the released information were raised to the floor: the "
            "information was too noisy there, and the intervals are wide. Spend a larger inference_share."
        )
    title = f"{type(clf).__name__}: private (epsilon-DP) logistic regression by objective perturbation"
    return InferenceSummary(title, names, coef, inf.estimate(), inf.bse(), inf.conf_int(alpha), alpha, terms, notes)
