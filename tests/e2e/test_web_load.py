"""``arena serve`` under a burst: one client's many requests to the ladder neither take
every worker thread nor make the server compute the same page many times, and a ladder
storing games while pages are read never makes the server forget what it computed.

The server is the real app behind Hypercorn on loopback, in this process, so that the
ladder page's computation can be held (a ``threading.Event``) while the burst arrives:
what is asserted is how many computations run, never how fast."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from arena.store import Store
from arena.web.app import asgi_app
from arena.web.coalesce import AT_ONCE, kind_of, shareable
from arena.web.pages.ladders import Ladders
from arena.web.pages.site import Site

from .test_web_fresh import store_game, two_kinds
from .test_web_ladder import build_db

BURST = 60
"""More than the worker threads (``PAGE_THREADS``): on a server without limits, the burst held them all."""


class Held:
    """``Ladders.page``, held until released, counting its computations."""

    def __init__(self, page: Callable[..., Any]) -> None:
        self.page = page
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.calls = 0

    def __call__(self, ladders: Ladders, name: str | None) -> Any:
        with self.lock:
            self.calls += 1
        assert self.release.wait(60), "the test releases the ladder page"
        return self.page(ladders, name)


async def test_a_burst_to_the_ladder_is_computed_once_and_other_pages_answer_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bots").mkdir()
    db = tmp_path / "arena.db"
    build_db(db, tmp_path / "bots")
    held = Held(Ladders.page)
    monkeypatch.setattr(Ladders, "page", lambda self, name: held(self, name))
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            lambda task_status: serve(asgi_app(db), config, shutdown_trigger=stop.wait, task_status=task_status)
        )  # type: ignore[arg-type]
        url = binds[0]
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            answers: list[httpx.Response] = []

            async def ask(path: str) -> None:
                answers.append(await client.get(path))

            async with trio.open_nursery() as burst:
                for _ in range(BURST):
                    burst.start_soon(ask, "/ladder")
                for n in range(20):  # the same page under other queries: one kind, computed a few at a time
                    burst.start_soon(ask, f"/ladder?n={n}")
                with trio.fail_after(60):
                    while held.calls < AT_ONCE:  # the page, and a few of its other queries, held
                        await trio.sleep(0.05)
                await trio.sleep(0.5)  # the rest of the burst arrives meanwhile
                with trio.fail_after(60):  # on a server whose worker threads the burst holds, this never answers
                    other = await client.get("/bots")
                    health = await client.get("/api/health")
                assert other.status_code == 200 and health.status_code == 200
                assert held.calls <= AT_ONCE, f"the ladder page was computed {held.calls} times at once"
                held.release.set()
            assert len(answers) == BURST + 20 and all(a.status_code == 200 for a in answers)
            plain = {a.text for a in answers if a.request.url.query == b""}
            assert len(plain) <= 2, "the burst's identical requests share at most two computations"
        stop.set()


def test_what_is_shared_and_how_pages_are_grouped() -> None:
    def scope(path: str, **headers: str) -> dict[str, Any]:
        return {
            "type": "http",
            "method": "GET",
            "path": path,
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }

    assert shareable(scope("/ladder")) and shareable(scope("/api/games/7/frames"))
    assert not shareable(scope("/ladder", cookie="arena_session=x")), "a signed-in author's page is their own"
    assert not shareable(scope("/submissions")) and not shareable(scope("/static/site.css"))
    assert not shareable({**scope("/ladder"), "method": "POST"})
    assert kind_of("/api/games/7/frames") == kind_of("/api/games/8/frames") == "api:games/*/frames"
    assert kind_of("/games/7") == "games/*" != kind_of("/games") == "games"
    assert kind_of("/") == ""


class RacingStore(Store):
    """A reader under which a game is stored just after it reads the newest game id, as a
    ladder does any moment: the count read next sees one game more than that id says."""

    def __init__(self, path: Path, store: Callable[[], int]) -> None:
        super().__init__(path, read_only=True)
        self.store_one = store
        self.armed = False

    def last_game_id(self, tournament_id: int | None = None) -> int:
        last = super().last_game_id(tournament_id)
        if self.armed:
            self.armed = False
            self.store_one()
        return last


def test_a_game_stored_while_the_stamps_are_read_keeps_every_computed_board(tmp_path: Path) -> None:
    """Before, a game stored between reading the newest id and the count made the two
    disagree, taken for games that went away: every computed board was dropped and
    computed again on the spot, over and over while a ladder ran."""
    db = tmp_path / "fresh.db"
    two_kinds(db)
    number = iter(range(100, 200))
    site = Site(db, background=False)
    with RacingStore(db, lambda: store_game(db, "cup", next(number))) as reader:
        site.board_stamps(reader)
        site.cache.put(("computed",), 1, "a board")
        for _ in range(5):
            reader.armed = True
            stamps = site.board_stamps(reader)
            assert site.cache.peek(("computed",)) is not None, "nothing went away: nothing is forgotten"
        assert stamps.games <= site.board_stamps(reader).games == reader.count_games() == 15
        tallies = site.tallies(reader)
        assert tallies.tournaments[reader.get_tournament("cup").id] == 11  # type: ignore[union-attr]
        assert sum(tallies.bots.values()) == sum(reader.bot_game_counts().values())
