"""What every container of the arena shares, a bot's or a build's: the label that marks
it, the unprivileged user it runs as, the arena process that owns it, and its removal,
also of what dead arenas left.

A container is labelled with its owner (host and pid, with the pid's start time) from
its creation; an arena that starts removes the containers whose owner is gone
(``remove_stale_containers_if_any``), so a killed arena's containers never pile up.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import secrets
import socket
import threading
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.sandbox.reaper import Reaper

if TYPE_CHECKING:
    import docker

LABEL = "sixarena"
"""Every image and container of the arena carries this label."""
BOT_PATH = "/bot"
"""Where a bot's folder is in its image, and where its build runs."""
OWNER = f"{socket.gethostname()}:{os.getpid()}"
UID_RANGE = (0x5000_0000, 0x5FFF_FFFF)
"""Where each container's own user comes from when the arena is root: far above any
account of the machine (and apart from the local sandbox's range), so no host process
shares it; nobody (65534) would."""
STALE_TIMEOUT_SECONDS = 3.0
"""How long an arena start waits for the engine when clearing what dead arenas left."""

_uids_in_use: set[int] = set()
_uid_lock = threading.Lock()


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


def owner_labels() -> dict[str, str]:
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


def __getattr__(name: str) -> Any:
    """``docker``, the SDK, imported when first used: an arena that plays locally loads none."""
    if name == "docker":
        import docker

        return docker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def remove_stale_containers(client: docker.DockerClient) -> int:
    """Remove the arena's containers (bots and builds) whose arena process is gone."""
    import docker.errors

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
    one is; no error when the engine fails or goes away meanwhile (a bug still raises).
    How many containers went."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    listed = _listed(host[len("unix://") :], timeout) if host.startswith("unix://") else None
    if listed is None:
        return 0  # no local engine (a remote one is cleared when a Docker arena starts)
    if isinstance(listed, list) and not any(_stale(found) for found in listed):
        return 0  # nothing to remove: no SDK loaded (an unreadable list goes through it)
    import docker.errors

    try:
        client = docker.DockerClient(base_url=host, timeout=max(1, round(timeout)))
    except (docker.errors.DockerException, OSError):
        return 0  # it stopped answering since the ping
    try:
        return remove_stale_containers(client)
    except (docker.errors.DockerException, OSError):
        return 0  # the engine failed or went away meanwhile (requests' errors are OSErrors)
    finally:
        client.close()


def _stale(found: Any) -> bool:
    labels = (found.get("Labels") if isinstance(found, dict) else None) or {}
    return not _owner_alive(labels.get(f"{LABEL}.owner", ""), labels.get(f"{LABEL}.started", ""))


def _listed(path: str, timeout: float) -> object:
    """The arena's containers as the engine on the socket at ``path`` lists them (a list
    of its JSON objects), asked on a socket of our own, closed whatever happens (the SDK's
    client leaks the one it probes with when nothing answers), without the SDK; None when
    no engine answers, anything else when its answer is no such list."""
    query = urllib.parse.quote(json.dumps({"label": [f"{LABEL}.owner"]}))
    answer = b""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(timeout)
            probe.connect(path)
            probe.sendall(f"GET /containers/json?all=1&filters={query} HTTP/1.0\r\n\r\n".encode())
            while chunk := probe.recv(65536):
                answer += chunk
    except OSError:
        if not answer.startswith(b"HTTP/1."):
            return None
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1."):
        return None
    if head.split(b" ", 2)[1:2] != [b"200"]:
        return head
    try:
        return json.loads(body)
    except ValueError:
        return body


def remove_container(container: Any) -> None:
    """Remove a container (killing what runs in it) and tell the watchdog it is gone."""
    import docker.errors

    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    Reaper.forget("ctr", container.id)
