"""6 nimmt! as arrays (``protocol.arrays``): the observation of a seat's view, the 108 actions.

Actions: index ``c - 1`` plays (or, in a logical draft, takes) card ``c`` (1..104);
index ``104 + r`` takes row ``r`` (0..3) in a row choice. ``cards_per_turn = 2`` answers
pairs, which this fixed space does not hold: the arena's environment refuses it.

The observation, every entry a whole number (``observation_size(players)`` of them):

====================  ==========================================================
``0:3``               the request: ``play``, ``row``, ``draft`` (one-hot; all 0: not asked)
``3:107``             the hand: 1 at ``3 + c - 1`` for each card ``c`` held
``107:127``           the rows, 5 slots each, left to right: a card, or 0 for none
``127:131``           each row's length
``131:135``           each row's heads
``135:239``           the cards revealed this round (1 each)
``239:343``           the cards on offer in a logical draft (1 each)
``343``               the card being placed, in a row choice (else 0)
``344:348``           round, turn, ``top_card``, players
then ``3 x players``  scores, heads this round, hand sizes: each seat-relative
                      (the seat itself first, then the seats after it)
====================  ==========================================================
"""

from __future__ import annotations

from typing import Any

from protocol.arrays import clip, relative
from protocol.nimmt import DECK_SIZE, HEADS, ROW_CAPACITY, ROWS

GAME = "nimmt"
KINDS = ("play", "row", "draft")
ROW_ACTIONS = DECK_SIZE
"""The index of row 0's action: the cards come first."""
ACTIONS = DECK_SIZE + ROWS
FIXED = len(KINDS) + 3 * DECK_SIZE + ROWS * ROW_CAPACITY + 2 * ROWS + 5
"""The entries before the per-seat ones."""


def observation_size(players: int) -> int:
    return FIXED + 3 * players


def observation(kind: str | None, view: dict[str, Any]) -> list[int]:
    """``view`` (the protocol's dict of a ``protocol.nimmt.View``) as whole numbers."""
    asked = [int(kind == k) for k in KINDS]
    hand = [0] * DECK_SIZE
    for card in view["hand"]:
        hand[card - 1] = 1
    rows = view["rows"]
    slots = [0] * (ROWS * ROW_CAPACITY)
    for r, row in enumerate(rows[:ROWS]):
        for i, card in enumerate(row[:ROW_CAPACITY]):
            slots[r * ROW_CAPACITY + i] = card
    lengths = [len(rows[r]) if r < len(rows) else 0 for r in range(ROWS)]
    heads = [sum(HEADS[c] for c in rows[r]) if r < len(rows) else 0 for r in range(ROWS)]
    revealed = [0] * DECK_SIZE
    for turn in view["revealed"]:
        for card, _seat in turn:
            revealed[card - 1] = 1
    offer = [0] * DECK_SIZE
    for card in view.get("offer", ()):
        offer[card - 1] = 1
    seat = view["seat"]
    players = view["players"]
    sizes = view.get("hand_sizes") or [len(view["hand"])] * players
    counters = [view["card"] or 0, view["round"], view["turn"], view.get("top_card", DECK_SIZE), players]
    per_seat = relative(view["scores"], seat) + relative(view["round_heads"], seat) + relative(sizes, seat)
    return [*asked, *hand, *slots, *lengths, *heads, *revealed, *offer, *map(clip, counters), *map(clip, per_seat)]


def action(kind: str, answer: Any) -> int:
    """The index of ``answer`` to a ``kind`` request: a row's for ``"row"``, else a card's."""
    if kind == "row":
        return ROW_ACTIONS + int(answer)
    if isinstance(answer, list | tuple):
        raise ValueError(f"a pair of cards {answer!r} has no action: cards_per_turn = 2 is not in the action space")
    return int(answer) - 1


def refuse(settings: dict[str, Any]) -> str | None:
    """Why these settings have no fixed action space (``cards_per_turn = 2``), or ``None``."""
    if settings.get("cards_per_turn", 1) != 1:
        return (
            "cards_per_turn = 2 answers a pair of cards a turn, which the fixed action space"
            " (104 cards, 4 rows: one answer an action) does not hold: use cards_per_turn = 1"
        )
    return None


def answer(index: int) -> Any:
    """The protocol answer of action ``index``: a card (1..104), or a row (0..3)."""
    if not 0 <= index < ACTIONS:
        raise ValueError(f"action {index} is not one of 0..{ACTIONS - 1}")
    return index + 1 if index < ROW_ACTIONS else index - ROW_ACTIONS
