"""Docker images built offline: a root file system from Debian's packages, the SDK on it,
a bot's image on top.

No image registry is reachable (here, nor at many sites), so the root file system is
made by ``debootstrap --variant=minbase`` with the runtimes bots need (Python 3, Node.js,
a C compiler), then loaded with ``docker import`` as ``sixarena-rootfs:<version>``:
minutes, once. The base bots run on is a thin layer over it holding the Python bot SDK
(our ``protocol`` package and msgspec), tagged ``sixarena-base:sdk-<hash>`` by a hash of
what it holds (the root file system's image id, the SDK's files, msgspec's version):
seconds, and made again on its own whenever the SDK changes. A bot's image is the
current base with the bot's folder copied to ``/bot`` and its build command run inside
with the network off, committed under a tag that holds a hash of the folder and of the
base, so a new SDK means new bot images.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import io
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import docker
import docker.errors

from ..bots import Bot, content_hash
from ..folder import Entry, each_file, scan

ROOTFS_VERSION = 1
"""Bump when ``PACKAGES`` or the way the root file system is made changes."""
ROOTFS_REPOSITORY = "sixarena-rootfs"
ROOTFS_IMAGE = f"{ROOTFS_REPOSITORY}:{ROOTFS_VERSION}"
LEGACY_BASES = {1: "sixarena-base:1"}
"""Bases built before the SDK had its own layer: the same packages, so reusable as the
root file system of that version (their old SDK copy is removed first)."""
BASE_REPOSITORY = "sixarena-base"
SDK_LAYOUT = 1
"""Bump when the way the SDK layer is made changes (it is part of the base's hash)."""
SITE_PACKAGES = "/usr/local/lib/python3.11/dist-packages"
IMAGE_PYTHON = "3.11"
SUITE = "bookworm"
MIRROR = os.environ.get("ARENA_DEBIAN_MIRROR", "http://deb.debian.org/debian")
PACKAGES = ["python3", "nodejs", "gcc", "libc6-dev", "make", "perl-base"]
LABEL = "sixarena"
"""Every image and container of the arena carries this label."""
BOT_PATH = "/bot"
MISSING_PROGRAM = "arena: the run command's program is not in the image"
IMAGE_CHANGES = ["ENV LANG=C.UTF-8 HOME=/tmp", 'CMD ["/bin/sh"]']

Progress = Callable[[str], None]


class ImageError(Exception):
    """An image that cannot be built or used, with what to do about it."""


def connect() -> docker.DockerClient:
    """A client of the local engine, or ``ImageError`` saying how to get one running."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        raise ImageError(
            f"no Docker engine answers ({_short(exc)}): start one (dockerd --bridge=none), or use --sandbox local"
        ) from None
    return client


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _image(client: docker.DockerClient, tag: str) -> Any | None:
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    """One image build at a time on this machine (two arenas may start at once)."""
    path = Path(tempfile.gettempdir()) / "sixarena-images.lock"
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# --- the root file system ---------------------------------------------------------------


def rootfs_exists(client: docker.DockerClient) -> bool:
    """The root file system is built, or a base of the old kind can stand in for it."""
    return _image(client, ROOTFS_IMAGE) is not None or _legacy_base(client) is not None


def _legacy_base(client: docker.DockerClient) -> Any | None:
    tag = LEGACY_BASES.get(ROOTFS_VERSION)
    image = _image(client, tag) if tag else None
    labels = (image.labels or {}) if image is not None else {}
    if image is None or labels.get(LABEL) != "base" or f"{LABEL}.sdk" in labels:
        return None
    return image


def build_rootfs(client: docker.DockerClient, force: bool = False, progress: Progress = print) -> str:
    """Make the root file system unless it is there (idempotent); ``force`` makes it anew.

    A base built before the SDK had its own layer is reused when there is one: it has the
    same packages, and taking it saves the debootstrap."""
    if not force:
        if _image(client, ROOTFS_IMAGE) is not None:
            progress(f"{ROOTFS_IMAGE} is already built (--force rebuilds it)")
            return ROOTFS_IMAGE
        if _legacy_base(client) is not None:
            return _adopt_legacy_base(client, progress)
    if os.geteuid() != 0:
        raise ImageError("building the root file system runs debootstrap, which needs root")
    if shutil.which("debootstrap") is None:
        raise ImageError("debootstrap is not installed: apt-get install debootstrap")
    with tempfile.TemporaryDirectory(prefix="arena-rootfs-", dir="/var/tmp") as work:
        rootfs = Path(work) / "rootfs"
        progress(f"debootstrap {SUITE} ({', '.join(PACKAGES)}) from {MIRROR}")
        _run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(rootfs), MIRROR],
            progress,
            "debootstrap",
        )
        _trim(rootfs)
        progress("loading the root file system into Docker (docker import)")
        archive = Path(work) / "rootfs.tar"
        _run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(archive), "."], progress, "tar")
        client.api.import_image_from_file(
            str(archive),
            repository=ROOTFS_REPOSITORY,
            tag=str(ROOTFS_VERSION),
            changes=[f"LABEL {LABEL}=rootfs {LABEL}.rootfs={ROOTFS_VERSION}", *IMAGE_CHANGES],
        )
    progress(f"built {ROOTFS_IMAGE}")
    return ROOTFS_IMAGE


def _adopt_legacy_base(client: docker.DockerClient, progress: Progress) -> str:
    """Commit an old-style base, its SDK copy removed, as the root file system."""
    legacy = LEGACY_BASES[ROOTFS_VERSION]
    progress(f"reusing {legacy} (built before the SDK had its own layer) as {ROOTFS_IMAGE}")
    script = f"rm -rf {SITE_PACKAGES}/protocol {SITE_PACKAGES}/msgspec {SITE_PACKAGES}/msgspec-*.dist-info"
    container = client.containers.create(
        legacy, ["/bin/sh", "-c", script], network_disabled=True, network_mode="none", labels={LABEL: "build"}
    )
    try:
        container.start()
        status: dict[str, Any] = container.wait(timeout=120)
        if status.get("StatusCode", 1) != 0:
            raise ImageError(f"could not clear the old SDK out of {legacy}: run `arena image build --force`")
        container.commit(
            repository=ROOTFS_REPOSITORY,
            tag=str(ROOTFS_VERSION),
            changes=[f"LABEL {LABEL}=rootfs {LABEL}.rootfs={ROOTFS_VERSION}", *IMAGE_CHANGES],
        )
    finally:
        container.remove(force=True)
    return ROOTFS_IMAGE


def _run(argv: list[str], progress: Progress, what: str) -> None:
    """Run a build step, passing its output lines on as progress; fail with its tail."""
    tail: list[str] = []
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = [*tail[-19:], line.rstrip()]
            if line.startswith(("I: Retrieving", "I: Extracting", "I: Installing", "I: Configuring", "I: Base")):
                progress(line.rstrip())
    if proc.returncode != 0:
        raise ImageError(f"{what} failed (exit {proc.returncode}):\n" + "\n".join(tail[-10:]))


def _trim(rootfs: Path) -> None:
    """Drop what bots never need: apt caches, docs, man pages."""
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"):
        shutil.rmtree(rootfs / sub, ignore_errors=True)


# --- the base: the SDK layer on the root file system ------------------------------------


def protocol_dir() -> Path:
    """The folder of our Python bot SDK, the ``protocol`` package, as the arena sees it."""
    import protocol

    return Path(protocol.__file__).parent


def msgspec_version() -> str:
    return importlib.metadata.version("msgspec")


def sdk_hash(rootfs_id: str) -> str:
    """What the base holds: the root file system, the SDK's files, msgspec's version."""
    digest = hashlib.sha256()
    for part in (f"layout {SDK_LAYOUT}", rootfs_id, f"msgspec=={msgspec_version()}", content_hash(protocol_dir())):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _rootfs_id(client: docker.DockerClient) -> str:
    image = _image(client, ROOTFS_IMAGE)
    if image is None:
        raise ImageError(f"the base image ({ROOTFS_IMAGE}) is missing: run `arena image build`")
    return str(image.id)


def base_tag(client: docker.DockerClient) -> str:
    """The tag of the current base (of this root file system and this SDK), built or not."""
    return f"{BASE_REPOSITORY}:sdk-{sdk_hash(_rootfs_id(client))[:12]}"


def base_exists(client: docker.DockerClient) -> bool:
    """The current base is built (the one for the SDK as it is now)."""
    try:
        return _image(client, base_tag(client)) is not None
    except ImageError:
        return False


def ensure_base(client: docker.DockerClient, progress: Progress = print) -> str:
    """The current base's tag, its SDK layer built first if missing (seconds).

    Only the root file system must be there already (`arena image build`), or an
    old-style base that stands in for it."""
    if _image(client, ROOTFS_IMAGE) is not None:
        tag = base_tag(client)
        if _image(client, tag) is not None:
            return tag
    with _lock():
        if _image(client, ROOTFS_IMAGE) is None:
            if _legacy_base(client) is None:
                raise ImageError(f"the base image ({ROOTFS_IMAGE}) is missing: run `arena image build`")
            _adopt_legacy_base(client, progress)
        return _build_sdk_layer(client, False, progress)


def build_base(client: docker.DockerClient, force: bool = False, progress: Progress = print) -> str:
    """What `arena image build` does: the root file system if missing, the SDK layer if
    missing (``force`` rebuilds both), then away with bases and bot images now outdated."""
    with _lock():
        build_rootfs(client, force, progress)
        tag = _build_sdk_layer(client, force, progress)
    prune(client, tag, progress)
    return tag


def _build_sdk_layer(client: docker.DockerClient, force: bool, progress: Progress) -> str:
    rootfs_id = _rootfs_id(client)
    digest = sdk_hash(rootfs_id)
    tag = f"{BASE_REPOSITORY}:sdk-{digest[:12]}"
    if not force and _image(client, tag) is not None:
        progress(f"{tag} is already built (--force rebuilds it)")
        return tag
    started = time.monotonic()
    progress(f"adding the Python bot SDK (protocol, msgspec {msgspec_version()}) as {tag}")
    with tempfile.TemporaryDirectory(prefix="arena-sdk-") as work:
        site = Path(work) / "site"
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                IMAGE_PYTHON,
                "--target",
                str(site),
                f"msgspec=={msgspec_version()}",
            ],
            progress,
            "pip install msgspec (for the image's Python)",
        )
        shutil.copytree(protocol_dir(), site / "protocol", ignore=shutil.ignore_patterns("__pycache__", ".*"))
        archive = _tree_tar(site, SITE_PACKAGES.strip("/"))
    container = client.containers.create(
        ROOTFS_IMAGE, ["/bin/true"], network_disabled=True, network_mode="none", labels={LABEL: "build"}
    )
    try:
        container.put_archive("/", archive)
        container.commit(
            repository=BASE_REPOSITORY,
            tag=tag.split(":")[1],
            changes=[f"LABEL {LABEL}=base {LABEL}.sdk={digest} {LABEL}.rootfs={ROOTFS_VERSION}", *IMAGE_CHANGES],
        )
    finally:
        container.remove(force=True)
    progress(f"built {tag} ({time.monotonic() - started:.1f} s)")
    return tag


def _tree_tar(folder: Path, arcname: str) -> bytes:
    """``folder`` as a tar at ``arcname``: owned by root, readable by all, no caches."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = 0o755 if info.isdir() or info.mode & 0o100 else 0o644
            return info

        parts = arcname.split("/")
        for depth in range(1, len(parts)):
            directory = tarfile.TarInfo("/".join(parts[:depth]))
            directory.type = tarfile.DIRTYPE
            directory.mode = 0o755
            tar.addfile(directory)
        tar.add(folder, arcname=arcname, filter=clean)
    return buffer.getvalue()


def prune(client: docker.DockerClient, current: str, progress: Progress = print) -> int:
    """Remove the bases other than ``current`` and the bot images not built on it (those
    in use by a container stay); returns how many tags went."""
    removed = 0
    stale: list[str] = []
    for image in client.images.list(filters={"label": LABEL}):
        labels = image.labels or {}
        if labels.get(LABEL) == "base":
            stale += [t for t in image.tags if t.startswith(f"{BASE_REPOSITORY}:") and t != current]
        elif labels.get(LABEL) == "bot" and labels.get(f"{LABEL}.base") != current:
            stale += [t for t in image.tags if t.startswith("sixarena-bot-")]
    for tag in stale:
        try:
            client.images.remove(tag)
            removed += 1
        except docker.errors.APIError:
            pass  # in use by a container, or already gone
    with contextlib.suppress(docker.errors.APIError):
        client.images.prune(filters={"dangling": True, "label": LABEL})
    if removed:
        progress(f"removed {removed} outdated image{'s' if removed != 1 else ''} (old bases, bots built on them)")
    return removed


# --- bot images -------------------------------------------------------------------------


def bot_tag(bot: Bot, digest: str) -> str:
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.name.lower())
    version = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.version)
    return f"sixarena-bot-{name}:{version}-{digest[:12]}"


@contextlib.contextmanager
def _folder_tar(folder: Path) -> Iterator[tuple[IO[bytes], str]]:
    """The checked entries of ``folder`` (``arena.folder.scan``) as a tar at ``/bot``, in
    a temporary file, with the content hash of what it holds: files streamed, links as
    links, owned by root and readable by all."""
    entries = scan(folder)
    with tempfile.TemporaryFile(prefix="arena-bot-", suffix=".tar") as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:

            def info(name: str, mode: int, mtime_ns: int) -> tarfile.TarInfo:
                item = tarfile.TarInfo(name)
                item.uid = item.gid = 0
                item.uname = item.gname = "root"
                item.mode = (mode & 0o777) | 0o444 | (0o111 if stat.S_ISDIR(mode) or mode & 0o100 else 0)
                item.mtime = mtime_ns // 10**9
                return item

            top = BOT_PATH.strip("/")
            root = os.stat(folder)
            item = info(top, root.st_mode, root.st_mtime_ns)
            item.type = tarfile.DIRTYPE
            tar.addfile(item)

            def add_file(entry: Entry, reader: Any) -> None:
                item = info(f"{top}/{entry.path}", entry.mode, entry.mtime_ns)
                item.size = entry.size
                tar.addfile(item, reader)

            for entry in entries:
                if entry.kind == "dir":
                    item = info(f"{top}/{entry.path}", entry.mode, entry.mtime_ns)
                    item.type = tarfile.DIRTYPE
                    tar.addfile(item)
                elif entry.kind == "link":
                    item = info(f"{top}/{entry.path}", 0o777, entry.mtime_ns)
                    item.type = tarfile.SYMTYPE
                    item.linkname = entry.target
                    tar.addfile(item)
            # Files in a second pass, hashed as they are packed (a tar's order is free).
            digest = each_file(folder, entries, add_file)
        archive.seek(0)
        yield archive, digest


def bot_digest(folder_hash: str, base: str) -> str:
    """What a bot's image is: its folder's content on that base."""
    return hashlib.sha256(f"{folder_hash}\0{base}".encode()).hexdigest()


def bot_image(client: docker.DockerClient, bot: Bot, build_missing: bool = True, progress: Progress = print) -> str:
    """The tag of ``bot``'s image on the current base, built first if missing (and
    ``build_missing``; the base's SDK layer too if it is missing)."""
    base = ensure_base(client, progress) if build_missing else base_tag(client)
    digest = bot_digest(content_hash(bot.path), base)
    tag = bot_tag(bot, digest)
    image = _image(client, tag)
    if image is None:
        if not build_missing:
            raise ImageError(f"{bot.path}: no image {tag}: run `arena bot build {bot.path}`")
        return build_bot(client, bot, progress=progress)
    labels = image.labels or {}
    if labels.get(f"{LABEL}.hash") != digest:
        raise ImageError(
            f"image {tag} was not built by the arena for this folder: remove it (docker rmi {tag}) and build again"
        )
    return tag


def build_bot(client: docker.DockerClient, bot: Bot, force: bool = False, progress: Progress = print) -> str:
    """Copy the folder onto the current base, run the build command with the network
    off under the caps bots play under (``docker.run_build``: memory, processes, CPU,
    time, disk; an unprivileged user, no capabilities), commit. The base's SDK layer is
    built first if it is missing."""
    base = ensure_base(client, progress)
    folder_hash = content_hash(bot.path)
    digest = bot_digest(folder_hash, base)
    tag = bot_tag(bot, digest)
    if not force and _image(client, tag) is not None:
        progress(f"{tag} is already built")
        return tag
    build = bot.manifest.build.strip() or "true"
    progress(f"building {tag}" + (f": {build}" if build != "true" else ""))
    program = shlex.quote(bot.argv[0])
    script = (
        f"{build}\nstatus=$?\n[ $status -eq 0 ] || exit $status\n"
        f"command -v {program} >/dev/null 2>&1 || {{ echo {shlex.quote(MISSING_PROGRAM)} >&2; exit 127; }}"
    )
    from .docker import build_log, create_build_container, remove_build_container, run_build

    container = create_build_container(client, base, script, bot)
    try:
        with _folder_tar(bot.path) as (archive, packed):
            if packed != folder_hash:
                raise ImageError(f"{bot.path}: the folder changed while its image was being built: build again")
            container.put_archive("/", archive)
        status = run_build(container, bot)
        if status.get("StatusCode", 1) != 0:
            log = build_log(container)
            if MISSING_PROGRAM in log:
                raise ImageError(
                    f"{bot.path}: the run command's program {bot.argv[0]!r} was not found in the image"
                    " (check `run` in bot.toml)"
                )
            raise ImageError(
                f"{bot.path}: the build command {build!r} failed (exit {status.get('StatusCode')}):\n" + "\n".join(log)
            )
        container.commit(
            repository=tag.split(":")[0],
            tag=tag.split(":")[1],
            changes=[
                f"LABEL {LABEL}=bot {LABEL}.hash={digest} {LABEL}.content={folder_hash} {LABEL}.base={base}"
                f" {LABEL}.name={bot.name} {LABEL}.version={bot.version}",
                f"WORKDIR {BOT_PATH}",
                "USER 65534:65534",
            ],
        )
    finally:
        remove_build_container(container)
    progress(f"built {tag}")
    return tag
