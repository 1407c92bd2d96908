"""A Goofspiel bot: bids the card of its hand nearest the prize, the lower on a tie
(``python3 bot.py high``: always its highest card; ``low``: its lowest).

The SDK knows nothing of Goofspiel, so the bot registers its own copy of the view's
wire type (``register_game``); the events it leaves untyped. A bot folder holds all it
runs with, so it does not import the arena's copy of these types."""

import sys
from typing import Any

import msgspec

from protocol.bot import Bot, register_game, run


class View(msgspec.Struct, frozen=True):
    seat: int
    players: int
    turn: int
    prize: int
    hand: tuple[int, ...]
    scores: tuple[int, ...]
    prizes_left: tuple[int, ...]
    bids: tuple[tuple[int, ...], ...]


class Bidder(Bot):
    name = "goofspiel-matcher"
    version = "1.0.0"
    games = ("goofspiel",)

    def __init__(self, strategy: str) -> None:
        self.strategy = strategy

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        if not isinstance(view, View):  # the registration failed: say so where the arena keeps it
            raise SystemExit(f"expected a typed view, got {type(view).__name__}")
        if self.strategy == "high":
            return max(legal)
        if self.strategy == "low":
            return min(legal)
        return min(legal, key=lambda card: (abs(card - view.prize), card))


if __name__ == "__main__":
    register_game("goofspiel", View, Any)
    run(Bidder(sys.argv[1] if len(sys.argv) > 1 else "match"))
