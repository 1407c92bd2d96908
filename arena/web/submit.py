"""The server's one door for writing: authors submit bots (``arena serve --submissions``).

Everything that comes in is a stranger's: the token is checked before the body is read,
the body is read up to the cap and no further, the archive goes through
``arena.uploads`` (checked, unpacked, packed again) and only then is anything written,
in one transaction (``Submissions.submit``). The token is never logged, echoed or put
in a URL. Without ``--submissions`` none of these routes exist.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..store import Store
from ..store.submissions import Author, Submission, SubmissionError, Submissions
from ..uploads import UploadError, UploadLimits, receive_upload
from .data import Database
from .evidence import bot_evidence

COOKIE = "arena_session"
"""The cookie of a signed-in browser (``Submissions.open_session``)."""
PRIVATE = {"cache-control": "private, no-store", "vary": "Authorization, Cookie"}
"""An author's own answers: kept by no cache, shared or not."""


@dataclasses.dataclass(frozen=True)
class SubmitOptions:
    per_hour: int
    limits: UploadLimits = UploadLimits()


class Writer:
    """The one writable connection of a server taking submissions, used under a lock."""

    def __init__(self, db_path: Path, options: SubmitOptions) -> None:
        self.store = Store(db_path)
        self.submissions = Submissions(self.store)
        self.options = options
        self.lock = threading.Lock()
        self.work = db_path.with_name(f"{db_path.stem}-uploads")
        self.work.mkdir(mode=0o700, exist_ok=True)

    def author(self, request: Request) -> Author:
        """The author whose token the request carries (Authorization: Bearer): 401 otherwise."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        with self.lock:
            return self.submissions.author_for(token.strip() if scheme.lower() == "bearer" else "")

    def submit(self, author: Author, data: bytes) -> Submission:
        received = receive_upload(data, self.work, self.options.limits)  # outside the lock: it takes a while
        with self.lock:
            return self.submissions.submit(
                author, received.name, received.version, received.digest, received.archive, self.options.per_hour
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


async def read_capped(request: Request, cap: int) -> bytes:
    """The request's body, refused with 413 as soon as it is known to pass ``cap``."""
    return b"".join([chunk async for chunk in capped_body(request, cap)])


def routes(writer: Writer, reader: Database) -> list[Route]:
    def answer(data: Any, status: int = 200) -> Response:
        return Response(msgspec.json.encode(data), status, media_type="application/json", headers=PRIVATE)

    def refused(exc: SubmissionError | UploadError) -> Response:
        return answer({"error": exc.message}, exc.status)

    async def post(request: Request) -> Response:
        try:
            author = await run_in_threadpool(writer.author, request)
            data = await read_capped(request, writer.options.limits.packed_bytes)
            made = await run_in_threadpool(writer.submit, author, data)
        except (SubmissionError, UploadError) as exc:
            return refused(exc)
        return answer(public(made), 202)

    def listed(request: Request) -> Response:
        try:
            return answer({"submissions": writer.mine(writer.author(request))})
        except SubmissionError as exc:
            return refused(exc)

    def one(request: Request) -> Response:
        try:
            found = writer.own(writer.author(request), request.path_params["submission_id"])
        except SubmissionError as exc:
            return refused(exc)
        return answer(detail(found, reader))

    return [
        Route("/api/submissions", post, methods=["POST"]),
        Route("/api/submissions", listed, methods=["GET"]),
        Route("/api/submissions/{submission_id}", one, methods=["GET"]),
    ]
