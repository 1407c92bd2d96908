"""Games being played, published as the referee logs them, for spectators.

A match given a live name (``MatchSpec.live``) writes each of its games, a turn at a
time, to a file of the live folder beside the database (``arena.db-live/``), where ``arena
serve`` reads it (``arena.web.live``) and fans it out: the referee publishes each turn
once, however many people watch, and never waits for a reader. A file holds the whole
replay (hands too), so folder and files are the owner's alone (modes 700 and 600); what
a spectator may see of it is cut on the web side, where it is read.

A file's name says whose it is, ``t3-m12-g4.8812.jsonl``: game 4 of match 12 of
tournament 3, written by process 8812. Its lines are the replay's, each after the time
it was logged: ``1733140000.125 {"type":"events",...}``. A game that ends (its end
line) or is given up (the match stopped) is marked finished by its mode (400), and kept
a while for the readers that have not yet opened it; the process removes its files as
it exits (a reader that has one open reads on to its end), and a file of a process that
died is removed by the next folder opened.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from arena.play.referee import Observer
from arena.play.replay import End, EventsLine, Header, Line, dumps
from arena.sandbox.leftovers import pid_alive

SUFFIX = "-live"
"""The live folder of ``arena.db`` is ``arena.db-live``."""
WRITE_EVERY_S = 0.05
"""A game's lines are written at most this often (with the events line of a turn)."""
KEEP_S = 120.0
"""How long a finished game's file stays for readers that have not read its end."""
FINISHED = 0o400
NAME = re.compile(r"t(\d+)-m(\d+)-g(\d+)\.(\d+)\.jsonl")
"""A live file's name: tournament, match, game and the writing process."""


def key_of(name: re.Match[str]) -> str:
    """A live file's game as the web names it (``t3-m12-g4``), from its ``NAME`` match."""
    return f"t{name[1]}-m{name[2]}-g{name[3]}"


def folder_of(db: str | Path) -> Path:
    """The live folder of database ``db``."""
    db = Path(db)
    return db.with_name(db.name + SUFFIX)


class LiveFolder:
    """Where this process publishes the games it plays. Its files go when it exits (a
    reader that has one open reads on), and the folder with the last of them."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.path, 0o700)
        self._finished: deque[tuple[float, Path]] = deque()
        for entry in os.scandir(self.path):  # what processes that are gone left
            found = NAME.fullmatch(entry.name)
            if found is not None and not pid_alive(int(found[4])):
                Path(entry.path).unlink(missing_ok=True)
        atexit.register(self.close)

    def close(self) -> None:
        """Remove this process's files, and the folder if nothing else is in it."""
        mine = f".{os.getpid()}.jsonl"
        try:
            for entry in os.scandir(self.path):
                if entry.name.endswith(mine) and NAME.fullmatch(entry.name):
                    Path(entry.path).unlink(missing_ok=True)
            self.path.rmdir()
        except OSError:  # another process's games are in it, or it is gone already
            pass

    def open(self, name: str, game_no: int) -> LiveFile:
        """A new file for game ``game_no`` of the match named ``name`` (``t3-m12``)."""
        now = time.time()
        while self._finished and self._finished[0][0] < now - KEEP_S:
            self._finished.popleft()[1].unlink(missing_ok=True)
        path = self.path / f"{name}-g{game_no}.{os.getpid()}.jsonl"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        return LiveFile(path, os.fdopen(os.open(path, flags, 0o600), "wb"))

    def finish(self, live: LiveFile) -> None:
        """Mark a game's file finished (ended or given up) and close it."""
        try:
            live.file.flush()
            os.fchmod(live.file.fileno(), FINISHED)
        finally:
            live.file.close()
        self._finished.append((time.time(), live.path))


class LiveFile:
    """One game's file, open for appending."""

    def __init__(self, path: Path, file: IO[bytes]) -> None:
        self.path = path
        self.file = file


def encode(line: Line, at: float) -> bytes:
    """One line of a live file."""
    return b"%.3f " % at + dumps([line])


def decode(raw: bytes) -> tuple[float, bytes]:
    """A live file's line: when it was logged, and the replay line (``ValueError``: not one)."""
    at, _, line = raw.partition(b" ")
    return float(at), line


class Published(Observer):
    """A match's observer that also publishes its games to a live folder; everything
    else goes on to ``inner``.

    A game's lines are kept as they are logged, each with its time, and written out
    with a turn's events line once ``WRITE_EVERY_S`` has passed since the last write (a
    reader sees whole turns): a game of bots that answer at once is written a few times
    in all, and one over before ``WRITE_EVERY_S`` never (it is stored a moment later),
    so publishing costs such a referee next to nothing."""

    def __init__(self, inner: Observer, folder: LiveFolder, name: str, every: float | None = None) -> None:
        self.inner = inner
        self.every = WRITE_EVERY_S if every is None else every
        """``WRITE_EVERY_S``, or 0 for a game a person plays: each turn written at once."""
        self.folder = folder
        self.name = name
        self.live: LiveFile | None = None
        self.game_no = 0
        self.kept: list[tuple[float, Line]] = []
        self.written = 0.0
        """When the kept lines were last written (at the game's start: none yet)."""

    def events(self, game_no: int, events: list[Any]) -> None:
        self.inner.events(game_no, events)

    def line(self, game_no: int, line: Line) -> None:
        now = time.time()
        if isinstance(line, Header):
            self.close()
            self.game_no, self.kept, self.written = game_no, [], now
        self.kept.append((now, line))
        if isinstance(line, End):
            if self.live is not None:
                self._write()
            self.close()
        elif isinstance(line, EventsLine) and now - self.written >= self.every:
            self._write()

    def _write(self) -> None:
        try:
            if self.live is None:
                self.live = self.folder.open(self.name, self.game_no)
            self.live.file.write(b"".join(encode(line, at) for at, line in self.kept))
            self.live.file.flush()
        except OSError:  # a full disk, a folder removed: the game plays on, unpublished
            self._drop()
        self.kept.clear()
        self.written = time.time()

    def _drop(self) -> None:
        if self.live is not None:
            live, self.live = self.live, None
            with contextlib.suppress(OSError):
                live.file.close()

    def game_over(self, result: Any) -> None:
        self.inner.game_over(result)

    def close(self) -> None:
        """Mark the game being written finished (the match stopped, or it ended)."""
        self.kept = []
        if self.live is not None:
            live, self.live = self.live, None
            try:
                self.folder.finish(live)
            except OSError:
                pass


def publish_beside(db: str | Path) -> LiveFolder | None:
    """The live folder of database ``db``, made if need be; None where it cannot be (a
    read-only folder): the games are then played unpublished."""
    try:
        return LiveFolder(folder_of(db))
    except OSError:
        return None
