"""A bot is a folder with a manifest, ``bot.toml``: who it is and how to run it."""

from __future__ import annotations

import os
import re
import shlex
import stat
import tomllib
from pathlib import Path

import msgspec

from arena.bots.errors import BotError as BotError
from arena.bots.folder import FolderLimits, scan
from arena.bots.folder import content_hash as folder_hash

MANIFEST = "bot.toml"
MAX_MANIFEST_BYTES = 64 * 1024
NAME_PATTERN = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
NAME_RULE = (
    "1 to 40 lower-case letters and digits, in words joined by single '-', '_' or '.' (such as my-bot or my_bot.v2)"
)
VERSION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,39}")
VERSION_RULE = "1 to 40 letters, digits, '.', '_', '+' or '-', the first a letter or digit (such as 1.0.2)"
PACKAGE_PATTERN = re.compile(r"[a-z0-9][a-z0-9+.-]+")
PACKAGE_RULE = "lower-case letters, digits, '+', '-' and '.', such as ruby or lua5.4"


class Manifest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    version: str
    language: str
    run: str
    """The command that starts the bot, run in its folder (split like a shell would)."""
    games: list[str]
    build: str = ""
    """A command run once in the folder before the bot can run (compiling, say)."""
    description: str = ""
    packages: list[str] = []
    """Debian packages the bot needs in the base image (Docker): a missing one is named
    with the command that adds it (`arena image build --with PACKAGE`)."""


class Bot(msgspec.Struct, frozen=True):
    path: Path
    manifest: Manifest

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.manifest.run)


def load_bot(folder: str | Path) -> Bot:
    """Read and check ``folder/bot.toml``; ``BotError`` names what is wrong."""
    path = Path(folder)
    if not path.is_dir():
        raise BotError(f"{folder}: no such bot folder")
    manifest_path = path / MANIFEST
    text = _read_manifest(folder, manifest_path)
    try:
        raw = tomllib.loads(text.decode("utf-8"))
        manifest = msgspec.convert(raw, Manifest)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BotError(f"{manifest_path}: not valid TOML: {exc}") from None
    except msgspec.ValidationError as exc:
        raise BotError(f"{manifest_path}: {_field_message(exc)}") from None
    for field in ("name", "version", "run"):
        if not getattr(manifest, field).strip():
            raise BotError(f"{manifest_path}: `{field}` is empty")
    problem = naming_problem(manifest)
    if problem:
        raise BotError(f"{manifest_path}: {problem}")
    try:
        argv = shlex.split(manifest.run)
    except ValueError as exc:
        raise BotError(f"{manifest_path}: cannot split `run` ({exc})") from None
    if not argv:
        raise BotError(f"{manifest_path}: `run` is empty")
    scan(path)  # links, special files, caps: refused now, before anything runs or is copied
    return Bot(path.resolve(), manifest)


def valid_name(name: str) -> bool:
    """A bot name by the rule (``NAME_RULE``): also a valid part of an image name."""
    return len(name) <= 40 and NAME_PATTERN.fullmatch(name) is not None


def valid_version(version: str) -> bool:
    return VERSION_PATTERN.fullmatch(version) is not None


def naming_problem(manifest: Manifest) -> str | None:
    """What is wrong with a manifest's name, version or packages, by the documented rules."""
    if not valid_name(manifest.name):
        return f"`name` {manifest.name!r} breaks the rule for bot names: {NAME_RULE}"
    if not valid_version(manifest.version):
        return f"`version` {manifest.version!r} breaks the rule for versions: {VERSION_RULE}"
    for package in manifest.packages:
        if PACKAGE_PATTERN.fullmatch(package) is None:
            return f"`packages`: {package!r} is not a Debian package name ({PACKAGE_RULE})"
    return None


def _read_manifest(folder: str | Path, manifest_path: Path) -> bytes:
    """The manifest's bytes: a plain file (not a link) of at most ``MAX_MANIFEST_BYTES``."""
    try:
        fd = os.open(manifest_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BotError(f"{folder}: no {MANIFEST} in this folder (every bot needs a manifest)") from None
    except OSError as exc:
        if manifest_path.is_symlink():
            raise BotError(f"{manifest_path}: a link; the manifest must be a plain file") from None
        raise BotError(f"{manifest_path}: cannot read it ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BotError(f"{folder}: {MANIFEST} is not a plain file (every bot needs a manifest)")
        if info.st_size > MAX_MANIFEST_BYTES:
            raise BotError(
                f"{manifest_path}: {info.st_size} bytes, more than a manifest may hold ({MAX_MANIFEST_BYTES})"
            )
        data = os.read(fd, MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise BotError(f"{manifest_path}: more than a manifest may hold ({MAX_MANIFEST_BYTES} bytes)")
        return data
    finally:
        os.close(fd)


def _field_message(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    if text.startswith("Object missing required field"):
        field = text.split("`")[1]
        return f"missing field `{field}` (a manifest needs name, version, language, run, games)"
    if text.startswith("Object contains unknown field"):
        field = text.split("`")[1]
        known = ", ".join(Manifest.__struct_fields__)
        return f"unknown field `{field}` (the fields are: {known})"
    return text


def content_hash(folder: Path, limits: FolderLimits | None = None) -> str:
    """SHA-256 of a bot folder's files (paths, modes and bytes) and links (their targets),
    hidden files excluded, read in chunks: what makes two snapshots, or an image and a
    folder, the same code. ``arena.bots.folder.FolderError`` (a ``BotError``) if the folder is
    refused: a link out of it, a special file, over the caps."""
    return folder_hash(Path(folder), limits)
