"""Release any additive statistic the library can take, through the mechanism its geometry picks."""

from __future__ import annotations

import numpy as np

from knorm._docs import fill_doc
from knorm._exact import RecordSums
from knorm._ingest import as_columns, clip_count
from knorm.mechanisms import choose_mechanism
from knorm.sensitivity import Box, FiniteDomain, QuadraticStatistic, SensitivitySpace
from knorm.stats._core import Request, check_neighbours, publish_gaussian

__all__ = ["release"]


@fill_doc
def release(
    statistic, data, domain=None, *, epsilon=None, rho=None, neighbours="replace", accountant=None, rng=None, label=None
):
    """Release T = sum_i t(x_i) for a per-record map t and a declared record domain.

    Parameters
    ----------
    statistic : QuadraticStatistic or callable
        The per-record map t. A :class:`~knorm.sensitivity.QuadraticStatistic` (coordinates
        are polynomials of degree <= 2 on a box) gets an exact support function; a plain
        callable (vectorised, (k, d) -> (k, m)) needs a :class:`~knorm.sensitivity.FiniteDomain`.
    data : array_like of shape (n, d)
        The records: numpy, pandas or Dask.
    domain : Box or FiniteDomain, optional
        The declared record domain (never read from the data); a QuadraticStatistic carries
        its box. Records outside a box are clipped to it (counted; the curator is warned above
        5%); records outside a finite domain are an error.
    %(pure_epsilon)s
    %(rho)s
    %(release_options)s

    Returns
    -------
    Release
        T plus noise from the mechanism that :func:`~knorm.mechanisms.choose_mechanism` picks
        for the statistic's sensitivity space (paper Theorem "Optimal K-mech": the hull of
        S_T when it can be built, else the best certified ball in the volume order), with its
        ``gain`` over Laplace.

    Examples
    --------
    >>> import numpy as np
    >>> from knorm.sensitivity import QuadraticStatistic
    >>> t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0], names=["sum x", "sum x^2"])
    >>> x = np.random.default_rng(0).uniform(0, 10, size=(1000, 1))
    >>> release(t, x, epsilon=1.0, rng=1).names
    ('sum x', 'sum x^2')
    """
    request = Request.checked(
        "knorm.stats.release", epsilon, rho=rho, rng=rng, accountant=accountant, label=label or "statistic"
    )
    owner = request.owner
    neighbours = check_neighbours(neighbours, owner)
    X = as_columns(data, owner, "data")
    if isinstance(statistic, QuadraticStatistic):
        if domain is not None and not isinstance(domain, Box):
            raise TypeError(
                f"The 'domain' parameter of {owner} must be a Box (or None) for a QuadraticStatistic. "
                f"Got {type(domain).__name__} instead."
            )
        _check_width(X, len(statistic.lower), owner)
        X, _ = clip_count(X, statistic.lower, statistic.upper, owner)
        values = statistic(np.asarray(X.compute() if hasattr(X, "compute") else X))
        sums = RecordSums((values, _quadratic_error_magnitude(statistic), False))
        names = tuple(statistic.names)
        parts = (statistic.A, statistic.b, statistic.const, statistic.lower, statistic.upper)
        key = ("quadratic", statistic.A.shape, *(a.tobytes() for a in parts), neighbours)
    elif callable(statistic) and isinstance(domain, FiniteDomain):
        A = np.asarray(X.compute() if hasattr(X, "compute") else X)
        _check_width(A, domain.records.shape[1], owner)
        match = (A[:, None, :] == domain.records[None, :, :]).all(axis=2)
        member = match.any(axis=1)
        if not member.all():
            raise ValueError(
                f"The 'data' parameter of {owner} must hold records of the declared FiniteDomain. Got "
                f"{int((~member).sum())} record(s) outside it instead."
            )
        # t is evaluated on the declared records only, the very values S_T is built from: a map
        # that looked at the whole batch (centring, say) could not leak through it.
        table = np.asarray(statistic(domain.records), dtype=float)
        values = table[match.argmax(axis=1)]
        sums = RecordSums((values, np.abs(table).max(axis=0), True))  # table entries: exact per record
        names = tuple(f"t{j + 1}" for j in range(values.shape[1]))
        key = ("finite", table.shape, table.tobytes(), neighbours)
    else:
        raise TypeError(
            f"The 'statistic' parameter of {owner} must be a QuadraticStatistic, or a callable with a FiniteDomain "
            f"as 'domain'. Got {type(statistic).__name__} with domain {type(domain).__name__} instead."
        )
    space = SensitivitySpace.additive(statistic, domain, neighbours=neighbours)
    if request.rho is not None:  # the spherical Gaussian, and the min-trace shape on certified vertices of S_T
        return publish_gaussian(sums, space, request, names=names, key=(owner, *key), hull=True)
    # The ranking (it certifies every candidate's sensitivity: about 0.4 s for a 3-coordinate quadratic
    # statistic) is kept by the public description of S_T: the statistic's coefficients and box, or its
    # values on the declared records, and the neighbours.
    choice = choose_mechanism(space, request.epsilon, key=(owner, *key), reduce=False, owner=owner)
    return request.release(choice, sums, names)


def _quadratic_error_magnitude(statistic):
    """A bound M' with |fl(t_j(x)) - t_j(x)| <= 2^-53 M'_j for every x in the box (for RecordSums).

    t_j(x) = x'A_j x + b_j'x + c_j is a sum of K = d^2 + d + 1 terms of magnitude at most
    M_j = sum |A_j| B B' + sum |b_j| B + |c_j| (B = max(|lower|, |upper|)), each with at most two
    products; evaluated in any order, binary64 is off by at most gamma_{K+4} M_j
    (Higham 2002, Section 3.1, with the two final additions), below (K + 5) 2^-53 M_j. A pair of
    neighbours differs in one record on each side: RecordSums charges 2^-52 M'_j, twice that.
    """
    B = np.maximum(np.abs(statistic.lower), np.abs(statistic.upper))
    M = np.einsum("mij,i,j->m", np.abs(statistic.A), B, B) + np.abs(statistic.b) @ B + np.abs(statistic.const)
    d = len(B)
    return (d * d + d + 5) * M * (1 + 1e-9)


def _check_width(X, d, owner):
    if X.shape[1] != d:
        raise ValueError(
            f"The 'data' parameter of {owner} must have one column per coordinate of a record ({d}, as the declared "
            f"domain). Got {X.shape[1]} columns instead."
        )
