"""The web's side of the database: read-only connections and caches that keep pages fast.

The server never writes: every connection is a read-only ``Store`` (SQLite ``mode=ro``;
``immutable`` where the user may not make the ``-shm`` file beside the database and no
arena is writing), taken from a small pool by one request at a time, in the worker thread
that serves it.
A tournament writing to the same file in WAL mode is never blocked by these readers,
and they never see half a game.

What is expensive (a leaderboard's ratings, a bot's record) is computed once per
*stamp*, the id of the newest stored game, and kept in memory. When a game arrives the
last value is still served, marked stale, while a fresh one is computed in a background
thread (stale-while-revalidate): a page never waits seconds for ratings while a
tournament adds games. Only a value never computed before is computed on the spot.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from arena.store import Store, StoreError
from arena.web.errors import Unavailable, WebError

log = logging.getLogger("arena.web")
T = TypeVar("T")

FINAL = -1
"""The stamp of a value that can no longer change (a board of finished tournaments only)."""
STALE = -2
"""The stamp of a value known only to be worth showing until a fresh one is computed."""
REFRESH_SHARE = 0.25
"""What the computations in the background take of one core, all of them together, at
most: a ladder storing games every second makes every board stale again and again, and
rating a board of 100,000 games takes seconds; the pages keep the rest of the machine."""


class Budget:
    """Background computations one at a time, each followed by a pause long enough that
    together they take at most ``share`` of a core. Measured in the thread's own CPU
    time, so a busy machine, which stretches a computation's wall time, does not also
    stretch the pause."""

    def __init__(self, share: float) -> None:
        self.share = share
        self._lock = threading.Lock()
        self._next = 0.0

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._lock:
            wait = self._next - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            began = time.thread_time()
            try:
                yield
            finally:
                used = time.thread_time() - began
                self._next = time.monotonic() + used * (1 / self.share - 1)


BACKGROUND = Budget(REFRESH_SHARE)


class Database:
    """Read-only stores over one database file, pooled: one request holds one at a time."""

    def __init__(self, path: Path, pool_size: int = 8) -> None:
        self.path = path
        self.pool_size = pool_size
        self._idle: queue.SimpleQueue[tuple[tuple[int, int], Store]] = queue.SimpleQueue()

    def _file_id(self) -> tuple[int, int]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            raise Unavailable(f"no database at {self.path} yet: a tournament creates it") from None
        except OSError as exc:
            raise Unavailable(f"cannot read the database at {self.path}: {exc.strerror}") from None
        return info.st_dev, info.st_ino

    def exists(self) -> bool:
        return self.path.is_file()

    @contextmanager
    def store(self) -> Iterator[Store]:
        """A read-only store for this thread's use; ``Unavailable`` when there is no database."""
        file_id = self._file_id()
        store = None
        while store is None:
            try:
                opened_for, candidate = self._idle.get_nowait()
            except queue.Empty:
                break
            if opened_for == file_id and candidate.sees_everything():
                store = candidate
            else:  # the file was replaced, or an arena started writing, since it was opened
                candidate.close()
        if store is None:
            try:
                store = Store(self.path, read_only=True)
            except StoreError as exc:
                raise Unavailable(str(exc)) from None
        healthy = False
        try:
            yield store
            healthy = True
        except WebError:  # a refused request: the connection is fine
            healthy = True
            raise
        except StoreError as exc:  # the file failed (damaged, say): its message, as a 503
            raise Unavailable(str(exc)) from None
        finally:
            if healthy and self._idle.qsize() < self.pool_size:
                self._idle.put((file_id, store))
            else:
                store.close()

    def close(self) -> None:
        while True:
            try:
                _, store = self._idle.get_nowait()
            except queue.Empty:
                return
            store.close()


@dataclass(frozen=True)
class Cached(Generic[T]):
    value: T
    stamp: int
    """The stamp the value was computed at."""
    stale: bool
    """A newer stamp exists; a fresh value is being computed."""
    computed: float
    """When (``time.time()``)."""


class Revalidating:
    """Values by key, each valid for one stamp; stale ones served while refreshed.

    ``get`` returns at once when the key has any value: the current one, or the last
    one while a background thread computes the current (one thread per key at a time).
    A key never computed is computed in the caller's thread, once even when several
    requests ask together.
    """

    def __init__(self, db: Database, background: bool = True) -> None:
        self.db = db
        self.background = background
        self._entries: dict[Hashable, Cached[Any]] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._refreshing: set[Hashable] = set()
        self._generation = 0
        """Raised by ``forget``: a refresh begun before does not store what it computed."""

    def forget(self) -> None:
        """Drop every value: games went away (a tournament or a bot deleted), so a value
        stamped with a newest game that is still there may count games that are not. The
        next request computes afresh rather than serve, as updating, what was deleted."""
        with self._lock:
            self._generation += 1
            self._entries.clear()

    def peek(self, key: Hashable) -> Cached[Any] | None:
        return self._entries.get(key)

    def put(self, key: Hashable, stamp: int, value: Any) -> None:
        self._entries[key] = Cached(value, stamp, False, time.time())

    def get(self, key: Hashable, stamp: int, compute: Callable[[Store], T], store: Store) -> Cached[T]:
        entry = self._entries.get(key)
        if entry is not None and (entry.stamp == stamp or entry.stamp == FINAL):
            return entry
        if entry is not None and self.background:
            self._refresh_later(key, stamp, compute)
            return Cached(entry.value, entry.stamp, True, entry.computed)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            entry = self._entries.get(key)
            if entry is not None and (entry.stamp == stamp or entry.stamp == FINAL):
                return entry
            generation = self._generation
            value = compute(store)
            fresh = Cached(value, stamp, False, time.time())
            with self._lock:
                if generation == self._generation:
                    self._entries[key] = fresh
            return fresh

    def later(self, key: Hashable, stamp: int, compute: Callable[[Store], T]) -> Cached[T] | None:
        """The value of ``key`` if it has one; else None, while a background thread computes
        it: for what a page can show without (a point of a chart), never worth a wait."""
        entry = self._entries.get(key)
        if entry is None:
            self._refresh_later(key, stamp, compute)
        return entry

    def _refresh_later(self, key: Hashable, stamp: int, compute: Callable[[Store], Any]) -> None:
        with self._lock:
            if key in self._refreshing:
                return
            self._refreshing.add(key)
            generation = self._generation
        threading.Thread(
            target=self._refresh, args=(key, stamp, compute, generation), daemon=True, name="arena-refresh"
        ).start()

    def _refresh(self, key: Hashable, stamp: int, compute: Callable[[Store], Any], generation: int) -> None:
        try:  # in its turn (``BACKGROUND``): the stale value is served meanwhile
            with BACKGROUND.turn(), self.db.store() as store:
                value = compute(store)
            with self._lock:
                if generation == self._generation:
                    self._entries[key] = Cached(value, stamp, False, time.time())
        except Unavailable:
            pass
        except Exception:  # the stale value stays; the next request tries again
            log.exception("refreshing %r failed", key)
        finally:
            with self._lock:
                self._refreshing.discard(key)


class Lru(Generic[T]):
    """A small thread-safe least-recently-used map, for values that never change."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def put(self, key: Hashable, value: T) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
