"""Bots as local processes, inside bubblewrap and a cgroup of their own.

A bot runs from a checked, sealed copy of its folder (made once per content, built
there if its manifest has a ``build``), as an unprivileged user of its own when the
arena is root (never as root), inside bubblewrap (no network, its own PID namespace,
the system read-only, of our files only its copy and the bots' Python runtime, a capped /tmp),
and in a cgroup of its own that caps its memory and processes, is frozen as a whole
between its turns and counts the CPU of every process it starts. Python bots run on a
runtime of their own that every bot's user can read (``runtime.py``: the SDK, msgspec
and an interpreter), whatever interpreter the arena itself runs on. Where no cgroup can
be made (the arena is not root) it falls back to rlimits and signals to its process
group, and says so. Without bubblewrap nothing confines a bot, so that mode must be
asked for by name (``unsafe=True``, ``--sandbox unsafe-local``).
"""

from __future__ import annotations

import fcntl
import os
import resource
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from arena.bots import Bot, content_hash
from arena.bots.folder import FolderError, copy_folder, remove_tree, set_modes
from arena.sandbox.base import ResourceLimits, StartError
from arena.sandbox.cgroups import OwnCgroup
from arena.sandbox.leftovers import private_dir
from arena.sandbox.pipes import PipedBot
from arena.sandbox.reaper import Reaper
from arena.sandbox.runtime import Runtime, ensure_runtime, runtimes_root
from arena.sandbox.runtime import reachable_by_others as reachable_by_others
from arena.sandbox.seccomp import bot_filter

GRACE_SECONDS = 0.5
BUILD_SECONDS = 300
READY_SUFFIX = ".ready"
"""A prepared copy ``NAME-HASH`` is ready once ``NAME-HASH.ready`` exists beside it, in
the arena's own folder: never inside the copy, where a build writes (a build that made
the marker a link to a file of the machine had the arena, as root, write through it)."""
USERNS_FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns")
"""Every namespace of its own, the user namespace included, in which it may make no other."""
UID_RANGE = (0x60000000, 0x6FFFFFFF)
"""Where each bot's own user comes from when the arena is root: far above any account
of the machine, so no host process shares it (nobody would)."""
UNSAFE_WARNING = (
    "unsafe-local runs bots as plain processes with no sandbox: they can reach the network, read other"
    " processes' memory and command lines (hence the seed and every hand), read and write the files of"
    " the user they run as, and leave processes behind"
)
_uids_in_use: set[int] = set()


def bot_environment(home: str, runtime: Runtime) -> dict[str, str]:
    """A small, predictable environment: the bots' Python runtime first on PATH and its
    ``site`` on PYTHONPATH, so ``python3`` in a manifest finds an interpreter with the
    bot SDK (``protocol``) and msgspec that the bot's user can read."""
    return {
        "PATH": f"{runtime.bin}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(runtime.site),
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
        packages = bot.manifest.packages
        hint = f"; it needs {', '.join(packages)}: apt-get install {' '.join(packages)}" if packages else ""
        raise StartError(
            f"{bot.path}: the run command's program {program!r} was not found (check `run` in bot.toml{hint})"
        )
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


def new_uid() -> int:
    """A user of its own for one bot (its files stay readable: they are sealed world-readable)."""
    while (uid := secrets.randbelow(UID_RANGE[1] - UID_RANGE[0]) + UID_RANGE[0]) in _uids_in_use:
        pass
    _uids_in_use.add(uid)
    return uid


class LocalProcess(PipedBot):
    """One running bot process (see ``arena.sandbox.base.BotProcess``)."""

    def __init__(
        self,
        proc: trio.Process,
        max_line: int,
        isolation: str,
        cgroup: OwnCgroup | None,
        uid: int | None,
        home: Path | None,
        nested: bool,
        traced: bool = True,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        super().__init__(proc.stdin, proc.stdout, proc.stderr, max_line)  # type: ignore[arg-type]
        self._proc = proc
        self.isolation = isolation
        self.pid = proc.pid
        self.cgroup = cgroup
        self._uid = uid
        self._home = home
        self._nested = nested
        """True when the bot runs below a wrapper (bubblewrap): its CPU is the innermost's."""
        self._wrapped = nested and cgroup is not None and not traced
        """Whether bubblewrap's processes are still to be set aside (see ``freeze``): only
        where the seccomp filter keeps the bot from tracing them (``traced`` False)."""
        self._stat_fd: int | None = None
        self._cpu_dir = ""
        self._task_fds: dict[str, int] = {}
        self._calls = 0
        self._cpu_last = 0.0
        """Never let a thread's exit make the total go backwards."""

    async def gone_reason(self) -> str:
        with trio.move_on_after(GRACE_SECONDS):
            await self._proc.wait()
        reason = self.exit_reason()
        if reason is not None:
            await self.last_words(GRACE_SECONDS)
        return reason or "closed its output"

    def freeze(self) -> None:
        """Stop the whole bot: its cgroup at once (nothing it forked escapes), else its
        process group."""
        if self._wrapped:
            self._set_wrappers_aside()
        if self.cgroup is None or not self.cgroup.freezer().freeze():
            self._signal_group(signal.SIGSTOP)

    def _set_wrappers_aside(self) -> None:
        """Once the bot runs, move bubblewrap's two processes out of the frozen group (see
        ``OwnCgroup``). Both are ours: the one started here (outside the bot's PID
        namespace, which cannot name it), and its only child, the namespace's init, which
        forks the bot's command once and from then on only reaps. The bot cannot trace
        them (its seccomp filter refuses ptrace), and nothing it can send the init makes
        it do the bot's work. Until the init has a child, the bot has not started and
        nothing is moved: the bot is born in the group, and so is everything it forks,
        whenever it forks. Any other shape of processes is left as it is, frozen whole."""
        assert self.cgroup is not None
        try:
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
            if len(children) != 1:
                raise ValueError(children)
            init = int(children[0])
            if not Path(f"/proc/{init}/task/{init}/children").read_text().split():
                return  # not started yet: asked again at the next freeze
        except (OSError, ValueError):
            self._wrapped = False
            return
        self._wrapped = False
        self.cgroup.set_aside([self.pid, init])

    def thaw(self) -> None:
        if self.cgroup is None or not self.cgroup.freezer().thaw():
            self._signal_group(signal.SIGCONT)

    def cpu_seconds(self) -> float:
        """CPU time of everything the bot runs: its cgroup's, else all threads of the bot
        process itself (schedstat; the threads' files stay open, and every 16th call
        checks whether their number changed)."""
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
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
        if self.cgroup is not None and self.cgroup.out_of_memory():
            return "killed: out of memory (the bot's memory cap)"
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
        """Close stdin, give the bot a moment, then SIGTERM, then SIGKILL its group; then
        kill whatever is left in its cgroup (processes that left the group too)."""
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
            self.exit_reason()  # read the cgroup's OOM record before it goes
            Reaper.forget("pg", self.pid)
            if self.cgroup is not None:
                await trio.to_thread.run_sync(self.cgroup.remove)
            self._close_tasks()
            if self._stat_fd is not None:
                os.close(self._stat_fd)
            await self._close_pipes()
            if self._home is not None:
                shutil.rmtree(self._home, ignore_errors=True)
            if self._uid is not None:
                _uids_in_use.discard(self._uid)


def working_bubblewrap() -> str | None:
    """The path of ``bwrap`` if it is installed and can make its namespaces here, the
    user namespace without nested ones included (``--disable-userns``: bubblewrap 0.8)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    for _ in range(3):  # a busy machine tearing down namespaces may fail one probe
        try:
            probe = subprocess.run(
                [path, *USERNS_FLAGS, "--ro-bind", "/", "/", "true"], capture_output=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):  # a bwrap on the PATH that cannot run
            return None
        if probe.returncode == 0:
            return path
    return None


def copies_root() -> Path:
    """Where prepared copies live. It must be ours and closed to writers: it is in the
    shared temporary directory, and what is in it gets run."""
    root = Path(tempfile.gettempdir()) / "sixarena-bots"
    root.mkdir(mode=0o755, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise StartError(f"{root} is not a directory of this user closed to others: remove it and try again")
    return root


def prepared_dir(bot: Bot, digest: str | None = None) -> Path:
    """The prepared copy of ``bot``: one per name and content, so a change means a new copy."""
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.name)
    return copies_root() / f"{name}-{(digest or content_hash(bot.path))[:12]}"


def ready_marker(target: Path) -> Path:
    """The file that says the prepared copy ``target`` is sealed and may run."""
    return target.with_name(target.name + READY_SUFFIX)


def is_ready(target: Path) -> bool:
    """Whether ``target`` is a sealed prepared copy: its marker is a plain file of ours,
    and the copy a folder of ours (a copy removed by hand is made again)."""
    try:
        marker, copy = os.lstat(ready_marker(target)), os.lstat(target)
    except OSError:
        return False
    ours = marker.st_uid == copy.st_uid == os.geteuid()
    return ours and stat.S_ISREG(marker.st_mode) and stat.S_ISDIR(copy.st_mode)


def _write_marker(target: Path, text: str) -> None:
    """Create the marker (never through a link, never over a file someone made)."""
    marker = ready_marker(target)
    marker.unlink(missing_ok=True)
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode(errors="surrogateescape"))
    finally:
        os.close(fd)


def sealed_mode(info: os.stat_result) -> int:
    """A prepared copy's mode: readable by all, writable by its owner (the arena) only,
    no set-id bit; a file its owner may run, every bot's user may run."""
    if stat.S_ISDIR(info.st_mode):
        return 0o755
    return 0o755 if info.st_mode & 0o100 else 0o644


def build_mode(info: os.stat_result) -> int:
    """A build folder's mode: its owner (the build's user) may write everything, as in
    a fresh checkout; a stored snapshot's copy is read-only, and a compiler could not
    write its output there."""
    mode = stat.S_IMODE(info.st_mode) & 0o777
    return mode | 0o700 if stat.S_ISDIR(info.st_mode) else mode | 0o600


def _tail(path: Path, lines: int = 10, limit: int = 8192) -> list[str]:
    with open(path, "rb") as f:
        f.seek(max(0, os.fstat(f.fileno()).st_size - limit))
        return f.read().decode("utf-8", "replace").rstrip().splitlines()[-lines:]


class LocalSandbox:
    """Starts bots as local processes under ``ResourceLimits``, inside bubblewrap.

    ``unsafe=True`` runs them as plain processes (no bubblewrap): only on request,
    never as a fallback. Run as root, each bot gets a user of its own and a cgroup.
    """

    def __init__(
        self, limits: ResourceLimits | None = None, bubblewrap: bool | None = None, unsafe: bool = False
    ) -> None:
        self.limits = limits or ResourceLimits()
        self.unsafe = unsafe or bubblewrap is False
        self.bwrap = None if self.unsafe else working_bubblewrap()
        if self.bwrap is None and not self.unsafe:
            raise StartError(
                "bubblewrap is not installed (0.8 or later) or cannot make namespaces here (apt-get install bubblewrap);"
                f" --sandbox unsafe-local runs bots anyway, without protection: {UNSAFE_WARNING}"
            )
        self.as_root = os.geteuid() == 0
        self.seccomp = b"" if self.bwrap is None else bot_filter()
        self.runtime = ensure_runtime()
        probe = OwnCgroup.create(self.limits.memory_mb, self.limits.processes)
        self.cgroups = probe is not None
        if probe is not None:
            probe.remove()
        self.isolation = self._describe()

    def _describe(self) -> str:
        mib = self.limits.memory_mb
        if self.bwrap is None:
            parts = ["local, UNSAFE: no sandbox (network, other processes and files are reachable)"]
        else:
            parts = [
                f"local: bubblewrap (no network, own PID namespace, read-only system, own folder only,"
                f" {self.limits.tmp_mb} MiB /tmp, no namespaces or mounts of its own, seccomp filter)"
            ]
        if self.cgroups:
            parts.append(f"own cgroup (frozen whole, {mib} MiB memory, {self.limits.processes} processes)")
        else:
            parts.append(f"resource limits ({mib} MiB data)")
        parts.append("own unprivileged user" if self.as_root else f"as user {os.geteuid()}")
        return ", ".join(parts)

    def isolation_for(self, bot: Bot) -> str:
        """The same for every bot: ``isolation``."""
        return self.isolation

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        """Copy and build the bot now, before any clock runs (``arena play`` calls this)."""
        self.prepared(bot, progress)

    def sdk_fix(self) -> str:
        """Make the bots' Python again, or install one every bot's user can read."""
        return (
            f"the bots' Python ({self.runtime.interpreter}, from {self.runtime.root}) cannot run the SDK:"
            f" remove {runtimes_root()} to have it made again, or install a Python 3 every user can read"
            " (apt-get install python3)"
        )

    def prepared(self, bot: Bot, progress: Callable[[str], None] | None = None) -> Bot:
        """``bot`` run from its prepared copy: checked (no link out, no special file,
        within the folder caps), built if it has a ``build``, sealed. Made once per
        content; a lock file keeps concurrent starts to one."""
        digest = content_hash(bot.path)
        target = prepared_dir(bot, digest)
        if is_ready(target):
            return Bot(target, bot.manifest)
        with open(f"{target}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not is_ready(target):
                ready_marker(target).unlink(missing_ok=True)
                remove_tree(target)  # what a failed or killed attempt left
                command = bot.manifest.build.strip()
                if command:
                    if progress is not None:
                        progress(f"building {bot.name}: {command}")
                    self._build(bot, command, digest, target)
                else:
                    self._copy(bot, digest, target)
                set_modes(target, sealed_mode, (os.geteuid(), os.getegid()))
                _write_marker(target, f"{bot.path}\n{command}\n")
        return Bot(target, bot.manifest)

    @staticmethod
    def _copy(bot: Bot, digest: str, target: Path) -> None:
        """``copy_folder`` of the bot's folder with its checks, checked to hold ``digest``."""
        copied = copy_folder(bot.path, target)
        if copied != digest:
            remove_tree(target)
            raise StartError(f"{bot.path}: the folder changed while it was copied: try again")

    def _build(self, bot: Bot, command: str, digest: str, target: Path) -> None:
        """Build in a folder of the build's own (a copy the build's user owns and may
        write, seen by the build at ``target``'s path), then copy what it made to
        ``target`` through the folder checks: a link out, a special file or output over
        the caps refuses the build, and what runs was written by the arena alone."""
        work = target.with_name(target.name + ".build")
        remove_tree(work)
        self._copy(bot, digest, work)
        try:
            uid = new_uid() if self.as_root else None
            try:
                set_modes(work, build_mode, (uid, uid) if uid is not None else None)
                self._run_build(bot, command, work, target, uid)
            finally:
                if uid is not None:
                    _uids_in_use.discard(uid)
            try:
                copy_folder(work, target)
            except FolderError as exc:
                raise StartError(
                    f"{bot.path}: the build command {command!r} made a folder the arena refuses ({exc}): fix the"
                    " build or `build` in bot.toml"
                ) from None
        finally:
            remove_tree(work)

    def _run_build(self, bot: Bot, command: str, work: Path, target: Path, uid: int | None) -> None:
        """Run the build command in ``work`` under the same confinement as play (its own
        user and cgroup, bubblewrap with only ``work`` writable, at ``target``'s path),
        within ``BUILD_SECONDS``; everything it started is killed when it ends."""
        cgroup = OwnCgroup.create(self.limits.memory_mb, self.limits.processes) if self.cgroups else None
        log = Path(tempfile.mkstemp(prefix=f"arena-build-{bot.name}-", dir=private_dir("build-"))[1])
        seccomp: int | None = None
        home: Path | None = None
        try:
            home = private_dir("home-", uid)
            argv = ["/bin/sh", "-c", command]
            if self.bwrap is not None:
                seccomp = self._seccomp_fd() if self.seccomp else None
                argv = self._bubblewrap(Bot(target, bot.manifest), argv, writable=work, seccomp_fd=seccomp)
            code: int | str
            try:
                with open(log, "wb") as output:
                    proc = subprocess.Popen(
                        argv,
                        stdin=subprocess.DEVNULL,
                        stdout=output,
                        stderr=subprocess.STDOUT,
                        cwd=work,
                        env=bot_environment(str(home), self.runtime),
                        start_new_session=True,
                        preexec_fn=self._confine(uid, cgroup),
                        pass_fds=() if seccomp is None else (seccomp,),
                    )
                Reaper.watch("pg", proc.pid)
                try:
                    code = proc.wait(timeout=BUILD_SECONDS)
                except subprocess.TimeoutExpired:
                    code = f"killed after {BUILD_SECONDS} s"
                finally:
                    _kill_group(proc.pid)
                    proc.wait()
                    Reaper.forget("pg", proc.pid)
                if cgroup is not None and code != 0 and cgroup.out_of_memory():
                    code = f"killed: out of memory ({self.limits.memory_mb} MiB)"
            except OSError as exc:
                code = f"could not start: {exc}"
            if code != 0:
                tail = _tail(log)
                raise StartError(
                    f"{bot.path}: the build command {command!r} failed ({code if isinstance(code, str) else f'exit {code}'}):"
                    f" run `{command}` in the folder to see why, and fix the build or `build` in bot.toml"
                    + "".join(f"\n  {line}" for line in tail)
                )
        finally:
            if seccomp is not None:
                os.close(seccomp)
            if cgroup is not None:
                cgroup.remove()
            shutil.rmtree(log.parent, ignore_errors=True)
            if home is not None:
                shutil.rmtree(home, ignore_errors=True)

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> LocalProcess:
        bot = await trio.to_thread.run_sync(self.prepared, bot)
        uid = new_uid() if self.as_root else None
        cgroup = OwnCgroup.create(self.limits.memory_mb, self.limits.processes) if self.cgroups else None
        home = None if self.bwrap is not None else private_dir("home-", uid)
        env = bot_environment(str(home or "/tmp"), self.runtime)
        seccomp: int | None = None
        try:
            argv = resolve_command(bot, env)
            if self.bwrap is not None:
                seccomp = self._seccomp_fd() if self.seccomp else None
                argv = self._bubblewrap(bot, argv, seccomp_fd=seccomp)
            proc = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=bot.path,
                env=env,
                start_new_session=True,
                preexec_fn=self._confine(uid, cgroup),
                pass_fds=() if seccomp is None else (seccomp,),
            )
        except (OSError, StartError) as exc:
            if cgroup is not None:
                cgroup.remove()
            if home is not None:
                shutil.rmtree(home, ignore_errors=True)
            if uid is not None:
                _uids_in_use.discard(uid)
            if isinstance(exc, StartError):
                raise
            raise StartError(f"{bot.path}: cannot start {bot.manifest.run!r}: {exc}") from None
        finally:
            if seccomp is not None:
                os.close(seccomp)
        Reaper.watch("pg", proc.pid)  # its group dies with the arena, even a frozen one
        nested = self.bwrap is not None
        process = LocalProcess(proc, max_line, self.isolation, cgroup, uid, home, nested, traced=not self.seccomp)
        nursery.start_soon(process.pump_stderr)
        return process

    def _seccomp_fd(self) -> int:
        """A fresh descriptor of the bots' seccomp filter, for one bubblewrap to read."""
        fd = os.memfd_create("sixarena-seccomp", os.MFD_CLOEXEC)
        os.write(fd, self.seccomp)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def _bubblewrap(
        self, bot: Bot, argv: list[str], writable: Path | None = None, seccomp_fd: int | None = None
    ) -> list[str]:
        """The bot's command inside bubblewrap: no network, its own PID namespace, the
        system read-only, every capability dropped, no user namespace of its own to make
        (``--disable-userns``), the system calls of ``seccomp.py`` refused, a capped
        /tmp, and of our files only its copy (for a build, ``writable`` in its place)
        and the bots' Python runtime."""
        assert self.bwrap is not None
        # No --die-with-parent: it ties bubblewrap to the thread that started it, and Trio
        # starts processes from worker threads that end when idle (the bot was killed
        # ten seconds in). Teardown kills the process group and the cgroup.
        wrap = [self.bwrap, *USERNS_FLAGS, "--cap-drop", "ALL"]
        if seccomp_fd is not None:
            wrap += ["--seccomp", str(seccomp_fd)]
        wrap += ["--proc", "/proc", "--dev", "/dev"]
        wrap += ["--size", str(self.limits.tmp_mb << 20), "--tmpfs", "/tmp"]
        wrap += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "lib", "lib64", "sbin"):
            top = Path("/") / name
            if top.is_symlink():
                wrap += ["--symlink", os.readlink(top), str(top)]
            elif top.is_dir():
                wrap += ["--ro-bind", str(top), str(top)]
        visible = {self.runtime.root, *(Path(p) for p in self.runtime.binds), bot.path}
        for path in sorted(visible):
            if path == bot.path and writable is not None:
                wrap += ["--bind", str(writable), str(path)]
            elif not path.is_relative_to("/usr"):
                wrap += ["--ro-bind", str(path), str(path)]
        wrap += ["--chdir", str(bot.path), "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--"]
        return wrap + argv

    def _confine(self, uid: int | None, cgroup: OwnCgroup | None) -> Any:
        """What the child does between fork and exec (no Python objects of the parent's
        are touched there): join its cgroup, set its limits, drop to its own user."""
        limits = self.limits
        procs_files = cgroup.procs_files if cgroup is not None else []

        def confine() -> None:
            for procs in procs_files:
                with open(procs, "w") as f:
                    f.write("0")
            mb = 1024 * 1024
            if cgroup is None:
                # No cgroup to cap real memory: cap the data segment (not the address
                # space, which runtimes such as Node.js reserve by the gigabyte unused).
                resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_mb * mb,) * 2)
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb,) * 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
            # SCHED_BATCH: a bot woken by a request does not preempt the referee, which is
            # still writing the other seats' requests (the bots stay equal among themselves).
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
            if uid is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes,) * 2)  # its own user: its own count
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)

        return confine


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
