"""Benchmark: what the local sandbox's seccomp filter costs, the same sandbox with it and without.

    .venv/bin/python bench/seccomp.py [--games 100] [--rounds 5]

Measures, alternating the two sandboxes (each first in half the rounds) over ``--rounds`` rounds (the median is kept,
so a busy machine weighs on both alike): (1) the cost of one system call (a C loop of
``getppid`` in the sandbox), (2) the round trip of one request-sized line through a
bare echo bot, (3) games per second of a match of full 4-player games between 4 fast
bots, and (4) a start to the bot's answer to hello. The filter is the one every
local bot gets (``arena/sandbox/seccomp.py``); without it, everything else is the same
(bubblewrap with --disable-userns, cgroup, user).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import trio
from sandboxes import echo_round_trips, match_rate, start_to_first_reply  # bench/sandboxes.py, beside this file

from arena.bots import load_bot
from arena.sandbox.local import LocalSandbox

CALLS = 2_000_000
LOOP = f"""
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < {CALLS}; i++) getppid();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / {CALLS});
    return 0;
}}
"""


def syscall_ns(sandbox: LocalSandbox, folder: Path) -> float:
    """Nanoseconds per ``getppid`` of a C loop run in ``sandbox``'s bubblewrap."""
    bot = load_bot(folder)
    fd = sandbox._seccomp_fd() if sandbox.seccomp else None
    try:
        argv = sandbox._bubblewrap(bot, [str(folder / "loop")], seccomp_fd=fd)
        done = subprocess.run(argv, capture_output=True, text=True, check=True, pass_fds=() if fd is None else (fd,))
    finally:
        if fd is not None:
            os.close(fd)
    return float(done.stdout)


def loop_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-seccomp-"))
    (folder / "loop.c").write_text(LOOP)
    (folder / "bot.toml").write_text('name = "loop"\nversion = "1"\nlanguage = "c"\nrun = "./loop"\ngames = []\n')
    subprocess.run(["cc", "-O2", "-o", str(folder / "loop"), str(folder / "loop.c")], check=True)
    for path in (folder, *folder.iterdir()):
        os.chmod(path, 0o755)
    return folder


async def main(games: int, rounds: int) -> None:
    filtered = LocalSandbox()
    unfiltered = LocalSandbox()
    unfiltered.seccomp = b""
    print(f"filter: {len(filtered.seccomp) // 8} BPF instructions")
    results: dict[str, dict[str, list[float]]] = {"with": {}, "without": {}}
    folder = loop_folder()
    pair = [("with", filtered), ("without", unfiltered)]
    for number in range(rounds):
        for name, sandbox in pair if number % 2 == 0 else pair[::-1]:  # each goes first in half the rounds
            row = results[name]
            row.setdefault("syscall", []).append(syscall_ns(sandbox, folder))
            row.setdefault("echo", []).append(statistics.median(await echo_round_trips(sandbox, 2000)))
            row.setdefault("games", []).append((await match_rate(sandbox, games))[0])
            row.setdefault("start", []).append(statistics.median(await start_to_first_reply(sandbox, 5)) * 1000)
    shutil.rmtree(folder)
    median = {name: {k: statistics.median(v) for k, v in row.items()} for name, row in results.items()}
    for name in ("with", "without"):
        m = median[name]
        print(
            f"{name} the filter: getppid {m['syscall']:.0f} ns, echo round trip {m['echo']:.0f} us, {m['games']:.1f} games/s,"
            f" start to hello {m['start']:.0f} ms"
        )
    ratio = median["with"]["games"] / median["without"]["games"]
    print(f"games/s with the filter / without: {ratio:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trio.run(main, args.games, args.rounds)
