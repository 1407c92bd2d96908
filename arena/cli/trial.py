"""``arena bot try``: a new version against a league's bots, rated on a copy of the league.

The league's database is copied (SQLite's online backup, with only the opponents'
snapshots) into a scratch folder; a gauntlet plays there, and the league's board is
rated there with the trial's games among its own: where the bot would rank, its faults
and its time per move. The league itself is only read.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.cli.common import DEFAULT_DB, DbOption, console, fail, open_store, print_board, user_errors
from arena.cli.gauntlet import (
    GauntletDealsOption,
    GauntletTableSizeOption,
    Lines,
    MaxGamesOption,
    SprtTextOption,
    create,
    header,
    play_gauntlet,
    summary,
)
from arena.cli.options import (
    DEFAULTS,
    ConcurrencyOption,
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
)

if TYPE_CHECKING:
    from arena.boards.standings import Row
    from arena.bots import Bot
    from arena.store import Store

TOP = 5
"""Opponents taken from the top of the board when ``--vs`` names none."""
SHOWN = 10
"""Rows of the would-be board shown, besides the new bot's own."""

NewArgument = Annotated[Path, typer.Argument(help="The new version's folder (with a bot.toml).", metavar="BOT_DIR")]
TryVsOption = Annotated[
    list[str],
    typer.Option(
        "--vs",
        help="The opponents, stored in the league: `--vs A B` (or `--vs A --vs B`), NAME[:VERSION];"
        " default: the board's --top bots.",
        metavar="BOT...",
        show_default=False,
    ),
]
TopOption = Annotated[int, typer.Option(help="Without --vs: the opponents are the board's best N bots.", min=1)]
BoardOption = Annotated[
    str | None,
    typer.Option(
        "--board",
        help="The league's board to try on, its key (GAME/VARIANT[,SETTING=VALUE]): its rules and its bots"
        " (default: the board of --game, --variant, --set; `arena leaderboard` lists them).",
        metavar="KEY",
        show_default=False,
    ),
]
KeepOption = Annotated[
    Path | None,
    typer.Option(
        "--keep",
        help="Keep the trial's database (a new file: the league's copy with the trial's games), to replay or"
        " list them with --db; default: removed at the end.",
        show_default=False,
    ),
]


def bot_try(
    bot_dir: NewArgument,
    db: DbOption = DEFAULT_DB,
    vs: TryVsOption = [],  # noqa: B006
    top: TopOption = TOP,
    board: BoardOption = None,
    sprt_text: SprtTextOption = None,
    max_games: MaxGamesOption = None,
    deals: GauntletDealsOption = None,
    table_size: GauntletTableSizeOption = 2,
    concurrency: ConcurrencyOption = DEFAULTS.concurrency,
    seed: SeedOption = DEFAULTS.seed,
    sandbox_name: SandboxOption = "local",
    game: GameOption = DEFAULTS.game,
    set_: SetOption = [],  # noqa: B006
    variant: VariantOption = DEFAULTS.variant,
    settings_file: SettingsFileOption = DEFAULTS.settings_file,
    move_time: MoveTimeOption = DEFAULTS.move_time,
    time_bank: TimeBankOption = DEFAULTS.time_bank,
    startup_time: StartupTimeOption = DEFAULTS.startup_time,
    fair_time: FairTimeOption = DEFAULTS.fair_time,
    keep: KeepOption = None,
) -> None:
    """Try a new version against the league's bots before submitting it: a gauntlet (--deals
    per table, or until --sprt decides) in the local sandbox, played on a copy of --db, so
    nothing is stored in the league. Shows where it would rank on the board, its faults
    and its time per move against the limit."""
    from arena.bots import load_bot
    from arena.store import snapshots_of
    from arena.store.upkeep import backup
    from arena.tournaments.gauntlet import spec_of

    with user_errors(), contextlib.ExitStack() as held:
        bot = load_bot(bot_dir)
        mine = f"{bot.manifest.name}:{bot.manifest.version}"
        if keep is not None and (os.path.lexists(keep) or os.path.lexists(snapshots_of(keep))):
            fail(f"--keep {keep}: already there: name a new file")
        league = open_store(db, read_only=True)
        if any(b.ref == mine for b in league.list_bots()):
            fail(f"{bot_dir}: {mine} is in the league already ({db}): give the new version its own version in bot.toml")
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
        key, options = _board(bot, board, table_size, options)
        rules, _, variant_key = key.partition("/")
        opponents = [league.get_bot(ref).ref for ref in vs] if vs else _top(league, rules, variant_key, top, key, db)
        scratch = Path(tempfile.mkdtemp(prefix="arena-try-"))
        held.callback(shutil.rmtree, scratch, True)
        trial_db = scratch / "trial.db"
        backup(db, trial_db, bots=opponents)
        tournament, stored, store = create(
            trial_db, [str(bot_dir), *opponents], [], sprt_text, max_games, deals is not None, table_size,
            f"try-{bot.manifest.name}", options,
        )  # fmt: skip
        spec = spec_of(tournament)
        assert spec is not None
        test = spec.test()
        header(tournament, stored, test, f"on a copy of {db}, which is not written")
        lines = Lines(stored[0].ref, test)
        reading = play_gauntlet(held, store, tournament, stored, options, None, lines)
        lines(reading, last=True)
        summary(reading, stored, test)
        _standing(store, key, mine)
        _times(store, tournament.id, stored[0].ref, reading.stored)
        if keep is not None:
            store.close()
            shutil.move(trial_db, keep)
            shutil.move(snapshots_of(trial_db), snapshots_of(keep))
            console.print(f"the trial's games are in {keep}: arena games --db {keep}", markup=False, soft_wrap=True)


def _board(bot: Bot, board: str | None, size: int, options: MatchOptions) -> tuple[str, MatchOptions]:
    """The board's key and the options that play its rules: ``--board``'s, or those of
    --game, --variant and --set (the game: the one the bot plays, of several its first)."""
    import dataclasses

    import msgspec

    from arena.cli.options import choose_game, plays
    from arena.games.registry import get_game
    from arena.store import StoreError, board_key, board_settings, canonical_board

    if board is None:
        game = choose_game(options.game, [plays(bot)])
        parsed = msgspec.to_builtins(get_game(game).rules.parse_settings(options.settings(), size))
        return board_key(game, parsed), dataclasses.replace(options, game=game)
    if options.game or options.sets or options.variant or options.settings_file:
        fail("--board sets the game and its rules: leave out --game, --variant, --set and --settings")
    try:
        key = canonical_board(board)
    except StoreError as exc:
        fail(f"--board {board}: {exc}")
    game, _, variant = key.partition("/")
    settings = board_settings(game, variant)
    sets = tuple(f"{name}={msgspec.json.encode(value).decode()}" for name, value in settings.items())
    return key, dataclasses.replace(options, game=game, sets=sets)


def _top(league: Store, game: str, variant: str, top: int, key: str, db: Path) -> list[str]:
    """The board's best ``top`` bots (of its largest part)."""
    from arena.boards.standings import leaderboard

    rows = [r for r in leaderboard(league, game, variant) if r.component == 0]
    if not rows:
        boards = ", ".join(f"{g}/{v}" for g, v in league.played_boards(None)) or "none yet"
        fail(f"no rated bots on {key} in {db} (its boards: {boards}): --board chooses one, --vs names opponents")
    return [r.bot for r in rows[:top]]


def _standing(store: Store, key: str, mine: str) -> None:
    """The board as the trial's games would leave it, the new bot's row under it."""
    from arena.boards.standings import leaderboard
    from arena.store import board_label

    game, _, variant = key.partition("/")
    rows = leaderboard(store, game, variant)
    row: Row | None = next((r for r in rows if r.bot == mine), None)
    if row is None:
        console.print(f"{mine} has no rated games on {key}", markup=False, soft_wrap=True)
        return
    shown = [r for r in rows if r.component == row.component and (r.rank <= SHOWN or r is row)]
    print_board(shown, f"Where {mine} would stand: {board_label(key)} ({key}), the league with this trial", game)
    of = sum(1 for r in rows if r.component == row.component)
    interval = f" [{row.low:.0f}, {row.high:.0f}]" if math.isfinite(row.low) and math.isfinite(row.high) else ""
    rating = "a bound" if row.bound else f"Elo {row.elo:.0f}{interval}"
    faults = {"timeouts": row.timeouts, "crashes": row.crashes, "malformed": row.malformed, "illegal": row.illegal}
    said = ", ".join(f"{n} {what}" for what, n in faults.items() if n) or "none"
    console.print(
        f"{mine} would rank #{row.rank} of {of} · {rating} · {row.games} games · faults: {said}",
        markup=False,
        soft_wrap=True,
    )


def _times(store: Store, tournament_id: int, ref: str, games: int) -> None:
    """The new bot's time per move in the trial, against the limit."""
    from arena.boards.timing import stored_times, summary

    seats, _ = stored_times(store, store.find_games(tournament_id=tournament_id, limit=max(games, 1)), ref)
    times = summary(seats)
    if not times["moves"]:
        console.print(f"{ref} made no timed move", markup=False, soft_wrap=True)
        return
    ms, share, bank = times["ms"], times["share"], times["bank"]
    limit = "/".join(str(m) for m in times["move_ms"])
    over = next(b["moves"] for b in times["bins"] if b["bin"] == "over")
    least = "" if bank["least_left_ms"] is None else f" · bank: least left {bank['least_left_ms']} ms"
    console.print(
        f"time per move ({times['moves']} moves, limit {limit} ms): median {ms['p50']:.1f} ms, p90 {ms['p90']:.1f},"
        f" p99 {ms['p99']:.1f}, max {ms['max']:.1f} ({share['max']:.0%} of the limit) · over the limit {over},"
        f" timeouts {bank['timeouts']}{least}",
        markup=False,
        soft_wrap=True,
    )
