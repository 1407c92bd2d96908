"""The site in a real browser (Debian's headless Chromium through Selenium) against
``arena serve``: what the leaderboard shows, sorting, the live tournament page, the bot
page's chart, a phone-sized screen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.boards.columns import interval_text
from arena.boards.standings import leaderboard
from arena.store import Store

from ..conftest import SAMPLES, serving
from .test_boards import warned_db  # noqa: F401  (a shared fixture)
from .test_web import NIMMT, SLOW_CODE, bot_folder, tournament_args, web_db, work  # noqa: F401  (shared fixtures)
from .test_web_faults import faults_db  # noqa: F401  (a shared fixture)
from .test_web_ladder import assert_games_redrawn_whole

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(web_db: Path) -> Iterator[str]:  # noqa: F811
    with serving(web_db) as url:
        yield url


def board_rows(browser: Any) -> list[list[str]]:
    """The visible leaderboard: per row, the text of each cell as rendered (of the bot's
    cell, its name: the marks beside it are the warnings', tested in test_web_ratings)."""
    rows: list[list[str]] = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.board tbody tr'),"
        " (row) => Array.from(row.cells, (cell, i) =>"
        " (i === 1 && cell.querySelector('a') ? cell.querySelector('a') : cell).innerText.trim()))"
    )
    return rows


def test_the_leaderboard_shows_the_stored_ratings(browser: Any, site: str, web_db: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    with Store(web_db) as store:
        stored = leaderboard(store, "nimmt", NIMMT)
    assert all(s.bound == "" and s.low < s.elo < s.high for s in stored), "two-sided intervals only"
    browser.get(f"{site}/leaderboard?game=nimmt&variant={NIMMT}")
    rows = board_rows(browser)
    assert [(r[0], r[1], r[2]) for r in rows] == [(str(s.rank), s.bot, f"{s.elo:.0f}") for s in stored]
    assert [r[3] for r in rows] == [interval_text(s) for s in stored]
    assert [r[4] for r in rows] == [str(s.games) for s in stored]
    bars = browser.find_elements(By.CSS_SELECTOR, "table.board svg.errorbar")
    assert len(bars) == len(stored)
    for bar, row in zip(bars, stored, strict=True):
        assert bar.get_attribute("aria-label") == f"Elo {row.elo:.0f}, 95% interval {row.low:.0f} to {row.high:.0f}"
        assert bar.size["width"] > 40, "the bar is drawn at a readable width"
        whiskers = [float(line.get_attribute("x1")) for line in bar.find_elements(By.CSS_SELECTOR, ".whisker")]
        point = float(bar.find_element(By.CSS_SELECTOR, ".point").get_attribute("x1"))
        assert whiskers[0] <= point <= whiskers[1]


def test_a_bound_is_an_open_bar_and_a_missing_interval_says_why(browser: Any, warned_db: Path) -> None:  # noqa: F811
    """One deal group of shedding: the bot that won every game shows "> N" and a bar open
    to the right, the one that lost every game a bar open to the left, a bot without an
    interval its Elo alone; the notes are on the page."""
    from selenium.webdriver.common.by import By

    from .test_boards import ONCE, boards

    rows = boards(warned_db, "--board", ONCE)[ONCE]
    with serving(warned_db) as url:
        browser.get(f"{url}/leaderboard?board={ONCE}")
        shown = board_rows(browser)
        assert [r[1] for r in shown] == [r["bot"] for r in rows]
        bars = browser.find_elements(By.CSS_SELECTOR, "table.board svg.errorbar")
        for row, cells, bar in zip(rows, shown, bars, strict=True):
            assert bar.is_displayed() and bar.size["width"] > 40
            ranges = bar.find_elements(By.CSS_SELECTOR, ".range")
            whiskers = bar.find_elements(By.CSS_SELECTOR, ".whisker")
            arrows = bar.find_elements(By.CSS_SELECTOR, ".arrow")
            point = float(bar.find_element(By.CSS_SELECTOR, ".point").get_attribute("x1"))
            if row["bound"]:  # its bound is its rating: the fit would grow with every game swept
                assert cells[2] == cells[3] and row["elo"] is None and "none" not in bar.get_attribute("aria-label")
                point_at = row["low"] if row["bound"] == ">" else row["high"]
                assert point == float(bar.find_element(By.CSS_SELECTOR, ".range").get_attribute(
                    "x1" if row["bound"] == ">" else "x2"
                )), ("the point is drawn at the bound", point_at)  # fmt: skip
            if row["bound"] == ">":
                assert cells[3] == f"> {row['low']:.0f}"
                (line,) = ranges
                assert float(line.get_attribute("x2")) == 100 and len(whiskers) == 1 and len(arrows) == 1
                assert float(whiskers[0].get_attribute("x1")) == float(line.get_attribute("x1")) < 100
                assert "lower bound" in bar.get_attribute("aria-label")
            elif row["bound"] == "<":
                assert cells[3] == f"< {row['high']:.0f}"
                (line,) = ranges
                assert float(line.get_attribute("x1")) == 0 and len(whiskers) == 1 and len(arrows) == 1
            else:
                assert cells[3] == "—" and not ranges and not whiskers and not arrows
                assert 0 <= point <= 100 and row["note"] in bar.get_attribute("aria-label")
        assert {r["bound"] for r in rows} == {">", "<", ""}, "each kind is drawn"
        notes = browser.find_element(By.CSS_SELECTOR, "ul.board-notes")
        assert notes.is_displayed()
        for row in rows:
            assert row["note"] in notes.text
        ci = browser.find_element(By.XPATH, "//th[contains(., '95%')]//button")
        ci.click()  # sort by width: the open bars are the widest, no interval the narrowest
        assert [r[3] for r in board_rows(browser)][-1] == "—"


def test_clicking_a_heading_sorts_the_table(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{site}/leaderboard?game=nimmt&variant={NIMMT}")
    ranked = [r[1] for r in board_rows(browser)]

    def click(heading: str) -> None:
        for th in browser.find_elements(By.CSS_SELECTOR, "table.board thead th"):
            if th.text.startswith(heading):
                th.find_element(By.TAG_NAME, "button").click()
                return
        raise AssertionError(f"no heading {heading}")

    click("Bot")
    assert [r[1] for r in board_rows(browser)] == sorted(ranked)
    click("Bot")
    assert [r[1] for r in board_rows(browser)] == sorted(ranked, reverse=True)
    header = browser.find_element(By.CSS_SELECTOR, "table.board thead th:nth-child(2)")
    assert header.get_attribute("aria-sort") == "descending"
    click("Wins")
    wins = [int(r[5]) for r in board_rows(browser)]
    assert wins == sorted(wins, reverse=True)
    click("#")
    assert [r[1] for r in board_rows(browser)] == ranked[::-1], "from ascending rank to descending"


def test_the_bot_page_draws_its_rating_chart(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{site}/bots/heuristic:1.0.0")
    chart = browser.find_element(By.CSS_SELECTOR, "svg.rating-chart")
    assert chart.size["width"] > 200 and chart.size["height"] > 80
    assert len(chart.find_elements(By.CSS_SELECTOR, "g.point circle")) == 1, "one tournament of 6 nimmt!"
    assert "Elo of heuristic:1.0.0" in chart.get_attribute("aria-label")
    faults = browser.find_element(By.ID, "faults").find_element(By.XPATH, "..")
    assert "No faults" in faults.text
    browser.get(f"{site}/bots/faulty:0.1")
    record = browser.find_elements(By.CSS_SELECTOR, "li.fault")  # repeated faults are one entry, ×N
    counts = [int(m.group(1)) if (m := re.search(r"×(\d+)", r.text)) else 1 for r in record]
    assert sum(counts) == 18 and "illegal" in record[0].text and '"answer":999' in record[0].text


def test_a_bot_with_58_faults_is_a_short_page(browser: Any, faults_db: Path) -> None:  # noqa: F811
    """Grouped, a page of groups at a time, the newest group's evidence open and each
    fault's stderr cut to its end: the fault record of a bot with 58 faults (37 timeouts
    with 40 lines of stderr each) stays short (it was 4,000 px, the whole page is ~2,900
    with its chart and 20 recent games)."""
    from selenium.webdriver.common.by import By

    size = browser.get_window_size()
    try:
        browser.set_window_size(1280, 900)
        with serving(faults_db) as url:
            browser.get(f"{url}/bots/random:1.0.0")
            width, height = browser.execute_script(
                "return [window.innerWidth, document.getElementById('faults').parentElement.offsetHeight]"
            )
            assert 1200 <= width <= 1280 and height < 1000, f"the fault record is {height} px tall"
            assert len(browser.find_elements(By.CSS_SELECTOR, "li.fault")) == 10
            tail = browser.find_element(By.CSS_SELECTOR, "pre.stderr-tail")
            assert tail.is_displayed() and tail.text.endswith("stuck in search at game 57")
            assert "first stderr line" not in tail.text
            browser.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
            assert len(browser.find_elements(By.CSS_SELECTOR, "li.fault")) == 4
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_a_phone_sized_screen_shows_the_leaderboard_without_overflow(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By

    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 844)
        for path in ("/leaderboard", "/tournaments/cup", "/bots/faulty:0.1", "/"):
            browser.get(site + path)
            width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            assert inner <= 420, "the window is phone-sized"
            assert width <= inner, f"{path}: the page is {width} px wide in a {inner} px window"
        browser.get(site + "/leaderboard")
        assert browser.find_element(By.CSS_SELECTOR, "table.board svg.errorbar").is_displayed()
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_the_tournament_page_updates_live(browser: Any, work: Path) -> None:  # noqa: F811
    """While a tournament runs, the page's count of games grows without a reload."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    base = work / "browser-bots"
    base.mkdir()
    os.chmod(base, 0o755)
    slow = bot_folder(base, "slowpoke", SLOW_CODE.format(pause=0.02))
    db = work / "browser-live.db"
    with serving(db) as url:
        proc = subprocess.Popen(
            tournament_args(db, "live", SAMPLES / "heuristic", SAMPLES / "random", slow, deals=3),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while True:  # wait until it has stored a game, then open its page
                assert time.monotonic() < deadline, "the tournament stored no game"
                try:
                    with urllib.request.urlopen(f"{url}/api/tournaments/live", timeout=5) as response:
                        if json.loads(response.read())["games_done"] >= 1:
                            break
                except OSError:
                    pass
                time.sleep(0.1)
            browser.get(f"{url}/tournaments/live")
            browser.execute_script("window.notReloaded = true")
            first = int(browser.find_element(By.CSS_SELECTOR, '[data-field="games_done"]').text)
            assert first < 9, "the tournament is still running"
            WebDriverWait(browser, 30, poll_frequency=0.2).until(
                lambda b: int(b.find_element(By.CSS_SELECTOR, '[data-field="games_done"]').text) > first
            )
            WebDriverWait(browser, 60, poll_frequency=0.2).until(
                lambda b: (
                    b.find_element(By.CSS_SELECTOR, "article.tournament").get_attribute("data-status") == "finished"
                )
            )
            assert browser.execute_script("return window.notReloaded") is True, "no reload happened"
            assert browser.find_element(By.CSS_SELECTOR, '[data-field="games_done"]').text == "9"
            assert browser.find_element(By.CSS_SELECTOR, "progress").get_attribute("value") == "9"
            standings = browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")
            assert len(standings) == 3 and len(browser.find_elements(By.CSS_SELECTOR, "#standings svg.errorbar")) == 3
            assert len(browser.find_elements(By.CSS_SELECTOR, "#tournament-games tbody tr")) == 9
            assert_games_redrawn_whole(browser)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_the_game_page_replays_a_stored_game(browser: Any, site: str, web_db: Path) -> None:  # noqa: F811
    """Step the served viewer through a stored game: at several moments it draws the rows
    and scores the rules give for the stored replay."""
    from arena.play import replay
    from arena.web import viewer

    from .test_viewer_browser import DRAWN, go_to, open_page

    with Store(web_db) as store:
        game_id = next(row.id for row in store.find_games(limit=50) if row.game == "nimmt")
        lines = replay.loads(store.replay(game_id), f"game {game_id}")
    data = viewer.frames(lines)
    ends, last = [], -1
    for step in replay.verify(lines, "stored"):
        last += len(step.events)
        ends.append((last, step.state))
    open_page(browser, f"{site}/games/{game_id}")
    assert browser.execute_script(DRAWN)["rows"] == data["frames"][0]["rows"]
    for index, state in (ends[3], ends[len(ends) // 2], ends[-2]):
        drawn = go_to(browser, data, index)
        assert drawn["index"] == index
        assert drawn["rows"] == [list(row) for row in state.rows]
        assert drawn["scores"] == list(state.scores)
