"""Sixes as arrays (``protocol.arrays``): the observation of a seat's view, the 41 actions.

Actions: index ``i`` plays ``DECK[i]`` (``protocol.sixes.DECK``: by suit, then rank);
index 40 passes.

The observation, every entry a whole number (``observation_size(players)`` of them):

====================  ==========================================================
``0``                 1 when the seat is asked to play, else 0
``1:41``              the hand: 1 at ``1 + i`` for each card ``DECK[i]`` held
``41:81``             the table: 1 at ``41 + i`` for each card ``DECK[i]`` on it
``81:85``             pot, round, turn, players
then ``2 x players``  chips, hand sizes: each seat-relative (the seat itself first)
====================  ==========================================================
"""

from __future__ import annotations

from typing import Any

from protocol.arrays import clip, relative
from protocol.sixes import DECK, PASS, RANKS, SUITS

GAME = "sixes"
PASS_ACTION = len(DECK)
ACTIONS = len(DECK) + 1
FIXED = 1 + 2 * len(DECK) + 4
_INDEX = {card: i for i, card in enumerate(DECK)}


def observation_size(players: int) -> int:
    return FIXED + 2 * players


def observation(kind: str | None, view: dict[str, Any]) -> list[int]:
    """``view`` (the protocol's dict of a ``protocol.sixes.View``) as whole numbers."""
    hand = [0] * len(DECK)
    for card in view["hand"]:
        hand[_INDEX[card]] = 1
    table = [0] * len(DECK)
    for suit in SUITS:
        run = view["table"].get(suit)
        if run is not None:
            low, high = run
            for rank in RANKS:
                if low <= rank <= high:
                    table[_INDEX[f"{rank}{suit}"]] = 1
    seat = view["seat"]
    counters = [view["pot"], view["round"], view["turn"], view["players"]]
    per_seat = relative(view["chips"], seat) + relative(view["hand_sizes"], seat)
    return [int(kind is not None), *hand, *table, *map(clip, counters), *map(clip, per_seat)]


def action(kind: str, answer: Any) -> int:
    """The index of ``answer``: its card's place in ``DECK``, or ``PASS_ACTION``."""
    if answer == PASS:
        return PASS_ACTION
    return _INDEX[answer]


def refuse(settings: dict[str, Any]) -> str | None:
    """Every Sixes game fits the action space."""
    return None


def answer(index: int) -> Any:
    """The protocol answer of action ``index``: a card, or ``"pass"``."""
    if not 0 <= index < ACTIONS:
        raise ValueError(f"action {index} is not one of 0..{ACTIONS - 1}")
    return PASS if index == PASS_ACTION else DECK[index]
