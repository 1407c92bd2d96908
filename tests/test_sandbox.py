"""The local sandbox, attacked: who a bot runs as, what it can reach, how it is frozen,
capped and built, and what it leaves behind. Real processes, real bubblewrap, real
cgroups (CI runs as root, as the arena does on a server)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.sandbox.base import BotGone, StartError
from arena.sandbox.local import LocalProcess, LocalSandbox, reachable_by_others

from .conftest import ROOT, SAMPLES, MakeBot, bot_pids

ARENA = str(Path(sys.executable).parent / "arena")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="own users and cgroups need root (CI runs as root)")

PROBE = """
import json, os, resource, sys
sys.stdin.readline()
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"uid": os.getuid(), "pgid": os.getpgid(0), "pid": os.getpid(), "cwd": os.getcwd(),
                  "home": os.environ["HOME"], "as": resource.getrlimit(resource.RLIMIT_AS)[0],
                  "policy": os.sched_getscheduler(0), "caps": status["CapEff"].strip(),
                  "bnd": status["CapBnd"].strip()}), flush=True)
sys.stdin.readline()
"""


async def probe(folder: Path, sandbox: LocalSandbox | None = None) -> dict[str, object]:
    async with trio.open_nursery() as nursery:
        process = await (sandbox or LocalSandbox()).start(load_bot(folder), nursery, 65536)
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            facts = json.loads(await process.receive_line())
        facts["isolation"] = process.isolation
        await process.stop()
    return facts


@as_root
async def test_a_bot_runs_as_a_user_of_its_own_without_capabilities_from_a_sealed_copy(make_bot: MakeBot) -> None:
    folder = make_bot("probe", PROBE)
    facts = await probe(folder)
    assert facts["uid"] != 0 and facts["uid"] != 65534 and int(str(facts["uid"])) >= 0x60000000
    assert int(str(facts["caps"]), 16) == 0 and int(str(facts["bnd"]), 16) == 0, "no capability at all"
    assert str(facts["cwd"]).startswith("/tmp/sixarena-bots/probe-"), "a checked copy, not the author's folder"
    assert facts["as"] == -1, "the address space is not capped (the cgroup caps real memory)"
    assert facts["policy"] == os.SCHED_BATCH
    assert "own unprivileged user" in str(facts["isolation"]) and "own cgroup" in str(facts["isolation"])
    again = await probe(folder)
    assert again["uid"] != facts["uid"], "each bot a user of its own"


@as_root
async def test_a_bot_folder_nobody_can_reach_still_runs_unprivileged(make_bot: MakeBot) -> None:
    """Item 5: a folder under a private directory (like /root) used to make the bot run
    as root, able to remount the read-only binds. It now runs from a copy, as its user."""
    private = Path(tempfile.mkdtemp())  # 0700, like /root
    try:
        hidden = private / "probe"
        make_bot("probe", PROBE).rename(hidden)
        assert not reachable_by_others(hidden)
        facts = await probe(hidden)
        assert facts["uid"] != 0
        assert "as root" not in str(facts["isolation"])
    finally:
        shutil.rmtree(private)


REMOUNT = """
import json, os, subprocess, sys
sys.stdin.readline()
tries = {}
for target in ("/usr", "/etc", os.getcwd()):
    r = subprocess.run(["mount", "-o", "remount,rw,bind", target], capture_output=True)
    try:
        open(os.path.join(target, "arena-was-here"), "w").close()
        wrote = True
    except OSError:
        wrote = False
    tries[target] = [r.returncode, wrote]
print(json.dumps(tries), flush=True)
sys.stdin.readline()
"""


@as_root
async def test_a_bot_cannot_remount_the_read_only_binds(make_bot: MakeBot) -> None:
    folder = make_bot("remount", REMOUNT)
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            tries = json.loads(await process.receive_line())
        await process.stop()
    for target, (code, wrote) in tries.items():
        assert code != 0 and not wrote, f"{target} stayed read-only"
    assert not (folder / "arena-was-here").exists() and not Path("/usr/arena-was-here").exists()


BUBBLE = """
import json, os, socket, sys
sys.stdin.readline()
facts = {"pid": os.getpid(), "tmp": os.listdir("/tmp"), "parent": sorted(os.listdir(os.path.dirname(os.getcwd()))),
         "procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
secrets = []
for pid in facts["procs"]:
    for what in ("cmdline", "environ"):
        try:
            secrets.append(open(f"/proc/{pid}/{what}", "rb").read().decode("latin-1"))
        except OSError:
            pass
facts["seen"] = "\\n".join(secrets) + "\\n" + json.dumps(dict(os.environ))
try:
    socket.create_connection(("127.0.0.1", 22), timeout=1)
    facts["network"] = True
except OSError:
    facts["network"] = False
try:
    with open("/tmp/fill", "wb") as f:
        for _ in range(100):
            f.write(b"x" * (1 << 20))
    facts["tmp_mb"] = 100
except OSError:
    facts["tmp_mb"] = os.path.getsize("/tmp/fill") >> 20
print(json.dumps(facts), flush=True)
sys.stdin.readline()
"""


async def test_bubblewrap_hides_the_machine_and_the_arenas_secrets(make_bot: MakeBot) -> None:
    """Item 8 and 10: no network, its own PID namespace (no other process, hence no
    command line holding the seed, no environment of the arena), a capped /tmp."""
    folder = make_bot("bubble", BUBBLE)
    os.environ["ARENA_TEST_SECRET"] = "s3cr3t-in-the-arena"
    try:
        facts = await probe(folder)
    finally:
        del os.environ["ARENA_TEST_SECRET"]
    assert facts["network"] is False
    assert max(facts["procs"]) < 10, "its own PID namespace"  # type: ignore[type-var]
    assert "s3cr3t-in-the-arena" not in str(facts["seen"])
    assert "pytest" not in str(facts["seen"]), "no other process's command line"
    parent = facts["parent"]
    assert isinstance(parent, list) and len(parent) == 1 and parent[0].startswith("bubble-"), "only its own copy"
    assert 0 < facts["tmp_mb"] <= 64, "/tmp is capped like a container's"  # type: ignore[operator]
    assert "bubblewrap" in str(facts["isolation"])


ESCAPE = """
import os, signal, sys, time
line = sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # its short-lived children reap themselves
        while True:  # thaw everyone it can see, and burn
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        os.kill(int(pid), signal.SIGCONT)
                    except OSError:
                        pass
            if os.fork() == 0:
                os._exit(0)
            t = time.time()
            while time.time() - t < 0.01:
                pass
    os._exit(0)
print("ready", flush=True)
for line in sys.stdin:
    print("ok", flush=True)
"""


@as_root
async def test_a_frozen_bot_cannot_think_through_an_escaped_helper(make_bot: MakeBot) -> None:
    """Item 6: a helper that setsid()s away and keeps forking and SIGCONT-ing used 14-37%
    CPU between its turns. The cgroup freezes everything the bot started, at once."""
    folder = make_bot("escape", ESCAPE)
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
        assert isinstance(process, LocalProcess) and process.cgroup is not None
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"ready"
        await trio.sleep(0.5)  # the helper runs while the bot has the turn
        process.freeze()
        await trio.sleep(0.2)  # let a freeze in progress settle
        before = process.cpu_seconds()
        await trio.sleep(1.0)
        used = process.cpu_seconds() - before
        process.thaw()
        await process.send(b"again\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"ok"
        await process.stop()
    assert used < 0.05, f"the frozen bot used {used * 1000:.0f} ms of CPU in 1 s"
    assert bot_pids(folder) == [], "the escaped helper died with the bot"


BURN = """
import subprocess, sys, json
for line in sys.stdin:
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"])
    print("done", flush=True)
"""


@as_root
async def test_cpu_counts_every_process_of_the_bot(make_bot: MakeBot) -> None:
    """Item 6: under bubblewrap the replay recorded the first child's CPU only."""
    folder = make_bot("burn", BURN)
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
        before = process.cpu_seconds()
        await process.send(b"go\n", 5.0)
        with trio.fail_after(60):
            assert await process.receive_line() == b"done"
        used = process.cpu_seconds() - before
        await process.stop()
    assert used >= 0.35, f"the child's 0.4 s of CPU counted ({used:.3f} s)"


@as_root
async def test_memory_is_capped_by_use_not_by_address_space(make_bot: MakeBot) -> None:
    """Item 7b: a bot reserving 8 GiB of address space it never touches runs; one that
    really uses 2 GiB is killed as out of memory."""
    code = """
import mmap, sys
sys.stdin.readline()
reserved = mmap.mmap(-1, 8 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0))
print("reserved", flush=True)
sys.stdin.readline()
x = bytearray(2 << 30)
print("survived", flush=True)
"""
    folder = make_bot("hungry", code)
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(folder), nursery, 65536)
        await process.send(b"go\n", 5.0)
        with trio.fail_after(30):
            assert await process.receive_line() == b"reserved"
        await process.send(b"eat\n", 5.0)
        with trio.fail_after(60), pytest.raises(BotGone, match="out of memory"):
            await process.receive_line()
        await process.stop()


async def test_the_javascript_sample_survives_a_long_burst_of_requests() -> None:
    """Item 7b: Node.js reserves about 1 GB of address space; under an address-space cap
    the sample died with std::bad_alloc after a burst of requests."""
    from arena.match import GameSpec, MatchSpec
    from arena.referee import play_match

    js = load_bot(SAMPLES / "greedy-js")
    spec = MatchSpec("nimmt", {}, [js] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(40)], fair_time=False)
    result = await play_match(spec, LocalSandbox())
    assert len(result.games) == 40
    assert all(s.status == "ok" for game in result.games for s in game.statuses)


BUILD_LEAVES_A_DAEMON = 'name = "daemon"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\nbuild = "id -u > built-by; (setsid sleep 1000 &) ; true"\n'


@as_root
def test_a_build_runs_unprivileged_and_leaves_nothing_running(make_bot: MakeBot) -> None:
    """Item 7: a process the build left behind held the arena for 300 s."""
    folder = make_bot("daemon", "print()", manifest=BUILD_LEAVES_A_DAEMON)
    sandbox = LocalSandbox()
    started = time.monotonic()
    built = sandbox.prepared(load_bot(folder))
    assert time.monotonic() - started < 60, "the build's leftover did not hold the arena"
    assert int((built.path / "built-by").read_text()) != 0, "built as an unprivileged user"
    leftovers = subprocess.run(["pgrep", "-f", "sleep 1000"], capture_output=True, text=True).stdout.split()
    assert leftovers == [], "nothing the build started survives it"
    shutil.rmtree(built.path)


@as_root
@pytest.mark.parametrize(
    ("build", "reason"),
    [
        ("python3 -c 'x = bytearray(3 << 30)'", "out of memory"),
        ("for i in $(seq 200); do sleep 5 & done; wait", "failed"),
    ],
)
def test_a_build_is_capped_like_play(make_bot: MakeBot, build: str, reason: str) -> None:
    manifest = f'name = "greedy"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\nbuild = "{build}"\n'
    folder = make_bot("greedy", "print()", manifest=manifest)
    with pytest.raises(StartError, match=reason):
        LocalSandbox().prepared(load_bot(folder))
    assert subprocess.run(["pgrep", "-fx", "sleep 5"], capture_output=True).returncode != 0


def test_plain_local_mode_must_be_asked_for_by_name(make_bot: MakeBot, tmp_path: Path) -> None:
    """Item 10: without bubblewrap, `local` refuses (one line naming the fix and the
    unsafe mode), and `unsafe-local` says what it does not protect."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3", "sh", "env"):  # a PATH with no bwrap on it
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    bot = str(SAMPLES / "random")
    refused = subprocess.run(
        [ARENA, "play", bot, bot, "--sandbox", "local", "--set", "rounds=1"], capture_output=True, text=True, env=env
    )
    assert refused.returncode != 0
    assert "bubblewrap is not installed" in refused.stderr and "unsafe-local" in refused.stderr
    assert "Traceback" not in refused.stderr
    unsafe = subprocess.run(
        [ARENA, "play", bot, bot, "--sandbox", "unsafe-local", "--set", "rounds=1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert unsafe.returncode == 0, unsafe.stderr
    assert "network" in unsafe.stderr and "command lines" in unsafe.stderr and "seed" in unsafe.stderr


@as_root
def test_kill_9_of_the_arena_leaves_no_process_cgroup_or_folder(make_bot: MakeBot) -> None:
    """Item 9: the watchdog ends the bots, removes their cgroups and the run folder."""
    from .test_referee import raw_bot

    slow = make_bot(
        "slow", raw_bot('time.sleep(0.2)\nsend({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})')
    )
    proc = subprocess.Popen(
        [ARENA, "play", str(slow), str(slow), str(slow), "--sandbox", "local"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(bot_pids(slow)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(bot_pids(slow)) >= 3, "the bots were running"
    cgroups = list(Path("/sys/fs/cgroup").glob(f"*/sixarena/{proc.pid}-*"))
    assert cgroups, "each bot had a cgroup"
    run = Path(tempfile.gettempdir()) / "sixarena-run" / str(proc.pid)
    os.killpg(proc.pid, 9)
    proc.wait()
    deadline = time.monotonic() + 15
    while (bot_pids(slow) or any(c.exists() for c in cgroups) or run.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bot_pids(slow) == []
    assert not any(c.exists() for c in cgroups)
    assert not run.exists()


def test_a_later_start_removes_what_a_dead_arena_left() -> None:
    from arena.sandbox.leftovers import remove_leftovers, run_root

    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    left = run_root() / str(dead.pid)
    (left / "io-x").mkdir(parents=True)
    made = []
    if os.geteuid() == 0:
        for hierarchy in ("freezer", "pids"):
            cg = Path("/sys/fs/cgroup") / hierarchy / "sixarena" / f"{dead.pid}-1"
            cg.mkdir(parents=True, exist_ok=True)
            made.append(cg)
    assert remove_leftovers() >= 1
    assert not left.exists()
    assert not any(c.exists() for c in made)


def test_reachable_by_others() -> None:
    open_dir = Path(tempfile.mkdtemp())
    try:
        os.chmod(open_dir, 0o755)
        assert reachable_by_others(open_dir)
        os.chmod(open_dir, 0o700)
        assert not reachable_by_others(open_dir)
        assert not reachable_by_others(open_dir / "missing")
    finally:
        os.rmdir(open_dir)


async def test_a_local_bot_outlives_the_thread_that_started_it() -> None:
    """Trio starts processes from worker threads that end after 10 s idle; nothing tied
    to that thread (bubblewrap's --die-with-parent was) may take the bot with it."""
    async with trio.open_nursery() as nursery:
        process = await LocalSandbox().start(load_bot(ROOT / "bench/bots/echo"), nursery, 65536)
        await trio.sleep(12)
        await process.send(b"still there\n", 1.0)
        with trio.fail_after(5):
            assert await process.receive_line() == b"still there"
        await process.stop()


SPY = r"""
import json, os, sys
seen = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for what in ("cmdline", "environ"):
        try:
            seen.append(open(f"/proc/{pid}/{what}", "rb").read().decode("latin-1"))
        except OSError:
            pass
for top in ("/tmp", "/run", "/dev/shm"):
    for folder, dirs, files in os.walk(top):
        seen.append(" ".join(dirs + files))
seen.append(" ".join(os.listdir(os.path.dirname(os.getcwd()))))
print("SPY " + json.dumps(seen)[:20000], file=sys.stderr, flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spy", "version": "1"}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "answer", "id": m["id"], "answer": m["legal"][0]}), flush=True)
"""


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_no_secret_of_the_arena_is_within_a_bots_reach(make_bot: MakeBot, tmp_path: Path, sandbox: str) -> None:
    """Item 10: the seed (on the referee's command line), the arena's environment, other
    seats' processes and pipes: a spy that reads every /proc entry and folder it can
    finds none of them, and what it printed ends in the replay for us to check."""
    from arena.replay import End, read

    spy = make_bot("spy", SPY)
    replay = tmp_path / "game.jsonl"
    seed = "987654321987"
    env = {**os.environ, "ARENA_TEST_SECRET": "s3cr3t-9f8e7d"}
    played = subprocess.run(
        [ARENA, "play", str(spy), str(SAMPLES / "random"), "--seed", seed, "--sandbox", sandbox]
        + ["--set", "rounds=1", "--replay", str(replay)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert played.returncode == 0, played.stderr
    stderr = " ".join(line.stderr[0] for line in read(replay) if isinstance(line, End))
    assert "SPY [" in stderr, "the spy ran and reported"
    assert seed not in stderr and "s3cr3t-9f8e7d" not in stderr
    spied = stderr.split("SPY", 1)[1]
    assert "sample_bots" not in spied and "random-" not in spied, "no other seat's process, folder or pipe"
