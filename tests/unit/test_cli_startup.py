"""The ``arena`` command answers at once without losing a word of its help: the list
``arena --help`` prints without loading a command is each command's own summary, every
command's help shows each option with its help and default, and the quick coercion of
option values gives what typer's own gives (or the same refusal)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer import BadParameter
from typer._click import Command, Context
from typer._coercion import build_runtime_param
from typer.core import TyperGroup, _TyperParameter

from arena.cli import main as cli
from arena.cli.lazy import SLOW, Commands, Quick, quick, summary_of


def tree() -> Iterator[tuple[list[str], Command, Context]]:
    """Every command and group of ``arena`` (all loaded), with its path and a context."""
    root = typer.main.get_command(cli.app)

    def walk(path: list[str], command: Command, parent: Context | None) -> Iterator[tuple[list[str], Command, Context]]:
        ctx = command.context_class(command, info_name=path[-1], parent=parent)
        yield path, command, ctx
        if isinstance(command, TyperGroup):
            for name in command.list_commands(ctx):
                yield from walk([*path, name], command.commands[name], ctx)

    return walk(["arena"], root, None)


TREE = list(tree())


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_list_is_each_commands_own_summary() -> None:
    root = typer.main.get_command(cli.app)
    commands = root.commands
    assert isinstance(commands, Commands)
    assert [name for name, _ in cli.COMMANDS] == list(commands)
    for name, later in cli.COMMANDS:
        assert commands.summary(name) == later.summary  # read from the table, nothing loaded
        assert summary_of(commands[name]) == later.summary, f"arena {name}: its help changed, COMMANDS did not"


def test_the_help_of_arena_lists_every_command_whole() -> None:
    root = typer.main.get_command(cli.app)
    ctx = root.context_class(root, info_name="arena")
    text = flat(root.get_help(ctx))
    for name, later in cli.COMMANDS:
        assert f"{name} {later.summary}" in text


@pytest.mark.parametrize(("path", "command", "ctx"), TREE, ids=[" ".join(p) for p, _, _ in TREE])
def test_every_help_shows_each_option_with_its_help_and_default(
    path: list[str], command: Command, ctx: Context
) -> None:
    text = command.get_help(ctx)
    assert "╭" not in text and "\x1b" not in text  # plain text, drawn without rich
    words = flat(text)
    assert flat(command.help or "") in words
    for param in command.get_params(ctx):
        for name in [*param.opts, *param.secondary_opts] if param.param_type_name == "option" else []:
            assert name in text, f"{' '.join(path)}: {name} is missing from its help"
        helped = getattr(param, "help", None)
        if helped:
            assert flat(helped) in words, f"{' '.join(path)} {param.name}: its help is missing"
        if getattr(param, "show_default", None) is not False and param.default not in (None, False, [], ()):
            assert "[default: " in words, f"{' '.join(path)} {param.name}: its default is missing"
        record = param.get_help_record(ctx)
        assert record is not None or param.hidden
        if record is not None:  # its name and type, default, range, requirement as typer states them
            assert record[0] in text and flat(record[1]) in words, f"{' '.join(path)} {param.name}"


def samples(annotation: Any) -> list[Any]:
    """Values a user or a default gives an option of ``annotation``, good and bad."""
    words = [
        "", " ", "abc", "0", "007", "-0", "\u0663", "3", "-2", "+7", "1_000", " 5", "0.5", "-.5", "1e3", "1.", "nan",
        "inf", "x.db", ".", "9" * 30, "9" * 5000,
    ]  # fmt: skip
    if getattr(annotation, "__origin__", None) is list:
        return [(), ("a", "b"), ("3",), ("x", ""), [Path("p")], *((w,) for w in words), ("3", "x", "-1.5")]
    return [*words, True, False, 0, 1, 2.5, -1, 10**6, Path("x.db"), Path("")]


def coerced(runtime: Any, value: Any, param: _TyperParameter, ctx: Context) -> tuple[str, Any]:
    try:
        return "value", runtime.coerce(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return "refused", exc.format_message()


PARAMS = [
    (" ".join([*path, param.name or ""]), param, ctx)
    for path, command, ctx in TREE
    for param in command.params
    if isinstance(param, _TyperParameter)
]


@pytest.mark.parametrize(("where", "param", "ctx"), PARAMS, ids=[w for w, _, _ in PARAMS])
def test_the_quick_coercion_gives_what_typers_gives(where: str, param: _TyperParameter, ctx: Context) -> None:
    descriptor = param.type_descriptor
    assert isinstance(param._runtime_param, Quick), f"{where}: coerced by typer's validator from the start"
    mine = Quick(annotation=descriptor.annotation, parameter_info=descriptor.parameter_info)
    for value in [param.default, *samples(descriptor.annotation)]:
        param._runtime_param = None
        typers = coerced(build_runtime_param(descriptor), value, param, ctx)
        param._runtime_param = mine
        assert coerced(mine, value, param, ctx) == typers, f"{where} given {value!r}"
        param._runtime_param = mine


def test_the_quick_coercion_needs_no_validator_for_the_common_values() -> None:
    """What the defaults and a typed path, number or name need is taken without pydantic."""
    (param, ctx) = next((p, c) for w, p, c in PARAMS if w == "arena leaderboard db")
    assert quick(Path, "spring.db", param, ctx) == Path("spring.db")
    assert quick(str, "nimmt", param, ctx) == "nimmt"
    assert quick(bool, True, param, ctx) is True
    assert quick(int, "12", param, ctx) == 12 and quick(float, "0.25", param, ctx) == 0.25
    assert quick(list[str], ("a", "b"), param, ctx) == ["a", "b"]
    assert quick(int, "twelve", param, ctx) is SLOW and quick(bool, "yes", param, ctx) is SLOW
