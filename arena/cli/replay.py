"""``arena replay``: a logged game re-simulated through its rules and shown turn by turn,
each seat's stderr and faults, or the game as one self-contained web page."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.common import DEFAULT_DB, DbOption, console, escape, fail, open_store, user_errors
from arena.text import shown

SourceArgument = Annotated[
    str, typer.Argument(help="A replay file, or the id of a stored game (`arena games`).", metavar="FILE|GAME_ID")
]
RoundOption = Annotated[int | None, typer.Option("--round", help="Start at this round.", min=1)]
TurnOption = Annotated[int | None, typer.Option(help="Start at this turn of the round.", min=1)]
StepOption = Annotated[bool, typer.Option(help="Wait for Enter between turns (q to quit).")]
StderrOption = Annotated[bool, typer.Option("--stderr", help="Show what each seat wrote to stderr, and its faults.")]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Write the game as one self-contained HTML page (the animated viewer, offline) to FILE.",
        metavar="FILE",
    ),
]


def replay_cmd(
    source: SourceArgument,
    round_: RoundOption = None,
    turn: TurnOption = None,
    step: StepOption = False,
    stderr: StderrOption = False,
    db: DbOption = DEFAULT_DB,
    html: HtmlOption = None,
) -> None:
    """Re-simulate a logged game through the rules and show it turn by turn; with
    --html, write it as a web page to open in any browser instead."""
    from arena.games.registry import get_game
    from arena.play import replay as replay_files

    with user_errors():
        if source.isdigit() and not Path(source).exists():
            name = f"game {source}"
            lines = replay_files.loads(stored_replay(db, int(source)), name)
        else:
            name = source
            lines = replay_files.read(source)
        header = lines[0]
        assert isinstance(header, replay_files.Header)
        if html is not None:
            from arena.web.viewer import standalone_html

            page = standalone_html(lines, f"Six Arena replay · {Path(name).name}")  # verifies it too
            try:
                html.write_text(page, encoding="utf-8")
            except OSError as exc:
                fail(f"{html}: cannot write the page: {exc.strerror or exc}")
            console.print(str(html), soft_wrap=True, markup=False)
            return
        steps = list(replay_files.verify(lines, name))
        if stderr:
            show_stderr(lines, header)
            return
        render = get_game(header.game).terminal()
        render.show_replay(console, lines, steps, round_, turn, step if sys.stdin.isatty() else False)


def show_stderr(lines: list[Any], header: Any) -> None:
    """Each seat's stderr (the bot author's debugging log) and its faults with evidence,
    through ``shown``: what a bot wrote is seen, never obeyed by the terminal."""
    from arena.play.replay import End, FaultLine

    end = lines[-1]
    for seat, info in enumerate(header.seats):
        console.rule(escape(f"seat {seat}: {shown(info.name)} {shown(info.version)}"))
        for line in lines:
            if isinstance(line, FaultLine) and line.seat == seat:
                fault = line.fault
                about = escape(shown(fault.kind)) + (f", {fault.where}" if fault.where else "")
                console.print(f"[red]fault ({about}):[/] {escape(shown(fault.message))}", soft_wrap=True)
                if fault.line:
                    console.print(f"  its line: {escape(shown(fault.line))}", soft_wrap=True)
        text = shown(end.stderr[seat], lines=True) if isinstance(end, End) else ""
        console.print(escape(text.rstrip()) if text.strip() else "[dim](nothing on stderr)[/]", soft_wrap=True)


def stored_replay(db: Path, game_id: int) -> bytes:
    """The replay of a stored game, read-only."""
    import zlib

    try:
        return open_store(db, read_only=True).replay(game_id)
    except zlib.error as exc:
        fail(
            f"{db}: the stored replay of game {game_id} is damaged ({exc}): restore the database from a backup"
            " (README: keeping a league; `arena backup`)"
        )
