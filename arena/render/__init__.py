"""Showing games in the terminal: one module per game, found by the game's name."""

from __future__ import annotations

from types import ModuleType

from . import nimmt, sixes

RENDERERS: dict[str, ModuleType] = {"nimmt": nimmt, "sixes": sixes}


def seat_labels(names: list[str]) -> list[str]:
    """``A heuristic``, ``B random``...: letters keep two copies of one bot apart."""
    return [f"{chr(65 + i)} {name}" for i, name in enumerate(names)]
