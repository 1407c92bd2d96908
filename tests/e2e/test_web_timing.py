"""Time per move: the figures computed from replays (the referee's bank rule replayed),
a bot's and a game's on ``arena serve`` over a real database, and the viewer's strip
of turns in a real browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.boards import timing
from arena.boards.timing import Move, SeatTimes
from arena.play import replay
from arena.store import FinishedGame, SeatResult, Store
from arena.web import charts

from ..conftest import SAMPLES, serving
from .test_viewer import played
from .test_viewer_browser import wait_for
from .test_web import api, page

LIMITS = {"move_ms": 100, "bank_ms": 500}


def header(seats: int = 2, limits: dict[str, int] = LIMITS, names: tuple[str, ...] = ("a", "b")) -> replay.Header:
    infos = [replay.SeatInfo(names[s], "1", "process") for s in range(seats)]
    return replay.Header(1, "nimmt", {}, 1, seats, infos, limits)


def decision(walls: list[float], seats: list[int] | None = None, defaulted: list[bool] | None = None) -> Any:
    seats = list(range(len(walls))) if seats is None else seats
    return replay.DecisionLine(
        "play", seats, [None] * len(seats), walls, [0.0] * len(seats), defaulted or [False] * len(seats)
    )


def timeout(seat: int) -> replay.FaultLine:
    return replay.FaultLine(seat, replay.Fault("timeout", f"no answer to request 3 within {100 + 440} ms"))


def end(seats: int = 2) -> replay.End:
    return replay.End([0] * seats, [1] * seats, [replay.SeatStatus("ok")] * seats, [""] * seats)


# --- the computation -------------------------------------------------------------------


def test_the_bank_after_each_move_follows_the_referees_rule() -> None:
    """Over the limit costs the rounded excess; 100.4 ms rounds to the limit and costs
    nothing; a timeout empties the bank; an empty bank stays empty."""
    lines = [
        header(),
        decision([10, 5]),
        decision([160, 20]),  # 60 over: 440 left
        decision([100.4, 30]),  # rounds to 100: free
        decision([350.6, 40]),  # 251 over: 189 left
        timeout(0),
        decision([189 + 100.2, 50], defaulted=[True, False]),
        decision([120, 99.6]),
        decision([0, 60], defaulted=[True, False]),  # seat 0 not asked: no move of its own
        end(),
    ]
    a, b = timing.seat_times(lines)
    assert (a.seat, a.bot, a.move_ms, a.bank_ms) == (0, "a:1", 100, 500)
    assert [m.wall_ms for m in a.moves] == [10, 160, 100.4, 350.6, 289.2, 120]
    assert [m.bank_ms for m in a.moves] == [500, 440, 440, 189, 0, 0]
    assert [m.timeout for m in a.moves] == [False, False, False, False, True, False]
    assert [m.bank_ms for m in b.moves] == [500] * 7 and len(b.moves) == 7
    assert [timing.bin_of(m, 100) for m in a.moves] == ["10–25%", "over", "75–100%", "over", "timeout", "over"]
    assert [timing.bin_of(m, 100) for m in b.moves][-2:] == ["75–100%", "50–75%"]


def test_a_replay_without_a_move_limit_has_no_times() -> None:
    assert timing.seat_times([header(limits={}), decision([10, 5]), end()]) == []


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert [timing.percentile(values, p) for p in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert [timing.percentile([3.0, 7.0], p) for p in (1, 50, 51, 99)] == [3, 3, 7, 7]


def test_the_summary_counts_bins_percentiles_and_the_bank() -> None:
    with_bank = SeatTimes(0, "a:1", 100, 500, [Move(10, 500), Move(160, 440), Move(600, 0, True)])
    dipped = SeatTimes(1, "a:1", 100, 500, [Move(80, 500), Move(120, 480)])
    no_bank = SeatTimes(0, "a:1", 100, 0, [Move(25, 0)])
    idle = SeatTimes(1, "a:1", 100, 500, [])
    found = timing.summary([no_bank, dipped, idle, with_bank])
    assert (found["games"], found["moves"], found["move_ms"]) == (3, 6, [100])
    assert found["ms"] == {"p50": 80, "p90": 600, "p99": 600, "max": 600}
    assert found["share"] == {"p50": 0.8, "p90": 6.0, "p99": 6.0, "max": 6.0}
    assert [b["moves"] for b in found["bins"]] == [0, 1, 1, 0, 1, 2, 1]
    assert [b["bin"] for b in found["bins"]] == list(timing.BIN_NAMES)
    assert found["bank"] == {"games_into_bank": 2, "least_left_ms": 0, "least_left_share": 0.0, "timeouts": 1}
    empty = timing.summary([idle])
    assert empty["moves"] == 0 and empty["ms"]["p50"] is None and empty["bank"]["least_left_ms"] is None


def test_the_viewer_marks_one_turn_per_timed_frame() -> None:
    frames = [
        {"index": 0, "times": None, "notes": []},
        {"index": 1, "times": [12.5, None, 80.0], "notes": []},
        {"index": 2, "times": None, "notes": []},
        {"index": 3, "times": [None, 1500.0, None], "notes": [{"seat": 1, "kind": "timeout"}]},
        {"index": 4, "times": [3.0, 3.0, 3.0], "notes": [{"seat": 0, "kind": "dropped"}]},
    ]
    marks = timing.turn_marks(frames, 1000)
    assert [(m["frame"], m["seat"], m["ms"], m["bin"], m["level"]) for m in marks] == [
        (1, 2, 80.0, "0–10%", 0),
        (3, 1, 1500.0, "timeout", 6),
        (4, 2, 3.0, "0–10%", 0),
    ]
    assert [m["faults"] for m in marks] == [[], ["timeout"], []], "a dropped line is no fault"
    assert [m["text"] for m in marks] == ["80 ms", "1.50 s", "3.0 ms"]


def test_the_charts_scale_to_the_most_moves_and_the_limit() -> None:
    bins = charts.time_bins(
        [{"bin": name, "moves": n} for name, n in zip(timing.BIN_NAMES, [8, 4, 0, 0, 0, 2, 0], strict=True)]
    )
    heights = [c["h"] for c in bins["columns"]]
    assert heights[0] == bins["bottom"] - 18 and heights[1] == heights[0] / 2 and heights[2] == 0
    seat = {"move_ms": 100, "bank_ms": 500, "wall_ms": [50, 100, 250], "bank_left_ms": [500, 500, 350], "timeouts": []}
    series = charts.time_series(seat)
    assert [b["kind"] for b in series["bars"]] == ["under", "under", "over"]
    assert series["ceiling_ms"] == 262, "the slowest move, with a little room"
    assert series["bars"][1]["y"] == series["limit_y"], "a move at the limit reaches the limit line"
    assert series["bank"].split()[0] == "44,8", "the bank starts full, at the top"
    assert series["bank"].split()[-1] == "580.0,36.2", "350 of 500 left: 70% of the way up"


# --- the server ------------------------------------------------------------------------

REAL_BOTS = ("lowest", "greedy-perl", "montecarlo")
"""The seats of the real game (kept apart from the hand-built games' bots)."""


def slow_walls(lines: list[replay.Line]) -> list[replay.Line]:
    """A real game's replay with wall times spread over the whole limit and beyond, so
    that its turns fall in every bin but timeout."""
    out: list[replay.Line] = []
    turn = 0
    for line in lines:
        if isinstance(line, replay.DecisionLine):
            turn += 1
            line = msgspec.structs.replace(line, wall_ms=[float((turn * 137 + s * 31) % 1300) for s in line.seats])
        out.append(line)
    return out


def store_games(db: Path) -> None:
    """Three hand-built two-seat games of random (a) and heuristic (b), and one real game."""
    with Store(db) as store:
        a, b = (store.add_bot(SAMPLES / name) for name in ("random", "heuristic"))
        t = store.create_tournament("timing", "nimmt", "standard", {}, 1, {})
        games = [
            (
                (a, b),
                [
                    header(),
                    decision([10, 5]),
                    decision([160, 20]),
                    timeout(0),
                    decision([600, 30], defaulted=[True, False]),
                    decision([99.6], seats=[1]),
                    end(),
                ],
            ),
            (
                (b, a),
                [
                    header(),
                    decision([0, 80], defaulted=[True, False]),
                    decision([0, 120], [0, 1], [True, False]),
                    end(),
                ],
            ),
            ((a, b), [header(limits={"move_ms": 100}), decision([25, 50]), end()]),
        ]
        real = slow_walls(replay.read(played("standard")))
        bots = [store.add_bot(SAMPLES / name) for name in REAL_BOTS]
        games.append((tuple(bots), real))
        for number, (seated, lines) in enumerate(games):
            results = [SeatResult(bot.id, 1, 0, "ok", {}) for bot in seated]
            started = "2026-01-01T00:00:00+00:00"
            record = FinishedGame(
                t.id, number, 0, 0, 1, "nimmt", "standard", 1, 1.0, started, results, replay.dumps(lines)
            )
            store.save_game(record)
        store.set_status(t.id, "finished")  # one rotation of each deal: shown once no other can come


@pytest.fixture(scope="module")
def timing_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("timing") / "arena.db"
    store_games(db)
    return db


@pytest.fixture(scope="module")
def site(timing_db: Path) -> Iterator[str]:
    with serving(timing_db) as url:
        yield url


def ref_of(db: Path, name: str) -> str:
    with Store(db) as store:
        return store.get_bot(name).ref


def test_a_bots_times_over_its_games(site: str, timing_db: Path) -> None:
    ref = ref_of(timing_db, "random")
    times = api(f"{site}/api/bots/{ref}")["times"]
    assert (times["games"], times["moves"], times["move_ms"]) == (3, 6, [100])
    assert times["ms"] == {"p50": 80, "p90": 600, "p99": 600, "max": 600}
    assert times["share"]["p50"] == 0.8 and times["share"]["max"] == 6.0
    assert [b["moves"] for b in times["bins"]] == [0, 1, 1, 0, 1, 2, 1]
    assert times["bank"] == {"games_into_bank": 2, "least_left_ms": 0, "least_left_share": 0.0, "timeouts": 1}
    assert (times["games_read"], times["unreadable"], times["games_limit"]) == (3, 0, 200)
    other = api(f"{site}/api/bots/{ref_of(timing_db, 'heuristic')}")["times"]
    assert (other["games"], other["moves"], other["ms"]["max"]) == (2, 5, 99.6), "game 2's seat was never asked"
    text = page(f"{site}/bots/{ref}")
    drawn = dict(re.findall(r'data-bin="([^"]+)" data-moves="(\d+)"', text))
    assert drawn == {
        "0–10%": "0",
        "10–25%": "1",
        "25–50%": "1",
        "50–75%": "0",
        "75–100%": "1",
        "over": "2",
        "timeout": "1",
    }
    assert "median 80 ms (80% of the limit)" in text and "the least left 0 ms (0%); 1 timeout." in text


def test_a_games_times_per_seat(site: str, timing_db: Path) -> None:
    times = api(f"{site}/api/games/1")["times"]
    assert [(s["seat"], s["wall_ms"], s["bank_left_ms"], s["timeouts"]) for s in times] == [
        (0, [10, 160, 600], [500, 440, 0], [2]),
        (1, [5, 20, 30, 99.6], [500] * 4, []),
    ]
    text = page(f"{site}/games/1")
    seat0 = re.search(r'data-seat-times="0">(.*?)</figure>', text, re.S)
    assert seat0 is not None
    assert "3 moves, median 160 ms, slowest 600 ms (600% of 100 ms), bank left 0 of 500 ms, 1 timeout" in seat0[1]
    kinds = re.findall(r'class="move move-(\w+)"', seat0[1])
    assert kinds == ["under", "over", "timeout"]
    assert '<polyline class="bank"' in seat0[1] and 'class="limit"' in seat0[1]
    no_bank = page(f"{site}/games/3")
    assert '<polyline class="bank"' not in no_bank and "data-seat-times" in no_bank


# --- the viewer ------------------------------------------------------------------------

MARKS = """
const marks = Array.from(document.querySelectorAll("#replay-viewer .rv-mark"));
const at = document.querySelector("#replay-viewer [data-frame-index]");  // null until the viewer is drawn
return {
  index: at ? Number(at.getAttribute("data-frame-index")) : -1,
  frames: marks.map((m) => Number(m.getAttribute("data-mark-frame"))),
  levels: marks.map((m) => (m.className.match(/rv-level-(\\d)/) || [])[1]),
  current: marks.map((m, i) => (m.getAttribute("aria-current") ? i : -1)).filter((i) => i >= 0),
};
"""


@pytest.mark.browser
def test_the_viewer_strip_has_a_mark_per_turn_and_a_click_jumps_there(browser: Any, site: str) -> None:
    from selenium.webdriver.common.by import By

    data = api(f"{site}/api/games/4/frames")
    turns = sum(isinstance(line, replay.DecisionLine) for line in replay.read(played("standard")))
    marks = data["timeline"]
    assert len(marks) == turns > 10
    assert {m["bin"] for m in marks} >= {"0–10%", "50–75%", "over"}, "the slowed walls reach several bins"
    browser.get(f"{site}/games/4")
    wait_for(browser, lambda: browser.execute_script(MARKS)["frames"], "the strip of turns")
    drawn = browser.execute_script(MARKS)
    assert drawn["frames"] == [m["frame"] for m in marks]
    assert drawn["levels"] == [str(m["level"]) for m in marks]
    assert drawn["index"] == 0 and drawn["current"] == ([0] if marks[0]["frame"] == 0 else [])
    for target in (9, len(marks) - 1, 2):
        browser.find_elements(By.CSS_SELECTOR, "#replay-viewer .rv-mark")[target].click()
        frame = marks[target]["frame"]
        wait_for(browser, lambda frame=frame: browser.execute_script(MARKS)["index"] == frame, f"frame {frame}")
        assert browser.execute_script(MARKS)["current"] == [target]
    # stepping on from a turn's frame keeps that turn highlighted until the next one
    from selenium.webdriver.common.keys import Keys

    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    following = marks[2]["frame"] + 1
    wait_for(browser, lambda: browser.execute_script(MARKS)["index"] == following, "the next frame")
    assert browser.execute_script(MARKS)["current"] == [3 if marks[3]["frame"] == following else 2]
