"""Shared fixtures: throwaway bot folders that a sandboxed bot (user nobody) can read."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER_REQUIRED = os.environ.get("ARENA_REQUIRE_BROWSER") == "1"
"""Set by CI: there, a missing Chromium fails the browser tests, never skips."""
_browser_skipped: list[str] = []


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Selenium (setup.sh installs both). No browser
    is downloaded: the driver is the one at /usr/bin/chromedriver."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if missing:
        reason = f"{' and '.join(missing)} not installed (setup.sh installs chromium and chromium-driver)"
        if BROWSER_REQUIRED:
            pytest.fail(f"browser tests required but {reason}")
        _browser_skipped.append(reason)
        pytest.skip(f"browser tests skipped: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def serving(db: Path) -> Iterator[str]:
    """``arena serve`` on a free loopback port for ``db``; yields its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    arena = str(Path(sys.executable).parent / "arena")
    proc = subprocess.Popen(
        [arena, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read() if proc.stdout else ""
                    raise RuntimeError(f"arena serve did not come up: {output}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _docker_skipped:
        terminalreporter.write_line(
            f"NOTE: the Docker tests were skipped: {_docker_skipped[0]}", yellow=True, bold=True
        )
    if _browser_skipped:
        terminalreporter.write_line(
            f"NOTE: the browser tests were skipped: {_browser_skipped[0]}", yellow=True, bold=True
        )
