"""Shared pieces of the private estimators: the unit box, counted clipping, rng (bounds: :mod:`knorm._ingest`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.base import is_classifier

from knorm._ingest import check_bounds, warn_clipping
from knorm._validation import numeric_input
from knorm.mechanisms import Intervals

__all__ = [
    "FitDiagnostics",
    "PrivateEstimatorMixin",
    "check_bounds",
    "diagnose",
    "resolve_random_state",
    "to_unit_box",
    "unit_factor",
]


def to_unit_box(X, lo, hi):
    """Clip ``X`` to [lo, hi] and map it affinely onto [-1, 1], never outside it.

    Parameters
    ----------
    X : array_like
        The data; ``lo`` and ``hi`` broadcast against it (one entry per column, or of
        shape (k, 1) for data laid out one variable per row).
    lo, hi : ndarray
        The declared bounds, lo < hi.

    Returns
    -------
    Z : ndarray
        The mapped data, in [-1, 1] with every bound mapped exactly: lo to -1, hi to +1.
    n_clipped : int
        How many entries were outside the bounds (and clipped).

    Notes
    -----
    A record outside the declared domain lies outside the sensitivity space S_T, which
    then no longer bounds what one record can change (Casacuberta et al. 2022 show how
    float computations exceed declared sensitivities). In binary64 with rounding to
    nearest, (x - lo) * fl(2 / (hi - lo)) - 1 stays in [-1, 1] for x in [lo, hi]:
    fl(x - lo) >= 0, fl(x - lo) <= fl(hi - lo) = w (rounding is monotone), and
    fl(w fl(2 / w)) <= 2, since w fl(2 / w) <= 2 (1 + 2^-53) and the tie 2 + 2^-52
    rounds to even, that is to 2. But hi maps to 1 - 2^-52 instead of 1 for about 15% of
    widths (measured on random w). So the factor is rounded up by one unit in the last
    place where fl(w fl(2 / w)) < 2, which maps hi to at least 1, and the result is
    capped at 1 (a guard that does not rely on the rounding mode): lo maps to exactly
    -1, hi to exactly +1. The map stays per record and deterministic, and moves no value
    by more than a few units in the last place.

    References
    ----------
    Paper Section 5.1 (the scaling of the records to [-1, 1]); Casacuberta, Shoemate,
    Vadhan & Wagaman (2022), "Widespread underestimation of sensitivity in
    differentially private libraries and how to fix it", ACM CCS.

    Examples
    --------
    >>> Z, n_clipped = to_unit_box(np.array([[0.0], [1.9], [3.0]]), np.array([0.0]), np.array([1.9]))
    >>> Z.ravel().tolist(), n_clipped  # 1.9 * (2 / 1.9) - 1 alone gives 0.9999999999999998
    ([-1.0, 1.0, 1.0], 1)
    """
    X = np.asarray(X, dtype=float)
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    outside = (X < lo) | (X > hi)
    n_clipped = int(np.count_nonzero(outside))
    Z = np.clip(X, lo, hi) if n_clipped else X
    factor = unit_factor(lo, hi)
    out = np.subtract(Z, lo)
    out *= factor
    out -= 1.0
    np.minimum(out, 1.0, out=out)
    return out, n_clipped


def unit_factor(lo, hi):
    """Return f = fl(2 / (hi - lo)), raised by one unit in the last place where fl((hi - lo) f) < 2.

    The factor of :func:`to_unit_box` (Notes there): with it hi maps to at least 1 before the cap.
    """
    width = hi - lo
    factor = 2.0 / width
    return np.where(width * factor < 2.0, np.nextafter(factor, np.inf), factor)


def resolve_random_state(random_state):
    """A numpy Generator from None (OS entropy), an int, a Generator or a legacy RandomState.

    A RandomState (accepted for scikit-learn compatibility) seeds a new Generator
    from one draw of it; no global state is ever used.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, dtype=np.uint64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "The 'random_state' parameter must be None, an int, a numpy Generator or a RandomState. "
        f"Got {type(random_state).__name__} instead."
    )


@dataclass(frozen=True)
class FitDiagnostics:
    """What a fit saw of the data: for the curator only, NOT private, never to be published.

    Kept as ``fit_diagnostics_`` on a fitted estimator and dropped when it is pickled.

    Attributes
    ----------
    n_records : int
        Number of records fitted (exact; under add/remove neighbours n itself is private).
    n_clipped : int
        Entries outside the declared bounds, clipped to them.
    clip_fraction : float
        n_clipped over the number of entries.
    n_iter : int or None
        Optimiser iterations (logistic regression).
    converged : bool or None
        Whether the optimiser met its own stopping rule (logistic regression); the release
        itself is made only at the certified tolerance.
    """

    n_records: int
    n_clipped: int
    clip_fraction: float
    n_iter: int | None = None
    converged: bool | None = None

    def as_dict(self):
        """Return the diagnostics as a dict (for the CLI's ``--diagnostics``).

        Returns
        -------
        dict
        """
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def diagnose(n_records, n_clipped, n_entries, owner, **extra):
    """Return the :class:`FitDiagnostics` of a fit, warning the curator about heavy clipping.

    The warning goes to the curator's console; nothing of it is stored in the fit.
    """
    fraction = warn_clipping(n_clipped, n_entries, owner, "entries", stacklevel=4)
    return FitDiagnostics(int(n_records), int(n_clipped), float(fraction), **extra)


class PrivateEstimatorMixin:
    """The privacy rules of the estimators' life cycle: clones, pickles, seeds.

    * ``sklearn.clone`` shares the accountant (one dataset, one budget) and gives a clone
      holding a Generator a child of it (``Generator.spawn``), so that two clones never draw
      the same noise.
    * Pickling drops ``fit_diagnostics_`` (curator-only). An in-memory accountant refuses to
      be pickled; a file ledger reopens in the worker that unpickles it.
    """

    accountant: object
    random_state: object

    def __sklearn_clone__(self):
        new = super().__sklearn_clone__()  # type: ignore[misc]
        new.accountant = self.accountant
        if isinstance(self.random_state, np.random.Generator):
            new.random_state = self.random_state.spawn(1)[0]
        return new

    def __getstate__(self):
        state: dict = super().__getstate__()  # type: ignore[assignment]
        state.pop("fit_diagnostics_", None)
        return state

    def score(self, X, y, sample_weight=None):
        """scikit-learn's score (R^2 or accuracy), with errors that quote no data.

        scikit-learn's metrics validate ``y`` and ``sample_weight`` themselves, and their
        errors print the values; here they name the parameter and the rule only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            True responses or labels.
        sample_weight : array-like of shape (n_samples,), optional
            Weights.

        Returns
        -------
        float
            The score of ``predict(X)`` against ``y``.
        """
        arrays = {"X": X} if is_classifier(self) else {"X": X, "y": y}  # labels need not be numbers
        if sample_weight is not None:
            arrays["sample_weight"] = sample_weight
        with numeric_input(type(self).__name__, **arrays):
            return super().score(X, y, sample_weight=sample_weight)  # type: ignore[misc]

    def _coefficient_names(self):
        """Names of the parameters, in the order of ``conf_int`` and ``summary``: 'intercept' first.

        The intercept (when fitted), then the features: their DataFrame column names, else
        x1, x2, ... (as statsmodels).
        """
        features = getattr(self, "feature_names_in_", None)
        if features is None:
            features = [f"x{j + 1}" for j in range(self.n_features_in_)]  # type: ignore[attr-defined]
        intercept = ("intercept",) if self.fit_intercept else ()  # type: ignore[attr-defined]
        return intercept + tuple(str(f) for f in features)

    def _named_intervals(self, ends, alpha, method, n_replicates):
        """The (k, 2) interval ends of a bootstrap as :class:`~knorm.mechanisms.Intervals`, named."""
        ends = np.asarray(ends, dtype=float)
        # Each end is an empirical alpha/2 quantile of the replicates: its tail probability has
        # binomial standard error sqrt((alpha/2)(1 - alpha/2) / B).
        mc_error = math.sqrt(alpha / 2 * (1 - alpha / 2) / n_replicates)
        return Intervals(ends[:, 0], ends[:, 1], alpha, method, mc_error, names=self._coefficient_names())

    def _release_rng(self):
        """The source of the noise as the release path wants it.

        An int stays an int and a Generator the same Generator; a RandomState becomes the
        Generator seeded by one draw of it, so two RandomStates in one state give two
        Generators in one state: the ledger fingerprints that state (:mod:`knorm._seeds`)
        and refuses the second. A bool is refused: it is a mistake, not the seed 1 or 0.
        """
        if isinstance(self.random_state, (bool, np.bool_)):
            raise TypeError(
                f"The 'random_state' parameter of {type(self).__name__} must be None, an int >= 0, a numpy "
                f"Generator or a RandomState. Got {self.random_state!r} instead; a bool is no seed."
            )
        if isinstance(self.random_state, np.random.RandomState):
            return resolve_random_state(self.random_state)
        return self.random_state
