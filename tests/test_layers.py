"""The layers of docs/design.md hold: what must never depend on what."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAME_WORDS = re.compile(r"\b(nimmt|sixes|heads|rows?|cards?|chips|pot|suit)\b", re.IGNORECASE)


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(("." * node.level) + (node.module or ""))
    return found


def code_without_docs(path: Path) -> str:
    """The source with docstrings and comments removed: what the code itself names."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            body[0] = ast.Pass()
    return ast.unparse(tree)


def test_the_referee_and_the_layers_under_it_name_no_game() -> None:
    for module in [
        "arena/play/referee.py",
        "arena/play/match.py",
        "arena/tournaments/roundrobin.py",
        "arena/tournaments/schedule.py",
        *map(str, Path("arena/sandbox").glob("*.py")),
    ]:
        code = code_without_docs(ROOT / module)
        named = sorted({m.group(0).lower() for m in GAME_WORDS.finditer(code)})
        assert not named, f"{module} names game things: {named}"


def test_games_import_no_layer_above_them() -> None:
    """The rules and what they are built on; a game's other parts (its record, pictures,
    frames, battery) and the registry's part shapes sit above them in its folder."""
    rules = [ROOT / "arena/games" / name for name in ("__init__.py", "base.py", "chance.py")]
    for path in [*rules, *(ROOT / "arena/games").glob("*/rules.py")]:
        for name in imports(path):
            if name in ("arena.games", "arena.games.base", "arena.games.chance"):
                continue
            assert not name.startswith(("trio", "arena.", "..", "subprocess", "docker", "typer", "rich", "sqlite3")), (
                f"{path.name} imports {name}"
            )


def test_protocol_imports_nothing_from_arena() -> None:
    for path in (ROOT / "protocol").glob("*.py"):
        for name in imports(path):
            assert not name.startswith("arena"), f"protocol/{path.name} imports {name}"


def test_only_the_store_writes_sql() -> None:
    for path in [*(ROOT / "arena").rglob("*.py"), *(ROOT / "leaderboard").glob("*.py")]:
        if path.parent.name == "store":  # the store: its tables of bots and games, and of submissions
            continue
        code = code_without_docs(path)
        assert not re.search(r"\b(INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b", code), f"{path} writes SQL"
        assert "import sqlite3" not in code, f"{path} talks to SQLite itself"


def test_reading_the_catalog_loads_no_heavy_layer() -> None:
    """Every command asks the catalog; its optional parts load only when asked for."""
    import subprocess
    import sys

    heavy = ("trio", "docker", "starlette", "jinja2", "hypercorn", "numpy", "rich", "arena.render", "arena.botcheck")
    code = (
        "import sys, arena.games.registry as c; c.get_game('nimmt').default_settings(); c.games();"
        f" print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


def test_the_web_imports_no_command() -> None:
    """The web reads the store as the CLI does, through the layers under both, never
    through a command's module."""
    for path in (ROOT / "arena/web").glob("*.py"):
        for name in imports(path):
            assert not name.lstrip(".").startswith(("cli", "arena.cli.main")), f"{path.name} imports {name}"


def test_the_ratings_library_knows_neither_the_store_nor_the_terminal() -> None:
    """``leaderboard/`` is math over arrays (fit, head-to-head, SPRT): loading boards from
    the store and showing them is ``arena.boards``."""
    for path in (ROOT / "leaderboard").glob("*.py"):
        for name in imports(path):
            assert not name.startswith(("arena", "rich", "sqlite3", "..", "typer", "msgspec")), (
                f"leaderboard/{path.name} imports {name}"
            )


def test_the_store_and_the_boards_name_no_game() -> None:
    """Boards, their keys and their columns come from each game's record."""
    words = re.compile(r"\b(nimmt|sixes|heads|chips|cards?|suit|pot)\b", re.IGNORECASE)
    for path in [*(ROOT / "arena/store").glob("*.py"), *(ROOT / "arena/boards").glob("*.py")]:
        named = sorted({m.group(0).lower() for m in words.finditer(code_without_docs(path))})
        assert not named, f"{path.relative_to(ROOT)} names game things: {named}"
