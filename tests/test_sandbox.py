"""The local sandbox: who a bot runs as, and the limits it runs under."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.sandbox.local import LocalSandbox, reachable_by_others

from .conftest import MakeBot

PROBE = """
import json, os, resource, sys
sys.stdin.readline()
print(json.dumps({"uid": os.getuid(), "pgid": os.getpgid(0), "pid": os.getpid(), "cwd": os.getcwd(),
                  "home": os.environ["HOME"], "as": resource.getrlimit(resource.RLIMIT_AS)[0],
                  "policy": os.sched_getscheduler(0)}), flush=True)
sys.stdin.readline()
"""


async def probe(folder: Path) -> dict[str, object]:
    import json

    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
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
    assert facts["isolation"] == "local: resource limits, user nobody"


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
