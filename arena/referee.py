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
from collections.abc import Sequence
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
    encode,
    from_bot_decoder,
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
from .sandbox.framing import LineTooLong

MAX_FAULTS = 3
"""Faults in one game after which the default policy plays the seat and it ranks last."""
EVIDENCE_CHARS = 500


class MatchError(Exception):
    """A match that cannot start: a bot refused the game, or the spec is inconsistent."""


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


class MatchSpec(msgspec.Struct, frozen=True):
    game: str
    settings: dict[str, Any]
    bots: list[Bot]
    games: list[GameSpec]
    limits: TimeLimits = TimeLimits()
    max_line: int = MAX_LINE_BYTES


class GameResult(msgspec.Struct, frozen=True):
    game_no: int
    spec: GameSpec
    scores: list[int]
    ranks: list[int]
    statuses: list[SeatStatus]
    replay: list[Line]


class MatchResult(msgspec.Struct, frozen=True):
    games: list[GameResult]
    isolation: str


class Observer:
    """Hooks for whoever watches a match (the CLI's live output, a progress bar)."""

    def events(self, game_no: int, events: list[Any]) -> None:
        pass

    def game_over(self, result: GameResult) -> None:
        pass


class _Player:
    """A bot of the match and its process; ``dead`` says why it can no longer play."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.process: BotProcess | None = None
        self.dead: str | None = None
        self.start_fault: Fault | None = None
        self.start_error: StartError | None = None

    def fault(self, kind: str, message: str, line: bytes | None = None) -> Fault:
        text = None if line is None else line[:EVIDENCE_CHARS].decode("utf-8", "replace")
        tail = self.process.stderr_tail() if self.process else None
        return Fault(kind, message, text, tail or None)


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


async def play_match(spec: MatchSpec, sandbox: Sandbox, observer: Observer | None = None) -> MatchResult:
    """Start the bots, play every game of ``spec``, stop the bots (also when cancelled)."""
    referee = _Referee(spec, sandbox, observer or Observer())
    return await referee.run()


class _Referee:
    def __init__(self, spec: MatchSpec, sandbox: Sandbox, observer: Observer) -> None:
        self.spec = spec
        self.sandbox = sandbox
        self.observer = observer
        self.game: Game = get_game(spec.game)
        self.players = [_Player(bot) for bot in spec.bots]
        self.limits = spec.limits
        self.request_id = 0
        if not spec.games:
            raise MatchError("a match needs at least one game")
        self.seat_count = len(spec.games[0].seats)
        for g in spec.games:
            if len(g.seats) != self.seat_count or sorted(g.seats) != list(range(len(spec.bots))):
                raise MatchError(f"game seats {g.seats} do not seat each of the {len(spec.bots)} bots once")
        self.settings = self.game.parse_settings(spec.settings, self.seat_count)
        self.settings_dict: dict[str, Any] = msgspec.to_builtins(self.settings)

    async def run(self) -> MatchResult:
        results = []
        async with trio.open_nursery() as nursery:
            try:
                error = await self._start_all(nursery)
                if error is None:
                    for game_no, game_spec in enumerate(self.spec.games):
                        result = await self._play_game(game_no, game_spec)
                        results.append(result)
                        self.observer.game_over(result)
                    for player in self.players:
                        await self._send(player, encode(Bye()))
            finally:
                with trio.CancelScope(shield=True):
                    async with trio.open_nursery() as stopping:
                        for player in self.players:
                            if player.process is not None:
                                stopping.start_soon(player.process.stop)
                nursery.cancel_scope.cancel()
        if error is not None:
            raise error  # out here, not wrapped in the nursery's exception group
        return MatchResult(results, self.sandbox.isolation)

    async def _start_all(self, nursery: trio.Nursery) -> Exception | None:
        """Start every bot at once; the error that stops the match before it begins, if any."""
        async with trio.open_nursery() as starting:
            for index, player in enumerate(self.players):
                starting.start_soon(self._start, player, index, nursery)
        for player in self.players:
            if player.start_error is not None:
                return player.start_error
        refusals = [p.bot.name for p in self.players if p.dead == "refused"]
        if refusals:
            return MatchError(f"{', '.join(refusals)} refused to play {self.spec.game} (its hello answer)")
        return None

    # --- sessions ---------------------------------------------------------------------

    async def _start(self, player: _Player, index: int, nursery: trio.Nursery) -> None:
        """Start one bot and shake hands, within the start-up limit."""
        first_seat = self.spec.games[0].seats.index(index)
        hello = Hello(
            protocol=PROTOCOL_VERSION,
            game=self.spec.game,
            settings=self.settings_dict,
            seat=first_seat,
            players=self.seat_count,
            limits=Limits(self.limits.move_ms, self.limits.bank_ms, self.limits.startup_ms, self.spec.max_line),
            games=len(self.spec.games),
        )
        line: bytes | None = None
        with trio.move_on_after(self.limits.startup_ms / 1000) as scope:
            try:
                player.process = await self.sandbox.start(player.bot, nursery, self.spec.max_line)
            except StartError as exc:
                player.start_error = exc
                return None
            try:
                await player.process.send(encode(hello))
                line = await player.process.receive_line()
                reply = from_bot_decoder.decode(line)
            except BotGone as exc:
                return self._start_failed(player, "crash", f"exited during start-up: {exc}", line)
            except LineTooLong as exc:
                return self._start_failed(player, "malformed", f"hello answer {exc}", exc.head)
            except msgspec.DecodeError as exc:
                return self._start_failed(player, "malformed", f"bad hello answer: {exc}", line)
            if not isinstance(reply, HelloReply):
                return self._start_failed(player, "malformed", "first answer must be a hello", line)
            if not reply.accept:
                player.dead = "refused"
        if scope.cancelled_caught:
            limit = self.limits.startup_ms
            self._start_failed(player, "timeout", f"no hello answer within {limit} ms of start", line)

    def _start_failed(self, player: _Player, kind: str, message: str, line: bytes | None) -> None:
        player.start_fault = player.fault(kind, message, line)
        player.dead = message

    async def _send(self, player: _Player, data: bytes) -> None:
        """Send a line; a bot that stopped reading for a whole move time is given up on."""
        if player.dead or player.process is None:
            return
        with trio.move_on_after(self.limits.move_ms / 1000) as scope:
            try:
                await player.process.send(data)
            except BotGone as exc:
                player.dead = f"gone: {exc}"
        if scope.cancelled_caught:
            player.dead = "stopped reading its input"

    # --- games ------------------------------------------------------------------------

    async def _play_game(self, game_no: int, game_spec: GameSpec) -> GameResult:
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
                seats=[SeatInfo(s.player.bot.name, s.player.bot.version, self.sandbox.isolation) for s in seats],
                limits=msgspec.to_builtins(self.limits),
                game_no=game_no,
                started=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            )
        ]
        for seat_no, seat in enumerate(seats):
            player = seat.player
            if player.start_fault is not None:
                self._disqualify(seat, seat_no, player.start_fault, replay)
            await self._send(player, encode(NewGame(game_no, seat_no, players, self.settings_dict)))
            if player.process is not None:
                player.process.take_stderr()
        state, events = game.start(self.settings, players, game_spec.seed)
        await self._publish(game_no, seats, events, replay)
        while (decision := game.decision(state)) is not None:
            line = await self._decide(state, decision, seats, replay)
            state, events = game.apply(state, dict(zip(line.seats, line.answers, strict=True)))
            replay.append(line)
            await self._publish(game_no, seats, events, replay)
        outcome = game.outcome(state)
        assert outcome is not None
        ranks = final_ranks(outcome.ranks, [s.disqualified for s in seats])
        statuses = [s.status() for s in seats]
        for seat in seats:
            await self._send(seat.player, encode(GameOver(game_no, outcome.scores, ranks)))
        stderr = [s.player.process.take_stderr() if s.player.process else "" for s in seats]
        replay.append(End(outcome.scores, ranks, statuses, stderr))
        return GameResult(game_no, game_spec, outcome.scores, ranks, statuses, replay)

    async def _publish(self, game_no: int, seats: list[_Seat], events: list[Any], replay: list[Line]) -> None:
        """Log the events, then tell each seat what it may know of them."""
        replay.append(EventsLine(events))
        self.observer.events(game_no, events)
        observe = self.game.observe
        for seat_no, seat in enumerate(seats):
            seen = [o for o in (observe(e, seat_no) for e in events) if o is not None]
            if seen:
                await self._send(seat.player, encode(Events(seen)))

    async def _decide(self, state: Any, decision: Decision, seats: Sequence[_Seat], replay: list[Line]) -> DecisionLine:
        """Ask every seat of the decision at once; default for those that fail."""
        n = len(decision.seats)
        answers: list[Any] = [None] * n
        wall = [0.0] * n
        cpu = [0.0] * n
        defaulted = [False] * n

        async def ask(i: int, seat_no: int) -> None:
            seat = seats[seat_no]
            answer, wall[i], cpu[i], fault = await self._ask(state, decision.kind, seat, seat_no, replay)
            if fault is not None:
                self._record_fault(seat, seat_no, fault, replay)
            if fault is not None or answer is None:
                answer = self.game.default(state, seat_no)
                defaulted[i] = True
            answers[i] = answer

        if n == 1:
            await ask(0, decision.seats[0])
        else:
            async with trio.open_nursery() as nursery:
                for i, seat_no in enumerate(decision.seats):
                    nursery.start_soon(ask, i, seat_no)
        return DecisionLine(decision.kind, list(decision.seats), answers, wall, cpu, defaulted)

    async def _ask(
        self, state: Any, kind: str, seat: _Seat, seat_no: int, replay: list[Line]
    ) -> tuple[Any, float, float, Fault | None]:
        """One request and its answer: ``(answer, wall ms, cpu ms, fault)``."""
        player = seat.player
        process = player.process
        if seat.disqualified or process is None:
            return None, 0.0, 0.0, None
        if player.dead:
            return None, 0.0, 0.0, player.fault("crash", f"bot is not running ({player.dead})")
        game = self.game
        legal = game.legal(state, seat_no)
        self.request_id += 1
        request_id = self.request_id
        request = Request(request_id, kind, game.view(state, seat_no), legal, self.limits.move_ms, seat.bank_ms)
        data = encode(request)
        cpu_before = process.cpu_seconds()
        started = trio.current_time()
        answer: Any = None
        fault: Fault | None = None
        line: bytes | None = None
        with trio.move_on_after((self.limits.move_ms + seat.bank_ms) / 1000) as scope:
            try:
                await process.send(data)
                while True:
                    line = await process.receive_line()
                    message = from_bot_decoder.decode(line)
                    if isinstance(message, Answer) and message.id == request_id:
                        answer = message.answer
                        break
                    reason = "stale id" if isinstance(message, Answer) else "not an answer"
                    text = line[:EVIDENCE_CHARS].decode("utf-8", "replace")
                    replay.append(DroppedLine(seat_no, text, f"{reason} (waiting for id {request_id})"))
            except BotGone as exc:
                player.dead = str(exc)
                fault = player.fault("crash", f"bot exited: {exc}")
            except LineTooLong as exc:
                fault = player.fault("malformed", str(exc), exc.head)
            except msgspec.DecodeError as exc:
                fault = player.fault("malformed", f"not a valid answer: {exc}", line)
        elapsed_ms = (trio.current_time() - started) * 1000
        cpu_ms = (process.cpu_seconds() - cpu_before) * 1000
        seat.bank_ms = max(0, seat.bank_ms - max(0, round(elapsed_ms) - self.limits.move_ms))
        if scope.cancelled_caught:
            limit = self.limits.move_ms + request.bank_ms
            fault = player.fault("timeout", f"no answer to request {request_id} within {limit} ms")
            seat.bank_ms = 0
        elif fault is None and not _is_legal(answer, legal):
            fault = player.fault("illegal", f"illegal {kind} answer {_json(answer)}: legal answers are {_json(legal)}", line)
        return answer, round(elapsed_ms, 3), round(cpu_ms, 3), fault

    def _record_fault(self, seat: _Seat, seat_no: int, fault: Fault, replay: list[Line]) -> None:
        seat.faults.append(fault)
        replay.append(FaultLine(seat_no, fault))
        if len(seat.faults) >= MAX_FAULTS or fault.kind == "crash":
            seat.disqualified = True

    def _disqualify(self, seat: _Seat, seat_no: int, fault: Fault, replay: list[Line]) -> None:
        self._record_fault(seat, seat_no, fault, replay)
        seat.disqualified = True


def _is_legal(answer: Any, legal: list[Any]) -> bool:
    """Membership with JSON types kept apart: ``true`` and ``1.0`` are not the card 1."""
    if type(answer) is int:
        return any(type(x) is int and x == answer for x in legal)
    encoded = _json(answer)
    return any(_json(x) == encoded for x in legal)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def single_game(bots: Sequence[Bot], seed: int) -> list[GameSpec]:
    """One game with the bots seated in the order given."""
    return [GameSpec(seed, list(range(len(bots))))]

