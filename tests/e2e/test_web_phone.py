"""Every page on a phone (390 px) and the bot page on a desktop, over a real database: a
bot with 200 games in 50 tournaments (its rating chart), faults, and opponents with
long names. Nothing pushes the page sideways, the cells that matter (scores, badges,
faults) are on screen, the chart's labels never overlap, and the bot page stays short."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena.play import replay
from arena.store import FinishedGame, SeatResult, Store
from arena.web.axis_labels import label_width, spread
from arena.web.charts import rating_chart
from arena.web.pages.bots import BOT_RECENT

from ..conftest import serving
from .test_web_faults import faults_db  # noqa: F401  (a shared fixture)

TOURNAMENTS = 50
GAMES_EACH = 4
BOT = "patient-montecarlo-planner"
OPPONENTS = (
    "the-quite-remarkably-verbose-opponent-x1",
    "another-exceedingly-long-named-rival-bot",
    "short",
)
"""Two opponents at the 40-character limit of a bot name, and one short one."""
RANKINGS = list(itertools.permutations(range(1, 5)))


def bot_folder(base: Path, name: str, version: str) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text("print('a stored bot: never run here')\n")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    return folder


def store_season(db: Path) -> None:
    """50 finished tournaments of 4 four-seat games: the bot times out every 7th game."""
    with Store(db) as store:
        bots = [store.add_bot(bot_folder(db.parent / "bots", BOT, "3.1.4"))]
        bots += [store.add_bot(bot_folder(db.parent / "bots", name, "12.10.3")) for name in OPPONENTS]
        number = 0
        for t_no in range(TOURNAMENTS):
            t = store.create_tournament(f"league-week-{t_no + 1:02d}", "nimmt", "standard", {}, t_no, {})
            for game_no in range(GAMES_EACH):
                order = bots[number % 4 :] + bots[: number % 4]  # each seat in turn
                ranks = list(RANKINGS[(number * 5 + t_no) % len(RANKINGS)])
                fault = replay.Fault("timeout", f"no answer to request {number} within 1000 ms", None, "thinking\n")
                faulty = number % 7 == 0
                statuses, results = [], []
                for seat, (bot, rank) in enumerate(zip(order, ranks, strict=True)):
                    mine = faulty and bot is bots[0]
                    statuses.append(replay.SeatStatus("faulty", [fault]) if mine else replay.SeatStatus("ok"))
                    results.append(
                        SeatResult(
                            bot.id, rank, 10 * rank + seat, "faulty" if mine else "ok", {"timeout": 1} if mine else {}
                        )
                    )
                seats = [replay.SeatInfo(b.name, b.version, "process") for b in order]
                header = replay.Header(1, "nimmt", {}, number, 4, seats, {"move_ms": 1000})
                end = replay.End([r.score for r in results], ranks, statuses, [""] * 4)
                lines: list[Any] = [header]
                if faulty:
                    lines.append(replay.FaultLine(order.index(bots[0]), fault))
                data = replay.dumps([*lines, end])
                started = f"2026-{1 + t_no // 28:02d}-{1 + t_no % 28:02d}T10:{game_no:02d}:00+00:00"
                store.save_game(
                    FinishedGame(
                        t.id, game_no, 0, game_no, number, "nimmt", "standard", 10, 1.0, started, results, data
                    )
                )
                number += 1
            store.set_status(t.id, "finished")


@pytest.fixture(scope="module")
def season_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("phone") / "arena.db"
    store_season(db)
    os.chmod(db.parent, 0o755)
    return db


@pytest.fixture(scope="module")
def site(season_db: Path) -> Iterator[str]:
    with serving(season_db) as url:
        yield url


# --- the chart's labels, as numbers ---------------------------------------------------------


def test_drawn_labels_are_never_closer_than_their_width() -> None:
    """Any number of points and label lengths: the labels kept do not touch, stay in the
    chart, and the newest point always has one."""
    for count in range(1, 81):
        for length in (2, 9, 14):
            spacing = 572 / count
            centres = [52 + (i + 0.5) * spacing for i in range(count)]
            widths = [label_width("w" * length, 12)] * count
            placed = spread(centres, widths, 0, 640)
            assert placed and placed[-1][0] == count - 1, (count, length)
            for (i, x), (j, y) in itertools.pairwise(placed):
                assert i < j and y - x >= (widths[i] + widths[j]) / 2 - 0.1, (count, length, i, j)
            assert all(widths[i] / 2 - 0.1 <= x <= 640 - widths[i] / 2 + 0.1 for i, x in placed)


def test_fifty_tournaments_get_a_few_labels_and_every_point_its_name() -> None:
    points = [
        {"tournament": f"league-week-{n:02d}", "elo": 1500.0 + n, "low": 1450.0, "high": 1560.0 + n}
        for n in range(1, 51)
    ]
    chart = rating_chart(points)
    wide, narrow = chart["labels"], chart["narrow_labels"]
    assert 3 <= len(narrow) < len(wide) < 50, "thinned, fewer on a phone"
    assert wide[-1]["text"] == narrow[-1]["text"] == "league-week-50", "the newest is labelled"
    assert [p["tournament"] for p in chart["points"]] == [p["tournament"] for p in points]


# --- in the browser ---------------------------------------------------------------------------

IMPORTANT = {
    "/": "td .badge, td.num",
    "/leaderboard": "table.board td.elo, table.board td:last-child",
    "/tournaments": "td .badge, td.num",
    "/tournaments/league-week-50": "table.board td:last-child, table.games .score, table.games .badge",
    "/bots": "td.num",
    f"/bots/{BOT}:3.1.4": "table.sortable td.num, table.games .score, table.games .badge, text.label-narrow",
    f"/games?bot={BOT}:3.1.4": "table.games .score, table.games .badge",
    "/games/1": "table.seats-table td",
}
"""Per page kind, the cells that matter: scores, ranks, badges, fault counts."""

OFF_SCREEN = """
const width = document.documentElement.clientWidth;
const cells = Array.from(document.querySelectorAll(arguments[0]));
const off = cells.filter((c) => { const r = c.getBoundingClientRect();
  return r.width === 0 || r.height === 0 || r.left < -0.5 || r.right > width + 0.5; })
  .map((c) => c.textContent.trim().slice(0, 40));
return [document.documentElement.scrollWidth, width, cells.length, off];
"""


@contextmanager
def phone(browser: Any) -> Iterator[None]:
    """The browser as a 390 px wide phone (overlay scrollbars, a device scale of 3)."""
    metrics = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def drawn_labels(browser: Any) -> list[tuple[float, float, str]]:
    """The rating chart's labels as displayed: left, right, text, left to right."""
    boxes = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.rating-chart text.label'))"
        ".filter((t) => getComputedStyle(t).display !== 'none')"
        ".map((t) => { const r = t.getBoundingClientRect(); return [r.left, r.right, t.textContent]; })"
    )
    return sorted((float(a), float(b), str(c)) for a, b, c in boxes)


@pytest.mark.browser
def test_every_page_fits_a_phone_with_what_matters_on_screen(browser: Any, site: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    with phone(browser):
        for path, important in IMPORTANT.items():
            browser.get(site + path)
            WebDriverWait(browser, 20).until(lambda b: b.execute_script("return document.readyState") == "complete")
            scroll, width, cells, off = browser.execute_script(OFF_SCREEN, important)
            assert width == 390, "the viewport is the phone's"
            assert scroll <= width, f"{path}: the page is {scroll} px wide on a {width} px phone"
            assert cells >= 3, f"{path}: {important} found {cells} cells"
            assert not off, f"{path}: off screen or hidden: {off}"


@pytest.mark.browser
def test_the_chart_of_fifty_tournaments_has_labels_that_do_not_overlap(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By

    def check() -> list[tuple[float, float, str]]:
        labels = drawn_labels(browser)
        assert len(labels) >= 3 and labels[-1][2] == "league-week-50"
        for (_, right, a), (left, _, b) in itertools.pairwise(labels):
            assert right <= left, f"{a} and {b} overlap"
        return labels

    browser.get(f"{site}/bots/{BOT}:3.1.4")
    titles = [t.get_attribute("textContent") for t in browser.find_elements(By.CSS_SELECTOR, "g.point title")]
    assert [t.split(":")[0] for t in titles] == [f"league-week-{n:02d}" for n in range(1, TOURNAMENTS + 1)]
    desktop = check()
    with phone(browser):
        browser.get(f"{site}/bots/{BOT}:3.1.4")
        narrow = check()
        font = browser.execute_script(
            "const t = Array.from(document.querySelectorAll('svg.rating-chart text.label'))"
            ".find((t) => getComputedStyle(t).display !== 'none'); return t.getBoundingClientRect().height"
        )
        assert font >= 10, f"labels {font} px tall on a phone: readable"
    assert len(narrow) < len(desktop)


@pytest.mark.browser
def test_the_bot_page_is_under_2000_px_on_a_desktop(browser: Any, site: str, faults_db: Path) -> None:  # noqa: F811
    """Was ~2,900 px (a 426 px chart section, 20 recent games, for the bot with 58 faults):
    now the facts, opponents and times beside a shorter chart, fewer recent games
    without the match and rounds columns, and a link to all of them."""
    from selenium.webdriver.common.by import By

    def height() -> int:
        width, tall = browser.execute_script("return [window.innerWidth, document.documentElement.scrollHeight]")
        assert width == 1280
        return int(tall)

    size = browser.get_window_size()
    try:
        browser.set_window_size(1280, 900)
        browser.get(f"{site}/bots/{BOT}:3.1.4")
        assert height() < 2000, f"the bot page is {height()} px tall"
        rows = browser.find_elements(By.CSS_SELECTOR, "table.games tbody tr")
        assert len(rows) == BOT_RECENT and "#200" in rows[0].text
        chart = browser.find_element(By.CSS_SELECTOR, "svg.rating-chart")
        opponents = browser.find_element(By.ID, "opponents-heading")
        assert chart.location["y"] < opponents.location["y"] + 200, "the chart beside the opponents"
        assert chart.location["x"] > opponents.location["x"] + 300
        more = browser.find_element(By.CSS_SELECTOR, "#recent-heading a.more")
        assert f"all {TOURNAMENTS * GAMES_EACH} games" in more.text
        more.click()
        assert f"bot={BOT}" in browser.current_url
        assert len(browser.find_elements(By.CSS_SELECTOR, "table.games tbody tr")) > BOT_RECENT
        with serving(faults_db) as url:
            browser.get(f"{url}/bots/random:1.0.0")
            assert height() < 2000, f"the page of the bot with 58 faults is {height()} px tall"
    finally:
        browser.set_window_size(size["width"], size["height"])


@pytest.mark.browser
def test_the_bot_page_says_where_it_stands_and_its_headings_are_words_on_a_desktop(browser: Any, site: str) -> None:
    """The facts say where the bot stands now (its Elo with its interval and its rank, as
    the leaderboard has them); the opponents table's headings are words at 1280 px and
    the abbreviations only on a phone."""
    import json
    import urllib.request

    from selenium.webdriver.common.by import By

    with urllib.request.urlopen(f"{site}/api/leaderboard?board=nimmt/standard", timeout=30) as response:
        rows = json.loads(response.read())["boards"][0]["rows"]
    mine = next(r for r in rows if r["bot"] == f"{BOT}:3.1.4")
    size = browser.get_window_size()

    def headings() -> list[str]:
        """Each heading as shown: its short label where that is displayed (the full one is
        then only for screen readers), else its words."""
        shown: list[str] = browser.execute_script(
            "return Array.from(document.querySelectorAll('#opponents-heading ~ .table-scroll thead th'), (th) => {"
            " const short = th.querySelector('.label-short'), full = th.querySelector('.label-full');"
            " if (short && getComputedStyle(short).display !== 'none') return short.textContent.trim();"
            " return (full || th).textContent.trim(); })"
        )
        return shown

    try:
        browser.set_window_size(1280, 900)
        browser.get(f"{site}/bots/{BOT}:3.1.4")
        stands = browser.find_element(By.CSS_SELECTOR, "ul.standing").text
        assert f"Elo {mine['elo']:.0f} (95% interval {mine['low']:.0f}–{mine['high']:.0f})" in stands, stands
        assert f"rank {mine['rank']} of {len(rows)}" in stands, stands
        assert headings() == ["Opponent", "Games", "Ahead", "Behind", "Tied", "Ahead %"], headings()
        table = browser.find_element(By.CSS_SELECTOR, "#opponents-heading ~ .table-scroll")
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", table)
        with phone(browser):
            browser.get(f"{site}/bots/{BOT}:3.1.4")
            assert headings() == ["Opponent", "G", "A", "B", "T", "A%"], headings()
    finally:
        browser.set_window_size(size["width"], size["height"])
