"""Tournament housekeeping and growing a league, through the real ``arena`` command on
real SQLite files with real bots in the local sandbox: ``tournament list|show|delete``,
``bot remove``, ``--startup-time``, ``games --newest``, and ``tournament run --resume
--add BOT``, which plays only the tables of the added bots, under the same deal seeds."""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import itertools
import json
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store
from arena.tournaments.schedule import MAX_GROUPS, deal_seed, groups, grown_groups, round_robin

from ..conftest import SAMPLES, MakeBot
from ..conftest import one_clean_line as clean_line

one_clean_line = functools.partial(clean_line, code=2)
"""Every refusal here is a user error: exit 2."""

ARENA = str(Path(sys.executable).parent / "arena")
FAST = ["--deals", "1", "--set", "rounds=1", "--sandbox", "local"]
RANDOM, LOWEST, HEURISTIC = (str(SAMPLES / name) for name in ("random", "lowest", "heuristic"))


def arena(*args: str | Path, columns: int | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI; its tables at their natural width (into a pipe), or fitted to ``columns``."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([ARENA, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)


def ok(*args: str | Path) -> str:
    result = arena(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def read(db: Path, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return conn.execute(query, args).fetchall()


def counts(db: Path) -> dict[str, int]:
    return {
        table: read(db, f"SELECT count(*) FROM {table}")[0][0]
        for table in ("games", "game_seats", "bots", "tournaments")
    }


def contents(db: Path) -> str:
    """Everything the file holds, to show a refusal changed nothing: but the ratings cache,
    and the heartbeat of a running tournament's lease, which its arena renews every
    ``LEASE_BEAT`` seconds whatever is refused meanwhile (the lease's holder stays in)."""
    with (
        contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn,
        contextlib.closing(sqlite3.connect(":memory:")) as copy,
    ):
        conn.backup(copy)
        copy.execute("UPDATE tournaments SET lease_beat = NULL")
        return "\n".join(line for line in copy.iterdump() if 'INTO "ratings"' not in line)


def test_contents_leave_out_the_heartbeat_only(tmp_path: Path) -> None:
    """A running tournament's heartbeat is no change a refusal made; its holder is."""
    db = tmp_path / "beat.db"
    with Store(db) as store:
        tournament = store.create_tournament("beat", "nimmt", "standard", {}, 1, {})
        store.take_lease(tournament.id)
        before = contents(db)
        store.db.execute("UPDATE tournaments SET lease_beat = lease_beat + 30")
        assert contents(db) == before, "a beat is not a change"
        store.db.execute("UPDATE tournaments SET lease_owner = 'elsewhere:1:1:x'")
        assert contents(db) != before, "another holder is one"


def open_folder(prefix: str) -> Path:
    """A temporary folder every user may enter (local bots run as users of their own)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o755)
    return folder


@pytest.fixture(scope="module")
def league() -> Iterator[Path]:
    """``league.db``: tournament "cup" (random, lowest and heuristic, tables of 2, one
    deal: 3 tables, 6 games, a start-up limit of 7.5 s), then "side" (random against
    lowest: 2 games). Tests that write work on a copy."""
    base = open_folder("arena-housekeeping-")
    db = base / "league.db"
    ok("tournament", "run", RANDOM, LOWEST, HEURISTIC, "--table-size", "2", *FAST, "--seed", "5",
       "--startup-time", "7.5", "--db", db, "--name", "cup")  # fmt: skip
    ok("tournament", "run", RANDOM, LOWEST, *FAST, "--seed", "9", "--db", db, "--name", "side")
    yield db
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def copy(league: Path) -> Iterator[Path]:
    """A copy of the league (file and snapshots) to change."""
    folder = open_folder("arena-housekeeping-copy-")
    db = folder / "league.db"
    with contextlib.closing(sqlite3.connect(league)) as source, contextlib.closing(sqlite3.connect(db)) as target:
        source.backup(target)
    shutil.copytree(league.with_name("league-bots"), folder / "league-bots", symlinks=True)
    yield db
    subprocess.run(["chmod", "-R", "u+w", str(folder)], check=False)
    shutil.rmtree(folder, ignore_errors=True)


# --- tournament list and show ---------------------------------------------------------------


def test_list_shows_every_tournament_in_three_formats(league: Path) -> None:
    table = ok("tournament", "list", "--db", league)
    lines = {line.split("│")[1].strip(): line for line in table.splitlines() if line.startswith("│")}
    assert set(lines) == {"cup", "side"}
    for name, played in (("cup", "6/6"), ("side", "2/2")):
        assert "6 nimmt! standard · 1 round" in lines[name] and "finished" in lines[name]
        assert played in lines[name], table
    rows = json.loads(ok("tournament", "list", "--db", league, "--format", "json"))
    assert [(r["name"], r["status"], r["games"], r["scheduled"]) for r in rows] == [
        ("cup", "finished", 6, 6),
        ("side", "finished", 2, 2),
    ]
    assert rows[0]["board"] == "nimmt/standard,rounds=1" and rows[0]["game"] == "nimmt"
    assert rows[0]["created"] <= rows[0]["finished"]
    parsed = list(csv.DictReader(io.StringIO(ok("tournament", "list", "--db", league, "--format", "csv"))))
    narrow = arena("tournament", "list", "--db", league, columns=80).stdout
    assert max(map(len, narrow.splitlines())) <= 80 and "cup" in narrow and "side" in narrow, narrow
    assert [(r["name"], r["games"], r["scheduled"]) for r in parsed] == [("cup", "6", "6"), ("side", "2", "2")]


def test_show_gives_settings_bots_seed_limits_and_progress(league: Path) -> None:
    text = ok("tournament", "show", "cup", "--db", league)
    for expected in (
        "status: finished",
        "games: 6 of 6 (100%)",
        "seed: 5",
        "tables of 2, 1 deal each",
        "3 tables",
        "7.5 s to start",
        "rounds=1",
        "random:1.0.0: 4 games",
        "lowest:1.0.0: 4 games",
        "heuristic:1.0.0: 4 games",
    ):
        assert expected in text, text
    assert "resume with" not in text
    info = json.loads(ok("tournament", "show", "cup", "--db", league, "--format", "json"))
    assert info["config"]["limits"]["startup_ms"] == 7500, "--startup-time is stored in the tournament's limits"
    assert info["config"]["bots"] == ["random:1.0.0", "lowest:1.0.0", "heuristic:1.0.0"]
    assert (info["games"], info["scheduled"], info["matches"], info["resume"]) == (6, 6, 3, None)
    missing = arena("tournament", "show", "nope", "--db", league)
    one_clean_line(missing, "no tournament 'nope'", "cup, side")


def test_startup_time_is_the_limit_the_tournament_plays_under(make_bot: MakeBot) -> None:
    slow = make_bot("slow", """\
        import time
        time.sleep(5)  # before it can answer hello
        from protocol.bot import Bot, run
        class Slow(Bot):
            def decide(self, kind, view, legal):
                return legal[0]
        run(Slow())
        """)  # fmt: skip
    folder = open_folder("arena-housekeeping-startup-")
    try:
        db = folder / "t.db"
        ok("tournament", "run", slow, RANDOM, *FAST, "--seed", "2", "--startup-time", "0.5", "--db", db, "--name", "s")
        seats = read(db, "SELECT b.name, s.status, s.timeouts FROM game_seats s JOIN bots b ON b.id = s.bot_id")
        assert sorted(seats) == [("random", "ok", 0)] * 2 + [("slow", "disqualified", 1)] * 2, seats
        text = ok("tournament", "show", "s", "--db", db)
        assert "0.5 s to start" in text, text
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- a running tournament, then a killed one ----------------------------------------------------

SLEEPER = """\
import time

from protocol.bot import Bot, run


class Sleeper(Bot):
    played = 0

    def new_game(self, message):
        self.played += 1

    def decide(self, kind, view, legal):
        if self.played >= 2:  # from its second game on, it thinks until it is stopped
            time.sleep(600)
        return legal[0]


run(Sleeper())
"""


def test_a_running_tournament_is_not_deleted_and_a_killed_one_says_how_to_resume(make_bot: MakeBot) -> None:
    sleeper = make_bot("sleeper", SLEEPER)
    folder = open_folder("arena-housekeeping-running-")
    db = folder / "t.db"
    run = subprocess.Popen(
        [ARENA, "tournament", "run", str(sleeper), RANDOM, "--deals", "2", "--set", "rounds=1", "--seed", "3",
         "--sandbox", "local", "--move-time", "300", "--db", str(db), "--name", "busy"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and run.poll() is None:
            with contextlib.suppress(sqlite3.Error):
                if read(db, "SELECT count(*) FROM games")[0][0] >= 1:
                    break
            time.sleep(0.05)
        assert run.poll() is None, "the run holds on in its second game"
        before, everything = counts(db), contents(db)
        assert before["games"] == 1
        listed = json.loads(ok("tournament", "list", "--db", db, "--format", "json"))
        assert [(r["name"], r["status"], r["games"], r["scheduled"]) for r in listed] == [("busy", "running", 1, 4)]
        assert f"status: running (run by pid {run.pid} on " in ok("tournament", "show", "busy", "--db", db)
        refused = arena("tournament", "delete", "busy", "--yes", "--db", db)
        one_clean_line(refused, "tournament 'busy' is being run by an arena", f"pid {run.pid}", "stop that run first")
        refused = arena("bot", "remove", "random:1.0.0", "--with-games", "--db", db)
        one_clean_line(refused, "tournament 'busy' is being run by an arena", "it plays random:1.0.0")
        assert counts(db) == before and contents(db) == everything, "refusals change nothing"
    finally:
        run.send_signal(signal.SIGKILL)  # kill -9: the run cannot mark itself interrupted
        run.wait(timeout=30)
    try:
        assert read(db, "SELECT status FROM tournaments")[0][0] == "running", "as the killed run left it"
        listed = json.loads(ok("tournament", "list", "--db", db, "--format", "json"))
        assert listed[0]["status"] == "interrupted", "nobody holds its lease: it is not running"
        text = ok("tournament", "show", "busy", "--db", db)
        assert "status: interrupted" in text and "games: 1 of 4 (25%)" in text, text
        assert f"resume with: arena tournament run --resume --name busy --db {db}" in text, text
        bots = counts(db)["bots"]
        assert "deleted tournament busy and its 1 game from" in ok("tournament", "delete", "busy", "--yes", "--db", db)
        assert counts(db) == {"games": 0, "game_seats": 0, "bots": bots, "tournaments": 0}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- tournament delete ----------------------------------------------------------------------


def at_a_terminal(args: list[str | Path], answer: str) -> tuple[int, str]:
    """The real CLI with a terminal for stdin and stdout (a pty), typing ``answer``."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([ARENA, *map(str, args)], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    os.write(master, answer.encode())
    output = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end is closed: the command is done
                break
            if not chunk:
                break
            output += chunk
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=30)
    os.close(master)
    return code, re.sub(r"\x1b\[[0-9;]*m", "", output.decode(errors="replace"))


def test_delete_asks_at_a_terminal_and_removes_games_and_seats_but_not_bots(copy: Path) -> None:
    before, everything = counts(copy), contents(copy)
    assert before == {"games": 8, "game_seats": 16, "bots": 3, "tournaments": 2}
    code, output = at_a_terminal(["tournament", "delete", "cup", "--db", copy], "n\n")
    assert code == 1 and "Delete tournament 'cup' and its 6 games?" in output and "nothing deleted" in output, output
    assert contents(copy) == everything, "no: nothing deleted"
    refused = arena("tournament", "delete", "cup", "--db", copy)  # no terminal, no --yes
    one_clean_line(refused, "'cup'", "6 games", "--yes")
    one_clean_line(arena("tournament", "delete", "nope", "--yes", "--db", copy), "no tournament 'nope'", "cup, side")
    assert contents(copy) == everything
    code, output = at_a_terminal(["tournament", "delete", "cup", "--db", copy], "y\n")
    assert code == 0 and "deleted tournament cup and its 6 games" in output, output
    assert counts(copy) == {"games": 2, "game_seats": 4, "bots": 3, "tournaments": 1}, "side and every bot stay"
    assert read(copy, "SELECT DISTINCT t.name FROM games g JOIN tournaments t ON t.id = g.tournament_id") == [("side",)]
    assert len(list(copy.with_name("league-bots").iterdir())) == 3, "the snapshots stay"
    assert read(copy, "SELECT count(*) FROM ratings")[0][0] == 0, "no cached board counts the deleted games"
    assert "heuristic" not in ok("leaderboard", "--db", copy, "--format", "json")


# --- bot remove -----------------------------------------------------------------------------


def test_bot_remove_refuses_while_games_reference_it_unless_with_games(copy: Path) -> None:
    snapshots = copy.with_name("league-bots")
    everything = contents(copy)
    assert read(copy, "SELECT count(*) FROM ratings")[0][0] > 0, "the runs cached their boards"
    one_clean_line(arena("bot", "remove", "heuristic", "--db", copy), "NAME:VERSION", "1.0.0")
    one_clean_line(arena("bot", "remove", "nobody:1", "--db", copy), "no bot 'nobody:1'")
    refused = arena("bot", "remove", "heuristic:1.0.0", "--db", copy)
    one_clean_line(refused, "heuristic:1.0.0 played 4 stored games", "cup", "--with-games")
    assert contents(copy) == everything and len(list(snapshots.iterdir())) == 3, "refusals change nothing"

    result = arena("bot", "remove", "heuristic:1.0.0", "--with-games", "--db", copy)
    assert result.returncode == 0, result.stderr
    assert "removed heuristic:1.0.0 and its 4 games" in result.stdout
    assert "cup named heuristic:1.0.0" in result.stderr
    assert counts(copy) == {"games": 4, "game_seats": 8, "bots": 2, "tournaments": 2}
    assert sorted(p.name.split("-")[0] for p in snapshots.iterdir()) == ["lowest", "random"]
    assert read(copy, "SELECT count(*) FROM ratings")[0][0] == 0, "no cached board counts the deleted games"
    shown = ok("tournament", "show", "cup", "--db", copy)
    assert "heuristic:1.0.0: 0 games (removed from the database)" in shown and "games: 2 of 6" in shown, shown

    ok("bot", "add", HEURISTIC, "--db", copy)  # stored again, no games: removed without --with-games
    assert "removed heuristic:1.0.0 from" in ok("bot", "remove", "heuristic:1.0.0", "--db", copy)
    assert counts(copy)["bots"] == 2 and len(list(snapshots.iterdir())) == 2


# --- games --newest -------------------------------------------------------------------------


def test_games_newest_first(league: Path) -> None:
    def ids(*args: str) -> list[int]:
        return [g["id"] for g in json.loads(ok("games", "--db", str(league), "--format", "json", *args))]

    oldest = ids("--bot", "random")
    assert len(oldest) == 6 and oldest == sorted(oldest)
    assert ids("--bot", "random", "--newest") == oldest[::-1]
    assert ids("--bot", "random:1.0.0", "--newest", "--limit", "2") == oldest[:-3:-1]
    assert ids("--newest", "--limit", "3") == [8, 7, 6]
    assert ids("--tournament", "cup", "--newest") == [6, 5, 4, 3, 2, 1]
    seats = list(csv.DictReader(io.StringIO(ok("games", "--db", str(league), "--format", "csv", "--newest"))))
    assert [int(row["id"]) for row in seats][:4] == [8, 8, 7, 7]


# --- growing a league -----------------------------------------------------------------------


def test_add_plays_only_the_new_tables_under_the_same_deal_seeds(make_bot: MakeBot) -> None:
    last = """\
        from protocol.bot import Bot, run
        class Last(Bot):
            def decide(self, kind, view, legal):
                return legal[-1]
        run(Last())
        """
    newbie, rookie = make_bot("newbie", last), make_bot("rookie", last)
    folder = open_folder("arena-housekeeping-grow-")
    db = folder / "t.db"
    resume: list[str | Path] = ["tournament", "run", "--resume", "--name", "grow", "--sandbox", "local", "--db", db]
    try:
        ok("tournament", "run", RANDOM, LOWEST, HEURISTIC, "--table-size", "2", *FAST, "--seed", "7", "--db", db,
           "--name", "grow")  # fmt: skip
        games = "SELECT id, match_no, game_no, deal, seed, seat_bots FROM games ORDER BY id"
        old = read(db, games)
        assert len(old) == 6, "3 tables of 2, a deal each, 2 seatings"

        # Refused, with one line, the database as it was.
        everything = contents(db)
        one_clean_line(arena("tournament", "run", "--add", newbie, "--name", "grow", "--db", db),
                       "--add", "--resume --name")  # fmt: skip
        one_clean_line(arena(*resume, "--add", HEURISTIC), "heuristic:1.0.0 is already in tournament 'grow'")
        one_clean_line(arena(*resume, "--add", "lowest"), "lowest:1.0.0 is already in tournament 'grow'")
        one_clean_line(arena(*resume, "--add", SAMPLES / "sixes-random"), "sixes-random:1.0.0 does not play nimmt")
        one_clean_line(arena(*resume, "--add", newbie, "--game", "sixes"), "--game sixes", "plays nimmt")
        one_clean_line(arena(*resume, "--add", newbie, "--add", newbie), "newbie:0.1 is named twice")
        one_clean_line(arena(*resume, "--add", "nobody"), "no bot 'nobody'")
        assert contents(db) == everything and counts(db)["bots"] == 3 and counts(db)["games"] == 6

        grown = ok(*resume, "--add", newbie)
        assert "added newbie:0.1 to grow: 3 new tables, 6 games; the 3 tables played so far are kept" in grown
        assert "6 games played; 12 stored for grow" in grown, grown
        grown = ok(*resume, "--add", rookie)  # and again: the first growth stays as it was
        assert "added rookie:0.1 to grow: 4 new tables, 8 games; the 6 tables played so far" in grown, grown
        assert "8 games played; 20 stored for grow" in grown, grown
        rows = read(db, games)
        assert rows[:6] == old, "the games played before are kept as they were"
        names = dict(read(db, "SELECT id, name FROM bots"))
        tables: dict[int, set[str]] = {}
        for _, match_no, _, deal, seed, seat_bots in rows:
            assert seed == deal_seed(7, match_no, deal), "every deal's seed derives from the tournament's"
            tables.setdefault(match_no, set()).update(names[int(b)] for b in seat_bots.split(","))
        assert all(tables[m] & {"newbie"} for m in (3, 4, 5)) and all("rookie" in tables[m] for m in (6, 7, 8, 9))
        pairs = Counter(tuple(sorted(names[int(b)] for b in r[5].split(","))) for r in rows)
        assert len(pairs) == 10 and set(pairs.values()) == {2}, "one complete round robin of the 5 bots"

        assert "0 games played; 20 stored for grow" in ok(*resume), "a plain --resume plays nothing twice"
        shown = ok("tournament", "show", "grow", "--db", db)
        for expected in ("games: 20 of 20", "grown: 3 -> 4 -> 5 bots", "newbie:0.1: 8 games", "rookie:0.1: 8 games"):
            assert expected in shown, shown
        config = json.loads(read(db, "SELECT config FROM tournaments")[0][0])
        assert config["bots"] == ["random:1.0.0", "lowest:1.0.0", "heuristic:1.0.0", "newbie:0.1", "rookie:0.1"]
        assert config["grown"] == [3, 4]
        one_clean_line(arena(*resume, "--add", "newbie"), "newbie:0.1 is already in tournament 'grow'")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- the grown schedule, as a pure function ---------------------------------------------------


def test_a_grown_schedule_keeps_the_old_tables_and_appends_tables_of_the_new_bots() -> None:
    # Few bots: every combination, old ones first, in their old order.
    assert grown_groups([3, 4], 2, seed=1) == [[0, 1], [0, 2], [1, 2], [0, 3], [1, 3], [2, 3]]
    assert sorted(map(tuple, grown_groups([4, 6], 3, seed=1))) == list(itertools.combinations(range(6), 3))
    old = round_robin(4, 3, 2, seed=8)
    new = round_robin(6, 3, 2, seed=8, grown=[4])
    assert new[: len(old)] == old, "the same numbers, bots, seatings and deal seeds"
    assert all(set(m.bots) & {4, 5} for m in new[len(old) :])
    assert [m.match_no for m in new] == list(range(len(new)))
    # Many bots (a balanced choice of MAX_GROUPS tables): the new bots sit about as often.
    before = groups(20, 4, seed=3)
    assert len(before) == MAX_GROUPS
    after = grown_groups([20, 22], 4, seed=3)
    assert after[:MAX_GROUPS] == before and after == grown_groups([20, 22], 4, seed=3)
    added = after[MAX_GROUPS:]
    assert all({20, 21} & set(g) for g in added)
    sat = Counter(b for g in after for b in g)
    average = MAX_GROUPS * 4 / 20
    assert all(abs(sat[b] - average) <= 1 for b in (20, 21)), sat
    met = {b for g in added if 20 in g for b in g} - {20}
    assert len(met) >= 18, "the new bot meets nearly the whole field"
    # Growing twice keeps the first growth as it was.
    assert grown_groups([20, 22, 23], 4, seed=3)[: len(after)] == after
    with pytest.raises(ValueError):
        grown_groups([5, 5], 2, seed=1)
