"""Standard errors and confidence intervals for the private linear regression: post-processing.

POST-PROCESSING ONLY: everything here is a function of released and public quantities
(the one noisy release of :func:`~knorm.models.functional_mechanism`, the declared
bounds, n when it is public, and the public noise law). No data is read. The random
numbers drawn here are Monte Carlo of public laws (the K-norm noise law, through
:meth:`~knorm.noise.KNormNoise.public_law_sample`, and standard normal and chi-square
laws) from fixed seeds, so the results are deterministic functions of the release.

The method is a parametric bootstrap (Ferrando, Wang & Sheldon 2022), in the
fixed-design form that their linear-regression adaptation takes from sufficient
statistics: see :func:`parametric_bootstrap`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from knorm._validation import check_probability
from knorm.models.functional import _certified, postprocess_release, scaled_coefficients, solve_coefficients
from knorm.noise import KNormNoise

__all__ = ["N_BOOTSTRAP", "BootstrapResult", "RegressionSummary", "parametric_bootstrap"]

#: Bootstrap replicates: the 2.5% tail then holds 50 of them.
N_BOOTSTRAP = 2000
# Fixed seeds of the two public Monte Carlo streams (privacy noise law; Gaussian model).
_NOISE_SEED, _MODEL_SEED = 20_261_121, 20_261_122


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap replicates of the private coefficients, with what the simulation assumed.

    Returned by :func:`parametric_bootstrap`; each parameter is kept as the attribute
    of the same name.

    Parameters
    ----------
    params : ndarray of shape (k,)
        The released estimate: the intercept first (when fitted), then the
        coefficients, in original units.
    replicates : ndarray of shape (n_bootstrap, k)
        The same estimate on each bootstrap replicate.
    sigma : float
        The residual standard deviation of the Gaussian model, in the original units of y.
    sigma_kind : {'estimate', 'bound'}
        'estimate' from the released sum of y^2; 'bound' when it is not released (the
        paper's statistic) and the conservative plug-in of :func:`parametric_bootstrap`
        stands in for it.
    """

    params: np.ndarray
    replicates: np.ndarray
    sigma: float
    sigma_kind: str

    @property
    def n_bootstrap(self):
        """Number of replicates."""
        return len(self.replicates)

    @property
    def bse(self):
        """Bootstrap standard errors: the standard deviation of each column of ``replicates``."""
        return self.replicates.std(axis=0, ddof=1)

    def conf_int(self, alpha=0.05):
        """Return basic bootstrap intervals of level 1 - alpha.

        Parameters
        ----------
        alpha : float, default 0.05
            One minus the confidence level, in (0, 1).

        Returns
        -------
        ndarray of shape (k, 2)
            Rows in the order of ``params``: [2 theta - q_{1 - alpha/2}, 2 theta - q_{alpha/2}],
            q the quantiles of ``replicates``.

        Notes
        -----
        The basic (reverse-percentile) interval: the law of theta* - theta under the
        fitted model stands in for that of theta - theta_true, which also corrects
        the estimator's bias to first order (Davison & Hinkley 1997, Section 5.2).
        """
        alpha = check_probability(alpha, "alpha", "BootstrapResult.conf_int")
        q_lo, q_hi = np.quantile(self.replicates, [alpha / 2, 1 - alpha / 2], axis=0)
        return np.column_stack([2 * self.params - q_hi, 2 * self.params - q_lo])


@functools.lru_cache(maxsize=16)
def _unit_noise(norm, p, neighbours, statistic, xy_share, n, seed):
    """Draws of the public noise law at unit scale, cached: the bootstrap's privacy noise."""
    ball = _certified(norm, p, neighbours, statistic, xy_share)[0]
    return KNormNoise(ball, 1.0).public_law_sample(n, seed=seed)


@functools.lru_cache(maxsize=16)
def _unit_gaussian(dim, n, seed):
    """Standard normal draws (public Monte Carlo), cached: the bootstrap's Gaussian privacy noise."""
    return np.random.default_rng(seed).standard_normal((n, dim))


def parametric_bootstrap(fm, bounds_X, bounds_y, *, fit_intercept=True, n_bootstrap=N_BOOTSTRAP):
    """Simulate the private estimator under the model fitted to its own release.

    Uses only released and public quantities: ``fm`` (the noisy release and its
    post-processing), the declared bounds and the public noise law.

    Parameters
    ----------
    fm : FunctionalFit
        The output of :func:`~knorm.models.functional_mechanism`.
    bounds_X : pair of arrays
        The declared (lower, upper) of the features, as used for the fit.
    bounds_y : pair of floats
        The declared (lower, upper) of the response.
    fit_intercept : bool, default True
        Whether the fit has an intercept.
    n_bootstrap : int, default 2000
        Number of replicates.

    Returns
    -------
    BootstrapResult
        The estimate, its replicates and the residual scale the simulation used.

    Notes
    -----
    Write z' = (1, x') and y' for the records in scaled units (Section 5.1), A = sum z'z'
    and b = sum z'y', c = sum y'^2. The release gives A*, b* (and c* with
    ``statistic='gram'``); the fit is theta = g(A*, b*), g the eigenvalue floor and the
    solve of :func:`~knorm.models.functional_mechanism`.

    *Model* (fixed design, Gaussian errors): y' = z' theta_0 + e, e ~ N(0, s^2) iid. Given
    the design, b = A theta_0 + w with w = sum z' e ~ N(0, s^2 A), and
    c = theta_0'A theta_0 + 2 theta_0'w + e'e with e'e = w'A^+ w + s^2 chi2_{n - p - 1}
    independent of w (e'e splits into its projections on the column space of the design
    and its complement; Cochran's theorem).

    *Fitted model.* The design Gram is the post-processed release A_hat (positive
    definite under the floor; its negative eigenvalues are set to 0 otherwise), theta_0
    the released estimate mapped to scaled units, and
    s^2 = RSS / (n - k), RSS = c* - 2 theta'b* + theta'A_hat theta, k the number of fitted
    coefficients, clipped to [0, 1] (y' lies in [-1, 1]). Without c* (the paper's
    statistic) c* is replaced by n, its largest value: s^2 is then overstated and the
    intervals are conservative (``sigma_kind='bound'``).

    *Replicates.* Draw (w, chi2) from the fitted model and V from the public noise law
    (the same ball and scale as the release), form T* = T(A_hat, b, c) + V, and push it
    through exactly the post-processing of the fit (the same floor tau, the same solve,
    the same map to original units). The spread of theta* around theta stands in for
    that of theta around theta_0: sampling error and privacy noise together.

    *Under rho* (:func:`~knorm.models.functional_gaussian.gaussian_functional_mechanism`) V
    is drawn from N(0, diag(noise_sd^2)), the public law of the Gaussian noise on T. On
    the lattice the noise is a discrete Gaussian of parameter sigma, whose variance is
    at most sigma^2 (Canonne, Kamath & Steinke 2020, Section 2.1) and
    whose law at sigma >> the spacing is that of N(0, sigma^2) to within the spacing: the
    continuous law stands in for it, slightly conservatively.

    Assumed: Gaussian homoscedastic errors; data inside the declared bounds (clipping is
    not simulated); the design moments are those released (their noise enters through
    V, not through the simulated sampling). Deterministic: fixed seeds for both Monte
    Carlo streams, and the unit-scale noise draws are cached per noise law.

    References
    ----------
    Ferrando, Wang & Sheldon (2022), "Parametric bootstrap for differentially private
    confidence intervals", AISTATS (Section on linear regression from sufficient
    statistics); Sheffet (2017), "Differentially private ordinary least squares", ICML;
    paper Section 5.1 and Proposition "Postprocessing".

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.models import functional_mechanism
    >>> from knorm.sensitivity import RegressionLayout
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, size=(5000, 1))
    >>> y = 0.5 * x[:, 0] + 0.2 * rng.standard_normal(5000)
    >>> T = RegressionLayout(1, response_square=True).from_data(x, np.clip(y, -1, 1))
    >>> fm = functional_mechanism(T, 5000, p=1, norm="linf", epsilon=1.0, statistic="gram", rng=rng)
    >>> boot = parametric_bootstrap(fm, ([-1.0], [1.0]), (-1.0, 1.0))
    >>> boot.replicates.shape, boot.sigma_kind
    ((2000, 2), 'estimate')
    >>> lo, hi = boot.conf_int(0.05)[1]  # the slope's 95% interval
    >>> bool(lo < 0.5 < hi)
    True
    """
    layout = fm.layout
    p = layout.p
    coef, intercept = fm.coefficients(bounds_X, bounds_y, fit_intercept=fit_intercept)
    theta = scaled_coefficients(coef, intercept, bounds_X, bounds_y)
    A, b, n = fm.gram, fm.cross, fm.n_samples
    k = p + int(bool(fit_intercept))
    if fm.sum_y2 is not None:
        c, kind = fm.sum_y2, "estimate"
    else:
        c, kind = n, "bound"
    rss = c - 2.0 * theta @ b + theta @ A @ theta
    s2 = float(np.clip(rss / max(n - k, 1.0), 0.0, 1.0))
    lo_y, hi_y = (float(np.ravel(v)[0]) for v in bounds_y)

    # The fitted model's sampling law, drawn from a fixed seed.
    model = np.random.default_rng(_MODEL_SEED)
    z = model.standard_normal((n_bootstrap, p + 1))
    df = max(n - (p + 1), 1.0)
    chi2 = model.chisquare(df, n_bootstrap)
    lam, U = np.linalg.eigh(A)
    lam = np.maximum(lam, 0.0)
    w = math.sqrt(s2) * (z * np.sqrt(lam)) @ U.T  # N(0, s^2 A_hat)
    b_world = A @ theta + w
    proj = s2 * np.sum(z[:, lam > 0] ** 2, axis=1)  # w' A^+ w
    c_world = theta @ A @ theta + 2.0 * w @ theta + proj + s2 * chi2
    T_world = layout.from_blocks(
        np.broadcast_to(A, (n_bootstrap,) + A.shape), b_world, c_world if layout.yy is not None else None
    )

    scale = fm.release.noise_scale
    if fm.noise_sd is not None:  # Gaussian noise under rho: its public law, N(0, diag(noise_sd^2))
        if scale > 0:
            T_world = T_world + fm.noise_sd * _unit_gaussian(len(fm.noise_sd), n_bootstrap, _NOISE_SEED)
    elif scale > 0:  # zero in the noise-free limit (knorm.mechanisms.nonprivate)
        T_world = T_world + scale * _unit_noise(
            fm.norm, p, fm.neighbours, fm.statistic, fm.xy_share, n_bootstrap, _NOISE_SEED
        )
    n_public = n if layout.count is None else None
    A_b, b_b, _ = postprocess_release(T_world, layout, n_public, fm.floor)
    coef_b, icpt_b = solve_coefficients(
        A_b, b_b, bounds_X, bounds_y, fit_intercept=fit_intercept, pinv=fm.postprocess == "pinv"
    )
    if fit_intercept:
        params = np.concatenate([[intercept], coef])
        replicates = np.column_stack([icpt_b, coef_b])
    else:
        params, replicates = np.asarray(coef, dtype=float), coef_b
    sigma = math.sqrt(s2) * (hi_y - lo_y) / 2.0  # back to the units of y
    return BootstrapResult(params, replicates, sigma, kind)


@dataclass(frozen=True)
class RegressionSummary:
    """A statsmodels-like summary of a private linear regression; ``print`` it.

    Returned by :meth:`knorm.models.LinearRegression.summary`. It holds only released
    and public quantities. Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    names : list of str
        Row names: 'intercept' (when fitted), then the features.
    params : ndarray of shape (k,)
        The released coefficients.
    bse : ndarray of shape (k,)
        Their bootstrap standard errors.
    conf_int : ndarray of shape (k, 2)
        The intervals.
    alpha : float
        One minus their level.
    privacy : dict of str to str
        The privacy terms (epsilon, mechanism, norm, sensitivity, noise scale, ...).
    notes : list of str
        What the intervals assume.
    """

    names: list
    params: np.ndarray
    bse: np.ndarray
    conf_int: np.ndarray
    alpha: float
    privacy: dict
    notes: list

    def as_text(self):
        """Return the table as text.

        Returns
        -------
        str
            A header with the privacy terms, then one row per coefficient: coef, std err
            and the interval.
        """
        width = 78
        lo_label, hi_label = f"[{self.alpha / 2:g}", f"{1 - self.alpha / 2:g}]"
        name_w = max(12, *(len(n) for n in self.names))
        lines = ["Private linear regression (knorm)".center(width), "=" * width]
        items = list(self.privacy.items())
        if max(len(v) for _, v in items) <= 24:  # two columns, as statsmodels
            half = (len(items) + 1) // 2
            for (k1, v1), right in zip(items[:half], items[half:] + [None]):
                left = f"{k1 + ':':<14}{v1:>24}"
                lines.append(left + ("" if right is None else f"  {right[0] + ':':<14}{right[1]:>24}"))
        else:
            lines += [f"{k + ':':<16}{v}" for k, v in items]
        lines.append("=" * width)
        lines.append(f"{'':<{name_w}}{'coef':>14}{'std err':>14}{lo_label:>14}{hi_label:>14}")
        lines.append("-" * width)
        for name, coef, se, (lo, hi) in zip(self.names, self.params, self.bse, self.conf_int):
            lines.append(f"{name:<{name_w}}{coef:>14.6g}{se:>14.6g}{lo:>14.6g}{hi:>14.6g}")
        lines.append("=" * width)
        lines += ["Notes:"] + [f"[{i}] {note}" for i, note in enumerate(self.notes, 1)]
        return "\n".join(lines)

    def __str__(self):
        return self.as_text()

    def __repr__(self):
        return self.as_text()
