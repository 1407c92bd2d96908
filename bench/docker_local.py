"""Benchmark: tournaments in Docker against the same tournaments in the local sandbox.

    .venv/bin/python bench/docker_local.py [--deals 6] [--sample-deals 8] [--runs 2] [--league] [--no-before]

Two round robins, fair time on, storing every game, each played in both sandboxes,
alternating (local, docker, local, docker...) so a busy machine weighs on both alike:

1. 4 fast bots (heuristic, random, lowest, fast: answers in microseconds, the worst case
   for what a container's start costs), one table of 4, ``--deals`` deals (4 rotations:
   4 processes a bot);
2. 6 sample bots (heuristic, random, lowest, greedy-c, greedy-js, greedy-perl), one table
   of 6, ``--sample-deals`` deals (6 rotations: 6 processes a bot).

It reports games per second of each, Docker's over local's (targets: at least 0.8x for
the first, at least 1.0x for the second), and the containers the engine created for
them; with ``--before`` (the default) also Docker with a container per process, as
before a container served a bot's processes one after another (``docker-alone``). Needs a running engine and the base image (`arena image build`); bot images are
built before the clocks run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import docker
import msgspec
import trio

from arena.sandbox import choose_sandbox
from arena.store import Store
from arena.tournaments.roundrobin import OnThisMachine, TournamentConfig, run_tournament

ROOT = Path(__file__).resolve().parent.parent
FAST = [
    ROOT / "sample_bots/heuristic",
    ROOT / "sample_bots/random",
    ROOT / "sample_bots/lowest",
    ROOT / "bench/bots/fast",
]
SAMPLE = [
    ROOT / f"sample_bots/{name}" for name in ("heuristic", "random", "lowest", "greedy-c", "greedy-js", "greedy-perl")
]


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


class ContainerCount:
    """Containers the arena asks the engine to create meanwhile (a count of its calls:
    the engine's event log keeps too few events for a long run)."""

    calls = 0

    def __init__(self) -> None:
        self._start = ContainerCount.calls

    def count(self) -> int:
        return ContainerCount.calls - self._start

    @classmethod
    def install(cls) -> None:
        create = docker.api.client.APIClient.create_container

        def counted(self: docker.api.client.APIClient, *args: Any, **kwargs: Any) -> Any:
            cls.calls += 1
            return create(self, *args, **kwargs)

        docker.api.client.APIClient.create_container = counted  # type: ignore[method-assign]


def play(work: Path, sandbox_name: str, paths: list[Path], deals: int, name: str, table: int) -> tuple[float, int]:
    """Seconds and games of one round robin of ``paths`` at tables of ``table``."""
    sandbox, _ = choose_sandbox("docker" if sandbox_name.startswith("docker") else sandbox_name)  # type: ignore[arg-type]
    if sandbox_name == "docker-alone":
        sandbox.reuse = False  # type: ignore[attr-defined]
    with Store(work / f"{name}.db") as store:
        bots = [store.add_bot(path) for path in paths]
        config = TournamentConfig([b.ref for b in bots], table, deals)
        tournament = store.create_tournament(name, "nimmt", "standard", {}, 7, msgspec.to_builtins(config))
        for bot in bots:
            sandbox.prepare(bot.load(), progress=lambda line: None)
        start = time.perf_counter()
        trio.run(run_tournament, store, tournament, bots, OnThisMachine(sandbox, 1))
        played = time.perf_counter()
        close = getattr(sandbox, "close", None)
        if close is not None:  # the containers kept for the bots go, as at the arena's exit: timed too
            close()
            print(f"    (removing the kept containers: {time.perf_counter() - played:.2f} s)")
        elapsed = time.perf_counter() - start
        return elapsed, store.count_games(tournament.id)


def compare(label: str, paths: list[Path], deals: int, runs: int, before: bool, table: int = 0) -> None:
    table = table or len(paths)
    ways = ["local", "docker", "docker-alone"] if before else ["local", "docker"]
    rates: dict[str, list[float]] = {way: [] for way in ways}
    created: dict[str, list[int]] = {way: [] for way in ways}
    games = 0
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for attempt in range(runs):
            for way in ways:
                counter = ContainerCount()
                elapsed, games = play(work, way, paths, deals, f"{way}{attempt}", table)
                rates[way].append(games / elapsed)
                created[way].append(counter.count())
                print(f"    {label}, {way}, run {attempt + 1}: {games / elapsed:.1f} games/s ({load()})")
    tables = "one table" if table == len(paths) else f"every table of {table}"
    print(f"{label}: {len(paths)} bots, {tables}, {deals} deals a table ({games} games), fair time on, {runs} runs")
    for way in ways:
        made = f", {min(created[way])}-{max(created[way])} containers created" if way != "local" else ""
        print(f"  {way:12}: {min(rates[way]):.1f}-{max(rates[way]):.1f} games/s{made}")
    for way in ways[1:]:
        ratios = [d / lo for d, lo in zip(rates[way], rates["local"], strict=True)]
        print(f"  {way}/local, run by run: {', '.join(f'{r:.2f}' for r in ratios)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=6, help="deals of the 4 fast bots' table (default 6)")
    parser.add_argument("--sample-deals", type=int, default=8, help="deals of the 6 sample bots' table (default 8)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each sandbox (default 2)")
    parser.add_argument("--only", choices=["fast", "sample"], help="play only this tournament")
    parser.add_argument(
        "--league",
        action="store_true",
        help="also the 6 sample bots at every table of 4 (15 tables, --league-deals each): containers kept across tables",
    )
    parser.add_argument("--league-deals", type=int, default=1, help="deals of each table of the league (default 1)")
    parser.add_argument(
        "--before",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also play in Docker with a container per process, as before kept containers (docker-alone)",
    )
    args = parser.parse_args()
    ContainerCount.install()
    print(f"start: {load()}")
    if args.only != "sample":
        compare("4 fast bots (target: docker/local at least 0.8)", FAST, args.deals, args.runs, args.before)
    if args.only != "fast":
        compare(
            "6 sample bots (target: docker/local at least 1.0)",
            SAMPLE,
            args.sample_deals,
            args.runs,
            args.before,
        )
    if args.league:
        compare("6 sample bots at tables of 4", SAMPLE, args.league_deals, args.runs, args.before, table=4)
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
