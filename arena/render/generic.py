"""Any game in the terminal, knowing nothing of it: each step's answers and events as
JSON lines, round by round, then the standings. The fallback for a game whose record
has no renderer, so that ``arena play`` and ``arena replay`` show every game the
registry knows. Rounds are counted as the web viewer's generic frames count them: from
the ``round`` the events name (``arena.games.parts.named_round``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from rich.console import Console, RenderableType
from rich.rule import Rule
from rich.text import Text

from arena.games.parts import named_round
from arena.play.replay import DecisionLine, DroppedLine, End, EventsLine, FaultLine, Header, Line, Step
from arena.render import seat_labels
from arena.render.common import Note, header_lines, note_lines, show_pictures, standings_table, time_text

_encode = msgspec.json.Encoder().encode


def event_text(event: Any) -> Text:
    """One event as a line of JSON."""
    return Text(_encode(event).decode())


def live(events: Sequence[Any], labels: Sequence[str]) -> list[Any]:
    """What ``arena play`` prints as a game goes: every event, a JSON line each."""
    return [event_text(event) for event in events]


class StepLog(msgspec.Struct):
    """One events line of the replay, with the decision that caused it and the notes
    logged while that decision was asked."""

    events: list[Any]
    decision: DecisionLine | None = None
    notes: list[Note] = []


def steps_of(lines: Sequence[Line], steps: Sequence[Step]) -> tuple[list[StepLog], list[Note], End | None]:
    """The replay as steps (one per events line), the notes logged before the first
    one, and the end line if the game finished."""
    out: list[StepLog] = []
    before: list[Note] = []
    notes: list[Note] = []
    decision: DecisionLine | None = None
    end: End | None = None
    verified = iter(steps)
    for line in lines[1:]:
        match line:
            case FaultLine() | DroppedLine():
                notes.append(line)
            case DecisionLine():
                decision = line
            case EventsLine():
                if not out:
                    before, notes = notes, []
                out.append(StepLog(next(verified).events, decision, notes))
                notes, decision = [], None
            case End():
                end = line
    return out, before, end


def rounds_of(steps: Sequence[StepLog]) -> list[list[int]]:
    """The indexes of the steps of each round: a step naming a round other than the
    current one starts it, as the web viewer's generic frames start one; a game whose
    events name no round is one round."""
    rounds: list[list[int]] = [[]]
    round_no = 1
    for index, step in enumerate(steps):
        named = named_round(step.events)
        if named is not None and named != round_no:
            round_no = named
            if rounds[-1]:
                rounds.append([])
        rounds[-1].append(index)
    return rounds


class Pictures:
    """Each events line is a step, numbered through the game; the steps fall into the
    rounds the events name (the whole game is one round when they name none)."""

    def __init__(self, lines: Sequence[Line], steps: Sequence[Step]) -> None:
        header = lines[0]
        assert isinstance(header, Header)
        self.header_line = header
        self.steps, self.before, self.end = steps_of(lines, steps)
        self.rounds = rounds_of(self.steps)
        self.labels = seat_labels([seat.name for seat in header.seats])
        self.letters = [label.split(" ", 1)[0] for label in self.labels]

    def turns(self) -> list[int]:
        return [len(steps) for steps in self.rounds]

    def header(self) -> list[RenderableType]:
        return [*header_lines(self.header_line, self.labels), *note_lines(self.before, self.letters)]

    def round_start(self, round_index: int, from_turn: int) -> list[RenderableType]:
        if len(self.rounds) == 1:
            title = "Game" if from_turn == 0 else f"Game, from step {from_turn + 1}"
        else:
            first = self.rounds[round_index][from_turn] + 1
            title = f"Round {round_index + 1}" + ("" if from_turn == 0 else f", from step {first}")
        return [Text(), Rule(title, align="left")]

    def turn(self, round_index: int, turn_index: int) -> list[RenderableType]:
        index = self.rounds[round_index][turn_index]
        step = self.steps[index]
        out: list[RenderableType] = [Text(f"step {index + 1}", style="bold")]
        decision = step.decision
        if decision is not None:
            for i, (seat, answer, defaulted) in enumerate(
                zip(decision.seats, decision.answers, decision.defaulted, strict=True)
            ):
                line = Text(f"  {self.letters[seat]} {decision.kind} {_encode(answer).decode()}")
                line.append(f" ({time_text(decision, i)})", style="dim")
                if defaulted:
                    line.append(" (default)", style="red")
                out.append(line)
        out += note_lines(step.notes, self.letters)
        out += [Text("  ") + event_text(event) for event in step.events]
        return out

    def round_end(self, round_index: int) -> list[RenderableType]:
        return []

    def standings(self) -> list[RenderableType]:
        end = self.end
        if end is None:
            return []
        table = standings_table(end.ranks, end.scores, end.statuses, self.labels)
        return [Text(), table]


def show_replay(
    console: Console,
    lines: Sequence[Line],
    steps: Sequence[Step],
    round_no: int | None = None,
    turn: int | None = None,
    step: bool = False,
) -> None:
    """Show a verified replay, step by step, as JSON lines (``--round R --turn N`` starts at
    the Nth step of round R)."""
    show_pictures(console, Pictures(lines, steps), round_no, turn, step)
