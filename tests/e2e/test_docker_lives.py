"""A container kept for a bot's processes keeps nothing of one process for the next.

The Docker sandbox starts a bot's processes one after another in one container
(``arena.sandbox.container_init``). This bot, in each of its lives, looks for what an
earlier life of its own, or the bot in the other seat, could have left, then leaves all
it can: files in /tmp, /dev/shm and /dev/mqueue (a POSIX message queue), a SysV shared
memory segment, message queue and semaphore set, a process that survives its parent in a
session of its own under another name and holds an abstract unix socket, and a count
of what it made (processes, files, segments) that the next life could read off the
numbers it is given. It also tries to write its pipes' folder, read the container's
cgroup counters, and reach the init. Real containers on the real engine.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
import trio

from arena.bots import load_bot
from arena.play.match import GameSpec, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import End
from arena.sandbox.base import StartError
from arena.sandbox.containers import LABEL, OWNER
from arena.sandbox.docker import DockerSandbox
from protocol.messages import Hello, Limits, encode

from ..conftest import SAMPLES, MakeBot

pytestmark = pytest.mark.docker

LEAVER = r"""
import ctypes, json, os, socket, sys, time

TAG = sys.argv[1]                      # which bot this is (the two seats differ)
ME = TAG + "-" + os.urandom(4).hex()   # which life
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_PRIVATE = 0o1000, 0

def say(*words):
    print(*words, file=sys.stderr, flush=True)

def found(what):
    say("FOUND", ME, what)

def look():
    for place in ("/tmp", "/dev/shm", "/dev/mqueue", "/var/tmp", "/arena/io"):
        try:
            names = os.listdir(place)
        except OSError:
            continue
        for name in names:
            if place != "/arena/io" and name.startswith("left-"):
                found(f"file {place}/{name}")
            if place == "/arena/io" and name not in ("in", "out", "err"):
                found(f"file {place}/{name}")
    for kind in ("shm", "msg", "sem"):
        try:
            rows = open(f"/proc/sysvipc/{kind}").read().splitlines()[1:]
        except OSError:
            rows = []
        if rows:
            found(f"sysv {kind} {rows}")
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in (1, os.getpid()):
            try:
                comm = open(f"/proc/{pid}/comm").read().strip()
            except OSError:
                comm = "?"
            found(f"process {pid} {comm}")
    for name in ("left", "left-" + TAG.split("-")[0]):
        with socket.socket(socket.AF_UNIX) as peer:
            try:
                peer.connect("\0" + name)
                found(f"abstract socket {name}")
            except OSError:
                pass
    try:
        if os.listdir("/sys/fs/cgroup"):
            found(f"the container's cgroup files {os.listdir('/sys/fs/cgroup')}")
    except OSError:
        pass
    for attempt in ("/proc/1/mem", "/proc/1/environ", "/proc/1/fd"):
        try:
            os.listdir(attempt) if attempt.endswith("fd") else open(attempt, "rb").close()
            found(f"the init reachable through {attempt}")
        except OSError:
            pass
    try:
        open("/arena/io/x", "w").write("x")
        found("a writable pipes folder")
    except OSError:
        pass
    # Counters the last life could have moved: the numbers this life is handed.
    with open("/tmp/probe", "w"):
        pass
    shm = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    libc.shmctl(shm, 0, None)
    say("LIFE", ME, json.dumps({"pid": os.getpid(), "ino": os.stat("/tmp/probe").st_ino, "shm": shm,
                                 "host": socket.gethostname()}))
    os.remove("/tmp/probe")

def leave():
    for place in ("/tmp", "/dev/shm", "/dev/mqueue", "/var/tmp", "/arena/io"):
        try:
            os.close(os.open(f"{place}/left-{ME}", os.O_CREAT | os.O_WRONLY, 0o644))
        except OSError:
            pass
    libc.shmget(IPC_PRIVATE, 65536, IPC_CREAT | 0o666)
    libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o666)
    libc.semget(IPC_PRIVATE, 3, IPC_CREAT | 0o666)
    for n in range(200):                       # move the counters: files, processes, segments
        open(f"/tmp/count-{n}", "w").close()
        os.remove(f"/tmp/count-{n}")
        libc.shmctl(libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600), 0, None)
        if os.fork() == 0:
            os._exit(0)
        os.wait()
    if os.fork() == 0:                         # a process that outlives its parent, hidden
        os.setsid()
        if os.fork() == 0:
            libc.prctl(15, b"kworker/0:1", 0, 0, 0)   # PR_SET_NAME
            listener = socket.socket(socket.AF_UNIX)
            try:
                listener.bind("\0left")
                listener.listen()
            except OSError:
                pass
            for fd in (0, 1, 2):
                os.close(fd)
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()

look()
leave()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "leaver", "version": "1", "accept": True}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]}), flush=True)
    elif msg["type"] == "bye":
        break
"""


async def test_nothing_of_a_process_reaches_the_next_in_its_container(
    docker_sandbox: DockerSandbox, make_bot: MakeBot
) -> None:
    tag = uuid.uuid4().hex[:8]
    paths = [make_bot(f"leaver-{tag}-{n}", LEAVER, run=f"python3 bot.py {tag}{n}-x") for n in "ab"]
    bots = [load_bot(path) for path in paths]
    for bot in bots:
        await trio.to_thread.run_sync(docker_sandbox.prepare, bot, lambda line: None)
    # One deal, four times: four lives a bot (a process never plays a deal twice).
    games = [GameSpec(7, [n % 2, (n + 1) % 2]) for n in range(4)]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, games, TimeLimits(5000, 0, 20_000))
    result = await play_match(spec, docker_sandbox)
    text = "\n".join(e for g in result.games for e in (g.replay[-1].stderr if isinstance(g.replay[-1], End) else []))
    assert "FOUND" not in text, text
    lives = [line.split(" ", 2) for line in text.splitlines() if line.startswith("LIFE")]
    assert len(lives) == 8, text  # 2 bots, 4 processes each
    facts = [json.loads(words[2]) for words in lives]
    # The containers were reused: fewer hostnames (containers) than processes...
    assert len({f["host"] for f in facts}) < len(facts), facts
    # ...yet every process was handed the same numbers, whatever the last one made.
    assert len({(f["pid"], f["ino"], f["shm"]) for f in facts}) == 1, facts
    # No process of any life outlives it: each kept container runs its init alone.
    mine = {"label": f"{LABEL}.owner={OWNER}"}
    for found in docker_sandbox.client.api.containers(filters=mine):
        top = docker_sandbox.client.api.top(found["Id"])["Processes"]
        assert len(top) == 1 and re.search(r"init\.py", " ".join(top[0])), top


async def test_where_namespaces_cannot_be_made_a_container_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """No seccomp filter to put on a process (no libseccomp; a security module that
    forbids the namespaces says so the same way): the sandbox starts the bot in a
    container of its own under the engine's profile, as before, and says why."""
    import arena.sandbox.docker as sandbox_module

    def no_filter() -> bytes:
        raise StartError("the local sandbox's seccomp filter needs libseccomp")

    monkeypatch.setattr(sandbox_module, "bot_filter", no_filter)
    sandbox = DockerSandbox()
    try:
        bot = load_bot(SAMPLES / "random")
        await trio.to_thread.run_sync(sandbox.prepare, bot, lambda line: None)
        hello = encode(Hello(1, "nimmt", {}, 0, 2, Limits(1000, 10000, 10000)))
        async with trio.open_nursery() as nursery:
            process = await sandbox.start(bot, nursery, 65536)
            try:
                await process.send(hello, 10)
                with trio.fail_after(60):
                    assert b'"hello"' in await process.receive_line()
                assert not sandbox.reuse and "libseccomp" in sandbox.refusal
                assert process.container.attrs["HostConfig"]["Init"] is True, "the engine's init"
            finally:
                await process.stop()
    finally:
        sandbox.close()
