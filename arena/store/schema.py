"""The database's schema: one migration per version (``PRAGMA user_version``), applied
in order when a writer opens an older file, each in a transaction of its own; a reader
checks the version and never migrates."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from arena.store.board_keys import board_variant
from arena.store.errors import StoreError

MIGRATIONS: list[str] = [
    # 1: the first schema.
    """
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        hash TEXT NOT NULL,
        path TEXT NOT NULL,
        language TEXT NOT NULL,
        games TEXT NOT NULL,
        added TEXT NOT NULL,
        UNIQUE (name, version)
    );
    CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        game TEXT NOT NULL,
        variant TEXT NOT NULL,
        settings TEXT NOT NULL,
        seed INTEGER NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        created TEXT NOT NULL,
        finished TEXT
    );
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
        match_no INTEGER NOT NULL,
        game_no INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        game TEXT NOT NULL,
        variant TEXT NOT NULL,
        players INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        wall_ms REAL NOT NULL,
        started TEXT NOT NULL,
        replay BLOB NOT NULL,
        UNIQUE (tournament_id, match_no, game_no)
    );
    CREATE TABLE game_seats (
        game_id INTEGER NOT NULL REFERENCES games (id),
        seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots (id),
        rank INTEGER NOT NULL,
        score INTEGER NOT NULL,
        status TEXT NOT NULL,
        timeouts INTEGER NOT NULL,
        crashes INTEGER NOT NULL,
        malformed INTEGER NOT NULL,
        illegal INTEGER NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX game_seats_bot ON game_seats (bot_id);
    CREATE INDEX games_kind ON games (game, variant, tournament_id);
    CREATE TABLE ratings (
        scope TEXT NOT NULL,
        last_game INTEGER NOT NULL,
        computed TEXT NOT NULL,
        board TEXT NOT NULL,
        PRIMARY KEY (scope)
    );
    """,
]
MIGRATIONS.append(
    # 2: for leaderboards that answer at once over 100,000 games: each game's seats as
    # text (bots, ranks, scores, seat by seat) so rating reads one table and no join, and
    # an index of the few seats with faults.
    """
    ALTER TABLE games ADD COLUMN seat_bots TEXT NOT NULL DEFAULT '';
    ALTER TABLE games ADD COLUMN seat_ranks TEXT NOT NULL DEFAULT '';
    ALTER TABLE games ADD COLUMN seat_scores TEXT NOT NULL DEFAULT '';
    UPDATE games SET
        seat_bots = (SELECT group_concat(bot_id) FROM (SELECT bot_id FROM game_seats WHERE game_id = games.id ORDER BY seat)),
        seat_ranks = (SELECT group_concat(rank) FROM (SELECT rank FROM game_seats WHERE game_id = games.id ORDER BY seat)),
        seat_scores = (SELECT group_concat(score) FROM (SELECT score FROM game_seats WHERE game_id = games.id ORDER BY seat));
    CREATE INDEX game_seats_faulty ON game_seats (bot_id) WHERE timeouts + crashes + malformed + illegal > 0;
    """
)
MIGRATIONS.append(
    # 3: a bot's snapshot path relative to the database's `<db>-bots/` folder (it was as
    # `bot add` saw it: relative to the folder it ran in, or absolute), so the database
    # works from any folder and after a move. Every snapshot was `<db>-bots/NAME-VERSION-
    # HASH12`: a path ending so is kept as that last part; any other is left as it is.
    # And a lease on each tournament: the arena running it (host:pid:start) and when it
    # last said so, so that two arenas never run one tournament at once.
    """
    UPDATE bots SET path = name || '-' || version || '-' || substr(hash, 1, 12)
        WHERE substr(path, -length(name || '-' || version || '-' || substr(hash, 1, 12)) - 1)
              = '/' || name || '-' || version || '-' || substr(hash, 1, 12);
    ALTER TABLE tournaments ADD COLUMN lease_owner TEXT;
    ALTER TABLE tournaments ADD COLUMN lease_beat REAL;
    """
)
MIGRATIONS.append(
    # 4: one board per rule set. The `variant` columns of tournaments and games hold the
    # board (`board_variant`: the variant plus every setting that changes play or scoring
    # and is not at its default), recomputed from each tournament's stored settings:
    # house-rule games were pooled into their variant's board. Cached boards were
    # computed over the old pools: dropped.
    """
    UPDATE tournaments SET variant = board_variant(game, variant, settings);
    UPDATE games SET variant = (SELECT t.variant FROM tournaments t WHERE t.id = games.tournament_id)
        WHERE variant != coalesce((SELECT t.variant FROM tournaments t WHERE t.id = games.tournament_id), variant);
    DELETE FROM ratings;
    """
)
MIGRATIONS.append(
    # 5: the node that played each game: the coordinating machine's host name on one
    # machine, the Dask worker's name on a cluster; empty for games stored before.
    """
    ALTER TABLE games ADD COLUMN node TEXT NOT NULL DEFAULT '';
    """
)
MIGRATIONS.append(
    # 6: the workers of the cluster that plays each tournament and their thinking slots,
    # as JSON (a list of {"name", "slots"}); empty for one machine and for those before.
    """
    ALTER TABLE tournaments ADD COLUMN workers TEXT NOT NULL DEFAULT '[]';
    """
)
MIGRATIONS.append(
    # 7: for the games list's filters. Games by the time they started (from=, to=): a day
    # is counted and paged in the index instead of reading every game's row. Games by
    # board in id order (board=): a page of a board is read in order, where `games_kind`
    # (by tournament within the board) has every game of the board sorted first.
    """
    CREATE INDEX IF NOT EXISTS games_started ON games (started);
    CREATE INDEX IF NOT EXISTS games_board ON games (game, variant, id);
    """
)
MIGRATIONS.append(
    # 8: bots submitted over the web (arena/store/submissions.py). Authors with the hash of
    # their token (never the token); which author owns each bot name; each submission
    # with its packed folder (bundle.pack's tar), where it is in the pipeline and the
    # report of its build and check; the browser sessions of signed-in authors (hashes
    # of their cookies, with each one's CSRF token).
    """
    CREATE TABLE authors (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL UNIQUE,
        created TEXT NOT NULL,
        revoked TEXT
    );
    CREATE TABLE bot_owners (
        name TEXT PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES authors (id)
    );
    CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES authors (id),
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        archive BLOB NOT NULL,
        state TEXT NOT NULL,
        report TEXT NOT NULL DEFAULT '{}',
        bot_id INTEGER REFERENCES bots (id),
        received TEXT NOT NULL,
        updated TEXT NOT NULL
    );
    CREATE INDEX submissions_state ON submissions (state, id);
    CREATE INDEX submissions_author ON submissions (author_id, id);
    CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        author_id INTEGER NOT NULL REFERENCES authors (id),
        csrf TEXT NOT NULL,
        expires REAL NOT NULL
    );
    """
)
MIGRATIONS.append(
    # 9: deals from a secret (arena/deals.py): the secret a tournament's deals derive from
    # (NULL: from its seed, chosen by the organiser and so known), its commitment, and for
    # a ladder the epochs of its chain revealed so far with the key of the last one.
    """
    ALTER TABLE tournaments ADD COLUMN secret TEXT;
    ALTER TABLE tournaments ADD COLUMN commitment TEXT;
    ALTER TABLE tournaments ADD COLUMN revealed_epochs INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tournaments ADD COLUMN revealed_key TEXT;
    """
)
SCHEMA_VERSION = len(MIGRATIONS)
FAULTY_SEAT = "timeouts + crashes + malformed + illegal > 0"
"""A seat with faults, as the partial index ``game_seats_faulty`` is written (so that
SQLite uses it)."""


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the database ``db`` (the file ``path``, for messages) to ``SCHEMA_VERSION``."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version} is newer than this arena's ({SCHEMA_VERSION})")
    # Migration 4 computes each tournament's board from its stored settings.
    db.create_function("board_variant", 3, _migrated_variant, deterministic=True)
    for number in range(version, SCHEMA_VERSION):
        # One transaction per step: a migration is applied whole or not at all.
        db.executescript(f"BEGIN; {MIGRATIONS[number]}; PRAGMA user_version = {number + 1}; COMMIT;")


def check_version(db: sqlite3.Connection, path: Path) -> None:
    """A read-only store needs the current schema: it cannot migrate an old one."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        raise StoreError(f"{path}: not an arena database yet (a tournament creates it)")
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {version}, this arena reads {SCHEMA_VERSION}"
            + (
                ": run a writing command on it once to migrate it (`arena tournament run` or"
                f" `arena bot add BOT_DIR --db {path}`)"
                if version < SCHEMA_VERSION
                else ": a newer arena made it"
            )
        )


def _migrated_variant(game: str, variant: str, settings: str) -> str:
    """``board_variant`` of a stored tournament (its variant as it was when its settings
    cannot be read)."""
    try:
        parsed = json.loads(settings)
    except (TypeError, ValueError):
        return variant
    return board_variant(game, parsed) if isinstance(parsed, dict) else variant
