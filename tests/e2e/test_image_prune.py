"""`arena image build` removes nothing and adds a layer per runtime; `arena image prune`
lists what it removes, asks, and keeps what a stored bot or a container uses.

On the real engine, shared with other arenas: every image here is of a prefix of its
own (``ARENA_IMAGE_PREFIX``), on a tag of the real root file system (no rebuild, no
change to the current base), and only those images are removed afterwards."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import images
from arena.store import Store

from ..conftest import MakeBot

ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.docker


@pytest.fixture
def prefix(docker_sandbox: object) -> Iterator[str]:
    """A fresh prefix whose root file system is the real one, tagged; afterwards every
    image of the prefix is removed, children first."""
    client = images.connect()
    name = f"sixarena-t{uuid.uuid4().hex[:10]}"
    client.images.get(images.ROOTFS_IMAGE).tag(f"{name}-rootfs", str(images.ROOTFS_VERSION))
    try:
        yield name
    finally:
        for container in client.containers.list(all=True, filters={"label": f"{images.LABEL}.test={name}"}):
            container.remove(force=True)
        ours = [(t, image) for image in client.images.list() for t in image.tags if t.startswith(f"{name}-")]

        def depth(item: tuple[str, object]) -> tuple[int, int]:
            tag, image = item
            labels = getattr(image, "labels", None) or {}
            order = 0 if "-bot-" in tag else 1 if "-base:" in tag else 3 if tag.endswith(":1") else 2
            return order, -len(labels.get(f"{images.LABEL}.packages", "").split(","))

        for tag, _ in sorted(ours, key=depth):
            try:
                client.images.remove(tag)
            except Exception:  # noqa: BLE001 (already gone with another tag of it)
                pass
        client.close()


def arena(prefix: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ARENA, *args],
        capture_output=True,
        text=True,
        timeout=900,
        input=stdin,
        env={**os.environ, "ARENA_IMAGE_PREFIX": prefix, "COLUMNS": "200"},
    )


def tags(prefix: str) -> set[str]:
    client = images.connect()
    try:
        return {t for image in client.images.list() for t in image.tags if t.startswith(f"{prefix}-")}
    finally:
        client.close()


def throwaway(prefix: str, what: str, labels: dict[str, str]) -> str:
    """A bot image of the prefix (a label-only layer on its root file system), with a fresh label."""
    client = images.connect()
    tag = f"{prefix}-bot-{what}:1.0-{uuid.uuid4().hex[:12]}"
    lines = " ".join(f'"{k}"="{v}"' for k, v in {images.LABEL: "bot", f"{images.LABEL}.fresh": tag, **labels}.items())
    dockerfile = f"FROM {prefix}-rootfs:{images.ROOTFS_VERSION}\nLABEL {lines}\n"
    try:
        client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True, network_mode="none")
    finally:
        client.close()
    return tag


def test_runtimes_are_layers_of_their_own_and_nothing_is_removed_unasked(
    prefix: str, make_bot: MakeBot, tmp_path: Path
) -> None:
    first = arena(prefix, "image", "build", "--with", "lua5.4")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "adding lua5.4" in first.stdout
    base_lua = next(t for t in tags(prefix) if t.startswith(f"{prefix}-base:"))
    old_base = f"{prefix}-base:sdk-000000000000"
    outdated = throwaway(prefix, "old", {f"{images.LABEL}.base": old_base, f"{images.LABEL}.content": "0" * 64})
    folder = make_bot("storedbot")
    db = tmp_path / "arena.db"
    with Store(db) as store:
        stored_hash = store.add_bot(folder).hash
    stored = throwaway(prefix, "stored", {f"{images.LABEL}.base": old_base, f"{images.LABEL}.content": stored_hash})
    in_use = throwaway(prefix, "inuse", {f"{images.LABEL}.base": old_base, f"{images.LABEL}.content": "1" * 64})
    client = images.connect()
    try:
        client.containers.create(in_use, ["/bin/true"], network_mode="none", labels={f"{images.LABEL}.test": prefix})
    finally:
        client.close()
    before = tags(prefix)

    both = arena(prefix, "image", "build", "--with", "+jq")
    assert both.returncode == 0, both.stdout + both.stderr
    assert "reusing the layers of lua5.4" in both.stdout and "adding jq" in both.stdout
    assert "adding lua5.4" not in both.stdout, "only the runtime added is installed"
    assert "removed" not in both.stdout and before <= tags(prefix), "no image removed by a build"
    assert "no longer current" in both.stdout and "arena image prune" in both.stdout
    client = images.connect()
    try:
        current = client.images.get(f"{prefix}-rootfs:{images.CURRENT_TAG}")
        assert current.labels[f"{images.LABEL}.packages"] == "jq,lua5.4"
        lua_layer = next(t for t in tags(prefix) if "-rt-lua5.4-" in t)
        assert client.images.get(lua_layer).id in [layer["Id"] for layer in current.history()], "stacked on lua"
    finally:
        client.close()

    back = arena(prefix, "image", "build", "--with", "lua5.4")
    assert back.returncode == 0 and "adding" not in back.stdout, back.stdout + back.stderr
    assert f"{base_lua} is already built" in back.stdout, "switching back reuses every layer"
    assert before <= tags(prefix)

    asked = arena(prefix, "image", "prune", "--db", str(db))
    assert asked.returncode != 0 and "not at a terminal, add --yes" in asked.stderr, asked.stdout + asked.stderr
    assert before <= tags(prefix), "nothing removed without a yes"
    listed = [line.split()[1] for line in asked.stdout.splitlines() if line.startswith("outdated: ")]
    assert outdated in listed and all(t.startswith(f"{prefix}-") for t in listed), listed
    assert not {stored, in_use, base_lua} & set(listed), "a stored bot's, a container's, the current base: kept"

    said_no = arena(prefix, "image", "prune", "--db", str(db), stdin="n\n")
    assert said_no.returncode != 0 and before <= tags(prefix)

    pruned = arena(prefix, "image", "prune", "--db", str(db), "--yes")
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    left = tags(prefix)
    assert outdated not in left and set(listed).isdisjoint(left), "what it listed went"
    assert {stored, in_use, base_lua, lua_layer, f"{prefix}-rootfs:{images.CURRENT_TAG}"} <= left
    assert f"{prefix}-rootfs:{images.ROOTFS_VERSION}" in left, "the root file system is never pruned"
    again = arena(prefix, "image", "prune", "--db", str(db))
    assert again.returncode == 0 and "nothing to remove" in again.stdout, again.stdout + again.stderr
