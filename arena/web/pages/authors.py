"""An author's pages in the browser (``arena serve --submissions``): sign in with the
token, submit a bot folder as a .tar.gz, follow each submission, sign out.

A signed-in browser holds a session cookie (HttpOnly, SameSite=Strict, Secure over
https), never the token: the token is typed into the sign-in form once and goes no
further than ``Submissions.open_session``. Every form carries a CSRF token, the
session's own (the sign-in form, before there is a session, a one-off pair of cookie
and field), and a POST without the right one is 403 before an upload is unpacked or
anything written. Bodies are read up to a cap, within a time, and no further; an upload
is admitted as the API's are (``Writer.admitted``: so many under way an author) and
spooled to disk, never held in memory.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import anyio
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.bots.uploads import UploadError
from arena.store.submissions import SESSION_SECONDS, Author, SubmissionError
from arena.web.database import Database
from arena.web.submit import COOKIE, PRIVATE, Writer, capped_body, detail, linger

SIGNIN_COOKIE = "arena_signin"
"""The sign-in form's own CSRF pair: this cookie and the form's hidden field agree."""
SIGNIN_SECONDS = 3600
FORM_BYTES = 16 * 1024
"""The largest form without a file (sign in, sign out)."""
FIELD_BYTES = 4096
"""The largest field of a form (a token, a CSRF token)."""
FRAMING_BYTES = 64 * 1024
"""What a multipart body may hold besides the upload: boundaries, headers, fields."""

STEPS = ("received", "built", "checked", "active")
"""The steps a submission page shows, in order (a rejection replaces the last)."""
REACHED = {"received": 1, "building": 1, "checking": 2, "active": 4, "retired": 4}
"""Steps done in each state (a rejected submission: those before the failing one)."""

Render = Callable[..., Response]
"""``render(request, template, code, **context)``: a page of the site."""


def same_secret(expected: str, given: object) -> bool:
    """Whether a form's CSRF field is the expected token (compared in constant time)."""
    return bool(expected) and isinstance(given, str) and secrets.compare_digest(expected.encode(), given.encode())


def steps(state: str, report: dict[str, Any]) -> list[dict[str, str]]:
    """The submission's way as a list of steps, each done, current, failed or to come."""
    if state == "rejected":
        failed_at = 2 if report.get("checks") else 1  # checked when the build went through
        done = failed_at
    else:
        failed_at, done = -1, REACHED.get(state, 0)
    shown = []
    for i, label in enumerate(STEPS):
        if i == failed_at:
            shown.append({"label": "rejected", "status": "failed"})
            break
        status = "done" if i < done else "current" if i == done and state in ("building", "checking") else "todo"
        shown.append({"label": label, "status": status})
    return shown


def cookie_header(name: str, value: str, max_age: int, secure: bool) -> str:
    """A Set-Cookie value no script can read and no other site can send."""
    return f"{name}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")


def account(writer: Writer, request: Request) -> dict[str, str] | None:
    """The signed-in author of the request (name and CSRF token), for the site header."""
    found = writer.session(request.cookies.get(COOKIE, ""))
    return None if found is None else {"name": found[0].name, "csrf": found[1]}


async def read_form(request: Request, cap: int, files: int) -> FormData:
    """The request's form, its body capped (413 past ``cap``), ``files`` uploads at most."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body: AsyncGenerator[bytes, None] = capped_body(request, cap)
    try:
        if kind == "multipart/form-data":
            parser = MultiPartParser(request.headers, body, max_files=files, max_fields=4, max_part_size=FIELD_BYTES)
            return await parser.parse()
        if kind == "application/x-www-form-urlencoded" and not files:
            return await FormParser(request.headers, body).parse()
    except MultiPartException as exc:
        raise UploadError(400, f"the form cannot be read: {exc.message}") from None
    raise UploadError(400, f"a form is sent as multipart/form-data, not {kind or 'nothing'}")


def author_routes(
    writer: Writer, reader: Database, render: Render, standing: Callable[[str], Sequence[object]] | None = None
) -> list[Route]:
    """The author's pages; ``standing`` says where a bot stands (``BotPages.standing``)."""

    def signed_in(request: Request) -> tuple[Author, str] | None:
        return writer.session(request.cookies.get(COOKIE, ""))

    def to_signin() -> Response:
        return RedirectResponse("/signin", 303, headers=PRIVATE)

    def forbidden(request: Request, message: str) -> Response:
        return render(request, "error.html", 403, status=403, message=message)

    def signin_form(request: Request, error: str | None = None, code: int = 200) -> Response:
        pair = secrets.token_urlsafe(32)
        page = render(request, "signin.html", code, error=error, signin_csrf=pair)
        page.headers.append("set-cookie", cookie_header(SIGNIN_COOKIE, pair, SIGNIN_SECONDS, secure(request)))
        return page

    def signin_page(request: Request) -> Response:
        if signed_in(request) is not None:
            return RedirectResponse("/submissions", 303, headers=PRIVATE)
        return signin_form(request)

    async def signin(request: Request) -> Response:
        try:
            form = await read_form(request, FORM_BYTES, 0)
        except UploadError as exc:
            return signin_form(request, exc.message, exc.status)
        if not same_secret(request.cookies.get(SIGNIN_COOKIE, ""), form.get("csrf")):
            return forbidden(request, "the sign-in form has expired or came from another site: open it again")
        token = form.get("token")
        try:
            cookie, _ = await run_in_threadpool(writer.sign_in, token.strip() if isinstance(token, str) else "")
        except SubmissionError as exc:
            return signin_form(request, exc.message, exc.status)
        done = RedirectResponse("/submissions", 303, headers=PRIVATE)
        done.headers.append("set-cookie", cookie_header(COOKIE, cookie, SESSION_SECONDS, secure(request)))
        done.headers.append("set-cookie", cookie_header(SIGNIN_COOKIE, "", 0, secure(request)))
        return done

    async def signout(request: Request) -> Response:
        found = await run_in_threadpool(signed_in, request)
        if found is None:
            return forbidden(request, "not signed in")
        try:
            form = await read_form(request, FORM_BYTES, 0)
        except UploadError as exc:
            return render(request, "error.html", exc.status, status=exc.status, message=exc.message)
        if not same_secret(found[1], form.get("csrf")):
            return forbidden(request, "the form has expired or came from another site: reload the page")
        await run_in_threadpool(writer.sign_out, request.cookies.get(COOKIE, ""))
        done = RedirectResponse("/", 303, headers=PRIVATE)
        done.headers.append("set-cookie", cookie_header(COOKIE, "", 0, secure(request)))
        return done

    def listing(request: Request, author: Author, csrf: str, error: str | None = None, code: int = 200) -> Response:
        return render(
            request,
            "submissions.html",
            code,
            data={"author": author.name, "submissions": writer.mine(author)},
            csrf=csrf,
            error=error,
            max_mb=writer.options.limits.packed_bytes / 2**20,
        )

    def submissions_page(request: Request) -> Response:
        found = signed_in(request)
        return to_signin() if found is None else listing(request, *found)

    async def upload(request: Request) -> Response:
        found = await run_in_threadpool(signed_in, request)
        if found is None:
            return forbidden(request, "sign in before submitting a bot")
        author, csrf = found
        options = writer.options
        try:
            with writer.admitted(author):
                await run_in_threadpool(writer.check, author, None)  # the rate, before the body is read
                try:
                    with anyio.fail_after(options.body_seconds):
                        form = await read_form(request, options.limits.packed_bytes + FRAMING_BYTES, 1)
                except TimeoutError:
                    raise UploadError(408, f"the upload did not arrive within {options.body_seconds:g} s") from None
                try:
                    if not same_secret(csrf, form.get("csrf")):
                        return forbidden(request, "the form has expired or came from another site: reload the page")
                    sent = form.get("bot")
                    upload = sent.file if isinstance(sent, UploadFile) else b""
                    async with writer.unpacking(author):
                        made = await run_in_threadpool(writer.submit, author, upload)
                finally:
                    await form.close()
        except (SubmissionError, UploadError) as exc:
            page = await run_in_threadpool(listing, request, author, csrf, exc.message, exc.status)
            page.background = BackgroundTask(linger, request)
            return page
        return RedirectResponse(f"/submissions/{made.id}", 303, headers=PRIVATE)

    def submission_page(request: Request) -> Response:
        found = signed_in(request)
        if found is None:
            return to_signin()
        try:
            submission = writer.own(found[0], request.path_params["submission_id"])
        except SubmissionError as exc:
            return render(request, "error.html", exc.status, status=exc.status, message=exc.message)
        data = detail(submission, reader)
        if standing is not None and submission.state in ("active", "retired"):
            data = {**data, "standing": standing(data["bot"])}
        return render(request, "submission.html", data=data, steps=steps(submission.state, submission.report))

    return [
        Route("/signin", signin_page, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/submissions", submissions_page, methods=["GET"]),
        Route("/submissions", upload, methods=["POST"]),
        Route("/submissions/{submission_id}", submission_page, methods=["GET"]),
    ]


def secure(request: Request) -> bool:
    """Whether the browser reached us over https: then the cookie is sent over https only."""
    return request.url.scheme == "https"
