"""Benchmark: `arena backup` and `arena check` of a big database, and a backup taken while
an arena writes to it.

    .venv/bin/python bench/backup.py [--games 100000]

Fills a database with ``--games`` 3-seat games of the three stored sample bots (real
snapshots in ``<db>-bots/``), each with a 2 KiB compressed replay (about what a real
4-round game of 6 nimmt! takes), then times, as the organiser runs them (real
processes): `arena backup`, `arena check`, and `arena backup` again while another
process stores a game every 10 ms, with how many games that writer stored meanwhile (it
is never blocked: the backup is a reader of the WAL-mode file).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import FinishedGame, SeatResult, Store  # noqa: E402

ARENA = str(Path(sys.executable).parent / "arena")
SAMPLES = ROOT / "sample_bots"
WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from arena.store import FinishedGame, SeatResult, Store
store = Store(Path({db!r}))
tournament = store.get_tournament("big")
bots = [b.id for b in store.list_bots()]
n = 10**9
print("ready", flush=True)
while True:
    seats = [SeatResult(b, i + 1, i, "ok", {{}}) for i, b in enumerate(bots)]
    store.save_game(FinishedGame(tournament.id, n, 0, 0, n, "nimmt", "standard", 4, 1.0, "", seats, b"x" * 2048))
    n += 1
    time.sleep(0.01)
"""


def fill(db: Path, games: int) -> None:
    rng = random.Random(1)
    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name).id for name in ("heuristic", "random", "lowest")]
        tournament = store.create_tournament("big", "nimmt", "standard", {}, 1, {})
        store.db.execute("BEGIN")
        for g in range(games):
            order = rng.sample(bots, 3)
            seats = [SeatResult(b, order.index(b) + 1, 10 * order.index(b), "ok", {}) for b in bots]
            replay = rng.randbytes(2048)
            store.save_game(
                FinishedGame(tournament.id, g // 6, g % 6, 0, g, "nimmt", "standard", 4, 10.0, "", seats, replay)
            )
        store.db.execute("COMMIT")


def timed(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([ARENA, *args], check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - start


def games_in(db: Path) -> int:
    with Store(db, read_only=True) as store:
        return store.count_games()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "arena.db"
        start = time.perf_counter()
        fill(db, options.games)
        print(
            f"filled {options.games} games in {time.perf_counter() - start:.1f} s: {os.stat(db).st_size / 1e6:.0f} MB"
        )
        quiet = timed("backup", str(Path(work) / "quiet.db"), "--db", str(db))
        print(f"arena backup, nothing else running: {quiet:.2f} s")
        check = timed("check", "--db", str(db))
        print(f"arena check (integrity, foreign keys, 3 snapshots hashed): {check:.2f} s")
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER.format(root=str(ROOT), db=str(db))], stdout=subprocess.PIPE, text=True
        )
        try:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
            before = games_in(db)
            busy = timed("backup", str(Path(work) / "busy.db"), "--db", str(db))
            during = games_in(db) - before
        finally:
            writer.kill()
            writer.wait()
        copied = games_in(Path(work) / "busy.db")
        print(
            f"arena backup while a writer stores a game every 10 ms: {busy:.2f} s; the writer stored {during}"
            f" games meanwhile; the copy holds {copied} (all of them up to its instant)"
        )


if __name__ == "__main__":
    main()
