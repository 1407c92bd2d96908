"""Uploads are written by strangers: every hostile archive is refused with the right status
and one line, and leaves nothing behind; a good one comes out as ``bundle.pack`` packs
the folder, whichever way it was tarred (at the default caps, on archives of hundreds of
MiB: tests/integration/test_upload_default_caps.py)."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.bots.bundle import pack
from arena.bots.folder import content_hash
from arena.bots.uploads import UploadError, UploadLimits, pack_upload, receive_upload

from ..conftest import SAMPLES

BOT = SAMPLES / "random"
MANIFEST = (BOT / "bot.toml").read_bytes()
SMALL = UploadLimits(packed_bytes=2**20, unpacked_bytes=4 * 2**20, files=50)


def tar_gz(add: Callable[[tarfile.TarFile], None], with_bot: bool = True) -> bytes:
    """A gzip tar holding the sample bot's files (unless not ``with_bot``), then what ``add`` adds."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        if with_bot:
            for path in sorted(BOT.iterdir()):
                if path.is_file():
                    archive.add(path, arcname=path.name)
        add(archive)
    return gzip.compress(buffer.getvalue(), mtime=0)  # the same bytes, so the same test ids, in every worker


def member(
    name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", link: str = ""
) -> Callable[[tarfile.TarFile], None]:
    def add(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = link
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        archive.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

    return add


def refused(
    work: Path, data: bytes, status: int, words: str, limits: UploadLimits = SMALL, unpacked: bool = False
) -> None:
    """Refused with ``status`` and one line holding ``words``, leaving ``work`` empty; and
    (unless it takes ``unpacked`` files to know) before writing anything: with a ``work``
    that does not exist, the same refusal and no folder made."""
    with pytest.raises(UploadError) as caught:
        receive_upload(data, work, limits)
    assert caught.value.status == status, caught.value.message
    assert words in caught.value.message, caught.value.message
    assert "\n" not in caught.value.message and str(work) not in caught.value.message
    assert os.listdir(work) == [], "nothing left behind"
    if not unpacked:
        nowhere = work / "never-made"
        with pytest.raises(UploadError) as again:
            receive_upload(data, nowhere, limits)
        assert again.value.message == caught.value.message and not nowhere.exists()


def test_a_good_upload_is_the_folder_packed_canonically(tmp_path: Path) -> None:
    digest, archive = pack(BOT)
    for data in (
        pack_upload(BOT),
        subprocess.run(["tar", "czf", "-", "-C", str(BOT), "."], capture_output=True, check=True).stdout,
    ):
        with receive_upload(data, tmp_path) as received:
            assert (received.name, received.version, received.games) == ("random", "1.0.0", ["nimmt"])
            assert received.digest == digest == content_hash(BOT) and gzip.decompress(received.read()) == archive
        assert os.listdir(tmp_path) == []


def test_hidden_entries_and_caches_are_left_out_as_bot_add_leaves_them(tmp_path: Path) -> None:
    def hidden(archive: tarfile.TarFile) -> None:
        for add in (member(".git/config"), member("__pycache__/x.pyc"), member(".env", data=b"SECRET")):
            add(archive)

    data = tar_gz(hidden)
    with receive_upload(data, tmp_path) as received:
        assert received.digest == content_hash(BOT)


@pytest.mark.parametrize(
    ("add", "words"),
    [
        (member("/etc/cron.d/x"), "absolute name"),
        (member("../escape"), "'..' part"),
        (member("lib/../../escape"), "'..' part"),
        (member("link", tarfile.SYMTYPE, link="/etc/passwd"), "symbolic link"),
        (member("inside", tarfile.SYMTYPE, link="bot.py"), "symbolic link"),
        (member("hard", tarfile.LNKTYPE, link="bot.py"), "hard link"),
        (member("dev", tarfile.CHRTYPE), "special file"),
        (member("fifo", tarfile.FIFOTYPE), "special file"),
        (member("bot.py"), "comes twice"),
        (member("nowhere/x"), "not inside a folder"),
    ],
)
def test_a_hostile_member_is_refused(tmp_path: Path, add: Callable[[tarfile.TarFile], None], words: str) -> None:
    refused(tmp_path, tar_gz(add), 400, words)


def test_too_many_files_is_refused(tmp_path: Path) -> None:
    def many(archive: tarfile.TarFile) -> None:
        for n in range(SMALL.files + 1):
            member(f"f{n}")(archive)

    refused(tmp_path, tar_gz(many), 413, "more than 50 members")


def test_files_past_the_unpacked_cap_are_refused(tmp_path: Path) -> None:
    refused(tmp_path, tar_gz(member("big", data=b"\0" * (5 * 2**20))), 413, "cap")


def test_a_gzip_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (64 * 2**20), compresslevel=9)
    assert len(bomb) < 100_000
    refused(tmp_path, bomb, 413, "unpacks to more than 4.0 MiB")


def test_an_upload_past_the_packed_cap_is_refused_unread(tmp_path: Path) -> None:
    refused(tmp_path, os.urandom(SMALL.packed_bytes + 1), 413, "at most 1.0 MiB packed")


@pytest.mark.parametrize(
    ("data", "status", "words"),
    [
        (b"PK\x03\x04 a zip file", 400, "not a gzip"),
        (gzip.compress(b"just text, no tar", mtime=0), 400, "not a tar"),
        (pack_upload(BOT)[:-20], 400, "cut short"),
        (b"", 400, "empty"),
    ],
)
def test_what_is_no_gzip_tar_is_refused(tmp_path: Path, data: bytes, status: int, words: str) -> None:
    refused(tmp_path, data, status, words)


@pytest.mark.parametrize(
    "data",
    [
        tar_gz(lambda a: None, with_bot=False),
        tar_gz(member("bot.toml", data=b"name = 'Bad Name'\n"), with_bot=False),
    ],
)
def test_a_folder_without_a_valid_manifest_is_refused(tmp_path: Path, data: bytes) -> None:
    refused(tmp_path, data, 400, "bot.toml", unpacked=True)


def test_the_default_caps_are_the_issues() -> None:
    limits = UploadLimits()
    assert (limits.packed_bytes, limits.unpacked_bytes, limits.files) == (20 * 2**20, 200 * 2**20, 10_000)
