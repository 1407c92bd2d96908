"""What a Liar's dice seat sees and is told.

Request kind ``"bid"``: one seat at a time. An answer is a bid ``[quantity, face]``,
higher than the round's last (more dice, or as many of a higher face), or ``"liar"``
(not as the round's first answer): the last bid is wrong. ``legal`` lists every answer
allowed, the call first when it is allowed, then bids from the lowest.
"""

from __future__ import annotations

import msgspec

GAME = "liars-dice"

Answer = str | tuple[int, int]
"""``"liar"``, or a bid: ``(quantity, face)`` (JSON ``[quantity, face]``)."""


class View(msgspec.Struct, frozen=True):
    """All one seat may see when it answers."""

    seat: int
    players: int
    round: int
    chips: tuple[int, ...]
    """Each seat's chips: the score. A seat without chips sits out."""
    dice: tuple[int, ...]
    """Your dice this round, lowest first (the others' are hidden)."""
    dice_in_play: int
    """Every seat's dice this round, together: the most a bid may claim."""
    bids: tuple[tuple[int, int, int], ...]
    """This round's bids so far: (seat, quantity, face)."""


class Roll(msgspec.Struct, tag="roll", frozen=True):
    """A round began: each seat in play rolled its dice (each seat is told its own only:
    the others' entries are empty)."""

    round: int
    dice: tuple[tuple[int, ...], ...]


class Bid(msgspec.Struct, tag="bid", frozen=True):
    round: int
    seat: int
    quantity: int
    face: int


class Call(msgspec.Struct, tag="call", frozen=True):
    """``seat`` called the last bid (``bidder``'s) a lie: every die is shown, ``count``
    of them show the face, and ``loser`` paid a chip to the other."""

    round: int
    seat: int
    bidder: int
    quantity: int
    face: int
    count: int
    loser: int
    dice: tuple[tuple[int, ...], ...]


class GameEnd(msgspec.Struct, tag="game_end", frozen=True):
    """The game ended: chips per seat and 1-based ranks (ties share)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Roll | Bid | Call | GameEnd
