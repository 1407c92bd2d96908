"""Playing against the bots in the browser (issue 28, items 5-6): a real ``arena serve
--play`` hosts the game, the bots run in the local sandbox (or Docker) as real
processes, the person's seat is the server's relay, and the person is a client of its
HTTP streams, or Chromium."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store
from tests.conftest import MakeBot, serving

ARENA = str(Path(sys.executable).parent / "arena")
BOARD = "nimmt/standard,rounds=1"

FIRST = """
from protocol.bot import Bot, run

class First(Bot):
    def decide(self, kind, view, legal):
        return legal[NUMBER % len(legal)]

run(First())
"""

FDS = """
import os, sys
from protocol.bot import Bot, run

class Fds(Bot):
    def decide(self, kind, view, legal):
        # every descriptor it holds, and what each is: the person's seat is not among them
        print("FDS=" + ",".join(sorted(os.listdir("/proc/self/fd"))), file=sys.stderr, flush=True)
        return legal[0]

run(Fds())
"""


def league(make_bot: MakeBot, db: Path, code: str = FIRST, sandbox: str = "local") -> list[str]:
    """Two bots of fresh code, on the board ``BOARD`` of ``db`` (a one-deal tournament)."""
    folders = [str(make_bot(f"foe{i}", code.replace("NUMBER", str(i)))) for i in range(2)]
    subprocess.run(
        [ARENA, "tournament", "run", *folders, "--db", str(db), "--deals", "1", "--set", "rounds=1"]
        + ["--sandbox", sandbox],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return ["foe0:0.1", "foe1:0.1"]


class Seat:
    """A person's seat, from the server's answer to ``POST /play``."""

    def __init__(self, url: str, bots: list[str], seat: str = "1", board: str = BOARD) -> None:
        self.url = url
        form = urllib.parse.urlencode([("board", board), *(("bot", b) for b in bots), ("seat", seat)]).encode()
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        connection.request("POST", "/play", form, {"Content-Type": "application/x-www-form-urlencoded"})
        answer = connection.getresponse()
        body = answer.read()
        self.status = answer.status
        self.error = body.decode(errors="replace")
        self.id = (answer.getheader("location") or "").rpartition("/")[2]
        self.cookie = (answer.getheader("set-cookie") or "").partition(";")[0]
        connection.close()

    def request(self, method: str, path: str, body: bytes | None = None, cookie: str | None = None) -> tuple[int, Any]:
        connection = http.client.HTTPConnection(self.url.removeprefix("http://"), timeout=30)
        headers = {"Cookie": self.cookie if cookie is None else cookie, "Content-Type": "application/json"}
        connection.request(method, path, body, headers)
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        try:
            return answer.status, json.loads(data)
        except ValueError:
            return answer.status, data.decode(errors="replace")

    def answer(self, request_id: Any, value: Any) -> tuple[int, Any]:
        body = json.dumps({"id": request_id, "answer": value}).encode()
        return self.request("POST", f"/api/play/{self.id}/answer", body)

    def events(self, which: str, cookie: str | None = None) -> Iterator[tuple[str, Any]]:
        """The events of the seat's stream ``which`` (``seat`` or ``events``), decoded."""
        connection = http.client.HTTPConnection(self.url.removeprefix("http://"), timeout=120)
        connection.request(
            "GET", f"/api/play/{self.id}/{which}", headers={"Cookie": self.cookie if cookie is None else cookie}
        )
        answer = connection.getresponse()
        assert answer.status == 200, answer.read()
        kind, data = "", b""
        try:
            while raw := answer.fp.readline():
                line = raw.rstrip(b"\n")
                if line.startswith(b"event: "):
                    kind = line[7:].decode()
                elif line.startswith(b"data: "):
                    data = line[6:]
                elif not line and kind:
                    yield kind, json.loads(data)
                    kind, data = "", b""
        finally:
            connection.close()


def play_through(seat: Seat, choose: Any = lambda ask: ask["legal"][-1]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Answer every request of ``seat`` with ``choose(ask)`` until the game is over; the
    asks and the last state."""
    asks: list[dict[str, Any]] = []
    for kind, state in seat.events("seat"):
        assert kind == "seat"
        ask = state["ask"]
        if ask is not None and (not asks or asks[-1]["id"] != ask["id"]):
            asks.append(ask)
            status, said = seat.answer(ask["id"], choose(ask))
            assert status == 200, said
        if state["state"] in ("over", "failed"):
            return asks, state
    raise AssertionError("the seat's stream ended before the game")


def read_board(seat: Seat, out: list[tuple[str, Any]], cookie: str | None = None) -> threading.Thread:
    """Read the table's stream to its end in a thread, into ``out``."""

    def read() -> None:
        for event in seat.events("events", cookie):
            out.append(event)
            if event[0] in ("end", "gone"):
                return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_person_plays_a_game_to_the_end_against_two_bots(make_bot: MakeBot, tmp_path: Path) -> None:
    """Item 5: the seat is asked each move with its view and what is legal, its answers
    are played, its table shows its own hand and no other, and the game is stored like
    any other, marked with the person, on a board of its own, off the bots' board."""
    db = tmp_path / "arena.db"
    bots = league(make_bot, db)
    before = Store(db, read_only=True).count_games()
    with serving(db, extra=("--play", "--sandbox", "local", "--play-time", "60")) as url:
        page = urllib.request.urlopen(url + "/play?board=" + urllib.parse.quote(BOARD)).read().decode()
        assert all(f'value="{b}"' in page for b in bots), "the board's bots are offered"
        seat = Seat(url, bots, seat="1")
        assert seat.status == 303 and seat.cookie.startswith(f"arena-seat-{seat.id}="), seat.error
        board: list[tuple[str, Any]] = []
        reader = read_board(seat, board)
        asks, last = play_through(seat)
        reader.join(60)
        assert last["state"] == "over" and last["game_url"], last
        game_id = int(last["game_url"].rpartition("/")[2])
        stored = json.loads(urllib.request.urlopen(f"{url}/api/games/{game_id}").read())
        frames = json.loads(urllib.request.urlopen(f"{url}/api/games/{game_id}/frames").read())
        lines = urllib.request.urlopen(f"{url}/api/games/{game_id}/replay").read().decode().splitlines()
        people = json.loads(
            urllib.request.urlopen(f"{url}/api/leaderboard?game=nimmt&variant={BOARD[6:]},people").read()
        )
        theirs = json.loads(urllib.request.urlopen(f"{url}/api/leaderboard?game=nimmt&variant={BOARD[6:]}").read())
    assert len(asks) >= 10 and all(a["picture"] and a["legal"] for a in asks), "asked every turn, shown the view"
    assert [a["kind"] for a in asks].count("play") == 10, "a card a turn, ten turns"
    assert stored["variant"] == "standard,rounds=1,people" and stored["tournament"] == "people-nimmt-standard-rounds=1"
    assert [s["bot"] for s in stored["seats"]] == ["foe0:0.1", "person:1", "foe1:0.1"]
    assert [s["name"] for s in frames["seats"]] == ["foe0", "person", "foe1"], "replayable, as any game"
    # what the person chose is what seat B played, every move
    decisions = [json.loads(line) for line in lines if json.loads(line)["type"] == "decision"]
    answered = [d["answers"][d["seats"].index(1)] for d in decisions if 1 in d["seats"]]
    assert answered == [a["legal"][-1] for a in asks]
    assert {r["bot"] for r in people["boards"][0]["rows"]} == {"foe0:0.1", "foe1:0.1", "person:1"}, "a board of its own"
    assert [r["bot"] for b in theirs["boards"] for r in b["rows"] if r["bot"].startswith("person")] == []
    with Store(db, read_only=True) as store:
        assert store.count_games() == before + 1
    # the person's table: their own hand face up, every other hand face down, in every frame
    kinds = [k for k, _ in board]
    assert kinds[0] == "meta" and kinds[-1] == "end" and kinds.count("frame") == len(frames["frames"]), kinds
    shown = [data for k, data in board if k == "frame"]
    assert all(c is None for f in shown for c in f["hands"][0] + f["hands"][2]), "no other hand"
    assert [f["hands"][1] for f in shown] == [f["hands"][1] for f in frames["frames"]], "their own, as it was"
    assert any(f["hands"][1] for f in shown)
