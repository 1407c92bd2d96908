"""Benchmark: how long the ``arena`` command takes to start, answer and exit.

    .venv/bin/python bench/startup.py [--runs 21] [--keep DB] [--sandbox local]

Times, as subprocesses with stdout into a pipe (as in a script), the median, fastest
and slowest of ``--runs`` runs of:

- ``python -c pass``: the interpreter alone, the floor under every other figure;
- ``arena --help``;
- ``arena leaderboard`` and ``arena games`` on a small real database: the sample bots
  (heuristic, random, lowest) play a real round robin of 3 deals (9 games) in the ``--sandbox``
  (``local``: bubblewrap).

``--keep DB`` builds the database once at DB and reuses it on the next run. The runs of
the commands are interleaved, so a burst of load on the machine spreads over all of them.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")
SAMPLES = ROOT / "sample_bots"


def build(db: Path, sandbox: str) -> None:
    """A small league of real games: the sample bots' round robin, its board cached."""
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    args = [ARENA, "tournament", "run", *bots, "--deals", "3", "--seed", "7", "--name", "startup"]
    subprocess.run([*args, "--sandbox", sandbox, "--db", str(db)], check=True, capture_output=True, timeout=600)


def once(command: list[str]) -> float:
    """Seconds from starting ``command`` to its exit (which must be 0)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (default 21)")
    parser.add_argument("--keep", type=Path, help="build the database here once and reuse it")
    parser.add_argument("--sandbox", default="local", help="sandbox of the games played (default local)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: at least 1")

    work = Path(tempfile.mkdtemp(prefix="arena-startup-"))
    try:
        db = args.keep or work / "small.db"
        if not db.exists():
            print(f"playing the small league into {db} ...", file=sys.stderr)
            build(db, args.sandbox)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "arena --help": [ARENA, "--help"],
            "arena leaderboard": [ARENA, "leaderboard", "--db", str(db)],
            "arena games": [ARENA, "games", "--db", str(db)],
        }
        for command in commands.values():  # warm the file cache
            once(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(once(command))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"{'command':<20} {'median':>8} {'fastest':>8} {'slowest':>8}   ({args.runs} runs each)")
    for name, seconds in times.items():
        ms = sorted(s * 1000 for s in seconds)
        print(f"{name:<20} {statistics.median(ms):>6.0f}ms {ms[0]:>6.0f}ms {ms[-1]:>6.0f}ms")


if __name__ == "__main__":
    main()
