"""A bot that dribbles (writes its lines a byte at a time, each byte a wake-up and a read
of the referee's) costs the referee a bounded number of reads, not one per byte.

Under Trio's virtual clock: both inboxes read a 1,000-byte dribble in a hundred or so
reads, the dribbler's line at most ``DRIP_PAUSE`` late and every other bot's line when
it is written (real bot processes in both sandboxes: tests/e2e/test_dribbling_sandboxes.py).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from arena.bots import Bot, Manifest
from arena.play.match import MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match, single_game
from arena.play.replay import DecisionLine, FaultLine
from arena.sandbox.framing import DRIP_PAUSE, DRIP_READS, LineBuffer, LineReader, PipeLines
from arena.sandbox.inbox import Inbox
from arena.sandbox.memory import MemoryInbox, ScriptedBot, ScriptedSandbox, Write, answer_line, first_legal, silent

from ..conftest import SAMPLES

RANDOM = SAMPLES / "random"


def most_reads(seconds: float) -> int:
    """The most reads a dribble of ``seconds`` may cost, for one request: the free ones,
    then one per pause (and one for the line's end)."""
    return DRIP_READS + math.ceil(seconds / DRIP_PAUSE) + 2


# --- under the virtual clock ---------------------------------------------------------


async def dribble(write: Any, data: bytes, every: float) -> None:
    for i in range(len(data)):
        await trio.sleep(every)
        write(data[i : i + 1])


async def dribble_beside_an_honest_bot(inbox: MemoryInbox | Inbox, dribbler: Any, honest: Any) -> None:
    """``dribbler`` writes a 1,000-byte line a byte a millisecond, ``honest`` a whole
    line at 500.5 ms, while ``inbox`` is read; then the dribbler's next request."""
    async with trio.open_nursery() as nursery:
        start = trio.current_time()
        nursery.start_soon(dribble, dribbler.write, b"x" * 999 + b"\n", 0.001)

        async def answer() -> None:
            await trio.sleep(0.5005)
            honest.write(b"at once\n")

        nursery.start_soon(answer)
        first, second = await inbox.receive(), await inbox.receive()
        assert first.key == 1 and first.line == b"at once"
        assert first.at - start == pytest.approx(0.5005, abs=1e-9), "stamped when written, dribble or not"
        assert second.key == 0 and second.line == b"x" * 999
        assert 1.0 <= second.at - start <= 1.0 + DRIP_PAUSE + 1e-9, "the dribbler's own line, at most a pause late"
        assert inbox.reads[0] <= most_reads(1.0) < 1000 / 7, inbox.reads
        assert inbox.reads[1] == 1
        assert inbox.wakeups <= 2 * most_reads(1.0), "each wake-up a read or the end of a pause"

        inbox.arm(0)  # its next request: a fresh allowance of reads, made at once
        nursery.start_soon(dribble, dribbler.write, b"y" * 10 + b"\n", 0.001)
        again = await inbox.receive()
        assert again.line == b"y" * 10 and again.at - second.at == pytest.approx(0.011, abs=1e-9)


async def test_a_dribble_of_1000_bytes_costs_a_hundred_reads_and_delays_no_one_else(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        dribbler, honest = ScriptedBot(nursery, silent), ScriptedBot(nursery, silent)
        inbox = MemoryInbox()
        inbox.add(0, dribbler)
        inbox.add(1, honest)
        await dribble_beside_an_honest_bot(inbox, dribbler.output, honest.output)
        inbox.close()


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


async def test_the_epoll_inbox_holds_a_dribbler_as_the_memory_one_does(autojump_clock: trio.testing.MockClock) -> None:
    """The same dribble over real pipes, read by the epoll inbox (the pipes are real,
    the time is not)."""
    dribbler, honest = PipeBot(), PipeBot()
    inbox = Inbox()
    try:
        inbox.add(0, dribbler)  # type: ignore[arg-type]
        inbox.add(1, honest)  # type: ignore[arg-type]
        await dribble_beside_an_honest_bot(inbox, dribbler, honest)
    finally:
        inbox.close()
        dribbler.close()
        honest.close()


async def test_a_dribbled_hello_is_read_in_bounded_reads(autojump_clock: trio.testing.MockClock) -> None:
    """Lines read one at a time (the hello, ``arena bot check``) are held the same way."""
    send, receive = trio.testing.memory_stream_one_way_pair()
    reader = LineReader(receive, LineBuffer(1 << 16))

    async def dribble_hello() -> None:
        line = b" " * 1999 + b"\n"
        for i in range(len(line)):
            await trio.sleep(0.0005)
            await send.send_all(line[i : i + 1])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(dribble_hello)
        start = trio.current_time()
        assert await reader.receive_line() == b" " * 1999
        assert 1.0 <= trio.current_time() - start <= 1.0 + DRIP_PAUSE + 1e-6
    assert reader.reads <= most_reads(1.0), reader.reads


def scripted(name: str) -> Bot:
    return Bot(Path("/scripted") / name, Manifest(name, "1", "python", "./bot", ["nimmt"]))


def dribbled(request: dict[str, Any]) -> list[Write]:
    """The first legal answer, padded to 1,000 bytes, a byte every 0.75 ms."""
    line = answer_line(request, request["legal"][0]).rjust(1000)
    return [Write(line[i : i + 1], (i + 1) * 0.00075) for i in range(len(line))]


async def test_a_dribbled_answer_counts_and_its_table_plays_on_time(autojump_clock: trio.testing.MockClock) -> None:
    bots = [scripted("dribbler"), scripted("honest")]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 3), TimeLimits(1000, 0, 1000))
    inbox = MemoryInbox()
    sandbox = ScriptedSandbox({"dribbler": dribbled, "honest": first_legal(0.02)})
    result = await play_match(spec, sandbox, inbox=inbox)
    game = result.games[0]
    assert [s.status for s in game.statuses] == ["ok", "ok"]
    assert not [line for line in game.replay if isinstance(line, FaultLine)]
    asked = 0
    for line in decisions(result):
        for seat, wall_ms in zip(line.seats, line.wall_ms, strict=True):
            if seat == 0:
                asked += 1
                assert 750 <= wall_ms <= 750 + DRIP_PAUSE * 1000, "read at most a pause after its last byte"
            else:
                assert wall_ms == pytest.approx(20), "the honest bot's answer is stamped as it is written"
    assert asked >= 10
    assert inbox.reads[0] <= asked * most_reads(0.75) < asked * 1000 / 6, inbox.reads


def decisions(result: MatchResult) -> list[DecisionLine]:
    return [line for line in result.games[0].replay if isinstance(line, DecisionLine)]
