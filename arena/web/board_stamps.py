"""The stamp of each board: the id of its newest game, kept up to date cheaply.

A board (a game and variant) changes only when a game of that board arrives, so it is
stamped with the id of its newest game: a game of another board never makes it
stale. Reading every board's newest game scans the games index; instead the stamps are
advanced by the games new since the last reading (a range of ids, a handful of rows), and
read whole again only when games went away (a tournament deleted) or on the first call.
"""

from __future__ import annotations

from dataclasses import dataclass

GameVariant = tuple[str, str]
"""(game, variant)."""


@dataclass(frozen=True)
class BoardStamps:
    newest: dict[GameVariant, int]
    """Per board with stored games: the id of its newest game."""
    counts: dict[GameVariant, int]
    """Per board: its games."""
    last: int
    """The newest game id of all."""
    games: int
    """All games."""

    def of(self, board: GameVariant) -> int:
        """A board's stamp (0 for a board with no game)."""
        return self.newest.get(board, 0)

    def played_boards(self) -> list[GameVariant]:
        return sorted(self.newest)


@dataclass(frozen=True)
class Tallies:
    """Games per tournament and per bot, kept up to date as the stamps are: advanced by the
    games new since (``tallied``), so that no page counts a tournament's 100,000 games."""

    tournaments: dict[int, int]
    bots: dict[int, int]
    """A bot's games: its seats."""


def tallied(known: Tallies | None, tournaments: dict[int, int], bots: dict[int, int]) -> Tallies:
    """``known`` (None: nothing) with the counts of the games read since added."""
    per_tournament = dict(known.tournaments) if known else {}
    per_bot = dict(known.bots) if known else {}
    for tournament_id, count in tournaments.items():
        per_tournament[tournament_id] = per_tournament.get(tournament_id, 0) + count
    for bot_id, count in bots.items():
        per_bot[bot_id] = per_bot.get(bot_id, 0) + count
    return Tallies(per_tournament, per_bot)


def read_after(known: BoardStamps | None, last: int, games: int) -> int | None:
    """The id above which games must be read to bring ``known`` up to ``last`` (the newest
    game id now) and ``games`` (the number of games now): None when it is current, 0 for
    every game (nothing known, or games went away)."""
    if known is None or last < known.last or games < known.games:
        return 0
    if last == known.last:
        return None if games == known.games else 0
    return known.last


def merged(known: BoardStamps | None, rows: list[tuple[str, str, int, int]]) -> BoardStamps:
    """``known`` (None: nothing) with ``rows`` (``(game, variant, newest id, games)`` per board
    of the games read since) added."""
    newest = dict(known.newest) if known else {}
    counts = dict(known.counts) if known else {}
    for game, variant, top, count in rows:
        newest[game, variant] = max(newest.get((game, variant), 0), top)
        counts[game, variant] = counts.get((game, variant), 0) + count
    return BoardStamps(newest, counts, max(newest.values(), default=0), sum(counts.values()))


def agrees(found: BoardStamps, last: int, games: int) -> bool:
    """Whether stamps advanced by the games read agree with ``last`` and ``games`` read
    just before them. A game may have arrived between the two readings (it is then in the
    rows): only fewer games, or another count for the same newest, means that games went
    away meanwhile and every game must be read again."""
    return found.last > last or (found.last == last and found.games == games)
