"""Output written into a file or a pipe is never cut or wrapped: ``arena bot list`` (in
each format), the ``arena play`` header and the ``arena replay`` seat table, each run as
a real ``arena`` process whose stdout is a pipe; and ``arena games``' filters and footer
over a real database made by real games."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

from arena.web.games_query import GamesAsked
from arena.web.pages.games import GamePages
from arena.web.pages.site import Site

from ..conftest import SAMPLES, MakeBot
from .test_cli_output import LONG, League, arena, league

__all__ = ["league"]  # the fixture: a real database of real tournaments

LONG_NAME = "a-forty-character-bot-name-for-pipes-xyz"
RANDOM_BOT = """
import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "x", "version": "1"}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "answer", "id": m["id"], "answer": random.choice(m["legal"])}), flush=True)
    elif m["type"] == "bye":
        break
"""


def long_bot(make_bot: MakeBot) -> Path:
    """A bot of a long name, and a version with a random part (no cache holds it)."""
    version = f"1.0.0+{uuid.uuid4().hex[:30]}"
    manifest = f'name = "{LONG_NAME}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\n'
    return make_bot(LONG_NAME, RANDOM_BOT, manifest=manifest + 'games = ["nimmt"]\n')


def test_bot_list_into_a_pipe_is_whole_in_every_format(make_bot: MakeBot, tmp_path: Path) -> None:
    db = tmp_path / "bots.db"
    folder = long_bot(make_bot)
    played = arena("tournament", "run", str(folder), str(SAMPLES / "random"), "--deals", "2", "--set", "rounds=1",
                   "--sandbox", "local", "--db", str(db), "--seed", "4")  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert arena("bot", "add", str(SAMPLES / "heuristic"), "--db", str(db)).returncode == 0
    listed = arena("bot", "list", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert "…" not in listed.stdout and "\x1b" not in listed.stdout
    header = next(line for line in listed.stdout.splitlines() if " bot " in line)
    columns = ["bot", "version", "language", "plays", "games", "hash", "added"]
    assert [c.strip() for c in header.split("┃")[1:-1]] == columns
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.startswith("│")}
    assert set(rows) == {LONG_NAME, "random", "heuristic"}, listed.stdout
    date = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"
    assert re.search(rf"│ nimmt +│ +4 │ [0-9a-f]{{12}} │ {date} │$", rows[LONG_NAME]), rows[LONG_NAME]
    assert re.search(rf"│ +0 │ [0-9a-f]{{12}} │ {date} │$", rows["heuristic"]), "a count of games played"

    as_json = json.loads(arena("bot", "list", "--db", str(db), "--format", "json").stdout)
    by_name = {b["bot"]: b for b in as_json}
    assert by_name[LONG_NAME]["games"] == 4 and by_name[LONG_NAME]["plays"] == ["nimmt"]
    assert by_name["heuristic"]["games"] == 0 and len(by_name["heuristic"]["hash"]) == 64
    as_csv = list(csv.DictReader(io.StringIO(arena("bot", "list", "--db", str(db), "--format", "csv").stdout)))
    assert {(r["bot"], r["games"], r["plays"]) for r in as_csv} == {
        (LONG_NAME, "4", "nimmt"),
        ("random", "4", "nimmt"),
        ("heuristic", "0", "nimmt"),
    }
    wrong = arena("bot", "list", "--db", str(db), "--format", "xml")
    assert wrong.returncode != 0 and "--format 'xml'" in wrong.stderr and wrong.stdout == ""


def test_play_header_and_replay_seat_table_are_whole_lines_into_a_pipe(make_bot: MakeBot, tmp_path: Path) -> None:
    folder = long_bot(make_bot)
    replay = tmp_path / "game.jsonl"
    played = arena("play", str(folder), str(SAMPLES / "random"), "--seed", "2", "--set", "rounds=1",
                   "--sandbox", "local", "--replay", str(replay))  # fmt: skip
    assert played.returncode == 0, played.stderr
    lines = played.stdout.splitlines()
    header = next(line for line in lines if line.startswith("6 nimmt! · 2 seats"))
    assert "own PID namespace" in header and "seccomp filter), own cgroup (" in header, played.stdout
    assert any(line == f"seats: A {LONG_NAME}, B random" for line in lines), played.stdout
    assert "…" not in played.stdout

    shown = arena("replay", str(replay))
    assert shown.returncode == 0, shown.stderr
    seat_row = next(line for line in shown.stdout.splitlines() if line.startswith(f"A {LONG_NAME}"))
    assert "own PID namespace" in seat_row and "1.0.0+" in seat_row, shown.stdout
    assert "…" not in shown.stdout
    stderr_view = arena("replay", str(replay), "--stderr")
    assert any(LONG_NAME in line and "seat 0" in line for line in stderr_view.stdout.splitlines())


# --- arena games: the web's filters, and a footer when the list is cut ------------------------


def games_json(league: League, *args: str) -> list[dict[str, Any]]:
    result = arena("games", "--db", str(league.db), "--format", "json", "--limit", "500", *args)
    assert result.returncode == 0, result.stderr
    found: list[dict[str, Any]] = json.loads(result.stdout)
    return found


def test_games_filters_as_the_web_does(league: League) -> None:
    every = games_json(league)
    assert len(every) == 13
    faulty = [g["id"] for g in every if any(sum(s["faults"].values()) for s in g["seats"])]
    assert faulty and [g["id"] for g in games_json(league, "--faults")] == faulty
    of_long = games_json(league, "--bot", LONG, "--faults")
    assert of_long and all(sum(s["faults"].values()) for g in of_long for s in g["seats"] if s["bot"] == LONG)
    met = games_json(league, "--bot", "heuristic", "--opponent", LONG)
    assert len(met) == 9 and all({"heuristic:1.0.0", LONG} <= {s["bot"] for s in g["seats"]} for g in met)
    sixes = games_json(league, "--board", "sixes")
    assert [g["tournament"] for g in sixes] == ["cup"] * 4
    assert [g["id"] for g in games_json(league, "--board", "nimmt/standard,end_score=30")] == list(range(1, 10))
    today = every[0]["started"][:10]
    assert len(games_json(league, "--from", today, "--to", today)) == 13
    assert games_json(league, "--to", "2000-01-01") == []
    assert games_json(league, "--from", "2999-01-01") == []
    web = GamePages(Site(league.db, background=False)).games(
        GamesAsked(bot=LONG, opponent="heuristic", faults=True), 500, 0, False
    )
    cli = games_json(league, "--bot", LONG, "--opponent", "heuristic", "--faults")
    assert [g["id"] for g in web.games] == [g["id"] for g in cli] and cli, "the web's query, not a second one"


def test_games_footer_says_how_many_there_are(league: League) -> None:
    cut = arena("games", "--db", str(league.db), "--limit", "5")
    assert cut.returncode == 0, cut.stderr
    assert cut.stdout.rstrip().splitlines()[-1] == "5 of 13 games; --limit to see more"
    later = arena("games", "--db", str(league.db), "--limit", "5", "--offset", "10")
    assert later.stdout.rstrip().splitlines()[-1] == "3 of 13 games from the 11th; --limit to see more"
    whole = arena("games", "--db", str(league.db), "--faults", "--bot", LONG)
    assert "--limit" not in whole.stdout, "nothing cut, no footer"
    as_json = arena("games", "--db", str(league.db), "--limit", "5", "--format", "json")
    assert len(json.loads(as_json.stdout)) == 5, "JSON is only the data"


def test_games_filters_refuse_what_cannot_be_one_in_one_line(league: League) -> None:
    for args, needle in (
        (["--from", "2026-13-01"], "--from must be a day as YYYY-MM-DD, not '2026-13-01'"),
        (["--from", "2026-12-02", "--to", "2026-12-01"], "is after to=2026-12-01"),
        (["--opponent", "random"], "--opponent random: give --bot as well"),
        (["--bot", "random", "--opponent", "nobody"], "no bot 'nobody'"),
        (["--board", "nimmt/nonsense"], "--board=nimmt/nonsense: unknown variant 'nonsense'"),
        (["--board", "chess"], "unknown game 'chess'"),
    ):
        result = arena("games", "--db", str(league.db), *args)
        assert result.returncode != 0 and result.stdout == "", args
        assert needle in result.stderr and "Traceback" not in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
