"""A game with no web part of its own (Goofspiel, ``tests/games/goofspiel/``) is shown by
the generic frames: in the viewer's data, on the pages of a real ``arena serve`` over the
database of a real ``arena tournament run`` in real Chromium, and in the page ``arena
replay --html`` writes. The game reaches the server's and the commands' processes
through ``ARENA_GAMES``, as an organiser's would."""

from __future__ import annotations

import json
import random
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.games.nimmt import GAME as NIMMT
from arena.games.registry import registered
from arena.play import replay, simulate
from arena.play.replay import DecisionLine, EventsLine, Header
from arena.store import Store
from arena.web import viewer

from ..conftest import serving
from ..games.goofspiel.helpers import arena, goofspiel_db, goofspiel_env
from ..games.goofspiel.record import GOOFSPIEL

PLAYERS = 3
"""Seats of the games played here (the tournament's tables seat two)."""


@pytest.fixture
def known() -> Iterator[None]:
    """Goofspiel registered in this process for one test (the registry is restored)."""
    with registered(GOOFSPIEL):
        yield


def played(seed: int) -> list[replay.Line]:
    """A Goofspiel game of random answers, logged as the referee logs one."""
    rng = random.Random(seed)
    return simulate.replay_of(GOOFSPIEL, {"cards": 4}, PLAYERS, seed, [simulate.random_policy(rng)] * PLAYERS)


def as_json(data: Any) -> Any:
    """``data`` as a client receives it."""
    return json.loads(json.dumps(data))


def test_generic_frames_show_each_step_its_answers_and_the_scores(known: None) -> None:
    lines = played(5)
    data = viewer.frames(lines, "goofspiel")
    assert as_json(data) == data, "JSON-able builtins: a round trip changes nothing"
    assert (data["drawer"], data["title"], data["unit"]) == ("generic", "Goofspiel", "points")
    assert data["lower_is_better"] is False, "the record's direction, not a guess from the unit"
    frames = data["frames"]
    logged = [line for line in lines if isinstance(line, EventsLine)]
    decisions = [line for line in lines if isinstance(line, DecisionLine)]
    assert len(frames) == len(logged), "one frame per step"
    assert [f["events"] for f in frames] == [as_json(msgspec.to_builtins(line.events)) for line in logged]
    assert frames[0]["answers"] == [] and frames[0]["kind"] == "start"
    for frame, decision in zip(frames[1:], decisions, strict=True):
        assert frame["answers"] == [
            {"seat": s, "answer": a} for s, a in zip(decision.seats, decision.answers, strict=True)
        ]
        assert frame["times"] == [0.0] * PLAYERS
    end = lines[-1]
    assert isinstance(end, replay.End)
    assert [f["scores"] for f in frames[:-1]] == [None] * (len(frames) - 1)
    assert frames[-1]["scores"] == end.scores and frames[-1]["ranks"] == end.ranks
    assert frames[-1]["caption"].startswith("Game over · 1st ")
    assert data["rounds"] == [{"round": 1, "frame": 0}]


def test_an_unknown_game_is_a_replay_error() -> None:
    lines = played(5)
    header = lines[0]
    assert isinstance(header, Header)
    stranger = msgspec.structs.replace(header, game="stranger")
    with pytest.raises(replay.ReplayError, match="stranger.jsonl: unknown game 'stranger'"):
        viewer.frames([stranger, *lines[1:]], "stranger.jsonl")


# --- served and exported ----------------------------------------------------------------------

GENERIC_DRAWN = """
const root = document.getElementById("replay-viewer");
const counter = root.querySelector("[data-frame-index]");
return {
  index: counter ? Number(counter.getAttribute("data-frame-index")) : -1,
  classes: root.className,
  caption: (root.querySelector("[data-caption]") || {}).textContent,
  events: Array.from(root.querySelectorAll("[data-event] pre")).map((e) => JSON.parse(e.textContent)),
  answers: Array.from(root.querySelectorAll("[data-answer-seat]")).map((e) => e.textContent),
  seatAnswers: Array.from(root.querySelectorAll("[data-seat-answer]")).map((e) => e.textContent),
  scores: Array.from(root.querySelectorAll("[data-seat-score]")).map((e) => e.textContent),
  ranks: Array.from(root.querySelectorAll("[data-seat-rank]")).map((e) => e.textContent),
  cards: root.querySelectorAll(".card, [data-row], [data-suit]").length,
  error: root.querySelector("[role=alert]") ? root.querySelector("[role=alert]").textContent : null,
};
"""


@pytest.fixture(scope="module")
def goofspiel_board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding a finished Goofspiel tournament, made by a real ``arena
    tournament run`` of the Goofspiel bots (``helpers.goofspiel_db``)."""
    return goofspiel_db(tmp_path_factory.mktemp("goofspiel-web"))


@pytest.fixture
def game_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena`` processes started by this test (``arena serve``) know Goofspiel."""
    env = goofspiel_env()
    for name in ("ARENA_GAMES", "PYTHONPATH"):
        monkeypatch.setenv(name, env[name])


def open_viewer(browser: Any, url: str) -> dict[str, Any]:
    from .test_viewer_browser import wait_for

    browser.get(url)
    wait_for(browser, lambda: browser.execute_script(GENERIC_DRAWN)["index"] >= 0, "the viewer to draw")
    drawn: dict[str, Any] = browser.execute_script(GENERIC_DRAWN)
    return drawn


def severe_logs(browser: Any) -> list[str]:
    """The page's script errors since the last call (Chromium's console, level SEVERE)."""
    return [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def check_drawn(browser: Any, data: dict[str, Any]) -> None:
    """Frame 0, a step with its answers, and the end with scores and ranks, as data says."""
    from selenium.webdriver.common.keys import Keys

    from .test_viewer_browser import keys

    data = as_json(data)
    frames = data["frames"]
    seats = len(data["seats"])
    first: dict[str, Any] = browser.execute_script(GENERIC_DRAWN)
    assert first["error"] is None and first["cards"] == 0, "drawn as no card game"
    assert "rv-generic" in first["classes"].split()
    assert first["events"] == frames[0]["events"] and first["caption"] == frames[0]["caption"]
    assert first["scores"] == ["—"] * seats
    keys(browser, Keys.ARROW_RIGHT)
    step: dict[str, Any] = browser.execute_script(GENERIC_DRAWN)
    assert step["index"] == 1 and step["events"] == frames[1]["events"]
    said = [f"{data['seats'][a['seat']]['letter']}{json.dumps(a['answer'])}" for a in frames[1]["answers"]]
    assert step["answers"] == said
    assert step["seatAnswers"] == [f"answered {json.dumps(a['answer'])}" for a in frames[1]["answers"]]
    keys(browser, Keys.END)
    end: dict[str, Any] = browser.execute_script(GENERIC_DRAWN)
    assert end["index"] == len(frames) - 1 and end["caption"] == frames[-1]["caption"]
    assert end["scores"] == [str(s) for s in data["result"]["scores"]]
    assert end["ranks"] and end["events"][-1]["type"] == "game_end"
    assert severe_logs(browser) == []


@pytest.mark.browser
def test_a_served_game_without_web_frames_draws_its_events(
    browser: Any, goofspiel_board: Path, game_env: None, known: None
) -> None:
    severe_logs(browser)  # what earlier tests left in the console
    with serving(goofspiel_board) as site:
        with Store(goofspiel_board) as store:
            game_id = store.find_games(limit=1)[0].id
            stored = store.replay(game_id)
        data = json.loads(urllib.request.urlopen(f"{site}/api/games/{game_id}/frames", timeout=30).read())
        assert data == as_json(viewer.frames(replay.loads(stored, "stored")))
        assert data["drawer"] == "generic" and data["title"] == "Goofspiel"
        page = urllib.request.urlopen(f"{site}/games/{game_id}", timeout=30).read().decode()
        assert "higher is better" in page and "lower is better" not in page
        board = urllib.request.urlopen(f"{site}/leaderboard?game=goofspiel", timeout=30).read().decode()
        heading = GOOFSPIEL.score.per_round
        assert heading in board and NIMMT.score.per_round not in board, "the record names the column"
        open_viewer(browser, f"{site}/games/{game_id}")
        check_drawn(browser, data)


@pytest.mark.browser
def test_replay_html_of_a_game_without_web_frames_opens(browser: Any, tmp_path: Path, known: None) -> None:
    source, out = tmp_path / "goofspiel.jsonl", tmp_path / "goofspiel.html"
    lines = played(21)
    replay.write(source, lines)
    result = arena("replay", str(source), "--html", str(out), timeout=60)
    assert result.returncode == 0, result.stderr
    severe_logs(browser)
    open_viewer(browser, out.as_uri())
    check_drawn(browser, viewer.frames(lines, "goofspiel"))
    browser.set_window_size(390, 844)
    try:
        open_viewer(browser, out.as_uri())
        wide = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert browser.execute_script(wide) <= 0, "a phone-sized window scrolls sideways"
    finally:
        browser.set_window_size(1280, 900)
