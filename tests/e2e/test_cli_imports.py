"""The ``arena`` command starts fast: each command loads only what it uses.

``arena --help`` reads every command module, so a heavy import added at the top of
any of them (trio, Docker's SDK, numpy, the web stack) slows every command; these
tests run the real command in a fresh interpreter and list what it loaded."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from arena.cli import common as cli_common
from arena.cli import main as cli

from ..conftest import SAMPLES, loaded

ARENA = str(Path(sys.executable).parent / "arena")
HEAVY = ("trio", "docker", "numpy", "starlette", "hypercorn", "jinja2", "distributed", "dask")
"""Packages no command may load unless it uses them."""
RUNNING = (
    "arena.play.referee",
    "arena.sandbox",
    "arena.tournaments.roundrobin",
    "arena.store",
    "arena.web",
    "arena.boards",
    "leaderboard",
)
"""What only a command that runs (or reads) something needs: never loaded for ``--help``."""


def run_arena(*args: str) -> str:
    """What ``arena ARGS`` printed on stdout (exit 0 asserted), in a wide terminal."""
    env = {**os.environ, "COLUMNS": "200"}
    run = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout


def heavy(modules: set[str]) -> list[str]:
    return sorted({m.partition(".")[0] for m in modules} & set(HEAVY))


def running(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(RUNNING))


@pytest.fixture(scope="module")
def small_db() -> Iterator[Path]:
    """Two games really played (heuristic against random, one deal in both seat orders)."""
    base = Path(tempfile.mkdtemp(prefix="arena-test-imports-"))
    db = base / "small.db"
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random")]
    run = subprocess.run(
        [ARENA, "tournament", "run", *bots, "--deals", "1", "--seed", "2", "--sandbox", "local", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    yield db
    shutil.rmtree(base, ignore_errors=True)


def test_importing_the_cli_loads_nothing_heavy() -> None:
    code = "import json, sys; import arena.cli.main; print(json.dumps(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    modules = set(json.loads(run.stdout))
    assert heavy(modules) == []
    assert running(modules) == []


def test_the_match_types_and_schedules_load_no_referee() -> None:
    """``arena.play.match`` is what a schedule holds and what a match ships in and out: data only."""
    code = (
        "import json, sys; import arena.play.match, arena.tournaments.schedule; print(json.dumps(sorted(sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    modules = set(json.loads(run.stdout))
    assert heavy(modules) == []
    assert running(modules) == []


def test_help_loads_nothing_heavy() -> None:
    modules = loaded("--help")
    assert "arena.cli.lazy" in modules  # it did draw the help
    assert heavy(modules) == []
    assert running(modules) == []
    assert not {"typer.rich_utils", "rich", "pydantic"} & modules  # plain help, no option coerced by a validator
    assert not {m for m in modules if m.startswith("arena.cli.")} - {"arena.cli.main", "arena.cli.lazy"}
    assert "arena.games.registry" not in modules  # no help text lists the games by reading them
    played = loaded("tournament", "run", "--help")
    assert heavy(played) == [] and running(played) == [] and "arena.cli.tournaments" in played
    assert "arena.cli.gauntlet" not in played and "arena.games.registry" not in played


def test_games_and_leaderboard_load_no_referee_sandbox_or_web(small_db: Path) -> None:
    games = loaded("games", "--db", str(small_db))
    assert "arena.store" in games
    assert heavy(games) == []
    cached = loaded("leaderboard", "--db", str(small_db))  # the run cached its board as it ended
    assert "arena.boards.standings" in cached and "leaderboard.ratings" not in cached
    assert heavy(cached) == []
    with sqlite3.connect(small_db) as connection:
        connection.execute("DELETE FROM ratings")
    board = loaded("leaderboard", "--db", str(small_db))
    assert "leaderboard.ratings" in board
    assert heavy(board) == ["numpy"]  # the fit's, and only that


def test_tournament_list_and_show_load_no_trio_or_docker(small_db: Path) -> None:
    listed = loaded("tournament", "list", "--db", str(small_db), "--format", "json")
    assert "arena.tournaments.plan" in listed  # it did count the scheduled games
    assert heavy(listed) == [] and not any(m.startswith(("arena.play.referee", "arena.sandbox")) for m in listed)
    name = json.loads(run_arena("tournament", "list", "--db", str(small_db), "--format", "json"))[0]["name"]
    shown = loaded("tournament", "show", name, "--db", str(small_db))
    assert heavy(shown) == [] and not any(m.startswith(("arena.play.referee", "arena.sandbox")) for m in shown)


def test_no_sub_app_module_imports_the_main_module() -> None:
    modules = (
        "common", "options", "sandbox", "tournaments", "results", "gauntlet", "ladder", "web", "live", "play",
        "replay", "bots", "images", "games",
    )  # fmt: skip
    for module in modules:
        code = f"import sys; import arena.cli.{module}; assert 'arena.cli.main' not in sys.modules"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, f"arena.cli.{module} imports arena.cli.main: {run.stderr}"


def test_every_command_is_registered_in_its_place() -> None:
    group = typer.main.get_command(cli.app)
    assert isinstance(group, typer.core.TyperGroup)
    assert list(group.commands) == [
        "play",
        "demo",
        "replay",
        "leaderboard",
        "games",
        "gauntlet",
        "serve",
        "scheduler",
        "worker",
        "submit",
        "backup",
        "check",
        "image",
        "bot",
        "tournament",
        "author",
        "game",
        "ladder",
    ]
    tournament = group.commands["tournament"]
    assert isinstance(tournament, typer.core.TyperGroup)
    assert list(tournament.commands) == ["run", "list", "show", "delete"]
    author = group.commands["author"]
    assert isinstance(author, typer.core.TyperGroup)
    assert list(author.commands) == ["add", "list", "revoke", "reissue"]
    game = group.commands["game"]
    assert isinstance(game, typer.core.TyperGroup) and list(game.commands) == ["check"]


def test_the_gauntlet_help_states_the_default_cap() -> None:
    from arena.tournaments.plan import DEFAULT_MAX_GAMES

    assert f"(default {DEFAULT_MAX_GAMES})" in " ".join(run_arena("gauntlet", "--help").split())


def test_a_user_error_is_one_line_though_its_module_was_loaded_late() -> None:
    """The user errors are looked up among the modules loaded when one is raised."""
    from arena.store import StoreError

    with pytest.raises(typer.Exit) as stopped, cli_common.user_errors():
        raise StoreError("spring.db: not an arena database")
    assert stopped.value.exit_code == 2
    with pytest.raises(typer.Exit), cli_common.user_errors():
        raise ExceptionGroup("a nursery's", [StoreError("deep")])
    with pytest.raises(KeyError), cli_common.user_errors():  # a bug stays a traceback
        raise KeyError("nimmt")


def test_bad_input_to_a_lazy_command_is_still_one_clean_line(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("not a database\n" * 100)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    run = subprocess.run([ARENA, "games", "--db", str(bogus)], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and str(bogus) in " ".join(lines), run.stderr
