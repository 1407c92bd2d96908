"""A bot folder as bytes, to travel to another machine of a cluster and back into a folder.

A bot travels by its content: the worker that unpacks it trusts nothing in the bytes,
checks every member before writing anything, and keeps the folder only if it hashes to
the content hash it was sent under. Folders are cached by that hash, so a changed bot can
never be confused with an old one, and one already unpacked is never unpacked again.
"""

from __future__ import annotations

import copy
import io
import os
import re
import stat
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Protocol

from arena.bots.folder import (
    Entry,
    FolderError,
    FolderLimits,
    Kind,
    OverCap,
    check_links,
    content_hash,
    each_file,
    remove_tree,
    scan,
    seal_read_only,
    skipped,
)

_HASH = re.compile(r"[0-9a-f]{64}")
_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)
_HAS_FILTER = hasattr(tarfile, "data_filter")
"""Extraction filters came with Python 3.11.4; before them our own checks stand alone."""
_EXTENDED = (
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
)
"""Headers whose data ``tarfile`` reads whole into memory before the member they describe."""
HEADER_BYTES = 64 * 1024
"""The largest extended header (a PAX header, a GNU long name) an archive may hold."""
HEADERS_BYTES = 1 << 20
"""All extended headers of one archive together."""
HEADERS_IN_A_ROW = 8
"""Extended headers before one member (``tarfile`` reads a chain of them recursively)."""
NAME_PART_BYTES = 255
"""The longest name of one file or folder, as the kernel allows (ext4, tmpfs, overlayfs)."""
NAME_BYTES = 4095


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def pack(folder: Path, limits: FolderLimits | None = None) -> tuple[str, bytes]:
    """The content hash of ``folder`` and an uncompressed tar of the entries ``scan``
    accepts (folders, files, links kept as links), with no owner and no times: the same
    content always packs to the same bytes. ``FolderError`` if the folder is refused."""
    buffer = io.BytesIO()
    digest = pack_into(folder, buffer, limits)
    return digest, buffer.getvalue()


def pack_into(folder: Path, into: IO[bytes], limits: FolderLimits | None = None) -> str:
    """``pack``, written to ``into`` as it goes (a file, a gzip stream) instead of held in
    memory; returns the content hash."""
    folder = Path(folder)
    entries = scan(folder, limits)
    with tarfile.open(fileobj=into, mode="w", format=tarfile.PAX_FORMAT) as archive:
        pending = iter(entries)

        def add_until(stop: Entry | None) -> None:
            for entry in pending:
                if entry is stop:
                    return
                info = _info(entry)
                if entry.kind == "dir":
                    info.type = tarfile.DIRTYPE
                else:
                    info.type = tarfile.SYMTYPE
                    info.linkname = entry.target
                archive.addfile(info)

        def on_file(entry: Entry, reader: _Readable) -> None:
            add_until(entry)
            info = _info(entry)
            info.size = entry.size
            archive.addfile(info, reader)

        digest = each_file(folder, entries, on_file)
        add_until(None)
    return digest


def _info(entry: Entry) -> tarfile.TarInfo:
    info = tarfile.TarInfo(entry.path)
    info.mode = stat.S_IMODE(entry.mode) & 0o755
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def unpack(data: bytes | IO[bytes], expected_hash: str, cache: Path, limits: FolderLimits | None = None) -> Path:
    """``cache / expected_hash``: the folder packed in ``data`` (a plain tar, as bytes or
    a seekable file), unpacked there unless it already is (then ``data``
    is not read), made read-only, and checked to hash to ``expected_hash``.
    ``FolderError`` in one line, and nothing left in ``cache``, for an archive that is
    not a plain tar, breaks a cap, holds anything ``scan`` would refuse or skip (or a
    hard link, or a name that is absolute or climbs) or does not hash to
    ``expected_hash``."""
    if not isinstance(expected_hash, str) or not _HASH.fullmatch(expected_hash):
        raise FolderError(f"bot bundle: {expected_hash!r} is not a content hash (64 lowercase hex digits): refused")
    cache = Path(cache)
    target = cache / expected_hash
    try:
        os.makedirs(cache, mode=0o700, exist_ok=True)
        info = os.lstat(target)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise FolderError(f"{cache}: cannot use it as the bot cache ({exc.strerror})") from None
    else:
        if not stat.S_ISDIR(info.st_mode):
            raise FolderError(f"{target}: in the bot cache but not a folder: remove it")
        return target
    limits = limits or FolderLimits.from_env()
    label = Path(f"bot bundle {expected_hash[:12]}")
    source: IO[bytes] = io.BytesIO(data) if isinstance(data, bytes) else data
    source.seek(0)
    try:
        archive = tarfile.open(fileobj=source, mode="r:", tarinfo=capped_headers(label))
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise FolderError(f"{label}: not a plain tar archive ({exc}): refused") from None
    with archive:
        members = checked_members(archive, label, limits)
        try:
            tmp = Path(tempfile.mkdtemp(prefix="unpacking-", dir=cache))
        except OSError as exc:
            raise FolderError(f"{cache}: cannot unpack a bot there ({exc.strerror})") from None
        try:
            extract(archive, members, tmp, label)
            actual = content_hash(tmp, limits)
            if actual != expected_hash:
                raise FolderError(f"{label}: what it holds does not hash to {expected_hash} but to {actual}: refused")
            seal_read_only(tmp)
            try:
                os.rename(tmp, target)
            except OSError:
                if not os.path.isdir(target):
                    raise
                remove_tree(tmp)  # unpacked meanwhile by another thread or process
        except BaseException as exc:
            remove_tree(tmp)
            if isinstance(exc, OSError):
                raise FolderError(f"{label}: cannot unpack it into {cache} ({exc.strerror or exc})") from None
            raise
    return target


def capped_headers(label: Path) -> type[tarfile.TarInfo]:
    """The members of one archive for ``tarfile.open(tarinfo=...)``: ``tarfile`` reads
    each extended header (PAX, GNU long name) whole into memory, and a chain of them
    recursively, so a 150 MiB PAX header that gzips to 150 KiB is refused here, from its
    size field, before it is read (``OverCap``), as are past ``HEADERS_IN_A_ROW`` in a
    row or ``HEADERS_BYTES`` in all."""
    seen = {"bytes": 0, "row": 0}

    class Capped(tarfile.TarInfo):
        def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
            if self.type in _EXTENDED:
                seen["row"] += 1
                seen["bytes"] += self.size
                if self.size > HEADER_BYTES:
                    raise OverCap(
                        f"{label}: an extended header (PAX or GNU long name) of {self.size / 1024:.0f} KiB,"
                        f" over the cap ({HEADER_BYTES // 1024} KiB): refused"
                    )
                if seen["row"] > HEADERS_IN_A_ROW or seen["bytes"] > HEADERS_BYTES:
                    raise OverCap(
                        f"{label}: more extended headers (PAX or GNU long names) than the caps"
                        f" ({HEADERS_IN_A_ROW} in a row, {HEADERS_BYTES // 2**20} MiB in all): refused"
                    )
            else:
                seen["row"] = 0
            found: tarfile.TarInfo = super()._proc_member(tar)  # type: ignore[misc]
            return found

    return Capped


def bad_name(name: str) -> str | None:
    """Why a member's name (or a link's target) cannot be made on disk, or None: a NUL,
    a part longer than the kernel allows, or the whole too long."""
    if "\0" in name:
        return "holds a NUL character"
    encoded = name.encode("utf-8", "surrogateescape")
    if len(encoded) > NAME_BYTES:
        return f"is {len(encoded)} bytes long, over {NAME_BYTES}"
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > NAME_PART_BYTES:
        return f"has a part of {longest} bytes, over {NAME_PART_BYTES}"
    return None


def shown(name: str, cap: int = 120) -> str:
    """A member's name as an error quotes it: ``repr`` (no control character gets
    through), its start only when it is long."""
    return repr(name) if len(name) <= cap else repr(name[:cap]) + "…"


def checked_members(
    archive: Iterable[tarfile.TarInfo], label: Path, limits: FolderLimits, links: bool = True
) -> list[tarfile.TarInfo]:
    """The members, each checked before anything is written: a name of plain parts
    (neither hidden nor a cache) below a folder member listed before it, within the
    caps; only folders, regular files and (unless ``links`` is False) links whose
    targets stay inside."""
    members: list[tarfile.TarInfo] = []
    entries: list[Entry] = []
    kinds: dict[tuple[str, ...], Kind] = {(): "dir"}
    total = 0
    try:
        for member in archive:
            if len(members) >= limits.files:
                raise OverCap(f"{label}: more than {limits.files} members, the cap on a bot folder: refused")
            where = f"{label}: member {shown(member.name)}"
            wrong = bad_name(member.name)
            if wrong is not None:
                raise FolderError(f"{where}: its name {wrong}: refused")
            wrong = bad_name(member.linkname)
            if wrong is not None:
                raise FolderError(f"{where}: the name it links to {wrong}: refused")
            if member.name.startswith("/"):
                raise FolderError(f"{where} has an absolute name: refused")
            parts = tuple(member.name.split("/"))
            if any(part in ("", ".", "..") for part in parts):
                raise FolderError(f"{where} has an empty, '.' or '..' part in its name: refused")
            if any(skipped(part) for part in parts):
                raise FolderError(f"{where} is hidden or a cache, which a bot folder never holds: refused")
            if len(parts) > limits.depth:
                raise FolderError(f"{where} is nested more than {limits.depth} folders deep: refused")
            if parts in kinds:
                raise FolderError(f"{where} comes twice: refused")
            if kinds.get(parts[:-1]) != "dir":
                raise FolderError(f"{where} is not inside a folder listed before it: refused")
            kind: Kind
            if member.isdir():
                kind = "dir"
            elif member.type in _FILE_TYPES and member.sparse is None:
                kind = "file"
                total += member.size
                if total > limits.total_bytes:
                    raise OverCap(
                        f"{where}: the files hold more than {limits.total_bytes / 2**20:g} MiB, the cap on a bot"
                        " folder: refused"
                    )
            elif member.issym() and not links:
                raise FolderError(f"{where} is a symbolic link, which an upload may not hold: refused")
            elif member.issym():
                kind = "link"
            elif member.islnk():
                raise FolderError(f"{where} is a hard link: refused")
            else:
                raise FolderError(f"{where} is a device, a FIFO or another special file: refused")
            kinds[parts] = kind
            members.append(member)
            mode = (stat.S_IFDIR if kind == "dir" else stat.S_IFREG) | (member.mode & 0o777)
            target = member.linkname if kind == "link" else ""
            entries.append(Entry(parts, kind, mode, member.size, target, 0, 0, 0, 0))
    except (tarfile.TarError, EOFError) as exc:
        raise FolderError(f"{label}: a damaged tar archive ({exc}): refused") from None
    check_links(label, entries)
    return members


def extract(archive: tarfile.TarFile, members: list[tarfile.TarInfo], dest: Path, label: Path) -> None:
    """Write the checked members into the fresh folder ``dest``: owned by whoever
    unpacks, files readable and writable by them with their exec bits kept."""
    plain = []
    for member in members:
        member = copy.copy(member)
        member.uid, member.gid = os.getuid(), os.getgid()
        member.uname = member.gname = ""
        member.mode = 0o755 if member.isdir() else 0o644 | (member.mode & 0o111)
        plain.append(member)
    try:
        if _HAS_FILTER:
            archive.extractall(dest, plain, numeric_owner=True, filter="data")
        else:
            archive.extractall(dest, plain, numeric_owner=True)
    except tarfile.TarError as exc:
        raise FolderError(f"{label}: cannot unpack it ({exc}): refused") from None
