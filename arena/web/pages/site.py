"""What every page group shares: the database, its caches, the boards (a game and rule
set's leaderboard) as served, and the pieces of a board every page draws.

Every method here runs in a worker thread (the endpoints are synchronous) and reads
through a read-only store; what costs more than a query is cached (``database.Revalidating``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypedDict

import msgspec

from arena.boards.standings import (
    Anchor,
    board_scope,
    decode_rows,
    decode_tally,
    find_anchor,
    head_to_head,
    head_to_head_scope,
    leaderboard,
)
from arena.games import registry
from arena.store import PEOPLE, Store, StoredGame, Tournament, board_label
from arena.tournaments.plan import schedule_of
from arena.web.board_stamps import BoardStamps, Tallies, agrees, merged, read_after, tallied
from arena.web.database import STALE, Cached, Database, Lru, Revalidating
from arena.web.errors import Unavailable, WebError
from arena.web.rating_caveats import board_caveats
from leaderboard.headtohead import matrix

RECENT = 20
"""Games shown on a tournament's page."""
ANCHORED_BOARDS = 32
"""Anchored boards kept in memory (any anchor may be asked for: a few, least recent out)."""
ON_THE_SPOT = 5000
"""A board of at most this many games is rated while the page waits (tens of ms)."""
UNKNOWN_SCORE = registry.Score("points", lower_is_better=False)
"""How a stored game the arena no longer knows is labelled (its scores are still shown)."""

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET
"""A field a page holds only sometimes: left out of its JSON, false in a template."""


def variants_of(game: str) -> tuple[str, ...]:
    """The game's variants, the default first, as its record lists them."""
    found = registry.find_game(game)
    return ("standard",) if found is None else found.variants


def score_of(game: str) -> registry.Score:
    """How the game scores (unit, direction, the per-round heading), from its record."""
    found = registry.find_game(game)
    return UNKNOWN_SCORE if found is None else found.score


def game_title(game: str) -> str:
    """The game as its record titles it (``GameRecord.title``), for headings; its name when the
    arena no longer knows it."""
    found = registry.find_game(game)
    return game if found is None else found.title


class BoardIdFields(TypedDict):
    """A board's game and variant, its key and its label: the fields of ``BoardId``."""

    game: str
    variant: str
    key: str
    label: str


def board_id(game: str, variant: str) -> BoardIdFields:
    """A board's game and variant, its key (``GAME/VARIANT``) and its label in words."""
    key = f"{game}/{variant}"
    return {"game": game, "variant": variant, "key": key, "label": board_label(key)}


class BoardId(msgspec.Struct, kw_only=True):
    """Which board: a game and rule set (``board_id``), what the JSON calls a kind."""

    game: str
    variant: str
    key: str
    label: str


class BoardAnchor(msgspec.Struct):
    """The bot an anchored board fixes, at its Elo."""

    bot: str | None
    elo: float


class Board(BoardId, kw_only=True):
    """One leaderboard as served: its rows (``arena.boards.standings.Row``), how they are drawn
    and whether they lag behind the newest game."""

    tournament: str | None
    rows: list[dict[str, Any]]
    stamp: int
    stale: bool
    scale: list[float]
    """The Elo range its error bars are drawn on (``interval_range``)."""
    anchor: BoardAnchor | None
    caveats: list[dict[str, Any]]
    """``rating_caveats.board_caveats``, and a ladder's retired versions."""
    unanchored: str | Unset = UNSET
    """Why the anchor asked for does not apply to this board (only then)."""
    head_to_head: dict[str, Any] | Unset = UNSET
    """Its head-to-head matrix, on the pages that show it."""
    ladder: str | Unset = UNSET
    """The ladder it is the board of, on the leaderboard page's ladder section."""


def interval_range(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """The Elo range every error bar of a board is drawn on, padded, never empty: the
    Elos and the ends of the intervals (of a one-sided one, its bound)."""
    values = [
        v
        for r in rows
        for v in (r["elo"], None if r.get("bound") == "<" else r["low"], None if r.get("bound") == ">" else r["high"])
        if v is not None and math.isfinite(v)
    ]
    if not values:
        return 1400.0, 1600.0
    low, high = min(values), max(values)
    open_ended = any(r.get("bound") for r in rows)  # room beyond the points for an open bar's arrow
    pad = max((high - low) * (0.15 if open_ended else 0.05), 10.0)
    return math.floor(low - pad), math.ceil(high + pad)


def listed(game: StoredGame) -> dict[str, Any]:
    """A game as a list shows it: without its seed, which would give away its deal's hands
    while the deal's other rotations may still be played (the game's page shows it once
    they are all played: ``GamePages.game``)."""
    data: dict[str, Any] = msgspec.to_builtins(game)
    data.pop("seed", None)
    return data


def deal_still_played(store: Store, game: StoredGame, group: int) -> WebError | None:
    """A game whose deal has rotations still to be played (its tournament has not
    finished): its seed, replay and frames would tell a spectator every hand of those
    games, so they wait until all are played. A game with a person is its deal's only game."""
    if group >= len(game.seats):
        return None
    tournament = store.get_tournament(game.tournament)
    if tournament is None or tournament.status == "finished" or PEOPLE in tournament.config:
        return None
    return WebError(
        404,
        f"game {game.id}'s deal is still being played in other seat rotations ({group} of {len(game.seats)}"
        " played): its replay is shown once every rotation has been played",
    )


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(r) for r in rows]


class ServerHealth(msgspec.Struct, kw_only=True):
    """``/api/health``: whether the database can be read, and how many games it holds."""

    status: str = "ok"
    database: str
    ready: bool
    games: int | Unset = UNSET
    last_game: int | Unset = UNSET
    message: str | Unset = UNSET
    """Why it cannot be read (only then)."""
    warm: bool | Unset = UNSET
    """Every leaderboard has a value to serve at once (the server's warm-up is done)."""


class Site:
    """The database of one site and what its page groups share: caches, board stamps and
    the boards as served."""

    def __init__(self, db_path: Path, background: bool = True) -> None:
        self.db = Database(db_path)
        self.cache = Revalidating(self.db, background)
        self.frame_cache: Lru[bytes] = Lru(64)
        self.anchored: Lru[list[dict[str, Any]]] = Lru(ANCHORED_BOARDS)
        self._planned: dict[int, int | None] = {}
        self._planned_lock = threading.Lock()
        self._board_stamps: BoardStamps | None = None
        self._stamps_lock = threading.Lock()
        self._tallies: Tallies | None = None

    def cached(self, store: Store, key: Hashable, stamp: int, compute: Callable[[Store], Any]) -> Cached[Any]:
        """``compute``'s value for ``key`` at ``stamp`` (``Revalidating.get``)."""
        return self.cache.get(key, stamp, compute, store)

    def board_stamps(self, store: Store) -> BoardStamps:
        """Each board's newest game and games, as the database holds them now: advanced by
        the games new since the last call (``board_stamps``), so cheap enough for every request.

        One thread at a time reads and advances them, so the readings only move forward and
        fewer games than known means games went away; a request arriving while another
        advances them takes the stamps known (a moment behind at most), never waits."""
        if not self._stamps_lock.acquire(blocking=self._board_stamps is None):
            return self._board_stamps or self.board_stamps(store)
        try:
            return self._advance_stamps(store)
        finally:
            self._stamps_lock.release()

    def _advance_stamps(self, store: Store) -> BoardStamps:
        with store.snapshot():  # one state of the database: the counts read one after another agree
            last, games = store.last_game_id(), store.count_games()
            known = self._board_stamps
            after = read_after(known, last, games)
            if after is None and known is not None:
                return known
            found = merged(known if after else None, store.newest_of_boards(after or 0))
            counts = store.games_per_tournament(after or 0), store.bot_game_counts(after or 0)
            went_away = known is not None and not after
            if after and not agrees(found, last, games):  # games went away meanwhile
                found = merged(None, store.newest_of_boards())
                counts = store.games_per_tournament(), store.bot_game_counts()
                went_away = True
            self._tallies = tallied(self._tallies if after and not went_away else None, *counts)
        if went_away:  # a board's newest game may still be there, its deleted games not
            self.cache.forget()
            self.anchored.clear()
            with self._planned_lock:  # a deleted tournament's id may be given again
                self._planned.clear()
        self._board_stamps = found
        return found

    def tallies(self, store: Store) -> Tallies:
        """Games per tournament and per bot, as the database holds them now (``board_stamps``)."""
        self.board_stamps(store)
        assert self._tallies is not None
        return self._tallies

    def recent_games(self, store: Store, tournament_id: int, games: int) -> list[StoredGame]:
        """The tournament's ``RECENT`` newest games, read again when it has ``games`` more:
        reading them walks the games from the newest, past every later tournament's."""
        key = ("recent", tournament_id)
        entry = self.cache.peek(key)
        if entry is not None and entry.stamp == games:
            return list(entry.value)
        found = store.find_games(tournament_id=tournament_id, limit=RECENT, newest_first=True)
        self.cache.put(key, games, found)
        return found

    def games_of(self, store: Store, tournament_id: int) -> int:
        """The tournament's games, as the database holds them now: no count of its games."""
        return self.tallies(store).tournaments.get(tournament_id, 0)

    def board(
        self,
        store: Store,
        stamp: int,
        game: str,
        variant: str,
        tournament: str | None = None,
        through: int | None = None,
        anchor: Anchor | None = None,
        through_game: int | None = None,
    ) -> Board:
        """One leaderboard as served: its rows, and whether they lag behind the newest game.

        ``stamp`` is the newest game id of its board (``board_stamps``), or for one
        tournament's board its number of games: games of other boards or tournaments never
        make it stale. With ``anchor``, that bot has that Elo (``AnchorError`` when it is
        not on the board); anchored boards are computed on request and a few are kept."""
        if anchor is not None:
            remembered = (game, variant, tournament, through, anchor, stamp)
            rows = self.anchored.get(remembered)
            if rows is None:
                rows = _rows(leaderboard(store, game, variant, tournament, through, anchor))
                self.anchored.put(remembered, rows)
            low, high = interval_range(rows)
            fixed = find_anchor([r["bot"] for r in rows], anchor[0])
            return Board(
                **board_id(game, variant),
                tournament=tournament,
                rows=rows,
                stamp=stamp,
                stale=False,
                scale=[low, high],
                anchor=BoardAnchor(fixed, anchor[1]),
                caveats=board_caveats(rows),
            )
        key = ("board", game, variant, tournament, through) + (() if through_game is None else (through_game,))
        scope = (game, variant, tournament, through)
        if through_game is None:
            self._seed(store, key, board_scope(*scope), scope, stamp, lambda text: _rows(decode_rows(text)))

        def compute(s: Store) -> list[dict[str, Any]]:
            return _rows(leaderboard(s, game, variant, tournament, through, None, through_game))

        cached = self.cached(store, key, stamp, compute)
        low, high = interval_range(cached.value)
        return Board(
            **board_id(game, variant),
            tournament=tournament,
            rows=cached.value,
            stamp=cached.stamp,
            stale=cached.stale,
            scale=[low, high],
            anchor=None,
            caveats=board_caveats(cached.value),
        )

    def board_if_ready(
        self,
        store: Store,
        stamp: int,
        game: str,
        variant: str,
        games: int,
        through: int | None = None,
        through_game: int | None = None,
    ) -> Board | None:
        """The board as it stood after tournament ``through`` or game ``through_game``, as
        ``board`` serves it, once it has a value (one cached in the database, or computed
        here); a board never computed of more than ``ON_THE_SPOT`` games (``games``, at
        most) is None meanwhile, computed in the background (``Revalidating.later``): the
        bot page of a ladder's bot after a restart has a dozen of them, minutes of work
        on a busy machine, and shows the points it has."""
        key = ("board", game, variant, None, through) + (() if through_game is None else (through_game,))
        if through_game is None:
            scope = (game, variant, None, through)
            self._seed(store, key, board_scope(*scope), scope, stamp, lambda text: _rows(decode_rows(text)))
        if games > ON_THE_SPOT and self.cache.peek(key) is None:
            self.cache.later(
                key, stamp, lambda s: _rows(leaderboard(s, game, variant, None, through, None, through_game))
            )
            return None
        return self.board(store, stamp, game, variant, None, through, None, through_game)

    def _seed(
        self,
        store: Store,
        key: Hashable,
        stored_as: str,
        scope: tuple[str, str, str | None, int | None],
        stamp: int,
        decode: Callable[[str], Any],
    ) -> None:
        """Before computing ``key`` the first time, take what an arena command cached in the
        database under ``stored_as`` (a tournament's run caches its boards as it ends): as
        current when no game of its ``scope`` (game, variant, tournament, through) is newer,
        else marked stale while the current one is computed. So a restarted server answers
        at once."""
        if self.cache.peek(key) is not None:
            return
        stored = store.latest_cached_board(stored_as)
        if stored is not None:
            current = store.newest_in_scope(*scope) <= stored[0]
            self.cache.put(key, stamp if current else STALE, decode(stored[1]))

    def played_boards(self, store: Store, tournament: str | None = None, games: int = 0) -> list[tuple[str, str]]:
        """The boards with stored games (of ``tournament``, which has ``games`` games)."""
        if tournament is None:
            return self.board_stamps(store).played_boards()
        return list(self.cached(store, ("kinds", tournament), games, lambda s: s.played_boards(tournament)).value)

    def head_to_head(self, store: Store, stamp: int, board: Board) -> dict[str, Any]:
        """The board's head-to-head matrix (``leaderboard.headtohead.matrix``), bots in its
        rank order. Tallied once per ``stamp`` (as the board is); ordering it costs nothing."""
        game, variant, tournament = board.game, board.variant, board.tournament
        key = ("head to head", game, variant, tournament)
        stored_as = head_to_head_scope(game, variant, tournament)
        self._seed(store, key, stored_as, (game, variant, tournament, None), stamp, decode_tally)
        cached = self.cached(store, key, stamp, lambda s: head_to_head(s, game, variant, tournament))
        return matrix(cached.value, [r["bot"] for r in board.rows])

    def planned(self, tournament: Tournament) -> int | None:
        """Games the tournament's schedule holds (None for a tournament without a schedule)."""
        with self._planned_lock:
            if tournament.id in self._planned:
                return self._planned[tournament.id]
        try:
            total: int | None = sum(len(m.games) for m in schedule_of(tournament))
        except (msgspec.ValidationError, ValueError, TypeError):
            total = None
        with self._planned_lock:
            self._planned[tournament.id] = total
        return total

    def health(self) -> ServerHealth:
        """``/api/health``: answered even when the database cannot be read."""
        try:
            with self.db.store() as store:
                return ServerHealth(
                    database=str(self.db.path), ready=True, games=store.count_games(), last_game=store.last_game_id()
                )
        except Unavailable as exc:
            return ServerHealth(database=str(self.db.path), ready=False, message=str(exc))
