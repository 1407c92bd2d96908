"""Python bots in the local sandbox run on a runtime of their own (issue 12, item 0):
whatever interpreter the arena runs on, even one that a bot's user cannot read, and
every arena start checks that a Python bot on the SDK can answer hello.

Real parts: a virtualenv made from a Python in a private (0700) folder, as a pyenv
Python under /root is, the real CLI as a subprocess, real bubblewrap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.play.replay import FaultLine, read
from arena.sandbox import runtime
from arena.sandbox.local import LocalSandbox, reachable_by_others

from ..conftest import ROOT, SAMPLES, MakeBot

ARENA = str(Path(sys.executable).parent / "arena")
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def hidden_venv() -> Iterator[Path]:
    """A virtualenv whose base interpreter lies in a folder only root can enter (like
    ``/root/.pyenv/versions/3.11``), the arena put into it as ``pip install -e`` would
    (a path entry for the checkout, and the main environment's packages for its
    dependencies; no system site packages)."""
    private = Path(tempfile.mkdtemp(prefix="arena-pyenv-"))  # 0700, like /root
    shared = Path(tempfile.mkdtemp(prefix="arena-venv-"))
    os.chmod(shared, 0o755)
    try:
        base = private / "versions" / "3"
        (base / "bin").mkdir(parents=True)
        shutil.copy2(Path(getattr(sys, "_base_executable", sys.executable)).resolve(), base / "bin" / VERSION)
        stdlib = Path(os.__file__).parent
        shutil.copytree(stdlib, base / "lib" / VERSION, symlinks=True, ignore=shutil.ignore_patterns("test"))
        venv = shared / "venv"
        subprocess.run([str(base / "bin" / VERSION), "-m", "venv", "--without-pip", str(venv)], check=True)
        site = venv / "lib" / VERSION / "site-packages"
        (site / "six-arena-dev.pth").write_text(f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n")
        config = (venv / "pyvenv.cfg").read_text()
        assert "include-system-site-packages = false" in config and str(base) in config
        assert not reachable_by_others(base / "bin" / VERSION), "nobody can read this Python"
        yield venv
    finally:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)


def arena_in(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``arena`` command, run by the virtualenv's Python."""
    main = "import sys; from arena.cli.main import main; sys.argv[0] = 'arena'; main()"
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", main, *args], capture_output=True, text=True, timeout=300
    )


def test_python_bots_play_when_the_arenas_python_is_unreadable(hidden_venv: Path, tmp_path: Path) -> None:
    """Issue 12, item 0: every Python bot exited with ModuleNotFoundError (then: was
    refused) when the arena ran from such a Python. Now they play a clean game."""
    probe = subprocess.run(
        [str(hidden_venv / "bin" / "python"), "-c", "import sys, arena; print(sys._base_executable, arena.__file__)"],
        capture_output=True,
        text=True,
    )
    assert "arena-pyenv-" in probe.stdout and str(ROOT) in probe.stdout, "the arena runs from the hidden Python"
    replay = tmp_path / "game.jsonl"
    played = arena_in(
        hidden_venv,
        "play",
        str(SAMPLES / "random"),
        str(SAMPLES / "heuristic"),
        "--sandbox",
        "local",
        "--seed",
        "4",
        "--set",
        "rounds=1",
        "--replay",
        str(replay),
    )
    assert played.returncode == 0, played.stderr
    assert "own unprivileged user" in played.stdout
    assert [line for line in read(replay) if isinstance(line, FaultLine)] == [], "no seat faulted"
    assert played.stdout.count(" ok ") >= 2


SHOW = """
import json, sys
import msgspec, protocol.bot
sys.stdin.readline()
print(json.dumps({"executable": sys.executable, "prefix": sys.prefix, "sdk": protocol.bot.__file__,
                  "msgspec": msgspec.__file__}), flush=True)
sys.stdin.readline()
"""


async def show(folder: Path, sandbox: LocalSandbox) -> dict[str, str]:
    async with trio.open_nursery() as nursery:
        process = await sandbox.start(load_bot(folder), nursery, 65536)
        await process.send(b"go\n", 5.0)
        with trio.fail_after(60):
            facts: dict[str, str] = json.loads(await process.receive_line())
        await process.stop()
    return facts


async def test_a_python_bot_runs_on_the_runtime_and_sees_no_arena_environment(make_bot: MakeBot) -> None:
    sandbox = LocalSandbox()
    facts = await show(make_bot("shower", SHOW), sandbox)
    root = str(sandbox.runtime.root)
    assert facts["sdk"].startswith(f"{root}/site/protocol/") and facts["msgspec"].startswith(f"{root}/site/msgspec/")
    assert not facts["prefix"].startswith(str(ROOT)), "not the arena's virtualenv"
    assert reachable_by_others(sandbox.runtime.root / "site" / "msgspec")
    assert all(not (sandbox.runtime.root / sub).stat().st_mode & 0o022 for sub in ("", "bin", "site")), "sealed"


async def test_a_copy_of_the_arenas_python_when_no_other_will_do(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Python a bot's user can read, none on the system: the runtime holds a copy of
    the arena's interpreter and standard library (made once, kept for later arenas)."""
    monkeypatch.setattr(runtime, "_arena_python_open", lambda: False)
    monkeypatch.setattr(runtime, "SYSTEM_PYTHONS", ())
    sandbox = LocalSandbox()
    assert sandbox.runtime.how == "a copy of the arena's Python"
    facts = await show(make_bot("copied", SHOW), sandbox)
    root = str(sandbox.runtime.root)
    assert facts["prefix"] == f"{root}/python" and facts["executable"].startswith(root)
    assert facts["sdk"].startswith(f"{root}/site/")


def test_a_sandbox_where_python_bots_cannot_start_is_refused_with_one_line() -> None:
    """The start-up check: a runtime broken after it was made (msgspec gone) stops the
    arena before any game, with the bot's error and the fix, not a tournament of
    disqualified seats."""
    tmp = Path(tempfile.mkdtemp(prefix="arena-tmpdir-"))
    os.chmod(tmp, 0o755)
    env = {**os.environ, "TMPDIR": str(tmp)}
    command = [ARENA, "play", str(SAMPLES / "random"), str(SAMPLES / "random"), "--sandbox", "local"]
    command += ["--set", "rounds=1"]
    try:
        first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert first.returncode == 0, first.stderr
        (made,) = [p for p in (tmp / "sixarena-runtime").iterdir() if (p / runtime.READY).is_file()]
        shutil.rmtree(made / "site" / "msgspec")
        broken = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert broken.returncode == 2
        lines = broken.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in broken.stderr, broken.stderr
        assert "a Python bot cannot start in this sandbox" in lines[0]
        assert "No module named 'msgspec'" in lines[0] and f"remove {tmp}/sixarena-runtime" in lines[0]
        assert "round" not in broken.stdout, "no game started"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
