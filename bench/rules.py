"""Benchmark (a): full games per second with random play, one process, rules only.

    .venv/bin/python bench/rules.py [--seconds 5] [--players 4] [--only NAME]

Runs the same pure rule functions the referee uses (``arena.simulate.play_game``) for
the standard game of 6 nimmt!, each of its variants and house rules, and Sixes; several
runs each, reporting the best and the median rate.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from arena.games import get_game
from arena.simulate import play_game, random_policy

CONFIGURATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "nimmt": ("nimmt", {}),
    "nimmt tactical": ("nimmt", {"variant": "tactical"}),
    "nimmt logical": ("nimmt", {"variant": "logical"}),
    "nimmt professional": ("nimmt", {"variant": "professional"}),
    "nimmt keep_rows": ("nimmt", {"keep_rows": True}),
    "nimmt cards_per_turn=2": ("nimmt", {"cards_per_turn": 2}),
    "nimmt shedding": ("nimmt", {"shedding": True}),
    "sixes": ("sixes", {}),
}


def rate(game_name: str, players: int, seconds: float, settings: dict[str, Any]) -> float:
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
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per configuration")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--only", choices=sorted(CONFIGURATIONS), help="one configuration")
    args = parser.parse_args()
    print(f"rules only, {args.players} players, random play, one process: games per second")
    for name, (game, settings) in CONFIGURATIONS.items():
        if args.only and name != args.only:
            continue
        runs = [rate(game, args.players, args.seconds / 5, settings) for _ in range(5)]
        print(f"  {name:<24} best {max(runs):7.0f}   median {statistics.median(runs):7.0f}")


if __name__ == "__main__":
    main()
