"""The Docker sandbox against attacks (issue 11): another host user at a bot's pipes, a
bot that keeps forking to dodge being stopped, builds that grab memory, processes and
disk or try root's powers, and a killed arena's leftovers.

Real engine, real bot folders, real arena processes; margins wide enough for a busy
two-core machine. They need a running engine and the base image, as tests/e2e/test_docker.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest
import trio

from arena.bots import load_bot
from arena.play.replay import Header
from arena.sandbox import builds, containers
from arena.sandbox.builds import BUILD_DISK_MB
from arena.sandbox.containers import LABEL, OWNER, UID_RANGE, remove_stale_containers_if_any
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.images import ImageError, base_tag, bot_digest, bot_tag, build_bot
from arena.sandbox.leftovers import run_dir

from ..conftest import MakeBot
from ..integration.test_referee import faults_of, raw_bot, run_match

pytestmark = pytest.mark.docker

ARENA = str(Path(sys.executable).parent / "arena")
NOBODY = 65534

PATIENT = """
import time
from protocol.bot import Bot, run


class Patient(Bot):
    name, version = "patient", "1"

    def decide(self, kind, view, legal):
        time.sleep(0.05)
        return legal[0]


run(Patient())
"""

OUTSIDER = r"""
import json, os, sys
facts = {}
def attempt(name, action):
    try:
        action()
        facts[name] = "ok"
    except OSError as exc:
        facts[name] = type(exc).__name__
for folder in sys.argv[1:]:
    attempt("list " + folder, lambda: os.listdir(folder))
    attempt("read " + folder, lambda: os.close(os.open(folder + "/out", os.O_RDONLY | os.O_NONBLOCK)))
    attempt("write " + folder, lambda: os.close(os.open(folder + "/in", os.O_WRONLY | os.O_NONBLOCK)))
    attempt("spy " + folder, lambda: os.close(os.open(folder + "/in", os.O_RDONLY | os.O_NONBLOCK)))
print(json.dumps(facts))
"""


def as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def io_folders() -> list[Path]:
    """The folders holding a bot process's pipes: a container's own, or those of each
    process of a container kept for a bot's processes (a folder in the container's)."""
    return sorted(
        pipe.parent for pattern in ("arena-io-*/in", "arena-io-*/arena-io-*/in") for pipe in run_dir().glob(pattern)
    )


def labelled(client: docker.DockerClient, *labels: str) -> list[str]:
    """The ids of the containers with all these labels, in one call (another arena, or
    the watchdog, may be removing some meanwhile)."""
    return [found["Id"] for found in client.api.containers(all=True, filters={"label": list(labels)})]


def mine(client: docker.DockerClient, bot: str) -> list[str]:
    """This arena's containers of bot ``bot`` (other arenas may share the engine)."""
    return labelled(client, f"{LABEL}.owner={OWNER}", f"{LABEL}.bot={bot}")


# --- 4: the named pipes are the referee's and the container's alone ---------------------


async def test_another_host_user_cannot_reach_a_bots_pipes(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    patient = make_bot("patient", PATIENT)
    await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(patient), lambda line: None)
    seen: dict[str, Any] = {}

    async def outsider() -> None:
        with trio.fail_after(60):
            while len(io_folders()) < 2:
                await trio.sleep(0.01)
        folders = io_folders()
        seen["modes"] = {
            str(path): (oct(path.stat().st_mode & 0o777), path.stat().st_uid)
            for folder in folders
            for path in (folder, folder / "in", folder / "out", folder / "err")
        }
        probe = await trio.run_process(
            ["/usr/bin/python3", "-I", "-c", OUTSIDER, *map(str, folders)],
            capture_stdout=True,
            preexec_fn=as_nobody,
        )
        seen["outsider"] = json.loads(probe.stdout)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(outsider)
        result = await run_match([patient, patient], move_ms=5000, sandbox=docker_sandbox)
    outsider_facts = seen["outsider"]
    assert len(outsider_facts) == 8 and set(outsider_facts.values()) == {"PermissionError"}, outsider_facts
    for path, (mode, uid) in seen["modes"].items():
        assert mode == ("0o700" if "arena-io-" in Path(path).name else "0o600"), (path, mode)
        assert UID_RANGE[0] <= uid <= UID_RANGE[1], "owned by the container's own user, not by nobody"
    uids = {uid for _, uid in seen["modes"].values()}
    assert len(uids) == 2, "each container has its own user"
    game = result.games[0]
    assert [s.status for s in game.statuses] == ["ok", "ok"], [s.faults for s in game.statuses]
    assert faults_of(result, 0) == [] and faults_of(result, 1) == []
    assert io_folders() == [], "the pipe folders go with the game"
    docker_sandbox.close()
    assert list(run_dir().glob("arena-io-*")) == [], "and the containers' folders with the sandbox"
    header = game.replay[0]
    assert isinstance(header, Header)
    assert all("unprivileged user" in seat.isolation for seat in header.seats)


# --- 6: frozen whole, however it forks --------------------------------------------------

ESCAPER = r"""
import os, signal, sys
sys.stdin.readline()
for worm in range(2):
    if os.fork() == 0:
        os.setsid()  # a session of its own: out of any process group the arena might stop
        while True:  # hop to a new pid all the time: a list of pids read is stale at once
            try:
                if os.fork() > 0:
                    os._exit(0)
            except OSError:
                pass
            try:
                os.kill(-1, signal.SIGCONT)  # wake every sibling someone stopped
            except OSError:
                pass
print("ready", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
"""


HANG_S = 120
"""Only turns a hang into a failure: no test here claims a speed."""


async def frozen_whole(process: Any) -> None:
    """Until the container's cgroup reads frozen (its last task stopped), however busy the machine."""
    with trio.fail_after(HANG_S):
        while not any(word in os.pread(process._freezer._read_fd, 256, 0) for word in (b"frozen 1", b"FROZEN")):
            await trio.sleep(0.01)


async def test_a_bot_that_keeps_forking_is_frozen_whole(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    escaper = load_bot(make_bot("escaper", ESCAPER))
    await trio.to_thread.run_sync(docker_sandbox.prepare, escaper, lambda line: None)
    async with trio.open_nursery() as nursery:
        process = await docker_sandbox.start(escaper, nursery, 65536)
        try:
            await process.send(b"go\n", 5.0)
            with trio.fail_after(30):
                assert await process.receive_line() == b"ready"
            await trio.sleep(0.5)  # the helper is forking by now
            for turn in range(3):
                process.freeze()
                await frozen_whole(process)  # freezing is asynchronous; CPU counts from here
                before = process.cpu_seconds()
                await trio.sleep(1.0)
                frozen = process.cpu_seconds() - before
                assert frozen < 0.05, f"turn {turn}: {frozen * 1000:.0f} ms of CPU while frozen"
                process.thaw()
                await process.send(b"next\n", 5.0)
                with trio.fail_after(10):
                    assert await process.receive_line() == b"ok", "thawed: it answers"
                before = process.cpu_seconds()
                with trio.fail_after(HANG_S):  # the attack runs when thawed: the test tests something
                    while process.cpu_seconds() - before <= 0.1:
                        await trio.sleep(0.05)
            # An arena that may not write the freezer (not root) uses the engine's pause.
            process._freezer.close()
            process.freeze()
            await trio.sleep(0.1)
            assert process.container.client.api.inspect_container(process.container.id)["State"]["Paused"]
            before = process.cpu_seconds()
            await trio.sleep(0.5)
            assert process.cpu_seconds() - before < 0.05
            process.thaw()
            assert not process.container.client.api.inspect_container(process.container.id)["State"]["Paused"]
        finally:
            await process.stop()
    assert mine(docker_sandbox.client, "escaper") == []


# --- 7: builds under the caps of play ---------------------------------------------------


def build_manifest(name: str, build: str, run: str = "python3 bot.py") -> str:
    return f'name = "{name}"\nversion = "1"\nlanguage = "sh"\nrun = "{run}"\ngames = ["nimmt"]\nbuild = {json.dumps(build)}\n'


@pytest.mark.parametrize(
    ("name", "build", "cap"),
    [
        (
            "memhog",
            "python3 -c \"x = b'x' * (1536 << 20)\"; sleep 3600",
            "out of memory (the cap is 1024 MiB, no swap)",
        ),
        ("forker", "for i in $(seq 150); do sleep 3600 & done; wait", "the process cap (64 processes and threads)"),
        (
            "filler",
            "dd if=/dev/zero of=big bs=1M count=300; for i in 1 2; do dd if=/dev/zero of=more$i bs=1M count=100; done; sleep 3600",
            f"over the disk cap ({BUILD_DISK_MB} MiB)",
        ),
    ],
)
def test_a_build_past_a_cap_is_stopped_and_leaves_nothing(
    docker_sandbox: DockerSandbox, make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, name: str, build: str, cap: str
) -> None:
    """Each build goes on (an hour's sleep) once past its cap: one not stopped when the cap
    was hit runs into the time cap, and says so instead of naming the cap."""
    monkeypatch.setattr(builds, "BUILD_SECONDS", 180)  # the time cap, shortened: a failure shows in minutes
    client = docker_sandbox.client
    bot = load_bot(make_bot(name, manifest=build_manifest(name, build)))
    with pytest.raises(ImageError) as caught:
        build_bot(client, bot, force=True, progress=lambda line: None)
    message = str(caught.value)
    assert cap in message and str(bot.path) in message and name in message, message
    assert "time cap" not in message, "stopped when the cap was hit, not at the end"
    assert len(message.splitlines()) == 1, message
    assert mine(client, name) == [], "no container left"
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(bot_tag(bot, bot_digest(bot_hash(bot), base_tag(client))))


def bot_hash(bot: Any) -> str:
    from arena.bots import content_hash

    return content_hash(bot.path)


def test_a_build_runs_as_its_own_user_without_capabilities(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    client = docker_sandbox.client
    build = (
        "id -u > uid; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status > caps; grep NoNewPrivs /proc/self/status >> caps;"
        " (chown 0 uid && echo chowned || echo refused) > chown 2>/dev/null; ulimit -f > fsize"
    )
    bot = load_bot(make_bot("whoami", manifest=build_manifest("whoami", build, run="cat uid")))
    tag = build_bot(client, bot, force=True, progress=lambda line: None)
    try:
        out = client.containers.run(
            tag, ["cat", "uid", "caps", "chown", "fsize"], remove=True, network_mode="none", user="12345"
        ).decode()
    finally:
        client.images.remove(tag)
    uid, *rest = out.splitlines()
    assert int(uid) != 0
    if os.geteuid() == 0:
        assert UID_RANGE[0] <= int(uid) <= UID_RANGE[1]
    caps = dict(line.split(":") for line in rest[:4])
    assert {key: value.strip() for key, value in caps.items()} == {
        "CapPrm": "0000000000000000",
        "CapEff": "0000000000000000",
        "CapBnd": "0000000000000000",
        "NoNewPrivs": "1",
    }
    assert rest[4] == "refused", "no root powers: chown to root fails"
    assert int(rest[5]) * 512 == BUILD_DISK_MB << 20, "a file may not outgrow the disk cap"
    assert mine(client, "whoami") == []


# --- 9: nothing outlives a killed arena -------------------------------------------------

SLOW = raw_bot("time.sleep(60)")


def test_kill_9_of_an_arena_leaves_no_container_and_no_pipe_folder(
    docker_sandbox: DockerSandbox, make_bot: MakeBot
) -> None:
    slow = make_bot("sleepy", SLOW)
    docker_sandbox.prepare(load_bot(slow), lambda line: None)
    client = docker_sandbox.client
    proc = subprocess.Popen(
        [ARENA, "play", str(slow), str(slow), "--move-time", "30", "--sandbox", "docker"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    owner = f"{LABEL}.owner={socket.gethostname()}:{proc.pid}"
    run_folder = run_dir().parent / str(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(labelled(client, owner)) == 2 and len(list(run_folder.glob("arena-io-*"))) == 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the arena did not start its two containers")
        time.sleep(1.0)  # one bot deciding, the other frozen
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (labelled(client, owner) or run_folder.exists()):
        time.sleep(0.1)
    assert labelled(client, owner) == [], "the watchdog removed the containers"
    assert not run_folder.exists(), "and the pipe folders"


def test_an_arena_start_removes_what_dead_arenas_left(
    docker_sandbox: DockerSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The containers are the test's own: under a label of its own, which no other arena
    on this engine sweeps (any would remove a dead arena's containers first)."""
    label = f"{LABEL}-test-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setattr(containers, "LABEL", label)
    client = docker_sandbox.client
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = socket.gethostname()
    stale = [
        client.containers.create(
            base_tag(client), ["sleep", "60"], labels={label: "bot", f"{label}.owner": f"{host}:{dead.pid}"}
        ),
        # Our own pid, but a different start: a dead arena whose pid was reused.
        client.containers.create(
            base_tag(client),
            ["sleep", "60"],
            labels={label: "build", f"{label}.owner": OWNER, f"{label}.started": "1"},
        ),
    ]
    alive = client.containers.create(base_tag(client), ["sleep", "60"], labels={label: "bot", f"{label}.owner": OWNER})
    try:
        stale[0].start()
        assert remove_stale_containers_if_any() == 2, "both dead arenas' containers, and no other"
        for container in stale:
            with pytest.raises(docker.errors.NotFound):
                client.containers.get(container.id)
        assert client.containers.get(alive.id), "a live arena's container stays"
    finally:
        for container in (*stale, alive):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass


def test_clearing_leftovers_is_free_without_an_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No engine: one connection tried, refused at once; nothing waits for an answer and
    no Docker client is made."""
    probes: list[tuple[str, Any]] = []

    class Probe(socket.socket):
        def connect(self, address: Any) -> None:
            probes.append(("connect", address))
            super().connect(address)

        def recv(self, size: int, flags: int = 0) -> bytes:
            probes.append(("recv", size))  # waiting for an answer
            return super().recv(size, flags)

    def no_client(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a Docker client was made with no engine there")

    monkeypatch.setattr(socket, "socket", Probe)
    monkeypatch.setattr(containers.docker, "DockerClient", no_client)
    path = f"{tmp_path}/no-engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    assert remove_stale_containers_if_any(timeout=30) == 0
    (tmp_path / "no-engine.sock").touch()  # there, but nothing answers: no error either
    assert remove_stale_containers_if_any(timeout=30) == 0
    assert probes == [("connect", path), ("connect", path)], "each start tries once, and waits for nothing"
