"""Playing a gauntlet: batches of its schedule until its test decides (``arena.tournaments.gauntlet``
reads the stored games; this plays them)."""

from __future__ import annotations

from collections.abc import Callable

import trio

from arena.play.match import GameResult as PlayedGame
from arena.store import Store, StoredBot, Tournament
from arena.tournaments.gauntlet import Reading, half_points, read, spec_of
from arena.tournaments.plan import schedule_of
from arena.tournaments.roundrobin import Player, Progress, run_tournament
from arena.tournaments.schedule import Match
from leaderboard.sprt import Sprt, llr


class _Watch(Progress):
    """Follows the games of a batch as they end and cancels the batch once the groups
    counted so far decide the test (the stored games confirm it afterwards)."""

    def __init__(self, reading: Reading, schedule: list[Match], new: str, test: Sprt, scope: trio.CancelScope) -> None:
        self.group_of = {
            game.seed: deal * reading.tables + match.match_no % reading.tables
            for match in schedule
            for game, deal in zip(match.games, match.deals, strict=True)
        }
        self.size = reading.size
        self.full = 2 * reading.size * (reading.size - 1)
        self.scores = list(reading.scores)
        self.points = {group: points for group, (points, _) in reading.partial.items()}
        self.seen = {group: games for group, (_, games) in reading.partial.items()}
        self.new = new
        self.test = test
        self.scope = scope

    def game_stored(self, result: PlayedGame, bots: list[StoredBot]) -> None:
        group = self.group_of.get(result.spec.seed)
        if group is None or group < len(self.scores):
            return
        seat = [b.ref for b in bots].index(self.new)
        self.points[group] = self.points.get(group, 0) + half_points(result.ranks, seat)
        self.seen[group] = self.seen.get(group, 0) + 1
        grew = False
        while self.seen.get(len(self.scores), 0) >= self.size:
            self.scores.append(self.points[len(self.scores)] / self.full)
            grew = True
        if grew and self.test.verdict(llr(self.scores, self.test.elo0, self.test.elo1)):
            self.scope.cancel()


def next_batch(schedule: list[Match], done: set[tuple[int, int]], width: int) -> list[Match]:
    """The first ``width`` matches, in order, with a game not yet stored."""
    missing = [m for m in schedule if any((m.match_no, i) not in done for i in range(len(m.games)))]
    return missing[:width]


async def run_gauntlet(
    store: Store,
    tournament: Tournament,
    bots: list[StoredBot],
    player: Player,
    report: Callable[[Reading], None] = lambda reading: None,
) -> Reading:
    """Play the gauntlet a batch of ``player.at_once`` matches at a time until the test
    decides or the schedule is played; ``report`` gets the reading after each batch.
    Marks the tournament finished then, and returns the last reading."""
    spec = spec_of(tournament)
    assert spec is not None
    schedule = schedule_of(tournament)
    test = spec.test()
    reading = read(store, tournament, bots)
    while not reading.finished:
        batch = next_batch(schedule, store.done_games(tournament.id), player.at_once)
        if not batch:  # every game stored, yet a group incomplete: cannot happen
            break
        with trio.CancelScope() as scope:
            watch = _Watch(reading, batch, bots[0].ref, test, scope) if test is not None else Progress()
            await run_tournament(store, tournament, bots, player, watch, schedule=batch)
        reading = read(store, tournament, bots, reading)
        report(reading)
    if reading.verdict:
        # Games past the deciding group were played only because they were in flight,
        # which depends on the batch (cores, workers): keep only the counted ones, so
        # that a seed stores the same games everywhere.
        counted, tables = reading.groups, reading.tables
        if store.drop_games(tournament.id, lambda match_no, deal: deal * tables + match_no % tables >= counted):
            reading = read(store, tournament, bots)
    store.set_status(tournament.id, "finished")
    return reading
