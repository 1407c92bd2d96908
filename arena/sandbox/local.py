"""Bots as local processes, confined as far as a plain process can be.

Each bot runs in its own session and process group, under resource limits (address
space, CPU seconds, file size, open files, and when the arena runs as root a process
cap and the unprivileged user ``nobody``), with its own folder as working directory and
a private, empty HOME and TMPDIR. Teardown is polite then firm and takes the whole
process group with it. A bot with a ``build`` command runs from a built copy of its
folder, made once per content (``built``).
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import trio

from ..bots import Bot, content_hash
from .base import ResourceLimits, StartError
from .pipes import PipedBot
from .reaper import Reaper

NOBODY = 65534
LOCAL_USER_PROCESSES = 512
"""Cap on processes and threads of all local bots together (they share user nobody)."""
GRACE_SECONDS = 0.5
BUILD_SECONDS = 300
BUILT_MARKER = ".built"
"""Written into a build copy when its build succeeded (hidden: not part of the hash)."""


def bot_environment(home: str) -> dict[str, str]:
    """A small, predictable environment: the arena's Python first on PATH, so ``python3``
    in a manifest finds the interpreter that has the bot SDK (``protocol``)."""
    python_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


def resolve_command(bot: Bot, env: dict[str, str]) -> list[str]:
    """The manifest's ``run`` with its program found, or ``StartError`` naming it."""
    argv = bot.argv
    program = argv[0]
    if "/" in program:
        found = bot.path / program
        ok = found.is_file() and os.access(found, os.X_OK)
    else:
        found_str = shutil.which(program, path=env["PATH"])
        ok = found_str is not None
    if not ok:
        raise StartError(f"{bot.path}: the run command's program {program!r} was not found (check `run` in bot.toml)")
    return argv


def innermost(pid: int) -> int:
    """Follow first children down from ``pid``: below bubblewrap, the bot itself."""
    for _ in range(8):
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            break
        if not children:
            break
        pid = int(children[0])
    return pid


class LocalProcess(PipedBot):
    """One running bot process (see ``arena.sandbox.base.BotProcess``)."""

    def __init__(self, proc: trio.Process, home: str, max_line: int, isolation: str, nested: bool = False) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        super().__init__(proc.stdin, proc.stdout, proc.stderr, max_line)  # type: ignore[arg-type]
        self._proc = proc
        self._home = home
        self.isolation = isolation
        self.pid = proc.pid
        self._nested = nested
        """True when the bot runs below a wrapper (bubblewrap): its CPU is the innermost's."""
        self._stat_fd: int | None = None
        self._cpu_dir = ""
        self._task_fds: dict[str, int] = {}
        self._calls = 0
        self._cpu_last = 0.0
        """Never let a thread's exit make the total go backwards."""

    async def gone_reason(self) -> str:
        with trio.move_on_after(GRACE_SECONDS):
            await self._proc.wait()
        return self.exit_reason() or "closed its output"

    def freeze(self) -> None:
        """Stop the whole process group: it cannot compute on another seat's time."""
        self._signal_group(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal_group(signal.SIGCONT)

    def cpu_seconds(self) -> float:
        """CPU time of all the bot's threads, in nanosecond resolution (schedstat).

        The threads' files stay open; every 16th call checks the number of threads and
        reads the list again if it changed, so a call costs a read or two, not a scan.
        """
        try:
            if self._stat_fd is None:
                pid = innermost(self.pid) if self._nested else self.pid
                self._cpu_dir = f"/proc/{pid}/task"
                self._stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
            self._calls += 1
            if self._calls % 16 == 1:  # reading stat costs more than the rest together
                threads = int(os.pread(self._stat_fd, 1024, 0).rsplit(b")", 1)[1].split()[17])
                if threads != len(self._task_fds):
                    self._open_tasks()
            total = sum(int(os.pread(fd, 64, 0).split()[0]) for fd in self._task_fds.values())
        except (OSError, ValueError, IndexError):
            return self._cpu_last
        self._cpu_last = max(self._cpu_last, total / 1e9)
        return self._cpu_last

    def _open_tasks(self) -> None:
        self._close_tasks()
        for tid in os.listdir(self._cpu_dir):
            try:
                self._task_fds[tid] = os.open(f"{self._cpu_dir}/{tid}/schedstat", os.O_RDONLY)
            except OSError:
                continue

    def _close_tasks(self) -> None:
        for fd in self._task_fds.values():
            os.close(fd)
        self._task_fds.clear()

    def exit_reason(self) -> str | None:
        code = self._proc.returncode
        if code is None:
            return None
        if code >= 0:
            return f"exited with code {code}"
        sig = signal.Signals(-code)
        if sig == signal.SIGXCPU:
            return "killed: CPU time limit reached (SIGXCPU)"
        return f"killed by {sig.name}"

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    async def stop(self) -> None:
        """Close stdin, give the bot a moment, then SIGTERM, then SIGKILL its group."""
        with trio.CancelScope(shield=True):
            self.thaw()
            await self._stdin.aclose()
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None:
                    self._signal_group(sig)
                with trio.move_on_after(GRACE_SECONDS):
                    await self._proc.wait()
                if self._proc.returncode is not None:
                    break
            self._signal_group(signal.SIGKILL)  # stragglers left in the group
            await self._proc.wait()
            Reaper.forget("pg", self.pid)
            self._close_tasks()
            if self._stat_fd is not None:
                os.close(self._stat_fd)
            await self._close_pipes()
            shutil.rmtree(self._home, ignore_errors=True)


def working_bubblewrap() -> str | None:
    """The path of ``bwrap`` if it is installed and can make its namespaces here."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = subprocess.run([path, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=10)
    return path if probe.returncode == 0 else None


def reachable_by_others(path: Path) -> bool:
    """Whether a user other than the owner can get to ``path``: every directory on the
    way lets others through, and the path itself lets them read."""
    path = path.resolve()
    try:
        if not all(os.stat(parent).st_mode & stat.S_IXOTH for parent in path.parents):
            return False
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def builds_root() -> Path:
    """Where built copies live. It must be ours and closed to others: it is in the shared
    temporary directory, and what is in it gets run."""
    root = Path(tempfile.gettempdir()) / "sixarena-builds"
    root.mkdir(mode=0o755, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise StartError(f"{root} is not a directory of this user closed to others: remove it and try again")
    return root


def build_dir(bot: Bot) -> Path:
    """The built copy of ``bot``: one per name and content, so a change means a new build."""
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.name)
    return builds_root() / f"{name}-{content_hash(bot.path)[:12]}"


def _copy_ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n.startswith(".") or n == "__pycache__"}


def _own_tree(folder: Path, uid: int, gid: int, seal: bool) -> None:
    """Give a build copy to ``uid``. ``seal``: readable by all, writable by its owner only,
    no set-id bits, so bots (as nobody) cannot change their own build. Each directory is
    sealed before it is read: a build left running cannot swap in a link to a file of the
    machine's (and a file with other links is left alone)."""
    os.lchown(folder, uid, gid)
    if seal:
        os.chmod(folder, 0o755)
    for entry in os.scandir(folder):
        info = entry.stat(follow_symlinks=False)
        if entry.is_dir(follow_symlinks=False):
            _own_tree(Path(entry.path), uid, gid, seal)
        elif entry.is_symlink():
            os.lchown(entry.path, uid, gid)
        elif info.st_nlink == 1:
            os.lchown(entry.path, uid, gid)
            if seal:
                os.chmod(entry.path, (info.st_mode & 0o755) | 0o644 | (0o111 if info.st_mode & 0o100 else 0))


class LocalSandbox:
    """Starts bots as local processes under ``ResourceLimits``, inside bubblewrap where it
    is installed and works.

    Run as root, it drops each bot to user ``nobody``, provided nobody can reach the
    bot's folder and the arena's Python environment (a checkout under /root, say, is
    out of its reach: such bots keep root's user, and the isolation says so).
    """

    def __init__(self, limits: ResourceLimits | None = None, bubblewrap: bool | None = None) -> None:
        self.limits = limits or ResourceLimits()
        self.can_drop = os.geteuid() == 0 and reachable_by_others(Path(sys.prefix))
        self.bwrap = working_bubblewrap() if bubblewrap is not False else None
        if bubblewrap and self.bwrap is None:
            raise StartError("bubblewrap is not installed or cannot make namespaces here: apt-get install bubblewrap")
        self.isolation = self._describe(self.can_drop)

    def _describe(self, as_nobody: bool) -> str:
        parts = ["local: bubblewrap (no network, own PID namespace, read-only system, own folder only)"]
        if self.bwrap is None:
            parts = ["local: resource limits only"]
        else:
            parts.append("resource limits")
        if as_nobody:
            parts.append("user nobody")
        elif os.geteuid() == 0:
            parts.append("as root (nobody cannot reach the bot's files)")
        return ", ".join(parts)

    @property
    def weakest(self) -> bool:
        """True when nothing but resource limits stands between a bot and the machine."""
        return self.bwrap is None

    def isolation_for(self, bot: Bot) -> str:
        """What confines this bot (its user depends on whether nobody can reach it)."""
        return self._describe(self.can_drop and reachable_by_others(bot.path))

    def prepare(self, bot: Bot, progress: Any = print) -> Path:
        """Build the bot now, before any clock runs (``arena play`` calls this)."""
        return self.built(bot, progress).path

    def built(self, bot: Bot, progress: Any = None) -> Bot:
        """``bot`` run from its built copy, building it first if needed; ``bot`` itself
        when it has no ``build``. A lock file keeps concurrent starts to one build."""
        command = bot.manifest.build.strip()
        if not command:
            return bot
        target = build_dir(bot)
        with open(f"{target}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (target / BUILT_MARKER).is_file():
                if progress is not None:
                    progress(f"building {bot.name}: {command}")
                self._build(bot, command, target)
        return Bot(target, bot.manifest)

    def _build(self, bot: Bot, command: str, target: Path) -> None:
        shutil.rmtree(target, ignore_errors=True)  # what a failed or killed build left
        try:
            shutil.copytree(bot.path, target, ignore=_copy_ignore)
        except OSError as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise StartError(f"{bot.path}: cannot copy the folder to build it in {target}: {exc}") from None
        as_nobody = self.can_drop and reachable_by_others(target.parent)
        if as_nobody:
            _own_tree(target, NOBODY, NOBODY, seal=False)
        home = tempfile.mkdtemp(prefix=f"arena-build-{bot.name}-")
        if as_nobody:
            os.chown(home, NOBODY, NOBODY)
        argv = ["/bin/sh", "-c", command]
        if self.bwrap is not None:
            argv = self._bubblewrap(Bot(target, bot.manifest), argv, writable=True)
        try:
            with subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=target,
                env=bot_environment(home),
                start_new_session=True,
                preexec_fn=self._confine_as_nobody if as_nobody else self._confine,
            ) as proc:
                try:
                    output, _ = proc.communicate(timeout=BUILD_SECONDS)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    output, _ = proc.communicate()
                    code: int | str = f"killed after {BUILD_SECONDS} s"
                else:
                    code = proc.returncode
        except OSError as exc:
            output, code = str(exc).encode(), "could not start"
        finally:
            shutil.rmtree(home, ignore_errors=True)
        if code != 0:
            shutil.rmtree(target, ignore_errors=True)
            tail = output.decode("utf-8", "replace").rstrip().splitlines()[-10:]
            raise StartError(
                f"{bot.path}: the build command {command!r} failed (exit {code}): run `{command}` in the folder"
                " to see why, and fix the build or `build` in bot.toml" + "".join(f"\n  {line}" for line in tail)
            )
        _own_tree(target, os.geteuid(), os.getegid(), seal=True)
        (target / BUILT_MARKER).write_text(f"{command}\n")

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> LocalProcess:
        if bot.manifest.build.strip():
            bot = await trio.to_thread.run_sync(self.built, bot)
        home = tempfile.mkdtemp(prefix=f"arena-{bot.name}-")
        env = bot_environment(home)
        as_nobody = self.can_drop and reachable_by_others(bot.path)
        if as_nobody:
            os.chown(home, NOBODY, NOBODY)
        try:
            argv = resolve_command(bot, env)
            if self.bwrap is not None:
                argv = self._bubblewrap(bot, argv)
            proc = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=bot.path,
                env=env,
                start_new_session=True,
                preexec_fn=self._confine_as_nobody if as_nobody else self._confine,
            )
        except (OSError, StartError) as exc:
            shutil.rmtree(home, ignore_errors=True)
            if isinstance(exc, StartError):
                raise
            raise StartError(f"{bot.path}: cannot start {bot.manifest.run!r}: {exc}") from None
        Reaper.watch("pg", proc.pid)  # its group dies with the arena, even a frozen one
        process = LocalProcess(proc, home, max_line, self.isolation_for(bot), nested=self.bwrap is not None)
        nursery.start_soon(process.pump_stderr)
        return process

    def _bubblewrap(self, bot: Bot, argv: list[str], writable: bool = False) -> list[str]:
        """The bot's command inside bubblewrap: no network, its own PID namespace, the
        system read-only, and of our files only its folder (``writable`` for a build)
        and the Python SDK."""
        assert self.bwrap is not None
        # No --die-with-parent: it ties bubblewrap to the thread that started it, and Trio
        # starts processes from worker threads that end when idle (the bot was killed
        # ten seconds in). Teardown kills the process group; an orphan sees end of input.
        wrap = [self.bwrap, "--unshare-all", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        wrap += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "lib", "lib64", "sbin"):
            top = Path("/") / name
            if top.is_symlink():
                wrap += ["--symlink", os.readlink(top), str(top)]
            elif top.is_dir():
                wrap += ["--ro-bind", str(top), str(top)]
        import protocol

        visible = {Path(sys.prefix).resolve(), Path(protocol.__file__).resolve().parent, bot.path}
        for path in sorted(visible):
            if not path.is_relative_to("/usr"):
                bind = "--bind" if writable and path == bot.path else "--ro-bind"
                wrap += [bind, str(path), str(path)]
        wrap += ["--chdir", str(bot.path), "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--"]
        return wrap + argv

    def _confine(self) -> None:
        """Runs in the child between fork and exec: no Python objects of the parent's."""
        limits = self.limits
        mb = 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        # SCHED_BATCH: a bot woken by a request does not preempt the referee, which is
        # still writing the other seats' requests (the bots stay equal among themselves).
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))

    def _confine_as_nobody(self) -> None:
        self._confine()
        # RLIMIT_NPROC counts every process of the user, so all local bots share it.
        resource.setrlimit(resource.RLIMIT_NPROC, (LOCAL_USER_PROCESSES,) * 2)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
