"""Private logistic regression by extended objective perturbation (paper Section 4): binary and multiclass."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from scipy.special import log_expit, log_softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from knorm._ingest import check_bounds
from knorm._validation import check_positive, check_probability, numeric_input, param_error, refuse_complex
from knorm.accounting.zcdp import rho_from_epsilon
from knorm.exceptions import IntervalUnavailableError
from knorm.geometry import NormBall
from knorm.models._base import PrivateEstimatorMixin, diagnose, resolve_random_state
from knorm.models._params import HasMethods, Interval, StrOptions, check_params, resolve_budget
from knorm.models.labels import encode_labels
from knorm.models.logistic_inference import auto_inference_share, logistic_summary
from knorm.models.logistic_information import release_information
from knorm.models.logistic_noise import NORMS, certified_sensitivity, model_ball, norm_name
from knorm.models.logistic_scaling import coefficient_transform, scale_features, to_original_units
from knorm.models.losses import logistic_loss
from knorm.models.objective import TAU2_INFERENCE, TAU2_POINT, ObjectiveFit, auto_q, fit_objective_perturbation
from knorm.models.release_plan import check_fit_budget, release_rngs

__all__ = ["LogisticRegression", "auto_q"]

_OWNER = "LogisticRegression"


class LogisticRegression(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private logistic regression by extended objective perturbation (epsilon-DP, or rho-zCDP), binary or multiclass.

    Releases theta_DP = argmin (1/n) sum_i l(theta; x_i, y_i) + gamma/(2n) ||theta||^2
    + V'theta / n, with V drawn from the K-norm mechanism of the gradient sensitivity
    space (paper Section 4), and, for two classes and when paid for, a noisy Fisher
    information at theta_DP from which standard errors and confidence intervals follow
    by post-processing (or are refused, with the public reason). Several classes use the multinomial (softmax) loss with the K-norm
    of its joint gradient space, or one binary fit per class (one-vs-rest).

    Parameters
    ----------
    epsilon : float or None, default=None
        Privacy budget of the whole fit, in (0, inf). None means 1.0, unless ``rho`` is
        given (exactly one of the two is used).
    rho : float or None, default=None
        Instead of ``epsilon``: a rho-zCDP budget for the whole fit, in (0, inf). Each
        release is still the pure epsilon_i-DP objective perturbation (and Fisher
        information) below, with epsilon_i chosen so that sum_i epsilon_i^2 / 2 <= rho:
        epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4) and
        zCDP composes by adding rho (their Lemma 2.3). See Notes, *Under rho*.
    norm : {'auto', 'linf', 'l2', 'l1', 'softmax'} or NormBall, default='auto'
        The K-norm of the noise. 'auto' is 'linf' (the paper's near-optimal choice)
        for binary and one-vs-rest fits and 'softmax' (:class:`~knorm.sensitivity.softmax.SoftmaxBall`,
        tighter than l_inf) for multinomial fits; 'softmax' is 'linf' for two
        classes. A NormBall must have dimension d = (n_features + fit_intercept)
        times 1 (binary, one-vs-rest) or k - 1 (multinomial with k classes); its
        sensitivity is computed (certified) from the gradient sensitivity space, and a
        ball with no certified method is refused.
    q : float in (0, 1) or 'auto', default='auto'
        Share of the objective-perturbation budget spent on the noise V; the rest pays
        for the Hessian term through gamma. 'auto' is the data-independent rule of
        :func:`~knorm.models.objective.auto_q`, which uses n under replace-one
        neighbours and its n-free limit under add/remove ones, and puts more of epsilon
        on the noise when ``inference_share > 0`` (the intervals' bootstrap carries the
        noise by one Newton step; the ridge bias it models exactly); q = 0.5 is the
        paper's setting.
    inference_share : float in [0, 1) or 'auto', default=0.0
        Share of epsilon spent on releasing the Fisher information, for ``bse_``,
        :meth:`conf_int` and the intervals of :meth:`summary` (two classes only). 0 (the
        default) spends everything on the model and gives no intervals; they can be
        bought later with :meth:`release_information`, charged separately. 'auto' is the
        data-independent rule of
        :func:`~knorm.models.logistic_inference.auto_inference_share` (between 0.05
        and 0.5: more at small epsilon and n; 0.25 under add/remove neighbours), and
        0 for more than two classes.
    multi_class : {'multinomial', 'ovr'}, default='multinomial'
        For more than two classes: one multinomial (softmax) release, or one binary
        release per class at epsilon / k each (one-vs-rest). Ignored for two classes.
    bounds_X : pair (lower, upper), required
        Declared domain of the features: scalars or arrays of length n_features.
        Values outside are clipped (counted in ``fit_diagnostics_``). Never
        taken from the data.
    fit_intercept : bool, default=True
        Add a constant-1 column (it counts in m).
    classes : array-like of labels, default=None
        The labels, declared publicly (at least two; sorted, the first is the
        baseline of the multinomial model, the second the positive class of a binary
        one). A label of ``y`` outside them is an error, whichever labels occur; a
        ``y`` holding only some of them is fitted. Required unless ``public_labels``.
        The error names the declared classes and counts the rows with another label
        (a count of the data, for the curator: not public); it never shows the label.
    public_labels : bool, default=False
        Read the labels from ``y`` instead: this reveals which labels occur (and
        refuses a ``y`` with one label), so it is private only if the label set is
        public knowledge.
    neighbours : {'replace', 'add_remove'}, default='replace'
        Replace-one neighbours (paper Definition "DP") or add/remove-one (paper
        Remark on add/delete-DP; derivation in the Notes).
    accountant : PrivacyAccountant, default=None
        Charged in ``fit`` before any noise is drawn, once per release (their epsilons
        sum to ``epsilon``); a refused charge raises and nothing is fitted. A rho ledger
        charges each release eps_i^2 / 2 (under ``rho`` they sum to at most ``rho``).
        Clones of this estimator share it.
    max_iter : int, default=100
        Newton iterations.
    tol : float, default=1e-8
        Stop when the Newton decrement of the (sum-form) objective is <= tol.
    random_state : None, int, Generator or RandomState, default=None
        Source of the noise. None (the default) draws fresh entropy from the
        operating system: use it to publish. A fixed int seed is for tests and
        reproducible examples: an accountant refuses a second fit with the same
        seed (a fit with several releases gives each a child of the seed), and
        without one every such release warns (``PrivacyWarning``). A Generator or
        RandomState is identified by its state: an accountant refuses a second fit
        from the same state, and without one a state reused in this process warns.
        A Generator advances as it draws; clones get a child of it, so they never
        draw the same noise. ``True`` and ``False`` are refused.
    sampler : {'auto', 'lattice', 'continuous'}, default='auto'
        How the noise is drawn. 'auto' (the default) is the exact lattice release
        (:mod:`knorm.mechanisms.lattice`: the statistic rounded to a power-of-two
        lattice and integer noise drawn exactly, so floating point cannot leak the
        data) wherever the noise ball allows it, and continuous noise otherwise.
        'continuous' is exposed to the least-significant-bit attack of Mironov (2012);
        every release states its sampler and caveats.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients, in the original feature units (private release). Multinomial:
        one row per class, the baseline ``classes_[0]`` zero; one-vs-rest: each
        class against the others.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts, in the original units (0 without intercept).
    classes_ : ndarray of shape (n_classes,)
        The labels; ``classes_[1]`` is the positive class of a binary fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Names of the features seen in ``fit``, only when X has string column names.
    release_ : Release or None
        The record of the model's release: theta_DP in the scaled coordinates, with
        its privacy terms (None for one-vs-rest, which has one per class).
    releases_ : tuple of Release
        Every release of the fit, in order: the model's (one per class for
        one-vs-rest), then the Fisher information's, if any. Their epsilons sum to
        ``epsilon_``.
    information_release_ : Release or None
        The noisy Fisher information at theta_DP (scaled coordinates, upper triangle
        with the diagonal doubled; see
        :func:`~knorm.sensitivity.softmax.logistic_information_space`), or None.
    sensitivity_ : Sensitivity
        Certified gradient sensitivity Delta_K.
    gamma_ : float
        The regularisation gamma (errata item 1; multiclass: Notes).
    q_ : float
        The q used (resolved from 'auto').
    inference_share_ : float
        The share of epsilon of ``fit`` spent on the Fisher information (resolved from
        'auto'; a later :meth:`release_information` does not change it).
    n_floored_ : int
        Eigenvalues of the released information raised to the floor m / 4 (0 when the
        release was positive definite enough, or none was made; a function of the
        release, so public).
    epsilon_ : float or None
        Budget spent by the fit (None under ``rho``); a later :meth:`release_information`
        adds its epsilon.
    rho_ : float or None
        The rho budget of the fit (None under ``epsilon``); the releases' eps_i^2 / 2 sum
        to at most it.
    fit_diagnostics_ : FitDiagnostics
        CURATOR-ONLY, NOT private: the exact n, the clipped entries, Newton's
        iterations and whether it met ``tol``. Dropped on pickling; never publish
        it. A fit that clips more than 5% of the entries warns the curator.

    Notes
    -----
    *Mechanism* (paper Algorithm "Extended Objective Perturbation", Theorem
    "Extended Objective Perturbation"; errata item 1). In the scaled
    coordinates below, every record has x in [-1, 1]^m and y in {0, 1}, and:

    1. lambda = m / 4 bounds the eigenvalues of the per-record Hessian
       sigma'(theta'x) x x' (sigma' <= 1/4, ||x||_2^2 <= m; paper Section 4.1;
       the intercept column counts in m).
    2. Delta_K >= sup ||grad l(theta; z) - grad l(theta; z')||_K over records and
       theta, from :func:`~knorm.sensitivity.logistic_gradient_space` (paper
       Section 4.1): 2 for l_inf, 2 sqrt(m) for l2, 2m for l1.
    3. gamma is the smallest value for which the noise factor exp(eps q r) and the
       Jacobian factor 1 + r (1 - r) m / gamma, both functions of the same residual
       r = |sigma(theta'x) - y| of the differing record, multiply to at most exp(eps)
       (:func:`~knorm.models.objective.logistic_gamma`, a refinement of the paper's
       proof). It is below lambda / (exp(eps (1 - q)) - 1), the corrected formula of
       errata item 1 that bounds each factor at its own worst r (the printed one is
       negative and breaks privacy): 1.3 times smaller at q = 1/2, 3 times at q = 0.9.
    4. V has density proportional to exp(-eps_op q ||V||_K / Delta_K), where
       eps_op = 0.99 eps is the share of objective perturbation proper.
    5. The proof needs the exact minimiser: the fit is published only if the gradient
       norm of the perturbed objective is at most the certified 1e-8, and the
       remaining 1% of eps pays for output noise covering the distance tau / gamma
       to the exact minimiser (approximate minima perturbation, Iyengar et al. 2019;
       :func:`~knorm.models.objective.fit_objective_perturbation`). Otherwise a
       ``ConvergenceError`` is raised and nothing is published: ``tol`` and
       ``max_iter`` never turn an unconverged fit into a published one. A gamma too
       small for a certified minimiser (eps (1 - q) in the dozens) is refused.

    Here eps is the budget of the model's release, epsilon (1 - inference_share).

    *Multiclass.* 'multinomial' releases Theta in R^((k-1) x m), one row per class
    other than the baseline, by the same algorithm with the multinomial loss
    (:func:`~knorm.models.objective.fit_objective_perturbation`, where the privacy
    proof's multiclass version is derived: the per-record Hessian has rank
    k - 1, and gamma = (m T / (k - 1)) / (exp(eps_op (1 - q) / (k - 1)) - 1) with
    T = 1 - 1/(k - 1)). Its gradient space is in :func:`~knorm.sensitivity.softmax.multinomial_gradient_space`:
    each column of a per-record gradient lies in C = {u : sum u_+ <= 1, sum u_- <= 1},
    whence the ball 'softmax' with Delta = 2. 'ovr' fits k binary models, each at
    epsilon / k (sequential composition). On the multiclass data sets shipped with
    scikit-learn, at equal epsilon in [1/4, 16] (``benchmarks/bench_multiclass.py``),
    the multinomial release was more accurate than one-vs-rest at every epsilon on
    digits (k = 10; 0.53 against 0.31 test accuracy at epsilon = 4), where the softmax
    ball's gain over l_inf is largest. On iris and wine (k = 3) it was ahead at 9 of
    14 epsilons (by up to 0.07), and one-vs-rest's leads at the other 5 were all within
    one standard error of the difference; hence the default.

    *Intervals* (two classes; beside the paper). A share s of epsilon (or a later,
    separately charged :meth:`release_information`) releases the Fisher information at
    theta_DP with l_inf noise
    (:func:`~knorm.models.logistic_information.release_information`, where its
    sensitivity is derived); theta_DP is public then, so the two releases compose.
    Standard errors and intervals come from a parametric bootstrap of both releases
    (:class:`~knorm.models.logistic_inference.LogisticInference`; Ferrando, Wang &
    Sheldon 2022): they cover the sampling error and the privacy noise (V, gamma, the
    output noise, the information's noise), are centred on the estimate with the ridge
    term's shrinkage undone and widened for the curvature along that correction (a
    self-concordance bound, Bach 2010), use only the releases and public quantities,
    and are deterministic. They are refused, with the public reason, where the released
    information is too noisy or the ridge term shrinks too much for a first-order
    correction (large coefficients in the scaled units, near-separable data, small
    n epsilon). Coverage of nominal 95% intervals on the paper's simulation is in the
    ``logistic_intervals`` experiment.

    *Default share.* The information is paid for only when asked: at epsilon = 0.1 and
    0.25, 'auto' (which spends up to half of epsilon on it) lowered the test accuracy on
    the housing data (label: value above the median, 4 features) and on the paper's
    simulation (``benchmarks/bench_logistic_default.py``).

    *Scaling.* Features are clipped to ``bounds_X`` and mapped into [-1, 1]: affinely
    with an intercept, by max(|lower_j|, |upper_j|) without one, so that the model stays
    intercept-free (:mod:`knorm.models.logistic_scaling`). coef_ and intercept_ are
    mapped back to the original units.

    *Add/remove neighbours* (X' = X plus one record z). The same lambda and gamma, with
    the sensitivity of the one-record gradient space (half the replace-one Delta for two
    classes); the derivation is in the Notes of
    :func:`~knorm.models.objective.fit_objective_perturbation`. n is private under
    add/remove neighbours, so ``q='auto'`` uses the n-free limit of its rule and
    ``inference_share='auto'`` a fixed 0.25. The information release has Delta = 1/2
    with every entry doubled.

    *Under rho* (beyond the paper). The fit makes the same releases, each pure
    eps_i-DP, hence (eps_i^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4); their
    composition, adaptive as the information release depends on theta_DP, is
    (sum_i eps_i^2 / 2)-zCDP (their Lemma 2.3). With f_i the shares of the releases as
    under epsilon (1 - s and s; 1/k each for one-vs-rest), eps_i = f_i E with
    E = sqrt(2 rho / sum_i f_i^2), rounded down so that the ledger's charges sum to at
    most rho. The 'auto' rules for q and the inference share are evaluated at
    epsilon = sqrt(2 rho). Objective perturbation with Gaussian noise (Kifer, Smith &
    Thakurta 2012) is not used: its theorem gives (epsilon, delta)-DP, not zCDP, and its
    Renyi divergence has a term linear in Delta / sigma (the noise's shift at the output,
    grad l(theta; z) - grad l(theta; z'), depends on theta, so it can align with the
    noise), so the best zCDP statement at hand, (xi + rho)-zCDP with
    xi = log(1 + lambda / gamma) + sqrt(2 pi) Delta / sigma, spends more than this route
    at every budget of interest.

    *Privacy of the outputs.* coef_ and intercept_ come from the eps-DP release (the
    record ``release_``); ``bse_``, :meth:`conf_int` and :meth:`summary` are
    post-processing of ``releases_``; the other learned quantities are public
    functions of the parameters and n (public under replace-one neighbours), except
    ``fit_diagnostics_``, which is for the curator only. The noise V is not kept:
    with theta_DP it reveals the exact gradient sum. Declared ``classes`` keep the
    label set private; ``public_labels=True`` reads it from ``y``. Predictions on new
    data are post-processing of the released model and do not clip.

    References
    ----------
    Paper Section 4 (Algorithm "Extended Objective Perturbation" and its theorem,
    proved in the appendix), Section 4.1 (logistic loss, lambda = m/4, sensitivity
    space), Section 4.2 (simulation, q); Remark on add/delete-DP (Section 2);
    errata item 1 (gamma). C. Ferrando, S. Wang and D. Sheldon, "Parametric
    Bootstrap for Differentially Private Confidence Intervals", AISTATS (2022).
    F. Bach, "Self-concordant analysis for logistic regression", Electronic Journal of
    Statistics 4 (2010).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = (rng.random(5000) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    >>> clf = LogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.coef_.shape, clf.intercept_.shape, clf.gamma_ > 0
    ((1, 2), (1,), True)
    >>> clf.predict(X[:3]).shape
    (3,)

    Intervals need the Fisher information, released with a share of epsilon (or later):

    >>> clf = LogisticRegression(
    ...     epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], inference_share=0.25, random_state=0
    ... ).fit(X, y)
    >>> clf.conf_int().shape  # intercept first, then the features
    (3, 2)

    Three classes, one multinomial release:

    >>> y3 = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(5000), [-0.3, 0.3])
    >>> clf3 = LogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1, 2], random_state=0).fit(X, y3)
    >>> clf3.coef_.shape, clf3.predict_proba(X[:2]).shape
    ((3, 2), (2, 3))
    """

    #: The rule(s) of each constructor parameter, checked first in fit (knorm.models._params).
    _parameter_rules = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "rho": [Interval(Real, 0, None, closed="neither"), None],
        "norm": [StrOptions({"auto", "softmax", *NORMS}), NormBall],
        "q": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "inference_share": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "multi_class": [StrOptions({"multinomial", "ovr"})],
        "bounds_X": ["array-like", None],
        "fit_intercept": ["boolean"],
        "classes": ["array-like", None],
        "public_labels": ["boolean"],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "accountant": [HasMethods(["spend"]), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
        "sampler": [StrOptions({"auto", "lattice", "continuous"})],
    }

    def __init__(
        self,
        *,
        epsilon=None,
        rho=None,
        norm="auto",
        q="auto",
        inference_share=0.0,
        multi_class="multinomial",
        bounds_X=None,
        fit_intercept=True,
        classes=None,
        public_labels=False,
        neighbours="replace",
        accountant=None,
        max_iter=100,
        tol=1e-8,
        random_state=None,
        sampler="auto",
    ):
        self.epsilon = epsilon
        self.rho = rho
        self.norm = norm
        self.q = q
        self.inference_share = inference_share
        self.multi_class = multi_class
        self.bounds_X = bounds_X
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.public_labels = public_labels
        self.neighbours = neighbours
        self.accountant = accountant
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.sampler = sampler

    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features; a pandas DataFrame keeps its column names.
        y : array-like of shape (n_samples,)
            Labels (two or more classes).

        Returns
        -------
        LogisticRegression
            This estimator, fitted: ``coef_``, ``intercept_`` and the records of the
            releases, ``releases_``.
        """
        # Every parameter first: before any data is read or any budget charged. (No nested
        # estimators here, so scikit-learn's prefer_skip_nested_validation has no counterpart.)
        check_params(self)
        unit, budget = resolve_budget(self)
        # The rules for q and the inference share take an epsilon: under rho, sqrt(2 rho) (Notes).
        epsilon = budget if unit == "epsilon" else math.sqrt(2.0 * budget)
        refuse_complex(X, "X", _OWNER)
        with numeric_input(_OWNER, X=X):  # y holds labels, which may be strings
            X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y_idx = encode_labels(y, self.classes, self.public_labels, _OWNER)
        k = len(classes)
        lo, hi = check_bounds(self.bounds_X, X.shape[1], _OWNER, "bounds_X")
        Z, slope, shift, n_clipped = scale_features(X, lo, hi, self.fit_intercept)
        n, m = Z.shape
        share = self._resolve_share(k, n, m, epsilon)
        ovr = k > 2 and self.multi_class == "ovr"
        # The shares of the releases: the model(s), then the Fisher information (if any).
        shares = [1.0 / k] * k if ovr else [1.0 - share] + ([share] if share > 0 else [])
        epsilons = _split(unit, budget, shares)
        n_releases = len(epsilons)
        check_fit_budget(self.accountant, _OWNER, epsilons=epsilons)
        rngs = release_rngs(self._release_rng(), n_releases)
        eps_info = epsilons[1] if share > 0 else 0.0
        if not ovr:  # one release; k = 2 is the binary loss
            fits = [self._fit_model(Z, y_idx, k, epsilons[0], rngs[0], "", inference=share > 0)]
        else:
            labels = classes.tolist()
            fits = [
                self._fit_model(
                    Z, (y_idx == c).astype(float), 2, epsilons[c], rngs[c], f", class {labels[c]!r} vs rest"
                )
                for c in range(k)
            ]
        thetas = np.vstack([f.theta.reshape(-1, m) for f in fits])
        if k > 2 and len(fits) == 1:  # multinomial: the baseline class has theta = 0
            thetas = np.vstack([np.zeros(m), thetas])

        releases = [f.release for f in fits]
        info, inference = None, None
        if share > 0:
            info, inference = release_information(
                Z,
                fits[0],
                coefficient_transform(slope, shift, self.fit_intercept),
                epsilon=eps_info,
                rng=rngs[1],
                neighbours=self.neighbours,
                accountant=self.accountant,
                sampler=self.sampler,
                label=f"{_OWNER}.fit (Fisher information at the released theta, for intervals)",
            )
            releases = [*releases, info]
        # Every release is made: only now is the fit stored.
        self.coef_, self.intercept_ = to_original_units(thetas, slope, shift, self.fit_intercept)
        self.classes_ = classes
        self.release_ = releases[0] if len(fits) == 1 else None
        self.releases_ = tuple(releases)
        self.sensitivity_ = fits[0].release.sensitivity  # the certified Delta_K the release used
        self.gamma_, self.q_ = fits[0].gamma, fits[0].q
        self.epsilon_: float | None = budget if unit == "epsilon" else None
        self.rho_: float | None = budget if unit == "rho" else None
        self.inference_share_ = share
        self.information_release_, self._inference = info, inference
        self.n_floored_ = 0 if inference is None else inference.n_floored
        # Public: the scale map and the model release's own budget, for release_information.
        self._scaling, self._model_epsilon = (lo, hi), fits[0].epsilon
        n_iter, converged = max(f.n_iter for f in fits), all(f.converged for f in fits)
        self.fit_diagnostics_ = diagnose(n, n_clipped, X.size, _OWNER, n_iter=n_iter, converged=converged)
        return self

    # -- the releases ----------------------------------------------------------------------
    def _fit_model(self, Z, y, k, epsilon, rng, what, inference=False):
        """Release the model of k classes (k = 2: binary) by objective perturbation: an ObjectiveFit."""
        n, m = Z.shape
        loss = logistic_loss(k)
        ball = model_ball(self.norm, loss, m, _OWNER)
        sens = certified_sensitivity(loss.gradient_space(m, neighbours=self.neighbours), ball, _OWNER)
        kind = "objective perturbation" if k == 2 else "multinomial objective perturbation"
        return fit_objective_perturbation(
            loss,
            Z,
            y,
            ball=ball,
            sensitivity=sens,
            epsilon=epsilon,
            q=self._resolve_q(n, ball, sens.value, epsilon, k, inference),
            rng=rng,
            accountant=self.accountant,
            max_iter=self.max_iter,
            tol=self.tol,
            label=f"{_OWNER}.fit ({kind}, {norm_name(self.norm, k)}{what})",
            sampler=self.sampler,
            neighbours=self.neighbours,
        )

    def _resolve_q(self, n, ball, sensitivity, epsilon, k, inference):
        if self.q != "auto":
            return float(self.q)
        # n is private under add/remove neighbours: the rule's n-free limit. A fit that releases
        # its information for intervals uses the rule over small coefficients (auto_q, Notes).
        return auto_q(
            n if self.neighbours == "replace" else None,
            ball,
            sensitivity,
            epsilon,
            n_classes=k,
            tau2=TAU2_INFERENCE if inference else TAU2_POINT,
        )

    def _resolve_share(self, k, n, m, epsilon):
        if self.inference_share == "auto":
            if k > 2:
                return 0.0
            return auto_inference_share(n, m, epsilon, neighbours=self.neighbours)
        share = float(self.inference_share)
        if share > 0 and k > 2:
            raise ValueError(
                f"The 'inference_share' parameter of {_OWNER} must be 0 or 'auto' for more than two classes "
                f"(intervals are for the binary model). Got {self.inference_share!r} instead, with {k} classes."
            )
        return share

    # -- inference -------------------------------------------------------------------------
    def _inference_or_raise(self, what):
        check_is_fitted(self)
        if self._inference is None:
            if len(self.classes_) > 2:
                raise IntervalUnavailableError(
                    f"{_OWNER}.{what} gives intervals for two classes only: this fit has {len(self.classes_)} "
                    "classes, whose models release no Fisher information."
                )
            raise ValueError(
                f"{_OWNER}.{what} needs the released Fisher information, but no share of epsilon was spent on it "
                "(inference_share=0, the default, which keeps the whole budget for the model). Release it at the "
                "published coefficients with release_information(X, epsilon) (charged separately), or refit with "
                "inference_share > 0."
            )
        self._inference.check(f"{_OWNER}.{what}")
        return self._inference

    def release_information(self, X, epsilon, *, random_state=None):
        """Release the Fisher information at the published coefficients, for intervals: a second release.

        For a fit made with ``inference_share=0``: the information
        I(theta_DP) = sum_i sigma'(theta_DP'z_i) z_i z_i' of the same records, at the
        already published theta_DP, with l_inf noise
        (:func:`~knorm.models.logistic_information.release_information`). It costs
        ``epsilon`` more (sequential composition: theta_DP is public when it is made),
        charged to the estimator's accountant, and never changes the model. Labels are
        not needed: the information does not depend on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The features the model was fitted on (clipped to ``bounds_X`` as in ``fit``).
            Other records give intervals for the wrong data.
        epsilon : float
            Budget of this release, in (0, inf).
        random_state : None, int, Generator or RandomState, default=None
            Source of the noise; None draws fresh entropy from the operating system (use
            it to publish). Fixed seeds are for tests, as for ``random_state`` of the
            estimator.

        Returns
        -------
        LogisticRegression
            This estimator, with ``information_release_`` set and the release appended
            to ``releases_`` (``epsilon_`` grows by ``epsilon``).

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``epsilon`` is not a positive float, the fit has more than two classes or
            already released the information, or ``X`` does not match the fit.
        """
        check_is_fitted(self)
        owner = f"{_OWNER}.release_information"
        epsilon = check_positive(epsilon, "epsilon", owner)
        if len(self.classes_) > 2:
            raise ValueError(f"{owner} is for two classes; this fit has {len(self.classes_)}.")
        if self.information_release_ is not None:
            raise ValueError(
                f"{owner}: the Fisher information of this fit was already released "
                f"(epsilon {self.information_release_.epsilon:g}); a second copy would need its own analysis."
            )
        refuse_complex(X, "X", owner)
        with numeric_input(owner, X=X):
            X = validate_data(self, X, reset=False, dtype=np.float64)
        lo, hi = self._scaling
        Z, slope, shift, _ = scale_features(X, lo, hi, self.fit_intercept)
        model = self.release_
        if model is None:  # only one-vs-rest fits have no single release, and they have k > 2 (refused above)
            raise ValueError(f"{owner} needs the model's single release; this fit has none.")
        fit = ObjectiveFit(model, self.gamma_, self.q_, self._model_epsilon, math.isfinite(model.epsilon), 0, True)
        if isinstance(random_state, (bool, np.bool_)):
            raise param_error(
                "random_state", owner, "None, an int >= 0, a Generator or a RandomState", random_state, TypeError
            )
        rng = resolve_random_state(random_state) if isinstance(random_state, np.random.RandomState) else random_state
        info, inference = release_information(
            Z,
            fit,
            coefficient_transform(slope, shift, self.fit_intercept),
            epsilon=epsilon,
            rng=rng,
            neighbours=self.neighbours,
            accountant=self.accountant,
            sampler=self.sampler,
            label=f"{owner} (Fisher information at the released theta, for intervals)",
        )
        self.information_release_, self._inference = info, inference
        self.n_floored_ = inference.n_floored
        self.releases_ = (*self.releases_, info)
        if self.rho_ is None:
            self.epsilon_ = self.epsilon_ + info.epsilon
        else:  # pure epsilon-DP is (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4)
            self.rho_ = self.rho_ + rho_from_epsilon(info.epsilon)
        return self

    @property
    def bse_(self):
        """Standard errors of (intercept, coefficients), covering sampling error and privacy noise.

        Post-processing of ``releases_``: standard deviations of the parametric bootstrap
        that :meth:`conf_int` uses
        (:meth:`~knorm.models.logistic_inference.LogisticInference.bse`), in the original
        units, the intercept first when ``fit_intercept``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            When the fit released no Fisher information (``inference_share=0`` without
            :meth:`release_information`, or more than two classes).
        IntervalUnavailableError
            When no valid interval can be computed from the releases (the message gives
            the public reason).
        """
        return self._inference_or_raise("bse_").bse()

    def conf_int(self, alpha=0.05):
        """Return confidence intervals for (intercept, coefficients), from released and public quantities only.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage, in (0, 1).

        Returns
        -------
        Intervals
            One interval per parameter, in the original units, named: the intercept first
            (when fitted, named 'intercept'; as statsmodels with a leading constant), then
            the features in order (their DataFrame names, else x1, x2, ...). Parametric
            bootstrap intervals of both releases covering sampling error and privacy
            noise, centred on the estimate with the ridge term's shrinkage undone,
            theta + gamma I^{-1} theta, and widened for the curvature along that
            correction (:class:`~knorm.models.logistic_inference.LogisticInference`);
            deterministic. They need not contain ``coef_``, which is shrunk. It prints as
            a table; ``np.asarray`` gives the array of shape (n_features + fit_intercept, 2)
            that earlier versions returned.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``alpha`` is not in (0, 1), or the fit released no Fisher information.
        IntervalUnavailableError
            When no valid interval can be computed from the releases: the released
            information is too noisy, or the ridge term shrinks the fit too much for a
            first-order correction. The message gives the public reason and what helps.
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.conf_int")
        inference = self._inference_or_raise("conf_int")
        draws = len(inference.deviations)
        method = f"parametric bootstrap of both releases ({draws} draws, basic intervals widened for the correction)"
        return self._named_intervals(inference.conf_int(alpha), alpha, method, draws)

    def summary(self, alpha=0.05):
        """Return a table of coefficients, standard errors, intervals and privacy terms (print it).

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage of the intervals, in (0, 1).

        Returns
        -------
        InferenceSummary
            Printable; computed from released and public quantities only. Without a
            released Fisher information, or where the intervals are refused, it shows the
            coefficients and privacy terms and says why there are no intervals
            (``refusal``). The corrected estimate is shown only where the bootstrap puts
            it reliably closer to the non-private fit than the release.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``alpha`` is not in (0, 1), or the fit has more than two classes.
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.summary")
        check_is_fitted(self)
        if len(self.classes_) > 2:
            raise ValueError(
                f"{_OWNER}.summary is for two classes; this fit has {len(self.classes_)} (read coef_ and intercept_)."
            )
        return logistic_summary(self, self._inference, alpha)

    # -- prediction --------------------------------------------------------------------------
    def decision_function(self, X):
        """Return the linear scores in the original units (no clipping: post-processing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: theta'x + intercept, positive values predicting ``classes_[1]``.
            Multiclass: one column per class (the baseline's is 0 for multinomial fits).
        """
        check_is_fitted(self)
        refuse_complex(X, "X", _OWNER)
        with numeric_input(_OWNER, X=X):
            X = validate_data(self, X, reset=False, dtype=np.float64)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        """Predict labels: the class with the largest score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        d = self.decision_function(X)
        if d.ndim == 1:
            return self.classes_[(d > 0).astype(int)]
        return self.classes_[np.argmax(d, axis=1)]

    def predict_log_proba(self, X):
        """Predict the log-probabilities of ``classes_``, computed stably.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Binary: log sigma(-d) and log sigma(d), d the :meth:`decision_function`.
            Multinomial: log softmax of the scores. One-vs-rest: the logs of the
            binary probabilities sigma(d_c), normalised to sum to one.
        """
        d = self.decision_function(X)
        if d.ndim == 1:
            return np.column_stack([log_expit(-d), log_expit(d)])
        if self.multi_class == "ovr":
            d = log_expit(d)
        return log_softmax(d, axis=1)

    def predict_proba(self, X):
        """Predict the probabilities of ``classes_`` under the released model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The exponentials of :meth:`predict_log_proba`.
        """
        return np.exp(self.predict_log_proba(X))

    def __sklearn_is_fitted__(self):
        # validate_data sets n_features_in_ before a refused charge; only coef_ means fitted.
        return hasattr(self, "coef_")


def _split(unit, budget, shares):
    """The epsilon of each release: shares of epsilon, or of rho as eps_i = f_i E with sum eps_i^2 / 2 <= rho.

    Under rho, E = sqrt(2 rho / sum f_i^2) makes sum_i (f_i E)^2 / 2 = rho; each eps_i is then
    lowered until the charges a rho ledger records (``rho_from_epsilon``, rounded up) sum to at most
    rho (Bun & Steinke 2016, Proposition 1.4 and Lemma 2.3).
    """
    if unit == "epsilon":
        if len(shares) == 1:
            return [budget]
        if len(shares) == 2:  # the model gets what the information leaves, as before
            info = budget * shares[1]
            return [budget - info, info]
        return [budget / len(shares)] * len(shares)  # one-vs-rest: epsilon / k each
    scale = math.sqrt(2.0 * budget / math.fsum(f * f for f in shares))
    epsilons = [f * scale for f in shares]
    while math.fsum(rho_from_epsilon(e) for e in epsilons) > budget:
        epsilons = [math.nextafter(e, 0.0) for e in epsilons]
    return epsilons
