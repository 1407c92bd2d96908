"""Liar's dice's record: rules, wire types and score, its web frames and its viewer's
drawer, named by import path as the arena's own games name theirs; no terminal
pictures or battery of its own (the generic ones serve)."""

from __future__ import annotations

from arena.games.kit import GameRecord, Score

from . import rules, wire

LIARS_DICE: GameRecord[rules.State, rules.Settings, wire.View, wire.Answer, wire.Event] = GameRecord(
    name=wire.GAME,
    title="Liar's dice",
    rules=rules,
    view=wire.View,
    event=wire.Event,
    score=Score("chips", lower_is_better=False, per_round="Chips/round", per_round_short="Chips"),
    private=("State.dice", "Roll.dice"),
    web="tests.games.liars_dice.frames:LiarsFrames",
    drawer="tests.games.liars_dice:viewer.js",
    drawer_css="tests.games.liars_dice:viewer.css",
    answer_names={"bid": "a bid"},
)

ENV_VALUE = "tests.games.liars_dice.record:LIARS_DICE"
"""What ``ARENA_GAMES`` holds to register it."""
