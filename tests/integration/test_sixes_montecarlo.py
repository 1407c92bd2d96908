"""The Sixes search bot (sample_bots/sixes-montecarlo): its deals keep to what the
passes told, its playouts keep the referee's rules, and through the referee it plays
whole games legally, repeatably with a fixed number of playouts, at every table size."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from arena.bots import load_bot
from arena.games.sixes import rules
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import DecisionLine, FaultLine, verify
from arena.sandbox.local import LocalSandbox
from protocol.sixes import Pass, Play, RoundStart

from ..conftest import SAMPLES, sample_module

FOLDER = SAMPLES / "sixes-montecarlo"


SX = sample_module("sixes-montecarlo", "sixes_montecarlo_bot")


def test_a_deal_gives_each_seat_its_size_and_nothing_it_was_seen_to_lack() -> None:
    rng = random.Random(1)
    unseen = list(range(12))
    lacks = [set(), {0, 1, 2, 3, 4, 5}, {6, 7}, set()]
    for _ in range(200):
        hands = SX.deal(unseen, {1: 4, 2: 5, 3: 3}, lacks, rng)
        assert sorted(c for hand in hands.values() for c in hand) == unseen
        assert {s: len(h) for s, h in hands.items()} == {1: 4, 2: 5, 3: 3}
        assert not set(hands[1]) & lacks[1] and not set(hands[2]) & lacks[2]
    impossible = [set(), set(range(12)), set(), set()]  # a seat that cannot hold any card: constraints dropped
    hands = SX.deal(unseen, {1: 4, 2: 5, 3: 3}, impossible, rng)
    assert sorted(c for hand in hands.values() for c in hand) == unseen


def test_a_pass_tells_the_cards_the_seat_lacks() -> None:
    known = SX.Knowledge(3)
    known.event(RoundStart(1, ("6o",), 0, (14, 13, 13)))
    known.event(Play(0, "6o"))
    known.event(Pass(1, 1, 1))
    assert known.lacks[1] == {SX.ID[c] for c in ("5o", "7o", "6c", "6e", "6b")}
    assert known.lacks[0] == known.lacks[2] == set()


def test_a_playout_keeps_the_referee_s_rules() -> None:
    """Whole rounds with every hand known and no slips: the bot's playout and the
    arena's rules, every seat playing ``policy``, end with the same chips (2 chips a
    seat, so seats run out and pass for free too)."""
    for seed in range(30):
        players = 2 + seed % 7
        state, _ = rules.start(rules.parse_settings({"chips": 2}, players), players, seed)
        opener = rules.decision(state).seats[0]
        state, _ = rules.apply(state, {opener: "6o"})  # a round's first card is forced; playouts start later
        hands = [sorted(SX.ID[c] for c in hand) for hand in state.hands]
        lo, hi = [-1] * 4, [-1] * 4
        SX.place(SX.ID["6o"], lo, hi)
        expected = {}
        for me in range(players):
            copy = [list(h) for h in hands]
            expected[me] = SX.playout(copy, lo[:], hi[:], (opener + 1) % players, me, list(state.chips), 0, lambda: 0.5)
        while True:
            decision = rules.decision(state)
            turn = decision.seats[0]
            legal = rules.legal(state, turn)
            hand = sorted(SX.ID[c] for c in state.hands[turn])
            answer = legal[0] if legal == ["pass"] else SX.CARD[SX.policy(hand, sorted(SX.ID[c] for c in legal))]
            state, events = rules.apply(state, {turn: answer})
            ended = [e for e in events if type(e).__name__ == "RoundEnd"]
            if ended:
                assert {me: ended[0].chips[me] for me in range(players)} == expected, seed
                break


def bots(*runs: str) -> list[Any]:
    bot = load_bot(FOLDER)
    return [msgspec.structs.replace(bot, manifest=msgspec.structs.replace(bot.manifest, run=run)) for run in runs]


async def play(players: list[Any], seed: int, games: int) -> MatchResult:
    seats = list(range(len(players)))
    specs = [GameSpec(seed + g, seats[g:] + seats[:g]) for g in range(games)]
    spec = MatchSpec("sixes", {"chips": 3}, players, specs, TimeLimits(1000, 0, 10_000))
    return await play_match(spec, LocalSandbox())


@pytest.mark.parametrize("players", [2, 5, 8])
async def test_whole_games_through_the_referee_are_legal_and_repeatable(players: int) -> None:
    heuristic = load_bot(SAMPLES / "sixes-heuristic")
    lineup = [*bots("python3 bot.py --playouts 20 --seed 3"), *[heuristic] * (players - 1)]
    first, second = [await play(lineup, 7, 2) for _ in range(2)]
    answers = []
    for result in (first, second):
        seen = []
        for game in result.games:
            assert not [line for line in game.replay if isinstance(line, FaultLine)]
            assert [s.status for s in game.statuses] == ["ok"] * players
            assert list(verify(game.replay))
            seat = game.spec.seats.index(0)
            seen += [
                line.answers[line.seats.index(seat)]
                for line in game.replay
                if isinstance(line, DecisionLine) and seat in line.seats
            ]
        answers.append(seen)
    assert answers[0] == answers[1] and len(answers[0]) >= 10
