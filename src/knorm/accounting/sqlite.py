"""The file back end: an append-only SQLite database shared by threads, processes and sessions.

It is the ledger of :meth:`knorm.accounting.PrivacyAccountant.open`. Every charge
is one ``BEGIN IMMEDIATE`` transaction: it takes the database's write lock, reads the
entries, checks the charge and inserts it, then commits, so two writers (threads,
processes, joblib or Dask workers, separate sessions) are serialised by SQLite's file
lock and never both pass the check on the same state. Writers that find the file
busy wait for up to ``BUSY_TIMEOUT`` seconds.

File layout (format 'knorm-privacy-ledger', version 1):

- ``meta(key, value)``: format, version, total_epsilon (``repr`` of the float, so it reads
  back exactly), ledger_id (a random UUID telling this ledger from a later one at the
  same path) and created (ISO 8601, UTC);
- ``entries(position, epsilon, label, mechanism, time, seed_fingerprint)``, with
  ``seed_fingerprint`` UNIQUE, and triggers that abort any UPDATE or DELETE of either table.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
import weakref
from datetime import datetime, timezone
from typing import Any

from knorm.accounting.ledger import LedgerEntry, check_charge

__all__ = ["SQLiteLedger", "BUSY_TIMEOUT", "FORMAT", "VERSION"]

FORMAT = "knorm-privacy-ledger"
VERSION = "1"
# Seconds a writer waits for the lock. A charge holds it for milliseconds; this only
# runs out if something else (say an open sqlite3 shell transaction) holds the file.
BUSY_TIMEOUT = 60.0

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE entries ("
    " position INTEGER PRIMARY KEY,"
    " epsilon REAL NOT NULL CHECK (epsilon > 0 AND epsilon < 9e999),"  # 9e999 reads as +inf in SQLite
    " label TEXT NOT NULL,"
    " mechanism TEXT NOT NULL,"
    " time TEXT NOT NULL,"
    " seed_fingerprint TEXT UNIQUE)",
    # Append-only against accidental edits; not against someone who can drop the triggers.
    *(
        f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only'); END"
        for table in ("meta", "entries")
        for op in ("UPDATE", "DELETE")
    ),
)

# Connections inherited by forked children: never used or closed there, since closing a
# copy of the parent's connection can release the child's own POSIX locks on the file
# (sqlite.org/howtocorrupt.html, section 2.6). Kept referenced so that nothing closes them.
_INHERITED: list = []
_LIVE: weakref.WeakSet = weakref.WeakSet()


def _after_fork_in_child():
    for ledger in list(_LIVE):
        ledger._forked()


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _close_quietly(conn):
    try:
        conn.close()
    except sqlite3.Error:  # pragma: no cover - closing is best effort at garbage collection
        pass


class SQLiteLedger:
    """Entries in an SQLite file, checked and inserted in one write transaction.

    Parameters
    ----------
    path : pathlib.Path
        The file, absolute.
    total : float or None
        The total budget, validated; None to take the stored one (the file must exist).
    must_exist : bool, default False
        Refuse to create the file (for unpickling: a missing file must not become a new,
        full budget).
    ledger_id : str or None, default None
        If given, the stored ledger_id must equal it (for unpickling).
    """

    def __init__(self, path, total, *, must_exist=False, ledger_id=None):
        self.path = path
        self._lock = threading.Lock()
        self._conn: Any = None
        self._finalizer: Any = None
        self.closed = False
        exists = path.exists()
        if not exists and (total is None or must_exist):
            if must_exist:
                raise FileNotFoundError(
                    f"The privacy ledger file '{path}' no longer exists, so this PrivacyAccountant cannot be "
                    "reopened (it was pickled, e.g. to send it to a worker). A new file would be a new, full "
                    "budget; refusing."
                )
            raise FileNotFoundError(
                f"The 'total_epsilon' parameter of PrivacyAccountant.open must be a float in the range (0, inf) "
                f"to create a new ledger: no file exists at '{path}' (check the path if you meant to reopen one). "
                "Got None instead."
            )
        self._connect("rw" if exists or must_exist else "rwc")
        try:
            self.total, self.ledger_id = self._initialise(total, ledger_id)
        except BaseException:
            self.close()
            raise
        _LIVE.add(self)

    # -- connection -----------------------------------------------------------------------------------------
    def _connect(self, mode):
        try:
            # A URI so that no path is taken for a special name (':memory:'); mode=rw never creates.
            conn = sqlite3.connect(
                f"{self.path.as_uri()}?mode={mode}",
                uri=True,
                timeout=BUSY_TIMEOUT,
                isolation_level=None,  # autocommit: transactions are only the explicit BEGIN IMMEDIATE ones
                check_same_thread=False,  # threads share it, one at a time, under self._lock
            )
        except sqlite3.OperationalError as err:
            raise OSError(f"Cannot open the privacy ledger file '{self.path}': {err}.") from err
        try:
            # Durable before spend returns, i.e. before the noise is drawn (FULL is the default; say so).
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as err:  # the first read of the file: 'file is not a database'
            conn.close()
            raise ValueError(f"'{self.path}' is not a knorm privacy ledger: {err}.") from err
        self._conn = conn
        self._finalizer = weakref.finalize(self, _close_quietly, conn)

    def _forked(self):
        # In a forked child: this copy must not touch the parent's connection, and the lock
        # may have been copied while held by a parent thread.
        if self._conn is not None:
            _INHERITED.append(self._conn)
            self._finalizer.detach()
            self._conn = None
        self._lock = threading.Lock()

    def _connection(self):
        if self.closed:
            raise ValueError(
                f"This PrivacyAccountant's ledger file '{self.path}' is closed. Reopen it with "
                "PrivacyAccountant.open(path)."
            )
        if self._conn is None:
            self._connect("rw")
        return self._conn

    def _transaction(self, conn):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            if "locked" in str(err) or "busy" in str(err):
                raise TimeoutError(
                    f"The privacy ledger file '{self.path}' stayed locked by another writer for {BUSY_TIMEOUT:g} s. "
                    "Nothing was charged."
                ) from err
            raise

    def _initialise(self, total, ledger_id):
        conn = self._conn
        try:
            self._transaction(conn)
        except sqlite3.DatabaseError as err:
            raise ValueError(f"'{self.path}' is not a knorm privacy ledger: {err}.") from err
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                if total is None or ledger_id is not None:  # unpickling must find its ledger, not make one
                    raise ValueError(
                        f"'{self.path}' is an empty file, not a knorm privacy ledger. Pass total_epsilon to "
                        "PrivacyAccountant.open to make it a new ledger."
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
                meta = {
                    "format": FORMAT,
                    "version": VERSION,
                    "total_epsilon": repr(total),
                    "ledger_id": uuid.uuid4().hex,
                    "created": datetime.now(timezone.utc).isoformat(),
                }
                conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            else:
                meta = dict(conn.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
                if meta.get("format") != FORMAT:
                    raise ValueError(f"'{self.path}' is an SQLite database but not a knorm privacy ledger.")
                if meta.get("version") != VERSION:
                    raise ValueError(
                        f"'{self.path}' is a knorm privacy ledger of format version {meta.get('version')!r}; this "
                        f"version of knorm reads version {VERSION!r} only."
                    )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        stored = float(meta["total_epsilon"])
        if total is not None and total != stored:
            raise ValueError(
                f"The 'total_epsilon' parameter of PrivacyAccountant.open must be the ledger's stored total "
                f"{stored!r} (or None, to use it): a ledger's total is fixed when it is created. Got {total!r} "
                f"instead, for '{self.path}'."
            )
        if ledger_id is not None and meta["ledger_id"] != ledger_id:
            raise ValueError(
                f"The privacy ledger file '{self.path}' was replaced by another ledger since this PrivacyAccountant "
                "was pickled; refusing to charge a different budget."
            )
        return stored, meta["ledger_id"]

    # -- the ledger -----------------------------------------------------------------------------------------
    def append(self, epsilon, label, mechanism, seed_fingerprint):
        """Check the charge and record it, atomically.

        Parameters
        ----------
        epsilon : float
            The charge, validated by the accountant.
        label : str
            What is released.
        mechanism : str
            A description of the mechanism.
        seed_fingerprint : str or None
            The fixed seed's fingerprint, or None.

        Returns
        -------
        LedgerEntry
            The recorded entry.
        """
        with self._lock:
            conn = self._connection()
            self._transaction(conn)
            try:
                epsilons = [row[0] for row in conn.execute("SELECT epsilon FROM entries ORDER BY position")]
                previous = None
                if seed_fingerprint is not None:
                    previous = conn.execute(
                        "SELECT position, label FROM entries WHERE seed_fingerprint = ?", (seed_fingerprint,)
                    ).fetchone()
                check_charge(epsilons, self.total, epsilon, label, seed_fingerprint, previous)
                entry = LedgerEntry(
                    position=len(epsilons),
                    epsilon=epsilon,
                    label=label,
                    mechanism=mechanism,
                    time=datetime.now(timezone.utc),
                    seed_fingerprint=seed_fingerprint,
                )
                conn.execute(
                    "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?)",
                    (entry.position, epsilon, label, mechanism, entry.time.isoformat(), seed_fingerprint),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return entry

    def entries(self):
        """Return the entries, in order, read from the file.

        Returns
        -------
        list of LedgerEntry
            A new list.
        """
        with self._lock:
            rows = self._connection().execute(
                "SELECT position, epsilon, label, mechanism, time, seed_fingerprint FROM entries ORDER BY position"
            )
            return [
                LedgerEntry(
                    position=pos,
                    epsilon=eps,
                    label=label,
                    mechanism=mech,
                    time=datetime.fromisoformat(time),
                    seed_fingerprint=fp,
                )
                for pos, eps, label, mech, time, fp in rows
            ]

    def epsilons(self):
        """Return the epsilons charged, in order, read from the file.

        Returns
        -------
        list of float
            A new list.
        """
        with self._lock:
            return [row[0] for row in self._connection().execute("SELECT epsilon FROM entries ORDER BY position")]

    def close(self):
        """Close this process's connection to the file; the entries stay in it."""
        with self._lock:
            self.closed = True
            if self._conn is not None:
                self._finalizer.detach()
                self._conn.close()
                self._conn = None
        _LIVE.discard(self)

    def describe(self):
        """Return the back end's part of the accountant's repr.

        Returns
        -------
        str
            The path, and whether the file is closed.
        """
        return f"path={str(self.path)!r}" + (", closed" if self.closed else "")
