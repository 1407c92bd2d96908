"""Running a tournament: the schedule's matches, several at once, each game stored as it ends.

Matches are played by a ``Player``: on this machine, several at once sharing its
thinking slots (one per core) so fair time holds across all of them, or on the workers
of a Dask cluster (``arena.cluster.coordinator``); either way this process alone writes the
database. A game is committed the moment it ends (on a cluster, the moment its match
comes back); a resumed tournament plays only the games the database does not hold,
from the same schedule and the same deal seeds.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any, Protocol, TypeVar

import msgspec
import trio

from arena.bots import Bot
from arena.play import replay as replay_files
from arena.play.live import LiveFolder, Published
from arena.play.match import GameResult, MatchSpec, TimeLimits
from arena.play.referee import Observer, TimedGames, play_match
from arena.sandbox.base import Sandbox
from arena.store import FAULT_KINDS, FinishedGame, SeatResult, Store, StoredBot, StoreError, Tournament
from arena.tournaments.plan import schedule_of
from arena.tournaments.schedule import Match, by_rotation, conflicts


class TournamentConfig(msgspec.Struct, frozen=True):
    """What, besides game, settings and seed, defines a tournament (stored with it)."""

    bots: list[str]
    """``name:version`` of each bot, in order."""
    table_size: int
    deals: int
    limits: TimeLimits = TimeLimits()
    fair_time: bool = True
    grown: list[int] = msgspec.field(default_factory=list)
    """The league's bot count before each ``--add`` (empty: it never grew): the schedule
    keeps the tables of each earlier size and appends those of the added bots."""


class Progress:
    """What the runner reports as it goes (the CLI draws it)."""

    def started(self, total: int, done: int) -> None:
        pass

    def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
        pass


T = TypeVar("T")
INTERRUPTING = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop a tournament in order (Ctrl-C, and what a service manager or
``kill`` sends): every match stops its bots, every finished game is stored."""


async def until_interrupted(run: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``await run(*args)``; on SIGINT or SIGTERM, cancel it (the matches' teardown runs
    as for any cancellation, at a checkpoint, never half-way through starting a bot),
    then raise ``KeyboardInterrupt``. Only the first signal is caught: a second one
    during the teardown interrupts at once, as Ctrl-C does anywhere (the watchdog still
    removes what the arena leaves)."""
    done: list[T] = []
    async with trio.open_nursery() as nursery:

        async def watch(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            with trio.open_signal_receiver(*INTERRUPTING) as signals:
                task_status.started()
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

        await nursery.start(watch)
        done.append(await run(*args))
        nursery.cancel_scope.cancel()
    if not done:
        raise KeyboardInterrupt
    return done[0]


def sigterm_as_ctrl_c() -> None:
    """From now on SIGTERM does what Ctrl-C does (outside ``until_interrupted`` too: while
    images are built, say), instead of ending the process where it stands."""

    def handler(signum: int, frame: FrameType | None) -> None:
        ctrl_c = signal.getsignal(signal.SIGINT)  # Trio's own while it runs: it knows where to raise
        if callable(ctrl_c):
            ctrl_c(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def stored_games(
    store: Store, tournament: Tournament, bots: list[StoredBot], schedule: list[Match]
) -> set[tuple[int, int]]:
    """``(match_no, game_no)`` of the games already stored, once they are checked to be
    the schedule's; ``StoreError`` when they seat other bots (an arena that derived its
    tables otherwise started the tournament: resuming it here would mix two schedules)."""
    stored = store.seatings(tournament.id)
    index = {bot.id: i for i, bot in enumerate(bots)}
    seated = {number: (seed, [index.get(b, -1) for b in ids]) for number, (seed, ids) in stored.items()}
    if wrong := conflicts(schedule, seated):
        match_no, game_no = wrong[0]
        raise StoreError(
            f"tournament {tournament.name!r} was scheduled otherwise: {len(wrong)} of its stored games (the first:"
            f" game {game_no} of match {match_no}) seat other bots than this arena's schedule of its seed;"
            " finish it with the arena version that started it, or start a new tournament"
        )
    return set(stored)


class Player(Protocol):
    """Where a tournament's matches are played: this machine (``OnThisMachine``) or the
    workers of a Dask cluster (``arena.cluster.coordinator.OnCluster``)."""

    @property
    def at_once(self) -> int:
        """Matches in play at once (asked again as each match ends)."""

    nodes: list[tuple[str, int]]
    """The machines that play, with their thinking slots."""

    async def play(self, spec: MatchSpec, bots: list[StoredBot], game_over: GameOver) -> None:
        """Play ``spec`` (its bots are ``bots``' snapshots), handing each game on as it
        ends, or as the match's games come back."""


GameOver = Callable[[GameResult, str, float, bytes | None], None]
"""A game as it ends, the node that played it, its wall time in ms, and its replay
already encoded (a cluster's worker does it) or None (it is in the result)."""


class OnThisMachine:
    """Matches played here, sharing the machine's thinking slots (one per core), their
    games published to ``live`` as they are played (``arena.play.live``)."""

    def __init__(
        self, sandbox: Sandbox, concurrency: int, live: LiveFolder | None = None, live_every: float | None = None
    ) -> None:
        self.sandbox = sandbox
        self.live = live
        self.live_every = live_every
        """How often, at most, a game's turns are written for spectators (0: each at once;
        None: ``live.WRITE_EVERY_S``)."""
        self.at_once = max(1, concurrency)
        self.slots = trio.Semaphore(os.cpu_count() or 1)
        self.node = socket.gethostname()
        self.nodes = [(self.node, os.cpu_count() or 1)]

    async def play(self, spec: MatchSpec, bots: list[StoredBot], game_over: GameOver) -> None:
        timed = TimedGames(lambda result, ms: game_over(result, self.node, ms, None))
        observer: Observer = timed
        if self.live is not None and spec.live:
            observer = Published(timed, self.live, spec.live, self.live_every)
        try:  # each game goes on as it ends; the match keeps none (flat memory)
            await play_match(spec, self.sandbox, observer, self.slots if spec.fair_time else None, keep_games=False)
        finally:
            if isinstance(observer, Published):
                observer.close()  # a game cut short is marked given up


async def run_tournament(
    store: Store,
    tournament: Tournament,
    bots: list[StoredBot],
    player: Player,
    progress: Progress | None = None,
    schedule: list[Match] | None = None,
) -> int:
    """Play every game of the tournament not yet stored; return how many were played.

    ``schedule``: only these of its matches (a gauntlet plays its schedule a batch at a
    time); then the caller decides when the tournament is finished."""
    config = msgspec.convert(tournament.config, TournamentConfig)
    progress = progress or Progress()
    whole = schedule is None
    schedule = schedule_of(tournament) if schedule is None else schedule
    done = stored_games(store, tournament, bots, schedule)
    total = sum(len(m.games) for m in schedule)
    progress.started(total, len(done))
    loaded = [bot.load() for bot in bots]
    matches = trio.CapacityLimiter(player.at_once)
    writer = GameWriter(store)
    played = 0

    async def run(match: Match) -> None:
        nonlocal played
        remaining = [i for i in range(len(match.games)) if (match.match_no, i) not in done]
        if not remaining:
            return
        async with matches:
            stored = await play_and_store(player, writer, tournament, config, match, bots, loaded, progress, remaining)
            played += stored  # not `played += await ...`: that reads `played` before the match
            matches.total_tokens = player.at_once  # on a cluster, workers come and go

    async with trio.open_nursery() as outer:
        outer.start_soon(writer.run)
        try:
            async with trio.open_nursery() as nursery:
                for match in schedule:
                    nursery.start_soon(run, match)
        finally:
            writer.close()  # the writer stores what is queued, then ends (also on Ctrl-C)
    if whole and store.count_games(tournament.id) == total:
        store.set_status(tournament.id, "finished")
    return played


async def play_and_store(
    player: Player,
    writer: GameWriter,
    tournament: Tournament,
    config: TournamentConfig,
    match: Match,
    bots: list[StoredBot],
    loaded: list[Bot],
    progress: Progress,
    game_nos: list[int],
    bot_limits: dict[int, TimeLimits] | None = None,
) -> int:
    """Play games ``game_nos`` of ``match`` (``bots`` and ``loaded``: the bots its indices
    name, stored and loaded), rotation by rotation, each handed to ``writer`` as it
    ends; returns how many. ``bot_limits``: limits of their own for some of the match's
    bots (a person's seat).
    A round robin plays its schedule through it, the ladder one table at a time."""
    recorder = _Recorder(writer, tournament, match, bots, progress)
    spec = MatchSpec(
        tournament.game,
        tournament.settings,
        [loaded[b] for b in match.bots],
        [msgspec.structs.replace(match.games[i], game_no=i) for i in by_rotation(match, game_nos)],
        config.limits,
        fair_time=config.fair_time,
        live=f"t{tournament.id}-m{match.match_no}",
        bot_limits=bot_limits or {},
    )
    await player.play(spec, recorder.match_bots, recorder.game_over)
    return recorder.stored


class GameWriter:
    """Stores finished games in a worker thread, in the order they end, so that writing
    never holds up the referee's event loop (and so the bots' clocks)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._send, self._receive = trio.open_memory_channel[tuple[FinishedGame, list[replay_files.Line] | None]](
            float("inf")
        )

    def put(self, record: FinishedGame, replay: list[replay_files.Line] | None) -> None:
        """Store ``record``, with ``replay`` encoded into it (None: it holds its replay)."""
        self._send.send_nowait((record, replay))

    def close(self) -> None:
        self._send.close()

    async def run(self) -> None:
        with trio.CancelScope(shield=True):  # a finished game is never dropped
            async for record, replay in self._receive:
                await trio.to_thread.run_sync(self._save, record, replay)

    def _save(self, record: FinishedGame, replay: list[replay_files.Line] | None) -> None:
        if replay is not None:
            record = msgspec.structs.replace(record, replay=replay_files.dumps(replay))
        self.store.save_game(record)


class _Recorder:
    """Hands each game of a match to the writer the moment it ends."""

    def __init__(
        self,
        writer: GameWriter,
        tournament: Tournament,
        match: Match,
        bots: list[StoredBot],
        progress: Progress,
    ) -> None:
        self.writer = writer
        self.tournament = tournament
        self.match = match
        self.match_bots = [bots[b] for b in match.bots]
        self.progress = progress
        self.stored = 0

    def game_over(self, result: GameResult, node: str, wall_ms: float, replay: bytes | None) -> None:
        game_no = result.game_no  # its number in the match, also for a resumed match
        header = result.replay[0]
        assert isinstance(header, replay_files.Header)
        seats = []
        for seat, bot_index in enumerate(result.spec.seats):
            status = result.statuses[seat]
            faults = {kind: sum(1 for f in status.faults if f.kind == kind) for kind in FAULT_KINDS}
            seats.append(
                SeatResult(
                    self.match_bots[bot_index].id, result.ranks[seat], result.scores[seat], status.status, faults
                )
            )
        record = FinishedGame(
            tournament_id=self.tournament.id,
            match_no=self.match.match_no,
            game_no=game_no,
            deal=self.match.deals[game_no],
            seed=result.spec.seed,
            game=self.tournament.game,
            variant=self.tournament.variant,
            rounds=result.rounds,
            wall_ms=wall_ms,
            started=header.started,
            seats=seats,
            replay=replay or b"",
            node=node,
        )
        self.writer.put(record, result.replay if replay is None else None)
        self.stored += 1
        self.progress.game_stored(result, [self.match_bots[b] for b in result.spec.seats])


def variant_of(settings: dict[str, Any]) -> str:
    return str(settings.get("variant", "standard"))
