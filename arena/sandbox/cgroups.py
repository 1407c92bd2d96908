"""A container's cgroup files: its CPU time, and freezing it between its turns.

Reading and writing these files takes microseconds, where the engine's own pause and
stats calls take milliseconds: fast enough to freeze a bot after every answer. Both
cgroup v1 (one hierarchy per controller) and v2 (one unified hierarchy) are handled.
"""

from __future__ import annotations

import os
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
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
