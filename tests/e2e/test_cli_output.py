"""Output people pipe and read: leaderboards and game lists as JSON and CSV that parse,
tables that fit 80 columns on a terminal and are never cut into a pipe, progress lines
when a tournament's output goes to a file, and ``arena play``'s exit status for CI.

One real database made by real tournaments (6 nimmt! with a faulty bot whose name is 30
characters long, and Sixes), read by the real CLI as a subprocess."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
from collections.abc import Iterator
from fcntl import ioctl
from pathlib import Path

import pytest

from arena.games.registry import get_game

from ..conftest import SAMPLES, MakeBot
from .test_league_store import games_on_nodes

ARENA = str(Path(sys.executable).parent / "arena")
LONG_NAME = "a-very-long-bot-name-for-tests"
assert len(LONG_NAME) == 30
LONG = f"{LONG_NAME}:0.1"
FAULTY = """
import json, sys
n = 0
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "x", "version": "1"}), flush=True)
    elif m["type"] == "request":
        n += 1
        answer = 999 if n % 3 == 0 else m["legal"][0]  # an illegal answer every 3rd request
        print(json.dumps({"type": "answer", "id": m["id"], "answer": answer}), flush=True)
    elif m["type"] == "bye":
        break
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROGRESS = re.compile(r"^(\d+)/(\d+) games \(\d+%\), [\d.]+ games/s, (about .+ left|all played)$", re.M)


def environment(**extra: str) -> dict[str, str]:
    """The caller's environment without a terminal size or a forced terminal, plus ``extra``."""
    unset = ("COLUMNS", "LINES", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {**env, **extra}


def arena(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``arena`` with stdout and stderr piped, as in a script."""
    return subprocess.run(
        [ARENA, *args], capture_output=True, text=True, timeout=300, env=environment(**env), stdin=subprocess.DEVNULL
    )


def on_terminal(*args: str, columns: int = 80) -> str:
    """``arena`` with a terminal of ``columns`` columns as stdout and stderr: what it shows
    there, colours removed."""
    main, side = pty.openpty()
    ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen(
        [ARENA, *args], stdin=subprocess.DEVNULL, stdout=side, stderr=side, env=environment(COLUMNS=str(columns))
    )
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait(timeout=60) == 0
    return ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


class League:
    def __init__(self, db: Path, nimmt: subprocess.CompletedProcess[str]) -> None:
        self.db = db
        self.nimmt = nimmt
        """The 6 nimmt! tournament's run, its output piped."""


@pytest.fixture(scope="module")
def league() -> Iterator[League]:
    base = Path(tempfile.mkdtemp(prefix="arena-test-output-"))
    os.chmod(base, 0o755)
    folder = base / "long"
    folder.mkdir(mode=0o755)
    (folder / "bot.py").write_text(textwrap.dedent(FAULTY))
    (folder / "bot.toml").write_text(
        f'name = "{LONG_NAME}"\nversion = "0.1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    for path in folder.iterdir():
        path.chmod(0o644)
    db = base / "league.db"
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random"), str(folder)]
    common = ["--sandbox", "local", "--db", str(db), "--seed", "3"]
    nimmt = arena("tournament", "run", *bots, "--deals", "3", "--name", "spring", "--set", "end_score=30", *common)
    assert nimmt.returncode == 0, nimmt.stderr
    sixes = [str(SAMPLES / "sixes-random"), str(SAMPLES / "sixes-heuristic")]
    other = arena("tournament", "run", *sixes, "--game", "sixes", "--deals", "2", "--name", "cup", *common)
    assert other.returncode == 0, other.stderr
    yield League(db, nimmt)
    shutil.rmtree(base, ignore_errors=True)


def boards_of(league: League) -> set[str]:
    return set(json.loads(arena("leaderboard", "--db", str(league.db), "--format", "json").stdout))


# --- item 9: machine formats print only the format --------------------------------------------


def test_leaderboard_json_with_los_is_json_for_every_board(league: League) -> None:
    assert boards_of(league) == {"nimmt/standard,end_score=30", "sixes/standard"}, "one board per rule set"
    for scope in ([], ["--tournament", "spring"], ["--tournament", "cup"]):
        result = arena("leaderboard", "--db", str(league.db), "--format", "json", "--los", *scope)
        assert result.returncode == 0, result.stderr
        boards = json.loads(result.stdout)  # nothing else on stdout
        assert boards and all(boards.values())
        for rows in boards.values():
            bots = {r["bot"] for r in rows}
            for row in rows:
                assert set(row["los"]) == bots - {row["bot"]}
                for other, p in row["los"].items():
                    them = next(r for r in rows if r["bot"] == other)
                    back = them["los"][row["bot"]]
                    if p is None:  # nothing can be said: one of the two has no interval (a bound is one)
                        assert (
                            back is None and None in (row["low"], them["low"]) and None in (row["high"], them["high"])
                        )
                    else:
                        assert 0 <= p <= 1 and abs(p + back - 1) < 1e-6
    plain = json.loads(arena("leaderboard", "--db", str(league.db), "--format", "json").stdout)
    assert all("los" not in row for rows in plain.values() for row in rows)


def test_leaderboard_csv_and_its_los_table_parse(league: League) -> None:
    result = arena("leaderboard", "--db", str(league.db), "--format", "csv")
    table = list(csv.reader(io.StringIO(result.stdout)))
    assert table[0][:3] == ["game", "rank", "bot"] and {len(r) for r in table} == {len(table[0])}
    assert {r[0] for r in table[1:]} == {"nimmt/standard,end_score=30", "sixes/standard"}
    assert len(table) == 1 + 3 + 2
    los = arena("leaderboard", "--db", str(league.db), "--format", "csv", "--los")
    pairs = list(csv.DictReader(io.StringIO(los.stdout)))
    assert list(pairs[0]) == ["game", "bot", "opponent", "los"]
    assert len(pairs) == 3 * 2 + 2 * 1, "one row per ordered pair of bots of each board"
    chances = {(p["game"], p["bot"], p["opponent"]): p["los"] for p in pairs}
    for (game, bot, opponent), p in chances.items():
        back = chances[game, opponent, bot]
        if p == "":  # nothing can be said of the pair: empty both ways, never nan
            assert back == ""
        else:
            assert abs(float(p) + float(back) - 1) < 1e-6


# --- item 10: tables fit 80 columns on a terminal, and are whole into a pipe ------------------


def assert_whole_board(text: str) -> None:
    """Every line within 80 columns; every bot's name, Elo and interval whole on its row."""
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, text
    assert "…" not in text, text
    for bot in ("heuristic:1.0.0", "random:1.0.0", LONG):
        row = next((line for line in lines if f" {bot} " in line), None)
        assert row is not None, (bot, text)
        interval = r"(\d{3,4}–\d{3,4}|[<>] \d{3,4}|—)"  # two-sided, a bound, or none
        elo = r"(\d{3,4}|[<>] \d{3,4})"  # a bound is the rating of a bot that won (lost) every comparison
        assert re.search(rf"│\s+\d+\s+│\s+\S+\s+│\s+{elo}\s+│\s+{interval}\s+│\s+\d+\s+│", row), row


def test_leaderboard_fits_80_columns_on_a_terminal(league: League) -> None:
    shown = on_terminal("leaderboard", "--db", str(league.db), "--tournament", "spring", "--los")
    assert_whole_board(shown)
    assert "Likelihood of superiority" in shown


def test_leaderboard_fits_columns_when_asked_in_a_pipe(league: League) -> None:
    result = arena("leaderboard", "--db", str(league.db), "--tournament", "spring", COLUMNS="80")
    assert_whole_board(result.stdout)


def test_piped_leaderboard_is_not_cut(league: League) -> None:
    result = arena("leaderboard", "--db", str(league.db), "--tournament", "spring")
    assert "…" not in result.stdout and "\x1b" not in result.stdout
    row = next(line for line in result.stdout.splitlines() if LONG in line)
    assert re.search(r"│ +\d+ \(\d+ illegal\) │$", row), row  # every column, faults by kind
    assert get_game("nimmt").score.per_round in result.stdout and "Wins" in result.stdout, "headed as the web heads it"


def test_tournament_end_leaderboard_is_whole_when_piped(league: League) -> None:
    assert "…" not in league.nimmt.stdout and LONG in league.nimmt.stdout


# --- item 11: progress lines when the output is not a terminal --------------------------------


def test_tournament_prints_plain_progress_lines_when_not_on_a_terminal(league: League) -> None:
    lines = [(int(done), int(total)) for done, total, _ in PROGRESS.findall(league.nimmt.stderr)]
    assert lines, league.nimmt.stderr
    total = lines[-1][1]
    assert total == 9 and lines[-1][0] == total
    assert any(done < total for done, _ in lines), "lines before the end"
    assert [done for done, _ in lines] == sorted({done for done, _ in lines})
    assert "\x1b" not in league.nimmt.stderr + league.nimmt.stdout, "no colours, no cursor moves"


def test_a_tournament_on_a_terminal_heads_its_live_table_as_the_game_does(tmp_path: Path) -> None:
    """The header names the game by its title, and the live top of the table heads the
    average score as the game's record does (6 nimmt!: penalty points)."""
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random")]
    shown = on_terminal("tournament", "run", *bots, "--deals", "1", "--set", "rounds=1", "--sandbox", "local",
                        "--db", str(tmp_path / "t.db"), "--name", "t", columns=120)  # fmt: skip
    assert "tournament t · 6 nimmt! · 2 bots" in shown, shown
    assert "top of the table (wins so far)" in shown and "Penalty/round" in shown, shown


# --- item 12: arena games ---------------------------------------------------------------------


def test_games_shows_statuses_and_filters_by_bot(league: League) -> None:
    listed = arena("games", "--db", str(league.db), "--tournament", "spring")
    assert listed.returncode == 0 and "[disqualified]" in listed.stdout, listed.stdout
    as_json = json.loads(arena("games", "--db", str(league.db), "--bot", LONG_NAME, "--format", "json").stdout)
    assert len(as_json) == 9 and all(any(s["bot"] == LONG for s in g["seats"]) for g in as_json)
    assert any(s["status"] == "disqualified" and s["faults"]["illegal"] >= 3 for g in as_json for s in g["seats"])
    one = json.loads(arena("games", "--db", str(league.db), "--bot", "sixes-random:1.0.0", "--format", "json").stdout)
    assert [g["tournament"] for g in one] == ["cup"] * 4
    rows = list(csv.DictReader(io.StringIO(arena("games", "--db", str(league.db), "--format", "csv").stdout)))
    assert len(rows) == 9 * 3 + 4 * 2, "one row per seat"
    assert {r["status"] for r in rows} >= {"ok", "disqualified"}
    assert {"id", "tournament", "seat", "bot", "rank", "score", "illegal"} <= set(rows[0])
    paged = json.loads(
        arena("games", "--db", str(league.db), "--format", "json", "--offset", "8", "--limit", "2").stdout
    )
    assert [g["id"] for g in paged] == [9, 10]


def test_games_show_the_node_that_played_each(tmp_path: Path) -> None:
    db = tmp_path / "nodes.db"
    old, played = games_on_nodes(db)
    listed = json.loads(arena("games", "--db", str(db), "--format", "json").stdout)
    assert [(g["id"], g["node"]) for g in listed] == [(old, ""), (played, "w1")]
    rows = list(csv.DictReader(io.StringIO(arena("games", "--db", str(db), "--format", "csv").stdout)))
    assert [(int(r["id"]), r["node"]) for r in rows] == [(old, ""), (old, ""), (played, "w1"), (played, "w1")]

    def columns(table: str) -> list[str]:
        return [c.strip() for c in next(line for line in table.splitlines() if " started " in line).split("┃")[1:-1]]

    table = arena("games", "--db", str(db)).stdout
    assert columns(table)[-2:] == ["started", "node"], table
    assert re.search(rf"^│ {played} .*│ w1 +│$", table, re.M), table
    before = arena("games", "--db", str(db), "--limit", "1").stdout  # only a game stored before nodes were
    assert re.search(rf"^│ {old} ", before, re.M) and columns(before)[-1] == "started", "no column of nothing"


def test_games_of_an_unknown_tournament_or_bot_is_an_error(league: League) -> None:
    for args, needle in (
        (["--tournament", "nope"], "no tournament 'nope'"),
        (["--bot", "nobody"], "no bot 'nobody'"),
        (["--format", "xml"], "--format 'xml'"),
    ):
        result = arena("games", "--db", str(league.db), *args)
        assert result.returncode != 0 and result.stdout == ""
        assert needle in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# --- item 13: arena play's exit status --------------------------------------------------------

ILLEGAL_FROM = """
import json, sys
n = 0
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "x", "version": "1"}), flush=True)
    elif m["type"] == "request":
        n += 1
        answer = 999 if n >= FIRST_BAD and n < FIRST_BAD + BAD else m["legal"][0]
        print(json.dumps({"type": "answer", "id": m["id"], "answer": answer}), flush=True)
    elif m["type"] == "bye":
        break
"""


def play(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return arena(
        "play", str(folder), str(SAMPLES / "random"), "--seed", "1", "--set", "rounds=1", "--sandbox", "local", *args
    )


def test_play_exits_3_when_a_seat_is_disqualified(make_bot: MakeBot) -> None:
    folder = make_bot("cheat", "FIRST_BAD, BAD = 1, 99\n" + ILLEGAL_FROM)
    result = play(folder)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Final standings" in result.stdout
    assert "A cheat disqualified (3 faults): exit 3" in result.stderr
    assert "Traceback" not in result.stderr


def test_play_strict_also_fails_on_a_fault(make_bot: MakeBot) -> None:
    folder = make_bot("once", "FIRST_BAD, BAD = 2, 1\n" + ILLEGAL_FROM)
    assert play(folder).returncode == 0
    strict = play(folder, "--strict")
    assert strict.returncode == 3, strict.stdout + strict.stderr
    assert "A once faulty (1 fault): exit 3" in strict.stderr
    honest = play(Path(SAMPLES / "random"), "--strict")
    assert honest.returncode == 0, honest.stderr
