"""What a game author needs, in one import: ``from arena.games.kit import ...``.

The rules' contract and the types it speaks (``Rules``, ``Decision``, ``Outcome``,
``SettingsError``, ``IllegalAnswer``), chance as data (``draw``), ranks shared on ties
(``competition_ranks``), the record that makes rules a game the arena knows
(``GameRecord``, ``Score``, ``register``), and the contract check a game's own tests run
(``check``, each finding a ``Problem``). These names are pinned (tests/unit/test_kit_exports.py):
a game written against them keeps working while the arena's insides move.
"""

from __future__ import annotations

from arena.games.base import AnyRules, Decision, IllegalAnswer, Outcome, Rules, SettingsError, competition_ranks
from arena.games.chance import draw
from arena.games.contract import Problem, check
from arena.games.registry import GameRecord, Score, register

__all__ = [
    "AnyRules",
    "Decision",
    "GameRecord",
    "IllegalAnswer",
    "Outcome",
    "Problem",
    "Rules",
    "Score",
    "SettingsError",
    "check",
    "competition_ranks",
    "draw",
    "register",
]
