"""6 nimmt! for a bot that searches: a table it can copy and play forward fast, and the
deals of the cards it has not seen.

    from protocol.nimmt_search import Seen, Table, random_row

    seen = Seen()                              # seen.events(events) in the bot's events
    table = Table.from_view(view, seen.cards)  # the seat's view; the other hands empty
    rng = random.Random(1)
    for card in view.hand:
        trial = table.copy()
        trial.deal(rng)                        # the unseen cards, as they might lie
        trial.play_turn(trial.chosen(view.seat, card, rng), random_row(rng))
        heads = trial.playout(rng)[view.seat]  # the rest of the round at random

The rules are the standard ones (docs/rules.md §2-§4): a card goes to the row whose end
is the highest below it, a sixth card takes the row, a card lower than every end takes
a row of its player's choice. Other rule sets raise ``ValueError`` in ``from_view``.
tests/games/test_nimmt_search.py plays thousands of games here and through the
referee's own rules, card for card, and asks both for the same rows and heads.

Rows are kept sorted by their last card, so finding a card's row is one ``bisect``;
``positions`` maps each back to the row's place on the table (the arena's row number).
Random play is a random order of each hand, drawn once a round: the same as a uniform
choice at every turn.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence

from protocol.nimmt import DECK_SIZE, HAND_SIZE, HEADS, ROW_CAPACITY, RoundStart, View

RowChooser = Callable[["Table", int, int], int]
"""``(table, seat, card) -> i``: which row (an index into ``table.rows``) the seat takes
when its card is lower than every row's end."""


def random_row(rng: random.Random) -> RowChooser:
    """A row chosen at random, as the arena's random bot chooses it."""
    return lambda table, seat, card: rng.randrange(4)


def cheapest_row(table: Table, seat: int, card: int) -> int:
    """The row with the fewest heads (of those, the first on the table)."""
    heads = table.heads
    best = min(heads)
    return min((p, i) for i, (h, p) in enumerate(zip(heads, table.positions, strict=True)) if h == best)[1]


class Seen:
    """The cards of this round a seat has seen that its view may no longer show: the
    round's first rows (a row taken is gone from ``view.rows``). Feed it ``events``."""

    def __init__(self) -> None:
        self.cards: set[int] = set()

    def events(self, events: Iterable[object]) -> None:
        for event in events:
            if isinstance(event, RoundStart):
                self.cards = {card for row in event.rows for card in row}


class Table:
    """One round of a table in play: rows (sorted by their last card), each seat's hand,
    the heads taken. ``copy`` is a few list copies."""

    __slots__ = ("ends", "heads", "hands", "players", "positions", "round_heads", "rows", "top", "unseen")

    def __init__(self, rows: Sequence[Sequence[int]], hands: Sequence[Sequence[int]], top: int = DECK_SIZE) -> None:
        order = sorted(range(len(rows)), key=lambda i: rows[i][-1])
        self.rows = [list(rows[i]) for i in order]
        self.positions = order
        self.ends = [row[-1] for row in self.rows]
        self.heads = [sum(HEADS[c] for c in row) for row in self.rows]
        self.hands = [list(hand) for hand in hands]
        self.players = len(hands)
        self.round_heads = [0] * self.players
        self.top = top
        self.unseen: list[int] = []

    @classmethod
    def from_view(cls, view: View, seen: Iterable[int] = ()) -> Table:
        """The table as ``view``'s seat sees it: its own hand, every other hand empty
        until ``deal`` fills it from ``unseen`` (every card not in the hand, the rows,
        this round's revealed cards or ``seen``)."""
        if view.variant != "standard" or view.keep_rows or view.shedding or view.cards_per_turn != 1:
            raise ValueError("protocol.nimmt_search plays the standard rules only (one card a turn)")
        table = cls(view.rows, [view.hand if s == view.seat else () for s in range(view.players)], view.top_card)
        known = set(view.hand).union(*view.rows, seen, (c for turn in view.revealed for c, _ in turn))
        table.unseen = [c for c in range(1, view.top_card + 1) if c not in known]
        table.round_heads = list(view.round_heads)
        return table

    def copy(self) -> Table:
        other = Table.__new__(Table)
        other.rows = [row[:] for row in self.rows]
        other.positions = self.positions[:]
        other.ends = self.ends[:]
        other.heads = self.heads[:]
        other.hands = [hand[:] for hand in self.hands]
        other.players = self.players
        other.round_heads = self.round_heads[:]
        other.top = self.top
        other.unseen = self.unseen
        return other

    def deal(self, rng: random.Random, sizes: Sequence[int] | None = None) -> None:
        """Deal the unseen cards at random to every seat whose hand is empty: as many
        as ``sizes`` says (default: as many as the largest hand holds)."""
        empty = [s for s, hand in enumerate(self.hands) if not hand]
        if not empty:
            return
        size = max(len(hand) for hand in self.hands)
        wanted = [sizes[s] if sizes is not None else size for s in empty]
        drawn = rng.sample(self.unseen, sum(wanted))
        at = 0
        for seat, n in zip(empty, wanted, strict=True):
            self.hands[seat] = drawn[at : at + n]
            at += n

    def place(self, card: int, seat: int, choose: RowChooser) -> int:
        """Put ``card`` of ``seat`` on its row; the heads it takes (also added to
        ``round_heads``)."""
        ends = self.ends
        k = bisect_left(ends, card)
        if k:
            i = k - 1
            row = self.rows[i]
            ends[i] = card
            if len(row) < ROW_CAPACITY:
                row.append(card)
                self.heads[i] += HEADS[card]
                return 0
            taken = self.heads[i]
            self.rows[i] = [card]
            self.heads[i] = HEADS[card]
        else:
            i = choose(self, seat, card)
            taken = self.heads.pop(i)
            del self.rows[i], ends[i]
            self.positions.insert(0, self.positions.pop(i))
            self.rows.insert(0, [card])
            self.heads.insert(0, HEADS[card])
            ends.insert(0, card)
        self.round_heads[seat] += taken
        return taken

    def play_turn(self, cards: Sequence[int], choose: RowChooser) -> None:
        """One turn: ``cards[seat]`` is each seat's card (taken from its hand), placed
        lowest first."""
        for seat, card in enumerate(cards):
            self.hands[seat].remove(card)
        for x in sorted(card * 16 + seat for seat, card in enumerate(cards)):
            self.place(x >> 4, x & 15, choose)

    def chosen(self, seat: int, card: int, rng: random.Random) -> list[int]:
        """A turn's cards: ``card`` for ``seat``, a random one of every other hand."""
        return [card if s == seat else hand[rng.randrange(len(hand))] for s, hand in enumerate(self.hands)]

    def playout(self, rng: random.Random, choose: RowChooser | None = None, shuffled: bool = False) -> list[int]:
        """Play the rest of the round at random (each hand in a random order, rows
        chosen by ``choose``, at random by default); every seat's heads this round.
        ``shuffled``: the hands are in a random order already (as ``deal`` leaves the
        hands it deals)."""
        choose = choose or random_row(rng)
        place = self.place
        hands = self.hands
        if not shuffled:
            for hand in hands:
                rng.shuffle(hand)
        for turn in range(len(hands[0])):
            for x in sorted([hand[turn] * 16 + seat for seat, hand in enumerate(hands)]):
                place(x >> 4, x & 15, choose)
        for hand in hands:
            hand.clear()
        return self.round_heads

    @property
    def table_rows(self) -> list[list[int]]:
        """The rows in the table's order (row 0 first), as a view lists them."""
        placed: list[list[int]] = [[] for _ in self.rows]
        for position, row in zip(self.positions, self.rows, strict=True):
            placed[position] = row
        return placed


CARDS = tuple(range(1, DECK_SIZE + 1))


def random_game(players: int, rng: random.Random, target: int = 66) -> list[int]:
    """A whole game at random (standard rules, 104 cards) to ``target`` heads: each
    round dealt from a shuffled deck and played out; the final scores."""
    scores = [0] * players
    dealt = HAND_SIZE * players
    choose = random_row(rng)
    while max(scores) < target:
        deck = rng.sample(CARDS, dealt + 4)
        table = Table([[c] for c in deck[dealt:]], [deck[s * HAND_SIZE : (s + 1) * HAND_SIZE] for s in range(players)])
        for seat, heads in enumerate(table.playout(rng, choose, shuffled=True)):
            scores[seat] += heads
    return scores
