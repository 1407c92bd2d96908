"""The web's pages of a game registered from outside (Liar's dice, ``tests/games/liars_dice``,
through ``ARENA_GAMES``): every heading, caption and filter names the game by its
record's title, never by its name. Real tournaments (real ``arena`` processes, real bot
processes in the local sandbox, a real SQLite file), a real ``arena serve`` and Chromium."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games.registry import ENV

from ..conftest import serving
from ..games.liars_dice.helpers import arena, liars_bots, liars_env
from ..games.liars_dice.record import ENV_VALUE
from .test_web import page

TITLE = "Liar's dice"
NAME = "liars-dice"

HEADING = re.compile(r"<(title|h1|h2|h3|caption|figcaption|option|dd|strong|th|td)\b[^>]*>(.*?)</\1>", re.S)
TAG = re.compile(r"<[^>]+>")
KEY = re.compile(r'<span class="muted">\([^<]*\)</span>')
"""A board's key beside its title, ``(liars-dice/standard)``: the name to type, shown as such."""


def headings(text: str) -> list[str]:
    """The words of a page's title, headings, captions, options, facts and cells (tags and the
    keys beside titles taken out)."""
    return [html.unescape(TAG.sub("", KEY.sub("", m.group(2)))).strip() for m in HEADING.finditer(text)]


@pytest.fixture(scope="module")
def dice_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Liar's dice tournaments on two boards: the default rules and two dice a seat."""
    base = tmp_path_factory.mktemp("liars-web")
    bots = liars_bots(base / "bots")
    db = base / "liars.db"
    for name, extra in (("dice", ()), ("two", ("--set", "dice=2"))):
        ran = arena("tournament", "run", *map(str, bots), "--game", NAME, "--table-size", "2", "--deals", "1",
                    "--sandbox", "local", "--db", str(db), "--name", name, "--seed", "9", *extra)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    return db


@pytest.fixture
def site(dice_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``arena serve`` with the game registered, as its users would run it."""
    for key, value in liars_env().items():
        if key in (ENV, "PYTHONPATH"):
            monkeypatch.setenv(key, value)
    assert ENV_VALUE in liars_env()[ENV]
    with serving(dice_db) as url:
        yield url


def test_every_heading_says_the_games_title(site: str) -> None:
    board = html.unescape(page(f"{site}/leaderboard?game={NAME}"))
    assert f"<title>Leaderboard {TITLE} · Six Arena</title>" in board, "two boards: the game's title"
    for path in ("/", f"/leaderboard?game={NAME}", "/tournaments", "/tournaments/dice", "/tournaments/two",
                 "/bots/liar:1.0.0", "/games", "/games/1"):  # fmt: skip
        shown = headings(page(site + path))
        assert any(TITLE in words for words in shown), (path, shown)
        assert not [words for words in shown if NAME in words], (path, shown)
    bot = headings(page(f"{site}/bots/liar:1.0.0"))
    assert TITLE in bot, "the games it plays, by title"
    games = html.unescape(page(f"{site}/games"))
    assert f'<option value="{NAME}/standard">{TITLE}</option>' in games, "the filter: title shown, key sent"
    assert f'<option value="{NAME}/standard,dice=2">{TITLE} · dice=2</option>' in games


@pytest.mark.browser
def test_the_games_filter_offers_the_title_in_chromium(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{site}/games")
    form = browser.find_element(By.CSS_SELECTOR, "form.games-filters")
    choice = Select(form.find_element(By.NAME, "board"))
    assert [o.text for o in choice.options] == ["any", TITLE, f"{TITLE} · dice=2"]
    choice.select_by_visible_text(TITLE)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait = WebDriverWait(browser, 20)
    wait.until(lambda b: f"board={NAME}%2Fstandard" in b.current_url or f"board={NAME}/standard" in b.current_url)
    assert Select(browser.find_element(By.NAME, "board")).first_selected_option.text == TITLE
    rows = browser.find_elements(By.CSS_SELECTOR, "table.games tbody tr")
    assert len(rows) == 2, "the default board's games only: one deal in both rotations"
    assert NAME not in browser.title and NAME not in browser.find_element(By.TAG_NAME, "h1").text
