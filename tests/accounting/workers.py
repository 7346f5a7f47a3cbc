"""Functions run in other processes by the tests (spawned processes, loky workers).

Kept apart from the test modules so that a worker imports only knorm.accounting,
not pytest, scikit-learn's model selection or the estimators: process start-up
dominates the time of these tests.
"""

import os

from knorm.accounting import BudgetExceededError, PrivacyAccountant


def race_in_process(files, barrier, queue, name):
    """Charge each file ledger twice, starting with the other process; report what was accepted."""
    accepted = []
    for file in files:
        barrier.wait(timeout=60)
        # Both processes create (or find) the file at once: total 0.5, room for two of the four charges.
        with PrivacyAccountant.open(file, total_epsilon=0.5) as acc:
            for j in range(2):
                try:
                    acc.spend(0.25, f"{name} {j}")
                    accepted.append((file, f"{name} {j}"))
                except BudgetExceededError:
                    pass
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
