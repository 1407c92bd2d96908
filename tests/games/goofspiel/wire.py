"""What a Goofspiel seat sees and is told.

Request kind ``"bid"``: every seat at once, hidden, bids one card of its hand for the
prize ``view.prize``; ``legal`` lists the hand, lowest first. Turns count from 1.
"""

from __future__ import annotations

import msgspec

GAME = "goofspiel"


class View(msgspec.Struct, frozen=True):
    """All one seat may see when it bids."""

    seat: int
    players: int
    turn: int
    prize: int
    """The prize card at stake: worth its number."""
    hand: tuple[int, ...]
    """Your bid cards left, lowest first."""
    scores: tuple[int, ...]
    """Prize points won so far, per seat."""
    prizes_left: tuple[int, ...]
    """The prizes not yet revealed, lowest first (their order is hidden)."""
    bids: tuple[tuple[int, ...], ...]
    """Every turn so far: each seat's bid, in seat order."""


class Prize(msgspec.Struct, tag="prize", frozen=True):
    """A prize card was turned up for ``turn``."""

    turn: int
    card: int


class Bids(msgspec.Struct, tag="bids", frozen=True):
    """The bids of ``turn`` were revealed; ``winner`` took the prize (``None``: a tie
    for the highest bid, and the prize is discarded)."""

    turn: int
    bids: tuple[int, ...]
    prize: int
    winner: int | None


class GameEnd(msgspec.Struct, tag="game_end", frozen=True):
    """The game ended: prize points per seat and 1-based ranks (ties share)."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Prize | Bids | GameEnd
