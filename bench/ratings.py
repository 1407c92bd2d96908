"""Ratings: do the 95% intervals cover the truth, what duplicate deals save, how fast.

    .venv/bin/python bench/ratings.py coverage  [--tournaments 400] [--model synthetic|real|both]
    .venv/bin/python bench/ratings.py duplicate [--games 40000]
    .venv/bin/python bench/ratings.py speed     [--games 100000] [--bots 16]

``coverage``: bots of known strength play many small tournaments; each bot's interval
covers its true Elo or not. Two models: ``real`` is real 6 nimmt! (standard game) with
the in-process policies of ``bench/rating_play.py`` (greedy, greedy-30, greedy-60,
lowest, random); ``synthetic`` ranks each seat by strength + hand luck (normal, sd 1,
the same for every seat that holds the hand) + noise (normal, sd 0.5): the luck model
of ``duplicate`` with five bots. Designs: one table of all 5 bots at 2, 4, 8, 16 and 64
duplicate deals (that many deal groups), and tables of 4 among the 5 bots (all 5 such
tables) at 1, 2, 4 and 16 deals per table (5 to 80 groups); 400 tournaments per cell.
The true Elo of each tournament is the fit of all the other tournaments of the design
together (its own games left out, so the truth does not lean on them; 399 x 64 groups for
the largest cell). A two-sided interval covers if low <= truth <= high, a lower bound
(a bot that won every comparison) if truth >= low, an upper bound if truth <= high; the
true Elos are centred like the fit, on the bots it rated two-sided. The interval of the
coverage is the normal one over tournaments (the bots of one tournament are not
independent). Then the same designs with five copies of one policy (greedy-30; synthetic:
equal strengths): coverage of 1500, and the share of ordered pairs with LOS >= 0.975
(2.5% if honest). Last (synthetic), a newcomer: four bots play 40 or 10 groups at one
table of 4, then the weakest bot joins them for 2 to 6 groups at one table of 5.

``duplicate``: how many games random deals need for the precision of duplicate deals.
The variance of the Elo difference of two bots per game, from the cluster-robust
variance over deal groups, in 20 batches per format (duplicate: a deal played in every
rotation of the seats is one group; random: every game has a deal of its own); the ratio
random / duplicate is the ratio of games for equal precision, with its 95% interval.
Real play heads-up and at 4 seats (the ladder's policies, and the sample heuristic bot's
own code in process), and the synthetic luck model (strong 0.1 above weak, fillers at
-0.3 and +0.3, 4 seats).

``speed``: wall time of ``rate`` and ``likelihood_of_superiority`` on 100,000 4-seat games
among 16 bots, duplicate (25,000 groups) and random (100,000 groups); best and median
of 5. Building the ``GameResult`` list is not timed.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rating_play import LADDER, Design, play_groups  # noqa: E402

from leaderboard.ratings import (  # noqa: E402
    ELO_PER_NAT,
    MEAN_ELO,
    GameResult,
    Table,
    _fit,
    likelihood_of_superiority,
    rate,
    table_from_seats,
)

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Deal groups as arrays: group number per game, (games, seats) seat bots, ranks."""

HAND_LUCK = 1.0
NOISE = 0.5
SYNTHETIC_STRENGTH = np.array([0.7, 0.45, 0.2, -0.35, -0.8])
"""Five bots of the synthetic model, about as far apart in Elo as the real ladder."""
ONE_TABLE = ((0, 1, 2, 3, 4),)
TABLES_OF_4 = tuple(itertools.combinations(range(5), 4))
ONE_TABLE_DEALS = (2, 4, 8, 16, 64)
TABLES_OF_4_DEALS = (1, 2, 4, 16)
EQUAL_POLICY = "greedy-30"
Z95 = 1.959964


def standing(scores: np.ndarray) -> np.ndarray:
    """1-based ranks per seat (rows are games), higher score better, equal scores share a rank."""
    return (scores[:, None, :] > scores[:, :, None]).sum(axis=2) + 1


def luck_groups(
    strength: np.ndarray, tables: Sequence[Sequence[int]], count: int, duplicate: bool, seed: int
) -> Arrays:
    """``count`` deal groups of the synthetic model; group g at table ``g % len(tables)``,
    in every rotation of its seats. Duplicate: one deal (one hand luck per seat) per
    group; random: a deal per game."""
    rng = np.random.default_rng(seed)
    size = len(tables[0])
    table_of = np.array(tables)[np.arange(count) % len(tables)]  # (groups, size)
    group = np.repeat(np.arange(count), size)
    rotation = np.tile(np.arange(size), count)
    seat_bot = table_of[group[:, None], (np.arange(size)[None, :] + rotation[:, None]) % size]
    deal = group if duplicate else np.arange(count * size)
    luck = rng.normal(0, HAND_LUCK, (deal[-1] + 1, size))[deal]
    ranks = standing(strength[seat_bot] + luck + rng.normal(0, NOISE, seat_bot.shape))
    return group, seat_bot, ranks.astype(np.float64)


def tabulate(bots: list[str], arrays: Arrays, start: int = 0, stop: int | None = None) -> Table:
    """The groups ``start`` to ``stop`` - 1 as a ``Table`` (groups renumbered from 0)."""
    group, seat_bot, ranks = arrays
    stop = int(group.max()) + 1 if stop is None else stop
    chosen = (group >= start) & (group < stop)
    return table_from_seats(bots, stop - start, [(group[chosen] - start, seat_bot[chosen], ranks[chosen])])


@dataclass
class Cell:
    label: str
    covered: list[float]
    """Per tournament: the share of its bounded bots whose interval or bound covers the truth."""
    per_bot: np.ndarray
    """Per bot: coverage over tournaments."""
    one_sided: int
    missing: int
    los_pairs: list[float]
    """Per tournament (equal bots): the share of ordered pairs with LOS >= 0.975."""
    apart: list[bool]
    """Per tournament (equal bots): two intervals without overlap."""
    width: float


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan
    return mean, mean - half, mean + half


def run_cell(label: str, bots: list[str], arrays: Arrays, groups_per: int, tournaments: int, equal: bool) -> Cell:
    """Rate ``tournaments`` tournaments of ``groups_per`` consecutive groups each and check
    each interval against the truth: the fit of every group of ``arrays`` outside the
    tournament (all 1500 when ``equal``)."""
    n = len(bots)
    pool = tabulate(bots, arrays)
    tables = [tabulate(bots, arrays, k * groups_per, (k + 1) * groups_per) for k in range(tournaments)]
    if equal:
        truth_theta = np.zeros((tournaments, n))
    else:
        truth_theta = _fit(
            pool.wins[None, :] - np.array([t.wins for t in tables]),
            pool.count[None, :] - np.array([t.count for t in tables]),
            pool.first,
            pool.second,
            n,
        )
    covered, los_pairs, apart, widths = [], [], [], []
    hits = np.zeros(n)
    seen = np.zeros(n)
    one_sided = missing = 0
    for k, table in enumerate(tables):
        ratings = {r.bot: r for r in rate(table)}
        two_sided = [i for i, bot in enumerate(bots) if not ratings[bot].bound]
        truth = MEAN_ELO + ELO_PER_NAT * (truth_theta[k] - truth_theta[k][two_sided].mean())
        results = []
        for i, bot in enumerate(bots):
            r = ratings[bot]
            if r.bound == ">" and math.isfinite(r.low):
                hit = truth[i] >= r.low
                one_sided += 1
            elif r.bound == "<" and math.isfinite(r.high):
                hit = truth[i] <= r.high
                one_sided += 1
            elif not r.bound and math.isfinite(r.low):
                hit = r.low <= truth[i] <= r.high
                widths.append(r.high - r.low)
            else:
                missing += 1
                continue
            results.append(hit)
            hits[i] += hit
            seen[i] += 1
        covered.append(statistics.fmean(results) if results else math.nan)
        if equal:
            order, los = likelihood_of_superiority(table)
            values = [los[a][b] for a in range(n) for b in range(n) if a != b]
            los_pairs.append(statistics.fmean(v >= 0.975 for v in values))
            intervals = [(r.low, r.high) for r in ratings.values() if not r.bound and math.isfinite(r.low)]
            apart.append(any(a[1] < b[0] for a in intervals for b in intervals))
    per_bot = hits / np.maximum(seen, 1)
    width = statistics.fmean(widths) if widths else math.nan
    return Cell(label, [c for c in covered if not math.isnan(c)], per_bot, one_sided, missing, los_pairs, apart, width)


def report(cell: Cell, equal: bool) -> str:
    mean, low, high = mean_interval(cell.covered)
    text = f"  {cell.label:<22} coverage {100 * mean:5.1f}% [{100 * low:5.1f}-{100 * high:5.1f}]"
    text += f"  worst bot {100 * cell.per_bot.min():5.1f}%  mean width {cell.width:5.0f}"
    if cell.one_sided or cell.missing:
        text += f"  one-sided {cell.one_sided}, none {cell.missing}"
    if equal:
        los, los_low, los_high = mean_interval(cell.los_pairs)
        text += f"  LOS>=0.975 {100 * los:4.1f}% [{100 * los_low:3.1f}-{100 * los_high:3.1f}]"
        text += f"  disjoint {100 * statistics.fmean(cell.apart):4.1f}%"
    return text


def coverage(model: str, tournaments: int, workers: int) -> None:
    designs = (("one table of 5", ONE_TABLE, ONE_TABLE_DEALS), ("tables of 4 among 5", TABLES_OF_4, TABLES_OF_4_DEALS))
    for equal in (False, True):
        what = "equal bots" if equal else "a ladder of 5 bots"
        print(f"{model}: {what}, {tournaments} tournaments per cell, 95% intervals")
        for design_label, tables, deal_counts in designs:
            count = tournaments * max(deal_counts) * len(tables)
            start = time.perf_counter()
            if model == "real":
                names = (EQUAL_POLICY,) * 5 if equal else LADDER
                bots = [f"{i}:{name}" for i, name in enumerate(names)]
                arrays = play_groups(Design(names, tables), count, seed=1 + equal, workers=workers)
            else:
                strength = np.zeros(5) if equal else SYNTHETIC_STRENGTH
                bots = [f"bot{i}" for i in range(5)]
                arrays = luck_groups(strength, tables, count, True, seed=1 + equal)
            played = time.perf_counter() - start
            print(f" {design_label}: {len(arrays[0])} games in {played:.0f} s")
            for deals in deal_counts:
                groups = deals * len(tables)
                label = f"{deals} deals ({groups} groups)" if len(tables) > 1 else f"{deals} deals"
                cell = run_cell(label, bots, arrays, groups, tournaments, equal)
                print(report(cell, equal), flush=True)


def newcomer(tournaments: int) -> None:
    """Synthetic: four bots play ``early`` groups at one table of 4, then the fifth (the
    weakest) joins them for ``late`` groups at one table of 5. The truth is the fit of
    500 times as many groups of the same mix."""
    print(f"synthetic: a newcomer joins late, {tournaments} tournaments per cell")
    bots = [f"bot{i}" for i in range(5)]
    first_four = ((0, 1, 2, 3),)
    for early, late in ((40, 2), (40, 3), (40, 6), (10, 3)):
        a = luck_groups(SYNTHETIC_STRENGTH, first_four, early * 500, True, 1)
        b = luck_groups(SYNTHETIC_STRENGTH, ONE_TABLE, late * 500, True, 2)
        pool = table_from_seats(bots, (early + late) * 500, [a, (b[0] + early * 500, b[1], b[2])])
        theta = _fit(pool.wins[None, :], pool.count[None, :], pool.first, pool.second, 5)[0]
        old: list[float] = []
        new: list[float] = []
        for k in range(tournaments):
            a = luck_groups(SYNTHETIC_STRENGTH, first_four, early, True, 1000 + k)
            b = luck_groups(SYNTHETIC_STRENGTH, ONE_TABLE, late, True, 100_000 + k)
            ratings = rate(table_from_seats(bots, early + late, [a, (b[0] + early, b[1], b[2])]))
            two_sided = [bots.index(r.bot) for r in ratings if not r.bound]
            truth = MEAN_ELO + ELO_PER_NAT * (theta - theta[two_sided].mean())
            hits = {r.bot: float(r.low <= truth[bots.index(r.bot)] <= r.high) for r in ratings if not r.bound}
            old.append(statistics.fmean(hits[bot] for bot in bots[:4] if bot in hits))
            if bots[4] in hits:
                new.append(hits[bots[4]])
        mean, low, high = mean_interval(old)
        text = f"  {early} groups, then {late} with the newcomer: the four {100 * mean:5.1f}% [{100 * low:4.1f}-{100 * high:4.1f}]"
        mean, low, high = mean_interval(new)
        print(f"{text}, the newcomer {100 * mean:5.1f}% [{100 * low:4.1f}-{100 * high:4.1f}]", flush=True)


def per_game_variance(bots: list[str], arrays: Arrays, a: str, b: str, batches: int = 20) -> tuple[float, float]:
    """The variance of elo(a) - elo(b) times the games it rests on, and that figure's
    standard error, from ``batches`` batches of the groups."""
    group = arrays[0]
    count = int(group.max()) + 1
    values = []
    for k in range(batches):
        start, stop = k * count // batches, (k + 1) * count // batches
        table = tabulate(bots, arrays, start, stop)
        ratings = {r.bot: r for r in rate(table, anchor=(b, MEAN_ELO))}
        games = int(((group >= start) & (group < stop)).sum())
        spread = (ratings[a].high - ratings[a].low) / 2 / Z95  # df in the thousands: t is the normal
        values.append(spread**2 * games)
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(batches)


def ratio_text(random: tuple[float, float], duplicate: tuple[float, float]) -> str:
    ratio = random[0] / duplicate[0]
    spread = math.sqrt((random[1] / random[0]) ** 2 + (duplicate[1] / duplicate[0]) ** 2)
    low, high = ratio * math.exp(-Z95 * spread), ratio * math.exp(Z95 * spread)
    saved = (1 - 1 / ratio, 1 - 1 / low, 1 - 1 / high)
    return (
        f"random / duplicate {ratio:.2f} [{low:.2f}-{high:.2f}]: duplicate saves "
        f"{100 * saved[0]:.0f}% [{100 * saved[1]:.0f}-{100 * saved[2]:.0f}] of the games"
    )


def duplicate_against_random(games: int, workers: int) -> None:
    print(f"games random deals need for the precision of duplicate deals, {games} games per format")
    cases = (
        ("real, heads-up", ("greedy", "greedy-30"), ((0, 1),), [("greedy", "greedy-30")]),
        ("real, heads-up", ("greedy-60", "lowest"), ((0, 1),), [("greedy-60", "lowest")]),
        ("real, heads-up", ("heuristic", "lowest"), ((0, 1),), [("heuristic", "lowest")]),
        ("real, heads-up", ("heuristic", "random"), ((0, 1),), [("heuristic", "random")]),
        (
            "real, 4 seats",
            ("greedy", "greedy-30", "greedy-60", "lowest"),
            ((0, 1, 2, 3),),
            [("greedy", "greedy-30"), ("greedy-30", "greedy-60"), ("greedy-60", "lowest")],
        ),
        (
            "real, 4 seats",
            ("heuristic", "greedy", "lowest", "random"),
            ((0, 1, 2, 3),),
            [("heuristic", "greedy"), ("heuristic", "lowest"), ("lowest", "random")],
        ),
    )
    for label, names, tables, pairs in cases:
        size = len(tables[0])
        start = time.perf_counter()
        data = {
            duplicate: play_groups(Design(names, tables, duplicate), games // size, 3, workers)
            for duplicate in (True, False)
        }
        # At random deals every game is a group of its own.
        random_group, random_bots, random_ranks = data[False]
        data[False] = (np.arange(len(random_group)), random_bots, random_ranks)
        print(f" {label}: {sum(len(d[0]) for d in data.values())} games in {time.perf_counter() - start:.0f} s")
        for a, b in pairs:
            variances = {duplicate: per_game_variance(list(names), data[duplicate], a, b) for duplicate in data}
            print(f"  {a} - {b}: {ratio_text(variances[False], variances[True])}")
    names = ("strong", "weak", "filler-", "filler+")
    strength = np.array([0.1, 0.0, -0.3, 0.3])
    data = {duplicate: luck_groups(strength, ((0, 1, 2, 3),), games // 4, duplicate, 4) for duplicate in (True, False)}
    random_group, random_bots, random_ranks = data[False]
    data[False] = (np.arange(len(random_group)), random_bots, random_ranks)
    variances = {duplicate: per_game_variance(list(names), data[duplicate], "strong", "weak") for duplicate in data}
    print(f" synthetic luck model, 4 seats: strong - weak: {ratio_text(variances[False], variances[True])}")


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
    print(f"{games} games of 4 seats among {bots} bots, best / median of 5:")
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
    commands = parser.add_subparsers(dest="command", required=True)
    cover = commands.add_parser("coverage", help="coverage of the intervals and LOS of equal bots")
    cover.add_argument("--tournaments", type=int, default=400)
    cover.add_argument("--model", choices=("synthetic", "real", "both"), default="both")
    cover.add_argument("--workers", type=int, default=2)
    dup = commands.add_parser("duplicate", help="games random deals need for the precision of duplicate deals")
    dup.add_argument("--games", type=int, default=40_000)
    dup.add_argument("--workers", type=int, default=2)
    speed = commands.add_parser("speed", help="wall time of rate and likelihood_of_superiority")
    speed.add_argument("--games", type=int, default=100_000)
    speed.add_argument("--bots", type=int, default=16)
    args = parser.parse_args()
    if args.command == "coverage":
        for model in ("synthetic", "real") if args.model == "both" else (args.model,):
            coverage(model, args.tournaments, args.workers)
            if model == "synthetic":
                newcomer(args.tournaments)
    elif args.command == "duplicate":
        duplicate_against_random(args.games, args.workers)
    else:
        time_rating(args.games, args.bots)


if __name__ == "__main__":
    main()
