"""Keeping a database safe: a consistent backup of it and its bot snapshots, and a check.

A database is two things side by side, the SQLite file and ``<db>-bots/``; a copy of one
without the other, or a copy of the file made while an arena writes its ``-wal``, is not
a backup. ``backup`` copies the file through SQLite's online backup API (one step, so one
read transaction: the copy holds exactly what was committed at that instant, whatever
writes meanwhile) and then the snapshot folders that copy names, each checked against its
stored hash. ``check`` says whether a file (a backup, or the database after a crash) is
sound: SQLite's integrity and foreign-key checks, the schema version, every snapshot.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Collection, Iterator
from pathlib import Path

import msgspec

from arena.bots import BotError
from arena.bots.folder import content_hash, copy_folder, remove_tree, seal_read_only
from arena.store import SCHEMA_VERSION, Store, StoreError, snapshots_of

ATTEMPTS = 3
"""Copies tried when a snapshot the copied file names was removed meanwhile
(``arena bot remove`` deletes the row, then the folder)."""


class Backup(msgspec.Struct, frozen=True):
    """What ``backup`` wrote."""

    path: Path
    snapshots: Path
    bots: int
    games: int
    tournaments: int
    size: int


class Finding(msgspec.Struct, frozen=True):
    """One line of ``check``: what was checked, whether it holds, and the detail."""

    what: str
    ok: bool
    detail: str


class _Vanished(Exception):
    """A snapshot named by the copy was removed before it was copied: copy again."""


def backup(source: Path, dest: Path, bots: Collection[str] | None = None) -> Backup:
    """Copy the database at ``source`` to ``dest`` and its snapshots to ``<dest>-bots/``,
    safe while arenas write to it. Neither may exist (a backup never overwrites). The
    copy is itself a database: ``--db DEST`` reads it, and moved in place of the original
    (file and folder) it restores it.

    ``bots`` (``name:version``): only their snapshots, for a scratch copy that runs just
    those bots (``arena bot try``); such a copy is no backup."""
    dest_bots = snapshots_of(dest)
    for path in (dest, dest_bots):
        if os.path.lexists(path):
            raise StoreError(f"{path}: already exists: a backup never overwrites; name a new file")
    if not dest.parent.is_dir():
        raise StoreError(f"{dest}: its folder {dest.parent} does not exist")
    if Path(os.path.abspath(dest)) == Path(os.path.abspath(source)):
        raise StoreError(f"{dest}: is the database itself: name a new file")
    if not os.access(dest.parent, os.W_OK | os.X_OK):
        raise StoreError(f"{dest}: cannot write in its folder {dest.parent}: choose a folder you may write")
    store = Store(source, read_only=True)
    token = secrets.token_hex(4)
    partial = dest.with_name(f".{dest.name}.partial-{token}")
    partial_bots = dest.with_name(f".{dest_bots.name}.partial-{token}")
    try:
        for attempt in range(ATTEMPTS):
            try:
                counts = _copy_once(store, partial, partial_bots, bots)
                break
            except (sqlite3.Error, OSError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise StoreError(
                    f"{dest}: cannot write the backup there ({reason}): check that {dest.parent} is writable and"
                    f" has space ({source} is untouched)"
                ) from None
            except _Vanished:
                if attempt == ATTEMPTS - 1:
                    raise StoreError(
                        f"{source}: bots were removed during {ATTEMPTS} copies in a row: back up when no"
                        " `arena bot remove` runs"
                    ) from None
        os.rename(partial_bots, dest_bots)
        os.rename(partial, dest)
    except BaseException:
        _remove(partial, partial_bots)
        raise
    finally:
        store.close()
    return Backup(dest, dest_bots, *counts, size=os.stat(dest).st_size)


def _remove(partial: Path, partial_bots: Path) -> None:
    for path in (partial, Path(f"{partial}-journal")):
        if os.path.lexists(path):
            os.unlink(path)
    remove_tree(partial_bots)


def _copy_once(store: Store, partial: Path, partial_bots: Path, bots: Collection[str] | None) -> tuple[int, int, int]:
    """One copy of the file (one read transaction of the source), then of each snapshot
    it names; ``_Vanished`` when one is gone."""
    _remove(partial, partial_bots)
    target = sqlite3.connect(partial, isolation_level=None)
    try:
        try:
            store.db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:  # the source's own failure, named as every store names it
            raise store._fault(exc) from None
        store.db.backup(target)  # every page in one step: one consistent snapshot
        target.execute("PRAGMA journal_mode = DELETE")  # one file, no -wal beside it
        rows = target.execute("SELECT name, version, hash, path FROM bots ORDER BY id").fetchall()
        games = target.execute("SELECT count(*) FROM games").fetchone()[0]
        tournaments = target.execute("SELECT count(*) FROM tournaments").fetchone()[0]
    finally:
        target.close()
    os.mkdir(partial_bots, 0o755)
    for name, version, digest, path in rows:
        if os.path.isabs(path) or (bots is not None and f"{name}:{version}" not in bots):
            continue  # left by an older arena outside <db>-bots/ (not ours to copy), or not asked for
        source = store.snapshots / path
        if not source.is_dir():
            if not _still_stored(store, name, version):
                raise _Vanished()
            raise StoreError(
                f"{name}:{version}: its snapshot {source} is missing: restore it, or `arena bot add` the bot's"
                " folder again, then back up"
            )
        try:
            copied = copy_folder(source, partial_bots / path)
        except BotError:
            if not _still_stored(store, name, version):
                raise _Vanished() from None
            raise
        if copied != digest:
            raise StoreError(
                f"{name}:{version}: its snapshot {source} does not hold the stored code (hash {copied[:12]},"
                f" stored {digest[:12]}): `arena check` says more"
            )
        seal_read_only(partial_bots / path)
    return len(rows), games, tournaments


def _still_stored(store: Store, name: str, version: str) -> bool:
    """Whether the source still holds the bot (read now, after the copy's snapshot)."""
    query = "SELECT 1 FROM bots WHERE name = ? AND version = ?"
    return store.db.execute(query, (name, version)).fetchone() is not None


def check(path: Path, snapshots: bool = True) -> Iterator[Finding]:
    """The checks of a database, one ``Finding`` each, without writing to it."""
    try:
        store = Store(path, read_only=True)
    except StoreError as exc:
        if "schema version" in str(exc):
            yield Finding("schema", False, str(exc))
            return
        raise
    try:
        yield Finding("schema", True, f"version {SCHEMA_VERSION}, this arena's")
        problems = [row[0] for row in store.db.execute("PRAGMA integrity_check(20)")]
        if problems == ["ok"]:
            yield Finding("integrity", True, "SQLite's integrity_check: ok")
        else:
            shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
            yield Finding("integrity", False, f"SQLite's integrity_check: {shown}")
        orphans = store.db.execute("PRAGMA foreign_key_check").fetchall()
        if not orphans:
            yield Finding("foreign keys", True, "every row's references exist")
        else:
            tables = sorted({f"{row[0]} -> {row[2]}" for row in orphans})
            yield Finding("foreign keys", False, f"{len(orphans)} rows reference missing rows ({', '.join(tables)})")
        if snapshots:
            yield from _check_snapshots(store)
    except sqlite3.Error as exc:
        yield Finding("integrity", False, str(store._fault(exc)))
    finally:
        store.close()


def _check_snapshots(store: Store) -> Iterator[Finding]:
    bots = store.list_bots()
    bad: list[str] = []
    for bot in bots:
        if not os.path.isdir(bot.path):
            bad.append(f"{bot.ref}: {bot.path} is missing")
            continue
        try:
            digest = content_hash(Path(bot.path))
        except BotError as exc:
            bad.append(f"{bot.ref}: {exc}")
            continue
        if digest != bot.hash:
            bad.append(f"{bot.ref}: {bot.path} holds other code (hash {digest[:12]}, stored {bot.hash[:12]})")
    if bad:
        yield Finding("snapshots", False, "; ".join(bad))
    else:
        yield Finding(
            "snapshots", True, f"{len(bots)} bot{'s' * (len(bots) != 1)}, each as stored, in {store.snapshots}"
        )
