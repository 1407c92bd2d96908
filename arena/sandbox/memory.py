"""Bots in memory: a transport and an inbox with no process, pipe or descriptor.

A ``ScriptedBot`` answers what it is sent as its script says, each write after a delay
on Trio's clock, so under ``trio.testing.MockClock`` a test of time limits runs in no
time and measures to the millisecond: a bot "thinks" exactly as long as its script
says, whatever the load on the machine. Its output goes through the same framing
(``LineBuffer``) and the same budgets (``Budgets``) as a real bot's, so a line over the
cap, half a line, garbage, a flood, silence and a crash all reach the referee as they
would from a process. Scripts are written as python-chess's ``MockTransport`` is: an
``Expectations`` list says which request comes next and what the bot does then.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from arena.bots import Bot
from arena.sandbox.base import BotGone, BotProcess, StderrLog
from arena.sandbox.framing import BufferedLines, EndOfStream, LineBuffer
from arena.sandbox.inbox import LINE_BUDGET, NOTHING, Budgets, Dropped, Received


@dataclass(frozen=True, slots=True)
class Write:
    """Write ``data`` (a line, half of one, garbage: any bytes) to the output, ``after``
    seconds from the message that prompted it."""

    data: bytes
    after: float = 0.0


@dataclass(frozen=True, slots=True)
class Exit:
    """Write ``stderr``, then exit with ``code``, ``after`` seconds from the message."""

    code: int = 1
    after: float = 0.0
    stderr: bytes = b""


Action = Write | Exit
Script = Callable[[dict[str, Any]], Sequence[Action]]
"""What a bot does on reading a request (decoded): nothing at all is silence."""

HELLO = Write(b'{"type":"hello","name":"scripted","version":"1"}\n')
"""The usual answer to hello: accepted at once."""


def answer_line(request: Mapping[str, Any], value: Any) -> bytes:
    """The line that answers ``request`` with ``value``."""
    return msgspec.json.encode({"type": "answer", "id": request["id"], "answer": value}) + b"\n"


def first_legal(after: float = 0.0) -> Script:
    """Answers each request with its first legal answer, ``after`` seconds late."""
    return lambda request: [Write(answer_line(request, request["legal"][0]), after)]


def silent(request: dict[str, Any]) -> Sequence[Action]:
    """Never answers."""
    return ()


class Expectations:
    """A script as python-chess's ``MockTransport`` writes one: each request must be of
    the kind expected next, and that expectation's script answers it. What came
    unexpected, or never came, is told by ``assert_done``."""

    def __init__(self) -> None:
        self._queue: deque[tuple[str, Script]] = deque()
        self.mistakes: list[str] = []

    def expect(self, kind: str, then: Script) -> Expectations:
        """The next request is of ``kind``; ``then`` says what the bot does."""
        self._queue.append((kind, then))
        return self

    def __call__(self, request: dict[str, Any]) -> Sequence[Action]:
        if not self._queue:
            self.mistakes.append(f"unexpected {request['kind']} request {request['id']}")
            return ()
        kind, then = self._queue.popleft()
        if request["kind"] != kind:
            self.mistakes.append(f"expected a {kind} request, got {request['kind']} request {request['id']}")
        return then(request)

    def assert_done(self) -> None:
        left = [f"a {kind} request never came" for kind, _ in self._queue]
        if self.mistakes or left:
            raise AssertionError("; ".join(self.mistakes + left))


class MemoryLines(BufferedLines):
    """A ``LineSource`` written in memory: what a scripted bot writes is cut into lines
    by the same ``LineBuffer`` as a pipe's bytes; whoever listens is told at once."""

    def __init__(self, max_line: int) -> None:
        super().__init__(LineBuffer(max_line))
        self.ended = False
        self._listener: Callable[[], None] | None = None
        self._changed = trio.Event()

    def write(self, data: bytes) -> None:
        if not self.ended:
            self.buffer.feed(data)
            self._tell()

    def end(self) -> None:
        if not self.ended:
            self.ended = True
            self._tell()

    def listen(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` on every write and at the end (an inbox); None stops it."""
        self._listener = listener

    def _tell(self) -> None:
        self._changed.set()
        if self._listener is not None:
            self._listener()

    async def more(self, waited: int) -> bool:
        """Wait for the bot's next write (False: it has ended)."""
        if self.ended:
            return False
        self._changed = trio.Event()
        await self._changed.wait()
        return True


class MemoryInbox(Budgets):
    """The ``LineInbox`` of bots in memory: each write is a read, cut and stamped with
    Trio's clock the moment it is made, under the same budgets as the epoll inbox's (a
    dribbling bot's writes wait, unread, until its pause is over)."""

    def __init__(self) -> None:
        super().__init__()
        self._bots: dict[int, tuple[BotProcess, MemoryLines]] = {}
        self._muted: set[int] = set()
        self._unread: set[int] = set()
        """Muted bots that wrote since they were muted (a pipe that would be readable)."""
        self._wake = trio.Event()

    def add(self, key: int, process: BotProcess) -> None:
        lines = process.output
        if not isinstance(lines, MemoryLines):
            raise TypeError(f"a memory inbox reads bots in memory, not {type(lines).__name__}")
        self._bots[key] = (process, lines)
        self._budget[key] = LINE_BUDGET
        lines.listen(lambda: self._arrived(key))
        self._arrived(key, read=False)  # lines written before, after the handshake

    def _arrived(self, key: int, *, read: bool = True) -> None:
        """The bot wrote (``read``: as a pipe's reader would see it) or ended."""
        if key not in self._bots:
            return
        if key in self._muted:
            self._unread.add(key)
            return
        process, lines = self._bots[key]
        now = trio.current_time()
        if lines.ended or not read:
            if self._cut(key, process, lines.buffer, now):
                self._muted.add(key)
            elif lines.ended:
                self._end(key, now)
        elif self._read(key, process, lines.buffer, now):
            self._muted.add(key)
        self._wake.set()

    def _end(self, key: int, now: float) -> None:
        process, lines = self._bots.pop(key)
        lines.listen(None)
        self._ended(key, process, lines.buffer, now)

    def discard(self, key: int) -> None:
        if key in self._bots:
            self._bots.pop(key)[1].listen(None)
        self._muted.discard(key)
        self._unread.discard(key)
        self._forget(key)

    def arm(self, key: int) -> Dropped:
        count, last = self._drop_read(key)
        if key in self._bots:
            lines = self._bots[key][1]
            dropped, head = lines.buffer.drop_lines()
            if dropped:
                count, last = count + dropped, head
            self._muted.discard(key)
            self._unread.discard(key)
            if lines.ended:
                self._end(key, trio.current_time())
        return Dropped(count, last) if count else NOTHING

    async def receive(self) -> Received:
        while not self._ready:
            self._wake = trio.Event()
            with trio.move_on_at(self._next_release()):
                await self._wake.wait()
            self.wakeups += 1
            for key in self._released(trio.current_time()):
                self._muted.discard(key)
                if key in self._unread:
                    self._unread.discard(key)
                    self._arrived(key)
        return self._ready.popleft()

    def close(self) -> None:
        for _, lines in self._bots.values():
            lines.listen(None)
        self._bots.clear()


class ScriptedBot:
    """A ``BotProcess`` in memory. It answers hello with ``hello`` (by default at once,
    accepted), each request with what ``script`` says, and exits with code 0 on bye or
    when stopped. Frozen, it writes nothing until thawed, as a frozen process would."""

    isolation = "scripted"

    def __init__(
        self,
        nursery: trio.Nursery,
        script: Script,
        *,
        hello: Sequence[Action] = (HELLO,),
        max_line: int = 1 << 16,
    ) -> None:
        self.output = MemoryLines(max_line)
        self.received: list[dict[str, Any]] = []
        """Every message it was sent, decoded, in order."""
        self.frozen = False
        self.held = 0
        """Writes and exits a freeze held back until the next thaw."""
        self.stderr = StderrLog()
        self._nursery = nursery
        self._script = script
        self._hello = hello
        self._code: int | None = None
        self._thawed = trio.Event()

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [message for message in self.received if message["type"] == "request"]

    async def send(self, data: bytes, timeout: float, thaw: Callable[[], None] | None = None) -> None:
        if self._code is not None:
            raise BotGone(await self.gone_reason())
        now = trio.current_time()
        for line in data.splitlines():
            message: dict[str, Any] = msgspec.json.decode(line)
            self.received.append(message)
            if message["type"] == "hello":
                actions: Sequence[Action] = self._hello
            elif message["type"] == "request":
                actions = self._script(message)
            elif message["type"] == "bye":
                actions = (Exit(0),)
            else:
                continue
            if actions:
                self._nursery.start_soon(self._act, now, actions)
        if thaw is not None:
            thaw()

    async def _act(self, sent: float, actions: Sequence[Action]) -> None:
        """Do ``actions`` in order, each when its time has come and the bot is thawed."""
        for action in actions:
            await trio.sleep_until(sent + action.after)
            if self.frozen:
                self.held += 1
                while self.frozen:
                    await self._thawed.wait()
            if self._code is not None:
                return
            match action:
                case Write(data):
                    self.output.write(data)
                case Exit(code, _, stderr):
                    self.stderr.write(stderr)
                    self._exit(code)

    def _exit(self, code: int) -> None:
        self._code = code
        self.output.end()

    async def receive_line(self) -> bytes:
        try:
            return await self.output.receive_line()
        except EndOfStream:
            raise BotGone(await self.gone_reason()) from None

    def take_stderr(self) -> str:
        return self.stderr.take()

    def stderr_tail(self, limit: int = 2000) -> str:
        return self.stderr.tail(limit)

    def cpu_seconds(self) -> float:
        return 0.0

    async def gone_reason(self) -> str:
        return self.exit_reason() or "closed its output"

    def exit_reason(self) -> str | None:
        return None if self._code is None else f"exited with code {self._code}"

    def freeze(self) -> None:
        if not self.frozen:
            self.frozen = True
            self._thawed = trio.Event()

    def thaw(self) -> None:
        self.frozen = False
        self._thawed.set()

    async def stop(self) -> None:
        """Its input closed: it exits at once, with code 0."""
        self.thaw()
        if self._code is None:
            self._exit(0)


class ScriptedSandbox:
    """Starts each bot, by name, as a ``ScriptedBot`` with its script (and its hello
    actions, if ``hellos`` has some for it); ``started`` holds every start, in order."""

    isolation = "scripted"

    def __init__(self, scripts: Mapping[str, Script], hellos: Mapping[str, Sequence[Action]] | None = None) -> None:
        self.scripts = scripts
        self.hellos = hellos or {}
        self.started: dict[str, list[ScriptedBot]] = {}

    def isolation_for(self, bot: Bot) -> str:
        """The same for every bot: ``isolation``."""
        return self.isolation

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        """Nothing to build: a script needs no folder."""

    def sdk_fix(self) -> str:
        """No bot runs Python here: the script of the failing bot is to blame."""
        return "fix the bot's script (its hello actions)"

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> ScriptedBot:
        process = ScriptedBot(
            nursery, self.scripts[bot.name], hello=self.hellos.get(bot.name, (HELLO,)), max_line=max_line
        )
        self.started.setdefault(bot.name, []).append(process)
        return process
