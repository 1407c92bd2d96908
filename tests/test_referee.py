"""The referee against real bot processes that behave, and that misbehave in every way."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
import trio.testing

from arena.bots import Bot, Manifest, load_bot
from arena.play import replay as replay_files
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import MatchError, Observer, play_match, single_game
from arena.play.replay import DecisionLine, DroppedLine, End, EventsLine, FaultLine, verify
from arena.sandbox.base import Sandbox
from arena.sandbox.local import LocalSandbox
from arena.sandbox.memory import (
    Action,
    MemoryInbox,
    Script,
    ScriptedSandbox,
    Write,
    answer_line,
    first_legal,
    silent,
)

from .conftest import SAMPLES, MakeBot, bot_pids

RANDOM = SAMPLES / "random"
HEURISTIC = SAMPLES / "heuristic"

# A raw bot loop (no SDK), so each test can break exactly one thing.
RAW = """
import json, os, sys, time
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
count = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        send({"type": "hello", "name": "raw", "version": "1"})
    elif msg["type"] == "request":
        count += 1
        %s
"""


def raw_bot(body: str) -> str:
    """A bot whose answer to each request is ``body`` (``msg`` and ``count`` in scope)."""
    return RAW % body.strip().replace("\n", "\n        ")


async def run_match(
    paths: list[Path],
    seed: int = 1,
    move_ms: int = 300,
    bank_ms: int = 0,
    settings: dict[str, Any] | None = None,
    games: list[GameSpec] | None = None,
    *,
    observer: Observer | None = None,
    sandbox: Sandbox | None = None,
    fair_time: bool = True,
) -> MatchResult:
    bots = [load_bot(p) for p in paths]
    spec = MatchSpec(
        "nimmt",
        {"rounds": 1} if settings is None else settings,
        bots,
        games or single_game(bots, seed),
        TimeLimits(move_ms, bank_ms, 10_000),
        fair_time=fair_time,
    )
    return await play_match(spec, sandbox or LocalSandbox(), observer)


def assert_replays(result: MatchResult) -> None:
    for game in result.games:
        steps = list(verify(game.replay))
        assert steps, "a replay re-simulates"


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def faults_of(result: MatchResult, seat: int) -> list[Any]:
    return [line.fault for line in result.games[0].replay if isinstance(line, FaultLine) and line.seat == seat]


async def test_sample_bots_play_a_full_game_that_replays() -> None:
    result = await run_match([HEURISTIC, RANDOM, RANDOM], settings={})
    game = result.games[0]
    assert max(game.scores) >= 66
    assert [s.status for s in game.statuses] == ["ok"] * 3
    assert sorted(game.ranks)[0] == 1
    assert_replays(result)


async def test_same_seed_same_game() -> None:
    first = await run_match([HEURISTIC, RANDOM], seed=7)
    second = await run_match([HEURISTIC, RANDOM], seed=7)
    assert first.games[0].scores == second.games[0].scores
    assert first.games[0].replay[1] == second.games[0].replay[1]


async def test_a_real_hanging_bot_times_out_three_times_then_defaults_and_ranks_last(make_bot: MakeBot) -> None:
    """The real sandbox's clock: a process that never answers is timed out (the limits
    themselves are checked to the millisecond under a virtual clock, below). 500 ms
    leaves the honest bot room to answer with both cores busy."""
    hang = make_bot("hang", raw_bot("pass"))
    result = await run_match([hang, RANDOM], move_ms=500)
    game = result.games[0]
    faults = faults_of(result, 0)
    assert [f.kind for f in faults] == ["timeout"] * 3
    assert "within 500 ms" in faults[0].message
    assert game.statuses[0].status == "disqualified"
    assert game.ranks == [2, 1]
    decisions = [line for line in game.replay if isinstance(line, DecisionLine) and 0 in line.seats]
    assert all(d.defaulted[d.seats.index(0)] for d in decisions), "every move of the hung seat is a default"
    assert all(d.wall_ms[d.seats.index(0)] >= 500 for d in decisions[:3]), "never timed out early"
    assert_replays(result)


async def test_bot_that_exits_at_once_is_a_crash_with_its_stderr(make_bot: MakeBot) -> None:
    crash = make_bot("crash", "import sys\nsys.stderr.write('boom: no luck\\n')\nsys.exit(3)\n")
    result = await run_match([crash, RANDOM])
    game = result.games[0]
    fault = game.statuses[0].faults[0]
    assert fault.kind == "crash"
    assert "exited with code 3" in fault.message
    assert "boom: no luck" in (fault.stderr or "")
    assert game.statuses[0].status == "disqualified"
    assert game.ranks[0] == 2


async def test_bot_crashing_mid_game(make_bot: MakeBot) -> None:
    crash = make_bot(
        "midcrash",
        raw_bot(
            'if count == 3: raise SystemExit(5)\nsend({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})'
        ),
    )
    result = await run_match([crash, RANDOM])
    faults = faults_of(result, 0)
    assert [f.kind for f in faults] == ["crash"]
    assert "exited with code 5" in faults[0].message
    assert result.games[0].statuses[0].status == "disqualified"
    assert_replays(result)


async def test_garbage_lines_are_malformed_with_the_line_as_evidence(make_bot: MakeBot) -> None:
    garbage = make_bot("garbage", raw_bot('print("I play the 7 of hearts", flush=True)'))
    result = await run_match([garbage, RANDOM])
    faults = faults_of(result, 0)
    assert [f.kind for f in faults] == ["malformed"] * 3
    assert faults[0].line == "I play the 7 of hearts"
    assert result.games[0].statuses[0].status == "disqualified"


async def test_unknown_fields_are_rejected(make_bot: MakeBot) -> None:
    extra = make_bot(
        "extra", raw_bot('send({"type": "answer", "id": msg["id"], "answer": msg["legal"][0], "comment": "hi"})')
    )
    result = await run_match([extra, RANDOM])
    faults = faults_of(result, 0)
    assert faults and faults[0].kind == "malformed"
    assert "comment" in faults[0].message


async def test_stdout_flood_is_cut_at_the_line_cap(make_bot: MakeBot) -> None:
    flood = make_bot("flood", raw_bot('sys.stdout.write("x" * 3_000_000); sys.stdout.flush()'))
    result = await run_match([flood, RANDOM])
    faults = faults_of(result, 0)
    assert faults[0].kind == "malformed"
    assert "longer than 65536 bytes" in faults[0].message
    assert faults[0].line is not None and len(faults[0].line) <= 500
    assert result.games[0].statuses[0].status == "disqualified"


async def test_stderr_flood_is_capped_and_the_bot_plays_on(make_bot: MakeBot) -> None:
    noisy = make_bot(
        "noisy",
        raw_bot(
            'sys.stderr.write("thinking " * 20000 + "\\n")\nsend({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})'
        ),
    )
    result = await run_match([noisy, RANDOM])
    game = result.games[0]
    assert game.statuses[0].status == "ok"
    end = game.replay[-1]
    assert 60_000 <= len(end.stderr[0]) <= 70_000, "stderr kept, within its cap"
    assert "more bytes of stderr dropped" in end.stderr[0]


async def test_illegal_answer_names_the_card(make_bot: MakeBot) -> None:
    cheat = make_bot(
        "cheat", raw_bot('send({"type": "answer", "id": msg["id"], "answer": 105 if msg["kind"] == "play" else 9})')
    )
    result = await run_match([cheat, RANDOM])
    faults = faults_of(result, 0)
    assert faults[0].kind == "illegal"
    assert "illegal play answer 105" in faults[0].message
    assert result.games[0].statuses[0].status == "disqualified"
    assert_replays(result)


async def test_json_types_are_strict(make_bot: MakeBot) -> None:
    """``true`` or ``12.0`` is not the card 12 (Python would say it equals)."""
    floaty = make_bot("floaty", raw_bot('send({"type": "answer", "id": msg["id"], "answer": float(msg["legal"][0])})'))
    result = await run_match([floaty, RANDOM])
    assert faults_of(result, 0)[0].kind == "illegal"


# --- scripted bots in memory: time limits under a virtual clock -------------------------


def scripted_bot(name: str) -> Bot:
    return Bot(Path("/scripted") / name, Manifest(name, "1", "python", "./bot", ["nimmt"]))


async def scripted_match(
    scripts: dict[str, Script], move_ms: int, bank_ms: int, fair_time: bool = True
) -> tuple[MatchResult, ScriptedSandbox]:
    bots = [scripted_bot(name) for name in scripts]
    limits = TimeLimits(move_ms, bank_ms, 10_000)
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 5), limits, fair_time=fair_time)
    sandbox = ScriptedSandbox(scripts)
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    assert list(verify(result.games[0].replay)), "the replay re-simulates"
    return result, sandbox


def moves_of(result: MatchResult, seat: int) -> list[tuple[float, bool]]:
    """``(wall ms, defaulted)`` of each move of ``seat``."""
    return [
        (line.wall_ms[line.seats.index(seat)], line.defaulted[line.seats.index(seat)])
        for line in result.games[0].replay
        if isinstance(line, DecisionLine) and seat in line.seats
    ]


async def test_a_silent_bot_times_out_at_the_move_limit_exactly(autojump_clock: trio.testing.MockClock) -> None:
    result, _ = await scripted_match({"mute": silent, "quick": first_legal()}, move_ms=100, bank_ms=0)
    faults = faults_of(result, 0)
    assert [f.kind for f in faults] == ["timeout"] * 3
    assert all(f.message.endswith("within 100 ms") for f in faults)
    moves = moves_of(result, 0)
    assert moves[:3] == [(100.0, True)] * 3, "each timeout is measured at the deadline, not later"
    assert all(defaulted for _, defaulted in moves), "then the default plays the seat"
    assert result.games[0].statuses[0].status == "disqualified" and result.games[0].ranks == [2, 1]


async def test_the_time_bank_pays_for_overruns_to_the_millisecond(autojump_clock: trio.testing.MockClock) -> None:
    """Move limit 100 ms, bank 120 ms, every move 150 ms: two moves draw 50 ms each, the
    third overruns what is left (120 ms) and empties the bank; then 100 ms a move."""
    result, sandbox = await scripted_match(
        {"slow": first_legal(0.15), "quick": first_legal()}, move_ms=100, bank_ms=120
    )
    banks = [request["bank_ms"] for request in sandbox.started["slow"][0].requests]
    assert banks[:4] == [120, 70, 20, 0]
    moves = moves_of(result, 0)
    assert moves[:3] == [(150.0, False), (150.0, False), (120.0, True)]
    faults = faults_of(result, 0)
    assert faults[0].kind == "timeout"
    assert faults[0].message.endswith(
        "within 120 ms (100 ms a move + the 20 ms left of the 120 ms time bank): the bank is now spent"
    )
    assert faults[1].message.endswith("within 100 ms: the time bank (120 ms) is spent")


async def test_a_late_answer_is_dropped_as_stale_while_the_next_request_waits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The first answer comes at 150 ms (limit 100 ms); the next request waits 80 ms for
    its answer, so the late one arrives while it is pending: a stale id, dropped."""

    def late_once(request: dict[str, Any]) -> list[Action]:
        return [Write(answer_line(request, request["legal"][0]), 0.15 if request["id"] == 1 else 0.08)]

    result, sandbox = await scripted_match({"late": late_once, "quick": first_legal()}, move_ms=100, bank_ms=0)
    assert sandbox.started["late"][0].requests[0]["id"] == 1
    assert [f.kind for f in faults_of(result, 0)] == ["timeout"]
    dropped = [line for line in result.games[0].replay if isinstance(line, DroppedLine)]
    assert len(dropped) == 1 and dropped[0].seat == 0
    assert dropped[0].reason.startswith("stale id (waiting for id ") and '"id":1,' in dropped[0].line
    assert moves_of(result, 0)[:2] == [(100.0, True), (80.0, False)]
    assert result.games[0].statuses[0].status == "faulty"


async def test_a_slow_bot_lives_on_its_bank(autojump_clock: trio.testing.MockClock) -> None:
    """Every move 150 ms against a 100 ms limit: a 5 s bank pays 50 ms a move, no fault."""
    result, sandbox = await scripted_match({"slow": first_legal(0.15), "quick": first_legal()}, 100, 5000)
    assert result.games[0].statuses[0].status == "ok"
    assert {wall for wall, _ in moves_of(result, 0)} == {150.0}
    banks = [request["bank_ms"] for request in sandbox.started["slow"][0].requests]
    assert banks == [5000 - 50 * n for n in range(len(banks))]


async def test_a_wrong_id_is_dropped_and_the_request_times_out(autojump_clock: trio.testing.MockClock) -> None:
    def wrong(request: dict[str, Any]) -> list[Action]:
        return [Write(answer_line({"id": request["id"] + 1000}, request["legal"][0]), 0.01)]

    result, _ = await scripted_match({"wrong": wrong, "quick": first_legal()}, move_ms=100, bank_ms=0)
    dropped = [line for line in result.games[0].replay if isinstance(line, DroppedLine)]
    assert len(dropped) == 3 and all(d.reason.startswith("stale id (waiting for id ") for d in dropped)
    assert [f.kind for f in faults_of(result, 0)] == ["timeout"] * 3
    assert moves_of(result, 0)[:3] == [(100.0, True)] * 3


async def test_a_bot_silent_at_hello_fails_its_start_at_the_start_up_limit(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bots = [scripted_bot("mute"), scripted_bot("quick")]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 5), TimeLimits(100, 0, 2000))
    sandbox = ScriptedSandbox({"mute": first_legal(), "quick": first_legal()}, hellos={"mute": ()})
    began = trio.current_time()
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    assert faults_of(result, 0)[0].message == "no hello answer within 2000 ms of start"
    assert faults_of(result, 0)[0].where == "at start-up"
    assert result.games[0].statuses[0].status == "disqualified" and result.games[0].ranks == [2, 1]
    assert trio.current_time() - began == pytest.approx(2.0), "the game starts at the limit, not later"


@pytest.mark.parametrize("fair_time", [True, False])
async def test_under_fair_time_a_bot_runs_only_while_asked(
    autojump_clock: trio.testing.MockClock, fair_time: bool
) -> None:
    """A bot that writes its answer twice, the second 30 ms late, beside one that thinks
    100 ms: asked, it is always thawed; once it has answered it is frozen (fair time),
    so its second line waits for its next request. Either way that line is dropped,
    never taken for an answer or a fault."""
    when_asked: list[bool] = []

    def twice(request: dict[str, Any]) -> list[Action]:
        when_asked.append(sandbox.started["twice"][-1].frozen)
        line = answer_line(request, request["legal"][0])
        return [Write(line), Write(line, 0.03)]

    sandbox = ScriptedSandbox({"twice": twice, "slow": first_legal(0.1)})
    bots = [scripted_bot("twice"), scripted_bot("slow")]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 5), TimeLimits(1000, 0), fair_time=fair_time)
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    bot = sandbox.started["twice"][0]
    assert when_asked and not any(when_asked), "thawed before each request"
    assert (bot.held > 0) == fair_time, "frozen once it has answered, only under fair time"
    dropped = [line for line in result.games[0].replay if isinstance(line, DroppedLine) and line.seat == 0]
    assert len(dropped) >= len(when_asked) - 1
    assert result.games[0].statuses[0].status == "ok" and not faults_of(result, 0)


async def test_refusing_bot_is_not_seated(make_bot: MakeBot) -> None:
    refuse = make_bot(
        "refuse",
        'import json,sys\nsys.stdin.readline()\nprint(json.dumps({"type":"hello","name":"r","version":"1","accept":False}), flush=True)\nsys.stdin.read()\n',
    )
    with pytest.raises(MatchError, match="refused to play nimmt"):
        await run_match([refuse, RANDOM])


SPY = """
import json, sys, time
log = sys.stderr
for line in sys.stdin:
    msg = json.loads(line)
    log.write(json.dumps({"t": time.monotonic(), "got": msg}) + "\\n"); log.flush()
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "spy", "version": "1"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(0.05)
        log.write(json.dumps({"t": time.monotonic(), "answered": msg["id"]}) + "\\n"); log.flush()
        print(json.dumps({"type": "answer", "id": msg["id"], "answer": msg["legal"][-1]}), flush=True)
"""


async def test_no_bot_learns_another_card_before_all_have_committed(make_bot: MakeBot) -> None:
    """The spy answers slowly while its opponents answer at once: between the spy's
    request and its answer, nothing reaches it; no deal, no other hand, ever."""
    spy = make_bot("spy", SPY)
    result = await run_match([spy, RANDOM, HEURISTIC], move_ms=1000)
    end = result.games[0].replay[-1]
    assert isinstance(end, End)
    log = [json.loads(line) for line in end.stderr[0].splitlines()]
    waiting = False
    for entry in log:
        if "answered" in entry:
            waiting = False
            continue
        msg = entry["got"]
        assert not waiting, f"the spy was told something while deciding: {msg}"
        if msg["type"] == "request":
            waiting = True
            assert set(msg["view"]) >= {"hand", "rows"} and "hands" not in msg["view"]
        for event in msg.get("events", []):
            assert event["type"] != "deal", "the full deal is never sent to a bot"
    hands = [
        e
        for line in result.games[0].replay
        if type(line).__name__ == "EventsLine"
        for e in line.events
        if type(e).__name__ == "Deal"
    ]
    starts = [e for entry in log for e in entry.get("got", {}).get("events", []) if e["type"] == "round_start"]
    assert [s["hand"] for s in starts] == [list(d.hands[0]) for d in hands], "each round the spy sees its own hand only"


FORKER = """
import json, os, signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "forker", "version": "1"}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]}), flush=True)
"""


async def test_every_process_is_gone_after_the_match(make_bot: MakeBot) -> None:
    """Also the children a bot forks, and a bot that ignores SIGTERM."""
    forker = make_bot("forker", FORKER)
    seen: list[int] = []

    class Watch(Observer):
        def events(self, game_no: int, events: list[Any]) -> None:
            if not seen:
                seen.extend(bot_pids(forker))

    await run_match([forker, RANDOM], observer=Watch())
    assert len(seen) >= 2, "the bot and its child were seen running"
    assert bot_pids(forker) == [], "nothing of the bot survived the match"


async def test_a_match_of_several_games_keeps_the_bots_alive(make_bot: MakeBot) -> None:
    counter = make_bot(
        "counter",
        "import sys\nsys.stderr.write('started\\n')\nfrom protocol.bot import Bot, run\nclass B(Bot):\n    def decide(self, kind, view, legal):\n        return legal[0]\nrun(B())\n",
    )
    games = [GameSpec(seed, seats) for seed, seats in [(1, [0, 1]), (2, [1, 0]), (3, [0, 1])]]
    result = await run_match([counter, RANDOM], games=games)
    assert len(result.games) == 3
    stderr = "".join(game.replay[-1].stderr[game.spec.seats.index(0)] for game in result.games)  # type: ignore[union-attr]
    assert stderr.count("started") == 1, "one process for the whole match"
    assert result.games[1].replay[0].seats[0].name == "random", "seats follow the game spec"
    assert_replays(result)


SPINNER = """
import threading
from protocol.bot import Bot, run

def spin():
    while True:
        pass

threading.Thread(target=spin, daemon=True).start()

class Quick(Bot):
    def decide(self, kind, view, legal):
        return legal[0]

run(Quick())
"""

SLEEPER = raw_bot('time.sleep(0.4)\nsend({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})')


async def cpu_while_others_think(make_bot: MakeBot, fair_time: bool, sandbox: Any = None) -> float:
    """Median CPU ms per move of a bot that spins a thread, beside one that thinks 0.4 s."""
    import statistics

    bots = [spinner_bot(make_bot), sleeper_bot(make_bot)]
    if sandbox is not None:
        for path in bots:
            await trio.to_thread.run_sync(sandbox.prepare, load_bot(path), lambda line: None)
    result = await run_match(bots, move_ms=2000, fair_time=fair_time, sandbox=sandbox)
    moves = [
        line.cpu_ms[line.seats.index(0)]
        for line in result.games[0].replay
        if isinstance(line, DecisionLine) and 0 in line.seats
    ]
    return statistics.median(moves)


def spinner_bot(make_bot: MakeBot) -> Path:
    return make_bot(f"spinner{next(_serial)}", SPINNER)


def sleeper_bot(make_bot: MakeBot) -> Path:
    return make_bot(f"sleeper{next(_serial)}", SLEEPER)


_serial = itertools.count()


async def test_fair_time_freezes_a_bot_while_others_think(make_bot: MakeBot) -> None:
    """A bot that computes in the background gets no CPU on another seat's time when fair
    time is on (it is frozen once it has answered); with fair time off, it does."""
    fair = await cpu_while_others_think(make_bot, fair_time=True)
    unfair = await cpu_while_others_think(make_bot, fair_time=False)
    # Margins for a loaded machine: unfrozen, it burns a good part of the sleeper's 400 ms.
    assert unfair > 100, f"without freezing, the spinner burns the sleeper's 400 ms ({unfair} ms)"
    assert fair < 30, f"frozen, it gets almost nothing ({fair} ms)"


async def test_a_bot_process_never_plays_a_deal_twice(autojump_clock: trio.testing.MockClock) -> None:
    """Two deals in both rotations, played rotation by rotation: each bot has two
    processes, the second started ahead (greeted before the first life's last game
    ended) and told it holds two games; every process saw each deal once."""
    bots = [scripted_bot(name) for name in ("a", "b")]
    games = [GameSpec(seed, seats, n) for n, (seed, seats) in enumerate([(11, [0, 1]), (12, [0, 1])])]
    games += [GameSpec(seed, seats, n) for n, (seed, seats) in enumerate([(11, [1, 0]), (12, [1, 0])], 2)]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, games, TimeLimits(100, 0, 10_000))
    sandbox = ScriptedSandbox({"a": first_legal(), "b": first_legal()})
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    assert [g.game_no for g in result.games] == [0, 1, 2, 3]
    for name in ("a", "b"):
        processes = sandbox.started[name]
        assert len(processes) == 2
        for process in processes:
            hello = process.received[0]
            assert hello["type"] == "hello" and hello["games"] == 2
            new_games = [m for m in process.received if m["type"] == "new_game"]
            assert len(new_games) == 2
            assert process.received[-1]["type"] == "bye"
    # The first process of "b" sat in seat 1, its second in seat 0 (the rotation).
    assert sandbox.started["b"][0].received[0]["seat"] == 1 and sandbox.started["b"][1].received[0]["seat"] == 0
    for game in result.games:
        assert list(verify(game.replay))


async def test_a_spare_that_fails_its_hello_is_started_again(autojump_clock: trio.testing.MockClock) -> None:
    """The process for the second life fails its start (silent at hello): a start-up
    fault in that life's first game, then the bot is started again for the next, as
    at the match's start."""
    bots = [scripted_bot(name) for name in ("a", "b")]
    games = [GameSpec(7, [0, 1], 0), GameSpec(7, [1, 0], 1), GameSpec(8, [1, 0], 2)]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, games, TimeLimits(100, 0, 1_000))

    class SilentSecond(ScriptedSandbox):
        async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> Any:
            if bot.name == "a" and len(self.started.get("a", [])) == 1:
                self.hellos = {"a": ()}
            else:
                self.hellos = {}
            return await super().start(bot, nursery, max_line)

    sandbox = SilentSecond({"a": first_legal(), "b": first_legal()})
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    assert len(sandbox.started["a"]) == 3, "first life, the silent spare, its restart"
    second, third = result.games[1], result.games[2]
    assert second.statuses[1].status == "disqualified"
    assert [f.kind for f in second.statuses[1].faults] == ["timeout"]
    assert third.statuses[1].status == "ok", "started again, it plays"


async def test_a_timeout_that_empties_the_bank_says_so_and_names_its_round_and_turn(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    """A bot taking 1.5 s a move against a 1 s limit and a 10.2 s bank: 20 moves draw
    500 ms each, the 21st has 200 ms of bank left, times out after 1200 ms and empties
    it; the next times out at the move limit alone, the bank spent. Every fault names
    its round and turn, and every decision logs the bank left; `arena replay` (a real
    process, on the replay written) shows both."""
    bots = [scripted_bot("slow"), scripted_bot("quick")]
    settings = {"rounds": 3, "end_score": 1000}
    spec = MatchSpec("nimmt", settings, bots, single_game(bots, 5), TimeLimits(1000, 10_200, 10_000))
    sandbox = ScriptedSandbox({"slow": first_legal(1.5), "quick": first_legal()})
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    replay = result.games[0].replay
    assert list(verify(replay))
    banks = [line.bank_ms[line.seats.index(0)] for line in replay if isinstance(line, DecisionLine) and 0 in line.seats]
    assert banks[:22] == [10_200 - 500 * n for n in range(1, 21)] + [0, 0]
    faults = faults_of(result, 0)
    assert [f.kind for f in faults] == ["timeout"] * 3
    spent_now = r"no answer to request \d+ within 1200 ms \(1000 ms a move \+ the 200 ms left of the 10.2 s time bank\)"
    assert re.fullmatch(spent_now + ": the bank is now spent", faults[0].message), faults[0].message
    assert re.fullmatch(
        r"no answer to request \d+ within 1000 ms: the time bank \(10.2 s\) is spent", faults[1].message
    )
    reveals = iter(
        (event["round"], event["turn"], index)
        for index, line in enumerate(replay)
        if isinstance(line, EventsLine)
        for event in msgspec.to_builtins(line.events)
        if event["type"] == "reveal"
    )
    for index, line in enumerate(replay):
        if isinstance(line, FaultLine):
            assert line.fault.round is not None and line.fault.turn is not None
            round_no, turn, _ = next((r, t, i) for r, t, i in reveals if i > index)
            assert (line.fault.round, line.fault.turn) <= (round_no, turn), "the turn being decided"

    from arena.web.viewer import frames

    banks_shown = [f["bank_texts"] for f in frames(replay, "slow")["frames"] if f.get("bank_texts")]
    assert banks_shown[0] == ["9.70 s", "10.20 s"] and ["0 (spent)", "10.20 s"] in banks_shown, "the web viewer's field"

    path = tmp_path / "slow.jsonl"
    replay_files.write(path, replay)
    arena = str(Path(sys.executable).parent / "arena")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    told = subprocess.run([arena, "replay", str(path), "--stderr"], capture_output=True, text=True, env=env)
    assert told.returncode == 0, told.stderr
    first = faults[0]
    assert f"fault (timeout, round {first.round}, turn {first.turn}): no answer to request" in told.stdout, told.stdout
    assert "the bank is now spent" in told.stdout and "the time bank (10.2 s) is spent" in told.stdout
    shown = subprocess.run([arena, "replay", str(path)], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "A 1.50 s, bank 9.70 s · B 0.0 ms, bank 10.20 s" in shown.stdout, shown.stdout
    assert "A 1.20 s, bank 0 (spent)" in shown.stdout
    assert f"! A timeout (round {first.round}, turn {first.turn}): no answer" in shown.stdout
