"""The games the arena referees: one module of pure rules each. The registry that finds
a game by name, with its wire types and labels, is ``arena.games.registry``."""

from __future__ import annotations

from arena.games.base import AnyRules, Decision, IllegalAnswer, Outcome, Rules, SettingsError

__all__ = ["AnyRules", "Decision", "IllegalAnswer", "Outcome", "Rules", "SettingsError"]
