"""Uploads at the default caps, on archives of hundreds of MiB (10,001 files, 201 MiB of
zeros, a 1 GiB gzip bomb refused by a process that never inflates it): refused with the
right status and one line, leaving nothing behind (small caps: tests/unit/test_uploads.py)."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

from arena.bots.uploads import UploadLimits, pack_upload

from ..unit.test_uploads import BOT, member, refused, tar_gz


def gzip_stream(pieces: Iterator[bytes]) -> bytes:
    """The gzip of ``pieces`` written one by one: a huge tar costs the test no memory."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as out:
        for piece in pieces:
            out.write(piece)
    return buffer.getvalue()


def zeros(size: int) -> Iterator[bytes]:
    chunk = bytes(2**20)
    for start in range(0, size, len(chunk)):
        yield chunk[: size - start]


def test_ten_thousand_and_one_files_are_refused_at_the_default_cap(tmp_path: Path) -> None:
    def many(archive: tarfile.TarFile) -> None:
        for n in range(10_001):
            member(f"f{n}", data=b"")(archive)

    refused(tmp_path, tar_gz(many), 413, "more than 10000 members", UploadLimits())


def test_201_mib_of_zeros_is_refused_at_the_default_cap(tmp_path: Path) -> None:
    size = 201 * 2**20
    header = tarfile.TarInfo("big")
    header.size = size
    data = gzip_stream(iter([header.tobuf(), *zeros(size), bytes(-size % 512 + 1024)]))
    assert len(data) < UploadLimits().packed_bytes
    refused(tmp_path, data, 413, "more than 200 MiB, the cap", UploadLimits())


def test_a_tar_bomb_past_its_end_is_refused_at_the_cap(tmp_path: Path) -> None:
    """A good tar followed by zeros: what follows the archive counts too."""
    data = gzip_stream(iter([gzip.decompress(pack_upload(BOT)), *zeros(5 * 2**20)]))
    refused(tmp_path, data, 413, "unpacks to more than 4.0 MiB")


def test_a_1_gib_gzip_bomb_is_refused_without_inflating_it(tmp_path: Path) -> None:
    """Refused at the default cap in a process that never grows past a fraction of it."""
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip_stream(zeros(2**30)))
    assert bomb.stat().st_size < 2 * 2**20
    work = tmp_path / "work"
    work.mkdir()
    script = (
        "import sys; from pathlib import Path; from arena.bots.uploads import UploadError, receive_upload\n"
        "try: receive_upload(Path(sys.argv[1]).read_bytes(), Path(sys.argv[2]))\n"
        "except UploadError as e: print(e.status, e.message)\n"
        # VmHWM: this program's peak (ru_maxrss would keep the forking test runner's across exec)
        "print(int(dict(l.split(':', 1) for l in open('/proc/self/status'))['VmHWM'].split()[0]) // 1024)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(bomb), str(work)], capture_output=True, text=True, timeout=600
    )
    refusal, peak_mib = run.stdout.splitlines()
    assert refusal == "413 the upload unpacks to more than 200.0 MiB, the cap", run.stderr
    assert int(peak_mib) < 150, f"{peak_mib} MiB at the peak"
    assert os.listdir(work) == []
