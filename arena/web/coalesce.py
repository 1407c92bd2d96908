"""Identical requests asked together are answered by one computation, and each kind of
page computes only a few answers at once: one client's burst cannot take every worker
thread, nor make the machine compute the same page fifty times.

A page asked while the same page (path and query) is being computed waits for the next
computation, which starts once the current one ends and answers every request that
arrived meanwhile: an answer always reflects the database as it was after its request
arrived (a game stored before the request is in it), and a burst of any size costs at
most two computations at a time. Only anonymous answers are shared: a request with a
cookie, and an answer that sets one or is private to its reader, are computed alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

AT_ONCE = 2
"""Answers of one kind of page (``kind_of``) computed at once; the others wait their turn
without holding a worker thread."""
ALONE = ("/static/", "/signin", "/signout", "/submissions", "/api/submissions")
"""Paths never shared: files served as they are, and the authors' own pages."""


def kind_of(path: str) -> str:
    """What a path is a page of, for ``AT_ONCE``: ``/api/games/7/frames`` and
    ``/api/games/8/frames`` are one kind, ``/games/7`` another."""
    parts = [p for p in path.split("/") if p]
    api = parts[:1] == ["api"]
    parts = parts[1:] if api else parts
    shape = [parts[0] if parts else ""] + ["*" for _ in parts[1:2]] + parts[2:3]
    return ("api:" if api else "") + "/".join(shape)


def shareable(scope: Scope) -> bool:
    """A GET without a cookie, of a page (not a file, not an author's own)."""
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    path: str = scope["path"]
    if path.startswith(ALONE):
        return False
    return "cookie" not in Headers(scope=scope)


@dataclass
class Flight:
    """One computation of a page, and the answer it gave (its ASGI messages)."""

    done: anyio.Event = field(default_factory=anyio.Event)
    messages: list[Message] = field(default_factory=list)
    shared: bool = False
    """Its answer may be sent to the others: complete, and neither private nor setting a cookie."""


@dataclass
class Asked:
    """A page's computation under way, and the next one, which the requests arriving
    meanwhile wait for."""

    running: Flight | None = None
    waiting: Flight | None = None


class Coalesce:
    """ASGI middleware (module docstring): identical anonymous GETs share a computation,
    and at most ``AT_ONCE`` computations of a kind run at once."""

    def __init__(self, app: ASGIApp, at_once: int = AT_ONCE) -> None:
        self.app = app
        self.at_once = at_once
        self.asked: dict[tuple[str, bytes], Asked] = {}
        self.limits: dict[str, anyio.CapacityLimiter] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not shareable(scope):
            await self.app(scope, receive, send)
            return
        key = (scope["path"], scope.get("query_string", b""))
        asked = self.asked.setdefault(key, Asked())
        if asked.running is None:
            flight = asked.running = Flight()
            await self._compute(key, asked, flight, scope, receive)
        elif asked.waiting is not None:  # the next computation is already promised: wait for it
            flight = asked.waiting
            await flight.done.wait()
        else:  # one is under way, begun before this request arrived: the next one is ours
            flight = asked.waiting = Flight()
            await asked.running.done.wait()
            asked.running, asked.waiting = flight, None
            await self._compute(key, asked, flight, scope, receive)
        if not flight.shared:  # nothing to share (it failed, or it was personal): computed alone
            await self.app(scope, receive, send)
            return
        for message in flight.messages:  # copies: the middlewares outside add their headers to what they send
            await send({**message, "headers": list(message["headers"])} if "headers" in message else dict(message))

    async def _compute(
        self, key: tuple[str, bytes], asked: Asked, flight: Flight, scope: Scope, receive: Receive
    ) -> None:
        async def keep(message: Message) -> None:
            flight.messages.append(message)

        try:
            limit = self.limits.setdefault(kind_of(scope["path"]), anyio.CapacityLimiter(self.at_once))
            async with limit:
                await self.app(scope, receive, keep)
            flight.shared = _complete(flight.messages) and _public(flight.messages[0])
        finally:
            if asked.running is flight:
                asked.running = None
            if asked.running is None and asked.waiting is None:
                self.asked.pop(key, None)
            flight.done.set()


def _complete(messages: list[Message]) -> bool:
    return (
        bool(messages)
        and messages[0]["type"] == "http.response.start"
        and messages[-1]["type"] == "http.response.body"
        and not messages[-1].get("more_body", False)
    )


def _public(start: Message) -> bool:
    headers = Headers(raw=start.get("headers", []))
    return "set-cookie" not in headers and "private" not in headers.get("cache-control", "")
