"""Private linear regression by the functional mechanism with K-norm noise (paper Section 5)."""

from __future__ import annotations

import functools
import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from knorm._validation import check_positive, numeric_input
from knorm.geometry.lp import LpBall
from knorm.mechanisms.choose import choose_mechanism
from knorm.models._base import check_bounds, resolve_random_state
from knorm.models.sufficient import _n_columns, _statistics, is_dask_collection
from knorm.noise.distribution import KNormNoise
from knorm.sensitivity.certificate import as_certified
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.regression import RegressionLayout, kt_ball, linear_regression_space, regression_hull_ball
from knorm.sensitivity.space import SensitivitySpace

__all__ = ["LinearRegression", "auto_mechanism", "functional_mechanism", "noise_floor"]

_OWNER = "LinearRegression"
_LP = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
_REPLACE_ONLY = ("kt", "hull")
# 'auto' thresholds on p, from measured costs (Notes of auto_mechanism).
_P_HULL, _P_KT = 8, 15
# Largest dimension where l1 / l2 sensitivities are computed by SensitivitySpace
# (exact sign-vector enumeration for l1); beyond, the per-coordinate bound.
_LP_SPACE_MAX_DIM = 14
# Public Monte Carlo of the eigenvalue floor: fixed seed, draws, quantile level.
_FLOOR_SEED, _FLOOR_DRAWS, _FLOOR_LEVEL = 20_240_601, 1000, 0.9


# -- the released statistic and its sensitivity space ---------------------------------
def _add_remove_statistic(p):
    """Per-record map (1, x, x_j x_k, x_j^2, y, x_j y) on [-1, 1]^(p+1) for add/remove.

    The count is a coordinate (n is private), and squares are not doubled: under
    add/remove every coordinate then has sensitivity 1.
    """
    layout = RegressionLayout(p)
    t = layout.statistic()
    w = np.ones(layout.dim)
    w[layout.sq] = 0.5
    A = np.concatenate([np.zeros((1, p + 1, p + 1)), t.A * w[:, None, None]])
    b = np.concatenate([np.zeros((1, p + 1)), t.b * w[:, None]])
    const = np.concatenate([[1.0], np.zeros(layout.dim)])
    names = ["n"] + [nm.replace("2x", "x") for nm in layout.names]
    return QuadraticStatistic(A, b, -np.ones(p + 1), np.ones(p + 1), const=const, names=names)


@functools.lru_cache(maxsize=32)
def _space(p, neighbours):
    if neighbours == "replace":
        return linear_regression_space(p)
    name = f"linear regression, p={p}, add/remove"
    return SensitivitySpace.additive(_add_remove_statistic(p), None, name=name, neighbours="add_remove")


def _ball(name, p, neighbours):
    dim = RegressionLayout(p).dim + (neighbours == "add_remove")
    if name in _LP:
        return LpBall(dim, _LP[name])
    return kt_ball(p) if name == "kt" else regression_hull_ball(p)[0]


@functools.lru_cache(maxsize=64)
def _mechanism(name, p, neighbours):
    """(ball, certified Sensitivity) of mechanism ``name``; cached per (name, p, neighbours)."""
    space, ball = _space(p, neighbours), _ball(name, p, neighbours)
    if name in ("l1", "l2"):
        # The per-coordinate bound is cheap and within a few % of the block bound of
        # SensitivitySpace; that one is computed only where it is cheap or exact.
        sens = space.naive_sensitivity(_LP[name])
        if space.dim <= _LP_SPACE_MAX_DIM:
            sens = min(sens, space.sensitivity(ball), key=lambda s: s.value)
    else:
        sens = space.sensitivity(ball)
    return ball, as_certified(sens, _OWNER)


def _witness_lower_bound(p, neighbours, q):
    """An attained value of ||u||_q over S_T: records with all x equal, from {-1, 0, 1}."""
    space = _space(p, neighbours)
    t = space.statistic if neighbours == "replace" else _add_remove_statistic(p)
    grid = np.array([[a] * p + [b] for a in (-1, 0, 1) for b in (-1, 0, 1)], float)
    pts = t(grid)
    u = pts[:, None, :] - pts[None, :, :] if neighbours == "replace" else pts
    return float(np.max(np.linalg.norm(u.reshape(-1, pts.shape[1]), ord=q, axis=1)))


def _log_volume_lp(dim, q, radius):
    """log vol of the l_q ball of the given radius (q in {1, 2, inf})."""
    if q == 1:
        return dim * math.log(2 * radius) - math.lgamma(dim + 1)
    if q == 2:
        return dim * math.log(radius) + 0.5 * dim * math.log(math.pi) - math.lgamma(dim / 2 + 1)
    return dim * math.log(2 * radius)


def _check_public_args(owner, p, neighbours, mechanism=None):
    RegressionLayout(p)  # checks p
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(
            f"The 'neighbours' parameter of {owner} must be 'replace' or 'add_remove'. Got {neighbours!r} instead."
        )
    allowed = (*_LP, *_REPLACE_ONLY) if neighbours == "replace" else tuple(_LP)
    if mechanism is not None and mechanism not in allowed:
        raise ValueError(
            f"The 'mechanism' parameter of {owner} must be one of {allowed} with neighbours={neighbours!r}. "
            f"Got {mechanism!r} instead."
        )


@functools.lru_cache(maxsize=32)
def auto_mechanism(p, neighbours="replace"):
    """Name of the mechanism that ``mechanism='auto'`` uses for p features.

    Parameters
    ----------
    p : int
        Number of features.
    neighbours : {'replace', 'add_remove'}

    Returns
    -------
    str
        One of 'hull', 'kt', 'linf' (or 'l1' / 'l2', which never win here).

    Notes
    -----
    The candidates are ranked by :func:`knorm.mechanisms.choose_mechanism` in the
    paper's volume order (Section 3, Theorem "Optimal K-mech"; the hull of S_T
    would be optimal). Which candidates enter depends on cost, measured on the
    2-core reference machine (see ``benchmarks/bench_linear.py``):

    * 'hull' (:func:`~knorm.sensitivity.regression_hull_ball`) for p <= 8:
      its cut directions are shipped for p <= 8 (loading takes < 0.3 s;
      building them afresh beyond takes minutes), and its exact rejection
      sampler slows from ~0.2 ms per draw at p = 5 to ~2.5 ms at p = 8.
    * 'kt' (paper Section 5.1 K_T, ERRATA.md item 5) for p <= 15: cube
      rejection accepts ~2^-(p+1) p^2 / 4 and costs ~1.4 ms per draw at p = 15,
      doubling every p or two, while its gain over l_inf is only ~5 % of
      epsilon there.
    * 'linf' always. l1 and l2 enter unless an attained point of S_T already
      makes their ball larger than the l_inf one (so no certified sensitivity
      could rank them first); for this statistic that is always the case, which
      spares their costly certified sensitivities.

    Under add/remove neighbours only l1, l2 and l_inf are candidates. The result
    is cached per (p, neighbours); volumes of kt and hull are Monte Carlo
    estimates with a fixed seed, so the choice is deterministic.

    References
    ----------
    Paper Sections 3 and 5.1; ERRATA.md item 5.

    Examples
    --------
    >>> auto_mechanism(20)
    'linf'
    """
    _check_public_args("auto_mechanism", p, neighbours)
    candidates = {"linf": _ball("linf", p, neighbours)}
    if neighbours == "replace" and p <= _P_KT:
        candidates["kt"] = _ball("kt", p, neighbours)
    if neighbours == "replace" and p <= _P_HULL:
        candidates["hull"] = _ball("hull", p, neighbours)
    space = _space(p, neighbours)
    linf = _log_volume_lp(space.dim, math.inf, _mechanism("linf", p, neighbours)[1].value)
    for name in ("l1", "l2"):
        if _log_volume_lp(space.dim, _LP[name], _witness_lower_bound(p, neighbours, _LP[name])) <= linf:
            candidates[name] = _ball(name, p, neighbours)
    choice = choose_mechanism(space, 1.0, candidates, rng=_FLOOR_SEED)
    return choice.name


# -- assembling Gram blocks ----------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _gram_index(p, neighbours):
    """Index and weight maps from F = [n, T] (replace) or the released [n, T'] (add/remove)
    to the scaled Gram block A of (1, x') and the cross products b of (1, x') with y'."""
    layout = RegressionLayout(p)
    sq_w = 0.5 if neighbours == "replace" else 1.0  # T doubles squares; the add/remove statistic does not
    idx = np.zeros((p + 1, p + 1), int)
    w = np.ones((p + 1, p + 1))
    idx[0, 1:] = idx[1:, 0] = 1 + layout.lin
    idx[np.arange(1, p + 1), np.arange(1, p + 1)] = 1 + layout.sq
    w[np.arange(1, p + 1), np.arange(1, p + 1)] = sq_w
    for c, (j, k) in zip(layout.cross, layout.pairs):
        idx[j + 1, k + 1] = idx[k + 1, j + 1] = 1 + c
    idx_b = 1 + np.concatenate([[layout.y], layout.xy])
    return idx, w, idx_b


def _gram_blocks(F, p, neighbours):
    """(A, b) from F of shape (..., d + 1), vectorised over leading axes."""
    idx, w, idx_b = _gram_index(p, neighbours)
    return F[..., idx] * w, F[..., idx_b]


@functools.lru_cache(maxsize=64)
def _unit_floor(name, p, neighbours):
    """The 0.9-quantile of ||E||_2 for unit-scale noise, E the noise of the Gram block A."""
    ball = _mechanism(name, p, neighbours)[0]
    V = KNormNoise(ball, 1.0).sample(_FLOOR_DRAWS, rng=_FLOOR_SEED)
    F = V if neighbours == "add_remove" else np.hstack([np.zeros((len(V), 1)), V])
    E = _gram_blocks(F, p, neighbours)[0]
    spec = np.max(np.abs(np.linalg.eigvalsh(E)), axis=1)
    return float(np.quantile(spec, _FLOOR_LEVEL))


def noise_floor(mechanism, p, epsilon, *, neighbours="replace"):
    """Eigenvalue floor tau of ``postprocess='eigen'``: public, from the noise law only.

    Parameters
    ----------
    mechanism : {'l1', 'l2', 'linf', 'kt', 'hull'}
    p : int
        Number of features.
    epsilon : float
    neighbours : {'replace', 'add_remove'}

    Returns
    -------
    float
        The 0.9-quantile of the spectral norm of the noise E added to the scaled
        Gram block of (1, x'), for noise scale Delta / epsilon (Monte Carlo with
        a fixed seed over 1000 draws, cached at unit scale; tau is linear in scale).

    Examples
    --------
    >>> round(noise_floor("linf", 1, 1.0) / noise_floor("linf", 1, 2.0), 6)
    2.0
    """
    _check_public_args("noise_floor", p, neighbours, mechanism)
    epsilon = check_positive(epsilon, "epsilon", "noise_floor")
    sens = _mechanism(mechanism, p, neighbours)[1].value
    return _unit_floor(mechanism, p, neighbours) * sens / float(epsilon)


def functional_mechanism(T, n, p, mechanism, epsilon, rng, *, neighbours="replace", postprocess="eigen"):
    """Release T with K-norm noise once, then post-process into scaled Gram blocks.

    Paper Section 5.1: T (RegressionLayout order, data in [-1, 1]) gets noise from
    the named mechanism with its certified sensitivity; everything after the one
    release uses only public quantities (n under replace-one, the noise law).
    No argument is checked: :class:`LinearRegression` is the public entry point.

    Returns
    -------
    A, b : ndarrays
        Scaled Gram block of (1, x') (eigenvalues floored at tau if
        ``postprocess='eigen'``) and cross products with y'.
    noisy : ndarray
        The released vector.
    F, sensitivity, scale, tau, n_floored
        Released vector with the count, the Sensitivity, Delta / eps, the floor
        and how many eigenvalues it raised.
    """
    ball, sens = _mechanism(mechanism, p, neighbours)
    scale = sens.value / epsilon
    if neighbours == "replace":
        released = T
    else:
        released = np.concatenate([[n], T])
        released[1 + RegressionLayout(p).sq] *= 0.5
    noisy = released + KNormNoise(ball, scale).sample(rng=rng)
    F = np.concatenate([[n], noisy]) if neighbours == "replace" else noisy
    A, b = _gram_blocks(F, p, neighbours)
    tau, n_floored = 0.0, 0
    if postprocess == "eigen":
        tau = _unit_floor(mechanism, p, neighbours) * scale
        A, n_floored = _floor_eigenvalues(A, tau)
    return A, b, noisy, F, sens, scale, tau, n_floored


# -- solving ---------------------------------------------------------------------------------
def _floor_eigenvalues(A, tau):
    """(A with its eigenvalues raised to at least tau, how many were raised)."""
    lam, U = np.linalg.eigh(A)
    low = int(np.count_nonzero(lam < tau))
    return ((U * np.maximum(lam, tau)) @ U.T if low else A), low


def _solve(A, b, lo, hi, lo_y, hi_y, fit_intercept, pinv):
    """(coef, intercept) in original units from the scaled blocks A, b.

    z' = (1, x', y') and z = (1, x, y) = L z' with x = (x' - c) / a, so the
    original-unit blocks are X1'X1 = L1 A L1' and X1'y = L1 (A e0 (-c_y) + b) / a_y.
    With an intercept the problem is an affine reparametrisation: solving in the
    scaled units and mapping back, beta = L1^{-T} (beta' - c_y e0) / a_y, is the
    same and better conditioned. Without one the original-unit blocks are solved.
    """
    a, c = 2.0 / (hi - lo), -(hi + lo) / (hi - lo)
    a_y, c_y = 2.0 / (hi_y - lo_y), -(hi_y + lo_y) / (hi_y - lo_y)
    p = len(a)
    solve = (lambda M, v: np.linalg.pinv(M) @ v) if pinv else np.linalg.solve
    L1 = np.zeros((p + 1, p + 1))
    L1[0, 0] = 1.0
    L1[1:, 0] = -c / a
    L1[np.arange(1, p + 1), np.arange(1, p + 1)] = 1.0 / a
    if fit_intercept:
        beta_s = solve(A, b)
        beta_s[0] -= c_y
        beta = np.linalg.solve(L1.T, beta_s) / a_y
        return beta[1:], float(beta[0])
    XtX = L1 @ A @ L1.T
    Xty = L1 @ (A[:, 0] * -c_y + b) / a_y
    return solve(XtX[1:, 1:], Xty[1:]), 0.0


class LinearRegression(RegressorMixin, BaseEstimator):
    """epsilon-DP ordinary least squares by the functional mechanism with K-norm noise.

    Releases T + V once, T the unique entries of X'X and X'Y of the design [1, X]
    in scaled units (paper Section 5.1) and V K-norm noise; the coefficients are
    post-processing of that single release.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget, in (0, inf).
    mechanism : {'auto', 'l1', 'l2', 'linf', 'kt', 'hull'}, default='auto'
        The K-norm of the noise. 'kt' is the paper's Section 5.1 K_T (read as in
        ERRATA.md item 5); 'hull' the tighter certified ball of
        :func:`~knorm.sensitivity.regression_hull_ball` (loaded from a shipped
        table for p <= 8; for larger p it is built afresh, which takes
        minutes). 'auto' picks the best certified
        one in the volume order that is affordable (:func:`auto_mechanism`).
        'kt' and 'hull' exist for replace-one neighbours only.
    bounds_X : pair (lower, upper), required
        Declared domain of the features: scalars or arrays of length
        n_features. Values outside are clipped (counted in ``n_clipped_``).
        Never taken from the data.
    bounds_y : pair (lower, upper), required
        Declared domain of the response (scalars), clipped likewise.
    fit_intercept : bool, default=True
        Fit an intercept in the original units.
    neighbours : {'replace', 'add_remove'}, default='replace'
        Replace-one neighbours (paper Definition "DP", n public) or
        add/remove-one (paper Remark on add/delete-DP): n is then private and is
        released as a noisy count coordinate of the statistic.
    postprocess : {'eigen', 'pinv'}, default='eigen'
        'pinv' is the paper's estimator beta* = [(X'X)*]^+ (X'Y)*. 'eigen'
        raises the eigenvalues of the noisy scaled Gram block of (1, x') to at
        least a public floor tau set from the noise law (:func:`noise_floor`),
        which keeps the inverse from amplifying noise (see Notes).
    accountant : PrivacyAccountant, default=None
        Charged ``epsilon`` in ``fit`` before the noise is drawn; a refused charge
        raises and nothing is fitted.
    random_state : None, int, Generator or RandomState, default=None
        Source of the noise. Fixed seeds are for reproducible tests only: two
        releases with the same seed share their noise.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients in the original units (private release).
    intercept_ : float
        Intercept in the original units (0.0 if ``fit_intercept=False``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names (pandas or Dask DataFrame).
    mechanism_ : str
        The mechanism used ('auto' resolved).
    sensitivity_ : Sensitivity
        Certified sensitivity Delta_K of the released statistic.
    noise_scale_ : float
        Delta_K / epsilon.
    floor_ : float
        The eigenvalue floor tau (0.0 for 'pinv').
    n_floored_ : int
        Eigenvalues of the noisy scaled Gram block raised to ``floor_`` (0: the
        estimate is the paper's). Post-processing of the release, so public.
    statistic_noisy_ : ndarray
        The released noisy statistic: T + V in RegressionLayout order (replace),
        or (n, T') + V with T' the statistic with undoubled squares (add/remove).
        This is the eps-DP output; everything above is computed from it.
    n_samples_ : float
        n (public under replace), or the released noisy count (add/remove).
    n_clipped_ : int
        Entries of X and y outside the bounds. NOT private: a diagnostic for
        the data holder, not to be published.

    Notes
    -----
    *Mechanism* (paper Section 5.1). X and y are clipped to their bounds and
    mapped affinely onto [-1, 1]; T = RegressionLayout(p).from_data(x', y')
    has every entry of replace-one sensitivity 2 (squares doubled). The noise V
    has density proportional to exp(-eps ||V||_K / Delta_K), Delta_K certified
    by :meth:`SensitivitySpace.sensitivity`: 1 for 'kt' (ERRATA.md item 5),
    1 + 4e-6 for 'hull' (a certified bound; the exact value is 1), 2 for
    'linf', and for 'l1' / 'l2' the smaller of the per-coordinate bound (paper
    Eq. ApproximateSensitivity) and, for d <= 14, the space's own certificate.
    Noise is added once; everything after is post-processing (paper
    Proposition "Postprocessing").

    *Add/remove neighbours.* The released vector is (n, T') with T' = T with the
    squares not doubled; every coordinate has add/remove sensitivity 1, and its
    sensitivity space is ``SensitivitySpace.additive(..., neighbours='add_remove')``.
    K_T and the hull ball were derived for replace-one neighbours, so 'kt' and
    'hull' are refused. eps-add/remove-DP implies 2 eps-replace-DP.

    *Back to original units.* With z' = (1, x', y') and z = (1, x, y) = L z', the
    original Gram blocks are X'X = L1 A L1' and X'y = L1 (A e0 (-c_y) + b) / a_y
    (the unknown y'y' entry is not needed). Without an intercept these blocks
    (minus the intercept row and column) are solved; with one, the scaled
    solution is mapped back, which is the same estimator.

    *Post-processing 'eigen'* (beyond the paper). The noisy Gram block is
    A* = A + E with A positive semi-definite. Directions where A* has an
    eigenvalue below ||E||_2 carry no usable signal, yet the pseudo-inverse
    divides by them. tau is the 0.9-quantile of ||E||_2 under the public noise
    law (fixed-seed Monte Carlo, :func:`noise_floor`); eigenvalues of A* below
    tau are raised to tau. It uses no data beyond the one noisy release, and
    when the data dominate the noise (every eigenvalue of A* above tau) it
    returns the paper's estimator. Measured (``docs/benchmarks.md``, linear
    regression section): on the California housing data prepared as in the
    paper's Section 5.3 (p = 12, n = 20,433) it cuts the median error of the
    paper's estimator 2.4-4.5x for eps in [0.25, 16], where the pseudo-inverse
    is worse than reporting zero; on the paper's simulation (p = 5, n = 10^4)
    the floor never binds and both agree.

    References
    ----------
    Paper Section 5 (5.1 setup, statistic, K_T and Eq. DPEstimate; 5.2
    simulation; 5.3 housing data), Proposition "Postprocessing", Remark on
    add/delete-DP; ERRATA.md item 5 (K_T is an outer approximation of the hull).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10_000, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.standard_normal(10_000)
    >>> reg = LinearRegression(epsilon=1.0, mechanism="linf", bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=0)
    >>> reg.fit(X, y).coef_.round(1)
    array([ 1. , -0.5])
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "mechanism": [StrOptions({"auto", *_LP, *_REPLACE_ONLY})],
        "bounds_X": ["array-like", None],
        "bounds_y": ["array-like", None],
        "fit_intercept": ["boolean"],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "postprocess": [StrOptions({"eigen", "pinv"})],
        "accountant": [HasMethods(["spend"]), None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        epsilon=1.0,
        mechanism="auto",
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        neighbours="replace",
        postprocess="eigen",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.mechanism = mechanism
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.neighbours = neighbours
        self.postprocess = postprocess
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features: numpy, pandas, Dask array or Dask DataFrame.
        y : array-like of shape (n_samples,)
            Finite response.

        Returns
        -------
        self
        """
        # scikit-learn's Interval(Real, ...) admits bools; epsilon=True is a mistake, not 1.
        epsilon = check_positive(self.epsilon, "epsilon", _OWNER)
        if self.neighbours == "add_remove" and self.mechanism in _REPLACE_ONLY:
            raise ValueError(
                f"The 'mechanism' parameter of {_OWNER} must be 'auto', 'l1', 'l2' or 'linf' when "
                f"neighbours='add_remove'. Got {self.mechanism!r} instead: K_T and the hull ball were derived "
                "for replace-one neighbours (paper Section 5.1)."
            )
        if is_dask_collection(X) or is_dask_collection(y):
            p = self._set_features(X)
        else:
            with numeric_input(_OWNER, X=X, y=y):
                X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
            p = X.shape[1]
        lo, hi = check_bounds(self.bounds_X, p, "bounds_X", _OWNER)
        lo_y, hi_y = check_bounds(self.bounds_y, 1, "bounds_y", _OWNER)
        T, n, n_clipped = _statistics(X, y, lo, hi, lo_y, hi_y, _OWNER)

        name = auto_mechanism(p, self.neighbours) if self.mechanism == "auto" else self.mechanism
        rng = resolve_random_state(self.random_state)
        if self.accountant is not None:
            self.accountant.spend(epsilon, f"{_OWNER}.fit (functional mechanism, {name})")
        r = functional_mechanism(T, n, p, name, epsilon, rng, neighbours=self.neighbours, postprocess=self.postprocess)
        A, b, noisy, F, sens, scale, tau, n_floored = r
        pinv = self.postprocess == "pinv"
        self.coef_, self.intercept_ = _solve(A, b, lo, hi, lo_y[0], hi_y[0], self.fit_intercept, pinv)
        self.mechanism_, self.sensitivity_, self.noise_scale_ = name, sens, scale
        self.floor_, self.n_floored_ = tau, n_floored
        self.statistic_noisy_ = noisy
        self.n_samples_ = float(n) if self.neighbours == "replace" else float(F[0])
        self.n_clipped_ = n_clipped
        return self

    def _set_features(self, X):
        """n_features_in_ and feature_names_in_ for Dask inputs (not brought into memory)."""
        p = _n_columns(X)
        self.n_features_in_ = p
        cols = getattr(X, "columns", None)
        if cols is not None and len(cols) and all(isinstance(c, str) for c in cols):
            self.feature_names_in_ = np.asarray(list(cols), dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return p

    def predict(self, X):
        """Predictions X coef_ + intercept_ (no clipping: post-processing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            numpy, pandas, or Dask (the result is then a lazy Dask array).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        if is_dask_collection(X):
            p = _n_columns(X)
            if p != self.n_features_in_:
                raise ValueError(
                    f"X has {p} features, but {_OWNER} is expecting {self.n_features_in_} features as input."
                )
            arr = X.to_dask_array() if hasattr(X, "to_dask_array") else X
            return arr.astype(float) @ self.coef_ + self.intercept_
        with numeric_input(_OWNER, X=X):
            X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
