"""The Python that bots run on in the local sandbox, readable by every bot's user.

A local bot runs as an unprivileged user of its own, who often cannot read the arena's
own interpreter (a pyenv Python under /root, a virtualenv in a private folder). So, as
the Docker base image does, the local sandbox gives bots a runtime of their own: a
sealed folder ``/tmp/sixarena-runtime/<hash>`` (root's; ``sixarena-runtime-<uid>`` for
another user) holding the bot SDK (``protocol``) and msgspec in ``site/``, and
``bin/python3`` (and ``python``), first on a bot's PATH, with ``site`` on its
PYTHONPATH. The interpreter is, in this order:

- the arena's own, when a bot's user can read it (always, for an arena not run as root);
- the system's ``/usr/bin/python3`` when msgspec's compiled part fits it (same ABI),
  else with msgspec for its version fetched by pip (the wheel cache or PyPI);
- a copy of the arena's interpreter and its standard library, when neither will do.

The hash is of what decides the runtime (the interpreters, the SDK, msgspec), read
cheaply; the runtime is made once per hash (seconds; a copy of the interpreter takes
tens of megabytes) and reused by every later arena.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from arena.bots import content_hash, load_bot
from arena.sandbox.base import Sandbox, StartError

LAYOUT = 1
"""Bump when the way a runtime is made changes (it is part of the hash)."""
SYSTEM_PYTHONS = ("/usr/bin/python3",)
READY = ".ready"
STDLIB_LEFT_OUT = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages", "dist-packages")
PROBE_NAME = "arena-probe"
PROBE_CODE = '''"""The arena's start-up check: a Python bot on the SDK, as the sample bots are."""

from protocol.bot import Bot, run


class Probe(Bot):
    name, version = "arena-probe", "1"
    games = ("arena-probe",)  # no game: the probe only shakes hands

    def decide(self, kind, view, legal):
        return legal[0]


run(Probe())
'''
PROBE_MANIFEST = (
    f'name = "{PROBE_NAME}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["arena-probe"]\n'
    'description = "The start-up check of the arena: can a Python bot on the SDK answer hello here?"\n'
)
PROBE_SECONDS = 60
"""How long the start-up check waits for the probe's hello answer (a slow, busy machine
still answers in a few seconds; only a broken runtime takes this long)."""


@dataclass(frozen=True)
class Runtime:
    """A ready runtime: its folder, the interpreter ``bin/python3`` runs, and the
    folders bubblewrap must show a bot read-only for it (the folder, and the
    interpreter's own when it is outside /usr)."""

    root: Path
    interpreter: str
    how: str
    binds: tuple[str, ...]

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def site(self) -> Path:
        return self.root / "site"


def runtimes_root() -> Path:
    """Where runtimes live: ours and closed to writers (what is in it gets run)."""
    name = "sixarena-runtime" if os.geteuid() == 0 else f"sixarena-runtime-{os.geteuid()}"
    root = Path(tempfile.gettempdir()) / name
    root.mkdir(mode=0o755, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise StartError(f"{root} is not a directory of this user closed to others: remove it and try again")
    return root


def _base_executable() -> Path:
    """The arena's real interpreter (a virtualenv's ``python`` is a link to it)."""
    return Path(getattr(sys, "_base_executable", None) or sys.executable).resolve()


def _stdlib() -> Path:
    return Path(os.__file__).resolve().parent


def _dynload() -> Path | None:
    """Where the standard library's compiled modules are (``lib-dynload``)."""
    for entry in sys.path:
        if entry.endswith("lib-dynload") and Path(entry).is_dir():
            return Path(entry).resolve()
    return None


def _sdk() -> Path:
    import protocol

    return Path(protocol.__file__).resolve().parent


def _msgspec() -> Path:
    import msgspec

    return Path(msgspec.__file__).resolve().parent


def _open_to_bots(path: Path) -> bool:
    """Whether a bot's user can read ``path``: any path for an arena not run as root (its
    bots run as its own user), else one that others can reach and read."""
    if os.geteuid() != 0:
        return path.exists()
    return reachable_by_others(path)


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


def _arena_python_open() -> bool:
    dynload = _dynload()
    return all(_open_to_bots(p) for p in (_base_executable(), _stdlib(), *([dynload] if dynload else [])))


def _identity(path: str) -> str:
    try:
        real = Path(path).resolve()
        info = real.stat()
    except OSError:
        return f"{path}: none"
    return f"{path}: {real} {info.st_size} {info.st_mtime_ns} {_open_to_bots(real)}"


def runtime_hash() -> str:
    """What the runtime would be made of, read without running anything: the arena's
    interpreter (and whether bots can read it), the system's, the SDK's files, msgspec."""
    parts = [
        f"layout {LAYOUT}",
        f"uid {os.geteuid()}",
        sys.version,
        _identity(str(_base_executable())),
        f"open {_arena_python_open()}",
        *(_identity(p) for p in SYSTEM_PYTHONS),
        f"msgspec {importlib.metadata.version('msgspec')} {_msgspec()}",
        content_hash(_sdk()),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def ensure_runtime(progress: Callable[[str], None] | None = None) -> Runtime:
    """The runtime for this arena, made first if it is not there; ``StartError`` with the
    cause and the fix if none can be made."""
    folder = runtimes_root() / runtime_hash()[:16]
    ready = _read_ready(folder)
    if ready is not None:
        return ready
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = _read_ready(folder)
        if ready is not None:
            return ready
        shutil.rmtree(folder, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"{folder.name}-", dir=folder.parent))
        try:
            made = _make(work, folder, progress)
            _seal(work)
            (work / READY).write_text(
                json.dumps({"interpreter": made.interpreter, "how": made.how, "binds": made.binds})
            )
            os.chmod(work / READY, 0o644)
            os.rename(work, folder)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    ready = _read_ready(folder)
    assert ready is not None
    return ready


def _read_ready(folder: Path) -> Runtime | None:
    try:
        facts = json.loads((folder / READY).read_text())
    except (OSError, ValueError):
        return None
    return Runtime(folder, facts["interpreter"], facts["how"], tuple(facts["binds"]))


def _outside_usr(*paths: Path) -> tuple[str, ...]:
    """The folders of ``paths`` bubblewrap must show (it shows /usr already), none twice."""
    shown = {p for p in paths if not p.is_relative_to("/usr")}
    return tuple(sorted(str(p) for p in shown if not any(p != q and p.is_relative_to(q) for q in shown)))


def _make(work: Path, folder: Path, progress: Callable[[str], None] | None) -> Runtime:
    """Fill ``work`` (to become ``folder``): the SDK, msgspec, and ``bin/python3``."""
    site = work / "site"
    site.mkdir()
    shutil.copytree(_sdk(), site / "protocol", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (work / "bin").mkdir()
    arena_python = _base_executable()
    if _arena_python_open():
        _copy_msgspec(site)
        _link_python(work, arena_python)
        prefix = Path(sys.base_prefix).resolve()
        home = prefix if arena_python.is_relative_to(prefix) and _open_to_bots(prefix) else arena_python.parent
        binds = _outside_usr(home, _stdlib(), *filter(None, [_dynload()]))
        return _compiled(Runtime(folder, str(arena_python), "the arena's Python", binds), work, arena_python)
    for candidate in SYSTEM_PYTHONS:
        found = _system_python(candidate)
        if found is None:
            continue
        python, facts = found
        if facts["ext_suffix"] == sysconfig.get_config_var("EXT_SUFFIX"):
            _copy_msgspec(site)
        elif not _pip_msgspec(site, facts["version"], progress):
            shutil.rmtree(site / "msgspec", ignore_errors=True)
            continue
        _link_python(work, python)
        binds = _outside_usr(python.parent, Path(facts["stdlib"]))
        return _compiled(Runtime(folder, str(python), "the system's Python", binds), work, python)
    if progress is not None:
        progress(f"copying the arena's Python ({arena_python}) into {folder}: its users cannot read it")
    python = _copy_python(work, folder)
    _copy_msgspec(site)
    return _compiled(
        Runtime(folder, str(folder / python.relative_to(work)), "a copy of the arena's Python", ()), work, python
    )


def _system_python(candidate: str) -> tuple[Path, dict[str, Any]] | None:
    """``candidate`` resolved, with its version, extension suffix and standard library,
    if bots can read it and it runs."""
    python = Path(candidate)
    if not python.is_file():
        return None
    python = python.resolve()
    script = (
        "import json, os, sys, sysconfig; print(json.dumps({'version': '%d.%d' % sys.version_info[:2],"
        " 'ext_suffix': sysconfig.get_config_var('EXT_SUFFIX'), 'stdlib': os.path.dirname(os.__file__)}))"
    )
    try:
        done = subprocess.run([str(python), "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60)
        facts = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not all(_open_to_bots(p) for p in (python, Path(facts["stdlib"]))):
        return None
    return python, facts


def _copy_msgspec(site: Path) -> None:
    shutil.copytree(_msgspec(), site / "msgspec", ignore=shutil.ignore_patterns("__pycache__"))


def _pip_msgspec(site: Path, version: str, progress: Callable[[str], None] | None) -> bool:
    """msgspec for another Python version, from pip's cache or PyPI: whether it came."""
    wanted = f"msgspec=={importlib.metadata.version('msgspec')}"
    if progress is not None:
        progress(f"fetching {wanted} for Python {version} (the bots' Python)")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    command += ["--only-binary=:all:", "--python-version", version, "--target", str(site), wanted]
    try:
        done = subprocess.run(command, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and (site / "msgspec").is_dir()


def _link_python(work: Path, python: Path) -> None:
    for name in ("python3", "python"):
        (work / "bin" / name).symlink_to(python)


def _copy_python(work: Path, folder: Path) -> Path:
    """The arena's interpreter and standard library copied to ``work/python`` (as they
    are laid out, so the copy finds its library next to itself), and ``bin/python3`` to
    run it; its shared library too, when it needs one. Returns the copied interpreter."""
    source = _base_executable()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    home = work / "python"
    (home / "bin").mkdir(parents=True)
    python = home / "bin" / version
    shutil.copy2(source, python)
    stdlib = home / "lib" / version
    shutil.copytree(_stdlib(), stdlib, symlinks=True, ignore=shutil.ignore_patterns(*STDLIB_LEFT_OUT))
    dynload = _dynload()
    if dynload is not None and not (stdlib / "lib-dynload").exists():
        shutil.copytree(dynload, stdlib / "lib-dynload")
    soname = sysconfig.get_config_var("INSTSONAME") or ""
    libdir = Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent")
    final = folder / "python"
    if soname and (libdir / soname).is_file() and soname.encode() in source.read_bytes():
        shutil.copy2(libdir / soname, home / "lib" / soname)
        wrapper = f'#!/bin/sh\nLD_LIBRARY_PATH={final}/lib exec {final}/bin/{version} "$@"\n'
        for name in ("python3", "python"):
            (work / "bin" / name).write_text(wrapper)
            os.chmod(work / "bin" / name, 0o755)
    else:
        _link_python(work, final / "bin" / version)
    return python


def _compiled(runtime: Runtime, work: Path, python: Path) -> Runtime:
    """Byte-compile the SDK and msgspec with the runtime's interpreter (bots never write
    their caches), which also proves the interpreter runs them."""
    done = subprocess.run(
        [str(python), "-I", "-m", "compileall", "-q", str(work / "site")], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise StartError(
            f"the bots' Python ({runtime.interpreter}) cannot compile the bot SDK ({tail[0]}): install a Python 3"
            " every user can read (apt-get install python3)"
        )
    return runtime


def _seal(work: Path) -> None:
    """Readable by all, writable by the arena's user only, no set-id bits."""
    os.chmod(work, 0o755)
    for top, dirs, files in os.walk(work):
        for name in dirs:
            os.chmod(Path(top) / name, 0o755)
        for name in files:
            path = Path(top) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                os.chmod(path, 0o755 if mode & 0o100 else 0o644)


# --- the start-up check -----------------------------------------------------------------


def probe_folder() -> Path:
    """A Python bot on the SDK, sealed in the runtimes' folder (readable by bots)."""
    digest = hashlib.sha256((PROBE_MANIFEST + PROBE_CODE).encode()).hexdigest()[:12]
    folder = runtimes_root() / f"probe-{digest}"
    if not (folder / "bot.toml").is_file():
        work = Path(tempfile.mkdtemp(prefix="probe-", dir=folder.parent))
        (work / "bot.py").write_text(PROBE_CODE)
        (work / "bot.toml").write_text(PROBE_MANIFEST)
        _seal(work)
        try:
            os.rename(work, folder)
        except OSError:  # another arena made it meanwhile
            shutil.rmtree(work, ignore_errors=True)
    return folder


async def why_python_bots_fail(sandbox: Sandbox, progress: Callable[[str], None] | None = None) -> str | None:
    """Start the probe in ``sandbox`` and ask it hello: None if it answered, else why not
    (also what a cluster's worker asks after a match whose bots crashed: its sandbox, or them?)."""
    from protocol.messages import PROTOCOL_VERSION, Hello, HelloReply, Limits, decode_from_bot, encode

    bot = load_bot(probe_folder())
    await trio.to_thread.run_sync(sandbox.prepare, bot, progress or (lambda line: None))
    hello = Hello(
        protocol=PROTOCOL_VERSION,
        game="arena-probe",
        settings={},
        seat=0,
        players=2,
        limits=Limits(1000, 10_000, PROBE_SECONDS * 1000, 65536),
        games=1,
    )
    async with trio.open_nursery() as nursery:
        process = await sandbox.start(bot, nursery, 65536)
        try:
            reply: Any = None
            with trio.move_on_after(PROBE_SECONDS):
                try:
                    await process.send(encode(hello), PROBE_SECONDS)
                    reply = decode_from_bot(await process.receive_line())
                except Exception as exc:
                    reply = exc
            if isinstance(reply, HelloReply) and reply.accept:
                return None
            await trio.sleep(0.2)  # its last words reach its stderr log
            said = [line for line in process.stderr_tail(4000).strip().splitlines() if line.strip()]
            if said:
                last: str = said[-1].strip()
                return last
            if reply is None:
                return f"no answer to hello within {PROBE_SECONDS} s"
            return process.exit_reason() or f"answered {reply!r}"
        finally:
            await process.stop()


_checked: set[str] = set()


def check_python_bots(sandbox: Sandbox, progress: Callable[[str], None] | None = None) -> None:
    """Start a Python bot on the SDK in ``sandbox`` and ask it hello, once per process
    and sandbox: ``StartError`` naming the cause and the fix if it cannot answer, rather
    than a tournament of bots that all fail at start-up."""
    kind = type(sandbox).__name__
    if kind in _checked:
        return
    try:
        why = trio.run(why_python_bots_fail, sandbox, progress)
    except StartError as exc:
        why = str(exc)
    if why is not None:
        raise StartError(f"a Python bot cannot start in this sandbox ({why}): {sandbox.sdk_fix()}")
    _checked.add(kind)
