"""A dribbling bot (tests/unit/test_dribbling.py has the rule under a virtual clock) as a
real bot process in both sandboxes: it plays a whole game, its answers count, its table
plays as usual, and the reads it cost are counted by the inbox (never timed: the bound
holds however busy the machine is)."""

from __future__ import annotations

import math
import secrets
from pathlib import Path

import pytest
import trio
import trio.testing

from arena.bots import load_bot
from arena.play.match import MatchSpec, TimeLimits
from arena.play.referee import play_match, single_game
from arena.play.replay import FaultLine
from arena.sandbox.base import BotProcess, Sandbox
from arena.sandbox.docker import DockerSandbox
from arena.sandbox.framing import DRIP_PAUSE, PipeLines
from arena.sandbox.inbox import ARM_READS, Inbox
from arena.sandbox.local import LocalSandbox
from arena.sandbox.pipes import PipedBot
from protocol.messages import Hello, Limits, encode

from ..conftest import SAMPLES, MakeBot
from ..unit.test_dribbling import decisions, most_reads

RANDOM = SAMPLES / "random"


DRIBBLER = """
import json, os, sys, time

# TOKEN: a fresh bot folder for each test, so no copy or image is reused.
SPREAD, PADDED = 0.3, 1000


def dribble(data, fd=1):
    pause = SPREAD / len(data)
    start = time.monotonic()
    for i in range(len(data)):
        os.write(fd, data[i : i + 1])
        ahead = start + (i + 1) * pause - time.monotonic()
        if ahead > 0:  # behind (a busy machine), it catches up without sleeping
            time.sleep(ahead)


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        dribble(b"." * PADDED, fd=2)
        dribble(json.dumps({"type": "hello", "name": "dribbler", "version": "1"}).encode().rjust(PADDED) + b"\\n")
    elif message["type"] == "request":
        answer = {"type": "answer", "id": message["id"], "answer": message["legal"][0]}
        dribble(json.dumps(answer).encode().rjust(PADDED) + b"\\n")
    elif message["type"] == "bye":
        break
"""
"""Dribbles 1,000 bytes of stderr and a 1,000-byte hello at start-up, then each answer
padded to 1,000 bytes, a byte at a time over 0.3 s (of a 3 s limit, for a busy machine)."""


def dribbler(make_bot: MakeBot) -> Path:
    return make_bot("dribbler", DRIBBLER.replace("TOKEN", secrets.token_hex(8)))


async def dribble_a_game(sandbox: Sandbox, folder: Path) -> None:
    """The dribbler plays a whole game against two honest bots: it costs the inbox a
    bounded number of reads per request, and everyone's answers count."""
    bots = [load_bot(folder), load_bot(RANDOM), load_bot(RANDOM)]
    spec = MatchSpec("nimmt", {"rounds": 1}, bots, single_game(bots, 5), TimeLimits(3000, 0, 20_000))
    inbox = Inbox()
    result = await play_match(spec, sandbox, inbox=inbox)
    game = result.games[0]
    assert [s.status for s in game.statuses] == ["ok"] * 3, [s.faults for s in game.statuses]
    assert not [line for line in game.replay if isinstance(line, FaultLine)]
    bound, asked, honest_asks = 0, 0, 0
    for line in decisions(result):
        for seat, wall_ms, defaulted in zip(line.seats, line.wall_ms, line.defaulted, strict=True):
            assert not defaulted, "every answer counts, the dribbler's too"
            if seat == 0:
                asked += 1
                bound += most_reads(wall_ms / 1000) + ARM_READS
            else:
                honest_asks += 1
    assert asked >= 10
    assert inbox.reads[0] <= bound, f"{inbox.reads[0]} reads for {asked} answers of 1,000 bytes, at most {bound}"
    assert inbox.reads[1] + inbox.reads[2] <= 2 * honest_asks + 4, inbox.reads


async def test_a_dribbling_bot_plays_a_bounded_game_in_the_local_sandbox(make_bot: MakeBot) -> None:
    await dribble_a_game(LocalSandbox(), dribbler(make_bot))


@pytest.mark.docker
async def test_a_dribbling_bot_plays_a_bounded_game_in_docker(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    folder = dribbler(make_bot)
    for path in (folder, RANDOM):
        await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(path), lambda line: None)
    await dribble_a_game(docker_sandbox, folder)


async def dribble_a_start(sandbox: Sandbox, folder: Path) -> None:
    """The dribbler's stderr and hello at start-up: every byte kept, in bounded reads."""
    hello = encode(Hello(1, "nimmt", {}, 0, 2, Limits(3000, 0, 20_000)))
    async with trio.open_nursery() as nursery:
        process: BotProcess = await sandbox.start(load_bot(folder), nursery, 1 << 16)
        assert isinstance(process, PipedBot)
        start = trio.current_time()
        await process.send(hello, 10)
        with trio.fail_after(120):  # only a guard against a hang
            line = await process.receive_line()
        elapsed = trio.current_time() - start
        assert line.lstrip().startswith(b'{"type": "hello"')
        await process.stop()
    assert process.stderr.tail(10_000) == "." * 1000, "no byte of its stderr lost"
    assert process.stderr_reads <= math.ceil(elapsed / DRIP_PAUSE) + 2, (process.stderr_reads, elapsed)
    assert isinstance(process.output, PipeLines)
    assert process.output.reads <= most_reads(elapsed), (process.output.reads, elapsed)


async def test_a_dribbled_start_costs_bounded_reads_in_the_local_sandbox(make_bot: MakeBot) -> None:
    await dribble_a_start(LocalSandbox(), dribbler(make_bot))


@pytest.mark.docker
async def test_a_dribbled_start_costs_bounded_reads_in_docker(docker_sandbox: DockerSandbox, make_bot: MakeBot) -> None:
    folder = dribbler(make_bot)
    await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(folder), lambda line: None)
    await dribble_a_start(docker_sandbox, folder)
