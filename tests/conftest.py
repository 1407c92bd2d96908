"""Shared fixtures: throwaway bot folders that a sandboxed bot (user nobody) can read."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"

MakeBot = Callable[..., Path]


@pytest.fixture
def place() -> Iterator[Path]:
    """A new folder every sandbox's user may read (pytest's own folders are root's alone),
    removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-"))
    os.chmod(folder, 0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


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


def sample_module(folder: str, name: str) -> ModuleType:
    """A sample bot's ``bot.py`` imported in this process (to test its search as code)."""
    spec = importlib.util.spec_from_file_location(name, SAMPLES / folder / "bot.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def fresh_c_bot(base: Path, name: str = "") -> Path:
    """The docs' minimal C bot (``sample_bots/greedy-c``) in ``base`` under a new name and
    with new content (a random comment), so no build or image of an earlier run serves
    it: its ``make`` must run, from wherever the arena keeps the folder."""
    token = uuid.uuid4().hex[:12]
    name = name or f"c-{token}"
    folder = base / name
    shutil.copytree(SAMPLES / "greedy-c", folder)
    manifest = folder / "bot.toml"
    manifest.write_text(manifest.read_text().replace('name = "greedy-c"', f'name = "{name}"'))
    with open(folder / "bot.c", "a") as code:
        code.write(f"/* {token} */\n")
    for path in (base, folder, *folder.rglob("*")):
        os.chmod(path, 0o755)
    return folder


def faults_of(db: Path) -> dict[str, int]:
    """Each bot's faults (timeouts, crashes, malformed and illegal answers) in the games
    of ``db``, from `arena leaderboard --format json`; every bot played."""
    import json

    board = subprocess.run(
        [str(Path(sys.executable).parent / "arena"), "leaderboard", "--db", str(db), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (rows,) = json.loads(board.stdout).values()
    assert all(row["games"] > 0 for row in rows)
    return {row["bot"]: sum(row[k] for k in ("timeouts", "crashes", "malformed", "illegal")) for row in rows}


def remove_images_of(name: str) -> None:
    """Remove the Docker images the arena built for the bot ``name`` (made by a test)."""
    from arena.sandbox import images

    client = images.connect()
    for image in client.images.list(filters={"label": f"{images.LABEL}.name={name}"}):
        client.images.remove(image.id, force=True)


def bot_pids(folder: Path) -> list[int]:
    """Running processes of the bot in ``folder``: those whose working directory is the
    folder or, as local bots run, a prepared copy of it (``/tmp/sixarena-bots/NAME-HASH``),
    seen from outside whatever sandbox they are in (bubblewrap hides the host's files)."""
    from arena.bots import load_bot
    from arena.sandbox.local import copies_root

    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in load_bot(folder).name)
    copies = f"{copies_root()}/{name}-"
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            if (cwd == str(folder) or cwd.startswith(copies)) and (entry / "stat").read_text().rsplit(")", 1)[
                1
            ].split()[0] != "Z":
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def one_clean_line(result: subprocess.CompletedProcess[str], *needles: str, code: int | None = None) -> str:
    """A user error: exit ``code`` (any non-zero by default), no traceback, and one
    ``error:`` line saying every one of ``needles``; returns that line."""
    output = result.stdout + result.stderr
    assert result.returncode == code if code is not None else result.returncode != 0, output
    assert "Traceback" not in output, output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output
    return errors[0]


def pytest_configure(config: pytest.Config) -> None:
    """The commands under test print into pipes: a shell's ``COLUMNS``, or the 80 that
    pytest-xdist hands its workers, would make them lay text out for a terminal (a test
    that wants a width sets it). Each test worker has a temporary directory of its own
    (made like /tmp), so the prepared copies, run folders and locks of one never meet
    another's; a pytest that a test runs keeps its worker's."""
    global _worker_tmp
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and not os.environ.get("ARENA_TEST_TMP"):
        _worker_tmp = tempfile.mkdtemp(prefix=f"arena-tests-{worker}-")
        os.chmod(_worker_tmp, 0o1777)
        os.environ["TMPDIR"] = os.environ["ARENA_TEST_TMP"] = _worker_tmp
        tempfile.tempdir = None


def pytest_unconfigure(config: pytest.Config) -> None:
    if _worker_tmp:
        shutil.rmtree(_worker_tmp, ignore_errors=True)


_worker_tmp = ""


def uses_docker(item: pytest.Item) -> bool:
    return item.get_closest_marker("docker") is not None or "docker_sandbox" in getattr(item, "fixturenames", ())


LEFT_OUT = {"docker": "ARENA_NO_DOCKER", "browser": "ARENA_NO_BROWSER"}
"""A marker's tests run unless the user sets this variable to 1 (as for setup.sh): then
they are deselected, and the summary says so. Never skipped: a missing engine or
browser fails them, naming the fix."""
_left_out: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if uses_docker(item):  # one engine: its builds, images and containers on one worker
            item.add_marker(pytest.mark.xdist_group("docker"))
    off = {marker for marker, variable in LEFT_OUT.items() if os.environ.get(variable) == "1"}
    if not off:
        return
    dropped = [item for item in items if any(item.get_closest_marker(m) for m in off)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
        _left_out.extend(f"{len(dropped)} {m} tests left out ({LEFT_OUT[m]}=1)" for m in sorted(off))


@pytest.fixture(scope="session")
def docker_sandbox() -> Iterator[object]:
    """A Docker sandbox on the real engine, or a failure saying plainly why there is none."""
    from arena.sandbox import images
    from arena.sandbox.docker import DockerSandbox

    try:
        client = images.connect()
        images.ensure_base(client, progress=lambda line: None)  # the SDK layer is made if it is outdated
    except images.ImageError as exc:
        pytest.fail(
            f"Docker tests need an engine and the base image (./setup.sh; ARENA_NO_DOCKER=1 leaves them out): {exc}"
        )
    sandbox = DockerSandbox(client=client)
    try:
        yield sandbox
    finally:
        sandbox.close()
        client.close()


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Selenium (setup.sh installs both). No browser
    is downloaded: the driver is the one at /usr/bin/chromedriver."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not installed: ./setup.sh installs chromium and chromium-driver"
            " (ARENA_NO_BROWSER=1 leaves the browser tests out)"
        )
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
def serving(
    db: Path,
    preexec_fn: Callable[[], None] | None = None,
    extra: tuple[str, ...] = (),
    output: list[str] | None = None,
    pids: list[int] | None = None,
) -> Iterator[str]:
    """``arena serve`` on a free loopback port for ``db`` (run through ``preexec_fn``,
    e.g. as another user; with ``extra`` options); yields its base URL once it answers.
    ``output`` receives everything it wrote, once it stopped; ``pids`` its process id."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    arena = str(Path(sys.executable).parent / "arena")
    proc = subprocess.Popen(
        [arena, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=preexec_fn,
    )
    url = f"http://127.0.0.1:{port}"
    if pids is not None:
        pids.append(proc.pid)
    try:
        deadline = time.monotonic() + 120  # only a guard against a server that never comes up
        while True:
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = proc.stdout.read() if proc.stdout else ""
                    raise RuntimeError(f"arena serve did not come up: {said}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            if output is not None:
                output.append(proc.stdout.read())
            proc.stdout.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _left_out:
        terminalreporter.write_line(f"NOTE: {line}", yellow=True, bold=True)


_PROBE = """
import json, sys
from arena.cli.main import main
sys.argv = ["arena", *sys.argv[1:]]
try:
    main()
except SystemExit as exit:
    code = exit.code
print("LOADED " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded(*args: str) -> set[str]:
    """The modules ``arena ARGS`` loaded, run as the real command in a fresh interpreter
    (exit 0 asserted)."""
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    last = run.stdout.rstrip().rpartition("\n")[2]
    assert last.startswith("LOADED "), run.stdout + run.stderr
    report = json.loads(last.removeprefix("LOADED "))
    assert report["code"] in (0, None), run.stdout + run.stderr
    return set(report["modules"])
