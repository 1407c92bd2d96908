"""Benchmark (b): the referee with real bot processes, against the pipe's own limit.

    .venv/bin/python bench/referee.py [--games 200] [--rounds 3] [--fair-time]

Plays matches of full 4-player games between 4 fast bots (processes kept alive across
games), fair time off (and on, with ``--fair-time``), and in the same run, round by
round (echo, match, echo, match...), a bare pipe echo through the same transport: a
process that sends each line straight back, once alone and once four processes sent a
line at once, as the referee asks four seats.

The echo limit is the games per second that echo allows for the same decisions: each
decision the match played costs the 4-process echo's median round trip when it asks
several seats, the 1-process echo's when it asks one (a row choice). The report gives
the match's games/s, the echo-limited games/s, their ratio, the referee's own CPU per
game (this process's user and system time; the bots are other processes), the bots'
CPU per game (their moves' CPU as the replay logs it), the games/s the machine's cores
could give that CPU at best, and the median request round trip as the referee logs it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.bots import load_bot
from arena.play.match import GameSpec, MatchSpec
from arena.play.referee import play_match
from arena.play.replay import DecisionLine
from arena.sandbox.local import LocalProcess, LocalSandbox
from protocol.messages import Request, encode

BOTS = Path(__file__).parent / "bots"


async def echo_round_trips(count: int, processes: int = 1) -> list[float]:
    """Round trips of a request-sized line through bare echo processes, in ms; with
    several processes, all are sent a line at once, as the referee asks all seats."""
    sandbox = LocalSandbox()
    view = {
        "seat": 0,
        "players": 4,
        "round": 1,
        "turn": 3,
        "hand": list(range(8)),
        "rows": [[1, 2], [3], [4, 5, 6], [7]],
    }
    line = encode(Request(1, "play", view, list(range(8)), 1000, 10000))
    times: list[float] = []
    async with trio.open_nursery() as nursery:
        bots = [await sandbox.start(load_bot(BOTS / "echo"), nursery, 65536) for _ in range(processes)]

        async def one(bot: LocalProcess, start: float) -> None:
            await bot.receive_line()
            times.append((trio.current_time() - start) * 1000)

        for _ in range(count):
            start = trio.current_time()
            for bot in bots:
                await bot.send(line, 1.0)
            async with trio.open_nursery() as waiting:
                for bot in bots:
                    waiting.start_soon(one, bot, start)
        for bot in bots:
            await bot.stop()
    return times


@dataclass
class Match:
    rate: float
    """Games per second, wall clock, start-up of the bots included."""
    cpu_ms: float
    """The referee's CPU (user and system, this process) per game."""
    bots_cpu_ms: float
    """The four bots' CPU per game (their moves' CPU as the referee logs it)."""
    round_trips: list[float]
    many: int
    """Decisions that asked several seats at once."""
    single: int
    """Decisions that asked one seat (row choices)."""


async def referee_match(games: int, fair_time: bool) -> Match:
    fast = load_bot(BOTS / "fast")
    spec = MatchSpec(
        "nimmt", {}, [fast] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(games)], fair_time=fair_time
    )
    cpu, start = _cpu(), time.perf_counter()
    result = await play_match(spec, LocalSandbox())
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    decisions = [line for game in result.games for line in game.replay if isinstance(line, DecisionLine)]
    many = sum(1 for line in decisions if len(line.seats) > 1)
    trips = [ms for line in decisions for ms in line.wall_ms]
    bots = sum(ms for line in decisions for ms in line.cpu_ms) / games
    return Match(games / elapsed, cpu * 1000 / games, bots, trips, many, len(decisions) - many)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def echo_limit(match: Match, games: int, echo1_ms: float, echo4_ms: float) -> float:
    """Games per second if every decision of ``match`` cost only the bare echo's round trip."""
    seconds = (match.many * echo4_ms + match.single * echo1_ms) / 1000
    return games / seconds


def _range(values: list[float], digits: int = 1) -> str:
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if round(low, digits) == round(high, digits) else f"{low:.{digits}f}-{high:.{digits}f}"


async def main(games: int, rounds: int, fair_time: bool, echoes: int) -> None:
    modes = [False, True] if fair_time else [False]
    matches: dict[bool, list[Match]] = {mode: [] for mode in modes}
    limits: list[float] = []
    echo1s: list[float] = []
    echo4s: list[float] = []
    cores = os.cpu_count() or 1
    print(f"referee: {games} full 4-player games between 4 fast bot processes, {rounds} rounds, {cores} cores")
    for round_no in range(rounds):
        echo1 = statistics.median(await echo_round_trips(echoes))
        echo4 = statistics.median(await echo_round_trips(echoes // 2, 4))
        echo1s.append(echo1)
        echo4s.append(echo4)
        for mode in modes:
            match = await referee_match(games, fair_time=mode)
            limit = echo_limit(match, games, echo1, echo4)
            if not mode:
                limits.append(limit)
            matches[mode].append(match)
            print(
                f"  round {round_no + 1}, fair time {'on' if mode else 'off'}: {match.rate:.1f} games/s against"
                f" the echo limit {limit:.1f} ({match.many} decisions of 4 seats at {echo4 * 1000:.0f} us,"
                f" {match.single} of one at {echo1 * 1000:.0f} us): {match.rate / limit:.2f}x;"
                f" CPU a game: referee {match.cpu_ms:.1f} ms, bots {match.bots_cpu_ms:.1f} ms"
            )
    print("over the rounds:")
    print(f"  echo-limited rate: {_range(limits)} games/s")
    for mode in modes:
        played = matches[mode]
        trips = [ms for match in played for ms in match.round_trips]
        print(
            f"  fair time {'on' if mode else 'off'}: {_range([m.rate for m in played])} games/s,"
            f" {_range([m.rate / limit for m, limit in zip(played, limits, strict=True)], 2)}x the echo limit;"
            f" CPU a game: referee {_range([m.cpu_ms for m in played])} ms,"
            f" bots {_range([m.bots_cpu_ms for m in played])} ms"
            f" (the {cores} cores' own limit: {_range([cores * 1000 / (m.cpu_ms + m.bots_cpu_ms) for m in played])}"
            f" games/s); request round trip, median over {len(trips)}: {statistics.median(trips) * 1000:.0f} us"
        )
    print(
        f"  bare pipe echo, median: one process {_range([e * 1000 for e in echo1s], 0)} us,"
        f" 4 processes sent at once {_range([e * 1000 for e in echo4s], 0)} us"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games a match (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of echo then match (default 3)")
    parser.add_argument(
        "--echoes", type=int, default=1000, help="round trips of the 1-process echo a round (default 1000)"
    )
    parser.add_argument("--fair-time", action="store_true", help="also play each round's match with fair time on")
    args = parser.parse_args()
    trio.run(main, args.games, args.rounds, args.fair_time, args.echoes)
