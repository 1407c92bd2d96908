"""Benchmark: how long the ``arena`` command takes to start, answer and exit.

    .venv/bin/python bench/startup.py [--runs 21] [--keep DB] [--sandbox local] [--before REV]

Times, as subprocesses with stdout into a pipe (as in a script), the median, fastest
and slowest of ``--runs`` runs of:

- ``python -c pass``: the interpreter alone, the floor under every other figure;
- ``arena --help`` and ``arena tournament --help``;
- ``arena leaderboard`` and ``arena games`` on a small real database: the sample bots
  (heuristic, random, lowest) play a real round robin of 3 deals (9 games) in the ``--sandbox``
  (``local``: bubblewrap).

``--before REV`` compares with the arena of a git revision (``a1f925b``): its ``arena``,
``protocol`` and ``leaderboard`` packages are taken from ``git archive`` into a
temporary folder, and each command runs once with that code and once with this
checkout's, in turn, run by run (the order swapped every run), with the same
interpreter and packages; both read the same database (made by this checkout). Both
find their code through ``PYTHONPATH``, so neither pays the editable install's finder.
The table then gives both medians and the median of the paired differences, of the
wall-clock time and of the CPU time the command used (user and system), which a busy
machine sways less.

``--keep DB`` builds the database once at DB and reuses it on the next run. The runs of
the commands are interleaved, so a burst of load on the machine spreads over all of them.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")
SAMPLES = ROOT / "sample_bots"
PACKAGES = ("arena", "protocol", "leaderboard")
"""What an ``arena`` command imports of a checkout."""


def build(db: Path, sandbox: str) -> None:
    """A small league of real games: the sample bots' round robin, its board cached."""
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    args = [ARENA, "tournament", "run", *bots, "--deals", "3", "--seed", "7", "--name", "startup"]
    subprocess.run([*args, "--sandbox", sandbox, "--db", str(db)], check=True, capture_output=True, timeout=600)


def checkout_of(revision: str, into: Path) -> Path:
    """The arena's packages at ``revision``, extracted into ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, *PACKAGES], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into)  # noqa: S202 (our own repository's archive)
    return into


def once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds from starting ``command`` to its exit (which must be 0), and the CPU
    seconds it used (user and system: less swayed than the first by a busy machine)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)


def code_at(path: Path) -> dict[str, str]:
    """This environment, with the arena's code read from ``path``."""
    return {**os.environ, "PYTHONPATH": str(path)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (default 21)")
    parser.add_argument("--keep", type=Path, help="build the database here once and reuse it")
    parser.add_argument("--sandbox", default="local", help="sandbox of the games played (default local)")
    parser.add_argument("--before", metavar="REV", help="compare with the arena at this git revision, run by run")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: at least 1")

    work = Path(tempfile.mkdtemp(prefix="arena-startup-"))
    try:
        db = args.keep or work / "small.db"
        if not db.exists():
            print(f"playing the small league into {db} ...", file=sys.stderr)
            build(db, args.sandbox)
        # Compared with another revision, both run as ``python -m arena``: the installed
        # script names this checkout's entry point, which an older layout may not have.
        arena = [sys.executable, "-m", "arena"] if args.before else [ARENA]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "arena --help": [*arena, "--help"],
            "arena tournament --help": [*arena, "tournament", "--help"],
            "arena leaderboard": [*arena, "leaderboard", "--db", str(db)],
            "arena games": [*arena, "games", "--db", str(db)],
        }
        trees = {"now": code_at(ROOT)}
        if args.before:
            trees = {"before": code_at(checkout_of(args.before, work / "before")), **trees}
        for command in commands.values():  # warm the file cache, compile each tree's bytecode
            for env in trees.values():
                once(command, env)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {(n, tree): [] for n in commands for tree in trees}
        for run in range(args.runs):
            for name, command in commands.items():
                order = list(trees) if run % 2 == 0 else list(reversed(trees))
                for tree in order:
                    times[name, tree].append(once(command, trees[tree]))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if not args.before:
        print(f"{'command':<24} {'median':>8} {'fastest':>8} {'slowest':>8} {'CPU':>8}   ({args.runs} runs each)")
        for name in commands:
            ms = sorted(wall * 1000 for wall, _ in times[name, "now"])
            cpu = statistics.median(used * 1000 for _, used in times[name, "now"])
            print(f"{name:<24} {statistics.median(ms):>6.0f}ms {ms[0]:>6.0f}ms {ms[-1]:>6.0f}ms {cpu:>6.0f}ms")
        return
    paired = f"{args.before:>7} {'now':>7} {'now - before, paired':>28}"
    print(f"{'':<24} {'wall clock, median':^44}   {'CPU time, median':^44}   ({args.runs} runs each)")
    print(f"{'command':<24} {paired}   {paired}")
    for name in commands:
        cells = []
        for kind in (0, 1):
            before = [run[kind] * 1000 for run in times[name, "before"]]
            now = [run[kind] * 1000 for run in times[name, "now"]]
            diffs = [b - a for a, b in zip(before, now, strict=True)]
            faster = sum(d < 0 for d in diffs)
            median_diff = statistics.median(diffs)
            share = median_diff / statistics.median(before)
            cells.append(
                f"{statistics.median(before):>5.0f}ms {statistics.median(now):>5.0f}ms"
                f" {median_diff:>+6.1f}ms ({share:+.1%}), {faster:>2}/{len(diffs)} faster"
            )
        print(f"{name:<24} {cells[0]}   {cells[1]}")


if __name__ == "__main__":
    main()
