"""Bytes to lines, with a length cap, over any Trio receive stream.

Framing is kept apart from decoding: a line that is too long is reported once and the
rest of it is skipped, so one flooding bot costs bounded memory and the next line
starts clean.
"""

from __future__ import annotations

import trio


class LineTooLong(Exception):
    """A line exceeded the cap; ``head`` holds its first bytes as evidence."""

    def __init__(self, limit: int, head: bytes) -> None:
        super().__init__(f"line longer than {limit} bytes")
        self.limit = limit
        self.head = head


class EndOfStream(Exception):
    """The other side closed its output (for a bot: it exited or closed stdout)."""


class LineReader:
    def __init__(self, stream: trio.abc.ReceiveStream, max_line: int) -> None:
        self._stream = stream
        self._max = max_line
        self._buf = bytearray()
        self._scanned = 0
        self._skipping = False
        """True while skipping the tail of a line already reported as too long."""

    async def receive_line(self) -> bytes:
        """The next line without its newline (a trailing ``\\r`` is dropped too)."""
        while True:
            i = self._buf.find(b"\n", self._scanned)
            if i >= 0:
                line = bytes(self._buf[:i])
                del self._buf[: i + 1]
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    continue
                if len(line) > self._max:
                    raise LineTooLong(self._max, line[:200])
                return line[:-1] if line.endswith(b"\r") else line
            self._scanned = len(self._buf)
            if self._scanned > self._max:
                head = bytes(self._buf[:200])
                self._buf.clear()
                self._scanned = 0
                if not self._skipping:
                    self._skipping = True
                    raise LineTooLong(self._max, head)
            data = await self._stream.receive_some(65536)
            if not data:
                raise EndOfStream()
            self._buf += data
