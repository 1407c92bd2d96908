"""A ladder: a tournament that never ends, among the bots authors submitted.

It is a tournament row like any other (its games, lease, web page and board), whose
``config`` also holds ``"ladder"``. It plays a batch of tables at a time, each table one
deal in every seat rotation (a duplicate group), through ``run_tournament``; before each
batch it reads which submissions are active (a new version joins, a retired one
leaves), and chooses tables where the ratings are least certain: a bot without an
interval, or with a wide one, sits at more tables (``choose_table``). Table-mates are
bots near it in Elo, with some noise, so everyone meets everyone. Match numbers only
grow (the next is above every stored one), and the choices derive from the ladder's
seed and the match number, so a restarted ladder loses nothing and doubles nothing: a
batch cut short keeps the games it finished.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from typing import Any

import msgspec
import trio

from .match import GameSpec
from .schedule import Match, deal_seed
from .store import Store, StoredBot, Tournament
from .store.submissions import Submissions
from .tournament import Player, Progress, run_tournament

WIDE = 800.0
"""The uncertainty of a bot without an interval (new, or one-sided): it plays the most."""
NARROWEST = 25.0
"""Uncertainty never counts for less than this: settled bots still play now and then."""
NEAR = 150.0
"""The noise (Elo) on "near in rating" when table-mates are chosen."""
POLL_S = 1.0


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
    the others the nearest to it in Elo (with noise). Fewer bots than ``size``: all of
    them; fewer than two: none."""
    size = min(size, len(bots))
    if size < 2:
        return []
    focus = rng.choices(bots, [uncertainty(b) for b in bots])[0]
    others = [b for b in bots if b.bot_id != focus.bot_id]
    others.sort(key=lambda b: abs(b.elo - focus.elo) + abs(rng.gauss(0, NEAR)))
    return [focus.bot_id, *(b.bot_id for b in others[: size - 1])]


def table_match(match_no: int, size: int, seed: int) -> Match:
    """One deal in every seat rotation at a table of ``size``, bots 0 to ``size - 1``."""
    dealt = deal_seed(seed, match_no, 0)
    games = [GameSpec(dealt, [(seat - rotation) % size for seat in range(size)]) for rotation in range(size)]
    return Match(match_no, list(range(size)), games, [0] * size)


def rated(rows: list[Any], active: list[StoredBot]) -> list[Rated]:
    """The active bots with their ladder ratings (``leaderboard`` rows); a bot without
    games on it counts as new."""
    by_ref = {r.bot: r for r in rows}
    found = []
    for bot in active:
        row = by_ref.get(bot.ref)
        if row is None or row.bound or not (math.isfinite(row.low) and math.isfinite(row.high)):
            found.append(Rated(bot.id, row.elo if row is not None else 1500.0, math.inf))
        else:
            found.append(Rated(bot.id, row.elo, row.high - row.low))
    return found


@dataclasses.dataclass
class Ladder:
    store: Store
    tournament: Tournament
    player: Player
    table_size: int
    progress: Progress = dataclasses.field(default_factory=Progress)
    on_batch: Callable[[list[StoredBot]], None] = lambda bots: None
    """Called with a batch's bots before it plays (a cluster sends them to its workers)."""
    say: Callable[[str], None] = lambda line: None

    def active(self) -> list[StoredBot]:
        """The bots on the ladder now: the active version of each submitted bot that
        plays the ladder's game."""
        ids = [s.bot_id for s in Submissions(self.store).active() if s.bot_id is not None]
        bots = [b for b in self.store.list_bots() if b.id in ids]
        return [b for b in bots if self.tournament.game in b.games]

    def next_match_no(self) -> int:
        return max((m for m, _ in self.store.seatings(self.tournament.id)), default=-1) + 1

    def batch(self, active: list[StoredBot], first: int) -> list[Match]:
        """``player.at_once`` tables, numbered from ``first``, each chosen by its own rng."""
        from leaderboard.board import leaderboard

        t = self.tournament
        rows = leaderboard(self.store, t.game, t.variant, t.name)
        bots = rated(rows, active)
        index = {b.id: i for i, b in enumerate(active)}
        matches = []
        for match_no in range(first, first + max(1, self.player.at_once)):
            table = choose_table(bots, self.table_size, random.Random(f"ladder/{t.seed}/{match_no}"))
            match = table_match(match_no, len(table), t.seed)
            matches.append(msgspec.structs.replace(match, bots=[index[b] for b in table]))
        return matches

    async def run(self, poll_s: float = POLL_S) -> None:
        """Play until cancelled, waiting while fewer than two bots are active."""
        waiting = False
        while True:
            active = await trio.to_thread.run_sync(self.active)
            if len(active) < 2:
                if not waiting:
                    self.say(f"{len(active)} bot{'s' * (len(active) != 1)} active: waiting for a second")
                waiting = True
                await trio.sleep(poll_s)
                continue
            waiting = False
            first = await trio.to_thread.run_sync(self.next_match_no)
            matches = await trio.to_thread.run_sync(self.batch, active, first)
            self.on_batch(active)
            await run_tournament(self.store, self.tournament, active, self.player, self.progress, schedule=matches)
