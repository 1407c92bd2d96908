"""Bots their authors submit: authors and their tokens, who owns each bot name, each
submission on its way through the pipeline, and the browser sessions of signed-in authors.

Kept in the arena's database (migration 8) beside the bots and games. A token and a
session cookie are random (256 bits) and stored only as their SHA-256: whoever reads the
database cannot sign in. A submission holds its folder packed (``bundle.pack``'s tar,
the same bytes for the same content, gzipped; written and read in chunks), so the
pipeline unpacks it with the checks a cluster worker applies to a bundle; a rejected or
retired one's goes after ``KEEP_ARCHIVES_S`` (``sweep``).

A submission's state::

    received -> building -> checking -> active -> retired (a newer version is active)
                        \\-> rejected  \\-> rejected

The web server writes ``received`` (``submit``); ``arena ladder run`` takes it on from
there (``arena.tournaments.pipeline``), one submission of an author at a time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import secrets
import time
from collections.abc import Callable
from typing import IO, Any, Protocol, TypeVar

import msgspec

from arena.bots import NAME_RULE, valid_name
from arena.store import Store, now

RECEIVED, BUILDING, CHECKING, ACTIVE, REJECTED, RETIRED = (
    "received",
    "building",
    "checking",
    "active",
    "rejected",
    "retired",
)
STATES = (RECEIVED, BUILDING, CHECKING, ACTIVE, REJECTED, RETIRED)
WAITING = (RECEIVED, BUILDING, CHECKING)
"""Not yet active nor rejected: what the ladder page lists as waiting."""

TOKEN_PREFIX = "sa_"
PER_HOUR = 10
"""Submissions an author may make in an hour (``arena serve --submissions-per-hour``)."""
SESSION_SECONDS = 7 * 24 * 3600
"""How long a browser stays signed in."""
KEEP_ARCHIVES_S = 24 * 3600
"""How long the archive of a rejected or retired submission is kept (``sweep``)."""
CHUNK = 1 << 20


class _Writable(Protocol):
    def write(self, data: bytes, /) -> int: ...


W = TypeVar("W", bound=_Writable)


class SubmissionError(ValueError):
    """A request refused, with the HTTP status that says why (401, 403, 404, 409, 429)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Author(msgspec.Struct, frozen=True):
    id: int
    name: str
    created: str
    revoked: str | None


class Submission(msgspec.Struct, frozen=True):
    id: int
    author_id: int
    author: str
    name: str
    version: str
    hash: str
    size: int
    """Bytes of the packed folder."""
    state: str
    report: dict[str, Any]
    """The pipeline's findings: ``build``, ``checks`` (each with its evidence), ``error``."""
    bot_id: int | None
    received: str
    updated: str

    @property
    def ref(self) -> str:
        return f"{self.name}:{self.version}"


def new_token() -> str:
    """A fresh secret: 256 random bits, URL-safe, recognisable by its prefix."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


_SUBMISSION = """SELECT s.id, s.author_id, a.name, s.name, s.version, s.hash, s.size, s.state, s.report,
                        s.bot_id, s.received, s.updated
                 FROM submissions s JOIN authors a ON a.id = s.author_id"""


def _submission(row: tuple[Any, ...]) -> Submission:
    sid, author_id, author, name, version, digest, size, state, report, bot_id, received, updated = row
    return Submission(
        sid, author_id, author, name, version, digest, size, state, json.loads(report), bot_id, received, updated
    )


class Submissions:
    """The submission tables of one open store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db

    # --- authors ----------------------------------------------------------------------

    def add_author(self, name: str) -> tuple[Author, str]:
        """A new author and their token (shown once: only its hash is kept)."""
        if not valid_name(name):
            raise SubmissionError(400, f"author name {name!r}: {NAME_RULE}")
        if self._author_row("name = ?", (name,)) is not None:
            raise SubmissionError(409, f"an author named {name!r} exists (arena author list shows them)")
        token = new_token()
        with self.store.transaction():
            self.db.execute(
                "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)", (name, token_hash(token), now())
            )
        author = self._author_row("name = ?", (name,))
        assert author is not None
        return author, token

    def add_authors(self, names: list[str], keep: Callable[[list[tuple[str, str]]], None]) -> list[Author]:
        """Many authors at once (a class), all or none: each name is checked first (valid,
        given once, not an author yet), then they are stored in one transaction, inside
        which ``keep`` receives each ``(name, token)``: if it fails (the tokens' file
        cannot be written), no author is added."""
        seen: set[str] = set()
        for name in names:
            if not valid_name(name):
                raise SubmissionError(400, f"author name {name!r}: {NAME_RULE}")
            if name in seen:
                raise SubmissionError(400, f"author name {name!r} is given twice")
            seen.add(name)
            if self._author_row("name = ?", (name,)) is not None:
                raise SubmissionError(409, f"an author named {name!r} exists (arena author list shows them)")
        pairs = [(name, new_token()) for name in names]
        with self.store.transaction():
            self.db.executemany(
                "INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                [(name, token_hash(token), now()) for name, token in pairs],
            )
            keep(pairs)
        return [self.author(name) for name in names]

    def reissue(self, name: str) -> tuple[Author, str]:
        """A new token for an author (one who lost theirs, or was revoked): the old one
        stops working at once, their browser sessions end, a revoked author may submit
        again; the bot names they own stay theirs."""
        author = self.author(name)
        token = new_token()
        with self.store.transaction():
            self.db.execute(
                "UPDATE authors SET token_hash = ?, revoked = NULL WHERE id = ?", (token_hash(token), author.id)
            )
            self.db.execute("DELETE FROM sessions WHERE author_id = ?", (author.id,))
        return self.author(name), token

    def authors(self) -> list[Author]:
        return self._author_rows("1 ORDER BY name", ())

    def author(self, name: str) -> Author:
        found = self._author_row("name = ?", (name,))
        if found is None:
            raise SubmissionError(404, f"no author {name!r} (arena author list shows them)")
        return found

    def revoke(self, name: str) -> Author:
        """The author's token stops working at once, and their browser sessions end."""
        author = self.author(name)
        with self.store.transaction():
            self.db.execute("UPDATE authors SET revoked = coalesce(revoked, ?) WHERE id = ?", (now(), author.id))
            self.db.execute("DELETE FROM sessions WHERE author_id = ?", (author.id,))
        return self.author(name)

    def author_for(self, token: str) -> Author:
        """The author a token belongs to: 401 for none, a wrong or a revoked one."""
        found = self._author_row("token_hash = ?", (token_hash(token),)) if token else None
        if found is None or found.revoked is not None:
            raise SubmissionError(401, "no valid token: give the token `arena author add` printed")
        return found

    def _author_row(self, where: str, args: tuple[Any, ...]) -> Author | None:
        rows = self._author_rows(where, args)
        return rows[0] if rows else None

    def _author_rows(self, where: str, args: tuple[Any, ...]) -> list[Author]:
        query = f"SELECT id, name, created, revoked FROM authors WHERE {where}"
        return [Author(*row) for row in self.db.execute(query, args)]

    # --- bot names --------------------------------------------------------------------

    def owner(self, name: str) -> int | None:
        """The author who owns a bot name: whoever submitted it first."""
        row = self.db.execute("SELECT author_id FROM bot_owners WHERE name = ?", (name,)).fetchone()
        return None if row is None else int(row[0])

    # --- submissions ------------------------------------------------------------------

    def check_submit(
        self,
        author: Author,
        name: str | None,
        version: str | None,
        digest: str | None,
        per_hour: int = PER_HOUR,
        refused: int = 0,
    ) -> str | None:
        """Whether ``author`` may submit ``name``:``version`` now: 403 for a name another
        author (or the organiser) owns, 409 for a version already taken, 429 past
        ``per_hour`` this hour (the ``refused`` uploads counted too); returns the name.
        With ``name`` None (not yet known: before the body is read) only the rate is
        checked."""
        since = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat(timespec="seconds")
        recent = self.db.execute(
            "SELECT count(*) FROM submissions WHERE author_id = ? AND received > ?", (author.id, since)
        ).fetchone()[0]
        if name is not None:
            owner = self.owner(name)
            if owner is not None and owner != author.id:
                raise SubmissionError(403, f"the bot name {name!r} belongs to another author: choose another name")
            if owner is None and self.db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone():
                raise SubmissionError(403, f"the bot name {name!r} is one of the organiser's bots: choose another name")
        if recent + refused >= per_hour:
            counted = f"{recent} submissions" + (f" and {refused} uploads refused" if refused else "")
            raise SubmissionError(429, f"{counted} in the last hour: at most {per_hour}, try later")
        if name is None or version is None:
            return None
        taken = self.db.execute(
            "SELECT id, hash FROM submissions WHERE name = ? AND version = ? AND state != ?",
            (name, version, REJECTED),
        ).fetchone()
        stored = self.db.execute("SELECT hash FROM bots WHERE name = ? AND version = ?", (name, version)).fetchone()
        if taken is not None or stored is not None:
            same = (taken or stored)[-1] == digest
            raise SubmissionError(
                409,
                f"{name}:{version} is already submitted"
                + (f" (submission {taken[0]})" if taken is not None else "")
                + (
                    ", with this same code: nothing to send again (for new code, raise `version` in bot.toml)"
                    if same
                    else ": raise `version` in bot.toml for new code"
                ),
            )
        return name

    def submit(
        self,
        author: Author,
        name: str,
        version: str,
        digest: str,
        archive: bytes | IO[bytes],
        per_hour: int = PER_HOUR,
        size: int | None = None,
    ) -> Submission:
        """Take a packed bot folder (already checked) as received: 403 for a name another
        author owns, 409 for a version already taken, 429 past ``per_hour`` this hour.
        ``archive`` is its bytes or a file of ``size`` bytes, copied into the database in
        chunks (never held whole)."""
        source: IO[bytes] = io.BytesIO(archive) if isinstance(archive, bytes) else archive
        length = len(archive) if isinstance(archive, bytes) else int(size or 0)
        with self.store.transaction():
            self.check_submit(author, name, version, digest, per_hour)
            if self.owner(name) is None:
                self.db.execute("INSERT INTO bot_owners (name, author_id) VALUES (?, ?)", (name, author.id))
            stamp = now()
            cursor = self.db.execute(
                """INSERT INTO submissions (author_id, name, version, hash, size, archive, state, received, updated)
                   VALUES (?, ?, ?, ?, ?, zeroblob(?), ?, ?, ?)""",
                (author.id, name, version, digest, length, length, RECEIVED, stamp, stamp),
            )
            submission_id = int(cursor.lastrowid or 0)
            with self.db.blobopen("submissions", "archive", submission_id) as blob:
                copied = 0
                while chunk := source.read(min(CHUNK, length - copied)):
                    blob.write(chunk)
                    copied += len(chunk)
            if copied != length:
                raise ValueError(f"the archive of {name}:{version} ended after {copied} of {length} bytes")
        found = self.get(submission_id)
        assert found is not None
        return found

    def get(self, submission_id: int) -> Submission | None:
        row = self.db.execute(f"{_SUBMISSION} WHERE s.id = ?", (submission_id,)).fetchone()
        return None if row is None else _submission(row)

    def archive(self, submission_id: int) -> bytes:
        return self.archive_into(submission_id, io.BytesIO()).getvalue()

    def archive_into(self, submission_id: int, into: W) -> W:
        """Copy a submission's packed folder (a gzipped tar; a plain one if stored by an
        older arena) into ``into`` in chunks; 404 when there is none, or its archive was
        deleted (``sweep``)."""
        row = self.db.execute("SELECT length(archive) FROM submissions WHERE id = ?", (submission_id,)).fetchone()
        if row is None or not row[0]:
            raise SubmissionError(404, f"no archive of submission {submission_id}")
        with self.db.blobopen("submissions", "archive", submission_id, readonly=True) as blob:
            while chunk := blob.read(CHUNK):
                into.write(chunk)
        return into

    def sweep(self, keep_seconds: float = KEEP_ARCHIVES_S, clock: float | None = None) -> int:
        """Delete the archives of submissions rejected or retired over ``keep_seconds``
        ago (their rows, reports, games and ratings stay); returns how many went. An
        active or waiting submission keeps its archive."""
        moment = dt.datetime.fromtimestamp(time.time() if clock is None else clock, dt.UTC)
        before = (moment - dt.timedelta(seconds=keep_seconds)).isoformat(timespec="seconds")
        with self.store.transaction():
            cursor = self.db.execute(
                "UPDATE submissions SET archive = X'' WHERE state IN (?, ?) AND updated <= ? AND length(archive) > 0",
                (REJECTED, RETIRED, before),
            )
        return int(cursor.rowcount)

    def of_author(self, author_id: int) -> list[Submission]:
        """The author's submissions, newest first."""
        rows = self.db.execute(f"{_SUBMISSION} WHERE s.author_id = ? ORDER BY s.id DESC", (author_id,))
        return [_submission(row) for row in rows]

    def in_states(self, *states: str) -> list[Submission]:
        """Submissions in any of ``states``, oldest first."""
        marks = ", ".join("?" * len(states))
        rows = self.db.execute(f"{_SUBMISSION} WHERE s.state IN ({marks}) ORDER BY s.id", states)
        return [_submission(row) for row in rows]

    def next_to_build(self) -> list[Submission]:
        """The next submission of every author with one received and none being built or
        checked, the author waiting longest first: one author's many submissions never
        hold up another's."""
        busy = {s.author_id for s in self.in_states(BUILDING, CHECKING)}
        first: dict[int, Submission] = {}
        for s in self.in_states(RECEIVED):
            if s.author_id not in busy:
                first.setdefault(s.author_id, s)
        return sorted(first.values(), key=lambda s: s.id)

    def set_state(self, submission_id: int, state: str, report: dict[str, Any] | None = None) -> None:
        if state not in STATES:
            raise ValueError(f"no submission state {state!r}")
        with self.store.transaction():
            self.db.execute("UPDATE submissions SET state = ?, updated = ? WHERE id = ?", (state, now(), submission_id))
            if report is not None:
                self.db.execute("UPDATE submissions SET report = ? WHERE id = ?", (json.dumps(report), submission_id))

    def activate(self, submission_id: int, bot_id: int, report: dict[str, Any]) -> None:
        """The submission plays on the ladder from now on; the active version before it of
        the same name is retired (it keeps its games and ratings)."""
        found = self.get(submission_id)
        if found is None:
            raise SubmissionError(404, f"no submission {submission_id}")
        stamp = now()
        with self.store.transaction():
            self.db.execute(
                "UPDATE submissions SET state = ?, updated = ? WHERE name = ? AND state = ? AND id != ?",
                (RETIRED, stamp, found.name, ACTIVE, submission_id),
            )
            self.db.execute(
                "UPDATE submissions SET state = ?, report = ?, bot_id = ?, updated = ? WHERE id = ?",
                (ACTIVE, json.dumps(report), bot_id, stamp, submission_id),
            )

    def active(self) -> list[Submission]:
        """What plays on the ladder: the active version of each submitted bot."""
        return self.in_states(ACTIVE)

    def recover(self) -> list[Submission]:
        """Submissions a killed pipeline left being built or checked, received again (so
        built again from the start); returns them."""
        stuck = self.in_states(BUILDING, CHECKING)
        for s in stuck:
            self.set_state(s.id, RECEIVED)
        return stuck

    # --- browser sessions -------------------------------------------------------------

    def open_session(self, author: Author, seconds: float = SESSION_SECONDS) -> tuple[str, str]:
        """A signed-in browser: its cookie's value and its CSRF token (kept with it)."""
        cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self.store.transaction():
            self.db.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))
            self.db.execute(
                "INSERT INTO sessions (token_hash, author_id, csrf, expires) VALUES (?, ?, ?, ?)",
                (token_hash(cookie), author.id, csrf, time.time() + seconds),
            )
        return cookie, csrf

    def session(self, cookie: str) -> tuple[Author, str] | None:
        """The author signed in with this cookie and the session's CSRF token; None when
        there is no such session, it expired or its author was revoked."""
        if not cookie:
            return None
        row = self.db.execute(
            "SELECT author_id, csrf FROM sessions WHERE token_hash = ? AND expires >= ?",
            (token_hash(cookie), time.time()),
        ).fetchone()
        if row is None:
            return None
        author = self._author_row("id = ?", (row[0],))
        if author is None or author.revoked is not None:
            return None
        return author, str(row[1])

    def close_session(self, cookie: str) -> None:
        with self.store.transaction():
            self.db.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash(cookie),))
