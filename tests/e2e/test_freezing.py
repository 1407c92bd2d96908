"""Fair time's freezing of local bots, attacked: a bot blocked reading its input that
would still compute (a timer's signal, a thread, a child) gains no CPU while frozen, and
what is set aside to make a freeze cheap is the sandbox's own, never the bot's. Real
processes, real bubblewrap, real cgroups (CI runs as root)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.sandbox.cgroups import ROOT, OwnCgroup
from arena.sandbox.local import LocalProcess, LocalSandbox

from ..conftest import MakeBot

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="own users and cgroups need root (CI runs as root)")

SPIN = "def spin(seconds):\n    t = time.process_time()\n    while time.process_time() - t < seconds:\n        pass\n"

TRICKS = {
    # A timer of its own: SIGALRM wakes the read every 10 ms, and the handler computes.
    "itimer": "signal.signal(signal.SIGALRM, lambda *_: spin(0.005))\nsignal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)",
    # A thread that waits until the bot looks idle, then computes forever.
    "thread": "threading.Thread(target=lambda: (time.sleep(0.3), spin(1e9)), daemon=True).start()",
    # A child that does the same, in a session of its own.
    "child": "if os.fork() == 0:\n    os.setsid()\n    time.sleep(0.3)\n    spin(1e9)",
}


def tricky_bot(trick: str, early: bool) -> str:
    """A bot that sets ``trick`` up (at once, or on its first line) and then only reads."""
    setup = TRICKS[trick]
    head = f"import os, signal, sys, threading, time\n{SPIN}"
    serve = "print('ready', flush=True)\nfor line in sys.stdin:\n    print('ok', flush=True)\n"
    if early:  # before the arena's first freeze, as during its hello
        return f"{head}{setup}\nsys.stdin.readline()\n{serve}"
    return f"{head}sys.stdin.readline()\n{setup}\n{serve}"


async def cpu_over(process: LocalProcess, seconds: float) -> float:
    before = process.cpu_seconds()
    await trio.sleep(seconds)
    return process.cpu_seconds() - before


async def computes(process: LocalProcess, seconds: float) -> bool:
    """Whether the bot uses ``seconds`` of CPU within 60 s (however busy the machine)."""
    before = process.cpu_seconds()
    with trio.move_on_after(60):
        while process.cpu_seconds() - before < seconds:
            await trio.sleep(0.05)
        return True
    return False


@as_root
@pytest.mark.parametrize("early", [False, True], ids=["set-up-on-its-turn", "set-up-before-the-first-freeze"])
@pytest.mark.parametrize("trick", sorted(TRICKS))
async def test_a_frozen_bot_blocked_reading_gains_no_cpu_from_timers_threads_or_children(
    make_bot: MakeBot, trick: str, early: bool
) -> None:
    """Every task of the bot sleeping in read() is no proof it cannot think: a signal from a
    timer it set, a thread or a child wakes it. Frozen, none of them runs; thawed, each
    does (the attack is real)."""
    folder = make_bot(f"tricky-{trick}", tricky_bot(trick, early))
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
        assert isinstance(process, LocalProcess) and process.cgroup is not None
        if not early:
            await trio.sleep(0.3)  # as the referee does after the hello: a freeze, later a thaw
            process.freeze()
            process.thaw()
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"ready"
        thawed = await computes(process, 0.2)  # the sleeper wakes and computes on the bot's own turn
        process.freeze()
        await trio.sleep(0.2)  # let a freeze in progress settle
        frozen = await cpu_over(process, 1.0)
        process.thaw()
        await process.send(b"again\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"ok"
        await process.stop()
    assert thawed, f"the {trick} never computed, even thawed"
    assert frozen < 0.05, f"the frozen bot's {trick} used {frozen * 1000:.0f} ms of CPU in 1 s"


def _commands(procs: Path) -> list[str]:
    commands = []
    for pid in procs.read_text().split():
        try:
            commands.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            continue
    return sorted(commands)


@as_root
async def test_a_freeze_stops_the_bot_alone_and_bubblewrap_waits_aside(make_bot: MakeBot) -> None:
    """Bubblewrap's two processes (the one started, the namespace's init) leave the frozen
    group at the first freeze after the bot runs; the bot and everything it forked, before
    or after, stay in it. Moving the bot's own processes aside would let them escape."""
    child = "if os.fork() == 0:\n    time.sleep(60)\n"
    code = (
        f"import os, sys, time\n{child}sys.stdin.readline()\nprint('ready', flush=True)\n{child}sys.stdin.readline()\n"
    )
    folder = make_bot("aside", code)
    sandbox = LocalSandbox()
    assert sandbox.bwrap is not None, "bubblewrap is not installed: ./setup.sh installs it"
    async with trio.open_nursery() as nursery:
        process = await sandbox.start(load_bot(folder), nursery, 65536)
        assert isinstance(process, LocalProcess) and process.cgroup is not None
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"ready"
        process.freeze()
        process.thaw()
        await trio.sleep(0.3)  # its second child is forked after the wrappers left
        cgroup = process.cgroup
        frozen = cgroup.v2 if cgroup.v2 is not None else cgroup.v1["freezer"]
        assert cgroup.aside is not None
        in_group, aside = _commands(frozen / "cgroup.procs"), _commands(cgroup.aside / "cgroup.procs")
        await process.stop()
    assert aside == ["bwrap", "bwrap"]
    assert in_group == ["python3", "python3", "python3"], "the bot and both its children"
    assert not cgroup.aside.exists(), "the group aside goes with the bot"


@as_root
def test_a_hybrid_machine_freezes_local_bots_with_the_v2_freezer() -> None:
    """Where cgroup v1 and a unified v2 hierarchy are both mounted, the v2 freezer (a cycle in
    microseconds, v1's in hundreds) is used even with controllers bound to v2; on a v2-only
    machine, v2's; on v1 alone, v1's. Whichever it is, it freezes and thaws."""
    hybrid = (ROOT / "unified" / "cgroup.procs").exists() and (ROOT / "freezer" / "cgroup.procs").exists()
    cgroup = OwnCgroup.create(64, 8)
    assert cgroup is not None
    try:
        if hybrid:
            assert cgroup.v2 is not None and cgroup.v2.is_relative_to(ROOT / "unified")
        elif (ROOT / "cgroup.controllers").exists():
            assert cgroup.v2 is not None and cgroup.v2.is_relative_to(ROOT)
        else:
            assert cgroup.v2 is None and "freezer" in cgroup.v1
        state = cgroup.v2 / "cgroup.freeze" if cgroup.v2 is not None else cgroup.v1["freezer"] / "freezer.state"
        assert cgroup.freezer().freeze()
        assert state.read_text().strip() in {"1", "FREEZING", "FROZEN"}
        assert cgroup.freezer().thaw()
        assert state.read_text().strip() in {"0", "THAWED"}
    finally:
        cgroup.remove()


@as_root
async def test_a_frozen_bot_is_sent_its_request_then_thawed_even_when_its_pipe_is_full(make_bot: MakeBot) -> None:
    """The request goes into a frozen bot's pipe and the bot is thawed after, so it wakes
    once; where the pipe cannot take it all, the bot is thawed before the arena waits for
    room (frozen, it would never make any, and be taken for one that stopped reading)."""
    code = "import sys\nfor line in sys.stdin:\n    print(len(line), flush=True)\n"
    folder = make_bot("reader", code)
    thawed_with: list[int] = []
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 1 << 20)
        assert isinstance(process, LocalProcess) and process.cgroup is not None
        for size in (10, 300_000):  # a request that fits, one four times the pipe's size
            process.freeze()
            await trio.sleep(0.2)
            frozen = process.cgroup.v2 / "cgroup.events" if process.cgroup.v2 else None

            def thaw(size: int = size) -> None:
                thawed_with.append(size)
                process.thaw()

            await process.send(b"x" * (size - 1) + b"\n", 30.0, thaw)
            with trio.fail_after(30):
                assert await process.receive_line() == str(size).encode()
            if frozen is not None:
                assert b"frozen 0" in frozen.read_bytes()
        await process.stop()
    assert thawed_with == [10, 300_000]
