"""A bot that remembers deals finds nothing to remember (issue 23, item 1).

A duplicate match plays each deal once per rotation of the seats. A bot process that
played one rotation of a deal saw every hand revealed card by card, so if the same
process played another rotation it would know every seat's cards before anyone
played. The referee starts the bots afresh for each rotation (``referee.lives``); this
bot tries everything a remembering author would: its memory, and files in every place
it may write (/tmp, /dev/shm, its home, its folder, /var/tmp) and an abstract unix
socket, looked for at its start and at every new game.

Real tournaments (`arena tournament run`), real bot processes, in bubblewrap and in a
real Docker engine.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.play.referee import lives
from arena.play.replay import End, loads
from arena.store import Store
from arena.tournaments.schedule import by_rotation, round_robin

from ..conftest import SAMPLES, MakeBot

ARENA = str(Path(sys.executable).parent / "arena")

REMEMBERING = r"""
import json, os, socket, sys, threading, uuid

PLACES = ["/tmp", "/dev/shm", os.environ.get("HOME", "/tmp"), os.getcwd(), "/var/tmp", "/run/shm"]
ABSTRACT = "\0sixarena-memo"  # an abstract unix socket: shared by whoever shares a network namespace
me = uuid.uuid4().hex[:12]
deals = {}      # the opening rows of each deal this process played -> every card it saw
games = 0
current = None
print("START", me, file=sys.stderr, flush=True)

def look():
    # What an earlier process may have left: a file in a place it could write, or a socket.
    for place in PLACES:
        try:
            for name in os.listdir(place):
                if name.startswith(".stash-") and name != ".stash-" + me:
                    print("FOUND", place, name, open(os.path.join(place, name)).read()[:200], file=sys.stderr, flush=True)
        except OSError:
            pass
    try:
        with socket.socket(socket.AF_UNIX) as peer:
            peer.settimeout(0.5)
            peer.connect(ABSTRACT)
            owner, _, seen = peer.recv(300).decode().partition(" ")
            if owner != me:  # not its own listener
                print("FOUND socket of", owner, seen, file=sys.stderr, flush=True)
    except OSError:
        pass

def serve(listener):
    while True:
        conn, _ = listener.accept()
        conn.sendall((me + " " + json.dumps(sorted(deals))).encode()[:300])
        conn.close()

look()
try:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(ABSTRACT)
    listener.listen()
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
except OSError as exc:
    print("FOUND socket taken", exc, file=sys.stderr, flush=True)

def stash(text):
    for place in PLACES:
        try:
            with open(os.path.join(place, ".stash-" + me), "w") as f:
                f.write(text)
        except OSError:
            pass

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        send({"type": "hello", "name": "memo", "version": "1", "accept": True})
    elif kind == "new_game":
        current = None
        games += 1
        print("GAMES", me, games, file=sys.stderr, flush=True)
        look()
    elif kind == "request":
        view = msg["view"]
        if current is None and view["round"] == 1:
            current = json.dumps(view["rows"])
            if current in deals:
                print("REMEMBERED", current, "cards seen", len(deals[current]), file=sys.stderr, flush=True)
            deals.setdefault(current, set())
            stash(current)
        if current is not None:
            for turn in view["revealed"]:
                for card, seat in turn:
                    deals[current].add(card)
        send({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})
    elif kind == "bye":
        break
"""


def test_a_process_lives_for_one_rotation_of_each_deal() -> None:
    """The schedule's order and the referee's rule: a table of 3 playing 4 deals has
    3 lives, each holding one rotation of every deal (so no deal twice)."""
    match = round_robin(3, 3, 4, seed=5)[0]
    order = by_rotation(match, range(len(match.games)))
    games = [match.games[i] for i in order]
    starts = lives(games)
    assert starts == [0, 4, 8]
    for start, end in zip(starts, [*starts[1:], len(games)], strict=True):
        assert len({g.seed for g in games[start:end]}) == end - start == 4
    # Whatever the order, no life holds a deal twice: in the schedule's own order
    # (each deal's rotations one after another) a life holds at most two games.
    assert lives(match.games) == [0, 1, 2, 4, 5, 7, 8, 10, 11]


def memory_tournament(tmp: Path, make_bot: MakeBot, sandbox: str) -> list[str]:
    """Two remembering bots (fresh content) and a sample bot, one table, 2 deals: the
    stderr of every seat of every game."""
    tag = uuid.uuid4().hex[:8]
    bots = [make_bot(f"memo-{tag}-{n}", REMEMBERING + f"\n# {tag}-{n}\n") for n in "ab"]
    db = tmp / "arena.db"
    args = [str(b) for b in bots] + [str(SAMPLES / "random")]
    run = subprocess.run(
        [ARENA, "tournament", "run", *args, "--deals", "2", "--db", str(db), "--sandbox", sandbox, "--name", "m"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    stderr = []
    with Store(db, read_only=True) as store:
        games = store.find_games()
        assert len(games) == 6
        for game in games:
            end = loads(store.replay(game.id))[-1]
            assert isinstance(end, End)
            stderr += end.stderr
    return stderr


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_remembering_bot_never_sees_a_deal_again(tmp_path: Path, make_bot: MakeBot, sandbox: str) -> None:
    text = "\n".join(memory_tournament(tmp_path, make_bot, sandbox))
    assert "REMEMBERED" not in text, text
    assert "FOUND" not in text, text
    starts = {line.split()[1] for line in text.splitlines() if line.startswith("START")}
    assert len(starts) == 2 * 3  # each remembering bot: one process per rotation
    # Each of them played both deals of its rotation, remembering across its games:
    # had a deal come back to it, it would have known every hand.
    counts = [line.split() for line in text.splitlines() if line.startswith("GAMES")]
    assert sorted(int(n) for _, _, n in counts).count(2) == 6, counts
