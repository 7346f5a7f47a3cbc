"""The in-memory back end: a list in this process, guarded by a lock.

It is the ledger of :class:`~knorm.accounting.PrivacyAccountant` ``(total_epsilon)``.
It lives and dies with the object, so it cannot leave the process: pickling refuses
(in :class:`~knorm.accounting.PrivacyAccountant`), and a copy inherited by a forked
child refuses to charge. Either copy would otherwise spend the budget a second time,
unseen by this ledger.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timezone

from knorm._seeds import fingerprint, new_salt
from knorm.accounting.ledger import LedgerEntry, check_charge

__all__ = ["MemoryLedger", "ELSEWHERE_FIX"]

# The one advice for every way a memory ledger could be charged from another process.
ELSEWHERE_FIX = (
    "Use a file ledger, PrivacyAccountant.create(path, total_epsilon=...) (then PrivacyAccountant.open(path)), "
    "which every process, worker and session charges in one place, or run the work in this process (n_jobs=1)."
)


class MemoryLedger:
    """Entries held in this process, checked and appended under one lock.

    Parameters
    ----------
    total : float
        The total budget, already validated.
    budget : {'epsilon', 'rho'}, default 'epsilon'
        The unit of the total and of the charges.
    """

    path = None

    def __init__(self, total, budget="epsilon"):
        self.total = total
        self.budget = budget
        self._entries = []
        self._by_fingerprint = {}
        # The secret key of the seed fingerprints: it never leaves this object.
        self._salt = new_salt()
        self._lock = threading.Lock()
        self._pid = os.getpid()

    closed = False

    def append(self, charge, label, description, seed_key=None, legacy=None, *, epsilon=None):
        """Check the charge and record it, atomically.

        Parameters
        ----------
        charge : float
            The charge in the ledger's unit (epsilon or rho), validated by the accountant.
        label : str
            What is released.
        description : str
            How the release is made.
        seed_key : bytes or None, default None
            The state the release draws from (:func:`knorm._seeds.state_key`), or None for
            fresh entropy; fingerprinted here under this ledger's salt.
        legacy : str or None, default None
            Unused: an in-memory ledger never holds unsalted fingerprints.
        epsilon : float or None, default None
            On a rho ledger, the epsilon of a pure epsilon-DP release charged as rho (recorded).

        Returns
        -------
        LedgerEntry
            The recorded entry.
        """
        # Checked before taking the lock: a forked child may inherit it held by a parent's thread.
        if os.getpid() != self._pid:
            raise RuntimeError(
                f"This in-memory PrivacyAccountant belongs to process {self._pid}; it is being charged from "
                f"process {os.getpid()}, a forked copy whose charges would never reach the original ledger, so "
                f"the budget would be spent again. Nothing was charged. {ELSEWHERE_FIX}"
            )
        with self._lock:
            fp = None if seed_key is None else fingerprint(self._salt, seed_key)
            previous = None if fp is None else self._by_fingerprint.get(fp)
            check_charge(self.charges(), self.total, charge, label, previous, self.budget)
            entry = LedgerEntry(
                position=len(self._entries),
                epsilon=charge if self.budget == "epsilon" else epsilon,
                label=label,
                description=description,
                time=datetime.now(timezone.utc),
                fixed_seed=fp is not None,
                rho=charge if self.budget == "rho" else None,
            )
            self._entries.append(entry)
            if fp is not None:
                self._by_fingerprint[fp] = (entry.position, label)
        return entry

    def entries(self):
        """Return the entries, in order.

        Returns
        -------
        list of LedgerEntry
            A new list.
        """
        # list() of a list is atomic under the GIL, and appends only ever extend it.
        return list(self._entries)

    def charges(self):
        """Return the charges, in order, in the ledger's unit (epsilon, or rho).

        Returns
        -------
        list of float
            A new list.
        """
        if self.budget == "rho":
            return [e.rho for e in self._entries]
        return [e.epsilon for e in self._entries]

    def close(self):
        """Do nothing: there is no file to release; the entries live as long as the object."""

    def describe(self):
        """Return the back end's part of the accountant's repr.

        Returns
        -------
        str
            Empty: an in-memory ledger has no path.
        """
        return ""
