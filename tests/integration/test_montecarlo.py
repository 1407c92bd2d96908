"""The Monte Carlo reference bot (sample_bots/montecarlo) as a process through the
referee: legal in every variant, repeatable with a fixed number of playouts, and inside
its time (its search, in this process: tests/unit/test_montecarlo_search.py)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from arena.bots import Bot, load_bot
from arena.play.match import GameSpec, MatchResult, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import DecisionLine, End, FaultLine, verify
from arena.sandbox.local import LocalSandbox

from ..conftest import SAMPLES

MONTECARLO = SAMPLES / "montecarlo"
RANDOM = SAMPLES / "random"
HEURISTIC = SAMPLES / "heuristic"


def montecarlo(arguments: str) -> Bot:
    """The bot started as ``python3 bot.py ARGUMENTS``."""
    bot = load_bot(MONTECARLO)
    return msgspec.structs.replace(
        bot, manifest=msgspec.structs.replace(bot.manifest, run=f"python3 bot.py {arguments}")
    )


async def play(
    bots: list[Bot], settings: dict[str, Any], seed: int = 3, move_ms: int = 1000, bank_ms: int = 0, games: int = 1
) -> MatchResult:
    seats = list(range(len(bots)))
    specs = [GameSpec(seed + g, seats[g:] + seats[:g]) for g in range(games)]
    spec = MatchSpec("nimmt", settings, bots, specs, TimeLimits(move_ms, bank_ms, 10_000))
    return await play_match(spec, LocalSandbox())


def own_decisions(result: MatchResult, bot: int = 0) -> list[tuple[str, Any, float]]:
    """``(kind, answer, wall ms)`` of every request bot ``bot`` answered, game by game."""
    out = []
    for game in result.games:
        seat = game.spec.seats.index(bot)
        for line in game.replay:
            if isinstance(line, DecisionLine) and seat in line.seats:
                i = line.seats.index(seat)
                assert not line.defaulted[i], f"the referee played a default for the bot: {line}"
                out.append((line.kind, line.answers[i], line.wall_ms[i]))
    return out


def assert_clean(result: MatchResult) -> None:
    for game in result.games:
        faults = [line for line in game.replay if isinstance(line, FaultLine)]
        assert not faults, faults
        assert [status.status for status in game.statuses] == ["ok"] * len(game.statuses)
        assert list(verify(game.replay)), "the replay re-simulates"
        end = game.replay[-1]
        assert isinstance(end, End)
        assert not any("montecarlo:" in text for text in end.stderr), end.stderr


VARIANTS = [
    {"rounds": 1},
    {"variant": "tactical", "rounds": 1},
    {"variant": "logical", "rounds": 1},
    {"variant": "professional", "rounds": 1},
    {"keep_rows": True, "rounds": 2},
    {"cards_per_turn": 2, "rounds": 1},
    {"shedding": True},
    {"variant": "professional", "keep_rows": True, "rounds": 2},
    {"variant": "logical", "cards_per_turn": 2, "rounds": 1},
    {"variant": "tactical", "shedding": True, "cards_per_turn": 2},
]


@pytest.mark.parametrize("settings", VARIANTS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
async def test_every_variant_is_answered_legally_through_the_referee(settings: dict[str, Any]) -> None:
    bots = [montecarlo("--think 0.02 --seed 5"), load_bot(RANDOM), load_bot(HEURISTIC)]
    result = await play(bots, settings, games=2)
    assert_clean(result)
    kinds = {kind for kind, _, _ in own_decisions(result)}
    assert "play" in kinds
    assert ("draft" in kinds) == (settings.get("variant") == "logical")


async def test_a_full_standard_game_with_two_search_seats() -> None:
    """Two copies of the bot at one table (each its own process), a game to 66 heads: one
    searching in C (built in the sandbox, or the bot exits), one in Python."""
    result = await play(
        [montecarlo("--think 0.01 --engine c"), montecarlo("--think 0.01 --seed 2 --engine python"), load_bot(RANDOM)],
        {},
    )
    assert_clean(result)
    assert max(result.games[0].scores) >= 66


async def test_a_fixed_number_of_playouts_repeats_every_answer() -> None:
    bots = [montecarlo("--playouts 25 --seed 9"), load_bot(RANDOM), load_bot(HEURISTIC), load_bot(RANDOM)]
    settings = {"rounds": 2}
    first = await play(bots, settings, seed=11, games=2)
    second = await play(bots, settings, seed=11, games=2)
    assert_clean(first)
    answers = [(kind, answer) for kind, answer, _ in own_decisions(first)]
    assert answers == [(kind, answer) for kind, answer, _ in own_decisions(second)]
    assert len(answers) >= 20
    assert [game.scores for game in first.games] == [game.scores for game in second.games]


async def test_the_answer_comes_within_move_ms_whatever_think_says() -> None:
    """``--think 30`` asks for far more than the move allows: the bot caps itself at a
    third of ``move_ms`` (from the hello), and with no bank an overrun is a timeout."""
    move_ms = 450
    bots = [montecarlo("--think 30"), load_bot(RANDOM), load_bot(RANDOM), load_bot(RANDOM)]
    result = await play(bots, {"rounds": 1}, move_ms=move_ms, bank_ms=0)
    assert_clean(result)
    walls = [wall for _, _, wall in own_decisions(result)]
    assert len(walls) >= 9  # none over move_ms: with no bank that is a timeout, and a default (refused above)
    # How long it thinks, capped and used whole, is timed on a clock of the test's own below.
