"""The arena's database: bots, tournaments, games and their replays, in one SQLite file.

This package is the only part of the arena that writes SQL. The schema is versioned
(``PRAGMA user_version``) and brought up to date by ``MIGRATIONS`` when a file is opened,
so an old database keeps working. Every finished game is committed on its own, at once:
a tournament killed at any moment loses nothing it finished and counts nothing twice
(``UNIQUE (tournament_id, match_no, game_no)``). The file runs in WAL mode, so readers
(a leaderboard, the web) never block the tournament writing to it.

Bot snapshots live beside the file, in ``<db>-bots/`` (``arena-bots/`` for ``arena.db``),
and the database names them relative to that folder: the two move, and are backed up,
together. A tournament is run by one arena at a time, which holds its lease. Every
failure of the file itself (damaged, disk full, no write access, locked) is a
``StoreError`` naming the file and what to do.

One job a module: ``schema`` (migrations), ``connection`` (opening, transactions,
faults), ``board_keys`` (which games share a board), ``records`` (the Structs in and
out), ``snapshots`` (bot folders on disk), ``leases`` (who runs a tournament), and the
parts of ``Store``: ``bots``, ``tournaments``, ``games``, ``results`` (what boards read,
and their cache), ``bot_history``, ``removal``. ``submissions`` and ``upkeep`` (backup,
check) build on ``Store``.
"""

from __future__ import annotations

from arena.store.board_keys import (
    PEOPLE,
    board_key,
    board_label,
    board_settings,
    board_variant,
    canonical_board,
    with_people,
)
from arena.store.connection import name_faults, tidy_wal
from arena.store.errors import ReplayPruned, StoreError
from arena.store.leases import LEASE_BEAT, LEASE_TIMEOUT
from arena.store.records import (
    FAULT_KINDS,
    PAUSED,
    FinishedGame,
    GameFilter,
    NodeActivity,
    SeatResult,
    StoredBot,
    StoredGame,
    StoredSeat,
    Tournament,
    now,
    version_key,
)
from arena.store.removal import Removal
from arena.store.results import Results
from arena.store.schema import FAULTY_SEAT, MIGRATIONS, SCHEMA_VERSION
from arena.store.snapshots import snapshots_of
from arena.store.tournaments import TOURNAMENT_COLUMNS

__all__ = [
    "FAULTY_SEAT",
    "FAULT_KINDS",
    "LEASE_BEAT",
    "LEASE_TIMEOUT",
    "MIGRATIONS",
    "PAUSED",
    "SCHEMA_VERSION",
    "TOURNAMENT_COLUMNS",
    "FinishedGame",
    "GameFilter",
    "NodeActivity",
    "ReplayPruned",
    "SeatResult",
    "Store",
    "StoreError",
    "StoredBot",
    "StoredGame",
    "StoredSeat",
    "Tournament",
    "board_key",
    "PEOPLE",
    "board_label",
    "board_settings",
    "board_variant",
    "canonical_board",
    "with_people",
    "now",
    "snapshots_of",
    "tidy_wal",
    "version_key",
]


class Store(Removal, Results):
    """One open database (default ``arena.db``), with bot snapshots in ``<db>-bots/``.

    One object, because its callers hold one connection and one set of leases for a
    command's whole life; composed of one class per part (``Bots``, ``Tournaments``,
    ``Games``, ``Results``, ``BotHistory``, ``Removal``, each in its module, over
    ``Leases`` and ``Database``), so that each part's SQL is read beside its records and
    a part that needs another (a removal asks who runs what) says so by inheriting it.
    Every method turns SQLite's own errors into a ``StoreError`` (``name_faults``).
    """


name_faults(Store)
