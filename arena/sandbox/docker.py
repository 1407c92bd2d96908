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

import errno
import os
import shutil
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

IO_PATH = "/arena/io"
GRACE_SECONDS = 0.5


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
        self._freezer = self._cgroup.freezer()
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
        remove_container(self.container)


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
