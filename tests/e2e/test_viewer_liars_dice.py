"""Liar's dice (``tests/games/liars_dice/``), registered from outside only, brings its
own web frames and its own drawer, as the arena's games do: the frames keep every die
hidden until a call shows them, a real ``arena serve`` sends the page the game's drawer
from its record (with the site's CSP and caching), and real Chromium draws the table
with it, in the served page and in the page ``arena replay --html`` writes. The
terminal's generic pictures count the same rounds as the viewer."""

from __future__ import annotations

import io
import json
import random
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.games.registry import registered
from arena.play import replay, simulate
from arena.store import Store
from arena.web import viewer
from protocol.bot import Bot, run
from protocol.messages import Bye, Hello, HelloReply, Limits, encode, from_bot_decoder

from ..conftest import serving
from ..games.liars_dice.helpers import arena, liars_db, liars_env
from ..games.liars_dice.record import LIARS_DICE
from ..games.liars_dice.wire import Call, Roll
from .test_cli import assert_clean_error
from .test_viewer_browser import go_to as keys_to
from .test_viewer_browser import wait_for
from .test_viewer_generic import severe_logs

PLAYERS = 3


@pytest.fixture
def known() -> Iterator[None]:
    """Liar's dice registered in this process for one test (the registry is restored)."""
    with registered(LIARS_DICE):
        yield


def played(seed: int, players: int = PLAYERS) -> list[replay.Line]:
    """A game of random answers, logged as the referee logs one."""
    rng = random.Random(seed)
    return simulate.replay_of(LIARS_DICE, {}, players, seed, [simulate.random_policy(rng)] * players)


def test_the_frames_hide_every_die_until_a_call_shows_them(known: None) -> None:
    lines = played(3)
    data = viewer.frames(lines, "liars")
    assert (data["drawer"], data["title"], data["unit"]) == ("liars-dice", "Liar's dice", "chips")
    assert json.loads(json.dumps(data)) == data
    events = [e for step in replay.verify(lines) for e in step.events]
    calls = [e for e in events if isinstance(e, Call)]
    frames = data["frames"]
    assert [f["kind"] for f in frames].count("call") == len(calls) > 0
    shown: list[list[int]] | None = None
    for frame in frames:
        if frame["kind"] == "call":
            shown = [list(d) for d in calls.pop(0).dice]
            assert frame["dice"] == shown, "a call shows every die as rolled"
        elif frame["kind"] == "game_end":
            assert frame["dice"] == shown, "the last call's dice stay shown"
        else:
            assert frame["dice"] is None, f"frame {frame['index']} ({frame['kind']}) shows hidden dice"
        assert sum(frame["chips"]) == PLAYERS * 3, "chips are conserved"
    rolls = [e for e in events if isinstance(e, Roll)]
    assert [r["round"] for r in data["rounds"]] == [r.round for r in rolls]
    assert frames[-1]["scores"] == data["result"]["scores"]


def test_the_terminal_counts_the_rounds_the_viewer_shows(known: None, tmp_path: Path) -> None:
    """Was: ``--round 2`` said "this game has 1 round" where the viewer shows 8."""
    lines = played(3)
    rounds = viewer.frames(lines, "liars")["rounds"]
    assert len(rounds) > 2
    source = tmp_path / "liars.jsonl"
    replay.write(source, lines)
    whole = arena("replay", str(source), timeout=60)
    assert whole.returncode == 0, whole.stderr
    for number in range(1, len(rounds) + 1):
        assert f"Round {number}" in whole.stdout
    second = arena("replay", str(source), "--round", "2", timeout=60)
    assert second.returncode == 0, second.stderr
    assert "Round 2" in second.stdout and "Round 1" not in second.stdout and "Final standings" in second.stdout
    first_roll = next(line for line in lines if isinstance(line, replay.EventsLine))
    assert msgspec.json.encode(first_roll.events[0]).decode() in whole.stdout
    assert msgspec.json.encode(first_roll.events[0]).decode() not in second.stdout
    mid = arena("replay", str(source), "--round", "2", "--turn", "2", timeout=60)
    assert mid.returncode == 0 and "Round 2, from step" in mid.stdout, mid.stdout + mid.stderr
    assert_clean_error(
        arena("replay", str(source), "--round", str(len(rounds) + 1), timeout=60),
        f"round {len(rounds) + 1} does not exist: this game has {len(rounds)} rounds",
    )


def test_the_sdk_plays_a_game_a_bot_lists_no_games_for() -> None:
    """Was: a ``Bot`` without ``games`` played 6 nimmt! only, refusing any other game."""

    class Any(Bot):
        name, version = "any", "1.0"

        def decide(self, kind: str, view: object, legal: list[object]) -> object:
            return legal[0]

    out = io.BytesIO()
    hello = Hello(1, "liars-dice", {}, 0, 2, Limits(1000, 10000, 10000, 65536))
    run(Any(), io.BytesIO(encode(hello) + encode(Bye())), out)
    assert from_bot_decoder.decode(out.getvalue()) == HelloReply("any", "1.0", True)


# --- served and exported ----------------------------------------------------------------------

DRAWN = """
const root = document.getElementById("replay-viewer");
const counter = root.querySelector("[data-frame-index]");
const faces = (el) => Array.from(el.querySelectorAll("[data-die]")).map((d) => d.getAttribute("data-die"));
return {
  index: counter ? Number(counter.getAttribute("data-frame-index")) : -1,
  classes: root.className,
  caption: (root.querySelector("[data-caption]") || {}).textContent,
  bids: Array.from(root.querySelectorAll("[data-bid]")).map((b) => b.getAttribute("data-bid")),
  dice: Array.from(root.querySelectorAll("[data-dice]")).map(faces),
  chips: Array.from(root.querySelectorAll("[data-chips]")).map((c) => Number(c.getAttribute("data-chips"))),
  scores: Array.from(root.querySelectorAll("[data-seat-score]")).map((e) => e.textContent),
  events: root.querySelectorAll("[data-event]").length,
  styled: document.querySelector("style[data-drawer-style='liars-dice']") !== null,
  text: root.textContent,
  error: root.querySelector("[role=alert]") ? root.querySelector("[role=alert]").textContent : null,
};
"""


@pytest.fixture(scope="module")
def liars_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding a finished Liar's dice tournament (``helpers.liars_db``)."""
    return liars_db(tmp_path_factory.mktemp("liars-web"))


@pytest.fixture
def game_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena`` processes started by this test (``arena serve``) know Liar's dice."""
    env = liars_env()
    for name in ("ARENA_GAMES", "PYTHONPATH"):
        monkeypatch.setenv(name, env[name])


def go_to(browser: Any, data: dict[str, Any], target: int) -> dict[str, Any]:
    """Frame ``target`` reached with the keys, and what the page draws there."""
    keys_to(browser, data, target)
    drawn: dict[str, Any] = browser.execute_script(DRAWN)
    return drawn


def check_drawn(browser: Any, data: dict[str, Any]) -> None:
    """Drawn by the game's drawer: the bids and chips of each frame, every die face down
    until the first call, and the call's frame showing each die as rolled."""
    frames = data["frames"]
    first: dict[str, Any] = browser.execute_script(DRAWN)
    assert first["error"] is None and "rv-liars-dice" in first["classes"].split(), first["classes"]
    assert first["events"] == 0 and first["styled"], "its own drawer and style, not the generic events"
    call = next(f for f in frames if f["kind"] == "call")
    for frame in frames[: call["index"]]:
        drawn = go_to(browser, data, frame["index"])
        assert drawn["index"] == frame["index"] and drawn["caption"] == frame["caption"]
        assert drawn["bids"] == [f"{q}x{f}" for _, q, f in frame["bids"]]
        assert drawn["chips"] == frame["chips"]
        assert drawn["dice"] == [["hidden"] * n for n in frame["cups"]], "no die shown before the call"
    shown = go_to(browser, data, call["index"])
    assert shown["dice"] == [[str(face) for face in dice] for dice in call["dice"]]
    assert shown["chips"] == call["chips"] and f"{call['move']['count']} shown" in shown["text"]
    end = go_to(browser, data, len(frames) - 1)
    assert end["scores"] == [str(s) for s in data["result"]["scores"]]


def status(url: str, headers: dict[str, str] | None = None) -> int:
    """The status of a GET that is not a 200 (an error's body closed)."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30).close()
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code
    raise AssertionError(f"{url} answered 200")


def test_the_server_sends_a_game_its_drawer_as_it_sends_its_scripts(
    liars_board: Path, game_env: None, known: None
) -> None:
    with serving(liars_board) as site:
        with urllib.request.urlopen(f"{site}/drawers/liars-dice.js", timeout=30) as answer:
            body, headers = answer.read().decode(), answer.headers
        assert body == viewer.drawer_script("liars-dice"), "the record's script with its style sheet"
        assert body.startswith(LIARS_DICE.drawer_script() or "?") and ".ld-die" in body
        assert headers["content-type"].startswith("text/javascript")
        assert headers["etag"] and headers["cache-control"] == "no-cache"
        assert "script-src 'self'" in headers["content-security-policy"]
        with urllib.request.urlopen(f"{site}/static/viewer.js", timeout=30) as answer:
            assert answer.headers["cache-control"] == headers["cache-control"], "cached as the viewer is"
        assert status(f"{site}/drawers/liars-dice.js", {"If-None-Match": headers["etag"]}) == 304
        for missing in ("stranger", "nimmt%2F..%2Fx"):
            assert status(f"{site}/drawers/{missing}.js") == 404
        with urllib.request.urlopen(f"{site}/drawers/nimmt.js", timeout=30) as answer:
            assert 'register("nimmt"' in answer.read().decode()


@pytest.mark.browser
def test_a_served_game_is_drawn_by_the_drawer_it_brings(
    browser: Any, liars_board: Path, game_env: None, known: None
) -> None:
    severe_logs(browser)  # what earlier tests left in the console
    with serving(liars_board) as site:
        with Store(liars_board) as store:
            game_id = store.find_games(limit=1)[0].id
        data = json.loads(urllib.request.urlopen(f"{site}/api/games/{game_id}/frames", timeout=30).read())
        assert data["drawer"] == "liars-dice"
        browser.get(f"{site}/games/{game_id}")
        wait_for(browser, lambda: browser.execute_script(DRAWN)["index"] >= 0, "the viewer to draw")
        check_drawn(browser, data)
    assert severe_logs(browser) == [], "no script error, no CSP violation"


@pytest.mark.browser
def test_replay_html_holds_the_games_drawer(browser: Any, tmp_path: Path, known: None) -> None:
    source, out = tmp_path / "liars.jsonl", tmp_path / "liars.html"
    lines = played(8)
    replay.write(source, lines)
    result = arena("replay", str(source), "--html", str(out), timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'register("liars-dice"' in out.read_text()
    severe_logs(browser)
    browser.get(out.as_uri())
    wait_for(browser, lambda: browser.execute_script(DRAWN)["index"] >= 0, "the viewer to draw")
    check_drawn(browser, viewer.frames(lines, "liars"))
    assert severe_logs(browser) == []
