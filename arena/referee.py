"""The referee: plays one match (several games between the same seated bots).

A match is a description in (``MatchSpec``) and a result out (``MatchResult``): no
shared state, so it could run on another machine. The referee drives any game through
the interface of ``arena.games.base`` and any bot through ``arena.sandbox.base``; it
names neither a game nor a sandbox.

Hidden simultaneous play: all seats of a decision are asked at once, and nothing about
the answers leaves the referee before every seat has answered or run out of time (the
events of a decision are only computed once all answers are in).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import deque
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import msgspec
import trio

from protocol.messages import (
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    Answer,
    Bye,
    Events,
    GameOver,
    Hello,
    HelloReply,
    Limits,
    NewGame,
    Request,
    decode_from_bot,
    encode,
)

from .bots import Bot
from .games import Decision, Game, get_game
from .replay import (
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
)
from .sandbox.base import BotGone, BotProcess, Sandbox, StartError
from .sandbox.framing import EndOfStream, LineTooLong
from .sandbox.inbox import Flooded, Inbox, Received

MAX_FAULTS = 3
"""Faults in one game after which the default policy plays the seat and it ranks last."""
MAX_RESTARTS = 3
"""Times a bot that crashed (or failed its start) is started again for the next game of
its match; after that it is out of the match, and the default plays its seats."""
EVIDENCE_CHARS = 500
DROPPED_LOGGED_PER_GAME = 20


class _Ask:
    """A request in flight."""

    def __init__(self, i: int, seat_no: int, request_id: int, legal: list[Any], sent: float, deadline: float) -> None:
        self.i = i
        self.seat_no = seat_no
        self.request_id = request_id
        self.legal = legal
        self.sent = sent
        self.deadline = deadline


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


class TimeLimits(msgspec.Struct, frozen=True):
    move_ms: int = 1000
    """Limit for one move; overrunning it draws on the bank."""
    bank_ms: int = 10_000
    """Extra time for the whole game, spent by moves that overrun ``move_ms``."""
    startup_ms: int = 10_000
    """From starting the bot to its answer to ``hello``; no game clock runs meanwhile."""


class GameSpec(msgspec.Struct, frozen=True):
    seed: int
    seats: list[int]
    """For each seat, the index of the bot (in ``MatchSpec.bots``) that sits there."""
    game_no: int | None = None
    """The game's number in its match (replays, ``new_game``); by default its index in
    ``MatchSpec.games``. A resumed match plays only some games, under their own numbers."""


class MatchSpec(msgspec.Struct, frozen=True):
    game: str
    settings: dict[str, Any]
    bots: list[Bot]
    games: list[GameSpec]
    limits: TimeLimits = TimeLimits()
    max_line: int = MAX_LINE_BYTES
    fair_time: bool = True
    """Freeze each bot while it is not being asked, and let no more bots think at once
    than there are cores (see docs/design.md, Fair time)."""


class GameResult(msgspec.Struct, frozen=True):
    game_no: int
    spec: GameSpec
    scores: list[int]
    ranks: list[int]
    statuses: list[SeatStatus]
    replay: list[Line]
    rounds: int = 1


class MatchResult(msgspec.Struct, frozen=True):
    games: list[GameResult]
    """Every game played, when asked for (``play_match(keep_games=True)``); else empty:
    each game went to the observer as it ended, and the match kept nothing of it."""
    isolation: str
    played: int = 0


class Observer:
    """Hooks for whoever watches a match (the CLI's live output, a progress bar)."""

    def events(self, game_no: int, events: list[Any]) -> None:
        pass

    def game_over(self, result: GameResult) -> None:
        pass


class _Player:
    """A bot of the match and its process; ``dead`` says why it can no longer play."""

    def __init__(self, index: int, bot: Bot) -> None:
        self.index = index
        self.bot = bot
        self.process: BotProcess | None = None
        self.dead: str | None = None
        self.stopping = False
        """Its process is being stopped already (a failed start-up)."""
        self.start_fault: Fault | None = None
        """Why its latest start failed (None once a start succeeds)."""
        self.start_error: StartError | None = None
        self.restarts = 0
        self.out = False
        """Crashed again after ``MAX_RESTARTS`` restarts: not started again in this match."""
        self.outbox: list[bytes] = []
        """Lines that wait for the next write: events ride with the next request, so a
        bot is woken once per decision, not twice."""
        self.dropped = 0
        self.cpu_mark = 0.0
        """The bot's CPU seconds at its last answer: a move's CPU time is what it used
        since (events ride with the request, so nothing else happens in between)."""

    def isolation(self, sandbox: Sandbox) -> str:
        return self.process.isolation if self.process is not None else sandbox.isolation

    def fault(self, kind: str, message: str, line: bytes | None = None) -> Fault:
        if line is None and kind == "crash" and self.process is not None:
            line = self.process.lines.rest() or None  # its last words, written without a newline
        text = None if line is None else line[:EVIDENCE_CHARS].decode("utf-8", "replace")
        tail = self.process.stderr_tail() if self.process else None
        return Fault(kind, message, text, tail or None)

    def out_fault(self) -> Fault:
        return Fault(
            "crash", f"bot is not running ({self.dead}); not started again after {MAX_RESTARTS} restarts in this match"
        )


class _Seat:
    """One seat's standing within the game being played."""

    def __init__(self, player: _Player, bank_ms: int) -> None:
        self.player = player
        self.bank_ms = bank_ms
        self.faults: list[Fault] = []
        self.disqualified = False

    def status(self) -> SeatStatus:
        if self.disqualified:
            return SeatStatus("disqualified", self.faults)
        return SeatStatus("faulty" if self.faults else "ok", self.faults)


async def play_match(
    spec: MatchSpec,
    sandbox: Sandbox,
    observer: Observer | None = None,
    slots: trio.Semaphore | None = None,
    *,
    keep_games: bool = True,
) -> MatchResult:
    """Start the bots, play every game of ``spec``, stop the bots (also when cancelled).

    ``slots`` are the machine's thinking slots, shared by every match running at once;
    with ``spec.fair_time`` and none given, the match has one per core to itself. Each
    game goes to ``observer.game_over`` as it ends; with ``keep_games=False`` the match
    keeps nothing of it (its memory stays flat however many games it plays).
    """
    if spec.fair_time and slots is None:
        slots = trio.Semaphore(os.cpu_count() or 1)
    referee = _Referee(spec, sandbox, observer or Observer(), slots if spec.fair_time else None)
    return await referee.run(keep_games)


class _Referee:
    def __init__(self, spec: MatchSpec, sandbox: Sandbox, observer: Observer, slots: trio.Semaphore | None) -> None:
        self.spec = spec
        self.slots = slots
        self.sandbox = sandbox
        self.observer = observer
        self.game: Game = get_game(spec.game)
        self.players = [_Player(i, bot) for i, bot in enumerate(spec.bots)]
        self._inbox = Inbox()
        self.limits = spec.limits
        self.request_id = 0
        if not spec.games:
            raise MatchError("a match needs at least one game")
        for bot in spec.bots:
            if spec.game not in bot.manifest.games:
                listed = ", ".join(bot.manifest.games) or "no game"
                raise MatchError(f"{bot.name} ({bot.path}) does not play {spec.game}: its bot.toml lists {listed}")
        self.seat_count = len(spec.games[0].seats)
        for g in spec.games:
            if len(g.seats) != self.seat_count or sorted(g.seats) != list(range(len(spec.bots))):
                raise MatchError(f"game seats {g.seats} do not seat each of the {len(spec.bots)} bots once")
        self.game_nos = [i if g.game_no is None else g.game_no for i, g in enumerate(spec.games)]
        if any(n < 0 for n in self.game_nos) or any(a >= b for a, b in pairwise(self.game_nos)):
            raise MatchError(f"game numbers {self.game_nos} do not increase from 0 or more")
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
                    if position < len(self.spec.games):
                        error = await self._restart_crashed(nursery, position)
                if error is None:
                    for player in self.players:
                        await self._send(player, encode(Bye()))
            finally:
                with trio.CancelScope(shield=True):
                    async with trio.open_nursery() as stopping:
                        for player in self.players:
                            if player.process is not None and not player.stopping:
                                stopping.start_soon(player.process.stop)
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
        return self._all_failed()

    async def _restart_crashed(self, nursery: trio.Nursery, position: int) -> Exception | None:
        """Before the game at ``position`` (and its clocks): start afresh each bot that
        crashed, or failed its start, up to ``MAX_RESTARTS`` times per match; a bot past
        them is out of the match. The error that stops the match, if any."""
        again = []
        for player in self.players:
            if player.dead is None or player.out:
                continue
            if player.process is not None:
                self._inbox.discard(player.index)
                if not player.stopping:  # frozen or gone: stopped in the background
                    player.stopping = True
                    nursery.start_soon(player.process.stop)
            if player.restarts >= MAX_RESTARTS:
                player.out = True
            else:
                again.append(player)
        if not again:
            return None
        async with trio.open_nursery() as starting:
            for player in again:
                player.restarts += 1
                player.process, player.stopping, player.dead, player.start_fault = None, False, None, None
                starting.start_soon(self._start, player, position, nursery)
        for player in again:
            if player.start_error is not None:
                return player.start_error
        return self._all_failed()

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
        hello = Hello(
            protocol=PROTOCOL_VERSION,
            game=self.spec.game,
            settings=self.settings_dict,
            seat=self.spec.games[position].seats.index(player.index),
            players=self.seat_count,
            limits=Limits(self.limits.move_ms, self.limits.bank_ms, self.limits.startup_ms, self.spec.max_line),
            games=len(self.spec.games) - position,
        )
        line: bytes | None = None
        with trio.move_on_after(self.limits.startup_ms / 1000) as scope:
            try:
                player.process = await self.sandbox.start(player.bot, nursery, self.spec.max_line)
            except StartError as exc:
                player.start_error = exc
                return None
            try:
                await player.process.send(encode(hello), self.limits.startup_ms / 1000)
                line = await player.process.receive_line()
                reply = decode_from_bot(line)
            except BotGone as exc:
                self._start_failed(player, "crash", f"exited during start-up: {exc}", line)
            except LineTooLong as exc:
                self._start_failed(player, "malformed", f"hello answer {exc}", exc.head)
            except msgspec.DecodeError as exc:
                self._start_failed(player, "malformed", f"bad hello answer: {exc}", line)
            else:
                if not isinstance(reply, HelloReply):
                    self._start_failed(player, "malformed", "first answer must be a hello", line)
                elif not reply.accept and player.restarts:
                    self._start_failed(
                        player, "malformed", f"refused to play {self.spec.game} when started again", line
                    )
                elif not reply.accept:
                    player.dead = "refused"
                else:
                    player.cpu_mark = player.process.cpu_seconds()
                    self._inbox.add(player.index, player.process)
                    if self.spec.fair_time:
                        player.process.freeze()
        if scope.cancelled_caught:
            limit = self.limits.startup_ms
            evidence = line or (player.process.lines.rest() if player.process else None)
            self._start_failed(player, "timeout", f"no hello answer within {limit} ms of start", evidence or None)
        if player.dead and player.process is not None:
            # It will not play: stop it now rather than let it run (and compute) all match.
            player.process.freeze()
            player.stopping = True
            nursery.start_soon(player.process.stop)
        return None

    def _start_failed(self, player: _Player, kind: str, message: str, line: bytes | None) -> None:
        player.start_fault = player.fault(kind, message, line)
        player.dead = message

    async def _send(self, player: _Player, data: bytes) -> None:
        """Send what is queued for the bot and ``data``, in one write; a bot that stopped
        reading its input for a whole move time is given up on."""
        data, player.outbox = b"".join(player.outbox) + data, []
        if player.dead or player.process is None:
            return
        try:
            await player.process.send(data, self.limits.move_ms / 1000)
        except BotGone as exc:
            player.dead = f"gone: {exc}"

    # --- games ------------------------------------------------------------------------

    async def _play_game(self, position: int) -> GameResult:
        game_spec, game_no = self.spec.games[position], self.game_nos[position]
        game = self.game
        seats = [_Seat(self.players[i], self.limits.bank_ms) for i in game_spec.seats]
        players = len(seats)
        replay: list[Line] = [
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
            )
        ]
        for seat_no, seat in enumerate(seats):
            player = seat.player
            player.dropped = 0
            if player.dead is not None:  # its start failed, or it is out of the match
                fault = player.start_fault if player.start_fault is not None and not player.out else player.out_fault()
                self._disqualify(seat, seat_no, fault, replay)
            player.outbox.append(encode(NewGame(game_no, seat_no, players, self.settings_dict)))
        state, events = game.start(self.settings, players, game_spec.seed)
        self._publish(game_no, seats, events, replay)
        while (decision := game.decision(state)) is not None:
            line = await self._decide(state, decision, seats, replay)
            state, events = game.apply(state, dict(zip(line.seats, line.answers, strict=True)))
            replay.append(line)
            self._publish(game_no, seats, events, replay)
        outcome = game.outcome(state)
        assert outcome is not None
        ranks = final_ranks(outcome.ranks, [s.disqualified for s in seats])
        statuses = [s.status() for s in seats]
        for seat in seats:
            await self._send(seat.player, encode(GameOver(game_no, outcome.scores, ranks)))
        stderr = [s.player.process.take_stderr() if s.player.process else "" for s in seats]
        replay.append(End(outcome.scores, ranks, statuses, stderr))
        return GameResult(game_no, game_spec, outcome.scores, ranks, statuses, replay, outcome.rounds)

    def _publish(self, game_no: int, seats: list[_Seat], events: list[Any], replay: list[Line]) -> None:
        """Log the events, and queue for each seat what it may know of them."""
        replay.append(EventsLine(events))
        self.observer.events(game_no, events)
        observe = self.game.observe
        public: bytes | None = None
        for seat_no, seat in enumerate(seats):
            seen = [o for o in (observe(e, seat_no) for e in events) if o is not None]
            if len(seen) == len(events) and all(o is e for o, e in zip(seen, events, strict=True)):
                public = public or encode(Events(seen))  # the same for every seat: encode once
                seat.player.outbox.append(public)
            elif seen:
                seat.player.outbox.append(encode(Events(seen)))

    async def _decide(self, state: Any, decision: Decision, seats: Sequence[_Seat], replay: list[Line]) -> DecisionLine:
        """Ask every seat of the decision (as many at once as there are thinking slots);
        default for those that fail."""
        n = len(decision.seats)
        answers: list[Any] = [None] * n
        wall = [0.0] * n
        cpu = [0.0] * n
        faults: list[Fault | None] = [None] * n
        to_ask: deque[tuple[int, int]] = deque()
        for i, seat_no in enumerate(decision.seats):
            seat = seats[seat_no]
            if seat.disqualified or seat.player.process is None:
                continue
            if seat.player.dead:
                faults[i] = seat.player.fault("crash", f"bot is not running ({seat.player.dead})")
            else:
                to_ask.append((i, seat_no))

        asks: dict[int, _Ask] = {}
        seat_of = {seat.player.index: seat_no for seat_no, seat in enumerate(seats)}
        while to_ask or asks:
            while to_ask and await self._take_slot(asks):
                i, seat_no = to_ask.popleft()
                ask = await self._request(state, decision.kind, i, seats[seat_no], seat_no, replay)
                if ask is None:
                    self._end_turn(seats[seat_no].player)
                    faults[i] = seats[seat_no].player.fault(
                        "crash", f"bot is not running ({seats[seat_no].player.dead})"
                    )
                else:
                    asks[seats[seat_no].player.index] = ask
            if not asks:
                continue
            with trio.move_on_at(min(a.deadline for a in asks.values())) as scope:
                while asks:
                    received = await self._inbox.receive()
                    player = self.players[received.key]
                    ask_or_none = asks.get(received.key)
                    done, answer, fault = await self._handle(
                        player, ask_or_none, received, seat_of, decision.kind, replay
                    )
                    if ask_or_none is None or not done:
                        continue
                    ask = ask_or_none
                    del asks[received.key]
                    self._end_turn(player)
                    answers[ask.i], faults[ask.i] = answer, fault
                    elapsed_ms = (received.at - ask.sent) * 1000
                    wall[ask.i] = round(elapsed_ms, 3)
                    cpu[ask.i] = round((received.cpu - player.cpu_mark) * 1000, 3)
                    player.cpu_mark = received.cpu
                    seat = seats[ask.seat_no]
                    seat.bank_ms = max(0, seat.bank_ms - max(0, round(elapsed_ms) - self.limits.move_ms))
                    if to_ask:
                        break  # a thinking slot is free: send the next request first
                    if asks:
                        scope.deadline = min(a.deadline for a in asks.values())
            now = trio.current_time()
            for index, ask in list(asks.items()):
                if ask.deadline <= now:
                    del asks[index]
                    seat = seats[ask.seat_no]
                    self._end_turn(seat.player)
                    limit = self.limits.move_ms + seat.bank_ms
                    faults[ask.i] = seat.player.fault(
                        "timeout", f"no answer to request {ask.request_id} within {limit} ms"
                    )
                    wall[ask.i] = round((now - ask.sent) * 1000, 3)
                    seat.bank_ms = 0

        defaulted = [False] * n
        for i, seat_no in enumerate(decision.seats):
            fault = faults[i]
            if fault is not None:
                self._record_fault(seats[seat_no], seat_no, fault, replay)
            if fault is not None or seats[seat_no].disqualified and answers[i] is None:
                answers[i] = self.game.default(state, seat_no)
                defaulted[i] = True
        return DecisionLine(decision.kind, list(decision.seats), answers, wall, cpu, defaulted)

    async def _take_slot(self, asks: dict[int, _Ask]) -> bool:
        """Fair time: hold one of the machine's thinking slots for the next request.

        With requests of our own in flight, only a free slot will do (their answers free
        ours); with none, wait for one, however long other matches hold them.
        """
        if self.slots is None:
            return True
        if not asks:
            await self.slots.acquire()
            return True
        try:
            self.slots.acquire_nowait()
        except trio.WouldBlock:
            return False
        return True

    def _end_turn(self, player: _Player) -> None:
        """The bot has answered (or run out of time): give back its slot, freeze it."""
        if self.slots is not None:
            self.slots.release()
        if self.spec.fair_time and player.process is not None:
            player.process.freeze()

    async def _request(
        self, state: Any, kind: str, i: int, seat: _Seat, seat_no: int, replay: list[Line]
    ) -> _Ask | None:
        """Send one seat its request (and the events queued for it); None if the bot is gone.

        What the bot wrote before (frozen, under fair time, so all of it is in its pipe)
        is dropped unread: no line written before the request can answer it."""
        player = seat.player
        process = player.process
        assert process is not None
        legal = self.game.legal(state, seat_no)
        self.request_id += 1
        request = Request(
            self.request_id, kind, self.game.view(state, seat_no), legal, self.limits.move_ms, seat.bank_ms
        )
        early = self._inbox.arm(player.index)
        if early.lines:
            more = f", the last of {early.lines}" if early.lines > 1 else ""
            reason = f"sent before request {self.request_id} while no request was pending{more}"
            self._drop(player, seat_no, early.last, reason, replay)
        if self.spec.fair_time:
            process.thaw()
        sent = trio.current_time()
        await self._send(player, encode(request))
        if player.dead:
            return None
        deadline = sent + (self.limits.move_ms + seat.bank_ms) / 1000
        return _Ask(i, seat_no, self.request_id, legal, sent, deadline)

    async def _handle(
        self,
        player: _Player,
        ask: _Ask | None,
        received: Received,
        seat_of: dict[int, int],
        kind: str,
        replay: list[Line],
    ) -> tuple[bool, Any, Fault | None]:
        """What a received line means: ``(settles the ask, answer, fault)``.

        Whatever the line holds, it is the bot's doing: every way it can fail to decode
        or to be judged is a fault of that bot, never an error of the referee."""
        line, error = received.line, received.error
        if error is not None:
            if isinstance(error, EndOfStream):
                assert player.process is not None
                player.dead = await player.process.gone_reason()
                return True, None, player.fault("crash", f"bot exited: {player.dead}", error.tail or None)
            evidence = error.head if isinstance(error, LineTooLong) else error.line
            if ask is None:
                reason = f"{error}, sent while no request was pending"
                self._drop(player, seat_of[player.index], evidence, reason, replay)
                return False, None, None
            more = "; its output is ignored until its next request" if isinstance(error, Flooded) else ""
            return True, None, player.fault("malformed", f"{error}{more}", evidence)
        assert line is not None
        if ask is None:
            self._drop(player, seat_of[player.index], line, "sent while no request was pending", replay)
            return False, None, None
        try:
            message = decode_from_bot(line)
            if not isinstance(message, Answer) or message.id != ask.request_id:
                illegal = None
            elif is_legal(message.answer, ask.legal):
                return True, message.answer, None
            else:
                illegal = f"illegal {kind} answer {_json(message.answer)}: legal answers are {_json(ask.legal)}"
        except msgspec.DecodeError as exc:
            return True, None, player.fault("malformed", f"not a valid answer: {exc}", line)
        except Exception as exc:  # a value the referee cannot handle is the bot's doing too
            return True, None, player.fault("malformed", f"answer cannot be judged ({type(exc).__name__})", line)
        if illegal is not None:
            return True, None, player.fault("illegal", illegal, line)
        reason = "stale id" if isinstance(message, Answer) else "not an answer"
        self._drop(player, seat_of[player.index], line, f"{reason} (waiting for id {ask.request_id})", replay)
        return False, None, None

    def _drop(self, player: _Player, seat_no: int, line: bytes, reason: str, replay: list[Line]) -> None:
        """Log a line that answered nothing (the first few of each game)."""
        player.dropped += 1
        if player.dropped <= DROPPED_LOGGED_PER_GAME:
            text = line[:EVIDENCE_CHARS].decode("utf-8", "replace")
            replay.append(DroppedLine(seat_no, text, reason))

    def _record_fault(self, seat: _Seat, seat_no: int, fault: Fault, replay: list[Line]) -> None:
        seat.faults.append(fault)
        replay.append(FaultLine(seat_no, fault))
        if len(seat.faults) >= MAX_FAULTS or fault.kind == "crash":
            seat.disqualified = True

    def _disqualify(self, seat: _Seat, seat_no: int, fault: Fault, replay: list[Line]) -> None:
        self._record_fault(seat, seat_no, fault, replay)
        seat.disqualified = True


def is_legal(answer: Any, legal: list[Any]) -> bool:
    """Membership with JSON types kept apart: ``true`` and ``1.0`` are not the card 1.

    Never raises: an answer that cannot even be encoded is in no list of legal answers."""
    if type(answer) is int:
        return any(type(x) is int and x == answer for x in legal)
    try:
        encoded = _json(answer)
    except Exception:
        return False
    return any(_json(x) == encoded for x in legal)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def single_game(bots: Sequence[Bot], seed: int) -> list[GameSpec]:
    """One game with the bots seated in the order given."""
    return [GameSpec(seed, list(range(len(bots))))]
