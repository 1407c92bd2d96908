"""Hostile bots submitted through the web door, on a real ladder: the sandbox holds them
as it holds any bot, and the ladder goes on.

A real `arena serve --submissions`, a real `arena ladder run` in each sandbox
(bubblewrap, Docker) and `arena submit` for every bot. Mallory submits a bot that crashes at
hello (rejected by the pipeline), a spy that plays legally while it looks for the
network, the database, other bots' code and the arena's processes, and a bot that leaves
a process behind after every game. Ada submits two honest bots. The spy reports what it
found on its stderr, which the organiser reads in the stored replays (the public never
sees it: tests/e2e/test_web_ladder.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.play.replay import End, loads
from arena.store import Store
from arena.store.submissions import Submissions

from ..conftest import SAMPLES, serving

ARENA = str(Path(sys.executable).parent / "arena")

PLAY = """
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": NAME, "version": "1.0"}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "answer", "id": m["id"], "answer": m["legal"][0]}), flush=True)
    elif m["type"] == "bye":
        break
"""

SPY = """
import json, os, socket, sys
NAME = "spy"
found = []
for host, port in (("127.0.0.1", PORT), ("1.1.1.1", 53)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        found.append(f"NET-OPEN {host}:{port}")
    except OSError as exc:
        found.append(f"net-refused {host}:{port} {exc.__class__.__name__}")
for path in (DB, DB + "-bots", DB + "-uploads"):
    try:
        found.append(f"READ {path} " + str(len(open(path, "rb").read())))
    except OSError as exc:
        found.append(f"unreadable {path} {exc.__class__.__name__}")
for pid in ("1", "self"):
    try:
        found.append("ENV " + open(f"/proc/{pid}/environ", "rb").read().decode("latin-1"))
    except OSError:
        pass
seen = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        seen.append(open(f"/proc/{pid}/cmdline", "rb").read().decode("latin-1"))
    except OSError:
        pass
for top in ("/tmp", "/var/tmp", os.path.dirname(os.getcwd())):
    try:
        for folder, dirs, files in os.walk(top):
            seen.append(folder + " " + " ".join(dirs + files))
    except OSError:
        pass
print("SPY " + json.dumps(found), file=sys.stderr, flush=True)
print("SEEN " + json.dumps(seen)[:50000], file=sys.stderr, flush=True)
"""

LINGER = """
import json, os, subprocess, sys
NAME = "lingerer"
left = subprocess.Popen(["sleep", "600", MARK], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"LINGER left {left.pid}", file=sys.stderr, flush=True)
"""

CRASH = "import sys\nsys.exit(3)\n"
SECRET = "ladder-s3cr3t-5e1f"


def bot(base: Path, name: str, code: str) -> Path:
    folder = base / name
    folder.mkdir()
    (folder / "bot.py").write_text(textwrap.dedent(code))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1.0"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    for path in (folder, *folder.iterdir()):
        os.chmod(path, 0o755)
    return folder


def honest(base: Path, name: str, sample: str) -> Path:
    folder = base / name
    shutil.copytree(SAMPLES / sample, folder)
    text = (folder / "bot.toml").read_text().replace(f'name = "{sample}"', f'name = "{name}"')
    (folder / "bot.toml").write_text(text)
    for path in (folder, *folder.rglob("*")):
        os.chmod(path, 0o755)
    return folder


@pytest.fixture
def base() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="arena-test-ladder-attacks-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def lingering(mark: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", f"sleep 600 {mark}"], capture_output=True, text=True)
    return found.stdout.split()


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_submissions_are_held_and_the_ladder_goes_on(base: Path, sandbox: str) -> None:
    db = base / "arena.db"
    mark = f"arena-linger-{uuid.uuid4().hex}"
    with Store(db) as store:
        subs = Submissions(store)
        ada, mallory = subs.add_author("ada")[1], subs.add_author("mallory")[1]
    with serving(db, extra=("--submissions", "--submissions-per-hour", "20")) as url:
        port = int(url.rsplit(":", 1)[1])
        spy_code = SPY.replace("PORT", str(port)).replace("DB", repr(str(db))) + PLAY
        folders = {
            "ada": [honest(base, "plain", "random"), honest(base, "steady", "lowest")],
            "mallory": [
                bot(base, "crasher", CRASH),
                bot(base, "spy", spy_code),
                bot(base, "lingerer", LINGER.replace("MARK", repr(mark)) + PLAY),
            ],
        }
        ladder = subprocess.Popen(
            [ARENA, "ladder", "run", "--db", str(db), "--sandbox", sandbox, "--table-size", "3"]
            + ["--move-time", "2", "--seed", "7"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "ARENA_TEST_SECRET": SECRET},
        )
        try:
            for author, token in (("ada", ada), ("mallory", mallory)):
                for folder in folders[author]:
                    env = {**os.environ, "ARENA_TOKEN": token}
                    sent = subprocess.run(
                        [ARENA, "submit", str(folder), "--server", url],
                        capture_output=True,
                        text=True,
                        env=env,
                        timeout=60,
                    )
                    assert sent.returncode == 0, sent.stderr
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                with Store(db, read_only=True) as store:
                    states = {
                        s.name: s.state
                        for s in Submissions(store).in_states(
                            *("received", "building", "checking", "active", "rejected")
                        )
                    }
                    ladder_games = store.find_games(limit=500)
                seated = {seat.bot.split(":")[0] for g in ladder_games for seat in g.seats}
                later = [  # an honest bot at a table with a hostile one
                    g
                    for g in ladder_games
                    if {s.bot.split(":")[0] for s in g.seats} & {"plain", "steady"}
                    and {s.bot.split(":")[0] for s in g.seats} & {"spy", "lingerer"}
                ]
                if (
                    len(states) == 5
                    and "received" not in states.values()
                    and {"spy", "lingerer", "plain", "steady"} <= seated
                    and len(later) >= 6
                ):
                    break
                time.sleep(1)
            assert states["crasher"] == "rejected", states
            assert states["plain"] == states["steady"] == states["spy"] == states["lingerer"] == "active", states
            # (they play by the rules: the battery passes them; what they do besides is the sandbox's to hold)
            assert {"spy", "lingerer", "plain", "steady"} <= seated, "every active bot was seated"
            assert len(later) >= 6, "the honest bots keep playing beside the hostile ones"
            urllib.request.urlopen(url + "/api/health", timeout=10).read()  # the server is up
        finally:
            os.killpg(ladder.pid, signal.SIGINT)
            try:
                output, _ = ladder.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(ladder.pid, signal.SIGKILL)
                output, _ = ladder.communicate()
        assert "Traceback" not in output, output[-3000:]

    with Store(db, read_only=True) as store:
        spy_games = [g for g in store.find_games(limit=500) if any(s.bot.startswith("spy:") for s in g.seats)]
        said = []
        for g in spy_games:
            end = loads(store.replay(g.id), str(g.id))[-1]
            assert isinstance(end, End)
            seat = next(s.seat for s in g.seats if s.bot.startswith("spy:"))
            said.append(end.stderr[seat])
        left = [
            loads(store.replay(g.id), str(g.id))[-1]
            for g in store.find_games(limit=500)
            if any(s.bot.startswith("lingerer:") for s in g.seats)
        ]
    assert any("LINGER left" in text for end in left if isinstance(end, End) for text in end.stderr), "it left one"
    lines = [line for text in said for line in text.splitlines()]
    reports = [line for line in lines if line.startswith("SPY [")]
    seen = " ".join(line for line in lines if line.startswith("SEEN ["))
    assert reports and seen, "the spy ran and reported"
    for report in reports:
        assert "NET-OPEN" not in report and "READ " not in report, report
        assert "ENV " in report and SECRET not in report and "ARENA_" not in report, "the arena's environment"
    for secret in ("plain-", "steady-", "sample_bots", str(db), "arena.db", "arena ladder", "arena serve", SECRET):
        assert secret not in seen, f"the spy saw {secret!r}"
    deadline = time.monotonic() + 30
    while lingering(mark) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert lingering(mark) == [], "no process outlives its game"
