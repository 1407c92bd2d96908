"""Bot snapshots on disk: ``<db>-bots/NAME-VERSION-HASH12``, beside the database, each an
immutable copy of the folder a bot was added from, which the database names relative to
that folder (the two move, and are backed up, together)."""

from __future__ import annotations

import glob
import os
import secrets
from pathlib import Path

from arena.bots import BotError
from arena.bots.folder import copy_folder, remove_tree, seal_read_only


def snapshots_of(db: str | Path) -> Path:
    """``<db>-bots/`` beside the database ``db``: where its bot snapshots live."""
    absolute = Path(os.path.abspath(db))
    return absolute.with_name(f"{absolute.stem}-bots")


def snapshot_name(name: str, version: str, digest: str) -> str:
    """A snapshot's folder name in ``<db>-bots/``: ``NAME-VERSION-HASH12``."""
    return f"{name}-{version}-{digest[:12]}"


PARTIAL = ".partial-"
"""Between a snapshot's name and its writer's ``PID-TOKEN``: a copy still being made."""


def make_snapshot(source: Path, target: Path, digest: str, given: str | Path) -> None:
    """Copy the bot folder ``source`` to ``target`` and seal it read-only, unless it is
    there already: whole or not at all (copied beside it, then renamed), and refused
    (``BotError`` naming ``given``) when the copy's content hash is not ``digest``.

    Each writer copies into a folder of its own (``NAME.partial-PID-TOKEN``): two
    processes storing the same code at once (an author's upload and the ladder's
    pipeline) never remove each other's copy, and the second to finish keeps the first's.
    What a writer that died left is swept (``sweep_partials``)."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_partials(target)
    partial = target.with_name(f"{target.name}{PARTIAL}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        copied = copy_folder(source, partial)
        if copied != digest:
            raise BotError(f"{given}: the folder changed while it was being stored: add it again")
        seal_read_only(partial)
        try:
            partial.rename(target)
        except OSError:
            if not target.is_dir():
                raise  # else another writer stored the same code first: its copy stands
    finally:
        remove_tree(partial)


def sweep_partials(target: Path) -> list[Path]:
    """Remove the unfinished copies of ``target`` whose writer is no longer running (it
    was killed mid-copy), never one a live process is still writing; the ones removed."""
    swept = []
    for path in target.parent.glob(glob.escape(target.name + PARTIAL) + "*"):
        pid = path.name[len(target.name + PARTIAL) :].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            remove_tree(path)
            swept.append(path)
    return swept


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: running
        return True
    return True


def remove_snapshot(path: str | Path, snapshots: Path) -> None:
    """Remove a stored bot's snapshot, only when it is in ``snapshots`` (never a folder an
    older arena left elsewhere)."""
    snapshot = Path(path)
    if snapshot.parent == snapshots:
        remove_tree(snapshot)
