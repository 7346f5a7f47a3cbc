"""The K-norm functional mechanism for linear regression (paper Section 5.1).

The statistic T (the unique non-constant entries of X'X and X'Y for scaled data in
[-1, 1], :class:`~knorm.sensitivity.RegressionLayout`; with ``statistic='gram'`` also
sum Y^2, completing the Gram matrix of (1, X, Y)) is released once through
:meth:`knorm.mechanisms.KNormMechanism.release`; the Gram blocks and the coefficients are
post-processing of that release (paper Proposition "Postprocessing").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from knorm._docs import fill_doc
from knorm._validation import check_positive, check_probability
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, Release, choose_mechanism
from knorm.models.sufficient import ExactStatistic
from knorm.noise import KNormNoise
from knorm.sensitivity import RegressionLayout, kt_ball, linear_regression_space, regression_cut_ball
from knorm.sensitivity.certificate import as_certified
from knorm.sensitivity.regression import regression_split_ball

__all__ = [
    "FunctionalFit",
    "STATISTICS",
    "auto_norm",
    "functional_mechanism",
    "noise_floor",
    "postprocess_release",
    "solve_coefficients",
]

_OWNER = "functional_mechanism"
_LP = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
NORMS = (*_LP, "kt", "cut", "split")
REPLACE_ONLY = ("kt", "cut", "split")
#: 'paper': the Section 5.1 statistic (no sum y^2); 'gram': the whole Gram matrix of (1, x, y).
STATISTICS = ("paper", "gram")
# 'auto' thresholds on p, from measured costs (Notes of auto_norm).
_P_CUT, _P_KT = 8, 15
# Largest dimension where l1 / l2 sensitivities are computed by SensitivitySpace
# (exact sign-vector enumeration for l1); beyond, the per-coordinate bound.
_LP_SPACE_MAX_DIM = 14
# Public Monte Carlo of the eigenvalue floor: fixed seed, draws, default quantile level.
_FLOOR_SEED, _FLOOR_DRAWS, _FLOOR_LEVEL = 20_240_601, 1000, 0.9


def _layout(p, neighbours, statistic):
    return RegressionLayout(p, neighbours, response_square=statistic == "gram")


@functools.lru_cache(maxsize=32)
def _space(p, neighbours, statistic="paper"):
    return linear_regression_space(p, neighbours=neighbours, response_square=statistic == "gram")


def _ball(name, p, neighbours, statistic="paper", xy_share=None):
    if name in _LP:
        return LpBall(_layout(p, neighbours, statistic).dim, _LP[name])
    square = statistic == "gram"
    if name == "split":
        return regression_split_ball(p, xy_share, response_square=square)
    return kt_ball(p, response_square=square) if name == "kt" else regression_cut_ball(p, response_square=square)[0]


@functools.lru_cache(maxsize=64)
def _certified(name, p, neighbours, statistic="paper", xy_share=None):
    """(ball, certified Sensitivity) of the norm ``name``; cached per arguments."""
    space, ball = _space(p, neighbours, statistic), _ball(name, p, neighbours, statistic, xy_share)
    if name in ("l1", "l2"):
        # The per-coordinate bound is cheap and within a few % of the block bound of
        # SensitivitySpace; that one is computed only where it is cheap or exact.
        sens = space.naive_sensitivity(_LP[name])
        if space.dim <= _LP_SPACE_MAX_DIM:
            sens = min(sens, space.sensitivity(ball), key=lambda s: s.value)
    elif name == "split":
        # Proof in regression_split_ball (Notes); split_sensitivity recomputes it from the blocks.
        space.register_exact(ball, 1.0, "sum over blocks of weight x block sensitivity 1, attained at once")
        sens = space.sensitivity(ball)
    else:
        sens = space.sensitivity(ball)
    return ball, as_certified(sens, _OWNER)


def _witness_lower_bound(p, neighbours, q, statistic="paper"):
    """An attained value of ||u||_q over S_T: records with all x equal, from {-1, 0, 1}."""
    t = _layout(p, neighbours, statistic).statistic()
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


def check_statistic(statistic, owner):
    """Check a statistic name; return it.

    Parameters
    ----------
    statistic : str
        'paper' or 'gram'.
    owner : str
        The entry point, for the error message.

    Returns
    -------
    str
        ``statistic``, unchanged.
    """
    if statistic not in STATISTICS:
        raise ValueError(
            f"The 'statistic' parameter of {owner} must be one of {STATISTICS}. Got {statistic!r} instead."
        )
    return statistic


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
@fill_doc
def auto_norm(p, neighbours="replace", statistic="paper"):
    """Return the norm that ``norm='auto'`` uses for p features.

    Parameters
    ----------
    p : int
        Number of features.
    %(neighbours)s
    statistic : {'paper', 'gram'}, default 'paper'
        The released statistic: the paper's, or the one completed by sum y^2.

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
    is cached per (p, neighbours, statistic); volumes of kt and cut are Monte Carlo
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
    check_statistic(statistic, "auto_norm")
    key = (neighbours, statistic)
    candidates = {"linf": _ball("linf", p, *key)}
    if neighbours == "replace" and p <= _P_KT:
        candidates["kt"] = _ball("kt", p, *key)
    if neighbours == "replace" and p <= _P_CUT:
        candidates["cut"] = _ball("cut", p, *key)
    space = _space(p, *key)
    linf = _log_volume_lp(space.dim, math.inf, _certified("linf", p, *key)[1].value)
    for name in ("l1", "l2"):
        if _log_volume_lp(space.dim, _LP[name], _witness_lower_bound(p, neighbours, _LP[name], statistic)) <= linf:
            candidates[name] = _ball(name, p, *key)
    # l1 is always a candidate (with the cheap certified bound of _certified) so that the
    # gain against Laplace is not computed from a costly l1 sensitivity of the whole space.
    candidates.setdefault("l1", _ball("l1", p, *key))
    # No timing: the candidates were admitted by their measured cost above, so the choice is deterministic.
    return choose_mechanism(space, 1.0, candidates, time_budget=None, rng=_FLOOR_SEED, owner="auto_norm").name


@functools.lru_cache(maxsize=64)
def _unit_floor(name, p, neighbours, statistic="paper", xy_share=None, level=_FLOOR_LEVEL):
    """Monte Carlo of the public noise law: the ``level``-quantile of ||E||_2 at unit scale."""
    ball = _certified(name, p, neighbours, statistic, xy_share)[0]
    V = KNormNoise(ball, 1.0).public_law_sample(_FLOOR_DRAWS, seed=_FLOOR_SEED)
    # n is not noisy: 0 in its place leaves E the noise of the Gram block.
    E = _layout(p, neighbours, statistic).gram_blocks(V, n=0.0)[0]
    spec = np.max(np.abs(np.linalg.eigvalsh(E)), axis=1)
    return float(np.quantile(spec, level))


@fill_doc
def noise_floor(norm, p, epsilon, *, neighbours="replace", statistic="paper", xy_share=None, level=_FLOOR_LEVEL):
    """Return the eigenvalue floor tau of ``postprocess='eigen'``: public, from the noise law only.

    Parameters
    ----------
    norm : {'l1', 'l2', 'linf', 'kt', 'cut'}
        The noise's norm.
    p : int
        Number of features.
    epsilon : float
        Privacy budget of the release.
    %(neighbours)s
    statistic : {'paper', 'gram'}, default 'paper'
        The released statistic (the response square adds a coordinate to the noise).
    xy_share : float, optional
        The response block's share of epsilon, for ``norm='split'`` (default
        :func:`~knorm.sensitivity.auto_xy_share`).
    level : float, default 0.9
        The quantile (0.9 for :func:`functional_mechanism` and the paper's
        experiments; :class:`~knorm.models.LinearRegression` uses the median, 0.5).

    Returns
    -------
    float
        The ``level``-quantile of the spectral norm of the noise E added to the scaled
        Gram block of (1, x'), for noise scale Delta / epsilon (Monte Carlo with
        a fixed seed over 1000 draws of the public law, cached at unit scale; tau is
        linear in the scale).

    Examples
    --------
    >>> round(noise_floor("linf", 1, 1.0) / noise_floor("linf", 1, 2.0), 6)
    2.0
    """
    check_norm(norm, p, neighbours, "noise_floor")
    check_statistic(statistic, "noise_floor")
    epsilon = check_positive(epsilon, "epsilon", "noise_floor")
    level = check_probability(level, "level", "noise_floor")
    sens = _certified(norm, p, neighbours, statistic, xy_share)[1].value
    return _unit_floor(norm, p, neighbours, statistic, xy_share, level) * sens / float(epsilon)


@dataclass(frozen=True)
class FunctionalFit:
    """The functional mechanism's fit: its one Release and the post-processing of it (not a second release).

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
    norm : str, default ""
        The name of the noise's norm ('l1', 'l2', 'linf', 'kt' or 'cut').
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation (under add/remove n is the first released coordinate).
    statistic : {'paper', 'gram'}, default 'paper'
        The released statistic: the paper's, or the one completed by sum y'^2.
    xy_share : float or None, default None
        The response block's share of epsilon under ``norm='split'`` (None: the default).
    sum_y2 : float or None, default None
        The released (noisy) sum of y'^2 of the scaled response, with
        ``statistic='gram'`` (post-processing of the release); None for the paper's.
    noise_sd : ndarray of shape (d,) or None, default None
        Under rho (:func:`~knorm.models.functional_gaussian.gaussian_functional_mechanism`):
        the standard deviation of the Gaussian noise on each coordinate of T, its public
        law (None for K-norm noise, whose law is the ball's).
    statistic_value : ndarray of shape (d,) or None, default None
        The released statistic in :class:`RegressionLayout` order when it differs from
        ``release.value`` (a shaped Gaussian release is of C T; this is C^-1 of it).
    """

    release: Release
    gram: np.ndarray
    cross: np.ndarray
    floor: float
    n_floored: int
    n_samples: float
    postprocess: str
    norm: str = ""
    neighbours: str = "replace"
    statistic: str = "paper"
    xy_share: float | None = None
    sum_y2: float | None = None
    noise_sd: np.ndarray | None = None
    statistic_value: np.ndarray | None = None

    @property
    def released(self):
        """The released noisy statistic in :class:`RegressionLayout` order (post-processing of ``release``)."""
        return self.release.value if self.statistic_value is None else self.statistic_value

    @property
    def layout(self):
        """The :class:`~knorm.sensitivity.RegressionLayout` of the released vector."""
        return _layout(self.gram.shape[0] - 1, self.neighbours, self.statistic)

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


@fill_doc
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
    statistic="paper",
    xy_share=None,
    floor_level=_FLOOR_LEVEL,
    label="functional mechanism",
    sampler="auto",
):
    """Release T once with K-norm noise, then post-process it into scaled Gram blocks.

    Parameters
    ----------
    T : ExactStatistic or ndarray of shape (d,)
        The statistic. Preferably the :class:`~knorm.models.sufficient.ExactStatistic`
        of :func:`knorm.models.sufficient_statistics` (its ``exact``): it holds every
        layout (``neighbours``, ``statistic``) and, on a lattice release, is rounded to
        the lattice in integer arithmetic, so the value released is exactly
        gamma round(T / gamma) of the exact T. A float array is taken as the caller
        vouches for it: the statistic of :class:`RegressionLayout` (replace-one order) for
        data in [-1, 1], as ``sufficient_statistics(...).T`` (the paper's) or
        ``RegressionLayout(p, response_square=True).from_data`` (``statistic='gram'``);
        floating-point error in the caller's computation of it (Casacuberta et al.
        2022) is then not covered by the privacy argument.
    n : int
        Number of records (equal to ``T.n_samples`` for an ExactStatistic).
    p : int
        Number of features.
    norm : {'l1', 'l2', 'linf', 'kt', 'cut'}
        The noise's norm ('auto' resolved by the caller, see :func:`auto_norm`).
    %(epsilon)s
    %(rng)s
    %(accountant)s
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under add/remove the released vector is (n, T') with undoubled squares.
    postprocess : {'eigen', 'pinv'}, default 'eigen'
        Eigenvalue floor or the paper's pseudo-inverse.
    statistic : {'paper', 'gram'}, default 'paper'
        The paper's T, or T completed by sum 2 y'^2 (the whole Gram matrix of
        (1, x', y'), which identifies the residual variance).
    xy_share : float, optional
        With ``norm='split'``: the response block's share of epsilon, in (0, 1)
        (default :func:`~knorm.sensitivity.auto_xy_share`).
    floor_level : float, default 0.9
        The quantile of the noise's spectral norm used as the floor of
        ``postprocess='eigen'`` (:func:`noise_floor`).
    label : str, default "functional mechanism"
        Label of the release.

    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        How the noise is drawn (:class:`~knorm.mechanisms.KNormMechanism`): 'auto' is the
        exact lattice release where the ball allows it.

    Returns
    -------
    FunctionalFit
        The release of T + V (eps-DP) and the post-processed scaled Gram blocks,
        from which :meth:`FunctionalFit.coefficients` solves the regression.

    Notes
    -----
    Paper Section 5.1: the noise has density proportional to exp(-eps ||V||_K / Delta_K)
    with Delta_K certified by the sensitivity space; everything after the one release
    uses only public quantities (n under replace-one, the noise law), so it is
    post-processing (paper Proposition "Postprocessing").

    With an ExactStatistic and a lattice release (not inside
    :func:`knorm.mechanisms.nonprivate`), the mechanism receives
    ``T.on_lattice(gamma)``, which is exactly the rounding R(T) that the lattice proof
    of :mod:`knorm.mechanisms.lattice` assumes; the Release's ``sampler`` says so.
    Continuous and non-private releases receive T rounded once to binary64.

    References
    ----------
    Paper Section 5.1 (the statistic, K_T and Eq. DPEstimate); errata items 3 and 5.
    Casacuberta, Shoemate, Vadhan & Wagaman (2022), "Widespread underestimation of
    sensitivity in differentially private libraries and how to fix it", ACM CCS.

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.models import sufficient_statistics
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10_000, 1))
    >>> y = 0.5 * X[:, 0] + 0.1 * rng.standard_normal(10_000)
    >>> stats = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1))
    >>> fm = functional_mechanism(stats.exact, stats.n_samples, p=1, norm="kt", epsilon=1.0, rng=0)
    >>> fm.release.epsilon, fm.release.ball_name, fm.release.sensitivity.value
    (1.0, 'K_T(p=1)', 1.0)
    >>> "T summed exactly" in fm.release.sampler
    True
    >>> coef, intercept = fm.coefficients(([-1.0], [1.0]), (-1.0, 1.0))
    >>> coef.round(2)
    array([0.5])
    """
    check_norm(norm, p, neighbours, _OWNER)
    check_statistic(statistic, _OWNER)
    layout = _layout(p, neighbours, statistic)
    exact = _exact_statistic(T, n, layout) if isinstance(T, ExactStatistic) else None
    if exact is None:
        T = _float_statistic(T, n, layout, p, statistic)
    if norm != "split":
        xy_share = None
    elif xy_share is not None:
        xy_share = check_probability(xy_share, "xy_share", _OWNER)
    floor_level = check_probability(floor_level, "floor_level", _OWNER)
    ball, sens = _certified(norm, p, neighbours, statistic, xy_share)
    # The mechanism rounds the exact T to its lattice in integers, or once to a double.
    mechanism = KNormMechanism(ball, sens, epsilon, sampler=sampler)
    release = mechanism.release(exact if exact is not None else T, rng=rng, accountant=accountant, label=label)
    tau = 0.0
    if postprocess == "eigen":
        tau = _unit_floor(norm, p, neighbours, statistic, xy_share, floor_level) * release.noise_scale
    n_public = n if neighbours == "replace" else None
    A, b, n_floored = postprocess_release(release.value, layout, n_public, tau)
    n_samples = float(n) if neighbours == "replace" else float(release.value[layout.count])
    sum_y2 = float(layout.response_sum_of_squares(release.value)) if layout.yy is not None else None
    return FunctionalFit(
        release, A, b, tau, int(n_floored), n_samples, postprocess, norm, neighbours, statistic, xy_share, sum_y2
    )


def _exact_statistic(T, n, layout):
    """The ExactStatistic ``T`` in the layout of the release, checked against p and n."""
    if T.layout.p != layout.p:
        raise ValueError(
            f"The 'T' parameter of {_OWNER} must be the statistic of p={layout.p} features. "
            f"Got an ExactStatistic of p={T.layout.p} instead."
        )
    if n != T.n_samples:
        raise ValueError(
            # T's own count is data (private under add/remove neighbours): only the typed n is echoed.
            f"The 'n' parameter of {_OWNER} must equal the number of records of T. Got {n!r}, which does not, instead."
        )
    return T.with_layout(layout)


def _float_statistic(T, n, layout, p, statistic):
    """The caller's float T (replace-one order) as the released vector of ``layout``."""
    T = np.asarray(T, dtype=float)
    expected = layout.dim - (layout.count is not None)
    if T.shape != (expected,):
        raise ValueError(
            f"The 'T' parameter of {_OWNER} must have shape ({expected},) for p={p} and statistic={statistic!r}. "
            f"Got shape {T.shape} instead."
        )
    if layout.count is not None:  # (n, T') with undoubled squares: every entry has sensitivity 1
        T = np.concatenate([[n], T])
        T[layout.sq] *= 0.5
        if layout.yy is not None:
            T[layout.yy] *= 0.5
    return T


def postprocess_release(F, layout, n, tau):
    """Return the scaled Gram blocks of released vectors, eigenvalues floored at ``tau``.

    The post-processing of :func:`functional_mechanism`, vectorised so that a parametric
    bootstrap (:mod:`knorm.models.inference`) can push its replicates through exactly
    the same steps.

    Parameters
    ----------
    F : ndarray of shape (..., dim)
        Released vectors in :class:`RegressionLayout` order.
    layout : RegressionLayout
        Their layout.
    n : float or None
        The public number of records (replace-one), None under add/remove.
    tau : float
        The eigenvalue floor (0 for none: the paper's estimator).

    Returns
    -------
    A : ndarray of shape (..., p + 1, p + 1)
        The scaled Gram block of (1, x'), eigenvalues raised to at least ``tau``.
    b : ndarray of shape (..., p + 1)
        The cross products of (1, x') with y'.
    n_floored : ndarray of int, shape (...)
        How many eigenvalues the floor raised in each.
    """
    A, b = layout.gram_blocks(F, n=n)
    n_floored = np.zeros(A.shape[:-2], dtype=int)
    if tau <= 0:  # the paper's estimator, and the noise-free limit
        return A, b, n_floored
    try:  # cheap test that every eigenvalue exceeds tau, the common case
        np.linalg.cholesky(A - tau * np.eye(A.shape[-1]))
        return A, b, n_floored
    except np.linalg.LinAlgError:
        pass
    shape = A.shape
    A, n_floored = A.reshape(-1, *shape[-2:]), n_floored.reshape(-1)
    idx = np.flatnonzero(np.linalg.eigvalsh(A).min(axis=-1) < tau)
    lam, U = np.linalg.eigh(A[idx])
    low = lam < tau
    floored = (U * np.maximum(lam, tau)[..., None, :]) @ np.swapaxes(U, -1, -2)
    # Keep A itself (not its round trip through eigh) wherever the floor does not bind.
    A[idx] = np.where(low.any(axis=-1)[:, None, None], floored, A[idx])
    n_floored[idx] = np.count_nonzero(low, axis=-1)
    return A.reshape(shape), b, n_floored.reshape(shape[:-2])


def solve_coefficients(A, b, bounds_X, bounds_y, *, fit_intercept=True, pinv=False):
    """Return (coef, intercept) in original units from the scaled Gram blocks A, b.

    Parameters
    ----------
    A : ndarray of shape (..., p + 1, p + 1)
        Scaled Gram block of (1, x'); leading axes are vectorised over.
    b : ndarray of shape (..., p + 1)
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
    coef : ndarray of shape (..., p)
        The coefficients in the original units.
    intercept : float or ndarray of shape (...)
        The intercept in the original units (0.0 without one); a float for one system.

    Notes
    -----
    z' = (1, x', y') and z = (1, x, y) = L z' with x = (x' - c) / a, so the
    original-unit blocks are X1'X1 = L1 A L1' and X1'y = L1 (A e0 (-c_y) + b) / a_y.
    With an intercept the problem is an affine reparametrisation: solving in the
    scaled units and mapping back, beta = L1^{-T} (beta' - c_y e0) / a_y, is the
    same and better conditioned. Without one the original-unit blocks are solved.
    """
    L1, a_y, c_y = _unit_map(bounds_X, bounds_y)
    solve = _pinv_solve if pinv else _solve
    A, b = np.asarray(A, dtype=float), np.asarray(b, dtype=float)
    if fit_intercept:
        beta_s = solve(A, b)
        beta_s[..., 0] -= c_y
        beta = np.linalg.solve(L1.T, beta_s[..., None])[..., 0] / a_y
        intercept = beta[..., 0]
        return beta[..., 1:], (float(intercept) if intercept.ndim == 0 else intercept)
    XtX = L1 @ A @ L1.T
    Xty = ((A[..., :, 0] * -c_y + b) @ L1.T) / a_y
    coef = solve(XtX[..., 1:, 1:], Xty[..., 1:])
    return coef, (0.0 if coef.ndim == 1 else np.zeros(coef.shape[:-1]))


def scaled_coefficients(coef, intercept, bounds_X, bounds_y):
    """Return the scaled-unit coefficients theta' of (1, x') predicting y' (inverse of the map back).

    Parameters
    ----------
    coef : ndarray of shape (..., p)
        Coefficients in the original units.
    intercept : float or ndarray of shape (...)
        Intercept in the original units.
    bounds_X : pair of arrays
        Declared (lower, upper) of the features.
    bounds_y : pair of floats
        Declared (lower, upper) of the response.

    Returns
    -------
    ndarray of shape (..., p + 1)
        The vector theta' with y' = theta'.(1, x') exactly when y = intercept + coef.x.
    """
    L1, a_y, c_y = _unit_map(bounds_X, bounds_y)
    beta = np.concatenate([np.asarray(intercept, dtype=float)[..., None], np.asarray(coef, dtype=float)], axis=-1)
    theta = a_y * beta @ L1
    theta[..., 0] += c_y
    return theta


def _unit_map(bounds_X, bounds_y):
    """(L1, a_y, c_y): (1, x) = L1 (1, x') and y' = a_y y + c_y for the declared bounds."""
    lo, hi = (np.asarray(v, dtype=float) for v in bounds_X)
    lo_y, hi_y = (float(np.ravel(v)[0]) for v in bounds_y)
    a, c = 2.0 / (hi - lo), -(hi + lo) / (hi - lo)
    a_y, c_y = 2.0 / (hi_y - lo_y), -(hi_y + lo_y) / (hi_y - lo_y)
    p = len(a)
    L1 = np.zeros((p + 1, p + 1))
    L1[0, 0] = 1.0
    L1[1:, 0] = -c / a
    L1[np.arange(1, p + 1), np.arange(1, p + 1)] = 1.0 / a
    return L1, a_y, c_y


def _pinv_solve(M, v):
    return (np.linalg.pinv(M) @ v[..., None])[..., 0]


def _solve(M, v):
    # A singular block (a constant or duplicated feature, and no noise to regularise it in the
    # noise-free limit) gets the minimum-norm solution, as the paper's pseudo-inverse would.
    try:
        return np.linalg.solve(M, v[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return _pinv_solve(M, v)
