"""The 6 nimmt! part of the protocol: what a seat sees, what it answers, what it is told.

Request kinds:

- ``"play"``: choose the card to play this turn; ``legal`` lists the cards in hand.
- ``"row"``: the card ``view.card`` is lower than every row's end; choose the row
  (0-3) to take. ``legal`` is ``[0, 1, 2, 3]``.

Rounds and turns are numbered from 1. Rows are listed left (first card) to right (end).
"""

from __future__ import annotations

import msgspec

GAME = "nimmt"
DECK_SIZE = 104
ROWS = 4
ROW_CAPACITY = 5
HAND_SIZE = 10


def heads(card: int) -> int:
    """Penalty heads on a card (RULES.md §1): 55 has 7, other multiples of 11 have 5,
    multiples of 10 have 3, other cards ending in 5 have 2, every other card 1."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


HEADS: tuple[int, ...] = tuple(heads(c) if c else 0 for c in range(DECK_SIZE + 1))
"""``HEADS[card]`` for cards 1..104 (index 0 is unused)."""


class View(msgspec.Struct, frozen=True):
    """All that one seat may see when it is asked to decide."""

    seat: int
    players: int
    round: int
    turn: int
    hand: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    """Each seat's total heads from the rounds already finished."""
    round_heads: tuple[int, ...]
    """Heads each seat has taken so far in this round."""
    revealed: tuple[tuple[tuple[int, int], ...], ...]
    """This round's revealed turns (for a ``"row"`` request, the current one too): for
    each, the ``[card, seat]`` pairs in placement order."""
    card: int | None = None
    """For a ``"row"`` request: the card being placed."""


# --- events ----------------------------------------------------------------------------
# Events hold tuples, not lists: they are immutable, and a decoded replay compares
# equal to a freshly simulated one.


class Deal(msgspec.Struct, tag="deal", frozen=True):
    """A round was dealt. Replay only: every hand is in it, so bots never receive it."""

    round: int
    rows: tuple[tuple[int, ...], ...]
    hands: tuple[tuple[int, ...], ...]


class RoundStart(msgspec.Struct, tag="round_start", frozen=True):
    """A round was dealt: the starting rows, and (for the receiving seat) its hand."""

    round: int
    rows: tuple[tuple[int, ...], ...]
    hand: tuple[int, ...]


class Reveal(msgspec.Struct, tag="reveal", frozen=True):
    """Every seat's card for the turn, as ``[card, seat]`` pairs, lowest card first."""

    round: int
    turn: int
    plays: tuple[tuple[int, int], ...]


class Place(msgspec.Struct, tag="place", frozen=True):
    """``card`` of ``seat`` went to ``row``; ``taken`` are the cards it took (if any).

    ``chosen`` is true when the row was chosen because the card was lower than every
    row end (rule 5).
    """

    seat: int
    card: int
    row: int
    taken: tuple[int, ...]
    chosen: bool = False


class RoundEnd(msgspec.Struct, tag="round_end", frozen=True):
    """A round ended: heads taken in it by each seat, and each seat's total."""

    round: int
    heads: tuple[int, ...]
    scores: tuple[int, ...]


class GameEnd(msgspec.Struct, tag="game_end", frozen=True):
    """The game ended: final totals and 1-based ranks by the rules (ties share)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Deal | RoundStart | Reveal | Place | RoundEnd | GameEnd
