"""How ``arena serve`` answers, whatever the page: gzip when the client takes it, an ETag
and 304 on a repeated request, every table as a CSV file (names written by strangers
cannot become spreadsheet formulas), and a dark theme that follows the system or the
reader's choice. A real server over a real database, and headless Chromium."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.boards.csv_export import csv_text, safe_cell
from arena.store import FinishedGame, SeatResult, Store
from arena.web.csv_downloads import file_name
from arena.web.etags import FOREVER, REVALIDATE, cache_control, etag_matches, etag_of

from ..conftest import SAMPLES, serving
from .test_web import ARENA, NIMMT, api, copy_db, fetch, web_db, work  # noqa: F401  (shared fixtures)

CSS = Path(__file__).resolve().parents[2] / "arena/web/static/site.css"
FORMULA_TOURNAMENT = '=HYPERLINK("http://example.invalid","click")'
FORMULA_NODE = "@SUM(1+1)"


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and the body exactly as sent (not decompressed)."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def store_formula_game(db: Path, node: str = FORMULA_NODE) -> int:
    """A game of a tournament whose name (and node) a spreadsheet would run as a formula."""
    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("random", "lowest")]
        found = store.get_tournament(FORMULA_TOURNAMENT)
        t = found or store.create_tournament(FORMULA_TOURNAMENT, "nimmt", "standard", {}, 1, {})
        number = store.count_games(t.id)
        seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(bots, 1)]
        record = FinishedGame(
            t.id, 0, number, number, 1, "nimmt", "standard", 1, 5.0, "2026-02-01T00:00:00+00:00", seats, b"{}",
            node=node,
        )  # fmt: skip
        store.save_game(record)
        return store.last_game_id()


@pytest.fixture(scope="module")
def transport_db(web_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The shared database of real tournaments, copied (tests here add games), with a
    tournament named like a formula."""
    db = tmp_path_factory.mktemp("transport") / "arena.db"
    copy_db(web_db, db)
    store_formula_game(db)
    return db


@pytest.fixture(scope="module")
def site(transport_db: Path) -> Iterator[str]:
    with serving(transport_db) as url:
        yield url


def real_game(db: Path) -> int:
    with Store(db) as store:
        return next(g.id for g in store.find_games(limit=100) if g.game == "nimmt" and g.tournament == "cup")


# --- the pure parts ---------------------------------------------------------------------------


def test_a_cell_a_spreadsheet_would_run_is_quoted() -> None:
    for text in ("=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(text) == "'" + text
    assert [safe_cell(v) for v in (-3, -1.5, "heuristic:1.0.0", "a=b", None, float("nan"), ["nimmt", "sixes"])] == [
        -3, -1.5, "heuristic:1.0.0", "a=b", "", "", "nimmt sixes",
    ]  # fmt: skip
    text = csv_text(["name", "score"], [["=1+1", -4], ["plain", 2]])
    assert list(csv.reader(io.StringIO(text))) == [["name", "score"], ["'=1+1", "-4"], ["plain", "2"]]


def test_etags_compare_weakly() -> None:
    tag = etag_of(b"body")
    assert tag.startswith('W/"') and tag != etag_of(b"body!")
    assert etag_matches(tag, tag) and etag_matches(tag.removeprefix("W/"), tag)
    assert etag_matches(f'"other", {tag}', tag) and etag_matches("*", tag)
    assert not etag_matches('W/"other"', tag) and not etag_matches("", tag)


def test_only_a_stored_game_is_cached_for_long() -> None:
    assert cache_control("/api/games/12/frames") == cache_control("/api/games/12/replay") == FOREVER
    for path in ("/api/games/12", "/api/games", "/api/games/12/frames/x", "/games/12", "/api/leaderboard"):
        assert cache_control(path) == REVALIDATE, path


def test_a_download_is_named_safely() -> None:
    assert file_name("games", None, "cup") == "games-cup.csv"
    assert file_name("opponents", "heuristic:1.0.0") == "opponents-heuristic_1.0.0.csv"
    assert file_name("standings", '../"x"\r\n') == "standings-x.csv"


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of ``#rrggbb``."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def palettes() -> dict[str, dict[str, str]]:
    """The site's two palettes, as site.css writes them: ``--name: light-dark(LIGHT, DARK)``."""
    pairs = re.findall(r"--([a-z-]+): light-dark\((#[0-9a-f]{6}), (#[0-9a-f]{6})\)", CSS.read_text())
    assert len(pairs) >= 10, "the palette is written as light-dark() pairs"
    return {"light": {n: light for n, light, _ in pairs}, "dark": {n: dark for n, _, dark in pairs}}


def test_text_is_readable_in_both_themes() -> None:
    """WCAG AA (4.5:1) for every colour text is drawn in, on the page and on a panel."""
    for theme, colours in palettes().items():
        for text in ("ink", "muted", "link", "accent", "good", "warn", "bad"):
            for ground in ("paper", "panel", "stripe"):
                ratio = contrast(colours[text], colours[ground])
                assert ratio >= 4.5, f"{theme}: --{text} on --{ground} is {ratio:.2f}:1"
        assert contrast("#ffffff", colours["header"]) >= 4.5, f"{theme}: the header's white text"
        assert contrast(colours["on-accent"], colours["accent"]) >= 4.5, f"{theme}: the chosen board's label"
    assert relative_luminance(palettes()["dark"]["paper"]) < 0.05 < relative_luminance(palettes()["light"]["paper"])


def test_head_to_head_cells_are_readable_in_both_themes() -> None:
    """The matrix's eleven shades, as site.css writes them per theme, under its text."""
    shades = re.findall(
        r"\.h2h-s(\d+) \{ background: light-dark\((#[0-9a-f]{6}), (#[0-9a-f]{6})\); \}", CSS.read_text()
    )
    assert sorted(int(n) for n, _, _ in shades) == list(range(11))
    for theme, colours in palettes().items():
        for n, light, dark in shades:
            ratio = contrast(colours["on-pastel"], light if theme == "light" else dark)
            assert ratio >= 4.5, f"{theme}: a head-to-head cell of share {n}0% is {ratio:.2f}:1"


# --- gzip and conditional requests -------------------------------------------------------------


def test_gzip_when_the_client_takes_it(site: str, transport_db: Path) -> None:
    url = f"{site}/api/games/{real_game(transport_db)}/frames"
    status, plain_headers, plain = get(url)
    assert status == 200 and "content-encoding" not in plain_headers
    assert json.loads(plain)["frames"], "the viewer's frames"
    status, headers, packed = get(url, **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(packed) == plain
    assert len(packed) * 4 < len(plain), (len(packed), len(plain))
    assert "accept-encoding" in headers["vary"].lower()
    assert headers["server-timing"].startswith("app;dur=") and "content-security-policy" in headers
    for path in ("/", "/leaderboard", "/static/site.css", "/api/games?format=csv"):
        status, headers, body = get(site + path, **{"Accept-Encoding": "gzip"})
        assert status == 200 and headers.get("content-encoding") == "gzip", path
        assert gzip.decompress(body) == get(site + path)[2], path
    status, headers, small = get(f"{site}/api/health", **{"Accept-Encoding": "gzip"})
    assert status == 200 and "content-encoding" not in headers and json.loads(small)["status"] == "ok"


def test_a_repeated_request_is_answered_304_until_a_game_changes_it(site: str, transport_db: Path) -> None:
    url = f"{site}/api/games?order=desc&limit=5"
    status, headers, body = get(url)
    tag = headers["etag"]
    assert status == 200 and tag.startswith('W/"') and headers["cache-control"] == "no-cache"
    assert get(url, **{"Accept-Encoding": "gzip"})[1]["etag"] == tag, "the tag of the uncompressed body"
    status, headers, empty = get(url, **{"If-None-Match": tag})
    assert status == 304 and empty == b"" and headers["etag"] == tag
    assert get(url, **{"If-None-Match": tag, "Accept-Encoding": "gzip"})[0] == 304
    assert get(url, **{"If-None-Match": 'W/"something else"'})[0] == 200
    page_tag = get(f"{site}/tournaments")[1]["etag"]
    assert get(f"{site}/tournaments", **{"If-None-Match": page_tag})[0] == 304, "pages too"

    newest = store_formula_game(transport_db, node="w2")
    status, headers, changed = get(url, **{"If-None-Match": tag})
    assert status == 200 and headers["etag"] != tag
    assert json.loads(changed)["games"][0]["id"] == newest != json.loads(body)["games"][0]["id"]
    assert get(f"{site}/tournaments", **{"If-None-Match": page_tag})[0] == 200, "a new game counted"


def test_a_stored_game_is_cached_for_long(site: str, transport_db: Path) -> None:
    game = real_game(transport_db)
    for path in (f"/api/games/{game}/frames", f"/api/games/{game}/replay"):
        status, headers, _ = get(site + path)
        assert status == 200 and headers["cache-control"] == FOREVER and headers["etag"], path
    status, headers, _ = get(f"{site}/api/games/{game}")
    assert headers["cache-control"] == "no-cache"
    status, headers, _ = get(f"{site}/static/site.js")
    assert status == 200 and headers["etag"].startswith('W/"') and headers["cache-control"] == "no-cache"
    assert get(f"{site}/static/site.js", **{"If-None-Match": headers["etag"]})[0] == 304
    status, headers, _ = get(f"{site}/api/games/999999")
    assert status == 404 and "etag" not in headers


# --- CSV ------------------------------------------------------------------------------------------


def csv_of(url: str) -> tuple[str, list[dict[str, str]], str]:
    """The text of a CSV download, its rows and its file name."""
    status, headers, body = get(url)
    assert status == 200, (url, body[:300])
    assert headers["content-type"] == "text/csv; charset=utf-8", headers["content-type"]
    found = re.fullmatch(r'attachment; filename="([A-Za-z0-9._-]+\.csv)"', headers["content-disposition"])
    assert found, headers["content-disposition"]
    text = body.decode()
    return text, list(csv.DictReader(io.StringIO(text))), found.group(1)


def test_the_games_csv_is_the_json_and_the_cli_s(site: str, transport_db: Path) -> None:
    games = api(f"{site}/api/games?limit=500")["games"]
    text, rows, name = csv_of(f"{site}/api/games?limit=500&format=csv")
    assert name == "games.csv"
    seats = [(g, s) for g in games for s in g["seats"]]
    assert len(rows) == len(seats) > 50
    for row, (g, s) in zip(rows, seats, strict=True):
        assert (int(row["id"]), row["game"], row["variant"], int(row["rounds"])) == (
            g["id"], g["game"], g["variant"], g["rounds"],
        )  # fmt: skip
        assert (int(row["seat"]), row["bot"], int(row["rank"]), int(row["score"]), row["status"]) == (
            s["seat"], s["bot"], s["rank"], s["score"], s["status"],
        )  # fmt: skip
        assert int(row["illegal"]) == s["faults"].get("illegal", 0)
    cli = subprocess.run(
        [ARENA, "games", "--db", str(transport_db), "--format", "csv", "--limit", "500"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert cli.stdout == text, "the same columns and cells as `arena games --format csv`"
    _, cup_rows, cup_name = csv_of(f"{site}/api/games?tournament=cup&format=csv&limit=500")
    assert cup_name == "games-cup.csv" and {r["tournament"] for r in cup_rows} == {"cup"}


def test_a_name_written_like_a_formula_is_quoted(site: str) -> None:
    games = api(f"{site}/api/games?order=desc&limit=500")["games"]
    assert any(g["tournament"] == FORMULA_TOURNAMENT and g["node"] == FORMULA_NODE for g in games), "JSON as stored"
    _, rows, _ = csv_of(f"{site}/api/games?order=desc&limit=500&format=csv")
    formula = [r for r in rows if r["tournament"].endswith(FORMULA_TOURNAMENT)]
    assert formula and all(r["tournament"] == "'" + FORMULA_TOURNAMENT for r in formula)
    assert "'" + FORMULA_NODE in {r["node"] for r in formula}
    _, tournaments, _ = csv_of(f"{site}/api/tournaments?format=csv")
    assert "'" + FORMULA_TOURNAMENT in {t["name"] for t in tournaments}
    assert not any(cell.startswith(("=", "@", "+")) for row in rows + tournaments for cell in row.values())


def test_every_table_downloads_as_csv(site: str, transport_db: Path) -> None:
    key = f"nimmt/{NIMMT}"
    text, board, name = csv_of(f"{site}/api/leaderboard?board={urllib.parse.quote(key)}&format=csv")
    cli = subprocess.run(
        [ARENA, "leaderboard", "--db", str(transport_db), "--board", key, "--format", "csv"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert text == cli.stdout, "the same as `arena leaderboard --format csv`"
    assert name == "leaderboard-nimmt-standard_end_score_30.csv" and {r["game"] for r in board} == {key}

    listed = api(f"{site}/api/bots")["bots"]
    _, bots, _ = csv_of(f"{site}/api/bots?format=csv")
    assert [(b["bot"], int(b["games"]), b["games_listed"]) for b in bots] == [
        (b["bot"], b["games"], " ".join(b["games_listed"])) for b in listed
    ]
    listed = api(f"{site}/api/tournaments")["tournaments"]
    _, tournaments, _ = csv_of(f"{site}/api/tournaments?format=csv")
    assert [(t["name"].lstrip("'"), int(t["games_done"]), t["health.state"]) for t in tournaments] == [
        (t["name"], t["games_done"], t["health"]["state"]) for t in listed
    ]
    cup = api(f"{site}/api/tournaments/cup")
    _, standings, name = csv_of(f"{site}/api/tournaments/cup?format=csv")
    assert name == "standings-cup.csv"
    assert [(r["bot"], int(r["rank"]), int(r["games"])) for r in standings] == [
        (r["bot"], r["rank"], r["games"]) for r in cup["standings"]["rows"]
    ]
    bot = api(f"{site}/api/bots/heuristic:1.0.0")
    _, opponents, name = csv_of(f"{site}/api/bots/heuristic:1.0.0?format=csv")
    assert name == "opponents-heuristic_1.0.0.csv" and len(opponents) == len(bot["opponents"]) >= 3
    assert [(o["bot"], int(o["ahead"]), float(o["ahead_share"])) for o in opponents] == [
        (o["bot"], o["ahead"], o["ahead_share"]) for o in bot["opponents"]
    ]
    game = real_game(transport_db)
    _, seats, name = csv_of(f"{site}/api/games/{game}?format=csv")
    assert name == f"game-{game}.csv" and [r["bot"] for r in seats] == [
        s["bot"] for s in api(f"{site}/api/games/{game}")["seats"]
    ]
    assert fetch(f"{site}/api/bots?format=xml")[0] == 400
    assert {"/api/games?format=csv", "/api/bots?format=csv"} <= set(api(f"{site}/api")["endpoints"])


def test_each_page_links_its_tables_csv(site: str, transport_db: Path) -> None:
    pages = {
        "/": 1, "/leaderboard": 2, "/tournaments": 1, "/tournaments/cup": 2, "/bots": 1,
        "/bots/heuristic:1.0.0": 2, "/games": 1, f"/games/{real_game(transport_db)}": 1,
    }  # fmt: skip
    for path, tables in pages.items():
        status, _, body = get(site + path)
        links = re.findall(r'<a class="csv-link" href="([^"]+)" download>', body.decode())
        assert status == 200 and len(links) >= tables, (path, links)
        for link in links:
            _, rows, _ = csv_of(site + link.replace("&amp;", "&"))
            assert rows, (path, link)


# --- the dark theme -------------------------------------------------------------------------------


PAGES = ["/", "/leaderboard", "/tournaments", "/tournaments/cup", "/bots", "/bots/heuristic:1.0.0", "/games"]


def colours(browser: Any) -> dict[str, Any]:
    script = """
        const body = getComputedStyle(document.body);
        const circle = document.querySelector("svg.rating-chart circle");
        return {theme: document.documentElement.dataset.theme || "", ink: body.color, paper: body.backgroundColor,
                header: getComputedStyle(document.querySelector(".site-header")).backgroundColor,
                chart: circle ? getComputedStyle(circle).stroke : null,
                choice: document.querySelector("#theme-choice") ? document.querySelector("#theme-choice").value : null};
    """
    found: dict[str, Any] = browser.execute_script(script)
    return found


def rgb(colour: str) -> str:
    """``rgb(13, 17, 23)`` as ``#0d1117``."""
    parts = [int(v) for v in re.findall(r"\d+", colour)[:3]]
    return "#" + "".join(f"{v:02x}" for v in parts)


def emulate(browser: Any, scheme: str | None) -> None:
    features = [{"name": "prefers-color-scheme", "value": scheme}] if scheme else []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


def open_page(browser: Any, url: str) -> dict[str, Any]:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    WebDriverWait(browser, 20, poll_frequency=0.2).until(lambda b: colours(b)["choice"] is not None)
    return colours(browser)


@pytest.mark.browser
def test_the_theme_follows_the_choice_on_every_page_and_is_remembered(
    browser: Any, site: str, transport_db: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    light, dark = palettes()["light"], palettes()["dark"]
    pages = [*PAGES, f"/games/{real_game(transport_db)}", "/no-such-page"]
    try:
        emulate(browser, "light")
        first = open_page(browser, site + "/")
        assert (first["theme"], rgb(first["paper"]), first["choice"]) == ("", light["paper"], "system")
        Select(browser.find_element("id", "theme-choice")).select_by_value("dark")
        assert colours(browser)["theme"] == "dark" and rgb(colours(browser)["paper"]) == dark["paper"]
        for path in pages:
            shown = open_page(browser, site + path)
            assert (shown["theme"], shown["choice"]) == ("dark", "dark"), path
            assert (rgb(shown["paper"]), rgb(shown["ink"])) == (dark["paper"], dark["ink"]), path
            assert rgb(shown["header"]) == dark["header"], path
            assert contrast(rgb(shown["ink"]), rgb(shown["paper"])) >= 4.5, path
            if shown["chart"] is not None:
                assert rgb(shown["chart"]) == dark["paper"], "the chart follows the theme"
        browser.refresh()
        assert colours(browser)["theme"] == "dark", "remembered across a reload"

        emulate(browser, "dark")
        Select(browser.find_element("id", "theme-choice")).select_by_value("light")
        shown = open_page(browser, site + "/bots/heuristic:1.0.0")
        assert (shown["theme"], rgb(shown["paper"]), rgb(shown["chart"])) == ("light", light["paper"], light["paper"])

        Select(browser.find_element("id", "theme-choice")).select_by_value("system")
        for path in pages:
            shown = open_page(browser, site + path)
            assert (shown["theme"], rgb(shown["paper"]), rgb(shown["ink"])) == ("", dark["paper"], dark["ink"]), path
        emulate(browser, "light")
        assert rgb(colours(browser)["paper"]) == light["paper"], "the system's theme, as it changes"
    finally:
        browser.execute_script("localStorage.removeItem('arena-theme')")
        emulate(browser, None)
