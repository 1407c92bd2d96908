"""What the replay viewers of every game share."""

from __future__ import annotations

from typing import Any

from ..replay import ReplayError


def start_at(log: Any, round_no: int | None, turn: int | None) -> tuple[int, int]:
    """The 0-based round and turn to start showing at (round 1 if only a turn is given),
    or ``ReplayError`` saying what the game has."""
    if round_no is None and turn is None:
        return 0, 0
    round_no = round_no or 1
    rounds = len(log.rounds)
    if not 1 <= round_no <= rounds:
        raise ReplayError(f"round {round_no} does not exist: this game has {count(rounds, 'round')}")
    if turn is None:
        return round_no - 1, 0
    turns = len(log.rounds[round_no - 1].turns)
    if not 1 <= turn <= turns:
        raise ReplayError(f"turn {turn} does not exist: round {round_no} has {count(turns, 'turn')}")
    return round_no - 1, turn - 1


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
