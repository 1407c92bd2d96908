"""A ladder: a tournament that never ends, among the bots authors submitted.

It is a tournament row like any other (its games, lease, web page and board), whose
``config`` also holds ``"ladder"`` (``LadderSpec``). It keeps ``player.at_once`` tables
in play; whenever one ends, the next is chosen from the submissions active at that
moment (a new version is seated at once, a retired one no more) where the ratings are
least certain: a bot without an interval, or with a wide one, is drawn first more often
(``choose_table``), and its table-mates are bots near it in Elo, with noise, so everyone
meets everyone. A table plays one deal in every seat rotation (a duplicate group) and
its games are stored as a tournament's are (``roundrobin.play_and_store``). Match
numbers only grow (the next is above every stored one) and each choice derives from the
ladder's seed and the match number, so a restarted ladder loses nothing and doubles
nothing: a table cut short keeps the games it finished, and its number is never reused.

A table is bounded by time, not by a count fixed beforehand: runs of deal groups, each
by fresh processes, as many as fit in what is left of ``table_seconds`` at the pace of
its own bots (one group first when a bot's pace is unknown: ``next_deals``), ending at
the end of a group once its time is spent. A bot with no games here gets a table of its
own at once even when every slot is busy (``Ladder.table``), so however slow the bots in
play, a new version plays within seconds.
Settled pairs rest: after a table whose every pair is known within ``SETTLED_WIDTH``
Elo its slot idles, so the ladder plays them a share ``duty`` of the time, down to the
organiser's floor. ``arena ladder pause`` (the tournament's status, ``paused``) and a
game budget stop new tables; a table in play ends with its current deal group.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import trio

from arena.bots import Bot
from arena.deals import epoch_key
from arena.games.base import SettingsError
from arena.play.match import GameSpec
from arena.play.referee import MatchError
from arena.sandbox.base import StartError
from arena.store import PAUSED, Store, StoredBot, Tournament
from arena.store.submissions import WAITING, Submissions
from arena.tournaments.roundrobin import GameWriter, Player, Progress, TournamentConfig, play_and_store
from arena.tournaments.schedule import Match, deal_seed

if TYPE_CHECKING:
    from arena.boards.standings import Row

T = TypeVar("T")

WIDE = 800.0
"""The uncertainty of a bot without an interval (new, or one-sided): it plays the most."""
NARROWEST = 25.0
"""Uncertainty never counts for less than this: settled bots still play now and then."""
NEAR = 150.0
"""The noise (Elo) on "near in rating" when table-mates are chosen."""
ANY_MATE = 0.1
"""How often a table-mate is any bot rather than the nearest in Elo."""
SETTLING = 8
"""Games on the ladder before a bot's interval is trusted: till then it counts as new."""
MEAN_ELO = 1500.0
"""Where a bot without a rating is placed when table-mates are chosen."""
POLL_S = 1.0
STATUS_S = 5.0
TABLE_SECONDS = 10.0
"""How long a table plays when its deals are not fixed: long enough that starting its
bots costs little beside its games, short enough that a new bot soon finds a free table."""
MAX_DEALS = 64
REVEAL_EVERY = 100
RATINGS_S = 5.0
SETTLED_WIDTH = 100.0
"""A pair whose Elo difference has a 95% interval narrower than this is settled: its
tables play ``(width / SETTLED_WIDTH) ** 2`` of the time (``duty``)."""
REST_FLOOR = 0.1
"""The least share of the time a settled table plays (``--rest-floor``)."""
GROWTH = 8
"""A table's next run of deal groups is at most this many times the deals it played."""
STARTS_KEPT = 20
"""The ladder's quickest first run among its last this many tables is what a start costs."""
PRUNE_S = 30.0
"""Replays past ``keep_replays`` are pruned at most this often (after a table)."""
PROGRESS_S = 60.0
"""A progress line (games a minute, tables, who moved) at most this often."""


def next_deals(
    spec: LadderSpec, spent_s: float, played: int, runs: int, start_s: float | None, deal_s: float | None = None
) -> int:
    """The deals of a table's next run of duplicate groups, each run by fresh processes
    (0: the table ends). A table of fixed deals plays them at once. Otherwise its first
    run fills its ``table_seconds`` at ``deal_s`` (a deal group's seconds for its slowest
    bot, at its earlier tables), or is one group when a bot's pace is unknown; then runs
    fill what is left at the table's own pace, a run's start (``start_s``: the ladder's
    quickest first group, about what starting the bots costs) counted once a run, another
    group when at least half of it fits, at most ``GROWTH`` times what it played, never
    past ``max_deals``. A slow table stops after its first group."""
    if spec.deals_per_table:
        return spec.deals_per_table if played == 0 else 0
    start = start_s or 0.0
    if played == 0:
        if not deal_s or deal_s <= 0:
            return 1
        return max(1, min(spec.max_deals, math.floor(max(0.0, spec.table_seconds - start) / deal_s + 0.5)))
    left = spec.table_seconds - spent_s
    if left <= 0 or played >= spec.max_deals or spent_s <= 0:
        return 0
    start = min(start, spent_s / max(1, runs))
    per_deal = max((spent_s - runs * start) / played, 0.05 * spent_s / played)
    fits = math.floor(max(0.0, left - start) / per_deal + 0.5)
    return max(0, min(spec.max_deals - played, GROWTH * played, fits))


@dataclasses.dataclass(frozen=True)
class Rated:
    """A bot on the ladder as the table choice sees it."""

    bot_id: int
    elo: float
    width: float
    """Its 95% interval's width; infinite when it has none."""


def uncertainty(bot: Rated) -> float:
    return WIDE if not math.isfinite(bot.width) else max(NARROWEST, min(bot.width, WIDE))


def choose_table(bots: list[Rated], size: int, rng: random.Random, focus_id: int | None = None) -> list[int]:
    """The bot ids of the next table: the first drawn with a weight of its uncertainty
    (or ``focus_id``, a newcomer), the others the nearest to it in Elo (with noise), one
    in ``1 / ANY_MATE`` any bot. Fewer bots than ``size``: all of them; fewer than two: none."""
    size = min(size, len(bots))
    if size < 2:
        return []
    focus = rng.choices(bots, [uncertainty(b) for b in bots])[0]
    focus = next((b for b in bots if b.bot_id == focus_id), focus)
    others = [b for b in bots if b.bot_id != focus.bot_id]
    others.sort(key=lambda b: abs(b.elo - focus.elo) + abs(rng.gauss(0, NEAR)))
    table = [focus.bot_id]
    while len(table) < size:  # the nearest left, or now and then any: everyone meets everyone
        mate = others.pop(rng.randrange(len(others)) if rng.random() < ANY_MATE else 0)
        table.append(mate.bot_id)
    return table


def duty(table: list[Rated], floor: float) -> float:
    """The share of the time a table of these bots is worth playing: 1 while any pair of
    them is uncertain, ``(width / SETTLED_WIDTH) ** 2`` for the least settled pair (the
    width of their difference's interval, from both bots' widths), never below ``floor``."""
    need = 0.0
    for i, a in enumerate(table):
        for b in table[i + 1 :]:
            pair = math.hypot(a.width, b.width)
            need = max(need, 1.0 if not math.isfinite(pair) else min(1.0, (pair / SETTLED_WIDTH) ** 2))
    return max(min(1.0, max(floor, 0.0)), need) if len(table) >= 2 else 1.0


def rest_after(took_s: float, share: float) -> float:
    """Seconds a slot idles after a table of ``took_s`` so that it plays ``share`` of the time."""
    return 0.0 if share >= 1.0 or took_s <= 0 else took_s * (1.0 / max(share, 1e-3) - 1.0)


def table_match(match_no: int, size: int, seed: int | str, deals: int = 1) -> Match:
    """``deals`` deals, each in every seat rotation (a duplicate group), at a table of
    ``size``: bots 0 to ``size - 1``, seeds from the ladder's deal key (its secret,
    else its seed: ``Tournament.deal_key``) and the match."""
    games, numbers = [], []
    for deal in range(deals):
        dealt = deal_seed(seed, match_no, deal)
        games += [GameSpec(dealt, [(seat - rotation) % size for seat in range(size)]) for rotation in range(size)]
        numbers += [deal] * size
    return Match(match_no, list(range(size)), games, numbers)


def rated(rows: list[Row], active: list[StoredBot]) -> list[Rated]:
    """The active bots with their ladder ratings (``leaderboard`` rows); a bot without
    games on it counts as new."""
    by_ref = {r.bot: r for r in rows}
    found = []
    for bot in active:
        row = by_ref.get(bot.ref)
        if row is None or row.bound or row.games < SETTLING or not (math.isfinite(row.low) and math.isfinite(row.high)):
            elo = row.rated if row is not None and math.isfinite(row.rated) else MEAN_ELO
            found.append(Rated(bot.id, elo, math.inf))
        else:
            found.append(Rated(bot.id, row.elo, row.high - row.low))
    return found


class LadderSpec(msgspec.Struct, frozen=True):
    """What a ladder adds to its tournament's config (under ``"ladder"``)."""

    table_size: int = 4
    """Seats per table (fewer while fewer bots are active)."""
    deals_per_table: int = 0
    """Deals a table plays, each in every seat rotation; 0: deal groups until its
    ``table_seconds`` are spent, at its own pace (``next_deals``)."""
    table_seconds: float = TABLE_SECONDS
    max_deals: int = MAX_DEALS
    reveal_every: int = REVEAL_EVERY
    """Tables an epoch of its deals' chain (``arena.deals``): an epoch's key is revealed
    once all its tables have been played."""


def spec_of(tournament: Tournament) -> LadderSpec | None:
    """The ladder part of a tournament's config; None for any other tournament."""
    if "ladder" not in tournament.config:
        return None
    return msgspec.convert(tournament.config["ladder"], LadderSpec)


def ladder_config(config: TournamentConfig, spec: LadderSpec) -> dict[str, Any]:
    """The ``config`` JSON of a ladder's tournament row: no bots of its own (they are the
    active submissions), the tournament's limits, and the ladder's parameters."""
    return {**msgspec.to_builtins(config), "ladder": msgspec.to_builtins(spec)}


def table_rng(seed: int, match_no: int) -> random.Random:
    """The table choice's randomness: a function of the ladder's seed and the match."""
    return random.Random(f"ladder/{seed}/{match_no}")


def status_line(games: int, active: int, waiting: int) -> str:
    """``ladder: 120 games · 5 bots active · 1 submission waiting``."""
    return (
        f"ladder: {games} game{'s' * (games != 1)} · {active} bot{'s' * (active != 1)} active"
        f" · {waiting} submission{'s' * (waiting != 1)} waiting"
    )


def movers(before: dict[str, float], after: dict[str, float], count: int = 3) -> list[tuple[str, float, float]]:
    """The bots whose Elo moved most between two boards (``ref -> elo``): ``(ref, elo,
    change)``, the largest change first; a bot new on the board moved from nothing."""
    moved = [
        (ref, elo, elo - before[ref] if ref in before and math.isfinite(before[ref]) else math.nan)
        for ref, elo in after.items()
        if math.isfinite(elo)
    ]
    moved = [m for m in moved if math.isnan(m[2]) or abs(m[2]) >= 0.5]
    moved.sort(key=lambda m: -math.inf if math.isnan(m[2]) else -abs(m[2]))
    return moved[:count]


def progress_line(
    games: int, per_minute: float, tables: int, active: int, waiting: int, moved: list[tuple[str, float, float]]
) -> str:
    """``ladder: 1200 games, 96/min · 2 tables · 5 bots active · 0 submissions waiting ·
    moved: ann:1.0 1562 (+14), bea:1.0 1490 (new)``: a log line a minute, never one a game."""
    line = (
        f"{status_line(games, active, waiting).replace(' · ', f', {per_minute:.0f}/min · ', 1)}"
        f" · {tables} table{'s' * (tables != 1)} in play"
    )
    if moved:
        line += " · moved: " + ", ".join(
            f"{ref} {elo:.0f} ({'new' if math.isnan(change) else f'{change:+.0f}'})" for ref, elo, change in moved
        )
    return line


SEATING_ERRORS = (MatchError, StartError, SettingsError)
"""What a table can fail with because of its bots: said, and the ladder goes on."""


@dataclasses.dataclass
class Ladder:
    """The ladder's play over one database: ``run`` until cancelled (or its game budget
    is played).

    ``store`` holds the ladder's lease and writes its games (from the writer's thread);
    everything the ladder reads, and the ratings it caches, go through a connection of
    its own, so no read ever lands inside the writer's transaction."""

    store: Store
    tournament: Tournament
    player: Player
    ready: Callable[[StoredBot], None] = lambda bot: None
    """Makes a bot playable before it is first seated here (built in this machine's
    sandbox, or sent to the cluster); runs in a thread. What it raises keeps the bot
    off the ladder, said once."""
    progress: Progress = dataclasses.field(default_factory=Progress)
    say: Callable[[str], None] = lambda line: None
    status_s: float = PROGRESS_S
    """A progress line at most this often, when something changed."""
    rest_floor: float = REST_FLOOR
    """The least share of the time settled tables play (1: never rest)."""
    budget: int | None = None
    """Games this run plays at most (then ``run`` returns); None: no end."""
    keep_replays: int = 0
    """The replays of the newest games kept; older ones are pruned, results kept (0: all)."""

    def __post_init__(self) -> None:
        spec = spec_of(self.tournament)
        if spec is None:
            raise ValueError(f"{self.tournament.name!r} is not a ladder")
        self.spec = spec
        self.config = msgspec.convert(self.tournament.config, TournamentConfig)
        self.reader = Store(self.store.path)
        self.lock = trio.Lock()
        self.loaded: dict[int, Bot] = {}
        self.refused: set[int] = set()
        self.rows: list[Row] = []
        self.rated_at = -1
        self.rated_when = -math.inf
        """The ladder's game count when ``rows`` were computed."""
        self.games = self.active = self.waiting = 0
        self.paused = False
        self.played = 0
        """Games stored by this run."""
        self.reserved = 0
        """Games of the deal groups in play (counted against ``budget`` before they end)."""
        self.introduced: set[int] = set()
        """Bots seated as newcomers by this run (a newcomer is seated once without a slot)."""
        self.newcomers = 0
        """Newcomers' tables in play without a slot: at most one at a time."""
        self.pruned_when = -math.inf
        self.pace: dict[int, float] = {}
        """Each bot's seconds a game at its tables so far (their start taken off)."""
        self.starts: dict[int, list[float]] = {}
        """The durations of the last tables' first runs (one group), by table size."""
        self.since: tuple[int, float, dict[str, float]] = (0, 0.0, {})
        """The games, time and board at the last progress line."""
        self.key: tuple[int, str] | None = None
        """The latest epoch's key worked out (a chain of hashes), with its epoch."""
        self.in_play: set[int] = set()
        """The tables being played, by match number."""

    def deal_key(self, match_no: int) -> str:
        """What table ``match_no`` deals from: its epoch's key (``arena.deals``), or the
        seed an organiser chose."""
        secret = self.tournament.secret
        if secret is None:
            return self.tournament.deal_key
        epoch = match_no // self.spec.reveal_every
        cached = self.key
        if cached is None or cached[0] != epoch:
            cached = self.key = (epoch, epoch_key(secret, epoch))
        return cached[1]

    def reveal(self, next_match_no: int) -> None:
        """Publish the key of the last epoch whose tables have all been played (none is
        in play, and the next table is of a later epoch): it gives away that epoch's
        deals and the earlier ones', none to come. A table cut short is never played on."""
        secret = self.tournament.secret
        if secret is None:
            return
        played = min([*self.in_play, next_match_no]) // self.spec.reveal_every
        if played > self.tournament.revealed_epochs:
            self.reader.reveal_epochs(self.tournament.id, played, epoch_key(secret, played - 1))
            self.tournament = msgspec.structs.replace(self.tournament, revealed_epochs=played)

    def close(self) -> None:
        self.reader.close()

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        async with self.lock:  # one user of the reader's connection at a time
            return await trio.to_thread.run_sync(fn, *args)

    def look(self) -> list[StoredBot]:
        """The bots on the ladder now (the active version of each submitted bot that plays
        its game); notes the counts the status line shows, and whether it is paused."""
        submissions = Submissions(self.reader)
        ids = {s.bot_id for s in submissions.active() if s.bot_id is not None}
        bots = [b for b in self.reader.list_bots() if b.id in ids and self.tournament.game in b.games]
        self.waiting = len(submissions.in_states(*WAITING))
        self.games = self.reader.count_games(self.tournament.id)
        now = self.reader.get_tournament(self.tournament.name)
        paused = now is not None and now.status == PAUSED
        if paused != self.paused:
            self.say("ladder paused: the tables in play end with their deal group (`arena ladder resume` goes on)"
                     if paused else "ladder resumed")  # fmt: skip
        self.paused = paused
        return bots

    def ratings(self) -> list[Row]:
        """The ladder's board, computed again only when games were stored since, and at
        most every ``RATINGS_S`` (over 100,000 games a fit takes most of a second, CPU
        the bots would miss). A bot without a row counts as new meanwhile."""
        if self.games != self.rated_at and time.monotonic() - self.rated_when >= RATINGS_S:
            from arena.boards.standings import leaderboard

            t = self.tournament
            self.rows, self.rated_at = leaderboard(self.reader, t.game, t.variant, t.name), self.games
            self.rated_when = time.monotonic()
        return self.rows

    def next_match_no(self) -> int:
        """Above every stored match: a restart never reuses a number."""
        return max((m for m, _ in self.reader.done_games(self.tournament.id)), default=-1) + 1

    def held(self) -> bool:
        """No deal group starts: paused, or the game budget is taken by what was played
        and what is in play."""
        return self.paused or (self.budget is not None and self.played + self.reserved >= self.budget)

    def spent(self) -> bool:
        """The game budget is played."""
        return self.budget is not None and self.played >= self.budget

    def _is_new(self, bot: StoredBot) -> bool:
        return bot.id not in self.introduced and all(r.bot != bot.ref for r in self.rows)

    async def _playable(self, bot: StoredBot) -> bool:
        if bot.id in self.loaded:
            return True
        if bot.id in self.refused:
            return False
        try:
            loaded = await trio.to_thread.run_sync(bot.load)
            await trio.to_thread.run_sync(self.ready, bot)
        except Exception as exc:  # its snapshot, its build: the bot's own trouble
            self.refused.add(bot.id)
            self.say(f"{bot.ref} cannot be seated: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}")
            return False
        self.loaded[bot.id] = loaded
        return True

    async def table(self, match_no: int, poll_s: float, slots: trio.CapacityLimiter) -> tuple[list[StoredBot], bool]:
        """The bots of table ``match_no``, once two or more are active and playable and
        the ladder is not held, and whether it took a slot: it waits for a free slot,
        except for a newcomer (a bot without games here), seated at once."""
        said = -1
        while True:
            have_slot = False
            with trio.move_on_after(poll_s):
                await slots.acquire_on_behalf_of(match_no)
                have_slot = True
            active = await self._read(self.look)
            playable = [b for b in active if await self._playable(b)] if not self.held() else []
            if not self.held():
                self.active = len(playable)
            if len(playable) >= 2:
                rows = await self._read(self.ratings)
                fresh = [b for b in playable if self._is_new(b)]
                if have_slot or (fresh and not self.newcomers):
                    rng = table_rng(self.tournament.seed, match_no)
                    focus = fresh[0].id if fresh else None
                    chosen = choose_table(rated(rows, playable), self.spec.table_size, rng, focus)
                    by_id = {b.id: b for b in playable}
                    self.introduced |= {i for i in chosen if by_id[i] in fresh}
                    return [by_id[i] for i in chosen], have_slot
            elif not self.held() and said != len(playable):
                self.say(f"{len(playable)} bot{'s' * (len(playable) != 1)} on the ladder: waiting for a second")
                said = len(playable)
            if have_slot:
                slots.release_on_behalf_of(match_no)
            if self.spent():
                return [], False
            if have_slot:  # else the wait for a slot was the poll
                await trio.sleep(poll_s)

    async def play(self, writer: GameWriter, match_no: int, seated: list[StoredBot]) -> float:
        """One table: runs of duplicate groups (``next_deals``), each by fresh processes,
        each game stored as it ends, until its time is spent or the ladder is held; the
        seconds it played."""
        size = len(seated)
        key = await trio.to_thread.run_sync(self.deal_key, match_no)  # a chain of hashes: off the loop
        match = table_match(match_no, size, key, self.spec.deals_per_table or self.spec.max_deals)
        loaded = [self.loaded[b.id] for b in seated]
        began = trio.current_time()
        deals = runs = 0
        starts = self.starts.setdefault(size, [])
        paces = [self.pace.get(b.id) for b in seated]
        deal_s = size * max(p for p in paces if p is not None) if None not in paces else None
        while not self.held():
            start_s = min(starts) if starts else None
            run = next_deals(self.spec, trio.current_time() - began, deals, runs, start_s, deal_s)
            if self.budget is not None:
                run = min(run, -(-(self.budget - self.played - self.reserved) // size))
            if run <= 0:
                break
            games = list(range(deals * size, (deals + run) * size))
            self.reserved += len(games)
            run_began = trio.current_time()
            try:
                played = await play_and_store(
                    self.player, writer, self.tournament, self.config, match, seated, loaded, self.progress, games
                )
            except SEATING_ERRORS as exc:
                self.say(f"match {match_no} ({', '.join(b.ref for b in seated)}) stopped: {exc}")
                break
            finally:
                self.reserved -= len(games)
            self.played += played
            took = trio.current_time() - run_began
            if run == 1 and played == len(games):  # one group, and its bots' start
                starts[:] = [*starts[-STARTS_KEPT + 1 :], took]
            if played:  # each bot's pace: seconds a game at its tables, a start taken off
                game_s = max(0.0, took - (min(starts) if starts else 0.0)) / played
                for b in seated:
                    self.pace[b.id] = game_s if b.id not in self.pace else (self.pace[b.id] + game_s) / 2
            deals += run
            runs += 1
            if played < len(games):
                break
        return trio.current_time() - began

    async def run(self, poll_s: float = POLL_S) -> None:
        """Keep ``player.at_once`` tables in play (and a newcomer's beside them) until
        cancelled or the budget is played; each table is chosen when a slot frees, from
        the bots active then, and its slot rests after it as its pairs are settled."""
        try:
            writer = GameWriter(self.store)
            slots = trio.CapacityLimiter(max(1, self.player.at_once))
            match_no = await self._read(self.next_match_no)
            await self._read(self.reveal, match_no)  # what a run before this one played

            async def one(number: int, seated: list[StoredBot], slot: bool) -> None:
                self.newcomers += not slot
                try:
                    share = duty(rated(self.rows, seated), self.rest_floor)
                    took = await self.play(writer, number, seated)
                    self.in_play.discard(number)
                    if slot:  # a settled table's slot idles, so that it plays `share` of the time
                        rest = rest_after(took, share)
                        while rest > 0 and not self.spent():
                            await trio.sleep(min(rest, poll_s))
                            rest -= poll_s
                finally:
                    self.in_play.discard(number)
                    self.newcomers -= not slot
                    if slot:
                        slots.release_on_behalf_of(number)
                        slots.total_tokens = max(1, self.player.at_once)  # on a cluster, workers come and go
                await self._read(self.reveal, match_no)  # its epoch may be all played now
                if self.keep_replays and trio.current_time() - self.pruned_when >= PRUNE_S:
                    self.pruned_when = trio.current_time()
                    pruned = await self._read(self.reader.prune_replays, self.tournament.id, self.keep_replays)
                    if pruned:
                        self.say(f"pruned the replays of {pruned} older games (their results stay)")

            async with trio.open_nursery() as outer:
                outer.start_soon(writer.run)
                status = trio.CancelScope()
                outer.start_soon(self._status, status)
                try:
                    async with trio.open_nursery() as tables:
                        while not self.spent():
                            seated, slot = await self.table(match_no, poll_s, slots)
                            if not seated:
                                continue
                            self.in_play.add(match_no)
                            tables.start_soon(one, match_no, seated, slot)
                            match_no += 1
                finally:
                    status.cancel()
                    writer.close()  # the writer stores what is queued, then ends (also on Ctrl-C)
            if self.keep_replays:  # the budget is played: the last games' replays counted too
                await self._read(self.reader.prune_replays, self.tournament.id, self.keep_replays)
            self.games = await self._read(self.reader.count_games, self.tournament.id)
        finally:
            self.say(self.progress_now())  # where it stands, also on Ctrl-C

    def progress_now(self) -> str:
        """The progress line since the last one (``progress_line``)."""
        games, when, board = self.since
        now = trio.current_time()
        latest = {r.bot: r.elo for r in self.rows}
        per_minute = (self.games - games) * 60.0 / max(now - when, 1e-9)
        self.since = (self.games, now, latest)
        return progress_line(
            self.games, per_minute, len(self.in_play), self.active, self.waiting, movers(board, latest)
        )

    async def _status(self, scope: trio.CancelScope) -> None:
        """A progress line every ``status_s`` when something changed: games a minute,
        tables in play, the bots whose rating moved most."""
        with scope:
            shown = ""
            self.since = (self.games, trio.current_time(), {r.bot: r.elo for r in self.rows})
            while True:
                await trio.sleep(self.status_s)
                line = self.progress_now()
                if line != shown:
                    self.say(line)
                    shown = line
