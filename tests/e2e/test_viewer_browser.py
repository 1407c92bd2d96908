"""The replay viewer in a real browser (Debian's headless Chromium): the exported page
opens from disk, and what it draws at each moment is the replay's own state."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from arena.play import replay
from arena.web import viewer

from .test_viewer import played

pytestmark = pytest.mark.browser

DRAWN = """
const root = document.getElementById("replay-viewer");
const cards = (el) => Array.from(el.querySelectorAll(".card[data-card]")).map((c) => c.getAttribute("data-card"));
const counter = root.querySelector("[data-frame-index]");
return {
  index: counter ? Number(counter.getAttribute("data-frame-index")) : -1,
  playing: root.getAttribute("data-playing"),
  caption: (root.querySelector("[data-caption]") || {}).textContent,
  rows: Array.from(root.querySelectorAll("[data-row]")).map((r) => cards(r).map(Number)),
  hands: Array.from(root.querySelectorAll("[data-hand]")).map(cards),
  revealed: Array.from(root.querySelectorAll("[data-reveal] .card")).map((c) => Number(c.dataset.card)),
  scores: Array.from(root.querySelectorAll("[data-seat-score]")).map((e) => Number(e.textContent)),
  suits: Array.from(root.querySelectorAll("[data-suit]")).map(cards),
  pot: root.querySelector("[data-pot]") ? Number(root.querySelector("[data-pot]").textContent) : null,
  labels: Array.from(root.querySelectorAll("[data-row] .card")).map((c) => c.getAttribute("aria-label")),
  times: Array.from(root.querySelectorAll("[data-seat-time]")).map((e) => e.firstChild.textContent),
  banks: Array.from(root.querySelectorAll("[data-seat-bank]")).map((e) => e.textContent),
  notes: Array.from(root.querySelectorAll("[data-seat-notes]")).map((e) => e.textContent),
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
};
"""


def export(kind: str, folder: Path) -> tuple[Path, dict[str, Any], list[Any]]:
    """The standalone page of a real game, its frames, and the rules' steps."""
    lines = replay.read(played(kind))
    page = folder / f"{kind}.html"
    page.write_text(viewer.standalone_html(lines, kind), encoding="utf-8")
    return page, viewer.frames(lines, kind), list(replay.verify(lines, kind))


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any], list[Any]]]:
    folder = tmp_path_factory.mktemp("viewer")
    return {kind: export(kind, folder) for kind in ("standard", "sixes", "faulty")}


def open_page(browser: Any, url: str) -> None:
    browser.get(url)
    wait_for(browser, lambda: browser.execute_script(DRAWN)["index"] >= 0, "the viewer to start")


def wait_for(browser: Any, ready: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Until ``ready()``; ``timeout`` only guards against a hang (the machine may be busy)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def keys(browser: Any, *pressed: str) -> dict[str, Any]:
    """Press keys on the page (nothing focused), then read what it draws."""
    from selenium.webdriver.common.action_chains import ActionChains

    browser.execute_script("document.activeElement && document.activeElement.blur()")
    chain = ActionChains(browser)
    for key in pressed:
        chain.send_keys(key)
    chain.perform()
    drawn: dict[str, Any] = browser.execute_script(DRAWN)
    return drawn


def go_to(browser: Any, data: dict[str, Any], target: int) -> dict[str, Any]:
    """Reach frame ``target`` the way a spectator would: Home and ``]`` to the nearest
    round start (or End), then the arrows frame by frame."""
    from selenium.webdriver.common.keys import Keys

    last = len(data["frames"]) - 1
    starts = [(r["frame"], [Keys.HOME, *["]"] * i]) for i, r in enumerate(data["rounds"])] + [(last, [Keys.END])]
    start, pressed = min(starts, key=lambda s: abs(target - s[0]))
    arrow = Keys.ARROW_RIGHT if target >= start else Keys.ARROW_LEFT
    return keys(browser, *pressed, *[arrow] * abs(target - start))


def assert_nimmt_frame(drawn: dict[str, Any], frame: dict[str, Any]) -> None:
    assert drawn["index"] == frame["index"]
    assert drawn["caption"] == frame["caption"]
    assert drawn["rows"] == frame["rows"]
    assert drawn["hands"] == [[str(c) for c in hand] for hand in frame["hands"]]
    assert drawn["revealed"] == [card for card, _ in frame["revealed"]]
    assert drawn["scores"] == frame["scores"]


def test_stepping_shows_the_rules_state_at_several_moments(browser: Any, pages: dict[str, Any]) -> None:
    from selenium.webdriver.common.keys import Keys

    page, data, steps = pages["standard"]
    frames = data["frames"]
    open_page(browser, page.as_uri())
    assert_nimmt_frame(browser.execute_script(DRAWN), frames[0])
    # the last frame of a step is where the rules' state is known: pick some of them,
    # including the end of a round and a turn paused for a row choice
    ends, last = [], -1
    for step in steps:
        last += len(step.events)
        ends.append((last, step.state))
    starts = [r["frame"] for r in data["rounds"]]
    near = [i for i, _ in ends if min(abs(i - s) for s in starts) <= 12]  # a few key presses away
    chosen = next(i for i in near if frames[i]["kind"] == "reveal" and frames[i + 1]["move"]["chosen"])
    round_end = next(i for i, f in enumerate(frames) if f["kind"] == "round_end" and f["round"] == 2)
    sixth = next(i for i, f in enumerate(frames) if f["move"] and f["move"].get("sixth"))
    targets = sorted({chosen, round_end, round_end + 1, sixth, near[len(near) // 2], ends[-2][0]})
    states = dict(ends)
    for target in targets:
        drawn = go_to(browser, data, target)
        assert_nimmt_frame(drawn, frames[target])
        if target in states:
            state = states[target]
            assert drawn["rows"] == [list(row) for row in state.rows], f"frame {target}"
            assert drawn["scores"] == list(state.scores)
            assert drawn["hands"] == [[str(c) for c in hand] for hand in state.hands]
        assert all(label.startswith("card ") and " head" in label for label in drawn["labels"])
        back = keys(browser, Keys.ARROW_LEFT)
        assert_nimmt_frame(back, frames[target - 1])
    round_end_drawn = go_to(browser, data, round_end)
    logged = [e for line in replay.read(played("standard")) if isinstance(line, replay.EventsLine) for e in line.events]
    assert (
        round_end_drawn["scores"] == next(e for e in logged if e["type"] == "round_end" and e["round"] == 2)["scores"]
    )
    end = keys(browser, Keys.END)
    assert_nimmt_frame(end, frames[-1])
    assert end["scores"] == data["result"]["scores"]


def test_buttons_step_and_each_seat_time_shows(browser: Any, pages: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    page, data, _ = pages["standard"]
    frames = data["frames"]
    open_page(browser, page.as_uri())
    for _ in range(3):
        browser.find_element(By.CSS_SELECTOR, "[data-action=next]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-action=prev]").click()
    drawn = browser.execute_script(DRAWN)
    assert_nimmt_frame(drawn, frames[2])
    reveal = next(f for f in frames if f["kind"] == "reveal")
    drawn = go_to(browser, data, reveal["index"])
    assert len(drawn["times"]) == data["players"]
    assert all(text.startswith("answered in ") and text.endswith("ms") for text in drawn["times"])
    assert drawn["banks"] == [f" · bank left {text}" for text in reveal["bank_texts"]], "each seat's bank left"
    assert all(text.endswith(" s") for text in drawn["banks"]), drawn["banks"]
    buttons = browser.find_elements(By.CSS_SELECTOR, ".rv-controls button")
    assert all(button.get_attribute("aria-label") for button in buttons)


def test_play_advances_by_itself_and_pauses(browser: Any, pages: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data, _ = pages["standard"]
    open_page(browser, page.as_uri())
    Select(browser.find_element(By.CSS_SELECTOR, "select.rv-speed")).select_by_value("16")
    play = browser.find_element(By.CSS_SELECTOR, "[data-action=play]")
    play.click()
    wait_for(browser, lambda: browser.execute_script(DRAWN)["index"] >= 4, "play to advance")
    assert browser.execute_script(DRAWN)["playing"] == "true"
    play.click()
    paused = browser.execute_script(DRAWN)
    assert paused["playing"] == "false"
    time.sleep(0.4)
    still = browser.execute_script(DRAWN)
    assert still["index"] == paused["index"]
    assert_nimmt_frame(still, data["frames"][still["index"]])


def test_jump_to_a_round(browser: Any, pages: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data, _ = pages["standard"]
    frames = data["frames"]
    open_page(browser, page.as_uri())
    Select(browser.find_element(By.CSS_SELECTOR, "select.rv-round")).select_by_visible_text("Round 3")
    drawn = browser.execute_script(DRAWN)
    assert_nimmt_frame(drawn, frames[data["rounds"][2]["frame"]])
    assert drawn["caption"].startswith("Round 3")
    assert_nimmt_frame(keys(browser, "2"), frames[data["rounds"][1]["frame"]])
    assert_nimmt_frame(keys(browser, "["), frames[data["rounds"][0]["frame"]])


def focused_keys(browser: Any, *pressed: str) -> dict[str, Any]:
    """Press keys wherever the focus is (unlike ``keys``, nothing is blurred first)."""
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(browser)
    for key in pressed:
        chain.send_keys(key)
    chain.perform()
    drawn: dict[str, Any] = browser.execute_script(DRAWN)
    return drawn


def arrow_and_space(browser: Any, press: Callable[..., dict[str, Any]]) -> list[tuple[int, str]]:
    """→, then Space twice: where the viewer stands and whether it plays after each."""
    from selenium.webdriver.common.keys import Keys

    seen = []
    for key in (Keys.ARROW_RIGHT, Keys.SPACE, Keys.SPACE):
        drawn = press(browser, key)
        seen.append((drawn["index"], drawn["playing"]))
    return seen


def test_keys_still_work_after_the_round_and_speed_dropdowns(browser: Any, pages: dict[str, Any]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data, _ = pages["standard"]
    frames = data["frames"]
    start = data["rounds"][2]["frame"]
    open_page(browser, page.as_uri())
    keys(browser, "3")  # the same round reached by its key, nothing focused
    expected = arrow_and_space(browser, keys)
    assert expected == [(start + 1, "false"), (start + 1, "true"), (start + 1, "false")]

    open_page(browser, page.as_uri())
    rounds = browser.find_element(By.CSS_SELECTOR, "select.rv-round")
    Select(rounds).select_by_visible_text("Round 3")
    assert browser.execute_script(DRAWN)["index"] == start
    assert arrow_and_space(browser, focused_keys) == expected
    assert_nimmt_frame(browser.execute_script(DRAWN), frames[start + 1])

    # a select that still has the focus (tabbed to, say) leaves the viewer's keys to the viewer
    open_page(browser, page.as_uri())
    Select(browser.find_element(By.CSS_SELECTOR, "select.rv-speed")).select_by_value("2")
    keys(browser, "3")
    rounds = browser.find_element(By.CSS_SELECTOR, "select.rv-round")
    browser.execute_script("arguments[0].focus()", rounds)
    assert arrow_and_space(browser, focused_keys) == expected
    assert Select(rounds).first_selected_option.text == "Round 3"
    assert Select(browser.find_element(By.CSS_SELECTOR, "select.rv-speed")).first_selected_option.text.startswith(
        "2\u00d7 "
    )

    # but typing in a text field never moves the viewer
    browser.execute_script(
        "const field = document.createElement('input'); field.type = 'text'; field.id = 'typed';"
        "document.body.appendChild(field); field.focus();"
    )
    typed = focused_keys(browser, "3", " ", "]")
    assert typed["index"] == start + 1 and typed["playing"] == "false"
    assert browser.execute_script("return document.getElementById('typed').value") == "3 ]"


def test_move_times_read_as_the_terminal_writes_them(browser: Any, tmp_path: Path) -> None:
    import msgspec

    from arena.render.common import ms_text

    values = iter([0.25, 0.249, 1.05, 0.35, 12.5, 0.05, 9.95, 999.5, 1234.5, 0.15] * 1000)
    lines = [
        msgspec.structs.replace(line, wall_ms=[next(values) for _ in line.wall_ms])
        if isinstance(line, replay.DecisionLine)
        else line
        for line in replay.read(played("standard"))
    ]
    page = tmp_path / "times.html"
    page.write_text(viewer.standalone_html(lines, "times"), encoding="utf-8")
    data = viewer.frames(lines, "times")
    open_page(browser, page.as_uri())
    timed = [f for f in data["frames"] if f["times"] is not None]
    seen: set[str] = set()
    for frame in timed[:8]:
        drawn = go_to(browser, data, frame["index"])
        texts = [f"answered in {ms_text(ms)}" for ms in frame["times"] if ms is not None]
        assert drawn["times"] == texts, f"frame {frame['index']}"
        seen.update(texts)
    # ties the browser's own rounding would turn the other way are among the values shown
    assert {"answered in 0.2 ms", "answered in 1.1 ms", "answered in 12 ms"} <= seen


def test_a_fault_shows_under_its_seat_where_it_happened(browser: Any, pages: dict[str, Any]) -> None:
    page, data, _ = pages["faulty"]
    open_page(browser, page.as_uri())
    frame = next(f for f in data["frames"] if f["notes"])
    drawn = go_to(browser, data, frame["index"])
    assert len(drawn["notes"]) == 1 and "illegal" in drawn["notes"][0] and "999" in drawn["notes"][0]
    from selenium.webdriver.common.keys import Keys

    assert keys(browser, Keys.ARROW_RIGHT)["notes"] == []


def test_a_sixes_export_draws_its_suit_columns(browser: Any, pages: dict[str, Any]) -> None:
    page, data, steps = pages["sixes"]
    frames = data["frames"]
    open_page(browser, page.as_uri())
    target = data["rounds"][-1]["frame"] + 7
    drawn = go_to(browser, data, target)
    frame = frames[target]
    assert drawn["index"] == target and drawn["caption"] == frame["caption"]
    assert len(drawn["suits"]) == 4
    assert [sorted(column) for column in drawn["suits"]] == [sorted(run) for run in frame["runs"]]
    assert drawn["hands"] == frame["hands"] and drawn["scores"] == frame["chips"] and drawn["pot"] == frame["pot"]
    from selenium.webdriver.common.keys import Keys

    end = keys(browser, Keys.END)
    assert end["scores"] == data["result"]["scores"] == list(steps[-1].state.chips)


def test_a_phone_sized_window_has_no_sideways_scroll(browser: Any, pages: dict[str, Any]) -> None:
    browser.set_window_size(390, 844)
    try:
        for kind in ("standard", "sixes"):
            page, data, _ = pages[kind]
            open_page(browser, page.as_uri())
            for target in (0, data["rounds"][-1]["frame"] + 1):  # hands full, and the first cards played
                drawn = go_to(browser, data, target)
                assert drawn["index"] == target
                assert drawn["overflow"] <= 0, f"{kind} frame {target} scrolls sideways by {drawn['overflow']}px"
    finally:
        browser.set_window_size(1280, 900)


class _GamePage(BaseHTTPRequestHandler):
    """The arena's game page contract, served from memory: the viewer's markup, its
    two assets, the game's drawer (fetched once the frames name it) and the frames URL
    (game 7 exists, game 8 does not)."""

    frames: bytes = b""

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        page = (
            '<!doctype html><html><head><link rel="stylesheet" href="/static/viewer.css"></head><body>'
            '<div id="replay-viewer" data-frames-url="/api/games/{}/frames"></div>'
            '<script src="/static/viewer.js" defer></script></body></html>'
        )
        routes: dict[str, tuple[int, str, bytes]] = {
            "/game/7": (200, "text/html", page.format(7).encode()),
            "/game/8": (200, "text/html", page.format(8).encode()),
            "/static/viewer.js": (200, "text/javascript", (viewer.STATIC / "viewer.js").read_bytes()),
            "/static/viewer.css": (200, "text/css", (viewer.STATIC / "viewer.css").read_bytes()),
            "/drawers/nimmt.js": (200, "text/javascript", (viewer.drawer_script("nimmt") or "").encode()),
            "/api/games/7/frames": (200, "application/json", self.frames),
            "/api/games/8/frames": (404, "application/json", b'{"error": "no game 8"}'),
        }
        status, kind, body = routes.get(self.path, (404, "text/plain", b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def game_server(pages: dict[str, Any]) -> Iterator[str]:
    _GamePage.frames = json.dumps(pages["standard"][1]).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GamePage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_on_a_game_page_the_viewer_fetches_its_frames(browser: Any, pages: dict[str, Any], game_server: str) -> None:
    data = pages["standard"][1]
    open_page(browser, f"{game_server}/game/7")
    assert_nimmt_frame(browser.execute_script(DRAWN), data["frames"][0])
    browser.get(f"{game_server}/game/8")
    wait_for(browser, lambda: "no game 8" in browser.execute_script("return document.body.textContent"), "the error")
    assert browser.execute_script("return document.querySelector('[role=alert]') !== null")


STYLED = """
const [game, selector, rule] = arguments;
const own = document.querySelectorAll(`style[data-drawer-style="${game}"]`);
const selectors = own.length ? Array.from(own[0].sheet.cssRules).map((r) => r.selectorText) : [];
const drawn = document.querySelector(selector);
return {own: own.length, rule: selectors.includes(rule), display: drawn ? getComputedStyle(drawn).display : null};
"""


def test_a_games_table_is_styled_by_the_sheet_its_record_brings(
    browser: Any, pages: dict[str, Any], game_server: str
) -> None:
    """Exported and served, a game's table takes its layout (6 nimmt!'s rows in a line,
    Sixes' suits in a grid) from the style sheet in the game's folder, added once."""
    cases = (
        (pages["standard"][0].as_uri(), "nimmt", "[data-row='0']", ".rv-row", "flex"),
        (pages["sixes"][0].as_uri(), "sixes", ".rv-suits", ".rv-suits", "grid"),
        (f"{game_server}/game/7", "nimmt", "[data-row='0']", ".rv-row", "flex"),
    )
    for url, game, selector, rule, display in cases:
        open_page(browser, url)
        styled = browser.execute_script(STYLED, game, selector, rule)
        assert styled == {"own": 1, "rule": True, "display": display}, (url, styled)


# --- on a phone (390 px): controls in reach, frame links, a quick look ------------------------


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}

CONTROLS = """
const controls = document.querySelector(".rv-controls"), play = document.querySelector(".rv-play");
const box = controls.getBoundingClientRect(), button = play.getBoundingClientRect();
const hit = document.elementFromPoint(button.left + button.width / 2, button.top + button.height / 2);
const caption = document.querySelector("[data-caption]").getBoundingClientRect();
const table = document.querySelector(".rv-table").getBoundingClientRect();
return {top: box.top, bottom: box.bottom, height: box.height, reachable: play.contains(hit), scroll: window.scrollY,
        caption: caption.top, table: table.top, viewport: window.innerHeight};
"""


def frame_fragment(frames: list[dict[str, Any]], index: int) -> str:
    """The fragment of frame ``index`` as the viewer writes it (``#r2t4``, ``s1`` for later steps)."""
    frame = frames[index]
    step = sum(1 for f in frames[:index] if (f["round"], f["turn"]) == (frame["round"], frame["turn"]))
    return f"#r{frame['round']}t{frame['turn']}" + (f"s{step}" if step else "")


def test_on_a_phone_the_controls_stay_in_reach_while_hands_scroll(browser: Any, pages: dict[str, Any]) -> None:
    """Was: the controls scrolled away with the page (3,668 px tall), so every step meant
    scrolling back. Now they stay at the top of the screen, small, over rows and hands."""
    from selenium.webdriver.common.by import By

    page, data, _ = pages["standard"]
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        open_page(browser, page.as_uri())
        start = browser.execute_script(CONTROLS)
        assert start["height"] <= 140, f"the controls take {start['height']} px of an 844 px screen"
        hands = browser.find_elements(By.CSS_SELECTOR, "[data-hand]")
        assert len(hands) >= 2
        for hand in (hands[-1], hands[0]):
            browser.execute_script("arguments[0].scrollIntoView({block: 'end'})", hand)
            shown = browser.execute_script(CONTROLS)
            assert shown["scroll"] > 0 and -1 <= shown["top"] <= 1, shown
            assert shown["reachable"], "the play button is on screen and nothing covers it"
        before = browser.execute_script(DRAWN)["index"]
        browser.find_element(By.CSS_SELECTOR, ".rv-next").click()
        assert browser.execute_script(DRAWN)["index"] == before + 1, "a tap steps without scrolling back"
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_on_a_phone_a_frame_link_scrolls_to_the_board(browser: Any, pages: dict[str, Any]) -> None:
    """``#r2t4`` opens that frame with its caption and table just under the controls."""
    page, data, _ = pages["standard"]
    frames = data["frames"]
    target = next(i for i, f in enumerate(frames) if f["round"] == 2 and f["turn"] == 4)
    fragment = frame_fragment(frames, target)
    assert fragment == "#r2t4"
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        browser.get("about:blank")
        open_page(browser, page.as_uri() + fragment)
        wait_for(browser, lambda: browser.execute_script(DRAWN)["index"] == target, "the linked frame")
        wait_for(browser, lambda: browser.execute_script(CONTROLS)["scroll"] > 0, "the page to scroll to the board")
        shown = browser.execute_script(CONTROLS)
        assert shown["bottom"] <= shown["caption"] <= shown["bottom"] + 24, shown
        assert shown["table"] < shown["viewport"] / 2, "the board is on screen, not below the fold"
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_a_long_game_can_be_watched_in_well_under_a_minute(browser: Any, pages: dict[str, Any]) -> None:
    """Was: 4.4 minutes for 209 frames at 1x, and nothing said so. Each speed now says how
    long the whole game takes at it; the fastest plays a game of 209 such frames in well
    under a minute, and the time shown is the time the viewer waits."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data, _ = pages["standard"]
    frames = len(data["frames"])
    open_page(browser, page.as_uri())
    select = Select(browser.find_element(By.CSS_SELECTOR, ".rv-speed"))
    speeds = [float(o.get_attribute("value")) for o in select.options]
    for option, speed in zip(select.options, speeds, strict=True):
        ms = browser.execute_script("return window.replayViewer.duration(arguments[0])", speed)
        seconds = round(ms / 1000)
        assert option.text == f"{speed:g}× · {seconds // 60}:{seconds % 60:02d}", option.text
    fastest = browser.execute_script("return window.replayViewer.duration(arguments[0])", max(speeds))
    assert fastest / frames * 209 < 30_000, f"209 frames take {fastest / frames * 209 / 1000:.0f} s at {max(speeds)}x"
    quick = [s for s in speeds if browser.execute_script("return window.replayViewer.duration(arguments[0])", s)
             / frames * 209 < 60_000]  # fmt: skip
    assert len(quick) >= 2, f"more than one speed for a quick look: {quick}"
