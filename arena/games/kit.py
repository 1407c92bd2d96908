"""What a game author needs, in one import: ``from arena.games.kit import ...``.

The rules' contract and the types it speaks (``Rules``, ``Decision``, ``Outcome``,
``SettingsError``, ``IllegalAnswer``), chance as data (``draw``), ranks shared on ties
(``competition_ranks``), the record that makes rules a game the arena knows
(``GameRecord``, ``Score``, ``register``). These names are pinned
(tests/unit/test_kit_exports.py): a game written against them keeps working while the
arena's insides move. The contract check a game's own tests run is ``arena.gamecheck.check``:
it plays games through the layers above the rules, so it sits above them too.
"""

from __future__ import annotations

from arena.games.base import AnyRules, Decision, IllegalAnswer, Outcome, Rules, SettingsError, competition_ranks
from arena.games.chance import draw
from arena.games.registry import GameRecord, Score, register

__all__ = [
    "AnyRules",
    "Decision",
    "GameRecord",
    "IllegalAnswer",
    "Outcome",
    "Rules",
    "Score",
    "SettingsError",
    "competition_ranks",
    "draw",
    "register",
]
