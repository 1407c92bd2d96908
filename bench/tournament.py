"""Benchmark: tournament throughput, the cost of storing and rating, and a big leaderboard.

    .venv/bin/python bench/tournament.py [--deals 10] [--sandbox local|docker|both] [--games 100000]

(1) Runs the same round robin (4 sample-like fast bots, tables of 4) twice: once storing
every game in SQLite, once with storing switched off, and reports games per second and
what storing added; then times rating the stored games. (2) Fills a database with
--games synthetic 4-seat games among 16 bots and times the leaderboard over it, cold
(nothing cached) and warm.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import trio

from arena.boards.standings import leaderboard
from arena.sandbox import choose_sandbox
from arena.store import FinishedGame, SeatResult, Store
from arena.tournaments.roundrobin import OnThisMachine, TournamentConfig, run_tournament

ROOT = Path(__file__).resolve().parent.parent
BOTS = [ROOT / "sample_bots/heuristic", ROOT / "sample_bots/random", ROOT / "bench/bots/fast"]


class NoStore(Store):
    """A store that forgets every game: the tournament without the cost of keeping it."""

    def save_game(self, record: FinishedGame) -> int:
        return 0


def run(store: Store, sandbox_name: str, deals: int, name: str) -> tuple[float, int]:
    sandbox, _ = choose_sandbox(sandbox_name)  # type: ignore[arg-type]
    bots = [store.add_bot(path) for path in BOTS]
    config = TournamentConfig([b.ref for b in bots], 3, deals)
    tournament = store.create_tournament(name, "nimmt", "standard", {}, 7, __import__("msgspec").to_builtins(config))
    for bot in bots:
        sandbox.prepare(bot.load(), progress=lambda line: None)
    start = time.perf_counter()
    trio.run(run_tournament, store, tournament, bots, OnThisMachine(sandbox, 2))
    return time.perf_counter() - start, deals * 3


def throughput(sandbox_name: str, deals: int) -> None:
    """Stored and not stored, alternating, twice each; the best of each counts."""
    stored_times, bare_times, rating_times = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for attempt in range(3):
            with NoStore(Path(work) / "forgot.db") as store:
                bare_times.append(run(store, sandbox_name, deals, f"forgot{attempt}")[0])
            with Store(Path(work) / "stored.db") as store:
                elapsed, games = run(store, sandbox_name, deals, f"stored{attempt}")
                stored_times.append(elapsed)
                start = time.perf_counter()
                board = leaderboard(store, tournament=f"stored{attempt}")
                rating_times.append(time.perf_counter() - start)
                assert len(board) == 3
    stored_time, bare_time, rating_time = min(stored_times), min(bare_times), min(rating_times)
    extra = (stored_time + rating_time - bare_time) / bare_time
    print(f"{sandbox_name}: {games} games of 3 bots, fair time on (best of 3 runs each)")
    print(f"  storing: {games / stored_time:.1f} games/s; not storing: {games / bare_time:.1f} games/s")
    print(f"  rating them afterwards: {rating_time * 1000:.0f} ms")
    print(f"  storing + rating added {extra:+.1%} to the wall time (target: under 5%)")


def fill_synthetic(store: Store, games: int, rng: random.Random) -> None:
    """``games`` 4-seat games among 16 bots of hidden strengths, in one tournament "big"
    (placeholder replays): a database the size of a busy arena, made in seconds."""
    ids = []
    for i in range(16):
        store.db.execute(
            "INSERT INTO bots (name, version, hash, path, language, games, added) VALUES (?, '1', ?, '', 'x', '[]', '')",
            (f"bot{i:02d}", f"h{i}"),
        )
        ids.append(i + 1)
    strength = {b: rng.gauss(0, 1) for b in ids}
    tournament = store.create_tournament("big", "nimmt", "standard", {}, 1, {})
    blob = b'{"type":"header"}\n' * 20
    store.db.execute("BEGIN")
    for g in range(games):
        seated = rng.sample(ids, 4)
        perf = sorted(seated, key=lambda b: -(strength[b] + rng.gauss(0, 1.5)))
        seats = [SeatResult(b, perf.index(b) + 1, 10 * perf.index(b), "ok", {}) for b in seated]
        store.save_game(
            FinishedGame(
                tournament.id, g // 16, g % 16, (g % 16) // 4, g, "nimmt", "standard", 5, 10.0, "", seats, blob
            )
        )
    store.db.execute("COMMIT")
    store.set_status(tournament.id, "finished")


def big_leaderboard(games: int) -> None:
    with tempfile.TemporaryDirectory() as work, Store(Path(work) / "big.db") as store:
        fill_synthetic(store, games, random.Random(1))
        start = time.perf_counter()
        rows = leaderboard(store)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        leaderboard(store)
        warm = time.perf_counter() - start
        assert len(rows) == 16
        print(
            f"leaderboard over {games} stored 4-seat games, 16 bots: cold {cold * 1000:.0f} ms, cached {warm * 1000:.1f} ms (target: under 1 s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--sandbox", choices=["local", "docker", "both"], default="both")
    parser.add_argument("--games", type=int, default=100_000)
    args = parser.parse_args()
    for name in ["local", "docker"] if args.sandbox == "both" else [args.sandbox]:
        throughput(name, args.deals)
    big_leaderboard(args.games)


if __name__ == "__main__":
    main()
