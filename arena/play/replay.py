"""Replays: one JSON-lines log per game, enough to re-simulate and audit it.

A replay is a header, then the game's events and the decisions that caused them, in
order, then an end line with standings and each seat's status. ``verify`` plays the
logged decisions through the rules again and stops at the first line the rules do not
reproduce, so a tampered or corrupted log is caught (docs/replay.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from arena.games import IllegalAnswer, SettingsError
from arena.games.registry import get_game

FORMAT = 1


class ReplayError(ValueError):
    """A replay that cannot be read or does not agree with the rules."""


class SeatInfo(msgspec.Struct, frozen=True):
    name: str
    version: str
    isolation: str


class Fault(msgspec.Struct, frozen=True):
    """One thing a bot did wrong, with the evidence."""

    kind: str
    """``timeout``, ``crash``, ``malformed`` or ``illegal``."""
    message: str
    line: str | None = None
    """The offending line the bot sent, if any (truncated)."""
    stderr: str | None = None
    """The tail of the bot's stderr when it happened."""
    round: int | None = None
    """The round (from 1) of the decision it happened in; 0 for a fault of the start-up
    (a bot that did not start); None where unknown (a replay made before it was logged,
    a game whose state counts no rounds)."""
    turn: int | None = None
    """The turn of that round (from 1), as the game counts them (0 at start-up)."""

    @property
    def where(self) -> str:
        """``round 2, turn 4``; ``at start-up``; empty where it is not known."""
        if self.round is None:
            return ""
        if self.round == 0:
            return "at start-up"
        return f"round {self.round}" + ("" if self.turn is None else f", turn {self.turn}")


class SeatStatus(msgspec.Struct, frozen=True):
    status: str
    """``ok``; ``faulty`` (faults, but played on); ``disqualified`` (ranks last)."""
    faults: list[Fault] = []


class Header(msgspec.Struct, tag="header", frozen=True):
    format: int
    game: str
    settings: dict[str, Any]
    seed: int
    players: int
    seats: list[SeatInfo]
    limits: dict[str, int]
    game_no: int = 0
    started: str = ""


class EventsLine(msgspec.Struct, tag="events", frozen=True):
    events: list[Any]


class DecisionLine(msgspec.Struct, tag="decision", frozen=True, omit_defaults=True):
    """The answers to one decision, in the order of ``seats``, and what each cost."""

    kind: str
    seats: list[int]
    answers: list[Any]
    wall_ms: list[float]
    cpu_ms: list[float]
    defaulted: list[bool]
    """True where the referee played the documented default instead of the bot."""
    bank_ms: list[int] = []
    """Each seat's time bank left after its answer (ms); empty in a replay made before
    it was logged, or by a simulation (no clock)."""


class FaultLine(msgspec.Struct, tag="fault", frozen=True):
    seat: int
    fault: Fault


class DroppedLine(msgspec.Struct, tag="dropped", frozen=True):
    """A line a bot sent that answered nothing current (a stale id, say): logged, ignored."""

    seat: int
    line: str
    reason: str


class End(msgspec.Struct, tag="end", frozen=True):
    scores: list[int]
    ranks: list[int]
    """Final 1-based ranks: the rules' ranks, with disqualified seats moved last."""
    statuses: list[SeatStatus]
    stderr: list[str]
    """Each seat's stderr during this game (capped)."""


Line = Header | EventsLine | DecisionLine | FaultLine | DroppedLine | End

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Line)


def dumps(lines: Iterable[Line]) -> bytes:
    return b"".join(_encoder.encode(line) + b"\n" for line in lines)


def write(path: str | Path, lines: Iterable[Line]) -> None:
    """Write a replay atomically: a reader never sees half a file."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(dumps(lines))
    tmp.replace(target)


def read(path: str | Path) -> list[Line]:
    """All lines of a replay file, or ``ReplayError`` naming the file and line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read replay: {exc.strerror}") from None
    return loads(data, str(path))


def decode_line(raw: bytes) -> Line:
    """One line of a replay (``msgspec.DecodeError``: not one)."""
    return _decoder.decode(raw)


def loads(data: bytes, name: str = "replay") -> list[Line]:
    lines: list[Line] = []
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            lines.append(_decoder.decode(raw))
        except msgspec.DecodeError as exc:
            raise ReplayError(f"{name}:{number}: not a replay line: {exc}") from None
    if not lines or not isinstance(lines[0], Header):
        raise ReplayError(f"{name}: not a replay (no header line)")
    if lines[0].format != FORMAT:
        raise ReplayError(f"{name}: replay format {lines[0].format} (this arena reads {FORMAT})")
    return lines


def round_and_turn(state: Any) -> tuple[int | None, int | None]:
    """The round and turn a game's state is at, when its state counts them (``round``
    and ``turn``, as 6 nimmt! and Sixes do); else None."""
    found = [getattr(state, name, None) for name in ("round", "turn")]
    round_no, turn = (value if isinstance(value, int) and not isinstance(value, bool) else None for value in found)
    return round_no, turn if round_no is not None else None


def final_ranks(ranks: list[int], disqualified: list[bool]) -> list[int]:
    """The rules' ranks with disqualified seats after all others (ties still share)."""
    keys = [(dq, rank) for dq, rank in zip(disqualified, ranks, strict=True)]
    return [1 + sum(1 for other in keys if other < mine) for mine in keys]


class Step(msgspec.Struct, frozen=True):
    """One moment of a verified replay: the state after ``events``."""

    state: Any
    decision: DecisionLine | None
    events: list[Any]


def verify(lines: Iterable[Line], name: str = "replay") -> Iterator[Step]:
    """Re-simulate a replay through the rules, yielding each step; ``ReplayError`` at the
    first line the rules do not reproduce. ``lines`` may still be arriving (a game being
    played): each step is yielded as soon as its events are read."""
    lines = iter(lines)
    header = next(lines)
    assert isinstance(header, Header)
    try:
        record = get_game(header.game)
        game = record.rules
        settings = game.parse_settings(header.settings, header.players)
    except SettingsError as exc:
        raise ReplayError(f"{name}: {exc}") from None
    event_decoder: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(list[record.event])  # type: ignore[name-defined]
    state, expected = game.start(settings, header.players, header.seed)
    decision: DecisionLine | None = None
    ended = False
    for number, line in enumerate(lines, 2):
        where = f"{name}:{number}"
        match line:
            case EventsLine(events=raw_events):
                logged = event_decoder.decode(_encoder.encode(raw_events))
                if logged != expected:
                    raise ReplayError(f"{where}: events differ from the rules: {_diff(logged, expected)}")
                yield Step(state, decision, logged)
                expected = []
            case DecisionLine():
                if expected:
                    raise ReplayError(f"{where}: a decision where events were due")
                pending = game.decision(state)
                if pending is None or list(pending.seats) != line.seats or pending.kind != line.kind:
                    raise ReplayError(f"{where}: the rules do not ask {line.kind} of seats {line.seats} here")
                answers = dict(zip(line.seats, line.answers, strict=True))
                try:
                    state, expected = game.apply(state, answers)
                except IllegalAnswer as exc:
                    raise ReplayError(f"{where}: illegal answer in the log: {exc}") from None
                decision = line
            case End():
                if expected:
                    raise ReplayError(f"{where}: the log leaves out events the rules produce: {_short(expected[0])}")
                outcome = game.outcome(state)
                if outcome is None:
                    raise ReplayError(f"{where}: the log ends before the game does")
                disqualified = [s.status == "disqualified" for s in line.statuses]
                if line.scores != outcome.scores or line.ranks != final_ranks(outcome.ranks, disqualified):
                    raise ReplayError(f"{where}: the standings differ from the rules' {outcome.scores}")
                ended = True
            case _:
                pass
    if not ended:
        raise ReplayError(f"{name}: the replay has no end line (the game was cut short)")


def _diff(logged: list[Any], expected: list[Any]) -> str:
    for a, b in zip(logged, expected, strict=False):
        if a != b:
            return f"logged {_short(a)}, rules say {_short(b)}"
    return f"logged {len(logged)} events, rules say {len(expected)}"


def _short(value: Any) -> str:
    text = _encoder.encode(value).decode()
    return text if len(text) < 160 else text[:157] + "..."
