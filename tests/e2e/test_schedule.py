"""The schedule of a large field (more than 64 tables, chosen greedily with ties broken
by the seed): the same in every Python, and what a resume checks its stored games
against, with real bots over a real database."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec

from arena.store import Store
from arena.tournaments.schedule import MAX_GROUPS, Match, conflicts, groups, grown_groups, round_robin

from ..conftest import MakeBot, one_clean_line
from .test_tournament import arena, lowest_bot, story

SCHEDULE = "from arena.tournaments.schedule import round_robin; import msgspec, sys; sys.stdout.buffer.write(msgspec.json.encode(round_robin(30, 4, 2, seed=9)))"


def fingerprint(matches: list[Match]) -> str:
    return hashlib.sha256(msgspec.json.encode(matches)).hexdigest()[:16]


def test_a_large_schedule_is_the_same_in_every_python() -> None:
    """Pinned tables and a pinned hash of the whole schedule: ``random.Random`` could
    change them with a Python upgrade (and then a resume would mix two schedules);
    SHAKE-256 cannot. Another process, with another hash seed, makes the same."""
    assert groups(12, 2, seed=0)[:4] == [[1, 8], [0, 10], [2, 4], [6, 7]]
    assert groups(30, 4, seed=3)[:3] == [[5, 9, 24, 28], [6, 16, 20, 29], [3, 7, 18, 26]]
    assert grown_groups([20, 22], 4, seed=3)[MAX_GROUPS:][:2] == [[15, 19, 20, 21], [13, 17, 20, 21]]
    schedule = round_robin(30, 4, 2, seed=9)
    assert len(schedule) == MAX_GROUPS
    assert fingerprint(schedule) == "a5ad34b89510da21"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", SCHEDULE], capture_output=True, env=env, check=True).stdout
    assert msgspec.json.decode(other, type=list[Match]) == schedule
    assert fingerprint(round_robin(30, 4, 2, seed=10)) != fingerprint(schedule), "the seed matters"


def test_conflicts_are_the_stored_games_a_schedule_would_not_play_so() -> None:
    schedule = round_robin(12, 2, 1, seed=0)  # 64 tables of 66 pairs
    first, other = schedule[0], schedule[5]
    a, b = first.bots
    played = {(0, 0): (first.games[0].seed, [a, b]), (0, 1): (first.games[1].seed, [b, a])}
    assert conflicts(schedule, played) == []
    assert conflicts(schedule, {**played, (0, 1): (first.games[1].seed, [a, b])}) == [(0, 1)], "seats swapped"
    assert conflicts(schedule, {(5, 0): (other.games[0].seed + 1, other.bots)}) == [(5, 0)], "another deal"
    assert conflicts(schedule, {(0, 2): (1, [a, b])}) == [(0, 2)], "no such game"
    assert conflicts(schedule[1:], played) == [], "matches outside the given ones are not looked at"


def test_a_large_tournament_resumes_on_its_own_schedule_and_refuses_another(tmp_path: Path, make_bot: MakeBot) -> None:
    """12 bots in pairs: 66 pairs, so 64 tables chosen by the seed. The run stores the
    schedule's games; with games taken out it resumes into exactly the uninterrupted
    run; with games seated by another schedule it refuses in one line."""
    code = lowest_bot(make_bot).joinpath("bot.py").read_text()
    bots = [str(make_bot(f"low{i}", code)) for i in range(12)]
    args = ["--table-size", "2", "--deals", "1", "--seed", "0", "--set", "rounds=1", "--sandbox", "local"]
    whole = tmp_path / "whole"
    whole.mkdir()
    run = arena("tournament", "run", *bots, *args, "--concurrency", "2", "--db", str(whole / "a.db"), "--name", "big")
    assert run.returncode == 0, run.stderr
    schedule = round_robin(12, 2, 1, seed=0)
    assert len(schedule) == MAX_GROUPS
    expected = [
        (m.match_no, number, game.seed, ",".join(f"low{m.bots[i]}" for i in game.seats))
        for m in schedule
        for number, game in enumerate(m.games)
    ]
    assert [row[:4] for row in story(whole / "a.db")] == expected, "the games of the seed's schedule"

    cut = tmp_path / "cut"
    shutil.copytree(whole, cut)
    with sqlite3.connect(cut / "a.db") as db:
        missing = "SELECT id FROM games WHERE match_no >= 40 OR (match_no = 7 AND game_no = 1)"
        db.execute(f"DELETE FROM game_seats WHERE game_id IN ({missing})")
        db.execute(f"DELETE FROM games WHERE id IN ({missing})")
        db.execute("UPDATE tournaments SET status = 'interrupted'")
    again = arena("tournament", "run", "--resume", "--name", "big", "--db", str(cut / "a.db"), "--sandbox", "local")
    assert again.returncode == 0, again.stderr
    assert "49 games played" in again.stdout
    assert story(cut / "a.db") == story(whole / "a.db"), "the same games, seats and results"

    # Started by an arena that drew its tables with random.Random: on this seed its
    # first table was bots 0 and 1, where today's schedule seats bots 1 and 8.
    old = tmp_path / "old"
    shutil.copytree(whole, old)
    with Store(old / "a.db") as store:
        ids = [store.get_bot(f"low{i}:0.1").id for i in range(12)]
    with sqlite3.connect(old / "a.db") as db:
        for game_no, seats in ((0, (0, 1)), (1, (1, 0))):
            (game_id,) = db.execute("SELECT id FROM games WHERE match_no = 0 AND game_no = ?", (game_no,)).fetchone()
            seat_bots = [ids[b] for b in seats]
            db.execute("UPDATE games SET seat_bots = ? WHERE id = ?", (",".join(map(str, seat_bots)), game_id))
            for seat, bot_id in enumerate(seat_bots):
                db.execute("UPDATE game_seats SET bot_id = ? WHERE game_id = ? AND seat = ?", (bot_id, game_id, seat))
        db.execute("DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE match_no >= 60)")
        db.execute("DELETE FROM games WHERE match_no >= 60")
        db.execute("UPDATE tournaments SET status = 'interrupted'")
    with sqlite3.connect(old / "a.db") as db:
        before = list(db.iterdump())
    resume = ["tournament", "run", "--resume", "--name", "big", "--db", str(old / "a.db"), "--sandbox", "local"]
    refused = arena(*resume)
    one_clean_line(refused, "'big' was scheduled otherwise", "2 of its stored games", "game 0 of match 0")
    assert "resume with" not in refused.stderr, "a resume that cannot work is not offered"
    grown = arena(*resume, "--add", str(make_bot("late", code)))
    one_clean_line(grown, "'big' was scheduled otherwise")
    with sqlite3.connect(old / "a.db") as db:
        assert list(db.iterdump()) == before, "a refused resume, with --add too, writes nothing"
    with Store(old / "a.db") as store:
        assert store.count_games() == 120, "nothing played on the other schedule"
