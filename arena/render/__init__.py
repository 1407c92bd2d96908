"""Showing games in the terminal. A game's renderer is found through its record
(``arena.games.registry``: ``get_game(name).terminal()``); ``generic`` serves a game without one,
and ``common`` holds what every renderer shares."""

from __future__ import annotations

from arena.text import shown


def seat_labels(names: list[str]) -> list[str]:
    """``A heuristic``, ``B random``...: letters keep two copies of one bot apart (a name
    from a replay file is the file's: shown safe for a terminal)."""
    return [f"{chr(65 + i)} {shown(name)}" for i, name in enumerate(names)]
