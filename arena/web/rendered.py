"""HTML rendered once per content: a page asked again with the same data is not rendered
again.

Rendering is most of what a page costs (the leaderboard's 200 KB of HTML take about 20
ms), while what it shows changes far less often than it is asked for: a board is rated
again every few seconds at most, and fifty visitors ask for it meanwhile. The templates
are pure functions of their context (the time a page depends on is in its model), so a
page's body is kept under a digest of everything it was rendered from.
"""

from __future__ import annotations

import hashlib
from typing import Any

import jinja2
import msgspec

from arena.web.database import Lru

KEPT = 64
"""Bodies kept (the largest pages are a few hundred KB)."""

_encoder = msgspec.msgpack.Encoder()


class Renderer:
    """``env``'s templates, each body kept by template and context (``KEPT``, the most
    recently used)."""

    def __init__(self, env: jinja2.Environment, kept: int = KEPT) -> None:
        self.env = env
        self._bodies: Lru[str] = Lru(kept)

    def render(self, template: str, context: dict[str, Any]) -> str:
        try:  # msgpack writes NaN and None apart (JSON would not): they render apart
            key = (template, hashlib.blake2b(_encoder.encode(context), digest_size=20).digest())
        except TypeError:  # something msgpack cannot write: rendered as it is
            return self.env.get_template(template).render(context)
        body = self._bodies.get(key)
        if body is None:
            body = self.env.get_template(template).render(context)
            self._bodies.put(key, body)
        return body
