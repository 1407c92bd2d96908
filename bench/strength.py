"""Strength: how much one bot beats another, with real bot processes through the referee.

    .venv/bin/python bench/strength.py [--games 200] [--players 4] [--bot DIR] [--bot-run CMD] [--settings JSON]

Plays one match of full games of 6 nimmt! (default settings: to 66 heads) with the bot
in one seat and copies of the opponent in the others; the bot's seat rotates (game g:
seat g % players, seed seed + g). Reports the bot's win rate (rank 1, shared firsts
count as wins) with a 95% Wilson interval, its mean rank, the mean heads per round of
the bot and of the opponents with a 95% interval for their difference (normal
approximation over games), the faults (seats whose status is not "ok") and wall time.
``--settings`` plays a variant, e.g. ``'{"variant": "professional"}'`` (in ``shedding``
the "heads" are the cards left in hand).
``--bot-run`` replaces the measured bot's ``run`` command (its manifest is left as it
is), e.g. ``--bot sample_bots/montecarlo --bot-run "python3 bot.py --think 0.05"``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

from arena.bots import Bot, load_bot
from arena.games.base import SettingsError
from arena.games.nimmt import rules
from arena.play.match import GameResult, GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import EventsLine
from arena.sandbox.local import LocalSandbox
from protocol.nimmt import RoundEnd

ROOT = Path(__file__).resolve().parent.parent
Z95 = 1.959964
"""The two-sided 95% quantile of the standard normal."""
BOT = 0
"""The bot's index in ``MatchSpec.bots``; the opponents' copies follow it."""


@dataclass(frozen=True)
class GameStats:
    """What one game says about the bot against the opponents."""

    rank: int
    shared_first: bool
    """The bot ranked first together with another seat."""
    bot_heads_per_round: float
    opponent_heads_per_round: float
    """Mean over the opponents' seats."""
    faults_bot: int
    faults_opponents: int


def seating(game_no: int, players: int) -> list[int]:
    """Bot index per seat: the bot in seat ``game_no % players``, opponents in order."""
    bot_seat = game_no % players
    opponents = iter(range(1, players))
    return [BOT if seat == bot_seat else next(opponents) for seat in range(players)]


def with_run(bot: Bot, run: str | None) -> Bot:
    """``bot`` started by the command ``run`` instead of its manifest's (None: as it is)."""
    if run is None:
        return bot
    return msgspec.structs.replace(bot, manifest=msgspec.structs.replace(bot.manifest, run=run))


def match_spec(
    bot: Path,
    opponent: Path,
    players: int,
    games: int,
    seed: int,
    move_ms: int,
    bot_run: str | None = None,
    settings: dict | None = None,
) -> MatchSpec:
    bots = [with_run(load_bot(bot), bot_run)] + [load_bot(opponent)] * (players - 1)
    game_specs = [GameSpec(seed + g, seating(g, players)) for g in range(games)]
    return MatchSpec("nimmt", settings or {}, bots, game_specs, TimeLimits(move_ms=move_ms))


def rounds_played(result: GameResult) -> int:
    """The number of ``RoundEnd`` events in the game's replay."""
    return sum(
        isinstance(event, RoundEnd) for line in result.replay if isinstance(line, EventsLine) for event in line.events
    )


def game_stats(result: GameResult) -> GameStats:
    rounds = rounds_played(result)
    bot_seat = result.spec.seats.index(BOT)
    others = [seat for seat in range(len(result.scores)) if seat != bot_seat]
    rank = result.ranks[bot_seat]
    not_ok = [status.status != "ok" for status in result.statuses]
    return GameStats(
        rank=rank,
        shared_first=rank == 1 and result.ranks.count(1) > 1,
        bot_heads_per_round=result.scores[bot_seat] / max(1, rounds),
        opponent_heads_per_round=statistics.fmean(result.scores[seat] / max(1, rounds) for seat in others),
        faults_bot=int(not_ok[bot_seat]),
        faults_opponents=sum(not_ok[seat] for seat in others),
    )


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion."""
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return centre - half, centre + half


def mean_interval(values: list[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal-approximation interval: ``(mean, low, high)``."""
    mean = statistics.fmean(values)
    half = z * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.inf
    return mean, mean - half, mean + half


def report(
    stats: list[GameStats], bot: str, opponent: str, players: int, seconds: float, settings: dict | None = None
) -> str:
    n = len(stats)
    wins = sum(s.rank == 1 for s in stats)
    shared = sum(s.shared_first for s in stats)
    low, high = wilson(wins, n)
    bot_hpr = statistics.fmean(s.bot_heads_per_round for s in stats)
    opp_hpr = statistics.fmean(s.opponent_heads_per_round for s in stats)
    diff = [s.bot_heads_per_round - s.opponent_heads_per_round for s in stats]
    diff_mean, diff_low, diff_high = mean_interval(diff)
    faults_bot = sum(s.faults_bot for s in stats)
    faults_opp = sum(s.faults_opponents for s in stats)
    return "\n".join(
        [
            f"strength: {bot} vs {players - 1} x {opponent}, {n} full {players}-player games of 6 nimmt!"
            f" ({json.dumps(settings) if settings else 'to 66 heads'})",
            f"  win rate (rank 1)   {wins / n:.1%}  [95% CI {low:.1%} to {high:.1%}]"
            f"  ({wins} wins, {shared} of them shared; an equal bot: about {1 / players:.0%})",
            f"  mean rank           {statistics.fmean(s.rank for s in stats):.2f} of {players}",
            f"  heads per round     {bot} {bot_hpr:.2f}, {opponent} {opp_hpr:.2f}",
            f"  difference          {diff_mean:+.2f}  [95% CI {diff_low:+.2f} to {diff_high:+.2f}]"
            f"  ({bot} minus {opponent}, per game)",
            f"  faults              {faults_bot + faults_opp} seat-games not ok"
            f" ({bot} {faults_bot}, {opponent} {faults_opp})",
            f"  wall time           {seconds:.1f} s ({n / seconds:.1f} games/s)",
        ]
    )


async def main(args: argparse.Namespace) -> None:
    spec = match_spec(
        args.bot, args.opponent, args.players, args.games, args.seed, args.move_time, args.bot_run, args.settings
    )
    start = time.perf_counter()
    result: MatchResult = await play_match(spec, LocalSandbox())
    seconds = time.perf_counter() - start
    stats = [game_stats(game) for game in result.games]
    print(report(stats, spec.bots[BOT].name, spec.bots[1].name, args.players, seconds, args.settings))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games in the match (default 200)")
    parser.add_argument("--players", type=int, default=4, help="seats per game (default 4)")
    parser.add_argument("--bot", type=Path, default=ROOT / "sample_bots" / "heuristic", help="the bot measured")
    parser.add_argument(
        "--bot-run", default=None, help="command that starts the measured bot, instead of its manifest's `run`"
    )
    parser.add_argument("--opponent", type=Path, default=ROOT / "sample_bots" / "random", help="the bot in other seats")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0; game g uses seed + g (default 0)")
    parser.add_argument("--move-time", type=int, default=1000, help="time limit per move in ms (default 1000)")
    parser.add_argument(
        "--settings", default="{}", help='the game\'s settings as JSON, e.g. \'{"variant": "logical"}\''
    )
    args = parser.parse_args()
    try:
        args.settings = json.loads(args.settings)
        if not isinstance(args.settings, dict):
            raise TypeError("not a JSON object")
        rules.parse_settings(args.settings, args.players)
    except (json.JSONDecodeError, SettingsError, TypeError, AttributeError) as exc:
        parser.error(f"--settings {args.settings!r}: {exc}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, not {args.games}")
    if args.players < 2:
        parser.error(f"--players must be at least 2, not {args.players}")
    if args.bot_run is not None and not args.bot_run.strip():
        parser.error("--bot-run is empty")
    return args


if __name__ == "__main__":
    trio.run(main, parse_args())
