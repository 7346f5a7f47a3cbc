"""A privacy budget ledger under basic sequential composition.

Releasing mechanisms that are eps_1-, ..., eps_k-DP on the same data is
(eps_1 + ... + eps_k)-DP (Dwork & Roth 2014, Theorem 3.14). The accountant
refuses any charge that would exceed its total, before anything is released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from knorm._validation import check_positive

__all__ = ["PrivacyAccountant", "BudgetExceededError", "LedgerEntry"]


class BudgetExceededError(RuntimeError):
    """A charge would take the spent budget past the accountant's total."""


@dataclass(frozen=True)
class LedgerEntry:
    """One charge: its epsilon and a label saying what was released."""

    epsilon: float
    label: str


class PrivacyAccountant:
    """Tracks the epsilon spent on one dataset and refuses to exceed a total.

    Parameters
    ----------
    total_epsilon : float
        The whole budget, in (0, inf).

    Examples
    --------
    >>> acc = PrivacyAccountant(1.0)
    >>> acc.spend(0.25, "mean")
    >>> acc.remaining
    0.75
    >>> acc.spend(1.0, "regression")
    Traceback (most recent call last):
    ...
    knorm.accounting.BudgetExceededError: Spending epsilon=1 on 'regression' would exceed the total 1 (spent 0.25, remaining 0.75).
    """

    def __init__(self, total_epsilon):
        self.total_epsilon = check_positive(total_epsilon, "total_epsilon", "PrivacyAccountant")
        self._ledger = []

    @property
    def spent(self):
        """Epsilon spent so far (sum over the ledger)."""
        return math.fsum(e.epsilon for e in self._ledger)

    @property
    def remaining(self):
        """Epsilon left."""
        return self.total_epsilon - self.spent

    @property
    def ledger(self):
        """The charges so far, in order (a copy)."""
        return list(self._ledger)

    def spend(self, epsilon, label=""):
        """Charge ``epsilon`` for the release named ``label``, or raise without charging."""
        epsilon = check_positive(epsilon, "epsilon", "PrivacyAccountant.spend")
        # A relative tolerance lets a budget split in equal parts be spent exactly.
        if self.spent + epsilon > self.total_epsilon * (1 + 1e-12):
            raise BudgetExceededError(
                f"Spending epsilon={epsilon:g} on {label!r} would exceed the total {self.total_epsilon:g} "
                f"(spent {self.spent:g}, remaining {self.remaining:g})."
            )
        self._ledger.append(LedgerEntry(epsilon, str(label)))

    def __copy__(self):
        # One dataset, one budget: copies (e.g. by sklearn.clone in cross-validation)
        # must charge the same ledger, or each clone would get a fresh budget.
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return f"PrivacyAccountant(total_epsilon={self.total_epsilon:g}, spent={self.spent:g}, entries={len(self._ledger)})"
