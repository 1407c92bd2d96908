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
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store
from tests.conftest import MakeBot, serving
from tests.e2e.test_live import read_stream, sse_events

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
        """The events of the seat's stream ``which`` (``seat`` or ``events``), decoded (the
        stream's end is not seen: the connection is kept alive; its last event is)."""
        connection = http.client.HTTPConnection(self.url.removeprefix("http://"), timeout=120)
        connection.request(
            "GET", f"/api/play/{self.id}/{which}", headers={"Cookie": self.cookie if cookie is None else cookie}
        )
        answer = connection.getresponse()
        assert answer.status == 200, answer.read()
        try:
            for kind, data in sse_events(answer):
                yield kind, json.loads(data)
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
        spectator: list[tuple[float, str, bytes]] = []
        ask = first_ask(seat)  # the game is live: a spectator watches it too
        watcher = threading.Thread(target=lambda: spectator.extend(read_stream(url, ask["live"])), daemon=True)
        watcher.start()
        asks, last = play_through(seat)
        reader.join(60)
        watcher.join(60)
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
    # a spectator of the same game: every hand face down, the person's too
    watched = [json.loads(data) for _, kind, data in spectator if kind == "frame"]
    assert watched and all(c is None for f in watched for hand in f["hands"] for c in hand)


def first_ask(seat: Seat, cookie: str | None = None) -> dict[str, Any]:
    """The first request pending, with the live game's key (``live``)."""
    for _, state in seat.events("seat", cookie):
        if state["ask"] is not None:
            return {**state["ask"], "live": state["live"]}
        assert state["state"] in ("starting", "playing"), state
    raise AssertionError("never asked")


def test_a_seat_is_its_cookies_alone_and_survives_a_hostile_page(make_bot: MakeBot, tmp_path: Path) -> None:
    """Item 6. A page without the seat's cookie (or with another's) sees nothing of the
    seat: its page, streams and answers are a 404, as for no such table. A second tab or
    a reload is the same seat: it is sent the request pending. Whatever a page posts that
    is not a legal answer to the pending request is refused with one line, and the game
    goes on to its end. A game is started only from the site's own pages, and at most
    ``--play-tables`` at once."""
    db = tmp_path / "arena.db"
    bots = league(make_bot, db)
    with serving(db, extra=("--play", "--sandbox", "local", "--play-tables", "1")) as url:
        seat = Seat(url, bots, seat="0")
        assert seat.status == 303, seat.error
        other = "arena-seat-" + seat.id + "=" + "x" * 43
        near = seat.id[:-1] + ("B" if seat.id.endswith("A") else "A")  # another table's id, one letter off
        for cookie in ("", other, seat.cookie.replace(seat.id, near)):
            for path in (f"/play/{seat.id}", f"/api/play/{seat.id}/seat", f"/api/play/{seat.id}/events"):
                assert seat.request("GET", path, cookie=cookie)[0] == 404, (path, cookie)
            body = json.dumps({"id": 1, "answer": 1}).encode()
            assert seat.request("POST", f"/api/play/{seat.id}/answer", body, cookie=cookie)[0] == 404
        # a second table while the first is played: refused, the server's most
        full = Seat(url, bots)
        assert full.status == 503 and "games with people" in full.error, full.error
        # a game started from another site's page: refused
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        form = urllib.parse.urlencode([("board", BOARD), ("bot", bots[0]), ("seat", "0")])
        connection.request(
            "POST",
            "/play",
            form,
            {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"},
        )
        assert connection.getresponse().status == 403
        connection.close()
        # two tabs, then a reload: each is sent the same pending request
        ask = first_ask(seat)
        assert first_ask(seat) == ask and first_ask(seat) == ask
        legal = ask["legal"]
        hostile: list[tuple[Any, Any, int]] = [
            (ask["id"] + 1, legal[0], 409),  # not the request pending
            (ask["id"], 999, 400),  # not legal
            (ask["id"], True, 400),  # true is not 1
            (ask["id"], float(legal[0]), 400),  # nor 7.0 a 7
            (ask["id"], [legal[0]], 400),
            (str(ask["id"]), legal[0], 409),
        ]
        for request_id, value, status in hostile:
            code, said = seat.answer(request_id, value)
            assert code == status and "error" in said, (request_id, value, code, said)
        for body, status in (
            (b"not json", 400),
            (b"[1, 2]", 400),
            (b'{"id": 1, "answer": "' + b"x" * 5000 + b'"}', 413),
        ):
            assert seat.request("POST", f"/api/play/{seat.id}/answer", body)[0] == status, body[:20]
        assert seat.answer(ask["id"], legal[0])[0] == 200
        assert seat.answer(ask["id"], legal[0])[0] == 409, "answered once"
        asks, last = play_through(seat)
        assert last["state"] == "over" and last["result"] is not None
        stored = json.loads(urllib.request.urlopen(url + "/api" + last["game_url"]).read())
        assert stored["seats"][0]["status"] == "ok", "nothing refused reached the referee"
        # the table over: a new one may be started
        assert Seat(url, bots).status == 303


def test_a_person_who_goes_away_forfeits_and_the_game_ends(make_bot: MakeBot, tmp_path: Path) -> None:
    """Item 6: nobody answers; each move times out after ``--play-time``, the third fault
    disqualifies the seat, the referee plays its moves to the end, and the game is stored."""
    db = tmp_path / "arena.db"
    bots = league(make_bot, db)
    with serving(db, extra=("--play", "--sandbox", "local", "--play-time", "1")) as url:
        seat = Seat(url, bots)
        states = []
        for _, state in seat.events("seat"):
            states.append(state)
            if state["state"] in ("over", "failed"):
                break
        stored = json.loads(urllib.request.urlopen(url + "/api" + states[-1]["game_url"]).read())
    assert states[-1]["state"] == "over"
    (person,) = [s for s in stored["seats"] if s["bot"] == "person:1"]
    assert person["status"] == "disqualified" and person["faults"]["timeout"] == 3, person
    assert sum(1 for s in states if s["ask"] is not None) >= 3


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_bot_at_a_persons_table_holds_none_of_the_seats_pipes(
    make_bot: MakeBot, tmp_path: Path, sandbox: str
) -> None:
    """Attack: the person's seat is two pipes in the server's process; a bot started at
    that table (after them) lists every descriptor it holds, on every move. It holds its
    own three and the listing's, never the server's (a pipe it could answer the person's
    requests through)."""
    db = tmp_path / "arena.db"
    bots = league(make_bot, db, FDS, sandbox)
    with serving(db, extra=("--play", "--sandbox", sandbox)) as url:
        seat = Seat(url, bots)
        _, last = play_through(seat)
        replay = urllib.request.urlopen(url + "/api" + last["game_url"] + "/replay").read().decode()
    listed = {part for line in replay.split("FDS=")[1:] for part in line.split("\\n")[0].split(",")}
    assert listed and listed <= {"0", "1", "2", "3"}, listed


def test_in_a_browser_a_person_plays_a_game_to_the_end(browser: Any, make_bot: MakeBot, tmp_path: Path) -> None:
    """Items 5-6 in Chromium: the play page offers the board's bots, "Take a seat" opens
    the table, drawn by the viewer with the person's own hand face up and the others' face
    down; the person answers by click, by the keyboard (arrows, Enter) and by typing; a
    reload goes on with the seat; at the end the page links the stored game."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    db = tmp_path / "arena.db"
    bots = league(make_bot, db)
    with serving(db, extra=("--play", "--sandbox", "local")) as url:
        browser.get(url + "/play?board=" + urllib.parse.quote(BOARD))
        assert sorted(b.get_attribute("value") for b in browser.find_elements(By.NAME, "bot")) == bots
        browser.find_element(By.CSS_SELECTOR, "button.play-start").click()
        wait = WebDriverWait(browser, 60, poll_frequency=0.1)
        wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, ".rv-hand .ncard"))
        assert browser.find_elements(By.CSS_SELECTOR, ".rv-hand .card-hidden"), "the others' hands face down"
        mine = browser.execute_script(
            "return [...document.querySelectorAll('.rv-hand')].map(h => h.querySelectorAll('.ncard').length)"
        )
        assert sum(1 for n in mine if n) == 1, f"one hand face up, the person's: {mine}"
        state = "return [document.getElementById('play-seat').getAttribute('data-state'),"
        state += " document.getElementById('play-seat').getAttribute('data-ask')]"
        answered: set[str] = set()

        def next_ask() -> str | None:
            """The request newly on show, or None once the game is over (waited for)."""
            shown = wait.until(
                lambda _: (lambda s: s if s[0] == "over" or s[1] and s[1] not in answered else False)(
                    browser.execute_script(state)
                )
            )
            return None if shown[0] == "over" else str(shown[1])

        moves = 0
        while (ask := next_ask()) is not None:
            buttons = browser.find_elements(By.CSS_SELECTOR, "button.play-answer")
            if moves == 1:  # the keyboard: the first answer has the focus, an arrow moves it, Enter answers
                assert browser.switch_to.active_element == buttons[0]
                buttons[0].send_keys(Keys.ARROW_RIGHT)
                assert browser.switch_to.active_element == buttons[1 % len(buttons)]
                browser.switch_to.active_element.send_keys(Keys.ENTER)
            elif moves == 2:  # typed
                browser.find_element(By.CSS_SELECTOR, "input.play-typed").send_keys(buttons[-1].text + Keys.ENTER)
            elif moves == 3:  # a reload: the same seat, the same request pending
                browser.refresh()
                wait.until(lambda _: browser.execute_script(state)[1] == ask)
                browser.find_elements(By.CSS_SELECTOR, "button.play-answer")[0].click()
            else:
                buttons[-1].click()
            answered.add(ask)
            moves += 1
        seat = browser.find_element(By.ID, "play-seat")
        link = wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "a[data-play-game]"))
        assert "rank" in seat.text and moves >= 10
        link[0].click()
        wait.until(lambda _: "/games/" in browser.current_url)
        assert "with people" in browser.page_source


def test_a_person_plays_sixes_to_the_end(tmp_path: Path) -> None:
    """Item 5 for the other game: the sample Sixes bots, the person shown their run-table
    view and the cards they may lay, the game stored on Sixes' board with people."""
    db = tmp_path / "arena.db"
    subprocess.run(
        [ARENA, "tournament", "run", "sample_bots/sixes-heuristic", "sample_bots/sixes-random", "--db", str(db)]
        + ["--deals", "1", "--set", "max_rounds=3", "--sandbox", "local"],
        check=True,
        capture_output=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    with serving(db, extra=("--play", "--sandbox", "local")) as url:
        seat = Seat(url, ["sixes-heuristic:1.0.0", "sixes-random:1.0.0"], seat="2", board="sixes/standard,max_rounds=3")
        board: list[tuple[str, Any]] = []
        reader = read_board(seat, board)
        asks, last = play_through(seat, lambda ask: ask["legal"][0])
        reader.join(60)
        stored = json.loads(urllib.request.urlopen(url + "/api" + last["game_url"]).read())
    assert last["state"] == "over" and stored["variant"] == "standard,max_rounds=3,people"
    assert asks and all("your hand" in a["picture"] and a["what"] == "a card" for a in asks)
    shown = [data for kind, data in board if kind == "frame"]
    assert shown and all(c is None for f in shown for hand in f["hands"][:2] for c in hand), "no other hand"
    assert any(f["hands"][2] for f in shown) and all(c is not None for f in shown for c in f["hands"][2])
