"""What every game module offers the referee, the simulator and the replay checker.

A game is a module of pure functions over an immutable state. The referee only ever
asks it who must decide now (``decision``), what a seat may see (``view``), which
answers are legal (``legal``), what to play for a seat that failed (``default``), and
what follows from the answers (``apply``). It never names a game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import msgspec


class SettingsError(ValueError):
    """Settings that make no game: an unknown key, a value out of range, a bad mix."""


class IllegalAnswer(ValueError):
    """An answer the rules do not allow, with a message that quotes it."""


class Decision(msgspec.Struct, frozen=True):
    """Who must answer now, and what kind of answer.

    Several seats mean a hidden simultaneous decision: nobody learns another's answer
    before all have answered.
    """

    kind: str
    seats: tuple[int, ...]


class Outcome(msgspec.Struct, frozen=True):
    """Final scores (in the game's own unit) and 1-based ranks, shared on ties."""

    scores: list[int]
    ranks: list[int]
    rounds: int = 1
    """Rounds played, for per-round averages."""


class Game(Protocol):
    """The interface of a game module (see ``arena.games.nimmt``)."""

    NAME: str
    MIN_PLAYERS: int
    MAX_PLAYERS: int
    Event: Any
    """The tagged union of the game's event structs, for decoding replays."""

    def parse_settings(self, raw: Mapping[str, Any], players: int) -> msgspec.Struct: ...

    def start(self, settings: Any, players: int, seed: int) -> tuple[Any, list[Any]]: ...

    def decision(self, state: Any) -> Decision | None: ...

    def view(self, state: Any, seat: int) -> Any: ...

    def legal(self, state: Any, seat: int) -> list[Any]: ...

    def default(self, state: Any, seat: int) -> Any: ...

    def apply(self, state: Any, answers: Mapping[int, Any]) -> tuple[Any, list[Any]]: ...

    def observe(self, event: Any, seat: int) -> Any | None: ...

    def outcome(self, state: Any) -> Outcome | None: ...


def competition_ranks(scores: Sequence[int], lower_is_better: bool) -> list[int]:
    """Ranks 1, 2, 2, 4...: each seat's rank is one more than the seats strictly ahead."""
    sign = 1 if lower_is_better else -1
    keys = [sign * s for s in scores]
    return [1 + sum(1 for other in keys if other < mine) for mine in keys]
