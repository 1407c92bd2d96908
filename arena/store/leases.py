"""One arena runs a tournament at a time: its lease, the row's ``lease_owner``
(``host:pid:start:token``) and ``lease_beat``, renewed every ``LEASE_BEAT`` seconds by a
thread with a connection of its own. Another arena is refused while the holder lives and
takes the lease over when the holder's process is gone (same host) or it has been silent
for ``LEASE_TIMEOUT``."""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.store.connection import Database
from arena.store.errors import StoreError

LEASE_TIMEOUT = 90.0
"""Seconds without a heartbeat after which another arena may take a tournament over."""
LEASE_BEAT = 10.0
"""Seconds between the heartbeats of the arena running a tournament."""


def _process_start(pid: int) -> str:
    """When a process started (clock ticks since boot), "" when there is no such process:
    with the pid, it tells a process from a later one given the same pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            return file.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _me() -> str:
    """This process: ``host:pid:start``."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def _owner_parts(owner: str) -> tuple[str, int, str]:
    """``host:pid:start:store`` (a host name holds no colon) as host, pid and start."""
    host, pid, start, _ = (owner.rsplit(":", 3) + ["", "", ""])[:4]
    return host, int(pid) if pid.isdigit() else 0, start


def _holds(owner: str, beat: float | None) -> bool:
    """Whether the arena ``owner`` still holds its lease: it said so within
    ``LEASE_TIMEOUT`` and, on this host, its process is still the one that took it."""
    if beat is None or time.time() - beat > LEASE_TIMEOUT:
        return False
    host, pid, start = _owner_parts(owner)
    if host != socket.gethostname():
        return True
    started = _process_start(pid)
    return bool(started) and started == start


def _beat(path: Path, tournament_id: int, owner: str, stop: threading.Event) -> None:
    """Renew this process's lease on a tournament until ``stop`` (a thread of its own,
    with a connection of its own: the store's is busy storing games)."""
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=LEASE_BEAT)
    except sqlite3.Error:
        return
    try:
        while not stop.wait(LEASE_BEAT):
            try:
                db.execute(
                    "UPDATE tournaments SET lease_beat = ? WHERE id = ? AND lease_owner = ?",
                    (time.time(), tournament_id, owner),
                )
            except sqlite3.Error:  # a full disk, a lock: the next beat tries again
                pass
    finally:
        db.close()


class Leases(Database):
    """The leases this store holds, and the questions of who runs what."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self._leases: set[int] = set()
        self.owner = f"{_me()}:{secrets.token_hex(4)}"
        """This store as a lease holder: ``host:pid:start:token``."""
        self._beats: dict[int, tuple[threading.Event, threading.Thread]] = {}
        super().__init__(path, read_only)

    def close(self) -> None:
        """Release the leases, then close."""
        if not self.closed:
            for tournament_id in list(self._leases):
                self.release_lease(tournament_id)
        super().close()

    def take_lease(self, tournament_id: int) -> None:
        """Hold the tournament for this process, or refuse with one line naming the arena
        that runs it. A lease is taken over when its holder is dead (a pid gone, or
        another process under that pid, on this host) or silent for ``LEASE_TIMEOUT``."""
        with self.transaction():
            row = self.db.execute(
                "SELECT name, lease_owner, lease_beat FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"no tournament {tournament_id} in {self.path}")
            name, owner, beat = row
            if owner is not None and owner != self.owner and _holds(owner, beat):
                host, pid, _ = _owner_parts(owner)
                raise StoreError(
                    f"tournament {name!r} is being run by another arena (pid {pid} on {host}, heard from"
                    f" {max(0.0, time.time() - (beat or 0)):.0f} s ago): one run at a time; let it finish, or"
                    f" stop it and then --resume (a lease silent for {LEASE_TIMEOUT:.0f} s is taken over)"
                )
            self.db.execute(
                "UPDATE tournaments SET lease_owner = ?, lease_beat = ? WHERE id = ?",
                (self.owner, time.time(), tournament_id),
            )
        self._leases.add(tournament_id)

    def release_lease(self, tournament_id: int) -> None:
        """Give the tournament up (quietly, whatever the file's state: a lease left behind
        by this process is taken over once it has ended)."""
        self._leases.discard(tournament_id)
        stop, thread = self._beats.pop(tournament_id, (None, None))
        if stop is not None and thread is not None:
            stop.set()
            thread.join()
        try:
            with self.transaction():
                self.db.execute(
                    "UPDATE tournaments SET lease_owner = NULL, lease_beat = NULL WHERE id = ? AND lease_owner = ?",
                    (tournament_id, self.owner),
                )
        except sqlite3.Error:
            pass

    @contextmanager
    def lease(self, tournament_id: int) -> Iterator[None]:
        """Hold the tournament while the block runs, renewing the lease every
        ``LEASE_BEAT`` seconds from a thread with its own connection."""
        self.take_lease(tournament_id)
        stop = threading.Event()
        thread = threading.Thread(
            target=_beat, args=(self._absolute, tournament_id, self.owner, stop), daemon=True, name="arena-lease"
        )
        self._beats[tournament_id] = (stop, thread)
        thread.start()
        try:
            yield
        finally:
            self.release_lease(tournament_id)

    def lease_holders(self) -> dict[int, str]:
        """The tournaments a live arena is running (its lease is held, see ``take_lease``),
        each with that arena as ``pid P on HOST``. A tournament stored as running but not
        here was stopped without a word (kill -9, a power cut): it is interrupted."""
        query = "SELECT id, lease_owner, lease_beat FROM tournaments WHERE lease_owner IS NOT NULL"
        held = {}
        for tournament_id, owner, beat in self.db.execute(query).fetchall():
            if _holds(owner, beat):
                host, pid, _ = _owner_parts(owner)
                held[tournament_id] = f"pid {pid} on {host}"
        return held

    def check_not_running(self, tournament_id: int, name: str, why: str) -> None:
        """Refuse (``StoreError``, saying ``why``) when another live arena runs the tournament."""
        row = self.db.execute(
            "SELECT lease_owner, lease_beat FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        if row is not None and row[0] is not None and row[0] != self.owner and _holds(row[0], row[1]):
            host, pid, _ = _owner_parts(row[0])
            raise StoreError(
                f"tournament {name!r} is being run by an arena (pid {pid} on {host}): {why}; stop that run"
                f" first (Ctrl-C where it runs, or `kill {pid}` on {host}: it stays resumable)"
            )
