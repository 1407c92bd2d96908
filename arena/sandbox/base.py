"""The transport interface: what the referee may do with a running bot.

The referee never learns which sandbox a seat uses; a local process and a Docker
container both look like this.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

import msgspec
import trio

from arena.bots import Bot


class BotGone(Exception):
    """The bot can no longer be talked to: it exited, or closed its pipes."""


class StartError(Exception):
    """The bot could not be started at all; the message says why and how to fix it."""


class ImageError(Exception):
    """An image that cannot be built or used, with what to do about it (here, not in
    ``arena.sandbox.images``, so that catching it loads no Docker SDK)."""


class ResourceLimits(msgspec.Struct, frozen=True):
    """What one bot may use. Locally these are rlimits; in Docker, the container's caps."""

    memory_mb: int = 1024
    """Memory without swap: the bot's cgroup (local) or its container's."""
    cpu_seconds: int = 3600
    """CPU time for the bot's whole session, a guard against runaway bots."""
    cpus: float = 1.0
    """CPU share of a container (Docker only)."""
    processes: int = 64
    """Processes and threads of one bot (its cgroup, or its own user's count locally)."""
    file_mb: int = 16
    tmp_mb: int = 64
    """Size of the bot's private /tmp (a container's, or bubblewrap's)."""


class LineSource(Protocol):
    """A bot's output as lines: bytes cut at newlines, each line capped (``framing``).

    It knows bytes only, not the process behind them: the end of the output is an
    ``EndOfStream``, and why the bot went is the transport's to say. One reader at a
    time: ``receive_line`` for the handshake, then an inbox reads it for the match.
    """

    async def receive_line(self) -> bytes:
        """The next line; ``LineTooLong`` for one over the cap, ``EndOfStream`` at the end."""
        ...

    def unended(self) -> bytes:
        """What the bot wrote after its last newline (its last words), at most 200 bytes."""
        ...


class Transport(Protocol):
    """A started bot as bytes in and control: what the referee may do to it, whatever
    confines it (a local process, a container, a scripted bot in memory)."""

    isolation: str
    """What confines this bot, as written into replays."""

    async def send(self, data: bytes, timeout: float, thaw: Callable[[], None] | None = None) -> None:
        """Write ``data``; ``BotGone`` if the bot has gone or takes none of it in ``timeout`` s.

        ``thaw`` (for a frozen bot) is called once ``data`` is in its pipe, or before
        waiting for the bot to read and make room: it wakes once, to its request."""
        ...

    def take_stderr(self) -> str:
        """Stderr (capped) received since the last call."""
        ...

    def stderr_tail(self, limit: int = 2000) -> str:
        """The last ``limit`` characters of its stderr, for a fault's evidence."""
        ...

    def cpu_seconds(self) -> float:
        """CPU time of everything the bot runs, so far."""
        ...

    async def gone_reason(self) -> str:
        """Why the output ended: waits a moment for the exit status."""
        ...

    def exit_reason(self) -> str | None:
        """None while running; else a short reason ("exit code 1", "killed by SIGKILL")."""
        ...

    def freeze(self) -> None:
        """Stop the bot from running until ``thaw`` (fair time: no thinking on others' turns)."""
        ...

    def thaw(self) -> None:
        """Let a frozen bot run again; it runs when this returns."""
        ...

    async def stop(self) -> None:
        """Tear it down, politely then firmly, also when cancelled."""
        ...


class BotProcess(Transport, Protocol):
    """A started bot: its transport and the line source of its output. Pipes feed the
    epoll ``Inbox``; a bot in memory (``arena.sandbox.memory``) feeds a ``MemoryInbox``."""

    @property
    def output(self) -> LineSource:
        """Its output, which an inbox reads once the handshake is done."""
        ...

    async def receive_line(self) -> bytes:
        """The next line of ``output`` (the handshake, a probe), with its end turned into
        ``BotGone`` saying why the bot went."""
        ...


class Sandbox(Protocol):
    """Where bots run: prepares a bot's folder or image, then starts it as a ``BotProcess``.

    Docker (``docker.DockerSandbox``), bubblewrap or plain processes (``local.LocalSandbox``)
    and scripted bots in memory (``memory.ScriptedSandbox``) all offer exactly this.
    """

    isolation: str
    """What protects the machine from the bots: shown to the user and in every replay."""

    def isolation_for(self, bot: Bot) -> str:
        """What confines ``bot`` in particular, as its seats' replays will say."""
        ...

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        """Build what ``bot`` lacks (a sealed copy, an image), blocking, before any clock runs."""
        ...

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> BotProcess:
        """Start ``bot`` (prepared if need be), its helper tasks in ``nursery``; ``StartError`` if it cannot."""
        ...

    def sdk_fix(self) -> str:
        """What the user should do when a Python bot on the SDK cannot start here."""
        ...


class StderrLog:
    """A bot's stderr, kept within ``cap`` bytes: the tail of the session, and what came
    since the last ``take`` (for the replay of the game being played)."""

    def __init__(self, cap: int = 64 * 1024) -> None:
        self._cap = cap
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._fresh = bytearray()
        self._fresh_dropped = 0

    def write(self, data: bytes | bytearray) -> None:
        self._tail.append(bytes(data))
        self._tail_size += len(data)
        while self._tail_size - len(self._tail[0]) >= self._cap:
            self._tail_size -= len(self._tail.popleft())
        room = self._cap - len(self._fresh)
        self._fresh += data[:room]
        self._fresh_dropped += max(0, len(data) - room)

    def take(self) -> str:
        text = self._fresh.decode("utf-8", "replace")
        if self._fresh_dropped:
            text += f"\n[... {self._fresh_dropped} more bytes of stderr dropped]"
        self._fresh = bytearray()
        self._fresh_dropped = 0
        return text

    def tail(self, limit: int = 2000) -> str:
        return b"".join(self._tail)[-limit:].decode("utf-8", "replace")
