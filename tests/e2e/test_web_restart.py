"""A web server started after tournaments answers at once with what their runs cached.

`arena tournament run` ends by caching, in the database, its board, the board of every
game of its kind (also as the board "after this tournament" when it is the newest of its
kind) and their head-to-head tallies (``arena.boards.standings.settle``). A server started
later serves those instead of computing them: the tests change the cached values in the
file and see the changed values served, marked current; and, once a newer game exists,
never served as current: marked stale until the server's own computation replaces them.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.boards.standings import board_scope, head_to_head_scope
from arena.play import replay
from arena.store import FinishedGame, SeatResult, Store

from ..conftest import SAMPLES, serving
from .test_web import api, tournament_args

BOARD = "nimmt/standard,end_score=30"
BOTS = (SAMPLES / "heuristic", SAMPLES / "random", SAMPLES / "lowest")


@pytest.fixture(scope="module")
def two_runs() -> Iterator[Path]:
    """Two real tournaments of one kind, "first" then "second", played in turn."""
    work = Path(tempfile.mkdtemp(prefix="arena-restart-"))
    os.chmod(work, 0o755)
    db = work / "arena.db"
    for name in ("first", "second"):
        played = subprocess.run(tournament_args(db, name, *BOTS, deals=1), capture_output=True, text=True, timeout=180)
        assert played.returncode == 0, played.stderr
    yield db
    shutil.rmtree(work, ignore_errors=True)


def _ids(db: Path) -> tuple[str, str, int, int]:
    with Store(db) as store:
        first, second = store.get_tournament("first"), store.get_tournament("second")
        assert first is not None and second is not None
        return first.game, first.variant, first.id, second.id


def _rewrite(db: Path, scope: str, change: Any) -> None:
    """Change the value cached under ``scope`` in the file, as no computation would."""
    with sqlite3.connect(db) as connection:
        (text,) = connection.execute("SELECT board FROM ratings WHERE scope = ?", (scope,)).fetchone()
        value = msgspec.json.decode(text)
        change(value)
        connection.execute("UPDATE ratings SET board = ? WHERE scope = ?", (msgspec.json.encode(value).decode(), scope))


def _set_elo(bot: str, elo: float) -> Any:
    def change(rows: list[dict[str, Any]]) -> None:
        next(r for r in rows if r["bot"] == bot)["elo"] = elo

    return change


def test_a_run_caches_its_boards_its_kinds_and_their_head_to_head(two_runs: Path) -> None:
    game, variant, first, second = _ids(two_runs)
    with sqlite3.connect(two_runs) as connection:
        scopes = {row[0] for row in connection.execute("SELECT scope FROM ratings")}
    assert {
        board_scope(game, variant),
        board_scope(game, variant, "first"),
        board_scope(game, variant, "second"),
        board_scope(game, variant, None, first),
        board_scope(game, variant, None, second),
        head_to_head_scope(game, variant, None),
        head_to_head_scope(game, variant, "first"),
        head_to_head_scope(game, variant, "second"),
    } <= scopes


def test_a_restarted_server_serves_the_cached_boards_as_current(two_runs: Path) -> None:
    game, variant, first, _ = _ids(two_runs)
    bot = "heuristic:1.0.0"
    _rewrite(two_runs, board_scope(game, variant), _set_elo(bot, 1234.5))
    _rewrite(two_runs, board_scope(game, variant, None, first), _set_elo(bot, 1111.1))
    _rewrite(two_runs, board_scope(game, variant, "second"), _set_elo(bot, 1222.2))

    def more_games(tally: dict[str, Any]) -> None:
        tally["games"][0][1] = tally["games"][1][0] = 999

    _rewrite(two_runs, head_to_head_scope(game, variant, None), more_games)
    with serving(two_runs) as url:
        (board,) = api(f"{url}/api/leaderboard?board={BOARD}")["boards"]
        assert next(r for r in board["rows"] if r["bot"] == bot)["elo"] == 1234.5
        assert board["stale"] is False
        assert 999 in (board["head_to_head"]["games"][0][1], board["head_to_head"]["games"][1][0])
        standings = api(f"{url}/api/tournaments/second")["standings"]
        assert next(r for r in standings["rows"] if r["bot"] == bot)["elo"] == 1222.2 and not standings["stale"]
        (history,) = api(f"{url}/api/bots/{bot}")["ratings"]
        assert [p["elo"] for p in history["points"]] == [1111.1, 1234.5], "after first, then today's board"
        assert history["stale"] is False


def test_a_newer_game_marks_the_cached_board_stale_until_computed(two_runs: Path) -> None:
    game, variant, _, second = _ids(two_runs)
    bot = "heuristic:1.0.0"
    _rewrite(two_runs, board_scope(game, variant), _set_elo(bot, 1234.5))
    with Store(two_runs) as store:
        stored = store.find_games(second, limit=1)[0]
        ids = [store.get_bot(s.bot).id for s in stored.seats]
        data = store.replay(stored.id)
        seats = [SeatResult(i, s.rank, s.score, s.status, {}) for i, s in zip(ids, stored.seats, strict=True)]
        store.save_game(
            FinishedGame(second, 99, 0, 0, stored.seed, game, variant, stored.rounds, 1.0, stored.started, seats, data)
        )
        assert replay.loads(data, "copied")  # a real game's replay, stored once more
    with serving(two_runs) as url:
        # Served at once marked stale (the start's warm-up may already have computed
        # it: a board of a few games takes milliseconds), never the old value as current.
        (board,) = api(f"{url}/api/leaderboard?board={BOARD}")["boards"]
        tampered = next(r for r in board["rows"] if r["bot"] == bot)["elo"] == 1234.5
        assert board["stale"] or not tampered
        deadline = time.monotonic() + 60
        while board["stale"] and time.monotonic() < deadline:
            time.sleep(0.2)
            (board,) = api(f"{url}/api/leaderboard?board={BOARD}")["boards"]
        assert board["stale"] is False, "computed at last"
        assert next(r for r in board["rows"] if r["bot"] == bot)["elo"] != 1234.5
