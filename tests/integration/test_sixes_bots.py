"""Sixes between real bot processes through the referee: a full game that replays, and
a bot that passes when it can play (the rules: tests/unit/test_sixes.py)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from arena.bots import load_bot
from arena.games.sixes import render
from arena.play import replay
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.sandbox.local import LocalSandbox

from ..conftest import SAMPLES, MakeBot
from .test_referee import raw_bot

HEURISTIC = SAMPLES / "sixes-heuristic"
RANDOM = SAMPLES / "sixes-random"


async def run_sixes(paths: list[Path], seed: int = 1, settings: dict[str, Any] | None = None) -> MatchResult:
    """One game of Sixes between bot processes in the local sandbox (``run_match`` of
    tests/integration/test_referee.py plays 6 nimmt! only)."""
    bots = [load_bot(p) for p in paths]
    spec = MatchSpec(
        "sixes", settings or {}, bots, [GameSpec(seed, list(range(len(bots))))], TimeLimits(1000, 5000, 10_000)
    )
    return await play_match(spec, LocalSandbox())


async def test_the_sample_bots_play_a_full_game_that_replays() -> None:
    result = await run_sixes([HEURISTIC, RANDOM, RANDOM, HEURISTIC], seed=3)
    game = result.games[0]
    assert [s.status for s in game.statuses] == ["ok"] * 4
    assert sum(game.scores) == 40
    assert min(game.scores) == 0 or game.rounds == 100
    steps = list(replay.verify(game.replay))
    assert steps[-1].state.over and steps[-1].state.round == game.rounds
    decisions = [line for line in game.replay if isinstance(line, replay.DecisionLine)]
    assert decisions[0].answers == ["6o"] and not any(any(d.defaulted) for d in decisions)


async def test_a_bot_that_passes_when_it_can_play_gets_the_default(make_bot: MakeBot) -> None:
    passer = make_bot(
        "passer",
        raw_bot('send({"type": "answer", "id": msg["id"], "answer": "pass"})'),
        games='["sixes"]',
    )
    result = await run_sixes([passer, RANDOM], seed=2, settings={"max_rounds": 1})
    game = result.games[0]
    assert game.statuses[0].status == "disqualified"
    assert game.statuses[0].faults[0].kind == "illegal"
    assert 'illegal play answer "pass"' in game.statuses[0].faults[0].message
    assert game.ranks[0] == 2
    console = Console(file=io.StringIO(), width=80)
    render.show_replay(console, game.replay, list(replay.verify(game.replay)))
    assert isinstance(console.file, io.StringIO)
    out = console.file.getvalue()
    assert re.search(r'! A illegal \(round 1, turn \d+\): illegal play answer "pass"', out), out
    assert "(default)" in out and "disqualified (illegal, illegal, illegal)" in out
