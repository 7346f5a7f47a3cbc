"""A sensitivity value that carries how it was obtained.

Privacy needs Delta >= sup_{u in S_T} ||u||_K (paper Definition "K-norm
Sensitivity" and Proposition "K-Norm Mechanism"). A value from a closed form, an
enumeration or a proof is safe; a value from sampling S_T is only a lower
estimate of the supremum and may under-state it, which breaks privacy.
"""

from __future__ import annotations

from dataclasses import dataclass

from knorm._validation import check_positive

__all__ = ["Sensitivity", "UnsafeSensitivityError", "KINDS", "CERTIFIED_KINDS"]

#: exact: equals the supremum; bound: a proved upper bound; declared: a float the
#: caller vouches for (from the declared data domain); estimate: from sampling.
KINDS = ("exact", "bound", "declared", "estimate")
CERTIFIED_KINDS = ("exact", "bound", "declared")


class UnsafeSensitivityError(ValueError):
    """A mechanism was given a sensitivity that is not certified."""


@dataclass(frozen=True)
class Sensitivity:
    """Sensitivity Delta_K(T) with its provenance.

    Parameters
    ----------
    value : float
        The sensitivity (> 0, finite).
    kind : {'exact', 'bound', 'declared', 'estimate'}
        How it was obtained; only 'estimate' is refused by mechanisms.
    method : str
        A short description (formula, enumeration, paper reference).
    lower : float, optional
        A value attained in the sensitivity space, so the true sensitivity lies
        in [lower, value]; given with certified bounds to show their gap.

    Notes
    -----
    Privacy needs Delta >= sup_{u in S_T} ||u||_K (paper Definition "K-norm
    Sensitivity" and Proposition "K-Norm Mechanism"). Kinds 'exact', 'bound' and
    'declared' are certified; an 'estimate' from sampling S_T may under-state the
    supremum, so mechanisms refuse it unless told to accept the risk.

    Examples
    --------
    >>> s = Sensitivity(2.0, "bound", "per-coordinate bound", lower=1.5)
    >>> s.certified, float(s)
    (True, 2.0)
    >>> Sensitivity(1.9, "estimate", "maximum over sampled points").certified
    False
    """

    value: float
    kind: str = "declared"
    method: str = ""
    lower: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "value", check_positive(self.value, "value", "Sensitivity"))
        if self.kind not in KINDS:
            raise ValueError(f"The 'kind' parameter of Sensitivity must be one of {KINDS}. Got {self.kind!r} instead.")

    @property
    def certified(self):
        """True unless the value was estimated by sampling."""
        return self.kind in CERTIFIED_KINDS

    def __float__(self):
        return self.value


def as_certified(sensitivity, owner, *, unsafe_allow_estimated_sensitivity=False):
    """Return a :class:`Sensitivity` a mechanism may use, refusing estimates.

    A plain positive float is taken as 'declared': the caller vouches that it
    comes from the declared data domain, not from the data.
    """
    if not isinstance(sensitivity, Sensitivity):
        sensitivity = Sensitivity(check_positive(sensitivity, "sensitivity", owner), "declared", "given by the caller")
    if not sensitivity.certified and not unsafe_allow_estimated_sensitivity:
        raise UnsafeSensitivityError(
            f"The 'sensitivity' parameter of {owner} must be exact or a certified upper "
            f"bound. Got an estimate ({sensitivity.value:g}, {sensitivity.method or 'sampled'}) "
            "instead. A sensitivity estimated by sampling the sensitivity space is a lower "
            "estimate of the supremum, so noise scaled to it can break the privacy "
            "guarantee. Compute it exactly or as a certified bound (knorm.sensitivity), "
            "or pass unsafe_allow_estimated_sensitivity=True to accept the risk."
        )
    return sensitivity
