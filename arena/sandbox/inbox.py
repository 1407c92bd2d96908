"""Every bot's output, read by one task.

The bots' output descriptors sit in a private epoll set, and Trio waits on that set's
own descriptor: one wake-up reads whatever every ready bot has written. Compared with a
reader task per bot this halves the task switches per answer, which is most of the
referee's cost when bots answer in microseconds. A timerfd in the same set wakes that
wait at a decision's deadline (``receive_by``), so a decision costs no cancel scope.

What a bot writes is bounded three times over: ``arm`` drops everything it wrote before
its next request (unread, at C speed); after ``LINE_BUDGET`` lines since then it is no
longer read until that request (``Flooded``), so a flood costs the referee a fixed
amount of work per request however many lines it holds; and after ``DRIP_READS`` reads
since then that ended no line, it is read at most once every ``DRIP_PAUSE`` (it is
*held*), so a line dribbled a byte at a time costs a hundred reads a second at most,
not one per byte. Only the dribbler's own line is read late (by at most the pause):
the other bots are read as before, in the same wake-ups.
"""

from __future__ import annotations

import ctypes
import math
import os
import select
from collections import Counter, deque
from typing import NamedTuple, Protocol

import trio

from arena.sandbox.base import BotProcess
from arena.sandbox.framing import DRIP_PAUSE, DRIP_READS, EndOfStream, LineBuffer, LineTooLong, PipeLines

LINE_BUDGET = 100
"""Lines a bot may write between two of its requests (one answers; the rest answer
nothing). The next one stops the reading of its output until its next request."""
ARM_READS = 16
"""Reads of up to 64 KiB that ``arm`` makes to empty a bot's output: 1 MiB, the most a
pipe can hold, so a frozen bot's output is always emptied."""


class Flooded(Exception):
    """The bot wrote more than ``LINE_BUDGET`` lines since its last request; its output
    is ignored until the next one. ``line`` is the last line read, as evidence."""

    def __init__(self, limit: int, line: bytes) -> None:
        super().__init__(f"flooded its output: more than {limit} lines since its last request")
        self.limit = limit
        self.line = line


class Received(NamedTuple):
    """A line from one bot (or why there is none), stamped when it was read."""

    key: int
    line: bytes | None
    error: LineTooLong | EndOfStream | Flooded | None
    at: float
    cpu: float
    """The bot's CPU seconds when the line was read."""


class Dropped(NamedTuple):
    """What ``arm`` threw away: how many lines, and the last of them (its head)."""

    lines: int
    last: bytes


NOTHING = Dropped(0, b"")


class LineInbox(Protocol):
    """How the referee gets the lines of its bots: the one seam between judging and
    reading, so an inbox fed in memory can stand in for ``Inbox`` in a test."""

    def add(self, key: int, process: BotProcess) -> None:
        """Read ``process`` from now on, as ``key``."""
        ...

    def discard(self, key: int) -> None:
        """Read ``key`` no more and forget its unread lines (before a restart)."""
        ...

    def arm(self, key: int) -> Dropped:
        """Before ``key``'s next request: drop what it wrote so far, renew its budget."""
        ...

    async def receive(self) -> Received:
        """The next line of any bot, stamped with Trio's clock when it was read."""
        ...

    async def receive_by(self, deadline: float) -> Received | None:
        """``receive``, or None once Trio's clock reaches ``deadline`` with no line."""
        ...

    def close(self) -> None: ...


class Budgets:
    """What every inbox does with a bot's lines once read: stamp them, count them
    against the bot's budget, cut it off after a flood, and hold it while it dribbles.
    The two inboxes differ only in how bytes reach a bot's ``LineBuffer`` (epoll over
    pipes, or pushed in memory) and in how a held bot is left unread."""

    def __init__(self) -> None:
        self._budget: dict[int, int] = {}
        """Lines each bot may still write before its next request."""
        self._drips: dict[int, int] = {}
        """Reads of each bot since its last request that ended no line."""
        self._held: dict[int, float] = {}
        """Bots that dribble, not read again until then (Trio's clock)."""
        self._ready: deque[Received] = deque()
        self.reads: Counter[int] = Counter()
        """Reads of each bot's output: the referee's work for it (for tests and benchmarks)."""
        self.wakeups = 0
        """Times the reading task woke up."""

    async def receive(self) -> Received:
        raise NotImplementedError

    async def receive_by(self, deadline: float) -> Received | None:
        """``receive``, or None once Trio's clock reaches ``deadline`` with no line (in a
        cancel scope: an inbox that can wake itself at a deadline does better)."""
        with trio.move_on_at(deadline):
            return await self.receive()
        return None

    def _forget(self, key: int) -> None:
        self._budget.pop(key, None)
        self._drips.pop(key, None)
        self._held.pop(key, None)
        if any(r.key == key for r in self._ready):
            self._ready = deque(r for r in self._ready if r.key != key)

    def _cut(self, key: int, process: BotProcess, lines: LineBuffer, now: float) -> bool:
        """Queue the complete lines ``lines`` holds; True when the bot ran out of budget
        (a ``Flooded`` is queued and the rest dropped: read it no more until ``arm``)."""
        cpu: float | None = None
        budget = self._budget[key]
        while (item := lines.next_line()) is not None:
            if cpu is None:
                cpu = process.cpu_seconds()
            if budget == 0:
                self._budget[key] = 0
                flood = Flooded(LINE_BUDGET, item if isinstance(item, bytes) else item.head)
                self._ready.append(Received(key, None, flood, now, cpu))
                lines.drop_lines()
                return True
            budget -= 1
            if isinstance(item, LineTooLong):
                self._ready.append(Received(key, None, item, now, cpu))
            else:
                self._ready.append(Received(key, item, None, now, cpu))
        self._budget[key] = budget
        return False

    def _read(self, key: int, process: BotProcess, lines: LineBuffer, now: float) -> bool:
        """Queue the lines a read of the bot's output completed; True when it is to be
        read no more for now: flooded (until ``arm``) or dribbling (held, until its
        pause is over: ``_released``)."""
        self.reads[key] += 1
        queued = len(self._ready)
        if self._cut(key, process, lines, now):
            return True
        if len(self._ready) > queued:
            return False
        drips = self._drips[key] = self._drips.get(key, 0) + 1
        if drips <= DRIP_READS:
            return False
        self._held[key] = now + DRIP_PAUSE
        return True

    def _next_release(self) -> float:
        """When the first held bot is to be read again (infinity: none is held)."""
        return min(self._held.values(), default=math.inf)

    def _released(self, now: float) -> list[int]:
        """The held bots whose pause is over, no longer held."""
        due = [key for key, until in self._held.items() if until <= now]
        for key in due:
            del self._held[key]
        return due

    def _ended(self, key: int, process: BotProcess, lines: LineBuffer, now: float) -> None:
        self._ready.append(Received(key, None, EndOfStream(lines.rest()), now, process.cpu_seconds()))

    def _drop_read(self, key: int) -> Dropped:
        """The first half of ``arm``: drop the lines of ``key`` read but not received
        (never the end of its output), and give it a fresh budget."""
        count, last = 0, b""
        if self._ready and any(r.key == key for r in self._ready):
            kept: deque[Received] = deque()
            for r in self._ready:
                if r.key != key or isinstance(r.error, EndOfStream):
                    kept.append(r)
                else:
                    count += 1
                    last = _evidence(r)
            self._ready = kept
        self._budget[key] = LINE_BUDGET
        self._drips[key] = 0
        self._held.pop(key, None)
        return Dropped(count, last) if count else NOTHING


class _TimeSpec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class _TimerSpec(ctypes.Structure):
    _fields_ = [("interval", _TimeSpec), ("value", _TimeSpec)]


class Timer:
    """A one-shot timerfd on ``CLOCK_MONOTONIC`` (the clock of Trio's system clock, and
    of ``time.perf_counter``): in the inbox's epoll set, it wakes the reading task at a
    deadline through the same wait as a line does. A cancel scope per decision costs
    the referee more than most answers take; setting this timer is one system call."""

    CLOCK_MONOTONIC = 1
    TFD_NONBLOCK = os.O_NONBLOCK
    TFD_CLOEXEC = os.O_CLOEXEC

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._settime = libc.timerfd_settime
        fd = libc.timerfd_create(self.CLOCK_MONOTONIC, self.TFD_NONBLOCK | self.TFD_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self.fd: int = fd
        self._spec = _TimerSpec()
        self.at = math.inf
        """When it fires, on Trio's clock (infinity: it is not set)."""

    def set(self, at: float, now: float) -> None:
        """Fire once Trio's clock, now ``now``, reaches ``at``, or before: a timer set for
        an earlier time is left as it is (each decision's deadline is later than the one
        before, so it is set about once per move limit, not once per decision; firing
        early costs one wake-up, after which it is set again). A relative timer, set
        after ``now``: it never fires before the time it was set for."""
        if self.at <= at:
            return
        delay = max(at - now, 1e-6)
        seconds = int(delay)
        self._spec.value.sec = seconds
        self._spec.value.nsec = int((delay - seconds) * 1e9)
        if self._settime(self.fd, 0, ctypes.byref(self._spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")
        self.at = at

    def fired(self) -> None:
        """It fired: empty its count, so the epoll set is no longer ready for it."""
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass
        self.at = math.inf

    def close(self) -> None:
        os.close(self.fd)


def _system_clock() -> bool:
    """Whether Trio runs on its system clock (a test's virtual clock does not tick with
    ``CLOCK_MONOTONIC``, so no timerfd can wake at its deadlines)."""
    return type(trio.lowlevel.current_clock()).__name__ == "SystemClock"


class Inbox(Budgets):
    """The ``LineInbox`` over pipes: every bot's output descriptor in one epoll set (and
    a timer, for deadlines)."""

    def __init__(self) -> None:
        super().__init__()
        self._epoll = select.epoll()
        self._timer: Timer | None | bool = False
        """The timer, once the first deadline asked for one: None where there is none
        (no timerfd, or a virtual clock), False before."""
        self._timer_fd = -1
        self._bots: dict[int, tuple[int, BotProcess, PipeLines]] = {}
        self._fds: dict[int, int] = {}
        """The output descriptor of each key."""
        self._muted: set[int] = set()
        """Descriptors taken out of the epoll set: a flood (until their bot's next
        request) or a dribble (until its pause is over, or that request)."""

    def add(self, key: int, process: BotProcess) -> None:
        lines = process.output
        if not isinstance(lines, PipeLines):
            raise TypeError(f"the epoll inbox reads pipes, not {type(lines).__name__}")
        fd = lines.fd
        self._bots[fd] = (key, process, lines)
        self._fds[key] = fd
        self._budget[key] = LINE_BUDGET
        self._epoll.register(fd, select.EPOLLIN)
        if self._cut(key, process, lines.buffer, trio.current_time()):  # lines read before, by the handshake
            self._mute(fd)

    def _remove(self, fd: int) -> None:
        if fd in self._muted:
            self._muted.discard(fd)
        else:
            self._epoll.unregister(fd)
        del self._bots[fd]

    def discard(self, key: int) -> None:
        """Read a bot no more, and forget what of it is unread (before it is started
        again under the same key). Call it while its output is still open."""
        fd = self._fds.pop(key, None)
        if fd is not None and self._bots.get(fd, (None,))[0] == key:
            self._remove(fd)
        self._forget(key)

    def close(self) -> None:
        self._epoll.close()
        if isinstance(self._timer, Timer):
            self._timer.close()

    async def receive(self) -> Received:
        """The next line of any bot, in the order read."""
        while not self._ready:
            if not self._held:
                await trio.lowlevel.wait_readable(self._epoll.fileno())
            else:
                with trio.move_on_at(self._next_release()):
                    await trio.lowlevel.wait_readable(self._epoll.fileno())
            self.wakeups += 1
            self._read_ready()
        return self._ready.popleft()

    async def receive_by(self, deadline: float) -> Received | None:
        """``receive``, or None once Trio's clock reaches ``deadline``: the timer wakes the
        same wait as the bots' lines, so waiting costs no cancel scope."""
        timer = self._timer if self._timer is not False else self._start_timer()
        if timer is None:
            return await super().receive_by(deadline)
        assert isinstance(timer, Timer)
        ready = self._ready
        while not ready:
            now = trio.current_time()
            if now >= deadline:
                return None
            timer.set(min(deadline, self._next_release()) if self._held else deadline, now)
            await trio.lowlevel.wait_readable(self._epoll.fileno())
            self.wakeups += 1
            self._read_ready()
        return ready.popleft()

    def _start_timer(self) -> Timer | None:
        timer = None
        if _system_clock():
            try:
                timer = Timer()
            except (OSError, AttributeError):  # no timerfd here: a cancel scope will do
                timer = None
            else:
                self._epoll.register(timer.fd, select.EPOLLIN)
                self._timer_fd = timer.fd
        self._timer = timer
        return timer

    def arm(self, key: int) -> Dropped:
        """Before the bot's next request: drop every line it wrote so far (read or not,
        the start of an unended line is kept), and give it a fresh budget of lines.

        Under fair time the bot is frozen here, so all it wrote is in the pipe; nothing
        it sent before seeing the request can be taken for an answer to it.
        """
        count, last = self._drop_read(key)
        fd = self._fds[key]
        if self._bots.get(fd, (None,))[0] != key:  # its output has ended
            return Dropped(count, last)
        _, process, lines = self._bots[fd]
        muted = fd in self._muted
        if not muted and all(ready != fd for ready, _ in self._epoll.poll(0)):
            return Dropped(count, last) if count else NOTHING  # the usual case: one cheap system call
        for _ in range(ARM_READS):
            data = _read(fd)
            if data is None:
                break
            self.reads[key] += 1
            if not data:
                self._end(fd, trio.current_time())
                break
            lines.buffer.feed(data)
            n, head = lines.buffer.drop_lines()
            if n:
                count, last = count + n, head
        if muted and fd in self._bots:
            self._muted.discard(fd)
            self._epoll.register(fd, select.EPOLLIN)
        return Dropped(count, last)

    def _read_ready(self) -> None:
        now = trio.current_time()
        for key in self._released(now) if self._held else ():
            fd = self._fds[key]
            if fd in self._muted and self._bots.get(fd, (None,))[0] == key:
                self._muted.discard(fd)
                self._epoll.register(fd, select.EPOLLIN)  # read below if it wrote meanwhile
        for fd, _ in self._epoll.poll(0):
            if fd == self._timer_fd:  # a deadline (or a held bot's pause) is over
                assert isinstance(self._timer, Timer)
                self._timer.fired()
                continue
            key, process, lines = self._bots[fd]
            data = _read(fd)
            if data is None:
                continue
            if not data:
                self._end(fd, now)
                continue
            lines.buffer.feed(data)
            if self._read(key, process, lines.buffer, now):
                self._mute(fd)

    def _end(self, fd: int, now: float) -> None:
        key, process, lines = self._bots[fd]
        self._remove(fd)
        self._ended(key, process, lines.buffer, now)

    def _mute(self, fd: int) -> None:
        """Read the bot no more: until ``arm``, or (held) until its pause is over."""
        self._epoll.unregister(fd)
        self._muted.add(fd)


def _evidence(received: Received) -> bytes:
    """The line, or its head, that ``received`` carries."""
    if received.line is not None:
        return received.line
    error = received.error
    if isinstance(error, LineTooLong):
        return error.head
    if isinstance(error, Flooded):
        return error.line
    return b""


def _read(fd: int) -> bytes | None:
    """What a bot's output holds: None if nothing yet, ``b""`` once it has ended."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""
