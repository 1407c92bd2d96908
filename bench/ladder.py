"""Benchmark: the ladder's throughput beside a plain tournament of the same bots, how
soon a new bot plays (on an idle ladder, and on one busy with a slow bot), and how much
the database grows per 1,000 games.

    .venv/bin/python bench/ladder.py [--seconds 60] [--sandbox local] [--deals-per-table 0]

(1) Four bots (three sample bots and bench/bots/fast), tables of 4, two tables at once:
``arena tournament run`` of enough deals to last, and ``arena ladder run`` with the four
active, each timed the same way: a bare reader counts stored games every 0.2 s, from the
4th game on, over ``--seconds`` (the tournament: until 90% of its games, so its last
table's tail is left out). (2) An idle ladder (one bot active, nothing to play): the
seconds from a second bot's activation to its first stored game. (3) The same from an
upload: ``arena serve --submissions`` takes the folder (POST /api/submissions), the
ladder's pipeline builds and checks it, then the ladder seats it. (4) A busy ladder:
sample_bots/montecarlo (0.1 s a move) with heuristic and random, tables of 3, both slots
playing for 20 s; then a fourth bot is activated: the seconds to its first stored game.
(5) Database growth: the file (its log checkpointed) before and after ``--games 1000``
of the four fast bots, with every replay kept, and with ``--keep-replays 200`` over a
second 1,000 games (what the first run's pruning freed is reused where SQLite can).
The ladder's throughput is measured with ``--rest-floor 1`` (it never rests).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots.bundle import pack  # noqa: E402
from arena.bots.uploads import pack_upload  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.store.submissions import Submissions  # noqa: E402

ARENA = str(Path(sys.executable).parent / "arena")
BOTS = {"heuristic": "sample_bots/heuristic", "random": "sample_bots/random", "lowest": "sample_bots/lowest"}
BOTS["fast"] = "bench/bots/fast"


def copy(base: Path, source: str, name: str, version: str = "1.0") -> Path:
    """A bot folder renamed ``name`` at ``version``, readable by the sandbox's user."""
    folder = base / "folders" / f"{name}-{version}"
    shutil.copytree(ROOT / source, folder)
    manifest = folder / "bot.toml"
    lines = [
        f'name = "{name}"'
        if line.startswith("name =")
        else f'version = "{version}"'
        if line.startswith("version =")
        else line
        for line in manifest.read_text().splitlines()
    ]
    manifest.write_text("\n".join(lines) + "\n")
    for path in (base / "folders", folder, *folder.rglob("*")):
        os.chmod(path, 0o755)
    return folder


def activate(db: Path, folder: Path) -> int:
    """Submitted, stored and active at once (what the pipeline ends with); the bot's id."""
    digest, archive = pack(folder)
    name, version = folder.name.rsplit("-", 1)
    with Store(db) as store:
        subs = Submissions(store)
        author = next((a for a in subs.authors() if a.name == "bench"), None) or subs.add_author("bench")[0]
        submission = subs.submit(author, name, version, digest, archive, per_hour=1000)
        bot = store.add_bot(folder)
        subs.activate(submission.id, bot.id, {"build": "", "checks": [], "error": ""})
        return bot.id


def count(db: Path, bot_id: int | None = None) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            if bot_id is None:
                return int(con.execute("SELECT count(*) FROM games").fetchone()[0])
            return int(con.execute("SELECT count(*) FROM game_seats WHERE bot_id = ?", (bot_id,)).fetchone()[0])
    except sqlite3.Error:
        return 0


def rate(db: Path, proc: subprocess.Popen[bytes], seconds: float, until: int | None = None) -> float:
    """Games per second stored, from the 4th game on, over ``seconds`` (or up to ``until`` games)."""
    while count(db) < 4:
        assert proc.poll() is None, "it ended before playing"
        time.sleep(0.2)
    start, first = time.monotonic(), count(db)
    now, last = start, first
    while now - start < seconds and (until is None or last < until):
        time.sleep(0.2)
        now, last = time.monotonic(), count(db)
    return (last - first) / (now - start)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def ladder(db: Path, sandbox: str, *extra: str) -> subprocess.Popen[bytes]:
    command = [ARENA, "ladder", "run", "--db", str(db), "--sandbox", sandbox, "--concurrency", "2", *extra]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def throughput(base: Path, seconds: float, sandbox: str, deals_per_table: int) -> tuple[float, float]:
    folders = [copy(base, source, name) for name, source in BOTS.items()]
    plain = base / "tournament.db"
    deals = max(8, int(seconds * 4))  # enough to outlast the window on this machine
    tournament = subprocess.Popen(
        [ARENA, "tournament", "run", *map(str, folders), "--db", str(plain), "--table-size", "4"]
        + ["--deals", str(deals), "--seed", "3", "--sandbox", sandbox, "--concurrency", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    tournament_rate = rate(plain, tournament, seconds, until=int(0.9 * deals * 4))
    stop(tournament)
    db = base / "ladder.db"
    for folder in folders:
        activate(db, folder)
    run = ladder(  # never resting: the same work as the tournament's
        db, sandbox, "--table-size", "4", "--seed", "3", "--deals-per-table", str(deals_per_table), "--rest-floor", "1"
    )
    ladder_rate = rate(db, run, seconds)
    stop(run)
    return tournament_rate, ladder_rate


def idle_to_first_game(base: Path, sandbox: str) -> float:
    db = base / "idle.db"
    activate(db, copy(base, BOTS["heuristic"], "alone"))
    run = ladder(db, sandbox)
    time.sleep(5)  # up, and waiting for a second bot
    began = time.monotonic()
    joined = activate(db, copy(base, BOTS["random"], "joiner"))
    while count(db, joined) == 0:
        assert run.poll() is None
        time.sleep(0.05)
    took = time.monotonic() - began
    stop(run)
    return took


def upload_to_first_game(base: Path, sandbox: str) -> float:
    db = base / "upload.db"
    activate(db, copy(base, BOTS["heuristic"], "solo"))
    added = subprocess.run([ARENA, "author", "add", "ada", "--db", str(db)], capture_output=True, text=True, check=True)
    token = added.stdout.strip().splitlines()[-1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [ARENA, "serve", "--db", str(db), "--port", str(port), "--submissions"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            urllib.request.urlopen(url + "/api/health", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    run = ladder(db, sandbox)
    time.sleep(5)
    body = pack_upload(copy(base, BOTS["random"], "uploaded"))
    request = urllib.request.Request(
        url + "/api/submissions",
        data=body,
        headers={"Content-Type": "application/gzip", "Authorization": f"Bearer {token}"},
    )
    began = time.monotonic()
    urllib.request.urlopen(request, timeout=60).read()
    while True:
        with Store(db, read_only=True) as store:
            bots = [b.id for b in store.list_bots() if b.name == "uploaded"]
        if bots and count(db, bots[0]):
            break
        assert run.poll() is None
        time.sleep(0.1)
    took = time.monotonic() - began
    stop(run)
    stop(server)
    return took


def busy_to_first_game(base: Path, sandbox: str) -> float:
    db = base / "busy.db"
    for name, source in (("mc", "sample_bots/montecarlo"), ("heur", BOTS["heuristic"]), ("rand", BOTS["random"])):
        activate(db, copy(base, source, name))
    run = ladder(db, sandbox, "--table-size", "3")
    while count(db) < 1:
        assert run.poll() is None
        time.sleep(0.2)
    time.sleep(20)  # both slots deep in tables with montecarlo
    began = time.monotonic()
    joined = activate(db, copy(base, BOTS["lowest"], "late"))
    while count(db, joined) == 0:
        assert run.poll() is None
        time.sleep(0.05)
    took = time.monotonic() - began
    stop(run)
    return took


def size(db: Path) -> int:
    """The database's bytes once its log is checkpointed into it."""
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size + sum(p.stat().st_size for p in db.parent.glob(db.name + "-*") if p.is_file())


def grown(db: Path, sandbox: str, *extra: str) -> tuple[int, int]:
    """Bytes the file grew by, and games stored, over one run of ``--games 1000``."""
    before, games = (size(db), count(db)) if db.exists() else (0, 0)
    run = subprocess.run(
        [ARENA, "ladder", "run", "--db", str(db), "--sandbox", sandbox, "--table-size", "4", "--games", "1000", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    assert run.returncode == 0
    return size(db) - before, count(db) - games


def growth(base: Path, sandbox: str) -> tuple[float, float, float]:
    """KB per 1,000 games: every replay kept; the same database's first run; its second
    run with --keep-replays 200 (steady state)."""
    results = []
    for label, runs in (("all", [()]), ("pruned", [("--keep-replays", "200")] * 2)):
        db = base / f"growth-{label}.db"
        for folder in [copy(base, source, f"{label}-{name}") for name, source in BOTS.items()]:
            activate(db, folder)
        results += [grown(db, sandbox, *extra) for extra in runs]
    return tuple(bytes_ / games / 1000 * 1000 for bytes_, games in results)  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--deals-per-table", type=int, default=0)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="arena-bench-ladder-"))
    os.chmod(base, 0o755)
    try:
        plain, on_ladder = throughput(base, args.seconds, args.sandbox, args.deals_per_table)
        print(f"tournament: {plain:.2f} games/s; ladder: {on_ladder:.2f} games/s ({on_ladder / plain:.2f}x)")
        print(f"idle ladder, activation to first game: {idle_to_first_game(base, args.sandbox):.2f} s")
        print(f"idle ladder, upload to first game: {upload_to_first_game(base, args.sandbox):.2f} s")
        print(f"busy ladder (montecarlo), activation to first game: {busy_to_first_game(base, args.sandbox):.2f} s")
        kept, first, pruned = growth(base, args.sandbox)
        print(
            f"database growth per 1,000 games: {kept:.0f} KB every replay kept;"
            f" --keep-replays 200: {first:.0f} KB the first 1,000, {pruned:.0f} KB the next 1,000"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
