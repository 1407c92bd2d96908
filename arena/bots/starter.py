"""``arena bot new``: a bot folder that passes ``arena bot check`` as it is, in one of the
kit's languages: its manifest, a bot that answers legally, the language's small SDK
(the standard library only) and a page on building, running, testing and submitting it.

The kit's files are in ``starters/<language>/``; ``@NAME@``, ``@GAME@`` and ``@TITLE@``
in them become the bot's name, its game and the game's title.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from arena.bots import NAME_RULE, BotError, valid_name, views

KIT = Path(__file__).resolve().parent / "starters"


@dataclass(frozen=True)
class Language:
    """What a bot of one language needs in its manifest, and how its author works."""

    manifest: str
    """``language`` in bot.toml."""
    run: str
    build: str = ""
    edit: str = "bot.py"
    """The file the author edits: its ``decide``."""
    sdk: str = ""
    """The kit's SDK file, where the language has one of its own."""
    packages: tuple[str, ...] = ()
    """The Debian packages it needs beyond the base image (``packages`` in bot.toml)."""


LANGUAGES = {
    "python": Language("python", "python3 bot.py", sdk="the arena's `protocol` package (in every sandbox)"),
    "javascript": Language("javascript", "node bot.js", edit="bot.js", sdk="sdk.js"),
    "c": Language("c", "./bot", build="make", edit="bot.c", sdk="sdk.h"),
    "cpp": Language("c++", "./bot", build="make", edit="bot.cpp", sdk="sdk.hpp", packages=("g++",)),
    "go": Language(
        "go",
        "./bot",
        build="GOCACHE=/tmp/go-build GOPATH=/tmp/go GOFLAGS=-mod=mod go build -o bot .",
        edit="bot.go",
        sdk="sdk.go",
        packages=("golang-go",),
    ),
    "java": Language(
        "java",
        "java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp . Bot",
        build="javac -d . Bot.java Sdk.java View.java",
        edit="Bot.java",
        sdk="Sdk.java",
        packages=("default-jdk-headless",),
    ),
    "rust": Language("rust", "./bot", build="rustc -O -o bot bot.rs", edit="bot.rs", sdk="sdk.rs", packages=("rustc",)),
}


def new_bot(parent: Path, name: str, language: str, game: str) -> Path:
    """Write bot ``name``'s folder in ``parent`` (``BotError`` for a name against the rule,
    a language the kit lacks, or a folder already there)."""
    from arena.games.registry import get_game

    if not valid_name(name):
        raise BotError(f"{name!r}: a bot's name is {NAME_RULE}")
    kind = LANGUAGES.get(language)
    if kind is None:
        raise BotError(f"--lang {language}: the kit has {', '.join(LANGUAGES)}")
    folder = parent / name
    if folder.exists():
        raise BotError(f"{folder}: already there (choose another name, or remove it)")
    record = get_game(game)
    title = record.title
    folder.mkdir(parents=True)
    try:
        for source in sorted((KIT / language).iterdir()):
            text = source.read_text().replace("@NAME@", name).replace("@GAME@", game).replace("@TITLE@", title)
            (folder / source.name).write_text(text)
        if language in views.FILES:
            (folder / views.FILES[language]).write_text(views.view_file(language, record.view, title))
        manifest = f'name = "{name}"\nversion = "0.1.0"\nlanguage = "{kind.manifest}"\n'
        manifest += f'build = "{kind.build}"\n' * bool(kind.build)
        manifest += f'run = "{kind.run}"\ngames = ["{game}"]\n'
        manifest += f"packages = {list(kind.packages)!r}\n".replace("'", '"') * bool(kind.packages)
        manifest += f'description = "A {title} bot in {language} (arena bot new)."\n'
        (folder / "bot.toml").write_text(manifest)
        (folder / "README.md").write_text(readme(name, language, game, title))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def readme(name: str, language: str, game: str, title: str) -> str:
    """The folder's page: what is in it, and the commands from editing to submitting."""
    kind = LANGUAGES[language]
    build = (
        f"`{kind.build}` builds it (the arena runs `build` itself, in each sandbox, before the bot plays);"
        f" `make clean` removes what it made.\n\n"
        if kind.build
        else ""
    )
    typed = (
        f" `decide` gets the view as a `View` of this language's own types, declared and read in"
        f" `{views.FILES[language]}` (written from the arena's protocol)."
        if language in views.FILES
        else ""
    )
    return f"""# {name}

A {title} bot in {language}, made by `arena bot new`. It plays the first legal answer:
edit `decide` in `{kind.edit}` to make it better. The protocol is in `{kind.sdk}`: it reads
each request (one JSON object a line on stdin), asks `decide`, writes the answer (one
line on stdout).{typed} Print anything of your own to stderr. docs/protocol.md lists every
field of the view, docs/rules.md the rules.

{build}## Run and test it

    arena bot check {name}                         # the conformance battery: pass or fail
    arena play {name} {name} --game {game}     # one game against itself, every round printed
    arena play {name} {name} --game {game} --sandbox docker

`arena bot check` runs the bot as a tournament does (in Docker where an engine runs,
else in bubblewrap) and says what is wrong with one line a check.

## Submit it

    arena submit {name} --server https://ARENA --token-file TOKEN

Raise `version` in `bot.toml` for each new version: a league keeps one snapshot per
name and version.
"""
