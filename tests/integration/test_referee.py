"""The referee against real bot processes that behave, and that misbehave in every way
(its time limits with scripted bots under a virtual clock: tests/unit/test_referee_clock.py)."""

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

from arena.bots import load_bot
from arena.play import replay as replay_files
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import MatchError, Observer, play_match, single_game
from arena.play.replay import DecisionLine, End, EventsLine, FaultLine, verify
from arena.sandbox.base import Sandbox
from arena.sandbox.local import LocalSandbox
from arena.sandbox.memory import (
    MemoryInbox,
    ScriptedSandbox,
    first_legal,
)

from ..conftest import SAMPLES, MakeBot, bot_pids
from ..unit.test_referee_clock import faults_of, scripted_bot

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
