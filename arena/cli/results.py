"""``arena leaderboard`` and ``arena games``: what the stored results say, read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.common import (
    DEFAULT_DB,
    FORMATS,
    DbOption,
    FormatOption,
    err_console,
    escape,
    fail,
    open_store,
    print_board,
    print_line,
    print_table,
    user_errors,
)
from arena.text import json_shown, shown

if TYPE_CHECKING:
    from arena.store import Store


GameOption = Annotated[
    str | None,
    typer.Option(
        "--game",
        "--board",
        help="Only this game (its name, as bot.toml lists it), or only one board: its key, as the titles show it"
        " (GAME/VARIANT, then any setting that makes a board: GAME/VARIANT,SETTING=VALUE).",
    ),
]
TournamentOption = Annotated[str | None, typer.Option(help="Only this tournament.")]
LosOption = Annotated[
    bool,
    typer.Option(
        "--los",
        help="Also the likelihood of superiority: a matrix per board (table), a `los` field per row (json),"
        " or instead of the board one CSV row per pair of bots: game,bot,opponent,los (csv).",
    ),
]
AnchorOption = Annotated[
    str | None,
    typer.Option(
        help="Fix the scale: this bot has this Elo and the others are relative to it"
        " (a bare NAME is its highest version on the board).",
        metavar="NAME[:VERSION]=ELO",
    ),
]


def leaderboard_cmd(
    db: DbOption = DEFAULT_DB,
    game: GameOption = None,
    tournament: TournamentOption = None,
    format_: FormatOption = "table",
    los: LosOption = False,
    anchor: AnchorOption = None,
) -> None:
    """Elo ratings with 95% intervals over every stored game (or one tournament), one board
    per game and rule set."""
    from arena.boards.show import boards_csv, boards_json, los_csv, render_los
    from arena.boards.standings import AnchorError, leaderboard, los_matrix, parse_anchor
    from arena.store import StoreError, board_label, canonical_board

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
        stored = [f"{g}/{v}" for g, v in store.played_boards(tournament)]
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
            print(json_shown(boards_json(boards, matrices)))
        elif format_ == "csv":
            print(shown(boards_csv(boards) if matrices is None else los_csv(matrices), lines=True), end="")
        else:
            scope = f", tournament {tournament}" if tournament else ""
            for key, rows in boards.items():
                print_board(rows, f"Leaderboard {board_label(key)} ({key}){scope}", key.partition("/")[0])
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


BotOption = Annotated[
    str | None,
    typer.Option(
        help="Only the games of this stored bot: NAME (any of its versions) or NAME:VERSION.",
        metavar="NAME[:VERSION]",
    ),
]
OpponentOption = Annotated[
    str | None,
    typer.Option(
        help="Only the games --bot played against this bot (NAME is its highest version).",
        metavar="NAME[:VERSION]",
    ),
]
BoardOption = Annotated[
    str | None,
    typer.Option(help="Only this board: GAME/VARIANT (GAME alone: its standard board)."),
]
FaultsOption = Annotated[
    bool, typer.Option("--faults", help="Only games where a seat faulted (that of --bot when it is given).")
]
DateFromOption = Annotated[
    str | None, typer.Option("--from", help="Only games started on this day (UTC) or after.", metavar="YYYY-MM-DD")
]
DateToOption = Annotated[
    str | None, typer.Option("--to", help="Only games started on this day (UTC) or before.", metavar="YYYY-MM-DD")
]
LimitOption = Annotated[int, typer.Option(help="At most this many.", min=1)]
OffsetOption = Annotated[int, typer.Option(help="Skip this many first.", min=0)]
GamesFormatOption = Annotated[
    str, typer.Option("--format", help="table, json (as the web's /api/games) or csv (one row per seat).")
]
NewestOption = Annotated[bool, typer.Option("--newest", help="Newest first (--limit then keeps the newest).")]


def games_cmd(
    db: DbOption = DEFAULT_DB,
    tournament: TournamentOption = None,
    bot: BotOption = None,
    opponent: OpponentOption = None,
    board: BoardOption = None,
    faults: FaultsOption = False,
    date_from: DateFromOption = None,
    date_to: DateToOption = None,
    limit: LimitOption = 50,
    offset: OffsetOption = 0,
    format_: GamesFormatOption = "table",
    newest: NewestOption = False,
) -> None:
    """List stored games, oldest first, or newest first with --newest (`arena replay GAME_ID`
    shows one), filtered as the web's games page filters them."""
    from arena.web.games_query import GamesAsked

    with user_errors():
        if format_ not in FORMATS:
            fail(f"--format {format_!r}: choose table, json or csv")
        if opponent is not None and bot is None:
            fail(f"--opponent {opponent}: give --bot as well (the games both played)")
        store = open_store(db, read_only=True)
        if tournament is not None and store.get_tournament(tournament) is None:
            known = ", ".join(store.tournament_names()) or "none"
            fail(f"no tournament {tournament!r} in {db} (there are: {known})")
        for ref in (bot, opponent):
            if ref is not None:
                store.get_bot(ref)  # not stored: its error, naming the database
        asked = GamesAsked(tournament, bot, opponent, board, faults, date_from, date_to)
        games, total = games_page(store, asked, limit, offset, newest)
        if format_ == "json":
            import msgspec

            print(json_shown(msgspec.json.format(msgspec.json.encode(games).decode(), indent=2)))
            return
        if format_ == "csv":
            print(shown(games_csv(games), lines=True), end="")
            return
        scope = "".join(
            f", {label} {value}"
            for label, value in (
                ("tournament", tournament),
                ("bot", bot),
                ("opponent", opponent),
                ("board", board),
                ("from", date_from),
                ("to", date_to),
            )
            if value
        ) + (", with faults" if faults else "")
        from rich.table import Table

        table = Table(title=escape(f"Games in {db}{scope}"))
        nodes = any(g.node for g in games)  # games stored before nodes were recorded have none
        for column in ("id", "tournament", "match", "deal", "rounds", "seats (score, rank)", "started"):
            table.add_column(column)
        if nodes:
            table.add_column("node")
        for g in games:
            seats = ", ".join(
                f"{s.bot} {s.score}" + (" #1" if s.rank == 1 else "") + ("" if s.status == "ok" else f" [{s.status}]")
                for s in g.seats
            )
            row = [str(g.id), escape(shown(g.tournament)), str(g.match_no), str(g.deal), str(g.rounds)]
            row += [escape(shown(seats)), escape(shown(g.started))]
            table.add_row(*row, *([escape(shown(g.node))] if nodes else []))
        print_table(table)
        if not games:
            err_console.print("no games stored" + escape(f" ({scope.removeprefix(', ')})" if scope else ""))
        if len(games) < total:
            first = f" from the {offset + 1}{ordinal_suffix(offset + 1)}" if offset else ""
            print_line(f"{len(games)} of {total} games{first}; --limit to see more")


def ordinal_suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def games_page(store: Store, asked: Any, limit: int, offset: int, newest: bool) -> tuple[list[Any], int]:
    """A page of the games ``asked`` for (``web.games_query.GamesAsked``), through the
    web's own filter (``web.games_query.games_filter``), and how many there are in all. A
    ``bot`` named without its version means every version of it: their pages are merged,
    and a game two versions played is counted once (the count is exact unless three
    versions of the bot, or two and the opponent asked for, sat in one game)."""
    import msgspec

    from arena.web.errors import WebError
    from arena.web.games_query import games_filter

    refs: list[str | None] = [asked.bot]
    if asked.bot is not None and ":" not in asked.bot:
        refs = [b.ref for b in store.list_bots() if b.name == asked.bot] or refs
    try:
        wheres = [games_filter(store, msgspec.structs.replace(asked, bot=ref)) for ref in refs]
    except WebError as exc:
        fail(f"--{exc.message}")
    if len(wheres) == 1:
        where = wheres[0]
        total = store.count_games_of(where=where)
        games = store.find_games(limit=limit, offset=offset, newest_first=newest, where=where) if offset < total else []
        return games, total
    pages = {g.id: g for w in wheres for g in store.find_games(limit=limit + offset, newest_first=newest, where=w)}
    games = [pages[i] for i in sorted(pages, reverse=newest)][offset : offset + limit]
    total = sum(store.count_games_of(where=w) for w in wheres)
    for i, w in enumerate(wheres if asked.opponent is None else []):
        for other in wheres[i + 1 :]:
            total -= store.count_games_of(where=msgspec.structs.replace(w, opponent_id=other.bot_id))
    return games, total


def games_csv(games: list[Any]) -> str:
    """One row per seat of each game (``arena.boards.csv_export.games_csv``, as the web's download)."""
    import msgspec

    from arena.boards.csv_export import games_csv as records_csv

    return records_csv(msgspec.to_builtins(games))
