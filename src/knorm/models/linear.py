"""Private linear regression by the functional mechanism with K-norm noise (paper Section 5)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from knorm._ingest import check_bounds, is_dask
from knorm._validation import check_probability, numeric_input, refuse_complex
from knorm.exceptions import IntervalUnavailableError, InvalidParameterError
from knorm.models._base import PrivateEstimatorMixin, diagnose
from knorm.models._params import HasMethods, Interval, StrOptions, check_params, resolve_budget
from knorm.models.functional import NORMS, STATISTICS, auto_norm, check_norm, functional_mechanism
from knorm.models.functional_gaussian import GAUSSIAN_SHAPES, gaussian_functional_mechanism
from knorm.models.inference import RegressionSummary, parametric_bootstrap
from knorm.models.sufficient import _n_columns, exact_statistic

__all__ = ["LinearRegression"]

_OWNER = "LinearRegression"
#: Quantile of the noise's spectral norm used as the eigenvalue floor (the median; see Notes).
FLOOR_LEVEL = 0.5


class LinearRegression(PrivateEstimatorMixin, RegressorMixin, BaseEstimator):
    """Private ordinary least squares by the functional mechanism: K-norm noise (epsilon-DP) or Gaussian (rho-zCDP).

    Releases T + V once, T the unique entries of the Gram matrix of (1, X, y) in
    scaled units (paper Section 5.1, completed by sum y^2) and V K-norm noise (under
    ``epsilon``) or Gaussian noise (under ``rho``); the coefficients, their standard
    errors and confidence intervals are post-processing of that single release.

    Parameters
    ----------
    epsilon : float or None, default=None
        Privacy budget of pure epsilon-DP, in (0, inf). None means 1.0, unless ``rho``
        is given (exactly one of the two is used).
    rho : float or None, default=None
        Instead of ``epsilon``: the budget of rho-zCDP (Bun & Steinke 2016), in (0, inf).
        The statistic is then released with Gaussian noise
        (:func:`~knorm.models.functional_gaussian.gaussian_functional_mechanism`), on
        the certified l2 sensitivity of the statistic; ``norm`` and ``xy_share`` must stay
        'auto', and an accountant must be a rho ledger (``PrivacyAccountant(total_rho=...)``).
    shape : {'spherical', 'split'}, default='spherical'
        Under ``rho``: the Gaussian noise's shape. 'spherical' gives every coordinate the
        same sigma; 'split' gives the response block (sum y, sum x y) less noise than the
        design block, as ``norm='split'`` does under epsilon
        (:func:`~knorm.models.functional_gaussian.shape_scales`). Both are exact on a
        lattice by default. Must be 'spherical' under ``epsilon``.
    norm : {'auto', 'l1', 'l2', 'linf', 'kt', 'cut', 'split'}, default='auto'
        The K-norm of the noise. 'kt' is the paper's Section 5.1 K_T (read as in
        errata item 5); 'cut' the tighter certified ball of
        :func:`~knorm.sensitivity.regression_cut_ball` (K_T cut by exact support
        planes; loaded from a shipped table for p <= 8, built afresh beyond, which
        takes minutes). 'split' (beyond the paper) releases the design block (sums of
        x, x x') and the response block (sums of y, x y, y^2) with a public split of
        epsilon, as one K-norm release whose norm is the weighted sum of the blocks'
        norms (:func:`~knorm.sensitivity.regression_split_ball`; see Notes). 'auto' is
        'split' under replace-one neighbours and, under add/remove, the best certified
        norm in the volume order that is affordable
        (:func:`~knorm.models.functional.auto_norm`). 'kt', 'cut' and 'split' exist
        for replace-one neighbours only.
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
    statistic : {'gram', 'paper'}, default='gram'
        'gram' releases the whole Gram matrix of (1, x', y'): the paper's T and one
        more coordinate, sum 2 y'^2, which identifies the residual variance that
        :meth:`conf_int` needs. 'paper' releases the paper's T (Section 5.1) only;
        intervals then use a conservative stand-in for the residual variance.
    xy_share : 'auto' or float in (0, 1), default='auto'
        With ``norm='split'``: the share of epsilon spent on the response block.
        'auto' is :func:`~knorm.sensitivity.auto_xy_share` (public: it depends on p
        only). A larger share helps when the response bound is loose (the paper's
        simulation), a smaller one when the design is ill-conditioned; ignored by
        the other norms.
    accountant : PrivacyAccountant, default=None
        Charged ``epsilon`` (or ``rho``) once in ``fit``, before the noise is drawn; a
        refused charge raises and nothing is fitted. A pure epsilon ledger refuses a rho
        fit; a rho ledger charges an epsilon fit eps^2 / 2.
    random_state : None, int, Generator or RandomState, default=None
        Source of the noise. None (the default) draws fresh entropy from the
        operating system: use it to publish. A fixed int seed is for tests and
        reproducible examples: an accountant refuses a second release with the
        same seed, and without one every such release warns (``PrivacyWarning``).
        A Generator or RandomState is identified by its state: an accountant
        refuses a second fit from the same state (two ``RandomState(7)``, two
        ``default_rng(7)``), and without one a state reused in this process warns.
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
    coef_ : ndarray of shape (n_features,)
        Coefficients in the original units (private release).
    intercept_ : float
        Intercept in the original units (0.0 if ``fit_intercept=False``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Names of the features seen in ``fit``, only when X has string column names
        (pandas or Dask DataFrame).
    norm_ : str
        The norm used ('auto' resolved); under rho 'gaussian (spherical)' or
        'gaussian (split)'.
    epsilon_ : float or None
        The epsilon spent by the fit (None under rho).
    rho_ : float or None
        The rho spent by the fit (None under epsilon).
    release_ : Release
        The record of the one release: the noisy statistic with its privacy terms.
    sensitivity_ : Sensitivity
        Certified sensitivity Delta_K of the released statistic.
    noise_scale_ : float
        Delta_K / epsilon; under rho the standard deviation sigma of the (spherical)
        noise on C T (see ``shape``).
    floor_ : float
        The eigenvalue floor tau (0.0 for 'pinv'): the median spectral norm of the
        Gram block's noise under the public noise law.
    n_floored_ : int
        Eigenvalues of the noisy scaled Gram block raised to ``floor_`` (0: the
        estimate is the paper's). Post-processing of the release, so public.
    statistic_noisy_ : ndarray
        The released noisy statistic: T + V in RegressionLayout order (replace),
        or (n, T') + V with T' the statistic with undoubled squares (add/remove).
        This is the eps-DP output; everything above is computed from it.
    n_samples_ : float
        The number of records n (public under replace), or the released noisy
        count (add/remove).
    bse_ : ndarray of shape (n_features + fit_intercept,)
        Standard errors, intercept first: the parametric bootstrap of :meth:`conf_int`
        (computed on first use, then kept). They cover sampling error and privacy noise.
    fit_diagnostics_ : FitDiagnostics
        CURATOR-ONLY, NOT private: the exact number of records and of clipped
        entries. Dropped on pickling; never publish it. A fit that clips more
        than 5% of the entries warns the curator (``ClippingWarning``).

    Notes
    -----
    *Mechanism* (paper Section 5.1). X and y are clipped to their bounds and
    mapped affinely onto [-1, 1]; T = RegressionLayout(p).from_data(x', y')
    has every entry of replace-one sensitivity 2 (squares doubled). Each scaled record
    is rounded to the grid 2^-32 (a record of the same domain, so S_T is unchanged) and
    T is summed exactly in integer arithmetic, then rounded to the lattice of the
    release in integers (:class:`~knorm.models.sufficient.ExactStatistic`): no float
    sum, whose value depends on the order and blocking of the rows (Casacuberta et al.
    2022), enters the release. The noise V
    has density proportional to exp(-eps ||V||_K / Delta_K), Delta_K certified
    by :meth:`SensitivitySpace.sensitivity`: 1 for 'kt' (errata item 5), 1 for
    'cut' (exact: S_T lies inside K_T and inside every exact support plane), 2 for
    'linf', and for 'l1' / 'l2' the smaller of the per-coordinate bound (paper
    Eq. ApproximateSensitivity) and, for d <= 14, the space's own certificate.
    Noise is added once; everything after is post-processing (paper
    Proposition "Postprocessing").

    *Add/remove neighbours.* The released vector is (n, T') with T' = T with the
    squares not doubled; every coordinate has add/remove sensitivity 1, and its
    sensitivity space is ``SensitivitySpace.additive(..., neighbours='add_remove')``.
    K_T and the cut ball were derived for replace-one neighbours, so 'kt' and
    'cut' are refused. eps-add/remove-DP implies 2 eps-replace-DP.

    *The response square* (``statistic='gram'``, beyond the paper). The paper's T
    lacks sum y'^2, so the residual variance is not identified from it. It is
    released jointly, as one more coordinate 2 sum y'^2 of the same K-norm release
    (sensitivity 2, like the other squares). The geometry: l_inf changes only in
    dimension (Delta_inf = 2); K_T gains the K_2 cylinder on (sum y, sum 2 y^2),
    the exact hull of that pair (paper Example 2.1 and errata item 3, read with
    errata item 5); the cut ball keeps its certified cuts, which involve only the
    old coordinates and so stay support planes of the completed S_T, and gains the
    same cylinder. Delta = 1 stays exact for both, attained at u = 2 e_1. The price is
    one more dimension of noise (27 against 26 coordinates at p = 5).

    *Intervals* (:meth:`conf_int`, ``bse_``, :meth:`summary`): a parametric bootstrap
    of the release (Ferrando, Wang & Sheldon 2022) under Gaussian errors and data
    inside the bounds; see :func:`knorm.models.inference.parametric_bootstrap`. Under
    rho the bootstrap draws the privacy noise from its Gaussian law.

    *Under rho* (beyond the paper). The same statistic is released by the Gaussian
    mechanism, rho-zCDP (Bun & Steinke 2016, Proposition 1.6; exact on a lattice,
    Canonne, Kamath & Steinke 2020). The noise is scaled to a certified bound on
    sup over S_T of ||C u||_2, derived in closed form from the statistic's sensitivity
    space (:func:`~knorm.models.functional_gaussian.weighted_sensitivity`): the l2
    sensitivity is p + 2 for p >= 4 (exact for even p), against 2 sqrt(d) for the
    per-coordinate bound. The eigenvalue floor is the median spectral norm of the
    Gaussian noise's Gram block. The ledger is charged rho once per fit. Measured against
    AdaSSP (Wang 2018) at equal rho: docs/guide/zcdp.md, section "Regression under rho".

    *Back to original units.* With z' = (1, x', y') and z = (1, x, y) = L z', the
    original Gram blocks are X'X = L1 A L1' and X'y = L1 (A e0 (-c_y) + b) / a_y
    (the unknown y'y' entry is not needed). Without an intercept these blocks
    (minus the intercept row and column) are solved; with one, the scaled
    solution is mapped back, which is the same estimator.

    *Post-processing 'eigen'* (beyond the paper). The noisy Gram block is
    A* = A + E with A positive semi-definite. Directions where A* has an
    eigenvalue below ||E||_2 carry no usable signal, yet the pseudo-inverse
    divides by them. tau is the median of ||E||_2 under the public noise
    law (fixed-seed Monte Carlo, :func:`noise_floor` with ``level=0.5``; the
    paper's experiments use the 0.9-quantile, which shrinks more); eigenvalues of
    A* below tau are raised to tau. It uses no data beyond the one noisy release,
    and when the data dominate the noise (every eigenvalue of A* above tau) it
    returns the paper's estimator. Measured (``docs/benchmarks.md``, linear
    regression and housing sections): on the California housing data prepared as
    in the paper's Section 5.3 (p = 12, n = 20,433) it cuts the median error of the
    paper's estimator 2.4-4.5x for eps in [0.25, 16], where the pseudo-inverse
    is worse than reporting zero; on the paper's simulation (p = 5, n = 10^4)
    the floor never binds and both agree.

    *The split norm* (``norm='split'``, the default; beyond the paper). To first
    order the estimate errs by A^{-1} (E_b - E_A theta): the noise of the response
    block E_b enters directly, that of the design block E_A scaled by the
    coefficients. A joint K-norm release gives every coordinate noise of about
    (d + 1) / eps (its radius is Gamma(d + 1)), which is how it spends the budget
    across blocks. The norm (1 - s) ||u_A||_{K_A} + s ||u_b||_{K_b} instead makes the
    noise exactly that of two independent releases with budgets (1 - s) eps and
    s eps (the density factorises), with Delta = 1 certified and attained, so the
    small response block (d_b = p + 2 coordinates) gets noise of about
    (d_b + 1) / (s eps). s is chosen publicly (:func:`~knorm.sensitivity.auto_xy_share`).
    Measured (``benchmarks/bench_housing.py``, 200 releases per cell, eps in
    {1/4, ..., 8}): 7-15% less median error than the joint cut ball on the paper's
    simulation (n = 10^4) and within -2% to +7% of the joint K_T on the housing data,
    both with the response square released; against the previous default (the paper's
    T, joint norm, floor at the 0.9-quantile) equal or better at every eps on both.
    The paper's 0.5 ||beta_OLS|| at eps = 1 on housing is out of reach (0.86 measured;
    a non-private oracle with X'X known exactly reaches only 0.56).

    References
    ----------
    Paper Section 5 (5.1 setup, statistic, K_T and Eq. DPEstimate; 5.2
    simulation; 5.3 housing data), Example 2.1, Proposition "Postprocessing", Remark on
    add/delete-DP; errata items 3 and 5 (K_T is an outer approximation of the hull).
    Ferrando, Wang & Sheldon (2022), "Parametric bootstrap for differentially private
    confidence intervals", AISTATS. Casacuberta, Shoemate, Vadhan & Wagaman (2022),
    "Widespread underestimation of sensitivity in differentially private libraries and
    how to fix it", ACM CCS.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10_000, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.standard_normal(10_000)
    >>> reg = LinearRegression(epsilon=1.0, norm="linf", bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=0)
    >>> reg.fit(X, y).coef_.round(1)
    array([ 1. , -0.5])
    >>> reg.conf_int().shape  # intercept, x1, x2
    (3, 2)

    Under rho-zCDP, charged to a rho ledger:

    >>> from knorm.accounting import PrivacyAccountant
    >>> acc = PrivacyAccountant(total_rho=1.0)
    >>> zc = LinearRegression(rho=0.5, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, random_state=0)
    >>> zc.fit(X, y).coef_.round(1), zc.rho_, zc.release_.epsilon, acc.spent_rho
    (array([ 1. , -0.5]), 0.5, None, 0.5)
    """

    #: The rule(s) of each constructor parameter, checked first in fit (knorm.models._params).
    _parameter_rules = {
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "rho": [Interval(Real, 0, None, closed="neither"), None],
        "shape": [StrOptions(set(GAUSSIAN_SHAPES))],
        "norm": [StrOptions({"auto", *NORMS})],
        "bounds_X": ["array-like", None],
        "bounds_y": ["array-like", None],
        "fit_intercept": ["boolean"],
        "neighbours": [StrOptions({"replace", "add_remove"})],
        "postprocess": [StrOptions({"eigen", "pinv"})],
        "statistic": [StrOptions(set(STATISTICS))],
        "xy_share": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="neither")],
        "accountant": [HasMethods(["spend"]), None],
        "random_state": ["random_state", np.random.Generator],
        "sampler": [StrOptions({"auto", "lattice", "continuous"})],
    }

    def __init__(
        self,
        *,
        epsilon=None,
        rho=None,
        shape="spherical",
        norm="auto",
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        neighbours="replace",
        postprocess="eigen",
        statistic="gram",
        xy_share="auto",
        accountant=None,
        random_state=None,
        sampler="auto",
    ):
        self.epsilon = epsilon
        self.rho = rho
        self.shape = shape
        self.norm = norm
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.neighbours = neighbours
        self.postprocess = postprocess
        self.statistic = statistic
        self.xy_share = xy_share
        self.accountant = accountant
        self.random_state = random_state
        self.sampler = sampler

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
        LinearRegression
            This estimator, fitted: ``coef_``, ``intercept_`` and the record of the
            one release, ``release_``.
        """
        # Every parameter first: before any data is read or any budget charged. (No nested
        # estimators here, so scikit-learn's prefer_skip_nested_validation has no counterpart.)
        check_params(self)
        unit, budget = resolve_budget(self)
        norm = self.norm
        self._check_unit_options(unit)
        if norm != "auto":
            check_norm(norm, None, self.neighbours, _OWNER)
        refuse_complex(X, "X", _OWNER)
        refuse_complex(y, "y", _OWNER)
        dask = is_dask(X) or is_dask(y)  # found once, at the door
        if dask:
            self._set_features(X)
        else:
            with numeric_input(_OWNER, X=X, y=y):
                # NaN and inf: refused (with counts) by the exact statistic's one pass over the data
                X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_all_finite=False)
                y = np.asarray(y, dtype=np.float64)  # text labels fail here, inside the clear error
        p = self.n_features_in_  # public: the declared domain's dimension
        lo, hi = check_bounds(self.bounds_X, p, _OWNER, "bounds_X")
        lo_y, hi_y = check_bounds(self.bounds_y, 1, _OWNER, "bounds_y")
        box_lo, box_hi = np.concatenate([lo, lo_y]), np.concatenate([hi, hi_y])
        T, n_clipped = exact_statistic(X, y, box_lo, box_hi, _OWNER, dask=dask)
        n = T.n_samples  # T is exact (ExactStatistic): the lattice release rounds it in integers

        if unit == "rho":
            name = f"gaussian ({self.shape})"
            fm = gaussian_functional_mechanism(
                T,
                n,
                p=p,
                rho=budget,
                shape=self.shape,
                rng=self._release_rng(),
                accountant=self.accountant,
                neighbours=self.neighbours,
                postprocess=self.postprocess,
                statistic=self.statistic,
                floor_level=FLOOR_LEVEL,
                label=f"{_OWNER}.fit (functional mechanism, {self.shape} Gaussian noise, rho-zCDP)",
                sampler=self.sampler,
            )
        else:
            if norm == "auto":
                name = "split" if self.neighbours == "replace" else auto_norm(p, self.neighbours, self.statistic)
            else:
                name = norm
            fm = functional_mechanism(
                T,
                n,
                p=p,
                norm=name,
                epsilon=budget,
                rng=self._release_rng(),
                accountant=self.accountant,
                neighbours=self.neighbours,
                postprocess=self.postprocess,
                statistic=self.statistic,
                xy_share=None if self.xy_share == "auto" else float(self.xy_share),
                floor_level=FLOOR_LEVEL,
                label=f"{_OWNER}.fit (functional mechanism, {name})",
                sampler=self.sampler,
            )
        self._functional, self._bootstrap = fm, None  # post-processing state for conf_int
        self._bounds = ((lo, hi), (lo_y, hi_y))
        self.coef_, self.intercept_ = fm.coefficients((lo, hi), (lo_y, hi_y), fit_intercept=self.fit_intercept)
        self.release_ = fm.release
        self.norm_, self.sensitivity_, self.noise_scale_ = name, fm.release.sensitivity, fm.release.noise_scale
        self.floor_, self.n_floored_ = fm.floor, fm.n_floored
        self.statistic_noisy_ = fm.released
        self.epsilon_: float | None = budget if unit == "epsilon" else None
        self.rho_: float | None = budget if unit == "rho" else None
        self.n_samples_ = fm.n_samples
        self.fit_diagnostics_ = diagnose(n, n_clipped, n * (p + 1), _OWNER)
        return self

    def _check_unit_options(self, unit):
        """Refuse the options that belong to the other privacy definition (before any data is read)."""
        if unit == "rho":
            for name, value in (("norm", self.norm), ("xy_share", self.xy_share)):
                if value != "auto":
                    raise InvalidParameterError(
                        f"The {name!r} parameter of {_OWNER} must be 'auto' with rho (Gaussian noise, whose shape is "
                        f"the 'shape' parameter; {name} belongs to the K-norm noise of epsilon). Got {value!r} instead."
                    )
        elif self.shape != "spherical":
            raise InvalidParameterError(
                f"The 'shape' parameter of {_OWNER} must be 'spherical' with epsilon (it shapes the Gaussian noise of "
                f"rho; the K-norm noise of epsilon is chosen by 'norm'). Got {self.shape!r} instead."
            )

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

    def _inference(self):
        """The parametric bootstrap of the release (post-processing), computed once per fit."""
        check_is_fitted(self, "coef_")
        if getattr(self, "_bootstrap", None) is None:
            bx, by = self._bounds
            self._bootstrap = parametric_bootstrap(self._functional, bx, by, fit_intercept=self.fit_intercept)
        return self._bootstrap

    @property
    def bse_(self):
        """Bootstrap standard errors, intercept first (see :meth:`conf_int`)."""
        return self._inference().bse

    def conf_int(self, alpha=0.05):
        """Return confidence intervals covering both sampling error and privacy noise.

        Post-processing of the release: a parametric bootstrap of the released statistic
        (:func:`knorm.models.inference.parametric_bootstrap`), deterministic (fixed
        seeds), computed on first use and kept with the fit.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level, in (0, 1).

        Returns
        -------
        Intervals
            One interval per parameter, in original units, named: the intercept first
            (when fitted, named 'intercept'), then the features in column order (their
            DataFrame names, else x1, x2, ...), the order of statsmodels'
            ``OLS(y, add_constant(X)).fit().conf_int()``. It prints as a table;
            ``np.asarray`` gives the array of shape (n_features + fit_intercept, 2) of lower
            and upper ends that earlier versions returned, and ``intervals["x1"]`` one row.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        IntervalUnavailableError
            When the post-processing raised eigenvalues of the released Gram matrix to the
            noise floor (``n_floored_ > 0``, public): the estimate is then shrunk by the floor,
            a bias the bootstrap does not reproduce, and the intervals covered 0.68 to 0.88
            in the regimes where it happens (n = 100 at epsilon = 0.1 and 1; the coverage
            matrix, ``docs/coverage.md``). A larger n epsilon, or fewer features, avoids it.

        Notes
        -----
        Basic bootstrap intervals [2 theta - q_{1 - alpha/2}, 2 theta - q_{alpha/2}] over
        2,000 replicates. They assume Gaussian homoscedastic errors and data inside the
        declared bounds. With ``statistic='paper'`` the residual variance is not released
        and a conservative stand-in is used (the intervals are then wider than needed).
        Measured coverage: the ``linear_intervals`` experiment of ``knorm reproduce`` and
        the coverage matrix (``docs/coverage.md``), over n from 100 to 10^6 and epsilon
        from 0.1 to 10.

        References
        ----------
        Ferrando, Wang & Sheldon (2022), "Parametric bootstrap for differentially
        private confidence intervals", AISTATS; paper Proposition "Postprocessing".
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.conf_int")
        refusal = self._interval_refusal()
        if refusal:
            raise IntervalUnavailableError(f"{_OWNER}.conf_int refuses: {refusal}")
        boot = self._inference()
        method = f"parametric bootstrap ({boot.n_bootstrap} replicates, basic intervals)"
        return self._named_intervals(boot.conf_int(alpha), alpha, method, boot.n_bootstrap)

    def _interval_refusal(self):
        """The public reason the bootstrap intervals are not valid for this fit, or '' when they are."""
        check_is_fitted(self, "coef_")
        if self.n_floored_ > 0:
            return (
                f"the post-processing raised {self.n_floored_} eigenvalue(s) of the released Gram matrix to the noise "
                f"floor tau = {self.floor_:.3g} (public: the noise law's, at n = {self.n_samples_:.0f}). The estimate is "
                "then shrunk towards zero by the floor, a bias the parametric bootstrap does not reproduce, and its "
                "intervals covered 0.68 to 0.88 at nominal 0.95 where this happens (docs/coverage.md). More records, "
                "a larger epsilon or fewer features avoid it; the coefficients themselves are still released."
            )
        return ""

    def summary(self, alpha=0.05):
        """Return a statsmodels-like table of the fit: print it.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level of the intervals, in (0, 1).

        Returns
        -------
        RegressionSummary
            Coefficients, standard errors, intervals and the privacy terms (epsilon,
            mechanism, norm, certified sensitivity and its kind, noise scale), all from
            released and public quantities; ``print(est.summary())`` shows the table.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        alpha = check_probability(alpha, "alpha", f"{_OWNER}.summary")
        boot = self._inference()
        refusal = self._interval_refusal()
        release = self.release_
        names = list(self._coefficient_names())
        public_n = self.neighbours == "replace"
        budget = {"epsilon": f"{release.epsilon:g}"} if release.rho is None else {"rho": f"{release.rho:g}"}
        privacy = {
            **budget,
            "method": release.method,
            "norm": f"{self.norm_} ({release.ball_name})",
            "sensitivity": f"{release.sensitivity.value:g} ({release.sensitivity.kind})",
            "noise scale": f"{release.noise_scale:.4g}",
            "neighbours": self.neighbours,
            "statistic": self.statistic,
            "n": f"{self.n_samples_:.0f} ({'public' if public_n else 'noisy count'})",
            "floored eigs": f"{self.n_floored_} (tau {self.floor_:.3g})",
            "residual s.d.": f"{boot.sigma:.4g} ({boot.sigma_kind})",
        }
        notes = [
            "Standard errors and intervals: parametric bootstrap of the one release "
            f"({boot.n_bootstrap} replicates, basic intervals; Ferrando, Wang & Sheldon 2022). They cover "
            "sampling error and privacy noise, and assume Gaussian errors and data inside the declared bounds.",
            "Everything above is computed from the released statistic and public quantities only.",
        ]
        if boot.sigma_kind == "bound":
            notes.append(
                "statistic='paper' does not release sum y^2: the residual s.d. is a conservative stand-in, "
                "so the intervals are wider than needed."
            )
        if release.ledger_entry is not None:
            notes.append(f"Charged to the accountant: ledger entry {release.ledger_entry.position}.")
        bse, ci = boot.bse, boot.conf_int(alpha)
        if refusal:  # the coefficients are released; their standard errors and intervals would mislead
            bse, ci = np.full_like(bse, np.nan), np.full_like(ci, np.nan)
            notes.insert(0, f"Standard errors and intervals REFUSED: {refusal}")
        return RegressionSummary(names, boot.params, bse, ci, alpha, privacy, notes)

    def predict(self, X):
        """Predict X coef_ + intercept_ (no clipping: post-processing of the release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features in the original units: numpy, pandas, or Dask (the result is
            then a lazy Dask array).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted responses (a Dask array for Dask input).
        """
        check_is_fitted(self, "coef_")
        if is_dask(X):
            p = _n_columns(X)
            if p != self.n_features_in_:
                raise ValueError(
                    f"X has {p} features, but {_OWNER} is expecting {self.n_features_in_} features as input."
                )
            arr = X.to_dask_array() if hasattr(X, "to_dask_array") else X
            return arr.astype(float) @ self.coef_ + self.intercept_
        refuse_complex(X, "X", _OWNER)
        with numeric_input(_OWNER, X=X):
            X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
