"""The file back end: an append-only SQLite database shared by threads, processes and sessions.

It is the ledger of :meth:`knorm.accounting.PrivacyAccountant.create` and ``open``. Every charge
is one ``BEGIN IMMEDIATE`` transaction: it takes the database's write lock, reads the
entries, checks the charge and inserts it, then commits, so two writers (threads,
processes, joblib or Dask workers, separate sessions) are serialised by SQLite's file
lock and never both pass the check on the same state. Writers that find the file
busy wait for up to ``BUSY_TIMEOUT`` seconds.

File layout (format 'knorm-privacy-ledger'; version 1 for an epsilon ledger, version 2 for a
rho (zCDP) ledger; version 1 files written before rho ledgers existed read as they always did):

- ``meta(key, value)``: format, version, total_epsilon (``repr`` of the float, so it reads
  back exactly), ledger_id (a random UUID telling this ledger from a later one at the
  same path), created (ISO 8601, UTC) and salt (the secret key of the seed fingerprints,
  hex; a file written before it existed gets one, by an INSERT, when it is next opened);
- ``entries(position, epsilon, label, mechanism (the description), time, seed_fingerprint)``, with
  ``seed_fingerprint`` UNIQUE (HMAC-SHA256 of the seed's state under the salt, see
  :mod:`knorm._seeds`; unsalted in entries written before the salt), and triggers that
  abort any UPDATE or DELETE of either table.

The salt and the fingerprints never leave the file: an entry read back says only
whether its release was drawn from a fixed seed (``LedgerEntry.fixed_seed``).

A rho ledger (version 2) stores ``budget = 'rho'`` and ``total_rho`` in place of
``total_epsilon``, and its entries are ``(position, rho, epsilon, label, mechanism, time,
seed_fingerprint)``: ``rho`` is the charge, ``epsilon`` the epsilon of a pure epsilon-DP
release charged as eps^2 / 2 (NULL for a zCDP release). A knorm that reads version 1 only
refuses it with its version message, instead of misreading rho as epsilon.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import uuid
import weakref
from datetime import datetime, timezone
from typing import Any

from knorm._seeds import fingerprint, new_salt
from knorm.accounting.ledger import LedgerEntry, check_charge

__all__ = ["SQLiteLedger", "BUSY_TIMEOUT", "FORMAT", "RHO_VERSION", "VERSION"]

FORMAT = "knorm-privacy-ledger"
VERSION = "1"
#: The format version of a rho (zCDP) ledger: older versions of knorm refuse it by its version.
RHO_VERSION = "2"
_VERSIONS = {"epsilon": VERSION, "rho": RHO_VERSION}
# Seconds a writer waits for the lock. A charge holds it for milliseconds; this only
# runs out if something else (say an open sqlite3 shell transaction) holds the file.
BUSY_TIMEOUT = 60.0

_TRIGGERS = tuple(
    # Append-only against accidental edits; not against someone who can drop the triggers.
    f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
    f"BEGIN SELECT RAISE(ABORT, 'the privacy ledger is append-only'); END"
    for table in ("meta", "entries")
    for op in ("UPDATE", "DELETE")
)
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE entries ("
    " position INTEGER PRIMARY KEY,"
    " epsilon REAL NOT NULL CHECK (epsilon > 0 AND epsilon < 9e999),"  # 9e999 reads as +inf in SQLite
    " label TEXT NOT NULL,"
    " mechanism TEXT NOT NULL,"
    " time TEXT NOT NULL,"
    " seed_fingerprint TEXT UNIQUE)",
    *_TRIGGERS,
)
_RHO_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE entries ("
    " position INTEGER PRIMARY KEY,"
    " rho REAL NOT NULL CHECK (rho > 0 AND rho < 9e999),"
    " epsilon REAL CHECK (epsilon IS NULL OR (epsilon > 0 AND epsilon < 9e999)),"
    " label TEXT NOT NULL,"
    " mechanism TEXT NOT NULL,"
    " time TEXT NOT NULL,"
    " seed_fingerprint TEXT UNIQUE)",
    *_TRIGGERS,
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


def _problem(path, err):
    """The one-line error for an SQLite failure on the ledger file ``path``."""
    text = str(err)
    if "readonly" in text or "read-only" in text:
        return PermissionError(
            f"The privacy ledger file '{path}' is read-only ({text}): a ledger must be writable (file and "
            "directory) to be charged. Nothing was charged."
        )
    if isinstance(err, sqlite3.OperationalError) and "unable to open" in text:
        return OSError(f"Cannot open the privacy ledger file '{path}': {text}.")
    return ValueError(
        f"'{path}' is not a knorm privacy ledger, or is damaged ({text}). Restore it from a backup: its spending "
        "cannot be recovered, and a new ledger would be a new, full budget."
    )


def _check_writable(path):
    """Refuse up front a ledger SQLite could read but not charge (the file, or its directory, read-only)."""
    # os.access is advisory (root passes it); SQLite's own 'readonly' errors are mapped by _problem too.
    if not os.access(path, os.R_OK | os.W_OK):
        raise PermissionError(
            f"The privacy ledger file '{path}' is read-only or unreadable for this user: a ledger must be readable "
            "and writable to be charged."
        )
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise PermissionError(
            f"The directory of the privacy ledger file '{path}' is read-only for this user: SQLite writes its "
            "journal next to the file, so the ledger cannot be charged."
        )


class SQLiteLedger:
    """Entries in an SQLite file, checked and inserted in one write transaction.

    Parameters
    ----------
    path : pathlib.Path
        The file, absolute.
    total : float or None
        The total budget, validated. Required to create; when opening, None takes the
        stored one and a float must equal it.
    budget : {'epsilon', 'rho'} or None, default None
        The unit of ``total``. Required to create; when opening, None takes the stored
        one, and a unit must equal it (an epsilon total is never read as rho, nor back).
    create : bool, default False
        Create a new ledger at ``path``, which must not exist (not even as an empty file).
        Otherwise open the existing ledger, which must be a complete knorm ledger file.
    ledger_id : str or None, default None
        If given, the stored ledger_id must equal it (for unpickling).
    """

    def __init__(self, path, total, *, budget=None, create=False, ledger_id=None):
        self.path = path
        self.budget = budget
        self._lock = threading.Lock()
        self._conn: Any = None
        self._finalizer: Any = None
        self.closed = False
        if create:
            self._claim()
        else:
            self._check_existing(unpickling=ledger_id is not None)
        try:
            self._connect("rw")
            self.total, self.ledger_id, self._salt = self._initialise(total, ledger_id, create, budget)
        except BaseException:
            self.close()
            if create:
                with contextlib.suppress(OSError):
                    path.unlink()  # ours: claimed with O_EXCL above, and holding no entry
            raise
        _LIVE.add(self)

    # -- the file -------------------------------------------------------------------------------------------
    def _claim(self):
        """Create ``path`` as an empty file, atomically, or refuse if anything is there."""
        path = self.path
        if path.is_dir():
            raise IsADirectoryError(f"'{path}' is a directory; a privacy ledger is created as a new file.")
        if not path.parent.is_dir():
            raise FileNotFoundError(
                f"Cannot create the privacy ledger file '{path}': the directory '{path.parent}' does not exist."
            )
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise FileExistsError(
                f"'{path}' exists already: a privacy ledger is created once. Open it with "
                "PrivacyAccountant.open(path); a file that is not a ledger is never overwritten."
            ) from None
        except PermissionError:
            raise PermissionError(
                f"Cannot create the privacy ledger file '{path}': the directory '{path.parent}' is read-only."
            ) from None
        os.close(fd)

    def _check_existing(self, *, unpickling):
        """Refuse a missing, directory, empty or read-only path, before SQLite sees it."""
        path = self.path
        if not path.exists():
            if unpickling:
                raise FileNotFoundError(
                    f"The privacy ledger file '{path}' no longer exists, so this PrivacyAccountant cannot be "
                    "reopened (it was pickled, e.g. to send it to a worker). A new file would be a new, full "
                    "budget; refusing."
                )
            raise FileNotFoundError(
                f"No privacy ledger at '{path}'. Create one with PrivacyAccountant.create(path, total_epsilon=...) "
                "(the command line: knorm budget create PATH --total-epsilon E); a ledger that was deleted cannot "
                "be replaced by a new one without losing what it had spent."
            )
        if path.is_dir():
            raise IsADirectoryError(f"'{path}' is a directory, not a privacy ledger file.")
        if path.stat().st_size == 0:
            raise ValueError(
                f"'{path}' is an empty file, not a knorm privacy ledger (truncated, or never written). Its spending "
                "cannot be recovered: restore the ledger from a backup. A ledger is created with "
                "PrivacyAccountant.create(path, total_epsilon=...), at a new path."
            )
        _check_writable(path)

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
        except sqlite3.Error as err:
            raise _problem(self.path, err) from err
        try:
            # Durable before spend returns, i.e. before the noise is drawn (FULL is the default; say so).
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as err:  # the first read of the file: 'file is not a database'
            conn.close()
            raise _problem(self.path, err) from err
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
            raise _problem(self.path, err) from err
        except sqlite3.DatabaseError as err:
            raise _problem(self.path, err) from err

    def _initialise(self, total, ledger_id, create, budget):
        conn = self._conn
        try:
            self._transaction(conn)
        except sqlite3.DatabaseError as err:
            raise _problem(self.path, err) from err
        try:
            if create:
                for statement in _RHO_SCHEMA if budget == "rho" else _SCHEMA:
                    conn.execute(statement)
                meta = {
                    "format": FORMAT,
                    "version": _VERSIONS[budget],
                    f"total_{budget}": repr(total),
                    "ledger_id": uuid.uuid4().hex,
                    "created": datetime.now(timezone.utc).isoformat(),
                    "salt": new_salt().hex(),
                }
                if budget == "rho":
                    meta["budget"] = "rho"
                conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            else:
                meta = self._read_meta(conn)
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise _problem(self.path, err) from err
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        stored_budget = "rho" if meta["version"] == RHO_VERSION else "epsilon"
        if budget is not None and budget != stored_budget:
            raise ValueError(
                f"The 'total_{budget}' parameter of PrivacyAccountant.open cannot be used for '{self.path}': it is "
                f"a {stored_budget} ledger, with a total_{stored_budget} (a budget is never read in another unit). "
                f"Got total_{budget}={total!r} instead; pass total_{stored_budget}, or nothing."
            )
        self.budget = stored_budget
        stored = float(meta[f"total_{stored_budget}"])
        if total is not None and total != stored:
            raise ValueError(
                f"The 'total_{stored_budget}' parameter of PrivacyAccountant.open must be the ledger's stored total "
                f"{stored!r} (or None, to use it): a ledger's total is fixed when it is created. Got {total!r} "
                f"instead, for '{self.path}'."
            )
        if ledger_id is not None and meta["ledger_id"] != ledger_id:
            raise ValueError(
                f"The privacy ledger file '{self.path}' was replaced by another ledger since this PrivacyAccountant "
                "was pickled; refusing to charge a different budget."
            )
        return stored, meta["ledger_id"], bytes.fromhex(meta["salt"])

    def _read_meta(self, conn):
        """Check the file (format, version, integrity) and return its meta, adding a salt if it has none."""
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        meta = dict(conn.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        if meta.get("format") != FORMAT or "entries" not in tables:
            raise ValueError(f"'{self.path}' is an SQLite database but not a knorm privacy ledger.")
        if meta.get("version") not in (VERSION, RHO_VERSION):
            raise ValueError(
                f"'{self.path}' is a knorm privacy ledger of format version {meta.get('version')!r}; this "
                f"version of knorm reads versions {VERSION!r} (epsilon) and {RHO_VERSION!r} (rho) only."
            )
        if meta["version"] == RHO_VERSION and (meta.get("budget") != "rho" or "total_rho" not in meta):
            raise ValueError(
                f"'{self.path}' is a damaged knorm privacy ledger (a version 2 file without its rho total)."
            )
        # A truncated or damaged file can still show its first pages: check every page.
        check = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if check != ["ok"]:
            raise ValueError(
                f"'{self.path}' is a damaged knorm privacy ledger ({check[0]}). Restore it from a backup: its "
                "spending cannot be recovered, and a new ledger would be a new, full budget."
            )
        if "salt" not in meta:
            # A ledger written before salted fingerprints: give it its secret salt now (an INSERT, which its
            # append-only triggers allow and earlier versions ignore). Its old, unsalted fingerprints stay
            # comparable: spend also looks up the legacy fingerprint of an int or SeedSequence seed.
            meta["salt"] = new_salt().hex()
            conn.execute("INSERT INTO meta VALUES ('salt', ?)", (meta["salt"],))
        return meta

    # -- the ledger -----------------------------------------------------------------------------------------
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
            fresh entropy; fingerprinted here under the file's salt.
        legacy : str or None, default None
            The unsalted fingerprint earlier versions stored for the same seed, looked up
            too (never stored), so that a ledger written before the salt still refuses it.
        epsilon : float or None, default None
            On a rho ledger, the epsilon of a pure epsilon-DP release charged as rho (recorded).

        Returns
        -------
        LedgerEntry
            The recorded entry.
        """
        with self._lock:
            conn = self._connection()
            self._transaction(conn)
            try:
                charges = [row[0] for row in conn.execute(self._charges_sql)]
                fp = None if seed_key is None else fingerprint(self._salt, seed_key)
                previous = None
                for known in (fp, legacy) if fp is not None else ():
                    if known is not None and previous is None:
                        previous = conn.execute(
                            "SELECT position, label FROM entries WHERE seed_fingerprint = ?", (known,)
                        ).fetchone()
                check_charge(charges, self.total, charge, label, previous, self.budget)
                rho = self.budget == "rho"
                entry = LedgerEntry(
                    position=len(charges),
                    epsilon=epsilon if rho else charge,
                    label=label,
                    description=description,
                    time=datetime.now(timezone.utc),
                    fixed_seed=fp is not None,
                    rho=charge if rho else None,
                )
                row = (label, description, entry.time.isoformat(), fp)
                if rho:
                    conn.execute(
                        "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", (entry.position, charge, epsilon, *row)
                    )
                else:
                    conn.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?)", (entry.position, charge, *row))
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as err:  # e.g. the file was made read-only since it was opened
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise _problem(self.path, err) from err
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
        rho_column = "rho" if self.budget == "rho" else "NULL"
        with self._lock:
            rows = self._connection().execute(
                f"SELECT position, epsilon, label, mechanism, time, seed_fingerprint IS NOT NULL, {rho_column} "
                "FROM entries ORDER BY position"
            )
            return [
                LedgerEntry(
                    position=pos,
                    epsilon=eps,
                    label=label,
                    description=mech,
                    time=datetime.fromisoformat(time),
                    fixed_seed=bool(fixed),
                    rho=rho,
                )
                for pos, eps, label, mech, time, fixed, rho in rows
            ]

    @property
    def _charges_sql(self):
        return f"SELECT {'rho' if self.budget == 'rho' else 'epsilon'} FROM entries ORDER BY position"

    def charges(self):
        """Return the charges, in order, in the ledger's unit (epsilon, or rho), read from the file.

        Returns
        -------
        list of float
            A new list.
        """
        with self._lock:
            return [row[0] for row in self._connection().execute(self._charges_sql)]

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
