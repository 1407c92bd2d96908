"""The click classes of the ``arena`` command, made to answer at once.

- A group's commands are loaded when one is named (``Later``): ``arena --help`` lists
  them from their summaries and imports no command module; ``arena play ...`` imports
  only ``arena.cli.play`` and what it needs.
- The help is click's plain text, without the loss of a summary cut at 45 characters:
  typer's rich help would import rich's markdown, syntax and traceback modules, which
  take longer than typer itself.
- An option's value that needs no checking (a flag, a text, a whole number in its
  range, a path) is taken as typer would take it, without building pydantic's
  validator (``Quick``): pydantic takes longer to import than typer. Any other value
  goes through typer's own coercion, so a refusal says what typer says.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import typer
import typer.main
from typer._click import Command, Context, HelpFormatter
from typer._coercion import RuntimeParam, build_runtime_param
from typer._param_types import coerce_cli_path
from typer.core import TyperCommand, TyperGroup, TyperOption, _TyperParameter
from typer.models import CommandInfo, TyperInfo

SLOW = object()
"""A value ``quick`` leaves to typer's own coercion."""
WHOLE = re.compile(r"[+-]?[0-9]{1,18}")
"""A whole number as typed (longer ones go to typer's coercion: Python refuses 4,300 digits)."""
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def quick(annotation: Any, value: Any, param: _TyperParameter, ctx: Context) -> Any:
    """``value`` as typer's coercion makes it, where that needs no validator; else ``SLOW``.
    A number out of its range is ``SLOW``: typer's refusal names the range."""
    info = param.type_descriptor.parameter_info
    if info.parser is not None:
        return SLOW
    if annotation is bool or annotation is str:
        return value if type(value) is annotation else SLOW
    if annotation is int or annotation is float:
        if type(value) is str and (WHOLE if annotation is int else DECIMAL).fullmatch(value):
            value = annotation(value)
        elif type(value) is int and annotation is float:
            value = float(value)
        elif type(value) is not annotation:
            return SLOW
        if info.clamp or (info.min is not None and value < info.min) or (info.max is not None and value > info.max):
            return SLOW
        return value
    if annotation is Path and info.path_type is None:
        if type(value) is str and value:
            value = Path(value)
        elif not isinstance(value, Path):
            return SLOW
        return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
    if getattr(annotation, "__origin__", None) is list and isinstance(value, list | tuple):
        (item_type,) = annotation.__args__
        items = [quick(item_type, item, param, ctx) for item in value]
        return SLOW if any(item is SLOW for item in items) else items
    return SLOW


class Quick(RuntimeParam):
    """Typer's coercion of one parameter, its validator built only for a value that needs
    it (then kept as the parameter's coercion)."""

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        taken = quick(self.annotation, value, param, ctx)
        if taken is not SLOW:
            return taken
        param._runtime_param = build_runtime_param(param.type_descriptor)
        return param._runtime_param._coerce_value(value, param=param, ctx=ctx)


def quicken(param: object) -> None:
    """Give ``param`` the quick coercion (unless it has one already, or opens a file)."""
    if isinstance(param, _TyperParameter) and param._runtime_param is None:
        descriptor = param.type_descriptor
        if descriptor.file_annotation is None:
            param._runtime_param = Quick(annotation=descriptor.annotation, parameter_info=descriptor.parameter_info)


HYPHEN = "\u2011"
"""A hyphen no line breaks after, standing for each ``-`` while the help is wrapped."""


class ArenaFormatter(HelpFormatter):
    """Click's plain help, whose lines never break inside a word at its hyphen (an
    option's name, ``dask-kubernetes``): each ``-`` is kept whole while the text wraps."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog.replace("-", HYPHEN), args.replace("-", HYPHEN), prefix)

    def write_text(self, text: str) -> None:
        super().write_text(text.replace("-", HYPHEN))

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(first.replace("-", HYPHEN), second.replace("-", HYPHEN)) for first, second in rows]
        super().write_dl(rows, col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(HYPHEN, "-")


class ArenaContext(Context):
    formatter_class = ArenaFormatter


class ArenaCommand(TyperCommand):
    """A command of ``arena``: its options coerced quickly, its help wrapped whole."""

    context_class = ArenaContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            quicken(param)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        quicken(option)
        return option


class Later:
    """A command not loaded yet: where it is (``module:attribute`` of its function or
    typer app), and its summary (the first paragraph of its help, as its group's help
    lists it)."""

    __slots__ = ("summary", "target")

    def __init__(self, target: str, summary: str) -> None:
        self.target = target
        self.summary = summary


def summary_of(command: Command) -> str:
    """The first paragraph of a command's help, on one line: what a group's help lists."""
    text = command.short_help or command.help or ""
    return " ".join(text.strip().split("\n\n")[0].split())


class Commands(MutableMapping[str, Command]):
    """A group's commands by name, in order, each loaded when it is first looked up."""

    def __init__(self, commands: MutableMapping[str, Command], later: dict[str, Later]) -> None:
        self.entries: dict[str, Command | Later] = {**later, **commands}

    def __getitem__(self, name: str) -> Command:
        entry = self.entries[name]
        if isinstance(entry, Later):
            entry = self.entries[name] = load(name, entry.target)
        return entry

    def __setitem__(self, name: str, command: Command) -> None:
        self.entries[name] = command

    def __delitem__(self, name: str) -> None:
        del self.entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def summary(self, name: str) -> str:
        entry = self.entries[name]
        return entry.summary if isinstance(entry, Later) else summary_of(entry)

    def hidden(self, name: str) -> bool:
        entry = self.entries[name]
        return not isinstance(entry, Later) and entry.hidden


def load(name: str, target: str) -> Command:
    """The click command ``name`` of ``module:attribute``: a function or a typer app (a group)."""
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if isinstance(found, typer.Typer):
        adopt(found)
        return typer.main.get_group_from_info(
            TyperInfo(found, name=name, cls=ArenaGroup),
            pretty_exceptions_short=found.pretty_exceptions_short,
            rich_markup_mode=None,
            suggest_commands=found.suggest_commands,
        )
    return typer.main.get_command_from_info(
        CommandInfo(name, callback=found, cls=ArenaCommand), pretty_exceptions_short=True, rich_markup_mode=None
    )


def adopt(app: typer.Typer) -> None:
    """Make the commands and groups of ``app`` ours (quick coercion, whole summaries)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = ArenaCommand
    for group in app.registered_groups:
        if isinstance(group.cls, typer.models.DefaultPlaceholder):
            group.cls = ArenaGroup
        if group.typer_instance is not None:
            adopt(group.typer_instance)


class ArenaGroup(TyperGroup):
    """A group of ``arena`` commands: loaded when named, listed whole in its help.

    A subclass names the commands to load later in ``LATER``, in the order the help
    lists them: ``(name, Later(target, summary))``."""

    LATER: tuple[tuple[str, Later], ...] = ()
    context_class = ArenaContext

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = Commands(self.commands, dict(self.LATER))

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        quicken(option)
        return option

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Each command with the whole first paragraph of its help, read without loading it."""
        commands = self.commands
        assert isinstance(commands, Commands)
        rows = [(name, commands.summary(name)) for name in self.list_commands(ctx) if not commands.hidden(name)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
