"""``arena worker``: a machine joins a real Dask scheduler only when its sandbox works.

Every test starts its own processes (a scheduler, a worker with its nanny) in sessions
of their own and kills those sessions at the end, so nothing is left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import one_clean_line

ARENA = str(Path(sys.executable).parent / "arena")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop ``proc`` and everything in its session (a worker's nanny and its child)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=10)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what the session left, if anything
    except ProcessLookupError:
        pass


@pytest.fixture
def scheduler() -> Iterator[str]:
    """A real Dask scheduler on a free loopback port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the scheduler did not come up")
        yield f"tcp://127.0.0.1:{port}"
    finally:
        stop(proc)


ASK_WORKERS = """
import json, sys, time
from distributed import Client
with Client(sys.argv[1], timeout=30) as client:
    deadline = time.monotonic() + 60
    while not client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = client.scheduler_info()["workers"]
    sandboxes = client.run(lambda: __import__("os").environ.get("ARENA_WORKER_SANDBOX"))
    print(json.dumps({
        "workers": [
            {"name": w["name"], "nthreads": w["nthreads"], "resources": w["resources"]} for w in workers.values()
        ],
        "sandboxes": sorted(sandboxes.values()),
    }))
"""


def test_a_worker_joins_with_its_slots_and_its_checked_sandbox(scheduler: str) -> None:
    worker = subprocess.Popen(
        [ARENA, "worker", scheduler, "--slots", "3", "--sandbox", "local", "--name", "w1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        asked = subprocess.run(
            [sys.executable, "-c", ASK_WORKERS, scheduler], capture_output=True, text=True, timeout=120
        )
        assert asked.returncode == 0, asked.stderr
        seen = json.loads(asked.stdout)
    finally:
        stop(worker)
        said = worker.stdout.read().decode() if worker.stdout else ""
        if worker.stdout:
            worker.stdout.close()
    assert seen["workers"] == [{"name": "w1", "nthreads": 3, "resources": {"slots": 3.0}}]
    assert seen["sandboxes"] == ["local"], "the worker plays in the sandbox it checked"
    assert "sandbox works here" in said and "3 slots" in said


def test_a_worker_without_a_working_sandbox_refuses_to_join(tmp_path: Path) -> None:
    """No bubblewrap on its PATH: one line naming the fix, and it never reaches the
    scheduler (nothing listens on this address: a worker that tried would hang)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3", "sh", "env"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    address = f"tcp://127.0.0.1:{free_port()}"
    refused = subprocess.run(
        [ARENA, "worker", address, "--sandbox", "local"], capture_output=True, text=True, timeout=60, env=env
    )
    one_clean_line(refused, "bubblewrap is not installed")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["tcp://127.0.0.1:1", "--sandbox", "unsafe-local"], "a worker plays in docker or local"),
        (["127.0.0.1:8786"], "is not a scheduler address: tcp://HOST:PORT"),
        (["tcp://127.0.0.1:1", "--slots", "0"], "--slots"),
    ],
)
def test_bad_worker_arguments_are_one_line(args: list[str], says: str) -> None:
    result = subprocess.run([ARENA, "worker", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert says in result.stdout + result.stderr
