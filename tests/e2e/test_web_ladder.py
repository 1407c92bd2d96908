"""The ladder's pages and the privacy of submitted bots, on ``arena serve`` over a real
database: a ladder tournament with games stored as a tournament stores them, authors and
submissions made through ``arena.store.submissions``.

The privacy promise of issue 17: other people see a submitted bot's name, ratings and
replays, never its code or its stderr. Every public answer is swept for the stderr a
submitted bot wrote; an organiser's bot (``arena bot add``, no owner) keeps its stderr
public; the signed-in author sees their own."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.bots import bundle
from arena.games import registry as catalog
from arena.play import replay, simulate
from arena.store import FinishedGame, SeatResult, Store
from arena.store.submissions import CHECKING, Submissions
from arena.web.errors import WebError
from arena.web.pages.bots import BotPage, FaultPaging
from arena.web.pages.ladders import Ladders, pick, retired_caveat
from arena.web.pages.site import Site
from arena.web.privacy import NOTE, bot_page, replay_without_stderr, withheld

from ..conftest import serving

SECRET = "SECRET-STDERR-xyz"
"""What the submitted bot wrote to stderr: never in a public answer."""
REPORT_SECRET = "SECRET-REPORT-stderr"
"""What a waiting submission's check report holds: never on the ladder page."""
CODE_SECRET = "BOT-CODE-MARKER-42"
"""A line of the submitted bot's code: never served."""
ORGANISER = "ORGANISER-STDERR-visible"
"""What the organiser's bot wrote to stderr: public, as before."""
GAMES = 4
"""Ladder games: secretive (seat 0, faulty), rival, plain (the organiser's)."""


def bot_folder(base: Path, name: str, version: str) -> Path:
    folder = base / f"{name}-{version}"
    folder.mkdir()
    (folder / "bot.py").write_text(f"# {CODE_SECRET}\nprint('hello')\n")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'
    )
    return folder


def game_replay(names: list[str], seed: int, stderr: list[str]) -> tuple[bytes, list[int], list[int]]:
    """A real 6 nimmt! game (it replays), seat 0 with a fault whose evidence is its stderr."""
    rng = random.Random(seed)
    lines = simulate.replay_of(catalog.get_game("nimmt"), {}, 3, seed, [simulate.random_policy(rng)] * 3)
    header = lines[0]
    assert isinstance(header, replay.Header)
    seats = [replay.SeatInfo(ref.split(":")[0], ref.split(":")[1], "process") for ref in names]
    lines[0] = replay.Header(header.format, header.game, header.settings, seed, 3, seats, {"move_ms": 1000})
    end = lines[-1]
    assert isinstance(end, replay.End)
    faults = [replay.Fault("timeout", "no answer within 1000 ms", None, text + "\n") for text in stderr]
    statuses = [replay.SeatStatus("faulty", [faults[s]]) for s in range(3)]
    fault_lines: list[replay.Line] = [replay.FaultLine(s, faults[s]) for s in range(3)]
    lines = [lines[0], lines[1], *fault_lines, *lines[2:-1], replay.End(end.scores, end.ranks, statuses, stderr)]
    return replay.dumps(lines), end.scores, end.ranks


def build_db(db: Path, base: Path) -> dict[str, Any]:
    """The ladder ``ladder`` (with another, ``second``), a cup tournament, alice's
    ``secretive`` (0.1 retired, 0.2 active), bob's ``rival`` and two submissions waiting;
    the organiser's ``plain``."""
    with Store(db) as store:
        subs = Submissions(store)
        alice, alice_token = subs.add_author("alice")
        bob, _ = subs.add_author("bob")
        ids: dict[str, int] = {}
        for author, name, version in [(alice, "secretive", "0.1"), (alice, "secretive", "0.2"), (bob, "rival", "1")]:
            folder = bot_folder(base, name, version)
            digest, archive = bundle.pack(folder)
            made = subs.submit(author, name, version, digest, archive)
            stored = store.add_bot(folder)
            subs.activate(made.id, stored.id, {"build": "", "checks": [], "error": ""})
            ids[f"{name}:{version}"] = stored.id
        plain = store.add_bot(bot_folder(base, "plain", "1"))
        ids["plain:1"] = plain.id
        for author, name in [(bob, "waiter"), (alice, "checker")]:
            digest, archive = bundle.pack(bot_folder(base, name, "0.3"))
            made = subs.submit(author, name, "0.3", digest, archive)
            if name == "checker":
                subs.set_state(made.id, CHECKING, {"build": REPORT_SECRET, "checks": [], "error": REPORT_SECRET})
        config = {"limits": {"move_ms": 1000, "bank_ms": 0}, "ladder": {"table_size": 3, "deals_per_table": 1}}
        ladder = store.create_tournament("ladder", "nimmt", "standard", {}, 7, config)
        store.create_tournament("second", "nimmt", "standard", {}, 8, config)
        cup = store.create_tournament("cup", "nimmt", "standard", {}, 9, {})
        game_ids = []
        for number in range(GAMES):
            first = "secretive:0.1" if number < 2 else "secretive:0.2"
            names = [first, "rival:1", "plain:1"]
            game_ids.append(store_game(store, ladder.id, number, names, ids))
        store_game(store, cup.id, 0, ["plain:1", "rival:1", "secretive:0.2"], ids)
    return {"ids": ids, "games": game_ids, "alice": alice_token}


def store_game(store: Store, tournament_id: int, number: int, names: list[str], ids: dict[str, int]) -> int:
    texts = {"secretive": f"thinking\n{SECRET}", "rival": "rival thinks aloud", "plain": ORGANISER}
    stderr = [texts[n.split(":")[0]] for n in names]
    data, scores, ranks = game_replay(names, 100 + number, stderr)
    seats = [SeatResult(ids[n], ranks[s], scores[s], "faulty", {"timeout": 1}) for s, n in enumerate(names)]
    record = FinishedGame(
        tournament_id, number, 0, 0, 100 + number, "nimmt", "standard", 1, 5.0, "2026-01-01T00:00:00+00:00",
        seats, data,
    )  # fmt: skip
    return store.save_game(record)


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[Path, dict[str, Any]]]:
    base = Path(tempfile.mkdtemp(prefix="arena-ladder-web-"))
    try:
        db = base / "arena.db"
        (base / "bots").mkdir()
        yield db, build_db(db, base / "bots")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def site(built: tuple[Path, dict[str, Any]]) -> Iterator[str]:
    with serving(built[0]) as url:
        yield url


def finish_all(db: Path) -> None:
    """Every tournament of ``db`` finished: its games stand alone (one rotation of each
    deal), and a game whose deal's other rotations may still be played keeps its replay
    back (tests/e2e/test_deal_secrets.py)."""
    with Store(db) as store:
        for name in store.tournament_names():
            found = store.get_tournament(name)
            assert found is not None
            store.set_status(found.id, "finished")


@pytest.fixture(scope="module")
def finished(built: tuple[Path, dict[str, Any]]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A copy of ``built`` whose tournaments have finished."""
    base = Path(tempfile.mkdtemp(prefix="arena-ladder-web-done-"))
    try:
        db = base / "arena.db"
        with Store(built[0]) as source, Store(db) as copy:
            source.db.backup(copy.db)
        shutil.copytree(built[0].parent / "arena-bots", base / "arena-bots")
        finish_all(db)
        yield db, built[1]
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def done_site(finished: tuple[Path, dict[str, Any]]) -> Iterator[str]:
    with serving(finished[0]) as url:
        yield url


def get(url: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Cookie": f"arena_session={cookie}"} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def api(url: str, cookie: str = "") -> Any:
    status, headers, body = get(url, cookie)
    assert status == 200, (url, status, body[:300])
    return json.loads(body)


# --- the ladder's pages ---------------------------------------------------------------------


def test_the_ladder_shows_its_board_waiting_submissions_and_games(site: str) -> None:
    data = api(f"{site}/api/ladder")
    assert data["name"] == "ladder" and data["ladders"] == ["ladder", "second"]
    assert data["games_done"] == GAMES and len(data["games"]) == GAMES
    assert [g["id"] for g in data["games"]] == sorted((g["id"] for g in data["games"]), reverse=True)
    assert {g["tournament"] for g in data["games"]} == {"ladder"}, "the cup's game is not the ladder's"
    rows = {r["bot"]: r for r in data["standings"]["rows"]}
    assert set(rows) == {"secretive:0.1", "secretive:0.2", "rival:1", "plain:1"}
    assert rows["rival:1"]["games"] == GAMES and rows["secretive:0.2"]["games"] == 2
    retired = [c for c in data["standings"]["caveats"] if c["kind"] == "retired"]
    assert len(retired) == 1 and retired[0]["bots"] == ["secretive:0.1"], "the version that plays no more"
    assert sorted(a["bot"] for a in data["active"]) == ["rival:1", "secretive:0.2"]
    waiting = data["waiting"]
    assert [(w["bot"], w["author"], w["state"]) for w in waiting] == [
        ("waiter:0.3", "bob", "received"),
        ("checker:0.3", "alice", "checking"),
    ]
    assert set(waiting[0]) == {"bot", "name", "version", "author", "state", "received", "since", "waiting_s"}
    health = data["health"]
    assert health["state"] == "interrupted", "no arena holds its lease"
    assert health["resume"].startswith("arena ladder run --name ladder")
    text = get(f"{site}/ladder")[2].decode()
    assert "Ladder ladder" in text and 'data-live-url="/api/ladder/ladder"' in text
    assert "waiter:0.3" in text and "checker:0.3" in text and "checking" in text
    assert text.count('class="mark mark-retired"') == 1 and "Retired versions" in text
    assert f'href="/games/{data["games"][0]["id"]}"' in text
    assert '<a href="/ladder" aria-current="page">Ladder</a>' in text, "the header links the ladder"
    assert REPORT_SECRET not in text and REPORT_SECRET not in json.dumps(data), "never a submission's report"
    second = api(f"{site}/api/ladder/second")
    assert second["name"] == "second" and second["games_done"] == 0 and second["standings"]["rows"] == []
    csv = get(f"{site}/api/ladder?format=csv")
    assert csv[0] == 200 and csv[1]["content-type"].startswith("text/csv") and b"secretive:0.2" in csv[2]


def test_a_missing_ladder_is_a_clear_404(site: str) -> None:
    status, _, body = get(f"{site}/api/ladder/cup")
    assert status == 404 and json.loads(body) == {"error": "no ladder 'cup' (ladders: ladder, second)"}
    status, _, body = get(f"{site}/ladder/nothing")
    assert status == 404 and b"no ladder &#39;nothing&#39;" in body and b"Traceback" not in body


def test_the_leaderboard_page_has_the_ladders_board(site: str) -> None:
    data = api(f"{site}/api/leaderboard")
    assert [b["ladder"] for b in data["ladders"]] == ["ladder", "second"]
    board = data["ladders"][0]
    assert board["tournament"] == "ladder" and {r["bot"] for r in board["rows"]} == {
        "secretive:0.1",
        "secretive:0.2",
        "rival:1",
        "plain:1",
    }
    everything = {r["bot"]: r["games"] for r in data["boards"][0]["rows"]}
    assert everything["rival:1"] == GAMES + 1, "the game's board still counts every game, the cup's too"
    text = get(f"{site}/leaderboard")[2].decode()
    assert 'class="board-section ladder-board"' in text and 'href="/ladder/ladder"' in text
    label = data["boards"][0]["label"]
    assert text.index("ladder-board") < text.index(f'aria-label="{label}"'), "a section of its own, first"
    assert api(f"{site}/api/leaderboard?tournament=cup")["ladders"] == [], "a tournament's leaderboard is its own"


def test_no_ladder_no_link(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        store.create_tournament("cup", "nimmt", "standard", {}, 1, {})
    site = Site(db, background=False)
    ladders = Ladders(site)
    assert ladders.names() == [] and ladders.boards(None) == []
    with Store(db) as store:
        store.create_tournament("ranked", "nimmt", "standard", {}, 1, {"ladder": {}})
    assert ladders.names() == ["ranked"], "seen as soon as it is made"
    assert Ladders(Site(tmp_path / "none.db")).names() == [], "no database yet: no ladder, no error"


def test_pick_and_retired_marks() -> None:
    assert retired_caveat([{"bot": "a:1"}, {"bot": "b:1"}], {"c:1"}) is None
    caveat = retired_caveat([{"bot": "a:1"}, {"bot": "a:2"}], {"a:1"})
    assert caveat is not None and caveat["bots"] == ["a:1"] and caveat["short"] == "retired"
    assert "a:1 no longer plays" in caveat["text"]
    with pytest.raises(WebError, match="no ladder yet: `arena ladder run` starts one"):
        pick([], None)


# --- privacy ------------------------------------------------------------------------------


def public_urls(site: str, built: dict[str, Any]) -> list[str]:
    game = built["games"][-1]
    refs = ["secretive:0.1", "secretive:0.2", "rival:1"]
    return [
        *(f"{site}{prefix}/bots/{ref}" for ref in refs for prefix in ("", "/api")),
        *(f"{site}/api/bots/{ref}?format=csv" for ref in refs),
        *(f"{site}/bots/{ref}?faults_page=2" for ref in refs),
        *(
            f"{site}{path}"
            for g in built["games"]
            for path in (
                f"/games/{g}",
                f"/api/games/{g}",
                f"/api/games/{g}?format=csv",
                f"/api/games/{g}/frames",
                f"/api/games/{g}/replay",
                f"/api/games/{g}/replay?download=1",
                f"/games/{g}/duplicate",
                f"/api/games/{g}/duplicate",
            )
        ),
        *(
            f"{site}{path}"
            for path in (
                "/",
                "/api",
                "/games",
                "/api/games",
                "/api/games?format=csv",
                f"/games?bot=secretive:0.2&opponent=rival:1&faults=1&limit={game}",
                "/api/games?bot=secretive:0.2&faults=1",
                "/bots",
                "/api/bots",
                "/api/bots?format=csv",
                "/ladder",
                "/api/ladder",
                "/api/ladder?format=csv",
                "/leaderboard",
                "/api/leaderboard",
                "/tournaments/ladder",
                "/api/tournaments/ladder",
                "/tournaments/cup",
            )
        ),
    ]


def test_no_public_answer_holds_a_submitted_bots_stderr_or_code(done_site: str, built: tuple[Path, Any]) -> None:
    asked = 0
    for url in public_urls(done_site, built[1]):
        status, _, body = get(url)
        assert status == 200, (url, status, body[:200])
        for secret in (SECRET, CODE_SECRET, REPORT_SECRET, "rival thinks aloud"):
            assert secret.encode() not in body, f"{url} shows {secret}"
        asked += 1
    assert asked > 60


def test_the_organisers_bot_keeps_its_stderr_public(done_site: str, built: tuple[Path, Any]) -> None:
    site = done_site
    data = api(f"{site}/api/bots/plain:1")
    assert ORGANISER in data["fault_groups"][0]["latest"]["stderr_tail"] and "stderr_withheld" not in data
    assert ORGANISER in get(f"{site}/bots/plain:1")[2].decode()
    status, headers, body = get(f"{site}/api/games/{built[1]['games'][0]}/replay")
    assert status == 200 and ORGANISER.encode() in body, "the organiser's seat: as stored"
    assert "immutable" not in headers["cache-control"] and "Cookie" in headers["vary"]


def test_a_submitted_bots_page_says_whose_stderr_it_is(site: str) -> None:
    data = api(f"{site}/api/bots/secretive:0.2")
    assert data["stderr_withheld"] == NOTE and data["faults"]["timeout"] == 3, "2 ladder games, 1 in the cup"
    latest = data["fault_groups"][0]["latest"]
    assert latest["stderr_tail"] == "" and latest["stderr"] == "" and latest["stderr_note"] == NOTE
    assert latest["message"] == "no answer within 1000 ms", "the fault itself stays public"
    assert all(f["stderr"] == "" for f in data["fault_record"]) and len(data["fault_record"]) == 3
    text = get(f"{site}/bots/secretive:0.2")[2].decode()
    assert f"Its stderr: {NOTE}." in text and "The end of its stderr" not in text


def test_the_stripped_replay_still_replays(done_site: str, built: tuple[Path, Any]) -> None:
    site = done_site
    body = get(f"{site}/api/games/{built[1]['games'][0]}/replay")[2]
    lines = replay.loads(body, "served")
    list(replay.verify(lines, "served"))  # the rules still agree with every line
    end = lines[-1]
    assert isinstance(end, replay.End)
    assert end.stderr == ["", "", ORGANISER], "the submitted seats' emptied, the organiser's as stored"
    assert end.statuses[0].faults[0].stderr is None and end.statuses[2].faults[0].stderr == ORGANISER + "\n"
    assert json.loads(body.splitlines()[-1])["withheld"] == {"seats": [0, 1], "note": NOTE}
    faults = [line for line in lines if isinstance(line, replay.FaultLine)]
    assert [f.fault.stderr for f in faults] == [None, None, ORGANISER + "\n"]


@pytest.mark.parametrize("flags", [(), ("--submissions",)], ids=["read-only", "submissions"])
def test_the_signed_in_author_sees_their_own_stderr(finished: tuple[Path, Any], flags: tuple[str, ...]) -> None:
    db, built = finished[0], finished
    with Store(db) as store:
        subs = Submissions(store)
        alice, _ = subs.open_session(subs.author("alice"))
        bob, _ = subs.open_session(subs.author("bob"))
    game = built[1]["games"][-1]
    with serving(db, extra=flags) as site:
        mine = api(f"{site}/api/bots/secretive:0.2", alice)
        assert SECRET in mine["fault_groups"][0]["latest"]["stderr_tail"]
        status, headers, body = get(f"{site}/bots/secretive:0.2", alice)
        assert SECRET in body.decode() and headers["cache-control"] == "private, no-store"
        status, headers, body = get(f"{site}/api/games/{game}/replay", alice)
        assert SECRET.encode() in body and b"rival thinks aloud" not in body, "hers, not bob's"
        assert headers["cache-control"] == "private, no-store"
        for cookie in (bob, "forged-cookie", ""):
            assert SECRET.encode() not in get(f"{site}/api/games/{game}/replay", cookie)[2]
            assert SECRET.encode() not in get(f"{site}/bots/secretive:0.2", cookie)[2]
        assert b"rival thinks aloud" in get(f"{site}/api/games/{game}/replay", bob)[2]
    with Store(db) as store:
        Submissions(store).revoke("alice")
    try:
        with serving(db, extra=flags) as site:
            assert SECRET.encode() not in get(f"{site}/api/games/{game}/replay", alice)[2], "revoked: signed out"
    finally:
        with Store(db) as store:
            store.db.execute("UPDATE authors SET revoked = NULL WHERE name = 'alice'")


def test_a_damaged_replay_of_a_submitted_bot_is_not_served(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    db = tmp_path / "arena.db"
    built = build_db(db, tmp_path / "bots")
    finish_all(db)
    game = built["games"][-1]
    with Store(db) as store:
        stored = store.replay(game)
    damaged = stored.replace(b'{"type":"end"', b'{"type":"end" ' + SECRET.encode(), 1)
    assert damaged != stored
    with Store(db) as store:
        t = store.get_tournament("cup")
        assert t is not None
        ids = built["ids"]
        names = ["secretive:0.2", "rival:1", "plain:1"]
        seats = [SeatResult(ids[n], s + 1, 10, "faulty", {"timeout": 1}) for s, n in enumerate(names)]
        record = FinishedGame(
            t.id, 5, 0, 0, 5, "nimmt", "standard", 1, 5.0, "2026-01-02T00:00:00+00:00", seats, damaged
        )
        broken = store.save_game(record)
    with serving(db) as site:
        status, _, body = get(f"{site}/api/games/{broken}/replay")
        assert status == 500 and SECRET.encode() not in body
        assert json.loads(body)["error"].startswith(f"game {broken}: line "), "one line, naming the game"
        status, _, body = get(f"{site}/api/games/{broken}/frames")
        assert status == 500 and SECRET.encode() not in body


def test_no_route_serves_a_bots_files(site: str, built: tuple[Path, Any]) -> None:
    db = built[0]
    with Store(db) as store:
        snapshot = Path(store.get_bot("secretive:0.2").path)
    assert (snapshot / "bot.py").read_text().startswith(f"# {CODE_SECRET}")
    relative = os.path.relpath(snapshot / "bot.py", Path(__file__).resolve().parents[2] / "arena/web/static")
    for path in (
        f"/static/{relative}",
        f"/static/{relative.replace('/', '%2F')}",
        f"/static/..%2F..%2F..%2F{snapshot.name}/bot.py",
        "/bots/secretive:0.2/bot.py",
        "/api/bots/secretive:0.2/bot.toml",
    ):
        status, _, body = get(site + path)
        assert status in (400, 404) and CODE_SECRET.encode() not in body, (path, status)
    assert "path" not in api(f"{site}/api/bots/secretive:0.2"), "not even where it lies"


def test_the_pure_parts() -> None:
    owners = {"a": 1, "b": 2, "c": None}
    assert withheld(["a", "b", "c", "d"], lambda n: owners.get(n), None) == {"a", "b"}
    assert withheld(["a", "b", "c"], lambda n: owners.get(n), 1) == {"b"}
    data = b'{"type":"header"}\n{"type":"end","stderr":["x","y"],"statuses":[]}\n'
    assert replay_without_stderr(data, set()) is data, "nothing withheld: the stored bytes"
    out = replay_without_stderr(data, {1, 7})
    assert json.loads(out.splitlines()[1])["stderr"] == ["x", ""]
    with pytest.raises(WebError, match="line 2 cannot be read"):
        replay_without_stderr(b'{"type":"header"}\nnot json\n', {0})
    page = BotPage(
        bot="a:1", name="a", version="1", language="python", games_listed=[], hash="", added="", games=1,
        updating=[], faults={}, ratings=[], standing=[], opponents=[], recent_games=[],
        fault_record=[{"stderr": "s", "game": 1}], fault_groups=[{"latest": {}}],
        fault_paging=FaultPaging(page=1, pages=1, groups=1, per_page=10, faults=1, games_scanned=1), times={},
    )  # fmt: skip
    hidden = bot_page(page)
    assert hidden.fault_record == [{"stderr": "", "game": 1, "stderr_note": NOTE}]
    assert hidden.stderr_withheld == NOTE
    assert page.fault_record[0]["stderr"] == "s", "the cached page is left as it was"


# --- the live page in a browser ----------------------------------------------------------


def test_the_ladder_page_polls_in_a_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    (tmp_path / "bots").mkdir()
    db = tmp_path / "arena.db"
    built = build_db(db, tmp_path / "bots")
    with Store(db) as store, serving(db) as site:
        ladder = store.get_tournament("ladder")
        assert ladder is not None
        with store.lease(ladder.id):
            browser.get(f"{site}/ladder")
            root = browser.find_element(By.CSS_SELECTOR, "article[data-live-url]")
            assert root.get_attribute("data-status") in ("running", "stalled"), "held: polled"
            WebDriverWait(browser, 60).until(lambda d: root.get_attribute("data-polling") == "on")
            assert browser.find_element(By.CSS_SELECTOR, '[data-field="games_done"]').text == str(GAMES)
            store_game(store, ladder.id, 50, ["secretive:0.2", "rival:1", "plain:1"], built["ids"])
            subs = Submissions(store)
            digest, archive = bundle.pack(bot_folder(tmp_path / "bots", "newcomer", "1"))
            subs.submit(subs.author("bob"), "newcomer", "1", digest, archive)
            WebDriverWait(browser, 90).until(
                lambda d: d.find_element(By.CSS_SELECTOR, '[data-field="games_done"]').text == str(GAMES + 1)
            )
            WebDriverWait(browser, 60).until(lambda d: "newcomer:1" in d.find_element(By.ID, "ladder-waiting").text)
            rows = browser.find_elements(By.CSS_SELECTOR, "#tournament-games tbody tr")
            assert len(rows) == GAMES + 1
            assert_games_redrawn_whole(browser)
            nav = browser.find_element(By.CSS_SELECTOR, ".site-header nav").text
            assert "Ladder" in nav
            assert SECRET not in browser.page_source


def assert_games_redrawn_whole(browser: Any) -> None:
    """The games table as the poll redrew it: as many cells in every row as headings, in
    their order (the Started column included), and on a phone each card shows its date."""
    headings = browser.execute_script(
        "return Array.from(document.querySelectorAll('#tournament-games thead th'), (th) => th.textContent.trim())"
    )
    assert headings[1] == "Started", headings
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#tournament-games tbody tr'),"
        " (row) => Array.from(row.cells, (cell) => [cell.className, cell.textContent.trim()]))"
    )
    assert cells and all(len(row) == len(headings) for row in cells), (headings, cells)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row[1][1]) for row in cells), cells
    size = browser.get_window_size()
    try:
        browser.set_window_size(390, 844)
        # One script reads the table at one moment: the poll may redraw it between calls.
        shown, hidden = browser.execute_script(
            "const cells = (css) => Array.from(document.querySelectorAll('#tournament-games tbody ' + css));"
            " return [cells('td.date').map((cell) => cell.innerText.trim()),"
            " cells('td.wide-only').map((cell) => getComputedStyle(cell).display !== 'none')]"
        )
        assert shown and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", text) for text in shown), shown
        assert hidden and not any(hidden), "match · deal and rounds are wide-only"
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_a_ladder_bots_rating_over_time_is_a_series_over_time(tmp_path: Path) -> None:
    """A ladder never ends: a bot's rating on it is drawn at moments of its games (after
    every 10th of 36 here, then as it stands), each labelled by when, not one point
    labelled "ladder"; the bot page also says where it stands, on the kind's board and
    on the ladder's."""
    (tmp_path / "bots").mkdir()
    db = tmp_path / "arena.db"
    built = build_db(db, tmp_path / "bots")
    with Store(db) as store:
        ladder = store.get_tournament("ladder")
        assert ladder is not None
        for number in range(GAMES, 36):
            names = ["secretive:0.2", "rival:1", "plain:1"]
            data, scores, ranks = game_replay(names, 100 + number, ["", "", ""])
            seats = [SeatResult(built["ids"][n], ranks[s], scores[s], "ok", {}) for s, n in enumerate(names)]
            started = f"2026-01-{1 + number // 10:02d}T{number % 10:02d}:30:00+00:00"
            store.save_game(
                FinishedGame(ladder.id, number, 0, 0, 100 + number, "nimmt", "standard", 1, 5.0, started, seats, data)
            )
    with serving(db) as site:
        page = api(site + "/api/bots/rival:1")
        (kind,) = page["ratings"]
        names = [p["tournament"] for p in kind["points"]]
        assert names[:3] == ["ladder 2026-01-01 09:30", "ladder 2026-01-02 09:30", "ladder 2026-01-03 09:30"], names
        assert names[3:] == ["ladder, latest", "cup"], names
        games = [p["games"] for p in kind["points"]]
        assert games == [11, 21, 31, 36, 37], games  # the cup's game (stored after the 4th) counts from the 10th on
        where = {s["label"]: s for s in page["standing"]}
        assert set(where) == {"6 nimmt! standard", "the ladder ladder"}, where
        assert all(s["rank"] >= 1 and s["of"] == 4 and s["rating"] for s in where.values()), where
        with urllib.request.urlopen(site + "/bots/rival:1", timeout=30) as response:
            html = response.read().decode()
        assert html.count('<g class="point') == 5 and "ladder 2026-01-02 09:30" in html
        assert 'href="/ladder/ladder">the ladder ladder</a>: Elo' in html
