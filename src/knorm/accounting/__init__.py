"""Privacy budget accounting under basic sequential composition.

Releasing mechanisms that are eps_1-, ..., eps_k-DP on the same data is
(eps_1 + ... + eps_k)-DP (Dwork & Roth 2014, Theorem 3.14). A
:class:`PrivacyAccountant` refuses any charge that would exceed its total, before
anything is released. Its ledger lives in memory (:mod:`knorm.accounting.memory`,
one process) or in an SQLite file (:mod:`knorm.accounting.sqlite`, shared by
threads, processes, workers and sessions).
"""

from knorm.accounting.accountant import PrivacyAccountant, PureEpsilonLedgerError
from knorm.accounting.ledger import BudgetExceededError, Ledger, LedgerEntry, SeedReuseError

__all__ = [
    "BudgetExceededError",
    "Ledger",
    "LedgerEntry",
    "PrivacyAccountant",
    "PureEpsilonLedgerError",
    "SeedReuseError",
]
