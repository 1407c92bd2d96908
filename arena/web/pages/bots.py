"""The bots' pages: the list (``/bots``) and a bot's page (``/bots/NAME[:VERSION]``: where
it stands, its rating over time, its opponents, its time per move and its faults), each
with its JSON twin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgspec

from arena.boards.timing import stored_times, summary
from arena.store import Store, StoredBot, StoreError
from arena.web.charts import errorbar
from arena.web.database import FINAL
from arena.web.errors import WebError
from arena.web.fault_record import FAULT_SCAN, grouped_faults
from arena.web.pages.site import UNSET, Board, BoardId, Site, Unset, board_id, listed

BOT_RECENT = 5
"""Games shown on a bot's page (it links to all of them): with its chart, opponents and
fault record it stays under 2,000 px on a desktop."""
FAULT_GROUPS = 10
"""Groups of repeated faults a page of a bot's fault record shows."""
TIMES_GAMES = 200
"""The newest games of a bot whose replays its time per move is read from."""
LADDER_MOMENTS = 11
"""At most this many points of a bot's rating within a ladder before its current one."""
LADDER_STEPS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)


class BotSummary(msgspec.Struct, kw_only=True):
    """A bot as the bots list shows it."""

    bot: str
    """``name:version``."""
    name: str
    version: str
    language: str
    games_listed: list[str]
    """The games its manifest says it plays."""
    hash: str
    added: str
    games: int
    """Games it played."""


class BotsPage(msgspec.Struct, kw_only=True):
    """``/bots``: every stored bot."""

    bots: list[BotSummary]


class Standing(msgspec.Struct, kw_only=True):
    """Where a bot stands on one board (``standing_of``)."""

    label: str
    href: str
    rating: str
    """As the board's Elo column shows it (a bound such as ``> 1454``)."""
    interval: str
    """Its 95% interval, empty without one."""
    bound: str
    rank: int
    of: int
    """The bots it can be ranked with: its component's."""
    games: int
    note: str
    stale: bool


class RatingHistory(BoardId, kw_only=True):
    """A bot's Elo on one board after each tournament it played there (``rating_history``)."""

    points: list[dict[str, Any]]
    stale: bool


class Opponent(msgspec.Struct, kw_only=True):
    """A bot's record against one opponent: games together, finishing ahead, behind, tied."""

    bot: str
    games: int
    ahead: int
    behind: int
    tied: int
    ahead_share: float
    """Ahead, a tie counting half."""


class FaultPaging(msgspec.Struct, kw_only=True):
    """Where the page of the fault groups shown is among them."""

    page: int
    pages: int
    groups: int
    per_page: int
    faults: int
    games_scanned: int


class BotPage(BotSummary, kw_only=True):
    """``/bots/NAME[:VERSION]``: the bot's record."""

    updating: list[str]
    """The parts being recomputed: ``opponents``, ``faults``, ``ratings``."""
    faults: dict[str, int]
    ratings: list[RatingHistory]
    standing: list[Standing]
    opponents: list[Opponent]
    recent_games: list[dict[str, Any]]
    fault_record: list[dict[str, Any]]
    fault_groups: list[dict[str, Any]]
    fault_paging: FaultPaging
    times: dict[str, Any]
    """Its time per move over its newest games (``bot_times``)."""
    stderr_withheld: str | Unset = UNSET
    """Why its stderr is not shown (``privacy.bot_page``: a submitted bot, to anyone but its author)."""


def games_in(bot_id: int, tournament_id: int) -> Callable[[Store], list[tuple[int, str]]]:
    """Reads the bot's games in one tournament (``Store.bot_games_in``), when called."""
    return lambda store: store.bot_games_in(bot_id, tournament_id)


def ladder_moments(games: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The moments of a bot's rating over time in a ladder: after every ``step``-th of its
    ``games`` (id, started; oldest first), the step the smallest of ``LADDER_STEPS`` that
    gives at most ``LADDER_MOMENTS``. Fixed moments: the board at each never changes, so
    each is computed once, and one more game adds at most one."""
    step = next((n for n in LADDER_STEPS if len(games) // n <= LADDER_MOMENTS), len(games) or 1)
    return [games[n - 1] for n in range(step, len(games), step)]


def standing_of(board: Board, ref: str, label: str, href: str) -> Standing | None:
    """The bot ``ref`` on one served board: ``rating`` as the board's Elo column shows it
    (a bound such as ``> 1454`` for a bot that won every comparison), ``interval`` (its
    95% interval, empty without one), ``rank`` of ``of`` (the bots it can be ranked
    with: its component's); None when it is not on the board."""
    row = next((r for r in board.rows if r["bot"] == ref), None)
    if row is None:
        return None
    bar = errorbar(row, board.scale)
    elo = row["elo"]
    rating = bar["text"] if row.get("bound") else f"{elo:.0f}" if elo is not None and math.isfinite(elo) else "—"
    return Standing(
        label=label,
        href=href,
        rating=rating,
        interval=bar["text"] if bar["kind"] == "two" else "",
        bound=row.get("bound", ""),
        rank=row["rank"],
        of=sum(1 for r in board.rows if r.get("component", 0) == row.get("component", 0)),
        games=row["games"],
        note=row.get("note", ""),
        stale=board.stale,
    )


def bot_times(store: Store, bot_id: int, ref: str, games: int = TIMES_GAMES) -> dict[str, Any]:
    """The bot's time per move over its newest ``games`` games (``timing.summary``),
    their replays read one at a time; a replay that cannot be read is counted, not used."""
    found = store.find_games(bot_id=bot_id, limit=games, newest_first=True)
    seats, unreadable = stored_times(store, found, ref)
    return {**summary(seats), "games_read": len(found), "unreadable": unreadable, "games_limit": games}


def _summary_fields(b: StoredBot, games: int) -> dict[str, Any]:
    return {
        "bot": b.ref,
        "name": b.name,
        "version": b.version,
        "language": b.language,
        "games_listed": b.games,
        "hash": b.hash,
        "added": b.added,
        "games": games,
    }


class BotPages:
    """The bots' pages over a site."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def bots(self) -> BotsPage:
        with self.site.db.store() as store:
            counts = self.site.tallies(store).bots  # as the database holds it, kept without counting
            return BotsPage(bots=[BotSummary(**_summary_fields(b, counts.get(b.id, 0))) for b in store.list_bots()])

    def bot(self, ref: str, faults_page: int = 1) -> BotPage:
        site = self.site
        with site.db.store() as store:
            try:
                bot = store.get_bot(ref)
            except StoreError:
                raise WebError(404, f"no bot {ref!r} (the bots page lists them)") from None
            stamp = site.tallies(store).bots.get(bot.id, 0)  # what is the bot's changes with its games only
            faults = store.fault_totals(None, None, None).get(bot.id, (0, 0, 0, 0))
            opponents_cached = site.cached(store, ("opponents", bot.id), stamp, lambda s: s.opponents(bot.id))
            faults_cached = site.cached(store, ("faults", bot.id), stamp, lambda s: grouped_faults(s, bot.id))
            opponents, (evidence, groups) = opponents_cached.value, faults_cached.value
            ratings = self.rating_history(store, stamp, bot.id, bot.ref)
            updating = [name for name, c in (("opponents", opponents_cached), ("faults", faults_cached)) if c.stale]
            updating += ["ratings"] if any(r.stale for r in ratings) else []
            pages = max(1, math.ceil(len(groups) / FAULT_GROUPS))
            faults_page = min(faults_page, pages)  # past the end: the last page
            return BotPage(
                **_summary_fields(bot, stamp),
                updating=updating,
                faults=dict(zip(("timeout", "crash", "malformed", "illegal"), faults, strict=True)),
                ratings=ratings,
                standing=self.stands(store, bot.id, bot.ref),
                opponents=[
                    Opponent(
                        bot=o,
                        games=n,
                        ahead=ahead,
                        behind=behind,
                        tied=tied,
                        ahead_share=round((ahead + tied / 2) / max(ahead + behind + tied, 1), 3),
                    )
                    for o, n, ahead, behind, tied in opponents
                ],
                recent_games=[listed(g) for g in store.find_games(bot_id=bot.id, limit=BOT_RECENT, newest_first=True)],
                fault_record=evidence,
                fault_groups=groups[(faults_page - 1) * FAULT_GROUPS : faults_page * FAULT_GROUPS],
                fault_paging=FaultPaging(
                    page=faults_page,
                    pages=pages,
                    groups=len(groups),
                    per_page=FAULT_GROUPS,
                    faults=sum(g["count"] for g in groups),
                    games_scanned=FAULT_SCAN,
                ),
                times=site.cached(store, ("times", bot.id), stamp, lambda s: bot_times(s, bot.id, bot.ref)).value,
            )

    def standing(self, ref: str) -> list[Standing]:
        """Where the bot ``ref`` stands now (``stands``); nothing for a bot not stored."""
        with self.site.db.store() as store:
            try:
                bot = store.get_bot(ref)
            except StoreError:
                return []
            return self.stands(store, bot.id, bot.ref)

    def stands(self, store: Store, bot_id: int, ref: str) -> list[Standing]:
        """Where the bot stands now on each board it plays on: its game and rule set's
        (every game of them) and each ladder's it plays in; its rating as the board
        shows it (``standing_of``) and its rank among the bots there. The same cached
        boards as the leaderboard's, so the two always agree."""
        stamps = self.site.board_stamps(store)
        games = self.site.tallies(store).bots.get(bot_id, 0)
        played = self.site.cached(store, ("bot tournaments", bot_id), games, lambda s: s.bot_tournaments(bot_id)).value
        tournaments = {t.id: t for t in store.list_tournaments()}
        found = []
        for game, variant in dict.fromkeys((g, v) for _, g, v in played):
            board = self.site.board(store, stamps.of((game, variant)), game, variant)
            found.append(standing_of(board, ref, board.label, "/leaderboard?board=" + board.key))
        for tournament_id in dict.fromkeys(t for t, _, _ in played):
            t = tournaments.get(tournament_id)
            if t is not None and "ladder" in t.config:
                board = self.site.board(store, self.site.games_of(store, t.id), t.game, t.variant, t.name)
                found.append(standing_of(board, ref, f"the ladder {t.name}", f"/ladder/{t.name}"))
        return [entry for entry in found if entry is not None]

    def rating_history(self, store: Store, stamp: int, bot_id: int, ref: str) -> list[RatingHistory]:
        """Per game and variant the bot played: its Elo (with interval, rank) on the board of
        every game of that kind up to and including each tournament it played in; ``stale``
        while one of those boards is being recomputed. ``stamp``: the bot's games."""
        site = self.site
        tournaments = {t.id: t for t in store.list_tournaments()}
        stamps = site.board_stamps(store)
        counts = site.tallies(store).tournaments
        played = site.cached(store, ("bot tournaments", bot_id), stamp, lambda s: s.bot_tournaments(bot_id)).value
        by_kind: dict[tuple[str, str], list[int]] = {}
        for tournament_id, game, variant in played:
            by_kind.setdefault((game, variant), []).append(tournament_id)
        history = []
        for (game, variant), ids in by_kind.items():
            same_kind = sorted(t.id for t in tournaments.values() if (t.game, t.variant) == (game, variant))
            points, stale = [], False
            newest = stamps.of((game, variant))
            moments: list[tuple[int, int | None, str]] = []  # (tournament, through game, when)
            for tournament_id in ids:
                t = tournaments.get(tournament_id)
                if t is not None and "ladder" in t.config:  # it never ends: its moments, not one point
                    marks = site.cached(
                        store, ("ladder moments", bot_id, tournament_id), stamp, games_in(bot_id, tournament_id)
                    ).value
                    moments += [(tournament_id, game_id, when) for game_id, when in ladder_moments(marks)]
                moments.append((tournament_id, None, ""))
            for tournament_id, through_game, when in moments:
                whole = same_kind and tournament_id >= same_kind[-1]
                ready: Board | None
                if through_game is not None:  # as it stood at one of its games: that never changes
                    ready = site.board_if_ready(store, FINAL, game, variant, through_game, None, through_game)
                elif whole:  # the whole board: shared with the leaderboard
                    ready = site.board(store, newest, game, variant)
                else:
                    settled = all(tournaments[i].status == "finished" for i in same_kind if i <= tournament_id)
                    games = sum(n for i, n in counts.items() if i <= tournament_id)  # of every kind: at most
                    ready = site.board_if_ready(
                        store, FINAL if settled else newest, game, variant, games, tournament_id
                    )
                if ready is None:  # being computed: the point comes with a later visit
                    stale = True
                    continue
                board = ready
                stale = stale or board.stale
                row = next((r for r in board.rows if r["bot"] == ref), None)
                if row is None:
                    continue
                t = tournaments.get(tournament_id)
                name = t.name if t else str(tournament_id)
                if t is not None and "ladder" in t.config:
                    name = f"{name} {when[:16].replace('T', ' ')}" if when else f"{name}, latest"
                points.append(
                    {
                        "tournament": name,
                        "status": t.status if t else "",
                        "elo": row["elo"],
                        "low": row["low"],
                        "high": row["high"],
                        "rank": row["rank"],
                        "of": sum(1 for r in board.rows if r.get("component", 0) == row.get("component", 0)),
                        "games": row["games"],
                        "groups": row.get("groups", 0),
                        "bound": row.get("bound", ""),
                        "component": row.get("component", 0),
                        "note": row.get("note", ""),
                    }
                )
            history.append(RatingHistory(**board_id(game, variant), points=points, stale=stale))
        return history
