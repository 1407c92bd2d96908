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
from pathlib import Path
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
    add: Annotated[
        list[str],
        typer.Option(
            "--add",
            help="With --resume: add this bot (folder or NAME[:VERSION]) to the league; only the tables that seat"
            " an added bot are played (repeatable).",
            metavar="BOT",
        ),
    ] = [],  # noqa: B006
    game: Annotated[str | None, typer.Option(help="The game to play (default nimmt).", show_default=False)] = None,
    set_: Annotated[list[str], typer.Option("--set", help="A game setting KEY=VALUE (repeatable).")] = [],  # noqa: B006
    move_time: Annotated[float, typer.Option(help="Seconds per move.", min=0.001)] = 1.0,
    time_bank: Annotated[float, typer.Option(help="Extra seconds per game for moves that overrun.", min=0.0)] = 10.0,
    startup_time: Annotated[float, typer.Option(help="Seconds a bot has to start and answer hello.", min=0.001)] = 10.0,
    variant: VariantOption = None,
    settings_file: SettingsFileOption = None,
) -> None:
    """Run a round robin: every table of K bots plays D deals, each once per seat rotation.
    With --resume --name N: finish it; with --add BOT too: grow its league by that bot."""
    sigterm_as_ctrl_c()  # stopped by a service manager or `kill`: interrupted, resumable
    with user_errors(), contextlib.ExitStack() as held:
        if add and not resume:
            fail(f"--add {add[0]}: it adds a bot to an existing league: use it with --resume --name NAME")
        if resume and name is None:
            fail("--resume needs the --name of the tournament to finish")
        store = open_store(db, must_exist=resume)
        joining: list[tuple[str, Any]] = []
        if resume:
            assert name is not None
            tournament = store.get_tournament(name)
            if tournament is None:
                known = ", ".join(store.tournament_names()) or "none yet"
                fail(f"no tournament {name!r} in {db} (there are: {known})")
            if "gauntlet" in tournament.config:  # its schedule is played only as far as its test needs
                fail(f"{name!r} is a gauntlet: arena gauntlet --resume --name {name}")
            if game is not None and game != tournament.game:
                fail(f"--game {game}: tournament {name!r} plays {tournament.game}")
            config = msgspec.convert(tournament.config, TournamentConfig)
            stored = [store.get_bot(ref) for ref in config.bots]
            if bots and [store.resolve_bot(b).ref for b in bots] != config.bots:
                fail(f"tournament {name!r} was run with {', '.join(config.bots)}: resume it without naming bots")
            joining = bots_to_add(store, add, tournament, config)  # checked before anything is written
        else:
            game = game or "nimmt"
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
            limits = TimeLimits(round(move_time * 1000), round(time_bank * 1000), round(startup_time * 1000))
            config = TournamentConfig([b.ref for b in stored], size, deals, limits)
            name = name or f"{game}-{dt.datetime.now():%Y%m%d-%H%M%S}"
            seed = random.randrange(2**31) if seed is None else seed
            tournament = store.create_tournament(
                name, game, variant_of(parsed), parsed, seed, msgspec.to_builtins(config)
            )
        held.enter_context(store.lease(tournament.id))  # one run at a time; released at the end
        if joining:
            tournament, config, stored = grow_league(store, tournament, config, stored, joining)
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
            f" {config.table_size}, {config.deals} deal{'s' * (config.deals != 1)} · seed {tournament.seed} · {db}"
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
        from leaderboard.board import leaderboard

        print_board(
            leaderboard(store, tournament.game, tournament.variant, tournament.name), f"Leaderboard: {tournament.name}"
        )


def bots_to_add(store: Any, refs: list[str], tournament: Any, config: TournamentConfig) -> list[tuple[str, Any]]:
    """The bots ``--add`` names, as ``(name:version, folder's Bot or StoredBot)``, each
    checked against the league (not in it yet, plays its game) before anything is
    stored: a refused ``--add`` leaves the database as it was."""
    from .bots import load_bot

    joining: list[tuple[str, Any]] = []
    for ref in refs:
        if Path(ref).is_dir():
            bot: Any = load_bot(ref)
            games = bot.manifest.games
        elif "/" in ref or Path(ref).exists():
            fail(f"--add {ref}: no such bot folder")
        else:
            bot = store.get_bot(ref)
            games = bot.games
        key = f"{bot.name}:{bot.version}"
        if key in config.bots:
            known = ", ".join(config.bots)
            fail(f"--add {ref}: {key} is already in tournament {tournament.name!r} (its bots: {known})")
        if key in [k for k, _ in joining]:
            fail(f"--add {ref}: {key} is named twice")
        if tournament.game not in games:
            fail(
                f"--add {ref}: {key} does not play {tournament.game}, the game of tournament {tournament.name!r}"
                f" (its bot.toml lists {', '.join(games) or 'no game'})"
            )
        joining.append((key, bot))
    return joining


def grow_league(
    store: Any, tournament: Any, config: TournamentConfig, stored: list[StoredBot], joining: list[tuple[str, Any]]
) -> tuple[Any, TournamentConfig, list[StoredBot]]:
    """Add the ``joining`` bots to the league (it holds the tournament's lease): store
    those given as folders, record the enlarged bot list and the size it grew from, and
    say what that schedules. The tables played so far keep their numbers and deal seeds."""
    from .tournament import schedule_of

    added = [b if isinstance(b, StoredBot) else store.add_bot(b.path) for _, b in joining]
    grown = msgspec.structs.replace(
        config, bots=[*config.bots, *(b.ref for b in added)], grown=[*config.grown, len(config.bots)]
    )
    before = schedule_of(tournament, config)
    store.grow_tournament(tournament.id, msgspec.to_builtins(grown))
    tournament = store.get_tournament(tournament.name)
    after = schedule_of(tournament, grown)
    new_games = sum(len(m.games) for m in after[len(before) :])
    console.print(
        f"added {', '.join(b.ref for b in added)} to {tournament.name}: {len(after) - len(before)} new tables,"
        f" {new_games} games; the {len(before)} tables played so far are kept",
        markup=False,
        soft_wrap=True,
    )
    return tournament, grown, [*stored, *added]


def effective_status(tournament: Any, holders: dict[int, str]) -> str:
    """``running`` only while a live arena holds the tournament's lease: one stored as
    running that nobody runs was stopped without a word (kill -9), so it is interrupted."""
    if tournament.id in holders:
        return "running"
    return "interrupted" if tournament.status == "running" else str(tournament.status)


def scheduled_games(tournament: Any) -> tuple[int, int] | None:
    """``(games, matches)`` its schedule holds; None when its config is not a round robin's."""
    from .tournament import schedule_of

    try:
        config = msgspec.convert(tournament.config, TournamentConfig)
        schedule = schedule_of(tournament, config)
    except (msgspec.ValidationError, ValueError):
        return None
    return sum(len(m.games) for m in schedule), len(schedule)


def resume_command(tournament: Any, db: Path) -> str:
    command = "arena gauntlet" if "gauntlet" in tournament.config else "arena tournament run"
    return f"{command} --resume --name {tournament.name} --db {db}"


def tournament_board(tournament: Any) -> tuple[str, str]:
    """The board the tournament's games are rated on: its key and that key in words."""
    from .store import board_key, board_label

    key = board_key(tournament.game, tournament.settings)
    return key, board_label(key)


def short_time(stamp: str | None) -> str:
    """``2025-03-01T14:05:09+00:00`` as ``2025-03-01 14:05`` (UTC), for a table."""
    return "" if not stamp else stamp[:16].replace("T", " ")


TOURNAMENT_FIELDS = ("name", "game", "board", "board_label", "status", "games", "scheduled", "created", "finished")


@tournament_app.command("list")
def tournament_list(
    db: DbOption = DEFAULT_DB,
    format_: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
) -> None:
    """The tournaments in the database: board, status, games played of those scheduled, when."""
    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db, read_only=True)
        holders = store.lease_holders()
        played = store.games_per_tournament()
        rows = []
        for t in store.list_tournaments():
            key, label = tournament_board(t)
            scheduled = scheduled_games(t)
            rows.append(
                {
                    "name": t.name,
                    "game": t.game,
                    "board": key,
                    "board_label": label,
                    "status": effective_status(t, holders),
                    "games": played.get(t.id, 0),
                    "scheduled": None if scheduled is None else scheduled[0],
                    "created": t.created,
                    "finished": t.finished,
                }
            )
        if format_ == "json":
            print(msgspec.json.format(msgspec.json.encode(rows).decode(), indent=2))
            return
        if format_ == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, TOURNAMENT_FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            print(out.getvalue(), end="")
            return
        table = Table(title=escape(f"Tournaments in {db}"))
        for column in ("tournament", "board", "status", "games", "created", "finished"):
            table.add_column(column, justify="right" if column == "games" else "left")
        for row in rows:
            of = "?" if row["scheduled"] is None else row["scheduled"]
            table.add_row(
                escape(row["name"]),
                escape(row["board_label"]),
                row["status"],
                f"{row['games']}/{of}",
                short_time(row["created"]),
                short_time(row["finished"]),
            )
        print_table(table)
        if not rows:
            err_console.print("no tournaments yet (`arena tournament run` starts one)")


@tournament_app.command("show")
def tournament_show(
    name: Annotated[str, typer.Argument(help="The tournament's name (`arena tournament list`).", metavar="NAME")],
    db: DbOption = DEFAULT_DB,
    format_: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """One tournament: its settings, bots and versions, seed, schedule, time limits,
    status and progress, and how to resume it when it was interrupted."""
    with user_errors():
        if format_ not in ("text", "json"):
            fail(f"--format {format_!r}: choose text or json")
        store = open_store(db, read_only=True)
        t = store.get_tournament(name)
        if t is None:
            fail(f"no tournament {name!r} in {db} (there are: {', '.join(store.tournament_names()) or 'none'})")
        holders = store.lease_holders()
        status = effective_status(t, holders)
        key, label = tournament_board(t)
        scheduled = scheduled_games(t)
        games = store.count_games(t.id)
        seats = store.tournament_seat_counts(t.id)
        stored = store.bot_names()
        refs = list(t.config.get("bots") or [])
        refs += [ref for ref in seats if ref not in refs]
        bots = [{"bot": ref, "games": seats.get(ref, 0), "stored": ref in stored.values()} for ref in refs]
        grown = list(t.config.get("grown") or [])
        info = {
            "name": t.name,
            "game": t.game,
            "board": key,
            "board_label": label,
            "status": status,
            "run_by": holders.get(t.id),
            "created": t.created,
            "finished": t.finished,
            "seed": t.seed,
            "settings": t.settings,
            "config": t.config,
            "bots": bots,
            "games": games,
            "scheduled": None if scheduled is None else scheduled[0],
            "matches": None if scheduled is None else scheduled[1],
            "resume": resume_command(t, db) if status == "interrupted" else None,
        }
        if format_ == "json":
            print(msgspec.json.format(msgspec.json.encode(info).decode(), indent=2))
            return
        limits = t.config.get("limits") or {}
        deals = t.config.get("deals")
        lines = [
            f"tournament {t.name} · {label} ({key})",
            f"status: {status}" + (f" (run by {holders[t.id]})" if t.id in holders else ""),
            f"created {t.created}" + (f", finished {t.finished}" if t.finished else ""),
            f"games: {games}" + (f" of {scheduled[0]} ({games / max(scheduled[0], 1):.0%})" if scheduled else ""),
            f"seed: {t.seed}",
            f"schedule: tables of {t.config.get('table_size')}, {deals} deal{'s' * (deals != 1)} each, every deal"
            " once per seat rotation" + (f"; {scheduled[1]} tables" if scheduled else ""),
            f"time: {limits.get('move_ms', 1000) / 1000:g} s a move, a bank of {limits.get('bank_ms', 10000) / 1000:g} s"
            f" a game, {limits.get('startup_ms', 10000) / 1000:g} s to start; fair time"
            f" {'on' if t.config.get('fair_time', True) else 'off'}",
            "settings: " + (", ".join(f"{k}={v}" for k, v in t.settings.items()) or "the game's defaults"),
            f"bots ({len(bots)}):",
        ]
        for entry in bots:
            removed = "" if entry["stored"] else " (removed from the database)"
            lines.append(f"  {entry['bot']}: {entry['games']} games{removed}")
        if grown:
            sizes = [*grown, len(t.config.get("bots") or [])]
            lines.append("grown: " + " -> ".join(str(n) for n in sizes) + " bots (--add)")
        for line in lines:
            console.print(line, markup=False, soft_wrap=True)
        if info["resume"]:
            console.print(f"resume with: {info['resume']}", markup=False, soft_wrap=True)


@tournament_app.command("delete")
def tournament_delete(
    name: Annotated[str, typer.Argument(help="The tournament's name (`arena tournament list`).", metavar="NAME")],
    db: DbOption = DEFAULT_DB,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not at a terminal).")] = False,
) -> None:
    """Delete a tournament, its games and their seats (one transaction). Its bots stay;
    a tournament that an arena is running is refused."""
    with user_errors():
        store = open_store(db)
        t = store.get_tournament(name)
        if t is None:
            fail(f"no tournament {name!r} in {db} (there are: {', '.join(store.tournament_names()) or 'none'})")
        store.check_not_running(t.id, t.name, "it cannot be deleted while it runs")
        games = store.count_games(t.id)
        if not yes:
            if not sys.stdin.isatty():
                fail(f"deleting tournament {name!r} and its {games} games needs a yes: not at a terminal, add --yes")
            if not typer.confirm(f"Delete tournament {name!r} and its {games} games? Its bots stay.", default=False):
                err_console.print("nothing deleted")
                raise typer.Exit(1)
        deleted = store.delete_tournament(t.id)
        console.print(f"deleted tournament {name} and its {deleted} games from {db}; its bots stay", markup=False)


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
    game: Annotated[
        str | None,
        typer.Option(
            "--game",
            "--board",
            help="Only this game (nimmt), or only one board: its key, as the titles show it"
            " (nimmt/standard, nimmt/standard,shedding, sixes/standard,chips=15).",
        ),
    ] = None,
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
    anchor: Annotated[
        str | None,
        typer.Option(
            help="Fix the scale: this bot has this Elo and the others are relative to it"
            " (a bare NAME is its highest version on the board).",
            metavar="NAME[:VERSION]=ELO",
        ),
    ] = None,
) -> None:
    """Elo ratings with 95% intervals over every stored game (or one tournament), one board
    per game and rule set."""
    from leaderboard.board import (
        AnchorError,
        boards_csv,
        boards_json,
        leaderboard,
        los_csv,
        los_matrix,
        parse_anchor,
        render_los,
    )

    from .store import board_label, canonical_board

    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        fixed = None
        if anchor is not None:
            try:
                fixed = parse_anchor(anchor)
            except ValueError as exc:
                fail(f"--anchor {exc}")
        store = open_store(db, read_only=True)
        if tournament is not None and store.get_tournament(tournament) is None:
            fail(f"no tournament {tournament!r} in {db} (there are: {', '.join(store.tournament_names()) or 'none'})")
        stored = [f"{g}/{v}" for g, v in store.kinds(tournament)]
        keys = stored
        if game:
            if "/" in game:
                try:
                    wanted = canonical_board(game)
                except StoreError:
                    wanted = game
                keys = [k for k in stored if k == wanted]
            else:
                keys = [k for k in stored if k.partition("/")[0] == game]
            if not keys:
                where = f" in tournament {tournament}" if tournament else ""
                fail(
                    f"no games of {game} stored{where}: the boards are {', '.join(stored) or 'none yet'}"
                    " (--board KEY chooses one)"
                )
        boards, unanchored, on_boards = {}, {}, set()
        for key in keys:
            g, _, v = key.partition("/")
            try:
                boards[key] = leaderboard(store, g, v, tournament, anchor=fixed)
            except AnchorError as exc:  # shown as it is, saying why
                boards[key] = leaderboard(store, g, v, tournament)
                unanchored[key] = (
                    f"{fixed[0] if fixed else anchor} has no games on this board" if exc.missing else str(exc)
                )
                on_boards.update(exc.bots)
        if fixed is not None and keys and len(unanchored) == len(keys):
            if not on_boards:  # the fit refused it
                fail(f"--anchor {anchor}: {unanchored[keys[0]]}")
            which = f"board {keys[0]}: its" if len(keys) == 1 else "these boards: their"
            fail(f"--anchor {fixed[0]}: no such bot on {which} bots are {', '.join(sorted(on_boards))}")
        matrices = None
        if los:
            matrices = {k: los_matrix(store, k.partition("/")[0], k.partition("/")[2], tournament) for k in keys}
        if format_ == "json":
            print(boards_json(boards, matrices))
        elif format_ == "csv":
            print(boards_csv(boards) if matrices is None else los_csv(matrices), end="")
        else:
            scope = f", tournament {tournament}" if tournament else ""
            for key, rows in boards.items():
                print_board(rows, f"Leaderboard {board_label(key)} ({key}){scope}")
                if fixed is not None:
                    print_line(
                        f"not anchored ({unanchored[key]}): the mean is 1500"
                        if key in unanchored
                        else f"anchored: {fixed[0]} at {fixed[1]:g} Elo, the others relative to it"
                    )
                if matrices is not None:
                    bots, matrix = matrices[key]
                    title = f"Likelihood of superiority {board_label(key)}{scope} (row better than column #)"
                    print_table(render_los(bots, matrix, title))
            if not boards:
                err_console.print("no games stored yet")


def print_board(rows: list[Any], title: str) -> None:
    """A board as ``arena leaderboard`` shows it: a table per part, then its notes."""
    from leaderboard.board import render_board

    for shown in render_board(rows, title, fit_width()):
        if isinstance(shown, str):
            print_line(shown)
        else:
            print_table(shown)


def print_line(line: str) -> None:
    """A line of text under a table: wrapped to the terminal, whole into a file or a pipe."""
    if fit_width() is None:
        print(line)
    else:
        console.print(line, markup=False, highlight=False, emoji=False)


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
    newest: Annotated[bool, typer.Option("--newest", help="Newest first (--limit then keeps the newest).")] = False,
) -> None:
    """List stored games, oldest first, or newest first with --newest (`arena replay GAME_ID` shows one)."""
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
            games = store.find_games(tournament_id, None, limit, offset, newest_first=newest)
        else:
            games = games_of_bot(store, bot, tournament_id, limit, offset, newest)
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


def games_of_bot(
    store: Any, ref: str, tournament_id: int | None, limit: int, offset: int, newest: bool = False
) -> list[Any]:
    """A page of the games of stored bot ``ref``: ``NAME:VERSION``, or every version of
    ``NAME``; oldest first, or ``newest`` first."""
    if ":" in ref:
        ids = [store.get_bot(ref).id]
    else:
        ids = [b.id for b in store.list_bots() if b.name == ref] or [store.get_bot(ref).id]  # none: its error
    pages = {g.id: g for i in ids for g in store.find_games(tournament_id, i, limit + offset, 0, newest_first=newest)}
    return [pages[i] for i in sorted(pages, reverse=newest)][offset : offset + limit]


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
