"""The K-norm functional mechanism for linear regression (paper Section 5.1).

The statistic T (the unique non-constant entries of X'X and X'Y for scaled data in
[-1, 1], :class:`~knorm.sensitivity.RegressionLayout`) is released once through
:meth:`knorm.mechanisms.KNormMechanism.release`; the Gram blocks and the coefficients are
post-processing of that release (paper Proposition "Postprocessing").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from knorm._validation import check_positive
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, Release, choose_mechanism
from knorm.noise import KNormNoise
from knorm.sensitivity import RegressionLayout, kt_ball, linear_regression_space, regression_cut_ball
from knorm.sensitivity.certificate import as_certified

__all__ = ["FunctionalRelease", "auto_norm", "functional_mechanism", "noise_floor", "solve_coefficients"]

_OWNER = "functional_mechanism"
_LP = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
NORMS = (*_LP, "kt", "cut")
REPLACE_ONLY = ("kt", "cut")
# 'auto' thresholds on p, from measured costs (Notes of auto_norm).
_P_CUT, _P_KT = 8, 15
# Largest dimension where l1 / l2 sensitivities are computed by SensitivitySpace
# (exact sign-vector enumeration for l1); beyond, the per-coordinate bound.
_LP_SPACE_MAX_DIM = 14
# Public Monte Carlo of the eigenvalue floor: fixed seed, draws, quantile level.
_FLOOR_SEED, _FLOOR_DRAWS, _FLOOR_LEVEL = 20_240_601, 1000, 0.9


@functools.lru_cache(maxsize=32)
def _space(p, neighbours):
    return linear_regression_space(p, neighbours=neighbours)


def _ball(name, p, neighbours):
    if name in _LP:
        return LpBall(RegressionLayout(p, neighbours).dim, _LP[name])
    return kt_ball(p) if name == "kt" else regression_cut_ball(p)[0]


@functools.lru_cache(maxsize=64)
def _certified(name, p, neighbours):
    """(ball, certified Sensitivity) of the norm ``name``; cached per (name, p, neighbours)."""
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
    t = RegressionLayout(p, neighbours).statistic()
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


def check_norm(norm, p, neighbours, owner):
    """Check ``p`` (unless None), ``neighbours`` and a norm name; return the name."""
    RegressionLayout(1 if p is None else p, neighbours)  # checks p and neighbours
    allowed = NORMS if neighbours == "replace" else tuple(_LP)
    if norm is not None and norm not in allowed:
        raise ValueError(
            f"The 'norm' parameter of {owner} must be one of {allowed} with neighbours={neighbours!r}. "
            f"Got {norm!r} instead."
            + (
                " K_T and the cut ball were derived for replace-one neighbours (paper Section 5.1)."
                if norm in REPLACE_ONLY
                else ""
            )
        )
    return norm


@functools.lru_cache(maxsize=32)
def auto_norm(p, neighbours="replace"):
    """Return the norm that ``norm='auto'`` uses for p features.

    Parameters
    ----------
    p : int
        Number of features.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.

    Returns
    -------
    str
        One of 'cut', 'kt', 'linf' (or 'l1' / 'l2', which never win here).

    Notes
    -----
    The candidates are ranked by :func:`knorm.mechanisms.choose_mechanism` in the
    paper's volume order (Section 3, Theorem "Optimal K-mech"; the hull of S_T
    would be optimal). Which candidates enter depends on cost, measured on the
    2-core reference machine (see ``benchmarks/bench_linear.py``):

    * 'cut' (:func:`~knorm.sensitivity.regression_cut_ball`) for p <= 8:
      its cut directions are shipped for p <= 8 (loading takes < 0.3 s;
      building them afresh beyond takes minutes), and its exact rejection
      sampler slows from ~0.2 ms per draw at p = 5 to ~2.5 ms at p = 8.
    * 'kt' (paper Section 5.1 K_T, errata item 5) for p <= 15: cube
      rejection accepts ~2^-(p+1) p^2 / 4 and costs ~1.4 ms per draw at p = 15,
      doubling every p or two, while its gain over l_inf is only ~5 % of
      epsilon there.
    * 'linf' always. l1 and l2 enter unless an attained point of S_T already
      makes their ball larger than the l_inf one (so no certified sensitivity
      could rank them first); for this statistic that is always the case, which
      spares their costly certified sensitivities.

    Under add/remove neighbours only l1, l2 and l_inf are candidates. The result
    is cached per (p, neighbours); volumes of kt and cut are Monte Carlo
    estimates with a fixed seed, so the choice is deterministic.

    References
    ----------
    Paper Sections 3 and 5.1; errata item 5.

    Examples
    --------
    >>> auto_norm(20)
    'linf'
    """
    check_norm(None, p, neighbours, "auto_norm")
    candidates = {"linf": _ball("linf", p, neighbours)}
    if neighbours == "replace" and p <= _P_KT:
        candidates["kt"] = _ball("kt", p, neighbours)
    if neighbours == "replace" and p <= _P_CUT:
        candidates["cut"] = _ball("cut", p, neighbours)
    space = _space(p, neighbours)
    linf = _log_volume_lp(space.dim, math.inf, _certified("linf", p, neighbours)[1].value)
    for name in ("l1", "l2"):
        if _log_volume_lp(space.dim, _LP[name], _witness_lower_bound(p, neighbours, _LP[name])) <= linf:
            candidates[name] = _ball(name, p, neighbours)
    return choose_mechanism(space, 1.0, candidates, rng=_FLOOR_SEED).name


@functools.lru_cache(maxsize=64)
def _unit_floor(name, p, neighbours):
    """Monte Carlo of the public noise law: the 0.9-quantile of ||E||_2 at unit scale."""
    ball = _certified(name, p, neighbours)[0]
    V = KNormNoise(ball, 1.0).public_law_sample(_FLOOR_DRAWS, seed=_FLOOR_SEED)
    # n is not noisy: 0 in its place leaves E the noise of the Gram block.
    E = RegressionLayout(p, neighbours).gram_blocks(V, n=0.0)[0]
    spec = np.max(np.abs(np.linalg.eigvalsh(E)), axis=1)
    return float(np.quantile(spec, _FLOOR_LEVEL))


def noise_floor(norm, p, epsilon, *, neighbours="replace"):
    """Return the eigenvalue floor tau of ``postprocess='eigen'``: public, from the noise law only.

    Parameters
    ----------
    norm : {'l1', 'l2', 'linf', 'kt', 'cut'}
        The noise's norm.
    p : int
        Number of features.
    epsilon : float
        Privacy budget of the release.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.

    Returns
    -------
    float
        The 0.9-quantile of the spectral norm of the noise E added to the scaled
        Gram block of (1, x'), for noise scale Delta / epsilon (Monte Carlo with
        a fixed seed over 1000 draws of the public law, cached at unit scale; tau is
        linear in the scale).

    Examples
    --------
    >>> round(noise_floor("linf", 1, 1.0) / noise_floor("linf", 1, 2.0), 6)
    2.0
    """
    check_norm(norm, p, neighbours, "noise_floor")
    epsilon = check_positive(epsilon, "epsilon", "noise_floor")
    sens = _certified(norm, p, neighbours)[1].value
    return _unit_floor(norm, p, neighbours) * sens / float(epsilon)


@dataclass(frozen=True)
class FunctionalRelease:
    """The one release of the functional mechanism and its post-processing.

    Returned by :func:`functional_mechanism`; each parameter is kept as the
    attribute of the same name.

    Parameters
    ----------
    release : Release
        The eps-DP output: the noisy statistic in :class:`RegressionLayout` order.
    gram : ndarray of shape (p + 1, p + 1)
        Post-processed scaled Gram block of (1, x'), eigenvalues floored at ``floor``.
    cross : ndarray of shape (p + 1,)
        Post-processed cross products of (1, x') with y'.
    floor : float
        The eigenvalue floor tau (0.0 for 'pinv').
    n_floored : int
        How many eigenvalues the floor raised (post-processing, so public).
    n_samples : float
        The number of records n (public under replace) or the released noisy count
        (add/remove).
    postprocess : {'eigen', 'pinv'}
        The post-processing used: the eigenvalue floor or the paper's pseudo-inverse.
    """

    release: Release
    gram: np.ndarray
    cross: np.ndarray
    floor: float
    n_floored: int
    n_samples: float
    postprocess: str

    def coefficients(self, bounds_X, bounds_y, *, fit_intercept=True):
        """Return (coef, intercept) in the original units (post-processing).

        Parameters
        ----------
        bounds_X : pair of arrays
            The declared (lower, upper) of the features, as used to scale them.
        bounds_y : pair of floats
            The declared (lower, upper) of the response.
        fit_intercept : bool, default True
            Fit an intercept.

        Returns
        -------
        coef : ndarray of shape (p,)
            The coefficients in the original units.
        intercept : float
            The intercept in the original units (0.0 without one).
        """
        return solve_coefficients(
            self.gram, self.cross, bounds_X, bounds_y, fit_intercept=fit_intercept, pinv=self.postprocess == "pinv"
        )


def functional_mechanism(
    T,
    n,
    *,
    p,
    norm,
    epsilon,
    rng=None,
    accountant=None,
    neighbours="replace",
    postprocess="eigen",
    label="functional mechanism",
):
    """Release T once with K-norm noise, then post-process it into scaled Gram blocks.

    Parameters
    ----------
    T : ndarray of shape (d,)
        The statistic of :class:`RegressionLayout` (replace-one order) for data in
        [-1, 1], as from :func:`knorm.models.sufficient_statistics`.
    n : int
        Number of records.
    p : int
        Number of features.
    norm : {'l1', 'l2', 'linf', 'kt', 'cut'}
        The noise's norm ('auto' resolved by the caller, see :func:`auto_norm`).
    epsilon : float
        Privacy budget.
    rng : None, int, SeedSequence or Generator
        Source of the noise.
    accountant : PrivacyAccountant, optional
        Charged epsilon before the noise is drawn.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under add/remove the released vector is (n, T') with undoubled squares.
    postprocess : {'eigen', 'pinv'}, default 'eigen'
        Eigenvalue floor or the paper's pseudo-inverse.
    label : str, default "functional mechanism"
        Label of the release.

    Returns
    -------
    FunctionalRelease
        The release of T + V (eps-DP) and the post-processed scaled Gram blocks,
        from which :meth:`FunctionalRelease.coefficients` solves the regression.

    Notes
    -----
    Paper Section 5.1: the noise has density proportional to exp(-eps ||V||_K / Delta_K)
    with Delta_K certified by the sensitivity space; everything after the one release
    uses only public quantities (n under replace-one, the noise law), so it is
    post-processing (paper Proposition "Postprocessing").

    References
    ----------
    Paper Section 5.1 (the statistic, K_T and Eq. DPEstimate); errata item 5.

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.models import sufficient_statistics
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10_000, 1))
    >>> y = 0.5 * X[:, 0] + 0.1 * rng.standard_normal(10_000)
    >>> stats = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1))
    >>> fm = functional_mechanism(stats.T, stats.n_samples, p=1, norm="kt", epsilon=1.0, rng=0)
    >>> fm.release.epsilon, fm.release.ball_name, fm.release.sensitivity.value
    (1.0, 'K_T(p=1)', 1.0)
    >>> coef, intercept = fm.coefficients(([-1.0], [1.0]), (-1.0, 1.0))
    >>> coef.round(2)
    array([0.5])
    """
    check_norm(norm, p, neighbours, _OWNER)
    layout = RegressionLayout(p, neighbours)
    T = np.asarray(T, dtype=float)
    if neighbours == "add_remove":  # (n, T') with undoubled squares: every entry has sensitivity 1
        T = np.concatenate([[n], T])
        T[layout.sq] *= 0.5
    ball, sens = _certified(norm, p, neighbours)
    release = KNormMechanism(ball, sens, epsilon).release(T, rng=rng, accountant=accountant, label=label)
    n_public = n if neighbours == "replace" else None
    A, b = layout.gram_blocks(release.value, n=n_public)
    tau, n_floored = 0.0, 0
    if postprocess == "eigen":
        tau = _unit_floor(norm, p, neighbours) * release.noise_scale  # 0 in the noise-free limit
        A, n_floored = _floor_eigenvalues(A, tau)
    n_samples = float(n) if neighbours == "replace" else float(release.value[layout.count])
    return FunctionalRelease(release, A, b, tau, n_floored, n_samples, postprocess)


def _floor_eigenvalues(A, tau):
    """(A with its eigenvalues raised to at least tau, how many were raised)."""
    lam, U = np.linalg.eigh(A)
    low = int(np.count_nonzero(lam < tau))
    return ((U * np.maximum(lam, tau)) @ U.T if low else A), low


def solve_coefficients(A, b, bounds_X, bounds_y, *, fit_intercept=True, pinv=False):
    """Return (coef, intercept) in original units from the scaled Gram blocks A, b.

    Parameters
    ----------
    A : ndarray of shape (p + 1, p + 1)
        Scaled Gram block of (1, x').
    b : ndarray of shape (p + 1,)
        Cross products of (1, x') with y'.
    bounds_X : pair of arrays
        Declared (lower, upper) of the features.
    bounds_y : pair of floats
        Declared (lower, upper) of the response.
    fit_intercept : bool, default True
        Fit an intercept.
    pinv : bool, default False
        Use the pseudo-inverse (the paper's Eq. DPEstimate) instead of a solve.

    Returns
    -------
    coef : ndarray of shape (p,)
        The coefficients in the original units.
    intercept : float
        The intercept in the original units (0.0 without one).

    Notes
    -----
    z' = (1, x', y') and z = (1, x, y) = L z' with x = (x' - c) / a, so the
    original-unit blocks are X1'X1 = L1 A L1' and X1'y = L1 (A e0 (-c_y) + b) / a_y.
    With an intercept the problem is an affine reparametrisation: solving in the
    scaled units and mapping back, beta = L1^{-T} (beta' - c_y e0) / a_y, is the
    same and better conditioned. Without one the original-unit blocks are solved.
    """
    lo, hi = (np.asarray(v, dtype=float) for v in bounds_X)
    lo_y, hi_y = (float(np.ravel(v)[0]) for v in bounds_y)
    a, c = 2.0 / (hi - lo), -(hi + lo) / (hi - lo)
    a_y, c_y = 2.0 / (hi_y - lo_y), -(hi_y + lo_y) / (hi_y - lo_y)
    p = len(a)
    solve = _pinv_solve if pinv else _solve
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


def _pinv_solve(M, v):
    return np.linalg.pinv(M) @ v


def _solve(M, v):
    # A singular block (a constant or duplicated feature, and no noise to regularise it in the
    # noise-free limit) gets the minimum-norm solution, as the paper's pseudo-inverse would.
    try:
        return np.linalg.solve(M, v)
    except np.linalg.LinAlgError:
        return _pinv_solve(M, v)
