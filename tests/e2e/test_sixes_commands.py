"""Sixes through the `arena` command: `arena play --game sixes`, its replay in the terminal
(columns, the table strip, moments, step mode) and its errors in one line."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena.games.sixes import render
from arena.play import replay
from protocol.sixes import Pass, Play, RoundEnd

from ..conftest import SAMPLES
from .test_cli import ARENA, assert_clean_error

HEURISTIC = SAMPLES / "sixes-heuristic"
RANDOM = SAMPLES / "sixes-random"


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``arena play --game sixes`` of the two sample bots, its replay written."""
    path = tmp_path_factory.mktemp("sixes") / "game.jsonl"
    played = arena(
        "play",
        "--game",
        "sixes",
        str(HEURISTIC),
        str(RANDOM),
        "--sandbox",
        "local",
        "--seed",
        "4",
        "--replay",
        str(path),
    )
    assert played.returncode == 0, played.stderr
    assert "round  1  " in played.stdout and "Final standings" in played.stdout
    assert "A sixes-heuristic" in played.stdout and "B sixes-random" in played.stdout
    return path


def logged_events(path: Path) -> list[Any]:
    lines = replay.read(path)
    return [event for step in replay.verify(lines) for event in step.events]


def test_arena_replay_shows_the_four_suit_columns_and_every_turn(game: Path) -> None:
    shown = arena("replay", str(game))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    header = next(line for line in out.splitlines() if line.lstrip().startswith("turn"))
    assert header.split() == ["turn", "move", "oros", "copas", "espadas", "bastos"]
    events = logged_events(game)
    for event in events:
        if isinstance(event, Play):
            assert f"{chr(65 + event.seat)} plays {event.card}" in out
        elif isinstance(event, Pass) and event.paid:
            assert f"{chr(65 + event.seat)} passes, pays 1 chip (pot {event.pot})" in out
        elif isinstance(event, RoundEnd):
            assert f"After round {event.round}: {'AB'[event.winner]} " in out
    assert "Final standings" in out


def test_the_table_strip_grows_from_the_six(game: Path) -> None:
    out = arena("replay", str(game), "--round", "1").stdout
    first = next(line for line in out.splitlines() if " plays 6o" in line)
    assert first.split()[-4:] == ["·····6····", "··········", "··········", "··········"]


def test_a_round_and_turn_start_at_that_moment(game: Path) -> None:
    out = arena("replay", str(game), "--round", "1", "--turn", "3").stdout
    assert "Round 1, from turn 3" in out
    assert "table before turn 3" in out
    rows = [line.split() for line in out.split("After round 1")[0].splitlines()]
    turns = [row[0] for row in rows if len(row) > 2 and row[0].isdigit() and row[2] in ("plays", "passes,")]
    assert turns[0] == "3" and turns == [str(t) for t in range(3, 3 + len(turns))]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--round", "999"], "round 999 does not exist: this game has"), (["--turn", "999"], "turn 999 does not exist")],
)
def test_a_moment_that_does_not_exist_is_one_error_line(game: Path, args: list[str], message: str) -> None:
    result = arena("replay", str(game), *args)
    assert_clean_error(result, message)


def test_step_mode_waits_after_each_turn(game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    typed = iter(["", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    console = Console(file=io.StringIO(), width=100)
    lines = replay.read(game)
    render.show_replay(console, lines, list(replay.verify(lines)), None, None, True)
    assert isinstance(console.file, io.StringIO)
    out = console.file.getvalue()
    assert "time" in out.splitlines()[next(i for i, x in enumerate(out.splitlines()) if "oros" in x)]
    moves = [line for line in out.splitlines() if " plays " in line or " passes" in line]
    assert len(moves) == 2 and "Final standings" not in out


def test_a_bot_for_another_game_is_not_seated() -> None:
    result = arena("play", "--game", "sixes", str(HEURISTIC), str(SAMPLES / "random"), "--sandbox", "local")
    assert_clean_error(result, "does not play sixes")


def test_bad_sixes_settings_on_the_command_line() -> None:
    result = arena("play", "--game", "sixes", str(HEURISTIC), str(RANDOM), "--sandbox", "local", "--set", "chips=0")
    assert_clean_error(result, "chips must be 1 to 100, not 0")
