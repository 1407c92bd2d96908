"""A bot's fault record on ``arena serve`` over a real database: 58 faults of three kinds,
stored as a tournament stores them (replays ending in their end line). Repeated faults are
one entry with a count, a fault's stderr shows its end (where the fault is), and the
record comes a page of groups at a time."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.play import replay
from arena.store import FinishedGame, SeatResult, Store

from ..conftest import SAMPLES, serving
from .test_web import api, fetch, page

GAMES = 58
TIMEOUTS = 37
CRASHES = 9
MALFORMED = "abcdefghijkl"
"""One malformed line a game in the oldest 12 games, each a different message."""
STDERR_LINES = 40


def fault_of(game_no: int) -> replay.Fault:
    """Game ``game_no``'s one fault: malformed in the oldest 12, then a crash every fifth
    game, a timeout otherwise. A timeout's stderr is long, its last line the fault's."""
    if game_no < len(MALFORMED):
        return replay.Fault("malformed", f"not JSON: unexpected {MALFORMED[game_no]!r}", f"{MALFORMED[game_no]}?", "x")
    if game_no % 5 == 0:
        return replay.Fault("crash", "bot exited: exit code 1", None, "Traceback (most recent call last):\nboom\n")
    lines = [f"first stderr line of game {game_no}"] + [f"thinking {i}" for i in range(1, STDERR_LINES - 1)]
    stderr = "\n".join([*lines, f"stuck in search at game {game_no}"]) + "\n"
    return replay.Fault("timeout", f"no answer to request {game_no * 7} within 1000 ms", None, stderr)


def store_faults(db: Path) -> None:
    """58 two-seat 6 nimmt! games: seat 0 (sixes-random) commits one fault each."""
    with Store(db) as store:
        faulty, other = (store.add_bot(SAMPLES / name) for name in ("random", "heuristic"))
        t = store.create_tournament("faults", "nimmt", "standard", {}, 1, {})
        for number in range(GAMES):
            fault = fault_of(number)
            seats = [replay.SeatInfo(b.name, b.version, "process") for b in (faulty, other)]
            header = replay.Header(1, "nimmt", {}, number, 2, seats, {"move_ms": 1000})
            status = "disqualified" if fault.kind == "crash" else "faulty"
            end = replay.End(
                [5, 1], [2, 1], [replay.SeatStatus(status, [fault]), replay.SeatStatus("ok")], [fault.stderr or "", ""]
            )
            data = replay.dumps([header, replay.FaultLine(0, fault), end])
            results = [
                SeatResult(faulty.id, 2, 5, status, {fault.kind: 1}),
                SeatResult(other.id, 1, 1, "ok", {}),
            ]
            record = FinishedGame(
                t.id, number, 0, 0, number, "nimmt", "standard", 1, 1.0, "2026-01-01T00:00:00+00:00", results, data
            )
            store.save_game(record)


@pytest.fixture(scope="module")
def faults_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("faults") / "arena.db"
    store_faults(db)
    return db


@pytest.fixture(scope="module")
def site(faults_db: Path) -> Iterator[str]:
    with serving(faults_db) as url:
        yield url


def bot_ref(faults_db: Path) -> str:
    with Store(faults_db) as store:
        return store.get_bot("random").ref


def groups_on(text: str) -> list[str]:
    return re.findall(r'<li class="fault fault-group">(.*?)</li>', text, re.S)


def test_the_json_twin_has_the_groups(site: str, faults_db: Path) -> None:
    ref = bot_ref(faults_db)
    data = api(f"{site}/api/bots/{ref}")
    assert data["faults"] == {"timeout": TIMEOUTS, "crash": CRASHES, "malformed": len(MALFORMED), "illegal": 0}
    assert len(data["fault_record"]) == 20, "each fault of the newest 20 faulty games, as before"
    paging = data["fault_paging"]
    assert paging == {
        "page": 1,
        "pages": 2,
        "groups": 2 + len(MALFORMED),
        "per_page": 10,
        "faults": GAMES,
        "games_scanned": 500,
    }
    groups = data["fault_groups"]
    assert len(groups) == 10
    timeout, crash = groups[0], groups[1]
    assert (timeout["kind"], timeout["count"], timeout["game_count"]) == ("timeout", TIMEOUTS, TIMEOUTS)
    assert timeout["message"] == "no answer to request N within 1000 ms", "the varying id, not the fixed limit"
    assert (crash["kind"], crash["count"], crash["message"]) == ("crash", CRASHES, "bot exited: exit code 1")
    assert timeout["games"] == sorted(timeout["games"], reverse=True) and len(timeout["games"]) == 8
    latest = timeout["latest"]
    assert latest["game"] == timeout["games"][0] and latest["message"].startswith("no answer to request ")
    assert latest["stderr_tail"].endswith("stuck in search at game 57")
    assert "first stderr line" not in latest["stderr_tail"] and "first stderr line" in latest["stderr_earlier"]
    assert len(latest["stderr_tail"].split("\n")) == 12 and latest["earlier_lines"] == STDERR_LINES - 12
    assert [g["count"] for g in groups[2:]] == [1] * 8 and all(g["kind"] == "malformed" for g in groups[2:])
    second = api(f"{site}/api/bots/{ref}?faults_page=2")
    assert second["fault_paging"]["page"] == 2 and len(second["fault_groups"]) == 4
    seen = [g["message"] for g in groups + second["fault_groups"]]
    assert len(set(seen)) == len(seen) == 2 + len(MALFORMED)


def test_the_page_shows_groups_the_stderr_end_and_pages(site: str, faults_db: Path) -> None:
    ref = bot_ref(faults_db)
    text = html.unescape(page(f"{site}/bots/{ref}"))
    shown = groups_on(text)
    assert len(shown) == 10, "at most 10 groups a page"
    assert "no answer to request N within 1000 ms" in shown[0] and "×37" in shown[0]
    assert "in 37 games:" in shown[0] and "… 29 more" in shown[0]
    assert "bot exited: exit code 1" in shown[1] and "×9" in shown[1]
    assert '<details class="fault-evidence" open>' in shown[0], "the newest group's evidence is open"
    assert all('<details class="fault-evidence">' in g for g in shown[1:]), "the others, a line each"
    tail = re.search(r'<pre class="evidence stderr stderr-tail">(.*?)</pre>', shown[0], re.S)
    assert tail is not None and tail.group(1).endswith("stuck in search at game 57")
    assert "first stderr line" not in tail.group(1)
    assert "<summary>… 28 earlier lines</summary>" in shown[0], "the rest, folded above the end"
    assert "×" not in "".join(shown[2:]), "a fault seen once has no count"
    assert "Its line:" in shown[2] and shown[2].index("Its line:") < shown[2].index("The end of its stderr")
    nexts = re.findall(r'<a href="([^"]*)" rel="next">', text)
    assert nexts == ["?faults_page=2#faults"] and 'rel="prev"' not in text
    second = html.unescape(page(f"{site}/bots/{ref}{nexts[0]}"))
    assert len(groups_on(second)) == 4 and "Page 2 of 2" in second
    assert re.findall(r'<a href="([^"]*)" rel="prev">', second) == ["?faults_page=1#faults"]
    assert 'rel="next"' not in second
    assert len(groups_on(html.unescape(page(f"{site}/bots/{ref}?faults_page=9")))) == 4, "past the end: the last"
    status, _, body = fetch(f"{site}/bots/{ref}?faults_page=0")
    assert status == 400 and b"faults_page" in body
