"""Showing games in the terminal. A game's renderer is found through its record
(``arena.catalog``: ``get_game(name).terminal()``); ``generic`` serves a game without one."""

from __future__ import annotations


def seat_labels(names: list[str]) -> list[str]:
    """``A heuristic``, ``B random``...: letters keep two copies of one bot apart."""
    return [f"{chr(65 + i)} {name}" for i, name in enumerate(names)]
