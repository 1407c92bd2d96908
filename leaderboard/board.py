"""The leaderboard: stored results in, Elo with intervals and totals out, as a table,
JSON or CSV.

Reads the store (never writes results); the rating math is ``leaderboard.ratings``.
A computed board is cached in the store keyed by the newest game id, so asking again
before another game is stored costs one query (a read-only store skips writing it:
the web server keeps its own cache).
"""

from __future__ import annotations

import csv
import io
from typing import Any

import msgspec
import numpy as np
from rich.table import Table

from arena.store import Store

from .ratings import Table as Tabulated
from .ratings import likelihood_of_superiority, rate, table_from_seats


class Row(msgspec.Struct, frozen=True):
    rank: int
    bot: str
    elo: float
    low: float
    high: float
    games: int
    wins: int
    penalty_per_round: float
    timeouts: int
    crashes: int
    malformed: int
    illegal: int

    @property
    def faults(self) -> int:
        return self.timeouts + self.crashes + self.malformed + self.illegal


_rows_decoder = msgspec.json.Decoder(list[Row])


class _Scope(msgspec.Struct):
    """The chosen games as arrays, seat by seat: enough for ratings and every total."""

    table: Tabulated
    bot_ids: list[int]
    games: Any
    wins: Any
    per_round: Any


def _numbers(texts: Any, dtype: Any) -> Any:
    """Comma-separated numbers, many texts, one array (numpy parses them in C)."""
    return np.fromstring(",".join(texts), dtype=dtype, sep=",")


def _load(
    store: Store, game: str | None, variant: str | None, tournament: str | None, through: int | None = None
) -> _Scope | None:
    rows = store.results(game, variant, tournament, through)
    if not rows:
        return None
    keys = np.array([(t << 40) | (m << 20) | d for t, m, d, *_ in rows], dtype=np.int64)
    rounds = np.array([max(r[3], 1) for r in rows], dtype=np.float64)
    seats = np.array([r[4].count(",") + 1 for r in rows], dtype=np.int64)
    bots = _numbers((r[4] for r in rows), np.int64)
    ranks = _numbers((r[5] for r in rows), np.int64)
    scores = _numbers((r[6] for r in rows), np.float64)
    bot_ids, seat_bot = np.unique(bots, return_inverse=True)
    _, group = np.unique(keys, return_inverse=True)
    starts = np.cumsum(seats) - seats
    blocks = []
    for size in np.unique(seats):
        chosen = np.flatnonzero(seats == size)
        index = starts[chosen][:, None] + np.arange(size)
        blocks.append((group[chosen], seat_bot[index], ranks[index].astype(np.float64)))
    table = table_from_seats([str(b) for b in bot_ids], int(group.max()) + 1, blocks)
    n = len(bot_ids)
    per_seat_rounds = np.repeat(rounds, seats)
    return _Scope(
        table,
        [int(b) for b in bot_ids],
        np.bincount(seat_bot, minlength=n),
        np.bincount(seat_bot[ranks == 1], minlength=n),
        np.bincount(seat_bot, weights=scores / per_seat_rounds, minlength=n) / np.bincount(seat_bot, minlength=n),
    )


def board_scope(
    game: str | None = None, variant: str | None = None, tournament: str | None = None, through: int | None = None
) -> str:
    """The key a board is cached under in the store."""
    return f"board|{game}|{variant}|{tournament}" + ("" if through is None else f"|through {through}")


def decode_rows(board: str | bytes) -> list[Row]:
    """Rows as ``leaderboard`` caches them (JSON)."""
    return _rows_decoder.decode(board)


def leaderboard(
    store: Store,
    game: str | None = None,
    variant: str | None = None,
    tournament: str | None = None,
    through_tournament: int | None = None,
) -> list[Row]:
    """Every bot of the chosen games, best Elo first.

    ``through_tournament``: only the games of tournaments with at most this id, the
    board as it stood after that tournament (the web's rating-over-time chart).
    """
    scope = board_scope(game, variant, tournament, through_tournament)
    last = store.last_game_id()
    cached = store.cached_board(scope, last)
    if cached is not None:
        return _rows_decoder.decode(cached)
    loaded = _load(store, game, variant, tournament, through_tournament)
    if loaded is None:
        return []
    names = store.bot_names()
    faults = store.fault_totals(game, variant, tournament, through_tournament)
    index = {bot_id: i for i, bot_id in enumerate(loaded.bot_ids)}
    rows = []
    for position, rating in enumerate(rate(loaded.table), 1):
        bot_id = int(rating.bot)
        i = index[bot_id]
        rows.append(
            Row(
                position,
                names[bot_id],
                round(rating.elo, 1),
                round(rating.low, 1),
                round(rating.high, 1),
                int(loaded.games[i]),
                int(loaded.wins[i]),
                round(float(loaded.per_round[i]), 3),
                *faults.get(bot_id, (0, 0, 0, 0)),
            )
        )
    store.cache_board(scope, last, msgspec.json.encode(rows).decode())
    return rows


def los_matrix(
    store: Store, game: str | None = None, variant: str | None = None, tournament: str | None = None
) -> tuple[list[str], list[list[float]]]:
    loaded = _load(store, game, variant, tournament)
    if loaded is None:
        return [], []
    names = store.bot_names()
    bots, matrix = likelihood_of_superiority(loaded.table)
    return [names[int(b)] for b in bots], matrix


def render_table(rows: list[Row], title: str = "Leaderboard") -> Table:
    table = Table(title=title)
    for column in ("#", "bot", "Elo", "95% CI", "games", "wins", "score/rd", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right", no_wrap=True)
    for r in rows:
        faults = f"{r.faults}" + (
            f" ({r.timeouts} t, {r.crashes} c, {r.malformed} m, {r.illegal} i)" if r.faults else ""
        )
        table.add_row(
            str(r.rank),
            r.bot,
            f"{r.elo:.0f}",
            f"{r.low:.0f}–{r.high:.0f}",
            str(r.games),
            str(r.wins),
            f"{r.penalty_per_round:.2f}",
            faults,
        )
    return table


def render_json(rows: list[Row]) -> str:
    return msgspec.json.format(msgspec.json.encode(rows).decode(), indent=2)


def render_csv(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    fields = list(Row.__struct_fields__)
    writer.writerow(fields)
    for r in rows:
        writer.writerow([getattr(r, f) for f in fields])
    return out.getvalue()


def render_los(bots: list[str], matrix: list[list[float]]) -> Table:
    table = Table(title="Likelihood of superiority (row better than column)")
    table.add_column("")
    for b in bots:
        table.add_column(b, justify="right")
    for row, (b, values) in enumerate(zip(bots, matrix, strict=True)):
        table.add_row(b, *("" if column == row else f"{v:.2f}" for column, v in enumerate(values)))
    return table
