"""Text a bot or an upload controls, made safe for a terminal or a log.

A bot's stderr, its faulty lines, its manifest's fields (language, games, commands), a
submission's report, an author's name: any of them may hold bytes a terminal obeys
(``ESC ] 52`` writes the clipboard, ``ESC ] 0`` the window title, ``ESC [ 2J`` clears
the screen, colours fake an arena's own lines) or that reorder what it shows (Unicode
bidirectional overrides). ``shown`` is the one function every such text goes through on
its way to a terminal or a log: it writes each of those characters as its Python escape
(``ESC`` as the four characters ``\\x1b``, U+202E as ``\\u202e``), so the text stays
visible, and nothing in it is obeyed. Everything else, backslashes included, is kept.

Standard library only: the CLI, the renderers, the bot checker and the cluster's nodes
all import it.
"""

from __future__ import annotations

import logging
import re

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Arabic letter mark, LRM and RLM, the embeddings and overrides, the isolates."""
_UNSAFE = f"\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029"
_UNSAFE_IN_LINES = re.compile(f"[{_UNSAFE}]")
"""C0 but tab and newline, DEL, C1, the bidi controls, and the Unicode line and
paragraph separators (some viewers break lines at them)."""
_UNSAFE_IN_ONE_LINE = re.compile(f"[\n\t{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str, lines: bool = False) -> str:
    """``text`` with every character a terminal would obey (C0 and C1 controls, DEL, the
    bidi controls) written as its escape: visible, never interpreted. ``lines``: a
    block of lines, whose newlines and tabs are kept (else they are escaped too, so one
    field is one line)."""
    pattern = _UNSAFE_IN_LINES if lines else _UNSAFE_IN_ONE_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def json_shown(document: str) -> str:
    """A JSON document whose strings hold no character a terminal obeys: those the JSON
    encoder left raw (DEL, C1, the bidi controls) as ``\\u`` escapes, the same data."""
    return _UNSAFE_IN_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", document)


class ShownFormatter(logging.Formatter):
    """Log lines through ``shown``: a logged request path, an exception's message or a
    traceback may quote what a bot or a client sent."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record), lines=True)


def log_safely(*names: str) -> logging.Logger:
    """The loggers ``names`` write to stderr through ``ShownFormatter`` (and not through
    the root's handlers); the first of them, for a server that takes a logger."""
    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.handlers = [handler]
        logger.propagate = False
    return loggers[0]
