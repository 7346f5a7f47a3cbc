"""The functional mechanism under rho-zCDP: the regression statistic released with Gaussian noise.

The statistic T of :mod:`knorm.models.functional` (paper Section 5.1; with
``statistic='gram'`` completed by sum 2 y'^2) is released once through
:class:`~knorm.mechanisms.GaussianMechanism`, with noise N(0, Sigma) for a diagonal Sigma
whose zCDP guarantee rests on a certified bound on sup over S_T of u' Sigma^{-1} u
(:func:`weighted_sensitivity`). Two shapes:

* 'spherical': Sigma = sigma^2 I, sigma from the certified l2 sensitivity of T
  (:func:`l2_sensitivity`: p + 2 for p >= 4 under replace-one neighbours, exact for even p,
  against the 2 sqrt(d) of the per-coordinate bound). Exact on a lattice (the discrete
  Gaussian of Canonne, Kamath & Steinke 2020) by default.
* 'split': a diagonal Sigma that gives the response block (sum y', sum x' y') less noise
  than the design block, the Gaussian counterpart of the K-norm ``norm='split'``. It is the
  spherical mechanism applied to C T, C = diag(c_j) public; C T is rounded to the lattice in
  integer arithmetic (:class:`ScaledStatistic`), so it is exact too.

Everything after the release (the eigenvalue floor, the solve, the bootstrap intervals) is
post-processing (paper Proposition "Postprocessing").
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize

from knorm._docs import fill_doc
from knorm._exact import ExactSums, lattice_round
from knorm._validation import check_positive, check_probability
from knorm.mechanisms import GaussianMechanism
from knorm.models.functional import (
    FunctionalFit,
    _exact_statistic,
    _float_statistic,
    _layout,
    check_norm,
    check_statistic,
    postprocess_release,
)
from knorm.models.sufficient import ExactStatistic
from knorm.noise.gaussian import GaussianNoise
from knorm.sensitivity.certificate import Sensitivity

__all__ = [
    "GAUSSIAN_SHAPES",
    "ScaledStatistic",
    "gaussian_functional_mechanism",
    "l2_sensitivity",
    "shape_scales",
    "weighted_sensitivity",
]

_OWNER = "gaussian_functional_mechanism"
#: The noise shapes under rho: one sigma for every coordinate, or the response block favoured.
GAUSSIAN_SHAPES = ("spherical", "split")
# The public focus of shape='split': the weight of a design coordinate's (and of sum y'^2's)
# noise variance in the criterion, against 1 for a response coordinate (sum y', sum x' y').
# Measured in benchmarks/bench_zcdp_regression.py (Notes of gaussian_functional_mechanism).
_FOCUS_DESIGN, _FOCUS_YY = 0.1, 0.1
# Public Monte Carlo of the eigenvalue floor (as in knorm.models.functional): seed and draws.
_FLOOR_SEED, _FLOOR_DRAWS = 20_240_601, 1000


def _fr(x):
    return x if isinstance(x, Fraction) else Fraction(float(x))


def _sqrt_up(value):
    """A float >= sqrt(value) for a non-negative Fraction, checked exactly."""
    root = math.sqrt(float(value))
    while Fraction(root) ** 2 < value:
        root = math.nextafter(root, math.inf)
    return root


def _replace_bound(p, s0, sx, sy, tx, ty):
    """The exact rational max over the box's vertex classes of the bound G of :func:`weighted_sensitivity`."""
    cx = max(Fraction(0), 4 * tx - sx * sx / 2)
    cy = max(Fraction(0), 4 * ty - sy * sy / 2)
    best = Fraction(0)
    for a in range(p + 1):
        for b in range(p + 1):
            mismatched = min(a + b, 2 * p - a - b)
            for zy in (0, 1):
                for wy in (0, 1):
                    A = s0 + sx * a + sy * zy
                    B = s0 + sx * b + sy * wy
                    g = (A * A + B * B) / 2 + cx * mismatched + cy * (zy != wy)
                    best = max(best, g)
    return best


def _replace_witness(p, s0, sx, sy):
    """An attained value of ||u||_W^2 over S_T: records z = 1 and z' = 1 with some coordinates set to -1."""
    best = Fraction(0)
    for flipped in range(p + 1):
        for y_flipped in (0, 1):
            pairs = s0 * sx * flipped + s0 * sy * y_flipped + sx * sx * flipped * (p - flipped)
            pairs += sx * sy * ((p - flipped) if y_flipped else flipped)
            best = max(best, 4 * pairs)
    return best


def _coordinate_weights(layout, s0, sx, sy, tx, ty):
    """The weight w_j of each released coordinate, as Fractions, for the product-form weights."""
    w = [Fraction(0)] * layout.dim
    for j in layout.lin:
        w[j] = s0 * sx
    for j in layout.cross:
        w[j] = sx * sx
    for j in layout.sq:
        w[j] = tx
    w[layout.y] = s0 * sy
    for j in layout.xy:
        w[j] = sx * sy
    if layout.yy is not None:
        w[layout.yy] = ty
    if layout.count is not None:
        w[layout.count] = s0 * s0
    return w


def weighted_sensitivity(p, weights=None, *, neighbours="replace", statistic="gram"):
    """Return a certified bound on sup over S_T of (sum_j w_j u_j^2)^(1/2) for the regression statistic.

    Parameters
    ----------
    p : int
        Number of features.
    weights : tuple (s0, sx, sy, tx, ty) of positive floats, optional
        The product-form weights (see Notes); default all 1, the l2 sensitivity. Under
        add/remove neighbours any positive weights are allowed: a sequence of length
        ``RegressionLayout(p, 'add_remove', ...).dim`` (one per coordinate) or the tuple.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation (the layouts of :class:`~knorm.sensitivity.RegressionLayout`).
    statistic : {'paper', 'gram'}, default 'gram'
        The paper's T, or T completed by sum 2 y'^2.

    Returns
    -------
    Sensitivity
        The bound (a float rounded up from an exact rational), of kind 'exact' when an
        attained point reaches it, else 'bound' with the attained value as ``lower``.

    Notes
    -----
    Records are scaled to z = (x', y') in [-1, 1]^q, q = p + 1, and t(z) holds z_i, the
    products z_i z_k (i < k) and the doubled squares 2 z_i^2 (no 2 y'^2 for the paper's
    statistic). Under replace-one neighbours S_T = {t(z) - t(w)} (paper Section 5.1).

    *Weights.* Put a = (1, z), b = (1, w) in R^(q+1) and s = (s0, sx, ..., sx, sy) one weight
    per entry of a. A pair coordinate a_i a_k (i < k: z_i with the 1, or a product) has
    weight s_i s_k; a doubled square 2 z_i^2 has weight t_i (tx for the features, ty for y,
    0 when absent). With D = diag(s)^(1/2), a~ = D a, b~ = D b:

        sum_{i<k} s_i s_k (a_i a_k - b_i b_k)^2
            = (||a~ a~' - b~ b~'||_F^2 - sum_i s_i^2 (a_i^2 - b_i^2)^2) / 2
            = (A^2 + B^2) / 2 - (a~'b~)^2 - sum_{i >= 1} s_i^2 (zeta_i - omega_i)^2 / 2,

    with zeta_i = z_i^2, omega_i = w_i^2, A = ||a~||^2 = s0 + sum_i s_i zeta_i and B likewise
    (||x x' - y y'||_F^2 = ||x||^4 + ||y||^4 - 2 (x'y)^2). The squares add
    sum_i 4 t_i (zeta_i - omega_i)^2. Dropping -(a~'b~)^2 <= 0 gives, for u = t(z) - t(w),

        ||u||_W^2 <= G(zeta, omega) = (A^2 + B^2) / 2 + sum_i c_i (zeta_i - omega_i)^2,
        c_i = max(0, 4 t_i - s_i^2 / 2).

    G is convex on [0, 1]^(2q) (A and B are affine, c_i >= 0), so its maximum is at a
    vertex: zeta, omega in {0, 1}^q. At a vertex G depends on alpha and beta, the numbers of
    features with zeta_i = 1 and omega_i = 1, on the two values of y, and on the number of
    features where they differ, at most min(alpha + beta, 2p - alpha - beta). The bound is
    the maximum over these (p + 1)^2 4 cases, computed exactly in rationals. With every
    weight 1 it is max(N^2, (N^2 + 7N - 6) / 2), N = p + 2, that is N^2 for p >= 4; and
    t(1) - t(b) for b = 1 with floor(N/2) entries of a set to -1 attains
    4 floor(N/2) ceil(N/2) (the products of a flipped and an unflipped entry change by 2),
    N^2 when N is even: the l2 sensitivity is p + 2 exactly for even p >= 4.

    *Add/remove neighbours.* The released vector is (n, T') with undoubled squares and
    S_T = {t(z)} union {-t(z)}: every coordinate is a monomial of degree <= 2 in z (or the
    count 1), so |t_j(z)| <= 1 with equality for all j at z = 1, and the bound is
    (sum_j w_j)^(1/2), exact.

    References
    ----------
    Paper Section 5.1 (the statistic and its sensitivity space) and Remark on
    add/delete-DP; errata item 5.

    Examples
    --------
    >>> weighted_sensitivity(5).value, weighted_sensitivity(5).kind  # N = 7: 7 >= sqrt(48), attained
    (7.0, 'bound')
    >>> weighted_sensitivity(4).value, weighted_sensitivity(4).kind  # N = 6, attained
    (6.0, 'exact')
    """
    check_norm(None, p, neighbours, "weighted_sensitivity")
    check_statistic(statistic, "weighted_sensitivity")
    layout = _layout(p, neighbours, statistic)
    if neighbours == "add_remove":
        if weights is None:
            w = [Fraction(1)] * layout.dim
        elif len(weights) == layout.dim:
            w = [_fr(v) for v in weights]
        else:
            w = _coordinate_weights(layout, *(_fr(v) for v in weights))
        if any(not v > 0 for v in w):
            raise ValueError("The weights of weighted_sensitivity must be positive.")
        total = sum(w, Fraction(0))
        value = _sqrt_up(total)
        return Sensitivity(value, "exact", "sum of the weights: every coordinate is +-1 at z = 1 (add/remove)")
    s0, sx, sy, tx, ty = (Fraction(1),) * 5 if weights is None else (_fr(v) for v in weights)
    if statistic == "paper":
        ty = Fraction(0)
    if not (s0 > 0 and sx > 0 and sy > 0 and tx > 0 and ty >= 0):
        raise ValueError("The weights of weighted_sensitivity must be positive.")
    bound = _replace_bound(p, s0, sx, sy, tx, ty)
    lower = _replace_witness(p, s0, sx, sy)
    value = _sqrt_up(bound)
    method = "convex bound G over the vertices of the squares' box (Notes of weighted_sensitivity)"
    if lower == bound:
        return Sensitivity(value, "exact", method + ", attained")
    return Sensitivity(value, "bound", method, math.sqrt(float(lower)))


@functools.lru_cache(maxsize=32)
def l2_sensitivity(p, neighbours="replace", statistic="gram"):
    """Return the certified l2 sensitivity of the regression statistic (all weights 1 in :func:`weighted_sensitivity`).

    Parameters
    ----------
    p : int
        Number of features.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.
    statistic : {'paper', 'gram'}, default 'gram'
        The released statistic.

    Returns
    -------
    Sensitivity
        p + 2 for p >= 4 under replace-one neighbours (exact for even p; for odd p the
        attained sqrt((p + 2)^2 - 1) is its ``lower``); sqrt(d) under add/remove.

    Examples
    --------
    >>> l2_sensitivity(12).value, round(l2_sensitivity(1).value ** 2, 9)  # N = 14; max(9, 12) at p = 1
    (14.0, 12.0)
    """
    return weighted_sensitivity(p, None, neighbours=neighbours, statistic=statistic)


def _focus(layout):
    f = np.full(layout.dim, _FOCUS_DESIGN)
    f[layout.y] = 1.0
    f[layout.xy] = 1.0
    if layout.yy is not None:
        f[layout.yy] = _FOCUS_YY
    return f


@functools.lru_cache(maxsize=32)
def shape_scales(p, neighbours="replace", statistic="gram", shape="spherical"):
    """Return the public scales c_j of a shape and the certified l2 sensitivity of C T.

    Parameters
    ----------
    p : int
        Number of features.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation.
    statistic : {'paper', 'gram'}, default 'gram'
        The released statistic.
    shape : {'spherical', 'split'}, default 'spherical'
        All c_j = 1, or the response block favoured (see Notes).

    Returns
    -------
    scales : ndarray of shape (d,)
        The c_j (floats; all 1 for 'spherical').
    sensitivity : Sensitivity
        A certified bound on sup over S_T of ||C u||_2.

    Notes
    -----
    Noise N(0, sigma^2 C^-2) on T is the spherical Gaussian mechanism on C T, rho-zCDP
    when sigma^2 >= Delta^2 / (2 rho) with Delta >= sup ||C u||_2 (Bun & Steinke 2016,
    Proposition 1.6, and post-processing by C^-1). 'split' takes c_j^2 <= w_j with w the
    product-form weights of :func:`weighted_sensitivity` that minimise
    G(w) sum_j f_j / w_j (the focused total variance: f_j = 1 on sum y' and sum x' y',
    0.1 on the design coordinates and on sum y'^2), found by Nelder-Mead from fixed starts;
    c_j is sqrt(w_j) rounded down (checked exactly), so ||C u||^2 <= ||u||_W^2 and the
    bound of :func:`weighted_sensitivity` at w certifies C. Under add/remove neighbours the
    optimum is closed: w_j proportional to sqrt(f_j) (Lagrange; the bound is sum_j w_j).
    Only p, the neighbours and the statistic enter: the shape is public.

    Examples
    --------
    >>> c, sens = shape_scales(5, shape="split")
    >>> bool(c.max() > c.min()), sens.kind
    (True, 'bound')
    """
    check_norm(None, p, neighbours, "shape_scales")
    check_statistic(statistic, "shape_scales")
    if shape not in GAUSSIAN_SHAPES:
        raise ValueError(
            f"The 'shape' parameter of shape_scales must be one of {GAUSSIAN_SHAPES}. Got {shape!r} instead."
        )
    layout = _layout(p, neighbours, statistic)
    if shape == "spherical":
        return np.ones(layout.dim), l2_sensitivity(p, neighbours, statistic)
    f = _focus(layout)
    if neighbours == "add_remove":
        w = np.sqrt(f) / np.sqrt(f).max()
        scales = _scales_below([Fraction(float(v)) for v in w])
        return scales, weighted_sensitivity(
            p, [Fraction(c) ** 2 for c in scales], neighbours=neighbours, statistic=statistic
        )

    def weights(lw):
        sx, sy, tx, ty = np.exp(lw)
        return (1.0, float(sx), float(sy), float(tx), float(ty))

    # The search runs in floats (the bound G vectorised over its cases); only the weights it
    # returns are certified, exactly, by weighted_sensitivity.
    a, b, zy, wy = (v.ravel() for v in np.meshgrid(np.arange(p + 1), np.arange(p + 1), [0, 1], [0, 1]))
    mismatched = np.minimum(a + b, 2 * p - a - b)
    counts = {"lin": len(layout.lin), "cross": len(layout.cross), "sq": len(layout.sq), "xy": len(layout.xy)}
    has_yy = layout.yy is not None

    def criterion(lw):
        _, sx, sy, tx, ty = weights(lw)
        ty = ty if has_yy else 0.0
        cx, cy = max(0.0, 4 * tx - sx * sx / 2), max(0.0, 4 * ty - sy * sy / 2)
        A, B = 1 + sx * a + sy * zy, 1 + sx * b + sy * wy
        g = float(np.max((A * A + B * B) / 2 + cx * mismatched + cy * (zy != wy)))
        design = counts["lin"] / sx + counts["cross"] / (sx * sx) + counts["sq"] / tx
        response = 1 / sy + counts["xy"] / (sx * sy)
        return g * (_FOCUS_DESIGN * design + response + (_FOCUS_YY / ty if has_yy else 0.0))

    starts = [np.zeros(4), np.array([0.0, 1.0, 0.0, 0.0]), np.array([0.0, 2.0, -1.0, 0.0])]
    opts = dict(maxiter=600, xatol=1e-4, fatol=1e-7)
    best = min((minimize(criterion, x0, method="Nelder-Mead", options=opts) for x0 in starts), key=lambda r: r.fun)
    s = weights(best.x)
    scales = _scales_below(_coordinate_weights(layout, *(Fraction(v) for v in s)))  # exact weights
    return scales, weighted_sensitivity(p, s, neighbours=neighbours, statistic=statistic)


def _scales_below(w):
    """c_j = sqrt(w_j) rounded down, so that c_j^2 <= w_j exactly (w_j exact rationals)."""
    out = np.empty(len(w))
    for j, v in enumerate(w):
        c = math.sqrt(float(v))
        while Fraction(c) ** 2 > v:
            c = math.nextafter(c, 0.0)
        out[j] = c
    return out


class ScaledStatistic(ExactSums):
    """C T for an exact regression statistic T and public scales C = diag(c_j), rounded to a lattice exactly.

    Parameters
    ----------
    statistic : ExactStatistic
        T, held exactly (units of 2^-64).
    scales : ndarray of float, shape (d,)
        The c_j; each float is a dyadic rational m_j 2^-e_j, so c_j T_j = (m_j u_j) 2^-(64 + e_j)
        is an integer times a power of two, and its lattice point is computed exactly.
    """

    def __init__(self, statistic, scales):
        self.statistic = statistic
        self.scales = np.asarray(scales, dtype=float)
        self.note = statistic.note + ", scaled by the public diagonal shape exactly"

    def resolve(self):
        """Return C T in binary64 (continuous or non-private releases).

        Returns
        -------
        ndarray of float, shape (d,)
            The exact T rounded once to binary64, times C (one more rounding per coordinate).
        """
        return self.statistic.value * self.scales

    def on_lattice(self, spacing, ball=None):
        """Return (C T rounded to ``spacing`` Z^d in integer arithmetic, 0.0): C T is exact, as T is.

        Parameters
        ----------
        spacing : array_like of shape (d,)
            Positive powers of two.
        ball : NormBall, optional
            Unused (the interface of :class:`~knorm._exact.ExactSums`).

        Returns
        -------
        value : ndarray of float
            The lattice point of C T, ties to even.
        computation_error : float
            0.0.
        """
        units, exponents = [], []
        for u, c in zip(self.statistic.units, self.scales.tolist()):
            num, den = c.as_integer_ratio()  # den is a power of two
            units.append(int(u) * num)
            exponents.append(-self.statistic.SCALE_BITS - (den.bit_length() - 1))
        return lattice_round(units, exponents, spacing, "ScaledStatistic.on_lattice"), 0.0


@functools.lru_cache(maxsize=64)
def _unit_floor(p, neighbours, statistic, shape, level):
    """The ``level``-quantile of ||E||_2 for E the Gram block of N(0, C^-2) noise (public Monte Carlo)."""
    layout = _layout(p, neighbours, statistic)
    scales = shape_scales(p, neighbours, statistic, shape)[0]
    # The public law N(0, C^-2) drawn through its named Monte Carlo door (no data enters).
    V = GaussianNoise(np.diag(1.0 / scales), "unit floor").public_law_sample(_FLOOR_DRAWS, seed=_FLOOR_SEED)
    E = layout.gram_blocks(V, n=0.0)[0]
    return float(np.quantile(np.max(np.abs(np.linalg.eigvalsh(E)), axis=1), level))


@fill_doc
def gaussian_functional_mechanism(
    T,
    n,
    *,
    p,
    rho,
    shape="spherical",
    rng=None,
    accountant=None,
    neighbours="replace",
    postprocess="eigen",
    statistic="gram",
    floor_level=0.5,
    label="functional mechanism (Gaussian)",
    sampler="auto",
):
    """Release T once with Gaussian noise under rho-zCDP, then post-process it into scaled Gram blocks.

    Parameters
    ----------
    T : ExactStatistic or ndarray of shape (d,)
        The statistic, as for :func:`~knorm.models.functional_mechanism` (an ExactStatistic
        is rounded to the lattice in integers; a float array is taken as the caller vouches).
    n : int
        Number of records.
    p : int
        Number of features.
    rho : float
        The zCDP budget of the release, in (0, inf).
    shape : {'spherical', 'split'}, default 'spherical'
        The noise's shape (:func:`shape_scales`).
    %(rng)s
    accountant : PrivacyAccountant, optional
        A rho ledger, charged ``rho`` before the noise is drawn; a pure epsilon ledger
        refuses (rho-zCDP implies no pure epsilon-DP guarantee).
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under add/remove the released vector is (n, T') with undoubled squares.
    postprocess : {'eigen', 'pinv'}, default 'eigen'
        Eigenvalue floor or the paper's pseudo-inverse.
    statistic : {'paper', 'gram'}, default 'gram'
        The paper's T, or T completed by sum 2 y'^2.
    floor_level : float, default 0.5
        The quantile of the noise's spectral norm used as the floor of ``postprocess='eigen'``.
    label : str, default "functional mechanism (Gaussian)"
        Label of the release.
    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        'auto' and 'lattice': the exact discrete Gaussian on a lattice
        (:class:`~knorm.mechanisms.GaussianMechanism`); 'continuous': binary64 noise, with
        its caveat.

    Returns
    -------
    FunctionalFit
        The release (``rho`` set, ``epsilon`` None) and the post-processed blocks; its
        ``noise_sd`` holds the per-coordinate standard deviation of the noise on T, the
        public law of the bootstrap.

    Notes
    -----
    *Privacy.* The release is GaussianMechanism(Delta, rho) applied to C T
    (:func:`shape_scales`; C = I for 'spherical'), Delta a certified bound on
    sup over S_T of ||C u||_2 (:func:`weighted_sensitivity`, proved there). On the lattice
    the mechanism rounds C T to gamma Z^d exactly (:class:`ScaledStatistic`, or the
    ExactStatistic itself) and adds the discrete Gaussian; its guarantee (CKS 2020,
    Theorem 14, with the rounding slack) is in :mod:`knorm.mechanisms.gaussian`. The
    statistic released, C T + Y, is divided by C afterwards: post-processing.

    *Measured* (``benchmarks/bench_zcdp_regression.py``, docs/guide/zcdp.md section
    "Regression under rho"): the certified l2 sensitivity p + 2 (7 at p = 5) against the
    2 sqrt(d) = 10.4 of the per-coordinate bound halves the noise variance; 'split' gains
    on the paper's simulation (a loose response bound) and is within a few percent of
    'spherical' on the housing data. The minimum-trace ellipsoid around the certified
    vertices of S_T (:func:`knorm.mechanisms.ellipsoid.hull_points`, the triangles'
    relaxation) was measured at 1.5-1.9 times the spherical trace for p = 1 to 4 (the
    relaxation's apex (0, -1) of each (z, z^2) triangle is far outside the curve), and the
    ideal ellipsoid of an inner grid only 6-12% below it, so no SDP shape is offered.

    References
    ----------
    M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications,
    Extensions, and Lower Bounds", TCC 2016, Proposition 1.6. C. L. Canonne, G. Kamath and
    T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Theorem 14.
    Paper Section 5.1 and Proposition "Postprocessing".

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.accounting import PrivacyAccountant
    >>> from knorm.models import sufficient_statistics
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(10_000, 1))
    >>> y = 0.5 * X[:, 0] + 0.1 * rng.standard_normal(10_000)
    >>> stats = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-1, 1))
    >>> acc = PrivacyAccountant(total_rho=1.0)
    >>> fm = gaussian_functional_mechanism(stats.exact, stats.n_samples, p=1, rho=0.5, accountant=acc, rng=0)
    >>> fm.release.rho, fm.release.epsilon, acc.spent_rho
    (0.5, None, 0.5)
    >>> fm.coefficients(([-1.0], [1.0]), (-1.0, 1.0))[0].round(2)
    array([0.5])
    """
    check_norm(None, p, neighbours, _OWNER)
    check_statistic(statistic, _OWNER)
    rho = check_positive(rho, "rho", _OWNER)
    if shape not in GAUSSIAN_SHAPES:
        raise ValueError(f"The 'shape' parameter of {_OWNER} must be one of {GAUSSIAN_SHAPES}. Got {shape!r} instead.")
    floor_level = check_probability(floor_level, "floor_level", _OWNER)
    layout = _layout(p, neighbours, statistic)
    exact = _exact_statistic(T, n, layout) if isinstance(T, ExactStatistic) else None
    scales, sens = shape_scales(p, neighbours, statistic, shape)
    spherical = shape == "spherical"
    if exact is not None:
        value = exact if spherical else ScaledStatistic(exact, scales)
    else:
        value = _float_statistic(T, n, layout, p, statistic) * scales
    mechanism = GaussianMechanism(sens, rho, dim=layout.dim, sampler=sampler)
    release = mechanism.release(value, rng=rng, accountant=accountant, label=label, names=tuple(layout.names))
    released = np.asarray(release.value, dtype=float) / scales  # C^-1 (C T + Y): post-processing
    sigma = float(math.sqrt(mechanism.covariance[0, 0])) if release.noise_scale > 0 else 0.0
    noise_sd = sigma / scales
    tau = _unit_floor(p, neighbours, statistic, shape, floor_level) * sigma if postprocess == "eigen" else 0.0
    n_public = n if neighbours == "replace" else None
    A, b, n_floored = postprocess_release(released, layout, n_public, tau)
    n_samples = float(n) if neighbours == "replace" else float(released[layout.count])
    sum_y2 = float(layout.response_sum_of_squares(released)) if layout.yy is not None else None
    return FunctionalFit(
        release,
        A,
        b,
        tau,
        int(n_floored),
        n_samples,
        postprocess,
        f"gaussian ({shape})",
        neighbours,
        statistic,
        None,
        sum_y2,
        noise_sd=noise_sd,
        statistic_value=released,
    )
