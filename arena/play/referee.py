"""The referee: plays one match (several games between the same seated bots).

A match is a description in (``MatchSpec``) and a result out (``MatchResult``): no
shared state, so it could run on another machine. The referee drives any game through
the interface of ``arena.games.base`` and any bot through ``arena.sandbox.base``; it
names neither a game nor a sandbox.

Hidden simultaneous play: all seats of a decision are asked at once, and nothing about
the answers leaves the referee before every seat has answered or run out of time (the
events of a decision are only computed once all answers are in).

What a bot process lives for: the games of its match up to the first one whose deal it
has already played (``lives``). A bot that remembered a deal's game would know every
hand of its other rotations, so the bots start afresh there, from processes started
ahead of time (a spare per bot, greeted and frozen while the games before it play).
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import msgspec
import trio

from arena.bots import Bot
from arena.games import AnyRules, Decision
from arena.games.registry import get_game
from arena.play.match import GameResult, GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.replay import (
    FORMAT,
    DecisionLine,
    DroppedLine,
    End,
    EventsLine,
    Fault,
    FaultLine,
    Header,
    Line,
    SeatInfo,
    SeatStatus,
    final_ranks,
    round_and_turn,
)
from arena.play.session import Answered, Dropped, Faulted, Outbox, Pending, greet, judge
from arena.sandbox.base import BotGone, BotProcess, Sandbox, StartError
from arena.sandbox.framing import EndOfStream
from arena.sandbox.inbox import Inbox, LineInbox, Received
from protocol.messages import (
    PROTOCOL_VERSION,
    Bye,
    Events,
    GameOver,
    Hello,
    Limits,
    NewGame,
    encode,
)

MAX_FAULTS = 3
"""Faults in one game after which the default policy plays the seat and it ranks last."""
MAX_RESTARTS = 3
"""Times a bot that crashed (or failed its start) is started again for the next game of
its match; after that it is out of the match, and the default plays its seats."""
EVIDENCE_CHARS = 500
DROPPED_LOGGED_PER_GAME = 20


class MatchError(Exception):
    """A match that cannot start: a bot refused the game, or the spec is inconsistent."""


class StartUpFailed(MatchError):
    """Every bot of the match failed at start-up: no game could be more than defaults, so
    none is played. The message is one line: the first bot's fault and how to look into it."""

    def __init__(self, bot: Bot, fault: Fault) -> None:
        line = f"every bot of the match failed at start-up, so no game was played; {bot.name} ({bot.path}): {fault.message}"
        last = [text.strip() for text in (fault.stderr or "").splitlines() if text.strip()]
        if last:
            line += f"; its stderr ends: {last[-1][:EVIDENCE_CHARS]}"
        super().__init__(f"{line}; run `arena bot check {bot.path}` to see why, and fix the bot or what it needs")
        self.bot = bot
        self.fault = fault


class Observer:
    """Hooks for whoever watches a match (the CLI's live output, a progress bar)."""

    def events(self, game_no: int, events: list[Any]) -> None:
        pass

    def line(self, game_no: int, line: Line) -> None:
        """Each line of a game's replay as it is logged (a live feed, ``arena.play.live``)."""

    def game_over(self, result: GameResult) -> None:
        pass


class TimedGames(Observer):
    """Hands each game on with its wall time in ms, from the end of the game before (or
    from when it was made, for the first)."""

    def __init__(self, game_over: Callable[[GameResult, float], None]) -> None:
        self._game_over = game_over
        self._clock = time.perf_counter()

    def game_over(self, result: GameResult) -> None:
        now = time.perf_counter()
        self._game_over(result, round((now - self._clock) * 1000, 1))
        self._clock = now


def lives(games: Sequence[GameSpec]) -> list[int]:
    """Where the match's bot processes start afresh: at 0, and at each game whose deal
    (its seed) was played since the last start. A process never plays two games of one
    deal, whatever the order of the games (a round robin plays them rotation by
    rotation, so a table of K bots has K lives per match)."""
    starts, seen = [0], set[int]()
    for position, game in enumerate(games):
        if game.seed in seen:
            starts.append(position)
            seen = set()
        seen.add(game.seed)
    return starts


@dataclass
class _Launch:
    """A process started for a bot and greeted, or why it could not be."""

    process: BotProcess | None = None
    error: StartError | None = None
    """The sandbox could not start it at all: the match stops."""
    fault: Faulted | None = None
    """It started but failed its hello."""
    refused: bytes | None = None
    """Its hello answer, when it refused the game."""


class _Player:
    """A bot of the match and its process; ``dead`` says why it can no longer play."""

    def __init__(self, index: int, bot: Bot) -> None:
        self.index = index
        self.bot = bot
        self.process: BotProcess | None = None
        self.lives = 0
        """Processes it has had for the match's lives so far, beyond the first."""
        self.spare: _Launch | None = None
        self.spare_ready = trio.Event()
        """The process for its next life, started ahead: ``spare`` once this is set."""
        self.spare_ready.set()  # none is being started
        self.dead: str | None = None
        self.stopping = False
        """Its process is being stopped already (a failed start-up)."""
        self.start_fault: Fault | None = None
        """Why its latest start failed (None once a start succeeds)."""
        self.start_error: StartError | None = None
        self.restarts = 0
        self.out = False
        """Crashed again after ``MAX_RESTARTS`` restarts: not started again in this match."""
        self.outbox = Outbox()
        self.cpu_mark = 0.0
        """The bot's CPU seconds at its last answer: a move's CPU time is what it used
        since (events ride with the request, so nothing else happens in between)."""

    def isolation(self, sandbox: Sandbox) -> str:
        return self.process.isolation if self.process is not None else sandbox.isolation

    def fault(self, kind: str, message: str, line: bytes | None = None) -> Fault:
        if line is None and kind == "crash" and self.process is not None:
            line = self.process.output.unended() or None  # its last words, written without a newline
        text = None if line is None else line[:EVIDENCE_CHARS].decode("utf-8", "replace")
        tail = self.process.stderr_tail() if self.process else None
        return Fault(kind, message, text, tail or None)

    def not_running(self) -> Fault:
        return self.fault("crash", f"bot is not running ({self.dead})")

    def out_fault(self) -> Fault:
        return Fault(
            "crash", f"bot is not running ({self.dead}); not started again after {MAX_RESTARTS} restarts in this match"
        )


class _Clock:
    """One seat's time in one game: the move limit, and what is left of its bank."""

    def __init__(self, move_ms: int, bank_ms: int) -> None:
        self.move_ms = move_ms
        self.bank_ms = bank_ms
        self.bank_start_ms = bank_ms
        """The bank the game began with."""

    def limit_ms(self) -> int:
        """The most the next move may take."""
        return self.move_ms + self.bank_ms

    def deadline(self, sent: float) -> float:
        """When a request sent at ``sent`` (Trio's clock) times out."""
        return sent + self.limit_ms() / 1000

    def charge(self, elapsed_ms: float) -> None:
        """An answer took ``elapsed_ms``: what overran the move limit comes off the bank."""
        self.bank_ms = max(0, self.bank_ms - max(0, round(elapsed_ms) - self.move_ms))

    def run_out(self) -> None:
        self.bank_ms = 0


def timeout_message(request_id: int, clock: _Clock) -> str:
    """Why a request timed out, saying what the time bank did: a timeout that used up
    what was left of it, or one at the move limit alone because it was spent already."""
    said = f"no answer to request {request_id} within {clock.limit_ms()} ms"
    if clock.bank_start_ms <= 0:
        return said  # a game without a bank: the move limit is all there is
    bank = _duration(clock.bank_start_ms)
    if clock.bank_ms > 0:
        left = f"{clock.move_ms} ms a move + the {clock.bank_ms} ms left of the {bank} time bank"
        return f"{said} ({left}): the bank is now spent"
    return f"{said}: the time bank ({bank}) is spent"


def _duration(ms: int) -> str:
    """``10 s``, ``1.5 s``, ``120 ms``."""
    return f"{ms / 1000:g} s" if ms >= 1000 else f"{ms} ms"


class _Seat:
    """One seat's standing within the game being played."""

    def __init__(self, player: _Player, clock: _Clock) -> None:
        self.player = player
        self.clock = clock
        self.faults: list[Fault] = []
        self.disqualified = False

    def record(self, fault: Fault) -> None:
        """The lenient policy: a crash, or the third fault, and the default plays the seat."""
        self.faults.append(fault)
        if len(self.faults) >= MAX_FAULTS or fault.kind == "crash":
            self.disqualified = True

    def status(self) -> SeatStatus:
        if self.disqualified:
            return SeatStatus("disqualified", self.faults)
        return SeatStatus("faulty" if self.faults else "ok", self.faults)


class _ReplayWriter:
    """The replay of the game being played: every line it gets is appended here."""

    def __init__(self, header: Header, logged: Callable[[Line], None]) -> None:
        self.lines: list[Line] = []
        self._logged = logged
        self._dropped = [0] * header.players
        self._add(header)

    def _add(self, line: Line) -> None:
        self.lines.append(line)
        self._logged(line)

    def events(self, events: list[Any]) -> None:
        self._add(EventsLine(events))

    def fault(self, seat_no: int, fault: Fault) -> None:
        self._add(FaultLine(seat_no, fault))

    def dropped(self, seat_no: int, line: bytes, reason: str) -> None:
        """Log a line that answered nothing (the first few of each seat in each game)."""
        self._dropped[seat_no] += 1
        if self._dropped[seat_no] <= DROPPED_LOGGED_PER_GAME:
            text = line[:EVIDENCE_CHARS].decode("utf-8", "replace")
            self._add(DroppedLine(seat_no, text, reason))

    def decision(self, line: DecisionLine) -> None:
        self._add(line)

    def end(self, end: End) -> None:
        self._add(end)


class _FairTime:
    """The machine's thinking slots and the freezing of bots between their turns (see
    docs/design.md, Fair time); with fair time off, neither."""

    def __init__(self, slots: trio.Semaphore | None, freeze: bool) -> None:
        self.slots = slots
        self.freeze = freeze

    async def take(self, busy: bool) -> bool:
        """Hold one slot for the next request. With requests of our own in flight
        (``busy``), only a free slot will do (their answers free ours); with none, wait
        for one, however long other matches hold them."""
        if self.slots is None:
            return True
        try:
            self.slots.acquire_nowait()  # a free slot is taken without a trip through the scheduler
        except trio.WouldBlock:
            if busy:
                return False
            await self.slots.acquire()
        return True

    def begin(self, process: BotProcess) -> None:
        """The bot has been sent its request: let it run."""
        if self.freeze:
            process.thaw()

    def end(self, process: BotProcess | None) -> None:
        """The bot has answered (or run out of time): give back its slot, freeze it."""
        if self.slots is not None:
            self.slots.release()
        if self.freeze and process is not None:
            process.freeze()


class _Move:
    """One asked seat's part in a decision: its answer (None: the default), its times, its fault."""

    def __init__(self, seat_no: int) -> None:
        self.seat_no = seat_no
        self.answer: Any = None
        self.wall_ms = 0.0
        self.cpu_ms = 0.0
        self.fault: Fault | None = None


class _Ask:
    """A request in flight: the move it decides, what it awaits, when it times out."""

    def __init__(self, move: _Move, pending: Pending, sent: float, deadline: float) -> None:
        self.move = move
        self.pending = pending
        self.sent = sent
        self.deadline = deadline


class _Turn:
    """One decision being played: the seats still to ask, the asks in flight (by
    player), and each asked seat's move, in the decision's order."""

    def __init__(self, decision: Decision, seats: Sequence[_Seat]) -> None:
        self.decision = decision
        self.moves = [_Move(seat_no) for seat_no in decision.seats]
        self.to_ask: deque[_Move] = deque()
        self.asks: dict[int, _Ask] = {}
        for move in self.moves:
            seat = seats[move.seat_no]
            if seat.disqualified or seat.player.process is None:
                continue
            if seat.player.dead:
                move.fault = seat.player.not_running()
            else:
                self.to_ask.append(move)

    def deadline(self) -> float:
        return min(ask.deadline for ask in self.asks.values())

    def overdue(self, now: float) -> list[tuple[int, _Ask]]:
        """The asks whose time has run out by ``now``, taken out of those in flight."""
        late = [(key, ask) for key, ask in self.asks.items() if ask.deadline <= now]
        for key, _ in late:
            del self.asks[key]
        return late


async def play_match(
    spec: MatchSpec,
    sandbox: Sandbox,
    observer: Observer | None = None,
    slots: trio.Semaphore | None = None,
    *,
    keep_games: bool = True,
    inbox: LineInbox | None = None,
) -> MatchResult:
    """Start the bots, play every game of ``spec``, stop the bots (also when cancelled).

    ``slots`` are the machine's thinking slots, shared by every match running at once;
    with ``spec.fair_time`` and none given, the match has one per core to itself. Each
    game goes to ``observer.game_over`` as it ends; with ``keep_games=False`` the match
    keeps nothing of it (its memory stays flat however many games it plays). ``inbox``
    is where the bots' lines arrive (by default the epoll inbox over their pipes; a
    test may hand one fed in memory).
    """
    if spec.fair_time and slots is None:
        slots = trio.Semaphore(os.cpu_count() or 1)
    fair = _FairTime(slots if spec.fair_time else None, spec.fair_time)
    referee = _Referee(spec, sandbox, observer or Observer(), fair, inbox or Inbox())
    return await referee.run(keep_games)


class _Referee:
    """One match: starts and restarts the bots, plays its games, and judges the lines
    of the bots through the lenient policy."""

    def __init__(
        self, spec: MatchSpec, sandbox: Sandbox, observer: Observer, fair: _FairTime, inbox: LineInbox
    ) -> None:
        self.spec = spec
        self.fair = fair
        self.sandbox = sandbox
        self.observer = observer
        self.players = [_Player(i, bot) for i, bot in enumerate(spec.bots)]
        self._inbox = inbox
        self.limits = spec.limits
        self.request_id = 0
        self.game: AnyRules = get_game(spec.game).rules
        if not spec.games:
            raise MatchError("a match needs at least one game")
        for bot in spec.bots:
            if spec.game not in bot.manifest.games:
                listed = ", ".join(bot.manifest.games) or "no game"
                hint = f" (to play it, --game {bot.manifest.games[0]})" if bot.manifest.games else ""
                raise MatchError(
                    f"{bot.name} ({bot.path}) does not play {spec.game}: its bot.toml lists {listed}{hint}"
                )
        self.seat_count = len(spec.games[0].seats)
        for g in spec.games:
            if len(g.seats) != self.seat_count or sorted(g.seats) != list(range(len(spec.bots))):
                raise MatchError(f"game seats {g.seats} do not seat each of the {len(spec.bots)} bots once")
        self.game_nos = [i if g.game_no is None else g.game_no for i, g in enumerate(spec.games)]
        if any(n < 0 for n in self.game_nos) or len(set(self.game_nos)) < len(self.game_nos):
            raise MatchError(f"game numbers {self.game_nos} are not distinct numbers from 0 up")
        self._next_life = dict(pairwise([*lives(spec.games), len(spec.games)]))
        """Each life's first game, and the first game of the next (or the match's end)."""
        self._prestarts: list[trio.CancelScope] = []
        self.settings = self.game.parse_settings(spec.settings, self.seat_count)
        self.settings_dict: dict[str, Any] = msgspec.to_builtins(self.settings)

    async def run(self, keep_games: bool = True) -> MatchResult:
        results = []
        played = 0
        async with trio.open_nursery() as nursery:
            try:
                error = await self._start_all(nursery)
                position = 0
                while error is None and position < len(self.spec.games):
                    result = await self._play_game(position)
                    played += 1
                    if keep_games:
                        results.append(result)
                    self.observer.game_over(result)
                    del result
                    position += 1
                    if position in self._next_life:  # whose deal every process played
                        error = await self._new_life(nursery, position)
                    elif position < len(self.spec.games):
                        error = await self._restart_crashed(nursery, position)
                if error is None:
                    for player in self.players:
                        await self._send(player, encode(Bye()))
            finally:
                with trio.CancelScope(shield=True):
                    for scope in self._prestarts:
                        scope.cancel()
                    for player in self.players:
                        await player.spare_ready.wait()
                    async with trio.open_nursery() as stopping:
                        for player in self.players:
                            if player.process is not None and not player.stopping:
                                stopping.start_soon(player.process.stop)
                            if player.spare is not None and player.spare.process is not None:
                                stopping.start_soon(player.spare.process.stop)
                nursery.cancel_scope.cancel()
                self._inbox.close()
        if error is not None:
            raise error  # out here, not wrapped in the nursery's exception group
        return MatchResult(results, self.sandbox.isolation, played)

    async def _start_all(self, nursery: trio.Nursery) -> Exception | None:
        """Start every bot at once; the error that stops the match before it begins, if any."""
        async with trio.open_nursery() as starting:
            for player in self.players:
                starting.start_soon(self._start, player, 0, nursery)
        for player in self.players:
            if player.start_error is not None:
                return player.start_error
        refusals = [p.bot.name for p in self.players if p.dead == "refused"]
        if refusals:
            return MatchError(f"{', '.join(refusals)} refused to play {self.spec.game} (its hello answer)")
        self._start_spares(nursery, 0)
        return self._all_failed()

    def _start_spares(self, nursery: trio.Nursery, position: int) -> None:
        """Start, in the background, each bot's process for the life after the one
        beginning at ``position``, so that starting it costs the match no wall time."""
        start = self._next_life[position]
        if start == len(self.spec.games):
            return
        for player in self.players:
            if not player.out and player.dead != "refused":
                player.spare, player.spare_ready = None, trio.Event()
                nursery.start_soon(self._prestart, player, start, nursery)

    async def _prestart(self, player: _Player, position: int, nursery: trio.Nursery) -> None:
        launch = _Launch()
        try:
            with trio.CancelScope() as scope:
                self._prestarts.append(scope)
                launch = await self._launch(player, position, nursery)
        finally:
            player.spare = launch
            player.spare_ready.set()

    async def _new_life(self, nursery: trio.Nursery, position: int) -> Exception | None:
        """Before the game at ``position``, whose deal the bots' processes have played:
        retire every process (bye, then stopped in the background) and put each bot's
        spare in its place. A spare that failed its start is a start-up fault in this
        game, and the bot is started again before the next, as at the match's start.
        The error that stops the match, if any."""
        for player in self.players:
            if player.out or player.dead == "refused":
                continue
            await self._send(player, encode(Bye()))
            self._retire(player, nursery)
            await player.spare_ready.wait()
            spare, player.spare = player.spare, None
            assert spare is not None
            player.lives += 1
            self._adopt(player, spare, nursery)
        for player in self.players:
            if player.start_error is not None:
                return player.start_error
        self._start_spares(nursery, position)
        return self._all_failed()

    async def _restart_crashed(self, nursery: trio.Nursery, position: int) -> Exception | None:
        """Before the game at ``position`` (and its clocks): start afresh each bot that
        crashed, or failed its start, up to ``MAX_RESTARTS`` times per match; a bot past
        them is out of the match. The error that stops the match, if any."""
        again = []
        for player in self.players:
            if player.dead is None or player.out:
                continue
            if player.restarts >= MAX_RESTARTS:
                self._stop(player, nursery)
                player.out = True
            else:
                again.append(player)
        if not again:
            return None
        async with trio.open_nursery() as starting:
            for player in again:
                self._retire(player, nursery)
                player.restarts += 1
                starting.start_soon(self._start, player, position, nursery)
        for player in again:
            if player.start_error is not None:
                return player.start_error
        return self._all_failed()

    def _stop(self, player: _Player, nursery: trio.Nursery) -> None:
        """Take the bot's process out of play: frozen or gone, stopped in the background."""
        if player.process is not None:
            self._inbox.discard(player.index)
            if not player.stopping:
                player.stopping = True
                nursery.start_soon(player.process.stop)

    def _retire(self, player: _Player, nursery: trio.Nursery) -> None:
        """Stop the bot's process and clear what it left, for a new one to take its place."""
        self._stop(player, nursery)
        player.process, player.stopping, player.dead, player.start_fault = None, False, None, None
        player.outbox = Outbox()

    def _all_failed(self) -> Exception | None:
        """When no bot could be started, ``StartUpFailed`` with the first one's fault."""
        if all(p.start_fault is not None for p in self.players):
            fault = self.players[0].start_fault
            assert fault is not None
            return StartUpFailed(self.players[0].bot, fault)
        return None

    # --- sessions ---------------------------------------------------------------------

    async def _start(self, player: _Player, position: int, nursery: trio.Nursery) -> None:
        """Start one bot for the games from ``position`` on and shake hands, within the
        start-up limit."""
        self._adopt(player, await self._launch(player, position, nursery), nursery)

    async def _launch(self, player: _Player, position: int, nursery: trio.Nursery) -> _Launch:
        """Start a process for the bot's games from ``position`` to the end of their life
        and greet it, within the start-up limit; frozen once greeted, under fair time."""
        games = min(end for end in self._next_life.values() if end > position) - position
        limits = self._limits_of(player)
        hello = Hello(
            protocol=PROTOCOL_VERSION,
            game=self.spec.game,
            settings=self.settings_dict,
            seat=self.spec.games[position].seats.index(player.index),
            players=self.seat_count,
            limits=Limits(limits.move_ms, limits.bank_ms, limits.startup_ms, self.spec.max_line),
            games=games,
        )
        deadline = trio.current_time() + limits.startup_ms / 1000
        launch = _Launch()
        with trio.move_on_at(deadline) as scope:
            try:
                launch.process = await self.sandbox.start(player.bot, nursery, self.spec.max_line)
            except StartError as exc:
                launch.error = exc
                return launch
        if scope.cancelled_caught:
            message = f"no hello answer within {limits.startup_ms} ms of start"
            launch.fault = Faulted("timeout", message, None, "timeout")
            return launch
        process = launch.process
        assert process is not None
        try:
            greeting = await greet(process, hello, deadline)
        except BaseException:
            with trio.CancelScope(shield=True):
                await process.stop()
            raise
        if isinstance(greeting, Faulted):
            launch.fault = greeting
        elif not greeting.reply.accept:
            launch.refused = greeting.line
        elif self.spec.fair_time:
            process.freeze()
        return launch

    def _adopt(self, player: _Player, launch: _Launch, nursery: trio.Nursery) -> None:
        """Make ``launch`` the bot's process: it plays, or its failure is recorded."""
        if launch.error is not None:
            player.start_error = launch.error
            return
        player.process = launch.process
        again = player.restarts or player.lives
        if launch.fault is not None:
            self._start_failed(player, launch.fault)
        elif launch.refused is not None and again:
            message = f"refused to play {self.spec.game} when started again"
            self._start_failed(player, Faulted("malformed", message, launch.refused, "not a hello"))
        elif launch.refused is not None:
            player.dead = "refused"
        else:
            assert player.process is not None
            player.cpu_mark = player.process.cpu_seconds()
            self._inbox.add(player.index, player.process)
        if player.dead and player.process is not None:
            # It will not play: stop it now rather than let it run (and compute) all match.
            player.process.freeze()
            player.stopping = True
            nursery.start_soon(player.process.stop)

    def _start_failed(self, player: _Player, faulted: Faulted) -> None:
        player.start_fault = player.fault(faulted.kind, faulted.message, faulted.line)
        player.dead = faulted.message

    def _limits_of(self, player: _Player) -> TimeLimits:
        """The bot's own limits (a person's seat has longer ones), else the match's."""
        return self.spec.bot_limits.get(player.index, self.limits)

    def _clock(self, player: _Player) -> _Clock:
        limits = self._limits_of(player)
        return _Clock(limits.move_ms, limits.bank_ms)

    async def _send(self, player: _Player, data: bytes, thaw: Callable[[], None] | None = None) -> None:
        """Send what is queued for the bot and ``data``, in one write; a bot that stopped
        reading its input for a whole move time is given up on. ``thaw``: see ``Transport.send``."""
        data = player.outbox.take(data)
        if player.dead or player.process is None:
            return
        try:
            await player.process.send(data, self._limits_of(player).move_ms / 1000, thaw)
        except BotGone as exc:
            player.dead = f"gone: {exc}"

    # --- games ------------------------------------------------------------------------

    async def _play_game(self, position: int) -> GameResult:
        game_spec, game_no = self.spec.games[position], self.game_nos[position]
        game = self.game
        seats = [_Seat(self.players[i], self._clock(self.players[i])) for i in game_spec.seats]
        players = len(seats)
        replay = _ReplayWriter(
            Header(
                format=FORMAT,
                game=self.spec.game,
                settings=self.settings_dict,
                seed=game_spec.seed,
                players=players,
                seats=[
                    SeatInfo(s.player.bot.name, s.player.bot.version, s.player.isolation(self.sandbox)) for s in seats
                ],
                limits={**msgspec.to_builtins(self.limits), "max_line": self.spec.max_line},
                game_no=game_no,
                started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            ),
            functools.partial(self.observer.line, game_no),
        )
        for seat_no, seat in enumerate(seats):
            player = seat.player
            if player.dead is not None:  # its start failed, or it is out of the match
                fault = player.start_fault if player.start_fault is not None and not player.out else player.out_fault()
                self._record_fault(seat, seat_no, msgspec.structs.replace(fault, round=0, turn=0), replay)
                seat.disqualified = True
            player.outbox.queue(encode(NewGame(game_no, seat_no, players, self.settings_dict)))
        state, events = game.start(self.settings, players, game_spec.seed)
        self._publish(game_no, seats, events, replay)
        while (decision := game.decision(state)) is not None:
            line = await self._decide(state, decision, seats, replay)
            state, events = game.apply(state, dict(zip(line.seats, line.answers, strict=True)))
            replay.decision(line)
            self._publish(game_no, seats, events, replay)
        outcome = game.outcome(state)
        assert outcome is not None
        ranks = final_ranks(outcome.ranks, [s.disqualified for s in seats])
        statuses = [s.status() for s in seats]
        for seat in seats:
            await self._send(seat.player, encode(GameOver(game_no, outcome.scores, ranks)))
        stderr = [s.player.process.take_stderr() if s.player.process else "" for s in seats]
        replay.end(End(outcome.scores, ranks, statuses, stderr))
        return GameResult(game_no, game_spec, outcome.scores, ranks, statuses, replay.lines, outcome.rounds)

    def _publish(self, game_no: int, seats: list[_Seat], events: list[Any], replay: _ReplayWriter) -> None:
        """Log the events, and queue for each seat what it may know of them: encoded once
        for every seat that may know them all (the usual case), once each for the others."""
        replay.events(events)
        self.observer.events(game_no, events)
        observe = self.game.observe
        public: bytes | None = None
        for seat_no, seat in enumerate(seats):
            seen = [observe(e, seat_no) for e in events]
            if all(map(operator.is_, seen, events)):
                public = public or encode(Events(events))
                seat.player.outbox.queue(public)
            else:
                seat.player.outbox.events([o for o in seen if o is not None])

    async def _decide(
        self, state: Any, decision: Decision, seats: Sequence[_Seat], replay: _ReplayWriter
    ) -> DecisionLine:
        """Ask every seat of the decision (as many at once as there are thinking slots);
        default for those that fail."""
        turn = _Turn(decision, seats)
        while turn.to_ask or turn.asks:
            # Every request that has a slot is encoded first and then written in one burst,
            # so the seats start thinking together, as the pipe echo's processes do.
            requests: list[tuple[_Move, Pending, bytes]] = []
            while turn.to_ask and await self.fair.take(busy=bool(turn.asks or requests)):
                requests.append(self._request(state, turn.to_ask.popleft(), turn, seats))
            for move, pending, request in requests:
                await self._ask(turn, move, pending, request, seats, replay)
            if turn.asks:
                await self._collect(turn, seats, replay)
                self._time_out(turn, seats)
        answers, wall, cpu, defaulted, banks = [], [], [], [], []
        for move in turn.moves:
            seat = seats[move.seat_no]
            if move.fault is not None:  # where it happened: asked of the state only then, off the per-move path
                round_no, turn_no = round_and_turn(state)
                fault = msgspec.structs.replace(move.fault, round=round_no, turn=turn_no)
                self._record_fault(seat, move.seat_no, fault, replay)
                default = True
            else:
                default = seat.disqualified and move.answer is None
            answers.append(self.game.default(state, move.seat_no) if default else move.answer)
            wall.append(move.wall_ms)
            cpu.append(move.cpu_ms)
            defaulted.append(default)
            banks.append(seat.clock.bank_ms)
        return DecisionLine(decision.kind, list(decision.seats), answers, wall, cpu, defaulted, banks)

    def _request(self, state: Any, move: _Move, turn: _Turn, seats: Sequence[_Seat]) -> tuple[_Move, Pending, bytes]:
        """The request for one seat of the decision, encoded, with what its answer must be."""
        seat_no = move.seat_no
        self.request_id += 1
        pending = Pending(self.request_id, turn.decision.kind, self.game.legal(state, seat_no))
        view = self.game.view(state, seat_no)
        return move, pending, pending.request(view, seats[seat_no].clock.move_ms, seats[seat_no].clock.bank_ms)

    async def _ask(
        self, turn: _Turn, move: _Move, pending: Pending, request: bytes, seats: Sequence[_Seat], replay: _ReplayWriter
    ) -> None:
        """Send one seat its request (and what is queued for it), holding a thinking slot;
        under fair time the bot is thawed once the request is in its pipe, and its clock
        starts then.

        What the bot wrote before (frozen, under fair time, so all of it is in its pipe)
        is dropped unread, just before the request is written: no line written before
        the request can answer it."""
        seat_no = move.seat_no
        seat = seats[seat_no]
        player = seat.player
        process = player.process
        assert process is not None
        early = self._inbox.arm(player.index)
        if early.lines:
            more = f", the last of {early.lines}" if early.lines > 1 else ""
            reason = f"sent before request {pending.request_id} while no request was pending{more}"
            replay.dropped(seat_no, early.last, reason)
        sent = trio.current_time()

        def thaw() -> None:  # its request is in its pipe: it wakes once, to read it
            nonlocal sent
            self.fair.begin(process)
            sent = trio.current_time()

        await self._send(player, request, thaw if self.fair.freeze else None)
        if player.dead:
            self.fair.end(process)
            move.fault = player.not_running()
        else:
            turn.asks[player.index] = _Ask(move, pending, sent, seat.clock.deadline(sent))

    async def _collect(self, turn: _Turn, seats: Sequence[_Seat], replay: _ReplayWriter) -> None:
        """Read lines until every ask in flight is settled, the first deadline passes, or
        a settled ask frees a thinking slot for a seat still to be asked.

        The deadline is the first of the asks in flight when it starts, not moved as
        they settle: it may pass once an ask already settled would have timed out, and
        then no ask is overdue and ``_decide`` calls again with the next deadline."""
        asks = turn.asks
        deadline = turn.deadline()
        receive_by = self._inbox.receive_by
        while asks:
            received = await receive_by(deadline)
            if received is None:
                return
            key = received.key
            player = self.players[key]
            ask = asks.get(key)
            if received.error is None:
                assert received.line is not None
                verdict = judge(received.line, None if ask is None else ask.pending)
            else:
                verdict = await self._verdict(player, ask, received)
            if isinstance(verdict, Dropped):
                seat_no = next(n for n, seat in enumerate(seats) if seat.player is player)
                replay.dropped(seat_no, verdict.line, verdict.reason)
                continue
            if ask is None:
                continue  # its output ended between its requests: the next one finds it dead
            del asks[key]
            self.fair.end(player.process)
            self._settle(ask, verdict, received, seats[ask.move.seat_no])
            if turn.to_ask:
                return  # a thinking slot is free: send the next request first

    async def _verdict(self, player: _Player, ask: _Ask | None, received: Received) -> Answered | Faulted | Dropped:
        """What a received line (or what came instead of one) means; the end of a bot's
        output is a crash."""
        if isinstance(received.error, EndOfStream):
            assert player.process is not None
            player.dead = await player.process.gone_reason()
            return Faulted("crash", f"bot exited: {player.dead}", received.error.tail or None, "exited")
        line = received.line if received.error is None else received.error
        assert line is not None
        return judge(line, None if ask is None else ask.pending)

    def _settle(self, ask: _Ask, verdict: Answered | Faulted, received: Received, seat: _Seat) -> None:
        """The seat's move is decided: its answer or fault, its wall and CPU time, its bank."""
        move, player = ask.move, seat.player
        if isinstance(verdict, Answered):
            move.answer = verdict.answer
        else:
            move.fault = player.fault(verdict.kind, verdict.message, verdict.line)
        elapsed_ms = (received.at - ask.sent) * 1000
        move.wall_ms = round(elapsed_ms, 3)
        move.cpu_ms = round((received.cpu - player.cpu_mark) * 1000, 3)
        player.cpu_mark = received.cpu
        seat.clock.charge(elapsed_ms)

    def _time_out(self, turn: _Turn, seats: Sequence[_Seat]) -> None:
        """Every ask past its deadline is a timeout that empties the seat's bank."""
        now = trio.current_time()
        for _, ask in turn.overdue(now):
            seat = seats[ask.move.seat_no]
            self.fair.end(seat.player.process)
            ask.move.fault = seat.player.fault("timeout", timeout_message(ask.pending.request_id, seat.clock))
            ask.move.wall_ms = round((now - ask.sent) * 1000, 3)
            seat.clock.run_out()

    def _record_fault(self, seat: _Seat, seat_no: int, fault: Fault, replay: _ReplayWriter) -> None:
        seat.record(fault)
        replay.fault(seat_no, fault)


def single_game(bots: Sequence[Bot], seed: int) -> list[GameSpec]:
    """One game with the bots seated in the order given."""
    return [GameSpec(seed, list(range(len(bots))))]
