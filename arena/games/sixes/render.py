"""Sixes in the terminal: live round summaries and the replay viewer's pictures.

The viewer draws each round as a table with a row per turn: the move, then the four
suits of the table as columns. In a suit's column every rank has a fixed place
(``1234567SCR``: S sota, C caballo, R rey), so a run grows out of its 6 like a bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from rich.console import Console, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from arena.games.sixes.rules import Run, State, place
from arena.play.replay import DecisionLine, DroppedLine, End, EventsLine, FaultLine, Header, Line, Step
from arena.render import seat_labels
from arena.render.common import Note, bank_text, count, header_lines, note_lines, show_pictures, standings_table
from arena.render.common import ms_text as _ms
from protocol.sixes import RANKS, SUITS, Deal, GameEnd, Pass, Play, RoundEnd, rank, suit

SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
SUIT_STYLES = {"o": "yellow", "c": "red", "e": "blue", "b": "green"}
RANK_GLYPHS = {1: "1", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 10: "S", 11: "C", 12: "R"}
"""One character per rank, so a suit's run fits a fixed strip."""
LEGEND = "ranks 1 2 3 4 5 6 7 S(ota, 10) C(aballo, 11) R(ey, 12)"


def live(events: Sequence[Any], labels: Sequence[str]) -> list[Any]:
    """What ``arena play`` prints as a game goes: a line per finished round."""
    out: list[Any] = []
    letters = [label.split()[0] for label in labels]
    for event in events:
        if isinstance(event, RoundEnd):
            chips = "  ".join(f"{letter} {c:<3}" for letter, c in zip(letters, event.chips, strict=True))
            took = f"{letters[event.winner]} wins, takes {count(event.pot, 'chip')}"
            out.append(Text(f"round {event.round:>2}  {took:<24} chips  {chips}"))
        elif isinstance(event, GameEnd):
            out.append(Text("game over", style="bold"))
    return out


# --- the replay viewer ------------------------------------------------------------------
# A verified replay is first grouped into rounds and turns (``game_log``), then each
# piece is drawn by a small function; ``show_replay`` only decides what to print when.


@dataclass
class TurnLog:
    """One turn: the state it was decided in, what was done, and how it was decided."""

    move: Play | Pass
    before: State
    decision: DecisionLine | None = None
    notes: list[Note] = field(default_factory=list)


@dataclass
class RoundLog:
    deal: Deal
    start: State
    """The state as the round was dealt (chips before it)."""
    turns: list[TurnLog] = field(default_factory=list)
    end: RoundEnd | None = None
    hands_left: tuple[tuple[str, ...], ...] = ()
    """Each seat's cards when the round ended."""


@dataclass
class GameLog:
    header: Header
    before_play: list[Note] = field(default_factory=list)
    """Faults logged before the first card was played (a bot that did not start)."""
    rounds: list[RoundLog] = field(default_factory=list)
    end: End | None = None


def game_log(lines: Sequence[Line], steps: Sequence[Step]) -> GameLog:
    """Group a verified replay into rounds and turns; ``steps`` are ``verify``'s, one per
    events line, so each turn knows the state it was decided in."""
    header = lines[0]
    assert isinstance(header, Header)
    log = GameLog(header)
    next_step = iter(steps)
    notes: list[Note] = []
    decided: tuple[DecisionLine, list[Note]] | None = None
    state: Any = None
    for line in lines[1:]:
        match line:
            case FaultLine() | DroppedLine():
                notes.append(line)
            case DecisionLine():
                decided, notes = (line, notes), []
            case EventsLine():
                step = next(next_step)
                if not log.rounds:
                    log.before_play.extend(notes)
                    notes = []
                _add_events(log, step, state, decided)
                decided = None
                state = step.state
            case End():
                log.end = line
    return log


def _add_events(
    log: GameLog, step: Step, before: State | None, decided: tuple[DecisionLine, list[Note]] | None
) -> None:
    """File one events line's events under their round and turn."""
    for event in step.events:
        match event:
            case Deal():
                log.rounds.append(RoundLog(event, step.state))
            case Play() | Pass():
                assert before is not None, "a move before any deal"
                decision, notes = decided if decided else (None, [])
                log.rounds[-1].turns.append(TurnLog(event, before, decision, notes))
                if isinstance(event, Play):
                    before = _after_play(before, event)
            case RoundEnd():
                log.rounds[-1].end = event
                if before is not None:
                    log.rounds[-1].hands_left = before.hands


def _after_play(state: State, play: Play) -> State:
    """Just the hands after ``play``: enough for the round-end table."""
    hands = tuple(tuple(c for c in hand if c != play.card) for hand in state.hands)
    return msgspec.structs.replace(state, hands=hands)


def show_replay(
    console: Console,
    lines: Sequence[Line],
    steps: Sequence[Step],
    round_no: int | None = None,
    turn: int | None = None,
    step: bool = False,
) -> None:
    """Show a verified replay: header, then every round and turn from the moment asked
    for (``round_no``/``turn``), then the standings. With ``step``, wait for Enter after
    each turn; ``q`` or the end of input stops."""
    show_pictures(console, Pictures(game_log(lines, steps), console.width), round_no, turn, step)


class Pictures:
    """A Sixes game log drawn piece by piece for ``show_pictures``: a turn is a row of
    one grid, so a round's heading ends with the grid's header."""

    def __init__(self, log: GameLog, width: int) -> None:

        self.log = log
        self.labels = seat_labels([seat.name for seat in log.header.seats])
        self.letters = [label.split(" ", 1)[0] for label in self.labels]
        self.times = width >= TIME_COLUMN_MIN_WIDTH
        self.banks = width >= BANK_COLUMN_MIN_WIDTH

    def turns(self) -> list[int]:
        return [len(round_log.turns) for round_log in self.log.rounds]

    def header(self) -> list[RenderableType]:
        return header_view(self.log, self.labels)

    def round_start(self, round_index: int, from_turn: int) -> list[RenderableType]:
        round_log = self.log.rounds[round_index]
        if from_turn == 0:
            return [*round_heading(round_log, self.letters), turn_table(True, self.times, self.banks)]
        before = round_log.turns[from_turn].before
        return [
            *resumed_heading(before, self.letters),
            turn_table(True, self.times, self.banks),
            table_row(before, self.times, self.banks),
        ]

    def turn(self, round_index: int, turn_index: int) -> list[RenderableType]:
        return turn_view(self.log.rounds[round_index].turns[turn_index], self.letters, self.times, self.banks)

    def round_end(self, round_index: int) -> list[RenderableType]:
        round_log = self.log.rounds[round_index]
        return [] if round_log.end is None else [Text(), round_end_table(round_log, self.labels)]

    def standings(self) -> list[RenderableType]:
        end = self.log.end
        return (
            [] if end is None else [Text(), standings_table(end.ranks, end.scores, end.statuses, self.labels, "chips")]
        )


# --- the pictures -------------------------------------------------------------------------


def header_view(log: GameLog, labels: Sequence[str]) -> list[RenderableType]:
    """Game, seed, settings, limits, the card legend, and who sat where in which sandbox."""
    title, settings, seats = header_lines(log.header, labels)
    letters = [label.split(" ", 1)[0] for label in labels]
    return [title, settings, Text(LEGEND, style="dim"), seats, *note_lines(log.before_play, letters)]


def round_heading(round_log: RoundLog, letters: Sequence[str]) -> list[RenderableType]:
    """``Round R``: chips before it, who starts, and every hand (spectators see them all)."""
    deal = round_log.deal
    return [
        Text(),
        Rule(f"Round {deal.round}", align="left"),
        Text(f"{letters[deal.starter]} holds 6o and starts · chips {_chips(round_log.start, letters)}", style="dim"),
        hands_table(deal.hands, letters),
    ]


def resumed_heading(state: State, letters: Sequence[str]) -> list[RenderableType]:
    """The heading of a round joined mid-way: hands, chips, pot and table as they stand."""
    return [
        Text(),
        Rule(f"Round {state.round}, from turn {state.turn}", align="left"),
        Text(f"chips {_chips(state, letters)} · pot {state.pot}", style="dim"),
        hands_table(state.hands, letters),
    ]


def hands_table(hands: Sequence[Sequence[str]], letters: Sequence[str]) -> Table:
    """A seat per line, its cards grouped by suit."""
    table = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1, 0, 2))
    for letter, hand in zip(letters, hands, strict=True):
        groups = [[c for c in hand if suit(c) == s] for s in SUITS]
        line = Text(f"{len(hand):>2} cards  ", style="dim")
        line.append(Text("  ").join(Text(" ".join(g), style=SUIT_STYLES[g[0][-1]]) for g in groups if g))
        table.add_row(letter, line)
    return table


TIME_COLUMN_MIN_WIDTH = 90
"""Consoles at least this wide also show each move's thinking time."""
BANK_COLUMN_MIN_WIDTH = 100
"""Consoles at least this wide also show the time bank each seat has left after its move."""


def turn_table(header: bool = False, times: bool = False, banks: bool = False) -> Table:
    """The grid every turn row is drawn in: fixed widths, so rows printed one at a time
    (as step mode does) line up under one header; 79 columns, 88 with times, 98 with the
    banks left too."""
    table = Table(show_header=header, box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="dim")
    table.add_column("turn", width=4, justify="right", no_wrap=True)
    table.add_column("move", width=30, overflow="fold")
    for s in SUITS:
        table.add_column(SUIT_NAMES[s], width=len(RANKS), no_wrap=True, header_style=SUIT_STYLES[s])
    if times:
        table.add_column("time", width=8, justify="right", no_wrap=True, style="dim")
    if times and banks:
        table.add_column("bank", width=9, justify="right", no_wrap=True, style="dim")
    return table


def turn_view(
    turn_log: TurnLog, letters: Sequence[str], times: bool = False, banks: bool = False
) -> list[RenderableType]:
    """A turn's row (the move, the table after it, the thinking time and the bank left
    after it), then any faults."""
    move = turn_log.move
    before = turn_log.before
    table = place(before.table, move.card) if isinstance(move, Play) else before.table
    played = move.card if isinstance(move, Play) else None
    decision = turn_log.decision
    cells: list[RenderableType] = [str(before.turn), move_text(move, letters, bool(decision and decision.defaulted[0]))]
    cells += suit_strips(table, played)
    if times:
        cells.append(_ms(decision.wall_ms[0]) if decision else "")
    if times and banks:
        cells.append(bank_text(decision.bank_ms[0]) if decision and decision.bank_ms else "")
    grid = turn_table(times=times, banks=banks)
    grid.add_row(*cells)
    return [grid, *note_lines(turn_log.notes, letters)]


def move_text(move: Play | Pass, letters: Sequence[str], defaulted: bool = False) -> Text:
    """``B plays 7c``, ``C passes, pays 1 chip (pot 3)``, ``D passes, has no chip to pay``."""
    who = letters[move.seat]
    if isinstance(move, Play):
        text = Text(f"{who} plays ")
        text.append(move.card, style=f"bold {SUIT_STYLES[suit(move.card)]}")
    elif move.paid:
        text = Text(f"{who} passes, pays {count(move.paid, 'chip')} (pot {move.pot})", style="dim")
    else:
        text = Text(f"{who} passes, has no chip to pay", style="dim")
    if defaulted:
        text.append(" (default)", style="red")
    return text


def suit_strips(table: Sequence[Run | None], played: str | None = None) -> list[Text]:
    """Each suit's run as a strip with a fixed place per rank; the card just played bold."""
    strips = []
    for s, run in zip(SUITS, table, strict=True):
        strip = Text()
        for r in RANKS:
            if run is not None and run[0] <= r <= run[1]:
                hot = played is not None and suit(played) == s and rank(played) == r
                strip.append(RANK_GLYPHS[r], style=f"bold reverse {SUIT_STYLES[s]}" if hot else SUIT_STYLES[s])
            else:
                strip.append("·", style="dim")
        strips.append(strip)
    return strips


def table_row(state: State, times: bool = False, banks: bool = False) -> Table:
    """The table as it stands before ``state``'s turn, in the turn grid (for a round
    joined mid-way)."""
    grid = turn_table(times=times, banks=banks)
    grid.add_row("", Text(f"table before turn {state.turn}", style="dim"), *suit_strips(state.table))
    return grid


def round_end_table(round_log: RoundLog, labels: Sequence[str]) -> Table:
    """Who won the pot, the cards each seat was left with, and chips before and after."""
    end = round_log.end
    assert end is not None
    table = Table(
        title=f"After round {end.round}: {labels[end.winner]} takes the pot of {end.pot}", title_justify="left"
    )
    table.add_column("seat")
    table.add_column("cards left")
    table.add_column("chips", justify="right")
    table.add_column("change", justify="right")
    start = round_log.start.chips
    hands = round_log.hands_left or tuple(() for _ in labels)
    for seat, label in enumerate(labels):
        change = end.chips[seat] - start[seat]
        table.add_row(Text(label), " ".join(hands[seat]), str(end.chips[seat]), f"{change:+d}" if change else "0")
    return table


def _chips(state: State, letters: Sequence[str]) -> str:
    return " · ".join(f"{letter} {c}" for letter, c in zip(letters, state.chips, strict=True))


# --- a person's seat (``arena play --human``) ----------------------------------------------


def seat_view(view: Any, kind: str, legal: Sequence[Any]) -> list[RenderableType]:
    """What a person at the terminal is shown when asked: the table's runs as ``arena
    replay`` draws them, the hand, the chips and what may be answered."""
    out: list[RenderableType] = [Text(f"round {view.round}, turn {view.turn}: your move", style="bold")]
    for s, strip in zip(SUITS, suit_strips([view.table.get(s) for s in SUITS]), strict=True):
        out.append(Text(f"{s} ").append_text(strip))
    hand = Text("your hand: ")
    for c in view.hand:
        hand.append(c, style=SUIT_STYLES[suit(c)])
        hand.append(" ")
    out.append(hand)
    chips = " · ".join(
        f"{chr(65 + s)} {c} ({n} cards)" for s, (c, n) in enumerate(zip(view.chips, view.hand_sizes, strict=True))
    )
    out.append(Text(f"chips: {chips} · pot {view.pot}", style="dim"))
    return out
