"""Private summary statistics with the optimal K-norm mechanism by default.

Each function takes the data (numpy, pandas or Dask), declared bounds (never read from the
data), ``epsilon`` (or ``rho``, for Gaussian noise under rho-zCDP: see
:func:`knorm.stats._core.publish_gaussian`), ``accountant=``, ``rng=`` and ``neighbours=``, releases through
:meth:`knorm.mechanisms.KNormMechanism.release` with the ball its geometry picks (the exact
hull of the sensitivity space where it is known, paper Theorem "Optimal K-mech"), and
returns a :class:`~knorm.mechanisms.Release` with its gain over Laplace and intervals from
the public noise law (``conf_int``).

Errors and warnings never show a value of the data: they name the parameter and the rule,
and at most count the offending entries or the clipped share (counts of the data, for the
curator: not public, and never stored in a release). Declared bounds and epsilon are
public and are echoed.

>>> import numpy as np
>>> import knorm.stats as dp
>>> x = np.random.default_rng(0).normal(4, 2, 10_000).clip(0, 10)
>>> dp.var(x, (0, 10), epsilon=1.0, rng=1).names
('mean', 'variance')
"""

from knorm.stats.counts import histogram, histogramdd, vote
from knorm.stats.covariance import covariance, covariance_matrix, mean_and_covariance
from knorm.stats.generic import release
from knorm.stats.moments import moments, std, var
from knorm.stats.quantiles import median, quantile
from knorm.stats.sums import count, mean, sum

__all__ = [
    "count",
    "covariance",
    "covariance_matrix",
    "histogram",
    "histogramdd",
    "mean",
    "mean_and_covariance",
    "median",
    "moments",
    "quantile",
    "release",
    "std",
    "sum",
    "var",
    "vote",
]
