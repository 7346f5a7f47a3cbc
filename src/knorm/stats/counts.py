"""Private histograms and votes, through the exact balls of Joseph & Yu (2023)."""

from __future__ import annotations

import functools
import math

import numpy as np

from knorm._docs import fill_doc
from knorm._ingest import as_columns, clip_count, is_dask, n_records
from knorm.geometry import LpBall
from knorm.mechanisms.gaussian_shapes import histogram_shape, vote_shape
from knorm.sensitivity import SensitivitySpace, histogram_space, vote_space
from knorm.stats._core import Request, check_neighbours, check_one_column, publish, total
from knorm.stats._population import ProportionModel, attach, refused
from knorm.stats._transforms import Expand

__all__ = ["histogram", "histogramdd", "vote"]


def _check_edges(bins, owner, name="bins"):
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        edges = np.full(1, np.nan)  # not numbers: refused below with the same message
    if edges.ndim != 1 or len(edges) < 3 or not np.all(np.isfinite(edges)) or not np.all(np.diff(edges) > 0):
        raise ValueError(
            f"The {name!r} parameter of {owner} must be at least 3 strictly increasing finite edges (2 or more bins), "
            f"declared from the data's domain. Got {bins!r} instead."
        )
    return edges


def _bin_indices(A, edge_list, owner):
    """The flat cell of every record; values outside the edges go to the edge bins (counted)."""
    lo = np.array([e[0] for e in edge_list])
    hi = np.array([e[-1] for e in edge_list])
    A, _ = clip_count(A, lo, hi, owner)
    A = np.asarray(A.compute() if is_dask(A) else A)
    idx = np.zeros(len(A), dtype=np.int64)
    for j, edges in enumerate(edge_list):
        cell = np.clip(np.searchsorted(edges, A[:, j], side="right") - 1, 0, len(edges) - 2)
        idx = idx * (len(edges) - 1) + cell
    return idx


def _release_cells(A, edge_list, names, neighbours, request):
    """The release of :func:`histogram` and :func:`histogramdd`: the counts of the grid's cells, C order."""
    idx = _bin_indices(A, edge_list, request.owner)
    counts = np.bincount(idx, minlength=int(np.prod([len(e) - 1 for e in edge_list])))
    k = len(counts)
    key, request = ("histogram", k, neighbours), request.labelled("histogram")
    # Integer counts: exact integer noise on Z^m, no rounding, no slack (under add/remove, the geometric mechanism).
    if neighbours == "replace":
        # The counts sum to the public n: release the first k - 1 (the affine span), rebuild the last.
        space = histogram_space(k)
        ball = space.hull
        value = ball.reduce(counts)
        shapes = functools.partial(_one, histogram_shape, k, "replace")
        raw = publish(
            value,
            {"histogram ball": ball},
            space,
            request,
            names=names[:-1],
            key=key,
            counts=True,
            shapes=shapes,
            full=functools.partial(_rebuilt, k - 1),  # built only under rho (a dense (k, k - 1) map)
        )
        release = raw.postprocess(Expand(ball, n_records(A)), label=request.label, names=names)
        return attach(release, ProportionModel(n_records(A)))  # the cells' proportions, n public
    # Add/remove: S_T = {+-e_i}, whose hull is the l1 ball (the cross-polytope), exactly.
    space = SensitivitySpace.from_support(k, _l1_dual, exact=True, hull=LpBall(k, 1), neighbours="add_remove")
    space.register_exact(LpBall(k, 1), 1.0, "S_T = {+-e_i}: the hull is the unit l1 ball")
    release = publish(counts, {}, space, request, names=names, key=key, counts=True)
    return attach(
        release,
        refused(
            "under add/remove neighbours n is private, and the cells' proportions need it: release the histogram with neighbours='replace' (n public)."
        ),
    )


def _one(build, *args):
    """(build(*args),): one closed-form Gaussian shape, built lazily (under rho only)."""
    return (build(*args),)


def _rebuilt(m):
    """The map of noise on m released counts to the m + 1 counts rebuilt (the last is minus their sum)."""
    return np.vstack([np.eye(m), -np.ones((1, m))])


def _l1_dual(c):
    return np.abs(np.atleast_2d(c)).max(axis=1)


@fill_doc
def histogram(x, bins, *, epsilon=None, rho=None, neighbours="replace", accountant=None, rng=None, label=None):
    """Release the counts of one column over declared bins.

    Parameters
    ----------
    x : array_like of shape (n,)
        One column of data: numpy, pandas or Dask.
    bins : array_like of floats
        The bin edges, strictly increasing, declared from the data's domain (never read from
        the data). Values outside them go to the first or last bin (counted, and the curator
        warned above 5%).
    %(pure_epsilon)s
    %(rho)s
    %(release_options)s

    Returns
    -------
    Release
        The noisy counts of every bin: int64, with exact integer noise (never continuous).
        Under rho: the exact discrete Gaussian, or (replace-one, where it halves the total
        variance of the k counts) the shape
        :func:`~knorm.mechanisms.gaussian_shapes.histogram_shape`, continuous, rounded to
        integers afterwards (post-processing).

    Notes
    -----
    Each record adds 1 to one bin. Under replace-one neighbours S_T = {e_i - e_j}: the counts
    sum to the public n, so S_T is flat; the first k - 1 counts are released with their exact
    hull (:class:`~knorm.geometry.HistogramBall`, Joseph & Yu 2023) and the last one is
    n minus their sum. Under add/remove S_T = {+-e_i} and its exact hull is the l1 ball:
    Laplace noise is then optimal, as the volume order confirms (gain 1).

    The counts are integers: they are released on Z^m without rounding, with the exact lattice
    law at spacing 1 (:mod:`knorm.mechanisms.lattice`): under replace-one the histogram ball's
    law (d discrete Laplaces conditioned on a zero sum), under add/remove the discrete Laplace
    (the geometric mechanism). An epsilon with epsilon / Delta below 2^-46 is refused; above
    64 the rate is rounded down to 64 (only more noise: P(noise != 0) < m 3e-28).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(0, 10, 1000)
    >>> release = histogram(x, np.linspace(0, 10, 6), epsilon=1.0, rng=1)
    >>> release.value.shape, round(float(release.value.sum()))  # the counts sum to n exactly
    ((5,), 1000)
    """
    request = Request.checked("knorm.stats.histogram", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    neighbours = check_neighbours(neighbours, request.owner)
    A = check_one_column(as_columns(x, request.owner), request.owner)
    edges = _check_edges(bins, request.owner)
    names = tuple(f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:]))
    return _release_cells(A, [edges], names, neighbours, request)


@fill_doc
def histogramdd(X, bins, *, epsilon=None, rho=None, neighbours="replace", accountant=None, rng=None, label=None):
    """Release the counts of the cells of a grid over p columns.

    Parameters
    ----------
    X : array_like of shape (n, p)
        The data.
    bins : sequence of p array_like
        The declared edges of each column (see :func:`histogram`).
    %(pure_epsilon)s
    %(rho)s
    %(release_options)s

    Returns
    -------
    Release
        The noisy counts of the cells, flattened in C order (``value.reshape`` of the
        numbers of bins gives the grid).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(500, 2))
    >>> histogramdd(X, [[0, 0.5, 1], [0, 0.5, 1]], epsilon=1.0, rng=1).value.shape
    (4,)
    """
    request = Request.checked("knorm.stats.histogramdd", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    owner = request.owner
    neighbours = check_neighbours(neighbours, owner)
    A = as_columns(X, owner, "X")
    if not isinstance(bins, (list, tuple, np.ndarray)) or (isinstance(bins, np.ndarray) and bins.ndim == 0):
        raise ValueError(
            f"The 'bins' parameter of {owner} must be a sequence of declared edges, one array per column (a "
            f"number of bins would be read from the data's range). Got {bins!r} instead."
        )
    if len(bins) != A.shape[1]:
        raise ValueError(
            f"The 'bins' parameter of {owner} must give edges for each of the {A.shape[1]} columns. Got {len(bins)} instead."
        )
    edge_list = [_check_edges(b, owner) for b in bins]
    names = tuple("cell " + ",".join(map(str, c)) for c in np.ndindex(*[len(e) - 1 for e in edge_list]))
    return _release_cells(A, edge_list, names, neighbours, request)


@fill_doc
def vote(scores, *, epsilon=None, rho=None, neighbours="replace", accountant=None, rng=None, label=None):
    """Release the Borda totals of an election: each voter scores the d candidates 0, ..., d - 1.

    Parameters
    ----------
    scores : array_like of shape (n, d)
        One row per voter: a permutation of 0, ..., d - 1 (the Borda points given to each
        candidate). A row that is not a permutation is an error (the declared rule).
    %(pure_epsilon)s
    %(rho)s
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Under replace-one neighbours the totals sum to n d (d - 1) / 2, public: the first
        d - 1 are released with the exact permutohedron ball
        (:class:`~knorm.geometry.VoteBall`) and the last is rebuilt.
    %(charge_options)s

    Returns
    -------
    Release
        The noisy totals of the d candidates: int64, with exact integer noise. The vote ball
        is an exact rational polytope (2^d rows) sampled by exact rejection up to 13
        candidates; beyond, the first lattice-capable ball in the volume order (l_inf or l1)
        is used and ``sampler`` states the switch and its cost in epsilon. Under rho: the
        exact discrete Gaussian, or the shape of
        :func:`~knorm.mechanisms.gaussian_shapes.vote_shape` (continuous, rounded to integers
        afterwards), whichever has the least total variance on the d totals.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ballots = np.array([rng.permutation(4) for _ in range(200)])
    >>> release = vote(ballots, epsilon=1.0, rng=1)
    >>> release.value.shape, round(float(release.value.sum()))
    ((4,), 1200)
    """
    request = Request.checked("knorm.stats.vote", epsilon, rho=rho, rng=rng, accountant=accountant, label=label)
    owner = request.owner
    neighbours = check_neighbours(neighbours, owner)
    A = as_columns(scores, owner, "scores")
    A = np.asarray(A.compute() if is_dask(A) else A)
    n, d = A.shape
    if d < 2:
        raise ValueError(
            f"The 'scores' parameter of {owner} must have one column per candidate, at least 2. Got {d} instead."
        )
    if not np.array_equal(np.sort(A, axis=1), np.broadcast_to(np.arange(d, dtype=float), A.shape)):
        raise ValueError(
            f"The 'scores' parameter of {owner} must hold one permutation of 0, ..., d - 1 per voter (the Borda "
            "points given to the d candidates). Got rows that are not instead."
        )
    space = vote_space(d, neighbours=neighbours)
    ball = space.hull
    totals = total(A)
    names = tuple(f"candidate {j + 1}" for j in range(d))
    request, key = request.labelled("vote"), ("vote", d, neighbours)
    # Borda totals are integers (counts=True): exact integer noise (Notes); under rho, Gaussian (rounded if shaped)
    raw = publish(
        ball.reduce(totals),
        {"vote ball": ball},
        space,
        request,
        names=names[: ball.dim],
        key=key,
        counts=True,
        shapes=functools.partial(_one, vote_shape, d, neighbours),
        full=None if neighbours == "add_remove" else functools.partial(_rebuilt, d - 1),
    )
    if neighbours == "add_remove":
        return raw
    return raw.postprocess(Expand(ball, n), label=request.label, names=names)


_ = math
