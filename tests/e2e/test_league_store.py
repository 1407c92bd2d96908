"""The database of a league that runs for weeks, through the real ``arena`` command: bots
stored beside the database wherever it is run from or moved to, one run of a tournament
at a time, damaged and full disks, and reading without write access."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.bots.folder import copy_folder
from arena.store import LEASE_TIMEOUT, MIGRATIONS, SCHEMA_VERSION, Store, StoreError, version_key

from ..conftest import SAMPLES, one_clean_line, serving

ARENA = str(Path(sys.executable).parent / "arena")
BOTS = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
SMALL = ["--table-size", "3", "--deals", "1", "--seed", "11", "--sandbox", "local", "--set", "end_score=30"]
NOBODY = 65534


def arena(
    *args: str | Path, cwd: Path | None = None, user: int | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The real CLI; ``user``: run as that uid (and gid), as an organiser's other account would."""
    return subprocess.run(
        [ARENA, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        preexec_fn=None if user is None else as_user(user),
        env={**os.environ, "HOME": "/tmp"} if user is not None else None,
    )


def as_user(uid: int) -> Callable[[], None]:
    def switch() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    return switch


def open_folder(prefix: str) -> Path:
    """A temporary folder every user may enter (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o755)
    return folder


@pytest.fixture
def folders() -> Iterator[Callable[[str], Path]]:
    made: list[Path] = []

    def make(prefix: str) -> Path:
        made.append(open_folder(f"arena-league-{prefix}-"))
        return made[-1]

    yield make
    for folder in made:
        subprocess.run(["chmod", "-R", "u+w", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def league() -> Iterator[Path]:
    """A small finished tournament ("cup": 3 games of the sample bots) in ``league.db``,
    with its ``league-bots/`` snapshots; tests copy it."""
    base = open_folder("arena-league-")
    db = base / "league.db"
    made = arena("tournament", "run", *BOTS, *SMALL, "--db", db, "--name", "cup")
    assert made.returncode == 0, made.stderr
    yield db
    shutil.rmtree(base, ignore_errors=True)


def copy_league(league: Path, folder: Path, name: str = "league") -> Path:
    db = folder / f"{name}.db"
    with sqlite3.connect(league) as source, sqlite3.connect(db) as target:
        source.backup(target)
    target.close()
    shutil.copytree(league.with_name("league-bots"), folder / f"{name}-bots", symlinks=True)
    return db


def games_stored(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])


def versioned(folder: Path, source: str, version: str) -> Path:
    """A copy of a sample bot under another version."""
    copy = folder / f"{Path(source).name}-{version}"
    shutil.copytree(source, copy)
    manifest = copy / "bot.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('version = "1.0.0"', f'version = "{version}"'))
    return copy


# --- item 1: snapshots beside the database, wherever the arena runs from ------------------


def test_stored_bots_work_from_any_folder_and_after_moving_the_database(folders: Callable[[str], Path]) -> None:
    first, elsewhere, moved, sources = folders("first"), folders("elsewhere"), folders("moved"), folders("sources")
    ten, two = versioned(sources, BOTS[2], "0.10"), versioned(sources, BOTS[2], "0.2")
    for folder in (ten, two):  # 0.10 first: the newest is not the highest
        added = arena("bot", "add", folder, "--db", "arena.db", cwd=first)
        assert added.returncode == 0, added.stderr
    run = arena("tournament", "run", BOTS[0], BOTS[1], "lowest", *SMALL, "--db", "arena.db", "--name", "one", cwd=first)
    assert run.returncode == 0, run.stderr
    assert "lowest:0.10" in run.stdout.split("Leaderboard")[0], "the header names the chosen versions"
    assert "heuristic:1.0.0" in run.stdout.split("Leaderboard")[0]
    db = first / "arena.db"
    assert (first / "arena-bots").is_dir()

    # Another folder, an absolute --db (cron): the stored bots are found.
    board = arena("leaderboard", "--db", db, "--format", "json", cwd=elsewhere)
    assert board.returncode == 0, board.stderr
    assert {row["bot"] for row in json.loads(board.stdout)["nimmt/standard,end_score=30"]} == {
        "heuristic:1.0.0",
        "random:1.0.0",
        "lowest:0.10",
    }
    resumed = arena("tournament", "run", "--resume", "--name", "one", "--db", db, "--sandbox", "local", cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert "0 games played" in resumed.stdout
    shown = arena("replay", "1", "--db", db, cwd=elsewhere)
    assert shown.returncode == 0 and "Final standings" in shown.stdout, shown.stderr

    # The database and its bots moved together: play again, by stored names only.
    shutil.move(str(db), moved / "arena.db")
    shutil.move(str(first / "arena-bots"), moved / "arena-bots")
    again = arena("tournament", "run", "heuristic", "random", "lowest:0.2", *SMALL, "--db", moved / "arena.db",
                  "--name", "two", cwd=elsewhere)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "3 games played" in again.stdout

    # A snapshot gone: one line that says so; adding the same folder again repairs it.
    snapshot = next((moved / "arena-bots").glob("lowest-0.10-*"))
    subprocess.run(["chmod", "-R", "u+w", str(snapshot)], check=True)
    shutil.rmtree(snapshot)
    missing = arena("tournament", "run", "--resume", "--name", "one", "--db", moved / "arena.db", cwd=elsewhere)
    one_clean_line(missing, "lowest:0.10", "snapshot", "is missing", "arena bot add")
    repaired = arena("bot", "add", ten, "--db", moved / "arena.db", cwd=elsewhere)
    assert repaired.returncode == 0 and "stored lowest:0.10" in repaired.stdout, repaired.stderr
    assert (snapshot / "bot.toml").is_file()
    resumed = arena("tournament", "run", "--resume", "--name", "one", "--db", moved / "arena.db", cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr


def test_an_old_database_with_relative_snapshot_paths_is_migrated(folders: Callable[[str], Path]) -> None:
    """Schema 2 stored each snapshot's path as `bot add` saw it: relative to the folder it
    ran in, or absolute when --db was. Migration finds both in ``<db>-bots/``."""
    old, elsewhere = folders("old"), folders("elsewhere")
    db = old / "arena.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    for number, script in enumerate(MIGRATIONS[:2], 1):
        conn.executescript(f"BEGIN; {script}; PRAGMA user_version = {number}; COMMIT;")
    stored = {}
    (old / "arena-bots").mkdir()
    for source, recorded in ((BOTS[1], "arena-bots/{}"), (BOTS[2], "/srv/league/arena-bots/{}")):
        name = Path(source).name
        snapshot = old / "arena-bots" / f"{name}-1.0.0-{'0' * 12}"
        digest = copy_folder(Path(source), snapshot)
        snapshot = snapshot.rename(old / "arena-bots" / f"{name}-1.0.0-{digest[:12]}")
        stored[name] = snapshot
        conn.execute(
            "INSERT INTO bots (name, version, hash, path, language, games, added)"
            " VALUES (?, '1.0.0', ?, ?, 'python', '[\"nimmt\"]', '2025-01-01T00:00:00+00:00')",
            (name, digest, recorded.format(snapshot.name)),
        )
    conn.commit()
    conn.close()

    # Reading commands never migrate: they say what does.
    listed = arena("bot", "list", "--db", db, cwd=elsewhere)
    one_clean_line(listed, "schema version 2", "writing command")
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 2

    run = arena("tournament", "run", "random", "lowest", *SMALL, "--table-size", "2", "--db", db, "--name", "m",
                cwd=elsewhere)  # fmt: skip
    assert run.returncode == 0, run.stderr
    with Store(db, read_only=True) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert {b.name: Path(b.path) for b in store.list_bots()} == stored
        raw = [r[0] for r in store.db.execute("SELECT path FROM bots ORDER BY id")]
    assert raw == [stored["random"].name, stored["lowest"].name], "kept relative to the database"
    assert arena("bot", "list", "--db", db, cwd=elsewhere).returncode == 0


def test_a_bare_name_is_the_highest_version(tmp_path: Path, folders: Callable[[str], Path]) -> None:
    sources = folders("versions")
    with Store(tmp_path / "v.db") as store:
        for version in ("1.10", "1.2", "1.10-beta", "1.9.9"):
            store.add_bot(versioned(sources, BOTS[2], version))
        assert store.get_bot("lowest").version == "1.10"
        assert store.get_bot("lowest:1.2").version == "1.2"
    ordered = sorted(["1.10", "1.2", "1.10.1", "1.9.9", "1.10-beta", "2", "1"], key=version_key)
    assert ordered == ["1", "1.2", "1.9.9", "1.10-beta", "1.10", "1.10.1", "2"]


# --- item 4: one run of a tournament at a time ----------------------------------------------

GATE_CODE = """\
import os
import time

from protocol.bot import Bot, run

GATE = {gate!r}


class Gate(Bot):
    played = 0

    def new_game(self, message):
        self.played += 1

    def decide(self, kind, view, legal):
        while self.played >= 2 and not os.path.exists(GATE):  # from its 2nd game on, wait for the test
            time.sleep(0.02)
        return legal[0]


run(Gate())
"""


def gate_bot(folder: Path, gate: Path) -> Path:
    bot = folder / "gate"
    bot.mkdir()
    (bot / "bot.py").write_text(GATE_CODE.format(gate=str(gate)))
    (bot / "bot.toml").write_text('name = "gate"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\n'
                                  'games = ["nimmt"]\n')  # fmt: skip
    for path in (bot, *bot.iterdir()):
        os.chmod(path, 0o755)
    return bot


def test_a_second_run_of_a_running_tournament_is_refused(folders: Callable[[str], Path]) -> None:
    work = folders("twice")
    gate = work / "open"
    db = work / "t.db"
    # unsafe-local: the gate bot must see the test's gate file (a sandbox would hide it).
    args: list[str | Path] = ["tournament", "run", gate_bot(work, gate), BOTS[1], "--table-size", "2", "--deals", "2", "--seed", "3",
            "--sandbox", "unsafe-local", "--move-time", "120", "--db", db, "--name", "once"]  # fmt: skip
    first = subprocess.Popen([ARENA, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while first.poll() is None and time.monotonic() < deadline:  # the first game is in; the gate holds the 2nd
            try:
                if games_stored(db) >= 1:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.05)
        assert first.poll() is None, first.communicate()
        second = arena("tournament", "run", "--resume", "--name", "once", "--db", db, "--sandbox", "unsafe-local",
                       timeout=60)  # fmt: skip
        line = one_clean_line(second, "tournament 'once' is being run by another arena", f"pid {first.pid}")
        assert "--resume" in line
        assert games_stored(db) == 1, "the refused run played nothing"
    finally:
        gate.touch()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert "Traceback" not in err
    assert games_stored(db) == 4, "2 deals x 2 seatings, each once"
    with Store(db, read_only=True) as store:
        row = store.db.execute("SELECT status, lease_owner FROM tournaments WHERE name = 'once'").fetchone()
    assert row == ("finished", None), "the lease is released at the end"


def test_a_lease_is_taken_over_only_from_a_dead_or_silent_arena(tmp_path: Path) -> None:
    db = tmp_path / "lease.db"
    with Store(db) as mine, Store(db) as other:
        t = mine.create_tournament("t", "nimmt", "standard", {}, 1, {})

        def held_by(owner: str, silent_for: float) -> None:
            with sqlite3.connect(db) as conn:
                conn.execute(
                    "UPDATE tournaments SET lease_owner = ?, lease_beat = ?", (owner, time.time() - silent_for)
                )
            conn.close()

        dead = subprocess.Popen(["true"])
        dead.wait()
        alive = subprocess.Popen(["sleep", "60"])
        try:
            here = socket.gethostname()
            held_by(f"{here}:{alive.pid}:{started(alive.pid)}", 0)
            with pytest.raises(StoreError, match="being run by another arena"):
                mine.take_lease(t.id)
            held_by(f"{here}:{alive.pid}:1", 0)  # that pid, but another process (started at another time)
            mine.take_lease(t.id)
            with pytest.raises(StoreError, match=f"pid {os.getpid()} on {here}"):
                other.take_lease(t.id)  # held by this process, through another store
            mine.release_lease(t.id)
            assert conn_row(db) == (None, None), "released"
            other.take_lease(t.id)
            other.release_lease(t.id)
            held_by(f"{here}:{dead.pid}:1", 0)
            mine.take_lease(t.id)
            held_by(f"elsewhere:{alive.pid}:1", LEASE_TIMEOUT / 2)  # another host, heard from recently
            with pytest.raises(StoreError, match=f"pid {alive.pid} on elsewhere"):
                other.take_lease(t.id)
            held_by(f"elsewhere:{alive.pid}:1", LEASE_TIMEOUT + 1)  # silent too long
            other.take_lease(t.id)
        finally:
            alive.kill()
            alive.wait()
        from arena.store import FinishedGame

        record = FinishedGame(t.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, "now", [], b"{}")
        with pytest.raises(StoreError, match="taken over"):
            mine.save_game(record)  # the run that lost its lease stores nothing more
        assert mine.count_games() == 0
        other.save_game(record)
        assert mine.count_games() == 1


def conn_row(db: Path) -> tuple[Any, ...]:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT lease_owner, lease_beat FROM tournaments").fetchone()
    conn.close()
    return tuple(row)


def started(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


# --- item 5: a damaged database, a full disk ------------------------------------------------


def damage(db: Path) -> None:
    """Random bytes over every page but the first (the header and the schema)."""
    size = db.stat().st_size
    page = 4096
    rng = random.Random(12)
    with open(db, "r+b") as file:
        file.seek(page)
        file.write(rng.randbytes(size - page))


READ_COMMANDS = [
    ["leaderboard"],
    ["games"],
    ["replay", "1"],
    ["bot", "list"],
]


def test_a_damaged_database_is_one_line_for_every_command(league: Path, folders: Callable[[str], Path]) -> None:
    db = copy_league(league, folders("damaged"))
    damage(db)
    for command in [
        *READ_COMMANDS,
        ["tournament", "run", "--resume", "--name", "cup", "--sandbox", "local"],
        ["tournament", "run", *BOTS, "--sandbox", "local", "--name", "new"],
        ["bot", "add", BOTS[0]],
    ]:
        result = arena(*command, "--db", db)
        one_clean_line(result, str(db), "damaged", ".recover", "backup")


@pytest.fixture
def small_disk(folders: Callable[[str], Path]) -> Iterator[Path]:
    """A 4 MiB tmpfs of its own: a disk that fills up for real."""
    mount = folders("disk")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_full_disk_mid_tournament_keeps_the_games_and_resumes(small_disk: Path) -> None:
    db = small_disk / "full.db"
    for bot in BOTS:
        assert arena("bot", "add", bot, "--db", db).returncode == 0
    free = os.statvfs(small_disk)
    filler = small_disk / "filler"
    leave = 160 * 1024  # the tournament and a few games fit; 12 games do not
    filler.write_bytes(b"\0" * (free.f_bavail * free.f_frsize - leave))
    args: list[str | Path] = ["tournament", "run", "heuristic", "random", "lowest", "--table-size", "3", "--deals", "4", "--seed", "5",
            "--sandbox", "local", "--db", db, "--name", "full"]  # fmt: skip
    full = arena(*args)
    one_clean_line(full, str(db), "disk is full", "free", "--resume")
    assert "resume with" in full.stderr
    kept = games_stored(db)
    assert 1 <= kept < 12, "the games stored before the disk filled are kept"
    filler.unlink()
    resumed = arena("tournament", "run", "--resume", "--name", "full", "--db", db, "--sandbox", "local")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{12 - kept} games played" in resumed.stdout
    assert games_stored(db) == 12


# --- item 6: reading without write access ----------------------------------------------------


def read_everything(db: Path, user: int | None) -> None:
    for command in READ_COMMANDS:
        result = arena(*command, "--db", db, user=user)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
    board = arena("leaderboard", "--db", db, "--format", "json", user=user)
    assert len(json.loads(board.stdout)["nimmt/standard,end_score=30"]) == 3
    with serving(db, preexec_fn=None if user is None else as_user(user)) as url:
        boards = json.loads(urllib.request.urlopen(f"{url}/api/leaderboard", timeout=30).read())["boards"]
        assert boards and boards[0]["rows"], boards
        game = json.loads(urllib.request.urlopen(f"{url}/api/games/1/frames", timeout=30).read())
        assert game


def test_reading_as_a_user_who_may_not_write(league: Path, folders: Callable[[str], Path]) -> None:
    folder = folders("nowrite")
    db = copy_league(league, folder)
    os.chmod(db, 0o444)
    os.chmod(folder, 0o555)
    before = sorted(p.name for p in folder.iterdir())
    read_everything(db, NOBODY)
    refused = arena("tournament", "run", "--resume", "--name", "cup", "--db", db, "--sandbox", "local", user=NOBODY)
    one_clean_line(refused, str(db), "cannot write", "permission")
    assert sorted(p.name for p in folder.iterdir()) == before, "reading wrote nothing"


def test_reading_on_a_read_only_mount(league: Path, folders: Callable[[str], Path]) -> None:
    source, mount = folders("source"), folders("mount")
    copy_league(league, source)
    subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(mount)], check=True)
    try:
        db = mount / "league.db"
        read_everything(db, None)
        refused = arena("tournament", "run", "--resume", "--name", "cup", "--db", db, "--sandbox", "local")
        one_clean_line(refused, str(db), "cannot write", "read-only file system")
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_an_old_schema_is_not_migrated_by_readers(league: Path, folders: Callable[[str], Path]) -> None:
    db = copy_league(league, folders("oldschema"))
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    for command in READ_COMMANDS:
        one_clean_line(arena(*command, "--db", db), "schema version 1", "writing command")
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 1


# --- the node that played each game ---------------------------------------------------------


def games_on_nodes(db: Path) -> list[int]:
    """Two games stored in a real file: one with no node (as every game stored before the
    arena recorded nodes reads back), then one played on node ``w1``. Their ids."""
    import msgspec

    from arena.store import FinishedGame, SeatResult

    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("random", "lowest")]
        t = store.create_tournament("nodes", "nimmt", "standard", {}, 1, {})
        seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(bots, 1)]
        game = FinishedGame(t.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", seats, b"{}")
        return [store.save_game(game), store.save_game(msgspec.structs.replace(game, game_no=1, node="w1"))]


def test_each_game_reads_back_the_node_that_played_it(tmp_path: Path) -> None:
    db = tmp_path / "nodes.db"
    old, played = games_on_nodes(db)
    with Store(db, read_only=True) as store:
        assert [g.node for g in store.find_games()] == ["", "w1"]
        assert [g.node for g in store.find_games(newest_first=True)] == ["w1", ""]
        one, other = store.game(played), store.game(old)
        assert one is not None and other is not None
        assert (one.node, other.node) == ("w1", "")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, node FROM games ORDER BY id").fetchall() == [(old, ""), (played, "w1")]
    conn.close()


def games_on_workers(db: Path) -> None:
    """Tournament ``cluster`` in a real file, played on workers w1 (4 slots) and w3 (2
    slots, no game yet): w1 stored a game just now and one an hour ago, w2 (not a recorded
    worker) one an hour ago, and one game has no node. Tournament ``alone``, finished: one
    game, no node."""
    import datetime as dt

    import msgspec

    from arena.store import FinishedGame, SeatResult

    def at(seconds_ago: float) -> str:
        return (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds_ago)).isoformat(timespec="seconds")

    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("random", "lowest")]
        seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(bots, 1)]
        t = store.create_tournament("cluster", "nimmt", "standard", {}, 1, {})
        store.set_workers(t.id, [("w3", 2), ("w1", 4)])
        game = FinishedGame(t.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, at(3600), seats, b"{}")
        for number, (node, seconds_ago) in enumerate([("w1", 5), ("w1", 3600), ("w2", 3600), ("", 5)]):
            store.save_game(msgspec.structs.replace(game, game_no=number, node=node, started=at(seconds_ago)))
        alone = store.create_tournament("alone", "nimmt", "standard", {}, 1, {})
        store.save_game(msgspec.structs.replace(game, tournament_id=alone.id))
        store.set_status(alone.id, "finished")


def test_the_workers_of_a_tournament_and_their_games(tmp_path: Path) -> None:
    from arena.store import NodeActivity

    db = tmp_path / "workers.db"
    games_on_workers(db)
    with Store(db, read_only=True) as store:
        cluster, alone = store.get_tournament("cluster"), store.get_tournament("alone")
        assert cluster is not None and alone is not None
        assert store.node_activity(cluster.id) == [
            NodeActivity("w1", 4, 2, 1 / 60),  # only the game of a moment ago is recent
            NodeActivity("w2", None, 1, 0.0),  # not a recorded worker: its slots unknown
            NodeActivity("w3", 2, 0, 0.0),  # a worker without games yet
        ]
        assert [n.recent_per_s for n in store.node_activity(cluster.id, window_s=7200)] == [2 / 7200, 1 / 7200, 0.0]
        assert store.node_activity(alone.id) == [], "one machine before nodes were recorded: nothing to show"
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT name, workers FROM tournaments ORDER BY id").fetchall()
    conn.close()
    assert [(name, json.loads(workers)) for name, workers in stored] == [
        ("cluster", [{"name": "w3", "slots": 2}, {"name": "w1", "slots": 4}]),
        ("alone", []),
    ]


def test_boards_are_listed_and_games_counted_by_one_query(tmp_path: Path) -> None:
    """``played_boards``, ``board_counts`` and ``newest_of_boards`` read one query, ``count_games`` is
    ``count_games_of``: each answer agrees with the others, for every tournament and for all."""
    from arena.store import FinishedGame, GameFilter, SeatResult

    with Store(tmp_path / "kinds.db") as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("random", "lowest")]
        seats = [SeatResult(bot.id, rank, rank, "ok", {}) for rank, bot in enumerate(bots, 1)]
        ids: dict[tuple[str, str, str], list[int]] = {}
        for name, variant, games in (
            ("first", "standard", 3),
            ("second", "standard,rounds=1", 2),
            ("third", "standard", 1),
        ):
            t = store.create_tournament(
                name, "nimmt", "standard", {} if variant == "standard" else {"rounds": 1}, 1, {}
            )
            for number in range(games):
                game = FinishedGame(t.id, 0, number, 0, 1, "nimmt", t.variant, 1, 1.0, "2026-01-01", seats, b"{}")
                ids.setdefault((name, "nimmt", t.variant), []).append(store.save_game(game))
        every = store.newest_of_boards()
        assert every == [("nimmt", "standard", ids["third", "nimmt", "standard"][-1], 4),
                         ("nimmt", "standard,rounds=1", ids["second", "nimmt", "standard,rounds=1"][-1], 2)]  # fmt: skip
        assert store.board_counts() == [(g, v, n) for g, v, _, n in every]
        assert store.played_boards() == [(g, v) for g, v, _, _ in every]
        assert store.played_boards("second") == [("nimmt", "standard,rounds=1")] and store.played_boards("nobody") == []
        first_new = ids["second", "nimmt", "standard,rounds=1"][0]
        assert store.newest_of_boards(after=first_new) == [
            ("nimmt", "standard", ids["third", "nimmt", "standard"][-1], 1),
            ("nimmt", "standard,rounds=1", first_new + 1, 1),
        ], "only the games since"
        assert store.count_games() == 6 == store.count_games_of()
        for t in store.list_tournaments():
            assert store.count_games(t.id) == store.count_games_of(where=GameFilter(tournament_id=t.id))
            assert store.get_tournament(t.name) == t
        assert [store.count_games(t.id) for t in store.list_tournaments()] == [3, 2, 1]
