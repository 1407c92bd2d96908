"""Sixes' part of the PettingZoo environment (``arena.env``): its arrays, its standing.

The encoding is ``protocol.arrays.sixes`` (so an exported bot encodes with it too). A
seat's standing is its chips: a step's reward is the chips it changed them by (minus
one for a paid pass, the pot for a round won).
"""

from __future__ import annotations

from arena.games.parts import EnvPart
from arena.games.sixes.rules import State


def standing(state: State) -> list[int]:
    return list(state.chips)


ENV = EnvPart("protocol.arrays.sixes", standing)
