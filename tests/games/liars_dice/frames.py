"""Liar's dice in the replay viewer: a frame per roll, bid and call, the dice hidden
until a call shows them all (``viewer.js`` beside this file draws these frames)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from arena.play.replay import Header, Step
from arena.web.frames import Frame, Heading, TableFrames, count, follow

from .wire import Bid, Call, GameEnd, Roll

FACES = ("one", "two", "three", "four", "five", "six")


class LiarsFrames:
    """The bids of the round, each seat's chips and dice (hidden until called)."""

    drawer = "liars-dice"

    def heading(self, header: Header) -> Heading:
        settings = header.settings
        dice, chips, rounds = (int(settings.get(k, d)) for k, d in (("dice", 3), ("chips", 3), ("rounds", 8)))
        return Heading(f"{dice_text(dice)} · {count(chips, 'chip')} each · at most {count(rounds, 'round')}", "chips")

    def frames(self, header: Header, steps: Iterable[Step]) -> Iterator[list[Frame]]:
        return follow(_Table(header), steps)


def bid_text(quantity: int, face: int) -> str:
    return f"{quantity} × {FACES[face - 1]}"


def dice_text(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


class _Table(TableFrames):
    """The table as the events build it, checked against the rules' state after each step."""

    def __init__(self, header: Header) -> None:
        super().__init__(header)
        self.chips = [int(header.settings.get("chips", 3))] * self.players
        self.cups = [0] * self.players
        self.dice: list[list[int]] | None = None
        self.bids: list[list[int]] = []
        self.to_move: int | None = None

    def snapshot(self) -> Frame:
        return {
            "chips": list(self.chips),
            "scores": list(self.chips),
            "cups": list(self.cups),
            "dice": None if self.dice is None else [list(d) for d in self.dice],
            "bids": [list(b) for b in self.bids],
            "to_move": self.to_move,
        }

    def event(self, event: Any, step: Step, last: bool) -> None:
        self.to_move = step.state.turn if last and not step.state.over else None
        letters = self.letters
        match event:
            case Roll(round=round_no, dice=dice):
                self.round, self.turn = round_no, 0
                self.cups = [len(d) for d in dice]
                self.dice, self.bids = None, []
                held = " · ".join(f"{letters[s]} {n}" for s, n in enumerate(self.cups) if n)
                self.add("roll", f"Round {round_no} · every seat in play rolls its dice, hidden: {held}")
            case Bid(seat=seat, quantity=quantity, face=face):
                self.turn += 1
                self.bids.append([seat, quantity, face])
                said = bid_text(quantity, face)
                self.add(
                    "bid", f"Turn {self.turn} · {letters[seat]} bids {said}", {"seat": seat, "bid": [quantity, face]}
                )
            case Call(seat=seat, bidder=bidder, quantity=quantity, face=face, count=shown, loser=loser, dice=dice):
                self.turn += 1
                self.dice = [list(d) for d in dice]
                winner = bidder if loser == seat else seat
                self.chips[loser] -= 1
                self.chips[winner] += 1
                held = "holds" if shown >= quantity else "was a lie"
                self.add(
                    "call",
                    f"Turn {self.turn} · {letters[seat]} calls {letters[bidder]}'s {bid_text(quantity, face)}: "
                    f"{dice_text(shown)} {'shows' if shown == 1 else 'show'} {FACES[face - 1]}, the bid {held}; "
                    f"{letters[loser]} pays {letters[winner]} a chip",
                    {"seat": seat, "bidder": bidder, "bid": [quantity, face], "count": shown, "loser": loser},
                )
            case GameEnd(scores=scores, ranks=ranks):
                self.chips = list(scores)
                self.ranks = list(ranks)
                self.add("game_end", "Game over")

    def check(self, state: Any) -> None:
        same = list(state.chips) == self.chips
        if not state.over:
            same = same and [len(d) for d in state.dice] == self.cups and [list(b) for b in state.bids] == self.bids
        if not same:
            raise self.parted(state)
