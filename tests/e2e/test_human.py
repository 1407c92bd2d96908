"""A person at the terminal (issue 28, item 4): ``arena play --human`` on a real
pseudo-terminal, against real bots in the local sandbox, typed at as a person would."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.play.human import parse
from tests.conftest import SAMPLES

ARENA = str(Path(sys.executable).parent / "arena")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = re.compile(rb"(\w+): [^\n>]*> $")


def play_at_a_terminal(args: list[str], answer: object) -> tuple[int, str, int]:
    """Run ``arena play --human ARGS`` on a pseudo-terminal; at each prompt type what
    ``answer(kind, legal, asked)`` says. Returns the exit status, everything shown, and
    how many prompts there were."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [ARENA, "play", "--human", *args], stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    shown = b""
    asked = 0
    deadline = time.monotonic() + 300  # only a guard against a game that never ends
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end closed: the command ended
                break
            if not chunk:
                break
            shown += chunk
            plain = ANSI.sub(b"", shown).replace(b"\r", b"")
            if PROMPT.search(plain):
                kind = PROMPT.search(plain)[1].decode()  # type: ignore[index]
                legal = plain.rsplit(b"legal: ", 1)[1].split(b"\n", 1)[0].decode().split()
                os.write(master, (str(answer(kind, legal, asked)) + "\n").encode())
                asked += 1
                shown += b"\n"  # this prompt is answered
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return status, ANSI.sub(b"", shown).replace(b"\r", b"").decode(errors="replace"), asked


@pytest.mark.parametrize(
    ("game", "bots"),
    [("nimmt", ["heuristic", "random"]), ("sixes", ["sixes-heuristic", "sixes-random"])],
)
def test_a_person_plays_a_whole_game_at_the_terminal(game: str, bots: list[str]) -> None:
    """Shown the hand, the table and what is legal, the person types a legal answer each
    time (the first time something illegal, refused in one line, and asked again); the
    game is played to the end with the person as seat A."""

    def answer(kind: str, legal: list[str], asked: int) -> str:
        return "999" if asked == 0 else legal[0]

    args = [*(str(SAMPLES / b) for b in bots), "--game", game, "--seed", "5", "--sandbox", "local"]
    status, shown, asked = play_at_a_terminal([*args, "--set", "rounds=1"] if game == "nimmt" else args, answer)
    assert status == 0, shown[-2000:]
    assert asked > 5, shown[-2000:]
    assert "'999' is not" in shown and shown.count("is not") == 1, "the illegal answer refused, once"
    assert "your hand:" in shown and "legal:" in shown
    assert "A you" in shown and "Final standings" in shown
    assert "a person at the terminal" in shown, "the seat says what it is"


def test_without_a_terminal_it_says_so_in_one_line() -> None:
    done = subprocess.run(
        [ARENA, "play", "--human", str(SAMPLES / "random"), "--sandbox", "local"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "--human needs a terminal" in done.stderr and "Traceback" not in done.stderr


def test_an_answer_is_read_as_a_person_types_it() -> None:
    assert parse("34", [12, 34]) == (True, 34)
    assert parse("10C", ["1o", "10c"]) == (True, "10c")
    assert parse("3 17", [[3, 17], [3, 20]]) == (True, [3, 17])
    assert parse("[3, 20]", [[3, 17], [3, 20]]) == (True, [3, 20])
    assert parse("35", [12, 34]) == (False, None)
    assert parse("true", [1]) == (False, None), "JSON kinds apart, as the referee keeps them"
