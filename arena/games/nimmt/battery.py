"""The 6 nimmt! battery: every request kind of every variant, and the positions where
bots tend to break (a card below every row, the sixth card, the last turn of a round)."""

from __future__ import annotations

from typing import Any

from arena.botcheck.generic import scrambled_ids
from arena.games.nimmt.rules import Settings, State
from arena.games.parts import Opening, Scenario
from protocol.nimmt import Deal


def position(turn: int, rows: tuple[tuple[int, ...], ...], hands: tuple[tuple[int, ...], ...]) -> Opening:
    """A game opening at ``turn`` of round 1 with these rows and hands (seat order)."""

    def opening(settings: Settings, players: int) -> tuple[State, list[Any]]:
        zero = (0,) * players
        state = State(settings, players, 7, 1, turn, rows, hands, zero, zero, ())
        return state, [Deal(1, rows, hands)]

    return opening


def scenarios() -> list[Scenario]:
    return [
        Scenario("two standard games in one session, the seat changing", {}, 4, ((0, 1), (2, 2))),
        Scenario(
            "a card below every row (a row to choose)",
            {"rounds": 1},
            4,
            ((0, position(9, ((20, 21), (30,), (40, 41, 42), (50,)), ((3, 5), (60, 61), (70, 71), (80, 81)))),),
        ),
        Scenario(
            "every card would be a sixth card",
            {"rounds": 1},
            4,
            (
                (
                    1,
                    position(
                        9,
                        ((10, 11, 12, 13, 14), (20, 21, 22, 23, 24), (30, 31, 32, 33, 34), (40, 41, 42, 43, 44)),
                        ((35, 36), (15, 25), (45, 46), (55, 56)),
                    ),
                ),
            ),
        ),
        Scenario(
            "the last turn of a round, then a new deal",
            {"rounds": 2},
            4,
            ((3, position(10, ((10,), (20,), (30,), (40,)), ((7,), (64,), (99,), (33,)))),),
        ),
        Scenario("request ids that are not 1, 2, 3...", {"rounds": 1}, 4, ((1, 3),), ids=scrambled_ids),
        Scenario("ten players", {"rounds": 1}, 10, ((9, 4),)),
        Scenario("tactical variant", {"variant": "tactical", "rounds": 1}, 5, ((1, 5),)),
        Scenario("logical variant (the draft)", {"variant": "logical", "rounds": 1}, 4, ((1, 6),)),
        Scenario("professional variant", {"variant": "professional", "rounds": 1}, 4, ((2, 7),)),
        Scenario("two cards a turn", {"cards_per_turn": 2, "rounds": 1}, 4, ((0, 8),)),
        Scenario("rows kept between rounds", {"keep_rows": True, "rounds": 2}, 4, ((3, 9),)),
        Scenario("shedding", {"shedding": True}, 4, ((0, 10),)),
    ]
