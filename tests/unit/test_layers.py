"""The layers of docs/design.md hold: what must never depend on what."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    for path in (ROOT / "protocol").rglob("*.py"):
        for name in imports(path):
            assert not name.startswith("arena"), f"{path.relative_to(ROOT)} imports {name}"


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


NAMED_GAMES = re.compile(
    r"\b(nimmt|sixes|heads|chips|cards?|suits?|pot|dice|bids?|goofspiel|liars?)\b|6 nimmt", re.IGNORECASE
)
"""Words of a game: the built-in ones and the two outside test games (table and SQL
"rows" are every layer's, so they are not among them)."""


def without_strings(tree: ast.AST) -> str:
    """The code with every docstring (of a module, class, function or attribute) left out."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [  # type: ignore[attr-defined]
                ast.Pass() if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) else s for s in body
            ]
    return ast.unparse(tree)


def outside_every_game() -> list[Path]:
    """Every module of the arena but a game's own folder, and the ratings library."""
    games = ROOT / "arena" / "games"
    return [
        path
        for path in [*(ROOT / "arena").rglob("*.py"), *(ROOT / "leaderboard").rglob("*.py")]
        if not (path.parent.parent == games or games in path.parents and path.parent != games)
    ]


def test_nothing_outside_a_game_folder_names_a_game() -> None:
    """A game is one folder: the store, boards, ratings, referee, tournaments, cluster,
    bot check, renderers, CLI and web ask a game's record, never name it. The registry
    names the built-in games' modules (``BUILT_IN``), as ``ARENA_GAMES`` names others."""
    checked = outside_every_game()
    assert ROOT / "arena/cli/main.py" in checked and ROOT / "arena/games/registry.py" in checked
    assert not any("nimmt" in path.parts or "sixes" in path.parts for path in checked)
    for path in checked:
        tree = ast.parse(path.read_text())
        if path.name == "registry.py":
            tree.body = [
                node
                for node in tree.body
                if not (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["BUILT_IN"])
            ]
        named = sorted({m.group(0).lower() for m in NAMED_GAMES.finditer(without_strings(tree))})
        assert not named, f"{path.relative_to(ROOT)} names game things: {named}"


# --- no import cycle, between modules or packages ----------------------------------------

PACKAGES = ("arena", "protocol", "leaderboard")

KNOWN_ELSEWHERE: set[frozenset[str]] = set()
"""Cycles known and not yet removed, each with what removes it: allowed until then, and
failing once gone (``test_the_known_cycles_are_still_there``), so the set only shrinks."""


def modules() -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its own)."""
    found = {}
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Which of ``known`` each module imports: every ``import`` and ``from ... import``
    anywhere in it (inside functions and ``TYPE_CHECKING`` blocks too), relative ones
    resolved; ``from package import module`` imports ``package.module``."""
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([node.module] if node.module else [])])
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
                targets = submodules if len(submodules) == len(node.names) else [*submodules, base]
            for target in targets:
                while target not in known and "." in target:
                    target = target.rpartition(".")[0]
                if target in known and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of nodes that reach one another (a strongly connected component of more
    than one node), as one cycle through all of them, to print."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            if group:
                found.append(sorted([node, *group]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def shown(group: list[str], graph: dict[str, set[str]]) -> str:
    """A group that reach one another: its members and one loop among them."""
    return f"{', '.join(group)} (such as {a_cycle_through(group, graph)})"


def a_cycle_through(group: list[str], graph: dict[str, set[str]]) -> str:
    """``a -> b -> ... -> a``: one loop in ``group``, each step an import."""
    members = set(group)
    start = group[0]
    path, seen = [start], {start}
    while True:
        step = sorted(graph[path[-1]] & members)
        back = [node for node in step if node == start]
        if back and len(path) > 1:
            return " -> ".join([*path, start])
        fresh = [node for node in step if node not in seen]
        if not fresh:  # closes on an earlier node: print that loop
            loop_start = next(node for node in step if node in seen)
            return " -> ".join([*path[path.index(loop_start) :], loop_start])
        path.append(fresh[0])
        seen.add(fresh[0])


def package_graphs(graph: dict[str, set[str]]) -> dict[str, dict[str, set[str]]]:
    """For each package (and the project's top), the graph between its children: a module
    stands for the child of that package holding it (``arena.play.replay`` is
    ``arena.play`` among ``arena``'s children). A game's folder (``arena/games/GAME/``)
    is a child of its own: like a game from outside, it sits on the layers its parts
    use (pictures, frames, battery), and the registry names it without importing it."""
    packages = [""] + sorted(name for name, path in modules().items() if path.name == "__init__.py")
    game_folders = {name for name in packages if name.startswith("arena.games.") and name.count(".") == 2}

    def child(package: str, module: str) -> str | None:
        parts = module.split(".")
        depth = len(package.split(".")) if package else 0
        if parts[:depth] != (package.split(".") if package else []) or len(parts) == depth:
            return None
        if package == "arena" and ".".join(parts[:3]) in game_folders:
            return ".".join(parts[:3])  # a game's folder
        return ".".join(parts[: depth + 1])

    graphs: dict[str, dict[str, set[str]]] = {}
    for package in packages:
        between: dict[str, set[str]] = {}
        for module, imported in graph.items():
            mine = child(package, module)
            if mine is None:
                continue
            between.setdefault(mine, set())
            for target in imported:
                theirs = child(package, target)
                if theirs is not None and theirs != mine:
                    between[mine].add(theirs)
                    between.setdefault(theirs, set())
        graphs[package or "the project"] = between
    return graphs


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """The project's import graph, read once for the tests below."""
    return import_graph(modules())


def test_no_import_cycle_between_modules() -> None:
    graph = project_graph()
    found = cycles(graph)
    for group in found:
        known = " (known, KNOWN_ELSEWHERE)" if frozenset(group) in KNOWN_ELSEWHERE else ""
        print(f"module cycle{known}: {shown(group, graph)}")
    new = [group for group in found if frozenset(group) not in KNOWN_ELSEWHERE]
    assert not new, "import cycles between modules:\n" + "\n".join(shown(group, graph) for group in new)


def test_no_import_cycle_between_packages() -> None:
    """Between the packages of ``arena`` (``arena.x.*`` and ``arena.y.*``), of each of its
    packages, and between ``arena``, ``protocol`` and ``leaderboard``."""
    new = []
    for package, graph in package_graphs(project_graph()).items():
        for group in cycles(graph):
            known = " (known, KNOWN_ELSEWHERE)" if frozenset(group) in KNOWN_ELSEWHERE else ""
            print(f"package cycle{known} in {package}: {shown(group, graph)}")
            if not known:
                new.append(f"in {package}: {shown(group, graph)}")
    assert not new, "import cycles between packages:\n" + "\n".join(new)


def test_the_known_cycles_are_still_there() -> None:
    """A cycle removed elsewhere leaves ``KNOWN_ELSEWHERE``, so none comes back unseen."""
    graph = project_graph()
    found = {frozenset(group) for group in cycles(graph)}
    for between in package_graphs(graph).values():
        found |= {frozenset(group) for group in cycles(between)}
    gone = [sorted(group) for group in KNOWN_ELSEWHERE - found]
    assert not gone, f"no longer a cycle, remove it from KNOWN_ELSEWHERE: {gone}"


def test_the_cycle_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The graph counts imports inside functions, under TYPE_CHECKING, relative ones and
    ``from package import module``; the cycles found are printed whole."""
    known = {name: tmp_path / f"{name}.py" for name in ("p", "p.a", "p.b", "p.c", "p.d")}
    (tmp_path / "p").mkdir()
    known["p"] = tmp_path / "p" / "__init__.py"
    for name in ("a", "b", "c", "d"):
        known[f"p.{name}"] = tmp_path / "p" / f"{name}.py"
    known["p"].write_text("")
    known["p.a"].write_text("def f():\n    from p import b\n")
    known["p.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import X\n")
    known["p.c"].write_text("import p.a\nX = 1\n")
    known["p.d"].write_text("from . import a\n")
    graph = import_graph(known)
    assert graph == {"p": set(), "p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert a_cycle_through(["p.a", "p.b", "p.c"], graph) == "p.a -> p.b -> p.c -> p.a"
