"""Sixes' frames: deals, every play and pass, round ends."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from arena.games.sixes import rules as sixes_rules
from arena.play.replay import Header, Step
from arena.web.frames import Frame, Heading, TableFrames, count, follow
from protocol import sixes as sixes_protocol

SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
FRENCH_SUITS = {"o": "diamonds", "c": "hearts", "e": "spades", "b": "clubs"}
RANK_NAMES = {1: "ace", 10: "sota", 11: "caballo", 12: "rey"}


class SixesFrames:
    """The four suit runs, every hand, chips and the pot: a frame per event."""

    drawer = "sixes"

    def heading(self, header: Header) -> Heading:
        settings = header.settings
        return Heading(
            f"{settings.get('chips', 10)} chips each · at most {settings.get('max_rounds', 100)} rounds",
            "chips",
            {
                "suits": [{"suit": s, "name": SUIT_NAMES[s], "french": FRENCH_SUITS[s]} for s in sixes_protocol.SUITS],
                "ranks": list(sixes_protocol.RANKS),
                "rank_names": {str(r): name for r, name in RANK_NAMES.items()},
            },
        )

    def frames(self, header: Header, steps: Iterable[Step]) -> Iterator[list[Frame]]:
        return follow(_Table(header), steps)


class _Table(TableFrames):
    """The table as the events build it, checked against the rules' state after each step."""

    def __init__(self, header: Header) -> None:
        super().__init__(header)
        self.hands: list[list[str]] = [[] for _ in range(self.players)]
        self.table: tuple[tuple[int, int] | None, ...] = (None,) * len(sixes_protocol.SUITS)
        self.chips = [int(header.settings.get("chips", 10))] * self.players
        self.pot = 0
        self.to_move: int | None = None

    def runs(self) -> list[list[str]]:
        """Each suit's cards on the table, lowest first (``SUITS`` order)."""
        return [
            [f"{r}{s}" for r in sixes_protocol.RANKS if run is not None and run[0] <= r <= run[1]]
            for s, run in zip(sixes_protocol.SUITS, self.table, strict=True)
        ]

    def snapshot(self) -> Frame:
        return {
            "runs": self.runs(),
            "hands": [list(hand) for hand in self.hands],
            "chips": list(self.chips),
            "scores": list(self.chips),
            "pot": self.pot,
            "to_move": self.to_move,
        }

    def event(self, event: Any, step: Step, last: bool) -> None:
        # who moves next is the rules' business: known from the state once the step's
        # last event is shown, unknown (null) in between
        self.to_move = step.state.to_move if last and not step.state.over else None
        self.follow(event)

    def follow(self, event: Any) -> None:
        letters = self.letters
        match event:
            case sixes_protocol.Deal(round=round_no, hands=hands, starter=starter):
                self.round, self.turn = round_no, 0
                self.hands = [list(hand) for hand in hands]
                self.table = (None,) * len(sixes_protocol.SUITS)
                self.pot = 0
                chips = " · ".join(f"{letters[s]} {c}" for s, c in enumerate(self.chips))
                self.add(
                    "deal",
                    f"Round {round_no} · dealt; {letters[starter]} holds the 6 of oros and starts · chips {chips}",
                )
            case sixes_protocol.Play(seat=seat, card=card):
                self.turn += 1
                self.hands[seat].remove(card)
                self.table = sixes_rules.place(self.table, card)
                left = count(len(self.hands[seat]), "card")
                self.add(
                    "play",
                    f"Turn {self.turn} · {letters[seat]} plays the {card_name(card)} ({left} left)",
                    {
                        "seat": seat,
                        "card": card,
                    },
                )
            case sixes_protocol.Pass(seat=seat, paid=paid, pot=pot):
                self.turn += 1
                self.chips[seat] -= paid
                self.pot = pot
                pays = f"pays {count(paid, 'chip')} (pot {pot})" if paid else "has no chip to pay"
                self.add(
                    "pass",
                    f"Turn {self.turn} · {letters[seat]} cannot play: passes and {pays}",
                    {
                        "seat": seat,
                        "pass": True,
                        "paid": paid,
                    },
                )
            case sixes_protocol.RoundEnd(round=round_no, winner=winner, pot=pot, chips=chips):
                self.chips = list(chips)
                self.pot = 0
                self.add(
                    "round_end",
                    f"End of round {round_no} · {letters[winner]} emptied their hand first and takes the pot of {pot}",
                    {"seat": winner, "pot": pot},
                )
            case sixes_protocol.GameEnd(chips=chips, ranks=ranks):
                self.chips = list(chips)
                self.ranks = list(ranks)
                self.add("game_end", "Game over")

    def check(self, state: Any) -> None:
        """The table followed from the events must be the rules' own after each step."""
        hands = tuple(tuple(hand) for hand in self.hands)
        same = hands == state.hands and self.table == state.table and list(state.chips) == self.chips
        if not same or (not state.over and state.pot != self.pot):
            raise self.parted(state)


def card_name(card: str) -> str:
    """``"sota of copas"`` for ``"10c"``, ``"7 of oros"`` for ``"7o"``."""
    rank = sixes_protocol.rank(card)
    return f"{RANK_NAMES.get(rank, str(rank))} of {SUIT_NAMES[sixes_protocol.suit(card)]}"
