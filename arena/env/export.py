"""``arena bot from-policy``: a trained Python policy of the environment as a bot folder.

The folder holds the policy's module (copied as it is), the files it loads (its weights,
beside it, where ``Path(__file__).parent`` finds them), a ``bot.py`` on the protocol SDK
and a ``bot.toml``. The bot encodes each request's view with the game's array encoding
(``protocol.arrays``, part of the SDK every sandbox holds: the environment's own code, not
a copy) and plays the policy's action as its protocol answer, so it plays in the arena the
moves it plays in the environment. The policy is given what ``env.last()`` gives: a dict of
``"observation"`` and ``"action_mask"``, numpy arrays where the bot's Python has numpy,
else lists of the same whole numbers (the sandboxes' Python has the SDK and msgspec only).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from arena.bots import NAME_RULE, BotError, valid_name

BOT = '''"""{name}: the policy {function} of {module}.py as a Six Arena bot for {title}
(made by `arena bot from-policy`).

Each request's view is encoded as the environment encodes it ({arrays}); the policy
is given {{"observation": ..., "action_mask": ...}} and its action is played as its
protocol answer. An action the mask does not allow is logged on stderr, and the first
legal answer is played instead (the referee would count it a fault).
"""

import importlib
import sys

import msgspec

from protocol.arrays import mask
from protocol.bot import Bot, run
from {module} import {function} as policy

encoding = importlib.import_module("{arrays}")

try:
    import numpy
except ImportError:  # the sandboxes' Python: the SDK and msgspec only
    numpy = None


def arrays(observation, action_mask):
    """What the environment's observe gives, as numpy arrays where there is numpy."""
    if numpy is None:
        return {{"observation": observation, "action_mask": action_mask}}
    return {{
        "observation": numpy.array(observation, dtype=numpy.float32),
        "action_mask": numpy.array(action_mask, dtype=numpy.int8),
    }}


class PolicyBot(Bot):
    name = "{name}"
    version = "{version}"
    games = ("{game}",)

    def hello(self, hello):
        refused = encoding.refuse(hello.settings)
        if refused is not None:
            print(f"{name}: not playing settings {{hello.settings}}: {{refused}}", file=sys.stderr)
        return refused is None and super().hello(hello)

    def decide(self, kind, view, legal):
        allowed = mask(encoding, kind, legal)
        observation = encoding.observation(kind, msgspec.to_builtins(view))
        index = int(policy(arrays(observation, allowed)))
        if 0 <= index < len(allowed) and allowed[index]:
            return encoding.answer(index)
        print(f"{name}: action {{index}} is not legal for this {{kind}}: playing {{legal[0]!r}}", file=sys.stderr)
        return legal[0]


if __name__ == "__main__":
    run(PolicyBot())
'''
RESERVED = ("bot", "protocol", "msgspec", "numpy", "importlib")
"""Module names a policy's file may not have: the bot's own, and what it imports."""


def parse_policy(spec: str) -> tuple[Path, str]:
    """``FILE.py:FUNCTION`` as the file and the function's name; ``BotError`` saying what is wrong."""
    file, colon, function = spec.rpartition(":")
    if not colon or not file or not function:
        raise BotError(f"{spec!r}: name the policy as FILE.py:FUNCTION, e.g. mypolicy.py:act")
    path = Path(file)
    if path.suffix != ".py" or not path.stem.isidentifier():
        raise BotError(f"{spec!r}: the policy's file must be a Python module (NAME.py, NAME an identifier)")
    if path.stem in RESERVED:
        raise BotError(f"{spec!r}: the policy's module may not be named {path.stem} (rename {path.name})")
    if not function.isidentifier():
        raise BotError(f"{spec!r}: {function!r} is not a Python name")
    if not path.is_file():
        raise BotError(f"{path}: no such file")
    return path, function


def defines(path: Path, name: str) -> bool:
    """Whether ``path``'s module defines ``name`` at its top (read, never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, UnicodeDecodeError, OSError) as exc:
        raise BotError(f"{path}: cannot be read as Python: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def export_policy(
    spec: str, name: str, game: str, parent: Path, files: list[Path] | None = None, version: str = "0.1.0"
) -> Path:
    """Write bot ``name``'s folder in ``parent``, playing ``game`` with the policy ``spec``
    (``FILE.py:FUNCTION``) and holding ``files`` beside it; ``BotError`` for a name against
    the rule, a policy that cannot be found, a game without an environment, a file twice."""
    from arena.games.registry import CatalogError, get_game

    if not valid_name(name):
        raise BotError(f"{name!r}: a bot's name is {NAME_RULE}")
    module_file, function = parse_policy(spec)
    if not defines(module_file, function):
        raise BotError(f"{module_file} defines no {function} at its top level")
    try:
        record = get_game(game)
        arrays = record.env_part().arrays
    except CatalogError as exc:
        raise BotError(str(exc)) from None
    extra = [Path(f) for f in files or []]
    names = [module_file.name, *(f.name for f in extra)]
    for path in extra:
        if not path.is_file():
            raise BotError(f"{path}: no such file")
    clash = next((n for n in names if names.count(n) > 1 or n in ("bot.py", "bot.toml")), None)
    if clash is not None:
        raise BotError(f"{clash}: two files of the bot would have this name (rename one)")
    folder = parent / name
    if folder.exists():
        raise BotError(f"{folder}: already there (choose another name, or remove it)")
    folder.mkdir(parents=True)
    try:
        for path in [module_file, *extra]:
            shutil.copyfile(path, folder / path.name)
        (folder / "bot.py").write_text(
            BOT.format(
                name=name,
                version=version,
                game=record.name,
                title=record.title,
                module=module_file.stem,
                function=function,
                arrays=arrays,
            )
        )
        manifest = f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\n'
        manifest += f'games = ["{record.name}"]\n'
        manifest += f'description = "The policy {function} of {module_file.name} (arena bot from-policy)."\n'
        (folder / "bot.toml").write_text(manifest)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder
