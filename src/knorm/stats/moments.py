"""Private moments, variances and standard deviations of one column, released jointly.

(sum x, sum x^2) goes through the exact hull of its sensitivity space (or, with
norm='mean', the l1 ball of the standardised moments); the variance and the standard
deviation are post-processings of that one release (its ``parent``), with intervals from
the public noise law.

Each public function checks its inputs once (:func:`~knorm.stats._core.ingest`) and hands
them to :func:`_release_moments`, which trusts them: the data is read once more, block by
block, when the sums are made (:class:`knorm._exact.RecordSums`), with no copy of it.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from knorm._docs import fill_doc
from knorm._exact import Records, RecordSums
from knorm._ingest import n_records
from knorm._validation import param_error
from knorm.geometry import K2Ball, LinearImage, LpBall
from knorm.sensitivity import QuadraticStatistic, SensitivitySpace
from knorm.stats._core import Request, check_ddof, check_neighbours, ingest, publish, standard_box
from knorm.stats._population import MomentsModel, attach
from knorm.stats._transforms import MomentsFromStandardised, VarianceFromMoments
from knorm.stats.sums import _release_sum

__all__ = ["moments", "std", "var"]


@fill_doc
def moments(
    x,
    bounds,
    *,
    epsilon=None,
    rho=None,
    order=2,
    norm="hull",
    neighbours="replace",
    accountant=None,
    rng=None,
    label=None,
):
    """Release (sum x, sum x^2) of one column jointly, through the exact hull of its sensitivity space.

    Parameters
    ----------
    x : array_like of shape (n,)
        One column of data: numpy, pandas or Dask.
    bounds : pair (lower, upper)
        Its declared domain.
    %(pure_epsilon)s
    %(rho)s
    order : {1, 2}, default 2
        1 releases the sum only (:func:`sum`).
    norm : {'hull', 'mean'}, default 'hull'
        The noise's ball. 'hull': the exact hull, volume-optimal for the pair. 'mean': the l1 ball of the
        standardised moments, which gives sum x the noise of the Laplace mechanism of the
        sum alone at the full epsilon (see :func:`var`); replace-one neighbours only.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under add/remove the count n is released too: (n, sum x, sum x^2).
    %(charge_options)s

    Returns
    -------
    Release
        The noisy moments. With norm='mean' they are an affine post-processing of the
        released (sum u, sum u^2), u = (x - c) / w (its ``parent``; see :func:`var`).

    Notes
    -----
    Under replace-one neighbours S_T = {(x - x', x^2 - x'^2)}. With z = (2x - lo - hi) /
    (hi - lo) in [-1, 1], (x, x^2) = M (z, 2 z^2) + const, so S_T is M times the sensitivity
    space of the paper's Example 2.1 and its hull is M K_2 (K_2 with the factor 2 of errata
    item 3): exact, the optimal K-norm mechanism (paper Theorem "Optimal K-mech"). Under
    add/remove, S_T = +-{(1, x, x^2)}: its hull is built from exact support planes (a
    certified outer polytope, 3-dimensional, so exact volumes).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(4, 2, 10_000).clip(0, 10)
    >>> release = moments(x, (0, 10), epsilon=1.0, rng=1)
    >>> release.ball_name, round(release.gain, 2)  # Laplace needs 5.39x the epsilon
    ('hull of (x, x^2)', 5.39)
    """
    owner = "knorm.stats.moments"
    if isinstance(order, bool) or order not in (1, 2):
        raise ValueError(f"The 'order' parameter of {owner} must be 1 or 2. Got {order!r} instead.")
    request = Request.checked(owner, epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    neighbours = check_neighbours(neighbours, owner)
    norm = _check_norm(norm, neighbours, owner, request)
    X, lo, hi, outside = ingest(x, bounds, owner, one_column=order == 2)
    if order == 1:
        return _release_sum(X, lo, hi, outside, neighbours, None, request.labelled("sum"))
    raw, scales = _release_moments(X, lo, hi, outside, neighbours, norm, request)
    if scales is None:
        return raw
    return raw.postprocess(
        MomentsFromStandardised(*scales), label=request.label or "moments", names=("sum x", "sum x^2")
    )


def _check_norm(norm, neighbours, owner, request):
    """Return ``norm`` if it is 'hull' or 'mean' ('mean' only under replace-one neighbours and epsilon)."""
    if norm not in ("hull", "mean"):
        raise param_error("norm", owner, "'hull' or 'mean'", norm)
    if norm == "mean" and request.rho is not None:
        raise ValueError(
            f"The 'norm' parameter of {owner} must be 'hull' with rho: norm='mean' picks a K-norm ball (the l1 ball "
            "of the standardised moments) for a pure epsilon release, and under rho the Gaussian shape of least "
            "total variance is chosen instead. Got norm='mean' with rho instead: pass epsilon, or norm='hull'."
        )
    if norm == "mean" and neighbours == "add_remove":
        raise ValueError(
            f"The 'norm' parameter of {owner} must be 'hull' under add/remove neighbours: norm='mean' rests on "
            "replace-one neighbours, where the two records that move the sum most (x = hi, x' = lo) leave "
            "sum (x - m)^2 unchanged. Under add/remove the record that moves the sum most also moves "
            "sum (x - m)^2 most, so no ball gives the mean its one-dimensional optimum with the variance for "
            "free. Got norm='mean' with neighbours='add_remove' instead: release the mean (knorm.stats.mean) and "
            "the pair separately, splitting epsilon."
        )
    return norm


def _release_moments(X, lo, hi, outside, neighbours, norm, request):
    """(the raw release of :func:`moments` of one checked column, (n, c, w) of its standardisation or None)."""
    if norm == "mean":
        return _mean_focus(X, lo, hi, outside, request)
    count_coord = neighbours == "add_remove"
    A = np.zeros((2 + count_coord, 1, 1))
    A[-1, 0, 0] = 1.0
    b = np.zeros((2 + count_coord, 1))
    b[int(count_coord), 0] = 1.0  # an int: b[False] would select nothing
    const = np.zeros(2 + count_coord)
    const[0] = float(count_coord)
    names = (["n"] if count_coord else []) + ["sum x", "sum x^2"]
    t = QuadraticStatistic(A, b, lo, hi, const=const, names=names)
    mag = np.maximum(np.abs(lo), np.abs(hi))
    rows = Records(X, lo, hi, fn=_with_square, width=2, clip=outside > 0)
    value = RecordSums(
        *([RecordSums.exact(n_records(X))] if count_coord else []), (rows, [mag[0], mag[0] ** 2], [True, False])
    )
    if neighbours == "replace":
        M = _moment_map(lo[0], hi[0])
        if not np.linalg.cond(M) < 1e12:  # public: the bounds alone (LinearImage's own rule, named here)
            rule = (
                "a pair (lower, upper) whose map z -> (x, x^2) from [-1, 1] is well conditioned (condition number below 1e12: "
                "roughly a half-width between 1e-6 and 1e6 and a centre within 1e6 half-widths of 0)"
            )
            raise param_error("bounds", request.owner, rule, (float(lo[0]), float(hi[0])))
        hull = LinearImage(K2Ball(), M, name="hull of (x, x^2)")
        space = SensitivitySpace.additive(t, None, hull=hull)
        space.register_exact(hull, 1.0, "M K_2: the hull of S_T (paper Example 2.1, errata item 3)")
        candidates = {"hull of (x, x^2)": hull, "linf": LpBall(2, math.inf)}
    else:
        space = SensitivitySpace.additive(t, None, neighbours="add_remove")
        outer = _outer_moment_hull(float(lo[0]), float(hi[0]))
        candidates = {outer.name: outer, "linf": LpBall(3, math.inf)}
    key = ("moments", float(lo[0]), float(hi[0]), neighbours)
    # under rho: the spherical Gaussian, and the min-trace shape fitted on the certified vertices of S_T
    raw = publish(value, candidates, space, request.labelled("moments"), names=tuple(names), key=key, hull=True)
    return raw, None


def _with_square(block):
    """(x, x^2) of each record of a one-column block (x^2 rounded once)."""
    if not isinstance(block, np.ndarray):  # a Dask array
        return np.concatenate([block, block * block], axis=1)
    out = np.empty((2, len(block)))  # contiguous columns (see _Standardised)
    out[0] = block[:, 0]
    np.multiply(out[0], out[0], out=out[1])
    return out.T


class _Standardised:
    """(u, u^2) of each record, u = (x - c) / w (picklable, for Dask workers)."""

    def __init__(self, c, w):
        self.c, self.w = c, w

    def __call__(self, block):
        if not isinstance(block, np.ndarray):  # a Dask array: the same roundings, lazily
            u = (block - self.c) / self.w
            return np.concatenate([u, u * u], axis=1)
        # Both columns in one column-major array (contiguous columns: 2-3x faster than three temporaries
        # or strided writes on 1e6 records), with the same roundings.
        out = np.empty((2, len(block)))
        np.subtract(block[:, 0], self.c, out=out[0])
        np.divide(out[0], self.w, out=out[0])
        np.multiply(out[0], out[0], out=out[1])
        return out.T


def _moment_map(lo, hi):
    """M with (x, x^2) = M (z, 2 z^2) + const for z = (2x - lo - hi) / (hi - lo) in [-1, 1]."""
    a, c = (hi - lo) / 2.0, (hi + lo) / 2.0
    return np.array([[a, 0.0], [2.0 * a * c, a * a / 2.0]])


#: The lattice's rounding slack for norm='mean': at most 0.1% of Delta, so that the mean's noise is
#: that of the Laplace mechanism at epsilon up to that factor (the default 1% would cost 1% of epsilon).
_MEAN_FOCUS_ROUNDING = 2.0**-10


@functools.lru_cache(maxsize=1)
def _mean_focus_space():
    """The sensitivity space of t(u) = (u, u^2), u in [-1/2, 1/2], with the certified unit l1 ball.

    Built once: it depends on nothing (public), and nothing mutates it after this.
    """
    t = QuadraticStatistic(
        np.array([[[0.0]], [[1.0]]]), np.array([[1.0], [0.0]]), [-0.5], [0.5], names=["sum u", "sum u^2"]
    )
    space = SensitivitySpace.additive(t, None)
    ball = LpBall(2, 1)
    space.register_exact(ball, 1.0, _MEAN_FOCUS_PROOF)
    return space, ball


_MEAN_FOCUS_PROOF = (
    "replace-one neighbours u, v in [-1/2, 1/2], d = u - v: (d, d (u + v)) with |u + v| <= 1 - |d|, so "
    "|d| + |d| (1 - |d|) <= 1, with equality at d = +-1 (u, v at the two ends)"
)


def _mean_focus(X, lo, hi, outside, request):
    """The release of norm='mean': (sum u, sum u^2) of u = (x - c) / w through the unit l1 ball.

    Proof (the ball is certified, with Delta = 1 exactly). :func:`~knorm.stats._core.standard_box`
    gives doubles c and w = 2a with [c - w/2, c + w/2] containing [lo, hi] in exact arithmetic,
    so u = (x - c) / w lies in [-1/2, 1/2] for every record. Replace-one neighbours x, x'
    (standardised u, v) change the statistic t(u) = (u, u^2) by (d, d (u + v)) with
    d = u - v; for fixed d >= 0, v ranges over [-1/2, 1/2 - d], so u + v = 2v + d lies in
    [-(1 - d), 1 - d] (and symmetrically for d < 0). Hence ||Delta t||_1 <= |d| + |d| (1 - |d|)
    = 1 - (1 - |d|)^2 <= 1, with equality only at |d| = 1 (x, x' at the two bounds), where
    the change is (+-1, 0). The K-norm mechanism of the paper's Section 2 (density
    proportional to exp(-eps ||v||_K / Delta)) with K = B_1 and Delta = 1 is independent
    Laplace noise of scale 1/eps on sum u and on sum u^2; on the mean c + w sum u / n it is
    Laplace of scale w / (n eps), the Laplace mechanism of the mean alone at the full eps
    (its sum's sensitivity is hi - lo = w). The centre must be the midpoint: with any other
    centre c' the pair at the two bounds moves sum (x - c')^2 by (hi - lo) (hi + lo - 2 c'),
    not 0, and the l1 norm of that change exceeds 1.

    In (sum x, sum x^2) this ball is the linear image L B_1, L = [[w, 0], [2 c w, w^2]]:
    a parallelogram, released here in the coordinates where it is the unit l1 ball, so the
    exact lattice release draws discrete Laplace noise (an affine map back is post-processing).

    Per record, u = fl(fl(x - c) / w) and fl(u u) carry at most 2 and 5 roundings (relative
    error <= 5.01 2^-53); the magnitudes handed to :class:`RecordSums` are 8x the bounds
    1/2 and 1/4, so its per-record allowance 2^-53 x magnitude covers them.
    """
    c, a = standard_box(lo, hi)
    c, w = float(c[0]), 2.0 * float(a[0])  # w = 2a: an exact doubling
    rows = Records(X, lo, hi, fn=_Standardised(c, w), width=2, clip=outside > 0)
    value = RecordSums((rows, [4.0, 2.0], False))
    space, ball = _mean_focus_space()
    raw = publish(
        value,
        {"l1 of standardised (x, x^2)": ball},
        space,
        request.labelled(f"moments of u = (x - {c:g}) / {w:g}"),
        names=("sum u", "sum u^2"),
        key=("moments", "mean focus"),
        rounding_share=_MEAN_FOCUS_ROUNDING,
    )
    return raw, (float(n_records(X)), c, w)


@functools.lru_cache(maxsize=32)
def _outer_moment_hull(lo, hi):
    """The certified outer hull of +-{(1, x, x^2) : x in [lo, hi]}, built once per declared domain.

    It depends only on the public bounds; a build takes a few hundred milliseconds.
    """
    t = QuadraticStatistic(
        np.array([[[0.0]], [[0.0]], [[1.0]]]),
        np.array([[0.0], [1.0], [0.0]]),
        [lo],
        [hi],
        const=[1.0, 0.0, 0.0],
        names=["n", "sum x", "sum x^2"],
    )
    space = SensitivitySpace.additive(t, None, neighbours="add_remove")
    outer = space.outer_hull(directions=_sphere(3, 2000), rng=0).outer
    outer.name = "outer hull of +-(1, x, x^2)"
    return outer


def _sphere(m, n):
    """Deterministic, well-spread unit vectors of R^m (a Fibonacci sphere for m = 3)."""
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = np.pi * (1 + 5**0.5) * i
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)


@fill_doc
def var(
    x,
    bounds,
    *,
    epsilon=None,
    rho=None,
    ddof=0,
    norm="hull",
    neighbours="replace",
    accountant=None,
    rng=None,
    label=None,
):
    """Release the mean and variance of one column, from its jointly released moments.

    Parameters
    ----------
    x : array_like of shape (n,)
        One column of data.
    bounds : pair (lower, upper)
        Its declared domain.
    %(pure_epsilon)s
    %(rho)s
    ddof : int, default 0
        Delta degrees of freedom, as in :func:`numpy.var`.
    norm : {'hull', 'mean'}, default 'hull'
        Which ball releases the moments. 'hull': the exact hull of the sensitivity space,
        volume-optimal for the pair (best for the variance). 'mean': the l1 ball of the
        standardised moments, which gives the mean exactly the noise of the Laplace
        mechanism of the mean alone at the full epsilon, the variance coming with the
        same budget (Notes). Replace-one neighbours only.
    %(release_options)s

    Returns
    -------
    Release
        (mean, variance), post-processed from :func:`moments` (its ``parent``). The variance
        is clipped at 0 (a noisy S2 - S1^2 / n can be negative; clipping biases it upwards
        near 0). Intervals push the public noise law through the post-processing.

    Notes
    -----
    The variance is max(S2 - S1^2 / n, 0) / (n - ddof) of the released moments (S1, S2)
    (under add/remove, n is the released count, floored at ddof + 1; ddof is then not
    compared with the private n). ``conf_int`` takes the equal-tailed quantiles of this map
    applied to R - V* over draws V* of the public noise law: a plug-in, since the map is
    not linear. Simulated coverage of ``conf_int(0.1)`` is nominal away from 0 (0.90 for
    the mean and the variance over 2,000 releases, n = 2,000, eps = 0.5), but at a
    variance of 0 about half the draws are clipped, the lower end is 0 and the interval
    over-covers (0.988 over 1,000 releases of a constant column, n = 50, eps = 0.5).

    **norm='mean'.** With r = hi - lo, m = (lo + hi) / 2 and u = (x - m) / r in
    [-1/2, 1/2], replace-one neighbours move (sum u, sum u^2) by (d, d (u + v)), whose l1
    norm is at most |d| (2 - |d|) <= 1, with equality only at d = +-1 (the two records at
    the two bounds, which leave sum (x - m)^2 unchanged). So the unit l1 ball is certified
    with Delta = 1, and its K-norm mechanism is independent Laplace noise: scale
    r / (n eps) on the mean, exactly the Laplace mechanism of the mean alone at the full
    eps (and no K-norm mechanism does better for the mean: any certified ball contains
    (+-r, 0), its sections are concave, and the tent of the l1 ball minimises the variance
    of the first coordinate), while the variance gets (z_2 + 2 (m - mean) z_1 / r) r^2 /
    (n eps) to first order, z_1, z_2 standard Laplace. Against Laplace mechanisms at
    eps / 2 each, the mean then needs 0.5x their epsilon for the same error, and the
    variance median|z_2 + k z_1| / (2 ln 2) x, k = 2 (m - mean) / r: 0.50 at k = 0, 0.53
    at k = 0.2, 0.63 at k = 0.5, 0.83 at k = 1 (closed form of the law of a sum of two
    Laplaces). Against diffprivlib (``tools.mean`` and ``tools.var`` at eps / 2; its
    variance noise has scale 1.78x that of Laplace, from LaplaceBoundedDomain on
    [0, inf)), measured on N(4, 2^2) clipped to [0, 10], n = 2,000, eps = 1, medians of
    4,000 releases: 0.50 for the mean and 0.30 for the variance, against 0.69 and 0.13 for
    the default hull (its marginal on sum x has median |V_1| = 0.965 r / eps, against
    ln 2 r / eps). The hull stays the default: it is volume-optimal for the pair (paper
    Theorem "Entropy Ordering"); 'mean' is the other end of the trade-off. The lattice
    rounding takes at most 0.1% of Delta here. ``gain`` is 1: in the standardised
    coordinates this is the Laplace mechanism. Under add/remove neighbours the record that
    moves the sum most also moves sum (x - m)^2 most, so there is no such ball (norm='mean'
    is refused).

    References
    ----------
    Awan & Slavkovic (2021), Section 2 (K-norm mechanism), Section 3 (sensitivity,
    Theorem "Entropy Ordering"), Example 2.1 (the hull, errata item 3).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(4, 2, 10_000).clip(0, 10)
    >>> release = var(x, (0, 10), epsilon=1.0, rng=1)
    >>> release.names, bool(abs(release.value[1] - x.var()) < 0.1)
    (('mean', 'variance'), True)
    >>> release = var(x, (0, 10), epsilon=1.0, norm="mean", rng=1)
    >>> release.parent.ball_name, bool(abs(release.value[0] - x.mean()) < 0.01)
    ('l1 of standardised (x, x^2)', True)
    """
    request = Request.checked("knorm.stats.var", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    return _release_spread(x, bounds, ddof, norm, neighbours, request, std=False)


def _release_spread(x, bounds, ddof, norm, neighbours, request, *, std):
    """:func:`var` (or with ``std``, :func:`std`) after epsilon: the rest of the door, then the release."""
    owner = request.owner
    neighbours = check_neighbours(neighbours, owner)
    _check_norm(norm, neighbours, owner, request)
    X, lo, hi, outside = ingest(x, bounds, owner, one_column=True)
    n = n_records(X) if neighbours == "replace" else None
    check_ddof(ddof, n, owner)
    name = "std" if std else "variance"
    raw, scales = _release_moments(X, lo, hi, outside, neighbours, norm, request.labelled(f"{name}: moments"))
    _, c, w = (None, 0.0, 1.0) if scales is None else scales  # centre 0, width 1: the moments of x itself
    transform = VarianceFromMoments(n=n, ddof=ddof, std=std, centre=c, width=w)
    release = raw.postprocess(transform, label=request.label or name, names=("mean", name))
    model = MomentsModel(("mean", name), float(lo[0]), float(hi[0]), None if n is None else float(n), centre=c, width=w)
    return attach(release, model)


@fill_doc
def std(
    x,
    bounds,
    *,
    epsilon=None,
    rho=None,
    ddof=0,
    norm="hull",
    neighbours="replace",
    accountant=None,
    rng=None,
    label=None,
):
    """Release the mean and standard deviation of one column (see :func:`var`).

    Parameters
    ----------
    x : array_like of shape (n,)
        One column of data.
    bounds : pair (lower, upper)
        Its declared domain.
    %(pure_epsilon)s
    %(rho)s
    ddof : int, default 0
        Delta degrees of freedom.
    norm : {'hull', 'mean'}, default 'hull'
        'hull': the volume-optimal hull; 'mean': the mean at the accuracy of the Laplace
        mechanism of the mean alone (see :func:`var`).
    %(release_options)s

    Returns
    -------
    Release
        (mean, standard deviation), post-processed from :func:`moments`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(4, 2, 10_000).clip(0, 10)
    >>> std(x, (0, 10), epsilon=1.0, rng=1).names
    ('mean', 'std')
    """
    request = Request.checked("knorm.stats.std", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    return _release_spread(x, bounds, ddof, norm, neighbours, request, std=True)
