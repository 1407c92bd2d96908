"""A bot folder packed to bytes and unpacked elsewhere: round trips, the cache, and hostile archives."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arena.bots.bundle import pack, unpack
from arena.bots.folder import FolderError, FolderLimits, content_hash, copy_folder

# --- building folders and archives ------------------------------------------------------


def make_bot(root: Path) -> Path:
    (root / "lib" / "deep").mkdir(parents=True)
    (root / "main.py").write_text("print('hello')\n")
    (root / "run.sh").write_text("#!/bin/sh\nexec python3 main.py\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "lib" / "util.py").write_text("X = 1\n")
    (root / "lib" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 4096)  # 1 MiB: several chunks
    os.symlink("../main.py", root / "lib" / "main_link.py")
    os.symlink("lib/deep", root / "deep_alias")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("not part of the bot\n")
    return root


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file_(name: str, data: bytes = b"x = 1\n", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def dir_(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


def link_(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def special(name: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.devmajor, info.devminor = 1, 3
    return info, None


# --- round trips ------------------------------------------------------------------------


def test_round_trip_keeps_files_exec_bits_and_links(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    digest, data = pack(bot)
    assert digest == content_hash(bot)
    cache = tmp_path / "cache"
    out = unpack(data, digest, cache)
    assert out == cache / digest
    assert content_hash(out) == digest
    assert (out / "main.py").read_text() == "print('hello')\n"
    assert (out / "lib" / "deep" / "data.bin").read_bytes() == bytes(range(256)) * 4096
    assert os.stat(out / "run.sh").st_mode & 0o111 == 0o111
    assert os.stat(out / "main.py").st_mode & 0o111 == 0
    assert os.readlink(out / "lib" / "main_link.py") == "../main.py"
    assert os.readlink(out / "deep_alias") == "lib/deep"
    assert not (out / ".git").exists()
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert os.listdir(cache) == [digest]
    for root, dirs, files in os.walk(out):
        for name in [root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)]:
            info = os.lstat(name)
            if not stat.S_ISLNK(info.st_mode):
                assert info.st_mode & 0o222 == 0, name
                assert info.st_mode & 0o444 == 0o444, name


def test_same_content_packs_to_the_same_bytes(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    first = pack(bot)
    assert pack(bot) == first
    other = tmp_path / "other"
    copy_folder(bot, other)
    for name in ("main.py", "lib/util.py"):
        os.utime(other / name, (1_000_000, 2_000_000))
    assert pack(other) == first


def test_an_empty_folder_round_trips(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    digest, data = pack(tmp_path / "bot")
    assert content_hash(unpack(data, digest, tmp_path / "cache")) == digest


def test_the_cache_answers_without_reading_the_bytes(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    digest, data = pack(bot)
    cache = tmp_path / "cache"
    out = unpack(data, digest, cache)
    assert unpack(b"garbage, never read", digest, cache) == out
    assert os.listdir(cache) == [digest]


def test_unpacking_at_once_from_many_threads_keeps_one_folder(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    digest, data = pack(bot)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    results: list[Path] = []
    barrier = threading.Barrier(6)

    def worker() -> None:
        barrier.wait()
        results.append(unpack(data, digest, cache))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [cache / digest] * 6
    assert os.listdir(cache) == [digest]
    assert content_hash(cache / digest) == digest


# --- pack refuses what scan refuses ----------------------------------------------------


def test_pack_refuses_a_link_leaving_the_folder(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    (tmp_path / "secret").write_text("no\n")
    os.symlink("../secret", bot / "leak")
    with pytest.raises(FolderError, match="leads out of the bot folder"):
        pack(bot)


def test_pack_refuses_an_absolute_link_and_a_fifo(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    os.symlink("/etc/passwd", bot / "passwd")
    with pytest.raises(FolderError, match="absolute path"):
        pack(bot)
    os.unlink(bot / "passwd")
    os.mkfifo(bot / "pipe")
    with pytest.raises(FolderError, match="FIFO"):
        pack(bot)


def test_pack_refuses_a_folder_over_the_caps(tmp_path: Path) -> None:
    bot = make_bot(tmp_path / "bot")
    with pytest.raises(FolderError, match="more than 3 files"):
        pack(bot, FolderLimits(files=3))


# --- hostile archives -------------------------------------------------------------------


@pytest.fixture
def refused(tmp_path: Path) -> Iterator[Callable[..., None]]:
    """Unpack must refuse, leave the cache as it was and write nothing outside it."""
    work = tmp_path / "work"
    cache = work / "cache"
    cache.mkdir(parents=True, mode=0o700)
    (cache / ("f" * 64)).mkdir()  # an earlier bot, untouched
    sentinel = tmp_path.parent / f"{tmp_path.name}-escaped"
    before_cache = sorted(os.listdir(cache))
    outside = sorted(os.listdir(tmp_path.parent))

    def check(
        data: bytes, digest: str = "0" * 64, limits: FolderLimits | None = None, match: str | None = None
    ) -> None:
        with pytest.raises(FolderError, match=match) as caught:
            unpack(data, digest, cache, limits)
        assert "\n" not in str(caught.value)
        assert sorted(os.listdir(cache)) == before_cache
        assert os.listdir(work) == ["cache"]
        assert not os.path.lexists(sentinel)
        assert sorted(os.listdir(tmp_path.parent)) == outside

    yield check
    assert not os.path.lexists(sentinel)


def escaping_names(tmp_path: Path) -> list[str]:
    sentinel = tmp_path.parent / f"{tmp_path.name}-escaped"
    climb = os.path.relpath(sentinel, tmp_path / "work" / "cache" / "unpacking-x")
    return [str(sentinel), "/x", "../x", "a/../../x", climb, f"a/../{climb}", "./x", "a//x"]


@pytest.mark.parametrize("index", range(8))
def test_names_absolute_or_climbing_are_refused(tmp_path: Path, refused: Callable[..., None], index: int) -> None:
    name = escaping_names(tmp_path)[index]
    refused(tar_of(dir_("a"), file_(name)), match="absolute|'\\.\\.'")


@pytest.mark.parametrize(
    ("members", "match"),
    [
        ([link_("passwd", "/etc/passwd")], "absolute"),
        ([link_("a", "../..")], "leads out"),
        ([dir_("sub"), link_("sub/up", "../../x")], "leads out"),
        ([link_("a", "..")], "leads out"),
        ([link_("self", ".")], "loop"),
        ([link_("d", "."), link_("e", "d/..")], "leads out"),
        ([link_("out", "../../.."), file_("out/x")], "not inside a folder"),
        ([dir_("sub"), link_("sub/l", "../.."), dir_("sub/l/x")], "leads out|not inside"),
        ([link_("a", "missing")], "missing"),
    ],
)
def test_links_leaving_the_folder_are_refused(
    refused: Callable[..., None], members: list[tuple[tarfile.TarInfo, bytes | None]], match: str
) -> None:
    refused(tar_of(*members), match=match)


def test_a_hard_link_is_refused(refused: Callable[..., None]) -> None:
    refused(tar_of(file_("f"), link_("g", "f", tarfile.LNKTYPE)), match="hard link")


def test_a_hard_link_to_a_file_outside_is_refused(refused: Callable[..., None]) -> None:
    refused(tar_of(link_("g", "/etc/passwd", tarfile.LNKTYPE)), match="hard link")


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE])
def test_special_members_are_refused(refused: Callable[..., None], kind: bytes) -> None:
    refused(tar_of(file_("ok.py"), special("null", kind)), match="special file")


def test_a_member_overwriting_another_is_refused(refused: Callable[..., None]) -> None:
    refused(tar_of(link_("a", "b"), file_("b"), file_("a", b"through the link")), match="comes twice")


def test_a_member_below_a_file_or_a_missing_folder_is_refused(refused: Callable[..., None]) -> None:
    refused(tar_of(file_("a"), file_("a/b")), match="not inside a folder")
    refused(tar_of(file_("a/b")), match="not inside a folder")


def test_more_members_than_the_default_cap_are_refused(refused: Callable[..., None]) -> None:
    data = tar_of(*(file_(f"f{number:05}", b"") for number in range(10_001)))
    refused(data, match="more than 10000 members")


def test_more_members_than_a_small_cap_are_refused(refused: Callable[..., None]) -> None:
    refused(tar_of(*(file_(f"f{number}") for number in range(6))), limits=FolderLimits(files=5), match="more than 5")


def test_files_over_the_byte_cap_are_refused(refused: Callable[..., None]) -> None:
    data = tar_of(file_("zeros", bytes(2**20)))
    refused(data, limits=FolderLimits(total_bytes=64 * 1024), match="MiB")


def test_a_member_nested_too_deep_is_refused(refused: Callable[..., None]) -> None:
    data = tar_of(dir_("a"), dir_("a/b"), file_("a/b/c"))
    refused(data, limits=FolderLimits(depth=2), match="nested more than 2")


@pytest.mark.parametrize("name", [".x", "__pycache__", "lib/.hidden"])
def test_hidden_members_are_refused(refused: Callable[..., None], name: str) -> None:
    refused(tar_of(dir_("lib"), file_(name)), match="hidden")


def test_content_not_matching_the_hash_is_refused(tmp_path: Path, refused: Callable[..., None]) -> None:
    bot = make_bot(tmp_path / "bot")
    digest, _ = pack(bot)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "main.py").write_text("print('changed')\n")
    _, other = pack(tmp_path / "other")
    refused(other, digest, match=f"does not hash to {digest}")


def test_exec_bits_count_in_the_hash(tmp_path: Path, refused: Callable[..., None]) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(bot / "run.sh", 0o755)
    digest, _ = pack(bot)
    refused(tar_of(file_("run.sh", b"#!/bin/sh\n", 0o644)), digest, match="does not hash")


@pytest.mark.parametrize(
    "data", [b"", b"garbage " * 200, bytes(100), b"\x00" * 511 + b"\x01"], ids=["empty", "text", "zeros", "short"]
)
def test_garbage_is_refused(refused: Callable[..., None], data: bytes) -> None:
    refused(data)


def test_a_compressed_tar_is_refused(tmp_path: Path, refused: Callable[..., None]) -> None:
    digest, data = pack(make_bot(tmp_path / "bot"))
    refused(gzip.compress(data), digest, match="not a plain tar")


def test_a_truncated_tar_is_refused(tmp_path: Path, refused: Callable[..., None]) -> None:
    digest, data = pack(make_bot(tmp_path / "bot"))
    refused(data[: len(data) // 2], digest)


@pytest.mark.parametrize("digest", ["../..", "ABC", "", "A" * 64, "0" * 63, "0" * 65, "../" + "0" * 61, "g" * 64])
def test_bad_hashes_are_refused(tmp_path: Path, refused: Callable[..., None], digest: str) -> None:
    _, data = pack(make_bot(tmp_path / "bot"))
    refused(data, digest, match="not a content hash")
