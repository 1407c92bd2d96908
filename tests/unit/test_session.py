"""One bot session: ``judge`` over every outcome a line can have, the hello exchange,
and the referee's time limits under Trio's virtual clock with scripted bots in memory
(no process, no sleep: a bot "thinks" exactly as long as its script says)."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from arena.play.session import (
    Answered,
    Faulted,
    Greeted,
    Outbox,
    Pending,
    greet,
    is_legal,
    judge,
    judge_hello,
)
from arena.play.session import Dropped as Unanswered
from arena.sandbox.framing import LineTooLong
from arena.sandbox.inbox import LINE_BUDGET, Flooded
from arena.sandbox.memory import (
    Exit,
    ScriptedBot,
    first_legal,
    silent,
)
from protocol.messages import MAX_DEPTH, Events, Hello, Limits, encode

PLAY = Pending(7, "play", [3, 17, 88])
PAIRS = Pending(7, "pair", [[1, 2], [2, 3]])


def answer(value: str, request_id: int = 7) -> bytes:
    return b'{"type":"answer","id":%d,"answer":%s}' % (request_id, value.encode())


# --- judge: every outcome ---------------------------------------------------------------


def test_a_legal_answer_is_answered() -> None:
    assert judge(answer("17"), PLAY) == Answered(17)
    assert judge(answer("[2,3]"), PAIRS) == Answered([2, 3])


@pytest.mark.parametrize("value", ["105", "17.0", "true", '"17"', "[17]"])
def test_an_illegal_answer_is_a_fault_quoting_it_and_the_legal_ones(value: str) -> None:
    verdict = judge(answer(value), PLAY)
    assert isinstance(verdict, Faulted)
    assert (verdict.kind, verdict.cause, verdict.line) == ("illegal", "illegal", answer(value))
    assert verdict.message == f"illegal play answer {value}: legal answers are [3,17,88]"
    assert verdict.detail == value and json.dumps(verdict.answer).replace(" ", "") == value


def test_a_stale_id_is_dropped_with_the_id_awaited() -> None:
    verdict = judge(answer("17", request_id=6), PLAY)
    assert verdict == Unanswered(answer("17", 6), "stale id (waiting for id 7)", "stale id", 6)


def test_an_unknown_id_is_dropped_even_when_its_answer_is_illegal() -> None:
    verdict = judge(answer("105", request_id=907), PLAY)
    assert isinstance(verdict, Unanswered) and verdict.cause == "stale id" and verdict.answer_id == 907


def test_a_hello_instead_of_an_answer_is_dropped() -> None:
    line = b'{"type":"hello","name":"b","version":"1"}'
    assert judge(line, PLAY) == Unanswered(line, "not an answer (waiting for id 7)", "not an answer")


def test_any_line_while_nothing_is_pending_is_dropped_unjudged() -> None:
    for line in (answer("17"), b"garbage", answer("105")):
        assert judge(line, None) == Unanswered(line, "sent while no request was pending", "unasked")


@pytest.mark.parametrize(
    "line, words",
    [
        (b"I play the 7", "not a valid answer: JSON is malformed"),
        (b'{"type":"answer","id":7,"answer":3,"why":"low"}', "unknown field `why`"),
        (b'{"type":"answer","id":"7","answer":3}', "at `$.id`"),
        (b'{"type":"answer","id":7}', "missing required field `answer`"),
        (b'{"type":"answer","id":7,"answer":1' + b"0" * 5000 + b"}", "out of range"),
        (b"\xff\xfe", "not a valid answer"),
        (answer("[" * 40 + "]" * 40), f"nested 41 levels deep, deeper than the {MAX_DEPTH} allowed"),
    ],
    ids=["garbage", "unknown field", "string id", "missing field", "huge integer", "invalid UTF-8", "nesting"],
)
def test_a_malformed_line_is_a_fault_with_the_decoders_words(line: bytes, words: str) -> None:
    verdict = judge(line, PLAY)
    assert isinstance(verdict, Faulted) and (verdict.kind, verdict.cause) == ("malformed", "undecodable")
    assert verdict.message.startswith("not a valid answer: ") and words in verdict.message
    assert verdict.line == line and verdict.detail in verdict.message


def test_an_oversize_line_is_a_fault_while_pending_else_dropped() -> None:
    head = b"x" * 200
    verdict = judge(LineTooLong(65536, head), PLAY)
    assert verdict == Faulted(
        "malformed", "line longer than 65536 bytes", head, "too long", "line longer than 65536 bytes"
    )
    dropped = judge(LineTooLong(65536, head), None)
    assert dropped == Unanswered(head, "line longer than 65536 bytes, sent while no request was pending", "unasked")


def test_a_flood_is_a_fault_that_says_the_output_is_ignored() -> None:
    verdict = judge(Flooded(LINE_BUDGET, b"last"), PLAY)
    assert isinstance(verdict, Faulted) and (verdict.kind, verdict.cause, verdict.line) == (
        "malformed",
        "flooded",
        b"last",
    )
    assert verdict.message == (
        f"flooded its output: more than {LINE_BUDGET} lines since its last request;"
        " its output is ignored until its next request"
    )


def test_is_legal_keeps_json_types_apart() -> None:
    assert is_legal(1, [1, 2]) and not is_legal(True, [1, 2]) and not is_legal(1.0, [1, 2])
    assert is_legal([1, 2], [[1, 2]]) and not is_legal([2, 1], [[1, 2]])
    assert not is_legal(object(), [1])


# --- the hello, and what waits for the next write ---------------------------------------


def test_judge_hello_over_every_outcome() -> None:
    good = b'{"type":"hello","name":"b","version":"1","accept":false}'
    greeted = judge_hello(good)
    assert isinstance(greeted, Greeted) and greeted.reply.name == "b" and not greeted.reply.accept
    assert judge_hello(answer("1")) == Faulted("malformed", "first answer must be a hello", answer("1"), "not a hello")
    bad = judge_hello(b"hi")
    assert isinstance(bad, Faulted) and bad.message.startswith("bad hello answer: ") and bad.cause == "undecodable"
    long = judge_hello(LineTooLong(10, b"x" * 10))
    assert isinstance(long, Faulted) and long.message == "hello answer line longer than 10 bytes"


def test_the_outbox_sends_what_waits_before_the_message_in_one_write() -> None:
    outbox = Outbox()
    assert outbox.take(b"now\n") == b"now\n"
    outbox.queue(b"first\n")
    outbox.events([])
    outbox.events([{"type": "x"}])
    assert outbox.take(b"now\n") == b"first\n" + encode(Events([{"type": "x"}])) + b"now\n"
    assert outbox.take(b"again\n") == b"again\n", "taken once"


# --- the hello exchange under the virtual clock -----------------------------------------

HELLO = Hello(1, "g", {}, 0, 2, Limits(100, 0, 500))


async def test_greet_times_out_at_the_start_up_limit(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        mute = ScriptedBot(nursery, first_legal(), hello=())
        began = trio.current_time()
        greeting = await greet(mute, HELLO, began + 0.5)
        assert trio.current_time() - began == pytest.approx(0.5)
    assert greeting == Faulted("timeout", "no hello answer within 500 ms of start", None, "timeout")


async def test_greet_reports_a_bot_gone_and_an_answer() -> None:
    async with trio.open_nursery() as nursery:
        gone = await greet(ScriptedBot(nursery, silent, hello=[Exit(3)]), HELLO, trio.current_time() + 5)
        good = await greet(ScriptedBot(nursery, first_legal()), HELLO, trio.current_time() + 5)
    assert gone == Faulted("crash", "exited during start-up: exited with code 3", None, "exited", "exited with code 3")
    assert isinstance(good, Greeted) and good.reply.name == "scripted"
