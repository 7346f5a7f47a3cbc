"""Private sums, counts and means, each through the exact hull of its sensitivity space.

Every function takes the data (numpy, pandas or Dask), declared ``bounds`` (never read from
the data), ``epsilon``, ``accountant=``, ``rng=`` and ``neighbours=``, and returns a
:class:`~knorm.mechanisms.Release`: the released statistic, or a post-processing of it
(a mean from a sum) whose ``parent`` is the raw release, with intervals from the public
noise law (:meth:`~knorm.mechanisms.Release.conf_int`) and the gain over Laplace in
epsilon terms (``gain``).

Each public function checks its inputs once (:func:`~knorm.stats._core.ingest`) and hands
them to the private release below, which trusts them: the data is read once more, block
by block, when the sums are made (:class:`knorm._exact.RecordSums`), with no copy of it.
"""

from __future__ import annotations

import builtins
import functools

import numpy as np

from knorm._docs import fill_doc
from knorm._exact import Records, RecordSums
from knorm._ingest import as_columns, is_dask, n_records, row_blocks
from knorm.geometry import LinearImage
from knorm.mechanisms.ellipsoid import HullPoints
from knorm.mechanisms.gaussian_shapes import box_sum_shape, count_shape, sum_shape
from knorm.sensitivity import SensitivitySpace, count_space, sum_space
from knorm.stats._core import Request, check_neighbours, ingest, publish, total
from knorm.stats._linear import ScaledSupport, check_l0_bound, count_sum_ball, linear_space, sum_ball
from knorm.stats._population import MomentsModel, ProportionModel, attach, refused
from knorm.stats._transforms import MeanFromStandardised, MeanFromSums

__all__ = ["count", "mean", "sum"]


@fill_doc
def sum(
    x, bounds, *, epsilon=None, rho=None, l0_bound=None, neighbours="replace", accountant=None, rng=None, label=None
):
    """Release the sum of each column of ``x``, clipped to declared bounds.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, p)
        The data: numpy, pandas or Dask.
    bounds : pair (lower, upper)
        The declared domain of each column (scalars or arrays of length p).
    %(pure_epsilon)s
    %(rho)s
    l0_bound : int, optional
        At most this many non-zero entries per record (Joseph & Yu's sum): the bounds must
        then be symmetric, [-b, b], and the exact ball is their sum ball.
    %(release_options)s

    Returns
    -------
    Release
        The noisy sums, released with the exact hull of the sensitivity space: the box of
        the column widths under replace-one neighbours (paper Theorem "Optimal K-mech"), the
        hull of the box and its mirror under add/remove (exact up to 10 columns; beyond, the
        symmetric box of max(|lo|, |hi|), which contains S_T and is the hull when the
        bounds are symmetric). One column under replace-one neighbours (n public, no
        ``l0_bound``): n c + w sum u, post-processed from (sum u, sum u^2), u = (x - c) / w,
        released with the mean's focus (:func:`mean`), whose ``conf_int(kind='population')``
        covers the population total n mu.

    Notes
    -----
    Values outside the bounds are clipped (counted, and the curator warned above 5%).
    The sensitivity space has a closed-form support function (h(c) = sum_j |c_j| (hi_j -
    lo_j) under replace-one neighbours), so nothing enumerates the 2^p corners of the box:
    any number of columns works. For one column under replace-one neighbours the box is
    the interval [-(hi - lo), hi - lo], whose K-norm mechanism is Laplace noise of scale
    (hi - lo) / epsilon: the mean's focus gives the sum exactly that noise, with the second
    moment at no extra epsilon (:func:`mean`, Notes).

    Examples
    --------
    >>> import numpy as np
    >>> release = sum(np.arange(10.0), (0, 10), epsilon=1.0, rng=0)
    >>> release.names, release.parent.ball_name, round(release.gain, 3)
    (('sum x1',), 'l1 of standardised (x, x^2)', 1.0)
    >>> sum(np.ones((10, 2)), (0, 10), epsilon=1.0, rng=0).ball_name
    'box hull'
    """
    request = Request.checked("knorm.stats.sum", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    neighbours = check_neighbours(neighbours, request.owner)
    X, lo, hi, outside = ingest(x, bounds, request.owner)
    if l0_bound is not None:
        l0_bound = check_l0_bound(l0_bound, X.shape[1], request.owner)
        _check_l0_data(X, lo, hi, l0_bound, request.owner)
    if neighbours == "replace" and X.shape[1] == 1 and l0_bound is None and request.rho is None:
        return _with_moments(X, lo, hi, outside, request, total=True, names=("sum x1",))
    release = _release_sum(X, lo, hi, outside, neighbours, l0_bound, request.labelled("sum"))
    return attach(release, refused(_no_variance("sum", neighbours, request.rho)))


def _no_variance(what, neighbours, rho=None):
    """Why a sum or a mean released without its second moment has no population interval (public words)."""
    if rho is not None:
        return (
            f"under rho knorm.stats.{what} releases the sums alone (the mean's focus is a K-norm ball for a pure "
            "epsilon release), so no variance is released to estimate the sampling error from. "
            "knorm.stats.var(x, bounds, rho=...) releases (sum x, sum x^2) jointly: its conf_int(kind='population') "
            "covers the population mean; or release with epsilon."
        )
    if neighbours == "add_remove":
        return (
            f"under add/remove neighbours knorm.stats.{what} releases the count and the sums only, so no variance "
            "is released to estimate the sampling error from (and n itself is private). knorm.stats.var(x, "
            "bounds, neighbours='add_remove') releases (n, sum x, sum x^2) jointly: its conf_int(kind='population') "
            "covers the population mean; or release under replace-one neighbours (n public)."
        )
    return (
        f"the population interval of a {what} needs the column's variance, which knorm.stats.{what} releases "
        "jointly (with the mean's focus) for one column without l0_bound only. Release each column on its own, or "
        "use knorm.stats.mean_and_covariance."
    )


def _with_moments(X, lo, hi, outside, request, *, total, names):
    """The mean (or the sum) of one column with n public, from (sum u, sum u^2) released with the mean's focus.

    The pair is released through the unit l1 ball of the standardised moments
    (:func:`knorm.stats.moments` with norm='mean'): the mean's noise is exactly that of the
    Laplace mechanism of the mean alone at the full epsilon (its Notes), on a lattice with
    a rounding slack of at most 0.1% of Delta (the box hull of the sum alone had 1%), and the
    second moment comes with it at no extra epsilon. The second moment gives the sampling
    variance of the population interval (:class:`~knorm.stats._population.MomentsModel`).
    """
    from knorm.stats.moments import _mean_focus  # moments imports this module

    what = "sum" if total else "mean"
    raw, (n, c, w) = _mean_focus(X, lo, hi, outside, request.labelled(f"{what}: moments"))
    release = raw.postprocess(MeanFromStandardised(n, c, w, total=total), label=request.label or what, names=names)
    return attach(release, MomentsModel((what,), float(lo[0]), float(hi[0]), n, centre=c, width=w))


def _check_l0_data(X, lo, hi, l0_bound, owner):
    """Refuse bounds that are not symmetric, and records with more than ``l0_bound`` non-zero entries."""
    if not np.allclose(lo, -hi):
        raise ValueError(
            f"The 'bounds' parameter of {owner} must be symmetric, [-b, b], with l0_bound (a record's zero entries "
            f"are its 'absent' ones). Got lower={lo.tolist()}, upper={hi.tolist()} instead."
        )
    # Clipping to [-b, b] keeps zeros zero and non-zeros non-zero: the raw data is checked.
    if not _rows_within(X, l0_bound, lambda b: b != 0):
        # The ball is certified only for records with <= k non-zeros: refuse, never release.
        raise ValueError(
            f"The 'x' parameter of {owner} must have at most l0_bound = {l0_bound} non-zero entries per record "
            "(the declared rule). Got records with more instead."
        )


def _release_sum(X, lo, hi, outside, neighbours, l0_bound, request):
    """The release of :func:`sum` for inputs checked at the door (``outside``: values to clip)."""
    value = RecordSums((Records(X, lo, hi, clip=outside > 0), np.maximum(np.abs(lo), np.abs(hi)), True))
    names = tuple(f"sum x{j + 1}" for j in range(X.shape[1]))
    if l0_bound is not None:
        space, ball = _l0_sum_space(tuple(hi.tolist()), l0_bound, neighbours)
        candidates, key = {"sum ball": ball}, ("sum ball", tuple(hi.tolist()), l0_bound, neighbours)
        shapes = functools.partial(_shapes, sum_shape, len(hi), l0_bound, neighbours, radius=hi.copy())
    else:
        space, _ = linear_space(lo, hi, neighbours)
        ball = sum_ball(lo, hi, neighbours)
        space.register_exact(
            ball, 1.0, "the hull of S_T (box differences)" if neighbours == "replace" else "contains S_T"
        )
        # the hull, or the symmetric box: inside Delta_inf B_inf, so linf never beats it
        candidates, key = {ball.name: ball}, ("sum", tuple(lo.tolist()), tuple(hi.tolist()), neighbours)
        shapes = functools.partial(_shapes, box_sum_shape, lo.copy(), hi.copy(), neighbours)
    # Under rho: the spherical Gaussian, and the closed-form shape of the sum (Joseph & Yu's elliptic Gaussian)
    return publish(value, candidates, space, request, names=names, key=key, shapes=shapes)


def _shapes(build, *args, **kwargs):
    """(build(*args, **kwargs),): one closed-form Gaussian shape, built lazily (under rho only)."""
    return (build(*args, **kwargs),)


@fill_doc
def count(x, *, epsilon=None, rho=None, l0_bound=None, neighbours="add_remove", accountant=None, rng=None, label=None):
    """Release counts: the number of ones in each column of a 0/1 array.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, d)
        0/1 (or boolean) indicators: each record adds 1 to the counts where it has a 1. To
        count the records themselves under add/remove neighbours, pass ``np.ones(n)``.
    %(pure_epsilon)s
    %(rho)s
    l0_bound : int, optional
        The largest number of counts one record adds to (Joseph & Yu's count); by default d.
        A record with more ones is an error, whatever the data (the rule is declared).
    neighbours : {'add_remove', 'replace'}, default 'add_remove'
        The neighbouring relation (the number of records is public under replace-one).
    %(charge_options)s

    Returns
    -------
    Release
        The noisy counts, int64, with exact integer noise on Z^d (never continuous): the exact
        count ball of Joseph & Yu (2023) as a rational polytope sampled by exact rejection (for
        d = 1, the discrete Laplace: the geometric mechanism); where that polytope is too large
        or accepts too rarely, the first lattice-capable ball in the volume order (l_inf or l1),
        and ``sampler`` states the switch and its cost in epsilon. An epsilon with
        epsilon / Delta below 2^-46 is refused; above 64 the rate is rounded down to 64.
        Under rho: the exact discrete Gaussian on Z^d, or Joseph & Yu's elliptic Gaussian
        (:func:`~knorm.mechanisms.gaussian_shapes.count_shape`, continuous) rounded to
        integers afterwards (post-processing; the ``parent`` is the continuous release),
        whichever has the least total variance; ``sampler`` says which.

    Examples
    --------
    >>> import numpy as np
    >>> release = count(np.ones(100), epsilon=1.0, rng=0)
    >>> release.names, release.sensitivity.value
    (('count 1',), 1.0)
    """
    request = Request.checked("knorm.stats.count", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    owner = request.owner
    neighbours = check_neighbours(neighbours, owner)
    X = as_columns(x, owner, finite=False)  # 0/1 indicators are finite: one check covers both
    d = X.shape[1]
    l0_bound = d if l0_bound is None else check_l0_bound(l0_bound, d, owner)
    space = _count_space(d, l0_bound, neighbours)
    if is_dask(X):
        indicators = _all(((X == 0) | (X == 1)).all())
        within = indicators and _all((X.sum(axis=1) <= space.hull.l0_bound).all())
        counts = total(X)
    else:
        indicators, within, counts = _indicator_counts(X, space.hull.l0_bound)
    if not indicators:
        raise ValueError(f"The 'x' parameter of {owner} must hold 0/1 indicators. Got other values instead.")
    if not within:
        raise ValueError(
            f"The 'x' parameter of {owner} must have at most l0_bound = {space.hull.l0_bound} ones per record (the "
            f"declared rule). Got records with more instead."
        )
    names, key = tuple(f"count {j + 1}" for j in range(d)), ("count", d, l0_bound, neighbours)
    request = request.labelled("count")
    shapes = functools.partial(_shapes, count_shape, d, l0_bound, neighbours)
    release = publish(
        counts, {"count ball": space.hull}, space, request, names=names, key=key, counts=True, shapes=shapes
    )
    if neighbours == "replace":  # each count is Binomial(n, pi_j), n public
        return attach(release, ProportionModel(n_records(X)))
    return attach(
        release,
        refused(
            "under add/remove neighbours the number of records n is private, and a proportion (the binomial law "
            "of a count) needs it: release the count with neighbours='replace' (n public)."
        ),
    )


@fill_doc
def mean(x, bounds, *, epsilon=None, rho=None, neighbours="replace", accountant=None, rng=None, label=None):
    """Release the mean of each column of ``x``, clipped to declared bounds.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, p)
        The data: numpy, pandas or Dask.
    bounds : pair (lower, upper)
        The declared domain of each column.
    %(pure_epsilon)s
    %(rho)s
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under replace-one neighbours n is public and the sums are released; under
        add/remove n is private, so the count is released jointly with the sums.
    %(charge_options)s

    Returns
    -------
    Release
        The means: a post-processing of the released sums (``parent``). Its intervals push
        the public noise law through the division (exact under replace-one neighbours). For
        one column under replace-one neighbours the parent is (sum u, sum u^2), u = (x - c) /
        w, released with the mean's focus (Notes), and ``conf_int(kind='population')`` covers
        the population mean, counting the sampling error with the variance from that same
        release, and ``test`` tests it.

    Notes
    -----
    **One column, replace-one neighbours.** With c the midpoint of the bounds and w their
    width, (sum u, sum u^2) of u = (x - c) / w in [-1/2, 1/2] is released through the unit l1
    ball (``moments(..., norm='mean')``; its certified sensitivity is 1, the proof in
    :func:`var`, Notes): independent Laplace noise of scale 1 / epsilon on each coordinate, so
    the mean c + w sum u / n has exactly the noise of the Laplace mechanism of the mean alone
    at the full epsilon (the box hull of the sum alone is that interval too), on a lattice
    whose rounding slack is at most 0.1% of Delta (the sum alone took 1%). The second moment
    comes with it at no extra epsilon: it gives the sample variance that
    ``conf_int(kind='population')`` needs (:class:`knorm.stats._population.MomentsModel`).
    Measured on Beta(2, 5) data on [0, 10], 3,000 releases each, the median |error| of the
    mean times n eps / (hi - lo) was 0.706, 0.701 and 0.702 at (n, eps) = (400, 1),
    (10^5, 0.02) and (1000, 10), against 0.719, 0.717 and 0.722 for the sum alone (Laplace:
    ln 2 = 0.693).

    **Several columns** (replace-one neighbours): the sums through the box hull, divided by
    the public n; no population interval (each column on its own has one).

    **Add/remove neighbours**: the statistic is (n, sum x): S_T = +-{(1, x) : x in the box},
    whose hull is exactly the image of the cube [-1, 1]^(p+1) under (t, s) -> (t, c t + a s),
    with c = (hi + lo) / 2 and a = (hi - lo) / 2 (its section at count t is t c + [-a, a]), in
    every dimension. The mean is sum / max(noisy n, 1). No second moment is released, so
    the population interval is refused (:func:`var` under add/remove releases (n, sum x,
    sum x^2) and has one).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(0, 10, 10_000)
    >>> release = mean(x, (0, 10), epsilon=1.0, rng=1)
    >>> round(float(release.value[0]), 2), release.parent.names
    (4.99, ('sum u', 'sum u^2'))
    >>> release.conf_int(0.05, kind="population").kind
    'population'
    """
    request = Request.checked("knorm.stats.mean", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    neighbours = check_neighbours(neighbours, request.owner)
    X, lo, hi, outside = ingest(x, bounds, request.owner)
    names = tuple(f"mean x{j + 1}" for j in range(X.shape[1]))
    if neighbours == "replace" and X.shape[1] == 1 and request.rho is None:
        return _with_moments(X, lo, hi, outside, request, total=False, names=names)
    if neighbours == "replace":
        raw = _release_sum(X, lo, hi, outside, neighbours, None, request.labelled("mean: sum"))
        release = raw.postprocess(MeanFromSums(n=n_records(X)), label=request.label or "mean", names=names)
        return attach(release, refused(_no_variance("mean", neighbours, request.rho)))
    mag = np.maximum(np.abs(lo), np.abs(hi))
    value = RecordSums(RecordSums.exact(n_records(X)), (Records(X, lo, hi, clip=outside > 0), mag, True))
    space, space_names = linear_space(lo, hi, neighbours, with_count=True)
    ball = count_sum_ball(lo, hi)
    space.register_exact(ball, 1.0, "the hull of S_T = +-(1, box): L [-1, 1]^(p+1), with (1, hi) on its boundary")
    key = ("mean", tuple(lo.tolist()), tuple(hi.tolist()), neighbours)
    # the exact hull: nothing else can beat it (under rho: the min-trace shape on the corners of +-(1, box))
    hull = _count_sum_corners(lo, hi) if len(lo) <= _MAX_CORNER_COLUMNS else None
    raw = publish(
        value, {ball.name: ball}, space, request.labelled("mean: count and sums"), names=space_names, key=key, hull=hull
    )
    release = raw.postprocess(MeanFromSums(), label=request.label or "mean", names=names)
    return attach(release, refused(_no_variance("mean", neighbours, request.rho)))


#: Under rho, the mean's (n, sum x) gets a fitted min-trace shape up to this many columns (2^p corners).
_MAX_CORNER_COLUMNS = 8


def _count_sum_corners(lo, hi):
    """Certified points for +-(1, x), x in the box: the 2^p corners (1, c), exact in binary64.

    S_T = +-{(1, x)} lies in the hull of +-{(1, c) : c a corner}, since (1, x) is affine in
    x and the box is the hull of its corners.
    """
    corners = np.array(np.meshgrid(*zip(lo, hi), indexing="ij")).reshape(len(lo), -1).T
    records = np.column_stack([np.ones(len(corners)), corners])
    return HullPoints(records, "add_remove", "the corners (1, c) of the box, exact")


@functools.lru_cache(maxsize=32)
def _l0_sum_space(hi, l0_bound, neighbours):
    """(S_T, its hull) of the sum of records with at most ``l0_bound`` non-zeros in [-hi, hi]: public inputs only.

    Records x / b lie in [-1, 1]^p with <= k non-zeros: S_T = diag(b) S_sum, hull diag(b) K_sum
    (Joseph & Yu 2023). Kept per public key: nothing mutates them after this.
    """
    hi = np.asarray(hi)
    space0 = sum_space(len(hi), l0_bound, neighbours=neighbours)
    ball = LinearImage(space0.hull, hi, name=f"sum ball (k={l0_bound})")
    space = SensitivitySpace.from_support(
        len(hi), ScaledSupport(space0, hi), exact=True, hull=ball, neighbours=neighbours
    )
    space.register_exact(ball, 1.0, "linear image of the sum ball of Joseph & Yu (2023), the hull of S_T")
    return space, ball


@functools.lru_cache(maxsize=32)
def _count_space(d, l0_bound, neighbours):
    """The count space of Joseph & Yu (2023), kept per public key (nothing mutates it)."""
    return count_space(d, l0_bound, neighbours=neighbours)


def _indicator_counts(X, bound):
    """(all entries 0 or 1, every row with at most ``bound`` ones, the column sums) of a numpy array, in one pass.

    In cache-sized row blocks: every entry is 0 or 1 exactly when every non-zero entry
    (NaN and inf included) equals 1. Sums of 0/1 values below 2^53 are exact in binary64.
    """
    counts = np.zeros(X.shape[1])
    indicators, within = True, True
    for b in row_blocks(X):
        rows = b.sum(axis=1)
        indicators = indicators and np.count_nonzero(b == 1) == np.count_nonzero(b)
        within = within and bool(rows.max() <= bound)
        counts += b.sum(axis=0)
    return indicators, within, counts


def _rows_within(X, bound, nonzero):
    """Whether every record has at most ``bound`` entries with ``nonzero(block)`` true (numpy, blocked; or Dask)."""
    if is_dask(X):
        return _all((nonzero(X).sum(axis=1) <= bound).all())
    return all(bool((nonzero(b).sum(axis=1) <= bound).all()) for b in row_blocks(X))


def _all(flag):
    """A numpy or Dask boolean scalar as a bool."""
    return bool(flag.compute() if is_dask(flag) else flag)


_ = builtins  # ``sum`` is shadowed in this module on purpose (numpy's naming); builtins.sum stays reachable
