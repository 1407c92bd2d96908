"""Cgroup files: a bot's CPU time, its caps, and freezing it whole between its turns.

A container's cgroups are the engine's (``Cgroup``); a local bot gets cgroups of its own
(``OwnCgroup``). Reading and writing these files takes microseconds, where the engine's
own stats and pause calls take milliseconds. Freezing a cgroup stops every process in
it at once, however many it forks: signals to a list of processes cannot, since the
list is stale as soon as it is read. Both cgroup v1 (one hierarchy per controller) and
v2 (one unified hierarchy) are handled; on a hybrid machine a local bot is frozen by the
v2 freezer (a cycle costs a few microseconds per task in the group, v1's about 200 us;
reopening the file each time cost more than the freeze: bench/freezer.py).
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
        self._procs_fd: int | None = None
        self._freezer: Freezer | None = None

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

    def freezer(self) -> Freezer:
        """Its freezer, opened at the first call and kept open until ``close``."""
        if self._freezer is None:
            self._freezer = Freezer(self)
        return self._freezer

    def close(self) -> None:
        for fd in (self._cpu_fd, self._procs_fd):
            if fd is not None:
                os.close(fd)
        self._cpu_fd = self._procs_fd = None
        if self._freezer is not None:
            self._freezer.close()
            self._freezer = None


class Freezer:
    """A cgroup's freezer (cgroup v2's ``cgroup.freeze``, else v1's ``freezer.state``),
    for a container's cgroup as for a local bot's own: every process in the cgroup stops
    at once, also those it forks while it is being frozen, and none can wake another,
    where signals to a list of processes miss those forked after the list was read.

    Freezing is asynchronous (the cgroup reads "freezing" until the last task stops) and
    needs no waiting: a frozen bot is not being timed. Thawing is checked: ``thaw``
    returns once the cgroup reads thawed, so a request's clock never starts on a bot
    still frozen. Both files stay open: opening a cgroup file costs more than the
    freeze itself (bench/freezer.py)."""

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
        except OSError:  # not ours to write (an arena that is not root), or gone
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


# --- cgroups of our own, one per local bot ------------------------------------------------

V1_CONTROLLERS = ("freezer", "cpuacct", "memory", "pids")
"""What a local bot's cgroup needs on cgroup v1: freezing it whole, its CPU, its memory
and its processes capped."""


def _v1_hierarchy(controller: str) -> Path | None:
    """Where a v1 controller is mounted (alone, or with others as in ``cpu,cpuacct``)."""
    for mount in (ROOT / controller, *ROOT.glob(f"*{controller}*")):
        if controller in mount.name.split(",") and (mount / "cgroup.procs").exists():
            return mount
    return None


class OwnCgroup(Cgroup):
    """A cgroup made for one local bot (or its build), under ``sixarena/<pid>-<n>`` in each
    hierarchy: every process the bot starts, by fork or setsid, stays in it, so it is
    frozen, measured, capped and killed as a whole.

    Beside it, in the freezer's hierarchy only, ``<pid>-<n>-aside`` takes the sandbox's
    own wrapper processes once the bot runs (``set_aside``): a freeze or thaw then stops
    and wakes the bot's tasks only, not bubblewrap's two, which compute nothing for the
    bot (they wait for their child), and costs a third of what it did (bench/freezer.py)."""

    _made = 0

    def __init__(self, folders: list[Path], v2: Path | None, v1: dict[str, Path], aside: Path | None = None) -> None:
        self.folders = folders
        self.v2 = v2
        self.v1 = v1
        self.aside = aside
        self._cpu_fd = None
        self._procs_fd = None
        self._freezer = None

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> OwnCgroup | None:
        """A new cgroup with these caps, or None where this arena cannot make one (not
        root, or no cgroup file system): the caller falls back to signals and rlimits."""
        from arena.sandbox.leftovers import CGROUP_DIR

        if os.geteuid() != 0:
            return None
        cls._made += 1
        name = f"{os.getpid()}-{cls._made}"
        try:
            if all(_v1_hierarchy(c) is not None for c in V1_CONTROLLERS):
                v1 = {c: _v1_hierarchy(c) / CGROUP_DIR / name for c in V1_CONTROLLERS}  # type: ignore[operator]
                folders = sorted(set(v1.values()))
                for folder in folders:
                    folder.mkdir(parents=True)
                unified = ROOT / "unified"
                v2 = None
                if (unified / "cgroup.procs").exists():
                    # A hybrid machine: v2's freezer is the fast one, whatever controllers
                    # (none of them used here) are bound to the unified hierarchy.
                    v2 = unified / CGROUP_DIR / name
                    v2.mkdir(parents=True)
                    folders.append(v2)
                v2 = v2 if v2 is not None and (v2 / "cgroup.freeze").exists() else None
                aside = (v2 or v1["freezer"]).with_name(f"{name}-aside")
                aside.mkdir()
                cgroup = cls(folders, v2, v1, aside)
                cgroup.watched()
                _write(v1["memory"] / "memory.limit_in_bytes", memory_mb << 20)
                if (v1["memory"] / "memory.memsw.limit_in_bytes").exists():
                    _write(v1["memory"] / "memory.memsw.limit_in_bytes", memory_mb << 20)  # no swap either
                _write(v1["pids"] / "pids.max", processes)
                return cgroup
            if (ROOT / "cgroup.controllers").exists():  # cgroup v2 alone
                parent = ROOT / CGROUP_DIR
                parent.mkdir(exist_ok=True)
                for level in (ROOT, parent):
                    _write(level / "cgroup.subtree_control", "+memory +pids +cpu")
                folder = parent / name
                folder.mkdir()
                aside = parent / f"{name}-aside"
                aside.mkdir()
                cgroup = cls([folder], folder, {}, aside)
                cgroup.watched()
                _write(folder / "memory.max", memory_mb << 20)
                _write(folder / "memory.swap.max", 0)
                _write(folder / "pids.max", processes)
                return cgroup
        except OSError:
            from arena.sandbox.reaper import kill_cgroup

            for folder in (name, f"{name}-aside"):
                kill_cgroup(str(p) for p in ROOT.glob(f"*/{CGROUP_DIR}/{folder}"))
                kill_cgroup([str(ROOT / CGROUP_DIR / folder)])
        return None

    @property
    def procs_files(self) -> list[str]:
        """Where a process writes ``0`` to join (done in the child between fork and exec)."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    @property
    def key(self) -> str:
        """How the watchdog knows it: its folders (and the one aside), tab-separated."""
        return "\t".join(str(f) for f in [*self.folders, *([self.aside] if self.aside else [])])

    def set_aside(self, pids: list[int]) -> bool:
        """Move these processes out of the frozen group into the one aside; False where
        that cannot be done. Only for the sandbox's own wrappers, never a process of the
        bot's: each process the bot starts stays where it was born, in the group."""
        if self.aside is None:
            return False
        try:
            for pid in pids:
                _write(self.aside / "cgroup.procs", pid)
        except OSError:
            return False
        return True

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of it for going over its memory cap."""
        try:
            if "memory" in self.v1:
                text = (self.v1["memory"] / "memory.oom_control").read_text()
                if "oom_kill " not in text:  # older kernels: the cap was hit
                    return int((self.v1["memory"] / "memory.failcnt").read_text()) > 0
            elif self.v2 is not None:
                text = (self.v2 / "memory.events").read_text()
            else:
                return False
            counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
            return int(counts.get("oom_kill", 0)) > 0
        except (OSError, ValueError):
            return False

    def watched(self) -> None:
        """Tell the watchdog at once, before any process joins: a cgroup of an arena killed
        at any moment is removed with it."""
        from arena.sandbox.reaper import Reaper

        Reaper.watch("cg", self.key)

    def remove(self) -> None:
        """Kill whatever is left in it and remove it."""
        from arena.sandbox.reaper import Reaper, kill_cgroup

        self.close()
        kill_cgroup(str(f) for f in [*self.folders, *([self.aside] if self.aside else [])])
        Reaper.forget("cg", self.key)


def _write(path: Path, value: object) -> None:
    path.write_text(str(value))
