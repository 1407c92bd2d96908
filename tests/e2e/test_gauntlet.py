"""``arena gauntlet``: its schedule, and the command end to end with real bot processes."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.tournaments.gauntlet import half_points, rounds_for
from arena.tournaments.schedule import gauntlet, gauntlet_tables
from leaderboard.sprt import Sprt, sequential

from ..conftest import SAMPLES

ARENA = str(Path(sys.executable).parent / "arena")
HEURISTIC, RANDOM, LOWEST = (str(SAMPLES / name) for name in ("heuristic", "random", "lowest"))
LOOSE = ["--sprt", "elo0=0,elo1=200", "--max-games", "200", "--sandbox", "local", "--seed", "5"]


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout)


# --- the schedule ----------------------------------------------------------------------


def test_tables_seat_new_with_each_opponent_or_each_combination() -> None:
    assert gauntlet_tables(3, 2) == [[0, 1], [0, 2], [0, 3]]
    assert gauntlet_tables(3, 3) == [[0, 1, 2], [0, 1, 3], [0, 2, 3]]
    assert gauntlet_tables(2, 3) == [[0, 1, 2]]
    with pytest.raises(ValueError):
        gauntlet_tables(2, 4)
    assert rounds_for(100, 3, 2) == 16  # a round: 3 tables x 2 games
    assert rounds_for(5, 3, 2) == 0


def test_every_deal_group_is_one_deal_in_every_rotation_round_by_round() -> None:
    opponents, size, rounds, chunk = 3, 2, 5, 2
    schedule = gauntlet(opponents, size, rounds, chunk, seed=9)
    tables = len(gauntlet_tables(opponents, size))
    assert [m.match_no for m in schedule] == list(range(len(schedule)))
    groups: dict[int, list[tuple[int, list[int]]]] = {}
    for match in schedule:
        table = match.match_no % tables
        assert match.bots == gauntlet_tables(opponents, size)[table]
        for game, deal in zip(match.games, match.deals, strict=True):
            groups.setdefault(deal * tables + table, []).append((game.seed, game.seats))
    assert sorted(groups) == list(range(rounds * tables))  # every round at every table, once
    for members in groups.values():
        assert len({seed for seed, _ in members}) == 1  # one deal
        assert sorted(seats.index(0) for _, seats in members) == list(range(size))  # NEW held every hand
    assert len({members[0][0] for members in groups.values()}) == rounds * tables  # a new deal each group
    # Matches are played in order: a match holds consecutive rounds of one table.
    first = schedule[:tables]
    assert all(set(m.deals) == {0, 1} for m in first)
    assert gauntlet(opponents, size, rounds, chunk, seed=9) == schedule
    assert gauntlet(opponents, size, rounds, chunk, seed=10) != schedule


def test_half_points() -> None:
    assert half_points([1, 2], 0) == 2 and half_points([1, 2], 1) == 0
    assert half_points([1, 1], 0) == 1
    assert half_points([2, 1, 2], 0) == 1  # lost to seat 1, tied with seat 2
    assert half_points([1, 3, 2], 0) == 4


# --- the command -------------------------------------------------------------------------


def group_scores(db: Path, name: str) -> list[float]:
    """The deal groups' scores of NEW from the database itself, in order, up to the first
    incomplete group: what the test counts (heads-up, one opponent)."""
    with sqlite3.connect(db) as conn:
        new_id = conn.execute(
            "SELECT b.id FROM bots b, tournaments t"
            " WHERE t.name = ? AND b.name || ':' || b.version = json_extract(t.config, '$.bots[0]')",
            (name,),
        ).fetchone()
        assert new_id is not None
        rows = conn.execute(
            "SELECT g.deal, g.seat_bots, g.seat_ranks FROM games g JOIN tournaments t ON t.id = g.tournament_id"
            " WHERE t.name = ?",
            (name,),
        ).fetchall()
    points: Counter[int] = Counter()
    seen: Counter[int] = Counter()
    for deal, bots, ranks in rows:
        seat = [int(b) for b in bots.split(",")].index(new_id[0])
        points[deal] += half_points([int(r) for r in ranks.split(",")], seat)
        seen[deal] += 1
    scores: list[float] = []
    while seen[len(scores)] == 2:
        scores.append(points[len(scores)] / 4)
    return scores


def stored(db: Path, name: str | None = None) -> int:
    with sqlite3.connect(db) as conn:
        if name is None:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
        query = "SELECT count(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id WHERE t.name = ?"
        return int(conn.execute(query, (name,)).fetchone()[0])


def verdict_groups(output: str) -> int:
    found = re.search(r"after (\d+) deal groups", output)
    assert found, output
    return int(found.group(1))


@pytest.fixture(scope="module")
def passed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A database holding gauntlet "g": heuristic against random, a loose test."""
    db = tmp_path_factory.mktemp("passed") / "arena.db"
    run = arena("gauntlet", HEURISTIC, "--vs", RANDOM, *LOOSE, "--db", str(db), "--name", "g")
    assert run.returncode == 0, run.stderr
    return db, run


def copy_of(db: Path, folder: Path) -> Path:
    """The database and its snapshots, copied (as a backup would be)."""
    copy = folder / "arena.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    shutil.copytree(db.parent / "arena-bots", folder / "arena-bots")
    return copy


def test_a_stronger_bot_passes_and_the_finished_gauntlet_stays_finished(
    passed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    db, run = copy_of(passed[0], tmp_path), passed[1]
    out = run.stdout
    assert "heuristic:1.0.0 against random:1.0.0" in out and "SPRT elo0=0,elo1=200,alpha=0.05,beta=0.05" in out
    assert re.search(r"groups \d+ · games \d+ · LLR \d+\.\d\d \(-2\.94, 2\.94\) · Elo ", out), out
    assert "H1 accepted: heuristic:1.0.0 is stronger than the field" in out
    groups = verdict_groups(out)
    # The verdict is the test run over the stored games, group by group.
    scores = group_scores(db, "g")
    decision = sequential(scores, Sprt(0, 200))
    assert decision.verdict == "H1" and decision.groups == groups
    assert f"LLR {decision.llr:.2f} >= 2.94" in out
    assert 2 * groups <= stored(db, "g") <= 200
    # Stored like any tournament: games, leaderboard.
    games = arena("games", "--db", str(db), "--tournament", "g", "--format", "csv", "--limit", "500")
    assert games.returncode == 0 and len(games.stdout.splitlines()) == 1 + 2 * stored(db, "g")
    board = arena("leaderboard", "--db", str(db), "--tournament", "g", "--format", "json")
    assert board.returncode == 0 and "heuristic:1.0.0" in board.stdout and "random:1.0.0" in board.stdout
    with sqlite3.connect(db) as conn:
        status, config = conn.execute("SELECT status, config FROM tournaments WHERE name = 'g'").fetchone()
    assert status == "finished" and '"gauntlet"' in config and '"elo1": 200.0' in config

    before = stored(db)
    again = arena("gauntlet", "--resume", "--name", "g", "--db", str(db), "--sandbox", "local")
    assert again.returncode == 0, again.stderr
    assert "gauntlet g is finished" in again.stdout and "H1 accepted" in again.stdout
    assert verdict_groups(again.stdout) == groups and stored(db) == before
    # Its schedule is played only as far as its test needs: not as a round robin.
    robin = arena("tournament", "run", "--resume", "--name", "g", "--db", str(db), "--sandbox", "local")
    assert robin.returncode != 0 and "is a gauntlet: arena gauntlet --resume --name g" in robin.stderr
    assert stored(db) == before


def test_an_interrupted_gauntlet_resumes_to_the_same_verdict(
    passed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    db = copy_of(passed[0], tmp_path)
    groups = verdict_groups(passed[1].stdout)
    # As if the arena had been killed after its first five games: the rest is gone.
    with sqlite3.connect(db) as conn:
        first = "SELECT id FROM games ORDER BY id LIMIT 5"  # the ids have gaps: games past a decision are dropped
        conn.execute(f"DELETE FROM game_seats WHERE game_id NOT IN ({first})")
        conn.execute(f"DELETE FROM games WHERE id NOT IN ({first})")
        conn.execute("UPDATE tournaments SET status = 'interrupted'")
    resumed = arena("gauntlet", "--resume", "--name", "g", "--db", str(db), "--sandbox", "local")
    assert resumed.returncode == 0, resumed.stderr
    assert "H1 accepted" in resumed.stdout and verdict_groups(resumed.stdout) == groups
    assert sequential(group_scores(db, "g"), Sprt(0, 200)).groups == groups


def test_a_weaker_bot_at_tables_of_three_fails(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    run = arena(
        "gauntlet", RANDOM, "--vs", HEURISTIC, LOWEST, "--table-size", "3", *LOOSE, "--db", str(db), "--name", "w"
    )
    assert run.returncode == 0, run.stderr
    assert "random:1.0.0 against heuristic:1.0.0, lowest:1.0.0 · tables of 3, 1 table" in run.stdout
    assert "H0 accepted: random:1.0.0 is not shown stronger" in run.stdout
    assert "heuristic:1.0.0" in run.stdout.split("against each opponent")[1]


def test_a_test_that_cannot_decide_stops_at_the_cap(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    # 0 against 5 Elo: a group adds at most log(s1 / s0) = 0.014 to the LLR, 8 groups cannot decide.
    args = ["--sprt", "elo0=0,elo1=5", "--max-games", "17", "--sandbox", "local", "--seed", "2", "--db", str(db)]
    run = arena("gauntlet", LOWEST, "--vs", RANDOM, *args, "--name", "c")
    assert run.returncode == 0, run.stderr
    assert "at most 16 games" in run.stdout  # whole rounds within the cap
    assert re.search(
        r"inconclusive at the cap: LLR -?0\.\d\d still within \(-2\.94, 2\.94\) after 8 deal groups", run.stdout
    )
    assert stored(db, "c") == 16
    again = arena("gauntlet", "--resume", "--name", "c", "--db", str(db), "--sandbox", "local")
    assert "gauntlet c is finished" in again.stdout and stored(db, "c") == 16


def test_without_a_test_a_fixed_number_of_deals(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    run = arena(
        "gauntlet", LOWEST, "--vs", RANDOM, HEURISTIC, "--deals", "2", "--sandbox", "local", "--db", str(db),
        "--name", "f", "--seed", "3",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "2 deals per table (8 games)" in run.stdout and "LLR" not in run.stdout
    assert "done: 4 deal groups, 8 games; lowest:1.0.0 against the field: Elo " in run.stdout
    assert stored(db, "f") == 8
    show = arena("tournament", "show", "f", "--db", str(db)).stdout
    assert "games: 8 of 8 games, 4 deal groups (a fixed number of deals)" in show, show
    assert "verdict: done: lowest:1.0.0 against the field: Elo " in show, show


def test_a_gauntlet_plays_the_game_its_bots_play(tmp_path: Path) -> None:
    """Bots of another game than the first the arena knows: no --game needed, and the
    header names the game by its title."""
    db = tmp_path / "arena.db"
    run = arena(
        "gauntlet", str(SAMPLES / "sixes-heuristic"), "--vs", str(SAMPLES / "sixes-random"), "--deals", "1",
        "--sandbox", "local", "--db", str(db), "--name", "s", "--seed", "3",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "gauntlet s · Sixes · sixes-heuristic:1.0.0 against sixes-random:1.0.0 · tables of 2" in run.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT game FROM tournaments").fetchall() == [("sixes",)]
    assert stored(db, "s") == 2


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one bot, heuristic:1.0.0."""
    db = tmp_path_factory.mktemp("league") / "arena.db"
    assert arena("bot", "add", HEURISTIC, "--db", str(db)).returncode == 0
    return db


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--sprt", "elo0=10,elo1=5"], "--sprt 'elo0=10,elo1=5': elo0=10 must be below elo1=5"),
        (["--sprt", "elo0=0,elo1=0"], "must be below elo1=0"),
        (["--sprt", "alpha=0.5"], "alpha=0.5 must lie strictly between 0 and 0.5"),
        (["--sprt", "beta=0"], "beta=0 must lie strictly between 0 and 0.5"),
        (["--sprt", "elo1:10"], "is not KEY=VALUE with KEY one of elo0, elo1, alpha, beta"),
        (["--sprt", "elo1=x"], "elo1='x' is not a number"),
        (["--max-games", "100"], "--max-games caps a sequential test: add --sprt"),
        (["--sprt", "elo1=10", "--deals", "3"], "with --sprt, cap it with --max-games"),
        (["--sprt", "elo1=10", "--max-games", "1"], "--max-games 1 is less than one round: 2 games"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(league: Path, args: list[str], says: str) -> None:
    db = league
    before = dump(db)
    run = arena("gauntlet", HEURISTIC, "--vs", RANDOM, *args, "--db", str(db), "--sandbox", "local")
    assert run.returncode != 0
    assert says in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert dump(db) == before


def test_a_gauntlet_against_itself_is_refused(league: Path, tmp_path: Path) -> None:
    db = league
    before = dump(db)
    snapshots = sorted(p.name for p in (db.parent / "arena-bots").iterdir())
    for vs in ([HEURISTIC], ["heuristic"], [RANDOM, "heuristic:1.0.0"]):
        run = arena("gauntlet", HEURISTIC, "--vs", *vs, "--sprt", "elo1=10", "--db", str(db), "--sandbox", "local")
        assert run.returncode != 0, vs
        assert "is among its own opponents" in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert dump(db) == before  # not even random was stored
    other_game = arena("gauntlet", str(SAMPLES / "sixes-heuristic"), "--vs", RANDOM, "--db", str(db), "--game", "nimmt")
    assert other_game.returncode != 0 and "does not play nimmt" in other_game.stderr and dump(db) == before
    no_common = arena("gauntlet", str(SAMPLES / "sixes-heuristic"), "--vs", RANDOM, "heuristic", "--db", str(db))
    assert no_common.returncode == 2 and no_common.stderr.count("\n") == 1, no_common.stderr
    assert (
        "no game in common: sixes-heuristic plays sixes; random plays nimmt; heuristic plays nimmt" in no_common.stderr
    )
    assert dump(db) == before and sorted(p.name for p in (db.parent / "arena-bots").iterdir()) == snapshots
    twice = arena("gauntlet", HEURISTIC, "--vs", RANDOM, RANDOM, "--db", str(db), "--sandbox", "local")
    assert twice.returncode != 0 and "--vs names random:1.0.0 twice" in twice.stderr
    missing = tmp_path / "none.db"
    alone = arena("gauntlet", HEURISTIC, "--vs", HEURISTIC, "--db", str(missing))
    assert alone.returncode != 0 and "is among its own opponents" in alone.stderr and not missing.exists()
    no_field = arena("gauntlet", HEURISTIC, "--db", str(missing))
    assert no_field.returncode != 0 and "name the opponents" in no_field.stderr and not missing.exists()


def test_every_view_that_lists_a_gauntlet_says_how_far_its_test_got_and_its_verdict(
    passed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    """`tournament show`, `tournament list` and the web's index and tournament list count a
    gauntlet in deal groups and carry its verdict with its bounds, never its cap's share."""
    import json
    import urllib.request

    from ..conftest import serving

    db = passed[0]
    groups = verdict_groups(passed[1].stdout)
    show = arena("tournament", "show", "g", "--db", str(db))
    assert show.returncode == 0, show.stderr
    assert f"games: SPRT decided after {groups} deal groups, {stored(db, 'g')} games" in show.stdout
    assert re.search(r"verdict: H1 accepted: LLR \d\.\d\d >= 2\.94 \(elo0 = 0, elo1 = \+200\)", show.stdout)
    assert "%)" not in show.stdout and "deals each" not in show.stdout, show.stdout
    assert not re.search(r"\d tables", show.stdout), show.stdout
    listed = json.loads(arena("tournament", "list", "--db", str(db), "--format", "json").stdout)
    assert listed[0]["scheduled"] is None and listed[0]["verdict"].startswith("H1 accepted: LLR")
    wide = {**os.environ, "COLUMNS": "300"}
    table = subprocess.run(
        [ARENA, "tournament", "list", "--db", str(db)], capture_output=True, text=True, env=wide
    ).stdout
    assert f"{stored(db, 'g')} ({groups} deal groups)" in table and "H1 accepted" in table and "/200" not in table

    # Interrupted after five games: its test is under way, counted in deal groups.
    early = copy_of(db, tmp_path)
    with sqlite3.connect(early) as conn:
        first = "SELECT id FROM games ORDER BY id LIMIT 5"  # the ids have gaps: games past a decision are dropped
        conn.execute(f"DELETE FROM game_seats WHERE game_id NOT IN ({first})")
        conn.execute(f"DELETE FROM games WHERE id NOT IN ({first})")
        conn.execute("UPDATE tournaments SET status = 'interrupted', finished = NULL")
    show = arena("tournament", "show", "g", "--db", str(early)).stdout
    assert re.search(r"games: SPRT running: \d deal groups?, 5 games \(at most 200 games\)", show), show
    assert re.search(r"verdict: undecided: LLR -?\d\.\d\d within \(-2\.94, 2\.94\)", show), show

    for database, says in ((db, "H1 accepted: LLR"), (early, "undecided: LLR")):
        with serving(database) as url:
            for page in ("/", "/tournaments", "/tournaments/g"):
                with urllib.request.urlopen(url + page, timeout=30) as response:
                    html = response.read().decode()
                assert says in html and "deal group" in html, (page, html)
                assert "/ 200" not in html and "200 deals each" not in html, page
            with urllib.request.urlopen(url + "/api/tournaments", timeout=30) as response:
                (entry,) = json.loads(response.read())["tournaments"]
            assert entry["games_planned"] is None and entry["standing"]["verdict"].startswith(says)
            with urllib.request.urlopen(url + "/api/tournaments?format=csv", timeout=30) as response:
                assert says in response.read().decode()
