"""The tournaments' pages: the list (``/tournaments``), a tournament's standings, settings
and progress (``/tournaments/NAME``) and a gauntlet's test (``/gauntlets/NAME``), each
with its JSON twin under /api/; and whether a tournament is really being run.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import msgspec

from arena.store import Store, StoredGame, Tournament
from arena.tournaments.gauntlet import standing
from arena.tournaments.plan import deals_of, resume_command
from arena.web.errors import WebError
from arena.web.pages.gauntlets import VERDICTS, Versus, gauntlet_data
from arena.web.pages.site import Board, BoardId, Site, board_id, listed

STALL_MIN_S = 120.0
"""A tournament being run with no new game for longer than this is stalled, or longer
than ``STALL_GAMES`` times the median wall time of its last games when that is more."""
STALL_GAMES = 20


def seconds_since(stamp: str | None, now: float) -> float | None:
    """Seconds (to a tenth) from an ISO time (UTC when it names no zone) to ``now``; None if unreadable."""
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


class TournamentHealth(msgspec.Struct):
    """Whether a tournament is really being run (``tournament_health``)."""

    state: str
    """``running``, ``stalled``, ``paused``, ``interrupted`` or ``finished``."""
    last_game_started: str | None
    last_game_ago_s: float | None
    resume: str | None
    """The command that resumes an interrupted tournament."""
    text: str
    """The state in words, as the page says it."""


def tournament_health(
    t: Tournament,
    held: bool,
    last_started: str | None,
    walls_ms: list[float],
    db: Path,
    now: float | None = None,
) -> TournamentHealth:
    """Whether a tournament is really being run: ``running`` (a live arena holds its lease
    and games keep coming), ``stalled`` (held, but no game for much longer than a game
    takes: ``STALL_MIN_S``, ``STALL_GAMES``), ``interrupted`` (stopped, or stored as running
    without a live holder: killed; with the command that resumes it) or ``finished``.

    ``last_started`` is when its newest game started, ``walls_ms`` its last games' wall times."""
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
        resume = resume_command(t, db)
        state = "interrupted"
        killed = " · stopped without a word (killed?)" if t.status == "running" else ""
        text = f"interrupted{killed} · resume with: {resume}"
    return TournamentHealth(state, last_started, ago, resume, text)


def health_of(t: Tournament, held: bool, recent: list[StoredGame], db: Path) -> TournamentHealth:
    """``tournament_health`` of the tournament, its ``recent`` games newest first."""
    return tournament_health(t, held, recent[0].started if recent else None, [g.wall_ms for g in recent], db)


class TournamentSummary(BoardId, kw_only=True):
    """A tournament as the lists show it."""

    name: str
    status: str
    created: str
    finished: str | None
    games_done: int
    games_planned: int | None
    """None: not known, or only a cap (a sequential gauntlet stops at a bound)."""
    health: TournamentHealth
    gauntlet: bool
    standing: dict[str, Any] | None
    """A gauntlet's progress and verdict (``arena.tournaments.gauntlet.standing``)."""


class TournamentsPage(msgspec.Struct, kw_only=True):
    """``/tournaments``: every tournament, the newest first."""

    tournaments: list[TournamentSummary]


class TournamentPage(TournamentSummary, kw_only=True):
    """``/tournaments/NAME``: its settings, progress, workers, standings and latest games."""

    seed: int
    deals: dict[str, Any]
    """Where its deals come from (``arena.tournaments.plan.deals_of``)."""
    settings: dict[str, Any]
    config: dict[str, Any]
    last_game_started: str | None
    nodes: list[dict[str, Any]]
    standings: Board
    games: list[dict[str, Any]]
    live: list[dict[str, Any]] = []
    """Its games being played now (``arena.web.live``), set by the app."""


class GauntletPage(TournamentSummary, kw_only=True):
    """``/gauntlets/NAME``: NEW against the field, its test, verdict and LLR path
    (``gauntlets.GauntletTest``, whose fields it has)."""

    new: str
    field: list[str]
    table_size: int
    tables: int
    test: dict[str, Any] | None
    max_games: int | None
    deals: int
    decision: str
    verdict_text: str
    groups: int
    games: int
    games_stored: int
    score: float | None
    llr: list[float]
    against_field: Versus
    against_each: list[Versus]
    verdict: str
    """The decision, or ``running`` while an arena plays it undecided."""
    verdict_label: str
    stale: bool


class TournamentPages:
    """The tournaments' pages over a site."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def summary(self, store: Store, t: Tournament, done: int, health: TournamentHealth) -> TournamentSummary:
        """A tournament as a list shows it. A gauntlet carries its standing (how far its
        test got, its verdict: ``gauntlet.standing``), and a sequential one no games
        planned: its schedule is only a cap, most of which the test never plays."""
        gauntlet = None
        if "gauntlet" in t.config:
            gauntlet = self.site.cached(store, ("gauntlet standing", t.id), done, lambda s: standing(s, t)).value
        return TournamentSummary(
            **board_id(t.game, t.variant),
            name=t.name,
            status=t.status,
            created=t.created,
            finished=t.finished,
            games_done=done,
            games_planned=None if gauntlet is not None and gauntlet["sequential"] else self.site.planned(t),
            health=health,
            gauntlet="gauntlet" in t.config,
            standing=gauntlet,
        )

    def tournaments(self, store: Store | None = None) -> TournamentsPage:
        if store is None:
            with self.site.db.store() as opened:
                return self.tournaments(opened)
        done = self.site.tallies(store).tournaments  # as the database holds it, kept without counting
        holders = store.lease_holders()
        found = []
        for t in store.list_tournaments():
            # Only a tournament being run can be stalled: only its last games are read.
            recent = self.site.recent_games(store, t.id, done.get(t.id, 0)) if t.id in holders else []
            health = health_of(t, t.id in holders, recent, self.site.db.path)
            found.append(self.summary(store, t, done.get(t.id, 0), health))
        return TournamentsPage(tournaments=found[::-1])

    def tournament(self, name: str) -> TournamentPage:
        with self.site.db.store() as store:
            t = store.get_tournament(name)
            if t is None:
                raise WebError(404, f"no tournament {name!r} (the tournaments page lists them)")
            done = self.site.games_of(store, t.id)
            recent = self.site.recent_games(store, t.id, done)
            standings = self.site.board(store, done, t.game, t.variant, t.name)
            standings.head_to_head = self.site.head_to_head(store, done, standings)
            health = health_of(t, t.id in store.lease_holders(), recent, self.site.db.path)
            nodes = self.site.cached(store, ("nodes", t.id), done, lambda s: s.node_activity(t.id)).value
            if health.state not in ("running", "stalled"):  # no run plays it now: no pace to show
                nodes = [msgspec.structs.replace(n, recent_per_s=None) for n in nodes]
            return TournamentPage(
                **msgspec.structs.asdict(self.summary(store, t, done, health)),
                seed=t.seed,
                deals=deals_of(t)[0],
                settings=t.settings,
                config=t.config,
                last_game_started=recent[0].started if recent else None,
                nodes=[msgspec.to_builtins(n) for n in nodes],
                standings=standings,
                games=[listed(g) for g in recent],
            )

    def gauntlet(self, name: str) -> GauntletPage:
        """A gauntlet's test, verdict and LLR path (``gauntlets.gauntlet_data``), recomputed
        when a game is added; ``verdict`` is ``running`` while an arena plays it undecided."""
        with self.site.db.store() as store:
            t = store.get_tournament(name)
            if t is None:
                raise WebError(404, f"no gauntlet {name!r} (the tournaments page lists them)")
            if "gauntlet" not in t.config:
                raise WebError(404, f"{name!r} is a round robin, not a gauntlet: /tournaments/{name} shows it")
            done = self.site.games_of(store, t.id)
            recent = self.site.recent_games(store, t.id, done)
            health = health_of(t, t.id in store.lease_holders(), recent, self.site.db.path)
            cached = self.site.cached(store, ("gauntlet", t.id), done, lambda s: gauntlet_data(s, t))
            live = cached.value.decision == "undecided" and health.state in ("running", "stalled")
            verdict = "running" if live else cached.value.decision
            fields = {
                **msgspec.structs.asdict(self.summary(store, t, done, health)),
                **msgspec.structs.asdict(cached.value),  # its games_planned: the cap of its test
            }
            return GauntletPage(**fields, verdict=verdict, verdict_label=VERDICTS[verdict], stale=cached.stale)
