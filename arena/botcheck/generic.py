"""The battery for a game that brings none of its own: fresh deals at the smallest,
a middle and the largest table, two games in one session with the seat changing, and
request ids that are not 1, 2, 3. Every game the registry knows can be checked."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

from arena.games.parts import Scenario

if TYPE_CHECKING:
    from arena.games.registry import AnyGame


def scrambled_ids() -> Iterator[int]:
    """Request ids as a referee may send them: not 1, 2, 3..., below 2**31."""
    rng = random.Random(31)
    yield 907
    yield 0
    while True:
        yield rng.randrange(1 << 31)


def scenarios(record: AnyGame) -> list[Scenario]:
    """Whole games at the game's default settings; a seat and a seed each."""
    fewest, most = record.rules.MIN_PLAYERS, record.rules.MAX_PLAYERS
    middle = (fewest + most) // 2
    battery = [Scenario(f"{fewest} players", {}, fewest, ((0, 1),))]
    if fewest < middle < most:
        battery.append(Scenario(f"{middle} players", {}, middle, ((middle // 2, 2),)))
    if most > fewest:
        battery.append(Scenario(f"{most} players", {}, most, ((most - 1, 3),)))
    battery += [
        Scenario("two games in one session, the seat changing", {}, middle, ((0, 4), (middle - 1, 5))),
        Scenario("request ids that are not 1, 2, 3...", {}, fewest, ((fewest - 1, 6),), ids=scrambled_ids),
    ]
    return battery
