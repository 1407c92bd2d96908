"""Benchmark (a): full 4-player 6 nimmt! games per second, random play, one process.

    .venv/bin/python bench/rules.py [--seconds 5] [--players 4]

Runs the same pure rule functions the referee uses (``arena.simulate.play_game``),
several times, and reports the best and the median rate.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from arena.games import get_game
from arena.simulate import play_game, random_policy


def rate(game_name: str, players: int, seconds: float, settings: dict[str, object]) -> float:
    game = get_game(game_name)
    parsed = game.parse_settings(settings, players)
    policies = [random_policy(random.Random(1))] * players
    games = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        play_game(game, parsed, players, games, policies)
        games += 1
    return games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="total measuring time")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--game", default="nimmt")
    args = parser.parse_args()
    runs = [rate(args.game, args.players, args.seconds / 5, {}) for _ in range(5)]
    print(f"rules only, {args.game}, {args.players} players, random play, one process:")
    print(f"  best {max(runs):.0f} games/s, median {statistics.median(runs):.0f} games/s over {len(runs)} runs")


if __name__ == "__main__":
    main()
