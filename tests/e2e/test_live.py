"""Watching games as they are played (issue 28, items 1-2): a real tournament of real
bot processes in the local sandbox writes its games to the live folder, a real ``arena
serve`` streams them, and a spectator reads the stream end to end, from a socket or in
Chromium."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena.play import replay
from arena.play.live import folder_of
from arena.store import Store
from tests.conftest import MakeBot, serving

ARENA = str(Path(sys.executable).parent / "arena")

SLOW = """
import time
from protocol.bot import Bot, run

class Slow(Bot):
    def decide(self, kind, view, legal):
        time.sleep(SECONDS)
        return legal[len(legal) // 2]

run(Slow())
"""

LEAKY = """
import json, sys, time
from protocol.bot import Bot, run

class Leaky(Bot):
    asked = 0

    def decide(self, kind, view, legal):
        # its own hand, on stdout where only answers belong, on every request: dropped
        # lines the referee logs; and once an illegal answer, whose fault quotes the legal ones
        print("HAND=" + json.dumps(view.hand), flush=True)
        time.sleep(SECONDS)
        self.asked += 1
        return 999 if self.asked == 2 else legal[0]

run(Leaky())
"""


def bots(make_bot: MakeBot, seconds: float, leaky: bool = False) -> list[str]:
    code = [LEAKY if leaky else SLOW, SLOW, SLOW]
    return [str(make_bot(f"watched{i}", body.replace("SECONDS", str(seconds)))) for i, body in enumerate(code)]


@contextmanager
def tournament(db: Path, folders: list[str], sandbox: str = "local") -> Iterator[subprocess.Popen[str]]:
    """``arena tournament run`` of ``folders`` (one deal of one round each: 3 games) into ``db``."""
    process = subprocess.Popen(
        [ARENA, "tournament", "run", *folders, "--db", str(db), "--name", "watched", "--deals", "1"]
        + ["--set", "rounds=1", "--sandbox", sandbox, "--concurrency", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def first_live(url: str, process: subprocess.Popen[str], game_no: int | None = None) -> dict[str, Any]:
    """The first game seen being played (game ``game_no`` of the match, if given)."""
    deadline = time.monotonic() + 120  # only a guard against a tournament that never plays
    while time.monotonic() < deadline:
        games: list[dict[str, Any]] = json.loads(urllib.request.urlopen(url + "/api/live", timeout=10).read())["games"]
        games = [g for g in games if game_no is None or g["game_no"] == game_no]
        if games:
            return games[0]
        assert process.poll() is None, "the tournament ended before any game was seen live"
        time.sleep(0.05)
    raise AssertionError("no game was live in 120 s")


def sse_events(answer: http.client.HTTPResponse) -> Iterator[tuple[str, bytes]]:
    """A server-sent events stream's events, ``(kind, data)``, as they come (the
    stream's end is not seen: the connection is kept alive; the caller stops)."""
    kind, data = "", b""
    while raw := answer.fp.readline():
        line = raw.rstrip(b"\n")
        if line.startswith(b"event: "):
            kind = line[7:].decode()
        elif line.startswith(b"data: "):
            data = line[6:]
        elif not line and kind:
            yield kind, data
            kind, data = "", b""


def read_stream(url: str, key: str) -> list[tuple[float, str, bytes]]:
    """Every event of a live game's stream, with when it was received, to its last."""
    host = url.removeprefix("http://")
    connection = http.client.HTTPConnection(host, timeout=120)
    connection.request("GET", f"/api/live/{key}/events")
    answer = connection.getresponse()
    assert answer.status == 200 and answer.getheader("content-type", "").startswith("text/event-stream")
    events: list[tuple[float, str, bytes]] = []
    for kind, data in sse_events(answer):
        events.append((time.time(), kind, data))
        if kind in ("end", "gone"):
            break
    connection.close()
    return events


def stored_frames(url: str, game_no: int) -> dict[str, Any]:
    games = json.loads(urllib.request.urlopen(url + "/api/games?tournament=watched&limit=50").read())["games"]
    (found,) = [g for g in games if g["match_no"] == 0 and g["game_no"] == game_no]
    data: dict[str, Any] = json.loads(urllib.request.urlopen(url + f"/api/games/{found['id']}/frames").read())
    return data


CARD_FIELDS = ("rows", "piles", "offer")


def table_cards(frame: dict[str, Any]) -> set[int]:
    """Every card face up on the table in a 6 nimmt! frame."""
    cards = {c for field in CARD_FIELDS for group in frame[field] for c in group}
    return cards | {card for card, _seat in frame["revealed"]}


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_spectators_stream_holds_no_card_before_it_is_revealed(
    make_bot: MakeBot, tmp_path: Path, sandbox: str
) -> None:
    """Item 2's test. A bot that writes its hand to stdout and answers once illegally (the
    fault's message quotes its legal answers: its hand) plays; the stream of the game,
    read end to end, shows every hand as hidden cards, no card before the table shows it,
    neither the dropped lines nor the fault's words, and every frame of the stored game
    as it is public; the end names the stored game, whose hands wait (as on its page)
    while its deal's other rotations are played."""
    db = tmp_path / "arena.db"
    with serving(db) as url, tournament(db, bots(make_bot, 0.05, leaky=True), sandbox) as process:
        game = first_live(url, process)
        events = read_stream(url, game["key"])
        end = json.loads(events[-1][2])
        with pytest.raises(urllib.error.HTTPError) as embargoed:  # its deal's next rotation is being played
            urllib.request.urlopen(url + end["frames_url"])
        process.wait(timeout=120)
        full = stored_frames(url, game["game_no"])
        assert json.loads(urllib.request.urlopen(url + end["frames_url"]).read()) == full, "the end names the game"
    kinds = [kind for _, kind, _ in events]
    assert kinds[0] == "meta" and kinds[-1] == "end" and set(kinds[1:-1]) == {"frame"}, kinds
    live = [json.loads(data) for _, kind, data in events if kind == "frame"]
    assert len(live) == len(full["frames"]), "every frame of the game was shown live"
    assert all(frame.pop("at") <= received for frame, (received, kind, _) in zip(live, events[1:], strict=False))
    seen: set[int] = set()
    for index, (shown, truth) in enumerate(zip(live, full["frames"], strict=True)):
        seen |= table_cards(truth)
        assert all(card is None for hand in shown["hands"] for card in hand), f"frame {index} shows a hand"
        assert [len(h) for h in shown["hands"]] == [len(h) for h in truth["hands"]], "as many cards as held"
        assert table_cards(shown) <= seen, f"frame {index} shows a card before the table does"
        assert all(set(note) == {"seat", "kind"} for note in shown["notes"]), "no fault's words while live"
        assert shown["rows"] == truth["rows"] and shown["scores"] == truth["scores"], "the table as it is"
    streamed = b"".join(data for _, kind, data in events if kind != "end")
    assert b"HAND=" not in streamed and b"legal answers" not in streamed
    assert full["seed"].encode() not in streamed, "the seed deals every hand: never shown live"
    assert json.loads(events[0][2])["seed"] is None
    assert any(note["kind"] == "dropped" for frame in live for note in frame["notes"]), "the leaks were logged"
    assert embargoed.value.code == 404 and "other seat rotations" in embargoed.value.read().decode()
    assert end["frames_url"] == f"/api/games/{end['game_id']}/frames" and end["url"] == f"/games/{end['game_id']}"
    assert end["scores"] == full["result"]["scores"] and end["ranks"] == full["result"]["ranks"]
    assert any(card is not None for hand in full["frames"][0]["hands"] for card in hand), "hands, once all is played"


PEEKER = """
import os, sys
from protocol.bot import Bot, run

FOLDER = LIVE_FOLDER

class Peeker(Bot):
    asked = 0

    def decide(self, kind, view, legal):
        # once the other seats' slow turns have had the game's lines written: look for them
        self.asked += 1
        if self.asked == 4:
            try:
                names = os.listdir(FOLDER)
                sys.stderr.write("LISTED %d\\n" % len(names))
                for name in names:
                    with open(os.path.join(FOLDER, name), "rb") as file:
                        sys.stderr.write("LEAK %r\\n" % file.read(300))
            except OSError as exc:
                sys.stderr.write("SEALED %s\\n" % type(exc).__name__)
            sys.stderr.flush()
        return legal[0]

run(Peeker())
"""


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_bot_cannot_read_the_live_folder_of_its_own_game(make_bot: MakeBot, sandbox: str) -> None:
    """Attack: the live folder holds every hand of the game being played. A bot told its
    exact path (as if it guessed it) tries to list and read it mid-game, in bubblewrap
    and in Docker: it finds nothing, while the files are there. The database sits in a
    folder anyone may enter (pytest's own is root's alone), so that only the sandbox and
    the live folder's modes stand in the way."""
    open_dir = Path(tempfile.mkdtemp(prefix="arena-test-live-"))
    open_dir.chmod(0o755)
    db = open_dir / "arena.db"
    peeker = make_bot("peeker", PEEKER.replace("LIVE_FOLDER", repr(str(folder_of(db)))))  # fresh content: a new image
    others = [str(make_bot(f"slow{i}", SLOW.replace("SECONDS", "0.1"))) for i in range(2)]
    with tournament(db, [str(peeker), *others], sandbox) as process:
        assert process.wait(timeout=600) == 0, process.stdout.read() if process.stdout else ""
    with Store(db) as store:
        (watched,) = [t for t in store.list_tournaments() if t.name == "watched"]
        game_id = store.game_id_of(watched.id, 0, 0)
        assert game_id is not None
        lines = replay.loads(store.replay(game_id))
    header, end = lines[0], lines[-1]
    assert isinstance(header, replay.Header) and isinstance(end, replay.End)
    seat = [s.name for s in header.seats].index("peeker")
    said = end.stderr[seat]
    shutil.rmtree(open_dir, ignore_errors=True)
    assert "SEALED" in said, said
    assert "LISTED" not in said and "LEAK" not in said


def test_every_turn_is_shown_no_sooner_than_the_delay_after_it_was_played(make_bot: MakeBot, tmp_path: Path) -> None:
    """``--live-delay``: each frame, and the end, reach a spectator at least that long
    after the referee logged its turn (each frame says when: ``at``, the time of its
    line in the live file; a lower bound, whatever the machine's speed)."""
    db = tmp_path / "arena.db"
    with serving(db, extra=("--live-delay", "1.5")) as url, tournament(db, bots(make_bot, 0.02)) as process:
        game = first_live(url, process)
        events = read_stream(url, game["key"])
        process.wait(timeout=120)
    frames = [(received, json.loads(data)["at"]) for received, kind, data in events if kind == "frame"]
    assert frames and all(received >= played + 1.5 for received, played in frames), "not one turn before the delay"
    assert events[-1][1] == "end" and events[-1][0] >= frames[-1][1] + 1.5


def test_a_game_stopped_midway_ends_its_streams_with_a_reason(make_bot: MakeBot, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with serving(db) as url, tournament(db, bots(make_bot, 0.3)) as process:
        game = first_live(url, process)
        time.sleep(1)
        process.send_signal(signal.SIGINT)  # Ctrl-C: the game is given up
        events = read_stream(url, game["key"])
    assert events[-1][1] == "gone" and b"given up" in events[-1][2]
    assert all(kind != "end" for _, kind, _ in events)


@pytest.mark.parametrize(
    "path",
    [
        "/api/live/..%2F..%2Fetc%2Fpasswd/events",
        "/api/live/t1-m0-g0.1/events",
        "/api/live/t1-m0-g99/events",
        "/live/t1-m0-g0%00",
        "/live/t1-m0-g99",
    ],
)
def test_a_live_game_that_is_not_there_is_a_404_in_one_line(tmp_path: Path, path: str) -> None:
    db = tmp_path / "arena.db"
    folder_of(db).mkdir(mode=0o700)
    os.symlink("/etc/passwd", folder_of(db) / f"t1-m0-g99.{os.getpid()}.jsonl")  # a link is never read
    with serving(db) as url:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + path, timeout=10)
    assert refused.value.code == 404
    body = refused.value.read().decode()
    assert "root:" not in body and "Traceback" not in body


def test_the_pages_list_the_games_being_played(make_bot: MakeBot, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with serving(db) as url, tournament(db, bots(make_bot, 0.2)) as process:
        game = first_live(url, process)
        tournament_page = urllib.request.urlopen(url + "/tournaments/watched").read().decode()
        games_page = urllib.request.urlopen(url + "/games").read().decode()
        live_page = urllib.request.urlopen(url + "/live").read().decode()
        listed = json.loads(urllib.request.urlopen(url + "/api/tournaments/watched").read())["live"]
    for page in (tournament_page, games_page, live_page):
        assert f'href="/live/{game["key"]}"' in page
    assert [g["key"] for g in listed] == [game["key"]] and listed[0]["tournament"] == "watched"
    assert game["seats"] == ["watched0", "watched1", "watched2"]


@pytest.mark.browser
def test_in_a_browser_the_board_moves_as_the_game_is_played(browser: Any, make_bot: MakeBot, tmp_path: Path) -> None:
    """Item 1: the live page draws each turn as it comes, the hands face down; stepping
    back leaves live, "Live" comes back to it. At the end of the deal's first rotation the
    table stays as it was (the hands wait for the deal's other rotations, as on the
    game's page); at the end of its last the stored game is drawn, hands face up."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    db = tmp_path / "arena.db"
    with serving(db) as url, tournament(db, bots(make_bot, 0.25)) as process:
        game = first_live(url, process)
        browser.get(url + "/tournaments/watched")
        browser.find_element(By.CSS_SELECTOR, f'a[data-live-game="{game["key"]}"]').click()
        root = browser.find_element(By.ID, "replay-viewer")
        wait = WebDriverWait(browser, 60, poll_frequency=0.1)
        wait.until(lambda _: root.get_attribute("data-live") == "following")
        first = int(root.get_attribute("data-frame-count") or 0)
        wait.until(lambda _: int(root.get_attribute("data-frame-count") or 0) > first)  # a turn arrived
        assert browser.find_elements(By.CSS_SELECTOR, ".rv-hand .card-hidden"), "hands face down"
        assert not browser.find_elements(By.CSS_SELECTOR, ".rv-hand .ncard"), "no card face up in a hand"
        counter = browser.find_element(By.CSS_SELECTOR, ".rv-counter")
        assert counter.text.endswith("live")
        # clicked and read in one script: no frame can arrive in between
        before, after, state = browser.execute_script(
            "const v = window.replayViewer, before = v.index;"
            "document.querySelector('button.rv-prev').click();"  # step back: behind live
            "return [before, v.index, v.root.getAttribute('data-live')];"
        )
        assert (after, state) == (before - 1, "behind")
        time.sleep(1)  # turns arrive meanwhile: the viewer stays where it was put
        assert int(counter.get_attribute("data-frame-index") or 0) == after
        shown, newest, state = browser.execute_script(
            "const v = window.replayViewer;"
            "document.querySelector('button.rv-live').click();"  # and back to live
            "return [v.index, v.frames.length - 1, v.root.getAttribute('data-live')];"
        )
        assert (shown, state) == (newest, "following")
        wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-live-note]"))
        # its deal is being played in the next rotations: the table stays as it was shown
        assert root.get_attribute("data-live") == "ended"
        browser.find_element(By.CSS_SELECTOR, "button.rv-first").click()  # the deal, still face down
        assert browser.find_elements(By.CSS_SELECTOR, ".rv-hand .card-hidden")
        assert not browser.find_elements(By.CSS_SELECTOR, ".rv-hand .ncard")
        assert "other seat rotations" in browser.find_element(By.CSS_SELECTOR, "[data-live-note]").text
        assert not browser.find_elements(By.CSS_SELECTOR, "button.rv-live")
        last = first_live(url, process, game_no=2)  # the deal's last rotation
        browser.get(url + last["url"])
        root = browser.find_element(By.ID, "replay-viewer")
        wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-live-note]"))
        process.wait(timeout=120)
        full = stored_frames(url, 2)
    assert int(root.get_attribute("data-frame-count") or 0) == len(full["frames"])
    assert not browser.find_elements(By.CSS_SELECTOR, ".card-hidden"), "every rotation played: nothing hidden"
    browser.find_element(By.CSS_SELECTOR, "button.rv-first").click()
    assert browser.find_elements(By.CSS_SELECTOR, ".rv-hand .ncard"), "the hands as dealt"


def test_a_spectator_who_hangs_up_leaves_nothing_open(make_bot: MakeBot, tmp_path: Path) -> None:
    """Attack: streams opened and dropped without a word. Each counts while open
    (``watching``) and is closed on the server once its spectator has gone."""
    db = tmp_path / "arena.db"
    with serving(db) as url, tournament(db, bots(make_bot, 1.0)) as process:  # a game of many seconds
        game = first_live(url, process)
        host, port = url.removeprefix("http://").split(":")
        sockets = []
        for _ in range(5):
            connection = socket.create_connection((host, int(port)))
            connection.sendall(f"GET /api/live/{game['key']}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            connection.recv(1)  # the answer has begun: the stream is open
            sockets.append(connection)

        def watching() -> int:
            games = json.loads(urllib.request.urlopen(url + "/api/live").read())["games"]
            (listed,) = [g for g in games if g["key"] == game["key"]]  # still being played
            return int(listed["watching"])

        assert watching() == 5
        for connection in sockets:
            connection.close()
        deadline = time.monotonic() + 60  # only a guard: the server notices a closed socket at once
        while watching() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watching() == 0, "closed while the game is still played, not by its end"
