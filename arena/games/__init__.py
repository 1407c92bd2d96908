"""The games the arena referees, one folder each (``arena/games/<game>/``: its record,
pure rules, pictures, frames, viewer drawer and battery). The registry that finds a
game by name is ``arena.games.registry``; the shapes of a game's optional parts are
``arena.games.parts``."""

from __future__ import annotations

from arena.games.base import AnyRules, Decision, IllegalAnswer, Outcome, Rules, SettingsError

__all__ = ["AnyRules", "Decision", "IllegalAnswer", "Outcome", "Rules", "SettingsError"]
