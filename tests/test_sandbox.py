"""The local sandbox: who a bot runs as, and the limits it runs under."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.sandbox.local import LocalSandbox, reachable_by_others, working_bubblewrap

from .conftest import MakeBot

PROBE = """
import json, os, resource, sys
sys.stdin.readline()
print(json.dumps({"uid": os.getuid(), "pgid": os.getpgid(0), "pid": os.getpid(), "cwd": os.getcwd(),
                  "home": os.environ["HOME"], "as": resource.getrlimit(resource.RLIMIT_AS)[0],
                  "policy": os.sched_getscheduler(0)}), flush=True)
sys.stdin.readline()
"""


async def probe(folder: Path, sandbox: LocalSandbox | None = None) -> dict[str, object]:
    import json

    async with trio.open_nursery() as nursery:
        process = await (sandbox or LocalSandbox(bubblewrap=False)).start(load_bot(folder), nursery, 65536)
        await process.send(b"go\n", 1.0)
        facts = json.loads(await process.receive_line())
        facts["isolation"] = process.isolation
        await process.stop()
    return facts


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to nobody needs root; as a user, bots keep the user's rights")
async def test_a_reachable_bot_runs_as_nobody_in_its_own_group_under_limits(make_bot: MakeBot) -> None:
    folder = make_bot("probe", PROBE)
    facts = await probe(folder)
    assert facts["uid"] == 65534
    assert facts["pgid"] == facts["pid"], "its own process group"
    assert facts["cwd"] == str(folder)
    assert facts["home"] != os.environ.get("HOME")
    assert facts["as"] == 1024 * 1024 * 1024
    assert facts["policy"] == os.SCHED_BATCH
    assert facts["isolation"] == "local: resource limits only, user nobody"


async def test_a_bot_nobody_cannot_reach_still_runs_and_says_so(make_bot: MakeBot) -> None:
    private = Path(tempfile.mkdtemp())  # 0700, like /root
    try:
        folder = make_bot("probe", PROBE)
        hidden = private / "probe"
        folder.rename(hidden)
        assert not reachable_by_others(hidden)
        facts = await probe(hidden)
        assert facts["uid"] == os.getuid()
        if os.geteuid() == 0:
            assert "as root" in str(facts["isolation"])
    finally:
        import shutil

        shutil.rmtree(private)


def test_reachable_by_others(tmp_path: Path) -> None:
    open_dir = Path(tempfile.mkdtemp())
    try:
        os.chmod(open_dir, 0o755)
        assert reachable_by_others(open_dir)
        os.chmod(open_dir, 0o700)
        assert not reachable_by_others(open_dir)
        assert not reachable_by_others(open_dir / "missing")
    finally:
        os.rmdir(open_dir)


async def test_memory_limit_stops_a_hungry_bot(make_bot: MakeBot) -> None:
    hungry = make_bot(
        "hungry", "import sys\nsys.stdin.readline()\nx = bytearray(2 * 1024 ** 3)\nprint('survived', flush=True)\n"
    )
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(hungry), nursery, 65536)
        await process.send(b"go\n", 1.0)
        from arena.sandbox.base import BotGone

        with pytest.raises(BotGone, match="exited with code 1"):
            await process.receive_line()
        assert "MemoryError" in process.stderr_tail()
        await process.stop()


BUBBLE = """
import json, os, socket, sys
sys.stdin.readline()
facts = {"pid": os.getpid(), "uid": os.getuid(), "tmp": os.listdir("/tmp"),
         "parent": sorted(os.listdir(os.path.dirname(os.getcwd()))), "home": os.environ["HOME"]}
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    facts["network"] = True
except OSError:
    facts["network"] = False
try:
    open("/usr/arena-was-here", "w")
    facts["usr_writable"] = True
except OSError:
    facts["usr_writable"] = False
try:
    open(os.path.join(os.getcwd(), "mine"), "w")
    facts["own_folder_writable"] = True
except OSError:
    facts["own_folder_writable"] = False
print(json.dumps(facts), flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(working_bubblewrap() is None, reason="bubblewrap is not installed (setup.sh installs it as root)")
async def test_bubblewrap_hides_the_machine(make_bot: MakeBot, tmp_path: Path) -> None:
    folder = make_bot("bubble", BUBBLE)
    make_bot("neighbour", "")  # another bot in the same parent folder
    facts = await probe(folder, LocalSandbox(bubblewrap=True))
    assert facts["network"] is False
    assert facts["pid"] < 10, "its own PID namespace"
    import protocol

    bound = [folder, Path(sys.prefix), Path(protocol.__file__).parent]
    on_the_way = sorted({p.name for path in bound for p in path.resolve().parents if p.parent == Path("/tmp")})
    assert sorted(facts["tmp"]) == on_the_way, "a /tmp of its own, holding only the way to what it may see"
    assert facts["parent"] == ["bubble"], "of the project's files, only its own folder"
    assert facts["usr_writable"] is False and facts["own_folder_writable"] is False
    assert "bubblewrap" in str(facts["isolation"])
    if os.geteuid() == 0:
        assert facts["uid"] == 65534


async def test_a_local_bot_outlives_the_thread_that_started_it() -> None:
    """Trio starts processes from worker threads that end after 10 s idle; nothing tied
    to that thread (bubblewrap's --die-with-parent was) may take the bot with it."""
    from .conftest import ROOT

    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(ROOT / "bench/bots/echo"), nursery, 65536)
        await trio.sleep(12)
        await process.send(b"still there\n", 1.0)
        with trio.fail_after(5):
            assert await process.receive_line() == b"still there"
        await process.stop()
