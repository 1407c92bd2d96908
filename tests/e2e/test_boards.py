"""One board per rule set, and ratings that say when they cannot be trusted.

A real database made by real small tournaments (sample bots and a scripted one, the
local sandbox, fixed seeds), read by the real CLI as a subprocess: board keys and
labels, a database of the previous schema migrated, the warnings (no interval, few deal
groups, one-sided bounds, bots that never met) in the table, JSON and CSV, and anchors.
The web's side of it is in tests/e2e/test_web.py and tests/e2e/test_web_browser.py, over the
same database (``warned_db``)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console

from arena.boards.columns import STANDINGS, columns_of
from arena.boards.show import natural_width, render_board, render_table
from arena.boards.standings import BOARD_REVISION, Row, board_scope, leaderboard, parse_anchor
from arena.games.registry import get_game, registered
from arena.store import SCHEMA_VERSION, Store, StoreError, board_key, board_label, canonical_board, with_people

from ..conftest import SAMPLES
from ..games.liars_dice.record import LIARS_DICE
from .test_cli_output import arena, on_terminal

FEW = "nimmt/standard,end_score=30"
"""3 deals of heuristic, random and lowest: 3 deal groups, intervals from few groups."""
ONCE = "nimmt/standard,shedding"
"""1 deal of the same, shedding: one deal group (heuristic wins all 3 games)."""
APART = "nimmt/standard,rounds=1"
"""heuristic and random in one tournament, lowest and highest in another: two components."""
HIGHEST = """\
from protocol.bot import Bot, run


class Highest(Bot):
    def decide(self, kind, view, legal):
        return max(legal)  # its highest card; the last row


run(Highest())
"""

_SHARED: dict[str, Path] = {}
"""The database, built once per session for this module and the web's tests."""


def build_warned_db(base: Path) -> Path:
    highest = base / "highest"
    highest.mkdir(mode=0o755)
    (highest / "bot.py").write_text(textwrap.dedent(HIGHEST))
    (highest / "bot.toml").write_text(
        'name = "highest"\nversion = "0.1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    for path in highest.iterdir():
        path.chmod(0o644)
    db = base / "boards.db"
    common = ["--sandbox", "local", "--db", str(db), "--seed", "5"]
    trio = [str(SAMPLES / "heuristic"), str(SAMPLES / "random"), str(SAMPLES / "lowest")]
    for args in (
        [*trio, "--deals", "3", "--name", "few", "--set", "end_score=30"],
        [*trio, "--deals", "1", "--name", "once", "--set", "shedding=true"],
        [trio[0], trio[1], "--deals", "2", "--name", "left", "--set", "rounds=1"],
        [trio[2], str(highest), "--deals", "2", "--name", "right", "--set", "rounds=1"],
    ):
        played = arena("tournament", "run", *args, *common)
        assert played.returncode == 0, played.stderr
    return db


@pytest.fixture(scope="session")
def warned_db() -> Iterator[Path]:
    if "db" not in _SHARED:
        base = Path(tempfile.mkdtemp(prefix="arena-test-boards-"))
        os.chmod(base, 0o755)
        _SHARED["base"] = base
        _SHARED["db"] = build_warned_db(base)
    yield _SHARED["db"]
    shutil.rmtree(_SHARED.pop("base", ""), ignore_errors=True)
    _SHARED.pop("db", None)


def boards(db: Path, *args: str) -> dict[str, list[dict[str, Any]]]:
    result = arena("leaderboard", "--db", str(db), "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    parsed: dict[str, list[dict[str, Any]]] = json.loads(result.stdout)
    return parsed


def one_clean_line(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0 and result.stdout == "", (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def finite(value: Any) -> bool:
    return isinstance(value, float) and math.isfinite(value)


def flat(text: str) -> str:
    """Text with every run of white space as one space (a terminal wraps long lines)."""
    return " ".join(text.split())


# --- item 4: one board per rule set -----------------------------------------------------------


def test_board_keys_and_labels() -> None:
    cases = [
        ("nimmt", {}, "nimmt/standard", "6 nimmt! standard"),
        ("nimmt", {"variant": "standard", "end_score": 66, "shedding": False}, "nimmt/standard", "6 nimmt! standard"),
        ("nimmt", {"shedding": True}, "nimmt/standard,shedding", "6 nimmt! standard · shedding"),
        ("nimmt", {"variant": "tactical", "end_score": 50}, "nimmt/tactical,end_score=50",
         "6 nimmt! tactical · end at 50 heads"),
        ("nimmt", {"cards_per_turn": 2, "keep_rows": True}, "nimmt/standard,keep_rows,cards_per_turn=2",
         "6 nimmt! standard · rows kept · 2 cards a turn"),
        ("nimmt", {"rounds": 3, "end_score": 50}, "nimmt/standard,rounds=3", "6 nimmt! standard · 3 rounds"),
        ("sixes", {"chips": 10, "max_rounds": 100}, "sixes/standard", "Sixes"),
        ("sixes", {"chips": 15}, "sixes/standard,chips=15", "Sixes · 15 chips"),
        ("sixes", {"max_rounds": 20}, "sixes/standard,max_rounds=20", "Sixes · at most 20 rounds"),
    ]  # fmt: skip
    for game, settings, key, label in cases:
        assert board_key(game, settings) == key, settings
        assert board_label(key) == label
        assert canonical_board(key) == key
    # Written by hand: settings in any order, the variant left out, a switch as =true.
    assert canonical_board("nimmt/standard,shedding=true") == "nimmt/standard,shedding"
    assert canonical_board("nimmt/standard,cards_per_turn=2,keep_rows") == "nimmt/standard,keep_rows,cards_per_turn=2"
    assert canonical_board("sixes/chips=15") == "sixes/standard,chips=15"
    assert canonical_board("nimmt/standard,end_score=66") == "nimmt/standard", "a default is no setting"
    # Games with people (arena serve --play): their rule set's board, marked, kept apart.
    assert canonical_board("nimmt/rounds=3,end_score=66,people") == "nimmt/standard,rounds=3,people"
    assert canonical_board("sixes/chips=15,people") == "sixes/standard,chips=15,people"
    assert board_label("nimmt/standard,rounds=3,people") == "6 nimmt! standard · 3 rounds · with people"
    assert board_label("sixes/standard,people") == "Sixes · with people"
    assert with_people("standard,rounds=3,people") == ("standard,rounds=3", True)
    assert with_people("standard,rounds=3") == ("standard,rounds=3", False)
    with pytest.raises(StoreError, match="unknown setting 'people'"):
        canonical_board("nimmt/standard,people,rounds=3")  # the mark is the key's last part
    for bad, needle in [
        ("nimmt/fast", "unknown variant 'fast'"),
        ("nimmt/standard,colour=red", "unknown setting 'colour'"),
        ("nimmt/standard,end_score=many", "end_score is a whole number"),
        ("chess/standard", "unknown game 'chess'"),
    ]:
        with pytest.raises(StoreError, match=needle):
            canonical_board(bad)


def test_house_rules_get_boards_of_their_own(warned_db: Path) -> None:
    everything = boards(warned_db)
    assert list(everything) == [FEW, APART, ONCE]
    trio = {"heuristic:1.0.0", "random:1.0.0", "lowest:1.0.0"}
    assert {r["bot"] for r in everything[FEW]} == {r["bot"] for r in everything[ONCE]} == trio
    assert all(r["games"] == 9 for r in everything[FEW]) and all(r["games"] == 3 for r in everything[ONCE])
    with Store(warned_db, read_only=True) as store:
        stored = {t.name: (t.variant, t.settings) for t in store.list_tournaments()}
        kinds = store.board_counts()
    assert {name: variant for name, (variant, _) in stored.items()} == {
        "few": "standard,end_score=30",
        "once": "standard,shedding",
        "left": "standard,rounds=1",
        "right": "standard,rounds=1",
    }
    assert stored["once"][1]["shedding"] is True, "the settings themselves are kept as they were"
    assert kinds == [("nimmt", "standard,end_score=30", 9), ("nimmt", "standard,rounds=1", 8),
                     ("nimmt", "standard,shedding", 3)]  # fmt: skip
    table = arena("leaderboard", "--db", str(warned_db)).stdout
    for key in (FEW, APART, ONCE):
        assert f"Leaderboard {board_label(key)} ({key})" in table
    assert "6 nimmt! standard · shedding" in table and "6 nimmt! standard · end at 30 heads" in table


def test_choosing_a_board(warned_db: Path) -> None:
    assert list(boards(warned_db, "--board", "nimmt/shedding")) == [ONCE], "the variant may be left out"
    assert list(boards(warned_db, "--game", APART)) == [APART], "--game takes a board's key too"
    assert list(boards(warned_db, "--game", "nimmt", "--tournament", "once")) == [ONCE]
    one_clean_line(arena("leaderboard", "--db", str(warned_db), "--board", "nimmt/standard"),
                   "no games of nimmt/standard stored", f"the boards are {FEW}, {APART}, {ONCE}")  # fmt: skip


# --- item 2: saying when a rating cannot be trusted --------------------------------------------


def test_json_and_csv_carry_the_warnings(warned_db: Path) -> None:
    everything = boards(warned_db)
    for rows in everything.values():
        for row in rows:
            assert {"groups", "bound", "component", "note"} <= set(row)
            if row["bound"] == ">":
                assert finite(row["low"]) and row["high"] is None and row["note"], row
            elif row["bound"] == "<":
                assert finite(row["high"]) and row["low"] is None and row["note"], row
            else:
                assert row["bound"] == "" and (row["low"] is None) == (row["high"] is None), row
            if row["low"] is None and row["high"] is None:
                assert row["note"], "no interval says why"
    few = everything[FEW]
    assert all(r["groups"] == 3 and "3" in r["note"] for r in few), "few groups: a note with the number"
    assert all(finite(r["low"]) and finite(r["high"]) for r in few)
    once = {r["bot"]: r for r in everything[ONCE]}
    assert all(r["groups"] == 1 for r in once.values())
    assert not any(finite(r["low"]) and finite(r["high"]) for r in once.values()), "one group: no two-sided interval"
    assert once["heuristic:1.0.0"]["wins"] == 3 and once["heuristic:1.0.0"]["bound"] == ">", "won every game"
    assert any(r["low"] is None and r["high"] is None for r in once.values())

    out = arena("leaderboard", "--db", str(warned_db), "--format", "csv").stdout
    lines = out.splitlines()
    assert lines[0].endswith(",groups,bound,component,note")
    parsed = list(csv.DictReader(io.StringIO(out)))
    rows = {(r["game"], r["bot"]): r for r in parsed}
    heuristic = rows[ONCE, "heuristic:1.0.0"]
    assert heuristic["bound"] == ">" and heuristic["high"] == "" and float(heuristic["low"]) == once[
        "heuristic:1.0.0"]["low"]  # fmt: skip
    assert heuristic["groups"] == "1" and heuristic["note"] == once["heuristic:1.0.0"]["note"]
    assert {rows[APART, b]["component"] for b in ("lowest:1.0.0", "highest:0.1")} == {"1"}


def test_the_table_shows_dashes_bounds_and_notes_within_80_columns(warned_db: Path) -> None:
    everything = boards(warned_db)
    shown = on_terminal("leaderboard", "--db", str(warned_db))
    assert max(map(len, shown.splitlines())) <= 80, shown
    assert "…" not in shown
    once = shown.split(f"({ONCE})")[1]
    for row in everything[ONCE]:
        line = next(line for line in once.splitlines() if f" {row['bot']} " in line)
        cell = line.split("│")[4].strip()
        if row["bound"] == ">":
            assert cell == f"> {row['low']:.0f}", line
        elif row["bound"] == "<":
            assert cell == f"< {row['high']:.0f}", line
        else:
            assert cell == "—", line
        assert flat(f"note: {row['note']}") in flat(once)
    few = shown.split(f"({FEW})")[1].split("Leaderboard")[0]
    assert flat(f"note: {everything[FEW][0]['note']} (every bot)") in flat(few), "one line for all"
    for row in everything[FEW]:
        assert re.search(rf" {re.escape(row['bot'])} +│ +\d+ +│ +{row['low']:.0f}–{row['high']:.0f} +│", few), few


def test_bots_that_never_met_are_separate_parts(warned_db: Path) -> None:
    rows = boards(warned_db, "--board", APART)[APART]
    parts: dict[int, set[str]] = {}
    for row in rows:
        parts.setdefault(row["component"], set()).add(row["bot"])
    assert sorted(parts) == [0, 1]
    assert sorted(map(sorted, parts.values())) == [["heuristic:1.0.0", "random:1.0.0"], ["highest:0.1", "lowest:1.0.0"]]
    assert [r["rank"] for r in rows] == [1, 2, 1, 2], "ranked within each part"
    assert [r["component"] for r in rows] == [0, 0, 1, 1]
    shown = flat(arena("leaderboard", "--db", str(warned_db), "--board", APART).stdout)
    first, second = (" ".join(sorted(p)) for p in parts.values())
    assert shown.index("part 1 of 2") < shown.index("never played those above") < shown.index("part 2 of 2")
    after = shown.split("never played those above")[1]
    assert all(bot in after for bot in parts[1]) and not any(f" {bot} │" in after for bot in parts[0]), (first, second)


# --- item 3: anchoring the scale ---------------------------------------------------------------


def test_an_anchor_fixes_one_bot_and_keeps_the_differences(warned_db: Path) -> None:
    plain = {r["bot"]: r for r in boards(warned_db, "--board", FEW)[FEW]}
    anchored = {r["bot"]: r for r in boards(warned_db, "--board", FEW, "--anchor", "lowest:1.0.0=1400")[FEW]}
    assert anchored["lowest:1.0.0"]["elo"] == 1400.0
    for bot, row in anchored.items():
        moved = row["elo"] - plain[bot]["elo"]
        assert abs(moved - (1400.0 - plain["lowest:1.0.0"]["elo"])) < 0.2, "the same differences"
    shown = arena("leaderboard", "--db", str(warned_db), "--anchor", "lowest=1400")  # a bare name, every board
    assert shown.returncode == 0, shown.stderr
    few = shown.stdout.split(f"({FEW})")[1].split("Leaderboard")[0]
    assert "anchored: lowest at 1400 Elo" in flat(few)
    assert re.search(r" lowest:1\.0\.0 +│ +1400 +│", few), few
    assert parse_anchor(" lowest:1.0.0 = 1400.5 ") == ("lowest:1.0.0", 1400.5)
    assert parse_anchor("lowest=-20") == ("lowest", -20.0)


def test_bad_anchors_are_one_line_and_change_nothing(warned_db: Path) -> None:
    before = hashlib.sha256(warned_db.read_bytes()).hexdigest()
    unknown = arena("leaderboard", "--db", str(warned_db), "--board", FEW, "--anchor", "nobody=1500")
    one_clean_line(unknown, "--anchor nobody", f"no such bot on board {FEW}",
                   "heuristic:1.0.0, lowest:1.0.0, random:1.0.0")  # fmt: skip
    other = arena("leaderboard", "--db", str(warned_db), "--anchor", "lowest:9.9=1500")
    one_clean_line(other, "lowest:9.9", "highest:0.1", "heuristic:1.0.0")
    malformed = arena("leaderboard", "--db", str(warned_db), "--anchor", "a:b:c=1")
    one_clean_line(malformed, "--anchor 'a:b:c=1'", "expected NAME[:VERSION]=ELO")
    for bad in ("heuristic", "heuristic=", "=1500", "heuristic=strong", "heuristic=nan", "heuristic:=1"):
        with pytest.raises(ValueError, match=re.escape(f"{bad!r}: expected NAME[:VERSION]=ELO")):
            parse_anchor(bad)
    assert hashlib.sha256(warned_db.read_bytes()).hexdigest() == before


# --- a database of the previous schema -----------------------------------------------------------


def test_a_database_of_schema_3_is_split_into_boards(warned_db: Path, tmp_path: Path) -> None:
    """Schema 3 pooled every house-rule game into its variant's board. Made from the real
    database: the variant columns set back to the bare variant, a board cached under the
    old key, the version set back."""
    old = tmp_path / "old.db"
    with sqlite3.connect(warned_db) as source, sqlite3.connect(old) as target:
        source.backup(target)
    shutil.copytree(warned_db.with_name("boards-bots"), tmp_path / "old-bots", symlinks=True)
    expected = boards(warned_db)
    with sqlite3.connect(old) as db:
        db.execute("UPDATE tournaments SET variant = json_extract(settings, '$.variant')")
        db.execute("UPDATE games SET variant = 'standard'")
        db.execute(
            "INSERT INTO ratings (scope, last_game, computed, board) VALUES ('board|nimmt|standard|None',"
            " (SELECT max(id) FROM games), 'then', '[]')"
        )
        db.execute("ALTER TABLE games DROP COLUMN node")  # schema 5's
        db.execute("ALTER TABLE tournaments DROP COLUMN workers")  # schema 6's
        for table in ("sessions", "submissions", "bot_owners", "authors"):  # schema 8's
            db.execute(f"DROP TABLE {table}")
        for column in ("secret", "commitment", "revealed_epochs", "revealed_key"):  # schema 9's
            db.execute(f"ALTER TABLE tournaments DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 3")
        assert db.execute("SELECT DISTINCT variant FROM games").fetchall() == [("standard",)]

    reading = arena("leaderboard", "--db", str(old))
    one_clean_line(reading, "schema version 3", "writing command")
    with sqlite3.connect(old) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3, "a reader never migrates"

    migrated = arena("bot", "add", str(SAMPLES / "random"), "--db", str(old))  # a writing command
    assert migrated.returncode == 0, migrated.stderr
    with Store(old, read_only=True) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.db.execute("SELECT count(*) FROM ratings").fetchone()[0] == 0, "no board of the old keys"
        assert {t.name: t.variant for t in store.list_tournaments()} == {
            "few": "standard,end_score=30",
            "once": "standard,shedding",
            "left": "standard,rounds=1",
            "right": "standard,rounds=1",
        }
        per_tournament = store.db.execute(
            "SELECT DISTINCT t.name, g.variant FROM games g JOIN tournaments t ON t.id = g.tournament_id"
        ).fetchall()
    assert sorted(per_tournament) == [("few", "standard,end_score=30"), ("left", "standard,rounds=1"),
                                      ("once", "standard,shedding"), ("right", "standard,rounds=1")]  # fmt: skip
    assert boards(old) == expected, "the same boards as a database made after the change"
    with Store(old, read_only=True) as store:
        assert {g.node for g in store.find_games(limit=1000)} == {""}, "the node of a game stored before: unknown"


def test_a_bound_is_the_rating_and_nothing_unknown_is_a_number(warned_db: Path) -> None:
    """A bot that won every comparison: its bound is its rating in the table (``> 1454``),
    its Elo is null in JSON and empty in CSV (the fit would grow with every game it swept),
    and it ranks first by what is known. A LOS that cannot be said is null in JSON, empty
    in CSV and a dash in the table, as a missing value is elsewhere; never ``nan``."""
    once = {r["bot"]: r for r in boards(warned_db, "--board", ONCE)[ONCE]}
    swept = once["heuristic:1.0.0"]
    assert swept["bound"] == ">" and swept["elo"] is None and swept["rank"] == 1 and finite(swept["low"])
    for row in once.values():
        assert (row["elo"] is None) == bool(row["bound"]), row
    parsed = list(csv.DictReader(io.StringIO(arena("leaderboard", "--db", str(warned_db), "--format", "csv").stdout)))
    assert next(r for r in parsed if r["game"] == ONCE and r["bot"] == "heuristic:1.0.0")["elo"] == ""
    shown = on_terminal("leaderboard", "--db", str(warned_db), "--board", ONCE)
    line = next(line for line in shown.splitlines() if " heuristic:1.0.0 " in line)
    assert line.split("│")[3].strip() == f"> {swept['low']:.0f}", line

    # The LOS of one deal group: nothing can be said of the bots without an interval.
    los = json.loads(arena("leaderboard", "--db", str(warned_db), "--board", ONCE, "--format", "json", "--los").stdout)
    values = [v for row in los[ONCE] for v in row["los"].values()]
    assert None in values and all(v is None or 0 <= v <= 1 for v in values), los
    pairs = arena("leaderboard", "--db", str(warned_db), "--board", ONCE, "--format", "csv", "--los").stdout
    assert "nan" not in pairs and any(line.endswith(",") for line in pairs.splitlines()), pairs
    table = on_terminal("leaderboard", "--db", str(warned_db), "--board", ONCE, "--los")
    assert "nan" not in table and "—" in table.split("Likelihood of superiority")[1], table


# --- the score column: the game's heading, a game-neutral name ----------------------------------


def test_every_output_heads_and_names_the_score_as_the_game_does(warned_db: Path) -> None:
    """The terminal heads the score column as the game's record does (as the web does);
    JSON and CSV call it ``score_per_round`` whatever the game scores."""
    heading = get_game("nimmt").score.per_round
    piped = arena("leaderboard", "--db", str(warned_db), "--board", FEW).stdout
    assert heading in piped and "score/rd" not in piped, piped
    rows = boards(warned_db, "--board", FEW)[FEW]
    assert all("score_per_round" in r and "penalty_per_round" not in r for r in rows), rows
    assert all(r["score_per_round"] > 0 for r in rows), "every bot took some"
    header = arena("leaderboard", "--db", str(warned_db), "--format", "csv").stdout.splitlines()[0].split(",")
    assert "score_per_round" in header and not any("penalty" in field for field in header), header
    assert header[1:] == list(Row.__struct_fields__), "one row's fields, in order, after the board's key"


def test_a_game_of_another_score_is_headed_by_its_record() -> None:
    """An outside game's board (Liar's dice, in chips) in full and on a narrow terminal: its
    record's heading and short heading, never another game's."""
    rows = [Row(1, "liar:1.0.0", 1550.0, 1400.0, 1700.0, 8, 5, 0.75, 0, 0, 0, 0, groups=4)]
    with registered(LIARS_DICE):
        assert [c.heading for c in columns_of("liars-dice")][6] == "Chips/round"
        wide = render_table(rows, "Liar's dice", None, "liars-dice")
        headings = [str(c.header) for c in wide.columns]
        assert headings == [c.heading if c.field != "score_per_round" else "Chips/round" for c in STANDINGS]
        assert get_game("nimmt").score.per_round not in headings
        narrow_width = natural_width(wide) - 1  # the full headings no longer fit
        narrow = render_table(rows, "Liar's dice", narrow_width, "liars-dice")
        assert natural_width(narrow) <= narrow_width and "Chips" in [str(c.header) for c in narrow.columns]
        (table,) = render_board(rows, "Liar's dice", None, "liars-dice")
        out = io.StringIO()
        Console(file=out, width=200).print(table)
        line = next(line for line in out.getvalue().splitlines() if "liar:1.0.0" in line)
        assert line.split("│")[7].strip() == "0.75", line


def test_a_board_cached_by_an_older_arena_is_computed_again_and_left_to_it(warned_db: Path, tmp_path: Path) -> None:
    """A board an older arena cached named the score ``penalty_per_round``: this arena
    computes the board again (its rows are of another revision) and leaves that one where
    it is, so an older arena reading the same file still finds what it cached."""
    db = tmp_path / "older.db"
    with sqlite3.connect(warned_db) as source, sqlite3.connect(db) as target:
        source.backup(target)
    game, variant = FEW.split("/")
    with Store(db) as store:
        fresh = leaderboard(store, game, variant)  # cached at the newest game (a writing store)
        last = store.last_game_id()
    older_scope = board_scope(game, variant).replace(f"board {BOARD_REVISION}|", "board 2|")
    older = [{**msgspec.to_builtins(r), "penalty_per_round": 99.0} for r in fresh]
    for row in older:
        del row["score_per_round"]
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM ratings")
        connection.execute(
            "INSERT INTO ratings (scope, last_game, computed, board) VALUES (?, ?, 'then', ?)",
            (older_scope, last, json.dumps(older)),
        )
    read = boards(db, "--board", FEW)[FEW]
    assert [r["score_per_round"] for r in read] == [r.score_per_round for r in fresh], "computed, not the old one"
    assert all("penalty_per_round" not in r for r in read)
    with sqlite3.connect(db) as connection:
        kept = connection.execute("SELECT board FROM ratings WHERE scope = ?", (older_scope,)).fetchone()
    assert kept is not None and json.loads(kept[0]) == older, "the older arena's board, as it left it"
