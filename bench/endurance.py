"""Endurance: bots that think, through a long tournament, inside their sandbox's limits.

    .venv/bin/python bench/endurance.py [--game nimmt|sixes] [--games 1000] [--sandbox docker|local]
                                        [--think 0.1] [--concurrency 2] [--db FILE]

Runs ``arena tournament run`` with the game's search bot (``sample_bots/montecarlo`` or
``sample_bots/sixes-montecarlo``, thinking ``--think`` seconds a move) at tables with
the game's other sample bots, enough deals for ``--games`` games, under the sandbox's
caps (memory, processes, CPU, a read-only root). Then counts, from the database, the
games played and every seat that faulted (a crash, an out-of-memory kill, a timeout, an
illegal answer), by bot; exits 1 if any did.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from peer_strength import with_think

ROOT = Path(__file__).resolve().parent.parent
ARENA = str(ROOT / ".venv" / "bin" / "arena")
TABLES = {
    "nimmt": ["montecarlo", "heuristic", "random", "lowest"],
    "sixes": ["sixes-montecarlo", "sixes-heuristic", "sixes-random"],
}
"""The search bot first, then the others at its table."""


def faults(db: Path, tournament: str) -> tuple[int, Counter[str]]:
    """The games stored for ``tournament`` and the faulted seats (a status not ok, or
    any fault the referee recorded), by bot."""

    def games(*flags: str) -> list[dict]:
        out = subprocess.run(
            [
                ARENA,
                "games",
                "--db",
                str(db),
                "--tournament",
                tournament,
                *flags,
                "--format",
                "json",
                "--limit",
                "100000",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out)

    counted: Counter[str] = Counter()
    for game in games("--faults"):
        for seat in game.get("seats", []):
            if seat.get("status", "ok") != "ok" or seat.get("faults"):
                counted[seat.get("bot", "?")] += 1
    return len(games()), counted


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--game", choices=sorted(TABLES), default="nimmt")
    parser.add_argument("--games", type=int, default=1000, help="games to play, at least (default 1000)")
    parser.add_argument("--sandbox", default="local", help="docker or local (default local)")
    parser.add_argument("--think", type=float, default=0.1, help="the search bot's seconds a move (default 0.1)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--db", type=Path, help="keep the games in this database (default: a scratch one)")
    args = parser.parse_args()
    if args.games < 1 or args.think <= 0:
        parser.error("--games and --think must be positive")
    names = TABLES[args.game]
    seats = len(names)
    with tempfile.TemporaryDirectory(prefix="arena-bench-endurance-") as name:
        scratch = Path(name)
        bots = [with_think(ROOT / "sample_bots" / names[0], args.think, scratch)]
        bots += [ROOT / "sample_bots" / other for other in names[1:]]
        db = args.db or scratch / "endurance.db"
        tournament = f"endurance-{args.game}-{args.sandbox}-{args.games}"
        started = time.perf_counter()
        subprocess.run(
            [ARENA, "tournament", "run", *map(str, bots), "--deals", str(math.ceil(args.games / seats)),
             "--db", str(db), "--name", tournament, "--sandbox", args.sandbox,
             "--move-time", f"{max(1.0, 6 * args.think):g}", "--concurrency", str(args.concurrency)],
            check=True,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        played, faulted = faults(db, tournament)
    print(
        f"endurance: {played} games of {args.game} in {args.sandbox} ({seconds / 60:.1f} min, {played / seconds:.2f}"
        f" games/s), {names[0]} thinking {args.think:g} s a move; faulted seats: {sum(faulted.values())}"
        + "".join(f", {bot} {n}" for bot, n in sorted(faulted.items()))
    )
    sys.exit(1 if faulted else 0)


if __name__ == "__main__":
    main()
