"""Benchmark: the Docker sandbox against the local one, in the same run.

    .venv/bin/python bench/sandboxes.py [--games 200] [--starts 10]

Measures (1) container start to the bot's first reply (its hello answer), (2) the round
trip of one line through a bare echo bot, Docker against local, and (3) games per second
over a match of full 4-player games between 4 fast bots, Docker against local. Needs a
running engine and the base image (`arena image build`).
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
from arena.sandbox.base import Sandbox
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.local import LocalSandbox
from protocol.messages import Hello, Limits, encode

BOTS = Path(__file__).parent / "bots"
HELLO = encode(Hello(1, "nimmt", {}, 0, 4, Limits(1000, 10000, 10000)))


async def start_to_first_reply(sandbox: Sandbox, count: int) -> list[float]:
    """Seconds from asking for a bot to reading its answer to hello."""
    bot = load_bot(BOTS / "fast")
    times = []
    for _ in range(count):
        async with trio.open_nursery() as nursery:
            start = time.perf_counter()
            process = await sandbox.start(bot, nursery, 65536)
            await process.send(HELLO, 10)
            await process.receive_line()
            times.append(time.perf_counter() - start)
            await process.stop()
    return times


async def echo_round_trips(sandbox: Sandbox, count: int) -> list[float]:
    """Round trips of a request-sized line through a bare echo bot, in microseconds."""
    line = b'{"type":"request","id":1,"kind":"play","view":{"hand":[1,2,3,4,5,6,7,8]},"legal":[1,2,3,4,5,6,7,8]}\n'
    times = []
    async with trio.open_nursery() as nursery:
        process = await sandbox.start(load_bot(BOTS / "echo"), nursery, 65536)
        for _ in range(count):
            start = time.perf_counter()
            await process.send(line, 10)
            await process.receive_line()
            times.append((time.perf_counter() - start) * 1e6)
        await process.stop()
    return times


async def match_rate(sandbox: Sandbox, games: int) -> tuple[float, float]:
    """Games per second of a match between 4 fast bots, and the median request round trip (µs)."""
    fast = load_bot(BOTS / "fast")
    spec = MatchSpec("nimmt", {}, [fast] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(games)])
    start = time.perf_counter()
    result = await play_match(spec, sandbox)
    elapsed = time.perf_counter() - start
    trips = [ms for g in result.games for line in g.replay if isinstance(line, DecisionLine) for ms in line.wall_ms]
    return games / elapsed, statistics.median(trips) * 1000


async def main(games: int, starts: int) -> None:
    docker_sandbox = DockerSandbox()
    local = LocalSandbox()
    for name in ("fast", "echo"):
        docker_sandbox.prepare(load_bot(BOTS / name), progress=lambda line: None)
    sandboxes: list[tuple[str, Sandbox]] = [("local", local), ("docker", docker_sandbox)]
    print(f"local sandbox: {local.isolation}")
    print(f"docker sandbox: {docker_sandbox.isolation}")

    first = {name: statistics.median(await start_to_first_reply(sb, starts)) for name, sb in sandboxes}
    print(f"start to first reply, median of {starts}: " + ", ".join(f"{n} {s * 1000:.0f} ms" for n, s in first.items()))

    echo = {name: statistics.median(await echo_round_trips(sb, 3000)) for name, sb in sandboxes}
    print(
        "bare echo round trip, median of 3000: "
        + ", ".join(f"{n} {us:.0f} us" for n, us in echo.items())
        + f" (docker/local {echo['docker'] / echo['local']:.2f}; target at most 1.3)"
    )

    rates = {name: await match_rate(sb, games) for name, sb in sandboxes}
    print(
        f"{games} full 4-player games, 4 fast bots, fair time on: "
        + ", ".join(f"{n} {r:.1f} games/s (request {rt:.0f} us)" for n, (r, rt) in rates.items())
        + f" (docker/local {rates['docker'][0] / rates['local'][0]:.2f}; target at least 0.8)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    trio.run(main, args.games, args.starts)
