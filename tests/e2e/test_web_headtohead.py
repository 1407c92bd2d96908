"""The head-to-head matrix: every pair of bots of a board, the row bot's score share
against the column bot, games and LOS. The tally on its own (shares, ties, LOS, no
games), then ``arena serve`` over a real database of hand-stored games (its JSON and its
pages), then Chromium: the matrix is drawn, coloured, and a board of 30 bots scrolls
inside its own box with the row names in view."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from arena.boards.standings import head_to_head
from arena.store import FinishedGame, SeatResult, Store
from leaderboard.headtohead import matrix, pair_los, score_share, tally

from ..conftest import SAMPLES, serving
from .test_web import api, page

PHI_1 = 0.5 * (1 + math.erf(1 / math.sqrt(2)))
"""The chance a standard normal is below 1: the LOS of 3 wins to 1 loss."""


# --- the tally --------------------------------------------------------------------------------


def blocks_of(games: list[tuple[list[int], list[int]]]) -> list[tuple[Any, Any]]:
    """Games (seat bots, seat ranks) as the tally takes them: one block per number of seats."""
    sizes: dict[int, list[tuple[list[int], list[int]]]] = {}
    for game in games:
        sizes.setdefault(len(game[0]), []).append(game)
    return [(np.array([b for b, _ in same]), np.array([r for _, r in same])) for same in sizes.values()]


FIVE_GAMES = [([0, 1, 2], [1, 2, 3])] * 3 + [([0, 1, 2], [2, 1, 3]), ([0, 1, 2], [1, 1, 3])]
"""Bot 0 ahead of bot 1 three times, behind once, tied once; bot 2 last every time."""


def test_the_tally_counts_wins_losses_ties_and_games() -> None:
    found = tally(["a", "b", "c"], blocks_of(FIVE_GAMES))
    assert (found.wins[0][1], found.losses(0, 1), found.ties[0][1], found.games[0][1]) == (3, 1, 1, 5)
    assert (found.wins[1][0], found.losses(1, 0), found.ties[1][0], found.games[1][0]) == (1, 3, 1, 5)
    assert (found.wins[0][2], found.losses(0, 2), found.wins[2][1]) == (5, 0, 0)
    assert found.games[2][2] == 5 and found.wins[0][0] == found.ties[0][0] == 0


def test_games_of_different_sizes_add_up_and_a_bot_in_two_seats_is_one_game() -> None:
    games = [([0, 1], [2, 1]), ([0, 1, 2], [1, 3, 2]), ([0, 0, 1], [1, 3, 2])]
    found = tally(["a", "b", "c"], blocks_of(games))
    # a against b: behind, ahead, then from its two seats one ahead and one behind
    assert (found.wins[0][1], found.losses(0, 1), found.games[0][1]) == (2, 2, 3)
    assert (found.wins[2][1], found.games[2][1], found.games[0][2]) == (1, 1, 1)
    assert found.wins[0][0] == found.ties[0][0] == 0, "a bot never plays itself"


def test_score_share_counts_a_tie_as_half() -> None:
    assert score_share(3, 1, 1) == pytest.approx(0.7)
    assert score_share(0, 0, 4) == 0.5
    assert score_share(0, 2, 0) == 0.0
    assert score_share(0, 0, 0) is None


def test_los_ignores_ties_and_is_undefined_without_decided_games() -> None:
    assert pair_los(3, 1) == pytest.approx(PHI_1)
    assert pair_los(1, 0) == pytest.approx(PHI_1)
    assert pair_los(0, 4) == pytest.approx(0.5 * (1 + math.erf(-2 / math.sqrt(2))))  # 0.0228
    assert pair_los(7, 7) == 0.5
    assert pair_los(0, 0) is None


def test_the_matrix_follows_the_order_with_a_blank_diagonal() -> None:
    games = [*FIVE_GAMES, ([3, 2], [1, 1])]  # d met c only, in a tie
    found = tally(["a", "b", "c", "d"], blocks_of(games))
    out = matrix(found, ["c", "gone", "a"])  # a bot no longer in the tally is left out
    assert out["bots"] == ["c", "a", "b", "d"], "the order given first, the rest by name"
    assert all(out[name][i][i] is None for name in out if name != "bots" for i in range(4))
    c, a, b, d = range(4)
    assert out["share"][a][b] == 0.7 and out["share"][b][a] == 0.3
    assert out["los"][a][b] == round(PHI_1, 4) and out["los"][b][a] == round(1 - PHI_1, 4)
    assert (out["games"][a][b], out["wins"][a][b], out["losses"][a][b], out["ties"][a][b]) == (5, 3, 1, 1)
    assert out["share"][c][a] == 0.0 and out["los"][a][c] == pytest.approx(0.9873, abs=1e-4)
    assert out["share"][d][c] == 0.5 and out["los"][d][c] is None, "ties only: no LOS"
    assert out["games"][a][d] == 0 and out["share"][a][d] is None and out["los"][a][d] is None


def test_no_games_no_matrix() -> None:
    assert matrix(tally([], []), ["a"]) == {
        "bots": [],
        "games": [],
        "wins": [],
        "losses": [],
        "ties": [],
        "share": [],
        "los": [],
    }
    idle = matrix(tally(["a", "b"], []), [])
    assert idle["games"] == [[None, 0], [0, None]] and idle["share"] == [[None, None], [None, None]]


# --- a real database: two tournaments of one board ------------------------------------------


def store_games(db: Path) -> None:
    """Tournament "h2h": ``FIVE_GAMES`` between heuristic, random and lowest; tournament
    "rematch": random ahead of heuristic twice, and montecarlo ahead of lowest once
    (montecarlo meets no one else)."""
    with Store(db) as store:
        bots = {name: store.add_bot(SAMPLES / name) for name in ("heuristic", "random", "lowest", "montecarlo")}
        first = store.create_tournament("h2h", "nimmt", "standard", {}, 1, {})
        second = store.create_tournament("rematch", "nimmt", "standard", {}, 2, {})
        blank = FinishedGame(first.id, 0, 0, 0, 0, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", [], b"{}")
        played = [(first.id, ["heuristic", "random", "lowest"], ranks) for _, ranks in FIVE_GAMES]
        played += [(second.id, ["heuristic", "random"], [2, 1])] * 2 + [(second.id, ["montecarlo", "lowest"], [1, 2])]
        for number, (tournament_id, names, ranks) in enumerate(played):
            seats = [SeatResult(bots[n].id, rank, 10 * rank, "ok", {}) for n, rank in zip(names, ranks, strict=True)]
            store.save_game(
                msgspec.structs.replace(blank, tournament_id=tournament_id, match_no=number, seed=number, seats=seats)
            )


@pytest.fixture(scope="module")
def h2h_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("h2h") / "arena.db"
    store_games(db)
    return db


@pytest.fixture(scope="module")
def refs(h2h_db: Path) -> dict[str, str]:
    with Store(h2h_db) as store:
        return {b.name: b.ref for b in store.list_bots()}


@pytest.fixture(scope="module")
def site(h2h_db: Path) -> Iterator[str]:
    with serving(h2h_db) as url:
        yield url


def cell(h2h: dict[str, Any], row: str, column: str) -> dict[str, Any]:
    i, j = h2h["bots"].index(row), h2h["bots"].index(column)
    return {name: h2h[name][i][j] for name in ("games", "wins", "losses", "ties", "share", "los")}


def test_the_tally_agrees_with_the_opponents_table(h2h_db: Path) -> None:
    with Store(h2h_db) as store:
        found = head_to_head(store)
        index = {bot: i for i, bot in enumerate(found.bots)}
        for bot in store.list_bots():
            for other, games, ahead, behind, tied in store.opponents(bot.id):
                i, j = index[bot.ref], index[other]
                assert (found.games[i][j], found.wins[i][j], found.losses(i, j), found.ties[i][j]) == (
                    games,
                    ahead,
                    behind,
                    tied,
                ), (bot.ref, other)


def test_each_board_of_the_leaderboard_has_its_matrix(site: str, refs: dict[str, str]) -> None:
    board = api(f"{site}/api/leaderboard")["boards"][0]
    h2h = board["head_to_head"]
    assert h2h["bots"] == [r["bot"] for r in board["rows"]], "the board's rank order"
    heuristic, random_, lowest, montecarlo = (refs[n] for n in ("heuristic", "random", "lowest", "montecarlo"))
    # over both tournaments: 3 ahead, 1 behind, 1 tied, then behind twice more
    assert cell(h2h, heuristic, random_) == {"games": 7, "wins": 3, "losses": 3, "ties": 1, "share": 0.5, "los": 0.5}
    assert cell(h2h, montecarlo, lowest) == {"games": 1, "wins": 1, "losses": 0, "ties": 0, "share": 1.0, "los": 0.8413}
    never = cell(h2h, heuristic, montecarlo)
    assert never == {"games": 0, "wins": 0, "losses": 0, "ties": 0, "share": None, "los": None}
    assert cell(h2h, heuristic, heuristic) == dict.fromkeys(never, None)


def test_a_tournament_has_the_matrix_of_its_own_games(site: str, refs: dict[str, str]) -> None:
    standings = api(f"{site}/api/tournaments/h2h")["standings"]
    h2h = standings["head_to_head"]
    assert sorted(h2h["bots"]) == sorted(refs[n] for n in ("heuristic", "random", "lowest"))
    assert h2h["bots"] == [r["bot"] for r in standings["rows"]]
    ahead = cell(h2h, refs["heuristic"], refs["random"])
    assert ahead == {"games": 5, "wins": 3, "losses": 1, "ties": 1, "share": 0.7, "los": 0.8413}
    behind = cell(h2h, refs["random"], refs["heuristic"])
    assert behind == {"games": 5, "wins": 1, "losses": 3, "ties": 1, "share": 0.3, "los": 0.1587}
    assert cell(h2h, refs["lowest"], refs["random"])["share"] == 0.0
    chosen = api(f"{site}/api/leaderboard?tournament=h2h")["boards"][0]["head_to_head"]
    assert chosen == h2h, "the leaderboard of one tournament shows the same matrix"


class Matrices(HTMLParser):
    """The head-to-head tables of a page: caption, column heads, and per row its bot and
    its cells (text, title)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self._in: str | None = None
        self._title = ""
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and "h2h" in (found.get("class") or "").split():
            self.tables.append({"id": found.get("id"), "caption": "", "columns": [], "rows": []})
        elif self.tables and tag in ("caption", "th", "td"):
            self._in, self._title, self._text = tag, found.get("title") or "", []
            if tag == "th" and found.get("scope") == "row":
                self._in = "row"
                self.tables[-1]["rows"].append({"bot": "", "cells": []})

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if not self.tables or self._in is None or tag not in ("caption", "th", "td"):
            if tag == "table" and self.tables:
                self._in = None
            return
        text, table = "".join(self._text).strip(), self.tables[-1]
        if self._in == "caption":
            table["caption"] = text
        elif self._in == "th":
            table["columns"].append(text)
        elif self._in == "row":
            table["rows"][-1]["bot"] = text
        elif self._in == "td":
            table["rows"][-1]["cells"].append((text, self._title))
        self._in = None


def matrices(url: str) -> list[dict[str, Any]]:
    parser = Matrices()
    parser.feed(page(url))
    return parser.tables


def test_the_pages_hold_the_matrix_as_a_labelled_table(site: str, refs: dict[str, str]) -> None:
    board = api(f"{site}/api/leaderboard")["boards"][0]
    [shown] = matrices(f"{site}/leaderboard")
    assert "head to head" in shown["caption"] and board["label"] in shown["caption"]
    order = board["head_to_head"]["bots"]
    assert [r["bot"] for r in shown["rows"]] == order and shown["columns"][1:] == order
    i, j = order.index(refs["heuristic"]), order.index(refs["random"])
    text, title = shown["rows"][i]["cells"][j]
    assert text == "50%" and title.endswith(": 3 ahead, 3 behind, 1 tied in 7 games · LOS 50%")
    assert shown["rows"][i]["cells"][i] == ("", ""), "the diagonal is blank"
    never = shown["rows"][i]["cells"][order.index(refs["montecarlo"])]
    assert never[0] == "—" and "never played together" in never[1]

    [standings] = matrices(f"{site}/tournaments/h2h")
    assert standings["id"] == "head-to-head" and "h2h" in standings["caption"]
    order = [r["bot"] for r in standings["rows"]]
    i, j = order.index(refs["heuristic"]), order.index(refs["random"])
    assert standings["rows"][i]["cells"][j] == (
        "70%",
        f"{refs['heuristic']} against {refs['random']}: 3 ahead, 1 behind, 1 tied in 5 games · LOS 84%",
    )
    assert standings["rows"][j]["cells"][i][0] == "30%"


# --- in the browser ----------------------------------------------------------------------------


def rgb(color: str) -> tuple[int, ...]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as numbers."""
    return tuple(int(float(part)) for part in color[color.index("(") + 1 : -1].split(",")[:3])


@pytest.mark.browser
def test_the_matrix_is_drawn_and_coloured_on_both_pages(browser: Any, site: str, refs: dict[str, str]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    for path, shown in (("/leaderboard", "in 7 games"), ("/tournaments/h2h", "in 5 games")):
        browser.get(site + path)
        table = WebDriverWait(browser, 20, poll_frequency=0.2).until(
            lambda b: b.find_element(By.CSS_SELECTOR, "table.h2h")
        )
        assert table.is_displayed(), path
        pair = table.find_element(By.CSS_SELECTOR, f'td[title^="{refs["heuristic"]} against {refs["random"]}"]')
        assert pair.is_displayed() and shown in (pair.get_attribute("title") or "")
    ahead = browser.find_element(By.CSS_SELECTOR, f'td[title^="{refs["heuristic"]} against {refs["random"]}"]')
    behind = browser.find_element(By.CSS_SELECTOR, f'td[title^="{refs["random"]} against {refs["heuristic"]}"]')
    assert (ahead.text, behind.text) == ("70%", "30%")
    r, _, b = rgb(ahead.value_of_css_property("background-color"))
    assert b > r, f"a share above half is blue: {ahead.value_of_css_property('background-color')}"
    r, _, b = rgb(behind.value_of_css_property("background-color"))
    assert r > b, f"a share below half is orange: {behind.value_of_css_property('background-color')}"


def store_many(db: Path, folders: Path, bots: int = 30, games: int = 240) -> None:
    """``games`` 4-seat games among ``bots`` bots with long names, ranks drawn at random."""
    rng = random.Random(16)
    with Store(db) as store:
        stored = []
        for n in range(bots):
            folder = folders / f"bot{n}"
            folder.mkdir()
            (folder / "bot.py").write_text("")
            manifest = f'name = "contender-with-a-long-name-{n:02}"\nversion = "0.1"\nlanguage = "python"\n'
            (folder / "bot.toml").write_text(manifest + 'run = "python3 bot.py"\ngames = ["nimmt"]\n')
            stored.append(store.add_bot(folder))
        t = store.create_tournament("crowd", "nimmt", "standard", {}, 1, {})
        blank = FinishedGame(t.id, 0, 0, 0, 0, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", [], b"{}")
        for number in range(games):
            seated = rng.sample(stored, 4)
            ranks = sorted(rng.sample(range(1, 5), 4), key=lambda _: rng.random())
            seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for bot, rank in zip(seated, ranks, strict=True)]
            store.save_game(msgspec.structs.replace(blank, match_no=number, seed=number, seats=seats))


@pytest.mark.browser
def test_a_matrix_of_30_bots_scrolls_in_its_own_box(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    db = tmp_path / "crowd.db"
    store_many(db, tmp_path)
    with serving(db) as url:
        h2h = api(f"{url}/api/tournaments/crowd")["standings"]["head_to_head"]
        assert len(h2h["bots"]) == 30
        browser.get(f"{url}/tournaments/crowd")
        table = WebDriverWait(browser, 20, poll_frequency=0.2).until(
            lambda b: b.find_element(By.CSS_SELECTOR, "table#head-to-head")
        )
        box = table.find_element(By.XPATH, "..")
        sizes = browser.execute_script(
            "const box = arguments[0];"
            "return [box.scrollWidth, box.clientWidth, document.documentElement.scrollWidth, window.innerWidth];",
            box,
        )
        assert sizes[0] > sizes[1], f"the matrix is wider than its box, which scrolls: {sizes}"
        assert sizes[2] <= sizes[3], f"the page itself does not scroll sideways: {sizes}"
        first = table.find_element(By.CSS_SELECTOR, 'tbody th[scope="row"]')
        browser.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth;", box)
        WebDriverWait(browser, 10, poll_frequency=0.2).until(
            lambda b: b.execute_script("return arguments[0].scrollLeft;", box) > 0
        )
        left = browser.execute_script(
            "return [arguments[0].getBoundingClientRect().left, arguments[1].getBoundingClientRect().left];",
            first,
            box,
        )
        assert abs(left[0] - left[1]) <= 1, f"the row names stay in view when the box scrolls: {left}"
        assert first.is_displayed() and first.text.startswith("contender-with-a-long-name-")
