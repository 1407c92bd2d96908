"""The Sixes battery: whole games at every table size, several in one session, and a
turn where passing is the only legal answer."""

from __future__ import annotations

from typing import Any

from arena.botcheck.generic import scrambled_ids
from arena.games.parts import Scenario
from arena.games.sixes.rules import Settings, State
from protocol.sixes import Deal


def nothing_to_play(settings: Settings, players: int) -> tuple[State, list[Any]]:
    """Seat 1 to move with no 6 and nothing next to the oros run: it must pass."""
    hands = (("5o", "7o", "6c"), ("1c", "2c", "12b"), ("1e", "2e", "3e"))
    table = ((6, 6), None, None, None)
    return State(settings, players, 7, 1, 2, 1, hands, table, (5, 5, 5), 0), [Deal(1, hands, 0)]


def scenarios() -> list[Scenario]:
    return [
        Scenario("two games in one session, the seat changing", {"chips": 3}, 4, ((0, 1), (3, 2))),
        Scenario("no card to play (pass)", {"chips": 5, "max_rounds": 1}, 3, ((1, nothing_to_play),)),
        Scenario("two players", {"chips": 2}, 2, ((1, 3),)),
        Scenario("eight players", {"chips": 2}, 8, ((5, 4),)),
        Scenario("request ids that are not 1, 2, 3...", {"chips": 2}, 4, ((2, 5),), ids=scrambled_ids),
    ]
