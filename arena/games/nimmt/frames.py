"""6 nimmt!'s frames: deals, draft picks, reveals, each card placed, rows taken, round ends."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from arena.play.replay import Header, Step
from arena.web.frames import Frame, Heading, TableFrames, count, follow
from protocol import nimmt as nimmt_protocol


class NimmtFrames:
    """The rows, every hand and pile, the cards face up: a frame per event."""

    drawer = "nimmt"

    def heading(self, header: Header) -> Heading:
        settings = header.settings
        shedding = bool(settings.get("shedding", False))
        parts = [str(settings.get("variant", "standard"))]
        if int(settings.get("cards_per_turn", 1)) == 2:
            parts.append("2 cards a turn")
        if settings.get("keep_rows", False):
            parts.append("rows kept")
        if shedding:
            parts.append("shedding")
        if settings.get("rounds"):
            parts.append(count(int(settings["rounds"]), "round"))
        elif not shedding:
            parts.append(f"to {settings.get('end_score', 66)} heads")
        # shedding scores the cards left in hand, not heads
        return Heading(" · ".join(parts), "cards" if shedding else "heads", {"heads": list(nimmt_protocol.HEADS)})

    def frames(self, header: Header, steps: Iterable[Step]) -> Iterator[list[Frame]]:
        return follow(_Table(header), steps)


class _Table(TableFrames):
    """The table as the events build it, checked against the rules' state after each step."""

    def __init__(self, header: Header) -> None:
        super().__init__(header)
        settings = header.settings
        players = header.players
        self.shedding = bool(settings.get("shedding", False))
        self.keep_rows = bool(settings.get("keep_rows", False))
        self.professional = settings.get("variant") == "professional"
        self.rows: list[list[int]] = []
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.scores = [0] * players
        self.round_heads = [0] * players
        self.piles: list[list[int]] = [[] for _ in range(players)]
        self.revealed: list[list[int]] = []
        self.offer: list[int] = []

    def new_round(self, round_no: int) -> None:
        self.round = round_no
        self.turn = 0

    def snapshot(self) -> Frame:
        return {
            "rows": [list(row) for row in self.rows],
            "hands": [list(hand) for hand in self.hands],
            "piles": [list(pile) for pile in self.piles],
            "revealed": [list(play) for play in self.revealed],
            "offer": list(self.offer),
            "scores": [len(hand) for hand in self.hands] if self.shedding else list(self.scores),
            "round_heads": list(self.round_heads),
        }

    def event(self, event: Any, step: Step, last: bool) -> None:
        letters = self.letters
        match event:
            case nimmt_protocol.DraftStart(round=round_no, offer=offer, first=first):
                self.new_round(round_no)
                self.rows, self.offer, self.revealed = [], list(offer), []
                self.hands = [[] for _ in range(self.players)]
                self.reset_round()
                self.add(
                    "draft",
                    f"Round {round_no} · the draft: {count(len(offer), 'card')} face up, {letters[first]} picks first",
                )
            case nimmt_protocol.Pick(seat=seat, card=card):
                self.offer.remove(card)
                self.hands[seat] = sorted([*self.hands[seat], card])
                heads = nimmt_protocol.HEADS[card]
                self.add("pick", f"{letters[seat]} picks {card} ({count(heads, 'head')})", {"seat": seat, "card": card})
            case nimmt_protocol.Deal(round=round_no, rows=rows, hands=hands):
                drafted = self.round == round_no  # the draft began this round
                if not drafted:
                    self.new_round(round_no)
                self.rows = [list(row) for row in rows]
                self.hands = [list(hand) for hand in hands]
                self.offer, self.revealed = [], []
                self.reset_round()
                if drafted:
                    caption = f"Round {round_no} · the draft is over: the 4 cards left start the rows"
                elif self.keep_rows and round_no > 1:
                    caption = f"Round {round_no} · the rows stay on the table; 10 new cards each"
                else:
                    caption = f"Round {round_no} · dealt: 10 cards each, 4 cards start the rows"
                self.add("deal", caption)
            case nimmt_protocol.Reveal(turn=turn, plays=plays):
                self.turn = turn
                for card, seat in plays:
                    self.hands[seat].remove(card)
                self.revealed = [[card, seat] for card, seat in plays]
                shown = " · ".join(f"{letters[seat]} {card}" for card, seat in plays)
                self.add("reveal", f"Turn {turn} · revealed, to be placed lowest first: {shown}")
            case nimmt_protocol.Place():
                self.place(event)
            case nimmt_protocol.RoundEnd(round=round_no, heads=heads, scores=scores):
                self.round_heads = list(heads)
                self.scores = list(scores)
                parts = " · ".join(
                    f"{letters[s]} +{h} = {t}" for s, (h, t) in enumerate(zip(heads, scores, strict=True))
                )
                self.add("round_end", f"End of round {round_no} · {parts}")
            case nimmt_protocol.GameEnd(scores=scores, ranks=ranks):
                self.scores = list(scores)
                self.ranks = list(ranks)
                self.add("game_end", "Game over")

    def reset_round(self) -> None:
        self.piles = [[] for _ in range(self.players)]
        self.round_heads = [0] * self.players

    def place(self, event: nimmt_protocol.Place) -> None:
        seat, card, row, taken = event.seat, event.card, event.row, list(event.taken)
        self.revealed.remove([card, seat])
        who = f"{self.letters[seat]} {card}"
        heads = sum(nimmt_protocol.HEADS[c] for c in taken)
        if taken:
            self.rows[row] = [card]
            if self.shedding:
                self.hands[seat] = sorted(self.hands[seat] + taken)
            else:
                self.piles[seat] += taken
                self.round_heads[seat] += heads
            worth = "into hand" if self.shedding else count(heads, "head")
            took = f"takes {count(len(taken), 'card')} ({' '.join(map(str, taken))}), {worth}"
        elif event.end == "left":
            self.rows[row].insert(0, card)
        else:
            self.rows[row].append(card)
        where = f"row {row}, left end" if event.end == "left" else f"row {row}"
        if event.chosen:
            fits = "fits no row end" if self.professional else "is lower than every row"
            caption = f"{who} {fits}: {self.letters[seat]} chooses row {row} and {took}"
        elif taken:
            caption = f"{who} is the 6th card of {where}: {self.letters[seat]} {took}"
        else:
            caption = f"{who} → {where}"
        move = {
            "seat": seat,
            "card": card,
            "row": row,
            "end": event.end,
            "taken": taken,
            "heads": 0 if self.shedding else heads,
            "chosen": event.chosen,
            "sixth": bool(taken) and not event.chosen,
        }
        self.add("place", caption, move)

    def check(self, state: Any) -> None:
        """The table followed from the events must be the rules' own after each step."""
        rows = tuple(tuple(row) for row in self.rows)
        hands = tuple(tuple(hand) for hand in self.hands)
        same = rows == state.rows and hands == state.hands
        if self.shedding:
            same = same and (not state.over or list(state.scores) == [len(hand) for hand in self.hands])
        else:
            same = same and list(state.scores) == self.scores
            same = same and (state.over or list(state.round_heads) == self.round_heads)
        if not same:
            raise self.parted(state)
