"""6 nimmt! variants and house rules (docs/rules.md §1 "Variants"): each rule on a small
table, settings validation, seeded random games of every combination re-simulated and
checked for invariants, and the replay viewer's pictures of each."""

from __future__ import annotations

import io
import itertools
import random
from collections import Counter
from typing import Any

import msgspec
import pytest
from rich.console import Console

from arena.games import IllegalAnswer, SettingsError
from arena.games.base import Decision
from arena.games.nimmt import render
from arena.games.nimmt import rules as nimmt
from arena.play import replay
from arena.play.replay import DecisionLine, End, EventsLine, Header, SeatInfo, SeatStatus
from protocol.nimmt import HEADS, Deal, DraftStart, Event, GameEnd, Pick, Place, Reveal, RoundEnd, RoundStart, View

# --- helpers -------------------------------------------------------------------------------


def state_with(rows: list[tuple[int, ...]], hands: list[tuple[int, ...]], **settings: Any) -> nimmt.State:
    """A state at turn 1 of round 1 with these rows and hands."""
    players = len(hands)
    s = nimmt.parse_settings(settings, players)
    zero = (0,) * players
    return nimmt.State(s, players, 0, 1, 1, tuple(rows), tuple(tuple(sorted(h)) for h in hands), zero, zero, ())


def places(events: list[Any]) -> list[Place]:
    return [e for e in events if isinstance(e, Place)]


def play_defaults(state: nimmt.State) -> tuple[nimmt.State, list[Any]]:
    """Play to the end with every seat's default answer."""
    log: list[Any] = []
    while (d := nimmt.decision(state)) is not None:
        state, events = nimmt.apply(state, {s: nimmt.default(state, s) for s in d.seats})
        log += events
    return state, log


Step = tuple[str, tuple[int, ...], list[Any], list[Any]]
"""A decision's kind, seats and answers, and the events they caused."""


def random_game(raw: dict[str, Any], players: int, seed: int) -> tuple[list[Any], list[Step], nimmt.State]:
    """A game with random legal answers: the start events, each step, the final state.
    A ``Tracker`` checks the invariants after every step."""
    settings = nimmt.parse_settings(raw, players)
    rng = random.Random(seed * 31 + players)
    state, start_events = nimmt.start(settings, players, seed)
    tracker = Tracker(settings, players)
    tracker.feed(start_events, state)
    steps: list[Step] = []
    while (d := nimmt.decision(state)) is not None:
        for seat in d.seats:
            assert nimmt.default(state, seat) in nimmt.legal(state, seat), "the default is a legal answer"
        answers = [rng.choice(nimmt.legal(state, seat)) for seat in d.seats]
        state, events = nimmt.apply(state, dict(zip(d.seats, answers, strict=True)))
        steps.append((d.kind, d.seats, answers, events))
        tracker.feed(events, state)
    assert state.over and nimmt.outcome(state) is not None
    return start_events, steps, state


def resimulate(raw: dict[str, Any], players: int, seed: int, start_events: list[Any], steps: list[Step]) -> None:
    """Replay the recorded answers from the seed: every decision and event the same."""
    settings = nimmt.parse_settings(raw, players)
    state, events = nimmt.start(settings, players, seed)
    assert events == start_events
    for kind, seats, answers, logged in steps:
        assert nimmt.decision(state) == Decision(kind, seats)
        state, events = nimmt.apply(state, dict(zip(seats, answers, strict=True)))
        assert events == logged
    assert nimmt.decision(state) is None


class Tracker:
    """Rebuilds the table from the events alone and checks, after every step, that it
    matches the state; that no row holds more than 5 cards; that every card of a round
    is in exactly one place (a row, a hand, a penalty pile); that each placement follows
    the placement rule (checked here independently of the module); and that scores only
    grow by the heads taken."""

    def __init__(self, settings: nimmt.Settings, players: int) -> None:
        self.settings = settings
        self.players = players
        self.top = nimmt.top_card(settings, players)
        self.rows: list[list[int]] = []
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.piles: list[list[int]] = [[] for _ in range(players)]
        self.round_cards: Counter[int] = Counter()
        self.scores = [0] * players
        self.rows_at_round_end: list[list[int]] | None = None
        self.drafting = False
        self.offer: list[int] = []
        self.picks: list[tuple[int, int]] = []
        self.pending: list[tuple[int, int]] = []

    def feed(self, events: list[Any], state: nimmt.State) -> None:
        for event in events:
            self.event(event)
        assert all(len(row) <= 5 for row in state.rows), "no row over 5 cards"
        if state.over and self.settings.shedding:
            assert [tuple(sorted(h)) for h in self.hands] == list(state.hands)
            assert not all(state.hands) or state.turn == nimmt.SHEDDING_TURN_LIMIT, "ends when a hand is empty"
            self.conserved()
        if state.over:
            return
        if state.offer:
            assert self.drafting and sorted(self.offer) == list(state.offer)
            return
        assert [tuple(r) for r in self.rows] == list(state.rows), "the events tell where every card went"
        assert [tuple(sorted(h)) for h in self.hands] == list(state.hands)
        assert all(1 <= len(row) for row in state.rows)
        self.conserved()

    def conserved(self) -> None:
        waiting = [c for c, _ in self.pending]  # revealed, not yet placed: a row choice is pending
        now = Counter(c for group in (*self.rows, *self.hands, *self.piles, waiting) for c in group)
        assert now == self.round_cards, "every card of the round is in exactly one place"
        assert max(now.values()) == 1

    def event(self, event: Any) -> None:
        match event:
            case DraftStart(offer=offer, first=first):
                assert self.settings.variant == "logical"
                assert list(offer) == list(range(1, self.top + 1))
                assert first == (event.round - 1) % self.players
                self.drafting, self.offer, self.picks = True, list(offer), []
                self.hands = [[] for _ in range(self.players)]
            case Pick(seat=seat, card=card):
                first = (event.round - 1) % self.players
                assert seat == (first + len(self.picks)) % self.players, "the draft goes round in seat order"
                self.offer.remove(card)
                self.picks.append((card, seat))
            case Deal(rows=rows, hands=hands):
                self.deal(event.round, rows, hands)
            case Reveal(plays=plays):
                assert list(plays) == sorted(plays), "placed lowest card first"
                per_seat = Counter(seat for _, seat in plays)
                assert [per_seat[s] for s in range(self.players)] == [
                    min(self.settings.cards_per_turn, len(hand)) for hand in self.hands
                ], "each seat plays cards_per_turn cards (fewer only if it holds fewer)"
                for card, seat in plays:
                    self.hands[seat].remove(card)
                self.pending = list(plays)
            case Place():
                self.place(event)
            case RoundEnd(heads=heads, scores=scores):
                assert not self.settings.shedding
                assert not any(self.hands), "a round ends with every hand played out"
                assert list(heads) == [sum(HEADS[c] for c in pile) for pile in self.piles]
                assert all(n >= o for n, o in zip(scores, self.scores, strict=True)), "penalties never decrease"
                assert [n - o for n, o in zip(scores, self.scores, strict=True)] == list(heads)
                self.scores = list(scores)
                self.conserved()
                self.rows_at_round_end = [list(r) for r in self.rows]
            case GameEnd(scores=scores, ranks=ranks):
                if self.settings.shedding:
                    assert list(scores) == [len(h) for h in self.hands], "shedding scores the cards left"
                else:
                    assert list(scores) == self.scores
                assert list(ranks) == [1 + sum(1 for other in scores if other < mine) for mine in scores]

    def deal(self, round_no: int, rows: Any, hands: Any) -> None:
        if self.drafting:
            assert not self.offer or sorted(self.offer) == [r[0] for r in rows], "the 4 left start the rows"
            assert [r[0] for r in rows] == sorted(r[0] for r in rows), "lowest card in row 0"
            for seat in range(self.players):
                assert sorted(c for c, s in self.picks if s == seat) == list(hands[seat])
            self.drafting = False
        if self.settings.keep_rows and round_no > 1:
            assert [list(r) for r in rows] == self.rows_at_round_end, "keep_rows: the rows stay"
        else:
            assert all(len(r) == 1 for r in rows)
        table = {c for r in rows for c in r}
        dealt = [c for h in hands for c in h]
        assert all(len(h) == 10 for h in hands)
        assert not table & set(dealt), "no dealt card is on the table"
        assert len(set(dealt)) == len(dealt) and all(1 <= c <= self.top for c in (*dealt, *table))
        if self.settings.variant in ("tactical", "logical"):
            assert table | set(dealt) == set(range(1, self.top + 1)), "every card of the small deck is in play"
        self.rows = [list(r) for r in rows]
        self.hands = [list(h) for h in hands]
        self.piles = [[] for _ in range(self.players)]
        self.round_cards = Counter([*table, *dealt])

    def place(self, place: Place) -> None:
        card, seat, row, rows = place.card, place.seat, place.row, self.rows
        assert (card, seat) == self.pending.pop(0), "placed in reveal order"
        if place.chosen:
            assert self.expected_spot(card) is None, "a row is chosen only when no row can take the card"
        else:
            assert self.expected_spot(card) == (row, place.end)
        if place.taken:
            assert list(place.taken) == rows[row]
            assert place.chosen or len(rows[row]) == 5, "only a sixth card takes a row"
            target = self.hands if self.settings.shedding else self.piles
            target[seat] += place.taken
            rows[row] = [card]
        elif place.end == "left":
            rows[row].insert(0, card)
        else:
            rows[row].append(card)

    def expected_spot(self, card: int) -> tuple[int, str] | None:
        """Where the rules put ``card``, worked out here independently of the module."""
        if self.settings.variant != "professional":
            below = [(row[-1], i) for i, row in enumerate(self.rows) if row[-1] < card]
            return (max(below)[1], "right") if below else None
        spots = []
        for i, row in enumerate(self.rows):
            if row[-1] < card:
                spots.append((card - row[-1], 0, i, "right"))
            if card < row[0]:
                spots.append((row[0] - card, 1, i, "left"))
        return min(spots)[2:] if spots else None


# --- tactical ----------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 11))
def test_tactical_deals_exactly_ten_per_player_plus_four(players: int) -> None:
    settings = nimmt.parse_settings({"variant": "tactical"}, players)
    assert nimmt.top_card(settings, players) == 10 * players + 4
    for seed in range(3):
        state, events = nimmt.start(settings, players, seed)
        deal = events[0]
        assert isinstance(deal, Deal)
        cards = {c for r in deal.rows for c in r} | {c for h in deal.hands for c in h}
        assert cards == set(range(1, 10 * players + 5))
        assert nimmt.view(state, 0).top_card == 10 * players + 4
    professional = nimmt.parse_settings({"variant": "professional"}, players)
    assert nimmt.top_card(professional, players) == 104, "the other variants use all 104 cards"


# --- logical: the draft ---------------------------------------------------------------------


def test_the_draft_lays_out_the_tactical_deck_and_seat_0_picks_first() -> None:
    settings = nimmt.parse_settings({"variant": "logical"}, 3)
    state, events = nimmt.start(settings, 3, 9)
    assert events == [DraftStart(1, tuple(range(1, 35)), 0)]
    assert nimmt.decision(state) == Decision("draft", (0,))
    assert nimmt.legal(state, 0) == list(range(1, 35))
    assert nimmt.default(state, 0) == 1, "a seat that fails to pick gets the lowest card on offer"
    view = nimmt.view(state, 0)
    assert view.offer == tuple(range(1, 35)) and view.rows == () and view.hand == () and view.variant == "logical"


def test_the_draft_goes_round_in_seat_order_and_the_four_left_start_the_rows() -> None:
    state, _ = nimmt.start(nimmt.parse_settings({"variant": "logical"}, 3), 3, 9)
    seats = []
    events: list[Any] = []
    while (d := nimmt.decision(state)) is not None and d.kind == "draft":
        seats += d.seats
        assert nimmt.legal(state, d.seats[0]) == list(state.offer)
        state, events = nimmt.apply(state, {d.seats[0]: nimmt.default(state, d.seats[0])})
        assert isinstance(events[0], Pick)
    assert seats == [0, 1, 2] * 10
    # Everybody took the lowest card on offer: seat 0 got 1, 4, 7..., and 31..34 are left.
    assert events[-1] == Deal(
        1,
        ((31,), (32,), (33,), (34,)),
        (tuple(range(1, 31, 3)), tuple(range(2, 31, 3)), tuple(range(3, 31, 3))),
    )
    assert nimmt.decision(state) == Decision("play", (0, 1, 2))
    assert nimmt.view(state, 1).picks == tuple((c, (c - 1) % 3) for c in range(1, 31))
    assert nimmt.observe(events[-1], 1) == RoundStart(1, ((31,), (32,), (33,), (34,)), tuple(range(2, 31, 3)))
    assert all(nimmt.observe(e, 1) is e for e in (DraftStart(1, (1, 2), 0), Pick(1, 0, 2))), "the draft is public"


def test_each_round_the_draft_starts_one_seat_further() -> None:
    settings = nimmt.parse_settings({"variant": "logical", "rounds": 4}, 3)
    state, events = nimmt.start(settings, 3, 2)
    _, log = play_defaults(state)
    starts = [e for e in [*events, *log] if isinstance(e, DraftStart)]
    assert [(e.round, e.first) for e in starts] == [(1, 0), (2, 1), (3, 2), (4, 0)]
    first_picks = [e.seat for e in log if isinstance(e, Pick) and e.card == 1]
    assert first_picks == [0, 1, 2, 0], "the lowest card goes to the seat that picks first"


def test_a_pick_not_on_offer_is_illegal_and_quoted() -> None:
    state, _ = nimmt.start(nimmt.parse_settings({"variant": "logical"}, 2), 2, 1)
    state, _ = nimmt.apply(state, {0: 5})
    with pytest.raises(IllegalAnswer, match=r"card 5 is not on offer \[1, 2, 3, 4, 6,"):
        nimmt.apply(state, {1: 5})
    with pytest.raises(IllegalAnswer, match="whole number"):
        nimmt.apply(state, {1: "5"})


# --- professional ---------------------------------------------------------------------------


def pro(rows: list[tuple[int, ...]], hands: list[tuple[int, ...]]) -> nimmt.State:
    return state_with(rows, hands, variant="professional")


def test_professional_card_goes_to_the_nearest_end_left_or_right() -> None:
    state = pro([(10, 12), (30, 40), (60,), (80,)], [(27, 90), (13, 91)])
    after, events = nimmt.apply(state, {0: 27, 1: 13})
    # 13 goes 1 after row 0's 12 (rather than 17 before row 1's 30); then 27 goes 3
    # before row 1's 30 (rather than 14 after row 0's new end, 13).
    assert places(events) == [Place(1, 13, 0, (), end="right"), Place(0, 27, 1, (), end="left")]
    assert after.rows == ((10, 12, 13), (27, 30, 40), (60,), (80,))


def test_professional_sixth_card_at_the_left_end_takes_the_row() -> None:
    state = pro([(20, 21, 22, 23, 24), (50,), (60,), (70,)], [(18, 90), (95, 91)])
    after, events = nimmt.apply(state, {0: 18, 1: 95})
    assert places(events)[0] == Place(0, 18, 0, (20, 21, 22, 23, 24), end="left")
    assert after.rows[0] == (18,)
    assert after.round_heads == (3 + 1 + 5 + 1 + 1, 0)


def test_professional_exact_tie_goes_to_the_right_end() -> None:
    # 12 is 2 after row 0's 10 and 2 before row 1's 14: the right end wins.
    after, events = nimmt.apply(pro([(10,), (14, 20), (40,), (60,)], [(12, 90), (95, 91)]), {0: 12, 1: 95})
    assert places(events)[0] == Place(0, 12, 0, (), end="right")
    # Even when the left end belongs to the lower row.
    after, events = nimmt.apply(pro([(14, 20), (10,), (40,), (60,)], [(12, 90), (95, 91)]), {0: 12, 1: 95})
    assert places(events)[0] == Place(0, 12, 1, (), end="right")


def test_professional_tie_between_rows_goes_to_the_lower_row() -> None:
    # With distinct cards two right ends (or two left ends) never tie; the rule still
    # fixes the order, checked on the placement function itself.
    assert nimmt.professional_place([(5, 10), (7, 10), (30,), (40,)], 12) == (0, "right")
    assert nimmt.professional_place([(30, 40), (20, 25), (20, 30), (90,)], 18) == (1, "left")


def test_professional_row_choice_only_when_no_end_can_take_the_card() -> None:
    # 5 is below every row end: the standard game asks for a row, professional puts it
    # before row 0's first card.
    rows = [(10, 50), (20, 60), (30, 70), (40, 80)]
    standard, _ = nimmt.apply(state_with(rows, [(5, 90), (95, 91)]), {0: 5, 1: 95})
    assert nimmt.decision(standard) == Decision("row", (0,))
    after, events = nimmt.apply(pro(rows, [(5, 90), (95, 91)]), {0: 5, 1: 95})
    assert places(events)[0] == Place(0, 5, 0, (), end="left")
    # 45 lies between the first and last card of every row: now the seat chooses.
    mid, events = nimmt.apply(pro(rows, [(45, 90), (95, 91)]), {0: 45, 1: 95})
    assert nimmt.decision(mid) == Decision("row", (0,))
    assert nimmt.view(mid, 0).card == 45
    after, events = nimmt.apply(mid, {0: 2})
    assert events[0] == Place(0, 45, 2, (30, 70), True)
    assert after.rows[2] == (45,)


def test_place_events_without_an_end_decode_as_right() -> None:
    old = b'{"type":"place","seat":1,"card":7,"row":2,"taken":[],"chosen":false}'
    assert msgspec.json.decode(old, type=Place) == Place(1, 7, 2, ())
    assert msgspec.json.decode(old, type=Place).end == "right"


# --- keep_rows ------------------------------------------------------------------------------


def test_keep_rows_deals_around_the_rows_on_the_table() -> None:
    table = ((5, 6, 7), (30,), (44, 45, 46, 47, 48), (90, 100))
    rows, hands = nimmt.deal(3, 2, 8, table=table)
    assert rows == table
    on_table = {c for r in table for c in r}
    dealt = [c for h in hands for c in h]
    assert len(dealt) == len(set(dealt)) == 80 and not on_table & set(dealt)
    assert (rows, hands) == nimmt.deal(3, 2, 8, table=table), "a pure function of seed, round and table"


def test_keep_rows_rows_stay_between_rounds() -> None:
    # The Tracker checks each later round's rows against the rows the round before
    # ended with, and every dealt card against the table.
    start_events, steps, _ = random_game({"keep_rows": True, "rounds": 3}, 4, 11)
    deals = [e for e in start_events if isinstance(e, Deal)] + [
        e for *_, events in steps for e in events if isinstance(e, Deal)
    ]
    assert [d.round for d in deals] == [1, 2, 3]
    assert any(len(row) > 1 for d in deals[1:] for row in d.rows), "rows carried over, cards and all"


# --- cards_per_turn = 2 -----------------------------------------------------------------------


def test_two_cards_per_turn_legal_answers_are_ascending_pairs() -> None:
    settings = nimmt.parse_settings({"cards_per_turn": 2}, 4)
    state, _ = nimmt.start(settings, 4, 5)
    hand = state.hands[2]
    legal = nimmt.legal(state, 2)
    assert len(legal) == 45
    assert legal == [[a, b] for a, b in itertools.combinations(hand, 2)]
    assert all(a < b for a, b in legal)
    assert nimmt.default(state, 2) == [hand[0], hand[1]]
    assert nimmt.view(state, 2).cards_per_turn == 2


def test_two_cards_per_turn_are_placed_in_order_among_all_played_cards() -> None:
    state = state_with([(10,), (20,), (30,), (40,)], [(11, 41, 60, 61), (12, 21, 70, 71)], cards_per_turn=2)
    after, events = nimmt.apply(state, {0: [11, 41], 1: [12, 21]})
    assert events[0] == Reveal(1, 1, ((11, 0), (12, 1), (21, 1), (41, 0)))
    assert [(p.card, p.row) for p in places(events)] == [(11, 0), (12, 0), (21, 1), (41, 3)]
    assert after.hands == ((60, 61), (70, 71))


def test_two_cards_per_turn_make_a_round_of_five_turns() -> None:
    settings = nimmt.parse_settings({"cards_per_turn": 2, "rounds": 2}, 3)
    _, log = play_defaults(nimmt.start(settings, 3, 4)[0])
    turns = [(e.round, e.turn) for e in log if isinstance(e, Reveal)]
    assert turns == [(r, t) for r in (1, 2) for t in range(1, 6)]
    assert all(len(e.plays) == 6 for e in log if isinstance(e, Reveal))


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([41, 11], r"play 2 cards as \[a, b\] with a < b, not \[41, 11\]"),
        ([11, 11], r"with a < b, not \[11, 11\]"),
        ([11], r"play 2 cards"),
        (11, r"play 2 cards as \[a, b\] with a < b, not 11"),
        ([11, 99], r"card 99 is not in your hand \[11, 41, 60, 61\]"),
        ([11, True], r"play 2 cards"),
    ],
)
def test_two_cards_per_turn_bad_pairs_are_quoted(answer: Any, message: str) -> None:
    state = state_with([(10,), (20,), (30,), (40,)], [(11, 41, 60, 61), (12, 21, 70, 71)], cards_per_turn=2)
    with pytest.raises(IllegalAnswer, match=message):
        nimmt.apply(state, {0: answer, 1: [12, 21]})


# --- shedding -------------------------------------------------------------------------------


def test_shedding_taken_cards_go_into_the_hand_and_heads_do_not_count() -> None:
    state = state_with([(1, 2, 3, 4, 5), (50,), (60,), (70,)], [(6, 99), (98, 97)], shedding=True)
    after, events = nimmt.apply(state, {0: 6, 1: 98})
    assert places(events)[0] == Place(0, 6, 0, (1, 2, 3, 4, 5))
    assert after.hands == ((1, 2, 3, 4, 5, 99), (97,))
    assert after.round_heads == (0, 0) and after.scores == (0, 0)
    assert nimmt.decision(after) == Decision("play", (0, 1)), "no hand is empty: play on"
    assert nimmt.view(after, 1).hand_sizes == (6, 1)


def test_shedding_a_last_card_that_takes_a_row_refills_the_hand() -> None:
    state = state_with([(1, 2, 3, 4, 5), (50,), (60,), (70,)], [(6,), (98, 97)], shedding=True)
    after, events = nimmt.apply(state, {0: 6, 1: 98})
    assert after.hands == ((1, 2, 3, 4, 5), (97,)) and not after.over


def test_shedding_ends_after_the_turn_that_empties_a_hand() -> None:
    state = state_with([(10,), (20,), (30,), (40,)], [(11,), (12, 50), (13, 51, 52)], shedding=True)
    after, events = nimmt.apply(state, {0: 11, 1: 50, 2: 51})
    assert after.over and nimmt.decision(after) is None
    assert events[-1] == GameEnd((0, 1, 2), (1, 2, 3))
    assert not any(isinstance(e, RoundEnd) for e in events)
    outcome = nimmt.outcome(after)
    assert outcome is not None and outcome.scores == [0, 1, 2] and outcome.ranks == [1, 2, 3] and outcome.rounds == 1


def test_shedding_every_empty_hand_shares_first_place() -> None:
    state = state_with([(10,), (20,), (30,), (40,)], [(11,), (12,), (13, 51, 52), (14, 53)], shedding=True)
    after, events = nimmt.apply(state, {0: 11, 1: 12, 2: 51, 3: 53})
    assert events[-1] == GameEnd((0, 0, 2, 1), (1, 1, 4, 3))


def test_shedding_default_row_is_the_one_with_fewest_cards() -> None:
    state = state_with([(10, 11, 12), (20,), (30, 31), (40,)], [(5, 90), (91, 92)], shedding=True)
    mid, _ = nimmt.apply(state, {0: 5, 1: 91})
    assert nimmt.decision(mid) == Decision("row", (0,))
    assert nimmt.default(mid, 0) == 1
    after, events = nimmt.apply(mid, {0: 0})
    assert events[0] == Place(0, 5, 0, (10, 11, 12), True)
    assert after.hands[0] == (10, 11, 12, 90)


def test_shedding_with_two_cards_a_last_card_is_played_alone() -> None:
    state = state_with([(10,), (20,), (30,), (40,)], [(11,), (12, 50, 51)], shedding=True, cards_per_turn=2)
    assert nimmt.legal(state, 0) == [[11]]
    assert nimmt.default(state, 0) == [11]
    with pytest.raises(IllegalAnswer, match=r"play your last card as \[c\], not \[11, 12\]"):
        nimmt.apply(state, {0: [11, 12], 1: [12, 50]})
    after, events = nimmt.apply(state, {0: [11], 1: [12, 50]})
    assert events[0] == Reveal(1, 1, ((11, 0), (12, 1), (50, 1)))
    assert events[-1] == GameEnd((0, 1), (1, 2))


# --- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "players", "message"),
    [
        ({"variant": "expert"}, 4, "variant must be one of standard, tactical, logical, professional, not 'expert'"),
        ({"variant": "logical"}, 7, "the logical variant takes 2 to 6 players, not 7"),
        ({"variant": "logical", "cards_per_turn": 2}, 10, "the logical variant takes 2 to 6 players, not 10"),
        ({"cards_per_turn": 3}, 4, "cards_per_turn must be 1 or 2, not 3"),
        ({"cards_per_turn": 0}, 4, "cards_per_turn must be 1 or 2, not 0"),
        ({"shedding": True, "rounds": 3}, 4, "shedding plays one deal: drop rounds"),
        ({"shedding": True, "keep_rows": True}, 4, "shedding plays one deal, so no rows are kept: drop keep_rows"),
        ({"shedding": True, "end_score": 40}, 4, "shedding ignores heads, so end_score means nothing"),
        ({"keep_rows": True, "variant": "tactical"}, 4, "keep_rows needs spare cards, and the tactical variant"),
        ({"keep_rows": True, "variant": "logical"}, 3, "keep_rows needs spare cards, and the logical variant"),
        ({"keep_rows": True}, 9, "keep_rows takes at most 8 players, not 9"),
        ({"keep_rows": True, "variant": "professional"}, 10, "keep_rows takes at most 8 players, not 10"),
        ({"keep_rows": "sometimes"}, 4, r"keep_rows"),
        ({"cards_per_turn": "two"}, 4, r"cards_per_turn"),
        ({"shedding": True, "shed": True}, 4, "shed"),
    ],
)
def test_settings_that_make_no_game_say_why(raw: dict[str, Any], players: int, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        nimmt.parse_settings(raw, players)


@pytest.mark.parametrize(
    ("raw", "players"),
    [
        ({"variant": "logical"}, 6),
        ({"variant": "logical", "cards_per_turn": 2, "shedding": True}, 2),
        ({"keep_rows": True}, 8),
        ({"keep_rows": True, "variant": "professional", "cards_per_turn": 2}, 8),
        ({"cards_per_turn": 2}, 10),
        ({"shedding": True, "variant": "tactical"}, 10),
        ({"shedding": True, "variant": "professional", "cards_per_turn": 2}, 5),
    ],
)
def test_settings_that_make_a_game_are_accepted_and_recorded(raw: dict[str, Any], players: int) -> None:
    settings = nimmt.parse_settings(raw, players)
    recorded = msgspec.to_builtins(settings)
    assert recorded.keys() >= {"variant", "end_score", "rounds", "keep_rows", "cards_per_turn", "shedding"}
    assert nimmt.parse_settings(recorded, players) == settings, "a replay's settings parse back the same"


# --- every combination, random play -----------------------------------------------------------


def combinations() -> list[tuple[dict[str, Any], int]]:
    """Every variant and house rule together, each at a few player counts it allows."""
    out = []
    for variant, keep_rows, per_turn, shedding in itertools.product(
        nimmt.VARIANTS, (False, True), (1, 2), (False, True)
    ):
        raw: dict[str, Any] = {"variant": variant, "cards_per_turn": per_turn}
        if keep_rows:
            raw["keep_rows"] = True
        if shedding:
            raw["shedding"] = True
        else:
            raw["rounds"] = 3
        for players in (2, 5, 6, 8, 10):
            try:
                nimmt.parse_settings(raw, players)
            except SettingsError:
                continue
            out.append((raw, players))
    return out


COMBINATIONS = combinations()


def test_the_combinations_cover_every_setting() -> None:
    assert {raw["variant"] for raw, _ in COMBINATIONS} == set(nimmt.VARIANTS)
    for key in ("keep_rows", "shedding"):
        assert any(raw.get(key) for raw, _ in COMBINATIONS)
    assert any(raw.get("shedding") and raw["variant"] == "logical" for raw, _ in COMBINATIONS)
    assert len(COMBINATIONS) >= 50


@pytest.mark.parametrize(("raw", "players"), COMBINATIONS, ids=lambda v: str(v).replace(" ", ""))
def test_random_games_keep_invariants_and_resimulate_exactly(raw: dict[str, Any], players: int) -> None:
    for seed in range(3):
        start_events, steps, final = random_game(raw, players, seed)
        resimulate(raw, players, seed, start_events, steps)


@pytest.mark.parametrize("variant", nimmt.VARIANTS)
def test_variants_play_to_end_score(variant: str) -> None:
    players = 4
    for seed in range(3):
        start_events, steps, final = random_game({"variant": variant}, players, seed)
        assert max(final.scores) >= 66
        rounds = [e for *_, events in steps for e in events if isinstance(e, RoundEnd)]
        assert all(max(e.scores) < 66 for e in rounds[:-1])
        resimulate({"variant": variant}, players, seed, start_events, steps)


def test_what_the_settings_decide_is_worked_out_once_per_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn goes through one ``apply``; what its settings decide comes from a
    record derived once per game (``Settings.turn_rules``), and a state carries none of it."""
    made: list[dict[str, Any]] = []
    make = nimmt.TurnRules
    monkeypatch.setattr(nimmt, "TurnRules", lambda **rules: made.append(rules) or make(**rules))
    games = COMBINATIONS[::6]
    turns = 0
    for raw, players in games:
        _, steps, _ = random_game(raw, players, 5)
        turns += sum(kind != "draft" for kind, *_ in steps)
    assert len(made) == len(games) < turns / 10, "once per game, not once per turn"
    for rule in ("professional", "shedding", "read_plays"):
        assert len({rules[rule] for rules in made}) == 2, rule
    assert not {"fast", "turn_rules"} & set(nimmt.State.__struct_fields__)


# --- what a seat sees ---------------------------------------------------------------------------


def test_the_view_tells_the_variant_facts_and_old_views_still_decode() -> None:
    settings = nimmt.parse_settings({"variant": "tactical", "keep_rows": False, "cards_per_turn": 2}, 3)
    state, _ = nimmt.start(settings, 3, 1)
    view = nimmt.view(state, 2)
    facts = (view.variant, view.top_card, view.cards_per_turn, view.keep_rows, view.shedding)
    assert facts == ("tactical", 34, 2, False, False)
    assert view.hand_sizes == (10, 10, 10) and view.offer == () and view.picks == ()
    old = msgspec.json.encode(
        {k: v for k, v in msgspec.to_builtins(view).items() if k not in {"variant", "top_card", "cards_per_turn"}}
    )
    decoded = msgspec.json.decode(old, type=View)
    assert decoded.variant == "standard" and decoded.top_card == 104 and decoded.cards_per_turn == 1


# --- the replay viewer ------------------------------------------------------------------------


def replay_lines(raw: dict[str, Any], players: int, seed: int) -> list[replay.Line]:
    """The replay the referee would write for a random game, through JSON and back."""
    settings = nimmt.parse_settings(raw, players)
    start_events, steps, final = random_game(raw, players, seed)
    lines: list[replay.Line] = [
        Header(
            format=replay.FORMAT,
            game="nimmt",
            settings=msgspec.to_builtins(settings),
            seed=seed,
            players=players,
            seats=[SeatInfo("random", "1.0.0", "local") for _ in range(players)],
            limits={"move_ms": 1000},
        ),
        EventsLine(start_events),
    ]
    for kind, seats, answers, events in steps:
        n = len(seats)
        lines.append(DecisionLine(kind, list(seats), answers, [1.0] * n, [1.0] * n, [False] * n))
        lines.append(EventsLine(events))
    outcome = nimmt.outcome(final)
    assert outcome is not None
    lines.append(End(outcome.scores, outcome.ranks, [SeatStatus("ok")] * players, [""] * players))
    return replay.loads(replay.dumps(lines))


def shown(lines: list[replay.Line], round_no: int | None = None, turn: int | None = None) -> list[str]:
    console = Console(file=io.StringIO(), width=120)
    render.show_replay(console, lines, list(replay.verify(lines)), round_no, turn)
    assert isinstance(console.file, io.StringIO)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def logged_events(lines: list[replay.Line]) -> list[Any]:
    decoder = msgspec.json.Decoder(list[Event])
    return [
        e for line in lines if isinstance(line, EventsLine) for e in decoder.decode(msgspec.json.encode(line.events))
    ]


def letter(seat: int) -> str:
    return chr(65 + seat)


def test_viewer_shows_the_draft_pick_by_pick() -> None:
    lines = replay_lines({"variant": "logical", "rounds": 2}, 3, 4)
    out = shown(lines)
    events = logged_events(lines)
    for start in (e for e in events if isinstance(e, DraftStart)):
        picks = [e for e in events if isinstance(e, Pick) and e.round == start.round]
        heading = out.index(f"draft: {letter(start.first)} picks first, from 34 cards")
        laps = out[heading + 1 : heading + 11]
        for lap, line in enumerate(laps):
            expected = " · ".join(f"{letter(p.seat)} {p.card:>3}" for p in picks[lap * 3 : lap * 3 + 3])
            assert line.strip() == f"lap {lap + 1:>2}  {expected}", (line, expected)
        left = sorted(set(start.offer) - {p.card for p in picks})
        assert out[heading + 11].strip() == "left, to start the rows: " + " ".join(map(str, left))


def test_viewer_says_which_end_a_professional_card_went_to() -> None:
    lines = replay_lines({"variant": "professional", "rounds": 2}, 4, 2)
    out = [line.strip() for line in shown(lines)]
    placed = [e for e in logged_events(lines) if isinstance(e, Place)]
    left = [e for e in placed if e.end == "left" and not e.taken]
    assert left, "a professional game places cards at left ends"
    for e in left:
        assert f"{letter(e.seat)} {e.card:>3} → row {e.row}, left end" in out
    for e in (e for e in placed if e.end == "left" and e.taken):
        assert any(line.startswith(f"{letter(e.seat)} {e.card:>3} → row {e.row}, left end (sixth card") for line in out)
    for e in (e for e in placed if e.chosen):
        assert any(
            line.startswith(f"{letter(e.seat)} {e.card:>3} fits no row end: chooses row {e.row}") for line in out
        )


def test_viewer_shows_two_cards_per_turn() -> None:
    lines = replay_lines({"cards_per_turn": 2, "rounds": 1}, 3, 6)
    out = [line.strip() for line in shown(lines)]
    reveals = [e for e in logged_events(lines) if isinstance(e, Reveal)]
    assert [r.turn for r in reveals] == [1, 2, 3, 4, 5]
    for r in reveals:
        assert "revealed  " + " · ".join(f"{letter(s)} {c:>3}" for c, s in r.plays) in out
    assert "round 1 · turn 6" not in out


def test_viewer_shows_shedding_with_hand_sizes_and_cards_taken_into_the_hand() -> None:
    lines = replay_lines({"shedding": True}, 3, 3)
    text = shown(lines)
    out = [line.strip() for line in text]
    events = logged_events(lines)
    takes = [e for e in events if isinstance(e, Place) and e.taken]
    assert takes
    for e in takes:
        cards = " ".join(map(str, e.taken))
        assert any(
            line.startswith(f"{letter(e.seat)} {e.card:>3}") and f"takes {cards} into hand" in line for line in out
        )
    assert not any("heads" in line for line in out), "shedding shows no heads"
    assert out[out.index("round 1 · turn 1") + 1] == "in hand   A 10 · B 10 · C 10"
    standings = text[text.index("Final standings") :]
    assert any("cards left" in line for line in standings[:4])
    end = lines[-1]
    assert isinstance(end, End) and min(end.scores) == 0 and end.ranks[end.scores.index(0)] == 1


def test_viewer_shows_kept_rows() -> None:
    lines = replay_lines({"keep_rows": True, "rounds": 2}, 3, 8)
    out = [line.strip() for line in shown(lines)]
    assert out.count("starting rows") == 1 and out.count("rows kept from the round before") == 1


def test_viewer_header_leaves_out_house_rules_that_are_off() -> None:
    standard = shown(replay_lines({"rounds": 1}, 2, 1))
    assert any(line.startswith("settings: variant=standard end_score=66 rounds=1 · limits") for line in standard)
    shedding = shown(replay_lines({"shedding": True, "cards_per_turn": 2}, 2, 1))
    assert any("cards_per_turn=2 shedding=True" in line for line in shedding)


def test_viewer_joins_a_shedding_game_mid_way_with_hand_sizes() -> None:
    lines = replay_lines({"shedding": True}, 2, 5)
    out = [line.strip() for line in shown(lines, 1, 2)]
    assert any(line.startswith("Round 1, from turn 2") for line in out)
    assert any(line.startswith("cards in hand: A ") for line in out)
