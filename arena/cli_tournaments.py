"""``arena tournament run``, ``arena leaderboard`` and ``arena games``."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import os
import random
import sys
import time
from typing import Annotated, Any

import msgspec
import trio
import typer
from rich.cells import cell_len
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
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
from .store import StoredBot, StoreError
from .tournament import Progress as TournamentProgress
from .tournament import TournamentConfig, run_tournament, sigterm_as_ctrl_c, until_interrupted, variant_of

tournament_app = typer.Typer(help="Round-robin tournaments with duplicate deals.", no_args_is_help=True)
app.add_typer(tournament_app, name="tournament")


PROGRESS_SECONDS = "ARENA_PROGRESS_SECONDS"
"""Into a file or a pipe, a progress line at least this often (seconds; default 60)."""


def duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``2 h 5 min``: how long is left, as a log line says it."""
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


class LiveProgress(TournamentProgress):
    """A rich progress bar (games, games per second, ETA) over the live top of the table.

    When stdout is not a terminal (nohup, cron, CI, a pipe) a live display shows nothing
    until the end, so instead a plain line goes to stderr at every tenth of the games
    and at least every ``ARENA_PROGRESS_SECONDS`` (60): ``12/120 games (10%), 0.4
    games/s, about 4 min left``."""

    def __init__(self, live: Live) -> None:
        self.plain = not console.is_terminal
        try:
            self.every_s = float(os.environ.get(PROGRESS_SECONDS, "60"))
        except ValueError:
            self.every_s = 60.0
        self.total = self.done = self.tenth = 0
        self.last_line = time.perf_counter()
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
        self.total, self.done = total, done
        self.tenth = done * 10 // max(total, 1)
        self.bar.update(self.task, total=total, completed=done)
        self._draw()

    def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
        self.played += 1
        self.done += 1
        if self.plain:
            self._line()
            return
        for bot, rank, score in zip(bots, result.ranks, result.scores, strict=True):
            entry = self.standing.setdefault(bot.ref, [0, 0, 0])
            entry[0] += 1
            entry[1] += rank == 1
            entry[2] += score / max(result.rounds, 1)
        rate = self.played / max(time.perf_counter() - self.start, 1e-9)
        self.bar.update(self.task, advance=1, rate=f"{rate:.1f} games/s")
        self._draw()

    def _line(self) -> None:
        """One plain progress line (no colours, no cursor moves) when a tenth more of the
        games is done or the period has passed."""
        now = time.perf_counter()
        tenth = self.done * 10 // max(self.total, 1)
        if tenth <= self.tenth and now - self.last_line < self.every_s:
            return
        self.tenth, self.last_line = tenth, now
        rate = self.played / max(now - self.start, 1e-9)
        left = self.total - self.done
        line = f"{self.done}/{self.total} games ({self.done / max(self.total, 1):.0%}), {rate:.1f} games/s"
        line += f", about {duration(left / rate)} left" if left > 0 else ", all played"
        print(line, file=sys.stderr, flush=True)

    def _draw(self) -> None:
        if self.plain:
            return
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
    sigterm_as_ctrl_c()  # stopped by a service manager or `kill`: interrupted, resumable
    with user_errors(), contextlib.ExitStack() as held:
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
        held.enter_context(store.lease(tournament.id))  # one run at a time; released at the end
        try:
            sandbox = open_sandbox(sandbox_name)
            loaded = [b.load() for b in stored]
            prepare(sandbox, loaded)
            warn_about(sorted({sandbox.isolation_for(b) for b in loaded}))
        except BaseException:  # a failed start does not leave the tournament "running"
            if tournament.status != "finished":
                with contextlib.suppress(StoreError):
                    store.set_status(tournament.id, "interrupted")
            raise
        console.print(
            f"tournament [bold]{tournament.name}[/] · {tournament.game} · {len(stored)} bots, tables of"
            f" {config.table_size}, {config.deals} deals · seed {tournament.seed} · {db}"
        )
        console.print("bots: " + ", ".join(b.ref for b in stored), soft_wrap=True, markup=False)
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            progress = LiveProgress(live)
            try:
                store.set_status(tournament.id, "running")  # a resumed one runs again
                played = trio.run(
                    until_interrupted, run_tournament, store, tournament, stored, sandbox, concurrency, progress
                )
            except BaseException:
                with contextlib.suppress(StoreError):  # a full disk: it still resumes
                    store.set_status(tournament.id, "interrupted")
                err_console.print(
                    f"[yellow]resume with:[/] arena tournament run --resume --name {tournament.name} --db {db}"
                )
                raise
        console.print(f"\n{played} games played; {store.count_games(tournament.id)} stored for {tournament.name}")
        from leaderboard.board import leaderboard, render_table

        print_table(
            render_table(
                leaderboard(store, tournament.game, tournament.variant, tournament.name),
                f"Leaderboard: {tournament.name}",
                fit_width(),
            )
        )


def fit_width() -> int | None:
    """The width tables must fit: the terminal's, or ``COLUMNS`` when it is set. None into
    a file or a pipe: there a table keeps its natural width, and nothing is cut."""
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console.width
    return None


def print_table(table: Table) -> None:
    """``table`` on stdout: fitted to the terminal, or whole into a file or a pipe."""
    from leaderboard.board import natural_width

    if fit_width() is None:
        title = cell_len(str(table.title or ""))
        Console(file=sys.stdout, width=max(natural_width(table), title), highlight=False).print(table)
    else:
        console.print(table)


FORMATS = ("table", "json", "csv")


@app.command("leaderboard")
def leaderboard_cmd(
    db: DbOption = DEFAULT_DB,
    game: Annotated[str | None, typer.Option(help="Only this game (nimmt, or nimmt/VARIANT).")] = None,
    tournament: Annotated[str | None, typer.Option(help="Only this tournament.")] = None,
    format_: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
    los: Annotated[
        bool,
        typer.Option(
            "--los",
            help="Also the likelihood of superiority: a matrix per board (table), a `los` field per row (json),"
            " or instead of the board one CSV row per pair of bots: game,bot,opponent,los (csv).",
        ),
    ] = False,
) -> None:
    """Elo ratings with 95% intervals over every stored game (or one tournament)."""
    from leaderboard.board import boards_csv, boards_json, leaderboard, los_csv, los_matrix, render_los, render_table

    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db, read_only=True)
        if tournament is not None and store.get_tournament(tournament) is None:
            fail(f"no tournament {tournament!r} in {db} (there are: {', '.join(store.tournament_names()) or 'none'})")
        if game:
            name, _, chosen = game.partition("/")
            kinds = [(g, v) for g, v in store.kinds(tournament) if g == name and (not chosen or v == chosen)]
            if not kinds:
                fail(f"no games of {game} stored" + (f" in tournament {tournament}" if tournament else ""))
        else:
            kinds = store.kinds(tournament)
        boards = {f"{g}/{v}": leaderboard(store, g, v, tournament) for g, v in kinds}
        matrices = {f"{g}/{v}": los_matrix(store, g, v, tournament) for g, v in kinds} if los else None
        if format_ == "json":
            print(boards_json(boards, matrices))
        elif format_ == "csv":
            print(boards_csv(boards) if matrices is None else los_csv(matrices), end="")
        else:
            scope = f", tournament {tournament}" if tournament else ""
            for kind, rows in boards.items():
                print_table(render_table(rows, f"Leaderboard {kind}{scope}", fit_width()))
                if matrices is not None:
                    bots, matrix = matrices[kind]
                    title = f"Likelihood of superiority {kind}{scope} (row better than column #)"
                    print_table(render_los(bots, matrix, title))
            if not boards:
                err_console.print("no games stored yet")


@app.command("games")
def games_cmd(
    db: DbOption = DEFAULT_DB,
    tournament: Annotated[str | None, typer.Option(help="Only this tournament.")] = None,
    bot: Annotated[
        str | None,
        typer.Option(
            help="Only the games of this stored bot: NAME (any of its versions) or NAME:VERSION.",
            metavar="NAME[:VERSION]",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many.", min=1)] = 50,
    offset: Annotated[int, typer.Option(help="Skip this many first.", min=0)] = 0,
    format_: Annotated[
        str, typer.Option("--format", help="table, json (as the web's /api/games) or csv (one row per seat).")
    ] = "table",
) -> None:
    """List stored games, oldest first (`arena replay GAME_ID` shows one)."""
    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db, read_only=True)
        tournament_id = None
        if tournament is not None:
            found = store.get_tournament(tournament)
            if found is None:
                known = ", ".join(store.tournament_names()) or "none"
                fail(f"no tournament {tournament!r} in {db} (there are: {known})")
            tournament_id = found.id
        if bot is None:
            games = store.find_games(tournament_id, None, limit, offset)
        else:
            games = games_of_bot(store, bot, tournament_id, limit, offset)
        if format_ == "json":
            print(msgspec.json.format(msgspec.json.encode(games).decode(), indent=2))
            return
        if format_ == "csv":
            print(games_csv(games), end="")
            return
        scope = (f", tournament {tournament}" if tournament else "") + (f", bot {bot}" if bot else "")
        table = Table(title=escape(f"Games in {db}{scope}"))
        for column in ("id", "tournament", "match", "deal", "rounds", "seats (score, rank)", "started"):
            table.add_column(column)
        for g in games:
            seats = ", ".join(
                f"{s.bot} {s.score}" + (" #1" if s.rank == 1 else "") + ("" if s.status == "ok" else f" [{s.status}]")
                for s in g.seats
            )
            table.add_row(
                str(g.id), escape(g.tournament), str(g.match_no), str(g.deal), str(g.rounds), escape(seats), g.started
            )
        print_table(table)
        if not games:
            err_console.print("no games stored" + escape(scope.replace(",", " for", 1)))


def games_of_bot(store: Any, ref: str, tournament_id: int | None, limit: int, offset: int) -> list[Any]:
    """A page of the games of stored bot ``ref``: ``NAME:VERSION``, or every version of
    ``NAME``."""
    if ":" in ref:
        ids = [store.get_bot(ref).id]
    else:
        ids = [b.id for b in store.list_bots() if b.name == ref] or [store.get_bot(ref).id]  # none: its error
    pages = {g.id: g for i in ids for g in store.find_games(tournament_id, i, limit + offset, 0)}
    return [pages[i] for i in sorted(pages)][offset : offset + limit]


GAME_SEAT_FIELDS = ("id", "tournament", "match_no", "game_no", "deal", "game", "variant", "rounds", "started")


def games_csv(games: list[Any]) -> str:
    """One row per seat of each game: the game's fields, then the seat's, its faults by kind."""
    from .store import FAULT_KINDS

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*GAME_SEAT_FIELDS, "seat", "bot", "rank", "score", "status", *FAULT_KINDS])
    for g in games:
        for s in g.seats:
            writer.writerow(
                [*(getattr(g, f) for f in GAME_SEAT_FIELDS), s.seat, s.bot, s.rank, s.score, s.status]
                + [s.faults.get(kind, 0) for kind in FAULT_KINDS]
            )
    return out.getvalue()
