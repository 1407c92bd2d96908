"""The standings' columns, written once for every output: which columns a board has, in
order, the field each shows (what JSON and CSV call it), its heading in full and where
space is short, and each cell's text. The terminal's table (``arena.boards.show``), the
live table of a running tournament, the web's board (its template writes the headings of
``columns_of``) and the CSV all read them, so a column or its heading changes here alone.

The score column is headed as the game's record says (``Score.per_round``): ``heading_of``."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.games.registry import Score, find_game

if TYPE_CHECKING:
    from arena.boards.standings import Row


@dataclass(frozen=True)
class Column:
    """One column of the standings."""

    field: str
    """What it shows: a ``Row`` field, as JSON and CSV name it (``interval`` is ``low``
    and ``high``; ``faults`` their four kinds' total)."""
    heading: str
    """Its heading in full."""
    short: str
    """Its heading where space is short (a narrow terminal, a phone)."""
    numeric: bool = True
    """Right-aligned, sorted as a number."""
    hint: str = ""
    """What it means, in a sentence fragment (a tooltip)."""


RANK = Column("rank", "#", "#")
BOT = Column("bot", "Bot", "Bot", numeric=False)
ELO = Column("elo", "Elo", "Elo")
INTERVAL = Column("interval", "95% interval", "95% CI")
GAMES = Column("games", "Games", "G")
WINS = Column("wins", "Wins", "W")
_ANY = Score("score", lower_is_better=False)
"""A score as a record that names no heading has it."""
SCORE = Column("score_per_round", _ANY.per_round, _ANY.per_round_short, hint=_ANY.per_round_hint)
"""Headed as any record is by default (``Score/round``) until a game's record names it (``heading_of``)."""
FAULTS = Column("faults", "Faults", "F")

STANDINGS = (RANK, BOT, ELO, INTERVAL, GAMES, WINS, SCORE, FAULTS)
"""Every column of a board, in order."""

FAULT_LABELS = (("timeouts", "timeout"), ("crashes", "crash"), ("malformed", "malformed"), ("illegal", "illegal"))
"""Row fields of the fault kinds, and how a cell names them."""


def heading_of(score: Score | None) -> Column:
    """The score column as the game's record names it (the default heading for a game the
    arena does not know)."""
    if score is None:
        return SCORE
    return replace(SCORE, heading=score.per_round, short=score.per_round_short, hint=score.per_round_hint)


def columns_of(game: str | None) -> tuple[Column, ...]:
    """The columns of ``game``'s boards (``STANDINGS`` with its score heading)."""
    record = None if game is None else find_game(game)
    score = heading_of(None if record is None else record.score)
    return tuple(score if column.field == SCORE.field else column for column in STANDINGS)


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))


def interval_text(row: Row) -> str:
    """The interval as a table shows it: ``1406–1583``; one-sided, ``> 1850`` or
    ``< 1120``, for a bot that won (lost) every comparison; ``—`` when there is none."""
    if row.bound == ">" and _finite(row.low):
        return f"> {row.low:.0f}"
    if row.bound == "<" and _finite(row.high):
        return f"< {row.high:.0f}"
    if not (_finite(row.low) and _finite(row.high)):
        return "—"
    return f"{row.low:.0f}–{row.high:.0f}"


def elo_text(row: Row) -> str:
    """The Elo, whole; a bot with only a bound shows the bound (``> 1850``); ``—`` for none."""
    if row.bound:
        return interval_text(row)
    return f"{row.elo:.0f}" if _finite(row.elo) else "—"


def score_text(per_round: float) -> str:
    """An average score per round as every table shows it: two decimals."""
    return f"{per_round:.2f}"


def faults_text(row: Row, detail: bool = True) -> str:
    """The faults' total; with ``detail``, their kinds after it: ``4 (3 timeout, 1 illegal)``."""
    if not row.faults or not detail:
        return str(row.faults)
    kinds = ", ".join(f"{getattr(row, field)} {label}" for field, label in FAULT_LABELS if getattr(row, field))
    return f"{row.faults} ({kinds})"


def cell_text(column: Column, row: Row, detail: bool = True) -> str:
    """The text of ``row``'s cell in ``column`` (``detail``: faults by kind)."""
    if column.field == INTERVAL.field:
        return interval_text(row)
    if column.field == ELO.field:
        return elo_text(row)
    if column.field == SCORE.field:
        return score_text(row.score_per_round)
    if column.field == FAULTS.field:
        return faults_text(row, detail)
    return str(getattr(row, column.field))
