"""Two processes storing the same bot at once (an author's upload and the ladder's
pipeline, on one database) each copy into a folder of their own: neither removes the
other's copy, and what a writer killed mid-copy left is swept."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arena.bots import content_hash
from arena.store import Store, snapshots
from arena.store.snapshots import PARTIAL, make_snapshot, snapshot_name, snapshots_of

from ..conftest import SAMPLES


def test_a_second_writer_of_the_same_snapshot_leaves_the_first_ones_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, folder = tmp_path / "arena.db", tmp_path / "random"
    shutil.copytree(SAMPLES / "random", folder)
    real = snapshots.copy_folder
    seen: list[list[str]] = []

    def copy_then_another_writer(source: Path, dest: Path, *args: Any) -> str:
        digest = real(source, dest, *args)
        if not seen:  # the first writer's copy is made, not yet renamed: the second stores the same code
            seen.append(sorted(os.listdir(dest.parent)))
            with Store(db) as other:
                seen.append([str(other.add_bot(folder).id)])
            assert dest.is_dir(), "the second writer removed the first one's copy"
        return digest

    monkeypatch.setattr(snapshots, "copy_folder", copy_then_another_writer)
    with Store(db) as store:
        first = store.add_bot(folder)
    assert seen[1] == [str(first.id)], "one bot, stored once"
    assert [p.name for p in snapshots_of(db).iterdir()] == [Path(first.path).name], "no copy left beside it"
    assert content_hash(Path(first.path)) == first.hash


def test_only_a_dead_writers_unfinished_copy_is_swept(tmp_path: Path) -> None:
    folder = tmp_path / "random"
    shutil.copytree(SAMPLES / "random", folder)
    digest = content_hash(folder)
    target = tmp_path / "arena-bots" / snapshot_name("random", "1", digest)
    ended = subprocess.Popen(["true"])
    ended.wait()  # its pid is no process's any more
    dead = target.with_name(f"{target.name}{PARTIAL}{ended.pid}-0a1b2c3d")
    live = target.with_name(f"{target.name}{PARTIAL}{os.getpid()}-4e5f6a7b")
    for path in (dead, live):
        (path / "sub").mkdir(parents=True)
    make_snapshot(folder, target, digest, folder)
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([target.name, live.name])
    assert content_hash(target) == digest
