"""Hostile uploads played against a real `arena serve --submissions` over real HTTP and a
real SQLite file: header and unpacking bombs, an author's many uploads at once, bodies
held back, refusals before the body is read, names the disk cannot hold, and what is
stored. Memory is the server process's own peak (VmHWM), with generous margins."""

from __future__ import annotations

import gzip
import http.client
import io
import json
import os
import socket
import sqlite3
import tarfile
import time
import urllib.parse
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena.bots.uploads import pack_upload
from arena.store import Store
from arena.store.submissions import Submissions

from ..conftest import serving
from .test_web_submissions import bot_folder, post, rows

AUTHORS = ("ada", "bob", "cyd", "dee", "eve", "fay", "gil", "hal", "ivy", "jon")


class Door:
    def __init__(self, url: str, db: Path, tokens: dict[str, str], pid: int, output: list[str]) -> None:
        self.url, self.db, self.tokens, self.pid, self.output = url, db, tokens, pid, output
        parts = urllib.parse.urlsplit(url)
        self.address = (parts.hostname or "", parts.port or 80)

    def status(self, field: str) -> int:
        """A field of the server's /proc status in MiB (VmHWM: its peak; VmRSS: now)."""
        with open(f"/proc/{self.pid}/status") as status:
            found = dict(line.split(":", 1) for line in status)
        return int(found[field].split()[0]) // 1024

    def opened(self, author: str, length: int, extra: dict[str, str] | None = None) -> socket.socket:
        """A POST /api/submissions whose headers are sent, and no byte of its body yet."""
        sock = socket.create_connection(self.address, timeout=60)
        headers = {
            "Host": f"{self.address[0]}:{self.address[1]}",
            "Authorization": f"Bearer {self.tokens[author]}",
            "Content-Type": "application/gzip",
            "Content-Length": str(length),
            **(extra or {}),
        }
        head = "POST /api/submissions HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        sock.sendall(head.encode())
        return sock


def answer_of(sock: socket.socket, timeout: float = 60) -> tuple[int, Any]:
    sock.settimeout(timeout)
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, json.loads(response.read() or b"null")


@contextmanager
def door_of(tmp_path: Path, max_mb: str = "1", body_s: str = "2") -> Iterator[Door]:
    """A server taking submissions: ``max_mb`` MiB packed at most, ``body_s`` s for a body,
    50 an hour; no traceback and no error in its output once stopped."""
    db = tmp_path / "arena.db"
    with Store(db) as store:
        subs = Submissions(store)
        tokens = {name: subs.add_author(name)[1] for name in AUTHORS}
    output: list[str] = []
    pids: list[int] = []
    extra = ("--submissions", "--submissions-per-hour", "50", "--max-upload-mb", max_mb, "--upload-seconds", body_s)
    with serving(db, extra=extra, output=output, pids=pids) as url:
        yield Door(url, db, tokens, pids[0], output)
    said = "".join(output)
    assert "Traceback" not in said and "Error" not in said, said


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Door]:
    with door_of(tmp_path) as found:
        yield found


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes]], level: int = 9) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), compresslevel=level)


def bot_members(folder: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    return [(tarfile.TarInfo(p.name), p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]


def stored_archives(db: Path) -> list[int]:
    with sqlite3.connect(db) as connection:
        return [int(n) for (n,) in connection.execute("SELECT length(archive) FROM submissions ORDER BY id")]


def test_a_pax_header_bomb_is_413_from_its_size_field(door: Door, tmp_path: Path) -> None:
    """150 MiB of PAX header in a 150 KiB upload: refused before the header is read."""
    info = tarfile.TarInfo("bot.toml")
    info.pax_headers = {"comment": "x" * (150 * 2**20)}
    bomb = tar_gz([(info, b"x"), *bot_members(bot_folder(tmp_path, "bomb"))])
    assert len(bomb) < 200 * 1024
    before = door.status("VmHWM")
    status, answer = post(door.url, door.tokens["ada"], bomb)
    assert status == 413 and "extended header" in answer["error"] and "\n" not in answer["error"], answer
    assert door.status("VmHWM") - before < 40, "the header was never held"
    assert rows(door.db) == (0, 0)


def test_a_chain_of_headers_is_refused(door: Door, tmp_path: Path) -> None:
    """Many small GNU long-name headers in a row (tarfile reads a chain recursively)."""
    buffer = io.BytesIO()
    block = tarfile.TarInfo("././@LongLink")
    block.type = tarfile.GNUTYPE_LONGNAME
    name = b"n" * 1000 + b"\0"
    block.size = len(name)
    header = block.tobuf(tarfile.GNU_FORMAT) + name + b"\0" * (-len(name) % 512)
    buffer.write(header * 5000)
    status, answer = post(door.url, door.tokens["ada"], gzip.compress(buffer.getvalue()))
    assert status == 413 and "in a row" in answer["error"], answer


@pytest.mark.parametrize(
    ("name", "words"),
    [("evil\0name", "NUL"), ("x" * 300, "300 bytes"), ("a/" * 2100 + "b", "long")],
    ids=["NUL in a PAX path", "a 300-character name", "a 4 KiB path"],
)
def test_a_name_the_disk_cannot_hold_is_a_clean_400(door: Door, tmp_path: Path, name: str, words: str) -> None:
    info = tarfile.TarInfo("placeholder")
    info.pax_headers = {"path": name}
    upload = tar_gz([*bot_members(bot_folder(tmp_path, "named")), (info, b"x")])
    status, answer = post(door.url, door.tokens["ada"], upload)
    assert status == 400 and words in answer["error"] and "\n" not in answer["error"], answer
    assert rows(door.db) == (0, 0)


def test_an_upload_that_unpacks_big_is_stored_small_and_costs_no_memory(door: Door, tmp_path: Path) -> None:
    """A 190 MiB file of zeros (under the 200 MiB cap) in an upload of a few hundred KiB:
    accepted, with the server's peak barely moved and the archive stored gzipped."""
    folder = bot_folder(tmp_path, "roomy")
    big = tarfile.TarInfo("weights.bin")
    upload = tar_gz([*bot_members(folder), (big, b"\0" * (190 * 2**20))])
    assert len(upload) < 2**20
    before = door.status("VmHWM")
    status, answer = post(door.url, door.tokens["ada"], upload)
    assert status == 202, answer
    assert door.status("VmHWM") - before < 60
    [size] = stored_archives(door.db)
    assert size < 2**20, f"{size} bytes stored: the canonical tar gzipped, not 190 MiB"
    assert os.listdir(door.db.with_name("arena-uploads")) == []


def test_an_authors_uploads_under_way_are_capped_and_the_next_is_429_at_once(door: Door, tmp_path: Path) -> None:
    held = [door.opened("ada", 900_000) for _ in range(2)]
    for sock in held:
        sock.sendall(b"\x1f\x8b" + b"\0" * 1000)
    time.sleep(0.3)  # (both admitted: the third finds them under way)
    third = door.opened("ada", 900_000)  # nothing of its body is ever sent
    status, answer = answer_of(third)
    assert status == 429 and "under way" in answer["error"], answer
    assert post(door.url, door.tokens["bob"], pack_upload(bot_folder(tmp_path, "bobs")))[0] == 202, "bob goes on"
    for sock in held:
        assert answer_of(sock)[0] == 408  # within --upload-seconds: then ada may upload again
        sock.close()
    third.close()
    assert post(door.url, door.tokens["ada"], pack_upload(bot_folder(tmp_path, "adas")))[0] == 202


def test_bodies_held_back_time_out_and_their_memory_goes(tmp_path: Path) -> None:
    """Eight authors each open two uploads (16, the most under way), send 19 of 20 MiB
    and stop (304 MiB in all, which the server once held for ever): each gets 408 after
    the time for a body, the connection closes, and the server's peak hardly moves:
    bodies go to disk. The time for a body is 10 s: 19 MiB arrive well within it with
    both cores busy (it was 2 s, and a loaded machine cut a body short while it was sent)."""
    with door_of(tmp_path, max_mb="20", body_s="10") as door:
        before = door.status("VmHWM")
        held = []
        body = os.urandom(19 * 2**20)
        try:
            for author in AUTHORS[:8]:
                for _ in range(2):
                    sock = door.opened(author, 20 * 2**20)
                    held.append(sock)
                    sock.sendall(body)
            answers = [answer_of(sock) for sock in held]
            assert [status for status, _ in answers] == [408] * 16, answers
            assert all("did not arrive within 10 s" in a["error"] for _, a in answers), answers
            for sock in held:
                sock.settimeout(10)
                assert sock.recv(1) == b"", "the server closed it"
        finally:
            for sock in held:
                sock.close()
        assert door.status("VmHWM") - before < 100, "bodies went to disk, not memory"
        assert os.listdir(door.db.with_name("arena-uploads")) == []
        assert post(door.url, door.tokens["ada"], pack_upload(bot_folder(tmp_path, "after")))[0] == 202


@pytest.mark.parametrize("refusal", [403, 409, 429])
def test_a_refusal_that_needs_no_body_comes_before_it_is_read(door: Door, tmp_path: Path, refusal: int) -> None:
    """The request names its bot (Arena-Bot) and sends its headers only: the answer comes
    without a byte of the body, so the server never waited for it."""
    assert post(door.url, door.tokens["ada"], pack_upload(bot_folder(tmp_path, "taken")))[0] == 202
    if refusal == 429:
        with Store(door.db) as store, store.transaction():
            store.db.execute("UPDATE submissions SET received = ? WHERE 1", (time.strftime("%Y-%m-%dT%H:%M:%S"),))
            for n in range(49):
                store.db.execute(
                    "INSERT INTO submissions (author_id, name, version, hash, size, archive, state, received, updated)"
                    " SELECT author_id, name, ?, hash, 0, X'', 'rejected', received, updated FROM submissions"
                    " WHERE id = 1",
                    (f"0.{n}",),
                )
    author, bot = {403: ("bob", "taken:2.0"), 409: ("ada", "taken:1.0"), 429: ("ada", "taken:3.0")}[refusal]
    sock = door.opened(author, 900_000, {"Arena-Bot": bot})
    status, answer = answer_of(sock, timeout=30)
    sock.close()
    assert status == refusal, answer
    assert len(stored_archives(door.db)) == (50 if refusal == 429 else 1)


def test_an_upload_that_does_not_hold_the_bot_it_names_is_400(door: Door, tmp_path: Path) -> None:
    upload = pack_upload(bot_folder(tmp_path, "real", "1.0"))
    status, answer = post(door.url, door.tokens["ada"], upload, {"Arena-Bot": "other:1.0"})
    assert status == 400 and "not other:1.0" in answer["error"], answer
    assert post(door.url, door.tokens["ada"], upload, {"Arena-Bot": "bad name!"})[0] == 400
    assert post(door.url, door.tokens["ada"], upload, {"Arena-Bot": "real:1.0"})[0] == 202


def test_the_stored_archive_is_the_canonical_tar_gzipped(door: Door, tmp_path: Path) -> None:
    from arena.bots.bundle import pack

    folder = bot_folder(tmp_path, "canon")
    assert post(door.url, door.tokens["ada"], pack_upload(folder))[0] == 202
    with Store(door.db, read_only=True) as store:
        stored = Submissions(store).archive(1)
    assert stored[:2] == b"\x1f\x8b" and zlib.decompress(stored, zlib.MAX_WBITS | 16) == pack(folder)[1]
