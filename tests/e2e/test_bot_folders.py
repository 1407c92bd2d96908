"""A bot folder is hostile: links out of it, special files and huge folders are refused
(issue 11), through the real CLI, real files and a real Docker engine.

Each attack folder is refused by ``arena bot add`` with one line naming the path and a
non-zero exit, leaving nothing in ``<db>-bots/`` and the database as it was; the image
path (``arena bot build``, ``images.build_bot``) refuses them too. Inside links are kept
as links, in snapshots and images. Hashing and copying stream: the referee's memory
stays flat whatever the folder holds.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.bots import Bot, BotError, content_hash, load_bot
from arena.bots.folder import FolderError, FolderLimits, copy_folder, remove_tree, scan, seal_read_only, set_modes
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.images import build_bot

from ..conftest import SAMPLES

ARENA = str(Path(sys.executable).parent / "arena")
SECRET = "arena-test-secret-7f3a9c"
MANIFEST = 'name = "{name}"\nversion = "1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args], capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})}
    )


def bot_folder(base: Path, name: str) -> Path:
    """A working bot folder (the random sample's code) under ``base``."""
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_bytes((SAMPLES / "random" / "bot.py").read_bytes())
    (folder / "bot.toml").write_text(MANIFEST.format(name=name))
    return folder


# --- the attacks: each makes its hostile entry in a bot folder and names it -------------


def _shadow(folder: Path) -> str:
    os.symlink("/etc/shadow", folder / "shadow")
    return "shadow"


def _root_only(folder: Path) -> str:
    private = folder.parent / "private"
    private.mkdir()
    (private / "secret.txt").write_text(SECRET)
    os.chmod(private / "secret.txt", 0o600)
    os.symlink("../private/secret.txt", folder / "secret")
    return "secret"


def _environ(folder: Path) -> str:
    os.symlink("/proc/self/environ", folder / "environ")
    return "environ"


def _absolute_inside(folder: Path) -> str:
    os.symlink(str(folder / "bot.py"), folder / "absolute")  # inside, but absolute: not in a copy
    return "absolute"


def _dangling(folder: Path) -> str:
    os.symlink("nothing-here", folder / "dangling")
    return "dangling"


def _chain(folder: Path) -> str:
    (folder / "s").mkdir()
    os.symlink("..", folder / "s" / "up")
    os.symlink("up/..", folder / "s" / "p")  # each link stays inside; together they leave
    return "s/p"


def _dots(folder: Path) -> str:
    os.symlink(".", folder / "l1")
    os.symlink(".", folder / "l2")
    return "l1"


def _fifo(folder: Path) -> str:
    os.mkfifo(folder / "pipe")
    return "pipe"


def _socket(folder: Path) -> str:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "sock"))
    return "sock"


def _too_many_files(folder: Path) -> str:
    many = folder / "many"
    many.mkdir()
    for number in range(FolderLimits().files):
        (many / str(number)).touch()
    return "ARENA_BOT_MAX_FILES"


def _too_many_bytes(folder: Path) -> str:
    with open(folder / "sparse", "wb") as sparse:
        sparse.truncate(2**30)  # 1 GiB that costs no disk
    return "ARENA_BOT_MAX_MB"


def _too_deep(folder: Path) -> str:
    folder.joinpath(*["d"] * (FolderLimits().depth + 1)).mkdir(parents=True)
    return "ARENA_BOT_MAX_DEPTH"


def _manifest_link(folder: Path) -> str:
    (folder / "real.toml").write_text((folder / "bot.toml").read_text())
    (folder / "bot.toml").unlink()
    os.symlink("real.toml", folder / "bot.toml")
    return "bot.toml"


ATTACKS: dict[str, Callable[[Path], str]] = {
    "shadow": _shadow,
    "root-only": _root_only,
    "environ": _environ,
    "absolute": _absolute_inside,
    "dangling": _dangling,
    "chain": _chain,
    "dots": _dots,
    "fifo": _fifo,
    "socket": _socket,
    "files": _too_many_files,
    "bytes": _too_many_bytes,
    "depth": _too_deep,
    "manifest-link": _manifest_link,
}
LINK_ATTACKS = ["shadow", "root-only", "environ", "chain", "dots", "fifo"]


def attack(base: Path, kind: str) -> tuple[Path, str]:
    folder = bot_folder(base, "evil")
    needle = ATTACKS[kind](folder)
    return folder, needle


def assert_one_line_refusal(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert len(result.stderr.strip().splitlines()) == 1, output
    assert SECRET not in output
    for needle in needles:
        assert needle in output, output


def bots_rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM bots ORDER BY id").fetchall()


# --- arena bot add ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(ATTACKS))
def test_bot_add_refuses_a_hostile_folder(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "arena.db"
    assert arena("bot", "add", str(bot_folder(tmp_path, "good")), "--db", str(db)).returncode == 0
    before, snapshots = bots_rows(db), sorted(os.listdir(tmp_path / "arena-bots"))
    folder, needle = attack(tmp_path, kind)
    result = arena("bot", "add", str(folder), "--db", str(db), env={"ARENA_TEST_SECRET": SECRET})
    named = f"{folder}/{needle}" if not needle.startswith("ARENA_") else str(folder)
    assert_one_line_refusal(result, named, needle)
    assert bots_rows(db) == before
    assert sorted(os.listdir(tmp_path / "arena-bots")) == snapshots  # nothing new, no partial copy


def test_tournament_run_and_play_refuse_a_hostile_folder(tmp_path: Path) -> None:
    folder, needle = attack(tmp_path, "shadow")
    db = tmp_path / "arena.db"
    good = str(SAMPLES / "random")
    result = arena("tournament", "run", good, str(folder), "--db", str(db), "--sandbox", "local", "--deals", "1")
    assert_one_line_refusal(result, f"{folder}/{needle}")
    assert not (tmp_path / "arena-bots").exists()  # refused before any bot, good or hostile, was stored
    result = arena("play", good, str(folder), "--sandbox", "local")
    assert_one_line_refusal(result, f"{folder}/{needle}")


def test_a_manifest_too_big_is_refused(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "fat")
    with open(folder / "bot.toml", "a") as manifest:
        manifest.write("# padding\n" * 10_000)
    with pytest.raises(BotError, match="more than a manifest may hold"):
        load_bot(folder)


def test_an_inside_link_is_kept_as_a_link_in_the_snapshot(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "linked")
    (folder / "lib").mkdir()
    (folder / "lib" / "data.txt").write_text("data")
    os.symlink("lib/data.txt", folder / "data.txt")
    os.symlink("lib", folder / "shared")
    db = tmp_path / "arena.db"
    result = arena("bot", "add", str(folder), "--db", str(db))
    assert result.returncode == 0, result.stderr
    (snapshot,) = (tmp_path / "arena-bots").iterdir()
    assert os.readlink(snapshot / "data.txt") == "lib/data.txt"
    assert os.readlink(snapshot / "shared") == "lib"
    assert (snapshot / "data.txt").read_text() == "data"
    assert not os.stat(snapshot / "lib" / "data.txt").st_mode & stat.S_IWUSR  # sealed, through no link
    assert bots_rows(db)[0][3] == content_hash(folder) == content_hash(snapshot)


# --- the folder module ------------------------------------------------------------------


def legacy_hash(folder: Path) -> str:
    """The content hash as the first arena computed it (each file read whole)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        if path.is_file():
            digest.update(f"{relative}\0{path.stat().st_mode & 0o111:o}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def test_the_hash_of_a_folder_without_links_is_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    for rel in ("a/b", "a-b", "a/c/d", "a.x", "z", "A", ".hidden/x", "__pycache__/y", "q/__pycache__/y", "é"):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(3000) + rel.encode())
    (folder / "empty").mkdir()
    os.chmod(folder / "z", 0o755)
    assert content_hash(folder) == legacy_hash(folder)
    for sample in SAMPLES.iterdir():
        assert content_hash(sample) == legacy_hash(sample), sample


def test_copy_folder_copies_what_it_checked(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "src")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(folder / "run.sh", 0o4755)
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("hidden")
    os.symlink("run.sh", folder / "start")
    dest = tmp_path / "copy"
    assert copy_folder(folder, dest) == content_hash(folder) == content_hash(dest)
    assert sorted(os.listdir(dest)) == ["bot.py", "bot.toml", "run.sh", "start"]
    assert stat.S_IMODE(os.stat(dest / "run.sh").st_mode) == 0o755  # set-id bits dropped
    assert os.readlink(dest / "start") == "run.sh"
    with pytest.raises(FolderError, match="already exists"):
        copy_folder(folder, dest)
    os.symlink("/etc/passwd", folder / "passwd")
    with pytest.raises(FolderError, match="passwd: a link to the absolute path"):
        copy_folder(folder, tmp_path / "copy2")
    assert not (tmp_path / "copy2").exists()


def test_sealing_and_removing_a_tree_follow_none_of_its_links(tmp_path: Path) -> None:
    """What the arena does to a tree a build wrote (modes, owners, removal) never goes
    through a link to a file or folder outside it, at any depth."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hook.pth").write_text("keep")
    os.chmod(outside / "hook.pth", 0o600)
    os.chmod(outside, 0o700)
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "code.py").write_text("print()")
    os.chmod(tree / "sub" / "code.py", 0o4751)
    for link in (tree / "hook.pth", tree / "sub" / "hook.pth"):
        link.symlink_to(outside / "hook.pth")
    (tree / "dir").symlink_to(outside)
    set_modes(tree, lambda info: 0o777, (12345, 12345))
    assert (tree / "sub" / "code.py").stat().st_uid == 12345 and os.stat(tree).st_mode & 0o777 == 0o777
    seal_read_only(tree)
    assert (tree / "sub" / "code.py").stat().st_mode & 0o7777 == 0o555, "exec bits kept, no write, no set-id"
    remove_tree(tree)
    assert not tree.exists()
    assert (outside / "hook.pth").read_text() == "keep"
    for path, mode in ((outside, 0o700), (outside / "hook.pth", 0o600)):
        info = path.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid) == (mode, os.geteuid()), path


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "three")
    (folder / "third").touch()
    monkeypatch.setenv("ARENA_BOT_MAX_FILES", "2")
    with pytest.raises(FolderError, match="more than 2 files.*ARENA_BOT_MAX_FILES"):
        scan(folder)
    monkeypatch.setenv("ARENA_BOT_MAX_FILES", "many")
    with pytest.raises(FolderError, match="ARENA_BOT_MAX_FILES='many'"):
        FolderLimits.from_env()
    monkeypatch.delenv("ARENA_BOT_MAX_FILES")
    monkeypatch.setenv("ARENA_BOT_MAX_MB", "1")
    assert FolderLimits.from_env() == FolderLimits(total_bytes=2**20)


def peak_rss_mb_of_bot_add(folder: Path, db: Path) -> float:
    """``arena bot add FOLDER`` as a child: its peak RSS in MB."""
    proc = subprocess.Popen(
        [ARENA, "bot", "add", str(folder), "--db", str(db)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    with proc.stderr:
        assert proc.returncode == 0, proc.stderr.read()
    return usage.ru_maxrss / 1024


def test_adding_a_big_folder_keeps_memory_flat(tmp_path: Path) -> None:
    """200 MB of files (under the cap): hashed and copied in chunks, the child's peak RSS
    stays within a few MB of the same command adding a tiny folder (the interpreter and
    its imports, whatever they weigh), far below the file's size."""
    small = bot_folder(tmp_path / "small", "tiny")
    baseline = peak_rss_mb_of_bot_add(small, tmp_path / "small.db")
    folder = bot_folder(tmp_path, "big")
    with open(folder / "blob", "wb") as blob:
        blob.truncate(200 * 2**20)
    peak_mb = peak_rss_mb_of_bot_add(folder, tmp_path / "arena.db")
    print(f"arena bot add, 200 MB folder: peak RSS {peak_mb:.1f} MB (a tiny folder: {baseline:.1f} MB)")
    assert peak_mb - baseline < 40
    (snapshot,) = (tmp_path / "arena-bots").iterdir()
    assert (snapshot / "blob").stat().st_size == 200 * 2**20
    os.chmod(snapshot, 0o755)
    (snapshot / "blob").unlink()  # 200 MB of disk back at once


# --- Docker images ----------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.parametrize("kind", LINK_ATTACKS)
def test_bot_build_refuses_a_hostile_folder(docker_sandbox: DockerSandbox, tmp_path: Path, kind: str) -> None:
    folder, needle = attack(tmp_path, kind)
    result = arena("bot", "build", str(folder), env={"ARENA_TEST_SECRET": SECRET})
    assert_one_line_refusal(result, f"{folder}/{needle}")
    # The image code refuses it too, with no load_bot in front of it.
    manifest = load_bot(SAMPLES / "random").manifest
    with pytest.raises(FolderError, match=needle):
        build_bot(docker_sandbox.client, Bot(folder, manifest), progress=lambda line: None)


@pytest.mark.docker
def test_an_image_holds_an_inside_link_as_a_link(docker_sandbox: DockerSandbox, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "imagelink")
    (folder / "lib").mkdir()
    (folder / "lib" / "data.txt").write_text("data")
    os.symlink("lib/data.txt", folder / "data.txt")
    os.symlink("lib", folder / "shared")
    client = docker_sandbox.client
    tag = build_bot(client, load_bot(folder), force=True, progress=lambda line: None)
    try:
        script = "readlink /bot/data.txt; readlink /bot/shared; cat /bot/data.txt; echo; ls /bot"
        out = client.containers.run(tag, ["/bin/sh", "-c", script], remove=True, network_mode="none")
        assert out.decode().split() == [
            "lib/data.txt",
            "lib",
            "data",
            "bot.py",
            "bot.toml",
            "data.txt",
            "lib",
            "shared",
        ]
        assert client.images.get(tag).labels["sixarena.content"] == content_hash(folder)
    finally:
        client.images.remove(tag, force=True)


def test_removing_a_tree_never_takes_a_top_folder() -> None:
    """A copy of ours is never ``/`` or a folder just below it: asking to remove one is a
    mistake, refused before anything is touched."""
    from arena.bots.folder import remove_tree

    for path in ("/", "/tmp", "/tmp/", "/tmp/.."):
        with pytest.raises(ValueError, match="refusing to remove"):
            remove_tree(Path(path))
    assert Path("/tmp").is_dir()
