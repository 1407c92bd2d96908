"""Rich's console for the ``arena`` command: every piece of text escaped on its way out.

Its own module, imported when a command first prints: rich takes about as long to
import as typer, and ``arena --help`` prints nothing through it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from arena.text import shown


class TerminalConsole(Console):
    """Rich's console, whose every piece of text goes through ``shown`` on its way out:
    a control character or bidi override a bot wrote is printed as its escape, whichever
    command, table or renderer it came through (rich's own styles and cursor moves are
    not text, and pass). Where a text is made, ``shown`` is applied too, so that tables
    are laid out at its escaped width; this is the net under every such place (a
    string is escaped before it is laid out, a rich ``Text`` as it is rendered)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """A string to print (a line, a table's cell, a title) escaped before it is laid
        out, so that it is measured at the width it will have."""
        return super().render_str(shown(text, lines=True), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterator[Segment]:
        for segment in super().render(renderable, options):
            if segment.control is None and segment.text:
                safe = shown(segment.text, lines=True)
                if safe is not segment.text:
                    segment = Segment(safe, segment.style)
            yield segment

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """On a terminal (or with ``COLUMNS`` set), as rich prints. Into a file or a pipe,
        nothing is wrapped or cut: a line stays one line (soft wrap), and a table or a
        rule is laid out at its natural width, however wide, so a grep finds whole rows."""
        if self.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
            super().print(*objects, **kwargs)
            return
        kwargs.setdefault("soft_wrap", True)
        width = max((self._natural_width(o) for o in objects), default=0)
        if width <= self.width:
            super().print(*objects, **kwargs)
            return
        saved = self._width
        self.width = width
        try:
            super().print(*objects, **kwargs)
        finally:
            self._width = saved

    def _natural_width(self, renderable: Any) -> int:
        """The columns ``renderable`` takes when nothing limits it (0: it fits any width,
        as a text that wraps softly does)."""
        from rich.cells import cell_len
        from rich.measure import Measurement
        from rich.rule import Rule

        if isinstance(renderable, str | Text):
            return 0
        if isinstance(renderable, Rule):
            title = renderable.title.plain if isinstance(renderable.title, Text) else str(renderable.title)
            return cell_len(title) + 8 if title else 0
        unbounded = 1_000_000
        measured = Measurement.get(self, self.options.update(width=unbounded), renderable).maximum
        return 0 if measured >= unbounded else measured
