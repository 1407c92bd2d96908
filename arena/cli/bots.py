"""``arena bot``: store bots, list them, build their images, put them through the battery."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.common import (
    DEFAULT_DB,
    FORMATS,
    DbOption,
    FormatOption,
    console,
    err_console,
    escape,
    fail,
    in_users_words,
    open_store,
    print_check,
    print_table,
    remember_folder,
    user_errors,
)
from arena.cli.options import DEFAULTS, SandboxOption
from arena.cli.sandbox import open_sandbox
from arena.cli.trial import bot_try
from arena.text import json_shown, shown

BotDirArgument = Annotated[Path, typer.Argument(help="A bot folder (with a bot.toml).", metavar="BOT_DIR")]

bot_app = typer.Typer(
    help="Bots: start one, check it, try it against a league; store, list and build them.", no_args_is_help=True
)


ForceOption = Annotated[bool, typer.Option(help="Rebuild even if it is there.")]
NameArgument = Annotated[str, typer.Argument(help="The bot's name (its folder's too).", metavar="NAME")]
LangOption = Annotated[
    str, typer.Option("--lang", help="Its language: python, javascript, c, cpp, go, rust or java.", metavar="LANG")
]
NewGameOption = Annotated[
    str | None,
    typer.Option(
        "--game", help="The game it plays (`arena games` lists them; default: the first).", show_default=False
    ),
]
DirOption = Annotated[Path, typer.Option("--dir", help="The folder to make it in.")]


@bot_app.command("new")
def bot_new(
    name: NameArgument,
    lang: LangOption = "python",
    game: NewGameOption = None,
    parent: DirOption = Path("."),
) -> None:
    """Start a bot: a folder NAME that passes `arena bot check` as it is (its bot.toml, a
    bot that plays legal answers, the language's small SDK, a README of the commands)."""
    from arena.bots.starter import new_bot
    from arena.games.registry import games

    game = game or next(iter(games()))
    if game not in games():
        fail(f"--game {game}: the arena plays {', '.join(games())}")
    with user_errors():
        folder = new_bot(parent, name, lang, game)
    console.print(f"made {escape(str(folder))}/: edit its decide, then", soft_wrap=True)
    console.print(f"  arena bot check {escape(str(folder))}", soft_wrap=True)


PolicyArgument = Annotated[
    str,
    typer.Argument(help="The policy: a Python file and its function, FILE.py:FUNCTION.", metavar="FILE.py:FUNCTION"),
]
PolicyGameOption = Annotated[str, typer.Option("--game", help="The game it plays (one with an environment).")]
WeightsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--file", help="A file the policy loads (its weights), copied beside it; repeat for more.", metavar="FILE"
    ),
]
VersionOption = Annotated[str, typer.Option(help="The bot's version, for its bot.toml.")]


@bot_app.command("from-policy")
def bot_from_policy(
    policy: PolicyArgument,
    name: NameArgument,
    game: PolicyGameOption,
    parent: DirOption = Path("."),
    file: WeightsOption = None,
    version: VersionOption = "0.1.0",
) -> None:
    """Make a bot folder NAME of a policy trained in the environment (docs/env.md): its
    module and files, a bot.py that encodes each view as the environment does and plays
    the policy's action, and a bot.toml."""
    from arena.env.export import export_policy

    with user_errors():
        folder = export_policy(policy, name, game, parent, file, version)
    console.print(f"made {escape(str(folder))}/: check it, then play it", soft_wrap=True)
    console.print(f"  arena bot check {escape(str(folder))}", soft_wrap=True)


@bot_app.command("build")
def bot_build(
    bot_dir: BotDirArgument,
    force: ForceOption = False,
) -> None:
    """Build a bot's image: its folder on the current base image (whose SDK layer is made
    first if the SDK changed), its build command run inside."""
    from arena.bots import load_bot
    from arena.sandbox import images

    with user_errors():
        bot = load_bot(bot_dir)
        client = images.connect()
        images.build_bot(client, bot, force=force, progress=lambda line: console.print(shown(line), markup=False))


GameOption = Annotated[
    list[str] | None, typer.Option("--game", help="Check only this game (default: all the manifest lists).")
]
MoveTimeOption = Annotated[float, typer.Option(help="Seconds the bot may take per request.", min=0.01)]
StartupTimeOption = Annotated[float, typer.Option(help="Seconds to start and answer hello.", min=0.1)]
OnlyOption = Annotated[str, typer.Option(help="Run only the checks whose name holds this text.")]
VerboseOption = Annotated[bool, typer.Option("--verbose", "-v", help="Show each request's time.")]


@bot_app.command("check")
def bot_check(
    bot_dir: BotDirArgument,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
    game: GameOption = None,
    move_time: MoveTimeOption = 1.0,
    startup_time: StartupTimeOption = 10.0,
    only: OnlyOption = "",
    verbose: VerboseOption = False,
) -> None:
    """Put a bot through the conformance battery: pass or fail per check, exit 1 on a failure."""
    import trio

    from arena.botcheck import Check, Checker
    from arena.bots import BotError, load_bot
    from arena.tournaments.roundrobin import sigterm_as_ctrl_c, until_interrupted

    sigterm_as_ctrl_c()

    def show(check: Check) -> None:
        check.detail = in_users_words(check.detail)  # not the sandbox's copy of the folder
        print_check(check, verbose)

    try:
        bot = load_bot(bot_dir)
        remember_folder(bot_dir, bot.path)
    except BotError as exc:
        show(Check("manifest", False, str(exc), fix="see docs/writing-a-bot.md for the manifest's fields"))
        raise typer.Exit(1) from None
    unknown = [g for g in game or [] if g not in bot.manifest.games]
    if unknown:
        fail(f"--game {unknown[0]}: {bot.name}'s bot.toml lists only {', '.join(bot.manifest.games)}")
    with user_errors():
        sandbox = open_sandbox(sandbox_name)
    console.print(f"checking [bold]{escape(bot.name)}[/] ({escape(shown(str(bot_dir)))}) in the {sandbox_name} sandbox")
    checker = Checker(
        bot,
        sandbox,
        round(move_time * 1000),
        round(startup_time * 1000),
        on_check=show,
        progress=lambda line: err_console.print(f"[dim]{escape(shown(line))}[/]"),
    )
    with user_errors():
        checks = trio.run(until_interrupted, checker.run, game, only)
    failed = sum(1 for c in checks if not c.ok and not c.skipped)
    skipped = sum(1 for c in checks if c.skipped)
    passed = len(checks) - failed - skipped
    summary = f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
    console.print(f"[bold {'red' if failed else 'green'}]{summary}[/]")
    for name, times in checker.repeated():
        console.print(f"{times} checks failed as «{escape(shown(name))}» did: fix that one first", soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@bot_app.command("add")
def bot_add(
    bot_dir: BotDirArgument,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Store an immutable snapshot of a bot under its name and version."""
    with user_errors():
        stored = open_store(db, must_exist=False).add_bot(bot_dir)
        console.print(f"stored {stored.ref} (hash {stored.hash[:12]}) in {db}")


@bot_app.command("list")
def bot_list(
    db: DbOption = DEFAULT_DB,
    format_: FormatOption = "table",
) -> None:
    """The bots stored in the database: the games each plays, and how many it has played."""
    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db, read_only=True)
        played = store.bot_game_counts()
        rows: list[dict[str, Any]] = [
            {
                "bot": b.name,
                "version": b.version,
                "language": b.language,
                "plays": b.games,
                "games": played.get(b.id, 0),
                "hash": b.hash,
                "added": b.added,
            }
            for b in store.list_bots()
        ]
        if format_ == "json":
            import json

            print(json_shown(json.dumps(rows, indent=2, ensure_ascii=False)))
            return
        if format_ == "csv":
            import csv
            import io

            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=BOT_COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows({**row, "plays": " ".join(row["plays"])} for row in rows)
            print(shown(out.getvalue(), lines=True), end="")
            return
        from rich.table import Table

        table = Table(title=escape(f"Bots in {db}"))
        for column in BOT_COLUMNS:
            table.add_column(column, justify="right" if column == "games" else "left")
        for row in rows:
            cells = [str(row[c]) for c in BOT_COLUMNS]
            cells[BOT_COLUMNS.index("plays")] = ", ".join(row["plays"])
            cells[BOT_COLUMNS.index("hash")] = row["hash"][:12]
            table.add_row(*(escape(shown(cell)) for cell in cells))
        print_table(table)


BOT_COLUMNS = ("bot", "version", "language", "plays", "games", "hash", "added")
"""``arena bot list``'s columns: ``plays`` the games its bot.toml lists, ``games`` how many it played."""


RefArgument = Annotated[
    str, typer.Argument(help="The stored bot, with its version (`arena bot list`).", metavar="NAME:VERSION")
]
WithGamesOption = Annotated[
    bool, typer.Option("--with-games", help="Also delete the games it played (with their seats), in one go.")
]


@bot_app.command("remove")
def bot_remove(
    ref: RefArgument,
    db: DbOption = DEFAULT_DB,
    with_games: WithGamesOption = False,
) -> None:
    """Remove a stored bot and its snapshot folder (<db>-bots/). Refused while games
    reference it unless --with-games, and while an arena runs a tournament it plays in."""
    with user_errors():
        store = open_store(db)
        name, colon, version = ref.partition(":")
        if not colon or not version:
            versions = [b.version for b in store.list_bots() if b.name == name]
            stored = f"stored versions: {', '.join(versions)}" if versions else "`arena bot list` shows them"
            fail(f"{ref!r}: name the version to remove, as NAME:VERSION ({stored})")
        bot = store.get_bot(ref)
        named = [t for _, t in store.bot_tournaments_named(bot.id)]
        deleted = store.remove_bot(bot.id, with_games)
        also = f" and its {deleted} game{'s' * (deleted != 1)}" if deleted else ""
        console.print(f"removed {bot.ref}{also} from {db}, and its snapshot", markup=False)
        if named:
            err_console.print(
                f"note: tournament{'s' * (len(named) != 1)} {', '.join(named)} named {bot.ref}: a --resume of"
                f" {'them' if len(named) != 1 else 'it'} now stops at it",
                markup=False,
                soft_wrap=True,
            )


bot_app.command("try")(bot_try)
