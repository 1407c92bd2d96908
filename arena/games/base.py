"""The contract every game's rules keep, and the types they share.

A game is a module of pure functions over an immutable state. The referee, the
simulator and the replay checker only ever call the functions of ``Rules``; a module
that lacks one, or whose signatures disagree, fails the type checker where it is
registered (``arena.games.registry``), not at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

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


StateT = TypeVar("StateT")
SettingsT = TypeVar("SettingsT")
ViewT_co = TypeVar("ViewT_co", covariant=True)
AnswerT = TypeVar("AnswerT")
EventT = TypeVar("EventT")


class Rules(Protocol[StateT, SettingsT, ViewT_co, AnswerT, EventT]):
    """What a game module offers (``arena.games.nimmt.rules`` is one), generic over its state,
    settings, a seat's view, an answer and an event. Every function is pure."""

    MIN_PLAYERS: int
    """The fewest seats the game takes."""
    MAX_PLAYERS: int
    """The most seats the game takes."""

    def parse_settings(self, raw: Mapping[str, Any], players: int) -> SettingsT:
        """Validated settings for ``players`` seats, or ``SettingsError`` naming the bad one."""
        ...

    def start(self, settings: SettingsT, players: int, seed: int) -> tuple[StateT, list[EventT]]:
        """The first state and its events (the deal): a pure function of settings, players and seed."""
        ...

    def decision(self, state: StateT) -> Decision | None:
        """Who must answer now and what kind of answer; ``None`` once the game is over."""
        ...

    def view(self, state: StateT, seat: int) -> ViewT_co:
        """All that ``seat`` may see: the only thing a bot is ever sent of the state."""
        ...

    def legal(self, state: StateT, seat: int) -> list[AnswerT]:
        """Every answer ``seat`` may give to the pending decision."""
        ...

    def default(self, state: StateT, seat: int) -> AnswerT:
        """The documented answer played for a seat that failed; always legal."""
        ...

    def apply(self, state: StateT, answers: Mapping[int, AnswerT]) -> tuple[StateT, list[EventT]]:
        """The next state and the events it caused, from every asked seat's answer;
        ``IllegalAnswer`` quoting an answer the rules refuse. The input is untouched."""
        ...

    def observe(self, event: EventT, seat: int) -> EventT | None:
        """What ``seat`` is told of an event (a deal shows only its own hand); ``None``: nothing."""
        ...

    def outcome(self, state: StateT) -> Outcome | None:
        """Scores and ranks once the game is over, else ``None``."""
        ...


AnyRules = Rules[Any, Any, Any, Any, Any]
"""The rules of a game whose types the caller does not know (the referee's view)."""


def competition_ranks(scores: Sequence[int], lower_is_better: bool) -> list[int]:
    """Ranks 1, 2, 2, 4...: each seat's rank is one more than the seats strictly ahead."""
    sign = 1 if lower_is_better else -1
    keys = [sign * s for s in scores]
    return [1 + sum(1 for other in keys if other < mine) for mine in keys]
