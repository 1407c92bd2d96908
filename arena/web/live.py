"""Games being played, watched as they are: the live folder's files read for spectators.

The referee's process writes each game it plays, a line as it is logged, to the live
folder beside the database (``arena.play.live``). Here each game someone watches is read
once, however many watch it: its file is followed (read every ``POLL_S``) and its lines
are cut into the viewer's frames by the code that cuts a finished replay
(``viewer.Cut``), a turn at a time as each turn's events arrive. Every frame is made
public before it is kept (``Cut.public``: no hand, no fault message, no pending move,
which is never written before every seat has answered), and encoded once as a
server-sent event that every spectator's stream is sent. Once the end line is read and
the game stored, the end event says where it is: its page shows it as every stored game
is shown (its hands once no rotation of its deal is left to be played).

``delay`` (``arena serve --live-delay``) holds every frame back until that many seconds
after its turn was logged, the end too, so that nobody can relay a game in time to
matter. A stream gets, as server-sent events: ``meta`` (the seats, the game, what the
drawer needs), a ``frame`` per frame, then ``end`` (the stored game's id, page and
frames, and the standings) or ``gone`` (the game was given up, or cannot be shown live).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from arena.play.live import FINISHED, NAME, decode, folder_of, key_of
from arena.play.replay import End, EventsLine, Header, Line, ReplayError, decode_line
from arena.sandbox.leftovers import pid_alive
from arena.web.errors import WebError
from arena.web.viewer import Cut

log = logging.getLogger("arena.web")

POLL_S = 0.02
"""How often a watched game's file is read for new lines."""
IDLE_S = 5.0
"""How long a game nobody watches any more stays read (a reload comes straight back)."""
WRITER_CHECK_S = 1.0
"""How often a quiet game's writer is checked to be alive (a tournament killed mid-game)."""
SEND_EVERY_S = 0.2
"""A stream is sent at most this often (what arrives meanwhile goes in one message): a
fast game makes dozens of frames a second, which no one watching tells apart, and
every message is the server's work for every spectator."""
STORED_WAIT_S = 30.0
STORED_POLL_S = 0.1
"""How long and how often an ended game is looked for among the stored ones."""
KEEPALIVE_S = 15.0
"""A comment sent on a quiet stream, so that proxies keep it open."""
MAX_GAMES = 64
"""Games read at once for spectators."""
MAX_STREAMS = 2000
"""Spectators' streams open at once."""
MAX_FILE_BYTES = 64 << 20
MAX_LINE_BYTES = 4 << 20
HEADER_BYTES = 1 << 16
"""How much of a file is read for its header (the seats' names) in a listing."""


@dataclass(frozen=True)
class LiveGame:
    """A game being played, as a listing shows it."""

    key: str
    """``t3-m12-g4``: game 4 of match 12 of tournament 3."""
    tournament_id: int
    match_no: int
    game_no: int
    game: str
    seats: list[str]
    started: str


class Starved(Exception):
    """The frames part asked for a line before the last one it was given was cut (a part
    that reads ahead): the game cannot be shown live."""


def _event(kind: str, data: bytes) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


class _Feed:
    """The lines read so far, handed to the cut one turn at a time."""

    def __init__(self) -> None:
        self.waiting: deque[Line] = deque()
        self.ended = False
        """The end line has been given: nothing follows it."""

    def __iter__(self) -> Iterator[Line]:
        return self

    def __next__(self) -> Line:
        if not self.waiting:
            raise StopIteration if self.ended else Starved
        return self.waiting.popleft()


class Watched:
    """One live game read for everyone who watches it."""

    def __init__(self, key: str, path: Path, seat: int | None = None) -> None:
        self.key = key
        self.path = path
        self.seat = seat
        """Cut for the player of this seat (its own hand shown), else for spectators."""
        self.name = key if seat is None else f"{key}/{seat}"
        self.meta: bytes | None = None
        self.frames: list[bytes] = []
        """Each public frame, as the ``frame`` event every stream is sent."""
        self.times: list[float] = []
        """When each frame's turn was logged (the delay counts from it)."""
        self.last: bytes | None = None
        """The ``end`` or ``gone`` event, once the game is over; ``last_at`` its time."""
        self.last_at = 0.0
        self.watchers = 0
        self.idle_since = time.monotonic()
        self.changed = anyio.Event()
        self._feed = _Feed()
        self._cut: Cut | None = None
        self._steps: Iterator[list[dict[str, Any]]] | None = None
        self.ended: tuple[float, End] | None = None
        """The end line and its time, once read: the end event waits for the stored game."""

    def _update(self) -> None:
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def _over(self, kind: str, data: bytes, at: float) -> None:
        self.last, self.last_at = _event(kind, data), at
        self._steps = None
        self._update()

    def give_up(self, reason: str) -> None:
        if self.last is None:
            self._over("gone", msgspec.json.encode({"reason": reason}), time.time())

    def line(self, raw: bytes) -> None:
        """Take one line of the file: cut a turn at each events line."""
        if self.last is not None or self.ended is not None:
            return
        try:
            at, data = decode(raw)
            line = decode_line(data)
        except (ValueError, msgspec.DecodeError):
            self.give_up("its live file holds a line that is not a replay's")
            return
        self._feed.waiting.append(line)
        self._feed.ended = isinstance(line, End)
        try:
            if isinstance(line, Header):
                self._cut = Cut(self._feed, self.key)
                self._steps = self._cut.steps()
                # no seed: it deals every hand of the game (and of its deal's other rotations)
                meta = {**self._cut.meta(), "seed": None, "live": True}
                self.meta = _event("meta", msgspec.json.encode(meta))
                self._update()
            elif self._cut is None or self._steps is None:
                self.give_up("its live file does not start with a replay's header")
            elif isinstance(line, EventsLine):
                step_frames = next(self._steps)
                for frame in step_frames:  # "at": when its turn was played (unix seconds)
                    shown = {**self._cut.public(frame, self.seat), "at": at}
                    self.frames.append(_event("frame", msgspec.json.encode(shown)))
                    self.times.append(at)
                self._update()
            elif isinstance(line, End):
                for _ in self._steps:  # none left: the rules read the end line, and check it
                    pass
                self._steps = None
                self.ended = (at, line)
        except Starved:
            self.give_up("its game's frames cannot be cut while it is played")
        except (ReplayError, StopIteration) as exc:
            self.give_up(f"its replay does not follow the rules: {exc}")
        except Exception:  # a game's frames part that fails: this game is not shown, the rest are
            log.error("cutting the live game %s failed", self.key, exc_info=True)
            self.give_up("its frames cannot be cut (the server's log has the details)")

    async def follow(self, games: LiveGames) -> None:
        """Read the file as it grows, until the game is over and nobody has watched it
        for ``IDLE_S``. Whatever goes wrong ends this game's streams, never the server."""
        try:
            await self._follow(games)
        except Exception:
            log.error("reading the live game %s failed", self.key, exc_info=True)
            self.give_up("it can no longer be read (the server's log has the details)")

    async def _follow(self, games: LiveGames) -> None:
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            self.give_up("its live file is gone")
            descriptor = -1
        name = NAME.fullmatch(self.path.name)
        writer = int(name[4]) if name is not None else 0
        rest = b""
        read = 0
        asked = time.monotonic()  # when the writer was last seen alive
        try:
            while True:
                if self.ended is not None and self.last is None:
                    await self._stored(games)
                if descriptor >= 0 and self.last is None and self.ended is None:
                    finished = stat.S_IMODE(os.fstat(descriptor).st_mode) == FINISHED
                    chunk = os.read(descriptor, 1 << 20)
                    read += len(chunk)
                    lines = (rest + chunk).split(b"\n")
                    rest = lines.pop()
                    for raw in lines:
                        self.line(raw)
                    if len(rest) > MAX_LINE_BYTES or read > MAX_FILE_BYTES:
                        self.give_up("its live file is larger than a game's")
                    elif finished and not chunk:  # marked finished before this read: all is read
                        self.give_up("the game was given up before its end")
                    elif not chunk and time.monotonic() - asked > WRITER_CHECK_S:
                        asked = time.monotonic()
                        if not pid_alive(writer):
                            self.give_up("the process playing it has stopped")
                    if chunk:
                        continue
                if self.watchers == 0 and time.monotonic() - self.idle_since > IDLE_S:
                    return
                await anyio.sleep(POLL_S)
        finally:
            if descriptor >= 0:
                os.close(descriptor)
            games.forget(self)

    async def _stored(self, games: LiveGames) -> None:
        """The end event, once the game is stored (the tournament stores it a moment
        after its end line): where its whole replay is, shown as every stored game is
        (hands and all, once no rotation of its deal is left to be played), and the
        standings."""
        assert self.ended is not None
        at, end = self.ended
        name = NAME.fullmatch(self.path.name)
        game_id = None
        waited = time.monotonic()
        while name is not None and game_id is None and time.monotonic() - waited < STORED_WAIT_S:
            try:
                game_id = await anyio.to_thread.run_sync(games.find, int(name[1]), int(name[2]), int(name[3]))
            except Exception:  # the database cannot be read just now: look again
                log.warning("looking for the stored game of %s failed", self.key, exc_info=True)
            if game_id is None:
                await anyio.sleep(STORED_POLL_S)
        found = {"url": f"/games/{game_id}", "frames_url": f"/api/games/{game_id}/frames"} if game_id else {}
        self._over(
            "end", msgspec.json.encode({"game_id": game_id, **found, "scores": end.scores, "ranks": end.ranks}), at
        )

    async def stream(self, delay: float) -> AsyncGenerator[bytes, None]:
        """One spectator's events: what is known now, then each frame once it is cut and
        its delay has passed (``SEND_EVERY_S`` apart at most), then the end."""
        sent = 0
        announced = False
        last_sent = -SEND_EVERY_S
        while True:
            gap = last_sent + SEND_EVERY_S - time.monotonic()
            if gap > 0:  # what came meanwhile goes together
                await anyio.sleep(gap)
            now = time.time()
            chunks = []
            if not announced and self.meta is not None:
                chunks.append(self.meta)
                announced = True
            ready = sent
            while announced and ready < len(self.frames) and self.times[ready] + delay <= now:
                ready += 1
            chunks += self.frames[sent:ready]
            sent = ready
            over = self.last is not None and sent == len(self.frames) and self.last_at + delay <= now
            if over and self.last is not None:
                chunks.append(self.last)
            if chunks:
                yield b"".join(chunks)
                last_sent = time.monotonic()
            if over:
                return
            if sent < len(self.frames):
                wait = self.times[sent] + delay - now
            elif self.last is not None:
                wait = self.last_at + delay - now
            else:
                wait = KEEPALIVE_S
            changed = self.changed
            with anyio.move_on_after(max(0.0, min(wait, KEEPALIVE_S))) as quiet:
                await changed.wait()
            if quiet.cancelled_caught and wait >= KEEPALIVE_S:
                yield b": still playing\n\n"


class LiveGames:
    """The live folder beside a database, as the site reads it."""

    def __init__(
        self, db: str | Path, delay: float = 0.0, find: Callable[[int, int, int], int | None] | None = None
    ) -> None:
        self.folder = folder_of(db)
        self.delay = delay
        self.find = find or (lambda tournament_id, match_no, game_no: None)
        """The stored game's id of a tournament's match and game (None: not stored)."""
        self.watched: dict[str, Watched] = {}
        self.streams = 0
        self._headers: dict[tuple[str, int], LiveGame | None] = {}
        self._tasks: anyio.abc.TaskGroup | None = None

    def attach(self, tasks: anyio.abc.TaskGroup) -> None:
        """Where the games' readers run (the app's lifespan)."""
        self._tasks = tasks

    def _files(self) -> Iterator[tuple[re.Match[str], os.DirEntry[str], os.stat_result]]:
        """The folder's live files, with their names read: regular files named as the
        referee's side names them (a link, a folder, anything else: never)."""
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            name = NAME.fullmatch(entry.name)
            if name is None:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                yield name, entry, info

    def games(self, tournament_id: int | None = None) -> list[LiveGame]:
        """The games being played now (of one tournament), oldest first: files not
        finished whose writer is alive."""
        found: list[LiveGame] = []
        seen: set[tuple[str, int]] = set()
        for name, entry, info in self._files():
            if tournament_id is not None and int(name[1]) != tournament_id:
                continue
            if stat.S_IMODE(info.st_mode) == FINISHED or not pid_alive(int(name[4])):
                continue
            ident = (entry.name, info.st_ino)
            seen.add(ident)
            if ident not in self._headers:
                self._headers[ident] = _listed(Path(entry.path), name)
            game = self._headers[ident]
            if game is not None:
                found.append(game)
        for ident in set(self._headers) - seen:
            del self._headers[ident]
        return sorted(found, key=lambda g: (g.started, g.key))

    def find_file(self, key: str) -> Path:
        """The file of game ``key``: the one being written, else the newest (``WebError``
        404: none)."""
        ranked = [
            (stat.S_IMODE(info.st_mode) != FINISHED, info.st_mtime, Path(entry.path))
            for name, entry, info in self._files()
            if key_of(name) == key
        ]
        if not ranked:
            raise WebError(404, f"no game {key} is being played (the live page lists those that are)")
        return max(ranked)[2]

    def watch(self, key: str, seat: int | None = None) -> Watched:
        """Game ``key`` read for spectators (or for the player of ``seat``), from its first line."""
        watched = self.watched.get(key if seat is None else f"{key}/{seat}")
        if watched is not None:
            return watched
        path = self.find_file(key)  # no such game: a 404, however many are watched
        if len(self.watched) >= MAX_GAMES:
            raise WebError(503, f"{MAX_GAMES} live games are being watched already: try again soon")
        if self._tasks is None:
            raise WebError(503, "the live games are not read by this server")
        watched = Watched(key, path, seat)
        self.watched[watched.name] = watched
        self._tasks.start_soon(watched.follow, self)
        return watched

    def watching(self, key: str) -> int:
        """How many streams of game ``key`` are open."""
        watched = self.watched.get(key)
        return 0 if watched is None else watched.watchers

    def forget(self, watched: Watched) -> None:
        if self.watched.get(watched.name) is watched:
            del self.watched[watched.name]

    async def stream(self, key: str, seat: int | None = None) -> AsyncGenerator[bytes, None]:
        """Game ``key``'s events for one spectator (``WebError`` for no such game, or too
        many), or for the player of ``seat``: its own hand shown, no delay."""
        if self.streams >= MAX_STREAMS:
            raise WebError(503, f"{MAX_STREAMS} people are watching live games already: try again soon")
        watched = self.watch(key, seat)
        delay = self.delay if seat is None else 0.0
        self.streams += 1
        watched.watchers += 1

        async def events() -> AsyncGenerator[bytes, None]:
            try:
                async with contextlib.aclosing(watched.stream(delay)) as chunks:
                    async for chunk in chunks:
                        yield chunk
            finally:
                self.streams -= 1
                watched.watchers -= 1
                watched.idle_since = time.monotonic()

        return events()


def _listed(path: Path, name: re.Match[str]) -> LiveGame | None:
    """A live file's game as a listing shows it, from its header line (None: none yet)."""
    try:
        with open(path, "rb") as file:
            first = file.readline(HEADER_BYTES)
        _, data = decode(first.rstrip(b"\n"))
        header = decode_line(data)
    except (OSError, ValueError, msgspec.DecodeError):
        return None
    if not isinstance(header, Header) or not first.endswith(b"\n"):
        return None
    return LiveGame(
        key=key_of(name),
        tournament_id=int(name[1]),
        match_no=int(name[2]),
        game_no=int(name[3]),
        game=header.game,
        seats=[seat.name for seat in header.seats],
        started=header.started,
    )
