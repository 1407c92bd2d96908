"""The games the arena referees: one module of pure rules each, found by name."""

from __future__ import annotations

from typing import cast

from . import nimmt, sixes
from .base import Decision, Game, IllegalAnswer, Outcome, SettingsError

GAMES: dict[str, Game] = {nimmt.NAME: cast(Game, nimmt), sixes.NAME: cast(Game, sixes)}

__all__ = ["GAMES", "Decision", "Game", "IllegalAnswer", "Outcome", "SettingsError", "get_game"]


def get_game(name: str) -> Game:
    """The game called ``name``, or ``SettingsError`` listing the ones there are."""
    try:
        return GAMES[name]
    except KeyError:
        raise SettingsError(f"unknown game {name!r}: choose one of {', '.join(GAMES)}") from None
