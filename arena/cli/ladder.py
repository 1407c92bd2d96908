"""``arena ladder``: the continuous ladder of submitted bots, and its pipeline."""

from __future__ import annotations

import contextlib
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.cluster import (
    ClusterOption,
    TlsCaOption,
    TlsCertOption,
    TlsKeyOption,
    WaitWorkersOption,
    join,
    tls_of,
)
from arena.cli.common import (
    DEFAULT_DB,
    DbOption,
    console,
    deal_source,
    err_console,
    fail,
    open_store,
    print_board,
    user_errors,
)
from arena.cli.options import (
    DEFAULTS,
    ConcurrencyOption,
    FairTimeOption,
    GameOption,
    MatchOptions,
    MoveTimeOption,
    Plays,
    SandboxOption,
    SeedOption,
    SetOption,
    SettingsFileOption,
    StartupTimeOption,
    TimeBankOption,
    VariantOption,
    choose_game,
    title_of,
)
from arena.text import shown
from arena.tournaments.plan import deals_of

if TYPE_CHECKING:
    from arena.play.match import GameResult
    from arena.store import Store, StoredBot, Tournament
    from arena.tournaments.ladder import LadderSpec

LadderTableSizeOption = Annotated[
    int,
    typer.Option(
        help="Seats per game (when it is created; default 4: a ladder's field is whoever submits, so its tables"
        " have a size of their own, not the number of its bots).",
        min=2,
        max=10,
    ),
]

LadderNameOption = Annotated[str, typer.Option(help="The ladder's name.")]

ladder_app = typer.Typer(
    help="The ladder: submitted bots, built, checked and rated continuously.", no_args_is_help=True
)


NameOption = Annotated[str, typer.Option(help="The ladder's name (a tournament of that name).")]
DealsPerTableOption = Annotated[
    int,
    typer.Option(
        help="Deals a table plays, each in every seat rotation (when it is created); 0: deal groups until its"
        " --table-seconds are spent, at its own pace.",
        min=0,
    ),
]
RevealEveryOption = Annotated[
    int,
    typer.Option(
        help="Tables an epoch of the deals' secret (when it is created): an epoch's key is published once its"
        " tables have all been played.",
        min=1,
    ),
]
TableSecondsOption = Annotated[
    float,
    typer.Option(
        help="A table's time (when it is created): it stops at the end of the deal group that spends it.",
        min=0.0,
    ),
]
RestFloorOption = Annotated[
    float,
    typer.Option(
        help="The least share of the time settled pairs play (1: never rest; pairs known within 100 Elo play"
        " less, down to this).",
        min=0.0,
        max=1.0,
    ),
]
GamesOption = Annotated[
    int | None,
    typer.Option("--games", help="Stop once this run has played this many games (at the end of a deal group).", min=1),
]
KeepReplaysOption = Annotated[
    int,
    typer.Option(
        help="Keep the replays of the ladder's newest N games, prune older ones (results and ratings stay);"
        " 0 keeps every replay.",
        min=0,
    ),
]
ProgressEveryOption = Annotated[
    float,
    typer.Option(help="Seconds between progress lines (games a minute, tables, ratings that moved).", min=0.1),
]


@ladder_app.command("run")
def ladder_run(
    db: DbOption = DEFAULT_DB,
    name: NameOption = "ladder",
    game: GameOption = DEFAULTS.game,
    variant: VariantOption = DEFAULTS.variant,
    set_: SetOption = [],  # noqa: B006
    settings_file: SettingsFileOption = DEFAULTS.settings_file,
    table_size: LadderTableSizeOption = 4,
    deals_per_table: DealsPerTableOption = 0,
    seed: SeedOption = DEFAULTS.seed,
    reveal_every: RevealEveryOption = 100,
    concurrency: ConcurrencyOption = DEFAULTS.concurrency,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
    move_time: MoveTimeOption = DEFAULTS.move_time,
    time_bank: TimeBankOption = DEFAULTS.time_bank,
    startup_time: StartupTimeOption = DEFAULTS.startup_time,
    fair_time: FairTimeOption = DEFAULTS.fair_time,
    table_seconds: TableSecondsOption = 10.0,
    rest_floor: RestFloorOption = 0.1,
    games: GamesOption = None,
    keep_replays: KeepReplaysOption = 0,
    progress_every: ProgressEveryOption = 60.0,
    cluster: ClusterOption = None,
    wait_workers: WaitWorkersOption = None,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
) -> None:
    """Run the ladder until Ctrl-C: build and check each submission as it arrives (in
    --sandbox, also with --cluster), and keep playing duplicate-deal tables among the
    active bots, where ratings are least certain. The game (default: the one every active
    bot plays), its settings, the time limits, --table-size, --deals-per-table,
    --table-seconds, --reveal-every and --seed are the ladder's from its first run on."""
    import trio

    from arena.cli.sandbox import open_sandbox
    from arena.play.live import publish_beside
    from arena.store import PAUSED, StoreError
    from arena.tournaments.ladder import Ladder, LadderSpec
    from arena.tournaments.pipeline import run_pipeline
    from arena.tournaments.roundrobin import OnThisMachine, Progress, sigterm_as_ctrl_c, until_interrupted

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
    )
    sigterm_as_ctrl_c()
    with user_errors(), contextlib.ExitStack() as held:
        on_cluster = join(held, cluster, tls_of(tls_ca_file, tls_cert, tls_key), wait_workers, "auto")
        store = open_store(db, must_exist=False)
        held.callback(store.close)
        tournament = store.get_tournament(name)
        if tournament is None:
            spec = LadderSpec(table_size, deals_per_table, table_seconds, reveal_every=reveal_every)
            tournament = create(store, name, spec, options)
        elif "ladder" not in tournament.config:
            fail(f"{name!r} is a tournament, not a ladder: choose another --name")
        elif game is not None and game != tournament.game:
            fail(f"--game {game}: ladder {name!r} plays {tournament.game}")
        try:
            held.enter_context(store.lease(tournament.id))  # one ladder run at a time
        except StoreError as exc:
            fail(str(exc), code=1)
        sandbox = open_sandbox(options.sandbox)  # the pipeline builds and checks here, also with --cluster
        player: Any
        if on_cluster is None:
            player = OnThisMachine(sandbox, options.concurrency, publish_beside(store.path))

            def ready(bot: StoredBot) -> None:
                sandbox.prepare(bot.load(), progress=lambda line: None)
        else:
            from arena.cluster.coordinator import OnCluster

            player = OnCluster(on_cluster, on_cluster.workers())

            def ready(bot: StoredBot) -> None:
                on_cluster.send_bots([bot])

        store.set_workers(tournament.id, player.nodes)  # for the ladder's web page
        paused = tournament.status == PAUSED
        if not paused:
            store.set_status(tournament.id, "running")
        work = db.with_name(f"{db.stem}-submissions")
        work.mkdir(mode=0o700, exist_ok=True)

        class Games(Progress):
            def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
                ladder.games += 1

        ladder = Ladder(
            store,
            tournament,
            player,
            ready,
            Games(),
            say,
            status_s=progress_every,
            rest_floor=rest_floor,
            budget=games,
            keep_replays=keep_replays,
        )
        held.callback(ladder.close)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(run_pipeline, store, sandbox, work, progress=say))
                await ladder.run()
                nursery.cancel_scope.cancel()  # the budget is played: the pipeline stops too

        again = f"arena ladder run --name {name} --db {db}"
        console.print(
            f"ladder {name} · {title_of(tournament.game)} · tables of {ladder.spec.table_size} · seed {tournament.seed} · {db}:"
            " Ctrl-C stops it",
            markup=False,
            soft_wrap=True,
        )
        console.print("deals: " + deals_of(tournament)[1], markup=False, soft_wrap=True)
        if paused:
            console.print(f"ladder {name} is paused: `arena ladder resume --name {name}` goes on", markup=False)
        try:
            trio.run(until_interrupted, main)
        except BaseException:
            stopped(store, tournament)
            err_console.print(f"[yellow]every finished game is stored; go on with:[/] {again}", soft_wrap=True)
            raise
        stopped(store, tournament)
        console.print(f"played {ladder.played} games (--games {games}); go on with: {again}", markup=False)


def stopped(store: Store, tournament: Tournament) -> None:
    """The ladder's status once its run ends: interrupted (resumable), or still paused."""
    from arena.store import PAUSED, StoreError

    with contextlib.suppress(StoreError):
        now = store.get_tournament(tournament.name)
        if now is None or now.status != PAUSED:
            store.set_status(tournament.id, "interrupted")


def pause_or_resume(db: Path, name: str, paused: bool) -> None:
    with user_errors():
        store = open_store(db)
        try:
            tournament = store.get_tournament(name)
            if tournament is None or "ladder" not in tournament.config:
                fail(f"no ladder {name!r} in {db} (`arena ladder run` makes it)")
            store.set_paused(tournament.id, paused)
            running = store.lease_holders().get(tournament.id)
        finally:
            store.close()
    if paused:
        where = f"its run ({running}) starts no new table" if running else "its next run starts paused"
        console.print(
            f"ladder {name} paused: {where}; the tables in play end with their deal group"
            f" (`arena ladder resume --name {name}` goes on)",
            markup=False,
            soft_wrap=True,
        )
    else:
        where = "its run plays again" if running else f"no run plays it: `arena ladder run --name {name}`"
        console.print(f"ladder {name} resumed: {where}", markup=False, soft_wrap=True)


@ladder_app.command("pause")
def ladder_pause(
    db: DbOption = DEFAULT_DB,
    name: LadderNameOption = "ladder",
) -> None:
    """Pause the ladder from any terminal: its run starts no new table (the pipeline still
    builds and checks) until `arena ladder resume`; a run started meanwhile starts paused."""
    pause_or_resume(db, name, True)


@ladder_app.command("resume")
def ladder_resume(
    db: DbOption = DEFAULT_DB,
    name: LadderNameOption = "ladder",
) -> None:
    """Resume a paused ladder: its run plays again within a second."""
    pause_or_resume(db, name, False)


def create(store: Store, name: str, spec: LadderSpec, options: MatchOptions) -> Tournament:
    """The ladder's tournament row, on its first run (its game, settings and seed fixed
    from then on): its game is ``--game``, else the one every active bot plays."""
    import msgspec

    from arena.deals import ladder_commitment
    from arena.games.registry import get_game
    from arena.store.submissions import Submissions
    from arena.tournaments.ladder import ladder_config
    from arena.tournaments.roundrobin import TournamentConfig, variant_of

    if options.game is None:
        stored = {b.ref: b for b in store.list_bots()}
        active = [stored[s.ref] for s in Submissions(store).active() if s.ref in stored]
        found = [Plays(b.name, b.path, tuple(b.games)) for b in active]
        game = choose_game(None, found, "--game names the ladder's: it seats the active bots that play it")
    else:
        game = get_game(options.game).name
    settings = msgspec.to_builtins(get_game(game).rules.parse_settings(options.settings(), spec.table_size))
    config = TournamentConfig([], spec.table_size, 1, options.limits(), fair_time=options.fair_time)
    seed, secret = deal_source(options.seed)
    tournament = store.create_tournament(
        name,
        game,
        variant_of(settings),
        settings,
        seed,
        ladder_config(config, spec),
        secret,
        None if secret is None else ladder_commitment(secret),
    )
    deals = (
        f"{spec.deals_per_table} deals" if spec.deals_per_table else f"deal groups for about {spec.table_seconds:g} s"
    )
    console.print(
        f"ladder {name} created: {title_of(game)}, tables of {spec.table_size}, {deals} a table, seed {seed}",
        markup=False,
    )
    return tournament


def say(line: str) -> None:
    """A line of the pipeline or the ladder: it may quote a submission (its manifest, its
    build's output), so through ``shown``."""
    err_console.print(shown(line), markup=False, soft_wrap=True, highlight=False)


@ladder_app.command("show")
def ladder_show(
    db: DbOption = DEFAULT_DB,
    name: LadderNameOption = "ladder",
) -> None:
    """The ladder's board and the submissions waiting to be built or checked."""
    from arena.boards.standings import leaderboard
    from arena.store.submissions import WAITING, Submissions

    with user_errors():
        store = open_store(db, read_only=True)
        tournament = store.get_tournament(name)
        if tournament is None or "ladder" not in tournament.config:
            fail(f"no ladder {name!r} in {db} (`arena ladder run` makes it)")
        rows = leaderboard(store, tournament.game, tournament.variant, tournament.name)
        print_board(rows, f"Ladder: {name}", tournament.game)
        console.print("deals: " + deals_of(tournament)[1], markup=False, soft_wrap=True)
        on_board = {r.bot for r in rows}
        active = Submissions(store).active()
        for s in active:
            if s.ref not in on_board:
                console.print(shown(f"active, no games yet: {s.ref} by {s.author}"), markup=False)
        if not active:
            console.print("no bot active yet (`arena ladder run` builds and checks what authors submit)", markup=False)
        waiting = Submissions(store).in_states(*WAITING)
        for s in waiting:
            console.print(shown(f"waiting: {s.ref} by {s.author}, {s.state} since {s.updated}"), markup=False)
        if not waiting:
            console.print("no submission waiting", markup=False)
