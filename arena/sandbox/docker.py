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

Builds run under the same caps (``builds``), as their own unprivileged user with no
capabilities, a time cap and a disk cap on what they write.

Every container is registered with the watchdog (``reaper``) from its creation to its
removal, so a killed arena (kill -9) takes its containers with it; what a dead arena
still left is removed by the next to start (``containers.remove_stale_containers_if_any``).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import shutil
import threading
import time
from collections import Counter
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
from arena.sandbox.containers import (
    BOT_PATH,
    LABEL,
    allocate_user,
    owner_labels,
    release_user,
    remove_container,
    remove_stale_containers,
    user_note,
)
from arena.sandbox.images import ImageError, bot_image, connect
from arena.sandbox.leftovers import private_dir
from arena.sandbox.pipes import PipedBot
from arena.sandbox.reaper import Reaper
from arena.sandbox.seccomp import bot_filter

IO_PATH = "/arena/io"
GRACE_SECONDS = 0.5
START_SECONDS = 30.0
"""How long a kept container's init may take to start a process (it waits for nothing)."""
INIT_SCRIPT = Path(__file__).with_name("container_init.py")


# --- containers kept for a bot's processes -----------------------------------------------


class Refused(Exception):
    """The container's init could not make a process's namespaces (an engine or security
    module that forbids them): the sandbox goes back to a container per process."""


class Vessel:
    """A bot's container with the arena's init (``container_init``), serving the bot's
    processes one after another, each in namespaces of its own. The control pipes are
    unlinked once both ends are open: only the arena and the init hold them."""

    def __init__(
        self, key: tuple[str, str], container: Any, io_dir: Path, uid: int, report: int, commands: int
    ) -> None:
        self.key = key
        self.container = container
        self.io_dir = io_dir
        self.uid = uid
        self.report = report
        self.commands = commands
        self.cgroup = Cgroup(container.attrs["State"]["Pid"])
        self.freezer = self.cgroup.freezer()
        self.lives = 0
        self.broken = False
        self.idle_since = 0.0
        self._lines: list[list[str]] = []
        self._buffer = b""
        self._reading = False

    def command(self, line: str) -> None:
        try:
            os.write(self.commands, line.encode() + b"\n")  # a few bytes: the pipe has room
        except OSError:
            self.broken = True

    def _parse(self, data: bytes) -> None:
        self._buffer += data
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._lines.append(line.decode("utf-8", "replace").split(" ", 2))

    def seen(self, verb: str, number: int) -> list[str] | None:
        for words in self._lines:
            if words[0] == verb and len(words) > 1 and words[1] == str(number):
                return words
        return None

    async def wait_for(self, verbs: tuple[str, ...], number: int, timeout: float) -> list[str] | None:
        """The init's first answer ``VERB number`` of one of ``verbs``, or None after
        ``timeout`` s (or once the init is gone)."""
        with trio.move_on_after(timeout):
            while True:
                for verb in verbs:
                    if (words := self.seen(verb, number)) is not None:
                        return words
                if self.broken:
                    return None
                if self._reading:  # another task reads: look again in a moment
                    await trio.sleep(0.005)
                    continue
                self._reading = True
                try:
                    await trio.lowlevel.wait_readable(self.report)
                    data = os.read(self.report, 4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                finally:
                    self._reading = False
                if not data:
                    self.broken = True  # the init is gone
                self._parse(data)
        return None

    def forget_life(self, number: int) -> None:
        self._lines = [w for w in self._lines if len(w) < 2 or w[1] != str(number)]

    def alone(self) -> bool:
        """Whether the init is the only process left in the container's cgroup."""
        folder = self.cgroup.v2 or next(iter(self.cgroup.v1.values()), None)
        try:
            return folder is not None and len((folder / "cgroup.procs").read_text().split()) == 1
        except OSError:
            return False

    def oom_kills(self) -> int:
        for path in (self.cgroup.v2 and self.cgroup.v2 / "memory.events", self.cgroup.v1.get("memory")):
            if path is None:
                continue
            file = path if path.name == "memory.events" else path / "memory.oom_control"
            try:
                for line in file.read_text().splitlines():
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
            except (OSError, ValueError):
                continue
        return 0

    def close(self) -> None:
        """Our side's files; the container itself goes by ``remove_container``."""
        self.cgroup.close()  # and its freezer
        for fd in (self.report, self.commands):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        shutil.rmtree(self.io_dir, ignore_errors=True)
        release_user(self.uid)


# --- bots -------------------------------------------------------------------------------


class DockerProcess(PipedBot):
    """A bot in its container (see ``arena.sandbox.base.BotProcess``): alone in a
    container of its own, or one of the processes of a ``Vessel``, in namespaces of its own."""

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
        vessel: tuple[Vessel, int, DockerSandbox] | None = None,
    ) -> None:
        # Until the container has opened its end, reading would say end of file.
        super().__init__(stdin, stdout, stderr, max_line, wait_for_writer=True)
        self.container = container
        self.isolation = isolation
        self.uid = uid
        self._io_dir = io_dir
        self._vessel = vessel
        if vessel is None:
            self._cgroup = Cgroup(container.attrs["State"]["Pid"])
            self._freezer = self._cgroup.freezer()
            self._cpu_start = 0.0
        else:
            self._cgroup, self._freezer = vessel[0].cgroup, vessel[0].freezer
            self._cpu_start = self._cgroup.cpu_seconds()
            self._oom_start = vessel[0].oom_kills()
        self._reason: str | None = None

    async def pump_stderr(self) -> None:
        await trio.lowlevel.wait_readable(self._stderr.fileno())
        await super().pump_stderr()

    def cpu_seconds(self) -> float:
        return self._cgroup.cpu_seconds() - self._cpu_start

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
            if self._vessel is None:
                self._reason = await trio.to_thread.run_sync(self._inspect_exit)
            else:
                self._reason = await self._life_exit(GRACE_SECONDS * 4)
            await self.last_words(GRACE_SECONDS)
        return self._reason

    async def _life_exit(self, timeout: float) -> str:
        vessel, number, _ = self._vessel  # type: ignore[misc]
        words = await vessel.wait_for(("exited",), number, timeout)
        if words is None:
            return "closed its output" if not vessel.broken else "container removed"
        if vessel.oom_kills() > self._oom_start:
            return "killed: out of memory (the container's memory cap)"
        return exit_text(int(words[2]))

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
        return exit_text(state.get("ExitCode"))

    def exit_reason(self) -> str | None:
        return self._reason

    async def stop(self) -> None:
        """Close stdin, give the bot a moment, then kill it: its whole container (SIGKILL)
        or, in a ``Vessel``, every process but the init, before the container serves
        another of the bot's processes."""
        with trio.CancelScope(shield=True):
            self.thaw()
            await self._stdin.aclose()
            if self._vessel is not None:
                await self._end_life()
                return
            await trio.to_thread.run_sync(self._remove)
            self._cgroup.close()
            await self._close_pipes()
            shutil.rmtree(self._io_dir, ignore_errors=True)
            if self.uid is not None:
                release_user(self.uid)

    async def _end_life(self) -> None:
        vessel, number, sandbox = self._vessel  # type: ignore[misc]
        sandbox.emptying(vessel.key, 1)  # a start of this bot may wait for it rather than make another
        exited = await vessel.wait_for(("exited",), number, GRACE_SECONDS)
        if self._reason is None and exited is not None:
            self._reason = await self._life_exit(0)
        vessel.command(f"end {number}")
        ended = await vessel.wait_for(("ended",), number, GRACE_SECONDS * 10)
        await self._close_pipes()
        shutil.rmtree(self._io_dir, ignore_errors=True)
        vessel.forget_life(number)
        await sandbox.give_back(vessel, clean=ended is not None and vessel.alone())

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
        remove_container(self.container)


def exit_text(code: int | None) -> str:
    """How a bot's main process ended, from its exit code (128 + N: killed by signal N)."""
    if code is not None and code > 128:
        return f"killed by signal {code - 128}"
    return f"exited with code {code}"


IDLE_SECONDS = 60.0
"""How long a kept container waits for its bot's next process before it is removed."""
RETURN_WAIT_SECONDS = 1.0
"""How long a start waits for one of its bot's containers that is being emptied, before
it makes another."""


class DockerSandbox:
    """Starts each bot process in its container: by default a container per bot kept
    for its processes one after another (``Vessel``; a tournament makes about two a bot,
    where a container per process made one per bot per rotation per table), else
    (``reuse=False``, or where namespaces are forbidden) a container per process."""

    def __init__(
        self, limits: ResourceLimits | None = None, client: docker.DockerClient | None = None, reuse: bool = True
    ) -> None:
        self.limits = limits or ResourceLimits()
        self.client = client or connect()
        self.reuse = reuse
        self.refusal = ""
        """Why processes do not share containers here, if they were to and cannot."""
        remove_stale_containers(self.client)
        self.isolation = (
            f"docker: no network, read-only root, {self.limits.memory_mb} MiB, "
            f"{self.limits.cpus:g} CPU, {self.limits.processes} processes, {user_note()}"
        )
        self._idle: dict[tuple[str, str], list[Vessel]] = {}
        self._emptying: dict[tuple[str, str], int] = {}
        self._vessels: set[Vessel] = set()
        self._starts: Counter[tuple[str, str]] = Counter()
        atexit.register(self.close)

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

    def close(self) -> None:
        """Remove the containers kept for bots' next processes (at the arena's exit at the
        latest), all at once: their inits, seeing their control pipes end, exit first."""
        kept = [v for vessels in self._idle.values() for v in vessels]
        self._idle.clear()
        for vessel in kept:
            with contextlib.suppress(OSError):
                os.close(vessel.commands)
            vessel.commands = -1
        threads = [threading.Thread(target=self._discard, args=(v,)) for v in kept]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _discard(self, vessel: Vessel) -> None:
        remove_container(vessel.container)
        vessel.close()
        self._vessels.discard(vessel)

    def emptying(self, key: tuple[str, str], change: int) -> None:
        self._emptying[key] = self._emptying.get(key, 0) + change

    async def give_back(self, vessel: Vessel, clean: bool) -> None:
        """A vessel whose process has ended: kept for the bot's next process if its init
        reports every other process gone and the cgroup agrees, and the bot has had more
        than one process (a bot started once, as the start-up probe, rarely comes back),
        else removed."""
        self.emptying(vessel.key, -1)
        if clean and not vessel.broken and vessel.freezer.usable and self._starts[vessel.key] > 1:
            vessel.idle_since = time.monotonic()
            self._idle.setdefault(vessel.key, []).append(vessel)
        else:
            await trio.to_thread.run_sync(self._discard, vessel)
        now = time.monotonic()
        for vessels in self._idle.values():
            for old in [v for v in vessels if now - v.idle_since > IDLE_SECONDS]:
                vessels.remove(old)
                threading.Thread(target=self._discard, args=(old,), daemon=True).start()

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> DockerProcess:
        try:
            image = await trio.to_thread.run_sync(bot_image, self.client, bot, False)
        except ImageError as exc:
            raise StartError(str(exc)) from None
        if self.reuse:
            try:
                process = await self._start_in_vessel(bot, image, max_line)
            except Refused as exc:
                self.reuse = False
                self.refusal = str(exc)
            else:
                nursery.start_soon(process.pump_stderr)
                return process
        return await self._start_alone(bot, image, nursery, max_line)

    # --- a process in a kept container ---

    async def _vessel(self, bot: Bot, key: tuple[str, str]) -> Vessel:
        """An idle container of this bot, or one being emptied (a moment), or a new one."""
        waited = 0.0
        while not self._idle.get(key) and self._emptying.get(key, 0) > 0 and waited < RETURN_WAIT_SECONDS:
            await trio.sleep(0.005)
            waited += 0.005
        if self._idle.get(key):
            return self._idle[key].pop()
        return await self._new_vessel(bot, key)

    async def _new_vessel(self, bot: Bot, key: tuple[str, str]) -> Vessel:
        uid, gid = allocate_user()
        io_dir: Path | None = None
        container: Any = None
        fds: list[int] = []
        try:
            io_dir = private_dir("arena-io-", uid)
            (io_dir / "init.py").write_bytes(INIT_SCRIPT.read_bytes())
            try:
                program = bot_filter()
            except StartError as exc:  # no libseccomp here: the engine's profile, a container per process
                raise Refused(str(exc)) from None
            (io_dir / "seccomp.bpf").write_bytes(program)
            for name in ("ctl-in", "ctl-out"):
                os.mkfifo(io_dir / name, 0o600)
            for name in ("init.py", "seccomp.bpf", "ctl-in", "ctl-out"):
                os.chmod(io_dir / name, 0o600)
                if uid != os.geteuid():
                    os.chown(io_dir / name, uid, gid, follow_symlinks=False)
            fds.append(os.open(io_dir / "ctl-out", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            container = await trio.to_thread.run_sync(self._create_vessel, bot, key[0], io_dir, uid, gid)
            fds.append(await _open_writer(container, io_dir / "ctl-in"))
            for name in ("ctl-in", "ctl-out", "init.py", "seccomp.bpf"):
                (io_dir / name).unlink()
            vessel = Vessel(key, container, io_dir, uid, fds[0], fds[1])
        except BaseException:
            with trio.CancelScope(shield=True):
                if container is not None:
                    await trio.to_thread.run_sync(remove_container, container)
            for fd in fds:
                os.close(fd)
            if io_dir is not None:
                shutil.rmtree(io_dir, ignore_errors=True)
            release_user(uid)
            raise
        self._vessels.add(vessel)
        return vessel

    async def _start_in_vessel(self, bot: Bot, image: str, max_line: int) -> DockerProcess:
        key = (image, bot.manifest.run)
        self._starts[key] += 1
        vessel = await self._vessel(bot, key)
        vessel.lives += 1
        number = vessel.lives
        life_dir = vessel.io_dir / f"arena-io-{number}"
        fds: list[int] = []
        try:
            life_dir.mkdir(mode=0o700)
            if vessel.uid != os.geteuid():
                os.chown(life_dir, vessel.uid, vessel.uid, follow_symlinks=False)
            for name in ("in", "out", "err"):
                os.mkfifo(life_dir / name, 0o600)
                os.chmod(life_dir / name, 0o600)
                if vessel.uid != os.geteuid():
                    os.chown(life_dir / name, vessel.uid, vessel.uid, follow_symlinks=False)
            fds.append(os.open(life_dir / "out", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            fds.append(os.open(life_dir / "err", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            vessel.command(f"run {number}")
            fds.append(await self._open_life_input(vessel, number, life_dir / "in"))
            out_fd, err_fd, in_fd = fds
            return DockerProcess(
                vessel.container,
                life_dir,
                trio.lowlevel.FdStream(in_fd),
                trio.lowlevel.FdStream(out_fd),
                trio.lowlevel.FdStream(err_fd),
                max_line,
                self.isolation,
                vessel.uid,
                (vessel, number, self),
            )
        except BaseException:
            for fd in fds:
                os.close(fd)
            shutil.rmtree(life_dir, ignore_errors=True)
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._discard, vessel)
            raise

    async def _open_life_input(self, vessel: Vessel, number: int, fifo: Path) -> int:
        """Our end of the process's stdin, once its init has opened the other end."""
        deadline = trio.current_time() + START_SECONDS
        while True:
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
            words = await vessel.wait_for(("refused", "exited"), number, 0.002)
            if words is not None and words[0] == "refused":
                raise Refused(words[2] if len(words) > 2 else "")
            if words is not None or vessel.broken or trio.current_time() > deadline:
                raise StartError(f"the container's init could not start the bot ({' '.join(words or ['no answer'])})")

    def _create_vessel(self, bot: Bot, image: str, io_dir: Path, uid: int, gid: int) -> Any:
        """Create and start a container whose init is ours (``container_init``). The engine's
        seccomp profile and masked /proc paths would forbid the init its namespaces and
        its processes a /proc of their own: the init puts the arena's filter
        (``seccomp``) on every bot process instead, as the local sandbox does."""
        limits = self.limits
        api = self.client.api
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.processes,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges", "seccomp=unconfined"],
            log_config=LogConfig(type="none"),
            binds={str(io_dir): {"bind": IO_PATH, "mode": "ro"}},
            ulimits=[Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5)],
        )
        host_config["MaskedPaths"], host_config["ReadonlyPaths"] = [], []
        try:
            created = api.create_container(
                image,
                command=["python3", "-I", "-S", f"{IO_PATH}/init.py", str(limits.tmp_mb), bot.manifest.run],
                working_dir=BOT_PATH,
                user=f"{uid}:{gid}",
                environment={"LANG": "C.UTF-8"},
                labels={LABEL: "bot", **owner_labels(), f"{LABEL}.bot": bot.name},
                host_config=host_config,
            )
        except docker.errors.DockerException as exc:
            raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
        container = self.client.containers.prepare_model({"Id": created["Id"]})
        return _started(container, bot)

    # --- a container per process ---

    async def _start_alone(self, bot: Bot, image: str, nursery: trio.Nursery, max_line: int) -> DockerProcess:
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
                    os.chown(io_dir / name, uid, gid, follow_symlinks=False)
            # Never through a link (the folder is the bot's user's, if read-only to it).
            fds.append(os.open(io_dir / "out", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            fds.append(os.open(io_dir / "err", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
            container = await trio.to_thread.run_sync(self._run, bot, image, io_dir, f"{uid}:{gid}")
            fds.append(await _open_writer(container, io_dir / "in"))
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
                    await trio.to_thread.run_sync(remove_container, container)
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
                labels={LABEL: "bot", **owner_labels(), f"{LABEL}.bot": bot.name},
                volumes={str(io_dir): {"bind": IO_PATH, "mode": "ro"}},
                ulimits=[Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5)],
            )
        except docker.errors.DockerException as exc:
            raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
        return _started(container, bot)


def _started(container: Any, bot: Bot) -> Any:
    """Start a created container, watched from now on; removed again if it cannot start."""
    Reaper.watch("ctr", container.id)  # removed with the arena, even after a kill -9
    try:
        container.start()
        container.reload()
    except docker.errors.DockerException as exc:
        remove_container(container)
        raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
    except BaseException:
        remove_container(container)
        raise
    return container


async def _open_writer(container: Any, fifo: Path) -> int:
    """Open our end of a pipe that the container reads, once it has opened its end."""
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
