"""6 nimmt! in the terminal: live round summaries and the replay viewer's pictures.

The variants show where they differ: a logical round opens with its draft (who took
what, lap by lap), a professional card placed before a row's first card says "left
end", two cards per turn simply reveal two cards a seat, and shedding shows the cards
taken into a hand and each seat's hand size instead of heads. A standard game looks as
it always did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from arena.games.nimmt.rules import State
from arena.play.replay import (
    DecisionLine,
    DroppedLine,
    End,
    EventsLine,
    FaultLine,
    Header,
    Line,
    Step,
)
from arena.render import seat_labels
from arena.render.common import Note, count, header_lines, note_lines, show_pictures, standings_table, time_text
from protocol.nimmt import HEADS, Deal, DraftStart, GameEnd, Pick, Place, Reveal, RoundEnd


def card(c: int, width: int = 3) -> Text:
    """A card with its heads as a colour: the more heads, the hotter."""
    style = {1: "", 2: "cyan", 3: "yellow", 5: "bold red", 7: "bold magenta"}[HEADS[c]]
    return Text(f"{c:>{width}}", style=style)


def live(events: Sequence[Any], labels: Sequence[str]) -> list[Any]:
    """What ``arena play`` prints as a game goes: a line per finished round."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, RoundEnd):
            parts = [
                f"{label.split()[0]} +{h:<2} = {t:<3}"
                for label, h, t in zip(labels, event.heads, event.scores, strict=True)
            ]
            out.append(Text(f"round {event.round:>2}  " + "  ".join(parts)))
        elif isinstance(event, GameEnd):
            out.append(Text("game over", style="bold"))
    return out


def rows_table(rows: Sequence[Sequence[int]], title: str | None = None, shedding: bool = False) -> Table:
    """The rows, a card per column, with each row's heads (when shedding: its size)."""
    table = Table(title=title, show_header=False, box=None, pad_edge=False)
    table.add_column("row", style="dim")
    for _ in range(6):
        table.add_column(justify="right", min_width=3)  # a steady grid from turn to turn
    table.add_column("heads", style="dim")
    for i, row in enumerate(rows):
        worth = count(len(row), "card") if shedding else f"{sum(HEADS[c] for c in row)} heads"
        table.add_row(f"row {i}", *[card(c) for c in row], *[""] * (6 - len(row)), worth)
    return table


# --- the replay viewer ------------------------------------------------------------------
# A verified replay is first grouped into rounds and turns (``game_log``), then each
# piece is drawn by a small function; ``show_replay`` only decides what to print when.


@dataclass
class Decided:
    """A decision line, with the faults and dropped lines logged while it was asked."""

    line: DecisionLine
    notes: list[Note]


@dataclass
class TurnLog:
    """One turn: the state as the cards were chosen, the reveal, and what followed."""

    reveal: Reveal
    before: State
    places: list[Place] = field(default_factory=list)
    decisions: list[Decided] = field(default_factory=list)


@dataclass
class DraftLog:
    """A logical round's draft: the offer, each pick in order, and the decisions."""

    start: DraftStart
    picks: list[Pick] = field(default_factory=list)
    decisions: list[Decided] = field(default_factory=list)
    """One per pick, in the same order."""


@dataclass
class RoundLog:
    deal: Deal
    turns: list[TurnLog] = field(default_factory=list)
    end: RoundEnd | None = None
    draft: DraftLog | None = None
    """The draft that made this round's hands and rows (logical variant only)."""


@dataclass
class Facts:
    """What the viewer draws differently for a game's settings."""

    professional: bool = False
    shedding: bool = False
    keep_rows: bool = False

    @classmethod
    def of(cls, settings: dict[str, Any]) -> Facts:
        """The facts of a replay header's settings (old replays lack the house rules)."""
        return cls(
            professional=settings.get("variant") == "professional",
            shedding=bool(settings.get("shedding", False)),
            keep_rows=bool(settings.get("keep_rows", False)),
        )


@dataclass
class GameLog:
    header: Header
    before_play: list[Note] = field(default_factory=list)
    """Faults logged before the first card was played (a bot that did not start)."""
    rounds: list[RoundLog] = field(default_factory=list)
    end: End | None = None
    draft: DraftLog | None = None
    """The latest draft begun; its round takes it when the round's deal comes."""


def game_log(lines: Sequence[Line], steps: Sequence[Step]) -> GameLog:
    """Group a verified replay into rounds and turns; ``steps`` are ``verify``'s, one per
    events line, so each turn knows the state it started from."""
    header = lines[0]
    assert isinstance(header, Header)
    log = GameLog(header)
    next_step = iter(steps)
    notes: list[Note] = []
    decided: list[Decided] = []
    state: Any = None
    turn: TurnLog | None = None
    for line in lines[1:]:
        match line:
            case FaultLine() | DroppedLine():
                notes.append(line)
            case DecisionLine():
                decided.append(Decided(line, notes))
                notes = []
            case EventsLine():
                step = next(next_step)
                if turn is None:
                    log.before_play.extend(notes)
                    notes = []
                turn = _add_events(log, step.events, state, turn)
                if log.draft is not None:  # a pick's decision goes with the draft
                    log.draft.decisions.extend(d for d in decided if d.line.kind == "draft")
                    decided = [d for d in decided if d.line.kind != "draft"]
                if turn is not None:
                    turn.decisions.extend(decided)
                    decided = []
                state = step.state
            case End():
                log.end = line
    return log


def _add_events(log: GameLog, events: list[Any], before: State, turn: TurnLog | None) -> TurnLog | None:
    """File one events line's events under their round and turn; returns the open turn."""
    for event in events:
        match event:
            case DraftStart():
                log.draft = DraftLog(event)
            case Pick():
                assert log.draft is not None, "a pick before any draft"
                log.draft.picks.append(event)
            case Deal():
                draft = log.draft if log.draft is not None and log.draft.start.round == event.round else None
                log.rounds.append(RoundLog(event, draft=draft))
            case Reveal():
                turn = TurnLog(event, before)
                log.rounds[-1].turns.append(turn)
            case Place():
                assert turn is not None, "a placement before any reveal"
                turn.places.append(event)
            case RoundEnd():
                log.rounds[-1].end = event
    return turn


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
    show_pictures(console, Pictures(game_log(lines, steps)), round_no, turn, step)


class Pictures:
    """A 6 nimmt! game log drawn piece by piece for ``show_pictures``."""

    def __init__(self, log: GameLog) -> None:

        self.log = log
        self.labels = seat_labels([seat.name for seat in log.header.seats])
        self.letters = [label.split(" ", 1)[0] for label in self.labels]
        self.facts = Facts.of(log.header.settings)

    def turns(self) -> list[int]:
        return [len(round_log.turns) for round_log in self.log.rounds]

    def header(self) -> list[RenderableType]:
        return header_view(self.log, self.labels)

    def round_start(self, round_index: int, from_turn: int) -> list[RenderableType]:
        round_log = self.log.rounds[round_index]
        if from_turn == 0:
            return round_heading(round_log, self.letters, self.facts)
        return resumed_heading(round_log.turns[from_turn], self.letters, self.facts.shedding)

    def turn(self, round_index: int, turn_index: int) -> list[RenderableType]:
        return turn_view(self.log.rounds[round_index].turns[turn_index], self.letters, self.facts)

    def round_end(self, round_index: int) -> list[RenderableType]:
        end = self.log.rounds[round_index].end
        return [] if end is None else [Text(), round_end_table(end, self.labels)]

    def standings(self) -> list[RenderableType]:
        """The score column counts cards left in hand when shedding."""
        end, score = self.log.end, "cards left" if self.facts.shedding else "score"
        return [] if end is None else [Text(), standings_table(end.ranks, end.scores, end.statuses, self.labels, score)]


# --- the pictures -------------------------------------------------------------------------

_QUIET_DEFAULTS: dict[str, Any] = {"keep_rows": False, "cards_per_turn": 1, "shedding": False}
"""House rules left out of the header while off, so a standard game's header reads as
it did before they existed."""


def header_view(log: GameLog, labels: Sequence[str]) -> list[RenderableType]:
    """Game, seed, settings (those not at their usual value), limits, and who sat where
    in which sandbox."""
    settings = {k: v for k, v in log.header.settings.items() if _QUIET_DEFAULTS.get(k, ...) != v}
    letters = [label.split(" ", 1)[0] for label in labels]
    return [*header_lines(log.header, labels, settings), *note_lines(log.before_play, letters)]


def round_heading(round_log: RoundLog, letters: Sequence[str], facts: Facts | None = None) -> list[RenderableType]:
    """``Round R``: the draft if any, the starting rows (with ``keep_rows``, those kept
    from the round before) and every hand (spectators see them all)."""
    facts = facts or Facts()
    deal = round_log.deal
    out: list[RenderableType] = [Text(), Rule(f"Round {deal.round}", align="left")]
    if round_log.draft is not None:
        out += draft_view(round_log.draft, letters)
    kept = facts.keep_rows and deal.round > 1
    out += [
        Text("rows kept from the round before" if kept else "starting rows", style="dim"),
        _indent(rows_table(deal.rows, shedding=facts.shedding)),
        Text("hands", style="dim"),
        _indent(hands_table(deal.hands, letters)),
    ]
    return out


def draft_view(draft: DraftLog, letters: Sequence[str]) -> list[RenderableType]:
    """The logical draft: the offer, then the picks in order, a line per lap of the
    seats (a pick the referee made for a seat is marked), then what was left."""
    start = draft.start
    out: list[RenderableType] = [
        Text(f"draft: {letters[start.first]} picks first, from {count(len(start.offer), 'card')}", style="dim"),
    ]
    seats = len(letters)
    picks = draft.picks
    decisions: list[Decided | None] = [*draft.decisions, *[None] * len(picks)][: len(picks)]
    for lap in range(0, len(picks), seats):
        line = Text(f"  lap {lap // seats + 1:>2}  ")
        notes: list[Note] = []
        for i, (pick, decided) in enumerate(zip(picks[lap : lap + seats], decisions[lap : lap + seats], strict=True)):
            line.append(" · " if i else "")
            line.append(f"{letters[pick.seat]} ")
            line.append(card(pick.card))
            if decided is not None:
                notes += decided.notes
                if decided.line.defaulted[0]:
                    line.append(" (default)", style="red")
        out.append(line)
        out += note_lines(notes, letters)
    left = sorted(set(start.offer) - {pick.card for pick in picks})
    if left:
        text = Text("  left, to start the rows: ", style="dim")
        text.append(_cards(left, width=0))
        out.append(text)
    return out


def resumed_heading(turn_log: TurnLog, letters: Sequence[str], shedding: bool = False) -> list[RenderableType]:
    """The heading of a round joined mid-way: hands and heads (when shedding: hand
    sizes) as they stand then."""
    state = turn_log.before
    if shedding:
        summary = f"cards in hand: {_per_seat(letters, [len(hand) for hand in state.hands])}"
    else:
        totals = _per_seat(letters, state.scores)
        taken = _per_seat(letters, state.round_heads)
        summary = f"totals before this round: {totals}; heads taken in it so far: {taken}"
    return [
        Text(),
        Rule(f"Round {state.round}, from turn {state.turn}", align="left"),
        Text(summary, style="dim"),
        Text("hands", style="dim"),
        _indent(hands_table(state.hands, letters)),
    ]


def _per_seat(letters: Sequence[str], values: Sequence[int]) -> str:
    return " · ".join(f"{letter} {value}" for letter, value in zip(letters, values, strict=True))


def hands_table(hands: Sequence[Sequence[int]], letters: Sequence[str]) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    for letter, hand in zip(letters, hands, strict=True):
        table.add_row(letter, _cards(hand, width=3))
    return table


def turn_view(turn_log: TurnLog, letters: Sequence[str], facts: Facts | None = None) -> list[RenderableType]:
    """A turn: the rows before the reveal (when shedding, each seat's hand size too),
    the cards in placement order, each placement, each seat's thinking time, and any
    fault where it happened."""
    facts = facts or Facts()
    reveal = turn_log.reveal
    plays = [d for d in turn_log.decisions if d.line.kind == "play"]
    row_choices = iter(d for d in turn_log.decisions if d.line.kind == "row")
    out: list[RenderableType] = [Text(), Text(f"round {reveal.round} · turn {reveal.turn}", style="bold")]
    if reveal.turn > 1:  # turn 1's rows are the starting rows, shown just above
        out.append(_indent(rows_table(turn_log.before.rows, shedding=facts.shedding)))
    if facts.shedding:
        sizes = _per_seat(letters, [len(hand) for hand in turn_log.before.hands])
        out.append(Text(f"  in hand   {sizes}", style="dim"))
    if plays:
        out += [revealed_line(reveal, plays[0].line, letters), times_line(plays[0].line, letters)]
        out += note_lines(plays[0].notes, letters)
    for place in turn_log.places:
        choice = next(row_choices, None) if place.chosen else None
        out.append(placement_line(place, letters, choice.line if choice else None, facts))
        if choice is not None:
            out += note_lines(choice.notes, letters)
    return out


def revealed_line(reveal: Reveal, play: DecisionLine, letters: Sequence[str]) -> Text:
    """``revealed  C  19 · B  45 · A  74``; a card the referee played for a seat is marked."""
    defaulted = {seat for seat, d in zip(play.seats, play.defaulted, strict=True) if d}
    line = Text("  revealed  ")
    for i, (c, seat) in enumerate(reveal.plays):
        line.append(" · " if i else "")
        line.append(f"{letters[seat]} ")
        line.append(card(c))
        if seat in defaulted:
            line.append(" (default)", style="red")
    return line


def times_line(decision: DecisionLine, letters: Sequence[str]) -> Text:
    """Each seat's wall time to answer, in seat order, and its time bank left (when logged)."""
    parts = [f"{letters[seat]} {time_text(decision, i)}" for i, seat in enumerate(decision.seats)]
    return Text("  time      " + " · ".join(parts), style="dim")


def placement_line(
    place: Place, letters: Sequence[str], choice: DecisionLine | None, facts: Facts | None = None
) -> Text:
    """``B  34 → row 2``, ``C   7 → row 2, left end`` (professional), a sixth card
    taking a row, or a card no row takes choosing one; when shedding, the cards taken
    go "into hand" and have no heads."""
    facts = facts or Facts()
    line = Text(f"  {letters[place.seat]} ")
    line.append(card(place.card))
    where = f"row {place.row}, left end" if place.end == "left" else f"row {place.row}"
    if place.chosen:
        fits = "fits no row end" if facts.professional else "is lower than every row"
        line.append(f" {fits}: chooses row {place.row}, takes ")
        line.append(_taken(place.taken, facts.shedding))
        if choice is not None:
            line.append(f" ({time_text(choice, 0)})", style="dim")
            if choice.defaulted[0]:
                line.append(" (default)", style="red")
    elif place.taken:
        line.append(f" → {where} (sixth card: takes ")
        line.append(_taken(place.taken, facts.shedding))
        line.append(")")
    else:
        line.append(f" → {where}")
    return line


def round_end_table(end: RoundEnd, labels: Sequence[str]) -> Table:
    """Heads taken in the round and the totals, per seat."""
    table = Table(title=f"After round {end.round}", title_justify="left")
    table.add_column("seat")
    table.add_column("this round", justify="right")
    table.add_column("total", justify="right")
    for label, heads, total in zip(labels, end.heads, end.scores, strict=True):
        table.add_row(Text(label), f"+{heads}", str(total))
    return table


def _taken(cards: Sequence[int], shedding: bool = False) -> Text:
    """``12 15 20, 4 heads``: the cards a seat took and what they cost; when shedding,
    ``12 15 20 into hand``."""
    text = _cards(cards, width=0)
    if shedding:
        text.append(" into hand", style="bold")
    else:
        text.append(f", {sum(HEADS[c] for c in cards)} heads", style="bold")
    return text


def _cards(cards: Sequence[int], width: int) -> Text:
    return Text(" ").join(card(c, width) for c in cards)


def _indent(renderable: RenderableType) -> Padding:
    return Padding(renderable, (0, 0, 0, 2), expand=False)


# --- a person's seat (``arena play --human``) ----------------------------------------------


def seat_view(view: Any, kind: str, legal: Sequence[Any]) -> list[RenderableType]:
    """What a person at the terminal is shown when asked: the rows as ``arena replay``
    draws them, the hand, the scores and what may be answered."""
    out: list[RenderableType] = [Text(f"round {view.round}, turn {view.turn}: your move ({kind})", style="bold")]
    if view.revealed:  # what every seat played last (for a row: this turn), in placement order
        played = Text("this turn: " if kind == "row" else "last turn: ")
        for c, seat in view.revealed[-1]:
            played.append(f"{chr(65 + seat)} ")
            played.append_text(card(c, 0))
            played.append("  ")
        out.append(played)
    if view.rows:
        out.append(rows_table(view.rows))
    if kind == "row":
        out.append(Text(f"your card {view.card} is lower than every row's end: take a row (0-3)"))
    hand = Text("your hand: ")
    for c in view.hand:
        hand.append_text(card(c, 0))
        hand.append(" ")
    out.append(hand)
    out.append(Text("heads: " + " · ".join(f"{chr(65 + s)} {h}" for s, h in enumerate(view.scores)), style="dim"))
    return out
