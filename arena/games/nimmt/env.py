"""6 nimmt!'s part of the PettingZoo environment (``arena.env``): its arrays, its standing.

The encoding is ``protocol.arrays.nimmt`` (so an exported bot encodes with it too). A
seat's standing is its heads so far, the rounds finished and this one: a step's reward is
minus the heads it took; when shedding, the game's score (cards left in hand) comes at
the end, as minus those cards.
"""

from __future__ import annotations

from arena.games.nimmt.rules import Settings, State
from arena.games.parts import EnvPart


def standing(state: State) -> list[int]:
    return [total + now for total, now in zip(state.scores, state.round_heads, strict=True)]


def refuse(settings: Settings) -> str | None:
    if settings.cards_per_turn != 1:
        return (
            "cards_per_turn = 2 answers a pair of cards a turn, which the environment's fixed action space"
            " (104 cards, 4 rows: one answer an action) does not hold: use cards_per_turn = 1"
        )
    return None


ENV = EnvPart("protocol.arrays.nimmt", standing, refuse)
