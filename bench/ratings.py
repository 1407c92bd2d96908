"""Ratings: how many fewer games duplicate deals need, and how long 100,000 games take to rate.

    .venv/bin/python bench/ratings.py [--seeds 40] [--games 100000] [--bots 16]

(a) Two bots of close strength ("strong" 0.1 above "weak") and two fillers (-0.3, +0.3)
play 4-seat games in which each seat's hand has a luck (normal, sd 1) that matters more
than strength; a seat scores strength + hand luck + noise (sd 0.5) and the seats are
ranked by score. The model is the one in tests/test_ratings.py. Duplicate: each deal is
played once per rotation of the seats and is one deal group. Random: every game is a
fresh deal and its own group. For each seed, the games are counted (160, then a quarter
more each step, whole deals) until LOS(strong > weak) >= 0.975, and until the two 95%
intervals no longer overlap. Reported: mean and median over seeds, and the ratio random
/ duplicate. A steadier figure follows: at a fixed number of games the bootstrap
variance of elo(strong) - elo(weak) in each format; the ratio of the variances is the
ratio of games needed for the same precision.

(b) Wall time of ``rate`` and of ``likelihood_of_superiority`` (200 bootstrap draws
each) on 100,000 4-seat games among 16 bots, duplicate (25,000 groups) and random
(100,000 groups); best and median of 5. Building the ``GameResult`` list is not timed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from leaderboard.ratings import ELO_PER_NAT, GameResult, likelihood_of_superiority, rate

BOTS = ["strong", "weak", "filler-", "filler+"]
STRENGTH = np.array([0.1, 0.0, -0.3, 0.3])
HAND_LUCK = 1.0
NOISE = 0.5
FIRST = 160
MOST = 40_000


def standing(scores: np.ndarray) -> np.ndarray:
    """1-based ranks per seat (rows are games), higher score better, equal scores share a rank."""
    return (scores[:, None, :] > scores[:, :, None]).sum(axis=2) + 1


def luck_games(games: int, duplicate: bool, seed: int) -> list[GameResult]:
    rng = np.random.default_rng(seed)
    seats = len(BOTS)
    rotation = np.arange(games) % seats
    seat_bot = (np.arange(seats)[None, :] + rotation[:, None]) % seats
    deal = np.arange(games) // seats if duplicate else np.arange(games)
    hand_luck = rng.normal(0, HAND_LUCK, (deal[-1] + 1, seats))[deal]
    ranks = standing(STRENGTH[seat_bot] + hand_luck + rng.normal(0, NOISE, seat_bot.shape))
    return [
        GameResult(int(deal[game]), [BOTS[bot] for bot in seat_bot[game]], ranks[game].tolist())
        for game in range(games)
    ]


def separated_by_los(games: list[GameResult], seed: int) -> bool:
    bots, los = likelihood_of_superiority(games, seed=seed)
    return los[bots.index("strong")][bots.index("weak")] >= 0.975


def separated_by_intervals(games: list[GameResult], seed: int) -> bool:
    ratings = {rating.bot: rating for rating in rate(games, seed=seed)}
    return ratings["strong"].low > ratings["weak"].high


def games_to_separate(duplicate: bool, seed: int, separated: Callable[[list[GameResult], int], bool]) -> int:
    games = luck_games(MOST, duplicate, seed)
    count = FIRST
    while count < MOST and not separated(games[:count], seed):
        count = (count * 5 // 4 + 3) // 4 * 4
    return min(count, MOST)


def difference_variance(games: list[GameResult], seed: int) -> float:
    """Bootstrap variance of elo(strong) - elo(weak): with "weak" as the anchor, the interval
    of "strong" is the interval of the difference: (half its width / 1.96) squared."""
    ratings = {rating.bot: rating for rating in rate(games, anchor="weak", seed=seed)}
    half_width = (ratings["strong"].high - ratings["strong"].low) / 2
    return (half_width / 1.96) ** 2


def compare_formats(seeds: int) -> None:
    print(f"(a) duplicate against random deals, {seeds} seeds, LOS(strong > weak) >= 0.975 or intervals apart:")
    results = {}
    for name, separated in (("LOS >= 0.975", separated_by_los), ("intervals apart", separated_by_intervals)):
        counts = {
            fmt: [games_to_separate(fmt == "duplicate", seed, separated) for seed in range(seeds)]
            for fmt in ("duplicate", "random")
        }
        for fmt, values in counts.items():
            print(
                f"  {name:16} {fmt:9}: mean {statistics.mean(values):6.0f} games, median {statistics.median(values):6.0f}"
            )
        results[name] = statistics.mean(counts["random"]) / statistics.mean(counts["duplicate"])
        print(
            f"  {name:16} random / duplicate: {results[name]:.1f} (means), "
            f"{statistics.median(counts['random']) / statistics.median(counts['duplicate']):.1f} (medians)"
        )
    fixed = 4000
    variance = {
        fmt: statistics.mean(
            difference_variance(luck_games(fixed, fmt == "duplicate", seed), seed) for seed in range(seeds)
        )
        for fmt in ("duplicate", "random")
    }
    print(
        f"  at {fixed} games, sd of elo(strong) - elo(weak): duplicate {variance['duplicate'] ** 0.5:.1f}, "
        f"random {variance['random'] ** 0.5:.1f} Elo; variance ratio random / duplicate "
        f"{variance['random'] / variance['duplicate']:.1f}"
    )


def tournament_games(games: int, bots: int, duplicate: bool, seed: int = 0) -> list[GameResult]:
    """4-seat games among ``bots`` bots of spread strengths, with hand luck, 4 bots drawn per deal."""
    rng = np.random.default_rng(seed)
    names = [f"bot{bot:02d}" for bot in range(bots)]
    theta = np.linspace(1300, 1700, bots) / ELO_PER_NAT
    seats = 4
    deals = games // seats if duplicate else games
    deal_bots = np.argsort(rng.random((deals, bots)), axis=1)[:, :seats]
    deal = np.arange(games) // seats if duplicate else np.arange(games)
    rotation = np.arange(games) % seats
    seat_bot = deal_bots[deal[:, None], (np.arange(seats)[None, :] + rotation[:, None]) % seats]
    hand_luck = rng.normal(0, 1, (deals, seats))[deal]
    ranks = standing(theta[seat_bot] + hand_luck + rng.gumbel(size=seat_bot.shape)).tolist()
    return [GameResult(int(deal[game]), [names[bot] for bot in seat_bot[game]], ranks[game]) for game in range(games)]


def time_rating(games: int, bots: int) -> None:
    print(f"(b) {games} games of 4 seats among {bots} bots, 200 bootstrap draws, best / median of 5:")
    for duplicate in (True, False):
        results = tournament_games(games, bots, duplicate)
        groups = len({result.group for result in results})
        for name, function in (("rate", rate), ("likelihood_of_superiority", likelihood_of_superiority)):
            times = []
            for _ in range(5):
                start = time.perf_counter()
                function(results)
                times.append(time.perf_counter() - start)
            label = f"{'duplicate' if duplicate else 'random'} ({groups} groups)"
            print(f"  {label:26} {name:26} {min(times):.3f} s / {statistics.median(times):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=16)
    args = parser.parse_args()
    compare_formats(args.seeds)
    time_rating(args.games, args.bots)


if __name__ == "__main__":
    main()
