"""A bot is a folder with a manifest, ``bot.toml``: who it is and how to run it."""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from pathlib import Path

import msgspec

MANIFEST = "bot.toml"


class BotError(ValueError):
    """A bot folder that cannot be used, with a message that says how to fix it."""


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
    if not manifest_path.is_file():
        raise BotError(f"{folder}: no {MANIFEST} in this folder (every bot needs a manifest)")
    try:
        raw = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
        manifest = msgspec.convert(raw, Manifest)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BotError(f"{manifest_path}: not valid TOML: {exc}") from None
    except msgspec.ValidationError as exc:
        raise BotError(f"{manifest_path}: {_field_message(exc)}") from None
    for field in ("name", "version", "run"):
        if not getattr(manifest, field).strip():
            raise BotError(f"{manifest_path}: `{field}` is empty")
    try:
        argv = shlex.split(manifest.run)
    except ValueError as exc:
        raise BotError(f"{manifest_path}: cannot split `run` ({exc})") from None
    if not argv:
        raise BotError(f"{manifest_path}: `run` is empty")
    return Bot(path.resolve(), manifest)


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


def content_hash(folder: Path) -> str:
    """SHA-256 of a bot folder's files (paths, modes and bytes), hidden files excluded:
    what makes two snapshots, or an image and a folder, the same code."""
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
