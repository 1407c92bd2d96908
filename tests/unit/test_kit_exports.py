"""``arena.games.kit``, the one module a game author imports, exports exactly what it
promises (as Trio pins its public names): a name added or dropped is a deliberate change
of this list, each name is the arena's own object (not a copy that could drift), no
private or stray name leaks, the type checker sees every name as exported, importing
it loads no heavy layer, and the test games import the arena through it alone."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from arena.games import base, chance, kit, registry

ROOT = Path(__file__).resolve().parents[2]

EXPORTS = {
    "AnyRules": base.AnyRules,
    "Decision": base.Decision,
    "GameRecord": registry.GameRecord,
    "IllegalAnswer": base.IllegalAnswer,
    "Outcome": base.Outcome,
    "Rules": base.Rules,
    "Score": registry.Score,
    "SettingsError": base.SettingsError,
    "competition_ranks": base.competition_ranks,
    "draw": chance.draw,
    "register": registry.register,
}
"""Each name of the kit, and the object it must be."""


def test_the_kit_exports_exactly_these_names() -> None:
    assert kit.__all__ == sorted(EXPORTS)


def test_each_name_is_the_arenas_own_object() -> None:
    for name, origin in EXPORTS.items():
        assert getattr(kit, name) is origin, name


def test_a_star_import_gives_exactly_the_exports() -> None:
    namespace: dict[str, object] = {}
    exec("from arena.games.kit import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(EXPORTS)


def test_no_private_or_stray_name() -> None:
    assert not [name for name in kit.__all__ if name.startswith("_")]
    public = {name for name in vars(kit) if not name.startswith("_")} - {"annotations"}
    assert public == set(EXPORTS), public ^ set(EXPORTS)


def test_the_type_checker_sees_every_name_as_exported(tmp_path: Path) -> None:
    """Under ``--strict`` (no implicit re-export), a name the kit only imported would be
    an error where a game imports it."""
    (tmp_path / "uses_kit.py").write_text(
        textwrap.dedent(
            f"""
            from arena.games.kit import {", ".join(sorted(EXPORTS))}

            names = [{", ".join(sorted(EXPORTS))}]
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", "uses_kit.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout


def test_importing_the_kit_loads_no_heavy_layer() -> None:
    """A game's rules import the kit: it must not bring the terminal, the web, trio or
    Docker into every process that reads the catalog (the check loads them when it runs)."""
    heavy = ("trio", "docker", "starlette", "jinja2", "hypercorn", "numpy", "rich", "arena.render", "arena.botcheck")
    code = f"import sys, arena.games.kit; print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


PARTS = {"frames.py": "arena.web.frames", "render.py": "arena.render", "battery.py": "arena.botcheck"}
"""A game's optional parts build on their layer's helpers (and the replay they draw)."""


def test_the_test_games_import_the_arena_through_the_kit_only() -> None:
    """Rules and records through the kit alone; a part also through its own layer."""
    for path in (ROOT / "tests" / "games").rglob("*.py"):
        allowed = ("arena.games.kit",)
        if path.name in PARTS:
            allowed += (PARTS[path.name], "arena.play.replay", "arena.games.parts")
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                assert not name.startswith("arena") or name.startswith(allowed), (
                    f"{path.relative_to(ROOT)} imports {name}"
                )
