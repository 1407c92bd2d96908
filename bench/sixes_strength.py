"""Sixes strength: how much one bot beats another, with real bot processes through the referee.

    .venv/bin/python bench/sixes_strength.py [--games 200] [--players 4] [--duplicate]

Plays one match of full games of Sixes (default settings: 10 chips each, until a round
leaves someone without chips, at most 100 rounds) with the bot in one seat and copies
of the opponent in the others; the bot's seat rotates (game g: seat g % players, seed
seed + g). Reports the bot's win rate (rank 1, shared firsts count as wins) with a 95%
Wilson interval, its mean rank, the mean final chips of the bot and of the opponents
with a 95% interval for their difference (normal approximation over games), the rounds
per game, the faults (seats whose status is not "ok") and wall time. The statistics
are those of bench/strength.py (6 nimmt!), imported from it.

With ``--duplicate`` every deal is played once with the bot in each seat (game g: the
seed + g // players, the games rounded up to whole deals), so the luck of the cards
falls on the bot and the opponents alike; the intervals are then taken over deals (the
mean of each deal's rotations), as its games are not independent of one another.

The games are played as consecutive matches of at most --per-match games, each with
fresh bot processes, so one crashed bot costs one match, not the whole measurement.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import trio
from strength import BOT, mean_interval, seating, wilson

from arena.bots import load_bot
from arena.play.match import GameResult, GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.sandbox.local import LocalSandbox

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class GameStats:
    """What one game says about the bot against the opponents."""

    rank: int
    shared_first: bool
    """The bot ranked first together with another seat."""
    bot_chips: int
    opponent_chips: float
    """Mean over the opponents' seats."""
    opponent_wins: float
    """The share of the opponents' seats ranked first."""
    rounds: int
    faults_bot: int
    faults_opponents: int
    first_faults: tuple[str, ...]
    """For each seat that is not "ok": its first fault, as ``kind: message``."""


def match_specs(args: argparse.Namespace) -> list[MatchSpec]:
    """The matches that together play games 0 to ``args.games - 1``, in order."""
    players = args.players
    bots = [load_bot(args.bot)] + [load_bot(args.opponent)] * (players - 1)
    game_specs = [GameSpec(args.seed + deal_of(g, args), seating(g, players)) for g in range(args.games)]
    limits = TimeLimits(move_ms=args.move_time)
    chunks = range(0, args.games, args.per_match)
    return [MatchSpec("sixes", {}, bots, game_specs[i : i + args.per_match], limits) for i in chunks]


def deal_of(game_no: int, args: argparse.Namespace) -> int:
    """The deal game ``game_no`` plays: its own, or with ``--duplicate`` one per seat rotation."""
    return game_no // args.players if args.duplicate else game_no


def game_stats(result: GameResult) -> GameStats:
    bot_seat = result.spec.seats.index(BOT)
    others = [seat for seat in range(len(result.scores)) if seat != bot_seat]
    rank = result.ranks[bot_seat]
    not_ok = [status.status != "ok" for status in result.statuses]
    return GameStats(
        rank=rank,
        shared_first=rank == 1 and result.ranks.count(1) > 1,
        bot_chips=result.scores[bot_seat],
        opponent_chips=statistics.fmean(result.scores[seat] for seat in others),
        opponent_wins=statistics.fmean(result.ranks[seat] == 1 for seat in others),
        rounds=result.rounds,
        faults_bot=int(not_ok[bot_seat]),
        faults_opponents=sum(not_ok[seat] for seat in others),
        first_faults=tuple(f"{s.faults[0].kind}: {s.faults[0].message}" for s in result.statuses if s.faults),
    )


def report(
    stats: list[GameStats], bot: str, opponent: str, players: int, seconds: float, duplicate: bool = False
) -> str:
    n = len(stats)
    wins = sum(s.rank == 1 for s in stats)
    shared = sum(s.shared_first for s in stats)
    bot_chips = statistics.fmean(s.bot_chips for s in stats)
    opp_chips = statistics.fmean(s.opponent_chips for s in stats)
    deals = [stats[i : i + players] for i in range(0, n, players)] if duplicate else [[s] for s in stats]
    diff_mean, diff_low, diff_high = mean_interval(
        [statistics.fmean(s.bot_chips - s.opponent_chips for s in deal) for deal in deals]
    )
    edge, edge_low, edge_high = mean_interval(
        [statistics.fmean((s.rank == 1) - s.opponent_wins for s in deal) for deal in deals]
    )
    if duplicate:
        _, low, high = mean_interval([statistics.fmean(s.rank == 1 for s in deal) for deal in deals])
        low, high = max(0.0, low), min(1.0, high)
    else:
        low, high = wilson(wins, n)
    rounds = [s.rounds for s in stats]
    faults_bot = sum(s.faults_bot for s in stats)
    faults_opp = sum(s.faults_opponents for s in stats)
    first_faults = Counter(fault for s in stats for fault in s.first_faults).most_common(5)
    return "\n".join(
        [
            f"strength: {bot} vs {players - 1} x {opponent}, {n} full {players}-player games of Sixes"
            + (f" ({len(deals)} deals, each in every seat rotation)" if duplicate else ""),
            f"  win rate (rank 1)   {wins / n:.1%}  [95% CI {low:.1%} to {high:.1%}]"
            f"  ({wins} wins, {shared} of them shared; an equal bot: about {1 / players:.0%})",
            f"  less an opponent's  {edge:+.1%}  [95% CI {edge_low:+.1%} to {edge_high:+.1%}]"
            f"  (its win rate less the mean {opponent} seat's, shared firsts counted for each)",
            f"  mean rank           {statistics.fmean(s.rank for s in stats):.2f} of {players}",
            f"  final chips         {bot} {bot_chips:.1f}, {opponent} {opp_chips:.1f}",
            f"  difference          {diff_mean:+.1f}  [95% CI {diff_low:+.1f} to {diff_high:+.1f}]"
            f"  ({bot} minus {opponent}, per game)",
            f"  rounds per game     {statistics.fmean(rounds):.1f} (at most {max(rounds)})",
            f"  faults              {faults_bot + faults_opp} seat-games not ok"
            f" ({bot} {faults_bot}, {opponent} {faults_opp})",
            *[f"    {count} x {fault}" for fault, count in first_faults],
            f"  wall time           {seconds:.1f} s ({n / seconds:.1f} games/s)",
        ]
    )


async def main(args: argparse.Namespace) -> None:
    specs = match_specs(args)
    sandbox = LocalSandbox()
    start = time.perf_counter()
    results: list[MatchResult] = [await play_match(spec, sandbox) for spec in specs]
    seconds = time.perf_counter() - start
    stats = [game_stats(game) for result in results for game in result.games]
    bots = specs[0].bots
    print(report(stats, bots[BOT].name, bots[1].name, args.players, seconds, args.duplicate))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games in the match (default 200)")
    parser.add_argument("--players", type=int, default=4, help="seats per game, 2 to 8 (default 4)")
    parser.add_argument("--bot", type=Path, default=ROOT / "sample_bots" / "sixes-heuristic", help="the bot measured")
    parser.add_argument(
        "--opponent", type=Path, default=ROOT / "sample_bots" / "sixes-random", help="the bot in the other seats"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0; game g uses seed + g (default 0)")
    parser.add_argument(
        "--duplicate", action="store_true", help="every deal once with the bot in each seat; intervals over deals"
    )
    parser.add_argument("--per-match", type=int, default=25, help="games per match, fresh bots each (default 25)")
    parser.add_argument("--move-time", type=int, default=1000, help="time limit per move in ms (default 1000)")
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be at least 1, not {args.games}")
    if args.per_match < 1:
        parser.error(f"--per-match must be at least 1, not {args.per_match}")
    if not 2 <= args.players <= 8:
        parser.error(f"--players must be 2 to 8, not {args.players}")
    if args.duplicate:
        args.games = -(-args.games // args.players) * args.players
    return args


if __name__ == "__main__":
    trio.run(main, parse_args())
