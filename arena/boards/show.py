"""Boards shown: the terminal's tables (a table per component, fitted to the terminal's
width), JSON and CSV of boards, and the likelihood of superiority as a table or CSV. The
columns, their headings and each cell's text are ``arena.boards.columns``; the rows are
``arena.boards.standings``."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import msgspec
from rich.console import Console
from rich.table import Table

from arena.boards.columns import STANDINGS, Column, cell_text, columns_of
from arena.boards.csv_export import boards_csv as records_csv
from arena.boards.standings import Los, Row, parts

_MEASURE = Console(width=100_000, file=io.StringIO(), highlight=False)
"""Measures tables (their natural width); prints nothing."""


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))


def _board(rows: list[Row], title: str, columns: tuple[Column, ...], detail: bool, short: bool, fold: bool) -> Table:
    table = Table(title=title)
    for column in columns:
        heading = column.short if short else column.heading
        if column.numeric:
            table.add_column(heading, justify="right", no_wrap=True)
        else:
            table.add_column(heading, no_wrap=not fold, overflow="fold")
    for r in rows:
        table.add_row(*(cell_text(c, r, detail) for c in columns))
    return table


WIDEST = tuple(column.field for column in STANDINGS)
NARROWER = (
    (WIDEST, True, False),
    (WIDEST, False, False),
    (WIDEST, False, True),
    (("rank", "bot", "elo", "interval", "games", "wins", "faults"), False, True),
    (("rank", "bot", "elo", "interval", "games", "faults"), False, True),
    (("rank", "bot", "elo", "interval", "games"), False, True),
)
"""The columns of a table (``Column.field``), whether faults are shown by kind and whether
the headings are short, widest first: to fit a narrow terminal it gives up, in order, the
faults by kind (the total stays), the full headings, the score per round, the wins, the
faults. Rank, bot, Elo, its interval and games always stay; a bot's name folds onto a
second line rather than being cut."""


def render_table(
    rows: list[Row], title: str = "Leaderboard", width: int | None = None, game: str | None = None
) -> Table:
    """The board as a table, its score column headed as ``game``'s record says: every
    column when ``width`` is None, else the most that fits in ``width`` columns (see
    ``NARROWER``)."""
    every = {column.field: column for column in columns_of(game)}

    def table(fields: tuple[str, ...], detail: bool, short: bool, fold: bool = False) -> Table:
        return _board(rows, title, tuple(every[f] for f in fields), detail, short, fold)

    if width is None:
        return table(*NARROWER[0])
    for fields, detail, short in NARROWER:
        fitted = table(fields, detail, short)
        if natural_width(fitted) <= width:
            return fitted
    return table(*NARROWER[-1], fold=True)


APART = (
    "The bots below never played those above, directly or through other bots: their Elos cannot be"
    " compared with the others' (a scale of their own)."
)
"""What separates the parts of a board whose bots never all met."""


def notes(rows: list[Row]) -> list[str]:
    """The rows' notes, each once, with the bots it concerns: ``note: 3 deal groups:
    interval from few groups (every bot)``."""
    by_note: dict[str, list[str]] = {}
    for row in rows:
        if row.note:
            by_note.setdefault(row.note, []).append(row.bot)
    return [
        f"note: {note} ({'every bot' if len(bots) == len(rows) > 1 else ', '.join(bots)})"
        for note, bots in by_note.items()
    ]


def render_board(
    rows: list[Row], title: str = "Leaderboard", width: int | None = None, game: str | None = None
) -> list[Table | str]:
    """The whole board: a table per component (``render_table``), each after a line saying
    its bots never met the others, then the notes; strings are lines of text."""
    split = parts(rows)
    shown: list[Table | str] = []
    for number, part in enumerate(split, 1):
        if number > 1:
            shown.append(APART)
        named = title if len(split) == 1 else f"{title}, part {number} of {len(split)}"
        shown.append(render_table(part, named, width, game))
    shown.extend(notes(rows))
    return shown


def natural_width(renderable: Any) -> int:
    """The columns ``renderable`` takes when nothing constrains it."""
    return _MEASURE.measure(renderable).maximum


def boards_json(boards: dict[str, list[Row]], los: dict[str, Los] | None = None) -> str:
    """``{board key: [row, ...]}`` (``GAME/standard,SETTING``); with ``los``, each row also holds ``"los"``:
    ``{other bot: the chance this bot is better}``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind, rows in boards.items():
        out[kind] = [msgspec.to_builtins(r) for r in rows]
        if los is not None:
            bots, matrix = los.get(kind, ([], []))
            against = {b: dict(zip(bots, values, strict=True)) for b, values in zip(bots, matrix, strict=True)}
            for row in out[kind]:
                mine = against.get(row["bot"], {})
                row["los"] = {b: _los(p) for b, p in mine.items() if b != row["bot"]}
    return msgspec.json.format(msgspec.json.encode(out).decode(), indent=2)


def _los(p: float) -> float | None:
    """A LOS as JSON and CSV write it: None (null, an empty cell) where nothing can be said."""
    return round(p, 4) if _finite(p) else None


def boards_csv(boards: dict[str, list[Row]]) -> str:
    """Every board in one CSV: ``game`` (the board key, ``game/variant``), then a row's
    fields (``arena.boards.csv_export.boards_csv``, as the web's download)."""
    return records_csv({kind: msgspec.to_builtins(rows) for kind, rows in boards.items()}, Row.__struct_fields__)


def los_csv(los: dict[str, Los]) -> str:
    """The likelihood of superiority as CSV, one row per ordered pair of bots of a board:
    ``game,bot,opponent,los`` (the chance ``bot`` is better than ``opponent``), bots in
    the board's order."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["game", "bot", "opponent", "los"])
    for kind, (bots, matrix) in los.items():
        for bot, values in zip(bots, matrix, strict=True):
            for other, p in zip(bots, values, strict=True):
                if other != bot:
                    value = _los(p)
                    writer.writerow([kind, bot, other, "" if value is None else value])
    return out.getvalue()


def render_los(bots: list[str], matrix: list[list[float]], title: str = "") -> Table:
    """The matrix with numbered columns (a column's number is its row's ``#``), so that it
    stays narrow however long the names."""
    table = Table(title=title or "Likelihood of superiority (row better than column #)")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("bot", overflow="fold")
    for number in range(1, len(bots) + 1):
        table.add_column(str(number), justify="right", no_wrap=True)
    for row, (b, values) in enumerate(zip(bots, matrix, strict=True)):
        cells = ("" if column == row else f"{v:.2f}" if _finite(v) else "—" for column, v in enumerate(values))
        table.add_row(str(row + 1), b, *cells)
    return table
