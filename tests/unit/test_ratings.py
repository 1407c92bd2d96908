"""Elo ratings from K-player results: known strengths recovered, honest intervals, bounds,
components and anchors (their statistics over thousands of simulated games, duplicate
deals among them: tests/integration/test_ratings_statistics.py)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np
import pytest

from leaderboard.ratings import (
    BALANCED,
    ELO_PER_NAT,
    TAIL,
    GameResult,
    Rating,
    _t_cdf,
    _t_quantile,
    likelihood_of_superiority,
    rate,
)

TRUE_ELO = {"ada": 1250.0, "bo": 1400.0, "cy": 1450.0, "di": 1550.0, "ed": 1600.0, "flo": 1750.0}
"""Six bots, mean 1500 like the fitted ratings."""


def standing(scores: np.ndarray) -> np.ndarray:
    """1-based ranks per seat (rows are games), higher score better, equal scores share a rank."""
    return (scores[:, None, :] > scores[:, :, None]).sum(axis=2) + 1


def plackett_luce_games(true_elo: dict[str, float], games: int, seats: int, seed: int) -> list[GameResult]:
    """Games of ``seats`` bots drawn at random, ranked by strength plus Gumbel noise.

    That is the Plackett-Luce model, whose pairwise marginals are exactly Bradley-Terry
    with the same strengths; each game is its own group.
    """
    rng = np.random.default_rng(seed)
    names = list(true_elo)
    theta = np.array([true_elo[name] for name in names]) / ELO_PER_NAT
    seat_bot = np.argsort(rng.random((games, len(names))), axis=1)[:, :seats]
    ranks = standing(theta[seat_bot] + rng.gumbel(size=seat_bot.shape))
    return [
        GameResult(game, [names[bot] for bot in bots], ranks[game].tolist())
        for game, bots in enumerate(seat_bot.tolist())
    ]


def by_bot(ratings: Sequence[Rating]) -> dict[str, Rating]:
    return {rating.bot: rating for rating in ratings}


def test_recovers_known_strengths_within_the_intervals() -> None:
    ratings = rate(plackett_luce_games(TRUE_ELO, 3000, 4, seed=1))
    assert [rating.bot for rating in ratings] == sorted(TRUE_ELO, key=lambda bot: -TRUE_ELO[bot])
    assert statistics.mean(rating.elo for rating in ratings) == pytest.approx(1500)
    for rating in ratings:
        assert rating.low <= TRUE_ELO[rating.bot] <= rating.high, rating
        assert rating.low < rating.elo < rating.high
        assert rating.games == pytest.approx(3000 * 4 / 6, rel=0.1)
        assert rating.groups == rating.games  # every game is a group of its own
        assert (rating.bound, rating.component, rating.note) == ("", 0, "")


def test_four_times_the_games_halve_the_intervals() -> None:
    def mean_width(games: int) -> float:
        return statistics.mean(rating.high - rating.low for rating in rate(plackett_luce_games(TRUE_ELO, games, 4, 7)))

    ratio = mean_width(4000) / mean_width(1000)
    assert 0.4 < ratio < 0.6


def test_a_game_where_all_tie_says_nothing() -> None:
    """Every game tied: the bots are at the centre, with no interval (not a zero-width
    one: ties are no evidence that three different bots are equal), and no LOS."""
    tie = [GameResult(game, ["ada", "bo", "cy"], [1, 1, 1]) for game in range(10)]
    for rating in rate(tie):
        assert rating.elo == pytest.approx(1500) and math.isnan(rating.low) and math.isnan(rating.high)
        assert rating.note == BALANCED
    bots, los = likelihood_of_superiority(tie)
    assert [[v if i == j else math.isnan(v) for j, v in enumerate(row)] for i, row in enumerate(los)] == [
        [0.5, True, True],
        [True, 0.5, True],
        [True, True, 0.5],
    ]


def test_deal_groups_that_balance_exactly_give_no_zero_width_interval() -> None:
    """Five different bots, each holding every rank of every deal once (its seat decides
    its rank): every deal group balances exactly. No bot gets 1500 [1500-1500], and no
    LOS of 0.50 says they are as good as each other."""
    bots = ["ada", "bo", "cy", "dee", "eve"]
    games = [
        GameResult(deal, [bots[(seat + rotation) % 5] for seat in range(5)], [1, 2, 3, 4, 5])
        for deal in range(12)
        for rotation in range(5)
    ]
    ratings = rate(games)
    assert [r.note for r in ratings] == [BALANCED] * 5
    assert all(r.elo == pytest.approx(1500) and math.isnan(r.low) and math.isnan(r.high) for r in ratings)
    _, los = likelihood_of_superiority(games)
    assert all(math.isnan(v) for i, row in enumerate(los) for j, v in enumerate(row) if i != j)


def test_matches_a_plain_minorisation_maximisation_fit() -> None:
    """Pairwise decomposition with ties and a bot in two seats, against Hunter's MM algorithm."""
    games = [
        GameResult("d1", ["ada", "bo", "cy"], [1, 2, 3]),
        GameResult("d1", ["bo", "cy", "ada"], [1, 1, 3]),
        GameResult(7, ["ada", "cy"], [1, 2]),
        GameResult(8, ["ada", "bo", "cy", "ada"], [1, 2, 2, 4]),
    ]
    bots = ["ada", "bo", "cy"]
    wins = np.full(3, 0.5)  # the prior: one virtual draw each against strength 1 (log-strength 0)
    pair_games = np.zeros((3, 3))
    for game in games:
        for a in range(len(game.players)):
            for b in range(a + 1, len(game.players)):
                i, j = bots.index(game.players[a]), bots.index(game.players[b])
                if i != j:
                    score = 1.0 if game.ranks[a] < game.ranks[b] else 0.5 if game.ranks[a] == game.ranks[b] else 0.0
                    wins[i] += score
                    wins[j] += 1 - score
                    pair_games[i, j] += 1
                    pair_games[j, i] += 1
    strength = np.ones(3)
    for _ in range(5000):
        strength = wins / ((pair_games / (strength[:, None] + strength[None, :])).sum(axis=1) + 1 / (strength + 1))
    elo = 400 * np.log10(strength)
    expected = dict(zip(bots, 1500 + elo - elo.mean(), strict=True))

    ratings = by_bot(rate(games, bootstrap=0))
    assert {bot: rating.elo for bot, rating in ratings.items()} == pytest.approx(expected, abs=1e-6)
    assert {bot: rating.games for bot, rating in ratings.items()} == {"ada": 4, "bo": 3, "cy": 4}
    assert {bot: rating.groups for bot, rating in ratings.items()} == {"ada": 3, "bo": 2, "cy": 3}
    assert all(math.isnan(rating.low) and math.isnan(rating.high) for rating in ratings.values())
    assert rate(games) == rate(games, bootstrap=200, seed=9)  # old call shapes: no resampling any more


def three_bots(groups: int, games_per_group: int = 3) -> list[GameResult]:
    """Three bots, every game a different order of them, ``groups`` deal groups."""
    orders = [[1, 2, 3], [2, 1, 3], [3, 1, 2], [1, 3, 2], [2, 3, 1]]
    return [
        GameResult(group, ["ada", "bo", "cy"], orders[(group * 2 + game) % len(orders)])
        for group in range(groups)
        for game in range(games_per_group)
    ]


def test_one_deal_group_gives_no_interval_and_two_give_one() -> None:
    for rating in rate(three_bots(1)):
        assert math.isnan(rating.low) and math.isnan(rating.high)
        assert math.isfinite(rating.elo)
        assert (rating.groups, rating.note) == (1, "one deal group: no interval")
    for rating in rate(three_bots(2)):
        assert rating.low < rating.elo < rating.high, rating
        assert rating.groups == 2
        assert rating.note == "2 deal groups: interval from few groups"
    assert all(rating.note == "" for rating in rate(three_bots(8)))


def test_a_bot_that_wins_everything_is_a_lower_bound_and_leaves_the_others_alone() -> None:
    field = plackett_luce_games({"bo": 1450, "cy": 1500, "di": 1550}, 60, 3, seed=2)
    # The same games with "ada" added in a first seat of its own: it wins every comparison.
    joined = [GameResult(g.group, ["ada", *g.players], [1, *(rank + 1 for rank in g.ranks)]) for g in field]
    alone, together = by_bot(rate(field)), by_bot(rate(joined))
    ada = together.pop("ada")
    assert ada.bound == ">"
    assert ada.note == "won every comparison: lower bound only"
    assert math.isnan(ada.high) and ada.low > max(r.high for r in together.values())
    assert ada.elo >= ada.low
    assert [r.bound for r in together.values()] == ["", "", ""]
    for bot, rating in together.items():  # the centre ignores "ada": nobody drifts
        assert (rating.elo, rating.low, rating.high) == pytest.approx((alone[bot].elo, alone[bot].low, alone[bot].high))

    # The bound is exact whatever ties the comparisons of one group: a group's sweep is
    # at most as likely as beating its strongest opponent, and over 60 groups
    # P(beat the strongest)^60 is 2.5% at the bound.
    p = TAIL ** (1 / 60)
    strongest = max(rating.elo for rating in together.values())
    assert ada.low == pytest.approx(strongest + ELO_PER_NAT * math.log(p / (1 - p)))

    # The mirror image: a bot in a last seat of its own lost every comparison.
    last = [GameResult(g.group, [*g.players, "zed"], [*g.ranks, 4]) for g in field]
    zed = by_bot(rate(last))["zed"]
    assert (zed.bound, zed.note) == ("<", "lost every comparison: upper bound only")
    assert math.isnan(zed.low) and zed.high < min(r.low for r in alone.values())


def test_heads_up_sweep_bounds_the_gap() -> None:
    ratings = by_bot(rate([GameResult(game, ["ada", "bo"], [1, 2]) for game in range(10)]))
    p = TAIL ** (1 / 10)
    gap = ELO_PER_NAT * math.log(p / (1 - p))
    assert (ratings["ada"].bound, ratings["bo"].bound) == (">", "<")
    assert ratings["ada"].low == pytest.approx(1500 + gap / 2)
    assert ratings["bo"].high == pytest.approx(1500 - gap / 2)
    bots, los = likelihood_of_superiority([GameResult(game, ["ada", "bo"], [1, 2]) for game in range(10)])
    assert los[0][1] == pytest.approx(1 - 0.5**10)


def test_bots_that_never_met_get_scales_of_their_own() -> None:
    big = plackett_luce_games({"ada": 1400, "bo": 1500, "cy": 1600}, 90, 3, seed=4)
    small = [
        GameResult(f"s{g.group}", ["xi", "yu"], g.ranks[:2]) for g in plackett_luce_games({"a": 0, "b": 0}, 40, 2, 5)
    ]
    ratings = rate(big + small)
    assert [r.component for r in ratings] == [0, 0, 0, 1, 1]  # the largest first
    for component in (0, 1):
        assert statistics.mean(r.elo for r in ratings if r.component == component) == pytest.approx(1500)
    marked = [r for r in ratings if r.component == 1]
    assert all(r.note.startswith("never met the bots of the largest component") for r in marked)
    assert all(r.note == "" for r in ratings if r.component == 0)
    assert by_bot(ratings)["ada"].elo == pytest.approx(by_bot(rate(big))["ada"].elo)
    bots, los = likelihood_of_superiority(big + small)
    assert bots == [r.bot for r in ratings]
    for i, a in enumerate(ratings):
        for j, b in enumerate(ratings):
            assert math.isnan(los[i][j]) == (a.component != b.component)
    assert los[3][4] + los[4][3] == pytest.approx(1)


def test_the_anchor_has_its_elo() -> None:
    games = plackett_luce_games(TRUE_ELO, 500, 4, seed=3)
    centred, anchored = by_bot(rate(games)), by_bot(rate(games, anchor=("bo", 1700)))
    assert (anchored["bo"].elo, anchored["bo"].low, anchored["bo"].high) == (1700, 1700, 1700)
    shift = centred["bo"].elo - 1700
    for bot in TRUE_ELO:
        assert anchored[bot].elo == pytest.approx(centred[bot].elo - shift)
        if bot != "bo":  # an interval of the difference with "bo", which is wider than the centred one
            assert anchored[bot].low < anchored[bot].elo < anchored[bot].high
            assert anchored[bot].high - anchored[bot].low > 0.9 * (centred[bot].high - centred[bot].low)
    assert by_bot(rate(games, anchor="bo"))["bo"].elo == 1500  # a bare bot: 1500
    with pytest.raises(ValueError, match="'zed' is not among the rated bots"):
        rate(games, anchor="zed")
    sweep = [GameResult(g.group, ["zed", *g.players], [1, *(r + 1 for r in g.ranks)]) for g in games]
    with pytest.raises(ValueError, match="'zed' won every comparison, so its rating is only a bound"):
        rate(sweep, anchor=("zed", 1600))


def test_likelihood_of_superiority() -> None:
    games = plackett_luce_games(TRUE_ELO, 800, 4, seed=5)
    bots, los = likelihood_of_superiority(games)
    assert bots == [rating.bot for rating in rate(games)]
    for i in range(len(bots)):
        assert los[i][i] == 0.5
        for j in range(len(bots)):
            assert los[i][j] + los[j][i] == pytest.approx(1)
    assert los[bots.index("flo")][bots.index("ada")] > 0.99
    assert los[bots.index("ada")][bots.index("flo")] < 0.01


def test_equal_bots_are_each_as_likely_better() -> None:
    values = []
    for seed in range(20):
        bots, los = likelihood_of_superiority(plackett_luce_games({b: 1500.0 for b in "abcd"}, 200, 4, seed=seed))
        values += [los[i][j] for i in range(4) for j in range(4) if i != j]
    assert statistics.mean(values) == pytest.approx(0.5, abs=1e-9)  # each pair counted both ways
    assert 0.2 < statistics.median(abs(v - 0.5) for v in values) < 0.35  # spread over (0, 1)


def test_student_t() -> None:
    quantiles = _t_quantile(0.975, np.array([1.0, 2.0, 3.0, 4.0, 10.0, 30.0, 1e4, 1e6]))
    expected = [12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.2281389, 2.0422725, 1.9602012, 1.9602012]
    assert quantiles == pytest.approx(expected, abs=1e-6)  # above 10,000 degrees of freedom: 10,000
    t = np.array([-3.0, -0.4, 0.0, 0.7, 2.5])
    assert _t_cdf(t, np.ones(5)) == pytest.approx(0.5 + np.arctan(t) / math.pi)  # Cauchy
    assert _t_cdf(t, np.full(5, 2.0)) == pytest.approx(0.5 + t / (2 * np.sqrt(2 + t * t)))


def test_same_answer_every_time() -> None:
    games = plackett_luce_games(TRUE_ELO, 300, 3, seed=9)
    assert rate(games) == rate(games)
    assert likelihood_of_superiority(games) == likelihood_of_superiority(games)
    assert rate([]) == []
    assert likelihood_of_superiority([]) == ([], [])


@pytest.mark.parametrize(
    ("game", "message"),
    [
        (GameResult(1, ["ada", "bo"], [1]), r"game 0 \(group 1\): .* players \['ada', 'bo'\] and ranks \[1\]"),
        (GameResult(1, ["ada"], [1]), r"at least 2 players"),
        (
            GameResult("d4", ["ada", "bo"], [0, 1]),
            r"group 'd4' with players \['ada', 'bo'\]: ranks start at 1, got \[0, 1\]",
        ),
    ],
)
def test_bad_results_are_named(game: GameResult, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rate([game])
