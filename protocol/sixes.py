"""The Sixes part of the protocol: what a seat sees, what it answers, what it is told.

Cards are short strings, rank then suit: ``"6o"`` is the 6 of oros, ``"12b"`` the king
of bastos. Ranks are those printed on a Spanish deck, low to high: ``1`` (ace) to ``7``,
then ``10`` sota (jack), ``11`` caballo (knight), ``12`` rey (king); there are no 8s or
9s. Suits: ``o`` oros (diamonds), ``c`` copas (hearts), ``e`` espadas (spades), ``b``
bastos (clubs). ``RANKS``, ``SUITS`` and ``DECK`` below list them in order.

Request kind:

- ``"play"``: play one card. ``legal`` lists the playable cards of your hand (a 6 of a
  suit not yet on the table, or the card next to either end of a suit's run), in the
  order of your hand; or it is ``["pass"]`` when none is playable, and passing costs
  one chip (nothing if you have none). The first turn of a round is the holder of the
  6 of oros, whose only legal answer is ``"6o"``.

Rounds and turns are numbered from 1; every play or pass is a turn.
"""

from __future__ import annotations

import msgspec

GAME = "sixes"
RANKS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
"""Ranks low to high: sota 10, caballo 11, rey 12."""
SUITS: tuple[str, ...] = ("o", "c", "e", "b")
"""Oros, copas, espadas, bastos: the order of ``View.table`` and of a sorted hand."""
DECK: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in RANKS)
"""The 40 cards, by suit then rank."""
FIRST_CARD = "6o"
"""The 6 of oros: its holder opens every round with it."""
PASS = "pass"
"""The answer of a seat with no playable card."""

Card = str


def rank(card: Card) -> int:
    """``12`` for ``"12b"``."""
    return int(card[:-1])


def suit(card: Card) -> str:
    """``"b"`` for ``"12b"``."""
    return card[-1]


class View(msgspec.Struct, frozen=True):
    """All that one seat may see when it is asked to decide."""

    seat: int
    players: int
    round: int
    turn: int
    hand: tuple[Card, ...]
    """Your cards, by suit (``SUITS`` order) then rank."""
    table: dict[str, tuple[int, int] | None]
    """For each suit letter, the ``[lowest, highest]`` rank of its run on the table, or
    ``null`` before its 6 is played. Every rank between the two is on the table."""
    chips: tuple[int, ...]
    """Each seat's chips now."""
    pot: int
    """Chips paid into the pot this round; the round's winner takes them."""
    hand_sizes: tuple[int, ...]
    """How many cards each seat holds."""
    to_move: int
    """The seat asked (yours)."""


# --- events ----------------------------------------------------------------------------
# Events hold tuples, not lists: they are immutable, and a decoded replay compares
# equal to a freshly simulated one.


class Deal(msgspec.Struct, tag="deal", frozen=True):
    """A round was dealt. Replay only: every hand is in it, so bots never receive it."""

    round: int
    hands: tuple[tuple[Card, ...], ...]
    starter: int
    """The seat holding the 6 of oros, who plays first."""


class RoundStart(msgspec.Struct, tag="round_start", frozen=True):
    """A round was dealt: (for the receiving seat) its hand, and who starts."""

    round: int
    hand: tuple[Card, ...]
    starter: int
    hand_sizes: tuple[int, ...]


class Play(msgspec.Struct, tag="play", frozen=True):
    """``seat`` played ``card``."""

    seat: int
    card: Card


class Pass(msgspec.Struct, tag="pass", frozen=True):
    """``seat`` could not play and paid ``paid`` chips (1, or 0 when it had none) into
    the pot, which now holds ``pot``."""

    seat: int
    paid: int
    pot: int


class RoundEnd(msgspec.Struct, tag="round_end", frozen=True):
    """``winner`` emptied their hand first and took the ``pot``; ``chips`` after it."""

    round: int
    winner: int
    pot: int
    chips: tuple[int, ...]


class GameEnd(msgspec.Struct, tag="game_end", frozen=True):
    """The game ended: final chips and 1-based ranks (most chips first, ties share)."""

    chips: tuple[int, ...]
    ranks: tuple[int, ...]


Event = Deal | RoundStart | Play | Pass | RoundEnd | GameEnd
