"""Playing a game in one process, with Python policies instead of bot processes.

The same rule functions the referee calls: used by benchmarks, tests and bots that
look ahead.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from .games import Game, Outcome

Policy = Callable[[Any, int, list[Any]], Any]
"""``(state, seat, legal answers) -> answer``."""


def play_game(game: Game, settings: Any, players: int, seed: int, policies: Sequence[Policy]) -> tuple[Any, Outcome]:
    """Play one game to its end; return the final state and the outcome."""
    state, _ = game.start(settings, players, seed)
    while (pending := game.decision(state)) is not None:
        answers = {seat: policies[seat](state, seat, game.legal(state, seat)) for seat in pending.seats}
        state, _ = game.apply(state, answers)
    outcome = game.outcome(state)
    assert outcome is not None
    return state, outcome


def random_policy(rng: random.Random) -> Policy:
    """A policy that picks uniformly among the legal answers."""
    choice = rng.choice
    return lambda state, seat, legal: choice(legal)
