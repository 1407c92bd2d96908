"""A Liar's dice bot: it expects a sixth of the dice it cannot see to show any face,
bids the face it holds most of as far as that expectation goes, and calls a bid that
claims more than it expects (``python3 bot.py bold``: it expects half again as many;
``python3 bot.py quoted``: it sends each bid's numbers as strings, a mistake to check).

The SDK knows nothing of Liar's dice, so the bot registers its own copy of the view's
wire type (``register_game``); a bot folder holds all it runs with."""

import sys
from typing import Any

import msgspec

from protocol.bot import Bot, register_game, run


class View(msgspec.Struct, frozen=True):
    seat: int
    players: int
    round: int
    chips: tuple[int, ...]
    dice: tuple[int, ...]
    dice_in_play: int
    bids: tuple[tuple[int, int, int], ...]


class Liar(Bot):
    name = "liar"
    version = "1.0.0"
    games = ("liars-dice",)

    def __init__(self, boldness: float) -> None:
        self.boldness = boldness

    def expected(self, view: View, face: int) -> float:
        unseen = view.dice_in_play - len(view.dice)
        return view.dice.count(face) + self.boldness * unseen / 6

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        if not isinstance(view, View):  # the registration failed: say so where the arena keeps it
            raise SystemExit(f"expected a typed view, got {type(view).__name__}")
        bids = [tuple(a) for a in legal if a != "liar"]
        if view.bids:
            _, quantity, face = view.bids[-1]
            if quantity > self.expected(view, face) or not bids:
                return "liar"
        best = max(range(1, 7), key=lambda f: (view.dice.count(f), f))
        for quantity, face in bids:
            if face == best and quantity <= max(1, self.expected(view, face)):
                return [quantity, face]
        return "liar" if "liar" in legal else list(bids[0])


class Quoted(Liar):
    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        answer = super().decide(kind, view, legal)
        return [str(n) for n in answer] if isinstance(answer, list) else answer


if __name__ == "__main__":
    register_game("liars-dice", View, Any)
    mode = sys.argv[1:]
    run(Quoted(1.0) if mode == ["quoted"] else Liar(1.5 if mode == ["bold"] else 1.0))
