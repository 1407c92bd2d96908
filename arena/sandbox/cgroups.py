"""A container's cgroup files: its CPU time, and stopping it between its turns.

Reading these files takes microseconds, where the engine's own stats and pause calls
take milliseconds. To stop a bot between its turns, every process the cgroup lists
(but its init) gets SIGSTOP, and SIGCONT to go on: about 5 µs a process, where the
cgroup freezer costs 80-150 µs a cycle here (the freezer is kept as a fallback). Both
cgroup v1 (one hierarchy per controller) and v2 (one unified hierarchy) are handled.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


class Cgroup:
    def __init__(self, pid: int) -> None:
        """The cgroups of process ``pid`` (a container's init), read from /proc."""
        self.v2: Path | None = None
        self.v1: dict[str, Path] = {}
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                self.v2 = ROOT / path.lstrip("/")
                if not (self.v2 / "cgroup.freeze").exists():
                    unified = ROOT / "unified" / path.lstrip("/")
                    self.v2 = unified if (unified / "cgroup.freeze").exists() else None
            for controller in controllers.split(","):
                if controller:
                    self.v1[controller] = ROOT / controller / path.lstrip("/")
        self._cpu_fd: int | None = None
        self._procs_fd: int | None = None

    def cpu_seconds(self) -> float:
        """CPU time used by every process of the cgroup."""
        try:
            if "cpuacct" in self.v1:
                if self._cpu_fd is None:
                    self._cpu_fd = os.open(self.v1["cpuacct"] / "cpuacct.usage", os.O_RDONLY)
                return int(os.pread(self._cpu_fd, 64, 0)) / 1e9
            if self.v2 is not None:
                if self._cpu_fd is None:
                    self._cpu_fd = os.open(self.v2 / "cpu.stat", os.O_RDONLY)
                first = os.pread(self._cpu_fd, 256, 0).split(b"\n", 1)[0]  # usage_usec N
                return int(first.split()[1]) / 1e6
        except (OSError, ValueError, IndexError):
            pass
        return 0.0

    def signal_all(self, sig: signal.Signals, spare: int) -> bool:
        """Send ``sig`` to every process of the cgroup but ``spare``; False if none listed."""
        procs = self.v2 if self.v2 is not None else self.v1.get("pids") or self.v1.get("freezer")
        if procs is None:
            return False
        try:
            if self._procs_fd is None:
                self._procs_fd = os.open(procs / "cgroup.procs", os.O_RDONLY)
            pids = [int(p) for p in os.pread(self._procs_fd, 65536, 0).split()]
        except (OSError, ValueError):
            return False
        for pid in pids:
            if pid != spare:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        return bool(pids)

    def freeze(self, frozen: bool) -> bool:
        """Freeze or thaw every process of the cgroup; False where no freezer is reachable."""
        try:
            if self.v2 is not None:
                (self.v2 / "cgroup.freeze").write_text("1" if frozen else "0")
                return True
            if "freezer" in self.v1:
                (self.v1["freezer"] / "freezer.state").write_text("FROZEN" if frozen else "THAWED")
                return True
        except OSError:
            pass
        return False

    def close(self) -> None:
        for fd in (self._cpu_fd, self._procs_fd):
            if fd is not None:
                os.close(fd)
        self._cpu_fd = self._procs_fd = None
