"""Benchmark: the arena's memory over one long match.

    .venv/bin/python bench/match_memory.py [--games 2000] [--sandbox local]

One table of 4 fast bots (bench/bots/fast under four names) plays a single match of
--games games, fair time off (games as fast as the referee plays them), through
``run_tournament`` into a real SQLite file, as ``arena tournament run`` does. The arena's
resident memory (VmRSS of this process) is printed after 50, 100, 250, 500, 1,000...
games, and its growth from game 100 to the last. It should stay flat: each game goes to
the store as it ends, and the match keeps nothing of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import msgspec
import trio

from arena.play.match import GameResult, TimeLimits
from arena.sandbox import choose_sandbox
from arena.store import Store, StoredBot
from arena.tournaments.roundrobin import OnThisMachine, Progress, TournamentConfig, run_tournament

FAST = Path(__file__).resolve().parent / "bots" / "fast"
MARKS = (50, 100, 250, 500, 1000, 1500, 2000, 3000, 5000, 10_000)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class Measure(Progress):
    def __init__(self, games: int) -> None:
        self.marks = sorted({m for m in MARKS if m < games} | {games})
        self.played = 0
        self.rss: dict[int, float] = {}
        self.start = time.perf_counter()

    def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
        self.played += 1
        if self.played in self.marks:
            self.rss[self.played] = rss_mb()
            rate = self.played / (time.perf_counter() - self.start)
            print(f"  after {self.played:>6,} games: {self.rss[self.played]:6.1f} MB  ({rate:.0f} games/s)", flush=True)


def fast_bots(work: Path) -> list[Path]:
    """bench/bots/fast as four bots of their own (a tournament seats each bot once)."""
    folders = []
    for i in range(1, 5):
        folder = work / f"fast{i}"
        shutil.copytree(FAST, folder)
        manifest = folder / "bot.toml"
        manifest.write_text(manifest.read_text().replace('name = "fast"', f'name = "fast{i}"'))
        for path in (folder, *folder.iterdir()):
            os.chmod(path, 0o755)  # a local bot runs as a user of its own
        folders.append(folder)
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="games in the match (a multiple of 4)")
    parser.add_argument("--sandbox", default="local", choices=["local", "docker"])
    args = parser.parse_args()
    deals = max(1, args.games // 4)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)
        sandbox, _ = choose_sandbox(args.sandbox)
        with Store(work / "memory.db") as store:
            bots = [store.add_bot(folder) for folder in fast_bots(work)]
            for bot in bots:
                sandbox.prepare(bot.load(), progress=lambda line: None)
            config = TournamentConfig([b.ref for b in bots], 4, deals, TimeLimits(), fair_time=False)
            tournament = store.create_tournament("memory", "nimmt", "standard", {}, 1, msgspec.to_builtins(config))
            measure = Measure(deals * 4)
            print(f"one match of {deals * 4:,} games, 4 fast bots, fair time off, {args.sandbox} sandbox")
            print(f"  before the match:    {rss_mb():6.1f} MB")
            trio.run(run_tournament, store, tournament, bots, OnThisMachine(sandbox, 1), measure)
            assert store.count_games(tournament.id) == deals * 4
        first = measure.rss.get(100, measure.rss[min(measure.rss)])
        last = measure.rss[max(measure.rss)]
        print(
            f"growth from game {100 if 100 in measure.rss else min(measure.rss)} to {max(measure.rss):,}: {last - first:+.1f} MB"
        )


if __name__ == "__main__":
    main()
