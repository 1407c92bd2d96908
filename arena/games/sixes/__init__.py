"""The Sixes game: everything the arena knows of it, in one folder, and its record.

The registry imports this record on its first question (``arena.games.registry.BUILT_IN``);
the record names its parts by import path, so reading it imports only the rules.
"""

from __future__ import annotations

from typing import Any

from arena.games.registry import GameRecord, Score
from arena.games.sixes import rules
from protocol import sixes as wire

GAME: GameRecord[rules.State, rules.Settings, wire.View, Any, wire.Event] = GameRecord(
    name=wire.GAME,
    title="Sixes",
    rules=rules,
    view=wire.View,
    event=wire.Event,
    score=Score("chips", lower_is_better=False),
    setting_words={
        "chips": lambda v: f"{v} chips",
        "max_rounds": lambda v: f"at most {v} rounds",
    },
    private=("hands",),
    renderer="arena.games.sixes.render",
    web="arena.games.sixes.frames:SixesFrames",
    scenarios="arena.games.sixes.battery:scenarios",
    drawer="arena.games.sixes:viewer.js",
    drawer_css="arena.games.sixes:viewer.css",
    env="arena.games.sixes.env:ENV",
    answer_names={"play": "a card"},
)
