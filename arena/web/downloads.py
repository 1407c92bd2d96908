"""The site's tables as CSV files (``format=csv`` on the API): a page's JSON data in, a
file name and its text out. The columns are those of ``arena games --format csv`` and
``arena leaderboard --format csv`` (the same code, ``arena.boards.csv_export``), or the JSON fields."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from arena.boards.csv_export import boards_csv, games_csv, records_csv

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


def _boards(boards: list[dict[str, Any]]) -> str:
    from arena.boards.standings import Row

    return boards_csv({b["key"]: b["rows"] for b in boards}, Row.__struct_fields__)


def leaderboard(data: dict[str, Any]) -> Download:
    """Every board shown, a row per bot (``arena leaderboard --format csv``)."""
    return file_name("leaderboard", data["game"], data["variant"], data["tournament"]), _boards(data["boards"])


def games(data: dict[str, Any]) -> Download:
    """The page of games, a row per seat (``arena games --format csv``)."""
    return file_name("games", data["tournament"], data["bot"], data["offset"] or None), games_csv(data["games"])


def game(data: dict[str, Any]) -> Download:
    """One game's seats, as ``games`` writes them."""
    return file_name("game", data["id"]), games_csv([data])


def tournaments(data: dict[str, Any]) -> Download:
    return file_name("tournaments"), records_csv(data["tournaments"], TOURNAMENT_COLUMNS)


def tournament(data: dict[str, Any]) -> Download:
    """A tournament's standings: its board, as ``leaderboard`` writes it."""
    return file_name("standings", data["name"]), _boards([data["standings"]])


def ladder(data: dict[str, Any]) -> Download:
    """A ladder's board, as ``leaderboard`` writes it."""
    return file_name("ladder", data["name"]), _boards([data["standings"]])


def bots(data: dict[str, Any]) -> Download:
    return file_name("bots"), records_csv(data["bots"], BOT_COLUMNS)


def bot(data: dict[str, Any]) -> Download:
    """A bot's record against each opponent."""
    return file_name("opponents", data["bot"]), records_csv(data["opponents"], OPPONENT_COLUMNS)


TABLES: dict[str, Callable[[dict[str, Any]], Download]] = {
    "leaderboard.html": leaderboard,
    "games.html": games,
    "game.html": game,
    "tournaments.html": tournaments,
    "tournament.html": tournament,
    "ladder.html": ladder,
    "bots.html": bots,
    "bot.html": bot,
}
"""The CSV of each page that has a table, by its template."""
