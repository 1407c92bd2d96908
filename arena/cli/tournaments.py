"""``arena tournament``: run a round robin, list, show and delete tournaments."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.cluster import (
    ClusterOption,
    TlsCaOption,
    TlsCertOption,
    TlsKeyOption,
    WaitWorkersOption,
    cluster_flags,
    join,
    open_player,
    tls_of,
)
from arena.cli.common import (
    DEFAULT_DB,
    FORMATS,
    DbOption,
    FormatOption,
    YesOption,
    console,
    deal_source,
    err_console,
    escape,
    fail,
    open_store,
    print_board,
    print_table,
    remember_folders,
    user_errors,
)
from arena.cli.options import (
    DEFAULTS,
    ConcurrencyOption,
    DealsOption,
    FairTimeOption,
    GameOption,
    MatchOptions,
    MoveTimeOption,
    NameOption,
    SandboxOption,
    SeedOption,
    SetOption,
    SettingsFileOption,
    StartupTimeOption,
    TimeBankOption,
    VariantOption,
    choose_game,
    named_bots,
    plays,
    title_of,
)
from arena.text import json_shown, shown
from arena.tournaments.plan import deals_of, resume_command

if TYPE_CHECKING:
    from arena.store import StoredBot
    from arena.tournaments.roundrobin import TournamentConfig

tournament_app = typer.Typer(help="Round-robin tournaments with duplicate deals.", no_args_is_help=True)


TournamentNameArgument = Annotated[
    str, typer.Argument(help="The tournament's name (`arena tournament list`).", metavar="NAME")
]
TableSizeOption = Annotated[
    int | None,
    typer.Option(
        help="Seats per game (default: every bot, up to 10: each table is the whole field; fewer seats, more"
        " tables: every combination of that many bots).",
        min=2,
        show_default=False,
    ),
]


BotsArgument = Annotated[
    list[str], typer.Argument(help="Bot folders, or stored bots as NAME or NAME:VERSION.", metavar="BOT...")
]
ResumeOption = Annotated[bool, typer.Option(help="Finish the tournament --name: play only the games not stored.")]
AddOption = Annotated[
    list[str],
    typer.Option(
        "--add",
        help="With --resume: add this bot (folder or NAME[:VERSION]) to the league; only the tables that seat"
        " an added bot are played (repeatable).",
        metavar="BOT",
    ),
]


@tournament_app.command("run")
def tournament_run(
    bots: BotsArgument = [],  # noqa: B006
    table_size: TableSizeOption = None,
    deals: DealsOption = DEFAULTS.deals,
    concurrency: ConcurrencyOption = DEFAULTS.concurrency,
    db: DbOption = DEFAULT_DB,
    name: NameOption = None,
    seed: SeedOption = DEFAULTS.seed,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
    resume: ResumeOption = False,
    add: AddOption = [],  # noqa: B006
    game: GameOption = DEFAULTS.game,
    set_: SetOption = [],  # noqa: B006
    move_time: MoveTimeOption = DEFAULTS.move_time,
    time_bank: TimeBankOption = DEFAULTS.time_bank,
    startup_time: StartupTimeOption = DEFAULTS.startup_time,
    variant: VariantOption = DEFAULTS.variant,
    settings_file: SettingsFileOption = DEFAULTS.settings_file,
    fair_time: FairTimeOption = DEFAULTS.fair_time,
    cluster: ClusterOption = None,
    wait_workers: WaitWorkersOption = None,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
) -> None:
    """Run a round robin: every table of K bots plays D deals, each once per seat rotation.
    With --resume --name N: finish it; with --add BOT too: grow its league by that bot."""
    import msgspec
    import trio
    from rich.live import Live

    from arena.cli.live import LiveProgress
    from arena.games.registry import get_game
    from arena.store import StoreError
    from arena.tournaments.plan import schedule_of
    from arena.tournaments.roundrobin import (
        TournamentConfig,
        run_tournament,
        sigterm_as_ctrl_c,
        stored_games,
        until_interrupted,
        variant_of,
    )

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
        concurrency=concurrency,
        deals=deals,
    )
    sigterm_as_ctrl_c()  # stopped by a service manager or `kill`: interrupted, resumable
    with user_errors(), contextlib.ExitStack() as held:
        if add and not resume:
            fail(f"--add {add[0]}: it adds a bot to an existing league: use it with --resume --name NAME")
        if resume and name is None:
            fail("--resume needs the --name of the tournament to finish")
        on_cluster = join(held, cluster, tls_of(tls_ca_file, tls_cert, tls_key), wait_workers, options.sandbox)
        joining: list[tuple[str, Any]] = []
        if resume:
            assert name is not None
            store = open_store(db)
            held.callback(store.close)  # the last thing done: the -wal folded into the file
            tournament = store.get_tournament(name)
            if tournament is None:
                known = ", ".join(store.tournament_names()) or "none yet"
                fail(f"no tournament {name!r} in {db} (there are: {known})")
            if "ladder" in tournament.config:  # no schedule: its tables follow the submissions
                fail(f"{name!r} is a ladder: arena ladder run --name {name}")
            if "gauntlet" in tournament.config:  # its schedule is played only as far as its test needs
                fail(f"{name!r} is a gauntlet: arena gauntlet --resume --name {name}")
            if game is not None and game != tournament.game:
                fail(f"--game {game}: tournament {name!r} plays {tournament.game}")
            config = msgspec.convert(tournament.config, TournamentConfig)
            stored = [store.get_bot(ref) for ref in config.bots]
            if bots and [store.resolve_bot(b).ref for b in bots] != config.bots:
                fail(f"tournament {name!r} was run with {', '.join(config.bots)}: resume it without naming bots")
            # Its stored games must be this arena's schedule of its seed, checked before anything is written.
            stored_games(store, tournament, stored, schedule_of(tournament))
            joining = bots_to_add(store, add, tournament, config)  # checked before anything is written
        else:
            if len(bots) < 2:
                fail("a tournament needs at least 2 bots")
            found = named_bots(bots, db)  # read, not stored: every check below comes first
            refs = [f"{b.name}:{b.version}" for b in found]
            if len(set(refs)) != len(refs):
                fail(f"a bot is named twice: {', '.join(refs)}")
            size = table_size or min(len(found), 10)
            if size > len(found):
                fail(f"--table-size {size} is more than the {len(found)} bots")
            chosen = choose_game(options.game, [plays(b) for b in found])
            parsed = msgspec.to_builtins(get_game(chosen).rules.parse_settings(options.settings(), size))
            store = open_store(db, must_exist=False)
            held.callback(store.close)  # the last thing done: the -wal folded into the file
            stored = [store.resolve_bot(b) for b in bots]  # folders are stored now, and only now
            remember_folders(bots, stored)
            config = TournamentConfig(
                [b.ref for b in stored], size, options.deals, options.limits(), fair_time=options.fair_time
            )
            name = name or f"{chosen}-{dt.datetime.now():%Y%m%d-%H%M%S}"
            seed, secret = deal_source(options.seed)
            tournament = store.create_tournament(
                name, chosen, variant_of(parsed), parsed, seed, msgspec.to_builtins(config), secret
            )
        held.enter_context(store.lease(tournament.id))  # one run at a time; released at the end
        if joining:
            tournament, config, stored = grow_league(store, tournament, config, stored, joining)
        try:
            player = open_player(stored, options.sandbox, options.concurrency, on_cluster, store)
            store.set_workers(tournament.id, player.nodes)  # for the tournament's web page
        except BaseException:  # a failed start does not leave the tournament "running"
            if tournament.status != "finished":
                with contextlib.suppress(StoreError):
                    store.set_status(tournament.id, "interrupted")
            raise
        console.print(
            f"tournament [bold]{escape(shown(tournament.name))}[/] · {escape(title_of(tournament.game))} · {len(stored)}"
            f" bots, tables of"
            f" {config.table_size}, {config.deals} deal{'s' * (config.deals != 1)} · seed {tournament.seed} · {db}"
        )
        console.print("deals: " + deals_of(tournament)[1], markup=False)
        console.print("bots: " + ", ".join(b.ref for b in stored), soft_wrap=True, markup=False)
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            progress = LiveProgress(live, tournament.game)
            try:
                store.set_status(tournament.id, "running")  # a resumed one runs again
                played = trio.run(until_interrupted, run_tournament, store, tournament, stored, player, progress)
            except BaseException:
                with contextlib.suppress(StoreError):  # a full disk: it still resumes
                    store.set_status(tournament.id, "interrupted")
                err_console.print(
                    f"[yellow]resume with:[/] arena tournament run --resume --name {escape(shown(tournament.name))} --db {db}"
                    + escape(cluster_flags(cluster, tls_of(tls_ca_file, tls_cert, tls_key))),
                    soft_wrap=True,
                )
                raise
        kept = store.count_games(tournament.id)
        console.print(
            f"\n{played} game{'s' * (played != 1)} played; {kept} stored for {shown(tournament.name)}", markup=False
        )
        from arena.boards.standings import settle

        rows = settle(store, tournament.game, tournament.variant, tournament.name, tournament.id)
        print_board(rows, f"Leaderboard: {tournament.name}", tournament.game)


def bots_to_add(store: Any, refs: list[str], tournament: Any, config: TournamentConfig) -> list[tuple[str, Any]]:
    """The bots ``--add`` names, as ``(name:version, folder's Bot or StoredBot)``, each
    checked against the league (not in it yet, plays its game) before anything is
    stored: a refused ``--add`` leaves the database as it was."""
    from arena.bots import load_bot

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
    import msgspec

    from arena.store import StoredBot
    from arena.tournaments.plan import schedule_of

    added = [b if isinstance(b, StoredBot) else store.add_bot(b.path) for _, b in joining]
    grown = msgspec.structs.replace(
        config, bots=[*config.bots, *(b.ref for b in added)], grown=[*config.grown, len(config.bots)]
    )
    before = schedule_of(tournament)
    store.grow_tournament(tournament.id, msgspec.to_builtins(grown))
    tournament = store.get_tournament(tournament.name)
    after = schedule_of(tournament)
    new_games = sum(len(m.games) for m in after[len(before) :])
    console.print(
        f"added {', '.join(b.ref for b in added)} to {shown(tournament.name)}: {len(after) - len(before)} new tables,"
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
    import msgspec

    from arena.tournaments.plan import schedule_of

    try:
        schedule = schedule_of(tournament)
    except (msgspec.ValidationError, ValueError):
        return None
    return sum(len(m.games) for m in schedule), len(schedule)


def tournament_board(tournament: Any) -> tuple[str, str]:
    """The board the tournament's games are rated on: its key and that key in words."""
    from arena.store import board_key, board_label

    key = board_key(tournament.game, tournament.settings)
    return key, board_label(key)


def short_time(stamp: str | None) -> str:
    """``2025-03-01T14:05:09+00:00`` as ``2025-03-01 14:05`` (UTC), for a table."""
    return "" if not stamp else stamp[:16].replace("T", " ")


TOURNAMENT_FIELDS = (
    "name", "game", "board", "board_label", "status", "games", "scheduled", "created", "finished", "progress", "verdict"
)  # fmt: skip


@tournament_app.command("list")
def tournament_list(
    db: DbOption = DEFAULT_DB,
    format_: FormatOption = "table",
) -> None:
    """The tournaments in the database: board, status, games played of those scheduled, when."""
    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        store = open_store(db, read_only=True)
        holders = store.lease_holders()
        played = store.games_per_tournament()
        rows: list[dict[str, Any]] = []
        groups: dict[str, int] = {}  # a sequential gauntlet's deal groups counted so far
        from arena.tournaments.gauntlet import standing

        for t in store.list_tournaments():
            key, label = tournament_board(t)
            gauntlet = standing(store, t)
            if gauntlet is not None and gauntlet["sequential"]:
                groups[t.name] = gauntlet["groups"]
            # A gauntlet's schedule is a cap, not a plan: its test stops at a bound.
            scheduled = None if gauntlet is not None and gauntlet["sequential"] else scheduled_games(t)
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
                    "progress": None if gauntlet is None else gauntlet["progress"],
                    "verdict": None if gauntlet is None else gauntlet["verdict"],
                }
            )
        if format_ == "json":
            import msgspec

            print(json_shown(msgspec.json.format(msgspec.json.encode(rows).decode(), indent=2)))
            return
        if format_ == "csv":
            out = io.StringIO()
            writer = csv.DictWriter(out, TOURNAMENT_FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            print(shown(out.getvalue(), lines=True), end="")
            return
        from rich.table import Table

        table = Table(title=escape(f"Tournaments in {db}"))
        verdicts = any(row["verdict"] for row in rows)
        for column in ("tournament", "board", "status", "games", "created", "finished", "verdict")[: 6 + verdicts]:
            table.add_column(column, justify="right" if column == "games" else "left")
        for row in rows:
            of = "?" if row["scheduled"] is None else row["scheduled"]
            cells = [
                escape(row["name"]),
                escape(row["board_label"]),
                row["status"],
                f"{row['games']} ({groups[row['name']]} deal groups)"
                if row["name"] in groups
                else f"{row['games']}/{of}",
                short_time(row["created"]),
                short_time(row["finished"]),
            ]
            table.add_row(*cells, *([escape(row["verdict"] or "")] if verdicts else []))
        print_table(table)
        if not rows:
            err_console.print("no tournaments yet (`arena tournament run` starts one)")


ShowFormatOption = Annotated[str, typer.Option("--format", help="text or json.")]


@tournament_app.command("show")
def tournament_show(
    name: TournamentNameArgument,
    db: DbOption = DEFAULT_DB,
    format_: ShowFormatOption = "text",
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
        from arena.tournaments.gauntlet import standing

        gauntlet = standing(store, t)
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
            "deals": deals_of(t)[0],
            "settings": t.settings,
            "config": t.config,
            "bots": bots,
            "games": games,
            "scheduled": None if scheduled is None else scheduled[0],
            "matches": None if scheduled is None else scheduled[1],
            "resume": resume_command(t, db) if status == "interrupted" else None,
            "gauntlet": gauntlet,
        }
        if format_ == "json":
            import msgspec

            print(json_shown(msgspec.json.format(msgspec.json.encode(info).decode(), indent=2)))
            return
        limits = t.config.get("limits") or {}
        deals = t.config.get("deals")
        if gauntlet is not None:  # its schedule is a cap: the test stops at a bound
            played = [f"games: {gauntlet['progress']}", f"verdict: {gauntlet['verdict']}"]
            plan = f"schedule: a gauntlet, tables of {t.config.get('table_size')}, one deal group at a time"
        else:
            played = [
                f"games: {games}" + (f" of {scheduled[0]} ({games / max(scheduled[0], 1):.0%})" if scheduled else "")
            ]
            plan = (
                f"schedule: tables of {t.config.get('table_size')}, {deals} deal{'s' * (deals != 1)} each, every deal"
                " once per seat rotation" + (f"; {scheduled[1]} table{'s' * (scheduled[1] != 1)}" if scheduled else "")
            )
        lines = [
            f"tournament {t.name} · {label} ({key})",
            f"status: {status}" + (f" (run by {holders[t.id]})" if t.id in holders else ""),
            f"created {t.created}" + (f", finished {t.finished}" if t.finished else ""),
            *played,
            f"seed: {t.seed}",
            "deals: " + deals_of(t)[1],
            plan,
            f"time: {limits.get('move_ms', 1000) / 1000:g} s a move, a bank of {limits.get('bank_ms', 10000) / 1000:g} s"
            f" a game, {limits.get('startup_ms', 10000) / 1000:g} s to start; fair time"
            f" {'on' if t.config.get('fair_time', True) else 'off'}",
            "settings: " + (", ".join(f"{k}={v}" for k, v in t.settings.items()) or "the game's defaults"),
            f"bots ({len(bots)}):",
        ]
        for entry in bots:
            removed = "" if entry["stored"] else " (removed from the database)"
            lines.append(f"  {entry['bot']}: {entry['games']} game{'s' * (entry['games'] != 1)}{removed}")
        if grown:
            sizes = [*grown, len(t.config.get("bots") or [])]
            lines.append("grown: " + " -> ".join(str(n) for n in sizes) + " bots (--add)")
        for line in lines:
            console.print(shown(line), markup=False, soft_wrap=True)
        if info["resume"]:
            console.print(shown(f"resume with: {info['resume']}"), markup=False, soft_wrap=True)


@tournament_app.command("delete")
def tournament_delete(
    name: TournamentNameArgument,
    db: DbOption = DEFAULT_DB,
    yes: YesOption = False,
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
        console.print(
            f"deleted tournament {name} and its {deleted} game{'s' * (deleted != 1)} from {db}; its bots stay",
            markup=False,
        )
