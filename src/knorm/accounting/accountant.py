"""The privacy accountant: one ledger type, kept in memory or in a file."""

from __future__ import annotations

import math
import os
from pathlib import Path

from knorm._seeds import legacy_fingerprint, state_key
from knorm._validation import check_positive, check_probability, check_rng, param_error
from knorm.accounting.ledger import Ledger
from knorm.accounting.memory import ELSEWHERE_FIX, MemoryLedger
from knorm.accounting.sqlite import SQLiteLedger
from knorm.accounting.zcdp import epsilon_from_rho, rho_from_epsilon

__all__ = ["PrivacyAccountant", "PureEpsilonLedgerError"]


class PureEpsilonLedgerError(ValueError):
    """A rho-zCDP release was charged to a pure epsilon ledger; nothing was charged."""


PureEpsilonLedgerError.__module__ = "knorm.accounting"


def _check_total(value, owner, name="total_epsilon"):
    # inf is refused like 0 or nan: the non-private limit accepts every charge, so it is no budget.
    return check_positive(value, name, owner)


def _check_totals(total_epsilon, total_rho, owner, *, required=True):
    """(budget, total): exactly one of total_epsilon and total_rho (or neither, when not required)."""
    if total_epsilon is not None and total_rho is not None:
        raise ValueError(
            f"The 'total_epsilon' and 'total_rho' parameters of {owner} are exclusive: a ledger keeps one budget, "
            f"pure epsilon-DP or rho-zCDP. Got total_epsilon={total_epsilon!r} and total_rho={total_rho!r} instead."
        )
    if total_rho is not None:
        return "rho", _check_total(total_rho, owner, "total_rho")
    if total_epsilon is None:
        if not required:
            return None, None
        err = param_error("total_epsilon", owner, "a float in the range (0, inf)", None, TypeError)
        raise TypeError(f"{err} A ledger needs a budget: total_epsilon (pure epsilon-DP) or total_rho (rho-zCDP).")
    return "epsilon", _check_total(total_epsilon, owner)


def _seed_keys(seed):
    """The secret state key and the legacy fingerprint of ``seed``, or (None, None) for fresh entropy."""
    if seed is None:
        return None, None
    gen = check_rng(seed, "PrivacyAccountant.spend")  # a Generator is returned as is: nothing is drawn
    return state_key(gen), legacy_fingerprint(seed)


def _check_path(path, owner):
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise param_error("path", owner, "a str or an os.PathLike", path, TypeError)
    path = os.fspath(path)
    if isinstance(path, bytes) or not path:
        raise param_error("path", owner, "a non-empty str path", path, TypeError)
    # Absolute, so that a pickled accountant reopens the same file from a worker with another cwd.
    return Path(os.path.abspath(path))


def _reopen(path, total, ledger_id, budget="epsilon"):
    """Unpickle a file accountant: reopen its file, which must still hold the same ledger."""
    return PrivacyAccountant._from_store(SQLiteLedger(Path(path), total, budget=budget, ledger_id=ledger_id))


_NO_EPSILON = (
    "This PrivacyAccountant keeps a rho (zCDP) budget: it has no total_epsilon and no epsilon spent, because "
    "rho-zCDP implies no pure epsilon-DP guarantee. Read total_rho, spent_rho and remaining_rho, and "
    "epsilon(delta) for the (epsilon, delta)-DP guarantee of what was spent."
)


class PrivacyAccountant:
    """A privacy budget ledger under basic sequential composition, in memory or in a file.

    It tracks the epsilon spent on one dataset and refuses, before anything is
    released, any charge that would take the total past ``total_epsilon``, and any
    charge drawn from a fixed seed (or Generator state) it has already recorded. Create
    it in memory with ``PrivacyAccountant(total_epsilon)``, for one process, or keep it
    in a file shared by threads, processes, workers and sessions: :meth:`create` makes
    the file once, :meth:`open` opens it afterwards.

    Parameters
    ----------
    total_epsilon : float, optional
        The whole budget in pure epsilon-DP, in (0, inf). It is fixed for the life of the
        accountant.
    total_rho : float, optional
        Instead of ``total_epsilon`` (exactly one of the two): the whole budget in rho-zCDP,
        in (0, inf). A rho ledger takes zCDP releases (charged their rho) and pure
        epsilon-DP releases (charged eps^2 / 2, Bun & Steinke 2016, Proposition 1.4); what it
        spent converts to (epsilon, delta)-DP with :meth:`epsilon`.

    See Also
    --------
    PrivacyAccountant.create : A new ledger in an SQLite file.
    PrivacyAccountant.open : An existing ledger file.

    Notes
    -----
    Releasing mechanisms that are eps_1-, ..., eps_k-DP on the same data is
    (eps_1 + ... + eps_k)-DP: basic sequential composition (Dwork & Roth 2014,
    Theorem 3.14); releasing rho_1-, ..., rho_k-zCDP mechanisms is
    (rho_1 + ... + rho_k)-zCDP (Bun & Steinke 2016, Lemma 2.3), and an eps-DP mechanism is
    (eps^2 / 2)-zCDP (their Proposition 1.4). A pure epsilon ledger refuses a rho charge
    (:class:`PureEpsilonLedgerError`): rho-zCDP implies no pure epsilon-DP guarantee. On a
    rho ledger the rule below applies to the rho charges. So :meth:`spend` accepts a charge eps iff
    ``fsum(spent + [eps]) <= total_epsilon * (1 + 1e-12)``; the relative tolerance lets a
    budget split in equal parts be spent exactly despite rounding (three charges of
    0.1 on a total of 0.3). Check and record are atomic: the in-memory ledger holds a
    lock across both, the file ledger one SQLite write transaction.

    An in-memory accountant belongs to its process. Pickling it raises, and a copy
    inherited by a forked child refuses to charge: either copy would spend the budget
    again, and this ledger would never see it. ``copy.copy`` and ``copy.deepcopy``
    return the accountant itself, so that ``sklearn.clone`` in cross-validation or
    grid search keeps charging the one ledger.

    The ledger guards one budget; it cannot tell whether two charges concern the
    same dataset (use one accountant per dataset), and it offers no refunds. What
    the file back end guarantees across processes and sessions, and what it does
    not, is in the Notes of :meth:`open`.

    References
    ----------
    C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
    Foundations and Trends in Theoretical Computer Science 9(3-4), 2014, Theorem 3.14.
    M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications, Extensions,
    and Lower Bounds", TCC 2016, arXiv:1605.02065, Propositions 1.3 and 1.4, Lemma 2.3.

    Examples
    --------
    >>> zc = PrivacyAccountant(total_rho=0.5)
    >>> zc.spend(rho=0.125, label="gaussian mean").rho
    0.125
    >>> zc.spend(0.5, "laplace count").rho  # pure epsilon = 0.5 is charged 0.5^2 / 2
    0.12500000000000003
    >>> round(zc.spent_rho, 6), round(zc.epsilon(1e-6), 4)
    (0.25, 3.5423)
    >>> acc = PrivacyAccountant(1.0)
    >>> entry = acc.spend(0.25, "mean", description="l2 K-norm, sensitivity 2")
    >>> entry.position, entry.epsilon, acc.remaining
    (0, 0.25, 0.75)
    >>> acc.spend(1.0, "regression")
    Traceback (most recent call last):
    ...
    knorm.accounting.BudgetExceededError: Spending epsilon=1 on 'regression' would exceed the total 1 (spent 0.25, remaining 0.75).
    >>> acc.total_epsilon = 2.0
    Traceback (most recent call last):
    ...
    AttributeError: The total_epsilon of a PrivacyAccountant is fixed when it is created (1.0); refusing to set it to 2.0. A budget that can be raised protects nothing.
    """

    __slots__ = ("_store", "__weakref__")

    def __init__(self, total_epsilon=None, *, total_rho=None):
        budget, total = _check_totals(total_epsilon, total_rho, "PrivacyAccountant")
        self._store = MemoryLedger(total, budget)

    @classmethod
    def _from_store(cls, store):
        self = cls.__new__(cls)
        self._store = store
        return self

    @classmethod
    def create(cls, path, *, total_epsilon=None, total_rho=None):
        """Create a new ledger in the SQLite file ``path``, which must not exist.

        Parameters
        ----------
        path : str or os.PathLike
            The new file. Nothing may be at this path, not even an empty file: a ledger
            is created once, and an existing file is never taken over. The path is made
            absolute now, so that a pickled accountant reopens the same file from any
            working directory.
        total_epsilon : float, optional
            The whole budget in pure epsilon-DP, in (0, inf), stored in the file and fixed
            for its life.
        total_rho : float, optional
            Instead of ``total_epsilon`` (exactly one of the two): the whole budget in
            rho-zCDP. The file is then a rho ledger (format version 2), which versions of
            knorm that read only epsilon ledgers refuse rather than misread.

        Returns
        -------
        PrivacyAccountant
            The accountant, charging the new file. Close it with :meth:`close`, or use it
            as a context manager; later sessions use :meth:`open`.

        Raises
        ------
        FileExistsError
            If anything exists at ``path``.
        IsADirectoryError
            If ``path`` is a directory.
        FileNotFoundError
            If the directory of ``path`` does not exist.
        PermissionError
            If that directory is read-only.

        See Also
        --------
        PrivacyAccountant.open : Open the ledger in a later session.

        Notes
        -----
        The file is claimed atomically (``O_CREAT | O_EXCL``), so two processes creating
        the same path cannot both succeed. The ledger gets a random id and a secret
        random salt, the key of its seed fingerprints (HMAC-SHA256), which never leaves
        the file. What the file back end guarantees is in the Notes of :meth:`open`.

        Examples
        --------
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "census-budget.sqlite")
        >>> with PrivacyAccountant.create(path, total_epsilon=1.0) as acc:
        ...     entry = acc.spend(0.5, "mean income")
        >>> PrivacyAccountant.create(path, total_epsilon=1.0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        FileExistsError: '...census-budget.sqlite' exists already: a privacy ledger is created once. ...
        >>> tmp.cleanup()
        """
        path = _check_path(path, "PrivacyAccountant.create")
        budget, total = _check_totals(total_epsilon, total_rho, "PrivacyAccountant.create")
        return cls._from_store(SQLiteLedger(path, total, budget=budget, create=True))

    @classmethod
    def open(cls, path, *, total_epsilon=None, total_rho=None):
        """Open the existing ledger stored in the SQLite file ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file, made by :meth:`create`. It is made absolute now, so that a
            pickled accountant reopens the same file from any working directory.
        total_epsilon : float or None, default None
            None takes the stored total. A float must equal it (a check, for scripts that
            state the budget they expect); it never creates a ledger.
        total_rho : float or None, default None
            The same check for a rho ledger. Stating the total in the other unit than
            the file's is an error: an epsilon total is never read as rho, nor back.

        Returns
        -------
        PrivacyAccountant
            The accountant, charging the file. Close it with :meth:`close`, or use it
            as a context manager.

        Raises
        ------
        FileNotFoundError
            If nothing exists at ``path`` (create the ledger with :meth:`create`).
        IsADirectoryError
            If ``path`` is a directory.
        PermissionError
            If the file or its directory is read-only: a ledger must be writable to be
            charged.
        ValueError
            If the file is empty, truncated, damaged or not a knorm privacy ledger, or
            ``total_epsilon`` differs from the stored total.
        OSError
            If SQLite cannot open the file for another reason.

        See Also
        --------
        PrivacyAccountant.create : Create a ledger file.
        PrivacyAccountant : The ledger in memory.

        Notes
        -----
        Opening never creates. In earlier versions ``open(path, total_epsilon=...)`` made a
        new ledger when the file was missing or empty: a ledger deleted or truncated to 0
        bytes then came back as a fresh, full budget, and its spending was lost without a
        word. Now a missing, empty, truncated or damaged file is an error (restore it
        from a backup), and a new ledger is made only by :meth:`create`. Every page of the
        file is checked (``PRAGMA quick_check``) when it is opened. A ledger written
        before salted fingerprints is given its secret salt when it is first opened; its
        old, unsalted fingerprints still refuse the int and SeedSequence seeds they
        recorded.

        What the file back end guarantees:

        - Every :meth:`spend` is one SQLite ``BEGIN IMMEDIATE`` transaction: it takes the
          file's write lock, reads the entries, checks the charge and inserts it. Writers
          are serialised by SQLite's file locking, so threads, processes (fork or spawn),
          joblib/loky and Dask workers, and separate Python sessions or CLI calls, over
          any span of time, never overspend together. A writer that finds the file busy
          waits up to 60 s, then raises TimeoutError without charging.
        - A charge is committed durably (``synchronous = FULL``) before :meth:`spend`
          returns, that is, before any noise is drawn.
        - Pickling pickles the path, the total and the ledger's id; unpickling reopens
          the same file, so a worker charges the one ledger. It refuses if the file is
          gone or holds another ledger: a new file would be a new, full budget.
          ``copy.copy`` and ``copy.deepcopy`` return the accountant itself.
        - The entries table is append-only (SQL triggers abort UPDATE and DELETE).

        What it does not guarantee:

        - Protection against anyone who can write the file: they can drop the triggers,
          edit or delete it. Keep it where only the data curator writes.
        - Locking on file systems where SQLite's locks do not work (some NFS and SMB
          mounts). A Dask worker on another machine must reach the same file, at the
          same absolute path, on a shared file system that supports SQLite locking.
        - That the charges concern one dataset: use one ledger per dataset.

        Examples
        --------
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "census-budget.sqlite")
        >>> PrivacyAccountant.create(path, total_epsilon=1.0).close()
        >>> with PrivacyAccountant.open(path) as acc:
        ...     entry = acc.spend(0.5, "mean income")
        >>> with PrivacyAccountant.open(path) as acc:  # a later session: the total is stored
        ...     acc.total_epsilon, acc.spent, acc.ledger[0].label
        (1.0, 0.5, 'mean income')
        >>> tmp.cleanup()
        """
        path = _check_path(path, "PrivacyAccountant.open")
        budget, total = _check_totals(total_epsilon, total_rho, "PrivacyAccountant.open", required=False)
        return cls._from_store(SQLiteLedger(path, total, budget=budget))

    # -- the budget -------------------------------------------------------------------------------------------
    @property
    def budget(self):
        """The ledger's unit: 'epsilon' (pure epsilon-DP) or 'rho' (rho-zCDP)."""
        return self._store.budget

    @property
    def total_epsilon(self):
        """The whole pure epsilon budget, a float fixed when the accountant is created (read-only).

        A rho ledger has none: reading it raises AttributeError (see :attr:`total_rho`).
        """
        if self._store.budget == "rho":
            raise AttributeError(_NO_EPSILON)
        return self._store.total

    @total_epsilon.setter
    def total_epsilon(self, value):
        raise AttributeError(
            f"The total_epsilon of a PrivacyAccountant is fixed when it is created ({self._store.total!r}); "
            f"refusing to set it to {value!r}. A budget that can be raised protects nothing."
        )

    @total_epsilon.deleter
    def total_epsilon(self):
        raise AttributeError(
            "The total_epsilon of a PrivacyAccountant is fixed when it is created; it cannot be deleted."
        )

    @property
    def total_rho(self):
        """The whole rho budget of a rho ledger (read-only), or None on a pure epsilon ledger."""
        return self._store.total if self._store.budget == "rho" else None

    @property
    def spent(self):
        """The epsilon spent so far, the exact sum of the ledger (``math.fsum``).

        A rho ledger has none: reading it raises AttributeError (see :attr:`spent_rho`).
        """
        if self._store.budget == "rho":
            raise AttributeError(_NO_EPSILON)
        return math.fsum(self._store.charges())

    @property
    def remaining(self):
        """The largest pure epsilon a release can still be charged, never below 0.

        On an epsilon ledger ``total_epsilon - spent``. On a rho ledger, where a pure
        eps-DP release costs eps^2 / 2, it is sqrt(2 remaining_rho) (rounded down).
        """
        # A charge accepted within the relative tolerance can leave -1e-17: that is 0 left.
        if self._store.budget == "rho":
            return math.nextafter(math.sqrt(2 * self.remaining_rho), 0.0) if self.remaining_rho else 0.0
        return max(self._store.total - self.spent, 0.0)

    @property
    def spent_rho(self):
        """The rho spent so far.

        On a rho ledger the exact sum of its charges (``math.fsum``). On a pure epsilon
        ledger the zCDP of what it spent: sum of eps_i^2 / 2 (Bun & Steinke 2016,
        Proposition 1.4 and Lemma 2.3), each rounded up.
        """
        if self._store.budget == "rho":
            return math.fsum(self._store.charges())
        return math.fsum(rho_from_epsilon(eps) for eps in self._store.charges())

    @property
    def remaining_rho(self):
        """The rho left on a rho ledger, ``total_rho - spent_rho``, never below 0; None on an epsilon ledger."""
        if self._store.budget != "rho":
            return None
        return max(self._store.total - self.spent_rho, 0.0)

    def epsilon(self, delta):
        """Return an epsilon such that everything charged so far is (epsilon, delta)-DP.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        float
            On a rho ledger, the tighter of Bun & Steinke (2016, Proposition 1.3),
            eps = rho + 2 sqrt(rho log(1/delta)), and Canonne, Kamath & Steinke (2020,
            Proposition 12 / Corollary 13), applied to :attr:`spent_rho`
            (:func:`knorm.accounting.zcdp.epsilon_from_rho`). On a pure epsilon ledger the
            smaller of :attr:`spent` (which holds with delta = 0) and that conversion of
            the spent rho. Rounded up.

        Examples
        --------
        >>> acc = PrivacyAccountant(total_rho=1.0)
        >>> entry = acc.spend(rho=0.5, label="gaussian")
        >>> round(acc.epsilon(1e-6), 4)
        5.2215
        """
        delta = check_probability(delta, "delta", "PrivacyAccountant.epsilon")
        converted = epsilon_from_rho(self.spent_rho, delta)
        if self._store.budget == "rho":
            return converted
        return min(self.spent, converted)

    @property
    def ledger(self):
        """The accepted charges, a :class:`Ledger` (a list of :class:`LedgerEntry`, in order, a copy) that prints as a table."""
        return Ledger(self._store.entries())

    @property
    def path(self):
        """The ledger file, an absolute ``pathlib.Path``, or None in memory."""
        return self._store.path

    def spend(self, epsilon=None, label="", *, rho=None, description="", seed=None):
        """Charge ``epsilon`` (or ``rho``) for the release ``label``, or raise without charging anything.

        Call it before releasing: the release may go ahead only if it returns.

        Parameters
        ----------
        epsilon : float, optional
            The privacy loss of a pure epsilon-DP release, in (0, inf). On a rho ledger it
            is charged eps^2 / 2 (rounded up; Bun & Steinke 2016, Proposition 1.4).
        label : str, default ''
            What is released (stored with ``str``).
        rho : float, optional
            Instead of ``epsilon`` (exactly one of the two): the rho of a rho-zCDP release,
            in (0, inf). Only a rho ledger accepts it.
        description : str, default ''
            How the release is made: its mechanism, ball and sensitivity (stored with ``str``).
        seed : None, int, sequence of int, SeedSequence, BitGenerator or Generator, default None
            The ``rng`` the release draws its noise from, not yet drawn from. None means
            fresh entropy from the operating system. Anything else is a fixed seed,
            identified by the state of the bit generator it gives (``7``, ``[7]``,
            ``SeedSequence(7)`` and an unused ``default_rng(7)`` are one seed; a Generator
            that has advanced is a new one). The ledger keeps a salted fingerprint of
            that state and refuses it a second time; the entry says only ``fixed_seed``.

        Returns
        -------
        LedgerEntry
            The recorded entry.

        Raises
        ------
        BudgetExceededError
            If the charge would take the spent total past ``total_epsilon`` (or
            ``total_rho``), beyond a relative tolerance of 1e-12.
        PureEpsilonLedgerError
            If ``rho`` is charged to a pure epsilon ledger: rho-zCDP does not imply
            pure epsilon-DP.
        SeedReuseError
            If the ledger already holds a charge drawn from the same seed (state).
        ValueError
            If ``epsilon`` (``rho``) is not in (0, inf), both or neither are given, or the
            file ledger is closed.
        TypeError
            If ``epsilon`` is not a real number, or ``seed`` not a seed (a bool, a float).
        RuntimeError
            If an in-memory accountant is charged from a forked child process.
        TimeoutError
            If a file ledger stays locked by another writer for 60 s.

        Notes
        -----
        Basic sequential composition (Dwork & Roth 2014, Theorem 3.14): the releases
        recorded are together ``spent``-DP. The checks and the record are atomic, so
        concurrent calls cannot both pass a check on the same state.

        Two releases drawn from the same fixed seed add the same noise vector V, so on
        neighbouring datasets X, X' their difference (T(X) + V) - (T(X') + V) =
        T(X) - T(X') carries no noise at all: a repeated seed is refused. Its fingerprint
        is HMAC-SHA256 of the bit generator's state under the ledger's secret salt, so
        nothing the ledger publishes (an entry, a ``Release``) lets anyone recover the
        seed by trying seeds.

        References
        ----------
        C. Dwork and A. Roth, "The Algorithmic Foundations of Differential Privacy",
        2014, Theorem 3.14.

        Examples
        --------
        >>> acc = PrivacyAccountant(0.3)
        >>> [acc.spend(0.1, f"part {i}").position for i in range(3)]  # 0.1 * 3 > 0.3 in floats
        [0, 1, 2]
        >>> acc.remaining
        0.0
        >>> acc = PrivacyAccountant(1.0)
        >>> acc.spend(0.1, "count", seed=12345).fixed_seed
        True
        >>> acc.spend(0.1, "count again", seed=[12345])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        knorm.accounting.SeedReuseError: Refusing to charge 'count again': it is drawn from the same fixed seed, ...
        """
        owner = "PrivacyAccountant.spend"
        if (epsilon is None) == (rho is None):
            raise ValueError(
                f"{owner} charges exactly one of 'epsilon' (a pure epsilon-DP release) and 'rho' (a rho-zCDP "
                f"release). Got epsilon={epsilon!r} and rho={rho!r} instead."
            )
        # inf is the non-private limit: no finite budget can pay for it (check_positive refuses it).
        if rho is not None:
            rho = check_positive(rho, "rho", owner)
            if self._store.budget != "rho":
                raise PureEpsilonLedgerError(
                    f"Refusing to charge rho={rho:g} for {str(label)!r} to a pure epsilon ledger "
                    f"(total_epsilon={self._store.total:g}): a rho-zCDP release has no pure epsilon-DP guarantee "
                    "(zCDP implies only (epsilon, delta)-DP with delta > 0), so no epsilon charge would be true. "
                    "Charge it to a rho ledger, PrivacyAccountant(total_rho=...) or "
                    "PrivacyAccountant.create(path, total_rho=...). Nothing was charged."
                )
            key, legacy = _seed_keys(seed)
            return self._store.append(rho, str(label), str(description), key, legacy)
        epsilon = check_positive(epsilon, "epsilon", owner)
        key, legacy = _seed_keys(seed)
        if self._store.budget == "rho":
            charge = rho_from_epsilon(epsilon)
            return self._store.append(charge, str(label), str(description), key, legacy, epsilon=epsilon)
        return self._store.append(epsilon, str(label), str(description), key, legacy)

    # -- life cycle -------------------------------------------------------------------------------------------
    def close(self):
        """Close the ledger file; the entries stay in it. In memory, do nothing.

        After closing, a file accountant refuses to charge or read; reopen it with
        :meth:`open`. Closing twice is harmless.
        """
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __copy__(self):
        # One dataset, one budget: copies (e.g. by sklearn.clone in cross-validation)
        # must charge the same ledger, or each clone would get a fresh budget.
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        if self._store.path is None:
            raise TypeError(
                "An in-memory PrivacyAccountant cannot be pickled: a copy in another process (a joblib/loky or "
                "Dask worker, multiprocessing, a saved model reloaded later) would spend the budget again, and its "
                f"charges would never reach this ledger. {ELSEWHERE_FIX}"
            )
        return _reopen, (str(self._store.path), self._store.total, self._store.ledger_id, self._store.budget)

    def __repr__(self):
        store = self._store
        unit = store.budget
        head = f"PrivacyAccountant(total_{unit}={store.total:g}"
        if store.closed:
            return f"{head}, {store.describe()})"
        charges = store.charges()
        spent = math.fsum(charges)
        tail = f", {store.describe()}" if store.describe() else ""
        word = "" if unit == "epsilon" else "_rho"
        return (
            f"{head}, spent{word}={spent:g}, remaining{word}={max(store.total - spent, 0.0):g}, "
            f"entries={len(charges)}{tail})"
        )
