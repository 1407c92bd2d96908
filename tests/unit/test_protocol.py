"""Protocol messages, framing, and the Python bot SDK over in-memory streams."""

from __future__ import annotations

import io

import msgspec
import pytest
import trio
import trio.testing

from arena.sandbox.framing import EndOfStream, LineBuffer, LineReader, LineTooLong
from protocol import nimmt
from protocol.bot import Bot, run
from protocol.messages import (
    Answer,
    Bye,
    Events,
    GameOver,
    Hello,
    HelloReply,
    Limits,
    NewGame,
    Request,
    decode_from_bot,
    encode,
    from_bot_decoder,
    nesting_depth,
    to_bot_decoder,
)

LIMITS = Limits(1000, 10000, 5000)
VIEW = nimmt.View(0, 2, 1, 1, (3, 50), ((10,), (20,), (30,), (40,)), (0, 0), (0, 0), ())
TO_BOT = [
    Hello(1, "nimmt", {"end_score": 66}, 0, 2, LIMITS, 3),
    NewGame(0, 1, 2, {"end_score": 66}),
    Request(7, "play", msgspec.json.decode(msgspec.json.encode(VIEW)), [3, 50], 1000, 9000),
    Events([{"type": "reveal", "round": 1, "turn": 1, "plays": [[3, 0], [50, 1]]}]),
    GameOver(0, [12, 40], [1, 2]),
    Bye(),
]


@pytest.mark.parametrize("message", TO_BOT, ids=lambda m: type(m).__name__)
def test_referee_messages_round_trip(message: msgspec.Struct) -> None:
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert to_bot_decoder.decode(line) == message


def test_bot_messages_round_trip() -> None:
    for message in (HelloReply("me", "1.0"), HelloReply("me", "1.0", False), Answer(3, [1, 2])):
        assert from_bot_decoder.decode(encode(message)) == message


def test_bots_may_ignore_new_fields_from_the_referee() -> None:
    line = b'{"type":"new_game","game_no":0,"seat":1,"players":2,"settings":{},"added_in_v2":true}'
    assert to_bot_decoder.decode(line) == NewGame(0, 1, 2, {})


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"answer","id":1,"answer":3,"extra":1}',
        b'{"type":"answer","id":"1","answer":3}',
        b'{"type":"answer","answer":3}',
        b'{"type":"move","id":1}',
        b"[1, 2]",
        b"not json",
    ],
)
def test_the_referee_rejects_what_a_bot_should_not_send(line: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        from_bot_decoder.decode(line)


@pytest.mark.parametrize(
    "line, depth",
    [
        (b'{"type":"answer","id":1,"answer":[24,42]}', 2),
        (b'{"type":"hello","name":"[[[[{{{{","version":"]]"}', 1),
        (b'["\\"", [["\\\\", {"a": [1]}]]]', 5),
        (b"[]]]][[[", 1),  # a decoder stops at the first unmatched bracket
        (b'"unterminated [[[', 0),
        (b"", 0),
    ],
)
def test_nesting_depth_counts_brackets_outside_strings(line: bytes, depth: int) -> None:
    assert nesting_depth(line) == depth


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_lines_nested_too_deep_are_refused_before_decoding(depth: int) -> None:
    line = b'{"type":"answer","id":1,"answer":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"
    with pytest.raises(msgspec.DecodeError, match=f"nested {depth} levels deep, deeper than the 32 allowed"):
        decode_from_bot(line)


def test_lines_nested_up_to_the_cap_decode() -> None:
    line = b'{"type":"answer","id":1,"answer":' + b"[" * 31 + b"]" * 31 + b"}"
    assert decode_from_bot(line) == from_bot_decoder.decode(line)


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"answer","id":1,"answer":1' + b"0" * 5000 + b"}",
        b'{"type":"answer","id":1,"answer":1e999999}',
        b'{"type":"answer","id":1,"answer":"\xff"}',
        b"\x00" * 10,
        b'{"type":"answer","id":1,"answer":' + b"[" * 5000,
    ],
    ids=["huge integer", "huge float", "invalid UTF-8", "NUL", "unclosed"],
)
def test_any_bad_line_raises_the_decode_error(line: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_from_bot(line)


def test_a_decoder_failure_of_another_kind_becomes_the_decode_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the decoder raises (RecursionError, MemoryError...), the caller sees one type."""
    from protocol import messages

    class Exploding:
        def decode(self, line: bytes) -> None:
            raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(messages, "from_bot_decoder", Exploding())
    with pytest.raises(msgspec.DecodeError, match="RecursionError"):
        decode_from_bot(b"{}")


def test_events_hold_tuples_so_decoded_equals_fresh() -> None:
    event = nimmt.Place(1, 34, 2, (12, 15, 20, 22, 30), False)
    decoded = msgspec.json.decode(msgspec.json.encode(event), type=nimmt.Event)
    assert decoded == event


class First(Bot):
    name, version = "first", "2.0"
    games = ("nimmt",)

    def __init__(self) -> None:
        self.seen: list[object] = []

    def decide(self, kind: str, view: nimmt.View, legal: list[int]) -> int:
        self.seen.append(view)
        return legal[0]

    def events(self, events: list[object]) -> None:
        self.seen.extend(events)


def test_sdk_answers_with_typed_views_and_echoes_ids() -> None:
    bot = First()
    out = io.BytesIO()
    run(bot, io.BytesIO(b"".join(encode(m) for m in TO_BOT)), out)
    replies = [from_bot_decoder.decode(line) for line in out.getvalue().splitlines()]
    assert replies == [HelloReply("first", "2.0", True), Answer(7, 3)]
    assert bot.seen[0] == VIEW, "the view arrives typed"
    assert bot.seen[1] == nimmt.Reveal(1, 1, ((3, 0), (50, 1)))


def test_sdk_refuses_a_game_it_does_not_play() -> None:
    out = io.BytesIO()
    hello = Hello(1, "sixes", {}, 0, 2, LIMITS)
    run(First(), io.BytesIO(encode(hello) + encode(Bye())), out)
    assert from_bot_decoder.decode(out.getvalue()) == HelloReply("first", "2.0", False)


async def framed(chunks: list[bytes], max_line: int = 10) -> list[object]:
    send, receive = trio.testing.memory_stream_one_way_pair()
    reader = LineReader(receive, LineBuffer(max_line))
    for chunk in chunks:
        await send.send_all(chunk)
    await send.aclose()
    got: list[object] = []
    while True:
        try:
            got.append(await reader.receive_line())
        except LineTooLong as exc:
            got.append(("too long", exc.head))
        except EndOfStream:
            return got


async def test_lines_split_across_chunks_and_crlf() -> None:
    assert await framed([b"ab", b"c\nde", b"f\r\n\n"]) == [b"abc", b"def", b""]


async def test_too_long_line_is_reported_once_then_skipped() -> None:
    got = await framed([b"x" * 25, b"y" * 25, b"z\nok\n"])
    assert len(got) == 2 and got[1] == b"ok"
    kind, head = got[0]  # type: ignore[misc]
    assert kind == "too long" and head.startswith(b"x" * 25)


async def test_too_long_line_within_one_chunk() -> None:
    assert await framed([b"0123456789ABC\nok\n"]) == [("too long", b"0123456789ABC"), b"ok"]


async def test_the_end_of_a_stream_carries_its_unended_last_line() -> None:
    send, receive = trio.testing.memory_stream_one_way_pair()
    reader = LineReader(receive, LineBuffer(100))
    await send.send_all(b"one\nlast words")
    await send.aclose()
    assert await reader.receive_line() == b"one"
    with pytest.raises(EndOfStream) as ended:
        await reader.receive_line()
    assert ended.value.tail == b"last words"


def test_drop_lines_drops_complete_lines_at_once_and_keeps_the_unended_one() -> None:
    buffer = LineBuffer(20)
    buffer.feed(b"a\nbb\r\nccc\nstart")
    assert buffer.drop_lines() == (3, b"ccc")
    assert buffer.rest() == b"start"
    buffer.feed(b" of it\n")
    assert buffer.next_line() == b"start of it"
    assert buffer.drop_lines() == (0, b"")


def test_drop_lines_ends_the_skipping_of_a_line_too_long() -> None:
    buffer = LineBuffer(10)
    buffer.feed(b"x" * 25)
    assert isinstance(buffer.next_line(), LineTooLong)
    assert buffer.rest() == b"", "the tail of a line too long is no evidence"
    buffer.feed(b"xx\nok")
    assert buffer.drop_lines() == (1, b"")
    buffer.feed(b"\n")
    assert buffer.next_line() == b"ok"


def test_sdk_skips_message_types_it_does_not_know() -> None:
    out = io.BytesIO()
    lines = encode(TO_BOT[0]) + b'{"type":"chat","text":"hi"}\n' + encode(TO_BOT[2]) + encode(Bye())
    run(First(), io.BytesIO(lines), out)
    assert [from_bot_decoder.decode(line) for line in out.getvalue().splitlines()][1] == Answer(7, 3)
