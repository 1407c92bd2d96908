"""Benchmark: what fair time costs, and the part of it that is the kernel's.

    .venv/bin/python bench/freezer.py [--cycles 3000] [--rounds 4] [--games 100]

(1) The kernel's floor: freeze/thaw cycles of a cgroup holding one process blocked
reading its input (a bot waiting for its request), written straight to the freezer
files, for each freezer this machine has (v2's ``cgroup.freeze``, v1's
``freezer.state``): reopening the file at each write, keeping it open, keeping it open
and reading the thaw back, and waiting for the cgroup to read frozen before thawing.
Each line gives the wall time of a cycle, the arena's CPU for it, and the CPU the
frozen process spent being stopped and woken. Then the same cycle through the arena's
own path (``LocalProcess.freeze`` and ``thaw`` of a bot started by the local sandbox).

(2) Fair time on against off: matches of full 4-player games between 4 fast bot
processes, interleaved (off, on, off, on...) so a busy machine weighs on both alike;
games per second and the referee's CPU per game, and the ratio on/off of each pair.
Needs root (a cgroup per bot).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import trio

from arena.bots import load_bot
from arena.play.match import GameSpec, MatchSpec
from arena.play.referee import play_match
from arena.sandbox.cgroups import OwnCgroup
from arena.sandbox.local import LocalProcess, LocalSandbox

BOTS = Path(__file__).parent / "bots"


def cycles(name: str, count: int, cycle: Callable[[], object], bot_cpu: Callable[[], float]) -> None:
    cpu_before, arena_before, start = bot_cpu(), time.process_time(), time.perf_counter()
    for _ in range(count):
        cycle()
    wall = (time.perf_counter() - start) / count * 1e6
    arena = (time.process_time() - arena_before) / count * 1e6
    bot = (bot_cpu() - cpu_before) / count * 1e6
    print(f"  {name:<44} {wall:7.1f} us a cycle; arena CPU {arena:6.1f} us, frozen process CPU {bot:5.1f} us")


def kernel_floor(count: int) -> None:
    """Raw cycles of the freezer files of a cgroup holding a process blocked in read()."""
    cgroup = OwnCgroup.create(256, 16)
    if cgroup is None:
        print("  no cgroup of our own (not root?): skipped")
        return
    read_end, write_end = os.pipe()

    def join() -> None:
        for procs in cgroup.procs_files:
            Path(procs).write_text("0")

    waiting = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"], stdin=read_end, preexec_fn=join
    )
    os.close(read_end)
    time.sleep(0.3)
    try:
        freezers: list[tuple[str, Path, Path, bytes, bytes, bytes, bytes]] = []
        if cgroup.v2 is not None:
            freezers.append(
                ("v2", cgroup.v2 / "cgroup.freeze", cgroup.v2 / "cgroup.events", b"1", b"0", b"frozen 1", b"frozen 0")
            )
        if "freezer" in cgroup.v1:
            state = cgroup.v1["freezer"] / "freezer.state"
            freezers.append(("v1", state, state, b"FROZEN", b"THAWED", b"FROZEN", b"THAWED"))
        for name, write_path, read_path, freeze, thaw, frozen, thawed in freezers:
            print(f"cgroup {name} freezer ({write_path.parent}):")
            one_freezer(count, cgroup, write_path, read_path, (freeze, thaw, frozen, thawed))
    finally:
        os.close(write_end)
        waiting.wait()
        cgroup.remove()


def one_freezer(count: int, cgroup: OwnCgroup, write_path: Path, read_path: Path, values: tuple[bytes, ...]) -> None:
    """The ways of cycling one freezer: reopened, kept open, thaw read back, frozen awaited."""
    freeze, thaw, frozen, thawed = values

    def reopened() -> None:
        write_path.write_bytes(freeze)
        write_path.write_bytes(thaw)

    cycles("file reopened at each write", count, reopened, cgroup.cpu_seconds)
    write_fd = os.open(write_path, os.O_WRONLY)
    read_fd = os.open(read_path, os.O_RDONLY)

    def kept() -> None:
        os.pwrite(write_fd, freeze, 0)
        os.pwrite(write_fd, thaw, 0)

    def checked() -> None:
        kept()
        assert thawed in os.pread(read_fd, 256, 0)

    def settled() -> None:
        os.pwrite(write_fd, freeze, 0)
        while frozen not in os.pread(read_fd, 256, 0):
            pass
        os.pwrite(write_fd, thaw, 0)

    cycles("file kept open", count, kept, cgroup.cpu_seconds)
    cycles("kept open, thaw read back", count, checked, cgroup.cpu_seconds)
    cycles("kept open, waiting until frozen", count, settled, cgroup.cpu_seconds)
    os.close(write_fd)
    os.close(read_fd)


async def arena_path(count: int) -> None:
    """Cycles through the arena's own freeze and thaw of a local bot between requests."""
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(BOTS / "echo"), nursery, 65536)
        assert isinstance(process, LocalProcess)
        print("the arena's path (LocalProcess.freeze, thaw) of a bot waiting for its request:")
        cycles("freeze, thaw", count, lambda: (process.freeze(), process.thaw()), process.cpu_seconds)
        await process.stop()


async def match(games: int, fair_time: bool) -> tuple[float, float]:
    """Games per second and the referee's CPU per game (ms) of one match."""
    fast = load_bot(BOTS / "fast")
    spec = MatchSpec(
        "nimmt", {}, [fast] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(games)], fair_time=fair_time
    )
    start, cpu = time.perf_counter(), time.process_time()
    await play_match(spec, LocalSandbox())
    return games / (time.perf_counter() - start), (time.process_time() - cpu) / games * 1000


async def fair_against_unfair(rounds: int, games: int) -> None:
    print(f"fair time on against off: {games} full 4-player games between 4 fast bot processes, {rounds} pairs")
    ratios = []
    for number in range(1, rounds + 1):
        off_rate, off_cpu = await match(games, fair_time=False)
        on_rate, on_cpu = await match(games, fair_time=True)
        ratios.append(on_rate / off_rate)
        print(
            f"  pair {number}: off {off_rate:6.1f} games/s ({off_cpu:4.1f} ms referee CPU a game),"
            f" on {on_rate:6.1f} games/s ({on_cpu:4.1f} ms): on/off {ratios[-1]:.2f}"
        )
    print(f"  on/off: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")


async def main(count: int, rounds: int, games: int) -> None:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    kernel_floor(count)
    await arena_path(count)
    if rounds:
        await fair_against_unfair(rounds, games)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=3000, help="freeze/thaw cycles per way of freezing")
    parser.add_argument("--rounds", type=int, default=4, help="pairs of matches, fair time off then on (0: none)")
    parser.add_argument("--games", type=int, default=100, help="games per match")
    args = parser.parse_args()
    trio.run(main, args.cycles, args.rounds, args.games)
