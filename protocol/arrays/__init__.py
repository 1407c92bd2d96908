"""A game's views and answers as arrays: what a learning policy reads and chooses.

One module per game (``protocol.arrays.nimmt``, ``protocol.arrays.sixes``), each with
the same few names, so that the arena's environment (``arena.env``) and a bot folder
exported from a trained policy (``arena bot from-policy``) encode alike, with this one
copy of the code: the bot's sandbox holds this package, not the arena.

- ``ACTIONS``: the size of the game's fixed action space (``Discrete(ACTIONS)``).
- ``observation_size(players)``: the length of an observation.
- ``observation(kind, view)``: a seat's view (the protocol's dict, as ``msgspec.to_builtins``
  makes it of the typed view) as whole numbers from 0 to ``HIGH``; ``kind`` is the pending
  request's kind, or ``None`` when the seat is not asked.
- ``action(kind, answer)``: the index of a protocol answer; ``answer(index)``: the answer.
- ``refuse(settings)``: why a game's settings (a dict) have no fixed action space, or ``None``.

Every entry is a whole number, so a policy reads the same values from the environment's
float32 arrays as from the plain lists a bot without numpy makes of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

HIGH = 1 << 24
"""The largest value of any entry: every whole number up to it is exact in float32."""


class Encoding(Protocol):
    """What each game's module offers (checked where the arena names one: ``arena.games.parts.EnvPart``)."""

    GAME: str
    ACTIONS: int

    def observation_size(self, players: int) -> int: ...

    def observation(self, kind: str | None, view: dict[str, Any]) -> list[int]: ...

    def action(self, kind: str, answer: Any) -> int: ...

    def answer(self, index: int) -> Any: ...

    def refuse(self, settings: dict[str, Any]) -> str | None: ...


def mask(encoding: Encoding, kind: str | None, legal: Iterable[Any]) -> list[int]:
    """1 at the index of every legal answer, else 0 (all 0 for a seat not asked)."""
    bits = [0] * encoding.ACTIONS
    if kind is not None:
        for answer in legal:
            bits[encoding.action(kind, answer)] = 1
    return bits


def relative(values: Iterable[int], seat: int) -> list[int]:
    """Per-seat values turned so that the seat itself comes first, then the seats after it."""
    listed = list(values)
    return listed[seat:] + listed[:seat]


def clip(value: int) -> int:
    """``value`` within 0..``HIGH``."""
    return min(max(value, 0), HIGH)
