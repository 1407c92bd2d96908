"""The leaderboard page follows the database while it is open (a real browser, the real
``arena`` command): a deleted tournament's bots and a removed bot leave its boards
without a reload, even when the newest game of the board is still there, and a board
marked as being updated is redrawn once it is."""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import SAMPLES, serving

pytestmark = pytest.mark.browser

ARENA = str(Path(sys.executable).parent / "arena")
WAIT = 60
"""Seconds a change may take to show: the page's refresh period is 10 s (2 s while a
board is being updated); the margin holds on a busy machine."""


def arena(*args: str) -> str:
    run = subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


def fresh_bot(base: Path) -> tuple[Path, str]:
    """A copy of the random sample under a new name (nothing cached can stand in for it)."""
    name = "fresh-" + secrets.token_hex(4)
    folder = base / name
    shutil.copytree(SAMPLES / "random", folder)
    toml = folder / "bot.toml"
    text = toml.read_text()
    toml.write_text(text.replace('name = "random"', f'name = "{name}"'))
    assert f'name = "{name}"' in toml.read_text()
    return folder, name + ":1.0.0"


def board_bots(browser: Any) -> list[str]:
    found: list[str] = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.board tbody tr td:nth-child(2) a'), (a) => a.textContent)"
    )
    return ["".join(name.split()) for name in found]


def test_the_leaderboard_page_follows_deletions_and_updates(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    db = tmp_path / "arena.db"
    fresh, fresh_ref = fresh_bot(tmp_path)
    common = ["--sandbox", "local", "--db", str(db), "--deals", "1", "--seed", "3"]
    heuristic, random_bot, lowest = (str(SAMPLES / n) for n in ("heuristic", "random", "lowest"))
    arena("tournament", "run", heuristic, str(fresh), "--name", "t0", *common)
    arena("tournament", "run", heuristic, random_bot, "--name", "t1", *common)
    arena("tournament", "run", heuristic, lowest, "--name", "t2", *common)  # the newest games
    with serving(db) as url:
        browser.get(url + "/leaderboard")
        browser.execute_script("window.notReloaded = true")
        assert sorted(board_bots(browser)) == sorted(["heuristic:1.0.0", "random:1.0.0", "lowest:1.0.0", fresh_ref])

        arena("tournament", "delete", "t1", "--db", str(db), "--yes")
        WebDriverWait(browser, WAIT, poll_frequency=0.5).until(lambda b: "random:1.0.0" not in board_bots(b))
        assert "t1" not in browser.find_element("css selector", "main").text.split("Tournament")[0]

        arena("bot", "remove", fresh_ref, "--with-games", "--db", str(db))
        WebDriverWait(browser, WAIT, poll_frequency=0.5).until(lambda b: fresh_ref not in board_bots(b))
        assert sorted(board_bots(browser)) == ["heuristic:1.0.0", "lowest:1.0.0"]

        # New games: the board may be served as being updated first; the page redraws
        # itself until it is not, with the new games rated.
        arena("tournament", "run", lowest, random_bot, "--name", "t3", *common)
        WebDriverWait(browser, WAIT, poll_frequency=0.5).until(
            lambda b: "random:1.0.0" in board_bots(b) and not b.find_elements("css selector", "table.board .stale")
        )
        assert browser.execute_script("return window.notReloaded") is True, "redrawn, not reloaded"
        assert int(browser.execute_script("return document.body.dataset.redrawn")) >= 3
