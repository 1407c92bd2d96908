"""Bots in memory (``arena.sandbox.memory``): they meet the real Protocols, and what
they write reaches the referee through the same framing and budgets as a process's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from arena.bots import Bot, Manifest
from arena.play.match import MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match, single_game
from arena.play.replay import DroppedLine, FaultLine
from arena.sandbox.base import BotGone, BotProcess, LineSource, Sandbox, StartError
from arena.sandbox.framing import EndOfStream, LineTooLong
from arena.sandbox.inbox import LINE_BUDGET, Flooded, Inbox, LineInbox
from arena.sandbox.memory import (
    Exit,
    Expectations,
    MemoryInbox,
    MemoryLines,
    Script,
    ScriptedBot,
    ScriptedSandbox,
    Write,
    answer_line,
    first_legal,
    silent,
)
from arena.sandbox.runtime import PROBE_NAME, check_python_bots


def test_the_doubles_are_the_real_protocols() -> None:
    """Checked by mypy (no cast anywhere): each assignment fails type checking if a
    double drifts from the Protocol it stands in for."""
    sandbox: Sandbox = ScriptedSandbox({})
    inbox: LineInbox = MemoryInbox()
    source: LineSource = MemoryLines(10)
    assert sandbox.isolation == "scripted" and inbox is not None and source.unended() == b""


def test_the_start_up_check_asks_the_sandbox_for_its_fix() -> None:
    """``check_python_bots`` names no sandbox: it prepares and starts the probe through the
    ``Sandbox`` protocol alone, and the fix it states is the sandbox's ``sdk_fix``."""
    sandbox = ScriptedSandbox(
        {PROBE_NAME: silent}, hellos={PROBE_NAME: [Exit(1, stderr=b"No module named 'msgspec'\n")]}
    )
    with pytest.raises(StartError) as failed:
        check_python_bots(sandbox)
    assert str(failed.value) == (
        f"a Python bot cannot start in this sandbox (No module named 'msgspec'): {sandbox.sdk_fix()}"
    )
    assert [message["type"] for message in sandbox.started[PROBE_NAME][0].received] == ["hello"]


def bot(name: str) -> Bot:
    return Bot(Path("/scripted") / name, Manifest(name, "1", "python", "./bot", ["nimmt"]))


async def match(script: Script, move_ms: int = 100) -> MatchResult:
    bots = [bot("under-test"), bot("quick")]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 3), TimeLimits(move_ms, 0, 1000))
    return await play_match(spec, ScriptedSandbox({"under-test": script, "quick": first_legal()}), inbox=MemoryInbox())


def faults(result: MatchResult) -> list[Any]:
    return [line.fault for line in result.games[0].replay if isinstance(line, FaultLine) and line.seat == 0]


async def test_garbage_and_a_line_over_the_cap_are_faults_with_their_evidence(
    autojump_clock: trio.testing.MockClock,
) -> None:
    spoiled = iter([b"I play the 7\n", b"x" * 70_000 + b"\n", b"half a li"])
    result = await match(lambda request: [Write(next(spoiled, b""))])
    got = faults(result)
    assert [f.kind for f in got] == ["malformed", "malformed", "timeout"]
    assert got[0].line == "I play the 7" and "longer than 65536 bytes" in got[1].message


async def test_a_crash_is_a_fault_with_the_exit_code_and_stderr(autojump_clock: trio.testing.MockClock) -> None:
    result = await match(lambda request: [Exit(5, 0.02, b"boom: no luck\n")])
    (fault,) = faults(result)
    assert fault.kind == "crash" and fault.message == "bot exited: exited with code 5"
    assert "boom: no luck" in (fault.stderr or "")
    assert result.games[0].statuses[0].status == "disqualified"


async def test_a_flood_is_cut_at_the_line_budget(autojump_clock: trio.testing.MockClock) -> None:
    result = await match(lambda request: [Write(b"spam\n" * 1000)])
    got = faults(result)
    assert got[0].kind == "malformed" and got[0].line == "spam", "the first line answers (badly)"
    dropped = [line.reason for line in result.games[0].replay if isinstance(line, DroppedLine) and line.seat == 0]
    assert len(got) == 3 and all(f.line == "spam" for f in got), "the rest of each flood answers nothing"
    assert len(dropped) == 20, "the lines after it are dropped, the first 20 of a game logged"


async def test_expectations_answer_in_order_and_say_what_never_came(autojump_clock: trio.testing.MockClock) -> None:
    script = Expectations().expect("play", first_legal(0.05)).expect("play", silent).expect("row", first_legal())
    async with trio.open_nursery() as nursery:
        scripted = ScriptedBot(nursery, script)
        process: BotProcess = scripted
        began = trio.current_time()
        await process.send(b'{"type":"request","id":1,"kind":"play","legal":[4,5]}\n', 1)
        assert await process.receive_line() == answer_line({"id": 1}, 4).rstrip(b"\n")
        assert trio.current_time() - began == pytest.approx(0.05), "answered after its virtual delay"
        await process.send(b'{"type":"request","id":2,"kind":"pair","legal":[1]}\n', 1)
    with pytest.raises(AssertionError, match="expected a play request, got pair request 2; a row request never came"):
        script.assert_done()


async def test_a_frozen_bot_writes_when_thawed_and_is_gone_after_bye(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        process = ScriptedBot(nursery, first_legal(0.01))
        await process.send(b'{"type":"request","id":1,"kind":"play","legal":[4]}\n', 1)
        process.freeze()
        with trio.move_on_after(1):
            await process.receive_line()
        assert process.held == 1 and process.exit_reason() is None
        process.thaw()
        assert await process.receive_line() == b'{"type":"answer","id":1,"answer":4}'
        await process.send(b'{"type":"bye"}\n', 1)
        with pytest.raises(BotGone, match="exited with code 0"):
            await process.receive_line()
        with pytest.raises(BotGone):
            await process.send(b'{"type":"bye"}\n', 1)


async def test_memory_lines_frame_as_pipes_do() -> None:
    lines = MemoryLines(8)
    lines.write(b"ok\r\n" + b"y" * 20 + b"\nlast")
    assert await lines.receive_line() == b"ok"
    with pytest.raises(LineTooLong):
        await lines.receive_line()
    lines.end()
    with pytest.raises(EndOfStream) as ended:
        await lines.receive_line()
    assert ended.value.tail == b"last" == lines.unended()


async def test_each_inbox_refuses_the_other_kind_of_bot() -> None:
    async with trio.open_nursery() as nursery:
        scripted = ScriptedBot(nursery, silent)
        epoll = Inbox()
        try:
            with pytest.raises(TypeError, match="the epoll inbox reads pipes, not MemoryLines"):
                epoll.add(0, scripted)
        finally:
            epoll.close()
        nursery.cancel_scope.cancel()


async def test_the_memory_inbox_budgets_and_arms_as_the_epoll_one_does() -> None:
    async with trio.open_nursery() as nursery:
        scripted = ScriptedBot(nursery, silent)
        inbox = MemoryInbox()
        inbox.add(7, scripted)
        scripted.output.write(b"x\n" * 10_000)
        got = [await inbox.receive() for _ in range(LINE_BUDGET + 1)]
        assert [r.line for r in got[:LINE_BUDGET]] == [b"x"] * LINE_BUDGET
        assert isinstance(got[-1].error, Flooded) and got[-1].key == 7
        scripted.output.write(b"y\nunended")
        assert inbox.arm(7) == (1, b"y"), "muted until armed; then what it wrote before is dropped"
        scripted.output.write(b" line\n")
        assert (await inbox.receive()).line == b"unended line"
        scripted.output.end()
        end = await inbox.receive()
        assert isinstance(end.error, EndOfStream)
        inbox.close()
