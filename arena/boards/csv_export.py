"""Results as CSV, the same for ``arena games``/``arena leaderboard --format csv`` and the
web's downloads: plain records (the JSON the API serves) in, CSV text out.

Bot, tournament and node names are written by strangers, and a spreadsheet runs a cell
that starts with ``=``, ``+``, ``-`` or ``@`` as a formula: such a text cell is written
with a leading quote (numbers are numbers, a negative score stays one)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.store import FAULT_KINDS

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a text cell as a formula (OWASP's list)."""

GAME_SEAT_FIELDS = ("id", "tournament", "match_no", "game_no", "deal", "game", "variant", "rounds", "started", "node")
"""A game's columns in ``games_csv``, before its seat's."""
SEAT_FIELDS = ("seat", "bot", "rank", "score", "status")
"""A seat's columns, then a column per kind of fault (``FAULT_KINDS``)."""


def safe_cell(value: Any) -> Any:
    """A cell as written: a missing or non-finite number empty, a list its items joined by
    spaces, a text that a spreadsheet would run as a formula quoted."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, (list, tuple)):
        value = " ".join(str(item) for item in value)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A header and rows as CSV (``\\n`` line ends), every cell through ``safe_cell``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([safe_cell(cell) for cell in row] for row in rows)
    return out.getvalue()


def field(record: Mapping[str, Any], name: str) -> Any:
    """``record[name]``, where ``health.state`` reads into a nested record (None if absent)."""
    value: Any = record
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def records_csv(records: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """One row per record, one column per field (``field`` names them)."""
    return csv_text(columns, ([field(r, c) for c in columns] for r in records))


def games_csv(games: Iterable[Mapping[str, Any]]) -> str:
    """One row per seat of each game: the game's fields, then the seat's, its faults by kind."""
    return csv_text(
        [*GAME_SEAT_FIELDS, *SEAT_FIELDS, *FAULT_KINDS],
        (
            [*(g.get(f) for f in GAME_SEAT_FIELDS), *(s[f] for f in SEAT_FIELDS)]
            + [s["faults"].get(kind, 0) for kind in FAULT_KINDS]
            for g in games
            for s in g["seats"]
        ),
    )


def boards_csv(boards: Mapping[str, Iterable[Mapping[str, Any]]], fields: Sequence[str]) -> str:
    """Every board in one CSV: ``game`` (the board key, ``game/variant``), then a row's ``fields``."""
    return csv_text(
        ["game", *fields], ([key, *(row.get(f) for f in fields)] for key, rows in boards.items() for row in rows)
    )
