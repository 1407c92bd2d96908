"""Benchmark: tournaments on a Dask cluster of this machine, against no cluster at all.

    .venv/bin/python bench/cluster.py [--part overhead|scaling|both]

Everything is real: ``arena scheduler`` and ``arena worker``s (local sandbox) as
processes of their own, and ``arena tournament run`` as a user runs it, timed from its
start to its end; the coordinator's CPU is its process's (user + system).

(1) Overhead: the same tournament on a one-worker cluster (``--slots`` = this machine's
cores) and on this machine without a cluster (``--concurrency 2``), alternating, best
of three each, whole runs (the cluster's fixed start, about 0.7 s to load Dask, connect,
check versions and send the bots, included): 480 games of fast bots, then 48 of bots
that think 50 ms a move. (2) Scaling: eight bots
that sleep 100 ms a move (so the figure is the system's, not this machine's cores), on
1, 2 and 4 workers of 2 slots each: games/s against linear, and the coordinator's CPU
per game, the bound on how many workers one coordinator can feed.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(Path(sys.executable).parent / "arena")
FAST = [
    ROOT / "sample_bots/lowest",
    ROOT / "sample_bots/heuristic",
    ROOT / "sample_bots/random",
    ROOT / "bench/bots/fast",
]

SLEEPER = """
import time
from protocol.bot import Bot, run


class Sleeper(Bot):
    def decide(self, kind, view, legal):
        time.sleep({seconds})
        return min(legal)


run(Sleeper())
"""


def sleepers(work: Path, count: int, seconds: float) -> list[Path]:
    """``count`` bots of distinct names that sleep ``seconds`` before each answer."""
    folders = []
    for i in range(count):
        folder = work / f"sleep{int(seconds * 1000)}-{i}"
        folder.mkdir()
        (folder / "bot.py").write_text(SLEEPER.format(seconds=seconds))
        (folder / "bot.toml").write_text(
            f'name = "{folder.name}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
        )
        for path in (folder, *folder.iterdir()):
            path.chmod(0o755)
        folders.append(folder)
    return folders


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """``arena scheduler`` and ``arena worker``s, each in a session of its own."""

    def __init__(self, work: Path, workers: int, slots: int) -> None:
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
        self.procs = [subprocess.Popen([ARENA, "scheduler", "--port", str(port)], **quiet)]  # type: ignore[call-overload]
        env = {**os.environ, "ARENA_WORKER_CACHE": str(work / "cache")}
        for i in range(workers):
            command = [ARENA, "worker", self.address, "--sandbox", "local", "--slots", str(slots), "--name", f"w{i}"]
            self.procs.append(subprocess.Popen(command, env=env, **quiet))  # type: ignore[call-overload]
        waiting = (
            "import sys, time\nfrom distributed import Client\nwith Client(sys.argv[1], timeout=60) as c:\n"
            "    while len(c.scheduler_info()['workers']) < int(sys.argv[2]): time.sleep(0.1)\n"
        )
        subprocess.run([sys.executable, "-c", waiting, self.address, str(workers)], check=True, timeout=180)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def tournament(work: Path, bots: list[Path], deals: int, *where: str) -> tuple[float, float, int]:
    """Wall seconds, the coordinator's CPU seconds and the games of one tournament."""
    db = work / f"t{time.monotonic_ns()}.db"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [ARENA, "tournament", "run", *map(str, bots), "--db", str(db), "--deals", str(deals), "--table-size", "2"]
        + ["--seed", "1", *where],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the tournament failed: {done.stderr.strip()[-500:]}")
    with sqlite3.connect(db) as con:
        games = int(con.execute("SELECT count(*) FROM games").fetchone()[0])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, games


def overhead(work: Path) -> None:
    cores = os.cpu_count() or 1
    print(f"(1) overhead: one worker of {cores} slots against no cluster (--concurrency 2), best of 3")
    cluster = Cluster(work, 1, cores)
    try:
        for label, bots, deals in (
            ("fast bots", FAST, 40),
            ("bots thinking 50 ms a move", sleepers(work, 4, 0.05), 4),
        ):
            alone, on_cluster, cpus = [], [], []
            for _ in range(3):
                wall, _, games = tournament(work, bots, deals, "--sandbox", "local")
                alone.append(games / wall)
                wall, cpu, games = tournament(work, bots, deals, "--cluster", cluster.address)
                on_cluster.append(games / wall)
                cpus.append(cpu / games)
            ratio = max(on_cluster) / max(alone)
            print(
                f"  {label}: {games} games; alone {max(alone):.2f} games/s, on the cluster {max(on_cluster):.2f}"
                f" games/s: ratio {ratio:.2f} (target at least 0.9); coordinator CPU {min(cpus) * 1000:.1f} ms a"
                f" game, its start included (one coordinator feeds up to ~{1 / min(cpus):.0f} games/s)"
            )
    finally:
        cluster.stop()


def scaling(work: Path) -> None:
    print("(2) scaling: 8 bots sleeping 100 ms a move, tables of 2, 28 matches; workers of 2 slots")
    bots = sleepers(work, 8, 0.1)
    base = None
    for workers in (1, 2, 4):
        cluster = Cluster(work, workers, 2)
        try:
            wall, cpu, games = tournament(work, bots, 1, "--cluster", cluster.address)
        finally:
            cluster.stop()
        rate = games / wall
        base = base or rate
        print(
            f"  {workers} worker{'s' * (workers > 1)}: {games} games in {wall:.1f} s, {rate:.2f} games/s,"
            f" {rate / (base * workers):.2f} x linear; coordinator CPU {cpu * 1000 / games:.1f} ms a game"
            f" (one coordinator feeds up to ~{games / cpu:.0f} games/s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("overhead", "scaling", "both"), default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # local bots run as users of their own
        if args.part in ("overhead", "both"):
            overhead(work)
        if args.part in ("scaling", "both"):
            scaling(work)


if __name__ == "__main__":
    main()
