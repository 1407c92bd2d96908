"""The ratings' statistics over thousands of simulated games with hand luck: intervals that
cover the truth about 95 % of the time, duplicate deals that separate two bots in fewer
games, equal bots that look superior only by chance. Seconds of computation each: out of
the quick unit lane (the fit itself: tests/unit/test_ratings.py)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from leaderboard.ratings import (
    ELO_PER_NAT,
    GameResult,
    _fit,
    likelihood_of_superiority,
    rate,
    table_from_seats,
)

from ..unit.test_ratings import standing

# Duplicate deals with hand luck. Each deal gives each seat's hand a luck that matters
# more than the bots' strengths; a game ranks the seats by strength + hand luck + noise.
LUCK_BOTS = ["strong", "weak", "filler-", "filler+"]
LUCK_STRENGTH = np.array([0.1, 0.0, -0.3, 0.3])
HAND_LUCK = 1.0
NOISE = 0.5


def luck_arrays(
    strength: np.ndarray, groups: int, duplicate: bool, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All bots at one table; a group is one deal in every rotation of the seats
    (duplicate) or as many games on deals of their own. Group numbers, seat bots, ranks."""
    rng = np.random.default_rng(seed)
    seats = len(strength)
    group = np.repeat(np.arange(groups), seats)
    rotation = np.tile(np.arange(seats), groups)
    seat_bot = (np.arange(seats)[None, :] + rotation[:, None]) % seats
    deal = group if duplicate else np.arange(groups * seats)
    luck = rng.normal(0, HAND_LUCK, (deal[-1] + 1, seats))[deal]
    ranks = standing(strength[seat_bot] + luck + rng.normal(0, NOISE, seat_bot.shape))
    return group, seat_bot, ranks.astype(np.float64)


def luck_games(games: int, duplicate: bool, seed: int, strength: np.ndarray = LUCK_STRENGTH) -> list[GameResult]:
    group, seat_bot, ranks = luck_arrays(strength, games // len(strength), duplicate, seed)
    if not duplicate:
        group = np.arange(len(group))
    return [
        GameResult(int(group[game]), [LUCK_BOTS[bot] for bot in seat_bot[game]], ranks[game].tolist())
        for game in range(len(group))
    ]


def test_intervals_cover_the_truth_about_95_percent_of_the_time() -> None:
    """200 tournaments of 5 bots at one table, 4 duplicate deals each: the truth is the fit
    of 40,000 more deals. The games of one deal are correlated; the intervals must see it."""
    strength = np.array([0.7, 0.45, 0.2, -0.35, -0.8])
    bots = [f"b{i}" for i in range(5)]
    group, seat_bot, ranks = luck_arrays(strength, 40_000, True, seed=11)
    pool = table_from_seats(bots, 40_000, [(group, seat_bot, ranks)])
    theta = _fit(pool.wins[None, :], pool.count[None, :], pool.first, pool.second, 5)[0]
    truth = 1500 + ELO_PER_NAT * (theta - theta.mean())
    group, seat_bot, ranks = luck_arrays(strength, 200 * 4, True, seed=12)
    covered = []
    for k in range(200):
        chosen = group // 4 == k
        table = table_from_seats(bots, 4, [(group[chosen] % 4, seat_bot[chosen], ranks[chosen])])
        for rating in rate(table):
            assert not rating.bound
            covered.append(rating.low <= truth[bots.index(rating.bot)] <= rating.high)
    assert 0.9 <= statistics.fmean(covered) <= 0.99


def games_to_separate(duplicate: bool, seed: int, most: int = 12_000) -> int:
    """Games (whole deals, from 160 up by a quarter each step) until LOS(strong > weak) >= 0.975."""
    games = luck_games(most, duplicate, seed)
    count = 160
    while count < most:
        bots, los = likelihood_of_superiority(games[:count])
        if los[bots.index("strong")][bots.index("weak")] >= 0.975:
            return count
        count = (count * 5 // 4 + 3) // 4 * 4
    return most


def test_duplicate_deals_separate_two_bots_in_fewer_games() -> None:
    """In this model hand luck outweighs the skill gap, and duplicate deals cancel it."""
    duplicate = [games_to_separate(True, seed) for seed in range(10)]
    random = [games_to_separate(False, seed) for seed in range(10)]
    ratio = statistics.mean(random) / statistics.mean(duplicate)
    print(f"games to separate: duplicate {duplicate}, random {random}; random / duplicate = {ratio:.1f}")
    assert ratio > 1.5


@pytest.mark.parametrize("duplicate", [True, False], ids=["duplicate", "random"])
def test_equal_bots_look_superior_only_by_chance(duplicate: bool) -> None:
    """With "strong" and "weak" equally strong, LOS >= 0.975 should happen in about 2.5% of
    tournaments, although hand luck correlates the games of one deal."""
    equal = np.array([0.0, 0.0, -0.3, 0.3])
    superior = []
    for seed in range(200):
        bots, los = likelihood_of_superiority(luck_games(320, duplicate, 1000 + seed, equal))
        superior.append(los[bots.index("strong")][bots.index("weak")] >= 0.975)
    assert statistics.mean(superior) <= 0.06
