"""Functions run in other processes by the tests (spawned processes, loky workers).

Kept apart from the test modules so that a worker imports only knorm.accounting,
not pytest, scikit-learn's model selection or the estimators: process start-up
dominates the time of these tests.
"""

import os

from knorm.accounting import BudgetExceededError, PrivacyAccountant


def race_in_process(files, barrier, queue, name, attempts, epsilon):
    """Race the other process: open the file ledgers at once, then charge each ``attempts`` times.

    The ledgers' total is 0.5: with ``attempts * epsilon`` = 0.5 there is room for
    half the charges of the two processes. They start each ledger together (a barrier),
    so they compete for its lock, and at the end for its last charges. Report what was
    accepted.
    """
    barrier.wait(timeout=60)
    accountants = [PrivacyAccountant.open(file) for file in files]  # created by the test, with total 0.5
    accepted = []
    for file, acc in zip(files, accountants):
        barrier.wait(timeout=60)
        for j in range(attempts):
            try:
                acc.spend(epsilon, f"{name} {j}")
                accepted.append((file, f"{name} {j}"))
            except BudgetExceededError:
                pass
        acc.close()
    queue.put(accepted)


def charge_from_child(acc):
    """Charge ``acc`` 0.25, labelled with this process's id."""
    acc.spend(0.25, f"forked child {os.getpid()}")


def charge_in_worker(acc, i):
    """Charge ``acc`` 0.125 for task ``i``; return the entry's position, or None if refused."""
    try:
        return acc.spend(0.125, f"task {i}").position
    except BudgetExceededError:
        return None
