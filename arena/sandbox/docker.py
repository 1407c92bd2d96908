"""Bots in Docker containers, each locked down, talking over bind-mounted named pipes.

A container gets no network, a read-only root with a small noexec tmpfs at /tmp, a
memory cap without swap, a CPU cap, a process cap, no capabilities, no new privileges,
user nobody, an init process, no engine log, and the ``sixarena`` label. It sees its
own image (the base plus its folder at /bot) and a folder holding its three named
pipes, nothing else: not the other bots, not the replay, not the referee.

Lines travel through named pipes rather than the engine's attach socket: a round trip
costs about what a local pipe does, and no engine process sits in the path.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

import docker
import docker.errors
import trio
from docker.types import LogConfig

from ..bots import Bot
from .base import ResourceLimits, StartError
from .cgroups import Cgroup
from .images import BOT_PATH, LABEL, ImageError, bot_image, connect
from .pipes import PipedBot

IO_PATH = "/arena/io"
GRACE_SECONDS = 0.5
OWNER = f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # another machine's arena: not ours to judge
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def remove_stale_containers(client: docker.DockerClient) -> int:
    """Remove the arena's containers whose arena process is gone (a killed run)."""
    removed = 0
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}.owner"}):
        if not _owner_alive(container.labels.get(f"{LABEL}.owner", "")):
            container.remove(force=True)
            removed += 1
    return removed


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
    ) -> None:
        super().__init__(stdin, stdout, stderr, max_line)
        self.container = container
        self.isolation = isolation
        self._io_dir = io_dir
        self._init_pid = container.attrs["State"]["Pid"]
        self._cgroup = Cgroup(self._init_pid)
        self._connected = False
        self._reason: str | None = None

    async def receive_line(self) -> bytes:
        if not self._connected:
            # Until the container has opened its end, reading would say end of file;
            # waiting for readability waits for its first line (or for it to exit).
            await trio.lowlevel.wait_readable(self.output_fd)
            self._connected = True
        return await super().receive_line()

    async def pump_stderr(self) -> None:
        await trio.lowlevel.wait_readable(self._stderr.fileno())
        await super().pump_stderr()

    def cpu_seconds(self) -> float:
        return self._cgroup.cpu_seconds()

    def freeze(self) -> None:
        if not self._cgroup.signal_all(signal.SIGSTOP, spare=self._init_pid):
            self._cgroup.freeze(True)

    def thaw(self) -> None:
        if not self._cgroup.signal_all(signal.SIGCONT, spare=self._init_pid):
            self._cgroup.freeze(False)

    async def gone_reason(self) -> str:
        if self._reason is None:
            self._reason = await trio.to_thread.run_sync(self._inspect_exit)
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
            self.container.remove(force=True)
        except docker.errors.NotFound:
            pass


class DockerSandbox:
    """Starts each bot in its own container from its image (see ``images``)."""

    def __init__(self, limits: ResourceLimits | None = None, client: docker.DockerClient | None = None) -> None:
        self.limits = limits or ResourceLimits()
        self.client = client or connect()
        remove_stale_containers(self.client)
        self.isolation = (
            f"docker: no network, read-only root, {self.limits.memory_mb} MiB, "
            f"{self.limits.cpus:g} CPU, {self.limits.processes} processes, user nobody"
        )

    def isolation_for(self, bot: Bot) -> str:
        return self.isolation

    def prepare(self, bot: Bot, progress: Any = print) -> str:
        """Build the bot's image if it is missing (before any clock runs), and first the
        base's SDK layer if the SDK changed since it was built."""
        return bot_image(self.client, bot, build_missing=True, progress=progress)

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> DockerProcess:
        try:
            image = await trio.to_thread.run_sync(bot_image, self.client, bot, False)
        except ImageError as exc:
            raise StartError(str(exc)) from None
        io_dir = Path(tempfile.mkdtemp(prefix="arena-io-"))
        os.chmod(io_dir, 0o755)
        for name in ("in", "out", "err"):
            os.mkfifo(io_dir / name)
            os.chmod(io_dir / name, 0o666)
        out_fd = os.open(io_dir / "out", os.O_RDONLY | os.O_NONBLOCK)
        err_fd = os.open(io_dir / "err", os.O_RDONLY | os.O_NONBLOCK)
        try:
            container = await trio.to_thread.run_sync(self._run, bot, image, io_dir)
            in_fd = await self._open_input(container, io_dir / "in")
        except BaseException:
            os.close(out_fd)
            os.close(err_fd)
            shutil.rmtree(io_dir, ignore_errors=True)
            raise
        process = DockerProcess(
            container,
            io_dir,
            trio.lowlevel.FdStream(in_fd),
            trio.lowlevel.FdStream(out_fd),
            trio.lowlevel.FdStream(err_fd),
            max_line,
            self.isolation,
        )
        nursery.start_soon(process.pump_stderr)
        return process

    def _run(self, bot: Bot, image: str, io_dir: Path) -> Any:
        limits = self.limits
        command = f"exec {bot.manifest.run} <{IO_PATH}/in >{IO_PATH}/out 2>{IO_PATH}/err"
        try:
            container = self.client.containers.run(
                image,
                command=["/bin/sh", "-c", command],
                detach=True,
                working_dir=BOT_PATH,
                user="65534:65534",
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
                labels={LABEL: "bot", f"{LABEL}.owner": OWNER, f"{LABEL}.bot": bot.name},
                volumes={str(io_dir): {"bind": IO_PATH, "mode": "ro"}},
                ulimits=[docker.types.Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds + 5)],
            )
            container.reload()
        except docker.errors.DockerException as exc:
            raise StartError(f"{bot.path}: the engine could not start the container: {exc}") from None
        return container

    async def _open_input(self, container: Any, fifo: Path) -> int:
        """Open our end of the bot's stdin once the container has opened its end."""
        for attempt in range(1_000_000):
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
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
