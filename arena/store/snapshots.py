"""Bot snapshots on disk: ``<db>-bots/NAME-VERSION-HASH12``, beside the database, each an
immutable copy of the folder a bot was added from, which the database names relative to
that folder (the two move, and are backed up, together)."""

from __future__ import annotations

import os
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


def make_snapshot(source: Path, target: Path, digest: str, given: str | Path) -> None:
    """Copy the bot folder ``source`` to ``target`` and seal it read-only, unless it is
    there already: whole or not at all (copied beside it, then renamed), and refused
    (``BotError`` naming ``given``) when the copy's content hash is not ``digest``."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    remove_tree(partial)
    try:
        copied = copy_folder(source, partial)
        if copied != digest:
            raise BotError(f"{given}: the folder changed while it was being stored: add it again")
        seal_read_only(partial)
        partial.rename(target)
    except BaseException:
        remove_tree(partial)
        raise


def remove_snapshot(path: str | Path, snapshots: Path) -> None:
    """Remove a stored bot's snapshot, only when it is in ``snapshots`` (never a folder an
    older arena left elsewhere)."""
    snapshot = Path(path)
    if snapshot.parent == snapshots:
        remove_tree(snapshot)
