"""A gauntlet's page: NEW against the field, the sequential test's parameters, its
verdict and the LLR after each deal group, read from the stored games by
``arena.tournaments.gauntlet`` exactly as ``arena gauntlet`` reads them (so the page and the command
agree on every number)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import msgspec

from arena.store import Store, Tournament
from arena.tournaments.gauntlet import Versus as Standing
from arena.tournaments.gauntlet import (
    against_each,
    against_field,
    elo_text,
    llr_series,
    read,
    spec_of,
    verdict_line,
)
from arena.tournaments.roundrobin import TournamentConfig

VERDICTS = {
    "H1": "H1 accepted",
    "H0": "H0 accepted",
    "inconclusive": "inconclusive at the cap",
    "done": "done",
    "undecided": "undecided so far",
    "running": "running",
}
"""Each verdict as the page's badge says it."""


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


class Versus(msgspec.Struct, kw_only=True):
    """NEW against one side (the field, or one bot of it) as the page shows it."""

    name: str
    games: int
    score: float | None
    elo: float | None
    low: float | None
    high: float | None
    bound: str
    note: str
    text: str
    """The Elo as ``arena gauntlet`` writes it."""


def versus(v: Standing) -> Versus:
    """NEW against one side as served: NaN as null, and the Elo as the command writes it."""
    return Versus(
        name=v.name,
        games=v.games,
        score=_number(v.score),
        elo=_number(v.elo),
        low=_number(v.low),
        high=_number(v.high),
        bound=v.bound,
        note=v.note,
        text=elo_text(v),
    )


def decision_of(verdict: str, finished: bool, has_test: bool) -> str:
    """``H1``, ``H0``, ``inconclusive`` (the cap reached first), ``done`` (a fixed length,
    played) or ``undecided`` (neither yet)."""
    if verdict:
        return verdict
    if finished:
        return "inconclusive" if has_test else "done"
    return "undecided"


class GauntletTest(msgspec.Struct, kw_only=True):
    """What the stored games of a gauntlet say: NEW and the field, the sequential test's
    parameters, its decision and its LLR after each deal group."""

    new: str
    field: list[str]
    table_size: int
    tables: int
    test: dict[str, Any] | None
    """The SPRT's parameters and bounds (None for a fixed-length gauntlet)."""
    max_games: int | None
    deals: int
    decision: str
    verdict_text: str
    groups: int
    games: int
    games_stored: int
    games_planned: int
    score: float | None
    llr: list[float]
    against_field: Versus
    against_each: list[Versus]


def gauntlet_data(store: Store, tournament: Tournament) -> GauntletTest:
    """What the stored games of a gauntlet say (``tournament`` holds ``"gauntlet"``)."""
    spec = spec_of(tournament)
    assert spec is not None
    config = msgspec.convert(tournament.config, TournamentConfig)
    bots = [store.get_bot(ref) for ref in config.bots]
    reading = read(store, tournament, bots)
    test = spec.test()
    new, field = bots[0].ref, [b.ref for b in bots[1:]]
    return GauntletTest(
        new=new,
        field=field,
        table_size=config.table_size,
        tables=reading.tables,
        test=None if test is None else {**asdict(test), "lower": test.lower, "upper": test.upper},
        max_games=spec.max_games,
        deals=config.deals,
        decision=decision_of(reading.verdict, reading.finished, test is not None),
        verdict_text=verdict_line(reading, new, test),
        groups=reading.groups,
        games=reading.games,
        games_stored=reading.stored,
        games_planned=reading.planned,
        score=_number(reading.score),
        llr=[] if test is None else llr_series(reading, test),
        against_field=versus(against_field(reading, new)),
        against_each=[versus(v) for v in against_each(reading, new, field)],
    )
