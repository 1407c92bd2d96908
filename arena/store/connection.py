"""One open database file: opening it (a writer migrates it, a reader opens it
``mode=ro``, or ``immutable`` where it cannot make the ``-shm``), transactions, folding
the ``-wal`` in, and every SQLite failure of the file turned into one ``StoreError``
naming the file and what to do."""

from __future__ import annotations

import functools
import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from arena.store.errors import StoreError
from arena.store.schema import check_version, migrate
from arena.store.snapshots import snapshots_of


def _code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of an error (0 when it has none)."""
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def _user_name() -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(os.geteuid()).pw_name}"
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


class Database:
    """The connection and its file, which every part of ``Store`` reads and writes through."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        """Open (and create, and migrate) the database at ``path``.

        ``read_only`` opens an existing file with SQLite's ``mode=ro``: nothing is created,
        migrated or written (``cache_board`` does nothing), so a reader such as the web
        server can never disturb a tournament writing to the same file, and a user who may
        not write the file or its folder (or a read-only file system) can still read it.
        """
        self.path = Path(path)
        self.read_only = read_only
        self.immutable = False
        """Opened with ``immutable=1``: see ``_connect_read_only``."""
        self._absolute = Path(os.path.abspath(self.path))
        self.snapshots = snapshots_of(self.path)
        """``<db>-bots/``: the bot snapshots, named in the database relative to it."""
        self.closed = False
        if self.path.is_dir():
            raise StoreError(f"{path}: is a folder, not a database file")
        try:
            # One thread at a time, but not always the same one (a tournament writes from a
            # worker thread while its event loop runs).
            if read_only:
                self.db = self._connect_read_only()
                try:
                    check_version(self.db, self.path)
                except BaseException:
                    self.db.close()
                    raise
            else:
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30, check_same_thread=False)
                try:
                    self.db.execute("PRAGMA journal_mode = WAL")
                    self.db.execute("PRAGMA synchronous = NORMAL")
                    self.db.execute("PRAGMA foreign_keys = ON")
                    migrate(self.db, self.path)
                except BaseException:
                    self.db.close()
                    raise
        except sqlite3.Error as exc:
            if _code(exc) == sqlite3.SQLITE_NOTADB:
                raise StoreError(
                    f"{path}: not an arena database ({exc}): --db names another file; if it was one, it is"
                    f" damaged: restore it from a backup"
                ) from None
            raise self._fault(exc) from None

    def _connect_read_only(self) -> sqlite3.Connection:
        """``mode=ro``; in WAL mode that needs ``<db>-shm`` beside the file, which a user who
        may not write the folder (or a read-only file system) cannot make. Then, if there
        is no ``<db>-wal`` with anything in it, every committed game is in the file itself
        and no arena is writing (a writer makes the -wal first): ``immutable=1`` reads it
        without the -shm. A web server checks ``sees_everything`` before reusing it."""
        uri = f"file:{urllib.parse.quote(str(self._absolute))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30, check_same_thread=False)
        try:
            db.execute("PRAGMA user_version").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            if _code(exc) not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) or not os.access(
                self._absolute, os.R_OK
            ):
                raise
            if self._wal_size() > 0:
                raise StoreError(
                    f"{self.path}: cannot read the games in {self.path}-wal: SQLite needs {self.path}-shm beside"
                    f" it and {self._why_not_writable()[0] or 'it cannot be made'}: as a user who may write that"
                    f" folder, fold the -wal into the database once: sqlite3 {self.path} 'PRAGMA wal_checkpoint(TRUNCATE)'"
                ) from None
        self.immutable = True
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)

    def _wal_size(self) -> int:
        try:
            return os.stat(f"{self._absolute}-wal").st_size
        except OSError:
            return 0

    def sees_everything(self) -> bool:
        """False when this read-only connection ignores what arenas write (it was opened
        ``immutable`` and a writer has since started a -wal): open a new one."""
        return not self.immutable or self._wal_size() == 0

    def _why_not_writable(self) -> tuple[str, str]:
        """Why this user cannot write the database, and what to do, in words; ("", "")
        when nothing says so."""
        folder = self._absolute.parent
        try:
            if os.statvfs(folder).f_flag & os.ST_RDONLY:
                return f"{folder} is on a read-only file system", "run it on a copy on a writable disk"
        except OSError:
            pass
        user = _user_name()
        fix = "run it as a user who may write both the file and its folder, or on a copy"
        if self._absolute.exists() and not os.access(self._absolute, os.W_OK):
            return f"{user} has no permission to write it", fix
        if not os.access(folder, os.W_OK | os.X_OK):
            return (
                f"{user} has no permission to write its folder {folder}"
                f" (SQLite keeps {self._absolute.name}-wal and -shm beside it)"
            ), fix
        return "", ""

    def _fault(self, exc: sqlite3.Error) -> StoreError:
        """The failure of the file itself, as one line naming it and what to do."""
        code = _code(exc)
        where = self.path
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            return StoreError(
                f"{where}: the database is damaged ({exc}): restore it from a backup (README: keeping a"
                f' league), or save what it still holds with `sqlite3 {where} ".recover" | sqlite3 recovered.db`'
                " and use recovered.db"
            )
        if code == sqlite3.SQLITE_FULL:
            return StoreError(
                f"{where}: the disk is full ({exc}): free some space, then run the command again (what was"
                " stored is kept; a tournament goes on with `arena tournament run --resume --name NAME`)"
            )
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
            if code == sqlite3.SQLITE_CANTOPEN and not self._absolute.parent.is_dir():
                return StoreError(f"{where}: cannot open the database: its folder does not exist")
            if self._absolute.exists() and not os.access(self._absolute, os.R_OK):
                return StoreError(f"{where}: cannot read the database: {_user_name()} has no permission to read it")
            reason, fix = self._why_not_writable()
            if reason:
                return StoreError(
                    f"{where}: cannot write the database ({exc}): {reason}: {fix} (the commands that only read,"
                    " such as `arena leaderboard`, work as they are)"
                )
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return StoreError(
                f"{where}: the database stayed locked for 30 s ({exc}): another arena is writing to it;"
                " run this again when it is done"
            )
        if code == sqlite3.SQLITE_IOERR:
            return StoreError(
                f"{where}: the disk failed ({exc}): check it has space and is healthy, then run the command"
                " again (what was stored is kept)"
            )
        return StoreError(f"{where}: {exc}")

    def close(self) -> None:
        """Close; a writer first folds the ``-wal`` into the file
        (``checkpoint``), so that once the last writer has finished the file alone holds
        every game (a plain copy of it is then complete)."""
        if self.closed:
            return
        if not self.read_only:
            self.checkpoint()
        self.db.close()
        self.closed = True

    def checkpoint(self) -> bool:
        """Fold the ``-wal`` into the database file and empty it (``wal_checkpoint(TRUNCATE)``),
        waiting at most a quarter of a second for readers (a server's read snapshot must not
        hold up every writer that closes); True when it was folded whole. Nothing is lost
        when it is not: the games stay in the ``-wal`` and SQLite folds them later."""
        try:
            self.db.execute("PRAGMA busy_timeout = 250")
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            self.db.execute("PRAGMA busy_timeout = 30000")
        except sqlite3.Error:  # a transaction open (Ctrl-C inside one), a locked file: later
            return False
        return bool(busy == 0)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> Any:
        """A write transaction (BEGIN IMMEDIATE ... COMMIT), for the modules that keep
        their own tables in this database (``arena.store.submissions``)."""
        return _Transaction(self.db)

    def snapshot(self) -> Any:
        """A read transaction (BEGIN ... COMMIT): the queries inside it see one state of the
        database, so counts read one after another agree (a game stored meanwhile is in all
        of them or in none)."""
        return _Transaction(self.db, "BEGIN")


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK if anything failed (also on Ctrl-C).
    Inside a transaction already open, it joins it and leaves the ending to its owner."""

    def __init__(self, db: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> None:
        self.db = db
        self.begin = begin
        self.owner = False

    def __enter__(self) -> None:
        if not self.db.in_transaction:
            self.db.execute(self.begin)
            self.owner = True

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.owner and self.db.in_transaction:
            self.db.execute("ROLLBACK" if kind is not None else "COMMIT")


def tidy_wal(path: Path) -> None:
    """Remove the empty ``-wal`` and the ``-shm`` a reader's connection left beside the
    file (a read-only connection makes them but may not remove them): a connection that
    may write is opened and closed, and SQLite removes both when it is the last one
    open. Nothing is done without write access, nor while another connection is open
    (an arena writing): SQLite then leaves them, as it must."""
    absolute = Path(os.path.abspath(path))
    wal = Path(f"{absolute}-wal")
    try:
        if wal.stat().st_size != 0 or not os.access(absolute, os.W_OK) or not os.access(absolute.parent, os.W_OK):
            return
        db = sqlite3.connect(absolute, timeout=0.1, isolation_level=None)
        try:
            db.execute("PRAGMA user_version").fetchone()
        finally:
            db.close()
    except (OSError, sqlite3.Error):
        pass


def _faults_named(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` with SQLite's own errors (a damaged file, a full disk, no write access)
    turned into a ``StoreError`` naming the file and what to do."""

    @functools.wraps(method)
    def named(self: Database, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise  # a mistake in our code, not the file's: a traceback is right
        except sqlite3.Error as exc:
            raise self._fault(exc) from None

    return named


UNNAMED = ("_fault", "_why_not_writable", "_connect_read_only", "lease")
"""Methods left as they are: those that name a fault themselves, and ``lease`` (a
context manager: its body's errors are the caller's)."""


def name_faults(cls: type[Database]) -> None:
    """Wrap every method of ``cls`` and of the store's classes it is made of (``_faults_named``),
    so that no caller ever sees a raw sqlite3 error; each materialises its rows before it
    returns, so errors met while reading them are caught too."""
    done: set[str] = set()
    for part in cls.__mro__:
        if not part.__module__.startswith("arena.store"):
            continue
        for name, method in vars(part).items():
            if name in done or name.startswith("__") or name in UNNAMED:
                continue
            done.add(name)
            if callable(method) and not isinstance(method, staticmethod):
                setattr(cls, name, _faults_named(getattr(cls, name)))
