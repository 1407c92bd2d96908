"""What the site refuses and what it cannot read: each becomes a status and a message
(a page, or ``{"error": ...}`` under /api/), never a traceback."""

from __future__ import annotations


class Unavailable(Exception):
    """The database cannot be read (yet): the pages answer 503 with this message."""


class WebError(Exception):
    """A request the site refuses: an HTTP status and a message naming the input."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
