"""Finding games on ``arena serve`` over a real database: 60 games of four bots in two
tournaments on two boards, over twelve days, some with faulty seats. Each filter of
``/games`` and ``/api/games`` (bot, opponent, tournament, board, faults, days) returns
exactly the games it should, alone and together; paging keeps them; a bad value is one
clear line; and in Chromium the form finds games and jumps to a page."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.store import FinishedGame, SeatResult, Store
from arena.web.errors import WebError
from arena.web.games_query import list_query, page_numbers, short_time, started_range

from ..conftest import SAMPLES, serving
from .test_web import api, fetch, page

GAMES = 60
FIRST_DAY = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
NAMES = ("heuristic", "random", "lowest", "montecarlo")


class Made(msgspec.Struct, frozen=True):
    """A game as the test stored it: what each filter is checked against."""

    id: int
    tournament: str
    board: str
    bots: frozenset[str]
    faulty: frozenset[str]
    day: str


def seating(number: int) -> list[str]:
    """Three of the four bots, a different three in turn."""
    left_out = NAMES[number % 4]
    return [name for name in NAMES if name != left_out]


def faulty_of(number: int) -> set[str]:
    """Who faults in game ``number``: random every fifth game, lowest every seventh (when seated)."""
    seated = seating(number)
    return {name for name, every in (("random", 5), ("lowest", 7)) if number % every == 0 and name in seated}


def store_games(db: Path) -> list[Made]:
    with Store(db) as store:
        bots = {name: store.add_bot(SAMPLES / name) for name in NAMES}
        spring = store.create_tournament("spring", "nimmt", "standard", {}, 1, {})
        pro = store.create_tournament("pro", "nimmt", "professional", {"variant": "professional"}, 2, {})
        made = []
        for number in range(GAMES):
            t = pro if number % 3 == 0 else spring
            started = FIRST_DAY + dt.timedelta(days=number // 5, hours=number % 5 * 5, minutes=number)
            faulty = faulty_of(number)
            seats = [
                SeatResult(bots[name].id, rank, 10 * rank, "faulty" if name in faulty else "ok",
                           {"timeout": 1} if name in faulty else {})
                for rank, name in enumerate(seating(number), 1)
            ]  # fmt: skip
            game = FinishedGame(
                t.id, number, 0, 0, number, "nimmt", t.variant, 3, 1.0, started.isoformat(timespec="seconds"),
                seats, b"{}",
            )  # fmt: skip
            game_id = store.save_game(game)
            made.append(
                Made(game_id, t.name, f"nimmt/{t.variant}", frozenset(seating(number)), frozenset(faulty),
                     started.date().isoformat())
            )  # fmt: skip
        assert {m.board for m in made} == {"nimmt/standard", "nimmt/professional"}
        return made


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Made]]:
    db = tmp_path_factory.mktemp("finding") / "arena.db"
    return db, store_games(db)


@pytest.fixture(scope="module")
def site(made: tuple[Path, list[Made]]) -> Iterator[str]:
    with serving(made[0]) as url:
        yield url


def ref(name: str) -> str:
    return f"{name}:1.0.0"


def found(site: str, query: str) -> list[int]:
    """The ids ``/api/games`` lists for ``query``, newest first, all on one page."""
    data = api(f"{site}/api/games?order=desc&limit=500&{query}")
    assert data["total"] == len(data["games"])
    return [g["id"] for g in data["games"]]


def expected(games: list[Made], keep: Callable[[Made], bool]) -> list[int]:
    return [m.id for m in reversed(games) if keep(m)]


CASES: list[tuple[str, Callable[[Made], bool]]] = [
    ("bot=random", lambda m: "random" in m.bots),
    ("bot=heuristic:1.0.0", lambda m: "heuristic" in m.bots),
    ("bot=random&opponent=lowest", lambda m: {"random", "lowest"} <= m.bots),
    ("tournament=pro", lambda m: m.tournament == "pro"),
    ("board=nimmt/professional", lambda m: m.board == "nimmt/professional"),
    ("board=nimmt", lambda m: m.board == "nimmt/standard"),
    ("faults=1", lambda m: bool(m.faulty)),
    ("bot=lowest&faults=1", lambda m: "lowest" in m.faulty),
    ("bot=heuristic&faults=1", lambda m: False),
    ("from=2026-03-04", lambda m: m.day >= "2026-03-04"),
    ("to=2026-03-02", lambda m: m.day <= "2026-03-02"),
    ("from=2026-03-05&to=2026-03-05", lambda m: m.day == "2026-03-05"),
]


@pytest.mark.parametrize(("query", "keep"), CASES, ids=[case[0] for case in CASES])
def test_each_filter_lists_exactly_its_games(site: str, made: tuple[Path, list[Made]], query: str,
                                             keep: Callable[[Made], bool]) -> None:  # fmt: skip
    want = expected(made[1], keep)
    assert found(site, query) == want
    assert 0 < len(want) < GAMES or query == "bot=heuristic&faults=1", "each filter leaves some games out"


COMBINED: list[tuple[str, Callable[[Made], bool]]] = [
    ("bot=random&opponent=montecarlo&tournament=spring",
     lambda m: {"random", "montecarlo"} <= m.bots and m.tournament == "spring"),
    ("bot=random&faults=1&board=nimmt/professional", lambda m: "random" in m.faulty and m.board == "nimmt/professional"),
    ("faults=1&from=2026-03-03&to=2026-03-08", lambda m: bool(m.faulty) and "2026-03-03" <= m.day <= "2026-03-08"),
    ("bot=lowest&opponent=heuristic&faults=1&tournament=spring&from=2026-03-02",
     lambda m: "lowest" in m.faulty and "heuristic" in m.bots and m.tournament == "spring" and m.day >= "2026-03-02"),
]  # fmt: skip


def test_filters_combine(site: str, made: tuple[Path, list[Made]]) -> None:
    for query, keep in COMBINED:
        want = expected(made[1], keep)
        assert want and found(site, query) == want, query
    data = api(f"{site}/api/games?bot=random&opponent=lowest&board=nimmt&faults=1&from=2026-03-02&to=2026-03-09")
    assert (data["bot"], data["opponent"], data["board"], data["faults"], data["from"], data["to"]) == (
        "random", "lowest", "nimmt/standard", True, "2026-03-02", "2026-03-09"
    )  # fmt: skip


def test_the_page_is_newest_first_with_a_date_column(site: str, made: tuple[Path, list[Made]]) -> None:
    text = page(f"{site}/games?limit=5")
    ids = [int(i) for i in re.findall(r'<a href="/games/(\d+)">#', text)]
    assert ids == [m.id for m in made[1]][::-1][:5], "newest first by default"
    newest = made[1][-1]
    stamp = (FIRST_DAY + dt.timedelta(days=11, hours=20, minutes=59)).isoformat(timespec="seconds")
    assert newest.day == "2026-03-12"
    assert f'<td class="date"><time datetime="{stamp}">2026-03-12 20:59</time></td>' in text
    assert '<th scope="col" class="date">Started</th>' in text
    for other in ("/bots/heuristic", "/tournaments/spring"):
        assert '<td class="date"><time datetime="2026-03-12T' in page(site + other), other
    # The API keeps its order: oldest first unless asked.
    assert [g["id"] for g in api(f"{site}/api/games?limit=3")["games"]] == [m.id for m in made[1][:3]]


def links(text: str) -> list[str]:
    return re.findall(r'<a href="(/games\?[^"]*)"', html.unescape(text))


def test_paging_keeps_the_filters(site: str, made: tuple[Path, list[Made]]) -> None:
    want = expected(made[1], lambda m: "random" in m.bots and m.tournament == "spring" and m.day >= "2026-03-02")
    assert len(want) > 15
    query = "bot=random&tournament=spring&from=2026-03-02"
    text = html.unescape(page(f"{site}/games?{query}&limit=5"))
    base = "/games?tournament=spring&bot=random&from=2026-03-02&order=desc&limit=5"
    assert f'<a href="{base}&offset=5" rel="next">' in text
    last = (len(want) - 1) // 5 + 1
    numbers = [link for link in links(text) if "rel=" not in link and link.startswith(base)]
    assert f"{base}&offset={(last - 1) * 5}" in numbers and f"{base}&offset=10" in numbers
    assert '<span aria-current="page">1</span>' in text and f"<span>of {last}</span>" in text
    for hidden in ('name="tournament" value="spring"', 'name="bot" value="random"', 'name="from" value="2026-03-02"'):
        assert f'<input type="hidden" {hidden}>' in text, hidden
    # Each page is the next slice of the filtered games, by offset or by page number.
    for number in (2, last):
        by_offset = page(f"{site}{base}&offset={(number - 1) * 5}")
        by_page = page(f"{site}/games?{query}&limit=5&page={number}")
        shown = [int(i) for i in re.findall(r'<a href="/games/(\d+)">#', by_page)]
        assert shown == want[(number - 1) * 5 : number * 5]
        assert shown == [int(i) for i in re.findall(r'<a href="/games/(\d+)">#', by_offset)]
        assert f'<span aria-current="page">{number}</span>' in by_page
    data = api(f"{site}/api/games?{query}&limit=5&page=2&order=desc")
    assert (data["offset"], data["page"], data["pages"], data["total"]) == (5, 2, last, len(want))
    assert [g["id"] for g in data["games"]] == want[5:10]


def test_no_match_is_said_so(site: str) -> None:
    text = page(f"{site}/games?bot=heuristic&faults=1")
    assert "No games match these filters." in text and "No games stored yet" not in text
    assert '<a href="/games">Clear</a>' in text


BAD = [
    ("bot=nobody", 404, "no bot 'nobody' for bot="),
    ("bot=random&opponent=nobody", 404, "no bot 'nobody' for opponent="),
    ("opponent=random", 400, "opponent=random needs a bot= as well"),
    ("bot=random&opponent=random:1.0.0", 400, "opponent=random:1.0.0 is bot=random itself"),
    ("tournament=autumn", 404, "no tournament 'autumn'"),
    ("board=chess/standard", 400, "board=chess/standard: unknown game 'chess'"),
    ("board=nimmt/fast", 400, "board=nimmt/fast: unknown variant 'fast'"),
    ("from=2026-13-01", 400, "from must be a day as YYYY-MM-DD, not '2026-13-01'"),
    ("to=yesterday", 400, "to must be a day as YYYY-MM-DD, not 'yesterday'"),
    ("from=2026-03-05&to=2026-03-01", 400, "from=2026-03-05 is after to=2026-03-01"),
    ("faults=maybe", 400, "faults must be 1 (only games with faults) or 0, not 'maybe'"),
    ("page=0", 400, "page must be at least 1, not 0"),
    ("page=2&offset=50", 400, "page= and offset= both say where the list starts"),
]


def test_bad_values_are_one_clear_line(site: str) -> None:
    for query, status, needle in BAD:
        got, kind, body = fetch(f"{site}/api/games?{query}")
        assert got == status and kind.startswith("application/json"), (query, got, body[:300])
        message = json.loads(body)["error"]
        assert message.startswith(needle) and "\n" not in message, (query, message)
        got, kind, body = fetch(f"{site}/games?{query}")
        assert got == status and kind.startswith("text/html"), (query, got)
        assert needle in html.unescape(body.decode()), query


# --- the pure parts ---------------------------------------------------------------------------


def test_days_are_bounds_on_the_stored_start() -> None:
    assert started_range("2026-03-01", "2026-03-31") == ("2026-03-01", "2026-04-01")
    assert started_range(None, "2026-12-31") == (None, "2027-01-01")
    assert started_range("2024-02-29", None) == ("2024-02-29", None)
    assert started_range("9999-12-31", "9999-12-31") == ("9999-12-31", None), "the last day has no day after"
    for bad in ("2026-3-1", "20260301", "2026-W10-1", "2026-02-30", "2026-03-01T00:00"):
        with pytest.raises(WebError, match="from must be a day as YYYY-MM-DD"):
            started_range(bad, None)


def test_page_numbers_show_the_ends_and_the_neighbours() -> None:
    assert page_numbers(0, 50, 0) == [1]
    assert page_numbers(250, 50, 100) == [1, 2, 3, 4, 5]
    assert page_numbers(1000, 10, 500) == [1, None, 49, 50, 51, 52, 53, None, 100]
    assert page_numbers(1000, 10, 0) == [1, 2, 3, None, 100]
    assert page_numbers(1000, 10, 990) == [1, None, 98, 99, 100]
    assert page_numbers(100, 10, 5000) == [1, None, 8, 9, 10], "past the end: the last pages"


def test_list_query_keeps_each_filter_in_one_spelling() -> None:
    data: dict[str, Any] = {"tournament": "a b", "bot": "x:1", "opponent": None, "board": "nimmt/standard",
                            "faults": True, "from": "2026-01-01", "to": None, "order": "desc", "limit": 20}  # fmt: skip
    assert (
        list_query(data) == "tournament=a%20b&bot=x:1&board=nimmt/standard&faults=1&from=2026-01-01&order=desc&limit=20"
    )
    assert short_time("2026-11-30T14:02:59+00:00") == "2026-11-30 14:02"


# --- in a browser -----------------------------------------------------------------------------


@pytest.mark.browser
def test_the_form_finds_games_and_jumps_to_a_page(browser: Any, site: str, made: tuple[Path, list[Made]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    want = expected(made[1], lambda m: "random" in m.bots and m.board == "nimmt/standard")
    browser.get(f"{site}/games?limit=5")
    form = browser.find_element(By.CSS_SELECTOR, "form.games-filters")
    form.find_element(By.NAME, "bot").send_keys("random:1.0.0")
    Select(form.find_element(By.NAME, "board")).select_by_value("nimmt/standard")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait = WebDriverWait(browser, 20)
    wait.until(lambda b: "bot=random" in b.current_url and "board=nimmt" in b.current_url)

    def shown(b: Any) -> list[int]:
        cells = b.find_elements(By.CSS_SELECTOR, "table.games tbody td:first-child a")
        return [int(cell.text.lstrip("#")) for cell in cells]

    wait.until(lambda b: shown(b) == want[:5])
    jump = browser.find_element(By.CSS_SELECTOR, "form.page-jump")
    field = jump.find_element(By.NAME, "page")
    field.clear()
    field.send_keys("3")
    jump.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda b: "page=3" in b.current_url)
    wait.until(lambda b: shown(b) == want[10:15])
    assert browser.find_element(By.CSS_SELECTOR, ".page-numbers [aria-current=page]").text == "3"
    # The page's links keep the filters: the next page is the next slice.
    browser.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    wait.until(lambda b: shown(b) == want[15:20])
    assert "bot=random" in browser.current_url and "board=nimmt/standard" in browser.current_url
    # The form, the page links and the page field fit a 390 px phone.
    phone = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", phone)
    try:
        browser.get(f"{site}/games?bot=random&board=nimmt/standard&limit=2&page=9")
        wait.until(lambda b: shown(b) == want[16:18])
        widths = "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        scroll, width = browser.execute_script(widths)
        assert width == 390 and scroll <= width, f"the page is {scroll} px wide on a {width} px phone"
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
