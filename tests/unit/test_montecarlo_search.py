"""The Monte Carlo reference bot's search (sample_bots/montecarlo), in this process:
repeatable with a fixed number of playouts, inside its time on a clock of the test's
own, and its row choices and opponent model (through the referee:
tests/integration/test_montecarlo.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.games.nimmt import rules as nimmt
from protocol.messages import Hello, Limits, NewGame
from protocol.nimmt import Place, Reveal, RoundStart, View

from ..conftest import SAMPLES, sample_module

MONTECARLO = SAMPLES / "montecarlo"


MC = sample_module("montecarlo", "montecarlo_bot")


def first_view(settings: dict[str, Any], players: int = 4, seed: int = 1) -> tuple[View, list[Any]]:
    state, _ = nimmt.start(nimmt.parse_settings(settings, players), players, seed)
    return nimmt.view(state, 0), nimmt.legal(state, 0)


def test_same_request_same_answer_with_playouts() -> None:
    view, legal = first_view({})
    answers = set()
    for _ in range(3):
        bot = MC.MonteCarloBot(playouts=40, seed=4)
        answers.add(bot.decide("play", view, legal))
        assert bot.last_playouts == 40
    assert len(answers) == 1
    assert answers.pop() in legal


class Clock:
    """The bot's clock in a test: each reading moves it on by ``tick`` seconds, so a search
    that reads it after every deal spends its budget in a known number of deals, however
    fast the machine."""

    def __init__(self, tick: float) -> None:
        self.now = 1000.0
        self.tick = tick

    def perf_counter(self) -> float:
        self.now += self.tick
        return self.now


def test_think_time_is_kept_and_capped_by_move_ms(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first turn of a round thinks 1.8 times ``--think`` seconds (``budget``), but never
    more than a third of ``move_ms``: the search stops at the first reading of its clock
    past that budget, and not before."""
    view, legal = first_view({})
    tick = 0.001
    for think, move_ms, budget in ((0.05, 1000, 0.09), (30.0, 90, 0.03)):
        clock = Clock(tick)
        monkeypatch.setattr(MC, "time", clock)
        bot = MC.MonteCarloBot(think=think)
        bot.hello(Hello(1, "nimmt", {}, 0, 4, Limits(move_ms, 0, 10_000)))
        started = clock.now
        answer = bot.decide("play", view, legal)
        spent = clock.now - started
        assert answer in legal
        assert budget <= spent <= budget + 2 * tick + 1e-9, (think, move_ms, spent)
        assert bot.last_playouts == round(spent / tick) - 1, "one reading of the clock a deal, after it"


def test_a_round_thinks_as_long_as_an_even_split_but_most_on_its_first_turns() -> None:
    """``budget``: the turn with h of a round's 10 cards in hand thinks 2 (h - 1) / 10
    times ``--think``, so the round's 10 turns take 9 x ``--think``, as ``--think`` on
    each of the 9 with a choice would; the forced last turn nothing; a row choice and
    ``--even`` always ``--think``."""
    spread, even = MC.MonteCarloBot(think=0.09), MC.MonteCarloBot(think=0.09, spread=False)
    budgets = []
    for turn in range(1, 11):
        hand = tuple(range(turn, 11))
        revealed = tuple(((c, 0),) for c in range(1, turn))
        view = View(0, 2, 1, turn, hand, ((50,), (60,), (70,), (80,)), (0, 0), (0, 0), revealed)
        budgets.append(spread.budget("play", view))
        assert even.budget("play", view) == 0.09
        assert spread.budget("row", view) == 0.09
    assert budgets[0] == pytest.approx(0.162) and budgets[-1] == 0
    assert budgets == sorted(budgets, reverse=True)
    assert sum(budgets) == pytest.approx(0.81)


def test_halving_keeps_the_close_candidates_and_gives_them_the_deals() -> None:
    """Successive halving: of 10 candidates, 5 are left after 40% of the deals and 3
    after 70%; the answer is one of them, and repeatable. Without it (``halve=False``)
    every candidate is searched on every deal, with as many deals."""
    view, legal = first_view({})
    halved = MC.MonteCarloBot(playouts=100, seed=3)
    answer = halved.decide("play", view, legal)
    assert halved.last_kept == 3 and answer in legal
    assert MC.MonteCarloBot(playouts=100, seed=3).decide("play", view, legal) == answer
    flat = MC.MonteCarloBot(playouts=100, seed=3, halve=False)
    flat.decide("play", view, legal)
    assert flat.last_kept == len(legal) == 10 and flat.last_playouts == halved.last_playouts == 100


def test_near_the_end_a_playout_counts_the_ranks_the_game_ends_with() -> None:
    """``objective``: once a seat is within ``ENDGAME_REACH`` heads of ``end_score`` (or
    in the last of a fixed number of rounds), every seat's heads so far, ours first, and
    the score that ends the game; ``standing``: a playout that ends the game costs
    ``RANK_HEADS`` more for each opponent finishing with fewer heads (half for a tie),
    one that does not only our heads (with ``--own-heads``)."""
    bot = MC.MonteCarloBot(objective="own")
    bot.new_game(NewGame(0, 2, 4, {}))

    def view(scores: tuple[int, ...], round_heads: tuple[int, ...] = (0, 0, 0, 0), round: int = 3) -> View:
        return View(2, 4, round, 1, (1, 2), ((50,), (60,), (70,), (80,)), scores, round_heads, ())

    assert bot.objective(view((10, 10, 10, 10))) is None
    assert bot.objective(view((10, 36, 20, 5), (0, 0, 6, 0))) == ([26, 10, 36, 5], 66, [0.0] * 3)  # 36 + 30 >= 66
    base = [60, 50, 62, 40]
    assert MC.standing(base, [6, 0, 0, 0], 6, 66) == 6 + 3 * MC.RANK_HEADS  # 66 ends it: all three ahead
    assert MC.standing(base, [0, 0, 4, 0], 0, 66) == 2 * MC.RANK_HEADS  # 66 ends it for all
    assert MC.standing(base, [0, 10, 4, 0], 0, 66) == 1.5 * MC.RANK_HEADS  # 66 ends it; 60 ties ours: half
    assert MC.standing(base, [2, 0, 0, 0], 2, 66) == 2, "nobody at 66: only our heads count"
    bot.new_game(NewGame(0, 2, 4, {"rounds": 3}))
    assert bot.objective(view((0, 0, 0, 0), round=3)) == ([0, 0, 0, 0], 0, [0.0] * 3)
    assert bot.objective(view((0, 0, 0, 0), round=2)) is None
    assert MC.standing([0, 0, 0, 0], [1, 0, 0, 0], 1, 0) == 1 + 3 * MC.RANK_HEADS, "the last round ends it"
    heads_only = MC.MonteCarloBot(ranked=False, objective="own")
    heads_only.new_game(NewGame(0, 2, 4, {}))
    assert heads_only.objective(view((60, 60, 60, 60))) is None


def test_heads_up_the_opponents_heads_count_against_ours() -> None:
    """The default objective heads-up: our heads less the opponent's, in every round
    (the game's end still adds the ranks), so a row left for the opponent counts as
    heads we avoided; at larger tables our heads alone until the end is near. The
    rollouts: random heads-up, greedy at larger tables."""
    bot = MC.MonteCarloBot()
    bot.new_game(NewGame(0, 1, 2, {}))
    duel = View(1, 2, 1, 1, (1, 2), ((50,), (60,), (70,), (80,)), (10, 20), (0, 3), ())
    assert bot.objective(duel) == ([23, 10], MC.NEVER, [1.0])
    assert not bot.greedy_rollout(duel)
    table = View(2, 4, 1, 1, (1, 2), ((50,), (60,), (70,), (80,)), (10, 10, 10, 10), (0, 0, 0, 0), ())
    bot.new_game(NewGame(0, 2, 4, {}))
    assert bot.objective(table) is None
    assert bot.greedy_rollout(table)
    forced = MC.MonteCarloBot(objective="relative", rollout="random")
    forced.new_game(NewGame(0, 2, 4, {}))
    assert forced.objective(table) == ([10, 10, 10, 10], MC.NEVER, [1.0] * 3)
    assert not forced.greedy_rollout(table)
    assert MC.standing([10, 10, 10, 10], [3, 6, 0, 3], 3, MC.NEVER, [1.0] * 3) == 3 - 3
    assert MC.standing([10, 10, 10, 10], [3, 0, 0, 0], 3, MC.NEVER, [1.0] * 3) == 3
    assert MC.standing([60, 50, 62, 40], [6, 3, 0, 0], 6, 66, [1.0] * 3) == 6 - 1 + 3 * MC.RANK_HEADS


def test_the_close_objective_weighs_the_opponents_whose_rank_is_in_doubt() -> None:
    """``--objective close``: an opponent's heads count against ours by how close its
    score is to ours (1 at no gap, times ``--close-weight``), less and less as the gap
    grows, and more widely while many rounds are left."""
    bot = MC.MonteCarloBot(objective="close", close_weight=0.5)
    bot.new_game(NewGame(0, 0, 4, {}))
    view = View(0, 4, 3, 1, (1, 2), ((50,), (60,), (70,), (80,)), (0, 0, 6, 30), (0, 0, 0, 0), ())
    base, end, weights = bot.objective(view)
    assert base == [0, 0, 6, 30] and end == MC.NEVER
    assert weights[0] == 0.5 and 0.1 < weights[2] < 0.25 < weights[1] < 0.5
    early = MC.closeness([0, 6], rounds_left=9)[0]
    late = MC.closeness([0, 6], rounds_left=1)[0]
    assert 1 > early > late > 0
    assert MC.standing([0, 0, 6, 30], [4, 8, 0, 8], 4, MC.NEVER, [0.5, 0.0, 0.0]) == 4 - 0.5 * 8 / 3


def test_the_last_turn_row_choice_takes_the_cheapest_row() -> None:
    """With nothing left to play, the row choice is only this turn: the fewest heads."""
    view = View(
        seat=0,
        players=3,
        round=1,
        turn=10,
        hand=(),
        rows=((30, 33), (40,), (50, 55), (60, 61, 62)),
        scores=(0, 0, 0),
        round_heads=(0, 0, 0),
        revealed=(((5, 0), (70, 1), (80, 2)),),
        card=5,
        hand_sizes=(0, 0, 0),
    )
    assert MC.MonteCarloBot(playouts=10).decide("row", view, [0, 1, 2, 3]) == 1


def test_a_row_choice_looks_ahead_in_the_round() -> None:
    """Taking the cheapest row (1 head) leaves row 1 full, so our last card, 22, would
    take its 5 heads next turn; taking row 1 now (5 heads) leaves 22 a safe place."""
    view = View(
        seat=0,
        players=2,
        round=1,
        turn=9,
        hand=(22,),
        rows=((8,), (16, 17, 18, 19, 21), (70,), (80,)),
        scores=(0, 0),
        round_heads=(0, 0),
        revealed=(((3, 0), (90, 1)),),
        card=3,
        hand_sizes=(1, 1),
    )
    assert MC.fallback("row", view, [0, 1, 2, 3]) == 0, "the one-turn heuristic takes the cheapest row"
    assert MC.MonteCarloBot(playouts=50).decide("row", view, [0, 1, 2, 3]) == 1


def test_opponents_are_told_apart_by_their_cards_and_rows() -> None:
    """Seat 1 plays like the greedy policy (a card right after a row end, the cheapest
    row); seat 2 like a random player (a sixth card onto 11 heads, the dearest row)."""
    table = MC.Opponents(seat=0, players=3, settings={})
    hand = (70, 71, 72, 73, 74, 75, 76, 77, 78, 79)
    table.event(RoundStart(1, ((5,), (30, 31, 32, 33, 34), (60,), (90,)), hand))
    table.event(Reveal(1, 1, ((6, 1), (35, 2), (70, 0))))
    assert table.greedy_chance(1) > 0.8
    assert table.greedy_chance(2) < 0.2
    table = MC.Opponents(seat=0, players=3, settings={})
    table.event(RoundStart(1, ((10,), (20, 22), (30,), (40,)), hand))
    table.event(Place(1, 3, 0, (10,), True))  # the cheapest row: 1 head
    table.event(Place(2, 2, 1, (20, 22), True))  # 8 heads, with a 1-head row there
    assert table.greedy_chance(1) > 0.5 > table.greedy_chance(2)
    assert table.rows == [[3], [2], [30], [40]]


@pytest.mark.parametrize(
    ("settings", "players"),
    [
        ({}, 2),
        ({}, 10),
        ({"variant": "tactical"}, 10),
        ({"variant": "logical"}, 6),
        ({"keep_rows": True}, 8),
        ({"variant": "professional"}, 5),
        ({"cards_per_turn": 2}, 4),
        ({"cards_per_turn": 2, "variant": "logical"}, 3),
        ({"shedding": True}, 4),
        ({"shedding": True, "variant": "tactical"}, 6),
    ],
    ids=[
        "2p",
        "10p",
        "tactical-10p",
        "logical-6p",
        "keep_rows-8p",
        "professional-5p",
        "pairs-4p",
        "pairs-logical-3p",
        "shedding-4p",
        "shedding-tactical-6p",
    ],
)
def test_the_search_runs_without_falling_back_at_any_table_size(settings: dict[str, Any], players: int) -> None:
    """In process, with errors raised instead of logged: whole games (2 rounds; shedding:
    its one deal) with the bot in two seats and random play in the others; the rules
    reject any illegal answer, and every card with a choice is searched."""
    settings = settings if settings.get("shedding") else {**settings, "rounds": 2}  # shedding: one deal
    rules = nimmt.parse_settings(settings, players)
    state, events = nimmt.start(rules, players, 17)
    bots = {}
    for seat in (0, players - 1):
        bot = MC.MonteCarloBot(playouts=3, seed=seat)
        bot.forgiving = False
        bot.new_game(NewGame(0, seat, players, settings))
        bots[seat] = bot
    pending: dict[int, list[Any]] = {seat: list(events) for seat in bots}
    rng = random.Random(3)
    asked: set[str] = set()
    while (decision := nimmt.decision(state)) is not None:
        answers = {}
        for seat in decision.seats:
            legal = nimmt.legal(state, seat)
            if seat in bots:
                bots[seat].events([e for e in (nimmt.observe(x, seat) for x in pending[seat]) if e is not None])
                pending[seat] = []
                answers[seat] = bots[seat].decide(decision.kind, nimmt.view(state, seat), legal)
                asked.add(decision.kind)
                if decision.kind == "play" and len(legal) > 1:
                    assert bots[seat].last_playouts == 3, "searched, not answered by the fallback"
            else:
                answers[seat] = rng.choice(legal)
        state, events = nimmt.apply(state, answers)
        for seat in bots:
            pending[seat].extend(events)
    assert state.over and "play" in asked
    assert all(bot.table is not None for bot in bots.values()), "the events were understood"


def test_the_professional_search_places_a_card_where_the_referee_does() -> None:
    """``pro_spot`` against the referee's ``professional_place`` on random rows: the same
    row and end for every card, None exactly where a row must be chosen."""
    rng = random.Random(2)
    for _ in range(2000):
        cards = rng.sample(range(1, 105), 13)
        rows = [sorted(cards[3 * i : 3 * i + rng.randint(1, 3)]) for i in range(4)]
        firsts, lasts, _, _ = MC.table_rows(rows)
        card = cards[12]
        expected = nimmt.professional_place(rows, card)
        found = MC.pro_spot(firsts, lasts, card)
        assert found == (None if expected is None else (expected[0], expected[1] == "left")), (rows, card)


def test_professional_opponents_are_told_apart_by_the_ends_they_play_to() -> None:
    """Professional: seat 1 plays 4 just before row 0's first card (safe, as the greedy
    policy would), seat 2 a sixth card onto 11 heads at a left end."""
    table = MC.Opponents(seat=0, players=3, settings={"variant": "professional"})
    hand = (70, 71, 72, 73, 74, 75, 76, 77, 78, 79)
    table.event(RoundStart(1, ((5,), (30, 31, 32, 33, 34), (60,), (90,)), hand))
    table.event(Reveal(1, 1, ((4, 1), (29, 2), (70, 0))))
    assert table.greedy_chance(1) > 0.8
    assert table.greedy_chance(2) < 0.2


def test_with_two_cards_a_turn_a_round_of_five_turns_thinks_four_times_think() -> None:
    """``budget`` counts turns, not cards: 1.6, 1.2, 0.8, 0.4 and 0 times ``--think`` on
    the turns with 10, 8, 6, 4 and 2 cards in hand."""
    bot = MC.MonteCarloBot(think=0.1)
    budgets = []
    for turn in range(1, 6):
        hand = tuple(range(2 * turn - 1, 11))
        revealed = tuple(((c, 0), (c + 50, 1)) for c in range(1, turn))
        view = View(0, 2, 1, turn, hand, ((50,), (60,), (70,), (80,)), (0, 0), (0, 0), revealed, cards_per_turn=2)
        budgets.append(bot.budget("play", view))
    assert budgets == pytest.approx([0.16, 0.12, 0.08, 0.04, 0.0])


def test_when_shedding_the_cards_an_opponent_took_are_in_its_hand_in_every_deal() -> None:
    """Seat 1 took a row of five: every shedding deal gives it those five beside its
    share of the unseen cards, as many in all as its hand holds; one it plays again
    leaves it."""
    bot = MC.MonteCarloBot(playouts=5)
    bot.forgiving = False
    settings = {"shedding": True}
    bot.new_game(NewGame(0, 0, 3, settings))
    hand = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    row = (20, 21, 22, 23, 24)
    bot.events([RoundStart(1, (row, (40,), (60,), (80,)), hand), Reveal(1, 1, ((11, 0), (25, 1), (90, 2)))])
    bot.events([Place(1, 25, 0, row)])
    assert bot.table is not None and bot.table.holds == {1: set(row)}
    bot.events([Reveal(1, 2, ((12, 0), (21, 1), (91, 2)))])
    assert bot.table.holds == {1: {20, 22, 23, 24}}
    view = View(
        0, 3, 1, 3, hand[2:], ((25,), (40,), (60, 90, 91), (80,)), (0, 0, 0), (0, 0, 0),
        (((11, 0), (25, 1), (90, 2)), ((12, 0), (21, 1), (91, 2))), hand_sizes=(8, 12, 8), shedding=True,
    )  # fmt: skip
    deals = bot.deals(view, random.Random(4))
    for _ in range(20):
        hands, _ = deals.hands()
        assert {20, 22, 23, 24} <= set(hands[0]) and len(hands[0]) == 12 and len(hands[1]) == 8
        assert not set(hands[1]) & {20, 22, 23, 24}
    assert bot.decide("play", view, list(view.hand)) in view.hand and bot.last_playouts == 5
