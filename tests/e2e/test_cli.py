"""The ``arena`` command as a user runs it: real processes, real files, bad input."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from arena.cli import common
from arena.cli.options import Plays, choose_game
from arena.games.registry import CatalogError
from arena.play import replay

from ..conftest import ROOT, SAMPLES, MakeBot, bot_pids

ARENA = str(Path(sys.executable).parent / "arena")
RANDOM = str(SAMPLES / "random")
HEURISTIC = str(SAMPLES / "heuristic")


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``arena``; games go to the local sandbox (tests/e2e/test_docker.py covers Docker)."""
    if args and args[0] == "play" and "--sandbox" not in args:
        args = (*args, "--sandbox", "local")
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout)


def assert_clean_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Non-zero exit, the problem named, and no traceback."""
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    for needle in needles:
        assert needle in output, output


def test_play_prints_rounds_and_standings_and_writes_a_replay(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    result = arena("play", HEURISTIC, RANDOM, RANDOM, RANDOM, "--seed", "5", "--replay", str(out))
    assert result.returncode == 0, result.stderr
    assert "round  1" in result.stdout
    assert "Final standings" in result.stdout
    assert "A heuristic" in result.stdout and "D random" in result.stdout
    lines = replay.read(out)
    end = lines[-1]
    assert isinstance(end, replay.End)
    assert list(replay.verify(lines))
    for score in end.scores:
        assert f" {score} " in result.stdout


def test_same_bot_may_sit_ten_times() -> None:
    result = arena("play", *[RANDOM] * 10, "--seed", "2", "--set", "rounds=1")
    assert result.returncode == 0, result.stderr
    assert "J random" in result.stdout


@pytest.mark.parametrize("count", [1, 11])
def test_seat_count_outside_2_to_10(count: int) -> None:
    assert_clean_error(arena("play", *[RANDOM] * count), "2 to 10 players", f"not {count}")


def test_folder_without_manifest(tmp_path: Path) -> None:
    assert_clean_error(arena("play", str(tmp_path), RANDOM), "no bot.toml")


def test_missing_folder() -> None:
    assert_clean_error(arena("play", "/no/such/bot", RANDOM), "/no/such/bot", "no such bot folder")


def test_manifest_missing_a_field(make_bot: MakeBot) -> None:
    bot = make_bot("partial", manifest='name = "partial"\nversion = "1"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n')
    assert_clean_error(arena("play", str(bot), RANDOM), "missing field `language`")


def test_command_that_does_not_exist(make_bot: MakeBot) -> None:
    bot = make_bot("typo", run="pyhton3 bot.py")
    assert_clean_error(arena("play", str(bot), RANDOM), "'pyhton3' was not found")


def test_unknown_flag() -> None:
    result = arena("play", RANDOM, RANDOM, "--sede", "3")
    assert_clean_error(result, "--sede")
    assert result.returncode == 2


def test_unknown_setting() -> None:
    assert_clean_error(arena("play", RANDOM, RANDOM, "--set", "end_scor=5"), "end_scor")


def test_setting_out_of_range() -> None:
    assert_clean_error(arena("play", RANDOM, RANDOM, "--set", "end_score=0"), "end_score must be at least 1")


def test_unreadable_replay(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n")
    assert_clean_error(arena("replay", str(bad)), "bad.jsonl:1")


def test_tampered_replay(tmp_path: Path) -> None:
    out = tmp_path / "game.jsonl"
    assert arena("play", RANDOM, RANDOM, "--seed", "9", "--set", "rounds=1", "--replay", str(out)).returncode == 0
    text = out.read_text()
    lines = text.splitlines()
    first_decision = next(i for i, line in enumerate(lines) if '"type":"decision"' in line)
    # Swap the two seats' answers: both cards exist, but not in those hands.
    import json

    record = json.loads(lines[first_decision])
    record["answers"].reverse()
    lines[first_decision] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    assert_clean_error(arena("replay", str(out)), f"game.jsonl:{first_decision + 1}")


SLOW = """
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "slow", "version": "1"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(60)
"""


def unique(name: str) -> str:
    """A bot name no other test (nor another run on the machine) uses: its processes, found
    by the folder they run in, are this test's alone."""
    return f"{name}{uuid.uuid4().hex[:10]}"


def as_at_a_terminal() -> None:
    """In the child, before ``exec``: SIGINT as a terminal's foreground job has it
    (default disposition, not blocked). Run from a background job of a script, the test
    process itself has SIGINT ignored, and an ignored signal stays ignored across exec:
    Python would then install no Ctrl-C handler in ``arena`` at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def interrupt_mid_game(
    slow: Path, sandbox: str, started: Callable[[], bool], signum: int = signal.SIGINT
) -> tuple[int, str]:
    """Start a game of two slow bots, Ctrl-C it (or ``signum``) while they decide; (exit code, stderr)."""
    proc = subprocess.Popen(
        [ARENA, "play", str(slow), str(slow), "--move-time", "30", "--sandbox", sandbox],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not started():
            time.sleep(0.05)
        assert started(), "both bots started"
        time.sleep(0.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def test_ctrl_c_stops_every_bot(make_bot: MakeBot) -> None:
    """Interrupted mid-game (bots deciding, ignoring SIGTERM): exit 130, nothing left."""
    slow = make_bot(unique("slow"), SLOW)
    code, err = interrupt_mid_game(slow, "local", lambda: len(bot_pids(slow)) >= 2)
    assert code == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert bot_pids(slow) == [], "no bot outlived the interrupted referee"


def test_sigterm_stops_a_game_as_ctrl_c_does(make_bot: MakeBot) -> None:
    """`arena play` stops as a tournament does, on the one path of every command that
    runs bots: SIGTERM too is exit 130 with every bot stopped, not a process killed
    where it stood."""
    slow = make_bot(unique("slow"), SLOW)
    code, err = interrupt_mid_game(slow, "local", lambda: len(bot_pids(slow)) >= 2, signal.SIGTERM)
    assert code == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert bot_pids(slow) == [], "no bot outlived the stopped referee"


def test_the_ctrl_c_test_passes_when_the_suite_was_started_with_sigint_ignored() -> None:
    """As from a background job of a script (`cmd &` without job control): the test sets
    the child's SIGINT itself, so it passes whatever the suite inherited."""
    test = f"{Path(__file__).resolve()}::test_ctrl_c_stops_every_bot"
    script = f'trap "" INT; exec "$0" -m pytest -q -p no:cacheprovider "{test}"'
    run = subprocess.run(["bash", "-c", script, sys.executable], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout


def test_no_docker_engine_names_the_fix() -> None:
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    for args in (["play", RANDOM, RANDOM, "--sandbox", "docker"], ["image", "build"], ["bot", "build", RANDOM]):
        result = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=60, env=env)
        assert_clean_error(result, "no Docker engine answers", "dockerd")
    auto = subprocess.run(
        [ARENA, "play", RANDOM, RANDOM, "--set", "rounds=1"], capture_output=True, text=True, timeout=60, env=env
    )
    assert auto.returncode == 0, auto.stderr
    assert "no Docker engine answers: bots run as local processes" in auto.stderr


def test_replay_shows_each_seats_stderr_and_faults(make_bot: MakeBot, tmp_path: Path) -> None:
    code = """
    import json, sys
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "hello":
            print(json.dumps({"type": "hello", "name": "talker", "version": "1"}), flush=True)
        elif m["type"] == "request":
            print(f"thinking about request {m['id']}", file=sys.stderr, flush=True)
            answer = 0 if m["id"] == 1 else m["legal"][0]
            print(json.dumps({"type": "answer", "id": m["id"], "answer": answer}), flush=True)
    """
    log = tmp_path / "game.jsonl"
    assert arena("play", str(make_bot("talker", code)), RANDOM, "--replay", str(log)).returncode == 0
    result = arena("replay", str(log), "--stderr")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "seat 0: talker 0.1" in out and "seat 1: random" in out
    assert "thinking about request 1" in out and "thinking about request 2" in out
    assert "fault (illegal, round 1, turn 1): illegal play answer 0" in out and '"answer": 0' in out
    assert "(nothing on stderr)" in out  # the random bot's


# --- the game chosen from the bots ------------------------------------------------------------


def chosen(asked: str | None, *bots: tuple[str, tuple[str, ...]]) -> tuple[str | None, str]:
    """``choose_game`` of ``bots`` (name, games): the game, or None when it refused, and
    what it said on stderr."""
    said = io.StringIO()
    saved = common.err_console.file
    common.err_console.file = said
    try:
        return choose_game(asked, [Plays(name, f"/bots/{name}", games) for name, games in bots]), said.getvalue()
    except typer.Exit:
        return None, said.getvalue()
    finally:
        common.err_console.file = saved


def test_the_game_is_the_one_every_bot_plays() -> None:
    assert chosen(None, ("a", ("sixes",)), ("b", ("nimmt", "sixes"))) == ("sixes", "")
    game, note = chosen(None, ("a", ("sixes", "nimmt")), ("b", ("nimmt", "sixes")))
    assert game == "nimmt" and "the bots all play nimmt, sixes: playing nimmt" in note  # the registry's order
    game, note = chosen(None)
    assert game == "nimmt" and "no bot to choose the game from" in note
    assert chosen("sixes", ("a", ("nimmt", "sixes")), ("b", ("sixes",))) == ("sixes", "")


def test_a_game_not_every_bot_plays_is_refused_in_one_line() -> None:
    game, said = chosen(None, ("a", ("sixes",)), ("b", ("nimmt",)), ("c", ()))
    assert game is None and said.count("\n") == 1
    assert "the bots have no game in common: a plays sixes; b plays nimmt; c plays no game" in said
    game, said = chosen(None, ("a", ("chess",)), ("b", ("chess", "nimmt")))
    assert game is None and "the bots all play chess, which this arena does not know" in said
    game, said = chosen("nimmt", ("a", ("nimmt",)), ("b", ("sixes",)))
    assert (
        game is None and "/bots/b: b does not play nimmt (its bot.toml lists sixes): to play it, --game sixes" in said
    )
    with pytest.raises(CatalogError, match="unknown game 'go': choose one of nimmt, sixes"):
        chosen("go", ("a", ("nimmt",)))
