"""Bots with a build step, in every path that builds one: a tournament (local and
Docker) and a gauntlet, from the read-only snapshot the store keeps. Each bot is the
docs' C bot with content never built before, so no cached build hides a failure (a
snapshot's read-only modes once made every compiler fail: `ld: cannot open output file
bot: Permission denied`), and a build that links the local sandbox's old ready marker
to a file of the machine's, in a tournament. The ladder's pipeline and a cluster worker
are in test_pipeline.py and test_cluster.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import SAMPLES, faults_of, fresh_c_bot, remove_images_of

ARENA = str(Path(sys.executable).parent / "arena")


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-readable folder (local bots run as users of their own)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-builds-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_bot_with_a_build_step_plays_a_tournament(base: Path, sandbox: str, request: pytest.FixtureRequest) -> None:
    if sandbox == "docker":
        request.getfixturevalue("docker_sandbox")
    folder = fresh_c_bot(base)
    db = base / "arena.db"
    try:
        done = arena(
            "tournament", "run", str(folder), str(SAMPLES / "random"), "--deals", "1", "--sandbox", sandbox,
            "--db", str(db), "--seed", "1",
        )  # fmt: skip
    finally:
        if sandbox == "docker":
            remove_images_of(folder.name)
    assert done.returncode == 0, done.stdout + done.stderr
    said = (done.stdout + done.stderr).splitlines()
    assert any(line.startswith("building") and folder.name in line for line in said), "built here, from its snapshot"
    assert "Permission denied" not in done.stdout + done.stderr
    assert faults_of(db) == {f"{folder.name}:1.0.0": 0, "random:1.0.0": 0}


def test_a_bot_with_a_build_step_plays_a_gauntlet(base: Path) -> None:
    folder = fresh_c_bot(base)
    db = base / "arena.db"
    done = arena(
        "gauntlet", str(folder), "--vs", str(SAMPLES / "random"), "--deals", "1", "--seed", "3", "--sandbox", "local",
        "--db", str(db), "--name", "g",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Permission denied" not in done.stdout + done.stderr
    assert faults_of(db) == {f"{folder.name}:1.0.0": 0, "random:1.0.0": 0}


def test_a_build_that_links_the_ready_marker_out_writes_nothing_there_in_a_tournament(base: Path) -> None:
    """The attack of issue 23 as it was played: a bot's build made the local sandbox's
    ready marker a link to a `.pth` file, and the arena (root) wrote the build command
    there when the build ended (the build's user owned the copy, so it could open the
    snapshot's read-only folder to itself). The tournament plays; the file is untouched."""
    victim = base / "victim" / "sixarena-hook.pth"
    victim.parent.mkdir()
    victim.write_text("keep\n")
    folder = fresh_c_bot(base)
    manifest = folder / "bot.toml"
    manifest.write_text(
        manifest.read_text().replace('build = "make"', f'build = "chmod u+w . && make && ln -sf {victim} .ready"')
    )
    db = base / "arena.db"
    done = arena(
        "tournament", "run", str(folder), str(SAMPLES / "random"), "--deals", "1", "--sandbox", "local",
        "--db", str(db), "--seed", "2",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert victim.read_text() == "keep\n" and victim.is_file() and not victim.is_symlink()
    assert faults_of(db) == {f"{folder.name}:1.0.0": 0, "random:1.0.0": 0}
