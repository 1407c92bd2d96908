"""``arena game check``: a game author's first command, the contract check of a game."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.cli.common import console, escape, fail
from arena.text import shown

game_app = typer.Typer(help="Games: check that a game keeps the contract.", no_args_is_help=True)
PROBLEMS_EXIT = 1
"""``arena game check``'s exit status when the game breaks its contract (2: no such game)."""


@game_app.command("check")
def game_check(
    entry: Annotated[
        str,
        typer.Argument(
            help="The game's record as MODULE:ATTRIBUTE (an ARENA_GAMES entry, e.g. mygames.tiles:GAME), or the name"
            " of a game the arena knows.",
            metavar="MODULE:ATTR",
        ),
    ],
    games: Annotated[int, typer.Option("--games", help="Random games per variant and table size.", min=1)] = 3,
    seed: Annotated[int, typer.Option(help="The first game's seed; the others follow it.")] = 0,
) -> None:
    """Play random games through a game's rules and every part of its record (settings,
    views, answers, privacy, the wire types, replays, the terminal and web pictures, the
    bot-check battery): one line per problem, exit 1 on any, 0 when it keeps the contract."""
    from arena.gamecheck import check, record_named, table_cases
    from arena.games.registry import CatalogError

    try:
        record = record_named(entry)
    except CatalogError as exc:
        fail(str(exc))
    problems = check(record, games=games, seed=seed)
    for problem in problems:
        console.print(f"[bold red]FAIL[/] {escape(shown(str(problem)))}", soft_wrap=True)
    seeds = f"seed {seed}" if games == 1 else f"seeds {seed} to {seed + games - 1}"
    played = f"{games} random game{'s' * (games != 1)} ({seeds})"
    if problems:
        count = f"{len(problems)} problem{'s' * (len(problems) != 1)}"
        console.print(f"[bold red]{escape(record.name)}: {count}[/] in {played} at each variant and table size")
        raise typer.Exit(PROBLEMS_EXIT)
    cases = list(table_cases(record))
    variants = len({str(settings) for settings, _ in cases})
    sizes = sorted({players for _, players in cases})
    tables = f"{len(cases)} table{'s' * (len(cases) != 1)}: " + (f"{variants} variants, " if variants > 1 else "")
    tables += ", ".join(map(str, sizes[:-1])) + (" and " if len(sizes) > 1 else "") + f"{sizes[-1]} players"
    console.print(
        f"[bold green]{escape(record.name)} keeps the contract[/]: {played} at each of {tables}", soft_wrap=True
    )
