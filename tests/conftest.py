"""Shared fixtures: throwaway bot folders that a sandboxed bot (user nobody) can read."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"

MakeBot = Callable[..., Path]


@pytest.fixture
def make_bot() -> Iterator[MakeBot]:
    """``make_bot(name, code)`` writes a Python bot folder and returns its path.

    The folder lives in a world-readable temporary directory: pytest's own tmp_path is
    private to root, and local bots run as ``nobody``.
    """
    base = Path(tempfile.mkdtemp(prefix="arena-test-bots-"))
    os.chmod(base, 0o755)

    def make(
        name: str, code: str = "", run: str = "python3 bot.py", games: str = '["nimmt"]', manifest: str | None = None
    ) -> Path:
        folder = base / name
        folder.mkdir()
        (folder / "bot.py").write_text(textwrap.dedent(code))
        if manifest is None:
            manifest = f'name = "{name}"\nversion = "0.1"\nlanguage = "python"\nrun = "{run}"\ngames = {games}\n'
        (folder / "bot.toml").write_text(manifest)
        for path in (folder, *folder.iterdir()):
            os.chmod(path, 0o755)
        return folder

    yield make
    shutil.rmtree(base, ignore_errors=True)


def bot_pids(folder: Path) -> list[int]:
    """Running processes whose working directory is ``folder``: a bot and its children,
    seen from outside whatever sandbox they are in (bubblewrap hides the host's files)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (
                os.readlink(entry / "cwd") == str(folder)
                and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            ):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


DOCKER_REQUIRED = os.environ.get("ARENA_REQUIRE_DOCKER") == "1"
"""Set by CI: there, a missing engine or base image fails the Docker tests, never skips."""
_docker_skipped: list[str] = []


@pytest.fixture(scope="session")
def docker_sandbox() -> object:
    """A Docker sandbox on the real engine, or a skip saying plainly why there is none."""
    from arena.sandbox import images
    from arena.sandbox.docker import DockerSandbox

    try:
        client = images.connect()
        images.ensure_base(client, progress=lambda line: None)  # the SDK layer is made if it is outdated
    except images.ImageError as exc:
        if DOCKER_REQUIRED:
            pytest.fail(f"Docker tests required but: {exc}")
        _docker_skipped.append(str(exc))
        pytest.skip(f"Docker tests skipped: {exc}")
    return DockerSandbox(client=client)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _docker_skipped:
        terminalreporter.write_line(
            f"NOTE: the Docker tests were skipped: {_docker_skipped[0]}", yellow=True, bold=True
        )
