"""``arena gauntlet``: NEW against a field of bots until a sequential test decides."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    DbOption,
    console,
    deal_source,
    err_console,
    escape,
    fail,
    open_store,
    print_table,
    remember_folders,
    user_errors,
)
from arena.cli.options import (
    DEFAULTS,
    ConcurrencyOption,
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
from arena.tournaments.plan import DEFAULT_MAX_GAMES

if TYPE_CHECKING:
    from arena.cluster.coordinator import Cluster
    from arena.store import Store, StoredBot, Tournament
    from arena.tournaments.gauntlet import Reading
    from leaderboard.sprt import Sprt

LINE_SECONDS = 10.0
"""At most one running line per this many seconds (``ARENA_PROGRESS_SECONDS`` overrides);
the first and the last are always printed."""
GauntletDealsOption = Annotated[
    int | None,
    typer.Option(
        help=f"Without --sprt: deals per table, each played in every seat rotation (default {DEFAULTS.deals}).",
        min=1,
        show_default=False,
    ),
]
"""``--deals`` as every command has it, unset by default: with --sprt the test, not a
count of deals, sets a gauntlet's length, so a --deals given with it is refused."""
GauntletTableSizeOption = Annotated[
    int,
    typer.Option(
        help="Seats per game: NEW and K-1 opponents (default 2, NEW against one opponent at a time: the"
        " comparison a sequential test reads best; a tournament seats all its bots).",
        min=2,
    ),
]


BotsArgument = Annotated[
    list[str],
    typer.Argument(
        help="NEW (a folder, or a stored NAME[:VERSION]); the opponents follow --vs.",
        metavar="NEW",
        show_default=False,
    ),
]
VsOption = Annotated[
    list[str],
    typer.Option(
        "--vs",
        help="The opponents: `--vs A B C` (or `--vs A --vs B`), folders or stored NAME[:VERSION].",
        metavar="BOT...",
        show_default=False,
    ),
]
SprtTextOption = Annotated[
    str | None,
    typer.Option(
        "--sprt",
        help="Stop as soon as a sequential test decides: elo0=0,elo1=10,alpha=0.05,beta=0.05 (any of them;"
        " the others keep these defaults). H0: NEW is elo0 Elo stronger than the field, H1: elo1 stronger.",
        metavar="KEY=VALUE,...",
        show_default=False,
    ),
]
MaxGamesOption = Annotated[
    int | None,
    typer.Option(
        help=f"With --sprt: stop undecided after at most this many games (default {DEFAULT_MAX_GAMES}).",
        min=1,
        show_default=False,
    ),
]
ResumeOption = Annotated[bool, typer.Option(help="Go on with the gauntlet --name where it stopped.")]


def gauntlet_cmd(
    bots: BotsArgument = [],  # noqa: B006
    vs: VsOption = [],  # noqa: B006
    sprt_text: SprtTextOption = None,
    max_games: MaxGamesOption = None,
    deals: GauntletDealsOption = None,
    table_size: GauntletTableSizeOption = 2,
    concurrency: ConcurrencyOption = DEFAULTS.concurrency,
    db: DbOption = DEFAULT_DB,
    name: NameOption = None,
    seed: SeedOption = DEFAULTS.seed,
    sandbox_name: SandboxOption = DEFAULTS.sandbox,
    resume: ResumeOption = False,
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
    """Play NEW against the field in duplicate deals: with --sprt until the sequential test
    accepts H0 or H1 (or --max-games), else --deals deals per table. Stored as a
    tournament: `arena games`, `arena leaderboard` and `--resume` work on it."""
    from arena.tournaments.gauntlet import read, spec_of
    from arena.tournaments.roundrobin import sigterm_as_ctrl_c

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
        deals=DEFAULTS.deals if deals is None else deals,
    )
    sigterm_as_ctrl_c()
    with user_errors(), contextlib.ExitStack() as held:
        on_cluster = join(held, cluster, tls_of(tls_ca_file, tls_cert, tls_key), wait_workers, options.sandbox)
        if resume:
            if name is None:
                fail("--resume needs the --name of the gauntlet to go on with")
            if sprt_text is not None or max_games is not None or deals is not None:
                fail("--resume goes on with the gauntlet's own test and length: leave out --sprt, --max-games, --deals")
            store = open_store(db)
            tournament, stored = resumed(store, name, db, bots, vs)
        else:
            tournament, stored, store = create(db, bots, vs, sprt_text, max_games, deals is not None, table_size, name,
                                               options)  # fmt: skip
        spec = spec_of(tournament)
        assert spec is not None
        test = spec.test()
        header(tournament, stored, test, db)
        if tournament.status == "finished":
            reading = read(store, tournament, stored)
            summary(reading, stored, test)
            console.print(f"gauntlet {tournament.name} is finished: nothing to play", markup=False)
            return
        lines = Lines(stored[0].ref, test)
        try:
            reading = play_gauntlet(held, store, tournament, stored, options, on_cluster, lines)
        except BaseException:
            err_console.print(
                f"[yellow]resume with:[/] arena gauntlet --resume --name {escape(tournament.name)} --db {db}"
                + escape(cluster_flags(cluster, tls_of(tls_ca_file, tls_cert, tls_key))),
                soft_wrap=True,
            )
            raise
        lines(reading, last=True)
        summary(reading, stored, test)
        from arena.boards.standings import settle

        settle(store, tournament.game, tournament.variant, tournament.name, tournament.id)  # for the web


def play_gauntlet(
    held: contextlib.ExitStack,
    store: Store,
    tournament: Tournament,
    stored: list[StoredBot],
    options: MatchOptions,
    on_cluster: Cluster | None,
    lines: Lines,
) -> Reading:
    """Play a created (or resumed) gauntlet to its end under the store's lease (held by
    ``held``); marked interrupted if it stops before."""
    import trio

    from arena.store import StoreError
    from arena.tournaments.gauntlet_play import run_gauntlet
    from arena.tournaments.roundrobin import until_interrupted

    held.enter_context(store.lease(tournament.id))
    try:
        player = open_player(stored, options.sandbox, options.concurrency, on_cluster, store)
        store.set_workers(tournament.id, player.nodes)  # for the tournament's web page
        store.set_status(tournament.id, "running")
        reading: Reading = trio.run(until_interrupted, run_gauntlet, store, tournament, stored, player, lines)
    except BaseException:
        with contextlib.suppress(StoreError):
            store.set_status(tournament.id, "interrupted")
        raise
    return reading


def create(
    db: Path,
    bots: list[str],
    vs: list[str],
    sprt_text: str | None,
    max_games: int | None,
    fixed_deals: bool,
    table_size: int,
    name: str | None,
    options: MatchOptions,
) -> tuple[Tournament, list[StoredBot], Store]:
    """A new gauntlet's row, after every check (a refused one leaves the database as it
    was): ``fixed_deals`` when ``--deals`` was given (``options.deals``)."""
    import msgspec

    from arena.games.registry import get_game
    from arena.store import board_key
    from arena.tournaments.gauntlet import GauntletSpec, gauntlet_config, rounds_for
    from arena.tournaments.roundrobin import TournamentConfig
    from arena.tournaments.schedule import MAX_GROUPS, gauntlet_tables
    from leaderboard.sprt import SprtError, parse_sprt

    test: Sprt | None = None
    if sprt_text is not None:
        try:
            test = parse_sprt(sprt_text)
        except SprtError as exc:
            fail(f"--sprt {sprt_text!r}: {exc}")
        if fixed_deals:
            fail("--deals fixes the length of a gauntlet without --sprt; with --sprt, cap it with --max-games")
    elif max_games is not None:
        fail(
            "--max-games caps a sequential test: add --sprt (e.g. --sprt elo0=0,elo1=10), or fix the length with --deals"
        )
    if not bots:
        fail("name NEW and its opponents: arena gauntlet NEW --vs BOT...")
    new, opponents = bots[0], [*vs, *bots[1:]]
    if not opponents:
        fail(f"name the opponents of {new}: arena gauntlet {new} --vs BOT...")
    identities = [identity(ref) for ref in [new, *opponents]]
    against_itself(new, opponents, identities)
    if not table_size <= len(opponents) + 1:
        fail(f"--table-size {table_size}: NEW and {len(opponents)} opponents fill at most {len(opponents) + 1} seats")
    tables = math.comb(len(opponents), table_size - 1)
    if tables > MAX_GROUPS:
        fail(f"--table-size {table_size} with {len(opponents)} opponents makes {tables} tables: at most {MAX_GROUPS}")
    if test is not None:
        cap = DEFAULT_MAX_GAMES if max_games is None else max_games
        rounds = rounds_for(cap, len(opponents), table_size)
        if rounds < 1:
            per_round = len(gauntlet_tables(len(opponents), table_size)) * table_size
            fail(f"--max-games {cap} is less than one round: {per_round} games (one deal group at each table)")
    else:
        rounds = options.deals
    refs = [new, *opponents]
    found = named_bots(refs, db)  # read, not stored: every check below comes first
    against_itself(new, opponents, [f"{b.name}:{b.version}" for b in found])
    game = choose_game(options.game, [plays(b) for b in found])
    parsed = msgspec.to_builtins(get_game(game).rules.parse_settings(options.settings(), table_size))
    store = open_store(db, must_exist=False)
    stored = [store.resolve_bot(ref) for ref in refs]  # folders are stored now, and only now
    remember_folders(refs, stored)
    config = TournamentConfig(
        [b.ref for b in stored], table_size, rounds, options.limits(), fair_time=options.fair_time
    )
    spec = GauntletSpec(None if test is None else asdict(test), max_games if test is not None else None)
    name = name or f"gauntlet-{dt.datetime.now():%Y%m%d-%H%M%S}"
    seed, secret = deal_source(options.seed)
    variant_key = board_key(game, parsed).partition("/")[2]
    tournament = store.create_tournament(name, game, variant_key, parsed, seed, gauntlet_config(config, spec), secret)
    return tournament, stored, store


def identity(ref: str) -> str | None:
    """``name:version`` of a bot folder (read, not stored), ``ref`` itself for a stored
    ``NAME:VERSION``, None for a bare stored ``NAME`` (the store knows its version)."""
    from arena.bots import load_bot

    if Path(ref).is_dir():
        bot = load_bot(ref)
        return f"{bot.manifest.name}:{bot.manifest.version}"
    return ref if ":" in ref else None


def against_itself(new: str, opponents: list[str], identities: list[str | None]) -> None:
    """Refuse NEW among its opponents, and an opponent named twice (as far as the
    identities are known: ``name:version``, None for a bare stored name not looked up)."""
    mine = identities[0]
    seen: dict[str, str] = {}
    for ref, ident in zip(opponents, identities[1:], strict=True):
        if ident is None:
            continue
        if ident == mine:
            fail(
                f"{new} is among its own opponents (--vs {ref} is {ident} too): a gauntlet plays NEW against"
                " other bots; name another version of it as an opponent, e.g. NAME:VERSION"
            )
        if ident in seen:
            fail(f"--vs names {ident} twice ({seen[ident]} and {ref}): name each opponent once")
        seen[ident] = ref


def resumed(store: Store, name: str, db: Path, bots: list[str], vs: list[str]) -> tuple[Tournament, list[StoredBot]]:
    import msgspec

    from arena.tournaments.gauntlet import spec_of
    from arena.tournaments.roundrobin import TournamentConfig

    tournament = store.get_tournament(name)
    if tournament is None:
        known = ", ".join(store.tournament_names()) or "none yet"
        fail(f"no gauntlet {name!r} in {db} (there are: {known})")
    if spec_of(tournament) is None:
        fail(f"{name!r} is a round robin, not a gauntlet: arena tournament run --resume --name {name}")
    config = msgspec.convert(tournament.config, TournamentConfig)
    stored = [store.get_bot(ref) for ref in config.bots]
    named = [*bots[:1], *vs, *bots[1:]]
    if named and [store.resolve_bot(b).ref for b in named] != config.bots:
        fail(
            f"gauntlet {name!r} plays {config.bots[0]} against {', '.join(config.bots[1:])}: resume it without naming bots"
        )
    return tournament, stored


def header(tournament: Tournament, stored: list[StoredBot], test: Sprt | None, db: Path | str) -> None:
    import msgspec

    from arena.tournaments.roundrobin import TournamentConfig
    from arena.tournaments.schedule import gauntlet_tables

    config = msgspec.convert(tournament.config, TournamentConfig)
    size = config.table_size
    tables = len(gauntlet_tables(len(stored) - 1, size))
    seats = f"tables of {size}"
    planned = config.deals * tables * size
    if test is None:
        length = f"{config.deals} deal{'s' * (config.deals != 1)} per table ({planned} games)"
    else:
        length = f"SPRT {test.text()}, LLR bounds ({test.lower:.2f}, {test.upper:.2f}), at most {planned} games"
    console.print(
        f"gauntlet {tournament.name} · {title_of(tournament.game)} · {stored[0].ref} against "
        f"{', '.join(b.ref for b in stored[1:])} · {seats}, {tables} table{'s' * (tables != 1)} · {length}"
        f" · seed {tournament.seed} · {db}",
        markup=False,
        soft_wrap=True,
    )


def running(reading: Reading, new: str, test: Sprt | None) -> str:
    """``groups 12 · games 24 · LLR 1.52 (-2.94, 2.94) · Elo +85 [+20, +150]``."""
    from arena.tournaments.gauntlet import against_field, elo_text

    parts = [f"groups {reading.groups}", f"games {reading.games}"]
    if test is not None and reading.decision is not None:
        parts.append(f"LLR {reading.decision.llr:.2f} ({test.lower:.2f}, {test.upper:.2f})")
    parts.append(f"Elo {elo_text(against_field(reading, new))}")
    return " · ".join(parts)


class Lines:
    """The running line after a batch: the first, then at most one per ``LINE_SECONDS``."""

    def __init__(self, new: str, test: Sprt | None) -> None:
        self.new, self.test = new, test
        try:
            self.every = float(os.environ.get("ARENA_PROGRESS_SECONDS", LINE_SECONDS))
        except ValueError:
            self.every = LINE_SECONDS
        self.last = -math.inf
        self.shown = -1

    def __call__(self, reading: Reading, last: bool = False) -> None:
        now = time.monotonic()
        if (last and reading.stored != self.shown) or now - self.last >= self.every:
            self.last, self.shown = now, reading.stored
            console.print(running(reading, self.new, self.test), markup=False, soft_wrap=True)


def summary(reading: Reading, stored: list[StoredBot], test: Sprt | None) -> None:
    """The verdict, then NEW against each opponent."""
    from arena.tournaments.gauntlet import against_each, elo_text, verdict_line

    new = stored[0].ref
    console.print(verdict_line(reading, new, test), markup=False, soft_wrap=True)
    extra = reading.stored - reading.games
    if extra > 0:
        console.print(
            f"{reading.stored} games stored: {extra} beyond the deciding group count on the leaderboard, not for the test",
            markup=False,
            soft_wrap=True,
        )
    from rich.table import Table

    table = Table(title=escape(f"{new} against each opponent (counted games)"), title_justify="left")
    for column in ("opponent", "games", "score", "Elo (NEW - it), 95% CI"):
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for v in against_each(reading, new, [b.ref for b in stored[1:]]):
        score = "-" if math.isnan(v.score) else f"{v.score:.3f}"
        table.add_row(escape(v.name), str(v.games), score, escape(elo_text(v)))
    print_table(table)
