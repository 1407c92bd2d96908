"""Benchmark (a): full games per second with random play, one process, rules only.

    .venv/bin/python bench/rules.py [--seconds 5] [--players 4] [--only NAME] [--baseline REV]

Runs the same pure rule functions the referee uses (``arena.play.simulate.play_game``) for
the standard game of 6 nimmt!, each of its variants and house rules, and Sixes; several
runs each, reporting the best and the median rate. Time is the process's CPU time: on
an idle machine the same as the wall clock, and steady when other work shares the cores.

``--baseline REV`` also times the 6 nimmt! rules as they were at git revision ``REV``
(``arena/games/nimmt/rules.py`` of that commit, loaded beside today's), run for run in turn
with today's, so that both see the same machine load: a rewrite of the rules shows its
speed against the old code in one run, not against figures from another day.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from arena.games.nimmt import rules as nimmt
from arena.games.sixes import rules as sixes
from arena.play.simulate import play_game, random_policy

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5

CONFIGURATIONS: dict[str, tuple[ModuleType, dict[str, Any]]] = {
    "nimmt": (nimmt, {}),
    "nimmt tactical": (nimmt, {"variant": "tactical"}),
    "nimmt logical": (nimmt, {"variant": "logical"}),
    "nimmt professional": (nimmt, {"variant": "professional"}),
    "nimmt keep_rows": (nimmt, {"keep_rows": True}),
    "nimmt cards_per_turn=2": (nimmt, {"cards_per_turn": 2}),
    "nimmt shedding": (nimmt, {"shedding": True}),
    "sixes": (sixes, {}),
}


def rate(rules: Any, players: int, seconds: float, settings: dict[str, Any]) -> float:
    parsed = rules.parse_settings(settings, players)
    policies = [random_policy(random.Random(1))] * players
    games = 0
    start = time.process_time()
    while (elapsed := time.process_time() - start) < seconds:
        play_game(rules, parsed, players, games, policies)
        games += 1
    return games / elapsed


def rules_at(revision: str) -> ModuleType:
    """``arena/games/nimmt/rules.py`` as it was at ``revision``, loaded as a module of
    ``arena.games`` (its relative imports find today's ``base`` and ``chance``)."""
    shown = subprocess.run(
        ["git", "show", f"{revision}:arena/games/nimmt/rules.py"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if shown.returncode:
        sys.exit(f"--baseline {revision!r}: git cannot show arena/games/nimmt/rules.py there: {shown.stderr.strip()}")
    name = "arena.games.nimmt_baseline"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "arena.games"
    sys.modules[name] = module  # msgspec resolves the Structs' annotations through it
    try:
        exec(compile(shown.stdout, f"{revision}:arena/games/nimmt/rules.py", "exec"), module.__dict__)
    except Exception as exc:  # an old file that no longer fits today's package
        sys.exit(f"--baseline {revision!r}: its arena/games/nimmt/rules.py does not load today: {exc}")
    return module


def summary(runs: list[float]) -> str:
    return f"best {max(runs):7.0f}   median {statistics.median(runs):7.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per configuration")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--only", choices=sorted(CONFIGURATIONS), help="one configuration")
    parser.add_argument("--baseline", metavar="REV", help="also time arena/games/nimmt/rules.py of this git revision")
    args = parser.parse_args()
    baseline = rules_at(args.baseline) if args.baseline else None
    print(f"rules only, {args.players} players, random play, one process: games per CPU second")
    if baseline:
        print(f"  {'':<24} {'this tree':<31} {'at ' + args.baseline:<31} change of the medians")
    for name, (rules, settings) in CONFIGURATIONS.items():
        if args.only and name != args.only:
            continue
        seconds = args.seconds / RUNS
        if baseline is None or rules is not nimmt:
            runs = [rate(rules, args.players, seconds, settings) for _ in range(RUNS)]
            print(f"  {name:<24} {summary(runs)}")
            continue
        runs, old = [], []
        for run in range(RUNS):  # in turn, first one then the other, so drift hits both alike
            pair = [(runs, rules), (old, baseline)]
            for out, module in pair if run % 2 == 0 else pair[::-1]:
                out.append(rate(module, args.players, seconds, settings))
        change = statistics.median(runs) / statistics.median(old) - 1
        print(f"  {name:<24} {summary(runs)}   {summary(old)}   {change:+6.1%}")


if __name__ == "__main__":
    main()
