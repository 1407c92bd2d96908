"""A bot folder an author uploads: checked, unpacked and packed again before it is kept.

An upload is written by a stranger. It is a gzip-compressed tar of the bot folder (what
``tar czf - -C BOT_DIR .`` makes, or ``arena submit``). It is inflated twice, with a
bound each time (a bomb stops at the cap, never inflates whole): first as a stream that
writes nothing, every member checked (``bundle.checked_members``: no absolute name, no
``..``, no link of any kind, no device or FIFO, within the caps on files and bytes);
then, known good, unpacked into a fresh folder, its manifest read, and packed again by
``bundle.pack``: what the store keeps is the canonical tar of the checked folder, never
the bytes that came in. Hidden entries and caches (``.git``, ``__pycache__``) are left
out, as ``arena bot add`` leaves them out.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from .bots import BotError, load_bot
from .bundle import checked_members, extract, pack
from .folder import FolderError, FolderLimits, OverCap, remove_tree, skipped

CHUNK = 1 << 20
LABEL = Path("the upload")


@dataclasses.dataclass(frozen=True)
class UploadLimits:
    packed_bytes: int = 20 * 2**20
    """The upload as sent (gzip)."""
    unpacked_bytes: int = 200 * 2**20
    """The tar it inflates to, and the files it holds."""
    files: int = 10_000
    """Entries: files and folders together."""
    depth: int = 32


class UploadError(ValueError):
    """An upload refused: 413 when it is too large, 400 otherwise; one line that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclasses.dataclass(frozen=True)
class Received:
    """A checked upload: the bot it holds and its folder packed canonically."""

    name: str
    version: str
    games: list[str]
    digest: str
    """The folder's content hash (``folder.content_hash``)."""
    archive: bytes
    """``bundle.pack``'s tar of the folder."""


def pack_upload(folder: Path) -> bytes:
    """What ``arena submit`` sends: the folder as ``bundle.pack`` packs it, gzipped."""
    return gzip.compress(pack(folder)[1], mtime=0)


def receive_upload(data: bytes, work: Path, limits: UploadLimits = UploadLimits()) -> Received:
    """The bot folder in ``data``, checked; ``UploadError`` otherwise. Works in a fresh
    folder under ``work`` and leaves nothing there either way."""
    if not data:
        raise UploadError(400, "the upload is empty: send the bot folder as a .tar.gz")
    if len(data) > limits.packed_bytes:
        raise UploadError(413, f"the upload is {_mib(len(data))}: at most {_mib(limits.packed_bytes)} packed")
    _check_stream(data, limits)  # a bomb or a hostile member is refused before a byte is written
    tmp = Path(tempfile.mkdtemp(prefix="upload-", dir=work))
    try:
        with open(tmp / "upload.tar", "w+b") as tar:
            with _gunzip(data, limits.unpacked_bytes) as reader:
                shutil.copyfileobj(reader, tar, CHUNK)
            tar.seek(0)
            folder = tmp / "bot"
            folder.mkdir()
            with _open_tar(tar, "r:") as archive:
                extract(archive, _members(archive, limits), folder, LABEL)
        try:
            bot = load_bot(folder)
            digest, archive_bytes = pack(folder, _folder_limits(limits))
        except BotError as exc:
            raise UploadError(400, f"the upload's bot folder: {_relative(str(exc), folder)}") from None
        return Received(bot.name, bot.version, list(bot.manifest.games), digest, archive_bytes)
    except FolderError as exc:
        raise UploadError(400, _relative(str(exc), tmp)) from None
    finally:
        remove_tree(tmp)


def _check_stream(data: bytes, limits: UploadLimits) -> None:
    """Inflate ``data`` once as a stream, writing nothing: its members are checked and it
    ends as one gzip stream within the caps."""
    with _gunzip(data, limits.unpacked_bytes) as reader:
        with _open_tar(reader, "r|") as archive:
            _members(archive, limits)
        while reader.read(CHUNK):  # what follows the tar counts towards the cap too
            pass


class _Gunzip(io.RawIOBase):
    """The gzip stream ``data`` inflated as it is read: ``UploadError`` past ``cap`` bytes,
    when it is not gzip, when it is cut short or when more follows it."""

    def __init__(self, data: bytes, cap: int) -> None:
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self._pending = data
        self._cap = cap
        self._given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = b""
        while not chunk:
            if self._inflater.eof:
                if self._inflater.unused_data.strip(b"\0"):
                    raise UploadError(400, "the upload holds more than one gzip stream: send one .tar.gz")
                return 0
            if not self._pending:
                raise UploadError(400, "the upload is cut short: its gzip stream does not end")
            try:
                chunk = self._inflater.decompress(self._pending, len(buffer))
            except zlib.error as exc:
                raise UploadError(400, f"the upload is not a gzip-compressed tar ({exc})") from None
            self._pending = self._inflater.unconsumed_tail
        self._given += len(chunk)
        if self._given > self._cap:
            raise UploadError(413, f"the upload unpacks to more than {_mib(self._cap)}, the cap")
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _gunzip(data: bytes, cap: int) -> io.BufferedReader:
    return io.BufferedReader(_Gunzip(data, cap), CHUNK)


def _open_tar(fileobj: IO[bytes], mode: Literal["r:", "r|"]) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=fileobj, mode=mode)
    except (tarfile.TarError, OSError) as exc:
        raise UploadError(400, f"the upload is gzip but not a tar archive inside ({exc})") from None


def _members(archive: tarfile.TarFile, limits: UploadLimits) -> list[tarfile.TarInfo]:
    """``bundle``'s checks of every member, links refused: 413 past a cap, 400 otherwise."""
    try:
        return checked_members(_plain(archive), LABEL, _folder_limits(limits), links=False)
    except FolderError as exc:
        raise UploadError(413 if isinstance(exc, OverCap) else 400, str(exc)) from None


def _plain(members: Iterable[tarfile.TarInfo]) -> Iterator[tarfile.TarInfo]:
    """The members named as ``bundle`` names them: ``./x`` as ``x``, the root ``.`` left
    out, and hidden entries and caches left out with everything below them."""
    for member in members:
        name = member.name
        while name.startswith("./"):
            name = name[2:]
        name = name.rstrip("/") if member.isdir() else name
        if name in ("", "."):
            continue
        if any(skipped(part) and part not in (".", "..") for part in name.split("/")):
            continue  # (a name that climbs is not hidden: it is refused)
        member.name = name
        yield member


def _folder_limits(limits: UploadLimits) -> FolderLimits:
    return FolderLimits(files=limits.files, total_bytes=limits.unpacked_bytes, depth=limits.depth)


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def _relative(message: str, folder: Path) -> str:
    """A message about the unpacked folder, without the server's paths in it."""
    return message.replace(str(folder) + "/", "").replace(str(folder), "the folder")
