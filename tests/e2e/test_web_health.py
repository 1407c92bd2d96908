"""A tournament's health on its page, its JSON and the tournaments list: running (its last
game a moment ago), stalled, interrupted or killed (with the command that resumes it),
finished. Real database files and the real server."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.store import FinishedGame, SeatResult, Store, Tournament
from arena.web.pages.tournaments import tournament_health

from ..conftest import SAMPLES, serving
from .test_web import api, page


def at(seconds_ago: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds_ago)).isoformat(timespec="seconds")


def tournaments_with_games(db: Path, started: dict[str, float], status: dict[str, str]) -> dict[str, int]:
    """A tournament per name in ``started``, each with three games (of 3 s wall time, the median), the
    newest started that many seconds ago; stored with the ``status`` given (running if
    none). Their ids."""
    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("random", "lowest")]
        seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(bots, 1)]
        ids = {}
        for name, seconds_ago in started.items():
            t = store.create_tournament(name, "nimmt", "standard", {}, 1, {})
            for number, wall_ms in enumerate((2000.0, 3000.0, 4000.0)):
                game = FinishedGame(
                    t.id, 0, number, number, 1, "nimmt", "standard", 1, wall_ms, at(seconds_ago + 60 - 30 * number),
                    seats, b"{}",
                )  # fmt: skip
                store.save_game(game)
            if status.get(name, "running") != "running":
                store.set_status(t.id, status[name])
            ids[name] = t.id
        return ids


def test_a_killed_tournament_is_interrupted_with_its_resume_command(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    made = time.time()
    tournaments_with_games(db, {"killed": 5, "stopped": 5}, {"stopped": "interrupted"})
    resume = f"arena tournament run --resume --name killed --db {db}"
    with serving(db) as url:
        health = api(f"{url}/api/tournaments/killed")["health"]
        assert health["state"] == "interrupted" and health["resume"] == resume
        assert health["text"] == f"interrupted · stopped without a word (killed?) · resume with: {resume}"
        assert health["last_game_started"] is not None
        assert 4 <= health["last_game_ago_s"] <= 5 + (time.time() - made) + 1, "started 5 s before it was stored"
        shown = page(f"{url}/tournaments/killed")
        assert f'<code class="resume" data-field="resume">{resume}</code>' in shown
        assert "stopped without a word (killed?)" in shown and 'data-status="interrupted"' in shown
        assert "updates live" not in shown
        stopped = api(f"{url}/api/tournaments/stopped")["health"]
        assert stopped["text"] == f"interrupted · resume with: arena tournament run --resume --name stopped --db {db}"
        listed = {t["name"]: t["health"]["state"] for t in api(f"{url}/api/tournaments")["tournaments"]}
        assert listed == {"killed": "interrupted", "stopped": "interrupted"}
        assert 'data-value="interrupted"' in page(f"{url}/tournaments")


def test_a_finished_tournament_is_finished_without_a_resume(tmp_path: Path) -> None:
    db = tmp_path / "finished.db"
    tournaments_with_games(db, {"done": 3600}, {"done": "finished"})
    with serving(db) as url:
        health = api(f"{url}/api/tournaments/done")["health"]
        assert (health["state"], health["text"], health["resume"]) == ("finished", "finished", None)
        shown = page(f"{url}/tournaments/done")
        assert 'data-status="finished"' in shown and "updates live" not in shown and "--resume" not in shown


def test_a_held_tournament_is_running_or_stalled(tmp_path: Path) -> None:
    db = tmp_path / "held.db"
    made = time.time()
    ids = tournaments_with_games(db, {"busy": 5, "stuck": 3 * 3600}, {})
    with Store(db) as store, store.lease(ids["busy"]), store.lease(ids["stuck"]), serving(db) as url:
        busy = api(f"{url}/api/tournaments/busy")["health"]
        assert busy["state"] == "running" and busy["resume"] is None
        assert 4 <= busy["last_game_ago_s"] <= 5 + (time.time() - made) + 1, busy  # started 5 s before it was stored
        assert busy["text"] == f"running · last game {busy['last_game_ago_s']:.0f} s ago"
        shown = page(f"{url}/tournaments/busy")
        assert 'data-status="running"' in shown and "· updates live" in shown and "running · last game" in shown
        stuck = api(f"{url}/api/tournaments/stuck")["health"]
        assert stuck["state"] == "stalled" and stuck["resume"] is None
        assert stuck["text"] == "stalled · no game for 3 h (a game takes about 3 s)"
        assert "· updates live" in page(f"{url}/tournaments/stuck")
        listed = {t["name"]: t["health"]["state"] for t in api(f"{url}/api/tournaments")["tournaments"]}
        assert listed == {"busy": "running", "stuck": "stalled"}
    with serving(db) as url:  # the lease given up: stored as running, run by nobody
        assert api(f"{url}/api/tournaments/busy")["health"]["state"] == "interrupted"


def test_stalled_is_much_longer_than_a_game_takes() -> None:
    t = Tournament(1, "t", "nimmt", "standard", {}, 1, {"gauntlet": {}}, "running", "2026-01-01T00:00:00+00:00", None)
    now = dt.datetime(2026, 1, 1, 1, tzinfo=dt.UTC).timestamp()
    last = "2026-01-01T00:59:00+00:00"
    # 60 s without a game: slow games (10 s each) make that normal, 120 s is the least.
    assert tournament_health(t, True, last, [10_000.0], Path("a.db"), now).state == "running"
    assert tournament_health(t, True, last, [1_000.0], Path("a.db"), now).state == "running"
    slow = tournament_health(t, True, "2026-01-01T00:50:00+00:00", [20_000.0, 40_000.0, 35_000.0], Path("a.db"), now)
    assert slow.state == "running", "10 min, and 20 games of 35 s are longer"
    stalled = tournament_health(t, True, "2026-01-01T00:48:00+00:00", [3_000.0], Path("a.db"), now)
    assert stalled.text == "stalled · no game for 12 min (a game takes about 3 s)"
    fresh = msgspec.structs.replace(t, created="2026-01-01T00:59:30+00:00")
    assert tournament_health(fresh, True, None, [], Path("a.db"), now).text == "running · no game yet"
    assert (
        tournament_health(t, True, None, [], Path("a.db"), now).text == "stalled · no game for 60 min since it started"
    )
    killed = tournament_health(t, False, last, [], Path("a.db"), time.time())
    assert killed.resume == "arena gauntlet --resume --name t --db a.db", "a gauntlet resumes as one"


@pytest.mark.browser
def test_the_page_stops_polling_once_the_tournament_is_interrupted(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    db = tmp_path / "browser-health.db"
    ids = tournaments_with_games(db, {"live": 5}, {})
    with Store(db) as store, serving(db) as url:
        with store.lease(ids["live"]):
            browser.get(f"{url}/tournaments/live")
            article = browser.find_element(By.CSS_SELECTOR, "article.tournament")
            assert article.get_attribute("data-status") == "running"
            WebDriverWait(browser, 10, poll_frequency=0.2).until(lambda b: article.get_attribute("data-updated"))
            assert article.get_attribute("data-polling") == "on"
            assert "updates live" in browser.find_element(By.CSS_SELECTOR, '[data-field="live_note"]').text
        # The lease given up, the tournament still stored as running: it was killed.
        WebDriverWait(browser, 10, poll_frequency=0.2).until(
            lambda b: article.get_attribute("data-status") == "interrupted"
        )
        assert article.get_attribute("data-polling") == "stopped"
        resume = browser.find_element(By.CSS_SELECTOR, 'code[data-field="resume"]')
        assert resume.is_displayed() and resume.text == f"arena tournament run --resume --name live --db {db}"
        assert "killed?" in browser.find_element(By.CSS_SELECTOR, '[data-field="health_text"]').text
        assert browser.find_element(By.CSS_SELECTOR, '[data-field="live_note"]').text == ""
        updated = article.get_attribute("data-updated")
        time.sleep(3.5)  # more than two polls' time: none came
        assert article.get_attribute("data-updated") == updated
