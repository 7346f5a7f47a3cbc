"""A fit made of several releases: the budget checked for all of them first, one source of noise each.

A :class:`~knorm.models.LogisticRegression` fit can make several releases (the model and
the Fisher information; one model per class for one-vs-rest). Their epsilons sum to the
fit's, they are refused together before any is made, and each draws from its own source.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from knorm.accounting import BudgetExceededError
from knorm.mechanisms import nonprivate_active
from knorm.mechanisms._mode import resolve_accountant

__all__ = ["check_fit_budget", "release_rngs"]


def check_fit_budget(accountant, epsilon, n_releases, owner):
    """Refuse up front a fit whose releases would not all fit in the budget (no partial fit).

    Parameters
    ----------
    accountant : PrivacyAccountant or None
        The accountant the releases will be charged to (None: the enclosing
        :func:`knorm.budget <knorm.mechanisms.budget>` block's, if any).
    epsilon : float
        The sum of their epsilons.
    n_releases : int
        How many releases the fit makes; with one, the accountant's own charge refuses.
    owner : str
        Name of the estimator, for the error message.

    Raises
    ------
    BudgetExceededError
        If ``epsilon`` exceeds the accountant's remaining budget (outside
        :func:`~knorm.mechanisms.nonprivate`, whose releases charge nothing).
    ValueError
        Inside a :func:`knorm.budget <knorm.mechanisms.budget>` block, if ``accountant`` is another accountant.

    Examples
    --------
    >>> from knorm.accounting import PrivacyAccountant
    >>> check_fit_budget(PrivacyAccountant(1.0), 0.5, 2, "Example")  # fits: nothing happens
    """
    if nonprivate_active():
        return
    accountant = resolve_accountant(accountant, f"{owner}.fit")  # refuses a second accountant in a budget block
    if n_releases < 2 or accountant is None:
        return
    remaining = getattr(accountant, "remaining", None)
    if remaining is not None and epsilon > remaining * (1 + 1e-12) + 1e-15:
        raise BudgetExceededError(
            f"Spending epsilon={epsilon:g} on '{owner}.fit' would exceed the total "
            f"{getattr(accountant, 'total_epsilon', float('nan')):g} (spent "
            f"{getattr(accountant, 'spent', float('nan')):g}, remaining {remaining:g})."
        )


def release_rngs(rng, count):
    """Return one source of noise per release: children of a fixed seed, else the same source, advanced.

    Parameters
    ----------
    rng : None, int, SeedSequence or Generator
        The estimator's source of noise (as its release path wants it).
    count : int
        Number of releases.

    Returns
    -------
    list
        ``[rng]`` for one release; for several, the children of an int seed (they keep
        fingerprints, so an accountant refuses a repeated seed, and differ from each
        other), else ``rng`` repeated (a Generator advances as it draws).

    Examples
    --------
    >>> len(release_rngs(7, 3)), release_rngs(None, 2)
    (3, [None, None])
    """
    if count == 1:
        return [rng]
    if isinstance(rng, (Integral, np.integer)) and not isinstance(rng, bool):
        return np.random.SeedSequence(int(rng)).spawn(count)
    return [rng] * count
