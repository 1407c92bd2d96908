"""The site's tables as CSV files (``format=csv`` on the API): a page's model in, a
file name and its text out. The columns are those of ``arena games --format csv`` and
``arena leaderboard --format csv`` (the same code, ``arena.boards.csv_export``), or the JSON fields."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from arena.boards.csv_export import boards_csv, games_csv, records_csv
from arena.boards.standings import Row
from arena.web.pages.boards import LeaderboardPage
from arena.web.pages.bots import BotPage, BotsPage
from arena.web.pages.games import GamePage, GamesPage
from arena.web.pages.ladders import LadderPage
from arena.web.pages.site import Board
from arena.web.pages.tournaments import TournamentPage, TournamentsPage

TOURNAMENT_COLUMNS = (
    "name", "game", "variant", "key", "label", "status", "health.state", "created", "finished",
    "games_done", "games_planned", "standing.progress", "standing.verdict",
)  # fmt: skip
BOT_COLUMNS = ("bot", "name", "version", "language", "games_listed", "hash", "added", "games")
OPPONENT_COLUMNS = ("bot", "games", "ahead", "behind", "tied", "ahead_share")

Download = tuple[str, str]
"""A file name and the CSV text."""


def file_name(*parts: Any) -> str:
    """``games-cup.csv``: the parts that are set, each reduced to safe characters."""
    kept = [re.sub(r"[^A-Za-z0-9._-]+", "_", str(p)).strip("._") for p in parts if p not in (None, "")]
    return "-".join(p for p in kept if p) + ".csv"


def _boards(boards: list[Board]) -> str:
    return boards_csv({b.key: b.rows for b in boards}, Row.__struct_fields__)


def leaderboard(data: LeaderboardPage) -> Download:
    """Every board shown, a row per bot (``arena leaderboard --format csv``)."""
    return file_name("leaderboard", data.game, data.variant, data.tournament), _boards(data.boards)


def games(data: GamesPage) -> Download:
    """The page of games, a row per seat (``arena games --format csv``)."""
    return file_name("games", data.tournament, data.bot, data.offset or None), games_csv(data.games)


def game(data: GamePage) -> Download:
    """One game's seats, as ``games`` writes them."""
    return file_name("game", data.id), games_csv([msgspec.to_builtins(data)])


def tournaments(data: TournamentsPage) -> Download:
    return file_name("tournaments"), records_csv(msgspec.to_builtins(data.tournaments), TOURNAMENT_COLUMNS)


def tournament(data: TournamentPage) -> Download:
    """A tournament's standings: its board, as ``leaderboard`` writes it."""
    return file_name("standings", data.name), _boards([data.standings])


def ladder(data: LadderPage) -> Download:
    """A ladder's board, as ``leaderboard`` writes it."""
    return file_name("ladder", data.name), _boards([data.standings])


def bots(data: BotsPage) -> Download:
    return file_name("bots"), records_csv(msgspec.to_builtins(data.bots), BOT_COLUMNS)


def bot(data: BotPage) -> Download:
    """A bot's record against each opponent."""
    return file_name("opponents", data.bot), records_csv(msgspec.to_builtins(data.opponents), OPPONENT_COLUMNS)


TABLES: dict[str, Callable[[Any], Download]] = {
    "leaderboard.html": leaderboard,
    "games.html": games,
    "game.html": game,
    "tournaments.html": tournaments,
    "tournament.html": tournament,
    "ladder.html": ladder,
    "bots.html": bots,
    "bot.html": bot,
}
"""The CSV of each page that has a table, by its template (the page's model in)."""
