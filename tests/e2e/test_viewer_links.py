"""Links into a replay, in a real browser over ``arena serve``: the URL's fragment names
the frame shown (#r2t3), stepping rewrites it in place, a fragment that names no frame
shows the first, "Copy link" copies the frame's URL, and the replay downloads."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arena.store import Store

from ..conftest import serving
from .test_viewer_browser import wait_for
from .test_web import api, fetch
from .test_web_duplicate import play_tournament

pytestmark = pytest.mark.browser

WAIT = 60.0
"""Seconds to wait for the page at most: only a guard against a hang (the machine may be busy)."""

SHOWN = """
const root = document.getElementById("replay-viewer");
const counter = root && root.querySelector("[data-frame-index]");
return {
  index: counter ? Number(counter.getAttribute("data-frame-index")) : -1,
  failed: !!(root && root.classList.contains("rv-failed")),
  hash: location.hash,
  history: history.length,
};
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """The site, the game with the most rounds, and its frames as the API serves them."""
    db = tmp_path_factory.mktemp("links") / "arena.db"
    play_tournament(db)
    with Store(db) as store:
        t = store.get_tournament("t")
        assert t is not None
        game = max(store.find_games(t.id, limit=100), key=lambda g: (g.rounds, -g.id))
    assert game.rounds >= 2
    with serving(db) as url:
        yield url, game.id, api(f"{url}/api/games/{game.id}/frames")


def open_at(browser: Any, url: str) -> dict[str, Any]:
    """Load the page afresh (a fragment alone would not reload it), once the viewer drew."""
    browser.get("about:blank")
    browser.get(url)
    wait_for(browser, lambda: browser.execute_script(SHOWN)["index"] >= 0, "the viewer to draw", WAIT)
    shown: dict[str, Any] = browser.execute_script(SHOWN)
    return shown


def first_of(frames: list[dict[str, Any]], round_no: int, turn: int) -> int:
    return next(int(f["index"]) for f in frames if (f["round"], f["turn"]) == (round_no, turn))


def test_the_fragment_opens_its_frame_and_follows_the_viewer(browser: Any, served: tuple[str, int, Any]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    site, game_id, data = served
    frames = data["frames"]
    target = first_of(frames, 2, 3)
    assert frames[target + 1]["turn"] == 3  # the turn has more than one frame: s1 is the next
    shown = open_at(browser, f"{site}/games/{game_id}#r2t3")
    assert (shown["index"], shown["hash"], shown["failed"]) == (target, "#r2t3", False)
    assert open_at(browser, f"{site}/games/{game_id}#r2t3s1")["index"] == target + 1

    before = browser.execute_script(SHOWN)["history"]
    browser.execute_script("document.activeElement && document.activeElement.blur()")
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT).send_keys(Keys.ARROW_RIGHT).perform()
    wait_for(browser, lambda: browser.execute_script(SHOWN)["index"] == target + 3, "two steps forward", WAIT)
    after = browser.execute_script(SHOWN)
    assert after["hash"] == browser.execute_script("return window.replayViewer.fragment(arguments[0])", target + 3)
    assert after["history"] == before, "stepping replaces the URL, it piles no history entry"
    # the fragment written names the frame shown: reloading it shows that frame again
    assert open_at(browser, f"{site}/games/{game_id}{after['hash']}")["index"] == target + 3

    # a fragment changed by hand moves the viewer there
    browser.execute_script("location.hash = '#r2t1'")
    wait_for(browser, lambda: browser.execute_script(SHOWN)["index"] == first_of(frames, 2, 1), "#r2t1", WAIT)


def test_every_frame_has_a_fragment_that_names_it(browser: Any, served: tuple[str, int, Any]) -> None:
    site, game_id, data = served
    open_at(browser, f"{site}/games/{game_id}")
    names = browser.execute_script(
        "const v = window.replayViewer; return v.frames.map((f, i) => [v.fragment(i), v.frameOf(v.fragment(i))]);"
    )
    assert [index for _, index in names] == list(range(len(data["frames"])))
    assert len({name for name, _ in names}) == len(names)
    assert names[0][0] == f"#r{data['frames'][0]['round']}t{data['frames'][0]['turn']}"


@pytest.mark.parametrize("fragment", ["#r99t1", "#r2t3s999", "#r2t", "#rxt1", "#main"])
def test_a_fragment_naming_no_frame_shows_the_first(browser: Any, served: tuple[str, int, Any], fragment: str) -> None:
    site, game_id, data = served
    shown = open_at(browser, f"{site}/games/{game_id}{fragment}")
    assert (shown["index"], shown["failed"]) == (0, False)
    first = data["frames"][0]
    # a frame's fragment out of range is corrected; any other (an anchor of the page) is left alone
    out_of_range = fragment in ("#r99t1", "#r2t3s999")
    assert shown["hash"] == (f"#r{first['round']}t{first['turn']}" if out_of_range else fragment)
    browser.execute_script("document.activeElement && document.activeElement.blur()")
    browser.find_element("css selector", 'button[data-action="next"]').click()
    wait_for(browser, lambda: browser.execute_script(SHOWN)["index"] == 1, "a step after a bad fragment", WAIT)


def test_copy_link_copies_the_frames_url(browser: Any, served: tuple[str, int, Any]) -> None:
    site, game_id, data = served
    browser.execute_cdp_cmd(
        "Browser.grantPermissions", {"origin": site, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}
    )
    open_at(browser, f"{site}/games/{game_id}#r2t3s2")
    expected = f"{site}/games/{game_id}#r2t3s2"
    browser.find_element("css selector", "button[data-copy-link]").click()
    said = browser.find_element("css selector", "[data-copy-status]")
    wait_for(browser, lambda: bool(said.text == "copied"), "copied", WAIT)
    field = browser.find_element("css selector", "[data-link-field]")
    if field.is_displayed():  # the clipboard refused (a headless page may hold no focus): the field copied it
        assert field.get_attribute("value") == expected
    else:
        pasted = browser.execute_async_script(
            "const done = arguments[0]; navigator.clipboard.readText().then(done, (e) => done('failed: ' + e));"
        )
        assert pasted == expected


def test_without_a_clipboard_the_link_is_in_a_field(browser: Any, served: tuple[str, int, Any]) -> None:
    site, game_id, data = served
    open_at(browser, f"{site}/games/{game_id}#r2t3")
    browser.execute_script("Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true})")
    browser.find_element("css selector", "button[data-copy-link]").click()
    field = browser.find_element("css selector", "[data-link-field]")
    wait_for(browser, lambda: field.is_displayed(), "the link's field", WAIT)
    assert field.get_attribute("value") == f"{site}/games/{game_id}#r2t3"
    assert browser.find_element("css selector", "[data-copy-status]").text in ("copied", "press Ctrl+C to copy")
    # the field follows the frame shown
    browser.find_element("css selector", 'button[data-action="next"]').click()
    wait_for(browser, lambda: field.get_attribute("value").endswith("#r2t3s1"), "the field to follow", WAIT)


def test_the_download_link_gives_the_replay(browser: Any, served: tuple[str, int, Any]) -> None:
    site, game_id, _ = served
    open_at(browser, f"{site}/games/{game_id}")
    link = browser.find_element("css selector", "a[data-download-replay]")
    assert link.text == "Download replay (.jsonl)"
    assert link.get_attribute("download") == f"game-{game_id}.jsonl"
    with urllib.request.urlopen(link.get_attribute("href"), timeout=WAIT) as got:
        assert got.headers["content-disposition"].startswith("attachment;")
        body = got.read()
    assert body == fetch(f"{site}/api/games/{game_id}/replay")[2] and body.startswith(b"{")


@pytest.fixture(autouse=True)
def _no_page_errors(browser: Any) -> Iterator[None]:
    """No script error on any page a test opened (the console's severe entries)."""
    browser.get_log("browser")
    yield
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert not errors, errors
