"""Benchmark: what playing each rotation in processes of its own costs a tournament.

    .venv/bin/python bench/lives.py [--deals 6] [--sandbox local|docker|both] [--runs 2]

A bot process never plays two games of one deal (``referee.lives``): a table of K bots
plays rotation by rotation, each rotation in fresh processes started ahead while the
rotation before plays. This plays the same round robin of 4 fast bots (tables of 4,
fair time on, storing every game) both ways, alternating: as the referee does, and
with one process per bot for the whole match (the rule before, every rotation in the
same process: the bench patches it back in). It reports games per second, and the
peak number and resident memory of bot processes alive at once (sampled from /proc
every 20 ms: the memory a table costs).
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import threading
import time
from pathlib import Path

import docker
import msgspec
import trio

import arena.play.referee
from arena.sandbox import choose_sandbox
from arena.sandbox.docker import LABEL, OWNER
from arena.store import Store
from arena.tournaments.roundrobin import OnThisMachine, TournamentConfig, run_tournament

ROOT = Path(__file__).resolve().parent.parent
BOTS = [
    ROOT / "sample_bots/heuristic",
    ROOT / "sample_bots/random",
    ROOT / "sample_bots/lowest",
    ROOT / "bench/bots/fast",
]
FOLDERS = tuple(path.name for path in BOTS)


class BotMemory:
    """Samples, in a thread, the bot processes alive (a Python bot of BOTS, by its
    command line and working folder) and their resident memory; keeps the peaks."""

    def __init__(self) -> None:
        self.processes = 0
        self.rss_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> BotMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        containers: dict[str, bool] = {}  # container id: whether this arena made it
        client = None
        while not self._stop.wait(0.02):
            parents, rss_of, in_container = {}, {}, {}
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    cgroup = Path(f"/proc/{pid}/cgroup").read_text()
                except OSError:
                    continue
                fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
                parents[int(pid)] = int(fields.get("PPid", "0"))
                if b"bot.py" in cmdline and b"bwrap" not in cmdline and "VmRSS" in fields:
                    rss_of[int(pid)] = int(fields["VmRSS"].split()[0])
                    found = re.search(r"[0-9a-f]{64}", cgroup)
                    if found:
                        in_container[int(pid)] = found.group(0)
            count = rss = 0
            for pid, kib in rss_of.items():
                if pid in in_container:
                    cid = in_container[pid]
                    if cid not in containers:
                        client = client or docker.from_env()
                        try:
                            labels = client.containers.get(cid).labels
                        except docker.errors.DockerException:
                            labels = {}
                        containers[cid] = labels.get(f"{LABEL}.owner") == OWNER
                    ours = containers[cid]
                else:
                    ours, up = False, pid
                    while up > 1 and not ours:
                        up = parents.get(up, 0)
                        ours = up == os.getpid()
                if ours:
                    count += 1
                    rss += kib
            self.processes = max(self.processes, count)
            self.rss_kib = max(self.rss_kib, rss)


def play(work: Path, sandbox_name: str, deals: int, name: str) -> tuple[float, int, BotMemory]:
    sandbox, _ = choose_sandbox(sandbox_name)  # type: ignore[arg-type]
    with Store(work / f"{name}.db") as store:
        bots = [store.add_bot(path) for path in BOTS]
        config = TournamentConfig([b.ref for b in bots], 4, deals)
        tournament = store.create_tournament(name, "nimmt", "standard", {}, 7, msgspec.to_builtins(config))
        for bot in bots:
            sandbox.prepare(bot.load(), progress=lambda line: None)
        with BotMemory() as memory:
            start = time.perf_counter()
            trio.run(run_tournament, store, tournament, bots, OnThisMachine(sandbox, 1))
            elapsed = time.perf_counter() - start
        return elapsed, store.count_games(tournament.id), memory


def one_life(games: object) -> list[int]:
    """The rule before: one process per bot for the whole match."""
    return [0]


def compare(sandbox_name: str, deals: int, runs: int) -> None:
    lives = arena.play.referee.lives
    rates: dict[str, list[float]] = {"before": [], "after": []}
    peaks: dict[str, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for attempt in range(runs):
            for way in ("before", "after"):
                arena.play.referee.lives = one_life if way == "before" else lives  # type: ignore[assignment]
                try:
                    elapsed, games, memory = play(work, sandbox_name, deals, f"{way}{attempt}")
                finally:
                    arena.play.referee.lives = lives
                rates[way].append(games / elapsed)
                peaks[way] = max(peaks.get(way, (0, 0)), (memory.processes, memory.rss_kib))
    print(f"{sandbox_name}: 4 fast bots, one table of 4, {deals} deals ({deals * 4} games), fair time on, {runs} runs")
    for way in ("before", "after"):
        processes, rss = peaks[way]
        low, high = min(rates[way]), max(rates[way])
        print(
            f"  {way:6}: {low:.1f}-{high:.1f} games/s; at most {processes} bot processes, {rss / 1024:.0f} MiB resident"
        )
    print(
        f"  after/before: {min(rates['after']) / max(rates['before']):.2f}-{max(rates['after']) / min(rates['before']):.2f}x (target: at least 0.8x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--sandbox", choices=["local", "docker", "both"], default="both")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for name in ["local", "docker"] if args.sandbox == "both" else [args.sandbox]:
        compare(name, args.deals, args.runs)


if __name__ == "__main__":
    main()
