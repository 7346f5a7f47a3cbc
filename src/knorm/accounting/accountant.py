"""The privacy accountant: one ledger type, kept in memory or in a file."""

from __future__ import annotations

import math
import os
from pathlib import Path

from knorm._seeds import legacy_fingerprint, state_key
from knorm._validation import check_positive, check_rng, param_error
from knorm.accounting.memory import ELSEWHERE_FIX, MemoryLedger
from knorm.accounting.sqlite import SQLiteLedger

__all__ = ["PrivacyAccountant"]


def _check_total(value, owner):
    # inf is refused like 0 or nan: the non-private limit accepts every charge, so it is no budget.
    return check_positive(value, "total_epsilon", owner)


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


def _reopen(path, total_epsilon, ledger_id):
    """Unpickle a file accountant: reopen its file, which must still hold the same ledger."""
    return PrivacyAccountant._from_store(SQLiteLedger(Path(path), total_epsilon, ledger_id=ledger_id))


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
    total_epsilon : float
        The whole budget, in (0, inf). It is fixed for the life of the accountant.

    See Also
    --------
    PrivacyAccountant.create : A new ledger in an SQLite file.
    PrivacyAccountant.open : An existing ledger file.

    Notes
    -----
    Releasing mechanisms that are eps_1-, ..., eps_k-DP on the same data is
    (eps_1 + ... + eps_k)-DP: basic sequential composition (Dwork & Roth 2014,
    Theorem 3.14). So :meth:`spend` accepts a charge eps iff
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

    Examples
    --------
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

    def __init__(self, total_epsilon):
        self._store = MemoryLedger(_check_total(total_epsilon, "PrivacyAccountant"))

    @classmethod
    def _from_store(cls, store):
        self = cls.__new__(cls)
        self._store = store
        return self

    @classmethod
    def create(cls, path, *, total_epsilon):
        """Create a new ledger in the SQLite file ``path``, which must not exist.

        Parameters
        ----------
        path : str or os.PathLike
            The new file. Nothing may be at this path, not even an empty file: a ledger
            is created once, and an existing file is never taken over. The path is made
            absolute now, so that a pickled accountant reopens the same file from any
            working directory.
        total_epsilon : float
            The whole budget, in (0, inf), stored in the file and fixed for its life.

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
        total = _check_total(total_epsilon, "PrivacyAccountant.create")
        return cls._from_store(SQLiteLedger(path, total, create=True))

    @classmethod
    def open(cls, path, *, total_epsilon=None):
        """Open the existing ledger stored in the SQLite file ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file, made by :meth:`create`. It is made absolute now, so that a
            pickled accountant reopens the same file from any working directory.
        total_epsilon : float or None, default None
            None takes the stored total. A float must equal it (a check, for scripts that
            state the budget they expect); it never creates a ledger.

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
        total = None if total_epsilon is None else _check_total(total_epsilon, "PrivacyAccountant.open")
        return cls._from_store(SQLiteLedger(path, total))

    # -- the budget -------------------------------------------------------------------------------------------
    @property
    def total_epsilon(self):
        """The whole budget, a float fixed when the accountant is created (read-only)."""
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
    def spent(self):
        """The epsilon spent so far, the exact sum of the ledger (``math.fsum``)."""
        return math.fsum(self._store.epsilons())

    @property
    def remaining(self):
        """The epsilon left, ``total_epsilon - spent``, never below 0."""
        # A charge accepted within the relative tolerance can leave -1e-17: that is 0 left.
        return max(self._store.total - self.spent, 0.0)

    @property
    def ledger(self):
        """The accepted charges, a list of :class:`LedgerEntry` in order (a copy)."""
        return self._store.entries()

    @property
    def path(self):
        """The ledger file, an absolute ``pathlib.Path``, or None in memory."""
        return self._store.path

    def spend(self, epsilon, label="", *, description="", seed=None):
        """Charge ``epsilon`` for the release ``label``, or raise without charging anything.

        Call it before releasing: the release may go ahead only if it returns.

        Parameters
        ----------
        epsilon : float
            The release's privacy loss, in (0, inf).
        label : str, default ''
            What is released (stored with ``str``).
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
            If the charge would take the spent total past ``total_epsilon`` (beyond a
            relative tolerance of 1e-12).
        SeedReuseError
            If the ledger already holds a charge drawn from the same seed (state).
        ValueError
            If ``epsilon`` is not in (0, inf), or the file ledger is closed.
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
        # inf is the non-private limit: no finite budget can pay for it (check_positive refuses it).
        epsilon = check_positive(epsilon, "epsilon", "PrivacyAccountant.spend")
        key, legacy = _seed_keys(seed)
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
        return _reopen, (str(self._store.path), self._store.total, self._store.ledger_id)

    def __repr__(self):
        store = self._store
        head = f"PrivacyAccountant(total_epsilon={store.total:g}"
        if store.closed:
            return f"{head}, {store.describe()})"
        epsilons = store.epsilons()
        spent = math.fsum(epsilons)
        tail = f", {store.describe()}" if store.describe() else ""
        return f"{head}, spent={spent:g}, remaining={max(store.total - spent, 0.0):g}, entries={len(epsilons)}{tail})"
