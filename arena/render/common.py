"""What the terminal pictures of every game share: the replay loop and its pieces.

A game's terminal part (``arena.games.parts.TerminalRenderer``) cuts a verified replay
into rounds of turns and draws each piece (``ReplayPictures``); ``show_pictures`` alone
decides what is printed when: from which round and turn, a pause after each turn in
step mode, the standings at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from arena.play.replay import DecisionLine, DroppedLine, FaultLine, Header, ReplayError, SeatStatus
from arena.text import shown

Note = FaultLine | DroppedLine
"""What the referee logged about a seat while a decision was asked of it."""


class ReplayPictures(Protocol):
    """One verified replay cut into rounds of turns, and how each piece is drawn.
    Rounds and turns are 0-based indexes here."""

    def turns(self) -> list[int]:
        """How many turns each round has."""
        ...

    def header(self) -> list[RenderableType]:
        """What comes before the first round shown (game, seed, seats)."""
        ...

    def round_start(self, round_index: int, from_turn: int) -> list[RenderableType]:
        """A round's heading; ``from_turn`` above 0 when it is joined mid-way."""
        ...

    def turn(self, round_index: int, turn_index: int) -> list[RenderableType]:
        """One turn."""
        ...

    def round_end(self, round_index: int) -> list[RenderableType]:
        """After a round's last turn (nothing for a round the log leaves unfinished)."""
        ...

    def standings(self) -> list[RenderableType]:
        """The final standings (nothing for a replay cut short)."""
        ...


def show_pictures(
    console: Console, pictures: ReplayPictures, round_no: int | None, turn: int | None, step: bool
) -> None:
    """Print a replay's pictures from the moment asked for (``round_no``/``turn``, 1-based),
    then the standings. With ``step``, wait for Enter after each turn; ``q`` or the end
    of input stops."""
    turns = pictures.turns()
    first_round, first_turn = start_at(turns, round_no, turn)
    print_all(console, pictures.header())
    for index in range(first_round, len(turns)):
        skip = first_turn if index == first_round else 0
        print_all(console, pictures.round_start(index, skip))
        for turn_index in range(skip, turns[index]):
            print_all(console, pictures.turn(index, turn_index))
            if turn_index == turns[index] - 1:
                print_all(console, pictures.round_end(index))
            if step and not wait_for_enter(console):
                return
    print_all(console, pictures.standings())


def standings_table(
    ranks: Sequence[int],
    scores: Sequence[int],
    statuses: Sequence[SeatStatus],
    labels: Sequence[str],
    score: str = "score",
    title: str = "Final standings",
) -> Table:
    """A game's final standings, written once for every game and command (``arena play``,
    ``arena replay``): rank, seat, score (headed ``score``, or as the game names it),
    and each seat's status with the kinds of its faults (red when not ok), best first."""
    table = Table(title=title, title_justify="left")
    for column, justify in (("rank", "right"), ("seat", "left"), (score, "right"), ("status", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for seat in sorted(range(len(labels)), key=lambda s: (ranks[s], s)):
        status = statuses[seat]
        faults = ", ".join(fault.kind for fault in status.faults)
        text = Text(status.status + (f" ({faults})" if faults else ""), style="" if status.status == "ok" else "red")
        table.add_row(str(ranks[seat]), Text(labels[seat]), str(scores[seat]), text)
    return table


def print_all(console: Console, renderables: Sequence[RenderableType]) -> None:
    """Print each; lines of text wrap softly (a long line stays one line in a file)."""
    for renderable in renderables:
        console.print(renderable, soft_wrap=isinstance(renderable, Text))


def wait_for_enter(console: Console) -> bool:
    """Step mode's pause: True to go on; ``q`` or the end of input (EOF) stops."""
    try:
        answer = console.input(Text("Enter: next turn, q: quit ", style="dim"))
    except EOFError:
        console.print()
        return False
    return answer.strip().lower() != "q"


def start_at(turns: Sequence[int], round_no: int | None, turn: int | None) -> tuple[int, int]:
    """The 0-based round and turn to start showing at (round 1 if only a turn is given),
    or ``ReplayError`` saying what the game has; ``turns`` holds each round's turn count."""
    if round_no is None and turn is None:
        return 0, 0
    round_no = round_no or 1
    rounds = len(turns)
    if not 1 <= round_no <= rounds:
        raise ReplayError(f"round {round_no} does not exist: this game has {count(rounds, 'round')}")
    if turn is None:
        return round_no - 1, 0
    in_round = turns[round_no - 1]
    if not 1 <= turn <= in_round:
        raise ReplayError(f"turn {turn} does not exist: round {round_no} has {count(in_round, 'turn')}")
    return round_no - 1, turn - 1


def note_lines(notes: Sequence[Note], letters: Sequence[str]) -> list[Text]:
    """Faults in red with the evidence under them; dropped lines dimmed (the bot's
    words through ``shown``: escaped, never obeyed by the terminal)."""
    out: list[Text] = []
    for note in notes:
        who = letters[note.seat]
        match note:
            case FaultLine(fault=fault):
                where = f" ({fault.where})" if fault.where else ""
                out.append(Text(f"  ! {who} {fault.kind}{where}: {shown(fault.message)}", style="red"))
                if fault.line:
                    out.append(Text(f"      sent: {shown(fault.line)}", style="dim"))
            case DroppedLine(line=line, reason=reason):
                out.append(
                    Text(f"  {who} sent a line that answered nothing ({shown(reason)}): {shown(line)}", style="dim")
                )
    return out


def header_lines(header: Header, labels: Sequence[str], settings: dict[str, Any] | None = None) -> list[RenderableType]:
    """A replay's title (game, seed, seats, start), its ``settings`` (default: all) and
    limits, and who sat where in which sandbox: the top of every game's pictures."""
    title = Text(f"{shown(header.game)} replay", style="bold")
    title.append(f" · game {header.game_no} · seed {header.seed} · {header.players} seats")
    if header.started:
        title.append(f" · started {shown(header.started)}")
    given = (header.settings if settings is None else settings).items()
    settings_text = shown(" ".join(f"{key}={value}" for key, value in given))
    limits = ", ".join(limit_text(key, value) for key, value in header.limits.items())
    seats = Table(box=None, pad_edge=False, header_style="dim")
    for column in ("seat", "version", "sandbox"):
        seats.add_column(column)
    for label, seat in zip(labels, header.seats, strict=True):
        seats.add_row(Text(label), Text(shown(seat.version)), Text(shown(seat.isolation)))
    return [title, Text(f"settings: {settings_text} · limits: {limits}"), seats]


def limit_text(key: str, value: int) -> str:
    """``move 1000 ms`` for a time limit, ``max_line 65536 bytes`` for the line cap."""
    return f"{key.removesuffix('_ms')} {value} ms" if key.endswith("_ms") else f"{key} {value} bytes"


def ms_text(ms: float) -> str:
    """A thinking time: ``0.4 ms``, ``87 ms``, ``1.25 s``."""
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def time_text(decision: DecisionLine, index: int) -> str:
    """The ``index``-th asked seat's thinking time, and the time bank it has left after
    it when the replay logs it: ``1.50 s, bank 8.50 s``."""
    said = ms_text(decision.wall_ms[index])
    return f"{said}, bank {bank_text(decision.bank_ms[index])}" if decision.bank_ms else said


def bank_text(ms: int) -> str:
    """What is left of a time bank: ``8.50 s``, ``450 ms``, ``0 (spent)``."""
    return ms_text(ms) if ms > 0 else "0 (spent)"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
