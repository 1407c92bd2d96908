"""The ratings explained on ``arena serve``, and a gauntlet's page.

Boards stored by hand with each warning of the ratings (few deal groups, a bot that won
every comparison, bots that never met) and one with none: the explanation is on every
board, each warning where it applies and nowhere else. Then a real ``arena gauntlet``
run: its page's LLR path is the one the command reports, a point per deal group, drawn
against the test's bounds in a real browser.
"""

from __future__ import annotations

import html
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.store import FinishedGame, SeatResult, Store, board_settings
from arena.tournaments.gauntlet import Reading, llr_series
from arena.web.charts import llr_chart
from arena.web.pages.gauntlets import decision_of
from arena.web.rating_caveats import board_caveats, row_marks
from leaderboard.sprt import Sprt, llr, sequential

from ..conftest import SAMPLES, serving
from .test_web import api, fetch, page

ARENA = str(Path(sys.executable).parent / "arena")
PLENTY = "nimmt/standard"
"""Three equal bots, 12 deal groups: no warning."""
FEW = "nimmt/standard,end_score=30"
"""The same bots, 3 deal groups."""
SWEEP = "nimmt/standard,shedding"
"""heuristic wins every game of 10 groups; the other two share the rest."""
APART = "nimmt/standard,rounds=1"
"""heuristic against random, lowest against a fourth bot: two parts never met."""
NAMES = {"plenty": PLENTY, "few": FEW, "sweep": SWEEP, "apart": APART}
"""The tournament of each board."""


# --- pure: the caveats, the chart, the LLR path -------------------------------------------


def row(bot: str, groups: int = 12, bound: str = "", component: int = 0, note: str = "") -> dict[str, Any]:
    return {"bot": bot, "groups": groups, "bound": bound, "component": component, "note": note}


def test_each_caveat_names_the_bots_it_concerns() -> None:
    assert board_caveats([row("a"), row("b")]) == [], "a well-measured board carries no warning"
    few = board_caveats([row("a", 3), row("b", 3)])
    assert [c["kind"] for c in few] == ["few"] and "every bot" in few[0]["text"] and few[0]["bots"] == ["a", "b"]
    mixed = board_caveats([row("a", 20, ">"), row("b", 20), row("c", 2, "", 1), row("d", 20, "<", 1)])
    assert [(c["kind"], c["bots"]) for c in mixed] == [("few", ["c"]), ("bound", ["a", "d"]), ("apart", ["c", "d"])]
    bound = mixed[1]["text"]
    assert bound.startswith("a won every comparison; d lost every comparison.")
    assert "2 groups of bots" in mixed[2]["text"]
    marks = row_marks(mixed)
    assert [m["short"] for m in marks["c"]] == ["few groups", "own scale"] and "b" not in marks
    assert [m["kind"] for m in marks["a"]] == ["bound"]
    # One deal group gives no interval at all: its note says so, and it is few.
    assert board_caveats([row("a", 1, note="one deal group: no interval")])[0]["kind"] == "few"


def test_the_llr_chart_has_a_point_per_group_between_its_bounds() -> None:
    series = [0.4, -0.3, 1.2, 2.5, 3.1]
    chart = llr_chart(series, -2.94, 2.94)
    assert [p["group"] for p in chart["points"]] == [1, 2, 3, 4, 5]
    assert chart["upper"]["y"] < chart["zero"] < chart["lower"]["y"], "H1's bound above 0, H0's below"
    assert chart["top"] <= chart["upper"]["y"] and chart["lower"]["y"] <= chart["bottom"]
    assert all(
        chart["left"] < p["x"] <= chart["right"] and chart["top"] <= p["y"] <= chart["bottom"] for p in chart["points"]
    )
    assert [p["y"] for p in chart["points"]][3] < chart["points"][1]["y"], "a higher LLR is drawn higher"
    start = [float(v) for v in chart["line"].split()[0].split(",")]
    assert start == [chart["left"], chart["zero"]], "the path starts at 0 before any group"
    assert len(chart["line"].split()) == len(series) + 1
    below = llr_chart([-4.0], -2.94, 2.94)
    assert below["top"] <= below["points"][0]["y"] <= below["bottom"], "a path beyond a bound stays on the chart"


def test_the_llr_series_is_the_tests_path_to_its_decision() -> None:
    test = Sprt(0, 200)
    scores = [1.0, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]
    decision = sequential(scores, test)
    reading = Reading(2, 1, scores, decision, 2 * len(scores), 200)
    series = llr_series(reading, test)
    assert decision.verdict == "H1" and len(series) == decision.groups < len(scores), "stops where it decided"
    assert series == pytest.approx([llr(scores[: i + 1], 0, 200) for i in range(decision.groups)], abs=1e-9)
    assert series[-1] == pytest.approx(decision.llr) and series[-1] >= test.upper > max(series[:-1])
    empty = Reading(2, 1, [], sequential([], test), 0, 200)
    assert llr_series(empty, test) == []


def test_decisions() -> None:
    assert decision_of("H0", True, True) == "H0"
    assert decision_of("", True, True) == "inconclusive" and decision_of("", True, False) == "done"
    assert decision_of("", False, True) == "undecided"


# --- boards with and without warnings, over HTTP --------------------------------------------


def store_boards(db: Path) -> None:
    """One tournament per board, a game per deal group, as a tournament stores them."""
    fourth = db.parent / "fourth"
    shutil.copytree(SAMPLES / "random", fourth)
    toml = fourth / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "random"', 'name = "fourth"'))
    with Store(db) as store:
        a, b, c, d = (
            store.add_bot(folder) for folder in (*(SAMPLES / n for n in ("heuristic", "random", "lowest")), fourth)
        )
        trio = [a, b, c]
        orders = list(itertools.permutations(trio))
        boards = {
            PLENTY: orders * 2,
            FEW: [orders[0], orders[3], orders[4]],  # each bot first, second and third once
            SWEEP: [(a, b, c) if g % 2 else (a, c, b) for g in range(10)],
            APART: [pair for g in range(10) for pair in (((a, b) if g % 2 else (b, a)), ((c, d) if g % 2 else (d, c)))],
        }
        for (name, key), games in zip(NAMES.items(), boards.values(), strict=True):
            variant = key.partition("/")[2]
            t = store.create_tournament(name, "nimmt", variant, board_settings("nimmt", variant), 1, {})
            for number, order in enumerate(games):
                seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(order, 1)]
                record = FinishedGame(
                    t.id, number, 0, 0, number, "nimmt", variant, 1, 1.0, "2026-01-01T00:00:00+00:00", seats, b"{}"
                )
                store.save_game(record)


@pytest.fixture(scope="module")
def boards_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("ratings") / "arena.db"
    store_boards(db)
    return db


@pytest.fixture(scope="module")
def site(boards_db: Path) -> Iterator[str]:
    with serving(boards_db) as url:
        yield url


def board_page(site: str, key: str) -> str:
    return html.unescape(page(f"{site}/leaderboard?{urllib.parse.urlencode({'board': key})}"))


def bot_cell(text: str, bot: str) -> str:
    """The board's cell of ``bot``: its name and the marks beside it."""
    found = re.search(rf'<td data-value="{re.escape(bot)}">(.*?)</td>', text, re.S)
    assert found, bot
    return found.group(1)


EXPECTED = {PLENTY: [], FEW: ["few"], SWEEP: ["bound"], APART: ["apart"]}


def test_the_warnings_are_where_they_apply_and_nowhere_else(site: str) -> None:
    for key, kinds in EXPECTED.items():
        (board,) = api(f"{site}/api/leaderboard?{urllib.parse.urlencode({'board': key})}")["boards"]
        assert [c["kind"] for c in board["caveats"]] == kinds, key
        text = board_page(site, key)
        assert "<summary>How to read this</summary>" in text and "1500 is the mean" in text, key
        for kind in ("few", "bound", "apart"):
            callouts = text.count(f'class="caveat caveat-{kind}"')
            assert callouts == (kind in kinds), (key, kind)
        concerned = {bot for c in board["caveats"] for bot in c["bots"]}
        for r in board["rows"]:
            marked = 'class="mark' in bot_cell(text, r["bot"])
            assert marked == (r["bot"] in concerned), (key, r["bot"])
        for note in {r["note"] for r in board["rows"] if r["note"]}:
            assert text.count(f"<li>{note} (") == 1, ("each note once, as before", key, note)
    rows = {r["bot"]: r for r in api(f"{site}/api/leaderboard?board={SWEEP}")["boards"][0]["rows"]}
    assert rows["heuristic:1.0.0"]["bound"] == ">" and math.isfinite(rows["heuristic:1.0.0"]["low"])
    sweep = board_page(site, SWEEP)
    assert ">bound only</span>" in bot_cell(sweep, "heuristic:1.0.0")
    assert "heuristic:1.0.0 won every comparison" in sweep
    few = board_page(site, FEW)
    assert "The intervals of every bot rest on fewer than 8 deal groups" in few
    assert all(
        ">few groups</span>" in bot_cell(few, bot) for bot in ("heuristic:1.0.0", "random:1.0.0", "lowest:1.0.0")
    )
    apart = board_page(site, APART)
    (board,) = api(f"{site}/api/leaderboard?board={APART}")["boards"]
    second = sorted(r["bot"] for r in board["rows"] if r["component"] == 1)
    assert len(second) == 2 and all(">own scale</span>" in bot_cell(apart, bot) for bot in second)
    assert (
        apart.index('class="caveat caveat-apart"')
        < apart.index("part 1 of 2")
        < apart.index("never played those above")
    )
    # The whole leaderboard: every board with its own callouts, the explanation once.
    everything = html.unescape(page(f"{site}/leaderboard"))
    assert everything.count("<summary>How to read this</summary>") == 1
    assert everything.count('class="caveat caveat-') == 3


def test_a_tournaments_standings_carry_the_explanation_and_its_warnings(site: str) -> None:
    few = html.unescape(page(f"{site}/tournaments/few"))
    assert "<summary>How to read this</summary>" in few and 'class="caveat caveat-few"' in few
    assert 'data-caveats-for="standings"' in few, "the live page updates the callouts"
    plenty = html.unescape(page(f"{site}/tournaments/plenty"))
    assert "<summary>How to read this</summary>" in plenty and 'class="caveat ' not in plenty
    assert api(f"{site}/api/tournaments/few")["standings"]["caveats"][0]["kind"] == "few"
    status, _, body = fetch(f"{site}/api/gauntlets/plenty")
    assert status == 404 and b"is a round robin, not a gauntlet" in body


# --- a gauntlet's page, after a real run ------------------------------------------------------


def run_arena(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_PROGRESS_SECONDS": "0"}  # a running line after every batch
    result = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def gauntlet_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """heuristic against random and lowest, heads-up, a loose test: decided in a few groups.
    Returns the database and the command's output."""
    db = tmp_path_factory.mktemp("gauntlet") / "arena.db"
    bots = [str(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
    common = ["--sandbox", "local", "--db", str(db)]
    played = run_arena("gauntlet", bots[0], "--vs", *bots[1:], "--sprt", "elo0=0,elo1=200", "--max-games", "200",
                       "--seed", "5", "--name", "g", *common)  # fmt: skip
    run_arena("gauntlet", bots[2], "--vs", bots[1], "--deals", "1", "--seed", "3", "--name", "fixed", *common)
    return db, played.stdout


@pytest.fixture(scope="module")
def gauntlet_site(gauntlet_db: tuple[Path, str]) -> Iterator[str]:
    with serving(gauntlet_db[0]) as url:
        yield url


def test_the_gauntlet_page_is_the_commands_reading(gauntlet_site: str, gauntlet_db: tuple[Path, str]) -> None:
    db, out = gauntlet_db
    data = api(f"{gauntlet_site}/api/gauntlets/g")
    series, groups = data["llr"], data["groups"]
    assert data["decision"] == data["verdict"] == "H1" and groups == len(series) > 0
    assert data["test"] == {"elo0": 0.0, "elo1": 200.0, "alpha": 0.05, "beta": 0.05,
                            "lower": pytest.approx(-2.944, abs=1e-3), "upper": pytest.approx(2.944, abs=1e-3)}  # fmt: skip
    # The running lines and the verdict of `arena gauntlet`: the LLR after that many groups.
    lines = re.findall(r"groups (\d+) · games \d+ · LLR (-?\d+\.\d\d)", out)
    assert lines, out
    for counted, value in lines:
        if int(counted):
            assert f"{series[int(counted) - 1]:.2f}" == value, (counted, value, series)
    assert f"LLR {series[-1]:.2f} >= 2.94 after {groups} deal groups" in out
    again = run_arena("gauntlet", "--resume", "--name", "g", "--db", str(db), "--sandbox", "local").stdout
    assert data["verdict_text"] in again and data["verdict_text"].startswith("H1 accepted")
    assert f"> {data['against_each'][0]['low']:+.0f}" in again or data["against_each"][0]["text"] in again
    assert all(v["games"] > 0 and v["text"] in again for v in data["against_each"])

    text = html.unescape(page(f"{gauntlet_site}/gauntlets/g"))
    assert text.count('<circle class="group"') == groups, "a point per deal group"
    assert re.search(r'class="bound bound-upper"[^>]*data-value="2\.944', text)
    assert re.search(r'class="bound bound-lower"[^>]*data-value="-2\.944', text)
    assert data["verdict_text"] in text and ">H1 accepted</span>" in text
    assert f"{series[-1]:.3f}" in text.split('id="llr-table"')[1], "the numbers under the chart"
    assert 'href="/tournaments/g"' in text
    assert 'href="/gauntlets/g"' in page(f"{gauntlet_site}/tournaments/g")
    listed = page(f"{gauntlet_site}/tournaments")
    assert 'href="/gauntlets/g"' in listed and 'href="/gauntlets/fixed"' in listed

    fixed = api(f"{gauntlet_site}/api/gauntlets/fixed")
    assert fixed["test"] is None and fixed["llr"] == [] and fixed["decision"] == "done" and fixed["games"] == 2
    assert fixed["verdict_text"].startswith("done: 1 deal group, 2 games")
    shown = page(f"{gauntlet_site}/gauntlets/fixed")
    assert "llr-chart" not in shown and "fixed: 1 deal per table" in shown
    status, _, body = fetch(f"{gauntlet_site}/api/gauntlets/nothing")
    assert status == 404 and b"no gauntlet 'nothing'" in body
    assert "/api/gauntlets/NAME" in api(f"{gauntlet_site}/api")["endpoints"]


def test_the_llr_chart_renders_in_a_browser(browser: Any, gauntlet_site: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    groups = api(f"{gauntlet_site}/api/gauntlets/g")["groups"]
    browser.get_log("browser")  # what earlier tests left in the shared browser's log
    browser.get(f"{gauntlet_site}/gauntlets/g")
    chart = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "llr-chart"))
    assert chart.is_displayed() and chart.size["width"] > 300 and chart.size["height"] > 100
    upper = chart.find_element(By.CSS_SELECTOR, "line.bound-upper").rect
    lower = chart.find_element(By.CSS_SELECTOR, "line.bound-lower").rect
    assert upper["width"] > 200 and lower["width"] > 200, "the bounds span the chart"
    assert upper["y"] < lower["y"], "H1's bound is drawn above H0's"
    points = chart.find_elements(By.CSS_SELECTOR, "circle.group")
    assert len(points) == groups and all(p.is_displayed() for p in points)
    last = points[-1].rect
    assert last["y"] <= upper["y"] + upper["height"] + last["height"], "the decisive point reaches H1's bound"
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors
