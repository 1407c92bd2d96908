"""A gauntlet: NEW against a field of bots, in duplicate deals, until the answer is clear.

The gauntlet is a tournament like any other (its row, its games, its lease, resumable),
whose ``config`` also holds ``"gauntlet"``: the sequential test's parameters (or none:
a fixed number of deals) and the rounds per match. Its schedule
(``schedule.gauntlet``) seats NEW (bot 0) at every table; a round is one deal group,
one deal in every seat rotation, at each table, and deal group ``g`` is round
``g // T`` at table ``g % T``.

Play (``arena.tournaments.gauntlet_play``) goes a batch of matches at a time through
``run_tournament``. A deal group's score
is NEW's pairwise score against the opponents at its table, averaged over the group's
games. The test reads the groups in their order and counts them up to the first one
missing: after each group it computes the LLR of the groups so far
(``leaderboard.sprt``) and stops at the first that reaches a bound. So the verdict is
a function of the stored games alone, and a resumed gauntlet reaches the one an
uninterrupted run would have reached with those games. While a batch plays, the same
check runs as each game ends, and a decided test stops the batch at once; the games
played past the deciding group are then dropped, so a seed stores the same games
whatever the batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from arena.store import Store, StoredBot, StoreError, Tournament
from arena.tournaments.plan import shape_of
from arena.tournaments.schedule import gauntlet_tables

if TYPE_CHECKING:  # numpy's, and the runner's: loaded where a gauntlet is read or run, not to list tournaments
    from arena.tournaments.roundrobin import TournamentConfig
    from leaderboard.ratings import GameResult
    from leaderboard.sprt import Decision, Sprt

CHUNK = 8
"""Rounds per match: the bots of a table start once for this many deal groups."""
NEW = "NEW"
FIELD = "field"
"""How the rating of NEW against the field names the two sides."""


class GauntletSpec(msgspec.Struct, frozen=True):
    """What a gauntlet adds to its tournament's config (under ``"gauntlet"``)."""

    sprt: dict[str, float] | None
    """``elo0``, ``elo1``, ``alpha``, ``beta``; None for a fixed number of deals."""
    max_games: int | None
    """The cap asked for (the schedule holds the whole rounds that fit in it)."""
    chunk: int = CHUNK

    def test(self) -> Sprt | None:
        from leaderboard.sprt import Sprt

        return None if self.sprt is None else Sprt(**self.sprt)


def spec_of(tournament: Tournament) -> GauntletSpec | None:
    """The gauntlet part of a tournament's config; None for a round robin."""
    if "gauntlet" not in tournament.config:
        return None
    return msgspec.convert(tournament.config["gauntlet"], GauntletSpec)


def gauntlet_config(config: TournamentConfig, spec: GauntletSpec) -> dict[str, Any]:
    """The ``config`` JSON of a gauntlet's tournament row: the tournament's, and the gauntlet's."""
    return {**msgspec.to_builtins(config), "gauntlet": msgspec.to_builtins(spec)}


def rounds_for(games: int, opponents: int, size: int) -> int:
    """Whole rounds within ``games`` games (0 when not even one fits)."""
    per_round = len(gauntlet_tables(opponents, size)) * size
    return games // per_round


def half_points(ranks: Sequence[int], seat: int) -> int:
    """NEW's pairwise result in one game, in half points: 2 per seat ranked below it, 1
    per seat sharing its rank."""
    mine = ranks[seat]
    return sum(2 * (mine < r) + (mine == r) for other, r in enumerate(ranks) if other != seat)


@dataclass
class Versus:
    """NEW against one side: a bot of the field, or the whole field."""

    name: str
    games: int
    score: float
    """NEW's mean pairwise score against it (NaN without games)."""
    elo: float
    """NEW's Elo minus its (Bradley-Terry fit of the counted games, leaderboard.ratings)."""
    low: float
    high: float
    """The 95% interval of that difference (NaN: none)."""
    bound: str = ""
    """``">"``: NEW won every comparison, the difference is above ``low`` (``high`` is
    NaN); ``"<"``: it lost every one, below ``high``."""
    note: str = ""


@dataclass
class Reading:
    """What the stored games of a gauntlet say."""

    size: int
    tables: int
    scores: list[float]
    """The score of each complete deal group, in order, up to the first incomplete one."""
    decision: Decision | None
    """The test over those groups (None for a fixed-length gauntlet)."""
    stored: int
    """Games stored for the gauntlet, counted or not."""
    planned: int
    """Games in its schedule: the cap."""
    counted_games: list[GameResult] = field(default_factory=list)
    """The games of the counted groups, players by ``name:version``."""
    partial: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Groups after the complete ones with games stored: (NEW's half points, games)."""

    @property
    def groups(self) -> int:
        """Deal groups the test counts: up to the one that decided it, else all complete."""
        return self.decision.groups if self.decision is not None else len(self.scores)

    @property
    def games(self) -> int:
        return self.groups * self.size

    @property
    def verdict(self) -> str:
        return "" if self.decision is None else self.decision.verdict

    @property
    def finished(self) -> bool:
        """Decided, or every game of the schedule counted."""
        return bool(self.verdict) or self.games >= self.planned

    @property
    def score(self) -> float:
        return sum(self.scores[: self.groups]) / self.groups if self.groups else math.nan


def read(store: Store, tournament: Tournament, bots: list[StoredBot], before: Reading | None = None) -> Reading:
    """The gauntlet's standing from its stored games (``bots``: NEW first, as configured).
    ``before``, an earlier reading, spares recomputing the LLRs of the groups it had
    found undecided (stored games never change)."""
    from leaderboard.ratings import GameResult
    from leaderboard.sprt import sequential

    config = shape_of(tournament)
    spec = spec_of(tournament)
    assert spec is not None
    size = config["table_size"]
    tables = len(gauntlet_tables(len(bots) - 1, size))
    names = {b.id: b.ref for b in bots}
    new_id = bots[0].id
    points: dict[int, int] = {}
    seen: dict[int, int] = {}
    games: dict[int, list[GameResult]] = {}
    rows = store.results(None, None, tournament.name)
    for _, match_no, deal, _, seat_bots, seat_ranks, _ in rows:
        group = deal * tables + match_no % tables
        ids = [int(b) for b in seat_bots.split(",")]
        ranks = [int(r) for r in seat_ranks.split(",")]
        points[group] = points.get(group, 0) + half_points(ranks, ids.index(new_id))
        seen[group] = seen.get(group, 0) + 1
        games.setdefault(group, []).append(GameResult(group, [names[i] for i in ids], ranks))
    scores: list[float] = []
    full = 2 * size * (size - 1)
    while seen.get(len(scores), 0) >= size:
        scores.append(points[len(scores)] / full)
    test = spec.test()
    known = 0 if before is None or before.decision is None or before.verdict else before.decision.groups
    decision = None if test is None else sequential(scores, test, known)
    reading = Reading(size, tables, scores, decision, len(rows), config["deals"] * tables * size)
    reading.counted_games = [game for group in range(reading.groups) for game in games[group]]
    reading.partial = {g: (points[g], seen[g]) for g in seen if g >= len(scores)}
    return reading


def head_to_head(name: str, games: list[GameResult]) -> Versus:
    """NEW against one side, from ``games`` of two seats (NEW, and ``name``), rated by
    ``leaderboard.ratings``. With two bots the fit centres them on 1500, NEW at 1500 +
    d/2, the other at 1500 - d/2, so the interval of NEW's rating, doubled about 1500,
    is the interval of the difference d (and NEW's bound, when it won or lost every
    comparison, bounds d)."""
    from leaderboard.ratings import MEAN_ELO, rate

    if not games:
        return Versus(name, 0, math.nan, math.nan, math.nan, math.nan, note="no deal group yet")
    ratings = {r.bot: r for r in rate(games)}
    mine, theirs = ratings[NEW], ratings[name]
    score = 0.0
    for g in games:
        score += half_points(g.ranks, list(g.players).index(NEW)) / (2 * (len(g.ranks) - 1))
    return Versus(
        name,
        len(games),
        score / len(games),
        mine.elo - theirs.elo,
        2 * (mine.low - MEAN_ELO),
        2 * (mine.high - MEAN_ELO),
        getattr(mine, "bound", ""),
        getattr(mine, "note", ""),
    )


def against_field(reading: Reading, new: str) -> Versus:
    """NEW against the field as one side: each counted game as NEW's pairwise results
    against the opponents at its table (the opponents merged into one bot, whose
    results among themselves are not results)."""
    from leaderboard.ratings import GameResult

    merged = [
        GameResult(g.group, [NEW if p == new else FIELD for p in g.players], g.ranks) for g in reading.counted_games
    ]
    return head_to_head(FIELD, merged)


def against_each(reading: Reading, new: str, opponents: list[str]) -> list[Versus]:
    """NEW against each opponent: their results against each other in the counted games."""
    from leaderboard.ratings import GameResult

    rows = []
    for opponent in opponents:
        games = [
            GameResult(g.group, [NEW, opponent], [g.ranks[list(g.players).index(p)] for p in (new, opponent)])
            for g in reading.counted_games
            if opponent in g.players
        ]
        rows.append(head_to_head(opponent, games))
    return rows


def elo_text(v: Versus) -> str:
    """``+85 [+20, +150]``, ``> +400``, or ``+85 (why there is no interval)``."""
    if math.isnan(v.elo):
        return v.note or "no games"
    if v.bound == ">" and not math.isnan(v.low):
        return f"> {v.low:+.0f}"
    if v.bound == "<" and not math.isnan(v.high):
        return f"< {v.high:+.0f}"
    if math.isnan(v.low) or math.isnan(v.high):
        return f"{v.elo:+.0f} ({v.note or 'no interval'})"
    return f"{v.elo:+.0f} [{v.low:+.0f}, {v.high:+.0f}]"


def signed(elo: float) -> str:
    return "0" if elo == 0 else f"{elo:+g}"


def verdict_line(reading: Reading, new: str, test: Sprt | None) -> str:
    """The verdict in words, as ``arena gauntlet`` prints it and the gauntlet's web page shows it."""
    counted = f"{reading.groups} deal group{'s' * (reading.groups != 1)}, {reading.games} games"
    if test is None or reading.decision is None:
        return f"done: {counted}; {new} against the field: Elo {elo_text(against_field(reading, new))}"
    d = reading.decision
    hypotheses = f"elo1 = {signed(test.elo1)} over elo0 = {signed(test.elo0)}"
    if d.verdict == "H1":
        return (
            f"H1 accepted: {new} is stronger than the field, the games favour {hypotheses}"
            f" (LLR {d.llr:.2f} >= {test.upper:.2f} after {counted})"
        )
    if d.verdict == "H0":
        return (
            f"H0 accepted: {new} is not shown stronger, the games favour elo0 = {signed(test.elo0)} over elo1 ="
            f" {signed(test.elo1)} (LLR {d.llr:.2f} <= {test.lower:.2f} after {counted})"
        )
    if reading.finished:
        return f"inconclusive at the cap: LLR {d.llr:.2f} still within ({test.lower:.2f}, {test.upper:.2f}) after {counted}"
    return f"undecided so far: LLR {d.llr:.2f} within ({test.lower:.2f}, {test.upper:.2f}) after {counted}"


def llr_series(reading: Reading, test: Sprt) -> list[float]:
    """The LLR after each counted deal group, in order: the path the test took to its
    decision (its last value is the decision's LLR; empty before the first group)."""
    from leaderboard.sprt import llr_trace

    return [float(v) for v in llr_trace(reading.scores[: reading.groups], test.elo0, test.elo1)]


def reading_of(store: Store, tournament: Tournament) -> Reading | None:
    """The reading of a gauntlet's stored games, for the views that list it; None when a
    bot it was configured with has been removed (its games went with it)."""
    config = shape_of(tournament)
    try:
        bots = [store.get_bot(ref) for ref in config["bots"]]
    except StoreError:
        return None
    return read(store, tournament, bots)


def standing_of(reading: Reading, test: Sprt | None, new: str) -> dict[str, Any]:
    """How far a gauntlet is and what it found, as every view that lists it says so: its
    schedule is only a cap (a sequential test stops at the first bound), so the games
    played are counted in deal groups, never as a share of that cap (``sequential``: it
    has a test; without one it plays its fixed schedule whole). ``decision`` is
    ``H1``, ``H0``, ``inconclusive``, ``done`` or ``undecided``; ``progress`` says how far
    it got; ``verdict`` says what it found, with the bounds it was judged by."""
    groups = f"{reading.groups} deal group{'s' * (reading.groups != 1)}"
    cap = f"at most {reading.planned} games"
    d = reading.decision
    if test is None or d is None:
        decision = "done" if reading.finished else "undecided"
        progress = f"{reading.stored} of {reading.planned} games, {groups} (a fixed number of deals)"
        field_elo = f"{new} against the field: Elo {elo_text(against_field(reading, new))}"
        verdict = f"done: {field_elo}" if reading.finished else f"so far: {field_elo}"
    else:
        bounds = f"({test.lower:.2f}, {test.upper:.2f})"
        hypotheses = f"elo0 = {signed(test.elo0)}, elo1 = {signed(test.elo1)}"
        if d.verdict == "H1":
            decision, verdict = "H1", f"H1 accepted: LLR {d.llr:.2f} >= {test.upper:.2f} ({hypotheses})"
        elif d.verdict == "H0":
            decision, verdict = "H0", f"H0 accepted: LLR {d.llr:.2f} <= {test.lower:.2f} ({hypotheses})"
        elif reading.finished:
            decision, verdict = "inconclusive", f"inconclusive at the cap: LLR {d.llr:.2f} within {bounds}"
        else:
            decision, verdict = "undecided", f"undecided: LLR {d.llr:.2f} within {bounds} ({hypotheses})"
        if decision == "undecided":
            progress = f"SPRT running: {groups}, {reading.stored} games ({cap})"
        else:
            progress = f"SPRT decided after {groups}, {reading.stored} games"
    return {
        "decision": decision,
        "sequential": test is not None,
        "groups": reading.groups,
        "progress": progress,
        "verdict": verdict,
    }


def standing(store: Store, tournament: Tournament) -> dict[str, Any] | None:
    """``standing_of`` a gauntlet from its stored games (None: not a gauntlet, or a bot of it removed)."""
    spec = spec_of(tournament)
    reading = None if spec is None else reading_of(store, tournament)
    if spec is None or reading is None:
        return None
    return standing_of(reading, spec.test(), shape_of(tournament)["bots"][0])
