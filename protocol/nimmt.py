"""The 6 nimmt! part of the protocol: what a seat sees, what it answers, what it is told.

Request kinds:

- ``"play"``: choose the card to play this turn; ``legal`` lists the cards in hand.
- ``"row"``: the card ``view.card`` is lower than every row's end (professional: no end
  of any row can take it); choose the row (0-3) to take. ``legal`` is ``[0, 1, 2, 3]``.
- ``"draft"`` (logical variant only): take one card of ``view.offer`` into your hand;
  ``legal`` lists the cards on offer, lowest first.

With ``cards_per_turn = 2`` a ``"play"`` answer is a pair ``[a, b]``, ``a < b``: ``legal``
lists every pair of distinct cards in hand (a seat holding a single card, which only
shedding allows, answers ``[c]``).

Rounds and turns are numbered from 1. Rows are listed left (first card) to right (end).
A logical round starts with its draft (``DraftStart``, then one ``Pick`` per card) and
then a ``RoundStart`` as in every round.
"""

from __future__ import annotations

from typing import Literal

import msgspec

GAME = "nimmt"
DECK_SIZE = 104
ROWS = 4
ROW_CAPACITY = 5
HAND_SIZE = 10


def heads(card: int) -> int:
    """Penalty heads on a card (docs/rules.md §1): 55 has 7, other multiples of 11 have 5,
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
    """All that one seat may see when it is asked to decide.

    During a logical draft ``hand`` holds the seat's picks so far and ``rows`` is empty:
    the rows are the 4 cards the draft leaves. The fields after ``card`` describe the
    variant; they have defaults, so a bot built before them still decodes its view.
    """

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
    variant: str = "standard"
    """``"standard"``, ``"tactical"``, ``"logical"`` or ``"professional"`` (docs/rules.md §1)."""
    top_card: int = DECK_SIZE
    """The highest card in the game: cards ``1..top_card`` exist (10 x players + 4 in the
    tactical and logical variants, 104 otherwise)."""
    cards_per_turn: int = 1
    """Cards each seat plays per turn (1 or 2); with 2, a ``"play"`` answer is a pair."""
    keep_rows: bool = False
    """True if the rows stay on the table from one round to the next."""
    shedding: bool = False
    """True in the shedding house rule: heads do not count (``scores`` and
    ``round_heads`` stay 0), taken cards go into the taker's hand, and the game (one
    deal, ``round`` stays 1) ends after the first turn that leaves a hand empty, or
    after turn 500; the final scores are the cards left in each hand."""
    hand_sizes: tuple[int, ...] = ()
    """Cards each seat holds now, in seat order (they differ only when shedding)."""
    offer: tuple[int, ...] = ()
    """For a ``"draft"`` request: the cards still on offer, lowest first."""
    picks: tuple[tuple[int, int], ...] = ()
    """Logical variant: this round's draft so far as ``[card, seat]`` pairs in pick order
    (public, so with ``revealed`` it tells every seat's hand)."""


# --- events ----------------------------------------------------------------------------
# Events hold tuples, not lists: they are immutable, and a decoded replay compares
# equal to a freshly simulated one.


class Deal(msgspec.Struct, tag="deal", frozen=True):
    """A round was dealt (logical variant: its draft ended). Replay only: every hand is
    in it, so bots never receive it. With ``keep_rows`` the rows are those kept from the
    round before (from round 2 on)."""

    round: int
    rows: tuple[tuple[int, ...], ...]
    hands: tuple[tuple[int, ...], ...]


class RoundStart(msgspec.Struct, tag="round_start", frozen=True):
    """A round was dealt (or drafted): the starting rows, and (for the receiving seat)
    its hand."""

    round: int
    rows: tuple[tuple[int, ...], ...]
    hand: tuple[int, ...]


class Reveal(msgspec.Struct, tag="reveal", frozen=True):
    """Every seat's card for the turn, as ``[card, seat]`` pairs, lowest card first."""

    round: int
    turn: int
    plays: tuple[tuple[int, int], ...]


class Place(msgspec.Struct, tag="place", frozen=True):
    """``card`` of ``seat`` went to ``row``; ``taken`` are the cards it took (if any:
    into the penalty pile, or into the hand when shedding).

    ``chosen`` is true when the row was chosen because the card was lower than every
    row end (rule 5; professional: because no end of any row could take it). ``end`` says where the card went: ``"right"`` (after the last
    card) or, in the professional variant, ``"left"`` (before the first card); a card
    that takes the row starts it anew either way.
    """

    seat: int
    card: int
    row: int
    taken: tuple[int, ...]
    chosen: bool = False
    end: Literal["right", "left"] = "right"


class DraftStart(msgspec.Struct, tag="draft_start", frozen=True):
    """Logical variant: a round's cards lie face up (``offer``); ``first`` picks first,
    then the seats after it in turn (wrapping), one card each, until each holds 10."""

    round: int
    offer: tuple[int, ...]
    first: int


class Pick(msgspec.Struct, tag="pick", frozen=True):
    """Logical variant: ``seat`` took ``card`` from the offer. After the last pick a
    ``Deal`` gives the hands and the rows (the 4 cards left, lowest first)."""

    round: int
    seat: int
    card: int


class RoundEnd(msgspec.Struct, tag="round_end", frozen=True):
    """A round ended: heads taken in it by each seat, and each seat's total."""

    round: int
    heads: tuple[int, ...]
    scores: tuple[int, ...]


class GameEnd(msgspec.Struct, tag="game_end", frozen=True):
    """The game ended: final totals and 1-based ranks by the rules (ties share).

    When shedding, the scores are the cards left in each hand (no ``RoundEnd`` comes
    before: the game is one deal).
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Deal | RoundStart | DraftStart | Pick | Reveal | Place | RoundEnd | GameEnd
