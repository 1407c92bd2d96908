"""``arena bot try`` (issue 29, item 4): a new version against a league's bots, real
processes in bubblewrap, on a copy of the league: where it would rank, its faults, its
time per move, and the league's file byte for byte as it was."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    """A folder every sandbox's user may read, with a league of the three sample bots."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-try-"))
    os.chmod(folder, 0o755)
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    made = arena(folder, "tournament", "run", *bots, "--deals", "2", "--db", "league.db", "--sandbox", "local")
    assert made.returncode == 0, made.stdout + made.stderr
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def arena(cwd: Path, *args: str, tmp: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", **({"TMPDIR": str(tmp)} if tmp else {})}
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


@pytest.fixture
def tmp(place: Path) -> Path:
    """The trial's temporary folder (``TMPDIR``), one per test, where the sandbox's user
    may read (pytest's own is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="tmp-", dir=place))
    os.chmod(folder, 0o755)
    return folder


def scratch(tmp: Path) -> list[Path]:
    """The trials' copies left in ``tmp``."""
    return list(tmp.glob("arena-try-*"))


def league_state(place: Path) -> tuple[str, list[str]]:
    """The league's file, hashed, and everything beside it."""
    digest = hashlib.sha256((place / "league.db").read_bytes()).hexdigest()
    around = sorted(str(p.relative_to(place)) for p in place.rglob("*") if "league" in str(p.relative_to(place)))
    return digest, around


def a_bot(place: Path, code: str | None = None) -> Path:
    """A new bot folder (a fresh name each time): the kit's Python starter, or ``code``."""
    name = f"try-{uuid.uuid4().hex[:8]}"
    made = arena(place, "bot", "new", name)
    assert made.returncode == 0, made.stderr
    if code is not None:
        (place / name / "bot.py").write_text(code)
    return place / name


def test_a_trial_ranks_the_bot_among_the_league_and_writes_nothing_into_it(place: Path, tmp: Path) -> None:
    before = league_state(place)
    new = a_bot(place)
    tried = arena(place, "bot", "try", new.name, "--db", "league.db", "--top", "2", "--deals", "2", tmp=tmp)
    out = tried.stdout
    assert tried.returncode == 0, out + tried.stderr
    opponents = re.search(r"against (.*) · tables of 2", out)
    assert opponents is not None, out
    first, second = opponents.group(1).split(", ")  # the board's best two: the bound, then one of the others
    assert first == "heuristic:1.0.0" and second in ("random:1.0.0", "lowest:1.0.0"), out
    mine = f"{new.name}:0.1.0"
    assert "done: 4 deal groups, 8 games" in out
    rank = re.search(rf"{mine} would rank #(\d) of 4 · (Elo \d+( \[\d+, \d+\])?|a bound) · 8 games · faults: none", out)
    assert rank is not None, out
    board = out[out.index("Where ") :]
    assert mine in board and "heuristic:1.0.0" in board and "lowest:1.0.0" in board and "random:1.0.0" in board
    times = re.search(r"time per move \((\d+) moves, limit 1000 ms\): median [\d.]+ ms.* timeouts 0", out)
    assert times is not None and int(times.group(1)) >= 8 * 10, out
    assert league_state(place) == before, "the trial wrote into the league"
    listed = arena(place, "bot", "list", "--db", "league.db")
    assert new.name not in listed.stdout and "heuristic" in listed.stdout
    assert scratch(tmp) == [], "the trial's copy was left behind"


def test_a_trial_until_the_sequential_test_decides_and_kept_to_replay(place: Path, tmp: Path) -> None:
    strong = place / f"strong-{uuid.uuid4().hex[:8]}"
    shutil.copytree(SAMPLES / "heuristic", strong)
    manifest = strong / "bot.toml"
    manifest.write_text(re.sub(r'name = "heuristic"', f'name = "{strong.name}"', manifest.read_text()))
    kept = place / f"{strong.name}.db"
    before = league_state(place)
    tried = arena(
        place, "bot", "try", strong.name, "--db", "league.db", "--vs", "random", "--sprt", "elo0=0,elo1=100",
        "--max-games", "200", "--keep", str(kept), tmp=tmp,
    )  # fmt: skip
    assert tried.returncode == 0, tried.stdout + tried.stderr
    assert "H1 accepted" in tried.stdout, tried.stdout
    assert f"{strong.name}:1.0.0 would rank #" in tried.stdout
    assert league_state(place) == before
    copied = sorted(p.name.rsplit("-", 2)[0] for p in (place / f"{kept.stem}-bots").iterdir())
    assert copied == sorted(["random", strong.name]), copied  # the opponents' snapshots only, and its own
    games = arena(place, "games", "--db", str(kept))
    assert games.returncode == 0 and strong.name in games.stdout, games.stdout + games.stderr
    assert scratch(tmp) == []


def test_a_trial_shows_the_new_bots_faults(place: Path, tmp: Path) -> None:
    crashing = a_bot(place, "import sys\nsys.stdin.readline()\nsys.exit(3)\n")  # never answers hello
    tried = arena(place, "bot", "try", crashing.name, "--db", "league.db", "--vs", "random", "--deals", "1",
                  "--startup-time", "2", tmp=tmp)  # fmt: skip
    assert tried.returncode == 0, tried.stdout + tried.stderr
    faults = re.search(rf"{crashing.name}:0.1.0 would rank #\d of 4 .* faults: (.*)", tried.stdout)
    assert faults is not None and "crashes" in faults.group(1), tried.stdout


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_new_bot_cannot_reach_the_league(place: Path, tmp: Path, sandbox: str) -> None:
    """Attack: the bot on trial knows where the league is and reads it, lists its
    snapshots, writes into it; any success makes it answer illegally (a fault). (Run
    with ``--sandbox unsafe-local`` it reaches them all: the test fails.)"""
    league = place / "league.db"
    snapshots = place / "league-bots"
    assert league.read_bytes() and list(snapshots.iterdir())  # there, and readable from here
    spy = a_bot(
        place,
        f"""import json, os, sys
reached = []
for attempt in (lambda: open({str(league)!r}, "rb").read(16) == b"SQLite format 3\\x00",
                lambda: any(n.startswith("heuristic-") for n in os.listdir({str(snapshots)!r})),
                lambda: open({str(league)!r}, "r+b").write(b"x") == 1,
                lambda: "league.db" in os.listdir({str(place)!r})):
    try:
        if attempt():
            reached.append(1)
    except OSError:
        pass  # not there: the bot's /tmp is its own (a path under it is a folder of its own)
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({{"type": "hello", "name": "spy", "version": "0.1.0"}}), flush=True)
    elif m["type"] == "request":
        answer = 999 if reached else m["legal"][0]
        print(json.dumps({{"type": "answer", "id": m["id"], "answer": answer}}), flush=True)
    elif m["type"] == "bye":
        break
""",
    )
    before = league_state(place)
    tried = arena(place, "bot", "try", spy.name, "--db", "league.db", "--vs", "lowest", "--deals", "1",
                  "--sandbox", sandbox, tmp=tmp)  # fmt: skip
    assert tried.returncode == 0, tried.stdout + tried.stderr
    assert re.search(rf"{spy.name}:0.1.0 would rank #\d of 4 .* faults: none", tried.stdout), tried.stdout
    assert league_state(place) == before


def test_what_a_trial_refuses_in_one_line(place: Path, tmp: Path) -> None:
    new = a_bot(place)
    stored = shutil.copytree(SAMPLES / "random", place / f"random-again-{uuid.uuid4().hex[:6]}")
    before = league_state(place)
    cases = [
        (["--db", "nowhere.db"], "nowhere.db: no such database"),
        (["--db", "league.db", "--vs", "nobody"], "no bot 'nobody'"),
        (["--db", "league.db", "--board", "nimmt/nonesuch"], "--board nimmt/nonesuch"),
        (["--db", "league.db", "--board", "nimmt/standard", "--game", "nimmt"], "--board sets the game"),
        (["--db", "league.db", "--keep", "league.db"], "--keep league.db: already there"),
        (["--db", "league.db", "--sprt", "elo0=0", "--deals", "2"], "--deals fixes the length"),
    ]
    for args, said in cases:
        refused = arena(place, "bot", "try", new.name, *args, tmp=tmp)
        assert refused.returncode != 0, (args, refused.stdout)
        assert said in refused.stderr and "Traceback" not in refused.stderr, (args, refused.stderr)
        assert len(refused.stderr.strip().splitlines()) == 1, (args, refused.stderr)
    again = arena(place, "bot", "try", stored.name, "--db", "league.db", tmp=tmp)
    assert again.returncode != 0 and "random:1.0.0 is in the league already" in again.stderr, again.stderr
    assert league_state(place) == before
    assert scratch(tmp) == []


def test_a_trial_on_another_board_plays_its_rules(place: Path, tmp: Path) -> None:
    new = a_bot(place)
    kept = place / f"{new.name}.db"
    tried = arena(place, "bot", "try", new.name, "--db", "league.db", "--board", "nimmt/tactical", "--vs", "random",
                  "--deals", "1", "--keep", str(kept), tmp=tmp)  # fmt: skip
    assert tried.returncode == 0, tried.stdout + tried.stderr
    assert "6 nimmt! tactical (nimmt/tactical)" in tried.stdout
    from arena.store import Store

    with Store(kept, read_only=True) as store:
        assert [(g, v) for g, v in store.played_boards(None)] == [("nimmt", "standard"), ("nimmt", "tactical")]
