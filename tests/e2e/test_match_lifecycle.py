"""A match's and a tournament's life: bots started afresh after a crash, a match whose
bots all fail at start-up, game numbers of resumed games, memory over a long match, and
tournaments stopped by a signal or by a failed start."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from arena.bots import Bot, load_bot
from arena.play import replay
from arena.play.match import GameResult, GameSpec, MatchSpec, TimeLimits
from arena.play.referee import MAX_RESTARTS, MatchError, play_match
from arena.play.replay import End, FaultLine, Header
from arena.sandbox.local import LocalSandbox
from arena.store import Store, StoredBot
from arena.tournaments.roundrobin import OnThisMachine, Progress, TournamentConfig, run_tournament

from ..conftest import SAMPLES, MakeBot, bot_pids

ARENA = str(Path(sys.executable).parent / "arena")
RANDOM = SAMPLES / "random"
FAST = (Path(__file__).resolve().parents[2] / "bench/bots/fast/bot.py").read_text()
SITE = "import site; print(site.getsitepackages()[0])"

# A raw bot (no SDK) that says on stderr when it starts and which game it is told of;
# ``%s`` decides what it does with each request (``game`` and ``count`` in scope).
NUMBERED = """
import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
sys.stderr.write("started\\n"); sys.stderr.flush()
game, count = None, 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        send({"type": "hello", "name": "numbered", "version": "1"})
    elif msg["type"] == "new_game":
        game, count = msg["game_no"], 0
        sys.stderr.write(f"new_game {game}\\n"); sys.stderr.flush()
    elif msg["type"] == "request":
        count += 1
        %s
        send({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})
"""


def numbered(body: str = "pass") -> str:
    return NUMBERED % body


class Counting(LocalSandbox):
    """The local sandbox, counting the processes it starts per bot name."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: dict[str, int] = {}

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> Any:
        self.starts[bot.name] = self.starts.get(bot.name, 0) + 1
        return await super().start(bot, nursery, max_line)


async def match(paths: list[Path], games: int, sandbox: Any = None) -> list[GameResult]:
    bots = [load_bot(p) for p in paths]
    specs = [GameSpec(seed, [0, 1] if seed % 2 else [1, 0]) for seed in range(1, games + 1)]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, specs, TimeLimits(2000, 10_000, 10_000))
    return (await play_match(spec, sandbox or LocalSandbox())).games


def seat_of(game: GameResult, bot: int) -> int:
    return game.spec.seats.index(bot)


def faults(game: GameResult, seat: int) -> list[Any]:
    return [line.fault for line in game.replay if isinstance(line, FaultLine) and line.seat == seat]


def stderr_of(game: GameResult, seat: int) -> str:
    end = game.replay[-1]
    assert isinstance(end, End)
    return end.stderr[seat]


# --- crashes: a fresh process for the next game -------------------------------------


async def test_a_crashed_bot_is_started_afresh_for_the_next_game(make_bot: MakeBot) -> None:
    crashy = make_bot("crashy", numbered("if game == 1 and count == 3: sys.exit(5)"))
    sandbox = Counting()
    games = await match([crashy, RANDOM], 3, sandbox)
    first, crashed, after = games
    assert first.statuses[seat_of(first, 0)].status == "ok"
    [fault] = faults(crashed, seat_of(crashed, 0))
    assert fault.kind == "crash" and "exited with code 5" in fault.message, "the crash counts once, where it happened"
    assert crashed.statuses[seat_of(crashed, 0)].status == "disqualified"
    assert faults(after, seat_of(after, 0)) == [] and after.statuses[seat_of(after, 0)].status == "ok"
    fresh = stderr_of(after, seat_of(after, 0))
    assert "started" in fresh and "new_game 2" in fresh, "a new process, told the game's number"
    assert sandbox.starts == {"crashy": 2, "random": 1}
    assert bot_pids(crashy) == []


@pytest.mark.docker
async def test_a_crashed_container_is_replaced_for_the_next_game(docker_sandbox: Any, make_bot: MakeBot) -> None:
    from arena.sandbox.docker import LABEL

    crashy = make_bot("crashydocker", numbered("if game == 0 and count == 2: sys.exit(5)"))
    for path in (crashy, RANDOM):
        await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(path), lambda line: None)
    crashed, after = await match([crashy, RANDOM], 2, docker_sandbox)
    assert [f.kind for f in faults(crashed, seat_of(crashed, 0))] == ["crash"]
    assert after.statuses[seat_of(after, 0)].status == "ok"
    assert "started" in stderr_of(after, seat_of(after, 0)), "a new process"
    mine = {"label": f"{LABEL}.bot=crashydocker"}
    for kept in docker_sandbox.client.api.containers(all=True, filters=mine):  # for the bot's next process
        top = docker_sandbox.client.api.top(kept["Id"])["Processes"]
        assert len(top) == 1 and "init.py" in " ".join(top[0]), "nothing of the crashed process or its successor"
    docker_sandbox.close()
    left = docker_sandbox.client.api.containers(all=True, filters=mine)
    assert left == [], "the crashed process's container and its successor's were both removed"


@pytest.mark.parametrize("when", ["at its first request", "at start-up"])
async def test_a_bot_that_keeps_crashing_is_out_of_the_match_after_the_restarts(make_bot: MakeBot, when: str) -> None:
    body = "sys.exit(7)" if when == "at its first request" else "pass"
    code = numbered(body) if when == "at its first request" else "import sys\nsys.exit(7)\n"
    crashy = make_bot("crashy", code)
    sandbox = Counting()
    games = await match([crashy, RANDOM], MAX_RESTARTS + 3, sandbox)
    assert sandbox.starts == {"crashy": 1 + MAX_RESTARTS, "random": 1}, "restarted a bounded number of times"
    for game in games:
        seat = seat_of(game, 0)
        assert [f.kind for f in faults(game, seat)] == ["crash"], "one crash fault per game"
        assert game.statuses[seat].status == "disqualified" and game.ranks[seat] == 2
        assert game.statuses[1 - seat].status == "ok"
    assert f"{MAX_RESTARTS} restarts" in faults(games[-1], seat_of(games[-1], 0))[0].message
    assert bot_pids(crashy) == []


async def test_a_match_whose_bots_all_fail_at_start_up_stops_with_the_first_fault(make_bot: MakeBot) -> None:
    dead = [
        make_bot(f"dead{i}", "import sys\nsys.stderr.write('warming up\\nboom: no luck\\n')\nsys.exit(3)\n")
        for i in range(2)
    ]
    with pytest.raises(MatchError) as raised:
        await match(dead, 2)
    message = str(raised.value)
    assert "\n" not in message, "one line"
    assert "dead0" in message and "exited" in message and "boom: no luck" in message
    assert f"arena bot check {load_bot(dead[0]).path}" in message, "names the fix"
    assert all(bot_pids(d) == [] for d in dead)


async def test_a_dying_bot_s_last_words_reach_its_fault(make_bot: MakeBot) -> None:
    """A bot that says much on stderr and dies: its fault quotes its last line, however
    far behind the reading of its stderr is when its exit is seen."""
    code = "import sys\nsys.stderr.write('noise ' * 40000 + '\\nboom: last words\\n')\nsys.exit(3)\n"
    loud = [make_bot(f"loud{i}", code) for i in range(2)]
    with pytest.raises(MatchError) as raised:
        await match(loud, 2)
    assert "exited with code 3" in str(raised.value) and "boom: last words" in str(raised.value)


HANG_S = 600
"""Only turns a hang into a failure: no test here claims a speed."""

HOLDS_STDERR = (
    "import subprocess, sys\n"
    "subprocess.Popen(['sleep', 'SECONDS'], stdout=subprocess.DEVNULL)  # keeps stderr open\n"
    "sys.stderr.write('gone, my child stays\\n')\n"
    "sys.exit(3)\n"
)


@pytest.mark.parametrize("where", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_a_bot_whose_child_holds_its_stderr_open_delays_nothing(
    where: str, make_bot: MakeBot, request: pytest.FixtureRequest
) -> None:
    """Attack: a bot exits while a child of its own keeps its stderr open for a day.
    Waiting for the end of stderr (for the last words) is bounded: the match ends, with
    the bot's fault, and nothing it started is left (``HANG_S`` only turns a match held
    up until the child lets go into a failure)."""
    sandbox = request.getfixturevalue("docker_sandbox") if where == "docker" else LocalSandbox()
    seconds = str(86400 + uuid.uuid4().int % 10000)  # a child no other test's matches
    holders = [make_bot(f"holder{i}", HOLDS_STDERR.replace("SECONDS", seconds)) for i in range(2)]
    for path in holders:
        await trio.to_thread.run_sync(sandbox.prepare, load_bot(path), lambda line: None)
    with trio.fail_after(HANG_S), pytest.raises(MatchError) as raised:
        await match(holders, 2, sandbox)
    assert "holder0" in str(raised.value) and "gone, my child stays" in str(raised.value), "its last words"
    assert all(bot_pids(h) == [] for h in holders)
    assert subprocess.run(["pgrep", "-fx", f"sleep {seconds}"], capture_output=True).returncode != 0, (
        "the child is gone"
    )


# --- tournaments through the CLI ------------------------------------------------------


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300, env=env)


def status(db: Path, name: str) -> str | None:
    with Store(db) as store:
        tournament = store.get_tournament(name)
        return None if tournament is None else tournament.status


def stored(db: Path) -> int:
    try:  # a bare reader: never waits on the arena's writes
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.05) as conn:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_tournament_whose_bots_all_fail_at_start_up_stops_then_resumes(tmp_path: Path, make_bot: MakeBot) -> None:
    """The bots need a module the machine lacks: one line, nothing stored; once the
    module is installed (as an organiser would), --resume plays every game."""
    module = f"arena_test_missing_{uuid.uuid4().hex[:8]}"
    code = f"import {module}\n{FAST}"
    bots = [str(make_bot(name, code)) for name in ("needy1", "needy2")]
    db = tmp_path / "t.db"
    args = ["--db", str(db), "--name", "t", "--sandbox", "local"]
    failed = arena("tournament", "run", *bots, "--deals", "2", "--seed", "3", "--set", "end_score=20", *args)
    assert failed.returncode != 0
    assert "Traceback" not in failed.stdout + failed.stderr
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, failed.stderr
    assert f"No module named '{module}'" in errors[0] and "arena bot check" in errors[0]
    assert "resume with" in failed.stderr
    assert status(db, "t") == "interrupted"
    listed = arena("games", "--db", str(db))
    assert listed.returncode == 0 and "no games stored" in listed.stderr
    assert stored(db) == 0

    site = subprocess.run(  # where the machine's Python 3, which Python bots run on, finds modules
        [shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3", "-c", SITE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    installed = Path(site) / f"{module}.py"
    installed.parent.mkdir(parents=True, exist_ok=True)
    installed.write_text("")
    installed.chmod(0o644)
    try:
        resumed = arena("tournament", "run", "--resume", *args)
    finally:
        installed.unlink()
    assert resumed.returncode == 0, resumed.stderr
    assert "4 games played" in resumed.stdout
    assert status(db, "t") == "finished"


SLEEPY = FAST.replace("return legal[0]", "__import__('time').sleep(0.05)\n        return legal[0]")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_a_tournament_as_interrupted_and_resumable(
    tmp_path: Path, make_bot: MakeBot, sig: signal.Signals
) -> None:
    bots = [make_bot(name, SLEEPY) for name in ("sleepy1", "sleepy2")]
    db = tmp_path / "t.db"
    proc = subprocess.Popen(
        [ARENA, "tournament", "run", *map(str, bots), "--deals", "50", "--db", str(db), "--name", "t"]
        + ["--sandbox", "local", "--set", "end_score=20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while stored(db) < 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert stored(db) >= 1, "a game was stored"
        proc.send_signal(sig)  # the arena alone, as a service manager or `kill` would
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode not in (0, -sig), err
    assert "Traceback" not in err
    assert "resume with:" in err and "--resume --name t" in err
    assert status(db, "t") == "interrupted"
    assert 1 <= stored(db) < 100
    assert all(bot_pids(b) == [] for b in bots), "every bot was stopped"


def test_a_tournament_whose_start_fails_is_not_left_running(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    result = arena(
        "tournament",
        "run",
        str(RANDOM),
        str(SAMPLES / "lowest"),
        "--db",
        str(db),
        "--name",
        "t",
        "--sandbox",
        "docker",
        env=env,
    )
    assert result.returncode != 0
    assert "no Docker engine answers" in result.stderr and "Traceback" not in result.stderr
    assert status(db, "t") in (None, "interrupted")


def test_resumed_games_carry_their_number_in_the_match(tmp_path: Path, make_bot: MakeBot) -> None:
    """Games 2 and 3 of a match, played by a resumed run: their replay headers and the
    bots' new_game say 2 and 3, as the games table does."""
    bots = [str(make_bot("counted", numbered())), str(RANDOM)]
    db = tmp_path / "t.db"
    common = ["--db", str(db), "--name", "t", "--sandbox", "local"]
    first = arena("tournament", "run", *bots, "--deals", "2", "--seed", "5", "--set", "end_score=20", *common)
    assert first.returncode == 0, first.stderr
    with sqlite3.connect(db) as conn:  # as if killed after its second game
        conn.execute("DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE game_no >= 2)")
        conn.execute("DELETE FROM games WHERE game_no >= 2")
    resumed = arena("tournament", "run", "--resume", *common)
    assert resumed.returncode == 0, resumed.stderr
    assert "2 games played" in resumed.stdout
    with Store(db) as store:
        rows = store.db.execute("SELECT id, game_no FROM games ORDER BY game_no").fetchall()
        assert [n for _, n in rows] == [0, 1, 2, 3]
        for game_id, game_no in rows:
            lines = replay.loads(store.replay(game_id))
            header, end = lines[0], lines[-1]
            assert isinstance(header, Header) and isinstance(end, End)
            assert header.game_no == game_no
            seat = [s.name for s in header.seats].index("counted")
            assert f"new_game {game_no}\n" in end.stderr[seat]


# --- memory: a match keeps no finished game -------------------------------------------


def test_a_tournament_match_keeps_no_finished_game(tmp_path: Path, make_bot: MakeBot) -> None:
    """Counts, not bytes: however many games a match has played, at most the one being
    handed over is alive (it used to keep every game and its replay to the end)."""
    paths = [make_bot(f"fast{i}", FAST) for i in range(4)]
    alive: list[int] = []

    class Counting(Progress):
        def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
            if result.game_no % 8 == 7:
                alive.append(sum(isinstance(o, GameResult) for o in gc.get_objects()))

    with Store(tmp_path / "m.db") as store:
        stored_bots = [store.add_bot(p) for p in paths]
        config = TournamentConfig([b.ref for b in stored_bots], 4, 12, TimeLimits(2000, 10_000), fair_time=False)
        tournament = store.create_tournament(
            "m", "nimmt", "standard", {"end_score": 20}, 1, msgspec.to_builtins(config)
        )
        played = trio.run(run_tournament, store, tournament, stored_bots, OnThisMachine(LocalSandbox(), 1), Counting())
        assert played == 48 and store.count_games(tournament.id) == 48
    assert len(alive) == 6
    assert max(alive) <= 2, alive
