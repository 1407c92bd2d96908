"""A bot's build, run in a container under the caps bots play under (memory, processes,
CPU, time, disk), as its own unprivileged user with no capabilities and the network off.

``images.build_bot`` copies the folder in and commits the result; this module makes the
container, watches the build against its caps and reads its log.
"""

from __future__ import annotations

import math
import os
import shlex
import time
from typing import Any

import docker
import docker.errors
from docker.types import LogConfig, Ulimit

from arena.bots import Bot
from arena.sandbox.base import ImageError as ImageError
from arena.sandbox.base import ResourceLimits
from arena.sandbox.cgroups import Cgroup
from arena.sandbox.containers import BOT_PATH, LABEL, allocate_user, owner_labels, release_user, remove_container
from arena.sandbox.reaper import Reaper

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

_build_users: dict[str, int] = {}


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
            labels={LABEL: "build", **owner_labels(), f"{LABEL}.bot": bot.name},
        )
    except BaseException:
        release_user(uid)
        raise
    Reaper.watch("ctr", container.id)
    _build_users[container.id] = uid
    return container


def remove_build_container(container: Any) -> None:
    """Remove a build's container: whatever the build started dies with it."""
    remove_container(container)
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
