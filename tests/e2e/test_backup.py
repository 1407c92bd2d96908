"""Backing up a league: real `arena` processes writing a real SQLite file.

After a writer has finished the file alone holds every game (a plain copy is whole);
`arena backup` is consistent while a tournament writes; `arena check` finds what is
wrong; a backup, restored, is the league again."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import SAMPLES

ARENA = str(Path(sys.executable).parent / "arena")
RANDOM, LOWEST, HEURISTIC = (str(SAMPLES / n) for n in ("random", "lowest", "heuristic"))


def arena(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def rows(db: Path, query: str) -> list[tuple[object, ...]]:
    """Read ``db`` as a plain copy is read: the file alone, without its -wal."""
    connection = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    try:
        return connection.execute(query).fetchall()
    finally:
        connection.close()


def test_after_the_demo_a_plain_copy_holds_every_game_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    demo = arena("demo", "--sandbox", "local", "--deals", "1", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena-bots", "arena.db"], "no -wal, no -shm"
    shutil.copy(tmp_path / "arena.db", tmp_path / "copy.db")
    assert rows(tmp_path / "copy.db", "SELECT count(*) FROM games") == [(3,)]
    assert rows(tmp_path / "copy.db", "SELECT count(*) FROM game_seats") == [(9,)]
    # A reader after it (the leaderboard) leaves nothing either.
    assert arena("leaderboard", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena-bots", "arena.db", "copy.db"]


def wait_for(condition: object, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("waited in vain")


def stored_games(db: Path, tournament: str) -> int:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        query = "SELECT count(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id WHERE t.name = ?"
        return int(connection.execute(query, (tournament,)).fetchone()[0])
    finally:
        connection.close()


def test_a_backup_taken_while_a_tournament_writes_is_consistent_and_restores(tmp_path: Path) -> None:
    league = tmp_path / "league"
    league.mkdir()
    db = league / "arena.db"
    old = arena(
        "tournament", "run", RANDOM, LOWEST, "--deals", "1", "--name", "old", "--db", str(db), "--sandbox", "local"
    )
    assert old.returncode == 0, old.stderr
    running = subprocess.Popen(
        [ARENA, "tournament", "run", RANDOM, LOWEST, HEURISTIC, "--deals", "400", "--name", "big"]
        + ["--db", str(db), "--sandbox", "local"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: stored_games(db, "big") >= 5)
        deleted = arena("tournament", "delete", "old", "--yes", "--db", str(db))
        assert deleted.returncode == 0, deleted.stderr
        backup = tmp_path / "safe" / "backup.db"
        backup.parent.mkdir()
        made = arena("backup", str(backup), "--db", str(db))
        assert made.returncode == 0, made.stderr
        assert running.poll() is None, "the tournament was still writing when the backup was made"
        wait_for(lambda: stored_games(db, "big") > stored_games(backup, "big"))
    finally:
        running.send_signal(signal.SIGINT)
        running.communicate(timeout=60)
    assert not Path(f"{backup}-wal").exists() and not Path(f"{backup}-shm").exists()
    # Only complete data: every game with all its seats, no tournament that was deleted.
    assert rows(backup, "SELECT name FROM tournaments") == [("big",)]
    assert rows(backup, "SELECT count(*) FROM games g WHERE (SELECT count(*) FROM game_seats s WHERE s.game_id = g.id)"
                " != g.players") == [(0,)]  # fmt: skip
    games = rows(backup, "SELECT count(*) FROM games")[0][0]
    assert isinstance(games, int) and games >= 5
    assert f"{games} games" in made.stdout
    checked = arena("check", "--db", str(backup))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "FAIL" not in checked.stdout and "sound" in checked.stdout
    # Restored (the file and its folder, moved where the league was), it is the league.
    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy(backup, restored / "arena.db")
    shutil.copytree(tmp_path / "safe" / "backup-bots", restored / "arena-bots", symlinks=True)
    shown = arena("tournament", "show", "big", "--db", str(restored / "arena.db"))
    assert shown.returncode == 0, shown.stderr
    assert f"{games} of" in shown.stdout or f"games: {games}" in shown.stdout, shown.stdout
    game_id = str(rows(backup, "SELECT max(id) FROM games")[0][0])
    replayed = arena("replay", game_id, "--db", str(restored / "arena.db"))
    assert replayed.returncode == 0, replayed.stderr


def test_a_backup_never_overwrites_and_names_a_missing_database(tmp_path: Path) -> None:
    missing = arena("backup", str(tmp_path / "b.db"), "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no such database" in missing.stderr and "Traceback" not in missing.stderr
    (tmp_path / "b.db").write_text("precious")
    db = tmp_path / "arena.db"
    assert arena("bot", "add", RANDOM, "--db", str(db)).returncode == 0
    refused = arena("backup", str(tmp_path / "b.db"), "--db", str(db))
    assert refused.returncode == 2 and "never overwrites" in refused.stderr
    assert (tmp_path / "b.db").read_text() == "precious"
    for nowhere in ("/proc/backup.db", str(tmp_path / "no" / "such" / "backup.db")):
        failed = arena("backup", nowhere, "--db", str(db))
        assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1 and nowhere in failed.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena-bots", "arena.db", "b.db"], "no partial copy left"


def test_check_names_each_problem_and_exits_non_zero(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    assert (
        arena("tournament", "run", RANDOM, LOWEST, "--deals", "1", "--db", str(db), "--sandbox", "local").returncode
        == 0
    )
    assert arena("check", "--db", str(db)).returncode == 0
    with sqlite3.connect(db) as connection:  # foreign keys are off in a plain connection
        connection.execute("INSERT INTO game_seats VALUES (99999, 0, 1, 1, 0, 'ok', 0, 0, 0, 0)")
    orphan = arena("check", "--db", str(db))
    assert orphan.returncode == 1 and "FAIL foreign keys" in orphan.stdout and "game_seats -> games" in orphan.stdout
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM game_seats WHERE game_id = 99999")
        connection.execute("PRAGMA user_version = 3")
    old = arena("check", "--db", str(db))
    assert old.returncode == 1 and "FAIL schema" in old.stdout and "Traceback" not in old.stdout + old.stderr
    with sqlite3.connect(db) as connection:
        connection.execute(f"PRAGMA user_version = {len(__import__('arena.store').store.MIGRATIONS)}")
    snapshot = next((tmp_path / "arena-bots").iterdir())
    os.chmod(snapshot, 0o755)
    (snapshot / "bot.toml").chmod(0o644)
    with open(snapshot / "bot.toml", "a") as manifest:
        manifest.write("# changed\n")
    changed = arena("check", "--db", str(db))
    assert changed.returncode == 1 and "FAIL snapshots" in changed.stdout and "holds other code" in changed.stdout
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database\n" * 100)
    bad = arena("check", "--db", str(garbage))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_once_serve_has_stopped_the_file_alone_holds_what_it_wrote(tmp_path: Path) -> None:
    """`arena serve --submissions` writes (authors' submissions); stopped with SIGTERM, as a
    service manager stops it, it leaves every submission in the file itself."""
    from ..conftest import serving
    from .test_web_submissions import bot_folder

    db = tmp_path / "arena.db"
    token = arena("author", "add", "ada", "--db", str(db)).stdout.strip().splitlines()[-1]
    with serving(db, extra=("--submissions",)) as url:
        for version in ("1.0", "1.1"):
            folder = bot_folder(tmp_path / version, "adabot", version)
            sent = subprocess.run(
                [ARENA, "submit", str(folder), "--server", url],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "ARENA_TOKEN": token},
            )
            assert sent.returncode == 0, sent.stderr
    assert rows(db, "SELECT name, version FROM submissions ORDER BY id") == [("adabot", "1.0"), ("adabot", "1.1")]
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
