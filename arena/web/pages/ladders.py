"""The ladder's public pages: its live board, its recent games and what waits in the
pipeline (``/ladder``, ``/api/ladder``), and its board on the leaderboard page.

A ladder is a tournament row whose config holds ``"ladder"`` (``arena ladder run``
makes it), so its board, games and health are a tournament's. Its bots are the active
submissions; a version a newer one replaced keeps its row, marked retired. What waits
is shown by name, version, author, state and time: never a submission's archive, its
report or its stderr.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import msgspec

from arena.store import Store, Tournament
from arena.store.submissions import RETIRED, WAITING, Submission, Submissions
from arena.tournaments.plan import deals_of
from arena.web.errors import Unavailable, WebError
from arena.web.pages.site import Board, BoardId, Site, board_id, listed
from arena.web.pages.tournaments import TournamentHealth, health_of, seconds_since


class ActiveBot(msgspec.Struct, kw_only=True):
    """A bot the ladder seats: the active version of a submission."""

    bot: str
    author: str
    since: str


class WaitingRow(msgspec.Struct, kw_only=True):
    """A submission waiting in the pipeline, as anyone may see it (``waiting_row``)."""

    bot: str
    name: str
    version: str
    author: str
    state: str
    received: str
    since: str
    waiting_s: float | None


class LadderPage(BoardId, kw_only=True):
    """``/ladder[/NAME]``: the ladder's health, board, recent games, active bots and what
    waits; the same fields as a tournament's page where they agree."""

    name: str
    ladder: dict[str, Any]
    """Its config (``arena ladder run``'s options)."""
    deals: dict[str, Any]
    ladders: list[str]
    status: str
    created: str
    finished: str | None
    games_done: int
    games_planned: None
    """A ladder plays without end."""
    health: TournamentHealth
    standings: Board
    games: list[dict[str, Any]]
    active: list[ActiveBot]
    waiting: list[WaitingRow]
    live: list[dict[str, Any]] = []
    """Its games being played now (``arena.web.live``), set by the app."""


def is_ladder(t: Tournament) -> bool:
    return "ladder" in t.config


def retired_caveat(rows: list[dict[str, Any]], retired: set[str]) -> dict[str, Any] | None:
    """The callout and marks for the rows of retired versions (a newer one replaced
    them): their games still count, they play no more. None when there is none."""
    bots = [r["bot"] for r in rows if r["bot"] in retired]
    if not bots:
        return None
    who = bots[0] if len(bots) == 1 else ", ".join(bots[:-1]) + " and " + bots[-1]
    return {
        "kind": "retired",
        "title": "Retired versions",
        "text": f"{who} no longer play{'s' if len(bots) == 1 else ''} on the ladder (a newer version, or none,"
        " is active): their games and ratings stay.",
        "short": "retired",
        "bots": bots,
    }


def waiting_row(s: Submission, now: float) -> WaitingRow:
    """A submission waiting in the pipeline as anyone may see it: who and where, never
    its archive, report or stderr."""
    return WaitingRow(
        bot=s.ref,
        name=s.name,
        version=s.version,
        author=s.author,
        state=s.state,
        received=s.received,
        since=s.updated,
        waiting_s=seconds_since(s.received, now),
    )


def pick(ladders: list[Tournament], name: str | None) -> Tournament:
    """The ladder ``name``; without a name the one called ``ladder``, else the newest."""
    if name is None:
        if not ladders:
            raise WebError(404, "no ladder yet: `arena ladder run` starts one (docs/submissions.md)")
        return next((t for t in ladders if t.name == "ladder"), ladders[-1])
    found = next((t for t in ladders if t.name == name), None)
    if found is None:
        known = ", ".join(t.name for t in ladders) or "none yet"
        raise WebError(404, f"no ladder {name!r} (ladders: {known})")
    return found


class Ladders:
    """The ladder pages over a site's database."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self._names: tuple[tuple[str, ...], list[str]] = ((), [])
        self._lock = threading.Lock()

    def names(self, store: Store | None = None) -> list[str]:
        """The ladders' names (for the site header): read again only when the tournaments
        change, so every page may ask."""
        if store is None:
            try:
                with self.site.db.store() as opened:
                    return self.names(opened)
            except Unavailable:
                return []
        every = tuple(store.tournament_names())
        with self._lock:
            if every == self._names[0]:
                return self._names[1]
        found = [t.name for t in store.list_tournaments() if is_ladder(t)]
        with self._lock:
            self._names = (every, found)
        return found

    def board(self, store: Store, t: Tournament, retired: set[str]) -> Board:
        """The ladder's board (its tournament's), retired versions marked."""
        board = self.site.board(store, self.site.games_of(store, t.id), t.game, t.variant, t.name)
        caveat = retired_caveat(board.rows, retired)
        if caveat:
            board.caveats = [*board.caveats, caveat]
        return board

    def page(self, name: str | None) -> LadderPage:
        """``/ladder[/NAME]``: the ladder's health, board, recent games, active bots and
        the submissions waiting; the same fields as a tournament's page where they agree,
        so the page polls its JSON twin as the tournament page does."""
        with self.site.db.store() as store:
            ladders = [t for t in store.list_tournaments() if is_ladder(t)]
            t = pick(ladders, name)
            done = self.site.games_of(store, t.id)
            recent = self.site.recent_games(store, t.id, done)
            health = health_of(t, t.id in store.lease_holders(), recent, self.site.db.path)
            submissions = Submissions(store)
            bots = {b.id: b for b in store.list_bots()}
            active = [
                s for s in submissions.active() if s.bot_id in bots and t.game in bots[s.bot_id].games
            ]  # what the ladder seats: the active version of each bot that plays its game
            retired = {s.ref for s in submissions.in_states(RETIRED)}
            now = time.time()
            return LadderPage(
                **board_id(t.game, t.variant),
                name=t.name,
                ladder=t.config["ladder"],
                deals=deals_of(t)[0],
                ladders=[x.name for x in ladders],
                status=t.status,
                created=t.created,
                finished=t.finished,
                games_done=done,
                games_planned=None,
                health=health,
                standings=self.board(store, t, retired),
                games=[listed(g) for g in recent],
                active=[ActiveBot(bot=s.ref, author=s.author, since=s.updated) for s in active],
                waiting=[waiting_row(s, now) for s in submissions.in_states(*WAITING)],
            )

    def boards(self, game: str | None) -> list[Board]:
        """Every ladder's board (of ``game``), for the leaderboard page's section of its own."""
        with self.site.db.store() as store:
            ladders = [t for t in store.list_tournaments() if is_ladder(t) and game in (None, t.game)]
            if not ladders:
                return []
            retired = {s.ref for s in Submissions(store).in_states(RETIRED)}
            return [msgspec.structs.replace(self.board(store, t, retired), ladder=t.name) for t in ladders]
