"""One bot session, as the referee and ``arena bot check`` both speak it.

The hello exchange, the lines queued for a bot's next write, the request and the
judging of a line back are written once, here. What to do with a mistake is the
caller's policy: the referee is lenient (the default move, three faults and the seat is
out), the checker strict (the first mistake ends the scenario, reported whole). So
``judge`` only classifies a line, as typed data with no I/O, and each policy words the
outcome its own way; the referee's words travel in the verdict, for its replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import msgspec
import trio

from arena.sandbox.base import BotGone, BotProcess
from arena.sandbox.framing import LineTooLong
from arena.sandbox.inbox import Flooded
from protocol.messages import Answer, Events, Hello, HelloReply, Request, decode_from_bot, encode

Cause = Literal[
    "unasked",
    "stale id",
    "not an answer",
    "too long",
    "flooded",
    "undecodable",
    "unjudgeable",
    "illegal",
    "not a hello",
    "exited",
    "timeout",
]
"""What exactly went wrong with a line, for a policy that words it its own way."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A request awaiting its answer: the id to echo, its kind, the answers it allows."""

    request_id: int
    kind: str
    legal: list[Any]

    def request(self, view: Any, move_ms: int, bank_ms: int) -> bytes:
        """The request line that asks for this answer."""
        return encode(Request(self.request_id, self.kind, view, self.legal, move_ms, bank_ms))


@dataclass(frozen=True, slots=True)
class Answered:
    """A legal answer to the pending request."""

    answer: Any


@dataclass(frozen=True, slots=True)
class Faulted:
    """A mistake that settles the pending request (or the hello): ``kind`` and
    ``message`` as the replay records them, ``line`` the evidence."""

    kind: str
    message: str
    line: bytes | None
    cause: Cause
    detail: str = ""
    """The decoder's or the framing's own words; for an illegal answer, it as JSON."""
    answer: Any = None
    """The illegal answer itself."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """A line that answers nothing pending: logged, never judged as an answer."""

    line: bytes
    reason: str
    cause: Cause
    answer_id: int | None = None
    """The id an answer with a stale id carried."""


@dataclass(frozen=True, slots=True)
class Greeted:
    """The hello answer, decoded (whether it accepts is the caller's to judge)."""

    reply: HelloReply
    line: bytes


Verdict = Answered | Faulted | Dropped
Unframed = LineTooLong | Flooded
"""What the framing hands over instead of a line: the head of a line over the cap, or
the last line read before a flood was cut off."""

NOT_PENDING = "sent while no request was pending"


def judge(line: bytes | Unframed, pending: Pending | None) -> Verdict:
    """What ``line`` means while ``pending`` waits (None: no request is pending).

    Whatever the line holds, it is the bot's doing: every way it can fail to decode or
    to be judged is a fault of that bot, never an exception here."""
    if isinstance(line, LineTooLong | Flooded):
        evidence = line.head if isinstance(line, LineTooLong) else line.line
        cause: Cause = "too long" if isinstance(line, LineTooLong) else "flooded"
        if pending is None:
            return Dropped(evidence, f"{line}, {NOT_PENDING}", "unasked")
        more = "; its output is ignored until its next request" if isinstance(line, Flooded) else ""
        return Faulted("malformed", f"{line}{more}", evidence, cause, str(line))
    if pending is None:
        return Dropped(line, NOT_PENDING, "unasked")
    try:
        message = decode_from_bot(line)
        if isinstance(message, Answer) and message.id == pending.request_id:
            if is_legal(message.answer, pending.legal):
                return Answered(message.answer)
            shown = _json(message.answer)
            illegal = f"illegal {pending.kind} answer {shown}: legal answers are {_json(pending.legal)}"
            return Faulted("illegal", illegal, line, "illegal", shown, message.answer)
    except msgspec.DecodeError as exc:
        return Faulted("malformed", f"not a valid answer: {exc}", line, "undecodable", str(exc))
    except Exception as exc:  # a value that cannot be judged is the bot's doing too
        return Faulted("malformed", f"answer cannot be judged ({type(exc).__name__})", line, "unjudgeable")
    waiting = f"(waiting for id {pending.request_id})"
    if isinstance(message, Answer):
        return Dropped(line, f"stale id {waiting}", "stale id", message.id)
    return Dropped(line, f"not an answer {waiting}", "not an answer")


def judge_hello(line: bytes | LineTooLong) -> Greeted | Faulted:
    """What the first line of a session means: the hello answer, or a fault."""
    if isinstance(line, LineTooLong):
        return Faulted("malformed", f"hello answer {line}", line.head, "too long", str(line))
    try:
        reply = decode_from_bot(line)
    except msgspec.DecodeError as exc:
        return Faulted("malformed", f"bad hello answer: {exc}", line, "undecodable", str(exc))
    if not isinstance(reply, HelloReply):
        return Faulted("malformed", "first answer must be a hello", line, "not a hello")
    return Greeted(reply, line)


async def exchange(
    process: BotProcess, data: bytes, deadline: float, send_timeout: float
) -> bytes | LineTooLong | Faulted:
    """Write ``data`` and read the one line back by ``deadline`` (Trio's clock, so a
    virtual clock drives it in tests): the line, a line over the cap, or the bot's exit
    or silence as a fault carrying what it wrote without a newline."""
    with trio.move_on_at(deadline):
        try:
            await process.send(data, send_timeout)
            return await process.receive_line()
        except BotGone as exc:
            return Faulted("crash", f"exited: {exc}", process.output.unended() or None, "exited", str(exc))
        except LineTooLong as exc:
            return exc
    return Faulted("timeout", "no answer in time", process.output.unended() or None, "timeout")


async def greet(process: BotProcess, hello: Hello, deadline: float) -> Greeted | Faulted:
    """Send ``hello`` and judge the first line back, by ``deadline``."""
    limit_ms = hello.limits.startup_ms
    got = await exchange(process, encode(hello), deadline, limit_ms / 1000)
    if not isinstance(got, Faulted):
        return judge_hello(got)
    if got.cause == "exited":
        return replace(got, message=f"exited during start-up: {got.detail}")
    return replace(got, message=f"no hello answer within {limit_ms} ms of start")


class Outbox:
    """Lines that wait for the bot's next write: a new game and events ride with the
    next request (or game over), so a bot is woken once per decision, not twice."""

    def __init__(self) -> None:
        self._lines: list[bytes] = []

    def queue(self, data: bytes) -> None:
        self._lines.append(data)

    def events(self, seen: list[Any]) -> None:
        """Queue what a seat may know of a batch of events (nothing if it may know none)."""
        if seen:
            self._lines.append(encode(Events(seen)))

    def take(self, data: bytes) -> bytes:
        """Everything queued, then ``data``: one write."""
        if not self._lines:
            return data
        joined = b"".join(self._lines) + data
        self._lines = []
        return joined


def seen_by(observe: Callable[[Any, int], Any | None], events: list[Any], seat: int) -> list[Any]:
    """What ``seat`` may know of ``events``, in order (``observe`` is the game's)."""
    return [o for o in (observe(e, seat) for e in events) if o is not None]


def is_legal(answer: Any, legal: list[Any]) -> bool:
    """Membership with JSON types kept apart: ``true`` and ``1.0`` are not the number 1.

    Never raises: an answer that cannot even be encoded is in no list of legal answers."""
    if type(answer) is int:
        try:
            first = legal.index(answer)  # at C speed; but True and 1.0 equal 1 too
        except ValueError:
            return False
        return type(legal[first]) is int or any(type(x) is int and x == answer for x in legal[first + 1 :])
    try:
        encoded = _json(answer)
    except Exception:
        return False
    return any(_json(x) == encoded for x in legal)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()
