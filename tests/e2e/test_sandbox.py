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
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.bots import load_bot
from arena.sandbox.base import BotGone, StartError
from arena.sandbox.local import (
    LocalProcess,
    LocalSandbox,
    copies_root,
    is_ready,
    prepared_dir,
    reachable_by_others,
    ready_marker,
)

from ..conftest import ROOT, SAMPLES, MakeBot, bot_pids

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
    assert str(facts["cwd"]).startswith(f"{copies_root()}/probe-"), "a checked copy, not the author's folder"
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
    from arena.play.match import GameSpec, MatchSpec
    from arena.play.referee import play_match

    js = load_bot(SAMPLES / "greedy-js")
    spec = MatchSpec("nimmt", {}, [js] * 4, [GameSpec(seed, [0, 1, 2, 3]) for seed in range(40)], fair_time=False)
    result = await play_match(spec, LocalSandbox())
    assert len(result.games) == 40
    assert all(s.status == "ok" for game in result.games for s in game.statuses)


BUILD_LEAVES_A_DAEMON = 'name = "daemon"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\nbuild = "id -u > built-by; (setsid sleep 1017 &) ; true"\n'


@as_root
def test_a_build_runs_unprivileged_and_leaves_nothing_running(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 7: a process the build left behind held the arena for 300 s. Held, the build
    would run into its time cap (shortened here) and be refused; it is not."""
    monkeypatch.setattr("arena.sandbox.local.BUILD_SECONDS", 120)
    folder = make_bot("daemon", "print()", manifest=BUILD_LEAVES_A_DAEMON)
    sandbox = LocalSandbox()
    built = sandbox.prepared(load_bot(folder))  # the build's leftover did not hold the arena
    assert int((built.path / "built-by").read_text()) != 0, "built as an unprivileged user"
    leftovers = subprocess.run(["pgrep", "-f", "sleep 1017"], capture_output=True, text=True).stdout.split()
    assert leftovers == [], "nothing the build started survives it"
    shutil.rmtree(built.path)


@as_root
@pytest.mark.parametrize(
    ("build", "reason", "leftover"),
    [
        ("python3 -c 'x = bytearray(3 << 30)'", "out of memory", r"bytearray\(3 << 30\)"),
        ("for i in $(seq 200); do sleep 5.017 & done; wait", "failed", r"sleep 5\.017"),
    ],
)
def test_a_build_is_capped_like_play(make_bot: MakeBot, build: str, reason: str, leftover: str) -> None:
    """Each case looks only for what its own build started: the cases may run side by side
    on other test workers, and one's children are not the other's leftovers."""
    manifest = f'name = "greedy"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\nbuild = "{build}"\n'
    folder = make_bot("greedy", "print()", manifest=manifest)
    with pytest.raises(StartError, match=reason):
        LocalSandbox().prepared(load_bot(folder))
    assert subprocess.run(["pgrep", "-f", leftover], capture_output=True).returncode != 0


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
    from ..integration.test_referee import raw_bot

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
    deadline = time.monotonic() + 120  # only a guard: they end at once
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
        with trio.fail_after(60):  # only a guard against a hang
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
    from arena.play.replay import End, read

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


# --- what a build leaves in its copy (issue 23, item 3) ---------------------------------

PTH = "import os  # stands in for a .pth file of the arena's site-packages\n"


@pytest.fixture
def victim() -> Iterator[Path]:
    """A file of the machine's that no bot may have the arena write, chmod or chown."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-victim-"))
    path = folder / "sixarena-hook.pth"
    path.write_text(PTH)
    os.chmod(path, 0o600)
    yield path
    shutil.rmtree(folder, ignore_errors=True)


def build_bot_manifest(name: str, build: str) -> str:
    return (
        f'name = "{name}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
        f"build = {json.dumps(build)}\ndescription = {json.dumps(uuid.uuid4().hex)}\n"
    )


@as_root
@pytest.mark.parametrize(
    ("build", "refused"),
    [
        # the marker the arena wrote into the copy after the build, as root, through this link
        ("ln -s {victim} .ready", ""),
        ("ln -sf {victim} .ready; ln -s {victim} .lock; ln -s {victim} .build; chmod 4755 bot.py", ""),
        ("rm bot.py; ln -s {victim} bot.py", "a link to the absolute path"),
        ("mkdir lib; ln -s ../../../../../../../../../..{victim} lib/hook.pth", "leads out of the bot folder"),
        ("mv bot.py code.py; ln -s /tmp sub", "a link to the absolute path"),
        ("mkfifo pipe", "a named pipe (FIFO) cannot be part of a bot folder"),
        ("head -c 3000000 /dev/zero > big", "MiB, the cap on a bot folder"),
        ("for i in $(seq 1500); do mkdir d && cd d || exit 1; done", "nested more than 32 folders deep"),
    ],
)
def test_a_build_cannot_make_the_arena_follow_a_link(
    make_bot: MakeBot, victim: Path, build: str, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that made the ready marker a link to a file of the machine's had the arena,
    as root, write the folder's path and the build command there (aimed at a `.pth` file
    of its site-packages, the next `arena` ran the attacker's code as root). Now the
    marker lives outside the copy, what the build made goes through the folder checks
    (links, special files, sizes) into a copy the arena writes alone, and nothing in the
    build's folder is followed: the file is untouched, the build refused or its links
    (hidden names, never part of a bot) left out."""
    monkeypatch.setenv("ARENA_BOT_MAX_MB", "2")
    folder = make_bot("linker", "print()", manifest=build_bot_manifest("linker", build.format(victim=victim)))
    bot = load_bot(folder)
    target = prepared_dir(bot)
    before = victim.stat()

    def untouched() -> None:
        after = victim.stat()
        assert victim.read_text() == PTH, "the arena wrote through the build's link"
        assert (after.st_mode, after.st_uid, after.st_mtime_ns) == (before.st_mode, before.st_uid, before.st_mtime_ns)

    try:
        if refused:
            with pytest.raises(StartError, match="made a folder the arena refuses") as caught:
                LocalSandbox().prepared(bot)
            untouched()
            assert refused in str(caught.value) and str(bot.path) in str(caught.value)
            assert not target.exists() and not is_ready(target), "nothing of a refused build is kept"
        else:
            built = LocalSandbox().prepared(bot)
            untouched()
            assert built.path == target and is_ready(target)
            assert ready_marker(target).parent == target.parent, "the marker is beside the copy, not in it"
            assert sorted(p.name for p in target.iterdir()) == ["bot.py", "bot.toml"], "hidden links left out"
            assert (target / "bot.py").stat().st_mode & 0o7777 in (0o644, 0o755), "sealed: no set-id bit"
        assert not Path(f"{target}.build").exists(), "the build's own folder is gone"
    finally:
        shutil.rmtree(target, ignore_errors=True)
        ready_marker(target).unlink(missing_ok=True)
        untouched()


def test_a_copy_removed_by_hand_is_made_again(make_bot: MakeBot) -> None:
    """The ready marker lives beside the copy: a copy removed without it is not taken
    for ready."""
    folder = make_bot("again", "print()", manifest=build_bot_manifest("again", "echo built > out"))
    sandbox = LocalSandbox()
    target = sandbox.prepared(load_bot(folder)).path
    try:
        shutil.rmtree(target)
        assert not is_ready(target)
        assert (sandbox.prepared(load_bot(folder)).path / "out").read_text() == "built\n"
    finally:
        shutil.rmtree(target, ignore_errors=True)
        ready_marker(target).unlink(missing_ok=True)


# --- namespaces and system calls (issue 23, item 10) -------------------------------------

SYSCALLS_PROBE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int err(long r) { return r < 0 ? errno : 0; }
static int do_unshare(void) { return err(unshare(CLONE_NEWUSER)); }
static int do_mount(void) { return err(mount("none", "/tmp", "tmpfs", 0, NULL)); }
static int do_ptrace(void) { return err(ptrace(PTRACE_TRACEME, 0, NULL, NULL)); }

/* In a child of its own: what a call changes (or a tracer it gets) stays there. */
static int in_child(int (*call)(void)) {
    pid_t pid = fork();
    if (pid == 0) _exit(call());
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int cloned(unsigned long flags) {
    long r = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (r == 0) _exit(0);
    if (r > 0) { waitpid((pid_t)r, NULL, 0); return 0; }
    return errno;
}

/* The signal that kills a child calling getpid in another ABI (0: none). */
static int killed_by(int abi) {
    pid_t pid = fork();
    if (pid == 0) {
        if (abi == 32) {
            int ret;
            __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20));
        } else {
            syscall(0x40000000 | SYS_getpid);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int main(void) {
    char line[256];
    if (!fgets(line, sizeof line, stdin)) return 1;
    char seccomp[64] = "?";
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "Seccomp:", 8) == 0) sscanf(line + 8, "%63s", seccomp);
    if (status) fclose(status);
    int unshare_cmd = system("unshare -Urm sh -c 'mount -t tmpfs none /tmp' 2>/dev/null");
    int unshare_pid = system("unshare -Urpf --mount-proc true 2>/dev/null");
    int unshare_user = in_child(do_unshare);
    int clone_user = cloned(CLONE_NEWUSER);
    int clone_ns = cloned(CLONE_NEWNS | CLONE_NEWPID);
    int clone_net = cloned(CLONE_NEWNET);
    int plain_fork = cloned(0);
    int mounted = in_child(do_mount);
    int key = err(syscall(SYS_add_key, "user", "sixarena", "v", 1, -2));
    int aslr_off = err(personality(ADDR_NO_RANDOMIZE));
    int query = err(personality(0xffffffff));
    int linux32 = err(personality(PER_LINUX32));
    personality(PER_LINUX);
    int uring = err(syscall(SYS_io_uring_setup, 1, NULL));
    int traced = in_child(do_ptrace);
    printf("{\"seccomp\": \"%s\", \"unshare_cmd\": %d, \"unshare_pid\": %d, \"unshare_user\": %d,"
           " \"clone_user\": %d, \"clone_ns\": %d, \"clone_net\": %d, \"plain_fork\": %d, \"mount\": %d,"
           " \"add_key\": %d, \"aslr_off\": %d, \"query\": %d, \"linux32\": %d, \"io_uring\": %d, \"ptrace\": %d,"
           " \"x32\": %d, \"i386\": %d}\n",
           seccomp, unshare_cmd, unshare_pid, unshare_user, clone_user, clone_ns, clone_net, plain_fork, mounted,
           key, aslr_off, query, linux32, uring, traced, killed_by(64), killed_by(32));
    fflush(stdout);
    fgets(line, sizeof line, stdin);
    return 0;
}
"""


def syscalls_probe(make_bot: MakeBot) -> Path:
    """A C bot (built in the sandbox, under the same filter) that tries what it must not."""
    manifest = (
        'name = "syscalls"\nversion = "1"\nlanguage = "c"\nbuild = "cc -O2 -o probe probe.c"\nrun = "./probe"\n'
        f'games = ["nimmt"]\ndescription = "{uuid.uuid4().hex}"\n'
    )
    folder = make_bot("syscalls", manifest=manifest)
    (folder / "probe.c").write_text(SYSCALLS_PROBE)
    os.chmod(folder / "probe.c", 0o644)
    return folder


async def test_a_local_bot_makes_no_namespace_mount_or_foreign_system_call(make_bot: MakeBot) -> None:
    """Bubblewrap let a bot make user namespaces of its own (inside, `unshare -Urm` made it
    uid 0, free to mount, and to mount proc in a new PID namespace) and every system call
    Docker's profile refuses. Now: no new namespace of any kind, no mount, none of the
    calls Docker's profile refuses (EPERM), no other ABI (the process is killed by
    SIGSYS), while forking and the usual personality calls still work."""
    facts = await probe(syscalls_probe(make_bot))
    eperm, sigsys = 1, 31
    assert facts["seccomp"] == "2", "a seccomp filter is in force"
    assert facts["unshare_cmd"] != 0 and facts["unshare_pid"] != 0, "unshare -Urm and -Urpf --mount-proc fail"
    assert facts["unshare_user"] == eperm
    assert (facts["clone_user"], facts["clone_ns"], facts["clone_net"]) == (eperm,) * 3, "no clone makes a namespace"
    assert facts["plain_fork"] == 0, "a plain fork still works"
    assert facts["mount"] == eperm
    assert (facts["add_key"], facts["aslr_off"], facts["io_uring"], facts["ptrace"]) == (eperm,) * 4
    assert (facts["query"], facts["linux32"]) == (0, 0), "the personality calls Docker allows still work"
    assert (facts["x32"], facts["i386"]) == (sigsys, sigsys), "a call in another ABI kills the caller"


async def test_bubblewrap_alone_lets_no_bot_make_a_user_namespace(make_bot: MakeBot) -> None:
    """The first line without the second: with the seccomp filter off, --disable-userns
    still refuses a new user namespace (ENOSPC: the namespace's count is used up), so
    `unshare -Urm` fails."""
    sandbox = LocalSandbox()
    sandbox.seccomp = b""
    facts = await probe(syscalls_probe(make_bot), sandbox)
    enospc = 28
    assert facts["seccomp"] == "0", "no filter in this test"
    assert facts["unshare_cmd"] != 0 and facts["unshare_pid"] != 0
    assert facts["unshare_user"] == enospc and facts["clone_user"] == enospc
