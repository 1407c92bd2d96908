"""``arena ladder``: the continuous ladder of submitted bots, and its pipeline."""

from __future__ import annotations

import contextlib
import random
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .cli_cluster import (
    ClusterOption,
    TlsCaOption,
    TlsCertOption,
    TlsKeyOption,
    WaitWorkersOption,
    join,
    tls_of,
)
from .cli_common import (
    DEFAULT_DB,
    GAME_HELP,
    SANDBOX_HELP,
    DbOption,
    VariantOption,
    console,
    err_console,
    fail,
    game_settings,
    open_store,
    print_board,
    user_errors,
)

if TYPE_CHECKING:
    from .match import GameResult
    from .store import StoredBot

ladder_app = typer.Typer(
    help="The ladder: submitted bots, built, checked and rated continuously.", no_args_is_help=True
)


@ladder_app.command("run")
def ladder_run(
    db: DbOption = DEFAULT_DB,
    name: Annotated[str, typer.Option(help="The ladder's name (a tournament of that name).")] = "ladder",
    game: Annotated[str, typer.Option(help=GAME_HELP)] = "nimmt",
    variant: VariantOption = None,
    set_: Annotated[list[str], typer.Option("--set", help="A game setting KEY=VALUE (repeatable).")] = [],  # noqa: B006
    table_size: Annotated[int, typer.Option(help="Seats per game.", min=2, max=10)] = 4,
    seed: Annotated[int | None, typer.Option(help="The ladder's seed (when it is created).")] = None,
    concurrency: Annotated[int, typer.Option(help="Tables played at once (on one machine).", min=1)] = 2,
    sandbox_name: Annotated[str, typer.Option("--sandbox", help=SANDBOX_HELP)] = "auto",
    move_time: Annotated[float, typer.Option(help="Seconds per move.", min=0.001)] = 1.0,
    cluster: ClusterOption = None,
    wait_workers: WaitWorkersOption = 60.0,
    tls_ca_file: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
) -> None:
    """Run the ladder until Ctrl-C: build and check each submission as it arrives, and keep
    playing duplicate-deal tables among the active bots, where ratings are least certain."""
    import msgspec
    import trio

    from .catalog import get_game
    from .cli_sandbox import open_sandbox
    from .ladder import Ladder
    from .match import TimeLimits
    from .pipeline import Pipeline
    from .tournament import OnThisMachine, Progress, TournamentConfig, sigterm_as_ctrl_c, until_interrupted, variant_of

    sigterm_as_ctrl_c()
    with user_errors(), contextlib.ExitStack() as held:
        on_cluster = join(held, cluster, tls_of(tls_ca_file, tls_cert, tls_key), wait_workers, sandbox_name)
        store = open_store(db, must_exist=False)
        tournament = store.get_tournament(name)
        if tournament is None:
            settings = msgspec.to_builtins(
                get_game(game).rules.parse_settings(game_settings(set_, variant, None), table_size)
            )
            limits = TimeLimits(round(move_time * 1000))
            config = {
                **msgspec.to_builtins(TournamentConfig([], table_size, 1, limits)),
                "ladder": {"table_size": table_size},
            }
            seed = random.randrange(2**31) if seed is None else seed
            tournament = store.create_tournament(name, game, variant_of(settings), settings, seed, config)
            console.print(f"ladder {name} created: {game}, tables of {table_size}, seed {seed}", markup=False)
        elif "ladder" not in tournament.config:
            fail(f"{name!r} is a tournament, not a ladder: choose another --name")
        held.enter_context(store.lease(tournament.id))  # one ladder run at a time
        store.set_status(tournament.id, "running")
        sandbox = open_sandbox(sandbox_name if on_cluster is None else "auto")
        if on_cluster is None:
            player: Any = OnThisMachine(sandbox, concurrency)
            send = None
        else:
            from .cluster import OnCluster

            player, send = OnCluster(on_cluster, on_cluster.workers()), on_cluster.send_bots
        size = int(tournament.config["ladder"]["table_size"])
        work = db.with_name(f"{db.stem}-submissions")
        work.mkdir(mode=0o700, exist_ok=True)
        pipeline = Pipeline(db, sandbox, work, progress=say)
        held.callback(pipeline.close)

        class Games(Progress):
            count = 0

            def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
                self.count += 1
                say(game_line(self.count, result, bots))

        ladder = Ladder(store, tournament, player, size, Games(), on_batch=send or (lambda bots: None), say=say)

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pipeline.run)
                nursery.start_soon(ladder.run)

        console.print(f"ladder {name} on {db}: Ctrl-C stops it; `arena ladder run --name {name}` goes on", markup=False)
        try:
            trio.run(until_interrupted, main)
        finally:
            with contextlib.suppress(Exception):
                store.set_status(tournament.id, "interrupted")


def say(line: str) -> None:
    err_console.print(line, markup=False, soft_wrap=True, highlight=False)


def game_line(count: int, result: GameResult, bots: list[StoredBot]) -> str:
    """One line per stored game: the ladder's progress, a log as much as a display."""
    ranked = sorted(zip(result.ranks, (b.ref for b in bots), strict=True))
    return f"game {count}: " + ", ".join(f"{rank}. {ref}" for rank, ref in ranked)


@ladder_app.command("show")
def ladder_show(
    db: DbOption = DEFAULT_DB,
    name: Annotated[str, typer.Option(help="The ladder's name.")] = "ladder",
) -> None:
    """The ladder's board and the submissions waiting to be built or checked."""
    from leaderboard.board import leaderboard

    from .store.submissions import WAITING, Submissions

    with user_errors():
        store = open_store(db, read_only=True)
        tournament = store.get_tournament(name)
        if tournament is None or "ladder" not in tournament.config:
            fail(f"no ladder {name!r} in {db} (`arena ladder run` makes it)")
        print_board(leaderboard(store, tournament.game, tournament.variant, tournament.name), f"Ladder: {name}")
        waiting = Submissions(store).in_states(*WAITING)
        for s in waiting:
            console.print(f"waiting: {s.ref} by {s.author}, {s.state} since {s.updated}", markup=False)
        if not waiting:
            console.print("no submission waiting", markup=False)
