"""Benchmark: what a bot that dribbles its answers costs the referee, local and Docker.

    .venv/bin/python bench/dribble.py [--games 3] [--rounds 1] [--sandbox local,docker] [--unbounded]

Plays games of 4 fast bots, then games where one seat is ``bench/bots/dribble`` (each
answer padded to 4,000 bytes, written a byte at a time over 750 ms of a 2 s limit), and
prints the referee's own CPU seconds per game (``getrusage(RUSAGE_SELF)`` of this
process: the bots' CPU is not in it) and the reads of the dribbler's output per answer.
``--unbounded`` lifts the dribble bound (``DRIP_READS``), to measure the referee as it
was before it. Docker needs a running engine and the base image (`arena image build`).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import trio

from arena.bots import Bot, load_bot
from arena.play.match import GameSpec, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import DecisionLine
from arena.sandbox import inbox as inbox_module
from arena.sandbox.base import Sandbox
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.inbox import Inbox
from arena.sandbox.local import LocalSandbox

BOTS = Path(__file__).parent / "bots"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def one_game(
    sandbox: Sandbox, bots: list[Bot], rounds: int, seed: int
) -> tuple[float, float, int, int, list[float]]:
    """The referee's CPU seconds and wall seconds for one game, the reads of seat 0's
    output, how many answers seat 0 gave in time, and the other seats' answer times (ms)."""
    spec = MatchSpec("nimmt", {"rounds": rounds}, bots, [GameSpec(seed, [0, 1, 2, 3])], TimeLimits(2000, 0, 20_000))
    inbox = Inbox()
    cpu, wall = cpu_seconds(), time.perf_counter()
    result = await play_match(spec, sandbox, inbox=inbox)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    answers, others = 0, []
    for line in result.games[0].replay:
        if isinstance(line, DecisionLine):
            for seat, wall_ms, defaulted in zip(line.seats, line.wall_ms, line.defaulted, strict=True):
                if seat != 0:
                    others.append(wall_ms)
                elif not defaulted:
                    answers += 1
    return cpu, wall, inbox.reads[0], answers, others


async def main(games: int, rounds: int, sandboxes: list[str]) -> None:
    fast, dribble = load_bot(BOTS / "fast"), load_bot(BOTS / "dribble")
    tables = {"honest": [fast] * 4, "dribbler": [dribble, fast, fast, fast]}
    bound = "unbounded" if inbox_module.DRIP_READS == sys.maxsize else f"bound {inbox_module.DRIP_READS} reads"
    print(f"{games} games of {rounds} round(s) per row, 2 s move limit, {bound}")
    for name in sandboxes:
        sandbox: Sandbox = LocalSandbox() if name == "local" else DockerSandbox()
        for bot in (fast, dribble):
            sandbox.prepare(bot, progress=lambda line: None)
        for table, bots in tables.items():
            runs = [await one_game(sandbox, bots, rounds, seed) for seed in range(games)]
            cpu = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            answers = sum(r[3] for r in runs)
            per_answer = sum(r[2] for r in runs) / max(answers, 1)
            others = statistics.median(ms for r in runs for ms in r[4])
            print(
                f"{name:6} {table:8}: referee CPU {cpu:.2f} s per game (median; wall {wall:.1f} s), "
                f"seat 0: {per_answer:.0f} reads per answer, {answers} answers in time; "
                f"the other seats' answers: median {others:.2f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sandbox", default="local,docker", help="comma-separated: local, docker")
    parser.add_argument("--unbounded", action="store_true", help="lift the dribble bound (the referee before it)")
    args = parser.parse_args()
    if args.unbounded:
        inbox_module.DRIP_READS = sys.maxsize
    trio.run(main, args.games, args.rounds, args.sandbox.split(","))
