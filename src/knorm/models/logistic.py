"""Private logistic regression by extended objective perturbation (paper Section 4)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from scipy.special import expit, log_expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from knorm._validation import check_positive, numeric_input
from knorm.geometry import LpBall, NormBall
from knorm.mechanisms import nonprivate_active
from knorm.models._base import PrivateEstimatorMixin, check_bounds, diagnose, to_unit_box
from knorm.models.objective import auto_q, objective_perturbation, perturbation_gamma
from knorm.sensitivity import logistic_gradient_space
from knorm.sensitivity.certificate import as_certified

__all__ = ["LogisticRegression"]

_OWNER = "LogisticRegression"
_NORMS = {"linf": math.inf, "l2": 2.0, "l1": 1.0}


class LogisticRegression(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private (epsilon-DP) binary logistic regression by extended objective perturbation.

    Releases theta_DP = argmin (1/n) sum_i l(theta; x_i, y_i) + gamma/(2n) ||theta||^2
    + V'theta / n, with V drawn from the K-norm mechanism of the gradient sensitivity
    space: any norm ball K, with 'linf' the paper's recommended (near-optimal) choice.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, in (0, inf).
    norm : {'linf', 'l2', 'l1'} or NormBall, default='linf'
        The K-norm of the noise. A NormBall must have dimension m = n_features +
        fit_intercept; its sensitivity is computed (certified) from the gradient
        sensitivity space, and a ball with no certified method is refused.
    q : float in (0, 1) or 'auto', default=0.5
        Share of epsilon spent on the noise V; the rest pays for the Hessian term
        through gamma. 'auto' uses the data-independent rule of :func:`auto_q`.
    bounds_X : pair (lower, upper), required
        Declared domain of the features: scalars or arrays of length n_features.
        Values outside are clipped (counted in ``fit_diagnostics_``). Never
        taken from the data.
    fit_intercept : bool, default=True
        Add a constant-1 column (it counts in m).
    classes : array-like of two labels, default=None
        The two labels, declared publicly (the second is the positive class). A
        label of ``y`` outside them is an error, whichever labels occur; a ``y``
        holding only one of them is fitted. Required unless ``public_labels``.
    public_labels : bool, default=False
        Read the two labels from ``y`` instead: this reveals which labels occur
        (and refuses a ``y`` with one label), so it is private only if the label
        set is public knowledge.
    neighbours : {'replace', 'add_remove'}, default='replace'
        Replace-one neighbours (paper Definition "DP") or add/remove-one (paper
        Remark on add/delete-DP; derivation in the Notes).
    accountant : PrivacyAccountant, default=None
        Charged ``epsilon`` in ``fit`` before any noise is drawn; a refused charge
        raises and nothing is fitted. Clones of this estimator share it.
    max_iter : int, default=100
        Newton iterations.
    tol : float, default=1e-8
        Stop when the Newton decrement of the (sum-form) objective is <= tol.
    random_state : None, int, Generator or RandomState, default=None
        Source of the noise. None (the default) draws fresh entropy from the
        operating system: use it to publish. A fixed int seed is for tests and
        reproducible examples: an accountant refuses a second release with the
        same seed, and without one the first such release in a process warns
        (``PrivacyWarning``). A Generator is trusted and advanced; clones get a
        child of it, so they never draw the same noise.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Coefficients, in the original feature units (private release).
    intercept_ : ndarray of shape (1,)
        Intercept, in the original units (private release; 0 without intercept).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Names of the features seen in ``fit``, only when X has string column names.
    release_ : Release
        The record of the one release: theta_DP in the scaled coordinates, with its
        privacy terms.
    sensitivity_ : Sensitivity
        Certified gradient sensitivity Delta_K.
    gamma_ : float
        The regularisation gamma (errata item 1).
    q_ : float
        The q used (resolved from 'auto').
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
    gamma and half the sensitivity. ``q='auto'`` is refused under add/remove, since
    it uses n, which is not public there.

    *Privacy of the outputs.* coef_ and intercept_ are the eps-DP release (the
    record ``release_``); the other learned quantities are public functions of the
    parameters and n (public under replace-one neighbours), except
    ``fit_diagnostics_``, which is for the curator only. The noise V is not kept:
    with theta_DP it reveals the exact gradient sum. Declared ``classes`` keep the
    label set private; ``public_labels=True`` reads it from ``y``. Predictions on new
    data are post-processing of the released model and do not clip.

    References
    ----------
    Paper Section 4 (Algorithm "Extended Objective Perturbation" and its theorem,
    proved in the appendix), Section 4.1 (logistic loss, lambda = m/4, sensitivity
    space), Section 4.2 (simulation, q); Remark on add/delete-DP (Section 2);
    errata item 1 (gamma).

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
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "norm": [StrOptions(set(_NORMS)), NormBall],
        "q": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "bounds_X": ["array-like", None],
        "fit_intercept": ["boolean"],
        "classes": ["array-like", None],
        "public_labels": ["boolean"],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "accountant": [HasMethods(["spend"]), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        norm="linf",
        q=0.5,
        bounds_X=None,
        fit_intercept=True,
        classes=None,
        public_labels=False,
        neighbours="replace",
        accountant=None,
        max_iter=100,
        tol=1e-8,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.norm = norm
        self.q = q
        self.bounds_X = bounds_X
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.public_labels = public_labels
        self.neighbours = neighbours
        self.accountant = accountant
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features; a pandas DataFrame keeps its column names.
        y : array-like of shape (n_samples,)
            Two labels.

        Returns
        -------
        LogisticRegression
            This estimator, fitted: ``coef_``, ``intercept_`` and the record of the
            one release, ``release_``.
        """
        # scikit-learn's Interval(Real, ...) admits bools; epsilon=True is a mistake, not 1.
        epsilon = check_positive(self.epsilon, "epsilon", _OWNER)
        if self.q == "auto" and self.neighbours == "add_remove":
            raise ValueError(
                f"The 'q' parameter of {_OWNER} must be a float in the range (0.0, 1.0) when neighbours='add_remove'. "
                "Got 'auto' instead: the auto rule uses the number of records n, which is private under add/remove "
                "neighbours."
            )
        with numeric_input(_OWNER, X=X):  # y holds labels, which may be strings
            X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y01 = self._encode_labels(y)
        lo, hi = check_bounds(self.bounds_X, X.shape[1], "bounds_X", _OWNER)
        Z, slope, shift, n_clipped = _scale(X, lo, hi, self.fit_intercept)
        n, m = Z.shape
        ball = self._ball(m)
        space = logistic_gradient_space(m, neighbours=self.neighbours)
        try:
            sens = as_certified(space.sensitivity(ball), _OWNER)
        except NotImplementedError as err:
            raise ValueError(
                f"The 'norm' parameter of {_OWNER} must be a ball with a certified sensitivity on the logistic "
                f"gradient space. Got {ball!r}, for which none is available ({err}), instead."
            ) from err
        q = auto_q(n, ball, sens.value, epsilon) if self.q == "auto" else float(self.q)
        release, n_iter, converged = objective_perturbation(
            Z,
            y01,
            ball=ball,
            sensitivity=sens,
            epsilon=epsilon,
            q=q,
            rng=self._release_rng(),
            accountant=self.accountant,
            max_iter=self.max_iter,
            tol=self.tol,
            label=f"{_OWNER}.fit (objective perturbation, {_norm_name(self.norm)})",
        )
        theta = release.value
        gamma = 0.0 if nonprivate_active() else perturbation_gamma(m, epsilon, q)

        p = X.shape[1]
        self.coef_ = (theta[:p] * slope)[None, :]
        self.intercept_ = np.array([theta[p] + theta[:p] @ shift if self.fit_intercept else 0.0])
        self.classes_ = classes
        self.release_ = release
        self.sensitivity_ = sens
        self.gamma_, self.q_, self.epsilon_ = gamma, q, epsilon
        self.fit_diagnostics_ = diagnose(n, n_clipped, X.size, _OWNER, n_iter=n_iter, converged=converged)
        return self

    def _encode_labels(self, y):
        check_classification_targets(y)
        if self.classes is not None:
            classes = np.asarray(self.classes)
            if classes.ndim != 1 or len(classes) != 2 or classes[0] == classes[1]:
                raise ValueError(
                    f"The 'classes' parameter of {_OWNER} must be two distinct labels. Got {self.classes!r} instead."
                )
            classes = np.sort(classes)
            # The same error for any label outside the declared set, whichever labels occur.
            unknown = ~np.isin(y, classes)
            if np.any(unknown):
                raise ValueError(
                    f"y holds a label outside the declared classes={classes.tolist()}. Got {y[unknown].tolist()[0]!r} "
                    "instead."
                )
            return classes, (y == classes[1]).astype(float)
        if not self.public_labels:
            raise ValueError(
                f"The 'classes' parameter of {_OWNER} must declare the two labels, for example classes=[0, 1]. Got "
                "None instead. Reading them from y reveals which labels occur; pass public_labels=True only if the "
                "label set is public knowledge."
            )
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        classes, y_idx = np.unique(y, return_inverse=True)
        if len(classes) != 2:
            raise ValueError(
                f"{_OWNER} needs y with 2 classes under public_labels=True. Got 1 class ({classes.tolist()[0]!r}) "
                "instead. Declare the two labels with the 'classes' parameter to fit data where one label is absent."
            )
        return classes, y_idx.astype(float)

    def _ball(self, m):
        if isinstance(self.norm, str):
            return LpBall(m, _NORMS[self.norm])
        if self.norm.dim != m:
            raise ValueError(
                f"The 'norm' parameter of {_OWNER} must be 'linf', 'l2', 'l1' or a NormBall of dimension m = "
                f"n_features + fit_intercept = {m}. Got a NormBall of dimension {self.norm.dim} instead."
            )
        return self.norm

    def decision_function(self, X):
        """Return theta'x + intercept in the original units (no clipping: post-processing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples,)
            Positive values predict ``classes_[1]``.
        """
        check_is_fitted(self)
        with numeric_input(_OWNER, X=X):
            X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """Predict labels: ``classes_[1]`` where the decision function is positive.

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
        return self.classes_[(d > 0).astype(int)]

    def predict_proba(self, X):
        """Predict the probabilities of ``classes_`` under the released model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns sigma(-d) and sigma(d), d the :meth:`decision_function`.
        """
        d = self.decision_function(X)
        return np.column_stack([expit(-d), expit(d)])

    def predict_log_proba(self, X):
        """Predict the log-probabilities of ``classes_``, computed stably.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns log sigma(-d) and log sigma(d), d the :meth:`decision_function`.
        """
        d = self.decision_function(X)
        return np.column_stack([log_expit(-d), log_expit(d)])

    def __sklearn_is_fitted__(self):
        # validate_data sets n_features_in_ before a refused charge; only coef_ means fitted.
        return hasattr(self, "coef_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


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


def _norm_name(norm):
    """Name of a norm parameter for labels: the string, or the ball's name."""
    return norm if isinstance(norm, str) else getattr(norm, "name", None) or type(norm).__name__
