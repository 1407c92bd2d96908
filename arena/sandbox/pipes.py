"""A bot reached through three pipes: the part every sandbox shares.

The local sandbox hands over a child process's pipes, the Docker sandbox named pipes
bind-mounted into the container; either way the referee writes requests to one, reads
answers from another and keeps the third (stderr) as a capped log.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import trio

from arena.sandbox.base import BotGone, StderrLog
from arena.sandbox.framing import DRIP_PAUSE, EndOfStream, PipeLines


class PipedBot:
    """Lines in and out over pipes (see ``arena.sandbox.base.BotProcess``); subclasses
    say how the bot is confined, frozen, measured and stopped."""

    isolation = "unknown"

    def __init__(
        self,
        stdin: trio.lowlevel.FdStream,
        stdout: trio.lowlevel.FdStream,
        stderr: trio.lowlevel.FdStream,
        max_line: int,
        *,
        wait_for_writer: bool = False,
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._stderr = stderr
        self._stdin_fd = stdin.fileno()
        self.output = PipeLines(stdout, max_line, wait_for_writer=wait_for_writer)
        self.stderr = StderrLog()
        self.stderr_reads = 0
        """Reads of its stderr: the referee's work for it."""
        self._stderr_ended = trio.Event()

    async def pump_stderr(self) -> None:
        """Keep the bot's stderr, read at most once per ``DRIP_PAUSE``: a bot that
        dribbles (or floods) its stderr costs the referee at most 100 reads a second,
        while its bytes gather in the pipe (64 KiB: past 6.4 MB/s, it waits)."""
        try:
            while data := await self._stderr.receive_some(65536):
                self.stderr.write(data)
                self.stderr_reads += 1
                await trio.sleep(DRIP_PAUSE)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            self._stderr_ended.set()

    async def last_words(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until the bot's stderr has ended, so that a bot
        that just died has its last lines in the log before its fault is written."""
        with trio.move_on_after(timeout):
            await self._stderr_ended.wait()

    async def send(self, data: bytes, timeout: float, thaw: Callable[[], None] | None = None) -> None:
        try:
            # Fast path: a pipe with room takes the data at once, with no trip through
            # the scheduler and no cancel scope; only a full pipe waits, up to timeout.
            sent = os.write(self._stdin_fd, data)
        except BlockingIOError:
            sent = 0
        except (BrokenPipeError, OSError):
            raise BotGone(await self.gone_reason()) from None
        if thaw is not None:
            thaw()  # before any wait: a frozen bot would never make room
        if sent == len(data):
            return
        with trio.move_on_after(timeout) as scope:
            try:
                await self._stdin.send_all(data[sent:])
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                raise BotGone(await self.gone_reason()) from None
        if scope.cancelled_caught:
            raise BotGone(f"did not read its input for {timeout:g} s")

    async def receive_line(self) -> bytes:
        try:
            return await self.output.receive_line()
        except (EndOfStream, trio.BrokenResourceError, trio.ClosedResourceError):
            raise BotGone(await self.gone_reason()) from None

    def take_stderr(self) -> str:
        self._gather_stderr()
        return self.stderr.take()

    def stderr_tail(self, limit: int = 2000) -> str:
        self._gather_stderr()
        return self.stderr.tail(limit)

    def _gather_stderr(self) -> None:
        """Read what the bot wrote to stderr since the pump's last read (it reads at most
        once per ``DRIP_PAUSE``), so that a game's log or a fault's evidence is current
        when taken: a few reads, that wait for nothing."""
        if self._stderr_ended.is_set():
            return
        for _ in range(4):
            try:
                data = os.read(self._stderr.fileno(), 65536)
            except OSError:  # nothing more now (or the pipe is closed)
                return
            if not data:
                return
            self.stderr.write(data)
            self.stderr_reads += 1

    async def gone_reason(self) -> str:
        raise NotImplementedError

    async def _close_pipes(self) -> None:
        for stream in (self._stdin, self._stdout, self._stderr):
            await stream.aclose()
