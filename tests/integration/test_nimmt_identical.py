"""Thousands of seeded 6 nimmt! games, hashed and compared with hashes recorded before
the turn was rewritten (issue 14): every variant, 2 to 10 players where allowed, and
the house rules that change a turn (pairs, shedding, kept rows).

A game's hash covers, for every decision, its kind, each asked seat's view, legal
answers and default, the answers played; every event; and the outcome. So a rewrite
of the rules that changes any of what a bot sees, any replay or any result fails here.
The answers are random but seeded, and the recorded hashes were made by the code as
it stood before the rewrite (``python -m tests.integration.test_nimmt_identical --record`` writes
them anew, for a deliberate change of the rules only).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.games.nimmt import rules as nimmt

HASHES = Path(__file__).resolve().parent.parent / "fixtures" / "nimmt_hashes.json"
_encode = msgspec.json.Encoder().encode


def _players(raw: dict[str, Any]) -> range:
    if raw.get("variant") == "logical":
        return range(2, nimmt.LOGICAL_MAX_PLAYERS + 1)
    if raw.get("keep_rows"):
        return range(2, 9)
    return range(2, nimmt.MAX_PLAYERS + 1)


# (settings, games per player count): the four variants get most games, as the
# standard turn is the one the rewrite sped up.
CONFIGURATIONS: list[tuple[dict[str, Any], int]] = [
    *(({"variant": v}, 100) for v in nimmt.VARIANTS),
    *(({"variant": v, "cards_per_turn": 2}, 8) for v in nimmt.VARIANTS),
    *(({"variant": v, "shedding": True}, 4) for v in nimmt.VARIANTS),
    *(({"variant": v, "shedding": True, "cards_per_turn": 2}, 4) for v in nimmt.VARIANTS),
    ({"keep_rows": True}, 10),
    ({"variant": "professional", "keep_rows": True}, 10),
    ({"keep_rows": True, "cards_per_turn": 2}, 4),
    ({"rounds": 2, "end_score": 1}, 10),
]


def game_hash(raw: dict[str, Any], players: int, seed: int) -> str:
    """One seeded random game, hashed: everything a bot sees, every event, the outcome."""
    settings = nimmt.parse_settings(raw, players)
    rng = random.Random(f"{seed}/{players}")
    digest = hashlib.sha256()
    state, events = nimmt.start(settings, players, seed)
    digest.update(_encode(events))
    while (pending := nimmt.decision(state)) is not None:
        answers = {}
        for seat in pending.seats:
            legal = nimmt.legal(state, seat)
            digest.update(_encode([pending.kind, seat, nimmt.view(state, seat), legal, nimmt.default(state, seat)]))
            answers[seat] = rng.choice(legal)
        digest.update(_encode(answers))
        state, events = nimmt.apply(state, answers)
        digest.update(_encode(events))
    digest.update(_encode(nimmt.outcome(state)))
    return digest.hexdigest()


def key(raw: dict[str, Any], players: int) -> str:
    return f"{json.dumps(raw, sort_keys=True)} x{players}"


def hashes() -> dict[str, str]:
    """Per configuration and player count, a hash of all its games' hashes."""
    out = {}
    for raw, games in CONFIGURATIONS:
        for players in _players(raw):
            combined = hashlib.sha256()
            for seed in range(games):
                combined.update(game_hash(raw, players, seed).encode())
            out[key(raw, players)] = combined.hexdigest()
    return out


def test_the_configurations_cover_thousands_of_games_of_every_variant() -> None:
    counts = {
        v: sum(len(_players(raw)) * n for raw, n in CONFIGURATIONS if raw.get("variant", "standard") == v)
        for v in nimmt.VARIANTS
    }
    assert all(count >= 500 for count in counts.values()), counts
    assert sum(counts.values()) >= 3000


def test_every_game_is_bit_identical_to_the_recorded_one() -> None:
    recorded = json.loads(HASHES.read_text())
    now = hashes()
    assert now.keys() == recorded.keys()
    differ = [k for k in now if now[k] != recorded[k]]
    assert not differ, f"games differ from the recorded ones: {differ}"


def test_the_hash_sees_what_a_bot_sees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash is not blind to views: one hidden field changed changes it."""
    before = game_hash({"variant": "tactical"}, 3, 1)
    view = nimmt.view
    monkeypatch.setattr(nimmt, "view", lambda state, seat: msgspec.structs.replace(view(state, seat), hand_sizes=()))
    assert game_hash({"variant": "tactical"}, 3, 1) != before


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    HASHES.parent.mkdir(exist_ok=True)
    HASHES.write_text(json.dumps(hashes(), indent=1) + "\n")
