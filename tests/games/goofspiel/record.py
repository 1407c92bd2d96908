"""Goofspiel's catalog record: rules, wire types and score, and no optional part, so
the arena shows it and checks bots at it through its generic fallbacks."""

from __future__ import annotations

from arena.games.kit import GameRecord, Score

from . import rules, wire

GOOFSPIEL: GameRecord[rules.State, rules.Settings, wire.View, int, wire.Event] = GameRecord(
    name=wire.GAME,
    title="Goofspiel",
    rules=rules,
    view=wire.View,
    event=wire.Event,
    score=Score("points", lower_is_better=False),
    private=("hands",),
)

ENV_VALUE = "tests.games.goofspiel.record:GOOFSPIEL"
"""What ``ARENA_GAMES`` holds to register it."""
