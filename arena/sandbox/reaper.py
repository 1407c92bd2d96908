"""A watchdog that outlives the arena by a moment: when the arena dies, even by kill -9,
what it started for bots dies with it.

Local bots run in their own process groups and cgroups, containers run in the engine,
and between turns all of them are frozen, so a bot whose arena was killed would wait
forever for input it can no longer notice is gone. The arena starts one reaper (this
file, run by itself, standard library only) in a session of its own and tells it on a
pipe what it made: ``+KIND ARG`` when made, ``-KIND ARG`` when the arena removed it
itself. Kinds: ``pg`` a process group, ``cg`` a cgroup folder, ``ctr`` a container id,
``dir`` a folder. When the pipe ends, the arena is gone: the reaper kills and removes
everything still registered, and exits.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable

KINDS = ("pg", "cg", "ctr", "dir")


class Reaper:
    """The arena's end of the pipe; one per arena process, started on first use."""

    _lock = threading.Lock()
    _proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def _pipe(cls) -> subprocess.Popen[bytes] | None:
        with cls._lock:
            if cls._proc is None or cls._proc.poll() is not None:
                try:
                    cls._proc = subprocess.Popen(
                        [sys.executable, "-I", os.path.abspath(__file__)],  # no package imports: quick
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,  # Ctrl-C in the terminal is not for it
                        close_fds=True,
                        env={**os.environ},
                    )
                except OSError:
                    cls._proc = None
            return cls._proc

    @classmethod
    def _say(cls, line: str) -> None:
        proc = cls._pipe()
        if proc is None or proc.stdin is None:
            return  # no watchdog: teardown still works while the arena lives
        with cls._lock:
            try:
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()
            except OSError:
                pass

    @classmethod
    def watch(cls, kind: str, arg: str | int) -> None:
        cls._say(f"+{kind} {arg}")

    @classmethod
    def forget(cls, kind: str, arg: str | int) -> None:
        cls._say(f"-{kind} {arg}")


# --- the killing, shared with the arena (cgroups.py) -------------------------------------


def kill_cgroup(folders: Iterable[str], wait: float = 10.0) -> None:
    """Kill every process of a cgroup (given as its folder in each hierarchy: one for v2,
    one per controller for v1), thaw it so the kill lands, and remove the folders: again
    until they are gone or ``wait`` seconds have passed (on a loaded machine, killed
    processes take a moment to leave)."""
    folders = [f for f in folders if os.path.isdir(f)]
    deadline = time.monotonic() + wait
    while folders:
        pids: set[int] = set()
        for folder in folders:
            try:
                with open(os.path.join(folder, "cgroup.kill"), "w") as kill:  # v2, kernel 5.14+
                    kill.write("1")
            except OSError:
                pass
            try:
                with open(os.path.join(folder, "cgroup.procs")) as procs:
                    pids.update(int(p) for p in procs.read().split())
            except (OSError, ValueError):
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for folder in folders:
            for name, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                try:
                    with open(os.path.join(folder, name), "w") as state:
                        state.write(value)
                except OSError:
                    pass
        if not pids:
            folders = [f for f in folders if not _removed(f)]
        if not folders or time.monotonic() > deadline:
            break
        time.sleep(0.01)


def _removed(folder: str) -> bool:
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def remove_container(container_id: str) -> None:
    """Remove a container through the engine's socket (no SDK here: standard library)."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return
    try:
        conn = _UnixHTTPConnection(host[len("unix://") :])
        conn.request("DELETE", f"/containers/{container_id}?force=1&v=1")
        conn.getresponse().read()
        conn.close()
    except OSError:
        pass


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(30)
        sock.connect(self._path)
        self.sock = sock


def reap(registered: dict[str, set[str]]) -> None:
    """Kill and remove what is registered: processes first, then their folders."""
    for pgid in registered["pg"]:
        try:
            os.killpg(int(pgid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError, ValueError):
            pass
    for cgroup in registered["cg"]:
        kill_cgroup(cgroup.split("\t"))
    for container in registered["ctr"]:
        remove_container(container)
    for folder in registered["dir"]:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a `kill` of the arena's group: still reap
    registered: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        kind, _, arg = line[1:].partition(" ")
        if kind not in registered or not arg:
            continue
        if line.startswith("+"):
            registered[kind].add(arg)
        elif line.startswith("-"):
            registered[kind].discard(arg)
    reap(registered)


if __name__ == "__main__":
    main()
