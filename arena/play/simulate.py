"""Playing a game in one process, with Python policies instead of bot processes.

The same rule functions the referee calls: used by benchmarks, tests and bots that
look ahead. ``replay_of`` writes such a game as the referee would log it, so that a
replay can be made, and checked against the rules, without any bot process.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from arena.games import Outcome, Rules
from arena.games.registry import AnyGame
from arena.play.replay import FORMAT, DecisionLine, End, EventsLine, Header, Line, SeatInfo, SeatStatus

StateT = TypeVar("StateT")
SettingsT = TypeVar("SettingsT")

Policy = Callable[[Any, int, list[Any]], Any]
"""``(state, seat, legal answers) -> answer``."""


def play_game(
    game: Rules[StateT, SettingsT, Any, Any, Any],
    settings: SettingsT,
    players: int,
    seed: int,
    policies: Sequence[Policy],
) -> tuple[StateT, Outcome]:
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


def replay_of(
    record: AnyGame, settings: Mapping[str, Any], players: int, seed: int, policies: Sequence[Policy]
) -> list[Line]:
    """The replay of one game played by ``policies``, line for line as the referee logs
    it, with every time 0 and every seat ``ok``: deterministic for deterministic policies."""
    rules = record.rules
    parsed = rules.parse_settings(settings, players)
    raw = msgspec.to_builtins(parsed)
    seats = [SeatInfo(f"policy{seat}", "0", "none") for seat in range(players)]
    lines: list[Line] = [Header(FORMAT, record.name, raw, seed, players, seats, {})]
    state, events = rules.start(parsed, players, seed)
    lines.append(EventsLine(events))
    while (pending := rules.decision(state)) is not None:
        seated = list(pending.seats)
        answers = [policies[seat](state, seat, rules.legal(state, seat)) for seat in seated]
        zero = [0.0] * len(seated)
        lines.append(DecisionLine(pending.kind, seated, answers, zero, zero, [False] * len(seated)))
        state, events = rules.apply(state, dict(zip(seated, answers, strict=True)))
        lines.append(EventsLine(events))
    outcome = rules.outcome(state)
    assert outcome is not None
    lines.append(End(outcome.scores, outcome.ranks, [SeatStatus("ok")] * players, [""] * players))
    return lines
