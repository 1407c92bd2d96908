"""Sixes (docs/rules.md §2): the rules on hand-made tables, invariants over seeded random
games, what a seat may see, the live view (real bot processes through the referee:
tests/integration/test_sixes_bots.py; the CLI and the replay viewer:
tests/e2e/test_sixes_commands.py)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import msgspec
import pytest

from arena.games import IllegalAnswer, SettingsError
from arena.games.registry import get_game
from arena.games.sixes import render, rules
from arena.games.sixes.rules import Settings, State
from arena.play.simulate import play_game, random_policy
from protocol.bot import game_types
from protocol.messages import Request
from protocol.sixes import DECK, RANKS, Deal, GameEnd, Pass, Play, RoundEnd, RoundStart, View

from ..conftest import SAMPLES

HEURISTIC = SAMPLES / "sixes-heuristic"
RANDOM = SAMPLES / "sixes-random"
EMPTY: tuple[Any, ...] = (None, None, None, None)


def table(o: Any = None, c: Any = None, e: Any = None, b: Any = None) -> tuple[Any, ...]:
    """A table from each suit's run ``(lowest, highest)``, None where its 6 is not out."""
    return (o, c, e, b)


def state(
    hands: list[list[str]],
    on_table: tuple[Any, ...] = EMPTY,
    to_move: int = 0,
    chips: tuple[int, ...] | None = None,
    pot: int = 0,
    settings: Settings | None = None,
) -> State:
    """A hand-made moment of round 1 (hands listed in deck order)."""
    players = len(hands)
    return State(
        settings or Settings(),
        players,
        7,
        1,
        1,
        to_move,
        tuple(tuple(h) for h in hands),
        on_table,
        chips or (10,) * players,
        pot,
    )


# --- legal moves ----------------------------------------------------------------------


def test_the_round_opens_with_the_six_of_oros_only() -> None:
    s = state([["5o", "6o", "6c", "6e"], ["7o"]])
    assert rules.decision(s) == rules.Decision("play", (0,))
    assert rules.legal(s, 0) == ["6o"]
    with pytest.raises(IllegalAnswer, match="'6c' cannot be played now"):
        rules.apply(s, {0: "6c"})


def test_a_six_opens_a_suit_not_yet_on_the_table() -> None:
    s = state([["5o", "6c", "7c", "6e", "6b"], ["1o"]], table(o=(6, 6), e=(5, 7)))
    assert rules.legal(s, 0) == ["5o", "6c", "6b"]


def test_runs_extend_one_rank_up_or_down_and_nothing_else() -> None:
    hand = ["3o", "4o", "10o", "11o", "12o", "1c", "2c", "11c", "12c"]
    s = state([hand, ["1b"]], table(o=(5, 7), c=(2, 10)))
    assert rules.legal(s, 0) == ["4o", "10o", "1c", "11c"]  # sota comes after 7


def test_a_full_suit_takes_nothing_more() -> None:
    s = state([["6c"], ["1b"]], table(o=(1, 12)))
    assert rules.legal(s, 0) == ["6c"]
    assert rules.legal(state([["1o"], ["2o"]], table(o=(1, 12), c=(6, 6))), 0) == ["pass"]


def test_a_seat_that_can_play_must_play() -> None:
    s = state([["5o", "1c"], ["1b"]], table(o=(6, 6)))
    assert rules.legal(s, 0) == ["5o"]
    with pytest.raises(IllegalAnswer, match="'pass' is not allowed while you can play: legal answers are \\['5o'\\]"):
        rules.apply(s, {0: "pass"})


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("5c", "card '5c' is not in your hand \\['5o', '1c'\\]"),
        ("1c", "card '1c' cannot be played now: legal answers are \\['5o'\\]"),
        (5, "a card is a string like '6o', or 'pass': not 5"),
        (["5", "o"], "not \\['5', 'o'\\]"),
    ],
)
def test_illegal_answers_quote_the_answer(answer: Any, message: str) -> None:
    with pytest.raises(IllegalAnswer, match=message):
        rules.apply(state([["5o", "1c"], ["1b"]], table(o=(6, 6))), {0: answer})


def test_the_default_is_the_first_legal_answer() -> None:
    s = state([["4o", "10o", "6c"], ["1b"]], table(o=(5, 7)))
    assert rules.default(s, 0) == "4o"
    assert rules.default(state([["1c"], ["1b"]], table(o=(5, 7))), 0) == "pass"


# --- passing, the pot, rounds and the end ------------------------------------------------


def test_a_pass_pays_one_chip_into_the_pot() -> None:
    s = state([["1c"], ["5o"], ["2c"]], table(o=(6, 6)), chips=(4, 10, 10), pot=2)
    after, events = rules.apply(s, {0: "pass"})
    assert events == [Pass(0, 1, 3)]
    assert after.chips == (3, 10, 10) and after.pot == 3
    assert after.to_move == 1 and after.turn == 2 and after.hands == s.hands


def test_a_seat_without_chips_passes_without_paying() -> None:
    s = state([["1c"], ["5o"]], table(o=(6, 6)), chips=(0, 10), pot=2)
    after, events = rules.apply(s, {0: "pass"})
    assert events == [Pass(0, 0, 2)]
    assert after.chips == (0, 10) and after.pot == 2 and after.to_move == 1


def test_play_passes_to_the_next_seat_wrapping() -> None:
    s = state([["1c"], ["2c"], ["5o", "3c"]], table(o=(6, 6)), to_move=2)
    after, events = rules.apply(s, {2: "5o"})
    assert events == [Play(2, "5o")]
    assert after.to_move == 0 and after.table == table(o=(5, 6)) and after.hands[2] == ("3c",)


def test_the_first_to_empty_their_hand_takes_the_pot_and_a_new_round_is_dealt() -> None:
    s = state([["5o"], ["1c", "2c"], ["3c"]], table(o=(6, 6)), chips=(8, 9, 10), pot=3)
    after, events = rules.apply(s, {0: "5o"})
    assert events[:2] == [Play(0, "5o"), RoundEnd(1, 0, 3, (11, 9, 10))]
    deal = events[2]
    assert isinstance(deal, Deal) and deal.round == 2 and len(events) == 3
    assert after.round == 2 and after.turn == 1 and after.pot == 0 and after.chips == (11, 9, 10)
    assert after.table == EMPTY and after.hands == deal.hands
    assert "6o" in after.hands[after.to_move] and deal.starter == after.to_move
    assert rules.legal(after, after.to_move) == ["6o"]


def test_the_game_ends_after_a_round_that_leaves_a_seat_without_chips() -> None:
    s = state([["5o"], ["1c"], ["2c"]], table(o=(6, 6)), chips=(5, 0, 12), pot=3)
    after, events = rules.apply(s, {0: "5o"})
    assert events == [Play(0, "5o"), RoundEnd(1, 0, 3, (8, 0, 12)), GameEnd((8, 0, 12), (2, 3, 1))]
    assert after.over and rules.decision(after) is None
    assert rules.outcome(after) == rules.Outcome([8, 0, 12], [2, 3, 1], 1)
    with pytest.raises(IllegalAnswer, match="the game is over"):
        rules.apply(after, {0: "1c"})


def test_a_seat_at_zero_that_wins_the_pot_plays_on() -> None:
    s = state([["5o"], ["1c"]], table(o=(6, 6)), chips=(0, 17), pot=3)
    after, events = rules.apply(s, {0: "5o"})
    assert events[1] == RoundEnd(1, 0, 3, (3, 17)) and isinstance(events[2], Deal)
    assert not after.over and rules.outcome(after) is None


def test_ties_share_the_place() -> None:
    s = state([["5o"], ["1c"], ["2c"], ["3c"]], table(o=(6, 6)), chips=(7, 7, 3, 0))
    after, events = rules.apply(s, {0: "5o"})
    assert events[-1] == GameEnd((7, 7, 3, 0), (1, 1, 3, 4))
    assert rules.outcome(after) == rules.Outcome([7, 7, 3, 0], [1, 1, 3, 4], 1)


def test_max_rounds_ends_a_game_nobody_runs_out_of() -> None:
    settings = rules.parse_settings({"max_rounds": 2, "chips": 100}, 3)
    final, outcome = play_game(get_game("sixes").rules, settings, 3, 5, [random_policy(random.Random(5))] * 3)
    assert outcome.rounds == 2 and final.round == 2 and min(final.chips) > 0
    assert sum(outcome.scores) == 300 and outcome.ranks == [1 + sum(o > c for o in final.chips) for c in final.chips]


# --- deals ------------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 9))
def test_all_forty_cards_are_dealt_one_at_a_time_in_seat_order(players: int) -> None:
    hands = rules.deal(11, 1, players)
    assert sorted(c for h in hands for c in h) == sorted(DECK)
    extra = 40 % players
    assert [len(h) for h in hands] == [40 // players + (seat < extra) for seat in range(players)]
    for hand in hands:
        assert list(hand) == sorted(hand, key=DECK.index)


def test_deals_are_a_function_of_seed_and_round() -> None:
    assert rules.deal(3, 1, 4) == rules.deal(3, 1, 4)
    assert rules.deal(3, 1, 4) != rules.deal(3, 2, 4)
    assert rules.deal(3, 1, 4) != rules.deal(4, 1, 4)


# --- invariants over seeded random games ------------------------------------------------


def table_cards(on_table: tuple[Any, ...]) -> list[str]:
    return [f"{r}{s}" for run, s in zip(on_table, "oceb", strict=True) if run for r in RANKS if run[0] <= r <= run[1]]


def check_moment(s: State, start_total: int) -> None:
    """What must hold at every decision of every game."""
    seat = s.to_move
    assert rules.decision(s) == rules.Decision("play", (seat,))
    assert Counter(c for h in s.hands for c in h) + Counter(table_cards(s.table)) == Counter(DECK)
    assert sum(s.chips) + s.pot == start_total and min(s.chips) >= 0
    for run in s.table:
        assert run is None or run[0] <= 6 <= run[1]
    legal = rules.legal(s, seat)
    if legal == ["pass"]:
        assert not any(rules.playable(s.table, c) for c in s.hands[seat])
    else:
        assert "pass" not in legal and set(legal) <= set(s.hands[seat])
    for answer in legal:
        rules.apply(s, {seat: answer})  # every legal answer is accepted
    for card in s.hands[seat]:
        if card not in legal:
            with pytest.raises(IllegalAnswer):
                rules.apply(s, {seat: card})


@pytest.mark.parametrize("players", [2, 3, 4, 5, 8])
def test_invariants_over_seeded_random_games(players: int) -> None:
    game = get_game("sixes").rules
    settings = rules.parse_settings({"chips": 4, "max_rounds": 6}, players)
    for seed in range(6):
        rng = random.Random(seed)
        s, events = rules.start(settings, players, seed)
        assert isinstance(events[0], Deal) and s.to_move == events[0].starter
        rounds_started = 1
        while (pending := game.decision(s)) is not None:
            check_moment(s, 4 * players)
            seat = pending.seats[0]
            s, events = rules.apply(s, {seat: rng.choice(rules.legal(s, seat))})
            for event in events:
                if isinstance(event, Deal):
                    rounds_started += 1
                    assert "6o" in event.hands[event.starter] and s.to_move == event.starter
        outcome = rules.outcome(s)
        assert outcome is not None and outcome.rounds == rounds_started == s.round
        assert sum(outcome.scores) == 4 * players
        assert min(outcome.scores) == 0 or outcome.rounds == 6


# --- what a seat sees ----------------------------------------------------------------------


def test_observe_turns_the_deal_into_each_seats_own_hand() -> None:
    s, events = rules.start(Settings(), 3, 21)
    deal = events[0]
    assert isinstance(deal, Deal)
    for seat in range(3):
        seen = rules.observe(deal, seat)
        assert seen == RoundStart(1, deal.hands[seat], deal.starter, tuple(len(h) for h in deal.hands))
    for event in (Play(0, "6o"), Pass(1, 1, 1), RoundEnd(1, 0, 1, (11, 9, 10)), GameEnd((1, 0), (1, 2))):
        assert rules.observe(event, 2) is event


def test_a_view_holds_only_its_own_hand() -> None:
    s, _ = rules.start(Settings(), 4, 8)
    s, _ = rules.apply(s, {s.to_move: "6o"})
    for seat in range(4):
        v = rules.view(s, seat)
        assert v.hand == s.hands[seat] and v.seat == seat and v.to_move == s.to_move
        assert v.hand_sizes == tuple(len(h) for h in s.hands) and v.table["o"] == (6, 6) and v.table["c"] is None
        wire = msgspec.json.encode(v).decode()
        others = {c for other, hand in enumerate(s.hands) if other != seat for c in hand}
        assert not [c for c in others if f'"{c}"' in wire]


def test_the_sdk_decodes_a_sixes_request() -> None:
    s, _ = rules.start(Settings(), 2, 1)
    line = msgspec.json.encode(Request(1, "play", rules.view(s, s.to_move), rules.legal(s, s.to_move), 1000, 0))
    view_type, _ = game_types("sixes")
    decoded = msgspec.json.decode(line, type=Request[view_type])  # type: ignore[valid-type]
    assert isinstance(decoded.view, View) and decoded.view == rules.view(s, s.to_move)
    assert decoded.legal == ["6o"]


# --- settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "players", "message"),
    [
        ({}, 1, "Sixes takes 2 to 8 players, not 1"),
        ({}, 9, "Sixes takes 2 to 8 players, not 9"),
        ({"chips": 0}, 4, "chips must be 1 to 100, not 0"),
        ({"chips": 101}, 4, "chips must be 1 to 100, not 101"),
        ({"max_rounds": 0}, 4, "max_rounds must be 1 to 10000, not 0"),
        ({"chip": 5}, 4, "unknown Sixes setting 'chip': the settings are chips, max_rounds"),
        ({"variant": "standard"}, 4, "unknown Sixes setting 'variant'"),
        ({"chips": "many"}, 4, "bad Sixes setting: Expected `int`, got `str` - at `\\$.chips`"),
    ],
)
def test_settings_errors_say_what_is_wrong(raw: dict[str, Any], players: int, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        rules.parse_settings(raw, players)


def test_settings_defaults() -> None:
    assert rules.parse_settings({}, 5) == Settings(chips=10, max_rounds=100)
    s, _ = rules.start(rules.parse_settings({"chips": 15}, 5), 5, 0)
    assert s.chips == (15,) * 5 and s.pot == 0


# --- the live view ---------------------------------------------------------------------


def test_live_prints_a_line_per_round() -> None:
    lines = render.live([Play(0, "5o"), RoundEnd(3, 1, 4, (6, 14)), GameEnd((6, 14), (2, 1))], ["A x", "B y"])
    assert [str(line).split() for line in lines] == [
        ["round", "3", "B", "wins,", "takes", "4", "chips", "chips", "A", "6", "B", "14"],
        ["game", "over"],
    ]
