"""The private entries of a game's state and events, and their shuffle among the other
seats: what the contract check (``arena.gamecheck``) perturbs to prove that no seat
sees another's.

A name in a record's ``private`` (``hands``) means that field of the state and of every
event; ``Type.name`` (``Roll.dice``) that field of the state or events of that class
only, so that an event that shows every seat's entries on purpose (a call in Liar's
dice) may share the name.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import msgspec


class PrivateFields:
    """Shuffles the other seats' entries of a record's private fields, and remembers
    whether a shuffle ever changed anything and which names were ever seen."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.fields = [(owner or None, name) for owner, _, name in (entry.rpartition(".") for entry in names)]
        self.rng = random.Random(7)
        self.changed = 0
        self.could_change = False
        self.seen: set[str] = set()

    def private_of(self, value: Any) -> list[str]:
        """The private fields ``value`` (a state or an event) holds."""
        kind = type(value).__name__
        return [name for owner, name in self.fields if owner in (None, kind) and hasattr(value, name)]

    def saw(self, state: Any, events: Sequence[Any]) -> None:
        for value in (state, *events):
            kind = type(value).__name__
            self.seen.update(
                entry
                for entry, (owner, name) in zip(self.names, self.fields, strict=True)
                if owner in (None, kind) and hasattr(value, name)
            )

    def shuffled(self, value: Any, seat: int) -> Any:
        """``value`` (a state or an event) with the other seats' entries of each private
        field shuffled among them, each entry keeping its size (what the game shows
        openly, how many cards a seat holds, stays); ``value`` itself if nothing moved."""
        changes = {}
        for name in self.private_of(value):
            entries = getattr(value, name)
            if not isinstance(entries, (tuple, list)) or seat >= len(entries):
                continue
            others = [t for t in range(len(entries)) if t != seat]
            self.could_change |= len(others) > 1
            mixed = list(entries)
            if all(isinstance(entries[t], (tuple, list)) for t in others):
                pool = [item for t in others for item in entries[t]]
                self.rng.shuffle(pool)
                for t in others:
                    size = len(entries[t])
                    mixed[t], pool = type(entries[t])(_sorted(pool[:size])), pool[size:]
            else:
                moved = [entries[t] for t in others]
                self.rng.shuffle(moved)
                for t, entry in zip(others, moved, strict=True):
                    mixed[t] = entry
            if mixed != list(entries):
                changes[name] = type(entries)(mixed)
        if not changes:
            return value
        self.changed += 1
        if isinstance(value, msgspec.Struct):
            return msgspec.structs.replace(value, **changes)
        return dataclasses.replace(value, **changes)

    def unseen(self) -> list[str]:
        """The names of ``private`` that no state or event seen so far holds."""
        return [entry for entry in self.names if entry not in self.seen]


def _sorted(items: list[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:
        return items
