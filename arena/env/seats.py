"""The seats the environment plays itself: policies in this process, and bots run as
sandboxed processes spoken to with the referee's own session code.

A policy is a function ``(kind, view, legal) -> answer`` (a bot's ``decide``: ``view``
the protocol's dict, ``legal`` the answers allowed), or a ``protocol.bot.Bot`` of the SDK,
which is handed the typed view and told what its seat may know of the game's events, as
``protocol.bot.run`` would tell it.

A bot folder (or a bot stored in a database) runs as a real process in a sandbox (the
local one, bubblewrap, by default), as ``arena play`` runs it: the same ``greet``,
``exchange`` and ``judge`` (``arena.play.session``) as the referee and ``arena bot check``,
the same hello, requests, events and game over. The sync environment reaches the
processes through a Trio loop of their own, on a thread, which holds them and their
helper tasks. A process lives for one game (what a bot process lives for: it never plays
two games of one deal, and ``reset`` may deal the same seed again). The lenient policy is
the referee's: a fault plays the rules' default answer; a crash, or a third fault, and
the default plays the seat for the rest of the game; every fault is kept in ``faults``.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.bots import Bot
from arena.games.registry import AnyGame
from arena.play.match import TimeLimits
from arena.play.session import Answered, Dropped, Faulted, Outbox, Pending, exchange, greet, judge, seen_by
from arena.sandbox.base import BotGone, BotProcess, Sandbox, StartError
from arena.sandbox.framing import LineTooLong
from protocol import bot as sdk
from protocol.messages import MAX_LINE_BYTES, PROTOCOL_VERSION, Bye, GameOver, Hello, Limits, NewGame, encode

Policy = Callable[[str, Any, list[Any]], Any]
"""``(kind, view, legal) -> answer``: the view as the protocol's dict."""
Opponent = Policy | sdk.Bot | Bot | str | PathLike[str]
"""What plays a seat the environment plays itself: a policy, an SDK bot, or a bot to run
as a process (an ``arena.bots.Bot``, a bot folder, or ``NAME[:VERSION]`` stored in ``db``)."""
MAX_FAULTS = 3
"""Faults in one game after which the default plays the seat (the referee's rule)."""


class OpponentError(Exception):
    """A bot that cannot play a seat: it failed to start, to greet, or refused the game."""


@dataclass(frozen=True)
class SeatFault:
    """A fault of a bot playing a seat: what the referee would write in its replay."""

    seat: int
    kind: str
    message: str


def load_opponent(opponent: Opponent, db: Path) -> Policy | sdk.Bot | Bot:
    """A bot folder or stored bot as a ``Bot`` to run; a policy or SDK bot as it is."""
    if isinstance(opponent, str | PathLike):
        from arena.bots import load_bot

        path = Path(opponent)
        if path.is_dir() or "/" in str(opponent):
            return load_bot(path)
        from arena.store import Store

        if not db.exists():
            raise OpponentError(f"{opponent}: no such bot folder, and no database {db} to find a stored bot in")
        return Store(db, read_only=True).get_bot(str(opponent)).load()
    return opponent


class InProcess:
    """Seats played by policies and SDK bots in this process."""

    def __init__(self, record: AnyGame, settings: dict[str, Any], players: int, seats: Mapping[int, Any]) -> None:
        self._record = record
        self._settings = settings
        self._players = players
        self._seats = dict(seats)

    def new_game(self, events: list[Any]) -> None:
        for seat, player in self._seats.items():
            if isinstance(player, sdk.Bot):
                player.new_game(NewGame(1, seat, self._players, self._settings))
        self.events(events)

    def events(self, events: list[Any]) -> None:
        for seat, player in self._seats.items():
            if isinstance(player, sdk.Bot):
                seen = seen_by(self._record.rules.observe, events, seat)
                if seen:
                    player.events(seen)

    def answer(self, seat: int, kind: str, view: Any, legal: list[Any]) -> Any:
        player = self._seats[seat]
        if isinstance(player, sdk.Bot):
            return player.decide(kind, view, legal)
        return player(kind, msgspec.to_builtins(view), legal)

    def game_over(self, scores: list[int], ranks: list[int]) -> None:
        for player in self._seats.values():
            if isinstance(player, sdk.Bot):
                player.game_over(GameOver(1, scores, ranks))


@dataclass
class _Process:
    """One bot's seat: its process for this game, what waits for its next write, its clock."""

    bot: Bot
    process: BotProcess | None = None
    outbox: Outbox = field(default_factory=Outbox)
    bank_ms: int = 0
    faults: int = 0
    dead: str | None = None
    request_id: int = 0


class Processes:
    """Seats played by bots run as processes in ``sandbox``, from a Trio loop on a thread."""

    def __init__(
        self,
        record: AnyGame,
        settings: dict[str, Any],
        players: int,
        bots: Mapping[int, Bot],
        sandbox: Sandbox,
        limits: TimeLimits,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self._record = record
        self._settings = settings
        self._players = players
        self._seats = {seat: _Process(bot) for seat, bot in bots.items()}
        self.seats = frozenset(bots)
        """The seats these bots play."""
        self._sandbox = sandbox
        self._limits = limits
        self._max_line = max_line
        self.faults: list[SeatFault] = []
        for bot in {id(bot): bot for bot in bots.values()}.values():
            sandbox.prepare(bot, lambda line: None)  # before any clock runs, as the referee does
        self._token: trio.lowlevel.TrioToken | None = None
        self._closing: trio.Event | None = None
        self._nursery: trio.Nursery | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="arena-env-bots", daemon=True)
        self._thread.start()
        ready.wait()
        if self._token is None:
            raise OpponentError("the bots' event loop did not start")

    def _run(self, ready: threading.Event) -> None:
        try:
            trio.run(self._loop, ready)
        finally:
            ready.set()  # never leave the environment waiting for a loop that is gone

    async def _loop(self, ready: threading.Event) -> None:
        """Hold the processes' helper tasks until ``close``."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._closing = trio.Event()
            ready.set()
            await self._closing.wait()
            with trio.CancelScope(shield=True):
                await self._stop_all()
            nursery.cancel_scope.cancel()

    def _call(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        assert self._token is not None
        return trio.from_thread.run(function, *args, trio_token=self._token)

    # --- the sync side -----------------------------------------------------------------------

    def new_game(self, events: list[Any]) -> None:
        """Start every bot afresh for a game whose first events are ``events``; ``OpponentError``
        naming the bot that cannot play."""
        self.faults = []
        self._call(self._start_all)
        for seat, player in self._seats.items():
            player.outbox.queue(encode(NewGame(1, seat, self._players, self._settings)))
            player.outbox.events(seen_by(self._record.rules.observe, events, seat))

    def events(self, events: list[Any]) -> None:
        """Queue for each bot what its seat may know of ``events`` (sent with its next request)."""
        for seat, player in self._seats.items():
            player.outbox.events(seen_by(self._record.rules.observe, events, seat))

    def answer(self, seat: int, kind: str, view: Any, legal: list[Any], default: Any) -> Any:
        """The bot's answer, judged as the referee judges it; ``default`` after a fault."""
        answer = self._call(self._ask, seat, kind, view, legal)
        return default if answer is _DEFAULT else answer

    def game_over(self, scores: list[int], ranks: list[int]) -> None:
        """Tell every bot the game is over, say bye, and stop its process."""
        self._call(self._end_all, scores, ranks)

    def isolation(self, seat: int) -> str:
        """What confines the bot at ``seat``, as a replay would say."""
        return self._sandbox.isolation_for(self._seats[seat].bot)

    def running(self) -> bool:
        """Whether the loop, or any bot's process, is still there."""
        return self._thread.is_alive() or any(player.process is not None for player in self._seats.values())

    def close(self) -> None:
        """Stop every process and the loop (idempotent)."""
        if self._thread.is_alive() and self._token is not None and self._closing is not None:
            try:
                trio.from_thread.run_sync(self._closing.set, trio_token=self._token)
            except trio.RunFinishedError:
                pass
            self._thread.join(timeout=30)

    # --- the Trio side -----------------------------------------------------------------------

    async def _start_all(self) -> None:
        await self._stop_all()
        limits = self._limits
        for seat, player in self._seats.items():
            player.outbox, player.faults, player.dead, player.bank_ms = Outbox(), 0, None, limits.bank_ms
            hello = Hello(
                PROTOCOL_VERSION,
                self._record.name,
                self._settings,
                seat,
                self._players,
                Limits(limits.move_ms, limits.bank_ms, limits.startup_ms, self._max_line),
            )
            deadline = trio.current_time() + limits.startup_ms / 1000
            assert self._nursery is not None
            why = f"{player.bot.name} ({player.bot.path}) cannot play seat {seat}"
            try:
                player.process = await self._sandbox.start(player.bot, self._nursery, self._max_line)
            except StartError as exc:
                await self._stop_all()
                raise OpponentError(f"{why}: {exc}") from None
            greeting = await greet(player.process, hello, deadline)
            if isinstance(greeting, Faulted):
                tail = player.process.stderr_tail(300).strip()
                await self._stop_all()
                raise OpponentError(f"{why}: {greeting.message}" + (f"; its stderr ends: {tail}" if tail else ""))
            if not greeting.reply.accept:
                await self._stop_all()
                raise OpponentError(f"{why}: it refused {self._record.name} with settings {self._settings}")

    async def _ask(self, seat: int, kind: str, view: Any, legal: list[Any]) -> Any:
        player = self._seats[seat]
        if player.dead is not None or player.process is None:
            return _DEFAULT
        player.request_id += 1
        limits = self._limits
        pending = Pending(player.request_id, kind, legal)
        request = player.outbox.take(pending.request(view, limits.move_ms, player.bank_ms))
        began = trio.current_time()
        deadline = began + (limits.move_ms + player.bank_ms) / 1000
        got = await exchange(player.process, request, deadline, limits.move_ms / 1000)
        while True:
            verdict = got if isinstance(got, Faulted) else judge(got, pending)
            if not isinstance(verdict, Dropped):
                break
            got = await _next_line(player.process, deadline)
        if isinstance(verdict, Answered):
            overrun = max(0, round((trio.current_time() - began) * 1000) - limits.move_ms)
            player.bank_ms = max(0, player.bank_ms - overrun)
            return verdict.answer
        self.faults.append(SeatFault(seat, verdict.kind, verdict.message))
        player.faults += 1
        if verdict.kind == "timeout":
            player.bank_ms = 0
        if verdict.kind == "crash" or player.faults >= MAX_FAULTS:
            player.dead = verdict.message
        return _DEFAULT

    async def _end_all(self, scores: list[int], ranks: list[int]) -> None:
        for player in self._seats.values():
            if player.process is not None and player.dead is None:
                data = player.outbox.take(encode(GameOver(1, scores, ranks)) + encode(Bye()))
                try:
                    await player.process.send(data, self._limits.move_ms / 1000)
                except BotGone:
                    pass
        await self._stop_all()

    async def _stop_all(self) -> None:
        for player in self._seats.values():
            if player.process is not None:
                process, player.process = player.process, None
                await process.stop()


_DEFAULT = object()
"""What ``_ask`` returns for a seat the default plays (the rules' answer, chosen by the caller)."""


async def _next_line(process: BotProcess, deadline: float) -> bytes | LineTooLong | Faulted:
    """The bot's next line by ``deadline`` (after one that answered nothing), or its fault."""
    with trio.move_on_at(deadline):
        try:
            return await process.receive_line()
        except BotGone as exc:
            return Faulted("crash", f"exited: {exc}", process.output.unended() or None, "exited", str(exc))
        except LineTooLong as exc:
            return exc
    return Faulted("timeout", "no answer in time", process.output.unended() or None, "timeout")
