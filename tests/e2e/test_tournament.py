"""Schedules, the store, and tournaments with real bots: run, kill -9, resume, rate."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from arena.play import replay
from arena.store import SCHEMA_VERSION, Store, StoreError
from arena.tournaments.schedule import MAX_GROUPS, groups, round_robin

from ..conftest import SAMPLES, MakeBot, bot_pids

ARENA = str(Path(sys.executable).parent / "arena")


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout)


# --- schedule ---------------------------------------------------------------------------


def test_every_bot_holds_every_hand_of_every_deal() -> None:
    for match in round_robin(5, 3, 2, seed=1):
        by_deal: dict[int, list[list[int]]] = {}
        for game, deal in zip(match.games, match.deals, strict=True):
            by_deal.setdefault(deal, []).append(game.seats)
        for deal, seatings in by_deal.items():
            assert len(seatings) == 3
            seeds = {g.seed for g, d in zip(match.games, match.deals, strict=True) if d == deal}
            assert len(seeds) == 1, "one deal, one seed"
            for bot in range(3):
                assert sorted(s.index(bot) for s in seatings) == [0, 1, 2], "each hand once"


def test_small_fields_play_every_combination() -> None:
    assert len(round_robin(5, 3, 1, seed=0)) == 10
    assert [m.bots for m in round_robin(3, 3, 1, seed=0)] == [[0, 1, 2]]


def test_large_fields_get_balanced_groups() -> None:
    chosen = groups(30, 4, seed=3)
    assert len(chosen) == MAX_GROUPS
    counts = Counter(b for g in chosen for b in g)
    assert max(counts.values()) - min(counts.values()) <= 1, "every bot sits about equally often"
    assert all(len(set(g)) == 4 for g in chosen)


def test_schedule_derives_from_the_seed() -> None:
    assert round_robin(4, 2, 3, seed=5) == round_robin(4, 2, 3, seed=5)
    assert round_robin(4, 2, 3, seed=5) != round_robin(4, 2, 3, seed=6)


# --- store ------------------------------------------------------------------------------


def test_a_new_database_gets_the_current_schema(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with Store(tmp_path / "a.db") as store:  # opening again migrates nothing
        assert store.list_bots() == []


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "new.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer than this arena"):
        Store(tmp_path / "new.db")


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_text("hello")
    with pytest.raises(StoreError, match="not an arena database"):
        Store(tmp_path / "junk.db")


def test_bot_snapshots_are_immutable_and_versioned(tmp_path: Path, make_bot: MakeBot) -> None:
    folder = make_bot("snap", "print('v1')\n")
    with Store(tmp_path / "a.db") as store:
        first = store.add_bot(folder)
        assert store.add_bot(folder) == first, "the same code again is a no-op"
        snapshot = Path(first.path)
        assert (snapshot / "bot.py").read_text() == "print('v1')\n"
        assert not os.access(snapshot / "bot.py", os.W_OK) or os.geteuid() == 0
        assert (snapshot / "bot.py").stat().st_mode & 0o222 == 0, "no write bits"
        (folder / "bot.py").write_text("print('v2')\n")
        with pytest.raises(StoreError, match="already stored with other code"):
            store.add_bot(folder)
        manifest = (folder / "bot.toml").read_text().replace('version = "0.1"', 'version = "0.2"')
        (folder / "bot.toml").write_text(manifest)
        second = store.add_bot(folder)
        assert second.version == "0.2" and second.hash != first.hash
        assert store.get_bot("snap") == second, "a bare name is the latest version"
        assert store.get_bot("snap:0.1") == first
        with pytest.raises(StoreError, match="no bot 'snap:9'"):
            store.get_bot("snap:9")


# --- tournaments with real bots -----------------------------------------------------------


def lowest_bot(make_bot: MakeBot) -> Path:
    code = "from protocol.bot import Bot, run\nclass Low(Bot):\n    def decide(self, kind, view, legal):\n        return min(legal)\nrun(Low())\n"
    return make_bot("lowest", code)


def story(db: Path) -> list[tuple[object, ...]]:
    """Every stored game's place, deal, seating and result: what must not depend on a kill."""
    with Store(db) as store:
        rows = store.db.execute(
            """SELECT g.match_no, g.game_no, g.seed, group_concat(b.name, ','), group_concat(s.score, ','),
                      group_concat(s.rank, ',')
               FROM games g JOIN (SELECT * FROM game_seats ORDER BY game_id, seat) s ON s.game_id = g.id
               JOIN bots b ON b.id = s.bot_id GROUP BY g.id ORDER BY g.match_no, g.game_no"""
        ).fetchall()
    return [tuple(r) for r in rows]


TOURNAMENT = ["--table-size", "3", "--deals", "2", "--seed", "11", "--sandbox", "local", "--set", "end_score=30"]


def test_tournament_stores_every_game_and_rates(tmp_path: Path, make_bot: MakeBot) -> None:
    db = tmp_path / "t.db"
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random"), str(lowest_bot(make_bot))]
    result = arena("tournament", "run", *bots, *TOURNAMENT, "--db", str(db), "--name", "cup")
    assert result.returncode == 0, result.stderr
    assert "Leaderboard: cup" in result.stdout
    with Store(db) as store:
        tournament = store.get_tournament("cup")
        assert tournament is not None and tournament.status == "finished"
        assert store.count_games(tournament.id) == 6, "1 table x 2 deals x 3 rotations"
        for row in store.find_games(tournament.id):
            lines = replay.loads(store.replay(row.id))
            assert list(replay.verify(lines)), "every stored replay re-simulates"
    board = arena("leaderboard", "--db", str(db), "--format", "json")
    rows = json.loads(board.stdout)["nimmt/standard,end_score=30"]  # the board of its rules
    assert {r["bot"] for r in rows} == {"heuristic:1.0.0", "random:1.0.0", "lowest:0.1"}
    assert all(r["games"] == 6 for r in rows)
    assert all(r["low"] <= r["elo"] <= r["high"] for r in rows)
    csv_out = arena("leaderboard", "--db", str(db), "--format", "csv").stdout.splitlines()
    assert csv_out[0].startswith("game,rank,bot,elo,low,high,games,wins")
    assert csv_out[1].startswith('"nimmt/standard,end_score=30",1,')
    assert len(csv_out) == 4
    listed = arena("games", "--db", str(db), "--tournament", "cup")
    assert listed.returncode == 0 and listed.stdout.count("cup") >= 6
    shown = arena("replay", "1", "--db", str(db))
    assert shown.returncode == 0 and "Final standings" in shown.stdout
    los = arena("leaderboard", "--db", str(db), "--los")
    assert "Likelihood of superiority" in los.stdout


def processes_of(folders: list[str]) -> list[int]:
    """Live processes of these bots (local bots run in prepared copies of their folders)."""
    return [pid for folder in folders for pid in bot_pids(Path(folder))]


def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path: Path, make_bot: MakeBot) -> None:
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random"), str(lowest_bot(make_bot))]
    settings = ["--table-size", "2", "--deals", "8", "--seed", "4", "--sandbox", "local", "--concurrency", "2"]
    whole = tmp_path / "whole.db"
    assert arena("tournament", "run", *bots, *settings, "--db", str(whole), "--name", "t").returncode == 0

    cut = tmp_path / "cut.db"
    proc = subprocess.Popen(
        [ARENA, "tournament", "run", *bots, *settings, "--db", str(cut), "--name", "t"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and stored < 3:
        time.sleep(0.02)
        try:  # a bare reader: never waits on the arena's writes, nor migrates anything
            with sqlite3.connect(f"file:{cut}?mode=ro", uri=True, timeout=0.05) as db:
                stored = db.execute("SELECT count(*) FROM games").fetchone()[0]
        except sqlite3.Error:
            pass
    assert processes_of(bots), "bots were running"
    os.killpg(proc.pid, signal.SIGKILL)  # the arena, not its bots (their own sessions)
    proc.wait()
    deadline = time.monotonic() + 120  # only a guard against a hang
    while processes_of(bots) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes_of(bots), "the reaper ended the bots, frozen ones too"
    with Store(cut) as store:
        after_kill = store.count_games()
    assert 3 <= after_kill < 48, "killed part way"

    again = arena("tournament", "run", "--resume", "--name", "t", "--db", str(cut), "--sandbox", "local")
    assert again.returncode == 0, again.stderr
    assert f"{48 - after_kill} games played" in again.stdout
    assert story(cut) == story(whole), "same games and results as the uninterrupted run"


def test_tournament_bad_input(tmp_path: Path, make_bot: MakeBot) -> None:
    db = str(tmp_path / "t.db")
    cases = [
        (["tournament", "run", str(SAMPLES / "random"), "nosuchbot", "--db", db], "no bot 'nosuchbot'"),
        (["tournament", "run", str(SAMPLES / "random"), "--db", db], "at least 2 bots"),
        (["tournament", "run", "--resume", "--db", db], "--resume needs the --name"),
        (["tournament", "run", "--resume", "--name", "nope", "--db", db], "no tournament 'nope'"),
        (
            ["tournament", "run", str(SAMPLES / "random"), str(SAMPLES / "heuristic"), "--table-size", "3", "--db", db],
            "more than the 2 bots",
        ),
        (["leaderboard", "--db", str(tmp_path / "missing.db")], "no such database"),
        (["leaderboard", "--db", db, "--format", "xml"], "--format 'xml'"),
        (["replay", "999", "--db", db], "no game 999"),
        (
            ["tournament", "run", str(SAMPLES / "random"), str(SAMPLES / "heuristic"), "--deals", "0", "--db", db],
            "--deals",
        ),
    ]
    Store(db).close()
    for args, needle in cases:
        result = arena(*args)
        output = result.stdout + result.stderr
        assert result.returncode != 0, args
        assert needle in output, (args, output)
        assert "Traceback" not in output, output


def test_bot_add_and_list(tmp_path: Path, make_bot: MakeBot) -> None:
    db = str(tmp_path / "b.db")
    folder = make_bot("adder", "")
    assert "stored adder:0.1" in arena("bot", "add", str(folder), "--db", db).stdout
    (folder / "bot.py").write_text("# changed\n")
    refused = arena("bot", "add", str(folder), "--db", db)
    assert refused.returncode != 0 and "raise `version`" in refused.stderr
    assert "adder" in arena("bot", "list", "--db", db).stdout
    shutil.rmtree(folder)


def test_a_bot_that_does_not_list_the_game_is_not_seated(tmp_path: Path, make_bot: MakeBot) -> None:
    other = make_bot("otherbot", "", games='["sixes"]')
    for args in (
        ["play", str(other), str(SAMPLES / "random"), "--sandbox", "local", "--game", "nimmt"],
        [
            "tournament",
            "run",
            str(other),
            str(SAMPLES / "random"),
            "--db",
            str(tmp_path / "x.db"),
            "--sandbox",
            "local",
            "--game",
            "nimmt",
        ],
    ):
        result = arena(*args)
        assert result.returncode != 0
        assert "otherbot does not play nimmt (its bot.toml lists sixes)" in result.stderr
        assert "Traceback" not in result.stderr
    for args in (
        ["play", str(other), str(SAMPLES / "random")],
        ["tournament", "run", str(other), str(SAMPLES / "random")],
    ):
        result = arena(*args, "--sandbox", "local", "--db", str(tmp_path / "x.db"))
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "the bots have no game in common: otherbot plays sixes; random plays nimmt" in result.stderr


def bots_and_snapshots(db: Path) -> tuple[list[tuple[object, ...]], list[str]]:
    """The bot rows of ``db`` (read from the file) and the snapshot folders beside it."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT name, version, hash FROM bots ORDER BY id").fetchall()
    folder = db.with_name(f"{db.stem}-bots")
    return rows, sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_refused_tournament_stores_no_bot(tmp_path: Path, make_bot: MakeBot) -> None:
    """Whatever refuses the bots' game (one that does not play --game, none in common),
    it refuses before any bot is stored: no row, no snapshot, in a database that holds
    bots already, and no file at all where there was none."""
    db = tmp_path / "league.db"
    assert arena("bot", "add", str(SAMPLES / "heuristic"), "--db", str(db)).returncode == 0
    before = bots_and_snapshots(db)
    assert len(before[0]) == 1 and len(before[1]) == 1
    other = make_bot("otherbot", "", games='["sixes"]')
    refused = [
        [str(SAMPLES / "random"), str(other), "--game", "nimmt"],  # the first bot plays it: not stored either
        [str(SAMPLES / "random"), str(other)],
        [str(SAMPLES / "random"), "heuristic", str(SAMPLES / "sixes-random")],
        [str(SAMPLES / "random"), "heuristic", "--game", "sixes"],
    ]
    for args in refused:
        result = arena("tournament", "run", *args, "--db", str(db), "--sandbox", "local")
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "does not play" in result.stderr or "no game in common" in result.stderr, result.stderr
        assert bots_and_snapshots(db) == before, args
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            assert connection.execute("SELECT count(*) FROM tournaments").fetchone() == (0,)
    fresh = tmp_path / "fresh.db"
    result = arena("tournament", "run", str(SAMPLES / "random"), str(other), "--db", str(fresh))
    assert result.returncode == 2 and "no game in common" in result.stderr
    assert not fresh.exists() and not fresh.with_name("fresh-bots").exists()


def test_the_game_is_the_one_every_bot_plays_first_in_the_registrys_order(tmp_path: Path, make_bot: MakeBot) -> None:
    """Bots that list two games play the first the arena knows (not the first their
    bot.toml lists), said in a note; the header names the game by its title."""
    random_bot = (SAMPLES / "random" / "bot.py").read_text()
    both = [make_bot(name, random_bot, games='["sixes", "nimmt"]') for name in ("both-a", "both-b")]
    db = tmp_path / "both.db"
    ran = arena("tournament", "run", *map(str, both), "--deals", "1", "--set", "rounds=1", "--sandbox", "local",
                "--db", str(db), "--name", "both")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "note: the bots all play nimmt, sixes: playing nimmt (--game chooses another)" in ran.stderr
    assert "tournament both · 6 nimmt! · 2 bots" in ran.stdout, ran.stdout
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT game FROM tournaments").fetchall() == [("nimmt",)]


def test_a_tournament_of_an_outside_game_needs_no_game_option(tmp_path: Path) -> None:
    """Liar's dice, registered only through ARENA_GAMES: its bots play it without --game,
    and the header names it by its title."""
    from ..games.liars_dice.helpers import arena as liars_arena
    from ..games.liars_dice.helpers import liars_bots

    bots = liars_bots(Path(tempfile.mkdtemp(prefix="arena-test-liars-")))
    db = tmp_path / "liars.db"
    try:
        ran = liars_arena("tournament", "run", *map(str, bots), "--deals", "1", "--sandbox", "local",
                          "--db", str(db), "--name", "dice")  # fmt: skip
    finally:
        shutil.rmtree(bots[0].parent, ignore_errors=True)
    assert ran.returncode == 0, ran.stderr
    assert "tournament dice · Liar's dice · 2 bots, tables of 2" in ran.stdout, ran.stdout
    assert "note:" not in ran.stderr
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT game FROM tournaments").fetchall() == [("liars-dice",)]
        assert connection.execute("SELECT count(*) FROM games").fetchone() == (2,)


def test_settings_from_a_file_and_bad_settings(tmp_path: Path) -> None:
    good = tmp_path / "short.toml"
    good.write_text("end_score = 20\n")
    played = arena(
        "play",
        str(SAMPLES / "random"),
        str(SAMPLES / "lowest"),
        "--settings",
        str(good),
        "--sandbox",
        "local",
        "--seed",
        "1",
    )
    assert played.returncode == 0, played.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("end_score = = 3\n")
    for args, needle in (
        (["--settings", str(bad)], "bad.toml: not valid TOML"),
        (["--settings", str(tmp_path / "none.toml")], "none.toml: cannot read"),
        (["--variant", "chess"], "variant"),
    ):
        result = arena("play", str(SAMPLES / "random"), str(SAMPLES / "lowest"), "--sandbox", "local", *args)
        assert result.returncode != 0 and needle in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_fair_time_can_be_turned_off_and_is_shown(tmp_path: Path) -> None:
    """`--no-fair-time`, an option of every command that plays: stored with the
    tournament, and said by `tournament show`."""
    db = tmp_path / "t.db"
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random")]
    common = ["--deals", "1", "--set", "rounds=1", "--sandbox", "local", "--db", str(db)]
    assert arena("tournament", "run", *bots, *common, "--name", "free", "--no-fair-time").returncode == 0
    assert arena("tournament", "run", *bots, *common, "--name", "fair").returncode == 0
    assert "fair time off" in arena("tournament", "show", "free", "--db", str(db)).stdout
    assert "fair time on" in arena("tournament", "show", "fair", "--db", str(db)).stdout
    shown = json.loads(arena("tournament", "show", "free", "--db", str(db), "--format", "json").stdout)
    assert shown["config"]["fair_time"] is False
    played = arena("play", *bots, "--set", "rounds=1", "--sandbox", "local", "--no-fair-time")
    assert played.returncode == 0, played.stderr
