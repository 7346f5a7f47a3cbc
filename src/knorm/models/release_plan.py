"""A fit made of several releases: the budget checked for all of them first, one source of noise each.

A :class:`~knorm.models.LogisticRegression` fit can make several releases (the model and
the Fisher information; one model per class for one-vs-rest). Their epsilons sum to the
fit's (on a rho ledger each pure release costs eps^2 / 2), they are refused together before any
is made, and each draws from its own source.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from knorm.accounting import BudgetExceededError, PureEpsilonLedgerError
from knorm.accounting.ledger import RELATIVE_TOLERANCE
from knorm.accounting.zcdp import rho_from_epsilon
from knorm.mechanisms import nonprivate_active
from knorm.mechanisms._mode import resolve_accountant

__all__ = ["check_fit_budget", "release_rngs"]


def check_fit_budget(accountant, owner, *, epsilons=(), rhos=()):
    """Refuse up front a fit whose releases would not all fit in the budget (no partial fit).

    Parameters
    ----------
    accountant : PrivacyAccountant or None
        The accountant the releases will be charged to (None: the enclosing
        :func:`knorm.budget <knorm.mechanisms.budget>` block's, if any).
    owner : str
        Name of the estimator, for the error message.
    epsilons : sequence of float, default ()
        The epsilons of the fit's pure epsilon-DP releases, one per release.
    rhos : sequence of float, default ()
        The rhos of its rho-zCDP releases, one per release.

    Raises
    ------
    BudgetExceededError
        If the releases together exceed what is left (outside
        :func:`~knorm.mechanisms.nonprivate`, whose releases charge nothing), in the
        ledger's unit: on a pure epsilon ledger the sum of the epsilons; on a rho ledger
        the sum of the rhos and of eps^2 / 2 for each pure release (Bun & Steinke 2016,
        Proposition 1.4), as :meth:`~knorm.accounting.PrivacyAccountant.spend` charges them.
    PureEpsilonLedgerError
        If a rho release would be charged to a pure epsilon ledger.
    ValueError
        Inside a :func:`knorm.budget <knorm.mechanisms.budget>` block, if ``accountant`` is another accountant.

    Notes
    -----
    With one release this checks nothing: the accountant's own charge refuses it. The
    ledger is read through its public unit (``budget``), so a rho ledger, which has no
    ``total_epsilon`` or ``spent``, is checked in rho.

    Examples
    --------
    >>> from knorm.accounting import PrivacyAccountant
    >>> check_fit_budget(PrivacyAccountant(1.0), "Example", epsilons=[0.4, 0.1])  # fits: nothing happens
    >>> check_fit_budget(PrivacyAccountant(total_rho=0.5), "Example", epsilons=[0.6, 0.6])  # 0.18 + 0.18 <= 0.5
    """
    epsilons, rhos = [float(e) for e in epsilons], [float(r) for r in rhos]
    if nonprivate_active():
        return
    accountant = resolve_accountant(accountant, f"{owner}.fit")  # refuses a second accountant in a budget block
    if len(epsilons) + len(rhos) < 2 or accountant is None:
        return
    budget = getattr(accountant, "budget", "epsilon")
    if budget == "rho":
        charge = math.fsum([*rhos, *(rho_from_epsilon(e) for e in epsilons)])
        total, spent, unit = accountant.total_rho, accountant.spent_rho, "rho"
    else:
        if rhos:
            raise PureEpsilonLedgerError(
                f"Refusing to fit {owner}: its releases are rho-zCDP and the accountant is a pure epsilon ledger "
                "(zCDP implies no pure epsilon-DP guarantee). Charge it to a rho ledger, "
                "PrivacyAccountant(total_rho=...). Nothing was charged."
            )
        charge = math.fsum(epsilons)
        total, spent, unit = accountant.total_epsilon, accountant.spent, "epsilon"
    remaining = max(total - spent, 0.0)
    if math.fsum([spent, charge]) > total * (1 + RELATIVE_TOLERANCE):
        raise BudgetExceededError(
            f"Spending {unit}={charge:g} on '{owner}.fit' would exceed the total {total:g} "
            f"(spent {spent:g}, remaining {remaining:g})."
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
