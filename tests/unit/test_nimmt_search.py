"""``protocol.nimmt_search`` plays as the referee's rules do: the same deals and the same
choices, through both, give the same rows and heads after every card."""

from __future__ import annotations

import random

import pytest

from arena.games.nimmt import rules
from protocol import nimmt_search
from protocol.nimmt import RoundStart
from protocol.nimmt_search import Seen, Table, random_game


def row_of(card: int, seat: int) -> int:
    """The row (on the table) a seat takes for a card lower than every end: any rule
    both sides can follow."""
    return (card * 7 + seat) % 4


def on_table(table: Table, seat: int, card: int) -> int:
    return table.positions.index(row_of(card, seat))


@pytest.mark.parametrize("players", [2, 4, 5, 10])
def test_every_turn_ends_as_the_referees_rules_end_it(players: int) -> None:
    settings = rules.parse_settings({}, players)
    checked = takes = 0
    for seed in range(60 if players < 10 else 20):
        rng = random.Random(seed)
        state, _ = rules.start(settings, players, seed)
        table, before = Table(state.rows, state.hands), state.scores  # one table for a whole round
        while not state.over:
            mine = Table.from_view(rules.view(state, 0))  # and one made afresh from the view, each turn
            mine.hands = [list(h) for h in state.hands]
            cards = [rng.choice(hand) for hand in state.hands]
            state, _ = rules.apply(state, dict(enumerate(cards)))
            while state.to_place:  # a row choice, asked of the seat whose card it is
                card, seat = state.to_place[0]
                state, _ = rules.apply(state, {seat: row_of(card, seat)})
                takes += 1
            table.play_turn(cards, on_table)
            mine.play_turn(cards, on_table)
            if state.over or not state.revealed:  # the round ended: its heads went to the scores
                assert table.round_heads == [a - b for a, b in zip(state.scores, before, strict=True)]
                table, before = Table(state.rows, state.hands), state.scores
            else:
                assert table.table_rows == [list(r) for r in state.rows] == mine.table_rows
                assert table.round_heads == list(state.round_heads) == mine.round_heads
            checked += 1
    assert checked > 300 and takes > 20  # the row choices were reached, often


def test_a_copy_is_its_own() -> None:
    table = Table([[5], [20], [40], [60]], [[1, 21, 41], [22, 42, 61]])
    other = table.copy()
    other.play_turn([1, 22], on_table)
    assert table.table_rows == [[5], [20], [40], [60]] and table.hands == [[1, 21, 41], [22, 42, 61]]
    assert other.table_rows != table.table_rows and table.round_heads == [0, 0]


def test_the_deal_gives_only_unseen_cards() -> None:
    settings = rules.parse_settings({}, 4)
    state, events = rules.start(settings, 4, 3)
    seen = Seen()
    seen.events([e for e in events if isinstance(e, RoundStart)])
    cards = [hand[0] for hand in state.hands]
    state, _ = rules.apply(state, dict(enumerate(cards)))
    while state.to_place:
        state, _ = rules.apply(state, {state.to_place[0][1]: 0})
    view = rules.view(state, 1)
    known = set(view.hand) | {c for r in view.rows for c in r} | {c for t in view.revealed for c, _ in t}
    known |= seen.cards
    for n in range(20):
        table = Table.from_view(view, seen.cards)
        table.deal(random.Random(n))
        dealt = [c for s, hand in enumerate(table.hands) if s != 1 for c in hand]
        assert table.hands[1] == list(view.hand)
        assert [len(h) for h in table.hands] == [9, 9, 9, 9]
        assert len(set(dealt)) == 27 and not set(dealt) & known and set(dealt) <= set(range(1, 105))
        assert set(state.hands[0]) | set(state.hands[2]) | set(state.hands[3]) <= set(table.unseen)
    again = [Table.from_view(view, seen.cards) for _ in range(2)]
    for t in again:
        t.deal(random.Random(7))
    assert again[0].hands == again[1].hands  # a seed reproduces a deal


def test_other_rules_are_refused_and_a_whole_game_ends_at_its_target() -> None:
    settings = rules.parse_settings({"variant": "professional"}, 3)
    state, _ = rules.start(settings, 3, 1)
    with pytest.raises(ValueError, match="standard rules only"):
        Table.from_view(rules.view(state, 0))
    scores = random_game(4, random.Random(2))
    assert max(scores) >= 66 and len(scores) == 4


def test_the_sdk_module_needs_nothing_of_the_arena() -> None:
    import ast
    from pathlib import Path

    tree = ast.parse(Path(nimmt_search.__file__).read_text())
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert names <= {"__future__", "random", "bisect", "collections.abc", "protocol.nimmt"}, names
