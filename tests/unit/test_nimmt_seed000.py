"""The whole example hand of seed 000 ("Esku oso baten adibidea"), played by our rules.

The Basque rule text (shared/seeds/000_a5f34b63d7e9bafd.txt) follows one hand of
5 players A..E (seats 0..4) over 10 turns. For each turn it gives every card played,
who took which row and how many heads that was, which rows then hold 5 cards, and the
heads so far. The hand ends at A 15, B 6, C 10, D 30, E 25. These tests replay the hand
through ``arena.games.nimmt.rules`` and check each of those facts. They show that our
placement rule, the 6th-card rule, the row choice for a card below every row end, and
the head values give the same results as the seed's own example.

The starting rows were shown only in pictures, and the pictures are missing. ROWS below
was worked out by an exhaustive search over the 54 unplayed cards and every row order.
Exactly 234 layouts fit every fact the text states, apart from the erratum below. Row 1
starts with one of 13 one-head cards below 33, row 2 with one of 37, 41, 43, 46, 47, 48,
row 3 with one of 51, 52, 54, and row 4 with 88. All of them make the same placements
and takes. We use the lowest one.

ERRATUM in the text, turn 8: it says D's 68 is "the sixth card of the third row" (9
heads). That cannot be right. The third row then ends at 87, which is above 68, and on
turn 10 E's 89 takes that same row intact (74 77 80 81 87, 11 heads). Under the rules,
and in every one of the 234 layouts, 68 is the sixth card of the SECOND row (22 28 36 39
62, 9 heads). The heads and totals the text gives match that. Below we assert the second
row. The text's list of full rows after turn 3 also leaves out row 1, which is full by
then too, so we check only that the rows it names hold 5 cards.
"""

from arena.games.nimmt import rules as nimmt
from protocol.nimmt import HEADS, GameEnd, Place, RoundEnd

A, B, C, D, E = range(5)
ROWS = ((1,), (37,), (51,), (88,))  # reconstructed, see above

# Per turn: the cards played; the takes in placement order as
# (seat, card, row numbered from 1 as in the text, heads, chosen = "lower than every row end");
# the heads taken so far this hand; and the rows the text says hold 5 cards afterwards.
TURNS = [
    ({A: 33, C: 35, B: 49, E: 55, D: 93}, [], (0, 0, 0, 0, 0), set()),
    # The text gives no tally after turn 2. Turn 3's tally differs from zero only by A's take there.
    ({C: 42, E: 53, D: 57, A: 58, B: 60}, [], (0, 0, 0, 0, 0), {3}),
    ({A: 6, D: 44, C: 94, E: 96, B: 98}, [(A, 6, 2, 3, True)], (3, 0, 0, 0, 0), {3, 4}),
    ({A: 8, B: 9, C: 10, E: 14, D: 16}, [(D, 16, 2, 7, False)], (3, 0, 0, 7, 0), set()),
    ({E: 2, A: 18, C: 20, B: 26, D: 38}, [(E, 2, 2, 1, True)], (3, 0, 0, 7, 1), {1, 2, 3, 4}),
    (
        {A: 22, B: 28, C: 36, D: 39, E: 74},
        [(A, 22, 2, 7, True), (E, 74, 3, 13, False)],
        (10, 0, 0, 7, 14),
        {1, 4},
    ),
    ({D: 67, E: 77, B: 80, C: 81, A: 87}, [(D, 67, 1, 14, False)], (10, 0, 0, 21, 14), {3, 4}),
    (
        {C: 3, A: 62, D: 68, B: 71, E: 76},
        [(C, 3, 1, 1, True), (D, 68, 2, 9, False)],  # text says third row: see ERRATUM
        (10, 0, 1, 30, 14),
        {3, 4},
    ),
    ({B: 15, C: 24, A: 63, D: 72, E: 85}, [], (10, 0, 1, 30, 14), {1, 3, 4}),
    (
        {A: 66, B: 83, E: 89, D: 95, C: 99},
        [(A, 66, 2, 5, True), (B, 83, 1, 6, False), (E, 89, 3, 11, False), (C, 99, 4, 9, False)],
        (15, 6, 10, 30, 25),
        set(),
    ),
]


def start() -> nimmt.State:
    settings = nimmt.parse_settings({"rounds": 1}, 5)
    hands = tuple(tuple(sorted(plays[s] for plays, *_ in TURNS)) for s in range(5))
    return nimmt.State(settings, 5, 0, 1, 1, ROWS, hands, (0,) * 5, (0,) * 5, ())


def play_turn(state, plays, takes):
    """Play one turn. Every row choice goes to the row the text names. Returns the new
    state, the events and the seats that were asked to choose a row."""
    choices = {seat: row - 1 for seat, _, row, _, chosen in takes if chosen}
    assert nimmt.decision(state).kind == "play"
    state, events = nimmt.apply(state, plays)
    asked = []
    while (d := nimmt.decision(state)) is not None and d.kind == "row":
        asked += d.seats
        state, more = nimmt.apply(state, {d.seats[0]: choices[d.seats[0]]})
        events += more
    return state, events, asked


def test_example_hand_matches_the_text():
    state = start()
    for turn, (plays, takes, heads, full) in enumerate(TURNS, 1):
        state, events, _ = play_turn(state, plays, takes)
        got = [
            (e.seat, e.card, e.row + 1, sum(HEADS[c] for c in e.taken), e.chosen)
            for e in events
            if type(e) is Place and e.taken
        ]
        assert got == takes, f"turn {turn}"
        if turn < 10:
            assert state.round_heads == heads, f"turn {turn}"
            assert all(len(state.rows[r - 1]) == 5 for r in full), f"turn {turn}: {state.rows}"
    final = (15, 6, 10, 30, 25)
    assert events[-2:] == [RoundEnd(1, final, final), GameEnd(final, (3, 1, 2, 5, 4))]
    assert state.over and state.scores == final


def test_row_choice_asked_exactly_where_the_text_says():
    # The text says "lower than every row end" on turns 3 (A's 6), 5 (E's 2), 6 (A's 22),
    # 8 (C's 3) and 10 (A's 66), and on no other turn.
    expected = {3: [A], 5: [E], 6: [A], 8: [C], 10: [A]}
    state = start()
    for turn, (plays, takes, _, _) in enumerate(TURNS, 1):
        state, _, asked = play_turn(state, plays, takes)
        assert asked == expected.get(turn, []), f"turn {turn}"
