"""The referee's time limits, played with scripted bots in memory under Trio's virtual
clock: timeouts at the deadline exactly, the bank to the millisecond, stale and wrong ids,
fair time's freezing, a bot's processes across deals (real bot processes:
tests/integration/test_referee.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from arena.bots import Bot, Manifest
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match, single_game
from arena.play.replay import DecisionLine, DroppedLine, FaultLine, verify
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


def faults_of(result: MatchResult, seat: int) -> list[Any]:
    return [line.fault for line in result.games[0].replay if isinstance(line, FaultLine) and line.seat == seat]


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
    100 ms: under fair time its request reaches it frozen and it is thawed at once (it
    wakes once, to its request), so its answer is never held back; once it has answered
    it is frozen, so its second line waits for its next request. Either way that line
    is dropped, never taken for an answer or a fault."""
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
    assert when_asked and all(frozen == fair_time for frozen in when_asked), "sent its request, then thawed"
    assert (bot.held > 0) == fair_time, "frozen once it has answered, only under fair time"
    assert bot.held <= len(when_asked) + 1, "only its late lines and its exit at bye are held: thawed once sent"
    dropped = [line for line in result.games[0].replay if isinstance(line, DroppedLine) and line.seat == 0]
    assert len(dropped) >= len(when_asked) - 1
    assert result.games[0].statuses[0].status == "ok" and not faults_of(result, 0)


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


async def test_a_bot_with_limits_of_its_own_is_timed_by_them(autojump_clock: trio.testing.MockClock) -> None:
    """A person's seat has limits of its own (``MatchSpec.bot_limits``): told them in its
    hello and each request, and timed by them, while the others keep the match's."""
    bots = [scripted_bot("person"), scripted_bot("bot")]
    scripts = {"person": first_legal(3.0), "bot": first_legal(3.0)}  # both think 3 s a move
    spec = MatchSpec(
        "nimmt",
        {"rounds": 1},
        bots,
        single_game(bots, 5),
        TimeLimits(1000, 0, 10_000),
        bot_limits={0: TimeLimits(5000, 0, 10_000)},
    )
    sandbox = ScriptedSandbox(scripts)
    result = await play_match(spec, sandbox, inbox=MemoryInbox())
    person, bot = sandbox.started["person"][0], sandbox.started["bot"][0]
    assert person.received[0]["limits"]["move_ms"] == 5000 and bot.received[0]["limits"]["move_ms"] == 1000
    assert {r["move_ms"] for r in person.requests} == {5000} and {r["move_ms"] for r in bot.requests} == {1000}
    assert faults_of(result, 0) == [] and result.games[0].statuses[0].status == "ok"
    assert [f.kind for f in faults_of(result, 1)] == ["timeout"] * 3
    assert moves_of(result, 0)[0] == (3000.0, False) and moves_of(result, 1)[0] == (1000.0, True)
