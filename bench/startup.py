"""Benchmark: how long the ``arena`` command takes to start, answer and exit, against
the floor ``python -c "import typer"`` timed beside it run by run.

    .venv/bin/python bench/startup.py [--runs 15] [--keep DB] [--sandbox local] [--only TEXT] [--before REV]

Times, as subprocesses with stdout into a pipe (as in a script):

- ``python -c "import typer"``: the floor, the interpreter and the library every
  command is written with (the target: each command within 1.5 times it);
- ``python -c pass``: the interpreter alone;
- ``arena --help``, ``python -m arena --help``, and ``--help`` of every command group
  and of the common commands (``play``, ``tournament run``, ``ladder run``, ``bot
  check``, ``submit``, ``serve``...);
- ``arena leaderboard`` and ``arena games`` on a small real database: the sample bots
  (heuristic, random, lowest) play a real round robin of 3 deals (9 games) in the
  ``--sandbox`` (``local``: bubblewrap), whose end caches its boards as every
  tournament's does.

Each command runs beside its own run of the floor, the order swapped every run, so a
burst of load on the machine (2 cores shared) sways both alike; the table gives the
medians and the median, fastest and slowest of the per-run ratios command/floor, of the
wall-clock time and of the CPU time (user and system, less swayed by a busy machine).

``--before REV`` also runs each command with the arena of a git revision (``main``):
its ``arena``, ``protocol`` and ``leaderboard`` packages are taken from ``git archive``
into a temporary folder. Then every command runs as ``python -m arena`` (the installed
script names this checkout's entry point), with that code and with this checkout's,
through ``PYTHONPATH``, beside the same floor; both read the same database (made by
this checkout). Every command runs in a temporary folder: run in a checkout,
``python -m arena`` would import that checkout's ``arena`` whatever ``PYTHONPATH`` says.

``--keep DB`` builds the database once at DB and reuses it on the next run; ``--only``
keeps the commands whose name contains TEXT (the floors always run).
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
FLOOR = "python -c 'import typer'"
HELPS = (
    (),
    ("play",),
    ("demo",),
    ("replay",),
    ("leaderboard",),
    ("games",),
    ("gauntlet",),
    ("serve",),
    ("scheduler",),
    ("worker",),
    ("submit",),
    ("backup",),
    ("check",),
    ("image",),
    ("bot",),
    ("bot", "check"),
    ("tournament",),
    ("tournament", "run"),
    ("author",),
    ("game",),
    ("ladder",),
    ("ladder", "run"),
)
"""The commands whose ``--help`` is timed: ``arena --help``, every command group and the common commands."""


def build(db: Path, sandbox: str) -> None:
    """A small league of real games: the sample bots' round robin, its boards cached."""
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


def once(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds from starting ``command`` to its exit (which must be 0), and the CPU
    seconds it used (user and system: less swayed than the first by a busy machine).
    Run in ``cwd``, a folder with no ``arena`` in it: ``python -c`` and ``python -m``
    look in the current folder before ``PYTHONPATH``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)


def code_at(path: Path) -> dict[str, str]:
    """This environment, with the arena's code read from ``path`` and its bytecode cached
    as a user's is (a shell with ``PYTHONDONTWRITEBYTECODE`` set would compile every
    module of the arena at every start, and time that)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(path)}


def commands_of(arena: list[str], db: Path, module_too: bool) -> dict[str, list[str]]:
    """Each command timed, by the name the table gives it."""
    commands = {"python -c pass": [sys.executable, "-c", "pass"]}
    for words in HELPS:
        commands[" ".join(["arena", *words, "--help"])] = [*arena, *words, "--help"]
        if module_too and not words:
            commands["python -m arena --help"] = [sys.executable, "-m", "arena", "--help"]
    commands["arena leaderboard"] = [*arena, "leaderboard", "--db", str(db)]
    commands["arena games"] = [*arena, "games", "--db", str(db)]
    return commands


def ratios(runs: list[tuple[float, float]], floors: list[tuple[float, float]], kind: int) -> list[float]:
    return [run[kind] / floor[kind] for run, floor in zip(runs, floors, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--keep", type=Path, help="build the database here once and reuse it")
    parser.add_argument("--sandbox", default="local", help="sandbox of the games played (default local)")
    parser.add_argument("--only", default="", metavar="TEXT", help="only the commands whose name contains TEXT")
    parser.add_argument("--before", metavar="REV", help="also time the arena at this git revision, run by run")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: at least 1")

    work = Path(tempfile.mkdtemp(prefix="arena-startup-"))
    try:
        db = (args.keep or work / "small.db").resolve()
        if not db.exists():
            print(f"playing the small league into {db} ...", file=sys.stderr)
            build(db, args.sandbox)
        # Compared with another revision, both run as ``python -m arena``: the installed
        # script names this checkout's entry point, which an older layout may not have.
        arena = [sys.executable, "-m", "arena"] if args.before else [ARENA]
        commands = {
            name: command
            for name, command in commands_of(arena, db, not args.before).items()
            if args.only in name or name == "python -c pass"
        }
        floor = [sys.executable, "-c", "import typer"]
        trees = {"now": code_at(ROOT)}
        if args.before:
            trees = {"before": code_at(checkout_of(args.before, work / "before")), **trees}
        for command in [floor, *commands.values()]:  # warm the file cache, compile each tree's bytecode
            for env in trees.values():
                once(command, env, work)
        floors: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        times: dict[tuple[str, str], list[tuple[float, float]]] = {(n, tree): [] for n in commands for tree in trees}
        for run in range(args.runs):
            for name, command in commands.items():
                order = ["floor", *trees]
                order = order if run % 2 == 0 else list(reversed(order))
                for side in order:
                    if side == "floor":
                        floors[name].append(once(floor, trees["now"], work))
                    else:
                        times[name, side].append(once(command, trees[side], work))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    all_floors = [wall * 1000 for runs in floors.values() for wall, _ in runs]
    print(f"floor {FLOOR}: median {statistics.median(all_floors):.0f} ms over {len(all_floors)} runs")
    columns = "  ".join(f"{tree + ' ms':>9} {'ratio':>5} {'(range)':>11} {'CPU':>5}" for tree in trees)
    print(f"{'command':<28} {'floor ms':>8}  {columns}   ({args.runs} runs each, ratios to the floor run beside)")
    for name in commands:
        cells = []
        for tree in trees:
            runs = times[name, tree]
            wall = ratios(runs, floors[name], 0)
            cpu = ratios(runs, floors[name], 1)
            cells.append(
                f"{statistics.median(r[0] * 1000 for r in runs):>9.0f} {statistics.median(wall):>5.2f}"
                f" ({min(wall):.2f}-{max(wall):.2f}) {statistics.median(cpu):>5.2f}"
            )
        floor_ms = statistics.median(f[0] * 1000 for f in floors[name])
        print(f"{name:<28} {floor_ms:>8.0f}  {'  '.join(cells)}")


if __name__ == "__main__":
    main()
