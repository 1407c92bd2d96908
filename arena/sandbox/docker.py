"""Bots in Docker containers, each locked down, talking over bind-mounted named pipes.

A container gets no network, a read-only root with a small noexec tmpfs at /tmp, a
memory cap without swap, a CPU cap, a process cap, no capabilities, no new privileges,
an unprivileged user of its own (a random uid no host account uses, when the arena is
root; else the arena's own), an init process, no engine log, and the ``sixarena``
label with its owner. It sees its own image (the base plus its folder at /bot) and a
folder holding its three named pipes, nothing else: not the other bots, not the
replay, not the referee. That folder is private: mode 0700, owned by the container's
user, in the arena's run folder, pipes 0600; no other host user can open it.

Lines travel through named pipes rather than the engine's attach socket: a round trip
costs about what a local pipe does, and no engine process sits in the path. Between its
turns a container is frozen whole by its cgroup freezer, so processes it keeps forking
stop with it; its CPU time is its cgroup's.

Builds run under the same caps (``create_build_container``, ``run_build``), as their own
unprivileged user with no capabilities, a time cap and a disk cap on what they write.

Every container is registered with the watchdog (``reaper``) from its creation to its
removal, so a killed arena (kill -9) takes its containers with it; what a dead arena
still left is removed by the next to start (``remove_stale_containers_if_any``).
"""

from __future__ import annotations

import errno
import grp
import math
import os
import pwd
import secrets
import shlex
import shutil
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors
import trio
from docker.types import LogConfig, Ulimit

from arena.bots import Bot
from arena.sandbox.base import ResourceLimits, StartError
from arena.sandbox.cgroups import Cgroup
from arena.sandbox.images import BOT_PATH, LABEL, ImageError, bot_image, connect
from arena.sandbox.leftovers import private_dir
from arena.sandbox.pipes import PipedBot
from arena.sandbox.reaper import Reaper

IO_PATH = "/arena/io"
GRACE_SECONDS = 0.5
OWNER = f"{socket.gethostname()}:{os.getpid()}"
UID_RANGE = (0x5000_0000, 0x5FFF_FFFF)
"""Where each container's own user comes from when the arena is root: far above any
account of the machine (and apart from the local sandbox's range), so no host process
shares it; nobody (65534) would."""
BUILD_SECONDS = 600
"""A build taking longer is stopped."""
BUILD_DISK_MB = 256
"""What a build may write (its image's layer over the base); also each file's size cap."""
BUILD_LOG_MB = 1
"""The engine keeps at most this much of a build's output."""
BUILD_POLL_SECONDS = 0.1
"""How often a running build is checked against its caps (its size: every 5th time)."""
BUILD_STATUS = "arena-build-status"
"""The line a build container's first step prints with the build's exit status."""
STALE_TIMEOUT_SECONDS = 3.0
"""How long an arena start waits for the engine when clearing what dead arenas left."""

_uids_in_use: set[int] = set()
_uid_lock = threading.Lock()
_build_users: dict[str, int] = {}


# --- users ------------------------------------------------------------------------------


def _host_ranges() -> list[tuple[int, int]]:
    """Subordinate id ranges handed to host users (rootless containers use them)."""
    ranges = []
    for path in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                ranges.append((int(parts[1]), int(parts[1]) + int(parts[2])))
    return ranges


def _id_taken(number: int, ranges: list[tuple[int, int]]) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(number)
            return True
        except KeyError:
            pass
    return any(start <= number < end for start, end in ranges)


def allocate_user() -> tuple[int, int]:
    """The uid and gid a new container runs as: as root, a random one of ``UID_RANGE``
    that no account, no subordinate range and no other container of this arena uses;
    otherwise the arena's own (a user cannot hand out others)."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    ranges = _host_ranges()
    with _uid_lock:
        while True:
            uid = UID_RANGE[0] + secrets.randbelow(UID_RANGE[1] - UID_RANGE[0] + 1)
            if uid not in _uids_in_use and not _id_taken(uid, ranges):
                _uids_in_use.add(uid)
                return uid, uid


def release_user(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


def user_note() -> str:
    """The container's user, as the isolation text says it."""
    if os.geteuid() == 0:
        return "an unprivileged user of its own"
    return f"the arena's user (uid {os.geteuid()})"


# --- containers of dead arenas ----------------------------------------------------------


def _start_ticks(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot): a pid reused later differs."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


STARTED = _start_ticks(os.getpid())


def _owner_labels() -> dict[str, str]:
    return {f"{LABEL}.owner": OWNER, f"{LABEL}.started": STARTED}


def _owner_alive(owner: str, started: str = "") -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # another machine's arena: not ours to judge
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        pass
    return not started or _start_ticks(int(pid)) in ("", started)


def remove_stale_containers(client: docker.DockerClient) -> int:
    """Remove the arena's containers (bots and builds) whose arena process is gone."""
    removed = 0
    for found in client.api.containers(all=True, filters={"label": f"{LABEL}.owner"}):  # one call
        labels = found.get("Labels") or {}
        if not _owner_alive(labels.get(f"{LABEL}.owner", ""), labels.get(f"{LABEL}.started", "")):
            try:
                client.api.remove_container(found["Id"], force=True)
                removed += 1
            except docker.errors.APIError:
                pass  # gone already, or another arena is removing it
    return removed


def remove_stale_containers_if_any(timeout: float = STALE_TIMEOUT_SECONDS) -> int:
    """What ``remove_stale_containers`` does, for any arena start, whatever its sandbox:
    nothing (and no waiting) when no engine's socket is there, a short wait at most when
    one is; never an error. How many containers went."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://") or not _answers(host[len("unix://") :], timeout):
        return 0  # no local engine (a remote one is cleared when a Docker arena starts)
    try:
        client = docker.DockerClient(base_url=host, timeout=max(1, round(timeout)))
    except Exception:
        return 0
    try:
        return remove_stale_containers(client)
    except Exception:
        return 0
    finally:
        client.close()


def _answers(path: str, timeout: float) -> bool:
    """Whether an engine answers ``/_ping`` on the socket at ``path``: asked on a socket of
    our own, closed whatever happens (the SDK's client leaks the one it probes with when
    nothing answers)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(timeout)
            probe.connect(path)
            probe.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
            return probe.recv(64).startswith(b"HTTP/1.")
    except OSError:
        return False


def _remove_container(container: Any) -> None:
    """Remove a container (killing what runs in it) and tell the watchdog it is gone."""
    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    Reaper.forget("ctr", container.id)


# --- freezing a container whole ---------------------------------------------------------


class Freezer:
    """A container's cgroup freezer (cgroup v2's ``cgroup.freeze``, else v1's
    ``freezer.state``): every process in the cgroup stops at once, also those it forks
    while it is being frozen, and none can wake another, where signals to a list of
    processes miss those forked after the list was read.

    Freezing is asynchronous (the cgroup reads "freezing" until the last task stops) and
    needs no waiting: a frozen bot is not being timed. Thawing is checked: ``thaw``
    returns once the cgroup reads thawed, so a request's clock never starts on a bot
    still frozen. Both files stay open: a cycle costs a few tens of microseconds."""

    def __init__(self, cgroup: Cgroup) -> None:
        self._write_fd: int | None = None
        self._read_fd: int | None = None
        if cgroup.v2 is not None:
            paths = (cgroup.v2 / "cgroup.freeze", cgroup.v2 / "cgroup.events")
            self._values = (b"1", b"0", b"frozen 0")
        elif "freezer" in cgroup.v1:
            paths = (cgroup.v1["freezer"] / "freezer.state",) * 2
            self._values = (b"FROZEN", b"THAWED", b"THAWED")
        else:
            return
        try:
            self._write_fd = os.open(paths[0], os.O_WRONLY)
            self._read_fd = os.open(paths[1], os.O_RDONLY)
        except OSError:  # not ours to write (an arena that is not root)
            self.close()

    @property
    def usable(self) -> bool:
        return self._write_fd is not None

    def freeze(self) -> bool:
        """Freeze the cgroup; False if it could not be asked (gone, or not ours)."""
        if self._write_fd is None:
            return False
        try:
            os.pwrite(self._write_fd, self._values[0], 0)
        except OSError:
            return False
        return True

    def thaw(self) -> bool:
        """Thaw the cgroup and make sure it is; False if it cannot be."""
        if self._write_fd is None or self._read_fd is None:
            return False
        for _ in range(100):
            try:
                os.pwrite(self._write_fd, self._values[1], 0)
                if self._values[2] in os.pread(self._read_fd, 256, 0):
                    return True
            except OSError:
                return False
        return False

    def close(self) -> None:
        for fd in (self._write_fd, self._read_fd):
            if fd is not None:
                os.close(fd)
        self._write_fd = self._read_fd = None


# --- bots -------------------------------------------------------------------------------


class DockerProcess(PipedBot):
    """A bot in its container (see ``arena.sandbox.base.BotProcess``)."""

    def __init__(
        self,
        container: Any,
        io_dir: Path,
        stdin: trio.lowlevel.FdStream,
        stdout: trio.lowlevel.FdStream,
        stderr: trio.lowlevel.FdStream,
        max_line: int,
        isolation: str,
        uid: int | None = None,
    ) -> None:
        # Until the container has opened its end, reading would say end of file.
        super().__init__(stdin, stdout, stderr, max_line, wait_for_writer=True)
        self.container = container
        self.isolation = isolation
        self.uid = uid
        self._io_dir = io_dir
        self._init_pid = container.attrs["State"]["Pid"]
        self._cgroup = Cgroup(self._init_pid)
        self._freezer = Freezer(self._cgroup)
        self._reason: str | None = None

    async def pump_stderr(self) -> None:
        await trio.lowlevel.wait_readable(self._stderr.fileno())
        await super().pump_stderr()

    def cpu_seconds(self) -> float:
        return self._cgroup.cpu_seconds()

    def freeze(self) -> None:
        """Freeze the whole container (its cgroup); where the freezer is not ours to
        write, the engine's pause does the same, in milliseconds."""
        if not self._freezer.freeze():
            self._engine_pause(True)

    def thaw(self) -> None:
        if not self._freezer.thaw():
            self._engine_pause(False)

    def _engine_pause(self, pause: bool) -> None:
        try:
            (self.container.pause if pause else self.container.unpause)()
        except docker.errors.APIError:
            pass  # gone, or already so

    async def gone_reason(self) -> str:
        if self._reason is None:
            self._reason = await trio.to_thread.run_sync(self._inspect_exit)
            await self.last_words(GRACE_SECONDS)
        return self._reason

    def _inspect_exit(self) -> str:
        try:
            self.container.wait(timeout=GRACE_SECONDS * 4)
        except Exception:  # still running, or already removed
            pass
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "container removed"
        state = self.container.attrs["State"]
        if state.get("OOMKilled"):
            return "killed: out of memory (the container's memory cap)"
        if state.get("Running"):
            return "closed its output"
        code = state.get("ExitCode")
        if code is not None and code > 128:
            return f"killed by signal {code - 128}"
        return f"exited with code {code}"

    def exit_reason(self) -> str | None:
        return self._reason

    async def stop(self) -> None:
        """Close stdin, give the bot a moment, then remove the container (SIGKILL)."""
        with trio.CancelScope(shield=True):
            self.thaw()
            await self._stdin.aclose()
            await trio.to_thread.run_sync(self._remove)
            self._freezer.close()
            self._cgroup.close()
            await self._close_pipes()
            shutil.rmtree(self._io_dir, ignore_errors=True)
            if self.uid is not None:
                release_user(self.uid)

    def _remove(self) -> None:
        try:
            self.container.wait(timeout=GRACE_SECONDS)
        except Exception:
            pass
        try:
            if self._reason is None:
                self.container.reload()
                if not self.container.attrs["State"].get("Running"):
                    self._reason = self._inspect_exit()
        except docker.errors.NotFound:
            pass
        _remove_container(self.container)


class DockerSandbox:
    """Starts each bot in its own container from its image (see ``images``)."""

    def __init__(self, limits: ResourceLimits | None = None, client: docker.DockerClient | None = None) -> None:
        self.limits = limits or ResourceLimits()
        self.client = client or connect()
        remove_stale_containers(self.client)
        self.isolation = (
            f"docker: no network, read-only root, {self.limits.memory_mb} MiB, "
            f"{self.limits.cpus:g} CPU, {self.limits.processes} processes, {user_note()}"
        )

    def isolation_for(self, bot: Bot) -> str:
        """The same for every bot: ``isolation``."""
        return self.isolation

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        """Build the bot's image if it is missing (before any clock runs), and first the
        base's SDK layer if the SDK changed since it was built."""
        bot_image(self.client, bot, build_missing=True, progress=progress)

    def sdk_fix(self) -> str:
        """The base image is what gives bots their Python and the SDK: make it again."""
        return "make the base image again: `arena image build --force`"

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> DockerProcess:
        try:
            image = await trio.to_thread.run_sync(bot_image, self.client, bot, False)
        except ImageError as exc:
            raise StartError(str(exc)) from None
        uid, gid = allocate_user()
        io_dir: Path | None = None
        container: Any = None
        fds: list[int] = []
        try:
            # Private to the referee and the container's user: no other host user may
            # read a bot's requests (its hand) or write into its pipes.
            io_dir = private_dir("arena-io-", uid)
            for name in ("in", "out", "err"):
                os.mkfifo(io_dir / name, 0o600)
                os.chmod(io_dir / name, 0o600)
                if uid != os.geteuid():
                    os.chown(io_dir / name, uid, gid)
            # Never through a link (the folder is the bot's user's, if read-only to it).
            fds.append(os.open(io_dir / "out", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            fds.append(os.open(io_dir / "err", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            container = await trio.to_thread.run_sync(self._run, bot, image, io_dir, f"{uid}:{gid}")
            fds.append(await self._open_input(container, io_dir / "in"))
            out_fd, err_fd, in_fd = fds
            try:
                process = DockerProcess(
                    container,
                    io_dir,
                    trio.lowlevel.FdStream(in_fd),
                    trio.lowlevel.FdStream(out_fd),
                    trio.lowlevel.FdStream(err_fd),
                    max_line,
                    self.isolation,
                    uid,
                )
            except OSError as exc:  # the container ended at once: its cgroup is gone
                raise StartError(f"{bot.path}: the container ended as it started ({exc})") from None
        except BaseException:
            with trio.CancelScope(shield=True):
                if container is not None:
                    await trio.to_thread.run_sync(_remove_container, container)
            for fd in fds:
                os.close(fd)
            if io_dir is not None:
                shutil.rmtree(io_dir, ignore_errors=True)
            release_user(uid)
            raise
        nursery.start_soon(process.pump_stderr)
        return process

    def _run(self, bot: Bot, image: str, io_dir: Path, user: str) -> Any:
        limits = self.limits
        command = f"exec {bot.manifest.run} <{IO_PATH}/in >{IO_PATH}/out 2>{IO_PATH}/err"
        try:
            container = self.client.containers.create(
                image,
                command=["/bin/sh", "-c", command],
                working_dir=BOT_PATH,
                user=user,
                environment={"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"},
                network_mode="none",
                read_only=True,
                tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                nano_cpus=int(limits.cpus * 1e9),
                pids_limit=limits.processes,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                log_config=LogConfig(type="none"),
                labels={LABEL: "bot", **_owner_labels(), f"{LABEL}.bot": bot.name},
                volumes={str(io_dir): {"bind": IO_PATH, "mode": "ro"}},
                ulimits=[Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5)],
            )
        except docker.errors.DockerException as exc:
            raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
        Reaper.watch("ctr", container.id)  # removed with the arena, even after a kill -9
        try:
            container.start()
            container.reload()
        except docker.errors.DockerException as exc:
            _remove_container(container)
            raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
        except BaseException:
            _remove_container(container)
            raise
        return container

    async def _open_input(self, container: Any, fifo: Path) -> int:
        """Open our end of the bot's stdin once the container has opened its end."""
        for attempt in range(1_000_000):
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
            if attempt % 100 == 99:
                await trio.to_thread.run_sync(container.reload)
                if not container.attrs["State"].get("Running"):
                    code = container.attrs["State"].get("ExitCode")
                    raise StartError(f"the container exited at once (exit code {code}) before reading its input")
            await trio.sleep(0.002)
        raise StartError("the container never opened its input")


# --- builds -----------------------------------------------------------------------------


def create_build_container(
    client: docker.DockerClient, image: str, script: str, bot: Bot, limits: ResourceLimits | None = None
) -> Any:
    """A container to run ``script`` (a bot's build) in, under the caps bots play under,
    registered with the watchdog; not started, so the folder can be copied in first.

    Its first step, the only one as root, with no capability but those it needs (CHOWN,
    SETUID, SETGID, SETPCAP), gives ``/bot`` to the build's own unprivileged user and
    runs the build as that user with every capability dropped, bounding set included
    (the build then makes ``/bot`` readable by all: bots play as another user); when the
    build ends it prints its status and waits to be stopped (``run_build``). The build's
    user cannot signal, trace or write over that root step."""
    limits = limits or ResourceLimits()
    uid, gid = allocate_user()
    as_user = (
        f"umask 022\n/bin/sh -c {shlex.quote(script)}\nstatus=$?\nchmod -R a+rX {BOT_PATH} 2>/dev/null\nexit $status"
    )
    first = (
        f"chown -R -P -h {uid}:{gid} {BOT_PATH} && setpriv --reuid={uid} --regid={gid} --clear-groups"
        f" --inh-caps=-all --bounding-set=-all -- /bin/sh -c {shlex.quote(as_user)}"
        f"\nprintf '\\n{BUILD_STATUS} %s\\n' $?\nexec sleep {BUILD_SECONDS * 2}"
    )
    disk = BUILD_DISK_MB << 20
    try:
        container = client.containers.create(
            image,
            command=["/bin/sh", "-c", first],
            working_dir=BOT_PATH,
            network_disabled=True,
            network_mode="none",
            environment={"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"},
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.processes,
            cap_drop=["ALL"],
            cap_add=["CHOWN", "SETUID", "SETGID", "SETPCAP"],
            security_opt=["no-new-privileges"],
            init=True,
            log_config=LogConfig(type="json-file", config={"max-size": f"{BUILD_LOG_MB}m", "max-file": "1"}),
            ulimits=[Ulimit(name="fsize", soft=disk, hard=disk)],
            labels={LABEL: "build", **_owner_labels(), f"{LABEL}.bot": bot.name},
        )
    except BaseException:
        release_user(uid)
        raise
    Reaper.watch("ctr", container.id)
    _build_users[container.id] = uid
    return container


def remove_build_container(container: Any) -> None:
    """Remove a build's container: whatever the build started dies with it."""
    _remove_container(container)
    uid = _build_users.pop(container.id, None)
    if uid is not None:
        release_user(uid)


class _CapsHit:
    """Whether a running container hit its memory or process cap: the kernel's counts of
    out-of-memory kills and refused forks in its cgroup (kept open: after the build ends
    its cgroup goes, and the last counts read stand)."""

    def __init__(self, pid: int) -> None:
        self.files: dict[str, tuple[int, bytes]] = {}
        self.seen: set[str] = set()
        try:
            cgroup = Cgroup(pid)
        except OSError:
            return
        sources = (
            ("memory", "memory", "memory.oom_control", "memory.events", b"oom_kill"),
            ("processes", "pids", "pids.events", "pids.events", b"max"),
        )
        for what, controller, v1_name, v2_name, key in sources:
            if controller in cgroup.v1:
                path = cgroup.v1[controller] / v1_name
            elif cgroup.v2 is not None:
                path = cgroup.v2 / v2_name
            else:
                continue
            try:
                self.files[what] = (os.open(path, os.O_RDONLY), key)
            except OSError:
                pass  # not counted here: the engine's out-of-memory flag still is

    def check(self) -> set[str]:
        """The caps hit so far: "memory", "processes"."""
        for what, (fd, key) in self.files.items():
            try:
                for line in os.pread(fd, 4096, 0).splitlines():
                    name, _, count = line.partition(b" ")
                    if name == key and int(count or 0) > 0:
                        self.seen.add(what)
            except (OSError, ValueError):
                pass
        return self.seen

    def close(self) -> None:
        for fd, _ in self.files.values():
            os.close(fd)
        self.files.clear()


def _layer_size(client: docker.DockerClient, container_id: str) -> int:
    """What a container wrote: the size of its writable layer, as the engine counts it."""
    found = client.api.containers(all=True, filters={"id": container_id}, size=True)
    return int(found[0].get("SizeRw") or 0) if found else 0


def run_build(container: Any, bot: Bot, limits: ResourceLimits | None = None) -> dict[str, Any]:
    """Start a build container (``create_build_container``) and wait for its build under
    its caps: past the time cap, the memory cap (an out-of-memory kill), the process cap
    (a refused fork) or the disk cap (its layer's size), the build is stopped and
    ``ImageError`` says which cap, for which bot. Returns the build's exit status, as the
    engine's ``wait`` does; the container is stopped by then.

    The container outlives its build (its first step waits, as root, after printing the
    build's status), so the kernel's counts in its cgroup can still be read when a build
    hit a cap and ended at once."""
    limits = limits or ResourceLimits()
    client = container.client
    container.start()
    container.reload()
    caps = _CapsHit(container.attrs["State"].get("Pid") or 0)
    deadline = time.monotonic() + BUILD_SECONDS
    try:
        polls = 0
        while True:
            state = client.api.inspect_container(container.id)["State"]
            running = bool(state.get("Running"))
            status = _build_status(client, container.id) if running else None
            done = status is not None or not running
            problem = _over_caps(client, container.id, caps, limits, check_size=done or polls % 5 == 0)
            if problem is None and not done and time.monotonic() > deadline:
                problem = f"ran longer than the time cap ({BUILD_SECONDS} s)"
            if problem is None and not running and state.get("OOMKilled"):
                problem = f"ran out of memory (the cap is {limits.memory_mb} MiB, no swap)"
            if done or problem is not None:
                _stop(container)
            if problem is None and done:
                problem = _over_caps(client, container.id, caps, limits, check_size=True)
            if problem is not None:
                raise ImageError(f"{bot.path}: the build of {bot.name} {problem}; no image was made")
            if done:
                return {"StatusCode": status if status is not None else state.get("ExitCode")}
            polls += 1
            time.sleep(BUILD_POLL_SECONDS)
    finally:
        caps.close()


def build_log(container: Any, lines: int = 15) -> list[str]:
    """The last lines a build printed (without the status line of its first step)."""
    text = container.logs().decode("utf-8", "replace")
    return [line for line in text.strip().splitlines() if not line.startswith(BUILD_STATUS)][-lines:]


def _build_status(client: docker.DockerClient, container_id: str) -> int | None:
    """The build's exit status once its first step has printed it; None while it runs."""
    last = client.api.logs(container_id, stdout=True, stderr=False, tail=1).decode("utf-8", "replace").strip()
    if last.startswith(BUILD_STATUS):
        tail = last[len(BUILD_STATUS) :].strip()
        return int(tail) if tail.isdigit() else 1
    return None


def _stop(container: Any) -> None:
    """Kill what still runs in a build's container, and wait until it has stopped."""
    try:
        container.kill()
    except docker.errors.APIError:
        pass  # already stopped
    try:
        container.wait(timeout=30)
    except Exception:
        pass


def _over_caps(
    client: docker.DockerClient, container_id: str, caps: _CapsHit, limits: ResourceLimits, check_size: bool
) -> str | None:
    if check_size:
        size = _layer_size(client, container_id)
        if size > BUILD_DISK_MB << 20:
            return f"wrote {math.ceil(size / 2**20 * 10) / 10:g} MiB, over the disk cap ({BUILD_DISK_MB} MiB)"
    hit = caps.check()
    if "memory" in hit:
        return f"ran out of memory (the cap is {limits.memory_mb} MiB, no swap)"
    if "processes" in hit:
        return f"reached the process cap ({limits.processes} processes and threads)"
    return None
