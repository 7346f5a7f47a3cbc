"""Private logistic regression by extended objective perturbation (paper Section 4): binary and multiclass."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, log_expit, log_softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from knorm._validation import check_positive, check_probability, numeric_input, refuse_complex
from knorm.accounting import BudgetExceededError
from knorm.geometry import LpBall, NormBall
from knorm.mechanisms import KNormMechanism, nonprivate_active
from knorm.mechanisms.knorm_mechanism import GRADIENT_TOLERANCE, OUTPUT_SHARE
from knorm.models._base import PrivateEstimatorMixin, check_bounds, diagnose, to_unit_box
from knorm.models.logistic_inference import (
    BOOTSTRAP_DRAWS,
    InferenceSummary,
    LogisticInference,
    auto_inference_share,
    floor_information,
)
from knorm.models.multinomial import multinomial_objective_perturbation
from knorm.models.objective import auto_q, objective_perturbation, perturbation_gamma
from knorm.noise import KNormNoise
from knorm.sensitivity import logistic_gradient_space
from knorm.sensitivity.certificate import as_certified
from knorm.sensitivity.softmax import (
    SoftmaxBall,
    information_layout_weights,
    logistic_information_space,
    multinomial_gradient_space,
)

__all__ = ["LogisticRegression", "auto_q"]

_OWNER = "LogisticRegression"
_NORMS = {"linf": math.inf, "l2": 2.0, "l1": 1.0}


class LogisticRegression(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private (epsilon-DP) logistic regression by extended objective perturbation, binary or multiclass.

    Releases theta_DP = argmin (1/n) sum_i l(theta; x_i, y_i) + gamma/(2n) ||theta||^2
    + V'theta / n, with V drawn from the K-norm mechanism of the gradient sensitivity
    space (paper Section 4), and, for two classes, a noisy Fisher information at
    theta_DP from which standard errors and confidence intervals follow by
    post-processing. Several classes use the multinomial (softmax) loss with the K-norm
    of its joint gradient space, or one binary fit per class (one-vs-rest).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the whole fit, in (0, inf).
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
        neighbours and its n-free limit under add/remove ones; q = 0.5 is the paper's
        setting.
    inference_share : float in [0, 1) or 'auto', default='auto'
        Share of epsilon spent on releasing the Fisher information, for ``bse_``,
        :meth:`conf_int` and :meth:`summary` (two classes only). 0 spends nothing
        and gives no intervals. 'auto' is the data-independent rule of
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
        sum to ``epsilon``); a refused charge raises and nothing is fitted. Clones of
        this estimator share it.
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
        The share of epsilon spent on the Fisher information (resolved from 'auto').
    n_floored_ : int
        Eigenvalues of the released information raised to the floor m / 4 (0 when the
        release was positive definite enough; a function of the release, so public).
    epsilon_ : float
        Budget spent by the fit.
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
    3. gamma = lambda / (exp(eps (1 - q)) - 1), the corrected formula (errata
       item 1; the printed one is negative and breaks privacy).
    4. V has density proportional to exp(-eps_op q ||V||_K / Delta_K), where
       eps_op = 0.99 eps is the share of objective perturbation proper.
    5. The proof needs the exact minimiser. Newton's method stops by ``tol`` and
       ``max_iter``, but the fit is published only if the gradient norm of the
       perturbed objective is at most the certified 1e-8; then the remaining 1% of
       eps pays for output noise that covers the distance tau / gamma to the exact
       minimiser (approximate minima perturbation, Iyengar et al. 2019; see
       :meth:`~knorm.mechanisms.KNormMechanism.release_objective`). Otherwise a
       ``ConvergenceError`` is raised and nothing is published: ``tol`` and
       ``max_iter`` never turn an unconverged fit into a published one. If gamma
       is too small for a certified minimiser (eps (1 - q) in the dozens), the fit
       is refused with a clear error.

    Here eps is the budget of the model's release, epsilon (1 - inference_share).

    *Multiclass.* 'multinomial' releases Theta in R^((k-1) x m), one row per class
    other than the baseline, by the same algorithm with the multinomial loss
    (:func:`~knorm.models.multinomial.multinomial_objective_perturbation`, where the
    privacy proof's multiclass version is derived: the per-record Hessian has rank
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

    *Intervals* (two classes; beside the paper). A share s of epsilon releases the
    Fisher information I(theta_DP) = sum_i sigma'(theta_DP'z_i) z_i z_i' through
    :meth:`~knorm.mechanisms.KNormMechanism.release` with l_inf noise: its per-record
    terms have entries in [-1/4, 1/4] for any public theta
    (:func:`~knorm.sensitivity.softmax.logistic_information_space`, Delta = 1/2 with
    the diagonal doubled). theta_DP is public when the information is released, so
    the two releases compose to epsilon. Standard errors and intervals then come from
    a parametric bootstrap of the linearised release (:class:`~knorm.models.logistic_inference.LogisticInference`):
    they cover the sampling error and the privacy noise (V, gamma, the output noise),
    are centred on the estimate with the ridge term's shrinkage undone (theta + gamma
    I^{-1} theta, in the original units), use only the two releases and public
    quantities, and are deterministic (fixed seed: Monte Carlo of public laws). Coverage of nominal 95% intervals on the
    paper's simulation is in the ``logistic_intervals`` experiment.

    *Scaling.* Features are clipped to ``bounds_X``. With an intercept, they are
    mapped affinely onto [-1, 1] (``to_unit_box``) and a constant-1 column is
    appended. Without one, x_j is divided by s_j = max(|lower_j|, |upper_j|):
    this maps [lower_j, upper_j] inside [-1, 1] and keeps 0 at 0, so the model
    stays intercept-free in the original units (an affine map would hide an
    intercept sum_j theta_j b_j tied to the slopes). If the bounds are far from
    symmetric this uses only part of [-1, 1], which costs accuracy, not privacy.
    coef_ and intercept_ are mapped back to the original units.

    *Add/remove neighbours* (X' = X plus one record z; the 1/n factors do not move
    the argmin, so use the sum form). Write V(a; X) = -(sum_{i in X} grad l(a;
    z_i) + gamma a), so that V(a; X') = V(a; X) - grad l(a; z) and
    pdf(a | X) = f(V(a; X)) |det C| with C = sum_{i in X} hess l(a; z_i) + gamma I,
    and pdf(a | X') = f(V(a; X')) |det(C + hess l(a; z))|.

    - Noise factor: f(V(a; X)) / f(V(a; X')) <= exp(eps q ||grad l(a; z)||_K / Delta)
      (triangle inequality), and the same in the other direction. It is at most
      exp(eps q) when Delta >= sup_{theta, z} ||grad l(theta; z)||_K. As
      (sigma - y) x lies in [-1, 1]^m and every point of that cube is a limit
      (y = 1, theta = -t x, t -> inf gives -x), the hull of this space is the cube:
      Delta = 1 (l_inf), sqrt(m) (l2), m (l1), half the replace-one values.
    - Hessian factor: det C / det(C + hess l(a; z)) <= 1, and
      det(C + hess l(a; z)) / det C = det(I + C^{-1} hess l(a; z)) <= 1 + lambda / gamma,
      because hess l(a; z) has rank one with eigenvalue <= lambda and C >= gamma I
      (every Hessian is positive semi-definite); this also holds for an empty X.
      With the same gamma, 1 + lambda / gamma = exp(eps (1 - q)).

    So the product is at most exp(eps) in both directions, with the same lambda and
    gamma and half the sensitivity. n is private under add/remove neighbours, so
    ``q='auto'`` uses the n-free limit of its rule and ``inference_share='auto'``
    a fixed 0.25. The information release has Delta = 1/2 with every entry doubled.

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
    >>> clf.conf_int().shape  # intercept first, then the features
    (3, 2)

    Three classes, one multinomial release:

    >>> y3 = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(5000), [-0.3, 0.3])
    >>> clf3 = LogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1, 2], random_state=0).fit(X, y3)
    >>> clf3.coef_.shape, clf3.predict_proba(X[:2]).shape
    ((3, 2), (2, 3))
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "norm": [StrOptions({"auto", "softmax", *_NORMS}), NormBall],
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
        epsilon=1.0,
        norm="auto",
        q="auto",
        inference_share="auto",
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

    @_fit_context(prefer_skip_nested_validation=True)
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
        # scikit-learn's Interval(Real, ...) admits bools; epsilon=True is a mistake, not 1.
        epsilon = check_positive(self.epsilon, "epsilon", _OWNER)
        if isinstance(self.inference_share, bool):
            raise ValueError(
                f"The 'inference_share' parameter of {_OWNER} must be a float in the range [0.0, 1.0) or 'auto'. "
                f"Got {self.inference_share!r} instead."
            )
        refuse_complex(X, "X", _OWNER)
        with numeric_input(_OWNER, X=X):  # y holds labels, which may be strings
            X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y_idx = self._encode_labels(y)
        k = len(classes)
        lo, hi = check_bounds(self.bounds_X, X.shape[1], _OWNER, "bounds_X")
        Z, slope, shift, n_clipped = _scale(X, lo, hi, self.fit_intercept)
        n, m = Z.shape
        share = self._resolve_share(k, n, m, epsilon)
        n_releases = (1 + (share > 0)) if k == 2 else (k if self.multi_class == "ovr" else 1)
        self._check_budget(epsilon, n_releases)
        rngs = self._release_rngs(n_releases)
        eps_info = epsilon * share
        if k == 2:
            fit = self._fit_binary(Z, (y_idx == 1).astype(float), epsilon - eps_info, rngs[0], "")
            thetas = fit["theta"][None, :]
        elif self.multi_class == "multinomial":
            fit = self._fit_multinomial(Z, y_idx, k, epsilon, rngs[0])
            thetas = np.vstack([np.zeros(m), fit["theta"].reshape(k - 1, m)])
        else:
            labels = classes.tolist()
            fits = [
                self._fit_binary(Z, (y_idx == c).astype(float), epsilon / k, rngs[c], f", class {labels[c]!r} vs rest")
                for c in range(k)
            ]
            fit = dict(fits[0], release=None, n_iter=max(f["n_iter"] for f in fits))
            fit["converged"] = all(f["converged"] for f in fits)
            fit["releases"] = [f["release"] for f in fits]
            thetas = np.vstack([f["theta"] for f in fits])

        releases = fit.get("releases", [fit["release"]])
        info, n_floored, inference = None, 0, None
        if share > 0:
            info, n_floored, inference = self._release_inference(Z, fit, slope, shift, eps_info, rngs[1])
            releases = [*releases, info]
        # Every release is made: only now is the fit stored.
        p = X.shape[1]
        self.coef_ = thetas[:, :p] * slope
        self.intercept_ = thetas[:, p] + thetas[:, :p] @ shift if self.fit_intercept else np.zeros(len(thetas))
        self.classes_ = classes
        self.release_ = fit["release"]
        self.releases_ = tuple(releases)
        self.sensitivity_ = fit["sensitivity"]
        self.gamma_, self.q_, self.epsilon_ = fit["gamma"], fit["q"], epsilon
        self.inference_share_ = share
        self.information_release_, self.n_floored_, self._inference = info, n_floored, inference
        self.fit_diagnostics_ = diagnose(n, n_clipped, X.size, _OWNER, n_iter=fit["n_iter"], converged=fit["converged"])
        return self

    # -- the releases ----------------------------------------------------------------------
    def _fit_binary(self, Z, y01, epsilon, rng, what):
        n, m = Z.shape
        ball = self._ball(m, 2)
        sens = self._certified(logistic_gradient_space(m, neighbours=self.neighbours), ball)
        q = self._resolve_q(n, ball, sens.value, epsilon, 2)
        release, n_iter, converged = objective_perturbation(
            Z,
            y01,
            ball=ball,
            sensitivity=sens,
            epsilon=epsilon,
            q=q,
            rng=rng,
            accountant=self.accountant,
            max_iter=self.max_iter,
            tol=self.tol,
            label=f"{_OWNER}.fit (objective perturbation, {_norm_name(self.norm, 2)}{what})",
            sampler=self.sampler,
        )
        gamma = 0.0 if nonprivate_active() else perturbation_gamma(m, epsilon, q)
        return dict(
            theta=release.value,
            release=release,
            sensitivity=sens,
            gamma=gamma,
            q=q,
            n_iter=n_iter,
            converged=converged,
            epsilon=epsilon,
        )

    def _fit_multinomial(self, Z, y_idx, k, epsilon, rng):
        n, m = Z.shape
        ball = self._ball(m, k)
        sens = self._certified(multinomial_gradient_space(k, m, neighbours=self.neighbours), ball)
        q = self._resolve_q(n, ball, sens.value, epsilon, k)
        release, n_iter, converged = multinomial_objective_perturbation(
            Z,
            y_idx,
            k,
            ball=ball,
            sensitivity=sens,
            epsilon=epsilon,
            q=q,
            rng=rng,
            accountant=self.accountant,
            max_iter=self.max_iter,
            tol=self.tol,
            label=f"{_OWNER}.fit (multinomial objective perturbation, {_norm_name(self.norm, k)})",
            sampler=self.sampler,
        )
        gamma = 0.0 if nonprivate_active() else perturbation_gamma(m, epsilon, q, n_classes=k)
        return dict(
            theta=release.value,
            release=release,
            sensitivity=sens,
            gamma=gamma,
            q=q,
            n_iter=n_iter,
            converged=converged,
            epsilon=epsilon,
        )

    def _release_inference(self, Z, fit, slope, shift, epsilon, rng):
        """Release I(theta_DP) with l_inf noise; return it, its floored count and the bootstrap's inputs."""
        m = Z.shape[1]
        theta = fit["theta"]
        rows, cols, weights = information_layout_weights(m, neighbours=self.neighbours)
        d = len(weights)
        ball = LpBall(d, math.inf)
        sens = logistic_information_space(m, neighbours=self.neighbours).sensitivity(ball)
        w = expit(Z @ theta)
        w *= 1.0 - w
        info = (Z * w[:, None]).T @ Z
        release = KNormMechanism(ball, sens, epsilon, sampler=self.sampler).release(
            weights * info[rows, cols],
            rng=rng,
            accountant=self.accountant,
            label=f"{_OWNER}.fit (Fisher information at the released theta, for intervals)",
        )
        noisy = np.zeros((m, m))
        noisy[rows, cols] = release.value / weights
        noisy[cols, rows] = noisy[rows, cols]
        # Below one record's largest curvature (lambda = m / 4) the released information says nothing.
        floored, n_floored = floor_information(noisy, m / 4.0)
        model = fit["release"]
        private = model.noise_scale > 0
        output_scale = 2.0 * GRADIENT_TOLERANCE / (fit["gamma"] * OUTPUT_SHARE * fit["epsilon"]) if private else 0.0
        p = len(slope)
        transform = np.zeros((p + self.fit_intercept, m))
        transform[self.fit_intercept :, :p] = np.diag(slope)
        if self.fit_intercept:
            transform[0, :p], transform[0, p] = shift, 1.0
        inference = LogisticInference(
            theta,
            floored,
            fit["gamma"],
            KNormNoise(model.ball, model.noise_scale) if private else None,
            KNormNoise(LpBall(m, 2), output_scale) if private else None,
            transform,
        )
        return release, n_floored, inference

    def _certified(self, space, ball):
        try:
            return as_certified(space.sensitivity(ball), _OWNER)
        except NotImplementedError as err:
            raise ValueError(
                f"The 'norm' parameter of {_OWNER} must be a ball with a certified sensitivity on the logistic "
                f"gradient space. Got {ball!r}, for which none is available ({err}), instead."
            ) from err

    def _resolve_q(self, n, ball, sensitivity, epsilon, k):
        if self.q != "auto":
            return float(self.q)
        # n is private under add/remove neighbours: the rule's n-free limit.
        return auto_q(n if self.neighbours == "replace" else None, ball, sensitivity, epsilon, n_classes=k)

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

    def _check_budget(self, epsilon, n_releases):
        """Refuse up front a fit whose releases would not all fit in the budget (no partial fit)."""
        acc = self.accountant
        if n_releases < 2 or acc is None or nonprivate_active():
            return
        remaining = getattr(acc, "remaining", None)
        if remaining is not None and epsilon > remaining * (1 + 1e-12) + 1e-15:
            raise BudgetExceededError(
                f"Spending epsilon={epsilon:g} on '{_OWNER}.fit' would exceed the total "
                f"{getattr(acc, 'total_epsilon', float('nan')):g} (spent {getattr(acc, 'spent', float('nan')):g}, "
                f"remaining {remaining:g})."
            )

    def _release_rngs(self, count):
        """One source of noise per release: children of a fixed seed, else the same source, advanced."""
        rng = self._release_rng()
        if count == 1:
            return [rng]
        if isinstance(rng, (Integral, np.integer)) and not isinstance(rng, bool):
            # Children keep fingerprints (an accountant refuses a repeated seed) and differ from each other.
            return np.random.SeedSequence(int(rng)).spawn(count)
        return [rng] * count

    def _encode_labels(self, y):
        check_classification_targets(y)
        if self.classes is not None:
            classes = np.asarray(self.classes)
            if classes.ndim != 1 or len(classes) < 2 or len(np.unique(classes)) != len(classes):
                raise ValueError(
                    f"The 'classes' parameter of {_OWNER} must be at least two distinct labels. Got "
                    f"{self.classes!r} instead."
                )
            classes = np.sort(classes)
            # The same error for any label outside the declared set, whichever labels occur.
            unknown = ~np.isin(y, classes)
            if np.any(unknown):
                # The declared classes are public; the labels found in y are data: count them, never show them.
                rows = int(unknown.sum())
                raise ValueError(
                    f"The 'y' parameter of {_OWNER} must hold only the declared classes={classes.tolist()}. Got "
                    f"{rows} row{'s' if rows != 1 else ''} with another label instead (the labels are not shown: "
                    "they are data)."
                )
            return classes, np.searchsorted(classes, y)
        if not self.public_labels:
            raise ValueError(
                f"The 'classes' parameter of {_OWNER} must declare the labels, for example classes=[0, 1]. Got "
                "None instead. Reading them from y reveals which labels occur; pass public_labels=True only if the "
                "label set is public knowledge."
            )
        classes, y_idx = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"{_OWNER} needs y with 2 classes or more under public_labels=True. Got 1 class (one "
                "distinct label) instead. Declare the labels with the 'classes' parameter to fit data where a label is absent."
            )
        return classes, y_idx

    def _ball(self, m, k):
        """The noise ball: dimension m for binary fits, (k - 1) m for multinomial ones."""
        d = m * (k - 1) if (k > 2 and self.multi_class == "multinomial") else m
        if isinstance(self.norm, str):
            if d > m and self.norm in ("auto", "softmax"):
                return SoftmaxBall(k, m)
            return LpBall(d, _NORMS.get(self.norm, math.inf))  # 'auto' and 'softmax' are l_inf for binary fits
        if self.norm.dim != d:
            what = (
                "n_features + fit_intercept"
                if d == m
                else f"(n_classes - 1) (n_features + fit_intercept) = {k - 1} x {m}"
            )
            raise ValueError(
                f"The 'norm' parameter of {_OWNER} must be 'auto', 'linf', 'l2', 'l1', 'softmax' or a NormBall of "
                f"dimension {'m = ' if d == m else ''}{what} = {d}. Got a NormBall of dimension {self.norm.dim} "
                "instead."
            )
        return self.norm

    # -- inference -------------------------------------------------------------------------
    def _inference_or_raise(self, what):
        check_is_fitted(self)
        if self._inference is None:
            reason = (
                "more than two classes were fitted"
                if len(self.classes_) > 2
                else "no share of epsilon was spent on the Fisher information (inference_share=0)"
            )
            raise ValueError(
                f"{_OWNER}.{what} needs the released Fisher information, but {reason}. Fit with "
                "inference_share > 0 (or 'auto') and two classes to get standard errors and intervals."
            )
        return self._inference

    @property
    def bse_(self):
        """Standard errors of (intercept, coefficients), covering sampling error and privacy noise.

        Post-processing of ``releases_``: square roots of the diagonal of the linearised
        covariance of the bias-corrected estimate that :meth:`conf_int` is centred on
        (:meth:`~knorm.models.logistic_inference.LogisticInference.covariance`), in the
        original units, the intercept first when ``fit_intercept``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            When the fit released no Fisher information (``inference_share=0`` or more
            than two classes).
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
        ndarray of shape (n_features + fit_intercept, 2)
            Lower and upper ends, the intercept first (as statsmodels with a leading
            constant), then the features in order, in the original units. Parametric
            bootstrap intervals covering sampling error and privacy noise, centred on the
            estimate with the ridge term's shrinkage undone, theta + gamma I^{-1} theta
            (:class:`~knorm.models.logistic_inference.LogisticInference`); deterministic.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``alpha`` is not in (0, 1), or the fit released no Fisher information.
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.conf_int")
        return self._inference_or_raise("conf_int").conf_int(alpha)

    def summary(self, alpha=0.05):
        """Return a table of coefficients, standard errors, intervals and privacy terms (print it).

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the nominal coverage of the intervals, in (0, 1).

        Returns
        -------
        InferenceSummary
            Printable; computed from released and public quantities only.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``alpha`` is not in (0, 1), or the fit released no Fisher information.
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.summary")
        inf = self._inference_or_raise("summary")
        names = list(getattr(self, "feature_names_in_", [f"x{j}" for j in range(self.n_features_in_)]))
        names = (["intercept"] if self.fit_intercept else []) + [str(n) for n in names]
        coef = np.concatenate([self.intercept_ if self.fit_intercept else [], self.coef_[0]])
        model, info = self.release_, self.information_release_
        assert info is not None  # summary() is reached only with an information release
        eps_model = model.epsilon
        terms = [
            ("classes", f"{self.classes_.tolist()} (positive: {self.classes_.tolist()[1]!r})"),
            (
                "epsilon",
                f"{self.epsilon_:g} = {eps_model:g} (objective perturbation) + {info.epsilon:g} (Fisher "
                f"information); neighbours: {self.neighbours}",
            ),
            (
                "model noise",
                f"{model.ball_name} ball, sensitivity {model.sensitivity.value:g} ({model.sensitivity.kind}), "
                f"noise scale {model.noise_scale:.4g}, q = {self.q_:g}, gamma = {self.gamma_:.4g}",
            ),
            (
                "information noise",
                f"{info.ball_name} ball, sensitivity {info.sensitivity.value:g} ({info.sensitivity.kind}), "
                f"noise scale {info.noise_scale:.4g}, eigenvalues floored: {self.n_floored_}",
            ),
        ]
        notes = [
            "coef: the release. corrected: coef with the shrinkage of objective perturbation's ridge term undone;",
            f"std err and the interval are the corrected estimate's: parametric bootstrap ({BOOTSTRAP_DRAWS} draws,",
            "fixed seed) covering sampling error and privacy noise, from released and public quantities only.",
        ]
        if self.n_floored_:
            notes.append(
                f"{self.n_floored_} eigenvalue(s) of the released information were raised to the floor: the "
                "information was too noisy there, and the intervals are wide. Spend a larger inference_share."
            )
        title = f"{_OWNER}: private (epsilon-DP) logistic regression by objective perturbation"
        return InferenceSummary(title, names, coef, inf.estimate(), inf.bse(), inf.conf_int(alpha), alpha, terms, notes)

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


def _scale(X, lo, hi, fit_intercept):
    """Clip X to [lo, hi] and map it into [-1, 1]; theta_j z_j = slope_j theta_j x_j + shift_j theta_j."""
    if fit_intercept:
        Z, n_clipped = to_unit_box(X, lo, hi)
        slope = 2.0 / (hi - lo)
        return np.hstack([Z, np.ones((len(Z), 1))]), slope, -lo * slope - 1.0, n_clipped
    outside = (X < lo) | (X > hi)
    n_clipped = int(np.count_nonzero(outside))
    slope = 1.0 / np.maximum(np.abs(lo), np.abs(hi))
    return (np.clip(X, lo, hi) if n_clipped else X) * slope, slope, np.zeros_like(lo), n_clipped


def _norm_name(norm, k):
    """Name of a norm parameter for labels: the string ('auto' resolved), or the ball's name."""
    if isinstance(norm, str):
        if norm in ("auto", "softmax"):
            return "softmax" if k > 2 else "linf"
        return norm
    return getattr(norm, "name", None) or type(norm).__name__
