"""6 nimmt!'s part of the PettingZoo environment (``arena.env``): its arrays, its standing.

The encoding is ``protocol.arrays.nimmt`` (so an exported bot encodes with it too; it
refuses ``cards_per_turn = 2``, whose pairs the fixed action space does not hold). A
seat's standing is its heads so far, the rounds finished and this one: a step's reward is
minus the heads it took; when shedding, the game's score (cards left in hand) comes at
the end, as minus those cards.
"""

from __future__ import annotations

from arena.games.nimmt.rules import State
from arena.games.parts import EnvPart


def standing(state: State) -> list[int]:
    return [total + now for total, now in zip(state.scores, state.round_heads, strict=True)]


ENV = EnvPart("protocol.arrays.nimmt", standing)
