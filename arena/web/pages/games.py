"""The games' pages: the list with its filters and pages (``/games``), a game's page
(``/games/ID``: its seats, times and the viewer's frames), its deal in every rotation
(``/games/ID/duplicate``) and the stored replay, each with its JSON twin.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from arena.boards.timing import game_times, seat_times
from arena.play import replay as replay_files
from arena.store import ReplayPruned, StoredGame, StoreError, board_label
from arena.web import viewer
from arena.web.duplicate import deal_group
from arena.web.errors import WebError
from arena.web.games_query import GamesAsked, games_filter
from arena.web.pages.site import Site, deal_still_played, listed, score_of

GAMES_LIMIT = 500
"""The most games one request of ``/api/games`` returns."""


class GamesPage(msgspec.Struct, kw_only=True):
    """``/games``: a page of the games asked for, the filters as the list spells them."""

    tournament: str | None
    bot: str | None
    opponent: str | None
    board: str | None
    """``GAME/VARIANT`` as the store writes it."""
    faults: bool
    date_from: str | None = msgspec.field(name="from")
    date_to: str | None = msgspec.field(name="to")
    limit: int
    offset: int
    page: int
    pages: int
    order: str
    """``desc``: newest first; ``asc``."""
    total: int
    last_page: int
    """The offset of the last page."""
    games: list[dict[str, Any]]

    def link_values(self) -> dict[str, Any]:
        """Its filters, order and limit by the names its links spell them
        (``games_query.list_query``, ``games_query.filter_params``)."""
        return {
            "tournament": self.tournament,
            "bot": self.bot,
            "opponent": self.opponent,
            "board": self.board,
            "faults": self.faults,
            "from": self.date_from,
            "to": self.date_to,
            "order": self.order,
            "limit": self.limit,
        }


class GameChoices(msgspec.Struct, kw_only=True):
    """What the games page's filters offer."""

    tournaments: list[str]
    boards: list[str]
    bots: list[str]


class GamePage(StoredGame, frozen=True, kw_only=True):
    """``/games/ID``: the stored game and where its replay, frames and deal group are."""

    deal_games: int
    """The games of its deal (one per seat rotation played)."""
    duplicate_url: str
    download_url: str
    label: str
    lower_is_better: bool
    replay_url: str
    frames_url: str
    times: list[dict[str, Any]] | None
    """Each seat's time per move and bank (``timing.game_times``); None: the replay cannot be read."""


class DuplicatePage(msgspec.Struct, kw_only=True):
    """``/games/ID/duplicate``: the game's deal in every rotation (``duplicate.deal_group``)."""

    game_id: int
    game: str
    variant: str
    label: str
    tournament: str | None
    match_no: int | None
    deal: int | None
    seed: int | None
    hands: int
    rotations: int
    complete: bool
    lower_is_better: bool
    unit: str
    games: list[dict[str, Any]]
    hand_mean: list[float]
    bots: list[dict[str, Any]]
    insights: list[str]


def last_page(total: int, limit: int) -> int:
    """The offset of the last page of ``total`` games, ``limit`` a page (0 when there are none)."""
    return max(total - 1, 0) // limit * limit


def _no_game(game_id: int) -> WebError:
    return WebError(404, f"no game {game_id} (the games page lists them)")


class GamePages:
    """The games' pages over a site."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def games(self, asked: GamesAsked, limit: int, offset: int, newest_first: bool) -> GamesPage:
        """A page of the games ``asked`` for, each filter checked (404 for a bot or
        tournament not stored, 400 for a value that cannot be one)."""
        with self.site.db.store() as store:
            where = games_filter(store, asked)
            total = store.count_games_of(where=where)
            # Past the end: nothing to read (and no offset SQLite could not take).
            found = []
            if offset < total:
                found = store.find_games(limit=limit, offset=offset, newest_first=newest_first, where=where)
            return GamesPage(
                tournament=asked.tournament,
                bot=asked.bot,
                opponent=asked.opponent,
                board=None if where.game is None else f"{where.game}/{where.variant}",
                faults=asked.faults,
                date_from=asked.date_from,
                date_to=asked.date_to,
                limit=limit,
                offset=offset,
                page=offset // limit + 1,
                pages=max(total - 1, 0) // limit + 1,
                order="desc" if newest_first else "asc",
                total=total,
                last_page=last_page(total, limit),
                games=[listed(g) for g in found],
            )

    def game_choices(self) -> GameChoices:
        """What the games page's filters offer: the stored tournaments, their boards (read
        from the tournaments, not from every game) and the bots."""
        with self.site.db.store() as store:
            tournaments = store.list_tournaments()
            return GameChoices(
                tournaments=[t.name for t in tournaments],
                boards=sorted({f"{t.game}/{t.variant}" for t in tournaments}),
                bots=sorted(store.bot_names().values()),
            )

    def game(self, game_id: int) -> GamePage:
        with self.site.db.store() as store:
            found = store.game(game_id)
            group = len(store.deal_games(game_id))
            embargo = None if found is None else deal_still_played(store, found, group)
        if found is None:
            raise _no_game(game_id)
        if embargo:
            raise embargo
        return GamePage(
            **msgspec.structs.asdict(found),
            deal_games=group,
            duplicate_url=f"/games/{game_id}/duplicate",
            download_url=f"/api/games/{game_id}/replay?download=1",
            label=board_label(f"{found.game}/{found.variant}"),
            lower_is_better=score_of(found.game).lower_is_better,
            replay_url=f"/api/games/{game_id}/replay",
            frames_url=f"/api/games/{game_id}/frames",
            times=self.game_times(game_id),
        )

    def duplicate(self, game_id: int) -> DuplicatePage:
        """The game's deal in every rotation of the seats (``duplicate.deal_group``)."""
        with self.site.db.store() as store:
            games = store.deal_games(game_id)
            found = next((g for g in games if g.id == game_id), None)
            embargo = None if found is None else deal_still_played(store, found, len(games))
        if found is None:
            raise _no_game(game_id)
        if embargo:
            raise embargo
        score = score_of(found.game)
        return DuplicatePage(
            game_id=game_id,
            game=found.game,
            variant=found.variant,
            label=board_label(f"{found.game}/{found.variant}"),
            **deal_group(games, score.lower_is_better, score.unit),
        )

    def game_times(self, game_id: int) -> list[dict[str, Any]] | None:
        """Each seat's time per move and bank in the game (None: its replay cannot be read,
        and the page still shows the rest)."""
        try:
            return game_times(seat_times(replay_files.loads(self.replay(game_id), f"game {game_id}")))
        except (WebError, replay_files.ReplayError):
            return None

    def replay(self, game_id: int) -> bytes:
        """The replay as stored (the deal's other rotations all played)."""
        with self.site.db.store() as store:
            found = store.game(game_id)
            if found is not None and (embargo := deal_still_played(store, found, len(store.deal_games(game_id)))):
                raise embargo
            try:
                return store.replay(game_id)
            except ReplayPruned as exc:
                raise WebError(410, str(exc)) from None
            except StoreError:
                raise _no_game(game_id) from None
            except zlib.error as exc:
                raise WebError(500, f"the stored replay of game {game_id} is damaged ({exc})") from None

    def frames(self, game_id: int) -> bytes:
        """The viewer's frames of a game, as JSON (games never change: kept in an LRU)."""
        cached = self.site.frame_cache.get(game_id)
        if cached is not None:
            return cached
        data = self.replay(game_id)
        try:
            lines = replay_files.loads(data, f"game {game_id}")
            encoded = msgspec.json.encode(viewer.frames(lines))
        except replay_files.ReplayError as exc:  # unreadable, or the rules disagree with it
            raise WebError(500, f"the stored replay of game {game_id} cannot be replayed: {exc}") from None
        self.site.frame_cache.put(game_id, encoded)
        return encoded
