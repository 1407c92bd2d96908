"""What each page shows, as plain data: the JSON API returns it as is, the templates draw it.

Every function here runs in a worker thread (the endpoints are synchronous) and reads
through a read-only store; what costs more than a query is cached (``data.Revalidating``).
"""

from __future__ import annotations

import math
import re
import threading
import zlib
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from arena.games import registry as catalog
from arena.play import replay as replay_files
from arena.store import (
    GameFilter,
    ReplayPruned,
    Store,
    StoreError,
    Tournament,
    board_label,
    board_settings,
    board_variant,
)
from arena.tournaments.plan import deals_of
from arena.web.caveats import board_caveats
from arena.web.data import FINAL, STALE, Cached, Database, Lru, Revalidating, Unavailable, WebError
from arena.web.games_query import GamesAsked, split_board, started_range
from arena.web.stamps import KindStamps, agrees, merged, read_after

if TYPE_CHECKING:
    from arena.boards.standings import Anchor

GAMES_LIMIT = 500
"""The most games one request of ``/api/games`` returns."""
RECENT = 20
"""Games shown on a tournament's page."""
BOT_RECENT = 5
"""Games shown on a bot's page (it links to all of them): with its chart, opponents and
fault record it stays under 2,000 px on a desktop."""
FAULT_GAMES = 20
"""Faulty games whose evidence a bot's page shows (the newest)."""
FAULT_SCAN = 500
"""Faulty games (the newest) whose faults a bot's page groups: their count is bounded."""
FAULT_GROUPS = 10
"""Groups of repeated faults a page of a bot's fault record shows."""
TAIL_LINES = 12
"""Lines of a fault's stderr shown at once: the last ones, where the fault is."""
TAIL_CHARS = 1500
"""At most this much of them, unless a single line is longer."""


UNKNOWN_SCORE = catalog.Score("points", lower_is_better=False)
"""How a stored game the arena no longer knows is labelled (its scores are still shown)."""


def variants_of(game: str) -> tuple[str, ...]:
    """The game's variants, the default first, as its record lists them."""
    found = catalog.find_game(game)
    return ("standard",) if found is None else found.variants


def score_of(game: str) -> catalog.Score:
    """How the game scores (unit, direction, the per-round heading), from its record."""
    found = catalog.find_game(game)
    return UNKNOWN_SCORE if found is None else found.score


def check_kind(game: str | None, variant: str | None) -> str | None:
    """A board's ``variant`` as the store writes it (``standard,shedding``: its settings in
    any order), or 400 for a game, variant or setting the arena does not know."""
    known = catalog.games()
    if game is not None and game not in known:
        raise WebError(400, f"unknown game {game!r}: choose one of {', '.join(known)}")
    if variant is None:
        return None
    if game is None:
        raise WebError(400, f"variant={variant} needs a game= as well")
    try:
        return board_variant(game, board_settings(game, variant))
    except StoreError as exc:
        raise WebError(400, str(exc)) from None


def parse_anchor_param(text: str | None) -> Anchor | None:
    """``anchor=NAME[:VERSION]=ELO``, or 400 naming the expected form."""
    from arena.boards.standings import parse_anchor

    if text is None:
        return None
    try:
        return parse_anchor(text)
    except ValueError as exc:
        raise WebError(400, f"anchor={exc}") from None


def kind(game: str, variant: str) -> dict[str, str]:
    """A board's game and variant, its key and its label."""
    key = f"{game}/{variant}"
    return {"game": game, "variant": variant, "key": key, "label": board_label(key)}


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


LADDER_MOMENTS = 11
"""At most this many points of a bot's rating within a ladder before its current one."""
LADDER_STEPS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000)


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


def standing_of(board: dict[str, Any], ref: str, label: str, href: str) -> dict[str, Any] | None:
    """The bot ``ref`` on one served board: ``rating`` as the board's Elo column shows it
    (a bound such as ``> 1454`` for a bot that won every comparison), ``interval`` (its
    95% interval, empty without one), ``rank`` of ``of`` (the bots it can be ranked
    with: its component's); None when it is not on the board."""
    from arena.web.charts import errorbar

    row = next((r for r in board["rows"] if r["bot"] == ref), None)
    if row is None:
        return None
    bar = errorbar(row, board["scale"])
    elo = row["elo"]
    rating = bar["text"] if row.get("bound") else f"{elo:.0f}" if elo is not None and math.isfinite(elo) else "—"
    return {
        "label": label,
        "href": href,
        "rating": rating,
        "interval": bar["text"] if bar["kind"] == "two" else "",
        "bound": row.get("bound", ""),
        "rank": row["rank"],
        "of": sum(1 for r in board["rows"] if r.get("component", 0) == row.get("component", 0)),
        "games": row["games"],
        "note": row.get("note", ""),
        "stale": board["stale"],
    }


def listed(game: Any) -> dict[str, Any]:
    """A game as a list shows it: without its seed, which would give away its deal's hands
    while the deal's other rotations may still be played (the game's page shows it once
    they are all played: ``Site.game``)."""
    data: dict[str, Any] = msgspec.to_builtins(game)
    data.pop("seed", None)
    return data


def deal_still_played(store: Store, game: Any, group: int) -> WebError | None:
    """A game whose deal has rotations still to be played (its tournament has not
    finished): its seed, replay and frames would tell a spectator every hand of those
    games, so they wait until all are played."""
    if group >= len(game.seats):
        return None
    tournament = store.get_tournament(game.tournament)
    if tournament is None or tournament.status == "finished":
        return None
    return WebError(
        404,
        f"game {game.id}'s deal is still being played in other seat rotations ({group} of {len(game.seats)}"
        " played): its replay is shown once every rotation has been played",
    )


ANCHORED_BOARDS = 32
"""Anchored boards kept in memory (any anchor may be asked for: a few, least recent out)."""


class Site:
    """The pages over one database file."""

    def __init__(self, db_path: Path, background: bool = True) -> None:
        self.db = Database(db_path)
        self.cache = Revalidating(self.db, background)
        self.frame_cache: Lru[bytes] = Lru(64)
        self.anchored: Lru[list[dict[str, Any]]] = Lru(ANCHORED_BOARDS)
        self._planned: dict[int, int | None] = {}
        self._planned_lock = threading.Lock()
        self._kind_stamps: KindStamps | None = None

    # --- shared pieces ---------------------------------------------------------------

    def _cached(self, store: Store, key: Hashable, stamp: int, compute: Callable[[Store], Any]) -> Cached[Any]:
        return self.cache.get(key, stamp, compute, store)

    def kind_stamps(self, store: Store) -> KindStamps:
        """Each kind's newest game and games, as the database holds them now: advanced by
        the games new since the last call (``stamps``), so cheap enough for every request."""
        last, games = store.last_game_id(), store.count_games()
        known = self._kind_stamps
        after = read_after(known, last, games)
        if after is None and known is not None:
            return known
        found = merged(known if after else None, store.newest_of_kinds(after or 0))
        went_away = known is not None and not after
        if after and not agrees(found, last, games):  # games went away meanwhile
            found = merged(None, store.newest_of_kinds())
            went_away = True
        if went_away:  # a board's newest game may still be there, its deleted games not
            self.cache.forget()
            self.anchored.clear()
            with self._planned_lock:  # a deleted tournament's id may be given again
                self._planned.clear()
        self._kind_stamps = found
        return found

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
    ) -> dict[str, Any]:
        """One leaderboard as served: its rows, and whether they lag behind the newest game.

        ``stamp`` is the newest game id of its kind (``kind_stamps``), or for one
        tournament's board its number of games: games of other kinds or tournaments never
        make it stale. With ``anchor``, that
        bot has that Elo (``AnchorError`` when it is not on the board); anchored boards
        are computed on request and a few are kept."""
        from arena.boards.standings import board_scope, decode_rows, find_anchor, leaderboard

        if anchor is not None:
            remembered = (game, variant, tournament, through, anchor, stamp)
            rows = self.anchored.get(remembered)
            if rows is None:
                rows = [_builtins(r) for r in leaderboard(store, game, variant, tournament, through, anchor)]
                self.anchored.put(remembered, rows)
            low, high = interval_range(rows)
            fixed = find_anchor([r["bot"] for r in rows], anchor[0])
            return {
                **kind(game, variant),
                "tournament": tournament,
                "rows": rows,
                "stamp": stamp,
                "stale": False,
                "scale": [low, high],
                "anchor": {"bot": fixed, "elo": anchor[1]},
                "caveats": board_caveats(rows),
            }
        key = ("board", game, variant, tournament, through) + (() if through_game is None else (through_game,))
        scope = (game, variant, tournament, through)
        if through_game is None:
            self._seed(
                store, key, board_scope(*scope), scope, stamp, lambda text: [_builtins(r) for r in decode_rows(text)]
            )

        def compute(s: Store) -> list[dict[str, Any]]:
            return [_builtins(r) for r in leaderboard(s, game, variant, tournament, through, None, through_game)]

        cached = self._cached(store, key, stamp, compute)
        low, high = interval_range(cached.value)
        return {
            **kind(game, variant),
            "tournament": tournament,
            "rows": cached.value,
            "stamp": cached.stamp,
            "stale": cached.stale,
            "scale": [low, high],
            "anchor": None,
            "caveats": board_caveats(cached.value),
        }

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

    def kinds(self, store: Store, tournament: str | None = None, games: int = 0) -> list[tuple[str, str]]:
        """The kinds with stored games (of ``tournament``, which has ``games`` games)."""
        if tournament is None:
            return self.kind_stamps(store).kinds()
        return list(self._cached(store, ("kinds", tournament), games, lambda s: s.kinds(tournament)).value)

    def head_to_head(self, store: Store, stamp: int, board: dict[str, Any]) -> dict[str, Any]:
        """The board's head-to-head matrix (``leaderboard.headtohead.matrix``), bots in its
        rank order. Tallied once per ``stamp`` (as the board is); ordering it costs nothing."""
        from arena.boards.standings import decode_tally, head_to_head, head_to_head_scope
        from leaderboard.headtohead import matrix

        game, variant, tournament = board["game"], board["variant"], board["tournament"]
        key = ("head to head", game, variant, tournament)
        stored_as = head_to_head_scope(game, variant, tournament)
        self._seed(store, key, stored_as, (game, variant, tournament, None), stamp, decode_tally)
        cached = self._cached(store, key, stamp, lambda s: head_to_head(s, game, variant, tournament))
        return matrix(cached.value, [r["bot"] for r in board["rows"]])

    def planned(self, tournament: Tournament) -> int | None:
        """Games the tournament's schedule holds (None for a tournament without a schedule)."""
        with self._planned_lock:
            if tournament.id in self._planned:
                return self._planned[tournament.id]
        from arena.tournaments.plan import schedule_of

        try:
            total: int | None = sum(len(m.games) for m in schedule_of(tournament))
        except (msgspec.ValidationError, ValueError, TypeError):
            total = None
        with self._planned_lock:
            self._planned[tournament.id] = total
        return total

    def _tournament_summary(self, store: Store, t: Tournament, done: int, health: dict[str, Any]) -> dict[str, Any]:
        """A tournament as a list shows it. A gauntlet carries its standing (how far its
        test got, its verdict: ``gauntlet.standing``), and a sequential one no games
        planned: its schedule is only a cap, most of which the test never plays."""
        from arena.tournaments.gauntlet import standing

        gauntlet = None
        if "gauntlet" in t.config:
            gauntlet = self._cached(store, ("gauntlet standing", t.id), done, lambda s: standing(s, t)).value
        return {
            "name": t.name,
            **kind(t.game, t.variant),
            "status": t.status,
            "created": t.created,
            "finished": t.finished,
            "games_done": done,
            "games_planned": None if gauntlet is not None and gauntlet["sequential"] else self.planned(t),
            "health": health,
            "gauntlet": "gauntlet" in t.config,
            "standing": gauntlet,
        }

    def _health(self, t: Tournament, holders: dict[int, str], recent: list[Any]) -> dict[str, Any]:
        """``tournament_health`` of the tournament, its ``recent`` games newest first."""
        return tournament_health(
            t, t.id in holders, recent[0].started if recent else None, [g.wall_ms for g in recent], self.db.path
        )

    # --- pages -----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"status": "ok", "database": str(self.db.path)}
        try:
            with self.db.store() as store:
                answer.update(ready=True, games=store.count_games(), last_game=store.last_game_id())
        except Unavailable as exc:
            answer.update(ready=False, message=str(exc))
        return answer

    def index(self) -> dict[str, Any]:
        with self.db.store() as store:
            stamps = self.kind_stamps(store)
            tournaments = self.tournaments(store)["tournaments"]
            return {
                "kinds": [{**kind(g, v), "games": stamps.counts[g, v]} for g, v in stamps.kinds()],
                "tournaments": tournaments,
                "games": stamps.games,
                "bots": len(store.list_bots()),
                "last_game": stamps.last,
            }

    def leaderboard(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        anchor_text: str | None = None,
        board: str | None = None,
    ) -> dict[str, Any]:
        """Every board (of ``game``; or the one of ``variant``, or of the key ``board``),
        each anchored on ``anchor_text`` (``NAME[:VERSION]=ELO``) when that bot is on it:
        400 when it is on none of them."""
        from arena.boards.standings import AnchorError

        if board is not None:
            if game is not None or variant is not None:
                raise WebError(400, f"board={board} names the game and variant: leave game= and variant= out")
            game, variant = split_board(board)
        variant = check_kind(game, variant)
        anchor = parse_anchor_param(anchor_text)
        with self.db.store() as store:
            stamps = self.kind_stamps(store)
            played = 0
            if tournament is not None:
                found = store.get_tournament(tournament)
                if found is None:
                    raise WebError(404, f"no tournament {tournament!r} (the tournaments page lists them)")
                played = store.count_games(found.id)

            def board_stamp(g: str, v: str) -> int:
                """A tournament's board changes with its games, the others with their kind's."""
                return played if tournament is not None else stamps.of((g, v))

            stored = self.kinds(store, tournament, played)
            if game is not None and variant is not None:
                chosen = [(game, variant)]
            else:
                chosen = [(g, v) for g, v in stored if game is None or g == game]
            boards, bots, refused = [], set(), ""
            for g, v in chosen:
                try:
                    boards.append(self.board(store, board_stamp(g, v), g, v, tournament, None, anchor))
                except AnchorError as exc:  # shown as it is, saying why
                    bots.update(exc.bots)
                    refused = refused or ("" if exc.missing else str(exc))
                    shown = self.board(store, board_stamp(g, v), g, v, tournament)
                    why = (
                        f"{anchor[0] if anchor else anchor_text} has no games on this board"
                        if exc.missing
                        else str(exc)
                    )
                    boards.append({**shown, "unanchored": why})
            if anchor is not None and chosen and not any(b["anchor"] for b in boards):
                if refused and not bots:
                    raise WebError(400, f"anchor={anchor_text}: {refused}")
                where = f"the board {chosen[0][0]}/{chosen[0][1]}: its" if len(chosen) == 1 else "these boards: their"
                raise WebError(
                    400, f"anchor={anchor_text}: no bot {anchor[0]!r} on {where} bots are {', '.join(sorted(bots))}"
                )
            for shown_board in boards:
                stamp = board_stamp(shown_board["game"], shown_board["variant"])
                shown_board["head_to_head"] = self.head_to_head(store, stamp, shown_board)
            return {
                "game": game,
                "variant": variant,
                "tournament": tournament,
                "anchor": anchor_text,
                "kinds": [kind(g, v) for g, v in stamps.kinds()],
                "tournaments": store.tournament_names(),
                "boards": boards,
            }

    def tournaments(self, store: Store | None = None) -> dict[str, Any]:
        if store is None:
            with self.db.store() as opened:
                return self.tournaments(opened)
        done = store.games_per_tournament()  # one indexed query: always as the database holds it
        holders = store.lease_holders()
        listed = []
        for t in store.list_tournaments():
            # Only a tournament being run can be stalled: only its last games are read.
            recent = store.find_games(t.id, limit=RECENT, newest_first=True) if t.id in holders else []
            listed.append(self._tournament_summary(store, t, done.get(t.id, 0), self._health(t, holders, recent)))
        return {"tournaments": listed[::-1]}

    def tournament(self, name: str) -> dict[str, Any]:
        with self.db.store() as store:
            t = store.get_tournament(name)
            if t is None:
                raise WebError(404, f"no tournament {name!r} (the tournaments page lists them)")
            done = store.count_games(t.id)
            recent = store.find_games(tournament_id=t.id, limit=RECENT, newest_first=True)
            standings = self.board(store, done, t.game, t.variant, t.name)
            standings["head_to_head"] = self.head_to_head(store, done, standings)
            health = self._health(t, store.lease_holders(), recent)
            nodes = store.node_activity(t.id)
            if health["state"] not in ("running", "stalled"):  # no run plays it now: no pace to show
                nodes = [msgspec.structs.replace(n, recent_per_s=None) for n in nodes]
            return {
                **self._tournament_summary(store, t, done, health),
                "seed": t.seed,
                "deals": deals_of(t)[0],
                "settings": t.settings,
                "config": t.config,
                "last_game_started": recent[0].started if recent else None,
                "nodes": [_builtins(n) for n in nodes],
                "standings": standings,
                "games": [listed(g) for g in recent],
            }

    def gauntlet(self, name: str) -> dict[str, Any]:
        """A gauntlet's test, verdict and LLR path (``gauntlets.gauntlet_data``), recomputed
        when a game is added; ``verdict`` is ``running`` while an arena plays it undecided."""
        from arena.web.gauntlets import VERDICTS, gauntlet_data

        with self.db.store() as store:
            t = store.get_tournament(name)
            if t is None:
                raise WebError(404, f"no gauntlet {name!r} (the tournaments page lists them)")
            if "gauntlet" not in t.config:
                raise WebError(404, f"{name!r} is a round robin, not a gauntlet: /tournaments/{name} shows it")
            done = store.count_games(t.id)
            recent = store.find_games(tournament_id=t.id, limit=RECENT, newest_first=True)
            health = self._health(t, store.lease_holders(), recent)
            cached = self._cached(store, ("gauntlet", t.id), done, lambda s: gauntlet_data(s, t))
            live = cached.value["decision"] == "undecided" and health["state"] in ("running", "stalled")
            verdict = "running" if live else cached.value["decision"]
            return {
                **self._tournament_summary(store, t, done, health),
                **cached.value,
                "verdict": verdict,
                "verdict_label": VERDICTS[verdict],
                "stale": cached.stale,
            }

    def bots(self) -> dict[str, Any]:
        with self.db.store() as store:
            counts = store.bot_game_counts()  # one indexed query: always as the database holds it
            return {
                "bots": [
                    {
                        "bot": b.ref,
                        "name": b.name,
                        "version": b.version,
                        "language": b.language,
                        "games_listed": b.games,
                        "hash": b.hash,
                        "added": b.added,
                        "games": counts.get(b.id, 0),
                    }
                    for b in store.list_bots()
                ]
            }

    def bot(self, ref: str, faults_page: int = 1) -> dict[str, Any]:
        with self.db.store() as store:
            try:
                bot = store.get_bot(ref)
            except StoreError:
                raise WebError(404, f"no bot {ref!r} (the bots page lists them)") from None
            stamp = store.count_games_of(bot_id=bot.id)  # what is the bot's changes with its games only
            faults = store.fault_totals(None, None, None).get(bot.id, (0, 0, 0, 0))
            opponents_cached = self._cached(store, ("opponents", bot.id), stamp, lambda s: s.opponents(bot.id))
            faults_cached = self._cached(store, ("faults", bot.id), stamp, lambda s: grouped_faults(s, bot.id))
            opponents, (evidence, groups) = opponents_cached.value, faults_cached.value
            ratings = self.rating_history(store, stamp, bot.id, bot.ref)
            updating = [name for name, c in (("opponents", opponents_cached), ("faults", faults_cached)) if c.stale]
            updating += ["ratings"] if any(r["stale"] for r in ratings) else []
            pages = max(1, math.ceil(len(groups) / FAULT_GROUPS))
            faults_page = min(faults_page, pages)  # past the end: the last page
            return {
                "bot": bot.ref,
                "name": bot.name,
                "version": bot.version,
                "language": bot.language,
                "games_listed": bot.games,
                "hash": bot.hash,
                "added": bot.added,
                "games": stamp,
                "updating": updating,
                "faults": dict(zip(("timeout", "crash", "malformed", "illegal"), faults, strict=True)),
                "ratings": ratings,
                "standing": self.stands(store, bot.id, bot.ref),
                "opponents": [
                    {
                        "bot": o,
                        "games": n,
                        "ahead": ahead,
                        "behind": behind,
                        "tied": tied,
                        "ahead_share": round((ahead + tied / 2) / max(ahead + behind + tied, 1), 3),
                    }
                    for o, n, ahead, behind, tied in opponents
                ],
                "recent_games": [
                    listed(g) for g in store.find_games(bot_id=bot.id, limit=BOT_RECENT, newest_first=True)
                ],
                "fault_record": evidence,
                "fault_groups": groups[(faults_page - 1) * FAULT_GROUPS : faults_page * FAULT_GROUPS],
                "fault_paging": {
                    "page": faults_page,
                    "pages": pages,
                    "groups": len(groups),
                    "per_page": FAULT_GROUPS,
                    "faults": sum(g["count"] for g in groups),
                    "games_scanned": FAULT_SCAN,
                },
                "times": self._cached(store, ("times", bot.id), stamp, lambda s: bot_times(s, bot.id, bot.ref)).value,
            }

    def standing(self, ref: str) -> list[dict[str, Any]]:
        """Where the bot ``ref`` stands now (``stands``); nothing for a bot not stored."""
        with self.db.store() as store:
            try:
                bot = store.get_bot(ref)
            except StoreError:
                return []
            return self.stands(store, bot.id, bot.ref)

    def stands(self, store: Store, bot_id: int, ref: str) -> list[dict[str, Any]]:
        """Where the bot stands now on each board it plays on: its kind's (every game of
        that game and rule set) and each ladder's it plays in; its rating as the board
        shows it (``standing_of``) and its rank among the bots there. The same cached
        boards as the leaderboard's, so the two always agree."""
        kinds = self.kind_stamps(store)
        played = store.bot_tournaments(bot_id)
        tournaments = {t.id: t for t in store.list_tournaments()}
        found = []
        for game, variant in dict.fromkeys((g, v) for _, g, v in played):
            board = self.board(store, kinds.of((game, variant)), game, variant)
            href = "/leaderboard?board=" + board["key"]
            found.append(standing_of(board, ref, board["label"], href))
        for tournament_id in dict.fromkeys(t for t, _, _ in played):
            t = tournaments.get(tournament_id)
            if t is not None and "ladder" in t.config:
                board = self.board(store, store.count_games(t.id), t.game, t.variant, t.name)
                found.append(standing_of(board, ref, f"the ladder {t.name}", f"/ladder/{t.name}"))
        return [entry for entry in found if entry is not None]

    def rating_history(self, store: Store, stamp: int, bot_id: int, ref: str) -> list[dict[str, Any]]:
        """Per game and variant the bot played: its Elo (with interval, rank) on the board of
        every game of that kind up to and including each tournament it played in; ``stale``
        while one of those boards is being recomputed. ``stamp``: the bot's games."""
        tournaments = {t.id: t for t in store.list_tournaments()}
        kinds = self.kind_stamps(store)
        played = self._cached(store, ("bot tournaments", bot_id), stamp, lambda s: s.bot_tournaments(bot_id)).value
        by_kind: dict[tuple[str, str], list[int]] = {}
        for tournament_id, game, variant in played:
            by_kind.setdefault((game, variant), []).append(tournament_id)
        history = []
        for (game, variant), ids in by_kind.items():
            same_kind = sorted(t.id for t in tournaments.values() if (t.game, t.variant) == (game, variant))
            points, stale = [], False
            newest = kinds.of((game, variant))
            moments: list[tuple[int, int | None, str]] = []  # (tournament, through game, when)
            for tournament_id in ids:
                t = tournaments.get(tournament_id)
                if t is not None and "ladder" in t.config:  # it never ends: its moments, not one point
                    marks = self._cached(
                        store, ("ladder moments", bot_id, tournament_id), stamp, games_in(bot_id, tournament_id)
                    ).value
                    moments += [(tournament_id, game_id, when) for game_id, when in ladder_moments(marks)]
                moments.append((tournament_id, None, ""))
            for tournament_id, through_game, when in moments:
                whole = same_kind and tournament_id >= same_kind[-1]
                if through_game is not None:  # as it stood at one of its games: that never changes
                    board = self.board(store, FINAL, game, variant, None, None, None, through_game)
                elif whole:  # the whole board: shared with the leaderboard
                    board = self.board(store, newest, game, variant)
                else:
                    settled = all(tournaments[i].status == "finished" for i in same_kind if i <= tournament_id)
                    board = self.board(store, FINAL if settled else newest, game, variant, None, tournament_id)
                stale = stale or board["stale"]
                row = next((r for r in board["rows"] if r["bot"] == ref), None)
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
                        "of": sum(1 for r in board["rows"] if r.get("component", 0) == row.get("component", 0)),
                        "games": row["games"],
                        "groups": row.get("groups", 0),
                        "bound": row.get("bound", ""),
                        "component": row.get("component", 0),
                        "note": row.get("note", ""),
                    }
                )
            history.append({**kind(game, variant), "points": points, "stale": stale})
        return history

    def games(self, asked: GamesAsked, limit: int, offset: int, newest_first: bool) -> dict[str, Any]:
        """A page of the games ``asked`` for, each filter checked (404 for a bot or
        tournament not stored, 400 for a value that cannot be one)."""
        with self.db.store() as store:
            where = games_filter(store, asked)
            total = store.count_games_of(where=where)
            # Past the end: nothing to read (and no offset SQLite could not take).
            found = []
            if offset < total:
                found = store.find_games(limit=limit, offset=offset, newest_first=newest_first, where=where)
            return {
                "tournament": asked.tournament,
                "bot": asked.bot,
                "opponent": asked.opponent,
                "board": None if where.game is None else f"{where.game}/{where.variant}",
                "faults": asked.faults,
                "from": asked.date_from,
                "to": asked.date_to,
                "limit": limit,
                "offset": offset,
                "page": offset // limit + 1,
                "pages": max(total - 1, 0) // limit + 1,
                "order": "desc" if newest_first else "asc",
                "total": total,
                "last_page": last_page(total, limit),
                "games": [listed(g) for g in found],
            }

    def game_choices(self) -> dict[str, list[str]]:
        """What the games page's filters offer: the stored tournaments, their boards (read
        from the tournaments, not from every game) and the bots."""
        with self.db.store() as store:
            tournaments = store.list_tournaments()
            return {
                "tournaments": [t.name for t in tournaments],
                "boards": sorted({f"{t.game}/{t.variant}" for t in tournaments}),
                "bots": sorted(store.bot_names().values()),
            }

    def game(self, game_id: int) -> dict[str, Any]:
        with self.db.store() as store:
            found = store.game(game_id)
            group = len(store.deal_games(game_id))
            embargo = None if found is None else deal_still_played(store, found, group)
        if found is None:
            raise WebError(404, f"no game {game_id} (the games page lists them)")
        if embargo:
            raise embargo
        return {
            **_builtins(found),
            "deal_games": group,
            "duplicate_url": f"/games/{game_id}/duplicate",
            "download_url": f"/api/games/{game_id}/replay?download=1",
            "label": board_label(f"{found.game}/{found.variant}"),
            "lower_is_better": score_of(found.game).lower_is_better,
            "replay_url": f"/api/games/{game_id}/replay",
            "frames_url": f"/api/games/{game_id}/frames",
            "times": self.game_times(game_id),
        }

    def duplicate(self, game_id: int) -> dict[str, Any]:
        """The game's deal in every rotation of the seats (``duplicate.deal_group``)."""
        from arena.web.duplicate import deal_group

        with self.db.store() as store:
            games = store.deal_games(game_id)
            found = next((g for g in games if g.id == game_id), None)
            embargo = None if found is None else deal_still_played(store, found, len(games))
        if found is None:
            raise WebError(404, f"no game {game_id} (the games page lists them)")
        if embargo:
            raise embargo
        score = score_of(found.game)
        return {
            "game_id": game_id,
            "game": found.game,
            "variant": found.variant,
            "label": board_label(f"{found.game}/{found.variant}"),
            **deal_group(games, score.lower_is_better, score.unit),
        }

    def game_times(self, game_id: int) -> list[dict[str, Any]] | None:
        """Each seat's time per move and bank in the game (None: its replay cannot be read,
        and the page still shows the rest)."""
        from arena.web.timing import game_times, seat_times

        try:
            return game_times(seat_times(replay_files.loads(self.replay(game_id), f"game {game_id}")))
        except (WebError, replay_files.ReplayError):
            return None

    def replay(self, game_id: int) -> bytes:
        with self.db.store() as store:
            found = store.game(game_id)
            if found is not None and (embargo := deal_still_played(store, found, len(store.deal_games(game_id)))):
                raise embargo
            try:
                return store.replay(game_id)
            except ReplayPruned as exc:
                raise WebError(410, str(exc)) from None
            except StoreError:
                raise WebError(404, f"no game {game_id} (the games page lists them)") from None
            except zlib.error as exc:
                raise WebError(500, f"the stored replay of game {game_id} is damaged ({exc})") from None

    def frames(self, game_id: int) -> bytes:
        """The viewer's frames of a game, as JSON (games never change: kept in an LRU)."""
        cached = self.frame_cache.get(game_id)
        if cached is not None:
            return cached
        from arena.web import viewer

        data = self.replay(game_id)
        try:
            lines = replay_files.loads(data, f"game {game_id}")
            encoded = msgspec.json.encode(viewer.frames(lines))
        except replay_files.ReplayError as exc:  # unreadable, or the rules disagree with it
            raise WebError(500, f"the stored replay of game {game_id} cannot be replayed: {exc}") from None
        self.frame_cache.put(game_id, encoded)
        return encoded


STALL_MIN_S = 120.0
"""A tournament being run with no new game for longer than this is stalled, or longer
than ``STALL_GAMES`` times the median wall time of its last games when that is more."""
STALL_GAMES = 20


def seconds_since(stamp: str | None, now: float) -> float | None:
    """Seconds (to a tenth) from an ISO time (UTC when it names no zone) to ``now``; None if unreadable."""
    import datetime as dt

    if not stamp:
        return None
    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return round(max(0.0, now - when.timestamp()), 1)


def spoken_duration(seconds: float) -> str:
    """``0.4 s``, ``4 s``, ``12 min``, ``3 h``, ``2 days``: a duration as a person says it."""
    if seconds < 1:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def tournament_health(
    t: Tournament,
    held: bool,
    last_started: str | None,
    walls_ms: list[float],
    db: Path,
    now: float | None = None,
) -> dict[str, Any]:
    """Whether a tournament is really being run: ``running`` (a live arena holds its lease
    and games keep coming), ``stalled`` (held, but no game for much longer than a game
    takes: ``STALL_MIN_S``, ``STALL_GAMES``), ``interrupted`` (stopped, or stored as running
    without a live holder: killed; with the command that resumes it) or ``finished``.

    ``last_started`` is when its newest game started, ``walls_ms`` its last games' wall times."""
    import statistics
    import time

    now = time.time() if now is None else now
    ago = seconds_since(last_started, now)
    resume = None
    if t.status == "finished":
        state, text = "finished", "finished"
    elif t.status == "paused":  # store.PAUSED: a ladder held by `arena ladder pause`
        state, text = "paused", "paused · `arena ladder resume` goes on"
    elif held:
        game_s = statistics.median(walls_ms) / 1000 if walls_ms else None
        limit = max(STALL_MIN_S, STALL_GAMES * game_s) if game_s else STALL_MIN_S
        quiet = ago if last_started is not None else seconds_since(t.created, now)
        if quiet is not None and quiet > limit:
            state = "stalled"
            text = f"stalled · no game for {spoken_duration(quiet)}" + (
                f" (a game takes about {spoken_duration(game_s)})" if game_s else " since it started"
            )
        else:
            state = "running"
            text = "running · no game yet" if ago is None else f"running · last game {spoken_duration(ago)} ago"
    else:
        from arena.tournaments.plan import resume_command

        resume = resume_command(t, db)
        state = "interrupted"
        killed = " · stopped without a word (killed?)" if t.status == "running" else ""
        text = f"interrupted{killed} · resume with: {resume}"
    return {
        "state": state,
        "last_game_started": last_started,
        "last_game_ago_s": ago,
        "resume": resume,
        "text": text,
    }


TIMES_GAMES = 200
"""The newest games of a bot whose replays its time per move is read from."""


def bot_times(store: Store, bot_id: int, ref: str, games: int = TIMES_GAMES) -> dict[str, Any]:
    """The bot's time per move over its newest ``games`` games (``timing.summary``),
    their replays read one at a time; a replay that cannot be read is counted, not used."""
    from arena.web.timing import seat_times, summary

    seats = []
    unreadable = 0
    found = store.find_games(bot_id=bot_id, limit=games, newest_first=True)
    for game in found:
        try:
            lines = replay_files.loads(store.replay(game.id), f"game {game.id}")
        except (zlib.error, StoreError, replay_files.ReplayError):
            unreadable += 1
            continue
        mine = {s.seat for s in game.seats if s.bot == ref}
        seats += [s for s in seat_times(lines) if s.seat in mine]
    return {**summary(seats), "games_read": len(found), "unreadable": unreadable, "games_limit": games}


def games_filter(store: Store, asked: GamesAsked) -> GameFilter:
    """The store's filter of the games ``asked`` for, each filter checked (404 for a bot
    or tournament not stored, 400 for a value that cannot be one): the one query behind
    the web's games list, its JSON twin and ``arena games``."""
    if asked.opponent is not None and asked.bot is None:
        raise WebError(400, f"opponent={asked.opponent} needs a bot= as well (the games both played)")
    game = variant = None
    if asked.board is not None:
        game, variant = split_board(asked.board)
        try:
            variant = check_kind(game, variant)
        except WebError as exc:
            raise WebError(400, f"board={asked.board}: {exc.message}") from None
    started_from, started_before = started_range(asked.date_from, asked.date_to)
    tournament_id = None
    if asked.tournament is not None:
        t = store.get_tournament(asked.tournament)
        if t is None:
            raise WebError(404, f"no tournament {asked.tournament!r} (the tournaments page lists them)")
        tournament_id = t.id
    bot_id = None if asked.bot is None else _bot_id(store, "bot", asked.bot)
    opponent_id = None if asked.opponent is None else _bot_id(store, "opponent", asked.opponent)
    if opponent_id is not None and opponent_id == bot_id:
        raise WebError(400, f"opponent={asked.opponent} is bot={asked.bot} itself: name another bot")
    return GameFilter(
        tournament_id=tournament_id,
        bot_id=bot_id,
        opponent_id=opponent_id,
        game=game,
        variant=variant,
        faulty=asked.faults,
        started_from=started_from,
        started_before=started_before,
    )


def _bot_id(store: Store, name: str, ref: str) -> int:
    try:
        return store.get_bot(ref).id
    except StoreError:
        raise WebError(404, f"no bot {ref!r} for {name}= (the bots page lists them)") from None


def last_page(total: int, limit: int) -> int:
    """The offset of the last page of ``total`` games, ``limit`` a page (0 when there are none)."""
    return max(total - 1, 0) // limit * limit


def fault_record(store: Store, bot_id: int, games: int = FAULT_GAMES) -> list[dict[str, Any]]:
    """Each fault of the bot in its newest faulty games, with the evidence the replay keeps.

    Only the replay's last line is decoded: its end line holds every seat's faults."""
    found = []
    end_decoder = msgspec.json.Decoder(replay_files.End)
    for game_id, seat in store.faulty_seats(bot_id, games):
        try:
            data = store.replay(game_id)
            end = end_decoder.decode(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
        except (zlib.error, msgspec.DecodeError, StoreError):
            found.append({"game": game_id, "seat": seat, "kind": "unknown", "message": "the replay cannot be read"})
            continue
        for fault in end.statuses[seat].faults:
            found.append({"game": game_id, "seat": seat, "status": end.statuses[seat].status, **_builtins(fault)})
    return found


_NUMBERS = re.compile(r"(-?\d+(?:, ?-?\d+)*)")
"""A number, or a list of them (legal answers): what differs between repeats of a fault."""


def stderr_tail(stderr: str | None) -> dict[str, Any]:
    """A fault's stderr split where it matters: its last lines (``TAIL_LINES``, at most
    ``TAIL_CHARS`` unless one line is longer), which hold the fault, and what came before."""
    lines = (stderr or "").rstrip("\n").split("\n") if stderr else []
    tail, earlier = lines[-TAIL_LINES:], lines[:-TAIL_LINES]
    while len(tail) > 1 and sum(len(line) + 1 for line in tail) > TAIL_CHARS:
        earlier.append(tail.pop(0))
    return {"stderr_tail": "\n".join(tail), "stderr_earlier": "\n".join(earlier), "earlier_lines": len(earlier)}


def group_faults(faults: list[dict[str, Any]], games_shown: int = 8) -> list[dict[str, Any]]:
    """Repeated faults as one entry each: the same kind and the same message but for its
    numbers (a request id, a time). Newest first (``faults`` is: games newest first, a
    game's faults in the order they happened); each group keeps its latest evidence, its
    message with the numbers that vary as N (a list of them as …), its count and its games."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    numbers: dict[tuple[str, str], list[set[str]]] = {}
    for fault in faults:
        parts = _NUMBERS.split(fault.get("message") or "")
        key = (fault.get("kind") or "unknown", "#".join(parts[::2]))
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"kind": key[0], "count": 0, "games": [], "latest": fault}
            numbers[key] = [set() for _ in parts[1::2]]
        elif fault["game"] == group["latest"]["game"]:
            group["latest"] = fault  # later in the same (newest) game
        group["count"] += 1
        if fault["game"] not in group["games"]:
            group["games"].append(fault["game"])
        for seen, value in zip(numbers[key], parts[1::2], strict=True):
            seen.add(value)
    found = []
    for key, group in groups.items():
        parts = _NUMBERS.split(group["latest"].get("message") or "")
        for i, seen in enumerate(numbers[key]):
            if len(seen) > 1:
                parts[2 * i + 1] = "…" if any("," in value for value in seen) else "N"
        games = group.pop("games")
        latest = group.pop("latest")
        found.append(
            {
                **group,
                "message": "".join(parts),
                "game_count": len(games),
                "games": games[:games_shown],
                "latest": {**latest, **stderr_tail(latest.get("stderr"))},
            }
        )
    return found


def grouped_faults(store: Store, bot_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The bot's faults as its page shows them: each fault of its newest ``FAULT_GAMES``
    faulty games, and those of its newest ``FAULT_SCAN`` grouped (``group_faults``)."""
    faults = fault_record(store, bot_id, FAULT_SCAN)
    newest: set[tuple[int, int]] = set()
    record = []
    for fault in faults:
        seat = (fault["game"], fault["seat"])
        if seat not in newest and len(newest) >= FAULT_GAMES:
            break
        newest.add(seat)
        record.append(fault)
    return record, group_faults(faults)


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
