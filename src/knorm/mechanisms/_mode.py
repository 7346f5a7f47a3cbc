"""The rules every release obeys: the charge before the draw, fixed seeds, the non-private mode."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from knorm._seeds import fingerprint, new_salt, state_key
from knorm._validation import check_rng
from knorm.exceptions import PrivacyWarning

__all__ = ["ReleaseRules", "budget", "nonprivate", "nonprivate_active", "resolve_accountant", "warn_fixed_seed"]

# Fingerprints of the states drawn from without an accountant in this process (see warn_fixed_seed).
_PROCESS_SALT = new_salt()
_SEEN: set = set()
_SEEN_LOCK = threading.Lock()
_WARNINGS = itertools.count(1)
# True inside ``nonprivate()``: releases add no noise and charge nothing.
_NONPRIVATE = contextvars.ContextVar("knorm_nonprivate", default=False)
# The accountant of the enclosing ``budget()`` block of this context (thread, task), or None.
_BUDGET: contextvars.ContextVar = contextvars.ContextVar("knorm_budget", default=None)
# How many budget() blocks are open in this process, in any context: a release with no accountant in a
# context outside every block warns while another context has one open (see budget, Notes).
_OPEN_BLOCKS = 0
_OPEN_LOCK = threading.Lock()


def warn_fixed_seed(rng, gen):
    """Warn about a release without an accountant from a fixed seed, or from a Generator state seen before.

    An explicit seed (an int, a sequence of ints, a SeedSequence) is fixed by construction,
    and a process cannot tell whether it was used yesterday, elsewhere: it warns on every
    release. A Generator is the recommended source, which advances as it draws, so a
    warning on each of its releases would teach users to ignore the warning; it warns
    when its state was already drawn from in this process, that is, on each reuse. The
    states seen are kept as HMAC-SHA256 fingerprints under a random salt of this process
    (32 bytes each), never the states themselves.
    """
    fp = fingerprint(_PROCESS_SALT, state_key(gen))
    with _SEEN_LOCK:
        seen = fp in _SEEN
        _SEEN.add(fp)
    explicit = not isinstance(rng, (np.random.Generator, np.random.BitGenerator))
    if not (explicit or seen):
        return
    what = "a fixed seed" if explicit else "a Generator in a state already drawn from in this process"
    # Numbered, so that Python's default filter (once per message and place) shows every one of them.
    number = next(_WARNINGS)
    warnings.warn(
        f"A release was drawn from {what}, with no accountant to record it"
        f"{' (and this seed was used before in this process)' if seen and explicit else ''}. Fixed seeds are for "
        "tests and reproducible examples: two releases with the same seed on neighbouring data draw the same noise, "
        "and their difference reveals the exact difference of the statistics. Publish with rng=None (fresh OS "
        f"entropy), or charge a PrivacyAccountant, which refuses a seed it has seen. (Fixed-seed warning {number} "
        "of this process.)",
        PrivacyWarning,
        stacklevel=4,
    )


@contextlib.contextmanager
def nonprivate():
    """Within this block, releases are NOT private: no noise is added and no budget charged.

    The explicit noise-free limit, for tests of the arithmetic (a fit inside it equals the
    non-private estimator) and for experiments that need the limit epsilon -> inf. Every
    :class:`Release` made inside has ``epsilon = inf``, ``noise_scale = 0`` and a
    'NON-PRIVATE' caveat, so it cannot be mistaken for a private one. Epsilon = inf itself
    is refused everywhere.

    Yields
    ------
    None

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> from knorm.mechanisms import KNormMechanism
    >>> with nonprivate():
    ...     release = KNormMechanism(LpBall(2, 1), 1.0, 1.0).release([3.0, 4.0])
    >>> release.value.tolist(), release.epsilon
    ([3.0, 4.0], inf)
    """
    token = _NONPRIVATE.set(True)
    try:
        yield
    finally:
        _NONPRIVATE.reset(token)


def nonprivate_active():
    """Return whether releases are currently non-private (inside :func:`nonprivate`).

    Returns
    -------
    bool
        True inside the block, where releases add no noise and charge nothing.
    """
    return _NONPRIVATE.get()


def _budget_accountant(total_epsilon, total_rho, path, accountant):
    """The accountant a ``budget()`` block charges, and whether the block opened it (then it closes it)."""
    owner = "knorm.budget"
    if accountant is not None:
        given = {"total_epsilon": total_epsilon, "total_rho": total_rho, "path": path}
        clash = [f"{k}={v!r}" for k, v in given.items() if v is not None]
        if clash:
            raise ValueError(
                f"The 'accountant' parameter of {owner} excludes total_epsilon, total_rho and path: the accountant "
                f"has its budget (and its file) already. Got accountant={accountant!r} and {', '.join(clash)} instead."
            )
        if not callable(getattr(accountant, "spend", None)):
            raise TypeError(
                f"The 'accountant' parameter of {owner} must be a PrivacyAccountant (an object with a 'spend' "
                f"method) or None. Got {accountant!r} instead."
            )
        return accountant, False
    from knorm.accounting import PrivacyAccountant
    from knorm.accounting.accountant import _check_totals

    kind, total = _check_totals(total_epsilon, total_rho, owner, required=path is None)
    totals = {} if kind is None else {f"total_{kind}": total}
    if path is None:
        return PrivacyAccountant(**totals), True
    if kind is None:  # a later session: the file holds the total (open never creates)
        return PrivacyAccountant.open(path), True
    try:
        return PrivacyAccountant.create(path, **totals), True  # refuses a path where anything exists
    except FileExistsError as err:
        raise FileExistsError(
            f"{err} To go on spending that ledger in a block, pass its path without a total: knorm.budget(path=...)."
        ) from None


@contextlib.contextmanager
def budget(total_epsilon=None, *, total_rho=None, path=None, accountant=None):
    """Charge every release made inside this block to one privacy accountant, which it yields.

    Inside ``with knorm.budget(total_epsilon=3.0) as acc:`` each release that passes no
    ``accountant=`` (the functions of :mod:`knorm.stats`, a mechanism's ``release``, an
    estimator's ``fit``) is charged to ``acc``, before its noise is drawn, exactly as if
    ``accountant=acc`` had been passed; a release that would overspend is refused.

    Parameters
    ----------
    total_epsilon : float, optional
        The whole budget in pure epsilon-DP, in (0, inf): the block makes a new
        :class:`~knorm.accounting.PrivacyAccountant` (in memory, or in the file ``path``).
    total_rho : float, optional
        Instead of ``total_epsilon`` (exactly one of the two): the whole budget in rho-zCDP.
    path : str or os.PathLike, optional
        Keep the ledger in this SQLite file. With a total, the file is created
        (:meth:`PrivacyAccountant.create <knorm.accounting.PrivacyAccountant.create>`, which
        refuses a path where anything exists); without one, the existing ledger is opened
        (:meth:`PrivacyAccountant.open <knorm.accounting.PrivacyAccountant.open>`, which
        never creates), so a later session goes on spending the same budget. The block
        closes the file when it ends.
    accountant : PrivacyAccountant, optional
        Instead of the three above: charge this existing accountant (the block does not
        close it).

    Yields
    ------
    PrivacyAccountant
        The accountant charged inside the block.

    Raises
    ------
    RuntimeError
        If a block is already open in this context (thread or task) with another
        accountant: blocks do not nest, since an inner one would shadow the outer total.
    ValueError, TypeError
        If the budget is given twice or not at all (the messages say which).

    See Also
    --------
    knorm.accounting.PrivacyAccountant : The ledger itself, and the explicit ``accountant=``.
    nonprivate : The noise-free block (it charges nothing, inside a budget too).

    Notes
    -----
    Where the block applies. The accountant is held in a :mod:`contextvars` variable, so:

    * a release in the block's own context (its thread, and every function called from
      it) is charged to the block;
    * a thread has its own context: a thread started inside the block (``threading``,
      ``concurrent.futures``, joblib's thread backend) does **not** see the block, because
      Python starts a thread with an empty context (up to 3.13, and on default builds of
      3.14). Its releases are not charged to the block; so that this is never silent, a
      release with no accountant made outside every block while a block is open elsewhere
      in this process emits a :class:`~knorm.exceptions.PrivacyWarning`. To charge the
      block from a thread, run the thread's work in ``contextvars.copy_context().run``
      (started inside the block), or open ``knorm.budget(accountant=acc)`` in the thread,
      or pass ``accountant=acc``. Threads that each open their own block charge their own
      budgets, independently;
    * an asyncio task copies the context it is created in: a task created inside the block
      is charged to it, and a task that opens its own block does not affect the others;
    * other processes (joblib's default backend, multiprocessing, Dask) never see the
      block: pass a file accountant to them explicitly (see the budget guide).

    Rules inside the block. An explicit ``accountant=`` must be the block's accountant (it
    is then charged once, as usual); a different one is refused with ValueError before
    anything is charged or drawn, since its releases would escape the block's total. A
    second ``budget()`` opened inside the block is refused (RuntimeError), unless it names
    the same accountant (``budget(accountant=acc)``, a no-op). Inside
    :func:`nonprivate`, nothing is charged, in a block or not. A context copied inside the
    block keeps the accountant after the block ends; an accountant the block opened from
    ``path`` is closed then, and refuses further charges.

    Examples
    --------
    >>> import knorm
    >>> import knorm.stats as dp
    >>> with knorm.budget(total_epsilon=1.0) as acc:
    ...     mean = dp.mean([1.0, 2.0, 3.0], (0, 5), epsilon=0.5)
    ...     count = dp.count([1, 0, 1], epsilon=0.25, neighbours="add_remove")
    >>> acc.spent, mean.ledger_entry.position, count.ledger_entry.position
    (0.75, 0, 1)
    >>> with knorm.budget(total_epsilon=1.0):
    ...     with knorm.budget(total_epsilon=1.0):
    ...         pass
    Traceback (most recent call last):
    ...
    RuntimeError: knorm.budget blocks do not nest: ...
    """
    global _OPEN_BLOCKS
    active = _BUDGET.get()
    if active is not None and (accountant is None or accountant is not active):
        raise RuntimeError(
            f"knorm.budget blocks do not nest: a block charging {active!r} is already open in this context, and a "
            "second one would shadow it (the releases inside would escape its total). Charge the open block "
            "(every release inside it is), or end it first. Nothing was opened."
        )
    acc, owned = _budget_accountant(total_epsilon, total_rho, path, accountant)
    token = _BUDGET.set(acc)
    with _OPEN_LOCK:
        _OPEN_BLOCKS += 1
    try:
        yield acc
    finally:
        with _OPEN_LOCK:
            _OPEN_BLOCKS -= 1
        _BUDGET.reset(token)
        if owned:
            acc.close()


def resolve_accountant(accountant, owner):
    """Return the accountant a release charges: ``accountant``, else the enclosing :func:`budget`'s.

    The one place where the block's accountant is looked up (``ReleaseRules._publish``,
    and the estimators' check of a fit's whole budget before its first release).

    Parameters
    ----------
    accountant : PrivacyAccountant or None
        The one the caller passed.
    owner : str
        The public function or method, for the message.

    Returns
    -------
    PrivacyAccountant or None
        The block's accountant inside a block; outside, ``accountant``.

    Raises
    ------
    ValueError
        Inside a block, if ``accountant`` is another accountant than the block's.
    """
    active = _BUDGET.get()
    if active is None or accountant is None or accountant is active:
        return active if active is not None else accountant
    raise ValueError(
        f"The 'accountant' parameter of {owner} must be None or the accountant of the enclosing knorm.budget "
        f"block, which charges every release inside it ({active!r}). Got another accountant, {accountant!r}, "
        "instead: its charge would escape the block's total. Nothing was charged. Pass no accountant, or make "
        "the release outside the block."
    )


def _warn_outside_block(owner):
    """Warn about a release charged to nothing while a budget() block is open in another context."""
    with _OPEN_LOCK:
        open_elsewhere = _OPEN_BLOCKS
    if not open_elsewhere:
        return
    warnings.warn(
        f"A release ({owner}) was made with no accountant, outside every knorm.budget block of its context, while "
        f"{open_elsewhere} block(s) are open elsewhere in this process (another thread or task): it was NOT charged "
        "to any budget. A thread does not inherit the block it is started in (contextvars); run its work in "
        "contextvars.copy_context().run(...), open knorm.budget(accountant=acc) in the thread, or pass accountant=.",
        PrivacyWarning,
        stacklevel=4,
    )


class ReleaseRules:
    """The one path of the privacy rules, shared by every mechanism that publishes.

    A mechanism inherits :meth:`_publish` and provides ``_record(value, *, epsilon, label,
    entry, method, noiseless=False, describe=None, **record)``, which builds its
    :class:`~knorm.mechanisms.Release`, and a ``repr`` that describes it for the ledger.
    """

    _record: Callable[..., Any]  # each mechanism defines its own

    def _publish(
        self, draw, *, epsilon, rng, accountant, label, owner, method="K-norm", describe=None, record=None, rho=None
    ):
        """Apply the privacy rules, then draw the noise: every release goes through here.

        The rules, in order: the accountant is checked and charged (with the mechanism's
        description and the seed, whose state it fingerprints under its secret salt and
        refuses to see twice), or, without one, a fixed seed earns a PrivacyWarning (on
        every release from an explicit seed, and on every reuse of a Generator's state in
        this process); only then is noise drawn and the value built. Inside
        :func:`nonprivate` nothing is charged and the record says so.

        Without ``accountant``, the accountant of the enclosing :func:`budget` block is
        charged (:func:`resolve_accountant`); inside a block an explicit one must be the
        block's.

        A rho-zCDP release (:class:`~knorm.mechanisms.GaussianMechanism`) passes ``rho``
        (and ``epsilon=None``): the accountant is charged ``spend(rho=rho)``, which a pure
        epsilon ledger refuses, and ``rho`` goes to the record.
        """
        gen = check_rng(rng, owner)  # a Generator is returned as is: its state is read before any draw
        record = dict(record or {}, method=method, describe=describe)
        if rho is not None:
            record["rho"] = rho
        if nonprivate_active():
            return self._record(draw(gen), epsilon=math.inf, label=label, entry=None, noiseless=True, **record)
        if accountant is not None and not callable(getattr(accountant, "spend", None)):
            raise TypeError(
                f"The 'accountant' parameter of {owner} must be a PrivacyAccountant (an object with "
                f"a 'spend' method) or None. Got {accountant!r} instead."
            )
        accountant = resolve_accountant(accountant, owner)  # the enclosing budget() block's, if any
        if accountant is None:
            _warn_outside_block(owner)
        entry = None
        if accountant is not None:
            if rho is not None:
                entry = accountant.spend(rho=rho, label=label, description=f"{method}: {self!r}", seed=rng)
            else:
                entry = accountant.spend(epsilon, label, description=f"{method}: {self!r}", seed=rng)
        elif rng is not None:
            warn_fixed_seed(rng, gen)
        return self._record(draw(gen), epsilon=epsilon, label=label, entry=entry, **record)
