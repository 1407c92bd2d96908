"""The Docker sandbox against a real engine: every point of the container policy.

Each test fails if its point is missing. They need a running engine and the base image
(./setup.sh provides both); without them they fail, never skip. ARENA_NO_DOCKER=1
leaves them out on purpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import docker
import pytest
import trio

from arena.bots import content_hash, load_bot
from arena.play.match import GameSpec, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import DecisionLine, EventsLine
from arena.sandbox import images
from arena.sandbox.containers import LABEL, OWNER, UID_RANGE
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.images import ImageError, base_tag, bot_digest, bot_image, bot_tag, build_bot

from ..conftest import SAMPLES, MakeBot
from ..integration.test_referee import faults_of, run_match

pytestmark = pytest.mark.docker

PROBE = r"""
import json, os, socket, subprocess, sys
sys.stdin.readline()
facts = {"uid": os.getuid(), "pid": os.getpid(), "root": sorted(os.listdir("/")),
         "io": sorted(os.listdir("/arena/io")), "bot": sorted(os.listdir("/bot")),
         "nets": sorted(os.listdir("/sys/class/net")), "init": open("/proc/1/cmdline").read()}
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
facts["cap_eff"] = status["CapEff"].strip()
facts["no_new_privs"] = status["NoNewPrivs"].strip()
def attempt(action):
    try:
        action()
        return "ok"
    except Exception as exc:
        return type(exc).__name__
facts["network"] = attempt(lambda: socket.create_connection(("1.1.1.1", 53), timeout=1))
facts["write_bot"] = attempt(lambda: open("/bot/x", "w"))
facts["write_usr"] = attempt(lambda: open("/usr/x", "w"))
facts["write_tmp"] = attempt(lambda: open("/tmp/x", "w").write("hi"))
with open("/tmp/run.sh", "w") as f:
    f.write("#!/bin/sh\necho ran\n")
os.chmod("/tmp/run.sh", 0o755)
facts["exec_tmp"] = attempt(lambda: subprocess.run(["/tmp/run.sh"], check=True))
def fill():
    with open("/tmp/big", "wb") as f:
        for _ in range(200):
            f.write(b"x" * 1024 * 1024)
facts["fill_tmp"] = attempt(fill)
os.remove("/tmp/big")
children = []
def spawn():
    for _ in range(100):
        children.append(subprocess.Popen(["sleep", "30"]))
facts["spawn_100"] = attempt(spawn)
facts["spawned"] = len(children)
for child in children:
    child.kill()
print(json.dumps(facts), flush=True)
sys.stdin.readline()
"""


async def probe(sandbox: DockerSandbox, folder: Path) -> dict[str, Any]:
    bot = load_bot(folder)
    await trio.to_thread.run_sync(sandbox.prepare, bot, lambda line: None)
    async with trio.open_nursery() as nursery:
        process = await sandbox.start(bot, nursery, 65536)
        await process.send(b"go\n", 5.0)
        with trio.fail_after(60):
            facts = json.loads(await process.receive_line())
        facts["attrs"] = process.container.attrs
        await process.stop()
    return facts


@pytest.fixture(scope="module")
def facts(docker_sandbox: DockerSandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("probe") / "probe"
    folder.mkdir()
    (folder / "bot.py").write_text(PROBE)
    (folder / "bot.toml").write_text(
        'name = "probe"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    return trio.run(probe, docker_sandbox, folder)


def test_no_network(facts: dict[str, Any]) -> None:
    assert facts["network"] != "ok"
    assert facts["nets"] == ["lo"]
    assert facts["attrs"]["HostConfig"]["NetworkMode"] == "none"


def test_read_only_root_and_a_small_noexec_tmp(facts: dict[str, Any]) -> None:
    assert facts["write_bot"] == "OSError" and facts["write_usr"] == "OSError"
    assert facts["write_tmp"] == "ok"
    assert facts["exec_tmp"] == "PermissionError", "noexec /tmp"
    assert facts["fill_tmp"] == "OSError", "the /tmp size cap stops a 200 MiB file"


def test_memory_cap_without_swap_cpu_cap_and_process_cap(facts: dict[str, Any]) -> None:
    host = facts["attrs"]["HostConfig"]
    assert host["Memory"] == 1024 * 1024 * 1024 and host["MemorySwap"] == host["Memory"], "no swap beyond the cap"
    assert host["NanoCpus"] == 1_000_000_000
    assert host["PidsLimit"] == 64
    assert facts["spawn_100"] != "ok" and facts["spawned"] < 64


def test_no_capabilities_no_new_privileges_unprivileged_user(facts: dict[str, Any]) -> None:
    assert facts["cap_eff"] == "0000000000000000"
    assert facts["no_new_privs"] == "1"
    assert UID_RANGE[0] <= facts["uid"] <= UID_RANGE[1], "a user of its own, not nobody (host nobody would share it)"
    assert facts["attrs"]["HostConfig"]["CapDrop"] == ["ALL"]


def test_an_init_process_and_no_engine_log(facts: dict[str, Any]) -> None:
    assert "init" in facts["init"], "PID 1 is the engine's init, not the bot"
    assert facts["pid"] != 1
    assert facts["attrs"]["HostConfig"]["LogConfig"]["Type"] == "none"


def test_a_bot_sees_only_its_own_files(facts: dict[str, Any]) -> None:
    assert facts["bot"] == ["bot.py", "bot.toml"]
    assert facts["io"] == ["err", "in", "out"]
    assert "work" not in facts["root"], "nothing of the arena's machine but its own image"
    assert facts["attrs"]["Config"]["Labels"][LABEL] == "bot"


async def test_docker_plays_exactly_as_local(docker_sandbox: DockerSandbox) -> None:
    paths = [SAMPLES / "heuristic", SAMPLES / "random", SAMPLES / "random"]
    for path in paths:
        await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(path), lambda line: None)
    local = await run_match(paths, seed=21, settings={})
    contained = await run_match(paths, seed=21, settings={}, sandbox=docker_sandbox)

    def story(result: Any) -> list[Any]:
        return [
            (line.answers if isinstance(line, DecisionLine) else line.events)
            for line in result.games[0].replay
            if isinstance(line, DecisionLine | EventsLine)
        ]

    assert story(local) == story(contained)
    assert contained.games[0].replay[0].seats[0].isolation.startswith("docker")
    mine = {"label": f"{LABEL}.owner={OWNER}"}  # other arenas on this engine may be running
    # What the match leaves are containers kept for the bots' next processes, each
    # running its init alone; closing the sandbox (or the arena's exit) removes them.
    kept = docker_sandbox.client.api.containers(all=True, filters=mine)
    for found in kept:
        top = docker_sandbox.client.api.top(found["Id"])["Processes"]
        assert len(top) == 1 and "init.py" in " ".join(top[0]), top
    docker_sandbox.close()
    assert docker_sandbox.client.api.containers(all=True, filters=mine) == []


async def test_out_of_memory_is_recorded_as_such(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    hog = make_bot(
        "hog",
        "import json, sys\nsys.stdin.readline()\nprint(json.dumps({'type':'hello','name':'hog','version':'1'}), flush=True)\n"
        "sys.stdin.readline()\nblocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))\n",
    )
    await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(hog), lambda line: None)
    result = await run_match([hog, SAMPLES / "random"], move_ms=20_000, sandbox=docker_sandbox)
    fault = faults_of(result, 0)[0]
    assert fault.kind == "crash"
    assert "out of memory" in fault.message


async def test_a_bot_that_exits_at_once(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    quitter = make_bot("quitter", "import sys\nsys.stderr.write('cannot go on\\n')\nsys.exit(4)\n")
    await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(quitter), lambda line: None)
    result = await run_match([quitter, SAMPLES / "random"], sandbox=docker_sandbox)
    fault = result.games[0].statuses[0].faults[0]
    assert fault.kind == "crash" and "exit" in fault.message and "code 4" in fault.message
    assert "cannot go on" in (fault.stderr or "")


def test_build_command_runs_inside_without_network(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    folder = make_bot(
        "builder",
        manifest='name = "builder"\nversion = "1"\nlanguage = "sh"\nrun = "cat built"\ngames = ["nimmt"]\n'
        'build = "python3 -c \\"import socket; socket.create_connection((\'1.1.1.1\', 53), timeout=1)\\" || echo offline > built"\n',
    )
    bot = load_bot(folder)
    tag = build_bot(docker_sandbox.client, bot, progress=lambda line: None)
    assert tag == bot_tag(bot, bot_digest(content_hash(folder), base_tag(docker_sandbox.client)))
    out = docker_sandbox.client.containers.run(tag, ["cat", "/bot/built"], remove=True, network_mode="none")
    assert out.strip() == b"offline"


def test_a_failing_build_names_the_command(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    folder = make_bot(
        "broken",
        manifest='name = "broken"\nversion = "1"\nlanguage = "c"\nrun = "./a.out"\ngames = ["nimmt"]\nbuild = "cc nothing.c"\n',
    )
    with pytest.raises(ImageError, match="the build command 'cc nothing.c' failed"):
        build_bot(docker_sandbox.client, load_bot(folder), progress=lambda line: None)


def test_an_image_that_is_not_ours_is_refused(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    folder = make_bot("impostor", "")
    bot = load_bot(folder)
    client = docker_sandbox.client
    tag = bot_tag(bot, bot_digest(content_hash(folder), base_tag(client)))
    base = client.images.get(base_tag(client))
    base.tag(*tag.split(":"))
    try:
        with pytest.raises(ImageError, match="not built by the arena"):
            bot_image(client, bot)
    finally:
        client.images.remove(tag)


def test_leftovers_of_a_killed_run_are_removed(docker_sandbox: DockerSandbox) -> None:
    client = docker_sandbox.client
    stale = client.containers.create(
        base_tag(client), ["sleep", "60"], labels={LABEL: "bot", f"{LABEL}.owner": f"{socket.gethostname()}:999999999"}
    )
    DockerSandbox(client=client)
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(stale.id)


def test_cli_plays_in_docker_and_image_build_is_idempotent() -> None:
    arena = str(Path(sys.executable).parent / "arena")
    again = subprocess.run([arena, "image", "build"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "already built" in again.stdout
    played = subprocess.run(
        [
            arena,
            "play",
            str(SAMPLES / "heuristic"),
            str(SAMPLES / "random"),
            "--sandbox",
            "docker",
            "--seed",
            "2",
            "--set",
            "rounds=1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    assert "sandbox: docker" in played.stdout


def test_ctrl_c_removes_every_container(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    from .test_cli import SLOW, interrupt_mid_game, unique

    name = unique("slowpoke")
    slow = make_bot(name, SLOW)
    docker_sandbox.prepare(load_bot(slow), lambda line: None)
    client = docker_sandbox.client

    def ours() -> list[Any]:
        return list(client.api.containers(all=True, filters={"label": f"{LABEL}.bot={name}"}))

    code, err = interrupt_mid_game(slow, "docker", lambda: len(ours()) >= 2)
    assert code == 130, err
    assert "interrupted" in err
    assert ours() == [], "the interrupted referee removed its containers"


def test_a_run_command_that_is_not_there(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    typo = make_bot("typo", run="pyhton3 bot.py")
    with pytest.raises(ImageError, match="'pyhton3' was not found in the image"):
        build_bot(docker_sandbox.client, load_bot(typo), force=True, progress=lambda line: None)


async def test_fair_time_stops_a_container_while_others_think(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    from ..integration.test_referee import cpu_while_others_think

    fair = await cpu_while_others_think(make_bot, fair_time=True, sandbox=docker_sandbox)
    unfair = await cpu_while_others_think(make_bot, fair_time=False, sandbox=docker_sandbox)
    assert unfair > 100, f"without stopping, the spinner burns the sleeper's 150 ms ({unfair} ms)"
    assert fair < 30, f"stopped, it gets almost nothing ({fair} ms)"


# --- the base: the SDK layer, rebuilt when the SDK changes ------------------------------

SDK_PROBE = r"""
import hashlib, json, os, sys
sys.stdin.readline()
import protocol, protocol.sixes
root = os.path.dirname(protocol.__file__)
files = {}
for folder, dirs, names in os.walk(root):
    dirs[:] = [d for d in dirs if d != "__pycache__"]
    for name in names:
        path = os.path.join(folder, name)
        files[os.path.relpath(path, root)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
print(json.dumps({"where": root, "files": files}), flush=True)
sys.stdin.readline()
"""


def host_sdk(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_sdk_in_the_container_is_the_hosts(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    seen = trio.run(probe, docker_sandbox, make_bot("sdkprobe", SDK_PROBE))
    assert seen["where"] == f"{images.SITE_PACKAGES}/protocol"
    assert seen["files"] == host_sdk(images.protocol_dir())
    assert "sixes.py" in seen["files"]


def test_a_new_sdk_makes_a_new_base_and_new_bot_images(
    docker_sandbox: DockerSandbox, make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    client = docker_sandbox.client
    bot = load_bot(make_bot("sdkprobe", SDK_PROBE))
    old_base = base_tag(client)
    docker_sandbox.prepare(bot, lambda line: None)
    old_image = bot_image(client, bot, build_missing=False)

    sdk = tmp_path / "protocol"
    shutil.copytree(images.protocol_dir(), sdk, ignore=shutil.ignore_patterns("__pycache__"))
    (sdk / "added.py").write_text(f"TOKEN = {uuid.uuid4().hex!r}\n")
    monkeypatch.setattr(images, "protocol_dir", lambda: sdk)
    new_base = base_tag(client)
    assert new_base != old_base and new_base.startswith("sixarena-base:sdk-")
    assert not images.base_exists(client)
    with pytest.raises(ImageError, match="no image"):
        bot_image(client, bot, build_missing=False)
    root = images._root_image(client)
    try:
        lines: list[str] = []
        docker_sandbox.prepare(bot, lines.append)  # builds the SDK layer, then the bot's image on it
        new_image = bot_image(client, bot, build_missing=False)
        built = [line.split(" (")[0] for line in lines if line.startswith("built ")]
        assert built == [f"built {new_base}", f"built {new_image}"], "the SDK layer is cheap: it and the bot, no more"
        assert root is not None and images._root_image(client).id == root.id, "the layers under it stay"
        assert new_image != old_image
        labels = client.images.get(new_image).labels
        assert labels[f"{LABEL}.base"] == new_base and labels[f"{LABEL}.content"] == content_hash(bot.path)
        seen = trio.run(probe, docker_sandbox, bot.path)
        assert seen["files"] == host_sdk(sdk), "the new base holds the changed SDK"
        assert "added.py" in seen["files"]
    finally:
        for tag in (bot_tag(bot, bot_digest(content_hash(bot.path), new_base)), new_base):
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(tag)
    monkeypatch.undo()
    assert base_tag(client) == old_base and bot_image(client, bot, build_missing=False) == old_image


async def test_a_sixes_bot_plays_in_docker(docker_sandbox: DockerSandbox) -> None:
    bots = [load_bot(SAMPLES / "sixes-random")] * 3
    await trio.to_thread.run_sync(docker_sandbox.prepare, bots[0], lambda line: None)
    spec = MatchSpec(
        "sixes", {"chips": 4, "max_rounds": 3}, bots, [GameSpec(3, [0, 1, 2])], TimeLimits(1000, 10_000, 30_000)
    )
    game = (await play_match(spec, docker_sandbox)).games[0]
    assert [status.status for status in game.statuses] == ["ok"] * 3, [s.faults for s in game.statuses]
