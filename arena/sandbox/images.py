"""Docker images built offline: the base from Debian's packages, a bot's on top of it.

No image registry is reachable (here, nor at many sites), so the base root file system is
made by ``debootstrap --variant=minbase`` with the runtimes bots need (Python 3 with the
SDK and msgspec, Node.js, a C compiler), then loaded with ``docker import``. A bot's
image is the base with the bot's folder copied to ``/bot`` and its build command run
inside with the network off, committed under a tag that holds a hash of the folder.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors

from ..bots import Bot, content_hash

BASE_VERSION = 1
BASE_REPOSITORY = "sixarena-base"
BASE_IMAGE = f"{BASE_REPOSITORY}:{BASE_VERSION}"
SUITE = "bookworm"
MIRROR = os.environ.get("ARENA_DEBIAN_MIRROR", "http://deb.debian.org/debian")
PACKAGES = ["python3", "nodejs", "gcc", "libc6-dev", "make", "perl-base"]
LABEL = "sixarena"
"""Every image and container of the arena carries this label."""
BOT_PATH = "/bot"
MISSING_PROGRAM = "arena: the run command's program is not in the image"

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


def base_exists(client: docker.DockerClient) -> bool:
    try:
        client.images.get(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        return False
    return True


def build_base(client: docker.DockerClient, force: bool = False, progress: Progress = print) -> str:
    """Make the base image unless it is there (idempotent); ``force`` rebuilds it."""
    if base_exists(client) and not force:
        progress(f"{BASE_IMAGE} is already built (--force rebuilds it)")
        return BASE_IMAGE
    if os.geteuid() != 0:
        raise ImageError("building the base image runs debootstrap, which needs root")
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
        progress("adding the Python bot SDK (protocol, msgspec)")
        _add_sdk(rootfs, progress)
        _trim(rootfs)
        progress("loading the root file system into Docker (docker import)")
        archive = Path(work) / "rootfs.tar"
        _run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(archive), "."], progress, "tar")
        client.api.import_image_from_file(
            str(archive),
            repository=BASE_REPOSITORY,
            tag=str(BASE_VERSION),
            changes=[
                f"LABEL {LABEL}=base {LABEL}.base={BASE_VERSION}",
                "ENV LANG=C.UTF-8 HOME=/tmp",
                'CMD ["/bin/sh"]',
            ],
        )
    progress(f"built {BASE_IMAGE}")
    return BASE_IMAGE


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


def _add_sdk(rootfs: Path, progress: Progress) -> None:
    """msgspec from PyPI (the wheel for the image's Python) and our ``protocol`` package."""
    site = rootfs / "usr/local/lib/python3.11/dist-packages"
    site.mkdir(parents=True, exist_ok=True)
    import msgspec

    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(site),
            f"msgspec=={msgspec.__version__}",
        ],
        progress,
        "pip install msgspec",
    )
    import protocol

    shutil.copytree(Path(protocol.__file__).parent, site / "protocol", ignore=shutil.ignore_patterns("__pycache__"))


def _trim(rootfs: Path) -> None:
    """Drop what bots never need: apt caches, docs, man pages."""
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"):
        shutil.rmtree(rootfs / sub, ignore_errors=True)


# --- bot images -------------------------------------------------------------------------


def bot_tag(bot: Bot, digest: str) -> str:
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.name.lower())
    version = "".join(c if c.isalnum() or c in "-_." else "-" for c in bot.version)
    return f"sixarena-bot-{name}:{version}-{digest[:12]}"


def _folder_tar(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def clean(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            name = Path(info.name)
            if any(part.startswith(".") or part == "__pycache__" for part in name.parts[1:]):
                return None
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode |= 0o444 | (0o111 if info.isdir() or info.mode & 0o100 else 0)
            return info

        tar.add(folder, arcname=BOT_PATH.strip("/"), filter=clean)
    return buffer.getvalue()


def bot_image(client: docker.DockerClient, bot: Bot, build_missing: bool = True, progress: Progress = print) -> str:
    """The tag of ``bot``'s image, built first if missing (and ``build_missing``)."""
    digest = content_hash(bot.path)
    tag = bot_tag(bot, digest)
    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        if not build_missing:
            raise ImageError(f"{bot.path}: no image {tag}: run `arena bot build {bot.path}`") from None
        return build_bot(client, bot, progress=progress)
    labels = image.labels or {}
    if labels.get(f"{LABEL}.hash") != digest:
        raise ImageError(
            f"image {tag} was not built by the arena for this folder: remove it (docker rmi {tag}) and build again"
        )
    return tag


def build_bot(client: docker.DockerClient, bot: Bot, force: bool = False, progress: Progress = print) -> str:
    """Copy the folder onto the base, run the build command with the network off, commit."""
    if not base_exists(client):
        raise ImageError(f"the base image {BASE_IMAGE} is missing: run `arena image build`")
    digest = content_hash(bot.path)
    tag = bot_tag(bot, digest)
    if not force:
        try:
            client.images.get(tag)
            progress(f"{tag} is already built")
            return tag
        except docker.errors.ImageNotFound:
            pass
    build = bot.manifest.build.strip() or "true"
    progress(f"building {tag}" + (f": {build}" if build != "true" else ""))
    program = shlex.quote(bot.argv[0])
    script = (
        f"{build}\nstatus=$?\n[ $status -eq 0 ] || exit $status\n"
        f"command -v {program} >/dev/null 2>&1 || {{ echo {shlex.quote(MISSING_PROGRAM)} >&2; exit 127; }}"
    )
    container = client.containers.create(
        BASE_IMAGE,
        command=["/bin/sh", "-c", script],
        working_dir=BOT_PATH,
        network_disabled=True,
        network_mode="none",
        labels={LABEL: "build"},
        environment={"HOME": "/tmp"},
    )
    try:
        container.put_archive("/", _folder_tar(bot.path))
        container.start()
        status: dict[str, Any] = container.wait(timeout=600)
        if status.get("StatusCode", 1) != 0:
            log = container.logs().decode("utf-8", "replace").strip().splitlines()[-15:]
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
                f"LABEL {LABEL}=bot {LABEL}.hash={digest} {LABEL}.name={bot.name} {LABEL}.version={bot.version}",
                f"WORKDIR {BOT_PATH}",
                "USER 65534:65534",
            ],
        )
    finally:
        container.remove(force=True)
    progress(f"built {tag}")
    return tag
