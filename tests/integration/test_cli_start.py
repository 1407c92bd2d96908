"""The ``arena`` command starts light, as real processes: ``--help`` of every command
loads none of what only running needs (``python -X importtime`` lists what it
imported), a local match no Docker SDK, and ``arena`` and ``python -m arena`` say the
same, bad input included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import SAMPLES, loaded

ARENA = str(Path(sys.executable).parent / "arena")
HEAVY = (
    "docker", "requests", "urllib3", "rich", "markdown_it", "pygments", "pydantic", "pydantic_core",
    "typer.rich_utils", "trio", "msgspec", "sqlite3", "_sqlite3", "numpy", "arena.store", "arena.games.registry",
)  # fmt: skip
"""What no ``--help`` loads: the Docker SDK, rich (its markdown and traceback modules
above all), pydantic (typer's validators), trio, msgspec, SQLite, numpy, the store."""
HELPS = [
    [], ["play"], ["demo"], ["replay"], ["leaderboard"], ["games"], ["gauntlet"], ["serve"], ["scheduler"],
    ["worker"], ["submit"], ["backup"], ["check"], ["image"], ["image", "build"], ["bot"], ["bot", "check"],
    ["tournament"], ["tournament", "run"], ["author"], ["game"], ["ladder"], ["ladder", "run"],
]  # fmt: skip


def imported(*args: str) -> set[str]:
    """The modules ``python -X importtime -m arena ARGS`` imported (exit 0 asserted)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    names = {line.rpartition("|")[2].strip() for line in lines[1:]}  # the first is the header
    assert "arena.cli.main" in names, run.stderr[-2000:]
    return names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if n in HEAVY or n.partition(".")[0] in HEAVY)


@pytest.mark.parametrize("words", HELPS, ids=[" ".join(w) or "arena" for w in HELPS])
def test_no_help_imports_what_only_running_needs(words: list[str]) -> None:
    assert heavy(imported(*words, "--help")) == []


@pytest.mark.parametrize("words", [[], ["play"]], ids=["arena", "play"])
def test_the_help_loads_no_other_command_module(words: list[str]) -> None:
    """In ``sys.modules`` too (``importtime`` leaves out what ``importlib`` imports itself)."""
    modules = loaded(*words, "--help")
    assert heavy(modules) == []
    own = {"arena.cli.play", "arena.cli.common", "arena.cli.options"} if words else set()
    assert {m for m in modules if m.startswith("arena.cli.")} == {"arena.cli.main", "arena.cli.lazy", *own}


def test_a_local_match_loads_no_docker_sdk(tmp_path: Path) -> None:
    bots = [str(SAMPLES / "heuristic"), str(SAMPLES / "random")]
    modules = loaded("play", *bots, "--sandbox", "local", "--set", "rounds=1", "--db", str(tmp_path / "none.db"))
    assert "arena.sandbox.local" in modules and "arena.play.referee" in modules  # it did play, locally
    assert not {m.partition(".")[0] for m in modules} & {"docker", "requests", "urllib3", "pydantic", "numpy"}


@pytest.mark.parametrize(
    "args",
    [["--help"], ["play", "--help"], ["tournament", "--help"], [], ["nosuch"], ["play", "--move-time", "abc", "x"]],
    ids=["help", "play help", "tournament help", "nothing", "no such command", "bad value"],
)
def test_arena_and_python_m_arena_say_the_same(args: list[str]) -> None:
    env = {"COLUMNS": "100", "PATH": "/usr/bin:/bin"}
    script = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=60, env=env)
    module = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=60, env=env)
    assert (script.returncode, script.stdout, script.stderr) == (module.returncode, module.stdout, module.stderr)
    assert "Traceback" not in script.stderr
    if args and args[-1] == "--help":
        assert script.returncode == 0 and script.stdout.startswith(f"Usage: arena {' '.join(args[:-1])}".rstrip())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nosuch"], "No such command 'nosuch'"),
        (["play", "--move-time", "abc", "x"], "Invalid value for '--move-time'"),
        (["play", "--move-time", "0", "x"], "Invalid value for '--move-time'"),
        (["tournament", "run", "--deals", "many"], "Invalid value for '--deals'"),
        (["leaderboard", "--nope"], "No such option: --nope"),
        (["replay"], "Missing argument"),
    ],
)
def test_bad_input_is_one_clear_line_and_a_non_zero_exit(args: list[str], says: str) -> None:
    run = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and says in errors[0], run.stderr
