"""Benchmark (b): the referee with real bot processes.

    .venv/bin/python bench/referee.py [--games 200]

Plays a match of full 4-player games between 4 fast bots (processes kept alive across
games) and reports games per second and the median request round trip as the referee
measures it (request sent to answer read). In the same run, measures a bare pipe echo
through the same transport: a process that sends each line straight back.
"""

from __future__ import annotations

import argparse
import statistics
import time
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


async def referee_match(games: int, fair_time: bool) -> tuple[float, list[float]]:
    fast = load_bot(BOTS / "fast")
    spec = MatchSpec(
        "nimmt", {}, [fast] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(games)], fair_time=fair_time
    )
    start = time.perf_counter()
    result = await play_match(spec, LocalSandbox())
    elapsed = time.perf_counter() - start
    round_trips = [
        ms for game in result.games for line in game.replay if isinstance(line, DecisionLine) for ms in line.wall_ms
    ]
    return games / elapsed, round_trips


async def main(games: int) -> None:
    echo_before = await echo_round_trips(1000)
    echo4_before = await echo_round_trips(500, 4)
    raw_rate, raw_trips = await referee_match(games, fair_time=False)
    fair_rate, fair_trips = await referee_match(games, fair_time=True)
    echo_after = await echo_round_trips(1000)
    echo4_after = await echo_round_trips(500, 4)
    echo = statistics.median(echo_before + echo_after)
    echo4 = statistics.median(echo4_before + echo4_after)
    print(f"referee: {games} full 4-player games between 4 fast bot processes")
    for name, rate, trips in (("fair time off", raw_rate, raw_trips), ("fair time on", fair_rate, fair_trips)):
        referee = statistics.median(trips)
        print(
            f"  {name}: {rate:.1f} games/s; request round trip, median over {len(trips)}: {referee * 1000:.0f} us"
            f" (/echo {referee / echo:.2f}, /echo of 4 {referee / echo4:.2f})"
        )
    print(f"  bare pipe echo: one process {echo * 1000:.0f} us, 4 processes sent at once {echo4 * 1000:.0f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    trio.run(main, args.games)
