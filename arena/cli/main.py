"""The ``arena`` command: parses arguments, calls the layers, prints. No rules, no SQL."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.authors import author_app, submit_cmd
from arena.cli.cluster import scheduler, worker
from arena.cli.common import (
    DEFAULT_DB,
    FORMATS,
    GAME_HELP,
    SANDBOX_HELP,
    DbOption,
    SettingsFileOption,
    VariantOption,
    console,
    err_console,
    fail,
    game_settings,
    in_users_words,
    open_store,
    print_check,
    print_table,
    remember_folder,
    user_errors,
    warn_about,
)
from arena.cli.games import game_app
from arena.cli.gauntlet import gauntlet_cmd
from arena.cli.ladder import ladder_app
from arena.cli.results import games_cmd, leaderboard_cmd
from arena.cli.sandbox import check_games, image_prune, open_sandbox, prepare
from arena.cli.tournaments import tournament_app
from arena.cli.upkeep import backup_cmd, check_cmd
from arena.cli.web import serve
from arena.text import json_shown, shown

if TYPE_CHECKING:
    from arena.bots import Bot

app = typer.Typer(
    help="Six Arena: referee bots written in any language, sandboxed and timed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The ``arena`` command. Each command module imports at its top only typer, rich and
the standard library (``arena --help`` reads them all); what a command needs beyond
that (trio, the referee, Docker, numpy, the web stack) it imports when it runs."""


BotDirs = Annotated[
    list[str],
    typer.Argument(
        help="Bot folders (each with a bot.toml), or bots stored in --db as NAME[:VERSION]; one may sit more"
        " than once.",
        show_default=False,
        metavar="BOT...",
    ),
]
DISQUALIFIED_EXIT = 3
"""``arena play``'s exit status when a seat was disqualified (``--strict``: had a fault)."""


@app.command()
def play(
    bot_dirs: BotDirs,
    seed: Annotated[int | None, typer.Option(help="Seed of the deals (random if not given).")] = None,
    move_time: Annotated[float, typer.Option(help="Seconds per move.", min=0.001)] = 1.0,
    time_bank: Annotated[float, typer.Option(help="Extra seconds per game for moves that overrun.", min=0.0)] = 10.0,
    startup_time: Annotated[float, typer.Option(help="Seconds a bot has to start and answer hello.", min=0.001)] = 10.0,
    replay: Annotated[Path | None, typer.Option(help="Write the game's replay (JSON lines) here.")] = None,
    game: Annotated[str, typer.Option(help=GAME_HELP)] = "nimmt",
    set_: Annotated[
        list[str], typer.Option("--set", help="A game setting KEY=VALUE, e.g. end_score=50 (repeatable).")
    ] = [],  # noqa: B006
    sandbox_name: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    variant: VariantOption = None,
    settings_file: SettingsFileOption = None,
    strict: Annotated[
        bool, typer.Option(help=f"Exit {DISQUALIFIED_EXIT} on any fault, not only when a seat is disqualified.")
    ] = False,
    db: Annotated[Path, typer.Option("--db", help="The database a stored bot named NAME[:VERSION] is read from.")] = (
        DEFAULT_DB
    ),
) -> None:
    """Play one game between bots and print each round and the final standings. Exit
    status 3 when a seat was disqualified (with --strict: when any seat had a fault)."""
    import trio

    from arena.cli.live import LivePrinter
    from arena.games.registry import get_game
    from arena.play.match import MatchSpec, TimeLimits
    from arena.play.referee import play_match, single_game
    from arena.render import seat_labels
    from arena.render.common import standings_table
    from arena.tournaments.roundrobin import sigterm_as_ctrl_c, until_interrupted

    sigterm_as_ctrl_c()  # Ctrl-C and SIGTERM stop it as they stop a tournament: every bot, exit 130
    with user_errors():
        bots = [playing_bot(ref, db) for ref in bot_dirs]
        rules = get_game(game).rules
        check_games(bots, game)
        settings = game_settings(set_, variant, settings_file)
        rules.parse_settings(settings, len(bots))
        seed = random.randrange(2**31) if seed is None else seed
        limits = TimeLimits(round(move_time * 1000), round(time_bank * 1000), round(startup_time * 1000))
        spec = MatchSpec(game, settings, bots, single_game(bots, seed), limits)
        sandbox = open_sandbox(sandbox_name)
        prepare(sandbox, bots)
        labels = seat_labels([b.name for b in bots])
        isolations = sorted({sandbox.isolation_for(b) for b in bots})
        console.print(f"[bold]{game}[/] · {len(bots)} seats · seed {seed} · sandbox: {'; '.join(isolations)}")
        warn_about(isolations)
        console.print("seats: " + ", ".join(labels), soft_wrap=True)
        result = trio.run(until_interrupted, play_match, spec, sandbox, LivePrinter(game, labels))
        outcome = result.games[0]
        console.print(standings_table(outcome.ranks, outcome.scores, outcome.statuses, labels))
        if replay is not None:
            from arena.play import replay as replay_files

            try:
                replay_files.write(replay, outcome.replay)
            except OSError as exc:
                fail(f"{replay}: cannot write the replay: {exc.strerror}")
            console.print(f"replay written to {replay}")
    failed = [
        f"{labels[seat]} {status.status} ({len(status.faults)} fault{'s' * (len(status.faults) != 1)})"
        for seat, status in enumerate(outcome.statuses)
        if status.status == "disqualified" or (strict and status.status != "ok")
    ]
    if failed:
        why = f"arena replay {replay} --stderr" if replay else "--replay FILE, then arena replay FILE --stderr"
        err_console.print(f"{'; '.join(failed)}: exit {DISQUALIFIED_EXIT} (why: {why})", markup=False, soft_wrap=True)
        raise typer.Exit(DISQUALIFIED_EXIT)


def playing_bot(ref: str, db: Path) -> Bot:
    """A bot for ``arena play``: a folder, or, as tournaments take them, a bot stored in
    ``db`` named ``NAME`` (its highest version) or ``NAME:VERSION``."""
    from arena.bots import load_bot
    from arena.store import StoreError

    if Path(ref).is_dir() or "/" in ref or Path(ref).exists():
        bot = load_bot(ref)
        remember_folder(ref, bot.path)
        return bot
    if not db.exists():
        fail(
            f"{ref}: no such bot folder, and no database {db} to find a stored bot {ref!r} in: give the bot's folder,"
            " or --db the database that stores it (`arena bot list --db FILE` shows its bots)"
        )
    try:
        return open_store(db, read_only=True).get_bot(ref).load()
    except StoreError as exc:
        if not str(exc).startswith("no bot "):
            raise
        fail(
            f"{ref}: no such bot folder, nor a bot stored in {db} under that name"
            f" (`arena bot list --db {db}` shows them; --db names another database)"
        )


SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"


@app.command()
def demo(
    db: Annotated[Path, typer.Option("--db", help="The arena's database.")] = Path("arena.db"),
    deals: Annotated[int, typer.Option(help="Deals per table.", min=1)] = 4,
    sandbox_name: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
) -> None:
    """A small demo tournament of the sample bots, then the leaderboard of every game stored."""
    if not (SAMPLE_BOTS / "heuristic").is_dir():
        fail(f"{SAMPLE_BOTS}: the sample bots are not here (run the demo from a checkout of Six Arena)")
    from arena.cli.tournaments import tournament_run

    bots = [str(SAMPLE_BOTS / name) for name in ("heuristic", "random", "lowest")]
    tournament_run(bots, table_size=3, deals=deals, db=db, sandbox_name=sandbox_name, move_time=1.0, time_bank=10.0)
    console.print("\n[bold]Every game in the database:[/]")
    leaderboard_cmd(db=db)


@app.command("replay")
def replay_cmd(
    source: Annotated[
        str, typer.Argument(help="A replay file, or the id of a stored game (`arena games`).", metavar="FILE|GAME_ID")
    ],
    round_: Annotated[int | None, typer.Option("--round", help="Start at this round.", min=1)] = None,
    turn: Annotated[int | None, typer.Option(help="Start at this turn of the round.", min=1)] = None,
    step: Annotated[bool, typer.Option(help="Wait for Enter between turns (q to quit).")] = False,
    stderr: Annotated[
        bool, typer.Option("--stderr", help="Show what each seat wrote to stderr, and its faults.")
    ] = False,
    db: DbOption = DEFAULT_DB,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the game as one self-contained HTML page (the animated viewer, offline) to FILE.",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Re-simulate a logged game through the rules and show it turn by turn; with
    --html, write it as a web page to open in any browser instead."""
    from arena.games.registry import get_game
    from arena.play import replay as replay_files

    with user_errors():
        if source.isdigit() and not Path(source).exists():
            name = f"game {source}"
            lines = replay_files.loads(stored_replay(db, int(source)), name)
        else:
            name = source
            lines = replay_files.read(source)
        header = lines[0]
        assert isinstance(header, replay_files.Header)
        if html is not None:
            from arena.web.viewer import standalone_html

            page = standalone_html(lines, f"Six Arena replay · {Path(name).name}")  # verifies it too
            try:
                html.write_text(page, encoding="utf-8")
            except OSError as exc:
                fail(f"{html}: cannot write the page: {exc.strerror or exc}")
            console.print(str(html), soft_wrap=True, markup=False)
            return
        steps = list(replay_files.verify(lines, name))
        if stderr:
            show_stderr(lines, header)
            return
        render = get_game(header.game).terminal()
        render.show_replay(console, lines, steps, round_, turn, step if sys.stdin.isatty() else False)


def show_stderr(lines: list[Any], header: Any) -> None:
    """Each seat's stderr (the bot author's debugging log) and its faults with evidence,
    through ``shown``: what a bot wrote is seen, never obeyed by the terminal."""
    from arena.play.replay import End, FaultLine

    end = lines[-1]
    for seat, info in enumerate(header.seats):
        console.rule(escape(f"seat {seat}: {shown(info.name)} {shown(info.version)}"))
        for line in lines:
            if isinstance(line, FaultLine) and line.seat == seat:
                fault = line.fault
                about = escape(shown(fault.kind)) + (f", {fault.where}" if fault.where else "")
                console.print(f"[red]fault ({about}):[/] {escape(shown(fault.message))}", soft_wrap=True)
                if fault.line:
                    console.print(f"  its line: {escape(shown(fault.line))}", soft_wrap=True)
        text = shown(end.stderr[seat], lines=True) if isinstance(end, End) else ""
        console.print(escape(text.rstrip()) if text.strip() else "[dim](nothing on stderr)[/]", soft_wrap=True)


def stored_replay(db: Path, game_id: int) -> bytes:
    """The replay of a stored game, read-only."""
    import zlib

    try:
        return open_store(db, read_only=True).replay(game_id)
    except zlib.error as exc:
        fail(
            f"{db}: the stored replay of game {game_id} is damaged ({exc}): restore the database from a backup"
            " (README: keeping a league; `arena backup`)"
        )


image_app = typer.Typer(help="The base image bots run on (Docker).", no_args_is_help=True)
bot_app = typer.Typer(help="Bots: store them, list them, build their images.", no_args_is_help=True)
app.command("leaderboard")(leaderboard_cmd)
app.command("games")(games_cmd)
app.command("gauntlet")(gauntlet_cmd)
app.command("serve")(serve)
app.command("scheduler")(scheduler)
app.command("worker")(worker)
app.command("submit")(submit_cmd)
app.add_typer(image_app, name="image")
app.add_typer(bot_app, name="bot")
app.add_typer(tournament_app, name="tournament")
app.add_typer(author_app, name="author")
app.add_typer(game_app, name="game")
app.add_typer(ladder_app, name="ladder")
app.command("backup")(backup_cmd)
app.command("check")(check_cmd)
image_app.command("prune")(image_prune)


@image_app.command("build")
def image_build(
    force: Annotated[bool, typer.Option(help="Rebuild every layer even if it is there.")] = False,
    with_: Annotated[
        str | None,
        typer.Option(
            "--with",
            help="Extra Debian packages for bots' runtimes, comma-separated (ruby,golang,lua5.4); +PACKAGES adds"
            " to the current base's, '' drops them. Without it, the current base's are kept.",
            show_default=False,
            metavar="PACKAGES",
        ),
    ] = None,
) -> None:
    """Make the base image: its root file system from Debian's packages (debootstrap, then
    docker import; minutes, once), each extra runtime asked for with --with in a layer of
    its own, kept and reused when a set is switched to again (apt-get with the host's
    network; about 20-60 s a runtime), and the Python bot SDK on top (seconds, again
    whenever the SDK changes). It removes no image: `arena image prune` does, when asked."""
    from arena.sandbox import images, outdated

    with user_errors():
        adding = with_ is not None and with_.strip().startswith("+")
        packages = None if with_ is None else images.parse_packages(with_.strip().removeprefix("+"))
        client = images.connect()
        if adding and packages is not None:
            packages = sorted({*images.image_packages(client), *packages})
        with console.status("building the base image", spinner="dots") as status:

            def progress(line: str) -> None:
                status.update(line)
                if not line.startswith("I: "):
                    console.print(line)

            tag = images.build_base(client, force=force, progress=progress, packages=packages)
            note = outdated.stale_note(client, tag)
            if note:
                progress(note)


@bot_app.command("build")
def bot_build(
    bot_dir: Annotated[Path, typer.Argument(help="A bot folder (with a bot.toml).", metavar="BOT_DIR")],
    force: Annotated[bool, typer.Option(help="Rebuild even if it is there.")] = False,
) -> None:
    """Build a bot's image: its folder on the current base image (whose SDK layer is made
    first if the SDK changed), its build command run inside."""
    from arena.bots import load_bot
    from arena.sandbox import images

    with user_errors():
        bot = load_bot(bot_dir)
        client = images.connect()
        images.build_bot(client, bot, force=force, progress=lambda line: console.print(shown(line), markup=False))


@bot_app.command("check")
def bot_check(
    bot_dir: Annotated[Path, typer.Argument(help="A bot folder (with a bot.toml).", metavar="BOT_DIR")],
    sandbox_name: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    game: Annotated[
        list[str] | None, typer.Option("--game", help="Check only this game (default: all the manifest lists).")
    ] = None,
    move_time: Annotated[float, typer.Option(help="Seconds the bot may take per request.", min=0.01)] = 1.0,
    startup_time: Annotated[float, typer.Option(help="Seconds to start and answer hello.", min=0.1)] = 10.0,
    only: Annotated[str, typer.Option(help="Run only the checks whose name holds this text.")] = "",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show each request's time.")] = False,
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
    bot_dir: Annotated[Path, typer.Argument(help="A bot folder (with a bot.toml).", metavar="BOT_DIR")],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Store an immutable snapshot of a bot under its name and version."""
    with user_errors():
        stored = open_store(db, must_exist=False).add_bot(bot_dir)
        console.print(f"stored {stored.ref} (hash {stored.hash[:12]}) in {db}")


@bot_app.command("list")
def bot_list(
    db: DbOption = DEFAULT_DB,
    format_: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
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


@bot_app.command("remove")
def bot_remove(
    ref: Annotated[
        str, typer.Argument(help="The stored bot, with its version (`arena bot list`).", metavar="NAME:VERSION")
    ],
    db: DbOption = DEFAULT_DB,
    with_games: Annotated[
        bool, typer.Option("--with-games", help="Also delete the games it played (with their seats), in one go.")
    ] = False,
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


def main() -> None:
    app()
