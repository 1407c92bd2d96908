"""A bot folder an author uploads: checked, unpacked and packed again before it is kept.

An upload is written by a stranger. It is a gzip-compressed tar of the bot folder (what
``tar czf - -C BOT_DIR .`` makes, or ``arena submit``). It is inflated twice, with a
bound each time (a bomb stops at the cap, never inflates whole): first as a stream that
writes nothing, every member checked (``bundle.checked_members``: no absolute name, no
``..``, no link of any kind, no device or FIFO, within the caps on files and bytes);
then, known good, unpacked into a fresh folder on disk, its manifest read, and packed
again by ``bundle.pack_into``: what the store keeps is the canonical tar of the checked
folder, gzipped, never the bytes that came in. Hidden entries and caches (``.git``,
``__pycache__``) are left out, as ``arena bot add`` leaves them out.

Memory does not grow with the upload: it is read from a file in chunks, every extended
header is capped before ``tarfile`` reads it (``bundle.capped_headers``), members are
counted hidden ones included, and neither the tar it inflates to nor the packed folder
is ever held whole.
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

from arena.bots import BotError, load_bot
from arena.bots.bundle import capped_headers, checked_members, extract, pack, pack_into
from arena.bots.folder import FolderError, FolderLimits, OverCap, remove_tree, skipped

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


@dataclasses.dataclass
class Received:
    """A checked upload: the bot it holds and its folder packed canonically, gzipped, in
    an unnamed temporary file (``close`` it; it goes when closed, or with the process)."""

    name: str
    version: str
    games: list[str]
    digest: str
    """The folder's content hash (``folder.content_hash``)."""
    archive: IO[bytes]
    """``bundle.pack``'s tar of the folder, gzipped, read from its start."""
    size: int
    """Bytes of ``archive``."""

    def read(self) -> bytes:
        """The archive's bytes (for tests and small tools: the server streams it)."""
        self.archive.seek(0)
        data = self.archive.read()
        self.archive.seek(0)
        return data

    def close(self) -> None:
        self.archive.close()

    def __enter__(self) -> Received:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pack_upload(folder: Path) -> bytes:
    """What ``arena submit`` sends: the folder as ``bundle.pack`` packs it, gzipped."""
    return gzip.compress(pack(folder)[1], mtime=0)


def receive_upload(upload: bytes | IO[bytes], work: Path, limits: UploadLimits = UploadLimits()) -> Received:
    """The bot folder in ``upload`` (its bytes, or a seekable file holding them),
    checked; ``UploadError`` otherwise. Memory stays bounded whatever it holds: it is
    read in chunks, every header is capped, and what it unpacks to is written to disk,
    never held. Works in a fresh folder under ``work`` and leaves nothing there either
    way (the archive returned is an unnamed file)."""
    source: IO[bytes] = io.BytesIO(upload) if isinstance(upload, bytes) else upload
    size = source.seek(0, io.SEEK_END)
    if not size:
        raise UploadError(400, "the upload is empty: send the bot folder as a .tar.gz")
    if size > limits.packed_bytes:
        raise UploadError(413, f"the upload is {_mib(size)}: at most {_mib(limits.packed_bytes)} packed")
    try:
        _check_stream(source, limits)  # a bomb or a hostile member is refused before a byte is written
        return _unpacked(source, work, limits)
    except OverCap as exc:
        raise UploadError(413, str(exc)) from None


def _unpacked(source: IO[bytes], work: Path, limits: UploadLimits) -> Received:
    """The upload, known good, unpacked into a fresh folder, its manifest read, and packed
    again canonically into a gzipped unnamed file."""
    tmp = Path(tempfile.mkdtemp(prefix="upload-", dir=work))
    packed: IO[bytes] | None = None
    try:
        with open(tmp / "upload.tar", "w+b") as tar:
            with gunzip(source, limits.unpacked_bytes) as reader:
                shutil.copyfileobj(reader, tar, CHUNK)
            tar.seek(0)
            folder = tmp / "bot"
            folder.mkdir()
            with _open_tar(tar, "r:") as archive:
                extract(archive, _members(archive, limits), folder, LABEL)
        try:
            bot = load_bot(folder)
            packed = tempfile.TemporaryFile(dir=work)
            with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0, compresslevel=6) as zipped:
                digest = pack_into(folder, zipped, _folder_limits(limits))  # type: ignore[arg-type]
        except BotError as exc:
            raise UploadError(400, f"the upload's bot folder: {_relative(str(exc), folder)}") from None
        size = packed.tell()
        packed.seek(0)
        received = Received(bot.name, bot.version, list(bot.manifest.games), digest, packed, size)
        packed = None
        return received
    except FolderError as exc:
        raise UploadError(400, _relative(str(exc), tmp)) from None
    finally:
        if packed is not None:
            packed.close()
        remove_tree(tmp)


def _check_stream(source: IO[bytes], limits: UploadLimits) -> None:
    """Inflate the upload once as a stream, writing nothing: its members are checked and
    it ends as one gzip stream within the caps."""
    with gunzip(source, limits.unpacked_bytes) as reader:
        with _open_tar(reader, "r|") as archive:
            _members(archive, limits)
        while reader.read(CHUNK):  # what follows the tar counts towards the cap too
            pass


class _Gunzip(io.RawIOBase):
    """The gzip stream in ``source`` inflated as it is read, from its start:
    ``UploadError`` past ``cap`` bytes, when it is not gzip, when it is cut short or
    when more than NULs follows it."""

    def __init__(self, source: IO[bytes], cap: int) -> None:
        source.seek(0)
        self._source = source
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self._pending = b""
        self._cap = cap
        self._given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = b""
        while not chunk:
            if self._inflater.eof:
                rest = self._inflater.unused_data
                while rest:
                    if rest.strip(b"\0"):
                        raise UploadError(400, "the upload holds more than one gzip stream: send one .tar.gz")
                    rest = self._source.read(CHUNK)
                return 0
            if not self._pending:
                self._pending = self._source.read(CHUNK)
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


def gunzip(source: IO[bytes], cap: int) -> io.BufferedReader:
    """The gzip stream in ``source`` inflated as it is read, at most ``cap`` bytes (``_Gunzip``)."""
    return io.BufferedReader(_Gunzip(source, cap), CHUNK)


def _open_tar(fileobj: IO[bytes], mode: Literal["r:", "r|"]) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=fileobj, mode=mode, tarinfo=capped_headers(LABEL))
    except (tarfile.TarError, OSError) as exc:
        raise UploadError(400, f"the upload is gzip but not a tar archive inside ({exc})") from None


def _members(archive: tarfile.TarFile, limits: UploadLimits) -> list[tarfile.TarInfo]:
    """``bundle``'s checks of every member, links refused: 413 past a cap, 400 otherwise."""
    try:
        return checked_members(_plain(archive, limits), LABEL, _folder_limits(limits), links=False)
    except FolderError as exc:
        raise UploadError(413 if isinstance(exc, OverCap) else 400, str(exc)) from None


def _plain(members: Iterable[tarfile.TarInfo], limits: UploadLimits) -> Iterator[tarfile.TarInfo]:
    """The members named as ``bundle`` names them: ``./x`` as ``x``, the root ``.`` left
    out, and hidden entries and caches left out with everything below them."""
    for count, member in enumerate(members, 1):
        if count > limits.files:  # hidden ones too: each is a header held in memory
            raise OverCap(f"{LABEL}: more than {limits.files} members, the cap on a bot folder: refused")
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
    """A message about the unpacked folder, without the server's paths in it (one that
    begins with the folder itself is about the folder the caller names already)."""
    message = message.removeprefix(f"{folder}: ")
    return message.replace(str(folder) + "/", "").replace(str(folder), "the folder")
