"""The server's one door for writing: authors submit bots (``arena serve --submissions``).

Everything that comes in is a stranger's, and costs the server only what it bounds.
Before a byte of the body is read: the token (401), the author's uploads under way (at
most ``per_author``, 429) and everyone's (``in_flight``, 503), the hourly rate (429) and,
when the request names its bot (``Arena-Bot: NAME:VERSION``), the name's owner (403) and
the version (409). The body then goes to an unnamed file on disk as it comes, up to the
cap (413) and within ``body_seconds`` (408), never into memory; ``arena.bots.uploads`` checks,
unpacks and packs it again (``unpacking`` at a time, the others waiting with their file)
and only then is anything written, in one transaction (``Submissions.submit``), the
archive copied in chunks. The token is never logged, echoed or put in a URL. Without
``--submissions`` none of these routes exist.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import msgspec
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena.bots import valid_name
from arena.bots.uploads import UploadError, UploadLimits, receive_upload
from arena.store import Store
from arena.store.submissions import Author, Submission, SubmissionError, Submissions
from arena.web.author_evidence import bot_evidence
from arena.web.database import Database

COOKIE = "arena_session"
"""The cookie of a signed-in browser (``Submissions.open_session``)."""
PRIVATE = {"cache-control": "private, no-store", "vary": "Authorization, Cookie"}
"""An author's own answers: kept by no cache, shared or not."""
BOT_HEADER = "arena-bot"
"""``Arena-Bot: NAME:VERSION``: the bot an upload holds, so that a name of another author
(403) or a version taken (409) is refused before the body is read (``arena submit``
sends it); the upload must then hold that bot."""


@dataclasses.dataclass(frozen=True)
class SubmitOptions:
    per_hour: int
    limits: UploadLimits = UploadLimits()
    body_seconds: float = 120.0
    """The longest an upload's body may take to arrive: 408 past it, and its file goes."""
    per_author: int = 2
    """Uploads of one author under way at once (received, checked or stored): 429 past it."""
    in_flight: int = 16
    """Uploads under way at once, of all authors together: 503 past it."""
    unpacking: int = 2
    """Uploads checked and unpacked at once; the others wait, holding only their file."""


class Writer:
    """The one writable connection of a server taking submissions, used under a lock."""

    def __init__(self, db_path: Path, options: SubmitOptions) -> None:
        self.store = Store(db_path)
        self.submissions = Submissions(self.store)
        self.options = options
        self.lock = threading.Lock()
        self.work = db_path.with_name(f"{db_path.stem}-uploads")
        self.work.mkdir(mode=0o700, exist_ok=True)
        self.gate = threading.Lock()
        self.under_way: dict[int, int] = {}
        """Uploads under way, by author id."""
        self._unpacking: anyio.Semaphore | None = None
        self._unpacking_of: dict[int, anyio.Lock] = {}
        self.refused: dict[int, list[float]] = {}
        """When each author's uploads were refused after being unpacked (in memory): they
        count towards the hourly rate, as the work they cost was done."""

    def author(self, request: Request) -> Author:
        """The author whose token the request carries (Authorization: Bearer): 401 otherwise."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self.lock:
            return self.submissions.author_for(token.strip() if scheme.lower() == "bearer" else "")

    @contextmanager
    def admitted(self, author: Author) -> Iterator[None]:
        """One upload of ``author`` under way: 429 past ``per_author`` of theirs, 503 past
        ``in_flight`` of everyone's (counted in memory: nothing read yet)."""
        with self.gate:
            mine, everyone = self.under_way.get(author.id, 0), sum(self.under_way.values())
            if mine >= self.options.per_author:
                raise SubmissionError(
                    429,
                    f"{mine} uploads of yours are under way: at most {self.options.per_author} at once, wait for them",
                )
            if everyone >= self.options.in_flight:
                raise SubmissionError(503, f"the server is taking {everyone} uploads, its most: try again in a minute")
            self.under_way[author.id] = mine + 1
        try:
            yield
        finally:
            with self.gate:
                self.under_way[author.id] -= 1
                if not self.under_way[author.id]:
                    del self.under_way[author.id]

    def check(self, author: Author, declared: tuple[str, str] | None) -> None:
        """What can be refused before the body is read: the rate (429: submissions, and
        uploads refused once unpacked) and, for a declared bot, its name's owner (403) and
        its version (409)."""
        name, version = declared or (None, None)
        with self.lock:
            self.submissions.check_submit(author, name, version, None, self.options.per_hour, self._refused(author))

    def _refused(self, author: Author, now: float | None = None) -> int:
        """The author's uploads refused after unpacking in the last hour."""
        since = (time.monotonic() if now is None else now) - 3600
        with self.gate:
            kept = [t for t in self.refused.get(author.id, []) if t > since]
            self.refused[author.id] = kept
            return len(kept)

    @asynccontextmanager
    async def unpacking(self, author: Author) -> AsyncIterator[None]:
        """A turn to check and unpack an upload: one of each author at a time, so that no
        author holds every turn, ``unpacking`` in all."""
        if self._unpacking is None:
            self._unpacking = anyio.Semaphore(self.options.unpacking)
        mine = self._unpacking_of.setdefault(author.id, anyio.Lock())
        async with mine, self._unpacking:
            yield

    def submit(self, author: Author, upload: bytes | IO[bytes], declared: tuple[str, str] | None = None) -> Submission:
        """Check, unpack and store an upload (in a worker thread: it takes a while)."""
        try:
            received = receive_upload(upload, self.work, self.options.limits)  # outside the lock
        except UploadError:
            with self.gate:
                self.refused.setdefault(author.id, []).append(time.monotonic())
            raise
        with received:
            if declared is not None and (received.name, received.version) != declared:
                raise UploadError(
                    400,
                    f"the upload holds {received.name}:{received.version}, not {':'.join(declared)} as its"
                    " Arena-Bot header says",
                )
            with self.lock:
                return self.submissions.submit(
                    author,
                    received.name,
                    received.version,
                    received.digest,
                    received.archive,
                    self.options.per_hour,
                    received.size,
                )

    def mine(self, author: Author) -> list[dict[str, Any]]:
        with self.lock:
            return [public(s) for s in self.submissions.of_author(author.id)]

    def own(self, author: Author, raw_id: str) -> Submission:
        """The author's submission ``raw_id``: 404 for another author's, as for a missing
        one, so that the ids of others are not confirmed."""
        found = None
        if raw_id.isascii() and raw_id.isdigit() and len(raw_id) <= 18:
            with self.lock:
                found = self.submissions.get(int(raw_id))
        if found is None or found.author_id != author.id:
            raise SubmissionError(404, f"no submission {raw_id[:40]!r} of yours")
        return found

    def session(self, cookie: str) -> tuple[Author, str] | None:
        """The signed-in author of a browser's session cookie and its CSRF token."""
        if not cookie:
            return None
        with self.lock:
            return self.submissions.session(cookie)

    def sign_in(self, token: str) -> tuple[str, str]:
        """A new session for the token's author (401 otherwise): its cookie and CSRF token."""
        with self.lock:
            return self.submissions.open_session(self.submissions.author_for(token))

    def sign_out(self, cookie: str) -> None:
        with self.lock:
            self.submissions.close_session(cookie)

    def close(self) -> None:
        self.store.close()


def public(s: Submission) -> dict[str, Any]:
    """What an author's list shows of a submission (the report is on its own page)."""
    return {
        "id": s.id,
        "name": s.name,
        "version": s.version,
        "bot": s.ref,
        "state": s.state,
        "size": s.size,
        "received": s.received,
        "updated": s.updated,
        "url": f"/submissions/{s.id}",
    }


def detail(submission: Submission, reader: Database) -> dict[str, Any]:
    """A submission as its author sees it: its state, the pipeline's report, and once on
    the ladder its bot's stderr and faults (read on the read-only pool)."""
    with reader.store() as store:
        evidence = bot_evidence(store, submission)
    return {**public(submission), "report": submission.report, **evidence}


async def capped_body(request: Request, cap: int) -> AsyncGenerator[bytes, None]:
    """The request's body as it comes, refused with 413 as soon as it is known to pass
    ``cap`` (by its Content-Length before a byte is read, else as it grows)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise UploadError(413, f"the upload is {int(declared) / 2**20:.1f} MiB: at most {cap / 2**20:.1f} MiB packed")
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > cap:
            raise UploadError(413, f"the upload is more than {cap / 2**20:.1f} MiB: at most that packed")
        yield chunk
    request.state.body_done = True


LINGER_S = 1.0
"""How long the rest of a refused body is read and dropped before the connection closes."""


async def linger(request: Request) -> None:
    """Read what is left of a refused request's body for ``LINGER_S`` at most, dropping
    it as it comes (memory stays flat): a client still sending then reads the refusal,
    where closing on unread data resets the connection and the answer is lost."""
    if getattr(request.state, "body_done", False):
        return
    with anyio.move_on_after(LINGER_S):
        while True:
            message = await request.receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                return


async def body_to_file(request: Request, into: IO[bytes], cap: int, seconds: float) -> None:
    """The request's body written to ``into`` as it comes: 413 past ``cap``, 408 when it
    has not all come within ``seconds`` (a body sent in part and then held back)."""
    try:
        with anyio.fail_after(seconds):
            async for chunk in capped_body(request, cap):
                into.write(chunk)
    except TimeoutError:
        raise UploadError(408, f"the upload did not arrive within {seconds:g} s: send it again") from None


def declared_bot(request: Request) -> tuple[str, str] | None:
    """The bot an upload says it holds (``Arena-Bot: NAME:VERSION``), None without one."""
    raw = request.headers.get(BOT_HEADER)
    if raw is None:
        return None
    name, _, version = raw.strip().partition(":")
    if not valid_name(name) or not version or len(version) > 100 or not version.isprintable():
        raise UploadError(400, f"the Arena-Bot header {raw[:120]!r}: give the bot as NAME:VERSION, as in its bot.toml")
    return name, version


def routes(writer: Writer, reader: Database) -> list[Route]:
    def answer(data: Any, status: int = 200) -> Response:
        return Response(msgspec.json.encode(data), status, media_type="application/json", headers=PRIVATE)

    def refused(request: Request, exc: SubmissionError | UploadError) -> Response:
        response = answer({"error": exc.message}, exc.status)
        if exc.status in (429, 503):
            response.headers["retry-after"] = "60"
        response.background = BackgroundTask(linger, request)
        return response

    async def post(request: Request) -> Response:
        options = writer.options
        try:
            author = await run_in_threadpool(writer.author, request)
            declared = declared_bot(request)
            with writer.admitted(author):
                await run_in_threadpool(writer.check, author, declared)
                with tempfile.TemporaryFile(dir=writer.work) as body:
                    await body_to_file(request, body, options.limits.packed_bytes, options.body_seconds)
                    async with writer.unpacking(author):
                        made = await run_in_threadpool(writer.submit, author, body, declared)
        except (SubmissionError, UploadError) as exc:
            return refused(request, exc)
        return answer(public(made), 202)

    def listed(request: Request) -> Response:
        try:
            return answer({"submissions": writer.mine(writer.author(request))})
        except SubmissionError as exc:
            return refused(request, exc)

    def one(request: Request) -> Response:
        try:
            found = writer.own(writer.author(request), request.path_params["submission_id"])
        except SubmissionError as exc:
            return refused(request, exc)
        return answer(detail(found, reader))

    return [
        Route("/api/submissions", post, methods=["POST"]),
        Route("/api/submissions", listed, methods=["GET"]),
        Route("/api/submissions/{submission_id}", one, methods=["GET"]),
    ]
