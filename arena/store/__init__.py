"""The arena's database: bots, tournaments, games and their replays, in one SQLite file.

This is the only module that writes SQL. The schema is versioned (``PRAGMA
user_version``) and brought up to date by ``MIGRATIONS`` when a file is opened, so an
old database keeps working. Every finished game is committed on its own, at once: a
tournament killed at any moment loses nothing it finished and counts nothing twice
(``UNIQUE (tournament_id, match_no, game_no)``). The file runs in WAL mode, so readers
(a leaderboard, the web) never block the tournament writing to it.

Bot snapshots live beside the file, in ``<db>-bots/`` (``arena-bots/`` for ``arena.db``),
and the database names them relative to that folder: the two move, and are backed up,
together. A tournament is run by one arena at a time, which holds its lease. Every
failure of the file itself (damaged, disk full, no write access, locked) is a
``StoreError`` naming the file and what to do.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import secrets
import socket
import sqlite3
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from arena.bots import Bot, BotError, content_hash, load_bot
from arena.bots.folder import copy_folder, remove_tree, seal_read_only
from arena.deals import commitment

if TYPE_CHECKING:
    from arena.games.registry import AnyGame

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
TOURNAMENT_COLUMNS = (
    "id, name, game, variant, settings, seed, config, status, created, finished, secret, commitment,"
    " revealed_epochs, revealed_key"
)
FAULT_KINDS = ("timeout", "crash", "malformed", "illegal")
PAUSED = "paused"
"""A ladder's status while `arena ladder pause` holds it (its run plays no new table)."""


LEASE_TIMEOUT = 90.0
"""Seconds without a heartbeat after which another arena may take a tournament over."""
LEASE_BEAT = 10.0
"""Seconds between the heartbeats of the arena running a tournament."""


class StoreError(ValueError):
    """A request the store refuses, with a message that says why and what to do."""


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


# --- boards: which games share a leaderboard ---------------------------------------------


def _game(game: str) -> AnyGame | None:
    """The catalog's record of ``game`` (None for a game the arena does not know)."""
    from arena.games.registry import find_game

    return find_game(game)


def _setting_defaults(game: str) -> dict[str, Any] | None:
    """The settings that make a board of ``game``, at their defaults, in its order; None
    for a game the arena does not know."""
    record = _game(game)
    return None if record is None else record.board_defaults()


def _variants(game: str) -> tuple[str, ...]:
    """A game's variants; ``("standard",)`` for a game without any."""
    record = _game(game)
    return ("standard",) if record is None else record.variants


def _setting_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def board_variant(game: str, settings: dict[str, Any]) -> str:
    """The board of a game's rule set, as the ``variant`` columns hold it: the variant
    (``standard`` for a game without variants), then, joined by commas in the order the
    game lists its settings, every other setting that is not at its default: ``name``
    for a switch that is on, else ``name=value`` (``standard,shedding``,
    ``tactical,end_score=50``, ``standard,chips=15``). ``end_score`` is left out while
    ``rounds`` is set, since the game then ignores it. At their defaults the settings
    leave just the variant, so the default board keeps the key it always had."""
    base = str(settings.get("variant", "standard"))
    defaults = _setting_defaults(game)
    if defaults is None:
        return base
    record = _game(game)
    overridden_by = record.overridden_by if record is not None else {}
    parts = [base]
    for name, default in defaults.items():
        value = settings.get(name, default)
        if name == "variant" or value == default or settings.get(overridden_by.get(name, "")):
            continue
        parts.append(name if value is True else f"{name}={_setting_text(value)}")
    return ",".join(parts)


def board_key(game: str, settings: dict[str, Any]) -> str:
    """Which games share a leaderboard: ``GAME/`` and ``board_variant`` (``nimmt/standard``,
    ``nimmt/standard,shedding``, ``sixes/standard,chips=15``). Settings that change
    neither play nor scoring do not exist: every setting of a game counts."""
    return f"{game}/{board_variant(game, settings)}"


def board_settings(game: str, variant: str) -> dict[str, Any]:
    """The settings a board's ``variant`` names (those not named are at their defaults),
    or ``StoreError`` saying what is wrong with it."""
    defaults = _setting_defaults(game)
    if defaults is None:
        raise StoreError(f"unknown game {game!r} in board {game}/{variant}")
    base, *parts = variant.split(",")
    if "=" in base or base in defaults:  # "sixes/chips=15": the variant left out
        base, parts = "standard", [base, *parts]
    variants = _variants(game)
    if base not in variants:
        raise StoreError(
            f"unknown variant {base!r} of {game} in board {game}/{variant}: choose one of {', '.join(variants)}"
        )
    settings: dict[str, Any] = {"variant": base} if "variant" in defaults else {}
    for part in parts:
        name, equals, text = part.partition("=")
        if name not in defaults or name == "variant":
            known = ", ".join(n for n in defaults if n != "variant")
            raise StoreError(f"unknown setting {name!r} of {game} in board {game}/{variant}: the settings are {known}")
        default = defaults[name]
        if isinstance(default, bool) and text.lower() in ("", "true", "false"):
            settings[name] = not equals or text.lower() == "true"
        elif not isinstance(default, bool) and isinstance(default, int) and text.isdigit():
            settings[name] = int(text)
        else:
            kind = "on (bare name) or name=false" if isinstance(default, bool) else "a whole number"
            raise StoreError(f"setting {part!r} in board {game}/{variant}: {name} is {kind}")
    return settings


def canonical_board(key: str) -> str:
    """``key`` (``GAME/VARIANT[,SETTING...]``, a bare ``GAME/VARIANT`` or ``GAME``, the
    settings in any order) as ``board_key`` writes it, or ``StoreError``."""
    game, _, variant = key.partition("/")
    return board_key(game, board_settings(game, variant or "standard"))


def board_label(key: str) -> str:
    """A board's key in words: ``6 nimmt! standard``, ``6 nimmt! standard · shedding``,
    ``6 nimmt! tactical · end at 50 heads``, ``Sixes``, ``Sixes · 15 chips``."""
    game, _, variant = key.partition("/")
    base, *parts = (variant or "standard").split(",")
    record = _game(game)
    title = game if record is None else record.title
    words = [f"{title} {base}" if len(_variants(game)) > 1 or base != "standard" else title]
    for part in parts:
        name, equals, value = part.partition("=")
        say = None if record is None else record.setting_words.get(name)
        words.append(part if say is None else say(value if equals else "true"))
    return " · ".join(words)


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


class ReplayPruned(StoreError):
    """A stored game whose replay its ladder pruned (its result is kept)."""


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


FAULTY_SEAT = "timeouts + crashes + malformed + illegal > 0"
"""A seat with faults, as the partial index ``game_seats_faulty`` is written (so that
SQLite uses it)."""


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


def _merged(where: GameFilter | None, tournament_id: int | None, bot_id: int | None) -> GameFilter:
    """The filter with the tournament and bot given beside it (the older way to ask)."""
    match = where or GameFilter()
    if tournament_id is not None:
        match = msgspec.structs.replace(match, tournament_id=tournament_id)
    if bot_id is not None:
        match = msgspec.structs.replace(match, bot_id=bot_id)
    return match


def _faulty(match: GameFilter) -> str:
    return f" AND {FAULTY_SEAT}" if match.faulty else ""


def snapshots_of(db: str | Path) -> Path:
    """``<db>-bots/`` beside the database ``db``: where its bot snapshots live."""
    absolute = Path(os.path.abspath(db))
    return absolute.with_name(f"{absolute.stem}-bots")


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of an error (0 when it has none)."""
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def _user_name() -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(os.geteuid()).pw_name}"
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


def _process_start(pid: int) -> str:
    """When a process started (clock ticks since boot), "" when there is no such process:
    with the pid, it tells a process from a later one given the same pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            return file.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _me() -> str:
    """This process: ``host:pid:start``."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def _owner_parts(owner: str) -> tuple[str, int, str]:
    """``host:pid:start:store`` (a host name holds no colon) as host, pid and start."""
    host, pid, start, _ = (owner.rsplit(":", 3) + ["", "", ""])[:4]
    return host, int(pid) if pid.isdigit() else 0, start


def _holds(owner: str, beat: float | None) -> bool:
    """Whether the arena ``owner`` still holds its lease: it said so within
    ``LEASE_TIMEOUT`` and, on this host, its process is still the one that took it."""
    if beat is None or time.time() - beat > LEASE_TIMEOUT:
        return False
    host, pid, start = _owner_parts(owner)
    if host != socket.gethostname():
        return True
    started = _process_start(pid)
    return bool(started) and started == start


def _beat(path: Path, tournament_id: int, owner: str, stop: threading.Event) -> None:
    """Renew this process's lease on a tournament until ``stop`` (a thread of its own,
    with a connection of its own: the store's is busy storing games)."""
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=LEASE_BEAT)
    except sqlite3.Error:
        return
    try:
        while not stop.wait(LEASE_BEAT):
            try:
                db.execute(
                    "UPDATE tournaments SET lease_beat = ? WHERE id = ? AND lease_owner = ?",
                    (time.time(), tournament_id, owner),
                )
            except sqlite3.Error:  # a full disk, a lock: the next beat tries again
                pass
    finally:
        db.close()


class Store:
    """One open database (default ``arena.db``), with bot snapshots in ``<db>-bots/``."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        """Open (and create, and migrate) the database at ``path``.

        ``read_only`` opens an existing file with SQLite's ``mode=ro``: nothing is created,
        migrated or written (``cache_board`` does nothing), so a reader such as the web
        server can never disturb a tournament writing to the same file, and a user who may
        not write the file or its folder (or a read-only file system) can still read it.
        """
        self.path = Path(path)
        self.read_only = read_only
        self.immutable = False
        """Opened with ``immutable=1``: see ``_connect_read_only``."""
        self._absolute = Path(os.path.abspath(self.path))
        self.snapshots = snapshots_of(self.path)
        """``<db>-bots/``: the bot snapshots, named in the database relative to it."""
        self._leases: set[int] = set()
        self.owner = f"{_me()}:{secrets.token_hex(4)}"
        """This store as a lease holder: ``host:pid:start:token``."""
        self._beats: dict[int, tuple[threading.Event, threading.Thread]] = {}
        self.closed = False
        if self.path.is_dir():
            raise StoreError(f"{path}: is a folder, not a database file")
        try:
            # One thread at a time, but not always the same one (a tournament writes from a
            # worker thread while its event loop runs).
            if read_only:
                self.db = self._connect_read_only()
                try:
                    self._check_version()
                except BaseException:
                    self.db.close()
                    raise
            else:
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30, check_same_thread=False)
                try:
                    self.db.execute("PRAGMA journal_mode = WAL")
                    self.db.execute("PRAGMA synchronous = NORMAL")
                    self.db.execute("PRAGMA foreign_keys = ON")
                    self._migrate()
                except BaseException:
                    self.db.close()
                    raise
        except sqlite3.Error as exc:
            if _code(exc) == sqlite3.SQLITE_NOTADB:
                raise StoreError(
                    f"{path}: not an arena database ({exc}): --db names another file; if it was one, it is"
                    f" damaged: restore it from a backup"
                ) from None
            raise self._fault(exc) from None

    def _connect_read_only(self) -> sqlite3.Connection:
        """``mode=ro``; in WAL mode that needs ``<db>-shm`` beside the file, which a user who
        may not write the folder (or a read-only file system) cannot make. Then, if there
        is no ``<db>-wal`` with anything in it, every committed game is in the file itself
        and no arena is writing (a writer makes the -wal first): ``immutable=1`` reads it
        without the -shm. A web server checks ``sees_everything`` before reusing it."""
        uri = f"file:{urllib.parse.quote(str(self._absolute))}?mode=ro"
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30, check_same_thread=False)
        try:
            db.execute("PRAGMA user_version").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            if _code(exc) not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) or not os.access(
                self._absolute, os.R_OK
            ):
                raise
            if self._wal_size() > 0:
                raise StoreError(
                    f"{self.path}: cannot read the games in {self.path}-wal: SQLite needs {self.path}-shm beside"
                    f" it and {self._why_not_writable()[0] or 'it cannot be made'}: as a user who may write that"
                    f" folder, fold the -wal into the database once: sqlite3 {self.path} 'PRAGMA wal_checkpoint(TRUNCATE)'"
                ) from None
        self.immutable = True
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)

    def _wal_size(self) -> int:
        try:
            return os.stat(f"{self._absolute}-wal").st_size
        except OSError:
            return 0

    def sees_everything(self) -> bool:
        """False when this read-only connection ignores what arenas write (it was opened
        ``immutable`` and a writer has since started a -wal): open a new one."""
        return not self.immutable or self._wal_size() == 0

    def _why_not_writable(self) -> tuple[str, str]:
        """Why this user cannot write the database, and what to do, in words; ("", "")
        when nothing says so."""
        folder = self._absolute.parent
        try:
            if os.statvfs(folder).f_flag & os.ST_RDONLY:
                return f"{folder} is on a read-only file system", "run it on a copy on a writable disk"
        except OSError:
            pass
        user = _user_name()
        fix = "run it as a user who may write both the file and its folder, or on a copy"
        if self._absolute.exists() and not os.access(self._absolute, os.W_OK):
            return f"{user} has no permission to write it", fix
        if not os.access(folder, os.W_OK | os.X_OK):
            return (
                f"{user} has no permission to write its folder {folder}"
                f" (SQLite keeps {self._absolute.name}-wal and -shm beside it)"
            ), fix
        return "", ""

    def _fault(self, exc: sqlite3.Error) -> StoreError:
        """The failure of the file itself, as one line naming it and what to do."""
        code = _code(exc)
        where = self.path
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            return StoreError(
                f"{where}: the database is damaged ({exc}): restore it from a backup (README: keeping a"
                f' league), or save what it still holds with `sqlite3 {where} ".recover" | sqlite3 recovered.db`'
                " and use recovered.db"
            )
        if code == sqlite3.SQLITE_FULL:
            return StoreError(
                f"{where}: the disk is full ({exc}): free some space, then run the command again (what was"
                " stored is kept; a tournament goes on with `arena tournament run --resume --name NAME`)"
            )
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
            if code == sqlite3.SQLITE_CANTOPEN and not self._absolute.parent.is_dir():
                return StoreError(f"{where}: cannot open the database: its folder does not exist")
            if self._absolute.exists() and not os.access(self._absolute, os.R_OK):
                return StoreError(f"{where}: cannot read the database: {_user_name()} has no permission to read it")
            reason, fix = self._why_not_writable()
            if reason:
                return StoreError(
                    f"{where}: cannot write the database ({exc}): {reason}: {fix} (the commands that only read,"
                    " such as `arena leaderboard`, work as they are)"
                )
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return StoreError(
                f"{where}: the database stayed locked for 30 s ({exc}): another arena is writing to it;"
                " run this again when it is done"
            )
        if code == sqlite3.SQLITE_IOERR:
            return StoreError(
                f"{where}: the disk failed ({exc}): check it has space and is healthy, then run the command"
                " again (what was stored is kept)"
            )
        return StoreError(f"{where}: {exc}")

    def close(self) -> None:
        """Release the leases and close; a writer first folds the ``-wal`` into the file
        (``checkpoint``), so that once the last writer has finished the file alone holds
        every game (a plain copy of it is then complete)."""
        if self.closed:
            return
        for tournament_id in list(self._leases):
            self.release_lease(tournament_id)
        if not self.read_only:
            self.checkpoint()
        self.db.close()
        self.closed = True

    def checkpoint(self) -> bool:
        """Fold the ``-wal`` into the database file and empty it (``wal_checkpoint(TRUNCATE)``),
        waiting at most 5 s for readers; True when it was folded whole. Nothing is lost
        when it is not: the games stay in the ``-wal`` and SQLite folds them later."""
        try:
            self.db.execute("PRAGMA busy_timeout = 5000")
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            self.db.execute("PRAGMA busy_timeout = 30000")
        except sqlite3.Error:  # a transaction open (Ctrl-C inside one), a locked file: later
            return False
        return bool(busy == 0)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_version(self) -> None:
        """A read-only store needs the current schema: it cannot migrate an old one."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            raise StoreError(f"{self.path}: not an arena database yet (a tournament creates it)")
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {version}, this arena reads {SCHEMA_VERSION}"
                + (
                    ": run a writing command on it once to migrate it (`arena tournament run` or"
                    f" `arena bot add BOT_DIR --db {self.path}`)"
                    if version < SCHEMA_VERSION
                    else ": a newer arena made it"
                )
            )

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version} is newer than this arena's ({SCHEMA_VERSION})")
        # Migration 4 computes each tournament's board from its stored settings.
        self.db.create_function("board_variant", 3, _migrated_variant, deterministic=True)
        for number in range(version, SCHEMA_VERSION):
            # One transaction per step: a migration is applied whole or not at all.
            self.db.executescript(f"BEGIN; {MIGRATIONS[number]}; PRAGMA user_version = {number + 1}; COMMIT;")

    def transaction(self) -> Any:
        """A write transaction (BEGIN IMMEDIATE ... COMMIT), for the modules that keep
        their own tables in this database (``arena.store.submissions``)."""
        return _Transaction(self.db)

    # --- bots ------------------------------------------------------------------------

    def add_bot(self, folder: str | Path) -> StoredBot:
        """Store an immutable snapshot of a bot folder under its name and version.

        The same code again is a no-op, or repairs the entry when its snapshot is missing
        (or was stored somewhere else by an older arena); other code under a stored name
        and version is refused: a new version is a new entry, so every rating refers to
        exact code.
        """
        bot = load_bot(folder)
        digest = content_hash(bot.path)
        existing = self._bot_row("name = ? AND version = ?", (bot.name, bot.version))
        if existing is not None and existing.hash != digest:
            raise StoreError(
                f"{folder}: {bot.name} {bot.version} is already stored with other code"
                f" (hash {existing.hash[:12]}, this folder {digest[:12]}): raise `version` in bot.toml"
            )
        name = f"{bot.name}-{bot.version}-{digest[:12]}"
        target = self.snapshots / name
        if existing is not None and Path(existing.path) == target and target.is_dir():
            return existing
        if not target.exists():
            self.snapshots.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            remove_tree(partial)
            try:
                copied = copy_folder(bot.path, partial)
                if copied != digest:
                    raise BotError(f"{folder}: the folder changed while it was being stored: add it again")
                seal_read_only(partial)
                partial.rename(target)
            except BaseException:
                remove_tree(partial)
                raise
        bot_id: int | None
        with self.transaction():
            if existing is not None:  # its snapshot was missing: made again, from the same code
                self.db.execute("UPDATE bots SET path = ? WHERE id = ?", (name, existing.id))
                bot_id = existing.id
            else:
                cursor = self.db.execute(
                    "INSERT INTO bots (name, version, hash, path, language, games, added) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        bot.name,
                        bot.version,
                        digest,
                        name,
                        bot.manifest.language,
                        json.dumps(bot.manifest.games),
                        now(),
                    ),
                )
                bot_id = cursor.lastrowid
        stored = self._bot_row("id = ?", (bot_id,))
        assert stored is not None
        return stored

    def get_bot(self, ref: str) -> StoredBot:
        """A stored bot by ``NAME`` (its highest version, by ``version_key``) or ``NAME:VERSION``."""
        name, _, version = ref.partition(":")
        if version:
            found = self._bot_row("name = ? AND version = ?", (name, version))
        else:
            versions = self._bot_rows("name = ? ORDER BY id", (name,))
            found = max(versions, key=lambda b: version_key(b.version), default=None)
        if found is None:
            raise StoreError(f"no bot {ref!r} in {self.path} (`arena bot list` shows them; a folder path adds one)")
        return found

    def resolve_bot(self, ref: str) -> StoredBot:
        """A folder (added on the fly) or a stored ``NAME[:VERSION]``."""
        if Path(ref).is_dir():
            return self.add_bot(ref)
        if "/" in ref or Path(ref).exists():
            raise BotError(f"{ref}: no such bot folder")
        return self.get_bot(ref)

    def list_bots(self) -> list[StoredBot]:
        return self._bot_rows("1 ORDER BY name, id", ())

    def bot_names(self) -> dict[int, str]:
        return {row[0]: f"{row[1]}:{row[2]}" for row in self.db.execute("SELECT id, name, version FROM bots")}

    def _bot_row(self, where: str, args: Sequence[Any]) -> StoredBot | None:
        rows = self._bot_rows(where, args)
        return rows[0] if rows else None

    def _bot_rows(self, where: str, args: Sequence[Any]) -> list[StoredBot]:
        """Rows as ``StoredBot`` with the snapshot's full path: stored relative to
        ``<db>-bots/`` (an older arena's path that migration could not map stays as it was)."""
        query = f"SELECT id, name, version, hash, path, language, games, added FROM bots WHERE {where}"
        return [
            StoredBot(r[0], r[1], r[2], r[3], str(self.snapshots / r[4]), r[5], json.loads(r[6]), r[7])
            for r in self.db.execute(query, args)
        ]

    # --- tournaments -----------------------------------------------------------------

    def create_tournament(
        self,
        name: str,
        game: str,
        variant: str,
        settings: dict[str, Any],
        seed: int,
        config: dict[str, Any],
        secret: str | None = None,
        committed: str | None = None,
    ) -> Tournament:
        """A new tournament, running. Its ``variant`` (and its games') is stored as its board,
        ``board_variant(game, settings)``, whatever variant name is passed: the settings
        decide which leaderboard its games join. ``secret``: what its deals derive from
        (``arena.deals``; None: from ``seed``, known to whoever chose it), ``committed``
        what is published of it (by default its ``commitment``)."""
        exists = StoreError(f"a tournament named {name!r} exists: --resume finishes it, or choose another --name")
        if self.get_tournament(name) is not None:
            raise exists
        if _setting_defaults(game) is not None:
            variant = board_variant(game, settings)
        try:
            with self.transaction():
                self.db.execute(
                    "INSERT INTO tournaments (name, game, variant, settings, seed, config, status, created, secret,"
                    " commitment) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                    (
                        name,
                        game,
                        variant,
                        json.dumps(settings),
                        seed,
                        json.dumps(config),
                        now(),
                        secret,
                        committed if committed is not None or secret is None else commitment(secret),
                    ),
                )
        except sqlite3.IntegrityError:  # another arena created it a moment ago
            raise exists from None
        found = self.get_tournament(name)
        assert found is not None
        return found

    def get_tournament(self, name: str) -> Tournament | None:
        row = self.db.execute(
            f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        return Tournament(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], json.loads(row[6]), *row[7:])

    def reveal_epochs(self, tournament_id: int, epochs: int, key: str) -> None:
        """A ladder's first ``epochs`` epochs have been played: publish the last one's key."""
        with self.transaction():
            self.db.execute(
                "UPDATE tournaments SET revealed_epochs = ?, revealed_key = ? WHERE id = ? AND revealed_epochs < ?",
                (epochs, key, tournament_id, epochs),
            )

    def tournament_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM tournaments ORDER BY id")]

    def set_status(self, tournament_id: int, status: str) -> None:
        """Unless another arena holds the tournament's lease (this one lost it)."""
        finished = now() if status == "finished" else None
        with self.transaction():
            self.db.execute(
                "UPDATE tournaments SET status = ?, finished = ? WHERE id = ?"
                " AND (lease_owner IS NULL OR lease_owner = ?)",
                (status, finished, tournament_id, self.owner),
            )

    def set_paused(self, tournament_id: int, paused: bool) -> None:
        """Pause a ladder, or resume it, from any arena: its run reads the status as it
        goes (no lease needed); resumed, it reads as running, or interrupted when no run
        holds it."""
        with self.transaction():
            if paused:
                self.db.execute("UPDATE tournaments SET status = ? WHERE id = ?", (PAUSED, tournament_id))
            else:
                self.db.execute(
                    "UPDATE tournaments SET status = CASE WHEN lease_owner IS NULL THEN 'interrupted' ELSE 'running' END"
                    " WHERE id = ? AND status = ?",
                    (tournament_id, PAUSED),
                )

    def set_workers(self, tournament_id: int, workers: list[tuple[str, int]]) -> None:
        """The cluster's workers that play the tournament and their thinking slots (none:
        one machine)."""
        listed = [{"name": name, "slots": slots} for name, slots in workers]
        with self.transaction():
            self.db.execute("UPDATE tournaments SET workers = ? WHERE id = ?", (json.dumps(listed), tournament_id))

    def node_activity(self, tournament_id: int, window_s: float = 60.0) -> list[NodeActivity]:
        """Every node that stored a game of the tournament, and every recorded worker that
        has none yet, by name: its slots, its games, and its games per second over the
        last ``window_s`` seconds (by when each game started)."""
        row = self.db.execute("SELECT workers FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
        try:
            listed = json.loads(row[0]) if row is not None else []
        except (TypeError, ValueError):
            listed = []
        slots: dict[str, int] = {}
        for worker in listed if isinstance(listed, list) else []:
            if (
                isinstance(worker, dict)
                and isinstance(worker.get("name"), str)
                and isinstance(worker.get("slots"), int)
            ):
                slots[worker["name"]] = worker["slots"]
        since = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=window_s)).isoformat(timespec="seconds")
        counts = {
            r[0]: (int(r[1]), int(r[2] or 0))
            for r in self.db.execute(
                "SELECT node, count(*), sum(started >= ?) FROM games"
                " WHERE tournament_id = ? AND node != '' GROUP BY node",
                (since, tournament_id),
            )
        }
        shown = {name: counts.get(name, (0, 0)) for name in sorted(set(counts) | set(slots))}
        return [
            NodeActivity(name, slots.get(name), games, recent / window_s) for name, (games, recent) in shown.items()
        ]

    # --- leases: one arena runs a tournament at a time ---------------------------------

    def take_lease(self, tournament_id: int) -> None:
        """Hold the tournament for this process, or refuse with one line naming the arena
        that runs it. A lease is taken over when its holder is dead (a pid gone, or
        another process under that pid, on this host) or silent for ``LEASE_TIMEOUT``."""
        with self.transaction():
            row = self.db.execute(
                "SELECT name, lease_owner, lease_beat FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
            if row is None:
                raise StoreError(f"no tournament {tournament_id} in {self.path}")
            name, owner, beat = row
            if owner is not None and owner != self.owner and _holds(owner, beat):
                host, pid, _ = _owner_parts(owner)
                raise StoreError(
                    f"tournament {name!r} is being run by another arena (pid {pid} on {host}, heard from"
                    f" {max(0.0, time.time() - (beat or 0)):.0f} s ago): one run at a time; let it finish, or"
                    f" stop it and then --resume (a lease silent for {LEASE_TIMEOUT:.0f} s is taken over)"
                )
            self.db.execute(
                "UPDATE tournaments SET lease_owner = ?, lease_beat = ? WHERE id = ?",
                (self.owner, time.time(), tournament_id),
            )
        self._leases.add(tournament_id)

    def release_lease(self, tournament_id: int) -> None:
        """Give the tournament up (quietly, whatever the file's state: a lease left behind
        by this process is taken over once it has ended)."""
        self._leases.discard(tournament_id)
        stop, thread = self._beats.pop(tournament_id, (None, None))
        if stop is not None and thread is not None:
            stop.set()
            thread.join()
        try:
            with self.transaction():
                self.db.execute(
                    "UPDATE tournaments SET lease_owner = NULL, lease_beat = NULL WHERE id = ? AND lease_owner = ?",
                    (tournament_id, self.owner),
                )
        except sqlite3.Error:
            pass

    @contextmanager
    def lease(self, tournament_id: int) -> Iterator[None]:
        """Hold the tournament while the block runs, renewing the lease every
        ``LEASE_BEAT`` seconds from a thread with its own connection."""
        self.take_lease(tournament_id)
        stop = threading.Event()
        thread = threading.Thread(
            target=_beat, args=(self._absolute, tournament_id, self.owner, stop), daemon=True, name="arena-lease"
        )
        self._beats[tournament_id] = (stop, thread)
        thread.start()
        try:
            yield
        finally:
            self.release_lease(tournament_id)

    # --- games -----------------------------------------------------------------------

    def save_game(self, record: FinishedGame) -> int:
        """Commit one finished game, its seats and its replay, all or nothing; refused
        when another arena has taken over the tournament this store held."""
        with self.transaction():
            if record.tournament_id in self._leases:
                row = self.db.execute(
                    "SELECT lease_owner FROM tournaments WHERE id = ?", (record.tournament_id,)
                ).fetchone()
                if row is None or row[0] != self.owner:
                    self._leases.discard(record.tournament_id)
                    raise StoreError(
                        f"{self.path}: another arena has taken over this tournament (this one was silent for"
                        f" {LEASE_TIMEOUT:.0f} s): this run stops; the games it stored are kept"
                    )
            cursor = self.db.execute(
                "INSERT INTO games (tournament_id, match_no, game_no, deal, seed, game, variant, players, rounds,"
                " wall_ms, started, replay, seat_bots, seat_ranks, seat_scores, node)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.tournament_id,
                    record.match_no,
                    record.game_no,
                    record.deal,
                    record.seed,
                    record.game,
                    record.variant,
                    len(record.seats),
                    record.rounds,
                    record.wall_ms,
                    record.started,
                    zlib.compress(record.replay, 6),
                    ",".join(str(seat.bot_id) for seat in record.seats),
                    ",".join(str(seat.rank) for seat in record.seats),
                    ",".join(str(seat.score) for seat in record.seats),
                    record.node,
                ),
            )
            game_id = cursor.lastrowid
            assert game_id is not None
            self.db.executemany(
                "INSERT INTO game_seats (game_id, seat, bot_id, rank, score, status, timeouts, crashes, malformed,"
                " illegal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        game_id,
                        seat,
                        s.bot_id,
                        s.rank,
                        s.score,
                        s.status,
                        *(s.faults.get(k, 0) for k in FAULT_KINDS),
                    )
                    for seat, s in enumerate(record.seats)
                ],
            )
        return game_id

    def done_games(self, tournament_id: int) -> set[tuple[int, int]]:
        query = "SELECT match_no, game_no FROM games WHERE tournament_id = ?"
        return {(m, g) for m, g in self.db.execute(query, (tournament_id,))}

    def seatings(self, tournament_id: int) -> dict[tuple[int, int], tuple[int, list[int]]]:
        """``(match_no, game_no)`` of each stored game of the tournament, to its deal seed
        and the bot id in each seat: what a resume checks its schedule against."""
        query = "SELECT match_no, game_no, seed, seat_bots FROM games WHERE tournament_id = ?"
        return {
            (m, g): (seed, [int(b) for b in bots.split(",") if b])
            for m, g, seed, bots in self.db.execute(query, (tournament_id,))
        }

    def count_games(self, tournament_id: int | None = None) -> int:
        if tournament_id is None:
            return int(self.db.execute("SELECT count(*) FROM games").fetchone()[0])
        return int(
            self.db.execute("SELECT count(*) FROM games WHERE tournament_id = ?", (tournament_id,)).fetchone()[0]
        )

    def replay(self, game_id: int) -> bytes:
        row = self.db.execute("SELECT replay FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id} in {self.path} (`arena games` lists them)")
        if not row[0]:
            raise ReplayPruned(
                f"game {game_id}'s replay was pruned (its ladder keeps only its newest games' replays:"
                " `arena ladder run --keep-replays`); its result and ratings are stored"
            )
        return zlib.decompress(row[0])

    def prune_replays(self, tournament_id: int, keep: int) -> int:
        """Empty the replays of the tournament's games older than its newest ``keep``
        (their results, seats and faults stay, and so every rating); how many went. A
        pruned replay reads as ``ReplayPruned``."""
        with self.transaction():
            newest = self.db.execute(
                "SELECT id FROM games WHERE tournament_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                (tournament_id, max(0, keep)),
            ).fetchone()
            if newest is None:
                return 0
            done = self.db.execute(
                "UPDATE games SET replay = X'' WHERE tournament_id = ? AND id <= ? AND length(replay) > 0",
                (tournament_id, newest[0]),
            )
            return int(done.rowcount)

    def results(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        through_tournament: int | None = None,
        through_game: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """Per game: ``(tournament, match, deal, rounds, bots, ranks, scores)``, the last three
        as comma-separated text seat by seat: what ratings and totals are computed from.
        ``through_tournament``: only games of tournaments with at most this id (a rating
        as it stood after that tournament); ``through_game``: only games with at most this
        id (as it stood then, within a ladder that never ends)."""
        where, args = _scope(game, variant, tournament, through_tournament, through_game)
        return self.db.execute(
            f"""SELECT g.tournament_id, g.match_no, g.deal, g.rounds, g.seat_bots, g.seat_ranks, g.seat_scores
                FROM games g {_join_tournaments(tournament)} WHERE {where}""",
            args,
        ).fetchall()

    def fault_totals(
        self,
        game: str | None,
        variant: str | None,
        tournament: str | None,
        through_tournament: int | None = None,
        through_game: int | None = None,
    ) -> dict[int, tuple[int, ...]]:
        """Per bot with any fault: timeouts, crashes, malformed lines, illegal answers."""
        where, args = _scope(game, variant, tournament, through_tournament, through_game)
        rows = self.db.execute(
            f"""SELECT s.bot_id, sum(s.timeouts), sum(s.crashes), sum(s.malformed), sum(s.illegal)
                FROM game_seats s JOIN games g ON g.id = s.game_id {_join_tournaments(tournament)}
                WHERE s.timeouts + s.crashes + s.malformed + s.illegal > 0 AND {where} GROUP BY s.bot_id""",
            args,
        )
        return {row[0]: tuple(row[1:]) for row in rows}

    def kinds(self, tournament: str | None = None) -> list[tuple[str, str]]:
        """The (game, variant) pairs with stored games: each is rated on its own."""
        where, args = _scope(None, None, tournament)
        query = f"SELECT DISTINCT g.game, g.variant FROM games g {_join_tournaments(tournament)} WHERE {where} ORDER BY 1, 2"
        return [(r[0], r[1]) for r in self.db.execute(query, args)]

    def last_game_id(self, tournament_id: int | None = None) -> int:
        if tournament_id is None:
            return int(self.db.execute("SELECT coalesce(max(id), 0) FROM games").fetchone()[0])
        query = "SELECT coalesce(max(id), 0) FROM games WHERE tournament_id = ?"
        return int(self.db.execute(query, (tournament_id,)).fetchone()[0])

    def newest_in_scope(
        self, game: str | None, variant: str | None, tournament: str | None, through_tournament: int | None = None
    ) -> int:
        """The newest game id of a board's scope (0 for none): a board cached at or after
        it counts every game of its scope."""
        where, args = _scope(game, variant, tournament, through_tournament)
        query = f"SELECT coalesce(max(g.id), 0) FROM games g {_join_tournaments(tournament)} WHERE {where}"
        return int(self.db.execute(query, args).fetchone()[0])

    def cached_board(self, scope: str, last_game: int) -> str | None:
        row = self.db.execute(
            "SELECT board FROM ratings WHERE scope = ? AND last_game = ?", (scope, last_game)
        ).fetchone()
        return None if row is None else str(row[0])

    def cache_board(self, scope: str, last_game: int, board: str) -> None:
        if self.read_only:  # a reader keeps its own cache (the web server does)
            return
        with self.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO ratings (scope, last_game, computed, board) VALUES (?, ?, ?, ?)",
                (scope, last_game, now(), board),
            )

    # --- reading, for the web ---------------------------------------------------------

    def latest_cached_board(self, scope: str) -> tuple[int, str] | None:
        """The newest board cached for ``scope`` whatever game it was computed at, with
        that game's id: worth showing while a fresh one is computed."""
        row = self.db.execute("SELECT last_game, board FROM ratings WHERE scope = ?", (scope,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def list_tournaments(self) -> list[Tournament]:
        rows = self.db.execute(f"SELECT {TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id")
        return [Tournament(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], json.loads(r[6]), *r[7:]) for r in rows]

    def games_per_tournament(self) -> dict[int, int]:
        query = "SELECT tournament_id, count(*) FROM games GROUP BY tournament_id"
        return {row[0]: row[1] for row in self.db.execute(query)}

    def kind_counts(self) -> list[tuple[str, str, int]]:
        """``(game, variant, games stored)`` for every kind with stored games."""
        query = "SELECT game, variant, count(*) FROM games GROUP BY game, variant ORDER BY game, variant"
        return [(r[0], r[1], r[2]) for r in self.db.execute(query)]

    def newest_of_kinds(self, after: int = 0) -> list[tuple[str, str, int, int]]:
        """``(game, variant, newest game id, games)`` per kind, of the games with an id above
        ``after``: all of them (the kind index, once) or only those new since (by id)."""
        if after <= 0:
            query = "SELECT game, variant, max(id), count(*) FROM games GROUP BY game, variant"
        else:  # a range of ids: the table itself, not a scan of the whole kind index
            query = "SELECT game, variant, max(id), count(*) FROM games NOT INDEXED WHERE id > ? GROUP BY game, variant"
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(query, () if after <= 0 else (after,))]

    def bot_game_counts(self) -> dict[int, int]:
        """Games played per bot: its seats (a tournament never seats a bot twice)."""
        query = "SELECT bot_id, count(*) FROM game_seats GROUP BY bot_id"
        return {row[0]: row[1] for row in self.db.execute(query)}

    def game(self, game_id: int) -> StoredGame | None:
        """One stored game with its seats; None when there is no such game."""
        found = self._games("g.id = ?", [game_id], False, 1, 0)
        return found[0] if found else None

    def deal_games(self, game_id: int, limit: int = 64) -> list[StoredGame]:
        """The games of the game's duplicate group (its own included, in the order they
        were stored): the games of its tournament, match and deal. Empty when there is no
        such game."""
        where = """g.id IN (SELECT o.id FROM games o JOIN games d
                       ON o.tournament_id = d.tournament_id AND o.match_no = d.match_no AND o.deal = d.deal
                       WHERE d.id = ?)"""
        return self._games(where, [game_id], False, limit, 0)

    def find_games(
        self,
        tournament_id: int | None = None,
        bot_id: int | None = None,
        limit: int = 50,
        offset: int = 0,
        newest_first: bool = False,
        where: GameFilter | None = None,
    ) -> list[StoredGame]:
        """A page of stored games with their seats, of one tournament and/or one bot, or
        as ``where`` narrows them: what ``arena games`` and the web list."""
        match = _merged(where, tournament_id, bot_id)
        if match.bot_id is not None and match == GameFilter(bot_id=match.bot_id, faulty=match.faulty):
            # A bot's seats in the order they were stored, which is the games' order: the
            # index on bot_id (or on its faulty seats) walks them from either end and
            # stops at the page.
            order = "DESC" if newest_first else "ASC"
            query = f"SELECT game_id FROM game_seats WHERE bot_id = ?{_faulty(match)} ORDER BY rowid {order} LIMIT ? OFFSET ?"
            ids = [row[0] for row in self.db.execute(query, (match.bot_id, limit, offset))]
            if not ids:
                return []
            found = f"g.id IN ({', '.join('?' * len(ids))})"
            return self._games(found, ids, newest_first, limit, 0)
        # `+` keeps SQLite from the (tournament, match, game) index: walking the games by
        # id and keeping the tournament's stops at the page instead of sorting them all.
        clauses, args = self._games_where(match, "+g.tournament_id")
        return self._games(clauses, args, newest_first, limit, offset)

    def count_games_of(
        self, tournament_id: int | None = None, bot_id: int | None = None, where: GameFilter | None = None
    ) -> int:
        match = _merged(where, tournament_id, bot_id)
        if match.bot_id is not None and match == GameFilter(bot_id=match.bot_id, faulty=match.faulty):
            query = f"SELECT count(*) FROM game_seats WHERE bot_id = ?{_faulty(match)}"
            return int(self.db.execute(query, (match.bot_id,)).fetchone()[0])
        clauses, args = self._games_where(match)
        return int(self.db.execute(f"SELECT count(*) FROM games g WHERE {clauses}", args).fetchone()[0])

    @staticmethod
    def _games_where(match: GameFilter, tournament_column: str = "g.tournament_id") -> tuple[str, list[Any]]:
        clauses, args = ["1"], list[Any]()
        if match.tournament_id is not None:
            clauses.append(f"{tournament_column} = ?")
            args.append(match.tournament_id)
        if match.game is not None:
            clauses.append("g.game = ?")
            args.append(match.game)
        if match.variant is not None:
            clauses.append("g.variant = ?")
            args.append(match.variant)
        if match.started_from is not None:
            clauses.append("g.started >= ?")
            args.append(match.started_from)
        if match.started_before is not None:
            clauses.append("g.started < ?")
            args.append(match.started_before)
        if match.bot_id is not None:
            clauses.append(f"g.id IN (SELECT game_id FROM game_seats WHERE bot_id = ?{_faulty(match)})")
            args.append(match.bot_id)
        elif match.faulty:  # the partial index of faulty seats holds them all
            clauses.append(f"g.id IN (SELECT game_id FROM game_seats WHERE {FAULTY_SEAT})")
        if match.opponent_id is not None:
            clauses.append("g.id IN (SELECT game_id FROM game_seats WHERE bot_id = ?)")
            args.append(match.opponent_id)
        return " AND ".join(clauses), args

    def _games(self, where: str, args: list[Any], newest_first: bool, limit: int, offset: int) -> list[StoredGame]:
        order = "DESC" if newest_first else "ASC"
        rows = self.db.execute(
            f"""WITH page AS (
                    SELECT g.id, t.name, g.match_no, g.game_no, g.deal, g.seed, g.game, g.variant, g.rounds,
                           g.wall_ms, g.started, g.node
                    FROM games g JOIN tournaments t ON t.id = g.tournament_id
                    WHERE {where} ORDER BY g.id {order} LIMIT ? OFFSET ?)
                SELECT page.*, s.seat, b.name || ':' || b.version, s.rank, s.score, s.status,
                       s.timeouts, s.crashes, s.malformed, s.illegal
                FROM page JOIN game_seats s ON s.game_id = page.id JOIN bots b ON b.id = s.bot_id
                ORDER BY page.id {order}, s.seat""",
            (*args, limit, offset),
        )
        games: list[StoredGame] = []
        for r in rows:
            if not games or games[-1].id != r[0]:
                games.append(StoredGame(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], [], r[11]))
            faults = {kind: count for kind, count in zip(FAULT_KINDS, r[17:21], strict=True) if count}
            games[-1].seats.append(StoredSeat(r[12], r[13], r[14], r[15], r[16], faults))
        return games

    def bot_tournaments(self, bot_id: int) -> list[tuple[int, str, str]]:
        """``(tournament id, game, variant)`` of every tournament the bot played games in."""
        query = """SELECT DISTINCT g.tournament_id, g.game, g.variant FROM game_seats s JOIN games g ON g.id = s.game_id
                   WHERE s.bot_id = ? ORDER BY 1, 2, 3"""
        return [(r[0], r[1], r[2]) for r in self.db.execute(query, (bot_id,))]

    def bot_games_in(self, bot_id: int, tournament_id: int) -> list[tuple[int, str]]:
        """``(game id, started)`` of the bot's games in one tournament, oldest first: the
        moments of a rating over time within a ladder."""
        query = """SELECT DISTINCT g.id, g.started FROM game_seats s JOIN games g ON g.id = s.game_id
                   WHERE s.bot_id = ? AND g.tournament_id = ? ORDER BY g.id"""
        return [(r[0], r[1]) for r in self.db.execute(query, (bot_id, tournament_id))]

    def opponents(self, bot_id: int) -> list[tuple[str, int, int, int, int]]:
        """Per opponent: ``(name:version, games together, finished ahead, behind, tied)``."""
        query = """SELECT b.name || ':' || b.version, count(DISTINCT s.game_id), sum(s.rank < o.rank),
                          sum(s.rank > o.rank), sum(s.rank = o.rank)
                   FROM game_seats s JOIN game_seats o ON o.game_id = s.game_id AND o.bot_id != s.bot_id
                   JOIN bots b ON b.id = o.bot_id
                   WHERE s.bot_id = ? GROUP BY o.bot_id ORDER BY 2 DESC, 1"""
        return [(r[0], r[1], r[2], r[3], r[4]) for r in self.db.execute(query, (bot_id,))]

    def faulty_seats(self, bot_id: int, limit: int) -> list[tuple[int, int]]:
        """The newest ``(game id, seat)`` where the bot committed faults (their evidence is
        in the replay)."""
        query = """SELECT game_id, seat FROM game_seats
                   WHERE bot_id = ? AND timeouts + crashes + malformed + illegal > 0 ORDER BY game_id DESC LIMIT ?"""
        return [(r[0], r[1]) for r in self.db.execute(query, (bot_id, limit))]

    # --- housekeeping: who runs what, deleting a tournament, removing a bot, growing --

    def lease_holders(self) -> dict[int, str]:
        """The tournaments a live arena is running (its lease is held, see ``take_lease``),
        each with that arena as ``pid P on HOST``. A tournament stored as running but not
        here was stopped without a word (kill -9, a power cut): it is interrupted."""
        query = "SELECT id, lease_owner, lease_beat FROM tournaments WHERE lease_owner IS NOT NULL"
        held = {}
        for tournament_id, owner, beat in self.db.execute(query).fetchall():
            if _holds(owner, beat):
                host, pid, _ = _owner_parts(owner)
                held[tournament_id] = f"pid {pid} on {host}"
        return held

    def check_not_running(self, tournament_id: int, name: str, why: str) -> None:
        """Refuse (``StoreError``, saying ``why``) when another live arena runs the tournament."""
        row = self.db.execute(
            "SELECT lease_owner, lease_beat FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        if row is not None and row[0] is not None and row[0] != self.owner and _holds(row[0], row[1]):
            host, pid, _ = _owner_parts(row[0])
            raise StoreError(
                f"tournament {name!r} is being run by an arena (pid {pid} on {host}): {why}; stop that run"
                f" first (Ctrl-C where it runs, or `kill {pid}` on {host}: it stays resumable)"
            )

    def delete_tournament(self, tournament_id: int) -> int:
        """Delete a tournament with its games and their seats, in one transaction; its bots
        stay. Refused while an arena runs it. Returns how many games were deleted."""
        with self.transaction():
            row = self.db.execute("SELECT name FROM tournaments WHERE id = ?", (tournament_id,)).fetchone()
            if row is None:
                raise StoreError(f"no tournament {tournament_id} in {self.path}")
            self.check_not_running(tournament_id, row[0], "it cannot be deleted while it runs")
            games = self.count_games(tournament_id)
            self.db.execute(
                "DELETE FROM game_seats WHERE game_id IN (SELECT id FROM games WHERE tournament_id = ?)",
                (tournament_id,),
            )
            self.db.execute("DELETE FROM games WHERE tournament_id = ?", (tournament_id,))
            self.db.execute("DELETE FROM tournaments WHERE id = ?", (tournament_id,))
            self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        return games

    def tournament_seat_counts(self, tournament_id: int) -> dict[str, int]:
        """Games each bot (``name:version``) played in the tournament."""
        query = """SELECT b.name || ':' || b.version, count(*) FROM game_seats s JOIN games g ON g.id = s.game_id
                   JOIN bots b ON b.id = s.bot_id WHERE g.tournament_id = ? GROUP BY s.bot_id ORDER BY min(b.id)"""
        return {row[0]: row[1] for row in self.db.execute(query, (tournament_id,))}

    def bot_tournaments_named(self, bot_id: int) -> list[tuple[int, str]]:
        """``(id, name)`` of the tournaments that name the bot (it is scheduled in them)
        or hold its games."""
        bot = self._bot_row("id = ?", (bot_id,))
        query = "SELECT DISTINCT g.tournament_id FROM game_seats s JOIN games g ON g.id = s.game_id WHERE s.bot_id = ?"
        played = {row[0] for row in self.db.execute(query, (bot_id,))}
        rows = self.db.execute("SELECT id, name, config FROM tournaments ORDER BY id").fetchall()
        return [
            (tournament_id, name)
            for tournament_id, name, config in rows
            if tournament_id in played or (bot is not None and bot.ref in (json.loads(config).get("bots") or []))
        ]

    def drop_games(self, tournament_id: int, drop: Callable[[int, int], bool]) -> int:
        """Delete the tournament's games for which ``drop(match_no, deal)`` holds, with
        their seats, in one transaction (a gauntlet's games past its decision); how many."""
        with self.transaction():
            rows = self.db.execute("SELECT id, match_no, deal FROM games WHERE tournament_id = ?", (tournament_id,))
            game_ids = [(game_id,) for game_id, match_no, deal in rows.fetchall() if drop(match_no, deal)]
            self.db.executemany("DELETE FROM game_seats WHERE game_id = ?", game_ids)
            self.db.executemany("DELETE FROM games WHERE id = ?", game_ids)
            if game_ids:
                self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        return len(game_ids)

    def remove_bot(self, bot_id: int, with_games: bool = False) -> int:
        """Delete a stored bot and then its snapshot in ``<db>-bots/``. Refused while games
        reference it, unless ``with_games``: then those games and their seats go too, in
        the same transaction. Refused while an arena runs a tournament that plays it.
        Returns how many games were deleted."""
        with self.transaction():
            bot = self._bot_row("id = ?", (bot_id,))
            if bot is None:
                raise StoreError(f"no bot {bot_id} in {self.path} (`arena bot list` shows them)")
            tournaments = self.bot_tournaments_named(bot_id)
            for tournament_id, name in tournaments:
                self.check_not_running(tournament_id, name, f"it plays {bot.ref}")
            names = [name for _, name in tournaments]
            query = "SELECT DISTINCT game_id FROM game_seats WHERE bot_id = ?"
            game_ids = [row[0] for row in self.db.execute(query, (bot_id,))]
            if game_ids and not with_games:
                raise StoreError(
                    f"{bot.ref} played {len(game_ids)} stored game{'s' * (len(game_ids) != 1)} (tournament"
                    f"{'s' * (len(names) != 1)} {', '.join(names)}): its ratings rest on them; --with-games"
                    " removes those games too"
                )
            self.db.executemany("DELETE FROM game_seats WHERE game_id = ?", [(i,) for i in game_ids])
            self.db.executemany("DELETE FROM games WHERE id = ?", [(i,) for i in game_ids])
            self.db.execute("DELETE FROM bots WHERE id = ?", (bot_id,))
            if game_ids:
                self.db.execute("DELETE FROM ratings")  # cached boards counted those games
        snapshot = Path(bot.path)
        if snapshot.parent == self.snapshots:  # never a folder an older arena left elsewhere
            remove_tree(snapshot)
        return len(game_ids)

    def grow_tournament(self, tournament_id: int, config: dict[str, Any]) -> None:
        """Store a tournament's enlarged config (bots added to its league) and mark it
        running again; only by the arena that holds its lease."""
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE tournaments SET config = ?, status = 'running', finished = NULL"
                " WHERE id = ? AND lease_owner = ?",
                (json.dumps(config), tournament_id, self.owner),
            )
            if cursor.rowcount != 1:
                raise StoreError(f"{self.path}: tournament {tournament_id} is not held by this arena: run it again")


def tidy_wal(path: Path) -> None:
    """Remove the empty ``-wal`` and the ``-shm`` a reader's connection left beside the
    file (a read-only connection makes them but may not remove them): a connection that
    may write is opened and closed, and SQLite removes both when it is the last one
    open. Nothing is done without write access, nor while another connection is open
    (an arena writing): SQLite then leaves them, as it must."""
    absolute = Path(os.path.abspath(path))
    wal = Path(f"{absolute}-wal")
    try:
        if wal.stat().st_size != 0 or not os.access(absolute, os.W_OK) or not os.access(absolute.parent, os.W_OK):
            return
        db = sqlite3.connect(absolute, timeout=0.1, isolation_level=None)
        try:
            db.execute("PRAGMA user_version").fetchone()
        finally:
            db.close()
    except (OSError, sqlite3.Error):
        pass


def _migrated_variant(game: str, variant: str, settings: str) -> str:
    """``board_variant`` of a stored tournament (its variant as it was when its settings
    cannot be read)."""
    try:
        parsed = json.loads(settings)
    except (TypeError, ValueError):
        return variant
    return board_variant(game, parsed) if isinstance(parsed, dict) else variant


def _faults_named(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` with SQLite's own errors (a damaged file, a full disk, no write access)
    turned into a ``StoreError`` naming the file and what to do."""

    @functools.wraps(method)
    def named(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise  # a mistake in our code, not the file's: a traceback is right
        except sqlite3.Error as exc:
            raise self._fault(exc) from None

    return named


# Every method, so that no caller ever sees a raw sqlite3 error; each materialises its
# rows before it returns, so errors met while reading them are caught here too.
for _name, _method in list(vars(Store).items()):
    if callable(_method) and not isinstance(_method, staticmethod) and not _name.startswith("__"):
        if _name not in ("_fault", "_why_not_writable", "_connect_read_only", "lease"):
            setattr(Store, _name, _faults_named(_method))


def _scope(
    game: str | None,
    variant: str | None,
    tournament: str | None,
    through_tournament: int | None = None,
    through_game: int | None = None,
) -> tuple[str, list[Any]]:
    clauses, args = ["1"], list[Any]()
    for column, value in (("g.game", game), ("g.variant", variant), ("t.name", tournament)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    if through_tournament is not None:
        clauses.append("g.tournament_id <= ?")
        args.append(through_tournament)
    if through_game is not None:
        clauses.append("g.id <= ?")
        args.append(through_game)
    return " AND ".join(clauses), args


def _join_tournaments(tournament: str | None) -> str:
    return "" if tournament is None else "JOIN tournaments t ON t.id = g.tournament_id"


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK if anything failed (also on Ctrl-C).
    Inside a transaction already open, it joins it and leaves the ending to its owner."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.owner = False

    def __enter__(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN IMMEDIATE")
            self.owner = True

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.owner and self.db.in_transaction:
            self.db.execute("ROLLBACK" if kind is not None else "COMMIT")
