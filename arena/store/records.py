"""The records the store hands out and takes in: msgspec Structs, and the few constants
that say what their fields hold (the kinds of fault, a ladder's paused status, how
versions order)."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import msgspec

from arena.bots import Bot, load_bot
from arena.store.errors import StoreError

FAULT_KINDS = ("timeout", "crash", "malformed", "illegal")
PAUSED = "paused"
"""A ladder's status while `arena ladder pause` holds it (its run plays no new table)."""


def now() -> str:
    """The time as the store writes it: UTC, ISO 8601, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def version_key(version: str) -> tuple[tuple[int, int, str], ...]:
    """How versions order, for a bare ``NAME``: part by part, split on dots, each part by
    the number it starts with (1.10 is above 1.2), a part with text after its number
    below the bare number (1.10-beta is below 1.10), text after a number compared as text
    (a part without a number is below every number); a version that is another one with
    more parts is above it (1.10.1 is above 1.10)."""
    key = []
    for part in version.split("."):
        digits = len(part) - len(part.lstrip("0123456789"))
        number = int(part[:digits]) if digits else -1
        rest = part[digits:]
        key.append((number, 0 if rest else 1, rest))
    return tuple(key)


class StoredBot(msgspec.Struct, frozen=True):
    id: int
    name: str
    version: str
    hash: str
    path: str
    language: str
    games: list[str]
    added: str

    @property
    def ref(self) -> str:
        return f"{self.name}:{self.version}"

    def load(self) -> Bot:
        if not os.path.isdir(self.path):
            folder = os.path.dirname(self.path)
            raise StoreError(
                f"{self.ref}: its stored snapshot {self.path} is missing: restore {folder}/ (it is kept beside"
                f" the database and moves with it) from a backup, or `arena bot add` the bot's folder again"
            )
        return load_bot(self.path)


class Tournament(msgspec.Struct, frozen=True):
    id: int
    name: str
    game: str
    variant: str
    settings: dict[str, Any]
    seed: int
    """Chooses the tables; deals too when there is no secret (an organiser's ``--seed``)."""
    config: dict[str, Any]
    status: str
    created: str
    finished: str | None
    secret: str | None = None
    """What its deals derive from (``arena.deals``): never shown until it has finished
    (``revealed``); None when the organiser chose the seed, and the deals are known."""
    commitment: str | None = None
    """The secret's SHA-256 (a ladder's: of its chain's first key), published from the start."""
    revealed_epochs: int = 0
    revealed_key: str | None = None
    """A ladder's epochs whose tables have all been played, and the last one's key."""

    @property
    def deal_key(self) -> str:
        return self.secret if self.secret is not None else str(self.seed)

    @property
    def revealed(self) -> str | None:
        """The secret, once no game it deals can still be played."""
        return self.secret if self.status == "finished" else None


class SeatResult(msgspec.Struct, frozen=True):
    bot_id: int
    rank: int
    score: int
    status: str
    faults: dict[str, int]


class FinishedGame(msgspec.Struct, frozen=True):
    """A finished game as the tournament hands it to the store: ids and the raw replay,
    what the rows are written from. Kept apart from ``StoredGame``, what is read back:
    that one names the tournament and the bots, has the id the database gave it, and
    leaves the replay for ``Store.replay`` to read when asked."""

    tournament_id: int
    match_no: int
    game_no: int
    deal: int
    seed: int
    game: str
    variant: str
    rounds: int
    wall_ms: float
    started: str
    seats: list[SeatResult]
    replay: bytes
    """The replay's JSON lines."""
    node: str = ""
    """The machine that played it: the coordinating machine's host name on one machine,
    the Dask worker's name on a cluster."""


class StoredSeat(msgspec.Struct, frozen=True):
    seat: int
    bot: str
    """``name:version``."""
    rank: int
    score: int
    status: str
    faults: dict[str, int]
    """Counts by kind, only the kinds that happened."""


class StoredGame(msgspec.Struct, frozen=True):
    """A stored game and its seats, as ``arena games`` (table, JSON, CSV) and the web
    (its pages and ``/api/games``) show it."""

    id: int
    tournament: str
    match_no: int
    game_no: int
    deal: int
    seed: int
    game: str
    variant: str
    rounds: int
    wall_ms: float
    started: str
    seats: list[StoredSeat]
    node: str = ""
    """The machine that played it (empty: stored before the arena recorded it)."""


class NodeActivity(msgspec.Struct, frozen=True):
    """What one node of a tournament has played, as its web page shows it."""

    node: str
    slots: int | None
    """Its thinking slots, as the cluster reported them when the tournament started (None:
    not recorded)."""
    games: int
    """Games of the tournament it stored."""
    recent_per_s: float | None
    """Games it started in the last ``window_s`` seconds, per second (None on a page
    while no run plays the tournament: a dead run's pace is not a pace)."""


class GameFilter(msgspec.Struct, frozen=True):
    """Which stored games a list shows: each field set narrows it (None: any)."""

    tournament_id: int | None = None
    bot_id: int | None = None
    opponent_id: int | None = None
    """A second bot that sat in the same games."""
    game: str | None = None
    variant: str | None = None
    """The board's variant, as the store writes it (``board_variant``)."""
    faulty: bool = False
    """Only games where a seat faulted: the seat of ``bot_id`` when it is set."""
    started_from: str | None = None
    """Games started at or after this (ISO text, compared as text: ``2026-11-30``)."""
    started_before: str | None = None
    """Games started before this."""
