"""Elo ratings from K-player results: known strengths recovered, honest intervals, duplicate deals."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np
import pytest

from leaderboard.ratings import ELO_PER_NAT, GameResult, Rating, likelihood_of_superiority, rate

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
        assert rating.low <= rating.elo <= rating.high
        assert rating.games == pytest.approx(3000 * 4 / 6, rel=0.1)


def test_intervals_cover_the_truth_about_95_percent_of_the_time() -> None:
    """The pairwise results of one game are correlated; the bootstrap over games must see it."""
    covered = []
    for seed in range(20):
        for rating in rate(plackett_luce_games(TRUE_ELO, 600, 4, seed=100 + seed)):
            covered.append(rating.low <= TRUE_ELO[rating.bot] <= rating.high)
    assert 0.88 <= statistics.mean(covered) <= 0.995


def test_four_times_the_games_halve_the_intervals() -> None:
    def mean_width(games: int) -> float:
        return statistics.mean(rating.high - rating.low for rating in rate(plackett_luce_games(TRUE_ELO, games, 4, 7)))

    ratio = mean_width(4000) / mean_width(1000)
    assert 0.4 < ratio < 0.6


def test_a_game_where_all_tie_says_nothing() -> None:
    tie = [GameResult(game, ["ada", "bo", "cy"], [1, 1, 1]) for game in range(10)]
    for rating in rate(tie):
        assert (rating.elo, rating.low, rating.high) == pytest.approx((1500, 1500, 1500))


def test_a_bot_that_won_everything_stays_finite() -> None:
    games = [GameResult(game, ["ada", "bo", "cy"], [1, 2 + game % 2, 3 - game % 2]) for game in range(50)]
    ada, *others = rate(games)
    assert ada.bot == "ada"
    assert all(math.isfinite(value) for value in (ada.elo, ada.low, ada.high))
    assert ada.elo > max(other.high for other in others)


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
    assert all(math.isnan(rating.low) and math.isnan(rating.high) for rating in ratings.values())


def test_the_anchor_is_exactly_1500() -> None:
    games = plackett_luce_games(TRUE_ELO, 500, 4, seed=3)
    centred, anchored = by_bot(rate(games)), by_bot(rate(games, anchor="bo"))
    assert (anchored["bo"].elo, anchored["bo"].low, anchored["bo"].high) == (1500, 1500, 1500)
    shift = centred["bo"].elo - 1500
    for bot in TRUE_ELO:
        assert anchored[bot].elo == pytest.approx(centred[bot].elo - shift)
    with pytest.raises(ValueError, match="'zed' is not among the rated bots"):
        rate(games, anchor="zed")


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


def test_same_seed_same_answer() -> None:
    games = plackett_luce_games(TRUE_ELO, 300, 3, seed=9)
    assert rate(games, seed=4) == rate(games, seed=4)
    assert rate(games, seed=4) != rate(games, seed=5)
    assert [rating.elo for rating in rate(games, seed=4)] == [rating.elo for rating in rate(games, seed=5)]
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


# Duplicate against random deals. Each deal gives each seat's hand a luck that matters
# more than the bots' strengths; a game ranks the seats by strength + hand luck + noise.
LUCK_BOTS = ["strong", "weak", "filler-", "filler+"]
LUCK_STRENGTH = np.array([0.1, 0.0, -0.3, 0.3])
HAND_LUCK = 1.0
NOISE = 0.5


def luck_games(games: int, duplicate: bool, seed: int, strength: np.ndarray = LUCK_STRENGTH) -> list[GameResult]:
    """The four bots at four seats. Duplicate: each deal is played once per rotation of the
    seats and is one group. Random: every game is a fresh deal and its own group."""
    rng = np.random.default_rng(seed)
    seats = len(LUCK_BOTS)
    rotation = np.arange(games) % seats
    seat_bot = (np.arange(seats)[None, :] + rotation[:, None]) % seats
    deal = np.arange(games) // seats if duplicate else np.arange(games)
    hand_luck = rng.normal(0, HAND_LUCK, (deal[-1] + 1, seats))[deal]
    ranks = standing(strength[seat_bot] + hand_luck + rng.normal(0, NOISE, seat_bot.shape))
    return [
        GameResult(int(deal[game]), [LUCK_BOTS[bot] for bot in seat_bot[game]], ranks[game].tolist())
        for game in range(games)
    ]


def games_to_separate(duplicate: bool, seed: int, most: int = 12_000) -> int:
    """Games (whole deals, from 160 up by a quarter each step) until LOS(strong > weak) >= 0.975."""
    games = luck_games(most, duplicate, seed)
    count = 160
    while count < most:
        bots, los = likelihood_of_superiority(games[:count], seed=seed)
        if los[bots.index("strong")][bots.index("weak")] >= 0.975:
            return count
        count = (count * 5 // 4 + 3) // 4 * 4
    return most


def test_duplicate_deals_separate_two_bots_in_fewer_games() -> None:
    duplicate = [games_to_separate(True, seed) for seed in range(10)]
    random = [games_to_separate(False, seed) for seed in range(10)]
    ratio = statistics.mean(random) / statistics.mean(duplicate)
    print(f"games to separate: duplicate {duplicate}, random {random}; random / duplicate = {ratio:.1f}")
    assert ratio > 1.5


@pytest.mark.parametrize("duplicate", [True, False], ids=["duplicate", "random"])
def test_equal_bots_look_superior_only_by_chance(duplicate: bool) -> None:
    """With "strong" and "weak" equally strong, LOS >= 0.975 should happen in about 2.5% of
    tournaments. Resampling whole deals keeps it so although hand luck correlates the games."""
    equal = np.array([0.0, 0.0, -0.3, 0.3])
    superior = []
    for seed in range(200):
        bots, los = likelihood_of_superiority(luck_games(320, duplicate, 1000 + seed, equal), seed=seed)
        superior.append(los[bots.index("strong")][bots.index("weak")] >= 0.975)
    assert statistics.mean(superior) <= 0.06
