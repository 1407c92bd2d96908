"""The docs say only what is true of the command: every ``arena ...`` that README.md and
docs/*.md show (in code blocks, indented blocks and inline code) names a command that
exists and only options that command has. Read from the typer app itself, not run: a
slow command (a tournament, an image build) is checked as fast as a quick one.

Arguments are not checked (``BOT_DIR``, ``NAME``, ``spring.db`` are the reader's); the
command path and every option are, placeholders or not."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from arena.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SEPARATORS = re.compile(r"\s(?:&&|\|\||\||;)\s")
ARENA = re.compile(r"(?:^|\s)((?:\S*/)?arena)(?=\s|$)")


def fenced_and_indented(text: str) -> list[tuple[int, str]]:
    """``(line number, command line)`` of the shell lines in code blocks: fenced ones and
    those indented by four spaces after a blank line, continuations (``\\``) joined."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    indented = False
    previous_blank = True
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opening = re.match(r"^\s*(```+|~~~+)", line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None and line.strip().startswith(fence):
            fence = None
            continue
        if fence is None:
            indented = line.startswith("    ") and (indented or previous_blank) and bool(line.strip())
            previous_blank = not line.strip()
            if not indented:
                continue
        if pending is not None:
            pending = (pending[0], pending[1] + " " + line.strip())
        else:
            pending = (number, line.strip())
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1])
            continue
        found.append(pending)
        pending = None
    return found


def inline(text: str) -> list[tuple[int, str]]:
    """``(line number, span)`` of the inline code spans that start with ``arena ``."""
    spans = []
    for number, line in enumerate(text.splitlines(), 1):
        for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", line):
            if span.startswith("arena "):
                spans.append((number, span.rstrip("\\")))  # a span quoted in a table: \`arena games\`
    return spans


def commands_in(line: str) -> list[list[str]]:
    """The ``arena`` commands of a shell line, each as its words after ``arena``: comments,
    prompts, environment settings and what other commands do are left out."""
    line = re.sub(r"(^|\s)#.*$", "", line.removeprefix("$ "))
    found = []
    for part in SEPARATORS.split(line):
        start = ARENA.search(part)
        if start is None:
            continue
        rest = part[start.end() :].strip().rstrip("&").strip()
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        found.append([w.strip("[]") for w in words if w.strip("[]")])
    return found


def shown_commands() -> list[tuple[str, list[str], bool]]:
    """Each command shown: where, its words, and whether it is in a block (a command to
    copy and run) rather than named in a sentence (``--html`` alone names the option)."""
    shown = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block, lines in ((True, fenced_and_indented(text)), (False, inline(text))):
            for number, line in lines:
                for words in commands_in(line):
                    shown.append((f"{page.relative_to(ROOT)}:{number}", words, block))
    return shown


@functools.cache
def app_command() -> Any:
    """Typer's own click command of the app (read by duck typing), made once."""
    return typer.main.get_command(cli.app)


def problem(words: list[str], values: bool = True) -> str | None:
    """What is wrong with ``arena WORDS``: an unknown command or an option its command
    lacks (with ``values``: or an option shown without the value it takes, as a command
    to copy must not); None when every part exists."""
    command: Any = app_command()
    path = ["arena"]
    rest = list(words)
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
        name = rest.pop(0)
        found = command.commands.get(name)
        if found is None:
            return f"`{' '.join(path)} {name}`: no such command (there are {', '.join(command.commands)})"
        command, path = found, [*path, name]
    if hasattr(command, "commands") and not rest:
        return None  # `arena ladder` alone: its help
    options = {"--help"}
    flags = {"--help"}
    for param in command.params:
        if param.param_type_name == "option":
            options.update(param.opts + param.secondary_opts)
            if param.is_flag or param.count:
                flags.update(param.opts + param.secondary_opts)
    for i, word in enumerate(rest):
        if word == "--":
            break
        if word.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", word):
            name = word.split("=", 1)[0]
            if name not in options:
                return f"`{' '.join(path)} {name}`: no such option (it has {', '.join(sorted(options))})"
            if (
                values
                and "=" not in word
                and name not in flags
                and (i + 1 >= len(rest) or rest[i + 1].startswith("--"))
            ):
                if rest[i + 1 : i + 2] != ["..."]:
                    return f"`{' '.join(path)} {name}`: the option takes a value, and none is shown"
    return None


SHOWN = shown_commands()


def test_the_docs_show_many_commands() -> None:
    """The reader finds the commands: a change to the extraction that finds none fails."""
    assert len(SHOWN) > 100
    assert {words[0] for _, words, _ in SHOWN if words} >= {"play", "tournament", "backup", "check", "author", "serve"}


@pytest.mark.parametrize(("where", "words", "block"), SHOWN, ids=[f"{w}:{' '.join(c)[:40]}" for w, c, _ in SHOWN])
def test_every_command_the_docs_show_exists_with_its_options(where: str, words: list[str], block: bool) -> None:
    found = problem(words, values=block)
    assert found is None, f"{where}: arena {' '.join(words)}: {found}"


def test_the_check_finds_what_is_not_there() -> None:
    assert problem(["tournament", "run", "--resume", "--name", "spring"]) is None
    assert "no such command" in (problem(["tournament", "resume"]) or "")
    assert "no such option" in (problem(["backup", "b.db", "--force"]) or "")
    assert "takes a value" in (problem(["leaderboard", "--db"]) or "")
    assert problem(["play", "BOT_DIR", "--strict", "--replay", "game.jsonl"]) is None


def test_no_page_cites_a_file_the_project_lacks() -> None:
    """Every relative Markdown link of the docs, and every ``docs/X.md`` they name, exists."""
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" not in target and not (page.parent / target).exists():
                missing.append(f"{page.name}: {target}")
        for named in re.findall(r"\bdocs/[\w-]+\.md\b", text):
            if not (ROOT / named).exists():
                missing.append(f"{page.name}: {named}")
        if re.search(r"\bRULES\.md\b", text):
            missing.append(f"{page.name}: RULES.md (the rules are docs/rules.md)")
    assert missing == []
