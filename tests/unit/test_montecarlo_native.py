"""The montecarlo bot's search in C (sample_bots/montecarlo/search.c) held to its Python
search: built fresh here, given the same generator (splitmix64 on both sides), it must
deal the same cards, play the same playouts and keep the same candidates, total for
total, in every variant the search plays; it must refuse positions out of bounds; and it
must keep its time on a clock of the test's own."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arena.games.nimmt import rules as nimmt
from protocol.messages import NewGame
from protocol.nimmt import View

from .test_montecarlo_search import MC, MONTECARLO, first_view

MASK = (1 << 64) - 1


class SplitMix:
    """search.c's generator in Python, with the two methods the Python search draws
    from (``random``, ``shuffle``, as random.Random's); ``getrandbits`` hands the C
    search the seed, so both searches draw the same numbers."""

    def __init__(self, seed: int) -> None:
        self.seed = self.state = seed

    def getrandbits(self, bits: int) -> int:
        assert bits == 64
        return self.seed

    def random(self) -> float:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return ((z ^ (z >> 31)) >> 11) * 2.0**-53

    def shuffle(self, x: list[int]) -> None:
        for i in reversed(range(1, len(x))):
            j = int(self.random() * (i + 1))
            x[i], x[j] = x[j], x[i]


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """search.c built now, in a folder of this test's own (never a library left over)."""
    folder: Path = tmp_path_factory.mktemp("montecarlo")
    for name in ("search.c", "Makefile"):
        shutil.copy(MONTECARLO / name, folder / name)
    subprocess.run(["make", "-s"], cwd=folder, check=True)
    return MC.Native(folder / "libsearch.so")


def twins(native: Any, **options: Any) -> tuple[Any, Any]:
    python = MC.MonteCarloBot(**options)
    c = MC.MonteCarloBot(**options, native=native)
    for bot in (python, c):
        bot.forgiving = False
    return python, c


@pytest.mark.parametrize(
    ("settings", "players", "options"),
    [
        ({}, 4, {}),
        ({}, 2, {"halve": False}),
        ({"end_score": 25}, 5, {}),
        ({"rounds": 1}, 3, {"rollout": "random"}),
        ({"variant": "tactical"}, 10, {"opponents": "greedy"}),
        ({"variant": "logical"}, 4, {}),
        ({"keep_rows": True, "end_score": 30}, 6, {"opponents": "random"}),
        ({"variant": "professional"}, 4, {}),
        ({"variant": "professional", "end_score": 25}, 3, {"rollout": "random"}),
        ({"variant": "professional", "keep_rows": True}, 7, {"opponents": "greedy"}),
        ({"end_score": 40}, 4, {"objective": "close", "close_weight": 0.5}),
        ({"variant": "professional"}, 5, {"objective": "close"}),
    ],
    ids=[
        "4p",
        "2p-flat",
        "endgame-5p",
        "last-round-random-rollout",
        "tactical-10p",
        "logical",
        "keep_rows-6p",
        "professional-4p",
        "professional-endgame-3p",
        "professional-keep_rows-7p",
        "close-objective-4p",
        "professional-close-objective-5p",
    ],
)
def test_the_c_search_answers_as_the_python_search_does(
    native: Any, settings: dict[str, Any], players: int, options: dict[str, Any]
) -> None:
    """A whole game with random play; at every choice of seat 0 both searches, with
    the same events seen and the same seed, give the same totals, keep the same
    candidates and answer the same."""
    python, c = twins(native, playouts=60, **options)
    rules = nimmt.parse_settings(settings, players)
    state, events = nimmt.start(rules, players, 5)
    for bot in (python, c):
        bot.new_game(NewGame(0, 0, players, settings))
    rng = random.Random(8)
    compared = {"play": 0, "row": 0}
    while (decision := nimmt.decision(state)) is not None:
        seen = [e for e in (nimmt.observe(x, 0) for x in events) if e is not None]
        for bot in (python, c):
            bot.events(seen)
        answers = {seat: rng.choice(nimmt.legal(state, seat)) for seat in decision.seats}
        if 0 in decision.seats and decision.kind in compared:
            view, legal = nimmt.view(state, 0), nimmt.legal(state, 0)
            if len(legal) > 1 and view.hand:
                seed = rng.getrandbits(64)
                search = "search_play" if decision.kind == "play" else "search_row"
                found = [getattr(bot, search)(view, legal, SplitMix(seed), 0.0, 0.0) for bot in (python, c)]
                assert found[0] == found[1], (decision.kind, view)
                assert python.last_totals == c.last_totals
                assert python.last_playouts == c.last_playouts == 60
                if decision.kind == "play":
                    assert python.last_kept == c.last_kept
                compared[decision.kind] += 1
                answers[0] = found[1]
        state, events = nimmt.apply(state, answers)
    assert compared["play"] >= 8, compared


def test_the_c_search_takes_the_rows_the_python_search_takes(native: Any) -> None:
    """Row choices with turns still to play, many seeds, half of them near the game's
    end (ranks counted): the same totals."""
    for seed in range(40):
        rng = random.Random(seed)
        cards = rng.sample(range(1, 105), 4 + 4 + 3 * 7)
        rows = tuple((c,) for c in sorted(cards[:4]))
        low = min(cards[:4])
        mine = [c for c in cards[4:] if c < low][:1] or [1]
        hand = tuple(sorted(c for c in cards[8:15] if c not in mine))
        revealed = (((mine[0], 0), (cards[4] if cards[4] > low else 104, 1)),)
        scores = (50, 58) if seed % 2 else (0, 0)
        view = View(0, 2, 1, 1, hand, rows, scores, (0, 0), revealed, card=mine[0], hand_sizes=(len(hand), len(hand)))
        python, c = twins(native, playouts=30)
        for bot in (python, c):
            bot.new_game(NewGame(0, 0, 2, {}))
        assert (python.objective(view)[1] != MC.NEVER) == bool(seed % 2)
        answers = [bot.search_row(view, [0, 1, 2, 3], SplitMix(seed), 0.0, 0.0) for bot in (python, c)]
        assert answers[0] == answers[1]
        assert python.last_totals == c.last_totals


def test_the_c_search_takes_the_professional_rows_the_python_search_takes(native: Any) -> None:
    """Professional: our card inside every row (each starts below it and ends above), the
    rest of the turn placed at either end; many seeds, half near the end: the same totals."""
    for seed in range(40):
        rng = random.Random(seed)
        card = rng.randrange(30, 75)
        low = rng.sample(range(1, card), 6)
        high = rng.sample(range(card + 1, 105), 10)
        rows = tuple((low[i], high[i]) for i in range(4))
        taken = {card, *low, *high}
        revealed = (((card, 0), (high[4], 1), (low[4], 2)),)  # low[4]: placed before ours, already on a row
        rows = ((low[4], *rows[0]), *rows[1:]) if low[4] < low[0] else rows
        hand = tuple(sorted(rng.sample([c for c in range(1, 105) if c not in taken], 6)))
        scores = (50, 58, 40) if seed % 2 else (0, 0, 0)
        view = View(
            0, 3, 1, 4, hand, rows, scores, (0, 0, 0), revealed, card=card, hand_sizes=(6, 6, 6), variant="professional"
        )
        python, c = twins(native, playouts=30)
        for bot in (python, c):
            bot.new_game(NewGame(0, 0, 3, {"variant": "professional"}))
        answers = [bot.search_row(view, [0, 1, 2, 3], SplitMix(seed), 0.0, 0.0) for bot in (python, c)]
        assert answers[0] == answers[1]
        assert python.last_totals == c.last_totals and python.last_playouts == 30


def test_the_c_search_refuses_positions_out_of_bounds(native: Any) -> None:
    """A card past 104, rows out of order, more seats than the rules allow: refused
    (``ValueError``), never read out of its arrays."""
    view, legal = first_view({})
    bot = MC.MonteCarloBot(playouts=5, native=native)
    bot.new_game(NewGame(0, 0, 4, {}))
    deals = bot.deals(view, random.Random(1))
    fill = native.fill(104, 3)
    rows = MC.sorted_rows(view.rows)
    good = native.play(rows, sorted(legal), deals, fill, True, None, 5, 1.0, 0.0, [], 1)
    assert good[2] == 5
    bad_rows = (rows[0][::-1], rows[1], rows[2])
    with pytest.raises(ValueError, match="refused"):
        native.play(bad_rows, sorted(legal), deals, fill, True, None, 5, 1.0, 0.0, [], 1)
    with pytest.raises(ValueError, match="refused"):
        native.play(rows, [*sorted(legal), 105], deals, fill, True, None, 5, 1.0, 0.0, [], 1)
    crowded = MC.Deals(random.Random(1), list(range(1, 105)), [1] * 10, None, [0.0] * 10, 104)
    with pytest.raises(ValueError, match="refused"):
        native.play(rows, sorted(legal), crowded, fill, True, None, 5, 1.0, 0.0, [], 1)
    short = MC.Deals(random.Random(1), [1, 2, 3], [9, 9, 9], None, [0.0] * 3, 104)
    with pytest.raises(ValueError, match="refused"):
        native.play(rows, sorted(legal), short, fill, True, None, 5, 1.0, 0.0, [], 1)


def test_the_c_search_keeps_its_time_on_a_virtual_clock(native: Any) -> None:
    """With its clock moving ``tick`` seconds a reading, the search deals until the first
    reading past its budget (what it had spent before counted), and halves on the way."""
    view, legal = first_view({})
    native.tick = 0.001
    try:
        bot = MC.MonteCarloBot(native=native)
        bot.new_game(NewGame(0, 0, 4, {}))
        deals = bot.deals(view, random.Random(1))
        rows = MC.sorted_rows(view.rows)
        _, kept, done = native.play(
            rows, sorted(legal), deals, native.fill(104, 3), True, None, 0, 0.1, 0.02, [0.4, 0.7], 1
        )
    finally:
        native.tick = 0.0
    # readings at 1, 2, ... ms after the start: 0.02 + k ms reaches 0.1 at the 80th, read before the 81st deal
    assert done == 80
    assert sorted(kept) == kept and len(kept) == 3
