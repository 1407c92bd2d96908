"""Bytes to lines, with a length cap.

Framing is kept apart from decoding: a line that is too long is reported once and the
rest of it is skipped, so one flooding bot costs bounded memory and the next line
starts clean. ``LineBuffer`` does the cutting on bytes pushed into it; ``BufferedLines``
takes lines from one, whatever brings its bytes; ``LineReader`` pulls them from a Trio
stream; ``PipeLines`` is a bot's output pipe as a line source,
which the epoll inbox reads through its descriptor.

A bot that dribbles (writes a line a byte at a time, each byte a wake-up and a read of
the referee's) is bounded in reads, not bytes: past ``DRIP_READS`` reads that end no
line, its output is read at most once every ``DRIP_PAUSE`` seconds.
"""

from __future__ import annotations

import trio

DRIP_READS = 32
"""Reads of a bot's output that bring no complete line, made at once, per request (and
per line read here): enough for a line at the cap written in 2 KiB pieces."""
DRIP_PAUSE = 0.01
"""Past ``DRIP_READS``, the pause before the next read of a bot's output (seconds): a
dribble then costs the referee a read and a timer per pause (about 100 us, against
15 us for every byte unbounded), whatever its bytes, and its line is read at most this
late."""


class LineTooLong(Exception):
    """A line exceeded the cap; ``head`` holds its first bytes as evidence."""

    def __init__(self, limit: int, head: bytes) -> None:
        super().__init__(f"line longer than {limit} bytes")
        self.limit = limit
        self.head = head


class EndOfStream(Exception):
    """The other side closed its output (for a bot: it exited or closed stdout).

    ``tail`` holds what it wrote after its last newline (its last words), if anything.
    """

    def __init__(self, tail: bytes = b"") -> None:
        super().__init__("end of output")
        self.tail = tail


class LineBuffer:
    def __init__(self, max_line: int) -> None:
        self._max = max_line
        self._buf = bytearray()
        self._scanned = 0
        self._skipping = False
        """True while skipping the tail of a line already reported as too long."""

    def feed(self, data: bytes | bytearray) -> None:
        self._buf += data

    def next_line(self) -> bytes | LineTooLong | None:
        """The next complete line (without ``\\n`` or ``\\r\\n``), a ``LineTooLong``, or
        None until more bytes are fed."""
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
                    return LineTooLong(self._max, line[:200])
                return line[:-1] if line.endswith(b"\r") else line
            self._scanned = len(self._buf)
            if self._scanned > self._max:
                head = bytes(self._buf[:200])
                self._buf.clear()
                self._scanned = 0
                if not self._skipping:
                    self._skipping = True
                    return LineTooLong(self._max, head)
            return None

    def rest(self) -> bytes:
        """The start of a line not yet ended (empty while skipping a line too long)."""
        return b"" if self._skipping else bytes(self._buf[:200])

    def drop_lines(self) -> tuple[int, bytes]:
        """Drop every complete line held, at once (lines nobody asked for): how many,
        and the head of the last one. The start of a line not yet ended is kept."""
        end = self._buf.rfind(b"\n")
        count, head = 0, b""
        if end >= 0:
            count = self._buf.count(b"\n", 0, end + 1)
            last = self._buf.rfind(b"\n", 0, end) + 1
            if count > 1 or not self._skipping:
                head = bytes(self._buf[last : min(end, last + 200)]).removesuffix(b"\r")
            del self._buf[: end + 1]
            self._scanned = 0
            self._skipping = False
        if len(self._buf) > self._max:  # a line too long, nobody asked for: skip it unreported
            self._buf.clear()
            self._scanned = 0
            self._skipping = True
        return count, head


class BufferedLines:
    """Lines cut by a ``LineBuffer`` from bytes however they come (a stream, a pipe, a bot
    in memory): one way to take a line, a line too long, or the end, for every source."""

    def __init__(self, buffer: LineBuffer) -> None:
        self.buffer = buffer

    async def more(self, waited: int) -> bool:
        """Feed the buffer what comes next (``waited``: times already asked for this line);
        False once the output has ended."""
        raise NotImplementedError

    async def receive_line(self) -> bytes:
        waited = 0
        while True:
            item = self.buffer.next_line()
            if isinstance(item, LineTooLong):
                raise item
            if item is not None:
                return item
            if not await self.more(waited):
                raise EndOfStream(self.buffer.rest())
            waited += 1

    def unended(self) -> bytes:
        """The start of a line not yet ended: a bot's last words, if it stops here."""
        return self.buffer.rest()


class LineReader(BufferedLines):
    """Lines pulled from a Trio stream through a ``LineBuffer``."""

    def __init__(self, stream: trio.abc.ReceiveStream, buffer: LineBuffer) -> None:
        super().__init__(buffer)
        self._stream = stream
        self.reads = 0
        """Reads of the stream: the referee's work for the lines read here."""

    async def more(self, waited: int) -> bool:
        if waited >= DRIP_READS:
            await trio.sleep(DRIP_PAUSE)  # a dribble: let its bytes gather
        data = await self._stream.receive_some(65536)
        self.reads += 1
        if not data:
            return False
        self.buffer.feed(data)
        return True


class PipeLines(LineReader):
    """A bot's output pipe as a line source (``arena.sandbox.base.LineSource``): lines
    one at a time for the handshake, then ``fd`` and ``buffer`` for the epoll inbox."""

    def __init__(self, stream: trio.lowlevel.FdStream, max_line: int, *, wait_for_writer: bool = False) -> None:
        super().__init__(stream, LineBuffer(max_line))
        self.fd = stream.fileno()
        self._wait_for_writer = wait_for_writer
        """A named pipe reads as ended until its writer has opened it: wait for the first
        bytes (or the writer's exit) before the first read."""

    async def receive_line(self) -> bytes:
        if self._wait_for_writer:
            await trio.lowlevel.wait_readable(self.fd)
            self._wait_for_writer = False
        return await super().receive_line()
