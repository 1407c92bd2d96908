"""``arena serve`` over a real database of 274 stored games: paging past the end, offsets
and limits too large to store, the icon browsers ask for, and the leaderboard warmed at
start."""

from __future__ import annotations

import html
import json
import re
import sqlite3
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.store import Store

from ..conftest import SAMPLES, serving
from .test_web import api, call, fetch

GAMES = 274
LARGEST = 2**63 - 1


def store_games(db: Path, count: int = GAMES) -> None:
    """``count`` finished 6 nimmt! games of three sample bots, stored as a tournament stores them."""
    import msgspec

    from arena.store import FinishedGame, SeatResult

    with Store(db) as store:
        bots = [store.add_bot(SAMPLES / name) for name in ("heuristic", "random", "lowest")]
        t = store.create_tournament("many", "nimmt", "standard", {}, 1, {})
        game = FinishedGame(t.id, 0, 0, 0, 1, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", [], b"{}")
        for number in range(count):
            order = bots[number % 2 :] + bots[: number % 2] if number % 3 == 0 else bots  # heuristic leads
            seats = [SeatResult(bot.id, rank, 10 * rank, "ok", {}) for rank, bot in enumerate(order, 1)]
            store.save_game(msgspec.structs.replace(game, match_no=number, seed=number, seats=seats))


@pytest.fixture(scope="module")
def paged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("paging") / "arena.db"
    store_games(db)
    return db


@pytest.fixture(scope="module")
def site(paged_db: Path) -> Iterator[str]:
    with serving(paged_db) as url:
        yield url


def page_text(url: str, status: int = 200) -> str:
    got, kind, body = fetch(url)
    assert got == status and kind.startswith("text/html"), (url, got, body[:300])
    text = html.unescape(body.decode())
    assert "Traceback" not in text and "OverflowError" not in text
    return text


def links(text: str, rel: str) -> list[str]:
    return re.findall(rf'<a href="([^"]*)" rel="{rel}"', text)


# --- paging past the end ----------------------------------------------------------------------


def test_the_last_page_says_its_range(site: str) -> None:
    text = page_text(f"{site}/games?offset=270&limit=50")
    assert "Games 271–274 of 274, newest first" in text
    assert links(text, "prev") == ["/games?order=desc&limit=50&offset=220"]
    assert links(text, "next") == []
    first = page_text(f"{site}/games")
    assert "Games 1–50 of 274" in first and links(first, "next") == ["/games?order=desc&limit=50&offset=50"]
    assert links(first, "prev") == []


def test_past_the_end_links_the_last_page(site: str) -> None:
    text = page_text(f"{site}/games?offset=99950")
    assert "No games stored yet" not in text and "Games 0–" not in text
    assert "No games at this offset (99950): 274 games stored, newest first" in text
    assert '<a href="/games?order=desc&limit=50&offset=250">games 251–274 of 274</a>' in text
    assert links(text, "prev") == ["/games?order=desc&limit=50&offset=250"], "never past the end"
    assert links(text, "next") == []
    assert "Games 251–274 of 274" in page_text(f"{site}/games?order=desc&limit=50&offset=250")
    just_past = page_text(f"{site}/games?offset=274&limit=10&order=asc")
    assert '<a href="/games?order=asc&limit=10&offset=270">games 271–274 of 274</a>' in just_past
    assert links(just_past, "prev") == ["/games?order=asc&limit=10&offset=270"]
    assert "Games 271–274 of 274, oldest first" in page_text(f"{site}/games?offset=270&limit=10&order=asc")
    # The API keeps answering an empty page there, with the total and where the last page is.
    data = api(f"{site}/api/games?offset=99950")
    assert data["games"] == [] and data["total"] == GAMES and data["last_page"] == 250


def test_past_the_end_of_a_bots_games(site: str) -> None:
    text = page_text(f"{site}/games?bot=random:1.0.0&offset=1000&limit=100")
    assert "No games at this offset (1000): 274 games stored" in text
    assert links(text, "prev") == ["/games?bot=random:1.0.0&order=desc&limit=100&offset=200"]


def test_no_games_at_all_is_said_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store(db).close()
    with serving(db) as url:
        text = page_text(f"{url}/games?offset=100")
        assert "No games stored yet" in text and links(text, "prev") == [] and links(text, "next") == []


# --- numbers too large to store ---------------------------------------------------------------

TOO_LARGE = ["9223372036854775808", "99999999999999999999", "9" * 5000]


def test_an_offset_too_large_is_a_clear_400(site: str) -> None:
    for raw in TOO_LARGE:
        got, kind, body = fetch(f"{site}/api/games?offset={raw}")
        assert got == 400 and kind.startswith("application/json"), (got, body[:300])
        message = json.loads(body)["error"]
        assert message.startswith(f"offset must be at least 0 and at most {LARGEST}, not "), message
        assert len(message) < 200, "a huge number is named, not echoed"
        text = page_text(f"{site}/games?offset={raw}", 400)
        assert f"offset must be at least 0 and at most {LARGEST}" in text
        assert "No games stored yet" not in text
        assert '<a href="/games?order=desc&limit=50&offset=250">games 251–274 of 274</a>' in text
        assert links(text, "prev") == ["/games?order=desc&limit=50&offset=250"]
    largest = page_text(f"{site}/games?offset={LARGEST}")
    assert f"No games at this offset ({LARGEST})" in largest
    assert api(f"{site}/api/games?offset={LARGEST}")["games"] == []


def test_a_negative_or_huge_limit_is_a_clear_400(site: str) -> None:
    for raw, needle in (
        ("-1", "offset must be at least 0, not -1"),
        ("-9223372036854775809", "offset must be at least 0, not -9223372036854775809"),
        ("-" + "9" * 5000, "offset must be at least 0, not a 5000-digit number"),
    ):
        got, _, body = fetch(f"{site}/api/games?offset={raw}")
        assert got == 400 and json.loads(body)["error"] == needle
        assert needle in page_text(f"{site}/games?offset={raw}", 400)
    for raw in [*TOO_LARGE, "-5", "0"]:
        got, _, body = fetch(f"{site}/api/games?limit={raw}")
        assert got == 400 and json.loads(body)["error"].startswith("limit must be from 1 to 500"), body[:300]
        assert "limit must be from 1 to 500" in page_text(f"{site}/games?limit={raw}", 400)


# --- the icon ---------------------------------------------------------------------------------


def test_favicon_ico_is_the_sites_icon(site: str) -> None:
    status, kind, body = fetch(f"{site}/favicon.ico")
    assert status == 200 and kind.startswith("image/svg+xml"), (status, kind)
    assert body == (Path(__file__).parents[2] / "arena/web/static/favicon.svg").read_bytes()


# --- the leaderboard, warmed at start ---------------------------------------------------------


def server_ms(url: str) -> tuple[float, dict[str, object]]:
    """The time the app took (its ``server-timing``) and the JSON it answered."""
    with urllib.request.urlopen(url, timeout=30) as response:
        took = re.search(r"app;dur=([0-9.]+)", response.headers["server-timing"])
        assert took is not None
        return float(took.group(1)), json.loads(response.read())


def test_the_leaderboard_is_warmed_at_start(tmp_path: Path) -> None:
    """No board cached in the database: the server answers its health at once and, a
    moment after start, has the leaderboard in memory before anyone asked for it. The
    proof: seats rewritten behind its back (the newest game unchanged) do not change the
    board it serves, while a board computed now would differ."""
    from arena.boards.standings import leaderboard

    db = tmp_path / "cold.db"
    store_games(db, 3000)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM ratings").fetchone()[0] == 0, "no board cached anywhere"
    conn.close()
    with Store(db, read_only=True) as store:
        before = [r.bot for r in leaderboard(store, "nimmt", "standard")]
    with serving(db) as url:
        _, health = server_ms(f"{url}/api/health")
        assert health["ready"] is True  # answered while the warm-up runs: the test below holds it
        deadline = time.monotonic() + 120  # only a guard against a warm-up that never ends
        while not health.get("warm"):
            assert time.monotonic() < deadline, health
            time.sleep(0.05)
            health = api(f"{url}/api/health")
        with sqlite3.connect(db) as conn:  # the first-placed bot now always comes last
            conn.execute("UPDATE game_seats SET rank = 4 - rank")
            conn.execute(
                "UPDATE games SET seat_ranks = replace(replace(replace(seat_ranks, '1', 'x'), '3', '1'), 'x', '3')"
            )
        conn.close()
        with Store(db, read_only=True) as store:
            assert [r.bot for r in leaderboard(store, "nimmt", "standard")] != before
        _, board = server_ms(f"{url}/api/leaderboard")
        boards = board["boards"]
        assert isinstance(boards, list) and len(boards) == 1
        assert boards[0]["stale"] is False and boards[0]["stamp"] == 3000
        assert [r["bot"] for r in boards[0]["rows"]] == before, "the board computed at start, served from memory"


async def test_health_waits_for_no_warm_up(tmp_path: Path) -> None:
    """Health is answered at once: asked while the start's warm-up is held inside the
    leaderboard, it answers ready and not yet warm; warm once the warm-up is let go."""
    from arena.web.app import create_app

    db = tmp_path / "cold.db"
    store_games(db, 10)
    app = create_app(db)
    boards = app.state.pages.boards
    computing, go = threading.Event(), threading.Event()
    board = boards.leaderboard

    def held(*args: Any, **kwargs: Any) -> Any:
        computing.set()
        go.wait()
        return board(*args, **kwargs)

    boards.leaderboard = held
    try:
        async with app.router.lifespan_context(app):
            assert await trio.to_thread.run_sync(computing.wait, 60), "the warm-up starts with the server"
            status, _, body = await call(app, "/api/health")
            assert status == 200, body
            health = json.loads(body)
            assert health["ready"] is True and health["warm"] is False, health
            go.set()
            with trio.fail_after(60):
                while not health["warm"]:
                    await trio.sleep(0.05)
                    health = json.loads((await call(app, "/api/health"))[2])
    finally:
        go.set()
