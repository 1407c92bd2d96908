"""No line a bot sends can hurt the referee: every line is written by an attacker.

Real bot processes over real pipes: one seat attacks (deep nesting, huge numbers, NUL,
invalid UTF-8, floods, answers before any request, lines over the cap, last words
without a newline), the others play honestly. The match must complete, the honest seats
keep a clean record, and the attacker's fault carries its evidence. Then fuzzing of
the decoding and judging of a line, and the peak memory of ``arena play`` under attack.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bots import Bot, load_bot
from arena.play import referee
from arena.play.match import MatchResult, MatchSpec, TimeLimits
from arena.play.referee import Observer, play_match, single_game
from arena.play.replay import DroppedLine, FaultLine, verify
from arena.play.session import Answered, Dropped, Faulted, Pending, Verdict, is_legal, judge
from arena.sandbox.framing import EndOfStream, LineTooLong, PipeLines
from arena.sandbox.inbox import LINE_BUDGET, Flooded, Inbox
from arena.sandbox.local import LocalSandbox
from protocol.messages import MAX_DEPTH, MAX_LINE_BYTES, Answer, HelloReply, decode_from_bot, nesting_depth

from ..conftest import SAMPLES, MakeBot
from .test_referee import raw_bot

RANDOM = SAMPLES / "random"
ROOT = Path(__file__).resolve().parents[2]

ATTACKER = """
import json, os, sys
def send(data):
    view = memoryview(data)
    while view:  # a write cut short (frozen while the pipe was full) goes on where it stopped
        view = view[os.write(1, view):]
def answer(msg):
    return json.dumps({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]}).encode() + b"\\n"
count = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        send(json.dumps({"type": "hello", "name": "attacker", "version": "1"}).encode() + b"\\n" + HELLO_EXTRA)
    elif msg["type"] == "request":
        count += 1
        if count == 1:
            ATTACK
        else:
            send(answer(msg))
"""


def attacker(attack: str, hello_extra: str = 'b""') -> str:
    """A bot that answers honestly but for its first request, where it runs ``attack``
    (``msg``, ``send`` and ``answer`` in scope); ``hello_extra`` rides with its hello."""
    return ATTACKER.replace("HELLO_EXTRA", hello_extra).replace(
        "ATTACK", attack.strip().replace("\n", "\n            ")
    )


def answer_line(rest: str) -> str:
    """Code that sends a line starting as the answer to ``msg`` and going on with the
    bytes of the expression ``rest``, then a newline."""
    return """send(b'{"type":"answer","id":%d,"answer":' % msg["id"] + """ + rest + """ + b"\\n")"""


async def play(
    bots: list[Path], *, move_ms: int = 2000, startup_ms: int = 10_000, max_line: int = MAX_LINE_BYTES
) -> MatchResult:
    loaded = [load_bot(p) for p in bots]
    spec = MatchSpec(
        "nimmt",
        {"rounds": 1},
        loaded,
        single_game(loaded, 3),
        TimeLimits(move_ms, 10_000, startup_ms),
        max_line=max_line,
    )
    return await play_match(spec, LocalSandbox())


def faults_of(result: MatchResult, seat: int) -> list[Any]:
    return [line.fault for line in result.games[0].replay if isinstance(line, FaultLine) and line.seat == seat]


def dropped_of(result: MatchResult, seat: int) -> list[DroppedLine]:
    return [line for line in result.games[0].replay if isinstance(line, DroppedLine) and line.seat == seat]


def assert_completed_cleanly_for_the_honest(result: MatchResult) -> None:
    game = result.games[0]
    assert len(game.ranks) == 2, "the match completed"
    assert game.statuses[1].status == "ok" and not faults_of(result, 1), "the honest seat has no fault"
    assert list(verify(game.replay)), "its replay re-simulates"


Check = Callable[[Any], None]


def expect(kind: str, message: str, line: Callable[[str], bool]) -> Check:
    def check(fault: Any) -> None:
        assert fault.kind == kind, fault
        assert message in fault.message, fault.message
        assert fault.line is not None and line(fault.line), fault.line

    return check


ANSWER_HEAD = '{"type":"answer","id":'
HOSTILE = {
    "nesting 1,000 deep": (
        answer_line("b'[' * 1000 + b']' * 1000 + b'}'"),
        MAX_LINE_BYTES,
        expect("malformed", "nested 1001 levels deep", lambda s: s.startswith(ANSWER_HEAD) and s.endswith("[" * 50)),
    ),
    "nesting 100,000 deep, under a cap that lets it through": (
        answer_line("b'[' * 100_000"),
        1 << 20,
        expect("malformed", "nested 100001 levels deep", lambda s: s.startswith(ANSWER_HEAD)),
    ),
    "nesting 100,000 deep, over the line cap": (
        answer_line("b'{\"a\":' * 100_000"),
        MAX_LINE_BYTES,
        expect("malformed", "longer than 65536 bytes", lambda s: s.startswith(ANSWER_HEAD)),
    ),
    "an integer of 5,001 digits": (
        answer_line("b'1' + b'0' * 5000 + b'}'"),
        MAX_LINE_BYTES,
        expect("malformed", "out of range", lambda s: s.startswith(ANSWER_HEAD) and s.endswith("0" * 50)),
    ),
    "an integer of 4,000 digits in a list": (
        answer_line("b'[1,' + b'9' * 4000 + b']}'"),
        MAX_LINE_BYTES,
        expect("illegal", "illegal play answer [1,999", lambda s: s.startswith(ANSWER_HEAD)),
    ),
    "a NUL byte in a string": (
        answer_line("b'\"\\x00\"}'"),
        MAX_LINE_BYTES,
        expect("malformed", "not a valid answer", lambda s: s.endswith('"\x00"}')),
    ),
    "NUL bytes alone": (
        "send(b'\\x00' * 64 + b'\\n')",
        MAX_LINE_BYTES,
        expect("malformed", "not a valid answer", lambda s: s == "\x00" * 64),
    ),
    "invalid UTF-8": (
        answer_line("b'\"\\xff\\xfe\\xc0\"}'"),
        MAX_LINE_BYTES,
        expect("malformed", "UTF-8", lambda s: s.startswith(ANSWER_HEAD) and "\ufffd" in s),
    ),
    "a line over the length cap": (
        "send(b'x' * 200_000 + b'\\n')",
        MAX_LINE_BYTES,
        expect("malformed", "longer than 65536 bytes", lambda s: s == "x" * 200),
    ),
    "a last line without a newline, then exit": (
        """send(b'{"type":"answer","id":%d,"answer":4' % msg["id"])\nos._exit(0)""",
        MAX_LINE_BYTES,
        expect("crash", "exited with code 0", lambda s: s.startswith(ANSWER_HEAD) and s.endswith('"answer":4')),
    ),
}


@pytest.mark.parametrize("attack, max_line, check", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_line_is_the_attackers_fault_only(
    make_bot: MakeBot, attack: str, max_line: int, check: Check
) -> None:
    bot = make_bot("attacker", attacker(attack))
    result = await play([bot, RANDOM], max_line=max_line)
    assert_completed_cleanly_for_the_honest(result)
    faults = faults_of(result, 0)
    assert faults, "the attack is recorded"
    check(faults[0])


class CountingLines:
    """Counts the lines the referee judges (every line read goes through ``judge``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0

        def counted(line: Any, pending: Pending | None) -> Verdict:
            self.count += 1
            return judge(line, pending)

        monkeypatch.setattr(referee, "judge", counted)


STALE = b'{"type":"answer","id":0,"answer":1}\n'


async def test_a_flood_within_one_request_is_cut_off(make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 lines that answer nothing, then the answer: the referee handles a bounded
    number of them, the request is settled as flooded, and the game goes on."""
    lines = CountingLines(monkeypatch)
    bot = make_bot("flooder", attacker(f"send({STALE!r} * 10_000 + answer(msg))"))
    result = await play([bot, RANDOM])
    assert_completed_cleanly_for_the_honest(result)
    faults = faults_of(result, 0)
    assert faults and all(f.kind == "malformed" and "flooded its output" in f.message for f in faults)
    assert faults[0].line == STALE.decode().strip()
    assert len(dropped_of(result, 0)) <= 20, "the dropped-line log stays bounded"
    # At most three requests flooded (then it is disqualified), each cut after the budget;
    # 10 turns of the honest seat and a few answers: far below the 10,000 lines sent.
    print("lines handled:", lines.count)
    assert lines.count <= 3 * (LINE_BUDGET + 2) + 80, lines.count


async def test_a_flood_between_requests_is_dropped_without_a_fault(
    make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines written after the answer (they fit in the pipe) are dropped before the next
    request, unread: no fault, a bounded log, a bounded count of lines handled."""
    lines = CountingLines(monkeypatch)
    bot = make_bot("babbler", attacker(f"send(answer(msg) + {STALE!r} * 1_000)"))
    result = await play([bot, RANDOM])
    assert_completed_cleanly_for_the_honest(result)
    assert faults_of(result, 0) == [] and result.games[0].statuses[0].status == "ok"
    dropped = dropped_of(result, 0)
    assert 1 <= len(dropped) <= 20 and dropped[-1].line == STALE.decode().strip()
    print("lines handled:", lines.count)
    assert lines.count <= LINE_BUDGET + 2 + 80, lines.count


def guesses(first: int | str, last: int | str) -> str:
    """Code for answers (illegal ones) to the request ids from ``first`` to ``last`` (numbers
    or expressions of the bot's code)."""
    return f'b"".join(b\'{{"type":"answer","id":%d,"answer":105}}\\n\' % i for i in range({first}, {last}))'


@pytest.mark.parametrize(
    "attack, hello_extra",
    [
        ("send(answer(msg))", guesses(0, 40)),  # with the hello, before any request
        ("send(answer(msg) + " + guesses('msg["id"] + 1', 'msg["id"] + 40') + ")", 'b""'),  # with an answer
    ],
    ids=["before the first request", "between two requests"],
)
async def test_answers_sent_before_their_request_are_dropped_unjudged(
    make_bot: MakeBot, attack: str, hello_extra: str
) -> None:
    """An answer that guesses the next request's id was written before that request:
    it is dropped, never taken for an answer (nor judged illegal)."""
    bot = make_bot("guesser", attacker(attack, hello_extra))
    result = await play([bot, RANDOM])
    assert_completed_cleanly_for_the_honest(result)
    assert faults_of(result, 0) == [], "the guesses were never judged"
    dropped = dropped_of(result, 0)
    assert dropped and all("while no request was pending" in d.reason for d in dropped)
    assert dropped[0].line.endswith('"answer":105}')


SLOW = raw_bot('time.sleep(0.2)\nsend({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]})')

FAILED_STARTS = {
    "garbage hello": ("print('hello? ' * 3, flush=True)", 10_000, "malformed", "hello? hello? hello?"),
    "invalid UTF-8 hello": (
        "sys.stdout.buffer.write(b'\\xff\\xfe\\n'); sys.stdout.flush()",
        10_000,
        "malformed",
        "\ufffd",
    ),
    "no hello": ("pass", 500, "timeout", None),
}


@pytest.mark.parametrize("greeting, startup_ms, kind, evidence", FAILED_STARTS.values(), ids=FAILED_STARTS.keys())
async def test_a_bot_failing_its_start_is_stopped_at_once(
    make_bot: MakeBot, greeting: str, startup_ms: int, kind: str, evidence: str | None
) -> None:
    """It would otherwise run (here: spin a core) for the whole match."""
    code = f"""
import sys, threading
def spin():
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
sys.stdin.readline()
{greeting}
sys.stdin.read()
"""
    failing = make_bot("failing", code)
    slow = make_bot("slow", SLOW)
    started: list[Any] = []
    ended: list[str | None] = []

    class Recording(LocalSandbox):
        async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> Any:
            process = await super().start(bot, nursery, max_line)
            if bot.name == "failing":
                started.append(process)
            return process

    class Watch(Observer):
        def events(self, game_no: int, events: list[Any]) -> None:
            ended.append(started[0].exit_reason())

    loaded = [load_bot(failing), load_bot(slow)]
    spec = MatchSpec("nimmt", {"rounds": 1}, loaded, single_game(loaded, 3), TimeLimits(2000, 10_000, startup_ms))
    result = await play_match(spec, Recording(), Watch())
    fault = faults_of(result, 0)[0]
    assert fault.kind == kind
    if evidence is not None:
        assert fault.line is not None and evidence in fault.line
    assert result.games[0].statuses[1].status == "ok"
    # The slow seat takes 10 x 0.2 s: long before the end, the failed bot has been stopped.
    assert ended and ended[-1] is not None, "the failed bot was stopped during the match"


async def test_last_words_at_start_up_are_the_crash_evidence(make_bot: MakeBot) -> None:
    cutoff = make_bot("cutoff", 'import sys\nsys.stdin.readline()\nsys.stdout.write(\'{"type":"hel\')\n')
    result = await play([cutoff, RANDOM])
    fault = faults_of(result, 0)[0]
    assert fault.kind == "crash" and "exited during start-up" in fault.message
    assert fault.line == '{"type":"hel'
    assert_completed_cleanly_for_the_honest(result)


# --- the inbox, over a bare pipe ---------------------------------------------------


class PipeEnd:
    """The reading end of a pipe, as the inbox sees a bot."""

    def __init__(self) -> None:
        read_fd, self.write_fd = os.pipe()
        self.stream = trio.lowlevel.FdStream(read_fd)
        self.output = PipeLines(self.stream, MAX_LINE_BYTES)

    def write(self, data: bytes) -> None:
        os.write(self.write_fd, data)

    def cpu_seconds(self) -> float:
        return 0.0

    def close(self) -> None:
        self.stream.close()
        try:
            os.close(self.write_fd)
        except OSError:
            pass


async def quiet(inbox: Inbox) -> bool:
    """Nothing more arrives (no clock involved: a muted bot cannot be read at all)."""
    with trio.move_on_after(0.2):
        await inbox.receive()
        return False
    return True


async def test_the_inbox_reads_a_budget_of_lines_then_nothing_until_armed() -> None:
    bot = PipeEnd()
    inbox = Inbox()
    try:
        inbox.add(7, bot)  # type: ignore[arg-type]
        bot.write(b"x\n" * 10_000)
        got = [await inbox.receive() for _ in range(LINE_BUDGET + 1)]
        assert [r.line for r in got[:LINE_BUDGET]] == [b"x"] * LINE_BUDGET
        flooded = got[-1].error
        assert isinstance(flooded, Flooded) and flooded.line == b"x" and got[-1].key == 7
        assert await quiet(inbox), "a flooded bot is not read any more"
        bot.write(b"y\nunended")
        dropped = inbox.arm(7)
        assert dropped.lines >= 1 and dropped.last == b"y", "what it wrote before its request is dropped"
        bot.write(b" line\n")
        again = await inbox.receive()
        assert again.line == b"unended line", "read again once armed; an unended line is kept"
    finally:
        inbox.close()
        bot.close()


async def test_arming_drops_lines_already_read_but_not_the_end_of_output() -> None:
    bot = PipeEnd()
    inbox = Inbox()
    try:
        inbox.add(0, bot)  # type: ignore[arg-type]
        bot.write(b"early 1\nearly 2\nlast words")
        os.close(bot.write_fd)
        first = await inbox.receive()  # reads all: two lines and the end of the output
        assert first.line == b"early 1"
        assert inbox.arm(0) == (1, b"early 2")
        end = await inbox.receive()
        assert isinstance(end.error, EndOfStream) and end.error.tail == b"last words"
    finally:
        inbox.close()
        bot.close()


# --- fuzzing -------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5),
    max_leaves=30,
)


@st.composite
def hostile_lines(draw: st.DrawFn) -> bytes:
    """Bytes a bot might send: mostly answer-shaped, each spoiled in its own way."""
    head = draw(st.sampled_from([b'{"type":"answer","id":1,"answer":', b'{"type":"hello","name":', b"", b"["]))
    kind = draw(st.sampled_from(["deep", "number", "nul", "utf8", "json", "bytes", "strings"]))
    if kind == "deep":
        depth = draw(st.integers(0, 100_000))
        opener = draw(st.sampled_from([b"[", b'{"a":', b'[{"b":']))
        body = opener * depth + draw(st.sampled_from([b"", b"1", b"]" * depth]))
    elif kind == "number":
        body = draw(st.sampled_from([b"", b"-", b"0.", b"1e"])) + b"9" * draw(st.integers(1, 6000))
        body += draw(st.sampled_from([b"", b"e99999", b"e-99999", b".5"]))
    elif kind == "nul":
        body = b'"' + b"\x00" * draw(st.integers(1, 5)) + b'"'
    elif kind == "utf8":
        body = b'"' + draw(st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])) + b'"'
    elif kind == "json":
        body = json.dumps(draw(json_values)).encode()
    elif kind == "strings":  # brackets inside strings, escapes, unterminated strings
        body = b"".join(draw(st.lists(st.sampled_from([b'"', b"\\", b"[", b"]", b"{", b"}", b"a", b","]), max_size=80)))
    else:
        body = draw(st.binary(max_size=200))
    return head + body + draw(st.sampled_from([b"}", b"", b"]}"]))


def reference_depth(line: bytes) -> int:
    """``nesting_depth`` the slow way: byte by byte."""
    depth = best = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            best = max(best, depth)
        elif byte in b"]}":
            depth -= 1
    return best


FUZZ = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
"""No deadline (the machine may be busy) and no example database written into the tree."""


@FUZZ
@given(hostile_lines())
def test_decoding_a_hostile_line_raises_only_the_decode_error(line: bytes) -> None:
    try:
        message = decode_from_bot(line)
    except msgspec.DecodeError:
        return
    assert isinstance(message, HelloReply | Answer)
    if isinstance(message, Answer):
        for legal in ([1, 2, 3], [[1, 2], [2, 3]], ["6o", "pass"], [None, True, 1.5]):
            assert isinstance(is_legal(message.answer, legal), bool)


@FUZZ
@given(st.one_of(hostile_lines(), st.binary(max_size=300)))
def test_nesting_depth_matches_a_byte_by_byte_count(line: bytes) -> None:
    assert nesting_depth(line) == reference_depth(line)


@FUZZ
@given(json_values)
def test_valid_lines_within_the_depth_cap_decode_as_before(value: Any) -> None:
    line = msgspec.json.encode({"type": "answer", "id": 3, "answer": value})
    assert nesting_depth(line) <= MAX_DEPTH
    assert decode_from_bot(line) == Answer(3, msgspec.json.decode(line)["answer"])


@FUZZ
@given(
    hostile_lines(),
    st.sampled_from(["line", "too long", "flooded"]),
    st.booleans(),
    st.sampled_from([[1, 2, 3], [[1, 2], [1, 3]], ["6o", "pass"]]),
)
def test_any_line_is_judged_as_the_bots_doing(line: bytes, how: str, pending: bool, legal: list[Any]) -> None:
    """Whatever arrives, ``judge`` returns a verdict: an answer, or a fault with the line
    as evidence, when a request is pending; a drop with the line otherwise."""
    framed: bytes | LineTooLong | Flooded = {
        "line": line,
        "too long": LineTooLong(MAX_LINE_BYTES, line[:200]),
        "flooded": Flooded(LINE_BUDGET, line),
    }[how]
    verdict = judge(framed, Pending(1, "play", legal) if pending else None)
    evidence = line[:200] if how == "too long" else line
    if not pending:
        assert isinstance(verdict, Dropped) and verdict.line == evidence and "no request was pending" in verdict.reason
    elif isinstance(verdict, Faulted):
        assert verdict.line == evidence
        assert verdict.kind == "malformed" or (verdict.kind == "illegal" and how == "line")
    elif isinstance(verdict, Answered):
        assert how == "line" and is_legal(verdict.answer, legal)
    else:
        assert how == "line" and verdict.cause in ("stale id", "not an answer"), "a stale answer or a hello is dropped"


# --- memory --------------------------------------------------------------------------

HOG = """
import json, os, sys
def send(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        send(json.dumps({"type": "hello", "name": "hog", "version": "1"}).encode() + b"\\n")
    elif msg["type"] == "request":
        sys.stderr.buffer.write(b"log " * 1_000_000); sys.stderr.flush()             # 4 MB of stderr
        send(b"[" * 3_000_000 + b"\\n")                                              # a 3 MB line
        send(b'{"type":"answer","id":%d,"answer":' % msg["id"] + b"[" * 60_000 + b"\\n")  # deep, under the cap
        send(b'{"type":"answer","id":0,"answer":[1,2]}\\n' * 20_000)                 # a flood
        send(json.dumps({"type": "answer", "id": msg["id"], "answer": msg["legal"][0]}).encode() + b"\\n")
"""


MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""
"""Runs a command and writes its exit code and peak RSS (KiB) to a file. The command is
forked from this small process, not from pytest: a child's peak starts at its parent's
size when forked (the pages it shares), and exec keeps it."""


def test_arena_play_stays_small_whatever_a_bot_sends(make_bot: MakeBot, tmp_path: Path) -> None:
    """``arena play`` against a bot sending huge lines, deep nesting, floods of lines and
    of stderr: its peak memory stays under 100 MB and the replay is written.

    The peak is that of the arena's process tree as ``wait4`` reports it (the bots are
    its descendants: small Python processes here)."""
    hog = make_bot("hog", HOG)
    replay, measured = tmp_path / "game.jsonl", tmp_path / "measured"
    arena = str(Path(sys.executable).parent / "arena")
    command = [arena, "play", str(hog), str(RANDOM), "--sandbox", "local", "--replay", str(replay)]
    command += ["--set", "rounds=1", "--move-time", "5", "--seed", "3"]
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, str(measured), *command], cwd=ROOT, capture_output=True, timeout=120
    )
    code, peak_kb = map(int, measured.read_text().split())
    assert code in (0, 3), run.stdout.decode() + run.stderr.decode()  # 3: the attacker was disqualified
    assert replay.exists() and replay.stat().st_size > 0
    print(f"arena play peak RSS: {peak_kb / 1024:.1f} MB")
    assert peak_kb / 1024 < 100, f"peak RSS {peak_kb / 1024:.1f} MB"
    lines = [json.loads(line) for line in replay.read_text().splitlines()]
    faults = [line for line in lines if line.get("type") == "fault"]
    assert faults and faults[0]["seat"] == 0
