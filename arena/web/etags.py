"""Conditional requests: an ETag on every answer, 304 when the client already has it.

The tag is the hash of the uncompressed body, weak (``W/"..."``) because gzip (outside
this middleware) changes the bytes but not the meaning; computing it costs a hash of a
body that is made anyway, and it is exact, whatever changed in the database. Dynamic
answers are ``no-cache`` (kept, but revalidated every time); a game's frames and replay
never change once stored, so they are cached for a year."""

from __future__ import annotations

import hashlib
import re

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

IMMUTABLE = re.compile(r"/api/games/\d+/(frames|replay)")
"""Paths whose answer never changes (a stored game is never rewritten)."""
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def etag_of(body: bytes) -> str:
    """A weak entity tag of ``body``: its BLAKE2b hash, 16 bytes in hex."""
    return f'W/"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (or is ``*``): the weak
    comparison RFC 9110 asks for, so ``W/`` on either side is ignored."""
    opaque = etag.removeprefix("W/")
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == opaque:
            return True
    return False


def cache_control(path: str) -> str:
    """How long a client may keep the answer at ``path`` without asking again."""
    return FOREVER if IMMUTABLE.fullmatch(path) else REVALIDATE


class Conditional:
    """ASGI middleware: ``ETag`` and ``Cache-Control`` on answers to GET and HEAD, and
    ``304 Not Modified`` (no body) when ``If-None-Match`` names the tag. An answer that
    has a tag already (a static file) or is not a 200 passes through, given only its
    ``Cache-Control``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        asked = Headers(scope=scope).get("if-none-match")
        control = cache_control(scope["path"])
        held: Message | None = None
        chunks: list[bytes] = []

        async def conditional_send(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                headers.setdefault("cache-control", control if message["status"] == 200 else REVALIDATE)
                if message["status"] == 200 and "etag" not in headers:
                    held = message  # sent once the whole body is known
                    return
                if headers.get("etag", "W/").startswith('"'):  # a static file's: weak once gzip may change it
                    headers["etag"] = "W/" + headers["etag"]
            elif held is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body = b"".join(chunks)
                tag = etag_of(body)
                headers = MutableHeaders(scope=held)
                headers["etag"] = tag
                if asked is not None and etag_matches(asked, tag):
                    kept = [(k, v) for k, v in headers.raw if k not in (b"content-length", b"content-type")]
                    await send({"type": "http.response.start", "status": 304, "headers": kept})
                    await send({"type": "http.response.body", "body": b""})
                    return
                await send(held)
                message = {"type": "http.response.body", "body": body}
            await send(message)

        await self.app(scope, receive, conditional_send)
