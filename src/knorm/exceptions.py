"""Warnings and errors about the privacy guarantee, shared by every layer."""

from __future__ import annotations

__all__ = ["ClippingWarning", "ConvergenceError", "IntervalUnavailableError", "InvalidParameterError", "PrivacyWarning"]


class PrivacyWarning(UserWarning):
    """A use of the library that is private only under a condition the user must check.

    Raised, for example, on every release drawn from a fixed seed that no accountant
    records (and on every reuse of a Generator's state in the process): fixed seeds are for
    tests and reproducible examples, and reusing one on neighbouring data reveals the
    difference of the two statistics.
    """


class ConvergenceError(RuntimeError):
    """An optimiser did not reach the tolerance its privacy proof needs, so nothing was published.

    The message names the tolerance (public) and never the gradient norm reached, which is
    computed from the data. The curator who needs it reads ``curator_only_gradient_norm``
    (None when unknown); like every curator-only number it must not be published.

    Parameters
    ----------
    *args
        The message, as for any exception.
    curator_only_gradient_norm : float, optional
        The gradient norm the optimiser stopped at (data-dependent; kept off the message).
    """

    def __init__(self, *args, curator_only_gradient_norm=None):
        super().__init__(*args)
        self.curator_only_gradient_norm = curator_only_gradient_norm


class ClippingWarning(UserWarning):
    """Many values fell outside their declared bounds and were clipped (shown to the curator only)."""


class InvalidParameterError(ValueError, TypeError):
    """An estimator's parameter of the wrong type or value, refused before anything is read or spent.

    Both a ValueError and a TypeError, as scikit-learn's own ``InvalidParameterError``, so that
    code catching either keeps working. The message names the parameter, the rule and the
    value received: "The 'epsilon' parameter of LinearRegression must be a float in the range
    (0.0, inf). Got -1 instead."
    """


class IntervalUnavailableError(ValueError):
    """An interval the library will not give, because it would not cover where it claims to.

    Raised instead of a narrow wrong interval: the message gives the public reason (a
    function of released values and public inputs only, such as how many eigenvalues of a
    released Gram matrix the post-processing raised) and what would make an interval
    available. The coverage matrix (``docs/coverage.md``) lists the regimes where each
    interval is refused and why.
    """
