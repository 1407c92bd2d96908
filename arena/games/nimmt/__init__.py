"""The 6 nimmt! game: everything the arena knows of it, in one folder, and its record.

The registry imports this record on its first question (``arena.games.registry.BUILT_IN``);
the record names its parts by import path, so reading it imports only the rules.
"""

from __future__ import annotations

from typing import Any

from arena.games.nimmt import rules
from arena.games.registry import GameRecord, Score
from protocol import nimmt as wire

GAME: GameRecord[rules.State, rules.Settings, wire.View, Any, wire.Event] = GameRecord(
    name=wire.GAME,
    title="6 nimmt!",
    rules=rules,
    view=wire.View,
    event=wire.Event,
    score=Score(
        "heads",
        lower_is_better=True,
        per_round="Penalty/round",
        per_round_short="Pen.",
        per_round_hint="average penalty points (cattle heads) per round",
    ),
    variants=rules.VARIANTS,
    overridden_by={"end_score": "rounds"},
    setting_words={
        "end_score": lambda v: f"end at {v} heads",
        "rounds": lambda v: f"{v} round" + ("" if v == "1" else "s"),
        "keep_rows": lambda v: "rows kept" if v == "true" else "rows not kept",
        "cards_per_turn": lambda v: f"{v} cards a turn" if v != "1" else "1 card a turn",
        "shedding": lambda v: "shedding" if v == "true" else "no shedding",
    },
    private=("hands",),
    renderer="arena.games.nimmt.render",
    web="arena.games.nimmt.frames:NimmtFrames",
    scenarios="arena.games.nimmt.battery:scenarios",
    drawer="arena.games.nimmt:viewer.js",
    drawer_css="arena.games.nimmt:viewer.css",
    env="arena.games.nimmt.env:ENV",
    answer_names={"play": "a card", "row": "a row (its index)", "draft": "a card"},
)
