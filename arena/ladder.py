"""A ladder: a tournament that never ends, among the bots authors submitted.

It is a tournament row like any other (its games, lease, web page and board), whose
``config`` also holds ``"ladder"`` (``LadderSpec``). It keeps ``player.at_once`` tables
in play; whenever one ends, the next is chosen from the submissions active at that
moment (a new version is seated at once, a retired one no more) where the ratings are
least certain: a bot without an interval, or with a wide one, is drawn first more often
(``choose_table``), and its table-mates are bots near it in Elo, with noise, so everyone
meets everyone. A table plays one deal in every seat rotation (a duplicate group) and
its games are stored as a tournament's are (``tournament.play_and_store``). Match
numbers only grow (the next is above every stored one) and each choice derives from the
ladder's seed and the match number, so a restarted ladder loses nothing and doubles
nothing: a table cut short keeps the games it finished, and its number is never reused.
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

from .bots import Bot
from .deals import epoch_key
from .games.base import SettingsError
from .match import GameSpec
from .referee import MatchError
from .sandbox.base import StartError
from .schedule import Match, deal_seed
from .store import Store, StoredBot, Tournament
from .store.submissions import WAITING, Submissions
from .tournament import GameWriter, Player, Progress, TournamentConfig, play_and_store

if TYPE_CHECKING:
    from leaderboard.board import Row

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


def deals_for(spec: LadderSpec, seats: int, game_s: float | None) -> int:
    """The deals of the next table of ``seats``: fixed by the spec, or as many as fill
    ``table_seconds`` at ``game_s`` seconds a game (one while nothing was timed yet)."""
    if spec.deals_per_table:
        return spec.deals_per_table
    if game_s is None or game_s <= 0:
        return 1
    return max(1, min(spec.max_deals, int(spec.table_seconds / (seats * game_s))))


@dataclasses.dataclass(frozen=True)
class Rated:
    """A bot on the ladder as the table choice sees it."""

    bot_id: int
    elo: float
    width: float
    """Its 95% interval's width; infinite when it has none."""


def uncertainty(bot: Rated) -> float:
    return WIDE if not math.isfinite(bot.width) else max(NARROWEST, min(bot.width, WIDE))


def choose_table(bots: list[Rated], size: int, rng: random.Random) -> list[int]:
    """The bot ids of the next table: the first drawn with a weight of its uncertainty,
    the others the nearest to it in Elo (with noise), one in ``1 / ANY_MATE`` any bot.
    Fewer bots than ``size``: all of them; fewer than two: none."""
    size = min(size, len(bots))
    if size < 2:
        return []
    focus = rng.choices(bots, [uncertainty(b) for b in bots])[0]
    others = [b for b in bots if b.bot_id != focus.bot_id]
    others.sort(key=lambda b: abs(b.elo - focus.elo) + abs(rng.gauss(0, NEAR)))
    table = [focus.bot_id]
    while len(table) < size:  # the nearest left, or now and then any: everyone meets everyone
        mate = others.pop(rng.randrange(len(others)) if rng.random() < ANY_MATE else 0)
        table.append(mate.bot_id)
    return table


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
    """Deals a table plays, each in every seat rotation; 0: as many as fill about
    ``table_seconds`` at the pace the ladder's tables have been playing."""
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


SEATING_ERRORS = (MatchError, StartError, SettingsError)
"""What a table can fail with because of its bots: said, and the ladder goes on."""


@dataclasses.dataclass
class Ladder:
    """The ladder's play over one database: ``run`` until cancelled.

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
    status_s: float = STATUS_S
    """A status line at most this often, when something changed."""

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
        self.game_s: float | None = None
        """Seconds a game took at the last tables, their bots' start shared among their games."""
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
        its game); notes the counts the status line shows."""
        submissions = Submissions(self.reader)
        ids = {s.bot_id for s in submissions.active() if s.bot_id is not None}
        bots = [b for b in self.reader.list_bots() if b.id in ids and self.tournament.game in b.games]
        self.waiting = len(submissions.in_states(*WAITING))
        self.games = self.reader.count_games(self.tournament.id)
        return bots

    def ratings(self) -> list[Row]:
        """The ladder's board, computed again only when games were stored since, and at
        most every ``RATINGS_S`` (over 100,000 games a fit takes most of a second, CPU
        the bots would miss). A bot without a row counts as new meanwhile."""
        if self.games != self.rated_at and time.monotonic() - self.rated_when >= RATINGS_S:
            from leaderboard.board import leaderboard

            t = self.tournament
            self.rows, self.rated_at = leaderboard(self.reader, t.game, t.variant, t.name), self.games
            self.rated_when = time.monotonic()
        return self.rows

    def next_match_no(self) -> int:
        """Above every stored match: a restart never reuses a number."""
        return max((m for m, _ in self.reader.done_games(self.tournament.id)), default=-1) + 1

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

    async def table(self, match_no: int, poll_s: float) -> list[StoredBot]:
        """The bots of table ``match_no``, once two or more are active and playable."""
        said = -1
        while True:
            active = await self._read(self.look)
            playable = [b for b in active if await self._playable(b)]
            self.active = len(playable)
            if len(playable) >= 2:
                rows = await self._read(self.ratings)
                rng = table_rng(self.tournament.seed, match_no)
                chosen = choose_table(rated(rows, playable), self.spec.table_size, rng)
                by_id = {b.id: b for b in playable}
                return [by_id[i] for i in chosen]
            if said != len(playable):
                self.say(f"{len(playable)} bot{'s' * (len(playable) != 1)} on the ladder: waiting for a second")
                said = len(playable)
            await trio.sleep(poll_s)

    async def play(self, writer: GameWriter, match_no: int, seated: list[StoredBot]) -> None:
        """One table: a duplicate group per deal, each game stored as it ends."""
        deals = deals_for(self.spec, len(seated), self.game_s)
        key = await trio.to_thread.run_sync(self.deal_key, match_no)  # a chain of hashes: off the loop
        match = table_match(match_no, len(seated), key, deals)
        loaded = [self.loaded[b.id] for b in seated]
        began = trio.current_time()
        try:
            played = await play_and_store(
                self.player, writer, self.tournament, self.config, match, seated, loaded, self.progress,
                list(range(len(match.games))),
            )  # fmt: skip
        except SEATING_ERRORS as exc:
            self.say(f"match {match_no} ({', '.join(b.ref for b in seated)}) stopped: {exc}")
            return
        if played:  # the pace, starting the bots included: the next table's length follows it
            pace = (trio.current_time() - began) / played
            self.game_s = pace if self.game_s is None else (self.game_s + pace) / 2

    async def run(self, poll_s: float = POLL_S) -> None:
        """Keep ``player.at_once`` tables in play until cancelled; each table is chosen
        when a slot frees, from the bots active then."""
        writer = GameWriter(self.store)
        slots = trio.CapacityLimiter(max(1, self.player.at_once))
        match_no = await self._read(self.next_match_no)
        await self._read(self.reveal, match_no)  # what a run before this one played

        async def one(number: int, seated: list[StoredBot]) -> None:
            try:
                await self.play(writer, number, seated)
            finally:
                self.in_play.discard(number)
                slots.release_on_behalf_of(number)
                slots.total_tokens = max(1, self.player.at_once)  # on a cluster, workers come and go
            await self._read(self.reveal, match_no)  # its epoch may be all played now

        async with trio.open_nursery() as outer:
            outer.start_soon(writer.run)
            outer.start_soon(self._status)
            try:
                async with trio.open_nursery() as tables:
                    while True:
                        await slots.acquire_on_behalf_of(match_no)
                        seated = await self.table(match_no, poll_s)
                        self.in_play.add(match_no)
                        tables.start_soon(one, match_no, seated)
                        match_no += 1
            finally:
                writer.close()  # the writer stores what is queued, then ends (also on Ctrl-C)

    async def _status(self) -> None:
        shown = ""
        while True:
            await trio.sleep(self.status_s)
            line = status_line(self.games, self.active, self.waiting)
            if line != shown:
                self.say(line)
                shown = line
