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

Runtimes beyond those (Ruby, Go, Lua...) are the organiser's to add from Debian's
packages: ``arena image build --with ruby`` puts each in a layer of its own over the
root file system (``sixarena-rootfs:<version>-rt-<package>-<hash>``, installed by apt in
a container that has the host's network, the only kind that does), stacked on the
longest stack already built that the set asks for, so adding a runtime costs that
runtime, and switching back to a set built before costs nothing. The SDK layer sits on
the stack: the packages are part of the base's identity, so every bot image is made
again on a base with other runtimes. The root file system itself stays as it is.

Nothing is removed unless asked: ``arena image prune`` (``sandbox.outdated``) lists the arena's
images no longer current, keeping those a stored bot or a container uses.

``ARENA_IMAGE_PREFIX`` (default ``sixarena``) names the repositories, so two arenas
(or a test) can keep their images apart on one engine.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import io
import os
import re
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

from arena.bots import PACKAGE_PATTERN, PACKAGE_RULE, Bot, content_hash, valid_name
from arena.bots.folder import Entry, each_file, scan
from arena.sandbox.builds import ImageError as ImageError
from arena.sandbox.builds import build_log, create_build_container, remove_build_container, run_build
from arena.sandbox.containers import BOT_PATH as BOT_PATH
from arena.sandbox.containers import LABEL as LABEL

ROOTFS_VERSION = 1
"""Bump when ``PACKAGES`` or the way the root file system is made changes."""
PREFIX = os.environ.get("ARENA_IMAGE_PREFIX", "") or "sixarena"
"""What the arena's repositories are named after (``ARENA_IMAGE_PREFIX``)."""
if re.fullmatch(r"[a-z0-9]+(?:[._-][a-z0-9]+)*", PREFIX) is None or len(PREFIX) > 60:
    PREFIX = "sixarena"
ROOTFS_REPOSITORY = f"{PREFIX}-rootfs"
ROOTFS_IMAGE = f"{ROOTFS_REPOSITORY}:{ROOTFS_VERSION}"
LEGACY_BASES = {1: f"{PREFIX}-base:1"}
"""Bases built before the SDK had its own layer: the same packages, so reusable as the
root file system of that version (their old SDK copy is removed first)."""
BASE_REPOSITORY = f"{PREFIX}-base"
BOT_REPOSITORY = f"{PREFIX}-bot-"
"""Bot images are ``<prefix>-bot-NAME:VERSION-HASH``."""
SDK_LAYOUT = 1
"""Bump when the way the SDK layer is made changes (it is part of the base's hash)."""
SITE_PACKAGES = "/usr/local/lib/python3.11/dist-packages"
IMAGE_PYTHON = "3.11"
SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
"""debootstrap's own default, used when neither ``ARENA_DEBIAN_MIRROR`` nor an apt source
of the host names a Debian mirror."""
APT_SOURCES = Path("/etc/apt")
PACKAGES = ["python3", "nodejs", "gcc", "libc6-dev", "make", "perl-base"]
CURRENT_TAG = f"{ROOTFS_VERSION}-current"
"""``sixarena-rootfs:<version>-current`` names the layer of extra runtimes the base is
made on (``arena image build --with``); without it, the base is the bare root file system."""
EXTRAS_SECONDS = 1200
"""Installing the extra runtimes taking longer is stopped."""
MISSING_PROGRAM = "arena: the run command's program is not in the image"
MISSING_PACKAGE = "arena: the base image lacks the packages"
IMAGE_CHANGES = ["ENV LANG=C.UTF-8 HOME=/tmp", 'CMD ["/bin/sh"]']

Progress = Callable[[str], None]


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


# --- where Debian's packages come from ---------------------------------------------------


def debian_mirror() -> str:
    """The Debian mirror to take packages from: ``ARENA_DEBIAN_MIRROR``, else the host's
    apt source for Debian's main archive, else debootstrap's default."""
    return os.environ.get("ARENA_DEBIAN_MIRROR") or host_debian_mirror() or DEFAULT_MIRROR


def host_debian_mirror(apt: Path | None = None) -> str | None:
    """The URI of the host's apt source for Debian's main archive (``sources.list``, then
    ``sources.list.d/*.list`` and ``*.sources``), or None: an entry of the suite bots run
    on (or of a path ending in ``/debian``), with the ``main`` component, over http(s);
    security and update suites, other distributions and disabled entries are passed over."""
    apt = apt or APT_SOURCES
    entries: list[tuple[list[str], list[str], list[str]]] = []
    files = [apt / "sources.list"] + sorted((apt / "sources.list.d").glob("*.list"))
    for path in files:
        entries += _one_line_entries(_read(path))
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        entries += _deb822_entries(_read(path))
    fallback = None
    for uris, suites, components in entries:
        if "main" not in components:
            continue
        for uri in uris:
            if not re.match(r"https?://", uri):
                continue
            uri = uri.rstrip("/")
            if SUITE in suites:
                return uri
            if fallback is None and uri.endswith("/debian") and not any("-" in suite for suite in suites):
                fallback = uri
    return fallback


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _one_line_entries(text: str) -> list[tuple[list[str], list[str], list[str]]]:
    """``deb [options] URI SUITE COMPONENT...`` lines."""
    found = []
    for line in text.splitlines():
        words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 4 and words[0] == "deb":
            found.append(([words[1]], [words[2]], words[3:]))
    return found


def _deb822_entries(text: str) -> list[tuple[list[str], list[str], list[str]]]:
    """Stanzas of a ``.sources`` file (deb822): Types, URIs, Suites, Components, Enabled."""
    found = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0].isspace() and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" in fields.get("types", "").split() and fields.get("enabled", "yes").lower() != "no":
            found.append(
                (fields.get("uris", "").split(), fields.get("suites", "").split(), fields.get("components", "").split())
            )
    return found


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
    mirror = debian_mirror()
    with tempfile.TemporaryDirectory(prefix="arena-rootfs-", dir="/var/tmp") as work:
        rootfs = Path(work) / "rootfs"
        progress(f"debootstrap {SUITE} ({', '.join(PACKAGES)}) from {mirror}")
        _run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(rootfs), mirror],
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
    """The id of what the SDK layer sits on: the layer of extra runtimes, else the root
    file system."""
    image = _root_image(client)
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
    if _root_image(client) is not None:
        tag = base_tag(client)
        if _image(client, tag) is not None:
            return tag
    with _lock():
        if _image(client, ROOTFS_IMAGE) is None:
            if _legacy_base(client) is None:
                raise ImageError(f"the base image ({ROOTFS_IMAGE}) is missing: run `arena image build`")
            _adopt_legacy_base(client, progress)
        return _build_sdk_layer(client, False, progress)


def build_base(
    client: docker.DockerClient, force: bool = False, progress: Progress = print, packages: list[str] | None = None
) -> str:
    """What `arena image build` does: the root file system if missing, a layer per extra
    runtime (``packages``; None keeps those of the current base, [] drops them), the SDK
    layer if missing (``force`` rebuilds all of them). It removes nothing: the images it
    made outdated are `arena image prune`'s (``outdated.stale_note`` counts them)."""
    with _lock():
        build_rootfs(client, force, progress)
        if packages is None:
            packages = image_packages(client)
            if packages:
                progress(f"keeping the extra packages {', '.join(packages)} (--with changes them)")
        _set_extras(client, packages, force, progress)
        return _build_sdk_layer(client, force, progress)


# --- extra runtimes: Debian packages in a layer of their own ----------------------------


def parse_packages(text: str) -> list[str]:
    """``--with`` text: Debian package names separated by commas or spaces (sorted, each
    once; empty for none), or ``ImageError`` naming the one that is not a package name."""
    names = sorted({name for name in re.split(r"[,\s]+", text.strip()) if name})
    for name in names:
        if PACKAGE_PATTERN.fullmatch(name) is None:
            raise ImageError(f"--with {name!r}: not a Debian package name ({PACKAGE_RULE})")
    return names


def _current_extras(client: docker.DockerClient) -> Any | None:
    """The layer of extra runtimes the base is made on, or None (the bare root file system)."""
    image = _image(client, f"{ROOTFS_REPOSITORY}:{CURRENT_TAG}")
    if image is None or (image.labels or {}).get(LABEL) != "runtimes":
        return None
    return image


def _root_image(client: docker.DockerClient) -> Any | None:
    return _current_extras(client) or _image(client, ROOTFS_IMAGE)


def image_packages(client: docker.DockerClient) -> list[str]:
    """The extra Debian packages of the current base (``arena image build --with``)."""
    image = _current_extras(client)
    listed = (image.labels or {}).get(f"{LABEL}.packages", "") if image is not None else ""
    return [name for name in listed.split(",") if name]


def runtime_tag(parent_id: str, package: str) -> str:
    """The tag of the layer adding ``package`` over the image ``parent_id`` (the root
    file system, or a stack of runtimes on it)."""
    digest = hashlib.sha256("\0".join([f"runtime {ROOTFS_VERSION}", parent_id, package]).encode()).hexdigest()
    shown = re.sub(r"[^A-Za-z0-9_.-]", "_", package)[:40]
    return f"{ROOTFS_REPOSITORY}:{ROOTFS_VERSION}-rt-{shown}-{digest[:12]}"


def _runtime_stacks(client: docker.DockerClient, rootfs_id: str) -> list[tuple[list[str], Any]]:
    """Every stack of runtimes built on the root file system ``rootfs_id``, with the
    packages it holds (an older arena's one layer of several counts as a stack)."""
    found = []
    for image in client.images.list(filters={"label": f"{LABEL}=runtimes"}):
        if not any(t.startswith(f"{ROOTFS_REPOSITORY}:") for t in image.tags):
            continue
        packages = [n for n in (image.labels or {}).get(f"{LABEL}.packages", "").split(",") if n]
        with contextlib.suppress(docker.errors.APIError):
            if packages and rootfs_id in [layer["Id"] for layer in image.history()]:
                found.append((packages, image))
    return found


def _set_extras(client: docker.DockerClient, packages: list[str], force: bool, progress: Progress) -> None:
    """Make the stack with ``packages`` the one the base is made on, or, for none, the
    bare root file system. It starts from the largest stack built that holds only
    packages asked for (none with ``force``) and adds a layer per package missing, each
    reused when built before on the same layers."""
    pointer = f"{ROOTFS_REPOSITORY}:{CURRENT_TAG}"
    if not packages:
        if _image(client, pointer) is not None:
            client.images.remove(pointer)  # the tag only: the layers stay for `arena image prune`
            progress("the base image has no extra packages now")
        return
    rootfs_id = _rootfs_id_bare(client)
    image, have = client.images.get(rootfs_id), list[str]()
    if not force:
        for held, stack in _runtime_stacks(client, rootfs_id):
            if set(held) <= set(packages) and len(held) > len(have):
                image, have = stack, sorted(held)
    if have:
        progress(f"reusing the layers of {', '.join(have)} (built before)")
    for package in sorted(set(packages) - set(have)):
        tag = runtime_tag(str(image.id), package)
        have = sorted([*have, package])
        if force or _image(client, tag) is None:
            _build_extras(client, str(image.id), package, have, tag, progress)
        else:
            progress(f"{tag} ({package}) is already built (--force rebuilds it)")
        image = client.images.get(tag)
    image.tag(ROOTFS_REPOSITORY, CURRENT_TAG)


def _rootfs_id_bare(client: docker.DockerClient) -> str:
    image = _image(client, ROOTFS_IMAGE)
    if image is None:
        raise ImageError(f"the base image ({ROOTFS_IMAGE}) is missing: run `arena image build`")
    return str(image.id)


def _build_extras(
    client: docker.DockerClient, parent: str, package: str, holds: list[str], tag: str, progress: Progress
) -> None:
    """Install ``package`` with apt over the image ``parent`` and commit the result as a
    layer of its own, labelled with every package of its stack (``holds``). Bots'
    containers have no network, and the engine may have no bridge, so this one container
    (Debian's apt, not a bot) shares the host's."""
    mirror = debian_mirror()
    started = time.monotonic()
    progress(f"adding {package} from {mirror} as {tag} (apt-get, with the host's network)")
    script = (
        "set -e\n"
        f"echo {shlex.quote(f'deb {mirror} {SUITE} main')} >/etc/apt/sources.list\n"
        "apt-get update -q\n"
        # The trimmed root has no man pages; a JDK's postinst links into them all the same.
        "mkdir -p /usr/share/man/man1\n"
        f"DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -- {shlex.quote(package)}\n"
        "apt-get clean\n"
        "rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man /usr/share/info\n"
    )
    # No owner labels: a committed container passes its labels on to the image, and so
    # to every container made from it.
    container = client.containers.create(
        parent, ["/bin/sh", "-c", script], network_mode="host", labels={LABEL: "build"}
    )
    try:
        container.start()
        try:
            status: dict[str, Any] = container.wait(timeout=EXTRAS_SECONDS)
        except Exception:  # the client's read timed out
            raise ImageError(f"installing {package} took longer than {EXTRAS_SECONDS} s: stopped") from None
        if status.get("StatusCode", 1) != 0:
            log = container.logs().decode("utf-8", "replace").strip().splitlines()
            errors = [line for line in log if line.startswith(("E:", "Err:", "W:"))] or log[-5:]
            raise ImageError(
                f"apt-get could not install {package} from {mirror} (exit {status.get('StatusCode')}):"
                f" {' / '.join(errors[-3:])}: check the name (apt-cache policy {package}) and the mirror"
                " (ARENA_DEBIAN_MIRROR)"
            )
        container.commit(
            repository=ROOTFS_REPOSITORY,
            tag=tag.split(":", 1)[1],
            changes=[
                f"LABEL {LABEL}=runtimes {LABEL}.packages={','.join(holds)} {LABEL}.rootfs={ROOTFS_VERSION}",
                *IMAGE_CHANGES,
            ],
        )
    finally:
        container.remove(force=True)
    progress(f"built {tag} ({time.monotonic() - started:.1f} s)")


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
        rootfs_id, ["/bin/true"], network_disabled=True, network_mode="none", labels={LABEL: "build"}
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


# --- bot images -------------------------------------------------------------------------


def bot_tag(bot: Bot, digest: str) -> str:
    """``sixarena-bot-NAME:VERSION-HASH``, always a valid image reference: a name by the
    manifest's rule is a valid repository part as it is (anything else is made one), and
    the version keeps only what a tag may hold, starting with a letter or digit."""
    name = bot.name if valid_name(bot.name) else re.sub(r"[^a-z0-9]+", "-", bot.name.lower()).strip("-")[:40]
    version = re.sub(r"[^A-Za-z0-9_.-]", "-", bot.version)[:40]
    if not re.match(r"[A-Za-z0-9]", version):
        version = f"v{version}"
    return f"{BOT_REPOSITORY}{name or 'bot'}:{version}-{digest[:12]}"


@contextlib.contextmanager
def _folder_tar(folder: Path) -> Iterator[tuple[IO[bytes], str]]:
    """The checked entries of ``folder`` (``arena.bots.folder.scan``) as a tar at ``/bot``, in
    a temporary file, with the content hash of what it holds: files streamed, links as
    links, owned by root and readable by all."""
    entries = scan(folder)
    with tempfile.TemporaryFile(prefix="arena-bot-", suffix=".tar") as archive:
        with tarfile.open(fileobj=archive, mode="w") as tar:

            def info(name: str, mode: int, mtime_ns: int) -> tarfile.TarInfo:
                item = tarfile.TarInfo(name)
                item.uid = item.gid = 0
                item.uname = item.gname = "root"
                # Readable by all, and writable by the build's user, who owns /bot while it
                # builds: a stored snapshot is read-only, and a compiler could not write.
                item.mode = (mode & 0o777) | 0o644 | (0o111 if stat.S_ISDIR(mode) or mode & 0o100 else 0)
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


def _package_check(packages: list[str]) -> str:
    """Shell lines that stop a build at once, naming them, when the base lacks any of
    ``packages`` (the manifest's)."""
    if not packages:
        return ""
    names = " ".join(shlex.quote(name) for name in packages)
    return (
        f"missing=; for p in {names}; do"
        ' [ "$(dpkg-query -W -f=\'${db:Status-Status}\' "$p" 2>/dev/null)" = installed ] || missing="$missing $p";'
        f' done\n[ -z "$missing" ] || {{ echo "{MISSING_PACKAGE}:$missing" >&2; exit 126; }}\n'
    )


def build_bot(client: docker.DockerClient, bot: Bot, force: bool = False, progress: Progress = print) -> str:
    """Copy the folder onto the current base, run the build command with the network
    off under the caps bots play under (``builds.run_build``: memory, processes, CPU,
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
        f"{_package_check(bot.manifest.packages)}{build}\nstatus=$?\n[ $status -eq 0 ] || exit $status\n"
        f"command -v {program} >/dev/null 2>&1 || {{ echo {shlex.quote(MISSING_PROGRAM)} >&2; exit 127; }}"
    )
    container = create_build_container(client, base, script, bot)
    try:
        with _folder_tar(bot.path) as (archive, packed):
            if packed != folder_hash:
                raise ImageError(f"{bot.path}: the folder changed while its image was being built: build again")
            container.put_archive("/", archive)
        status = run_build(container, bot)
        if status.get("StatusCode", 1) != 0:
            log = build_log(container)
            missing = [
                n for line in log if line.startswith(MISSING_PACKAGE) for n in line[len(MISSING_PACKAGE) + 1 :].split()
            ]
            if missing:
                wanted = ",".join(sorted({*image_packages(client), *missing}))
                raise ImageError(
                    f"{bot.path}: the base image has no {', '.join(missing)} (`packages` in bot.toml):"
                    f" run `arena image build --with {wanted}`"
                )
            if MISSING_PROGRAM in log:
                raise ImageError(
                    f"{bot.path}: the run command's program {bot.argv[0]!r} was not found in the image (check `run`"
                    " in bot.toml; a runtime from Debian is added with `arena image build --with PACKAGE` and"
                    ' `packages = ["PACKAGE"]` in bot.toml, a prebuilt binary in the folder needs neither)'
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
