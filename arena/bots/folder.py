"""The trust boundary for bot folders: what of a folder the arena reads, hashes and copies.

A bot folder is written by someone else and may be hostile. Everything the arena does
with one (``arena bot add`` and tournament snapshots, build copies, a bot's Docker
image, the content hash) goes through ``scan``, which walks the folder without ever
following a link and refuses, in one line naming the path:

- a link that is absolute, dangles, leads out of the folder (at any step of its
  resolution, chains of links included) or into a loop (a link to a folder holding it);
- a named pipe, a socket or a device file;
- a folder over the caps (``FolderLimits``: entries, bytes, depth), counted from a walk
  that reads no content, before anything is copied.

Hidden names and ``__pycache__`` are skipped (never read, hashed nor copied). A link
that stays inside is kept as a link: it is copied as a link and hashed by its target
text, never followed. Files are read in chunks through descriptors opened with
``O_NOFOLLOW`` from their parent folder's descriptor, and must be the very files scanned
(same inode, same size): memory stays flat whatever the folder holds.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from arena.bots.errors import BotError

CHUNK = 1 << 20
MAX_LINK_HOPS = 40
"""Links followed while resolving one link, as the kernel allows."""
ENV_FILES = "ARENA_BOT_MAX_FILES"
ENV_MB = "ARENA_BOT_MAX_MB"
ENV_DEPTH = "ARENA_BOT_MAX_DEPTH"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class FolderError(BotError):
    """A bot folder the arena refuses to read or copy, with the path at fault."""


class OverCap(FolderError):
    """A folder (or an archive of one) larger than ``FolderLimits`` allows: too much, not wrong."""


@dataclasses.dataclass(frozen=True)
class FolderLimits:
    """Caps on a bot folder, checked before any content is read."""

    files: int = 10_000
    """Entries: files, folders and links together."""
    total_bytes: int = 256 * 2**20
    """Sum of the files' sizes (their apparent size: a sparse file counts whole)."""
    depth: int = 32
    """Folders nested below the bot folder."""

    @classmethod
    def from_env(cls) -> FolderLimits:
        """The defaults, or what ARENA_BOT_MAX_FILES, ARENA_BOT_MAX_MB and
        ARENA_BOT_MAX_DEPTH say."""
        default = cls()
        return cls(
            files=_env_int(ENV_FILES, default.files),
            total_bytes=_env_int(ENV_MB, default.total_bytes // 2**20) * 2**20,
            depth=_env_int(ENV_DEPTH, default.depth),
        )


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 1:
        raise FolderError(f"{name}={raw!r}: write a whole number above 0")
    return value


Kind = Literal["dir", "file", "link"]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One checked entry of a bot folder."""

    parts: tuple[str, ...]
    """Its path below the folder, as components."""
    kind: Kind
    mode: int
    size: int
    """Bytes of a file; 0 for a folder or a link."""
    target: str
    """A link's target text (relative, inside the folder); empty otherwise."""
    dev: int
    ino: int
    atime_ns: int
    mtime_ns: int

    @property
    def path(self) -> str:
        return "/".join(self.parts)

    @property
    def name(self) -> str:
        return self.parts[-1]


def skipped(name: str) -> bool:
    """Names the arena never reads nor copies: hidden ones and Python's caches."""
    return name.startswith(".") or name == "__pycache__"


_SPECIAL = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device file",
    stat.S_IFBLK: "a device file",
}


def scan(folder: Path, limits: FolderLimits | None = None) -> list[Entry]:
    """The entries of ``folder`` the arena would hash and copy, in sorted order, or
    ``FolderError`` naming the first thing refused. Reads no file's content."""
    limits = limits or FolderLimits.from_env()
    folder = Path(folder)
    entries: list[Entry] = []
    total = 0

    def visit(dir_fd: int, parts: tuple[str, ...]) -> None:
        nonlocal total
        with os.scandir(dir_fd) as listing:
            items = sorted(listing, key=lambda item: item.name)
        for item in items:
            if skipped(item.name):
                continue
            rel = (*parts, item.name)
            where = folder.joinpath(*rel)
            if len(entries) >= limits.files:
                raise OverCap(
                    f"{folder}: more than {limits.files} files, folders and links, the cap on a bot folder"
                    f" ({ENV_FILES}=N raises it)"
                )
            if len(rel) > limits.depth:
                raise OverCap(
                    f"{folder}: {'/'.join(rel)} is nested more than {limits.depth} folders deep, the cap on a bot"
                    f" folder ({ENV_DEPTH}=N raises it)"
                )
            info = item.stat(follow_symlinks=False)
            mode = info.st_mode
            common = (info.st_dev, info.st_ino, info.st_atime_ns, info.st_mtime_ns)
            if stat.S_ISDIR(mode):
                entries.append(Entry(rel, "dir", mode, 0, "", *common))
                sub = _open_dir(item.name, dir_fd, where)
                try:
                    visit(sub, rel)
                finally:
                    os.close(sub)
            elif stat.S_ISREG(mode):
                total += info.st_size
                if total > limits.total_bytes:
                    raise OverCap(
                        f"{folder}: its files hold more than {limits.total_bytes / 2**20:g} MiB, the cap on a bot"
                        f" folder ({ENV_MB}=N raises it; {where} alone is {info.st_size / 2**20:.1f} MiB)"
                    )
                entries.append(Entry(rel, "file", mode, info.st_size, "", *common))
            elif stat.S_ISLNK(mode):
                target = os.readlink(item.name, dir_fd=dir_fd)
                entries.append(Entry(rel, "link", mode, 0, target, *common))
            else:
                what = _SPECIAL.get(stat.S_IFMT(mode), "not a file, folder or link")
                raise FolderError(f"{where}: {what} cannot be part of a bot folder: remove it")

    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise FolderError(f"{folder}: cannot open the bot folder ({exc.strerror})") from None
    try:
        visit(root, ())
    except OSError as exc:
        raise FolderError(f"{_where(folder, exc)}: cannot read it ({exc.strerror})") from None
    finally:
        os.close(root)
    entries.sort(key=lambda entry: entry.parts)
    _check_links(folder, entries)
    return entries


def _where(folder: Path, exc: OSError) -> str:
    return str(exc.filename) if isinstance(exc.filename, str) and exc.filename.startswith("/") else str(folder)


def _open_dir(name: str, dir_fd: int, where: Path) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise FolderError(f"{where}: cannot open this folder ({exc.strerror}){_changed_hint(exc)}") from None


def _changed_hint(exc: OSError) -> str:
    """What an error opening a scanned entry most likely means."""
    moved = exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR)
    return ": it changed while the arena was reading the folder, try again" if moved else ""


# --- links ------------------------------------------------------------------------------


def _check_links(folder: Path, entries: list[Entry]) -> None:
    """Every link must resolve, step by step and through other links, to an entry of the
    folder without ever leaving it; and links to folders must not make a loop."""
    by_parts = {entry.parts: entry for entry in entries}
    dir_links: dict[tuple[str, ...], tuple[str, ...]] = {}
    for entry in entries:
        if entry.kind != "link":
            continue
        where = folder.joinpath(*entry.parts)
        if entry.target.startswith("/"):
            raise FolderError(
                f"{where}: a link to the absolute path {entry.target!r}: a bot folder may hold only relative links"
                " to its own files"
            )
        resolved = _resolve(folder, by_parts, entry, entry.parts[:-1], entry.target, [0])
        if resolved == () or by_parts[resolved].kind == "dir":
            dir_links[entry.parts] = resolved
    _check_loops(folder, entries, dir_links)


def check_links(folder: Path, entries: list[Entry]) -> None:
    """``scan``'s checks of the links among ``entries`` (sorted, as ``scan`` gives them, or
    an archive's members before they are written), each named below ``folder`` in errors."""
    _check_links(folder, entries)


def _resolve(
    folder: Path,
    by_parts: dict[tuple[str, ...], Entry],
    link: Entry,
    start: tuple[str, ...],
    target: str,
    hops: list[int],
) -> tuple[str, ...]:
    """Where ``target``, read from folder ``start``, leads among the scanned entries (as
    the kernel would resolve it); ``FolderError`` if it leaves the folder or dangles."""
    where = folder.joinpath(*link.parts)
    here = list(start)
    steps = [step for step in target.split("/") if step not in ("", ".")]
    for number, step in enumerate(steps):
        if step == "..":
            if not here:
                raise FolderError(
                    f"{where}: a link to {link.target!r}, which leads out of the bot folder: a bot folder may hold"
                    " links only to its own files"
                )
            here.pop()
            continue
        candidate = (*here, step)
        found = by_parts.get(candidate)
        if found is None or (found.kind == "file" and number < len(steps) - 1):
            raise FolderError(
                f"{where}: a link to {link.target!r}, which is missing (or hidden, or a cache: not copied): remove"
                " the link or what it names"
            )
        if found.kind == "link":
            hops[0] += 1
            if found.target.startswith("/"):
                raise FolderError(
                    f"{where}: a link to {link.target!r}, through the link {'/'.join(found.parts)} to the absolute"
                    f" path {found.target!r}: a bot folder may hold only relative links to its own files"
                )
            if hops[0] > MAX_LINK_HOPS:
                raise FolderError(f"{where}: a link to {link.target!r} that goes round in a loop of links")
            here = list(_resolve(folder, by_parts, link, candidate[:-1], found.target, hops))
        else:
            here = list(candidate)
    return tuple(here)


def _check_loops(folder: Path, entries: list[Entry], dir_links: dict[tuple[str, ...], tuple[str, ...]]) -> None:
    """Refuse links to folders through which a walk that follows links never ends."""
    edges: dict[tuple[str, ...], list[tuple[tuple[str, ...], tuple[str, ...] | None]]] = {(): []}
    for entry in entries:
        if entry.kind == "dir":
            edges.setdefault(entry.parts, [])
            edges.setdefault(entry.parts[:-1], []).append((entry.parts, None))
    for link, resolved in dir_links.items():
        edges.setdefault(link[:-1], []).append((resolved, link))
    state: dict[tuple[str, ...], int] = {}  # 1: on the walk's path, 2: done
    for start in edges:
        if start in state:
            continue
        path: list[tuple[tuple[str, ...], tuple[str, ...] | None]] = [(start, None)]
        stack = [iter(edges.get(start, []))]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()[0]] = 2
                stack.pop()
                continue
            node, via = step
            if state.get(node) == 1:
                cycle = [entered for _, entered in path[[p for p, _ in path].index(node) + 1 :]] + [via]
                link = next(edge for edge in reversed(cycle) if edge is not None)
                raise FolderError(
                    f"{folder.joinpath(*link)}: a link to {_target_of(entries, link)!r}, which makes a loop (following"
                    " links from it leads back to a folder holding it): a bot folder may not hold one"
                )
            if node not in state:
                state[node] = 1
                path.append((node, via))
                stack.append(iter(edges.get(node, [])))


def _target_of(entries: list[Entry], parts: tuple[str, ...]) -> str:
    return next(entry.target for entry in entries if entry.parts == parts)


# --- reading ----------------------------------------------------------------------------


class _Reader:
    """A scanned file read through a descriptor opened without following links, checked to
    be the same regular file of the same size; ``read`` never returns past that size."""

    def __init__(self, where: Path, entry: Entry, dir_fd: int, sink: Callable[[bytes], object]) -> None:
        self.where = where
        self.entry = entry
        self.sink = sink
        self.left = entry.size
        try:
            self.fd = os.open(entry.name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise FolderError(f"{where}: cannot open it ({exc.strerror}){_changed_hint(exc)}") from None
        info = os.fstat(self.fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or (info.st_dev, info.st_ino) != (entry.dev, entry.ino)
            or info.st_size != entry.size
        ):
            os.close(self.fd)
            raise self._changed()

    def _changed(self) -> FolderError:
        return FolderError(f"{self.where}: changed while the arena was reading it: try again")

    def read(self, size: int = CHUNK) -> bytes:
        size = min(size if size >= 0 else self.left, self.left)
        parts = []
        while size > 0:
            try:
                data = os.read(self.fd, min(size, CHUNK))
            except OSError as exc:
                raise FolderError(f"{self.where}: cannot read it ({exc.strerror})") from None
            if not data:
                raise self._changed()
            parts.append(data)
            size -= len(data)
            self.left -= len(data)
        data = b"".join(parts)
        self.sink(data)
        return data

    def finish(self) -> None:
        """Check the file ended where the scan said it would."""
        if self.left or os.read(self.fd, 1):
            raise self._changed()

    def close(self) -> None:
        os.close(self.fd)


def _walk(folder: Path, entries: list[Entry], dest_fd: int | None = None) -> Iterator[tuple[Entry, int, int | None]]:
    """Each entry with its parent folder's descriptor (opened from the top without
    following links), and the matching descriptor in ``dest`` when copying (its folders
    made on the way)."""
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise FolderError(f"{folder}: cannot open the bot folder ({exc.strerror})") from None
    stack: list[tuple[tuple[str, ...], int, int | None]] = [((), root, dest_fd)]
    try:
        for entry in entries:
            while len(stack) > 1 and stack[-1][0] != entry.parts[:-1]:
                _, src, dst = stack.pop()
                os.close(src)
                if dst is not None:
                    os.close(dst)
            if stack[-1][0] != entry.parts[:-1]:
                raise AssertionError(f"{entry.path}: entries out of order")
            _, parent, dest_parent = stack[-1]
            yield entry, parent, dest_parent
            if entry.kind == "dir":
                where = folder.joinpath(*entry.parts)
                src = _open_dir(entry.name, parent, where)
                info = os.fstat(src)
                if (info.st_dev, info.st_ino) != (entry.dev, entry.ino):
                    os.close(src)
                    raise FolderError(f"{where}: changed while the arena was reading it: try again")
                dst = None
                if dest_parent is not None:
                    os.mkdir(entry.name, 0o700, dir_fd=dest_parent)
                    dst = os.open(entry.name, _DIR_FLAGS, dir_fd=dest_parent)
                stack.append((entry.parts, src, dst))
    finally:
        for _, src, dst in stack[1:]:
            os.close(src)
            if dst is not None:
                os.close(dst)
        os.close(root)


class _Digest:
    """The content hash: for each file in sorted order its path, exec bits and bytes (the
    layout of the first arena's hash, so existing snapshots and images keep theirs), and
    for each link its path and target."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()

    def file_header(self, entry: Entry) -> None:
        self.sha.update(f"{entry.path}\0{entry.mode & 0o111:o}\0".encode(errors="surrogateescape"))

    def file_end(self) -> None:
        self.sha.update(b"\0")

    def link(self, entry: Entry) -> None:
        self.sha.update(f"{entry.path}\0link\0{entry.target}\0".encode(errors="surrogateescape"))

    def hexdigest(self) -> str:
        return self.sha.hexdigest()


def each_file(folder: Path, entries: list[Entry], on_file: Callable[[Entry, _Reader], None] | None = None) -> str:
    """Read every file of ``entries`` in chunks (``on_file`` gets each one's reader and
    must read it whole; by default it is just hashed); returns the content hash."""
    digest = _Digest()
    for entry, parent, _ in _walk(folder, entries):
        if entry.kind == "link":
            digest.link(entry)
        elif entry.kind == "file":
            digest.file_header(entry)
            reader = _Reader(folder.joinpath(*entry.parts), entry, parent, digest.sha.update)
            try:
                if on_file is None:
                    while reader.read(CHUNK):
                        pass
                else:
                    on_file(entry, reader)
                reader.finish()
            finally:
                reader.close()
            digest.file_end()
    return digest.hexdigest()


def content_hash(folder: Path, limits: FolderLimits | None = None) -> str:
    """SHA-256 of a bot folder (paths, exec bits and bytes of its files, its links'
    targets; hidden names and caches excluded), read in chunks: what makes two
    snapshots, or an image and a folder, the same code. ``FolderError`` if the folder is
    refused (see ``scan``)."""
    folder = Path(folder)
    return each_file(folder, scan(folder, limits))


def copy_folder(src: Path, dest: Path, limits: FolderLimits | None = None) -> str:
    """Copy the checked entries of ``src`` to ``dest``, which must not exist: folders,
    files (streamed, permission bits and times kept, set-id bits dropped) and links as
    links, following nothing. Returns the content hash of what was copied. On any
    failure ``dest`` is removed and ``FolderError`` says why."""
    src, dest = Path(src), Path(dest)
    entries = scan(src, limits)
    try:
        os.mkdir(dest, 0o700)
    except FileExistsError:
        raise FolderError(f"{dest}: already exists (a copy of a bot folder needs a new place)") from None
    except OSError as exc:
        raise FolderError(f"{dest}: cannot make the copy's folder ({exc.strerror})") from None
    try:
        digest = _copy(src, dest, entries)
        for entry in reversed([e for e in entries if e.kind == "dir"]):
            path = dest.joinpath(*entry.parts)
            os.chmod(path, stat.S_IMODE(entry.mode) & 0o777)
            os.utime(path, ns=(entry.atime_ns, entry.mtime_ns), follow_symlinks=False)
        root = os.stat(src)
        os.chmod(dest, stat.S_IMODE(root.st_mode) & 0o777)
        return digest
    except BaseException as exc:
        remove_tree(dest)
        if isinstance(exc, OSError):
            raise FolderError(f"{dest}: cannot copy {src} there ({exc.strerror})") from None
        raise


def _copy(src: Path, dest: Path, entries: list[Entry]) -> str:
    dest_fd = os.open(dest, _DIR_FLAGS)
    digest = _Digest()
    try:
        for entry, parent, dest_parent in _walk(src, entries, dest_fd):
            assert dest_parent is not None
            if entry.kind == "link":
                digest.link(entry)
                os.symlink(entry.target, entry.name, dir_fd=dest_parent)
                os.utime(entry.name, ns=(entry.atime_ns, entry.mtime_ns), dir_fd=dest_parent, follow_symlinks=False)
            elif entry.kind == "file":
                digest.file_header(entry)
                out = os.open(
                    entry.name,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o600,
                    dir_fd=dest_parent,
                )
                reader = _Reader(src.joinpath(*entry.parts), entry, parent, digest.sha.update)
                try:
                    while data := reader.read(CHUNK):
                        view = memoryview(data)
                        while view:
                            view = view[os.write(out, view) :]
                    reader.finish()
                    os.fchmod(out, stat.S_IMODE(entry.mode) & 0o777)
                    os.utime(out, ns=(entry.atime_ns, entry.mtime_ns))
                finally:
                    reader.close()
                    os.close(out)
                digest.file_end()
    finally:
        os.close(dest_fd)
    return digest.hexdigest()


def set_modes(folder: Path, mode_of: Callable[[os.stat_result], int], owner: tuple[int, int] | None = None) -> None:
    """Give every folder and regular file of the tree at ``folder`` (itself included) the
    mode ``mode_of`` its ``lstat`` says, and ``owner`` (uid, gid) if given, following
    nothing: each entry is opened with ``O_PATH | O_NOFOLLOW`` from its parent folder's
    descriptor and changed through that descriptor, so a name swapped for a link (by a
    bot's build still running, say) is a link left alone, never a path into the machine.
    Links and special files are left as they are. A folder gets its mode before it is
    listed, so a build's ``chmod 000`` does not keep us out."""
    top = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        _set_modes(top, mode_of, owner)
    finally:
        os.close(top)


def _set_modes(handle: int, mode_of: Callable[[os.stat_result], int], owner: tuple[int, int] | None) -> None:
    info = _change(handle, mode_of, owner)
    if not stat.S_ISDIR(info.st_mode):
        return
    listing_fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=handle)
    try:
        names = os.listdir(listing_fd)
    finally:
        os.close(listing_fd)
    for name in names:
        try:
            child = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=handle)
        except FileNotFoundError:
            continue
        try:
            if stat.S_IFMT(os.fstat(child).st_mode) in (stat.S_IFDIR, stat.S_IFREG):
                _set_modes(child, mode_of, owner)
        finally:
            os.close(child)


def _change(handle: int, mode_of: Callable[[os.stat_result], int], owner: tuple[int, int] | None) -> os.stat_result:
    """Change the file behind an ``O_PATH`` descriptor (fchmod refuses those; its
    ``/proc/self/fd`` entry names exactly that file, whatever its path is now)."""
    info = os.fstat(handle)
    if not stat.S_ISDIR(info.st_mode) and not stat.S_ISREG(info.st_mode):
        return info
    here = f"/proc/self/fd/{handle}"
    if owner is not None and (info.st_uid, info.st_gid) != owner:
        os.chown(here, *owner)
    mode = mode_of(info)
    if stat.S_IMODE(info.st_mode) != mode or owner is not None:  # chown clears set-id bits: set the mode again
        os.chmod(here, mode)
    return info


def remove_tree(path: Path) -> None:
    """Remove a copy made by us (partial, sealed read-only, or a build's folder), following
    nothing: its folders are opened to us first (``set_modes``), then ``shutil.rmtree``
    removes it through descriptors (``rm -rf``, which follows no link either, where it is
    too deep for Python's recursion). Never a folder at the top of the file system or
    just below it (``/``, ``/tmp``): no copy of ours is one, so asking is a mistake."""
    if len(Path(os.path.abspath(path)).parts) < 3:
        raise ValueError(f"refusing to remove {path}: not a copy the arena made")
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
        return
    try:
        if os.geteuid() != 0:  # root removes whatever the modes say
            try:
                set_modes(path, lambda info: 0o700 if stat.S_ISDIR(info.st_mode) else stat.S_IMODE(info.st_mode))
            except OSError:
                pass
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # deeper than Python's stack (a build can nest folders without end): coreutils
        if os.geteuid() != 0:
            subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True, check=False)
        subprocess.run(["rm", "-rf", "--", str(path)], capture_output=True, check=False)


def read_only_mode(info: os.stat_result) -> int:
    """A stored copy's mode: readable by all, writable by none, folders enterable by
    all, a file's exec bits as they were (they are part of the content hash)."""
    mode = stat.S_IMODE(info.st_mode) & 0o777
    mode = (mode | 0o444) & ~0o222
    return mode | 0o111 if stat.S_ISDIR(info.st_mode) else mode


def seal_read_only(folder: Path) -> None:
    """Make a stored copy of a bot immutable: readable (and enterable) by all, writable
    by none (``read_only_mode``). Links are left as they are (a link's own mode means
    nothing, and it is never followed)."""
    set_modes(folder, read_only_mode)
