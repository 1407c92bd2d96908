"""``arena serve`` over real databases: every page and endpoint, every error status, and
serving beside a tournament that is writing to the same file."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.boards.columns import interval_text
from arena.boards.standings import leaderboard
from arena.store import Store, StoredGame

from ..conftest import SAMPLES, serving
from .test_boards import warned_db  # noqa: F401  (a shared fixture)
from .test_league_store import games_on_nodes, games_on_workers

ARENA = str(Path(sys.executable).parent / "arena")
NIMMT = "standard,end_score=30"
"""The board of the 6 nimmt! tournament (``--set end_score=30``): its rule set."""
FAULTY_CODE = """\
import sys

from protocol.bot import Bot, run


class Faulty(Bot):
    asked = 0

    def new_game(self, message):
        self.asked = 0

    def decide(self, kind, view, legal):
        self.asked += 1
        if self.asked == 2:  # one illegal answer a game: faulty, never disqualified
            print("trying 999 on purpose", file=sys.stderr, flush=True)
            return 999
        return legal[0]


run(Faulty())
"""
SLOW_CODE = """\
import time

from protocol.bot import Bot, run

PAUSE = {pause}


class Slow(Bot):
    def decide(self, kind, view, legal):
        time.sleep(PAUSE)
        return legal[-1]


run(Slow())
"""


def bot_folder(base: Path, name: str, code: str, games: str = '["nimmt"]') -> Path:
    """A bot folder a sandboxed bot (user nobody) can read."""
    folder = base / name
    folder.mkdir()
    (folder / "bot.py").write_text(textwrap.dedent(code))
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "0.1"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = {games}\n'
    )
    for path in (folder, *folder.iterdir()):
        os.chmod(path, 0o755)
    return folder


def tournament_args(db: Path, name: str, *bots: str | Path, deals: int = 2, extra: tuple[str, ...] = ()) -> list[str]:
    return [
        ARENA,
        "tournament",
        "run",
        *map(str, bots),
        "--table-size",
        "3",
        "--deals",
        str(deals),
        "--seed",
        "11",
        "--sandbox",
        "local",
        "--set",
        "end_score=30",
        "--db",
        str(db),
        "--name",
        name,
        *extra,
    ]


def games_of(store: Store, tournament: str, limit: int, offset: int = 0) -> list[StoredGame]:
    """A page of the tournament's stored games, oldest first, as the store reads them."""
    found = store.get_tournament(tournament)
    assert found is not None
    return store.find_games(found.id, limit=limit, offset=offset)


_SHARED: dict[str, Path] = {}
"""What the session builds once for this module and tests/e2e/test_web_browser.py (which
imports the fixtures: pytest then holds one definition per module, so they share here)."""


@pytest.fixture(scope="session")
def work() -> Iterator[Path]:
    if "work" not in _SHARED:
        _SHARED["work"] = Path(tempfile.mkdtemp(prefix="arena-web-test-"))
        os.chmod(_SHARED["work"], 0o755)
    yield _SHARED["work"]
    shutil.rmtree(_SHARED["work"], ignore_errors=True)


@pytest.fixture(scope="session")
def web_db(work: Path) -> Path:
    """A real database: a 6 nimmt! tournament of four bots (one commits a fault a game)
    and a Sixes tournament of two, played with the local sandbox."""
    if "db" not in _SHARED:
        _SHARED["db"] = build_web_db(work)
    return _SHARED["db"]


def build_web_db(work: Path) -> Path:
    db = work / "arena.db"
    faulty = bot_folder(work, "faulty", FAULTY_CODE)
    bots = [SAMPLES / "heuristic", SAMPLES / "random", SAMPLES / "lowest", faulty]
    played = subprocess.run(tournament_args(db, "cup", *bots), capture_output=True, text=True, timeout=120)
    assert played.returncode == 0, played.stderr
    sixes = [
        ARENA,
        "tournament",
        "run",
        str(SAMPLES / "sixes-heuristic"),
        str(SAMPLES / "sixes-random"),
        "--game",
        "sixes",
        "--deals",
        "2",
        "--seed",
        "3",
        "--sandbox",
        "local",
        "--db",
        str(db),
        "--name",
        "sixcup",
    ]
    played = subprocess.run(sixes, capture_output=True, text=True, timeout=120)
    assert played.returncode == 0, played.stderr
    return db


@pytest.fixture(scope="module")
def site(web_db: Path) -> Iterator[str]:
    with serving(web_db) as url:
        yield url


def fetch(url: str, timeout: float = 10) -> tuple[int, str, bytes]:
    """Status, content type and body, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("content-type", ""), error.read()


def api(url: str) -> Any:
    status, kind, body = fetch(url)
    assert status == 200, (url, status, body[:300])
    assert kind.startswith("application/json"), kind
    return json.loads(body)


def builtins(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


# --- the data ---------------------------------------------------------------------------------


def test_the_leaderboard_is_the_stored_one(site: str, web_db: Path) -> None:
    with Store(web_db) as store:
        expected = {
            (game, variant, tournament): builtins(leaderboard(store, game, variant, tournament))
            for game, variant, tournament in [
                ("nimmt", NIMMT, None),
                ("sixes", "standard", None),
                ("nimmt", NIMMT, "cup"),
            ]
        }
    everything = api(f"{site}/api/leaderboard")
    assert [(b["game"], b["variant"]) for b in everything["boards"]] == [("nimmt", NIMMT), ("sixes", "standard")]
    assert [(b["key"], b["label"]) for b in everything["boards"]] == [
        ("nimmt/standard,end_score=30", "6 nimmt! standard · end at 30 heads"),
        ("sixes/standard", "Sixes"),
    ]
    for (game, variant, tournament), rows in expected.items():
        query = urllib.parse.urlencode({"game": game, "variant": variant, "tournament": tournament or ""})
        board = api(f"{site}/api/leaderboard?{query}")["boards"][0]
        assert board["rows"] == rows, query
        assert not board["stale"]
        ends = [v for r in rows for v in (r["low"], r["elo"], r["high"]) if v is not None]
        assert board["scale"][0] <= min(ends) <= max(ends) <= board["scale"][1]
    assert {r["bot"] for r in expected[("nimmt", NIMMT, None)]} == {
        "heuristic:1.0.0",
        "random:1.0.0",
        "lowest:1.0.0",
        "faulty:0.1",
    }
    faulty = next(r for r in expected[("nimmt", NIMMT, None)] if r["bot"] == "faulty:0.1")
    assert faulty["illegal"] == faulty["games"] > 0, "one illegal answer a game"


def test_tournaments(site: str, web_db: Path) -> None:
    listed = {t["name"]: t for t in api(f"{site}/api/tournaments")["tournaments"]}
    assert set(listed) == {"cup", "sixcup"}
    cup = api(f"{site}/api/tournaments/cup")
    assert cup["status"] == "finished" and cup["finished"]
    assert cup["games_done"] == cup["games_planned"] == 24 == listed["cup"]["games_done"], "4 tables x 2 deals x 3"
    assert cup["settings"]["end_score"] == 30 and cup["seed"] == 11
    assert cup["config"]["bots"][3] == "faulty:0.1"
    with Store(web_db) as store:
        assert cup["standings"]["rows"] == builtins(leaderboard(store, "nimmt", NIMMT, "cup"))
        newest = games_of(store, "cup", limit=100)[::-1][:20]
    assert [g["id"] for g in cup["games"]] == [g.id for g in newest]
    assert cup["games"][0]["seats"] == msgspec.to_builtins(newest[0].seats)
    assert api(f"{site}/api/tournaments/sixcup")["games_done"] == 4


def test_bots(site: str, web_db: Path) -> None:
    listed = {b["bot"]: b for b in api(f"{site}/api/bots")["bots"]}
    assert listed["faulty:0.1"]["games"] == 18 and listed["sixes-random:1.0.0"]["games"] == 4
    faulty = api(f"{site}/api/bots/faulty")  # a bare name is its latest version
    assert faulty["bot"] == "faulty:0.1" and faulty["games"] == 18
    assert faulty["faults"] == {"timeout": 0, "crash": 0, "malformed": 0, "illegal": 18}
    record = faulty["fault_record"]
    assert len(record) == 18, "its 18 faulty games, each with its one fault"
    assert all(f["kind"] == "illegal" and "999" in f["line"] and "illegal" in f["message"] for f in record)
    # The stderr tail is what had arrived when the fault happened: the line may still be in flight.
    assert any("999 on purpose" in (f["stderr"] or "") for f in record)
    assert [f["game"] for f in record] == sorted((f["game"] for f in record), reverse=True)
    (history,) = faulty["ratings"]
    assert (history["game"], history["variant"]) == ("nimmt", NIMMT)
    (point,) = history["points"]
    with Store(web_db) as store:
        row = next(r for r in leaderboard(store, "nimmt", NIMMT) if r.bot == "faulty:0.1")
    assert (point["tournament"], point["elo"], point["low"], point["high"]) == ("cup", row.elo, row.low, row.high)
    opponents = {o["bot"]: o for o in faulty["opponents"]}
    assert set(opponents) == {"heuristic:1.0.0", "random:1.0.0", "lowest:1.0.0"}
    assert all(o["games"] == 12 and o["ahead"] + o["behind"] + o["tied"] == 12 for o in opponents.values())
    assert len(faulty["recent_games"]) == 5 and all(  # its newest 5 of 18 (the page links to all)
        "faulty:0.1" in [s["bot"] for s in g["seats"]] for g in faulty["recent_games"]
    )
    assert [g["id"] for g in faulty["recent_games"]] == sorted((g["id"] for g in faulty["recent_games"]), reverse=True)


def test_games(site: str, web_db: Path) -> None:
    page = api(f"{site}/api/games?tournament=cup&limit=5&offset=2")
    with Store(web_db) as store:
        stored = games_of(store, "cup", limit=5, offset=2)
        replay = store.replay(stored[0].id)
    assert page["total"] == 24 and page["order"] == "asc"
    assert [g["id"] for g in page["games"]] == [g.id for g in stored]
    first = page["games"][0]
    assert first == {k: v for k, v in msgspec.to_builtins(stored[0]).items() if k != "seed"}, "lists keep seeds back"
    assert [s["bot"] for s in first["seats"]] == [s.bot for s in stored[0].seats]
    one = api(f"{site}/api/games/{stored[0].id}")
    assert one["seats"] == first["seats"] and one["tournament"] == "cup"
    status, kind, body = fetch(f"{site}/api/games/{stored[0].id}/replay")
    assert status == 200 and body == replay and "ndjson" in kind
    frames = api(f"{site}/api/games/{stored[0].id}/frames")
    assert isinstance(frames, dict) and frames
    newest = api(f"{site}/api/games?order=desc&limit=1")["games"][0]
    assert newest["tournament"] == "sixcup"


def test_health_and_index(site: str) -> None:
    health = api(f"{site}/api/health")
    assert health["ready"] is True and health["games"] == 28
    index = api(f"{site}/api")
    assert index["games"] == 28 and "/api/leaderboard?game=&variant=&tournament=&anchor=&board=" in index["endpoints"]


# --- the pages ------------------------------------------------------------------------------


def page(url: str) -> str:
    status, kind, body = fetch(url)
    assert status == 200, (url, status, body[:300])
    assert kind.startswith("text/html")
    text = body.decode()
    assert "http://" not in text and "https://" not in text.replace("https://www.w3.org", ""), "no remote asset"
    return text


def test_html_pages_show_the_values(site: str, web_db: Path) -> None:
    with Store(web_db) as store:
        board = leaderboard(store, "nimmt", NIMMT)
        game = games_of(store, "cup", limit=1)[0]
    html = page(f"{site}/leaderboard?game=nimmt&variant={urllib.parse.quote(NIMMT)}")
    for row in board:
        assert row.bot in html and f">{row.elo:.0f}<" in html and interval_text(row) in html
    assert html.count('class="errorbar bar-two"') == len(board)
    assert '<option value="cup">' in html
    index = page(f"{site}/")
    assert 'href="/tournaments/cup"' in index and "<strong>6 nimmt! standard · end at 30 heads</strong>" in index
    tournament = page(f"{site}/tournaments/cup")
    assert 'data-live-url="/api/tournaments/cup"' in tournament and 'data-status="finished"' in tournament
    assert ">24</strong>" in tournament and "faulty:0.1" in tournament
    bot = page(f"{site}/bots/faulty:0.1")
    assert 'class="rating-chart"' in bot and "trying 999 on purpose" in bot and "illegal" in bot
    shown = page(f"{site}/games/{game.id}")
    assert f'<div id="replay-viewer" data-frames-url="/api/games/{game.id}/frames"></div>' in shown
    assert '<link rel="stylesheet" href="/static/viewer.css">' in shown and "/static/viewer.js" in shown
    for seat in game.seats:
        assert seat.bot in shown and f'<td class="num">{seat.score}</td>' in shown
    assert "faulty:0.1" in page(f"{site}/bots") and "sixcup" in page(f"{site}/tournaments")
    assert "#" + str(game.id) in page(f"{site}/games?tournament=cup&order=asc")
    for asset in ("/static/site.css", "/static/site.js"):
        assert fetch(site + asset)[0] == 200


def test_the_game_page_names_the_node_that_played_it(tmp_path: Path) -> None:
    db = tmp_path / "nodes.db"
    old, played = games_on_nodes(db)
    with serving(db) as url:
        assert api(f"{url}/api/games/{played}")["node"] == "w1"
        assert [g["node"] for g in api(f"{url}/api/games")["games"]] == ["", "w1"]
        assert ", played on w1</dd>" in page(f"{url}/games/{played}")
        assert "played on" not in page(f"{url}/games/{old}"), "a game stored before nodes were: nothing to say"


def test_the_tournament_page_shows_its_workers(tmp_path: Path) -> None:
    """Each node's slots and games; its pace while a run plays the tournament (here, a
    lease held as `arena tournament run` holds it), and none once that run is gone."""
    db = tmp_path / "workers.db"
    games_on_workers(db)
    with serving(db) as url, Store(db) as running:
        cluster = running.get_tournament("cluster")
        assert cluster is not None
        with running.lease(cluster.id):
            running.set_status(cluster.id, "running")
            nodes = api(f"{url}/api/tournaments/cluster")["nodes"]
            shown = page(f"{url}/tournaments/cluster")
        gone = api(f"{url}/api/tournaments/cluster")["nodes"]
        assert [n["recent_per_s"] for n in gone] == [None, None, None], "a dead run's pace is not shown"
        assert '<td class="num">—</td>\n      </tr>' in page(f"{url}/tournaments/cluster")
        assert [(n["node"], n["slots"], n["games"]) for n in nodes] == [("w1", 4, 2), ("w2", None, 1), ("w3", 2, 0)]
        assert nodes[0]["recent_per_s"] == pytest.approx(1 / 60) and nodes[1]["recent_per_s"] == 0.0
        assert '<h2 id="workers-heading">Workers</h2>' in shown and 'data-field="workers" hidden' not in shown
        rows = shown.split('id="workers"')[1].split("</table>")[0]
        for node, slots, games, per_s in (("w1", "4", "2", "0.02"), ("w2", "—", "1", "0.00"), ("w3", "2", "0", "0.00")):
            assert (
                f'<td>{node}</td>\n        <td class="num">{slots}</td>\n        <td class="num">{games}</td>\n'
                f'        <td class="num">{per_s}</td>'
            ) in rows
        assert api(f"{url}/api/tournaments/alone")["nodes"] == []
        assert "Workers" not in page(f"{url}/tournaments/alone"), "games on one machine before nodes: no section"


# --- boards per rule set, their warnings and anchors (the database of tests/e2e/test_boards.py) ---


@pytest.fixture(scope="module")
def warned_site(warned_db: Path) -> Iterator[str]:  # noqa: F811
    with serving(warned_db) as url:
        yield url


def test_the_api_carries_boards_warnings_and_anchors(warned_site: str, warned_db: Path) -> None:  # noqa: F811
    from .test_boards import APART, FEW, ONCE, boards

    cli = boards(warned_db)
    served = api(f"{warned_site}/api/leaderboard")
    assert [(b["key"], b["label"]) for b in served["boards"]] == [
        (FEW, "6 nimmt! standard · end at 30 heads"),
        (APART, "6 nimmt! standard · 1 round"),
        (ONCE, "6 nimmt! standard · shedding"),
    ]
    assert {b["key"]: b["rows"] for b in served["boards"]} == cli, "the rows of `arena leaderboard --format json`"
    assert [k["key"] for k in served["kinds"]] == [FEW, APART, ONCE]
    (once,) = api(f"{warned_site}/api/leaderboard?board=nimmt/shedding")["boards"]
    assert once["key"] == ONCE and once["anchor"] is None
    lower = next(r for r in once["rows"] if r["bound"] == ">")
    assert lower["high"] is None and once["scale"][0] <= lower["low"] <= once["scale"][1]

    query = urllib.parse.urlencode({"board": FEW, "anchor": "lowest=1400"})
    (anchored,) = api(f"{warned_site}/api/leaderboard?{query}")["boards"]
    assert anchored["anchor"] == {"bot": "lowest:1.0.0", "elo": 1400.0}
    assert anchored["rows"] == boards(warned_db, "--board", FEW, "--anchor", "lowest=1400")[FEW]
    for params, needle in [
        ({"board": FEW, "anchor": "nobody=1500"}, f"no bot 'nobody' on the board {FEW}: its bots are heuristic:1.0.0"),
        ({"anchor": "lowest"}, "anchor='lowest': expected NAME[:VERSION]=ELO"),
        ({"board": "nimmt/standard,colour=red"}, "unknown setting 'colour'"),
        ({"board": FEW, "game": "nimmt"}, "leave game= and variant= out"),
    ]:
        status, _, body = fetch(f"{warned_site}/api/leaderboard?{urllib.parse.urlencode(params)}")
        assert status == 400 and needle in json.loads(body)["error"], (params, body)


def test_the_pages_show_warnings_bounds_and_parts(warned_site: str, warned_db: Path) -> None:  # noqa: F811
    from .test_boards import APART, ONCE, boards

    rows = boards(warned_db, "--board", ONCE)[ONCE]
    html = page(f"{warned_site}/leaderboard?{urllib.parse.urlencode({'board': ONCE})}")
    assert "<h1>Leaderboard" in html and "6 nimmt! standard · shedding" in html
    for row in rows:
        bound = {">": f"&gt; {row['low'] or 0:.0f}", "<": f"&lt; {row['high'] or 0:.0f}"}
        text = bound.get(row["bound"], "—")
        assert f'<span class="ci-text" title="{row["note"]}">{text}</span>' in html, (row, text)
        assert f"<li>{row['note']} ({row['bot']})</li>" in html or f"<li>{row['note']} (every bot)</li>" in html
    kinds = {">": "bar-lower", "<": "bar-upper", "": "bar-none"}
    for bound, css in kinds.items():
        assert html.count(f'class="errorbar {css}"') == sum(r["bound"] == bound for r in rows), css
    assert 'name="anchor"' in html and '<option value="heuristic:1.0.0=1500">' in html, "the anchor control"
    parts = page(f"{warned_site}/leaderboard?{urllib.parse.urlencode({'board': APART})}")
    assert parts.index("part 1 of 2") < parts.index("never played those above") < parts.index("part 2 of 2")
    heuristic = api(f"{warned_site}/api/bots/heuristic")
    history = {h["key"]: h for h in heuristic["ratings"]}
    (point,) = history[ONCE]["points"]
    assert point["bound"] == ">" and point["high"] is None and point["groups"] == 1 and point["note"]
    bot_page = page(f"{warned_site}/bots/heuristic")
    assert f"<td>&gt; {point['low']:.0f}</td>" in bot_page and 'class="point point-lower"' in bot_page


# --- errors ---------------------------------------------------------------------------------

ERRORS = [
    ("/games/999999", 404, "no game 999999"),
    ("/games/abc", 400, "a game id is a whole number"),
    ("/games/-3", 400, "a game id is a whole number"),
    ("/bots/nobody", 404, "no bot 'nobody'"),
    ("/tournaments/nothing", 404, "no tournament 'nothing'"),
    ("/leaderboard?game=chess", 400, "unknown game 'chess'"),
    ("/leaderboard?game=nimmt&variant=fast", 400, "unknown variant 'fast'"),
    ("/leaderboard?variant=standard", 400, "needs a game"),
    ("/leaderboard?tournament=nothing", 404, "no tournament 'nothing'"),
    ("/games?limit=0", 400, "limit must be from 1 to 500"),
    ("/games?limit=many", 400, "limit must be a whole number"),
    ("/games?limit=501", 400, "limit must be from 1 to 500"),
    ("/games?offset=-1", 400, "offset must be at least 0, not -1"),
    ("/games?offset=99999999999999999999", 400, "offset must be at least 0"),
    ("/games/99999999999999999999", 404, "no game 99999999999999999999"),
    ("/games?order=sideways", 400, "order must be asc or desc"),
    ("/games?bot=nobody", 404, "no bot 'nobody'"),
    ("/no/such/page", 404, "no page at"),
]


def test_bad_input_gets_a_clear_status_and_message(site: str) -> None:
    for path, status, needle in ERRORS:
        for prefix in ("", "/api"):
            got, kind, body = fetch(site + prefix + path)
            text = body.decode()
            assert got == status, (prefix + path, got, text[:300])
            assert "Traceback" not in text and 'File "' not in text
            if prefix:
                assert kind.startswith("application/json") and needle in json.loads(text)["error"], (path, text)
            else:
                assert kind.startswith("text/html") and needle in text.replace("&#39;", "'"), (path, text[:500])
    for path in ("/api/games/abc/frames", "/api/games/abc/replay"):
        assert fetch(site + path)[0] == 400
    for path in ("/api/games/999999/frames", "/api/games/999999/replay"):
        assert fetch(site + path)[0] == 404


def copy_db(source: Path, target: Path) -> None:
    """A consistent copy of a database in WAL mode (the backup API, not a file copy)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def test_a_missing_database_is_503_until_it_appears(work: Path, web_db: Path) -> None:
    db = work / "later.db"
    with serving(db) as url:
        health = api(f"{url}/api/health")
        assert health["ready"] is False and "no database at" in health["message"]
        for path in ("/", "/leaderboard", "/api/leaderboard", "/api/games/1", "/bots/x"):
            status, kind, body = fetch(url + path)
            assert status == 503, path
            assert f"no database at {db} yet: a tournament creates it" in body.decode(), body
            assert kind.startswith("application/json" if path.startswith("/api") else "text/html")
        copy_db(web_db, db)
        assert len(api(f"{url}/api/leaderboard")["boards"]) == 2, "served as soon as it appears"
        assert not db.with_name("later.db-bots").exists(), "serving created nothing"


def test_a_damaged_replay_is_a_500_without_traceback(work: Path, web_db: Path) -> None:
    db = work / "damaged.db"
    copy_db(web_db, db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE games SET replay = x'00ff00ff' WHERE id = 3")
    with serving(db) as url:
        for path in ("/api/games/3/frames", "/api/games/3/replay"):
            status, kind, body = fetch(url + path)
            assert status == 500 and kind.startswith("application/json")
            message = json.loads(body)["error"]
            assert "the stored replay of game 3 is damaged" in message and "Traceback" not in message
        assert fetch(url + "/games/3")[0] == 200, "the game's page still shows its header"
        assert api(f"{url}/api/games/4/frames")


async def test_an_unexpected_error_shows_no_traceback(web_db: Path) -> None:
    """The catch-all handler, in process: a page whose code raises."""
    from arena.web.app import Headers, create_app

    app = create_app(web_db, warm_up=False)

    def broken(*args: Any) -> Any:
        raise RuntimeError("secret internals /etc/passwd")

    app.state.pages.boards.index = broken
    wrapped = Headers(app)
    for path, kind in (("/", "text/html"), ("/api", "application/json")):
        status, headers, body = await call(wrapped, path)
        assert status == 500, body
        assert headers[b"content-type"].decode().startswith(kind)
        assert b"internal error" in body
        assert b"Traceback" not in body and b"secret internals" not in body and b"RuntimeError" not in body
        assert b"content-security-policy" in headers


async def call(app: Any, path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    """One GET through an ASGI app, without a server."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"test")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    try:
        await app(scope, receive, send)
    except RuntimeError:
        pass  # Starlette re-raises what it answered with a 500, for the server's log
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


# --- beside a running tournament --------------------------------------------------------------


def test_serving_beside_a_running_tournament(work: Path) -> None:
    """The server reads while the tournament writes: the tournament is neither blocked nor
    corrupted, every game is stored, and the server sees them arrive."""
    db = work / "live.db"
    slow = bot_folder(work, "slowpoke", SLOW_CODE.format(pause=0.01))
    bots = [SAMPLES / "heuristic", SAMPLES / "random", slow]
    with serving(db) as url:
        assert fetch(url + "/api/tournaments/live")[0] == 503, "no database yet"
        proc = subprocess.Popen(
            tournament_args(db, "live", *bots, deals=3, extra=("--concurrency", "1")),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: list[int] = []
        waits: list[str] = []
        reader: sqlite3.Connection | None = None
        try:
            while proc.poll() is None:
                for path in ("/api/tournaments/live", "/api/leaderboard", "/api/games?limit=5&order=desc", "/"):
                    status, _, body = fetch(url + path, timeout=10)
                    assert status in (200, 404, 503), (path, status, body[:300])
                    if path == "/api/tournaments/live" and status == 200:
                        seen.append(json.loads(body)["games_done"])
                if seen and reader is None:  # a reader as the server's (read-only), that never waits for a lock
                    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0, isolation_level=None)
                if reader is not None:
                    try:
                        reader.execute("SELECT count(*) FROM games JOIN game_seats ON game_id = games.id").fetchone()
                    except sqlite3.OperationalError as exc:
                        waits.append(str(exc))
                time.sleep(0.05)
            assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()
            if reader is not None:
                reader.close()
        final = api(f"{url}/api/tournaments/live")
    assert final["status"] == "finished" and final["games_done"] == final["games_planned"] == 9
    assert seen == sorted(seen), "the count never goes back"
    assert len(set(seen)) >= 3, f"the API saw the games arrive: {seen}"
    # A reader held by the writer's lock: the server's would wait out its busy timeout and
    # fail (the status check above); one that may not wait at all fails at the first lock.
    assert reader is not None and waits == [], f"a reader waited for the tournament's lock: {waits}"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM games").fetchone()[0] == 9
        assert conn.execute("SELECT count(*) FROM game_seats").fetchone()[0] == 27
