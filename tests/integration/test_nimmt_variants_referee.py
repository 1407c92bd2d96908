"""6 nimmt! variants through the referee, with real bot processes: the SDK decodes the
variants' view fields and answers drafts and pairs (the rules: tests/unit/test_nimmt_variants.py)."""

from __future__ import annotations

from typing import Any

import pytest

from arena.play.replay import DecisionLine

from ..conftest import SAMPLES
from .test_referee import RANDOM, assert_replays, run_match

LOWEST = SAMPLES / "lowest"


@pytest.mark.parametrize(
    "settings",
    [
        {"variant": "logical", "rounds": 1},
        {"cards_per_turn": 2, "rounds": 1},
        {"variant": "professional", "keep_rows": True, "rounds": 2},
        {"shedding": True, "cards_per_turn": 2},
    ],
    ids=["logical", "pairs", "professional-keep_rows", "shedding-pairs"],
)
async def test_sample_bots_play_the_variants_through_the_referee(settings: dict[str, Any]) -> None:
    """The SDK decodes the new view fields, answers drafts and pairs over JSON, and the
    replay re-simulates."""
    result = await run_match([RANDOM, LOWEST, RANDOM], settings=settings)
    assert_replays(result)
    game = result.games[0]
    assert [status.status for status in game.statuses] == ["ok", "ok", "ok"], game.statuses
    kinds = {line.kind for line in game.replay if isinstance(line, DecisionLine)}
    assert ("draft" in kinds) == (settings.get("variant") == "logical")
