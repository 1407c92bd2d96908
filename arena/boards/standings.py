"""Boards computed from the store: stored results in, a ``Row`` per bot out (Elo with its
interval, games, wins, the average score per round, faults), with the head-to-head
tallies and the likelihood of superiority beside them.

Reads the store (never writes results); the rating math is ``leaderboard.ratings``, which
knows neither the store nor the terminal. A computed board is cached in the store keyed
by the newest game id, so asking again before another game is stored costs one query (a
read-only store skips writing it: the web server keeps its own cache). numpy and the fit
load only when a board is computed: a cached one needs neither. Showing a board (a table,
JSON, CSV) is ``arena.boards.show``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import msgspec

from arena.store import Store, version_key

if TYPE_CHECKING:
    from leaderboard.headtohead import Tally
    from leaderboard.ratings import Table as Tabulated


class Row(msgspec.Struct, frozen=True):
    """One bot's line of a board, as JSON and CSV write it field by field and every table
    shows it (``arena.boards.columns``)."""

    rank: int
    bot: str
    elo: float
    """The fit's Elo; NaN (null in JSON) for a bot with only a bound (``bound``), whose
    fit would grow with every game it swept: its rating is the bound."""
    low: float
    high: float
    games: int
    wins: int
    score_per_round: float
    """The bot's average score per round, in the game's unit (its record's
    ``score.per_round`` is the heading; ``score.lower_is_better`` says which way is good)."""
    timeouts: int
    crashes: int
    malformed: int
    illegal: int
    groups: int = 0
    """Deal groups the bot played in."""
    bound: str = ""
    """"" for a two-sided interval; ">" when the bot won every comparison (its rating is
    only a lower bound, ``low``), "<" when it lost every one (an upper bound, ``high``)."""
    component: int = 0
    """Bots of different components never played each other, directly or through other
    bots: their Elos cannot be compared. 0 is the largest; ``rank`` counts within one."""
    note: str = ""
    """Why the interval is missing or weak, in words (empty when it is not)."""

    @property
    def faults(self) -> int:
        return self.timeouts + self.crashes + self.malformed + self.illegal

    @property
    def rated(self) -> float:
        """What is known of its strength as one number: the Elo, or its bound (NaN: neither)."""
        return self.low if self.bound == ">" else self.high if self.bound == "<" else self.elo


def _finite(value: float) -> bool:
    return not (math.isnan(value) or math.isinf(value))


class AnchorError(ValueError):
    """The anchor cannot be used on the board: its bot is not on it (``missing``; ``bots``
    are the board's), or the fit refuses it (a bot with only a bound, say)."""

    def __init__(self, message: str, bots: list[str], missing: bool = True) -> None:
        super().__init__(message)
        self.bots = bots
        self.missing = missing


Anchor = tuple[str, float]
"""A bot, ``NAME`` or ``NAME:VERSION``, and the Elo it is given."""


def parse_anchor(text: str) -> Anchor:
    """``NAME[:VERSION]=ELO`` as an ``Anchor``, or ``ValueError`` saying the expected form."""
    ref, equals, value = text.strip().rpartition("=")
    ref = ref.strip()
    try:
        elo = float(value)
    except ValueError:
        elo = math.nan
    if not equals or not ref or not _finite(elo) or ref.count(":") > 1 or ref.startswith(":") or ref.endswith(":"):
        raise ValueError(f"{text!r}: expected NAME[:VERSION]=ELO, e.g. heuristic:1.0.0=1500")
    return ref, elo


def find_anchor(bots: list[str], ref: str) -> str | None:
    """The bot of ``bots`` (``name:version``) that ``ref`` names: itself, or for a bare
    name its highest version on the board."""
    if ":" in ref:
        return ref if ref in bots else None
    versions = [b for b in bots if b.rpartition(":")[0] == ref]
    return max(versions, key=lambda b: version_key(b.rpartition(":")[2]), default=None)


def _decode_rows(board: str | bytes) -> list[Row]:
    """JSON writes a missing interval (NaN) as null: read back as NaN."""
    raw = msgspec.json.decode(board)
    for row in raw:
        for field in ("elo", "low", "high"):
            if row.get(field) is None:
                row[field] = math.nan
    return msgspec.convert(raw, list[Row])


class _Scope(msgspec.Struct):
    """The chosen games as arrays, seat by seat: enough for ratings and every total."""

    table: Tabulated
    bot_ids: list[int]
    games: Any
    wins: Any
    per_round: Any


def _numbers(texts: Any, dtype: Any) -> Any:
    """Comma-separated numbers, many texts, one array (numpy parses them in C)."""
    import numpy as np

    return np.fromstring(",".join(texts), dtype=dtype, sep=",")


class _Seats(msgspec.Struct):
    """``Store.results`` rows as arrays, game by game: what ratings, totals and the
    head-to-head matrix read."""

    bot_ids: Any
    """The stored bot ids, ascending."""
    seats: Any
    """Per game: its number of seats."""
    seat_bot: Any
    """Per seat: its bot, an index into ``bot_ids``."""
    ranks: Any
    """Per seat: its rank (1 is first)."""
    groups: int
    """Deal groups."""
    blocks: list[tuple[Any, Any, Any]]
    """Games of one size K each: their deal groups, (games, K) arrays of bots and ranks."""


def _seats(rows: list[tuple[Any, ...]]) -> _Seats:
    import numpy as np

    keys = np.array([(t << 40) | (m << 20) | d for t, m, d, *_ in rows], dtype=np.int64)
    seats = np.array([r[4].count(",") + 1 for r in rows], dtype=np.int64)
    bots = _numbers((r[4] for r in rows), np.int64)
    ranks = _numbers((r[5] for r in rows), np.int64)
    bot_ids, seat_bot = np.unique(bots, return_inverse=True)
    _, group = np.unique(keys, return_inverse=True)
    starts = np.cumsum(seats) - seats
    blocks = []
    for size in np.unique(seats):
        chosen = np.flatnonzero(seats == size)
        index = starts[chosen][:, None] + np.arange(size)
        blocks.append((group[chosen], seat_bot[index], ranks[index].astype(np.float64)))
    return _Seats(bot_ids, seats, seat_bot, ranks, int(group.max()) + 1, blocks)


def _load(
    store: Store,
    game: str | None,
    variant: str | None,
    tournament: str | None,
    through: int | None = None,
    through_game: int | None = None,
) -> _Scope | None:
    rows = store.results(game, variant, tournament, through, through_game)
    if not rows:
        return None
    import numpy as np

    from leaderboard.ratings import table_from_seats

    seated = _seats(rows)
    rounds = np.array([max(r[3], 1) for r in rows], dtype=np.float64)
    scores = _numbers((r[6] for r in rows), np.float64)
    table = table_from_seats([str(b) for b in seated.bot_ids], seated.groups, seated.blocks)
    n = len(seated.bot_ids)
    per_seat_rounds = np.repeat(rounds, seated.seats)
    seat_bot = seated.seat_bot
    return _Scope(
        table,
        [int(b) for b in seated.bot_ids],
        np.bincount(seat_bot, minlength=n),
        np.bincount(seat_bot[seated.ranks == 1], minlength=n),
        np.bincount(seat_bot, weights=scores / per_seat_rounds, minlength=n) / np.bincount(seat_bot, minlength=n),
    )


def head_to_head(
    store: Store, game: str | None = None, variant: str | None = None, tournament: str | None = None
) -> Tally:
    """Every pair of bots of the chosen games: games together, wins, ties
    (``leaderboard.headtohead``), read as the board reads them; cached in the store
    beside the board (``head_to_head_scope``)."""
    from leaderboard.headtohead import tally

    scope = head_to_head_scope(game, variant, tournament)
    last = store.last_game_id()
    cached = store.cached_board(scope, last)
    if cached is not None:
        return decode_tally(cached)
    rows = store.results(game, variant, tournament)
    if not rows:
        return tally([], [])
    seated = _seats(rows)
    names = store.bot_names()
    found: Tally = tally([names[int(b)] for b in seated.bot_ids], [(bots, ranks) for _, bots, ranks in seated.blocks])
    store.cache_board(scope, last, msgspec.json.encode(found).decode())
    return found


def head_to_head_scope(game: str | None, variant: str | None, tournament: str | None) -> str:
    """The key a head-to-head tally is cached under in the store."""
    return "head to head|" + board_scope(game, variant, tournament)


def decode_tally(text: str | bytes) -> Tally:
    from leaderboard.headtohead import Tally

    return msgspec.json.decode(text, type=Tally)


def settle(store: Store, game: str, variant: str, tournament: str, tournament_id: int) -> list[Row]:
    """After a tournament's run: its board, and the board of every game of its kind, with
    their head-to-head tallies, computed and cached in the store, so that a web server
    started later shows them at once. When it is the newest tournament of its kind, the
    kind's board is also the board as it stood after it (the bot page's rating over
    time). Returns the tournament's board."""
    rows = leaderboard(store, game, variant, tournament)
    head_to_head(store, game, variant, tournament)
    leaderboard(store, game, variant)
    head_to_head(store, game, variant)
    last = store.last_game_id()
    kind = store.cached_board(board_scope(game, variant), last)
    newest = max((t.id for t in store.list_tournaments() if (t.game, t.variant) == (game, variant)), default=0)
    if kind is not None and newest == tournament_id:
        store.cache_board(board_scope(game, variant, None, tournament_id), last, kind)
    return rows


BOARD_REVISION = 3
"""Part of a cached board's key: raised when the rows a fit gives change, so a board
cached before is computed again (2: a bound is no Elo, a zero-width interval none; 3:
the score is ``score_per_round``, once ``penalty_per_round``). An older arena reading the
same file keeps finding the boards it cached, under its own revision."""


def board_scope(
    game: str | None = None,
    variant: str | None = None,
    tournament: str | None = None,
    through: int | None = None,
    anchor: Anchor | None = None,
    through_game: int | None = None,
) -> str:
    """The key a board is cached under in the store."""
    return (
        f"board {BOARD_REVISION}|{game}|{variant}|{tournament}"
        + ("" if through is None else f"|through {through}")
        + ("" if through_game is None else f"|through game {through_game}")
        + ("" if anchor is None else f"|anchor {anchor[0]}={anchor[1]!r}")
    )


def decode_rows(board: str | bytes) -> list[Row]:
    """Rows as ``leaderboard`` caches them (JSON)."""
    return _decode_rows(board)


def leaderboard(
    store: Store,
    game: str | None = None,
    variant: str | None = None,
    tournament: str | None = None,
    through_tournament: int | None = None,
    anchor: Anchor | None = None,
    through_game: int | None = None,
) -> list[Row]:
    """Every bot of the chosen games: component by component (the largest first), best
    Elo first within each, ranked within it.

    ``through_tournament``: only the games of tournaments with at most this id, the
    board as it stood after that tournament (the web's rating-over-time chart);
    ``through_game``: only the games with at most this id (the same within a ladder).
    ``anchor``: that bot has that Elo and the others are relative to it; ``AnchorError``
    when it is not on the board.
    """
    scope = board_scope(game, variant, tournament, through_tournament, anchor, through_game)
    last = store.last_game_id()
    cached = store.cached_board(scope, last)
    if cached is not None:
        return _decode_rows(cached)
    loaded = _load(store, game, variant, tournament, through_tournament, through_game)
    if loaded is None:
        if anchor is not None:
            raise AnchorError(f"no bot {anchor[0]!r} on the board: it has no games", [])
        return []
    names = store.bot_names()
    anchored, found = None, None
    if anchor is not None:
        on_board = sorted(names[b] for b in loaded.bot_ids)
        found = find_anchor(on_board, anchor[0])
        if found is None:
            where = f"{game}/{variant}" if game and variant else "the board"
            raise AnchorError(f"no bot {anchor[0]!r} on {where}: its bots are {', '.join(on_board)}", on_board)
        anchored = (str(next(b for b in loaded.bot_ids if names[b] == found)), anchor[1])
    faults = store.fault_totals(game, variant, tournament, through_tournament, through_game)
    index = {bot_id: i for i, bot_id in enumerate(loaded.bot_ids)}
    from leaderboard.ratings import rate  # loaded with the scope's arrays: numpy is in already

    try:
        rated = rate(loaded.table, anchor=anchored)
    except ValueError as exc:  # an anchor the fit refuses (one with only a bound, say): named, not numbered
        if anchored is None or anchor is None:
            raise
        raise AnchorError(str(exc).replace(repr(anchored[0]), repr(found or anchor[0])), [], False) from None
    ratings = sorted(rated, key=lambda r: r.component)  # stable: best first within each
    rows = []
    ranks: dict[int, int] = {}
    for rating in ratings:
        bot_id = int(rating.bot)
        i = index[bot_id]
        component = rating.component
        ranks[component] = ranks.get(component, 0) + 1
        timeouts, crashes, malformed, illegal = faults.get(bot_id, (0, 0, 0, 0))
        rows.append(
            Row(
                ranks[component],
                names[bot_id],
                math.nan if rating.bound else round(rating.elo, 1),  # a bound is no Elo: its rating is low or high
                round(rating.low, 1),
                round(rating.high, 1),
                int(loaded.games[i]),
                int(loaded.wins[i]),
                round(float(loaded.per_round[i]), 3),
                timeouts,
                crashes,
                malformed,
                illegal,
                groups=rating.groups,
                bound=rating.bound,
                component=component,
                note=rating.note,
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
    from leaderboard.ratings import likelihood_of_superiority

    names = store.bot_names()
    bots, matrix = likelihood_of_superiority(loaded.table)
    return [names[int(b)] for b in bots], matrix


Los = tuple[list[str], list[list[float]]]
"""``los_matrix``: the bots, and ``matrix[i][j]``, the chance bot i is better than bot j."""


def parts(rows: list[Row]) -> list[list[Row]]:
    """The board's components, each a board of its own (rows keep their order)."""
    found: dict[int, list[Row]] = {}
    for row in rows:
        found.setdefault(row.component, []).append(row)
    return [found[c] for c in sorted(found)]
