"""``arena tournament run``, ``arena leaderboard`` and ``arena games``."""

from __future__ import annotations

import datetime as dt
import random
import time
from typing import Annotated

import msgspec
import trio
import typer
from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .cli import (
    DEFAULT_DB,
    SANDBOX_HELP,
    DbOption,
    SettingsFileOption,
    VariantOption,
    app,
    check_games,
    console,
    err_console,
    fail,
    game_settings,
    open_sandbox,
    open_store,
    prepare,
    user_errors,
    warn_about,
)
from .games import get_game
from .referee import GameResult, TimeLimits
from .store import StoredBot
from .tournament import Progress as TournamentProgress
from .tournament import TournamentConfig, run_tournament, variant_of

tournament_app = typer.Typer(help="Round-robin tournaments with duplicate deals.", no_args_is_help=True)
app.add_typer(tournament_app, name="tournament")


class LiveProgress(TournamentProgress):
    """A rich progress bar (games, games per second, ETA) over the live top of the table."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.bar = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.bar.add_task("games", total=1, rate="")
        self.standing: dict[str, list[float]] = {}
        self.start = time.perf_counter()
        self.played = 0

    def started(self, total: int, done: int) -> None:
        self.bar.update(self.task, total=total, completed=done)
        self._draw()

    def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
        self.played += 1
        for bot, rank, score in zip(bots, result.ranks, result.scores, strict=True):
            entry = self.standing.setdefault(bot.ref, [0, 0, 0])
            entry[0] += 1
            entry[1] += rank == 1
            entry[2] += score / max(result.rounds, 1)
        rate = self.played / max(time.perf_counter() - self.start, 1e-9)
        self.bar.update(self.task, advance=1, rate=f"{rate:.1f} games/s")
        self._draw()

    def _draw(self) -> None:
        table = Table(title="top of the table (wins so far)", title_justify="left")
        for column in ("bot", "games", "wins", "score/round"):
            table.add_column(column, justify="right" if column != "bot" else "left")
        top = sorted(self.standing.items(), key=lambda kv: (-kv[1][1] / kv[1][0], kv[1][2] / kv[1][0]))[:5]
        for ref, (games, wins, per_round) in top:
            table.add_row(ref, str(int(games)), f"{wins / games:.0%}", f"{per_round / games:.2f}")
        self.live.update(Group(self.bar, table))


@tournament_app.command("run")
def tournament_run(
    bots: Annotated[
        list[str], typer.Argument(help="Bot folders, or stored bots as NAME or NAME:VERSION.", metavar="BOT...")
    ] = [],  # noqa: B006
    table_size: Annotated[int | None, typer.Option(help="Seats per game (default: all bots, up to 10).", min=2)] = None,
    deals: Annotated[int, typer.Option(help="Deals per table; each is played once per seat rotation.", min=1)] = 4,
    concurrency: Annotated[int, typer.Option(help="Matches played at once.", min=1)] = 2,
    db: DbOption = DEFAULT_DB,
    name: Annotated[str | None, typer.Option(help="The tournament's name (needed to --resume it).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the schedule and the deals.")] = None,
    sandbox_name: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    resume: Annotated[bool, typer.Option(help="Finish the tournament --name: play only the games not stored.")] = False,
    game: Annotated[str, typer.Option(help="The game to play.")] = "nimmt",
    set_: Annotated[list[str], typer.Option("--set", help="A game setting KEY=VALUE (repeatable).")] = [],  # noqa: B006
    move_time: Annotated[float, typer.Option(help="Seconds per move.", min=0.001)] = 1.0,
    time_bank: Annotated[float, typer.Option(help="Extra seconds per game for moves that overrun.", min=0.0)] = 10.0,
    variant: VariantOption = None,
    settings_file: SettingsFileOption = None,
) -> None:
    """Run a round robin: every table of K bots plays D deals, each once per seat rotation."""
    with user_errors():
        store = open_store(db, must_exist=resume)
        if resume:
            if name is None:
                fail("--resume needs the --name of the tournament to finish")
            tournament = store.get_tournament(name)
            if tournament is None:
                known = ", ".join(store.tournament_names()) or "none yet"
                fail(f"no tournament {name!r} in {db} (there are: {known})")
            config = msgspec.convert(tournament.config, TournamentConfig)
            stored = [store.get_bot(ref) for ref in config.bots]
            if bots and [store.resolve_bot(b).ref for b in bots] != config.bots:
                fail(f"tournament {name!r} was run with {', '.join(config.bots)}: resume it without naming bots")
        else:
            if len(bots) < 2:
                fail("a tournament needs at least 2 bots")
            stored = [store.resolve_bot(b) for b in bots]
            refs = [b.ref for b in stored]
            if len(set(refs)) != len(refs):
                fail(f"a bot is named twice: {', '.join(refs)}")
            size = table_size or min(len(stored), 10)
            if size > len(stored):
                fail(f"--table-size {size} is more than the {len(stored)} bots")
            settings = game_settings(set_, variant, settings_file)
            rules = get_game(game)
            check_games([b.load() for b in stored], game)
            parsed = msgspec.to_builtins(rules.parse_settings(settings, size))
            limits = TimeLimits(round(move_time * 1000), round(time_bank * 1000))
            config = TournamentConfig([b.ref for b in stored], size, deals, limits)
            name = name or f"{game}-{dt.datetime.now():%Y%m%d-%H%M%S}"
            seed = random.randrange(2**31) if seed is None else seed
            tournament = store.create_tournament(
                name, game, variant_of(parsed), parsed, seed, msgspec.to_builtins(config)
            )
        sandbox = open_sandbox(sandbox_name)
        loaded = [b.load() for b in stored]
        prepare(sandbox, loaded)
        warn_about(sorted({sandbox.isolation_for(b) for b in loaded}))
        console.print(
            f"tournament [bold]{tournament.name}[/] · {tournament.game} · {len(stored)} bots, tables of"
            f" {config.table_size}, {config.deals} deals · seed {tournament.seed} · {db}"
        )
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            progress = LiveProgress(live)
            try:
                played = trio.run(run_tournament, store, tournament, stored, sandbox, concurrency, progress)
            except BaseException:
                store.set_status(tournament.id, "interrupted")
                err_console.print(
                    f"[yellow]resume with:[/] arena tournament run --resume --name {tournament.name} --db {db}"
                )
                raise
        console.print(f"\n{played} games played; {store.count_games(tournament.id)} stored for {tournament.name}")
        from leaderboard.board import leaderboard, render_table

        console.print(
            render_table(
                leaderboard(store, tournament.game, tournament.variant, tournament.name),
                f"Leaderboard: {tournament.name}",
            )
        )


@app.command("leaderboard")
def leaderboard_cmd(
    db: DbOption = DEFAULT_DB,
    game: Annotated[str | None, typer.Option(help="Only this game (nimmt, or nimmt/VARIANT).")] = None,
    tournament: Annotated[str | None, typer.Option(help="Only this tournament.")] = None,
    format_: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
    los: Annotated[bool, typer.Option("--los", help="Also print the likelihood-of-superiority matrix.")] = False,
) -> None:
    """Elo ratings with 95% intervals over every stored game (or one tournament)."""
    from leaderboard.board import leaderboard, los_matrix, render_csv, render_los, render_table

    with user_errors():
        if format_ not in ("table", "json", "csv"):
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db)
        if tournament is not None and store.get_tournament(tournament) is None:
            fail(f"no tournament {tournament!r} in {db}")
        if game:
            name, _, chosen = game.partition("/")
            kinds = [(g, v) for g, v in store.kinds(tournament) if g == name and (not chosen or v == chosen)]
            if not kinds:
                fail(f"no games of {game} stored" + (f" in tournament {tournament}" if tournament else ""))
        else:
            kinds = store.kinds(tournament)
        boards = {f"{g}/{v}": leaderboard(store, g, v, tournament) for g, v in kinds}
        if format_ == "json":
            print(msgspec.json.format(msgspec.json.encode(boards).decode(), indent=2))
        elif format_ == "csv":
            print("game," + render_csv([]).splitlines()[0])
            for kind, rows in boards.items():
                for line in render_csv(rows).splitlines()[1:]:
                    print(f"{kind},{line}")
        else:
            for kind, rows in boards.items():
                console.print(
                    render_table(rows, f"Leaderboard {kind}" + (f", tournament {tournament}" if tournament else ""))
                )
            if not boards:
                err_console.print("no games stored yet")
        if los:
            for g, v in kinds:
                bots, matrix = los_matrix(store, g, v, tournament)
                console.print(render_los(bots, matrix))


@app.command("games")
def games_cmd(
    db: DbOption = DEFAULT_DB,
    tournament: Annotated[str | None, typer.Option(help="Only this tournament.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many.", min=1)] = 50,
    offset: Annotated[int, typer.Option(help="Skip this many first.", min=0)] = 0,
) -> None:
    """List stored games (`arena replay GAME_ID` shows one)."""
    with user_errors():
        store = open_store(db)
        rows = store.games(tournament, limit, offset)
        table = Table(title=f"Games in {db}" + (f", tournament {tournament}" if tournament else ""))
        for column in ("id", "tournament", "match", "deal", "rounds", "seats (score, rank)", "started"):
            table.add_column(column)
        for r in rows:
            seats = ", ".join(
                f"{b} {s}" + (f" #{k}" if k == 1 else "") + ("" if st == "ok" else f" [{st}]")
                for b, s, k, st in zip(r.bots, r.scores, r.ranks, r.statuses, strict=True)
            )
            table.add_row(str(r.id), r.tournament, str(r.match_no), str(r.deal), str(r.rounds), seats, r.started)
        console.print(table)
        if not rows:
            err_console.print("no games stored" + (f" for {tournament}" if tournament else ""))
