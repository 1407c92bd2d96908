"""What an arena makes for its bots outside its own memory, and clearing what dead
arenas left.

Each arena process keeps its bots' folders (local homes, Docker's pipe folders) under
one run folder of its own, ``<tmp>/sixarena-run/<pid>``, and its local bots' cgroups
under ``sixarena/<pid>-<n>`` in each cgroup hierarchy. The watchdog (``reaper``)
removes them when the arena dies; should it die too (the machine rebooted, the
watchdog was killed), the next arena to start, whatever its sandbox, removes what
belongs to arena processes that no longer exist (``remove_leftovers``).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from arena.sandbox.base import StartError
from arena.sandbox.reaper import Reaper, kill_cgroup

RUN_ROOT_NAME = "sixarena-run"
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_DIR = "sixarena"
"""Our folder in each cgroup hierarchy, holding one cgroup per local bot."""

_lock = threading.Lock()
_run_dir: Path | None = None


def run_root() -> Path:
    """``<tmp>/sixarena-run``: ours and closed to writers other than us (others may pass
    through to the folders we give them)."""
    root = Path(tempfile.gettempdir()) / RUN_ROOT_NAME
    try:
        root.mkdir(mode=0o711, exist_ok=True)
    except OSError as exc:
        raise StartError(f"cannot make {root}: {exc}") from None
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise StartError(f"{root} is not a directory of this user closed to others: remove it and try again")
    return root


def run_dir() -> Path:
    """This arena's run folder (made on first use, removed by the watchdog when the arena
    dies): private folders for its bots go in here."""
    global _run_dir
    with _lock:
        if _run_dir is None or not _run_dir.is_dir():
            folder = run_root() / str(os.getpid())
            folder.mkdir(mode=0o711, exist_ok=True)
            os.chmod(folder, 0o711)
            Reaper.watch("dir", str(folder))
            _run_dir = folder
        return _run_dir


def private_dir(prefix: str, owner: int | None = None) -> Path:
    """A new folder in the run folder that only its owner (``owner``'s uid, or ours) can
    open: mode 0700, made atomically by mkdtemp."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=run_dir()))
    if owner is not None and owner != os.geteuid():
        os.chown(folder, owner, owner)
    return folder


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_pid(name: str) -> int | None:
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def cgroup_roots() -> list[Path]:
    """Our folder in every cgroup hierarchy that has one."""
    if not CGROUP_ROOT.is_dir():
        return []
    return [h / CGROUP_DIR for h in CGROUP_ROOT.iterdir() if (h / CGROUP_DIR).is_dir()] + (
        [CGROUP_ROOT / CGROUP_DIR] if (CGROUP_ROOT / CGROUP_DIR / "cgroup.procs").exists() else []
    )


def remove_leftovers() -> int:
    """Remove the run folders and cgroups of arena processes that are gone; how many."""
    removed = 0
    root = Path(tempfile.gettempdir()) / RUN_ROOT_NAME
    if root.is_dir() and root.lstat().st_uid == os.geteuid():
        for entry in root.iterdir():
            pid = _owner_pid(entry.name)
            if pid is not None and pid != os.getpid() and not pid_alive(pid):
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
    stale: dict[str, list[str]] = {}
    for hierarchy in set(cgroup_roots()):
        try:
            names = [p.name for p in hierarchy.iterdir() if p.is_dir()]
        except OSError:
            continue
        for name in names:
            pid = _owner_pid(name)
            if pid is not None and pid != os.getpid() and not pid_alive(pid):
                stale.setdefault(name, []).append(str(hierarchy / name))
    for folders in stale.values():
        kill_cgroup(folders)
        removed += 1
    return removed
