"""The epoll inbox waits for a deadline through a timer in its own epoll set (no cancel
scope per decision): on Trio's real clock, over real pipes, ``receive_by`` gives a line
that comes in time, None once the deadline has passed (never before), wakes a held
dribbler at the end of its pause, and a timer that fired leaves nothing ready behind it.
Under a virtual clock it keeps to the virtual deadline (a cancel scope, as before).

The times asserted are lower bounds, or upper bounds seconds above what is asked: they
hold on a loaded machine."""

from __future__ import annotations

import os

import trio
import trio.testing

from arena.sandbox.framing import DRIP_PAUSE, DRIP_READS, PipeLines
from arena.sandbox.inbox import Inbox, Timer


class PipeBot:
    """A bot that is only the read end of a pipe the test writes to."""

    def __init__(self) -> None:
        read_fd, self.write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self.output = PipeLines(trio.lowlevel.FdStream(read_fd), 1 << 16)

    def write(self, data: bytes) -> None:
        os.write(self.write_fd, data)

    def cpu_seconds(self) -> float:
        return 0.0

    def close(self) -> None:
        os.close(self.write_fd)


async def test_a_deadline_with_no_line_gives_none_at_the_deadline_and_never_before() -> None:
    bot, inbox = PipeBot(), Inbox()
    try:
        inbox.add(0, bot)  # type: ignore[arg-type]
        start = trio.current_time()
        assert await inbox.receive_by(start + 0.05) is None
        assert trio.current_time() >= start + 0.05
        assert trio.current_time() < start + 5
        assert isinstance(inbox._timer, Timer), "the real clock waits through the timer"
        assert inbox.wakeups == 1, "one wake-up: the timer's"
        # The timer fired and was emptied: a plain wait now sleeps until a line comes.
        async with trio.open_nursery() as nursery:

            async def answer_later() -> None:
                await trio.sleep(0.05)
                bot.write(b"late\n")

            nursery.start_soon(answer_later)
            received = await inbox.receive()
        assert received.line == b"late"
        assert inbox.wakeups == 2, "no spin on a timer that fired"
        # A deadline already past gives None at once, whatever is to come.
        assert await inbox.receive_by(trio.current_time()) is None
    finally:
        inbox.close()
        bot.close()


async def test_a_line_before_the_deadline_is_received_and_the_same_deadline_still_holds() -> None:
    quick, silent, inbox = PipeBot(), PipeBot(), Inbox()
    try:
        inbox.add(0, quick)  # type: ignore[arg-type]
        inbox.add(1, silent)  # type: ignore[arg-type]
        start = trio.current_time()
        deadline = start + 0.3
        async with trio.open_nursery() as nursery:

            async def answer_soon() -> None:
                await trio.sleep(0.01)
                quick.write(b'{"type": "answer"}\n')

            nursery.start_soon(answer_soon)
            received = await inbox.receive_by(deadline)
        assert received is not None and received.key == 0 and received.line == b'{"type": "answer"}'
        assert received.at >= start + 0.01
        assert await inbox.receive_by(deadline) is None, "the silent bot runs out of time"
        assert trio.current_time() >= deadline
    finally:
        inbox.close()
        quick.close()
        silent.close()


async def test_a_held_dribbler_is_read_again_at_the_end_of_its_pause_not_at_the_deadline() -> None:
    dribbler, inbox = PipeBot(), Inbox()
    try:
        inbox.add(0, dribbler)  # type: ignore[arg-type]
        start = trio.current_time()
        deadline = start + 30
        line = b"x" * (DRIP_READS + 8) + b"\n"
        async with trio.open_nursery() as nursery:

            async def dribble() -> None:
                for i in range(len(line)):
                    dribbler.write(line[i : i + 1])
                    await trio.sleep(0.001)

            nursery.start_soon(dribble)
            received = await inbox.receive_by(deadline)
        assert received is not None and received.line == line[:-1]
        assert trio.current_time() < start + 10, "released by its pause, long before the deadline"
        assert inbox.reads[0] < len(line), "it was held: fewer reads than bytes"
        assert DRIP_PAUSE < 10
    finally:
        inbox.close()
        dribbler.close()


async def test_under_a_virtual_clock_the_deadline_is_the_virtual_one(autojump_clock: trio.testing.MockClock) -> None:
    bot, inbox = PipeBot(), Inbox()
    try:
        inbox.add(0, bot)  # type: ignore[arg-type]
        start = trio.current_time()
        assert await inbox.receive_by(start + 1000) is None
        assert trio.current_time() == start + 1000
        assert inbox._timer is None, "no timerfd can follow a virtual clock"
    finally:
        inbox.close()
        bot.close()
