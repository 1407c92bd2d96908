"""A third game, Goofspiel, kept in ``tests/games/goofspiel/`` and registered only
through ``ARENA_GAMES``, goes through every command a game goes through: play, replay,
replay --html, bot check, tournament and leaderboard, each a real ``arena`` process
with real bot processes in the local sandbox and a real SQLite file.

Its record has no optional part, so this also proves the generic fallbacks (events as
JSON lines, generic frames, the generic battery). The web tests reuse ``goofspiel_db``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import msgspec
import pytest

from arena.games import registry as catalog
from arena.games.nimmt import GAME as NIMMT
from arena.games.registry import ENV, games
from arena.play import replay

from ..games.goofspiel.helpers import arena, goofspiel_bots, goofspiel_db
from ..games.goofspiel.record import ENV_VALUE, GOOFSPIEL
from ..games.goofspiel.wire import Bids, GameEnd
from .test_cli import assert_clean_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bots(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return goofspiel_bots(tmp_path_factory.mktemp("goofspiel") / "bots")


@pytest.fixture(scope="module")
def played(bots: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``arena play`` of the three Goofspiel bots: its output and its replay file."""
    out = tmp_path_factory.mktemp("goofspiel-play") / "game.jsonl"
    result = arena(
        "play", *map(str, bots), "--game", "goofspiel", "--sandbox", "local", "--seed", "4", "--replay", str(out)
    )
    assert result.returncode == 0, result.stderr
    return result.stdout, out


@pytest.fixture(scope="module")
def goofspiel_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding a finished Goofspiel tournament (see ``helpers.goofspiel_db``)."""
    return goofspiel_db(tmp_path_factory.mktemp("goofspiel-db"))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Goofspiel registered in this process too, as the ``arena`` children have it (the
    catalog reads the variable at each question: the game is gone after the test)."""
    monkeypatch.setenv(ENV, ENV_VALUE)
    assert "goofspiel" in games()


def test_registered_holds_a_game_for_the_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert "goofspiel" not in games()
    with catalog.registered(GOOFSPIEL) as record:
        assert record is GOOFSPIEL and catalog.get_game("goofspiel") is GOOFSPIEL
    assert "goofspiel" not in games()
    with pytest.raises(catalog.CatalogError, match="unknown game 'goofspiel'"):
        catalog.get_game("goofspiel")
    stand_in = dataclasses.replace(NIMMT, title="Stand-in")
    with pytest.raises(RuntimeError), catalog.registered(stand_in):
        assert catalog.get_game("nimmt") is stand_in
        raise RuntimeError
    assert catalog.get_game("nimmt") is NIMMT, "the record it replaced is back"


def test_play_shows_the_events_as_json_lines_and_the_standings(played: tuple[str, Path], registered: None) -> None:
    stdout, path = played
    lines = replay.read(path)
    steps = list(replay.verify(lines))  # the rules agree with what the referee logged
    events = [event for step in steps for event in step.events]
    bids = [e for e in events if isinstance(e, Bids)]
    assert len(bids) == 8  # the default 8 cards: 8 turns
    for event in bids:
        assert msgspec.json.encode(event).decode() in stdout
    assert "Final standings" in stdout and "A goofspiel-match" in stdout and "C goofspiel-low" in stdout
    end = lines[-1]
    assert isinstance(end, replay.End) and all(s.status == "ok" for s in end.statuses)
    game_end = events[-1]
    assert isinstance(game_end, GameEnd) and list(game_end.scores) == end.scores
    # The bots bid as their folders say: "high" spends its 8 first, "low" its 1.
    assert bids[0].bids[1] == 8 and bids[0].bids[2] == 1


def test_replay_shows_each_step_and_the_standings(played: tuple[str, Path], registered: None) -> None:
    _, path = played
    result = arena("replay", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "goofspiel replay" in out and "settings: cards=8" in out
    first = next(step for step in replay.verify(replay.read(path)) if step.events)
    assert msgspec.json.encode(first.events[0]).decode() in out
    assert re.search(r"A bid \d+ \(", out) and "step 9" in out and "Final standings" in out
    from_step = arena("replay", str(path), "--round", "1", "--turn", "5")
    assert from_step.returncode == 0 and "from step 5" in from_step.stdout and "step 4\n" not in from_step.stdout
    assert_clean_error(arena("replay", str(path), "--round", "1", "--turn", "99"), "turn 99 does not exist")


def test_replay_html_holds_every_step(played: tuple[str, Path], tmp_path: Path, registered: None) -> None:
    _, path = played
    page = tmp_path / "game.html"
    result = arena("replay", str(path), "--html", str(page))
    assert result.returncode == 0, result.stderr
    html = page.read_text()
    events = [e for step in replay.verify(replay.read(path)) for e in step.events]
    for event in events:
        assert msgspec.json.encode(event).decode() in html


def test_bot_check_runs_the_generic_battery(bots: list[Path]) -> None:
    result = arena("bot", "check", str(bots[0]), "--sandbox", "local")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("2 players", "4 players", "6 players", "two games in one session", "request ids that are not"):
        assert f"goofspiel: {name}" in result.stdout
    assert "7 passed, 0 failed" in result.stdout


def test_a_tournament_stores_and_rates_it(goofspiel_board: Path) -> None:
    table = arena("leaderboard", "--db", str(goofspiel_board))
    assert table.returncode == 0, table.stderr
    assert "Goofspiel (goofspiel/standard)" in table.stdout
    board = json.loads(arena("leaderboard", "--db", str(goofspiel_board), "--format", "json").stdout)
    rows = board["goofspiel/standard"]
    assert sorted(r["bot"] for r in rows) == ["goofspiel-high:1.0.0", "goofspiel-low:1.0.0", "goofspiel-match:1.0.0"]
    assert sum(r["games"] for r in rows) == 2 * 12  # 3 tables x 2 deals x 2 rotations, two seats each
    assert rows[0]["bot"] == "goofspiel-match:1.0.0"  # it never wastes a big card on a small prize


def test_a_bad_registration_is_one_line_naming_it(played: tuple[str, Path]) -> None:
    import os
    import subprocess

    from ..games.goofspiel.helpers import goofspiel_env
    from ..games.outside import ARENA

    _, path = played
    for value, needle in (
        ("tests.games.nowhere:GAME", "cannot import tests.games.nowhere"),
        ("tests.games.goofspiel.record:rules", "is a module, not a GameRecord"),
        ("tests.games.goofspiel.record", "expected MODULE:ATTRIBUTE"),
    ):
        env = {**goofspiel_env(), ENV: value}
        result = subprocess.run([ARENA, "replay", str(path)], capture_output=True, text=True, env=env, timeout=60)
        assert_clean_error(result, f"ARENA_GAMES entry {value!r}", needle)
        assert len(result.stderr.strip().splitlines()) == 1
    unregistered = {k: v for k, v in os.environ.items() if k != ENV}
    result = subprocess.run([ARENA, "replay", str(path)], capture_output=True, text=True, env=unregistered, timeout=60)
    assert_clean_error(result, "unknown game 'goofspiel'", "nimmt, sixes")


def test_nothing_outside_its_folder_names_the_game() -> None:
    """The proof by construction: the arena, the protocol and the leaderboard never name it."""
    for folder in ("arena", "protocol", "leaderboard", "sample_bots", "bench"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".js", ".html", ".toml", ".css"):
                assert "goofspiel" not in path.read_text().lower(), path
    assert (
        GOOFSPIEL.renderer is None
        and GOOFSPIEL.web is None
        and GOOFSPIEL.scenarios is None
        and GOOFSPIEL.drawer is None
    )


def test_the_built_in_games_register_as_an_outside_game_does() -> None:
    """Each built-in record lives in its game's folder and the registry names it as
    ``ARENA_GAMES`` names Goofspiel; it imports no game, and no part of one, itself."""
    from arena.games import nimmt, sixes

    assert catalog.BUILT_IN == ("arena.games.nimmt:GAME", "arena.games.sixes:GAME")
    assert catalog.get_game("nimmt") is nimmt.GAME and catalog.get_game("sixes") is sixes.GAME
    named = sorted(module_imports()["arena.games.registry"])
    assert named == ["arena.games.base", "arena.games.parts"], named
    for record in (nimmt.GAME, sixes.GAME):
        for part in (record.renderer, record.web, record.scenarios, record.drawer):
            assert isinstance(part, str) and part.startswith(f"arena.games.{record.name}")


def module_imports() -> dict[str, set[str]]:
    """Every module of the arena and the protocol, and the modules it imports anywhere
    (at the top, inside functions, under ``TYPE_CHECKING``)."""
    import ast

    modules = {}
    for package in ("arena", "protocol", "leaderboard"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def test_no_import_cycle_runs_through_the_registry() -> None:
    """Was: registry -> pictures, web frames, battery -> replay -> registry (13 modules)."""
    graph = module_imports()
    start = "arena.games.registry"
    seen, stack = set(), list(graph[start])
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(graph[name])
    assert start not in seen, f"the registry imports, through others, itself: {sorted(seen)}"
    assert seen <= {"arena.games.base", "arena.games.parts", "arena.games.chance"}, sorted(seen)
