"""``arena play``: one game between bots, each round printed, then the final standings;
and ``arena demo``, a small tournament of the sample bots."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.common import (
    DEFAULT_DB,
    console,
    err_console,
    fail,
    open_store,
    remember_folder,
    user_errors,
    warn_about,
)
from arena.cli.options import (
    DEFAULTS,
    FairTimeOption,
    GameOption,
    MatchOptions,
    MoveTimeOption,
    SandboxOption,
    SeedOption,
    SetOption,
    SettingsFileOption,
    StartupTimeOption,
    TimeBankOption,
    VariantOption,
    choose_game,
    plays,
    title_of,
)

if TYPE_CHECKING:
    from arena.bots import Bot


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


ReplayOption = Annotated[Path | None, typer.Option(help="Write the game's replay (JSON lines) here.")]
StrictOption = Annotated[
    bool, typer.Option(help=f"Exit {DISQUALIFIED_EXIT} on any fault, not only when a seat is disqualified.")
]
DbOption = Annotated[Path, typer.Option("--db", help="The database a stored bot named NAME[:VERSION] is read from.")]
HumanOption = Annotated[
    bool, typer.Option("--human", help="Take a seat yourself, at this terminal: you are asked as the bots are.")
]
HumanSeatOption = Annotated[int, typer.Option("--human-seat", help="With --human: your seat (0 is A).", min=0)]
HumanTimeOption = Annotated[
    float,
    typer.Option(
        "--human-time", help="With --human: seconds every seat has for a move (a person needs more).", min=1.0
    ),
]


def play(
    bot_dirs: BotDirs,
    seed: SeedOption = DEFAULTS.seed,
    move_time: MoveTimeOption = DEFAULTS.move_time,
    time_bank: TimeBankOption = DEFAULTS.time_bank,
    startup_time: StartupTimeOption = DEFAULTS.startup_time,
    replay: ReplayOption = None,
    game: GameOption = DEFAULTS.game,
    set_: SetOption = [],  # noqa: B006
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
    variant: VariantOption = DEFAULTS.variant,
    settings_file: SettingsFileOption = DEFAULTS.settings_file,
    fair_time: FairTimeOption = DEFAULTS.fair_time,
    strict: StrictOption = False,
    db: DbOption = (DEFAULT_DB),
    human: HumanOption = False,
    human_seat: HumanSeatOption = 0,
    human_time: HumanTimeOption = 600.0,
) -> None:
    """Play one game between bots and print each round and the final standings. Exit
    status 3 when a seat was disqualified (with --strict: when any seat had a fault).
    With --human you take a seat at this terminal: shown what your seat sees and what
    you may answer, asked for your move, every seat given --human-time a move."""
    import msgspec
    import trio

    from arena.cli.live import LivePrinter
    from arena.cli.sandbox import open_sandbox, prepare
    from arena.games.registry import get_game
    from arena.play.match import MatchSpec
    from arena.play.referee import play_match, single_game
    from arena.render import seat_labels
    from arena.render.common import standings_table
    from arena.tournaments.roundrobin import sigterm_as_ctrl_c, until_interrupted

    options = MatchOptions(
        game=game,
        sets=tuple(set_),
        variant=variant,
        settings_file=settings_file,
        move_time=move_time,
        time_bank=time_bank,
        startup_time=startup_time,
        sandbox=sandbox_name,
        seed=seed,
        fair_time=fair_time,
    )
    sigterm_as_ctrl_c()  # Ctrl-C and SIGTERM stop it as they stop a tournament: every bot, exit 130
    with user_errors():
        bots = [playing_bot(ref, db) for ref in bot_dirs]
        chosen = choose_game(options.game, [plays(b) for b in bots])
        limits = options.limits()
        if human:
            from arena.play.person import person_bot

            terminal = _terminal()
            if human_seat > len(bots):
                fail(f"--human-seat {human_seat}: there are {len(bots) + 1} seats, 0 to {len(bots)}")
            bots.insert(human_seat, person_bot())
            limits = msgspec.structs.replace(limits, move_ms=round(human_time * 1000))
        rules = get_game(chosen).rules
        settings = options.settings()
        rules.parse_settings(settings, len(bots))
        seed = random.randrange(2**31) if options.seed is None else options.seed
        spec = MatchSpec(chosen, settings, bots, single_game(bots, seed), limits, fair_time=options.fair_time)
        sandbox = open_sandbox(options.sandbox)
        if human:
            from arena.play.person import WithPerson, at_terminal

            sandbox = WithPerson(sandbox, bots[human_seat], at_terminal(chosen, *terminal))
        prepare(sandbox, bots)
        labels = seat_labels([b.name for b in bots])
        isolations = sorted({sandbox.isolation_for(b) for b in bots})
        title = title_of(chosen)
        console.print(f"[bold]{title}[/] · {len(bots)} seats · seed {seed} · sandbox: {'; '.join(isolations)}")
        warn_about(isolations)
        console.print("seats: " + ", ".join(labels), soft_wrap=True)
        result = trio.run(until_interrupted, play_match, spec, sandbox, LivePrinter(chosen, labels))
        outcome = result.games[0]
        console.print(
            standings_table(outcome.ranks, outcome.scores, outcome.statuses, labels, title=f"Final standings · {title}")
        )
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


def _terminal() -> tuple[int, int]:
    """The terminal a person plays at: this command's stdin and stdout, both a terminal."""
    import os
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("--human needs a terminal: run arena play --human with its input and output at one (not a pipe)")
    return os.dup(sys.stdin.fileno()), os.dup(sys.stdout.fileno())


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
"""The checkout's sample bots (arena/cli/ is two folders below it)."""


DemoDbOption = Annotated[Path, typer.Option("--db", help="The arena's database.")]
DealsOption = Annotated[int, typer.Option(help="Deals per table.", min=1)]


def demo(
    db: DemoDbOption = Path("arena.db"),
    deals: DealsOption = DEFAULTS.deals,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
) -> None:
    """A small demo tournament of the sample bots, then the leaderboard of every game stored."""
    if not (SAMPLE_BOTS / "heuristic").is_dir():
        fail(f"{SAMPLE_BOTS}: the sample bots are not here (run the demo from a checkout of Six Arena)")
    from arena.cli.results import leaderboard_cmd
    from arena.cli.tournaments import tournament_run

    bots = [str(SAMPLE_BOTS / name) for name in ("heuristic", "random", "lowest")]
    tournament_run(bots, table_size=3, deals=deals, db=db, sandbox_name=sandbox_name)
    console.print("\n[bold]Every game in the database:[/]")
    leaderboard_cmd(db=db)
