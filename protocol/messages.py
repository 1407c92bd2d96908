"""The messages of the Six Arena bot protocol, one JSON object per line.

Both directions are tagged unions on the field ``type``. What the referee sends is
decoded leniently by bots (new fields may appear, with defaults); what a bot sends is
decoded strictly (``forbid_unknown_fields``), so a typo in a bot is caught at once
instead of being silently ignored.

The game-specific parts (``view``, ``legal``, ``answer``, ``events``) are plain JSON
values here; ``protocol.nimmt`` and friends describe them per game.
"""

from __future__ import annotations

import itertools
import operator
import re
from typing import Any, Generic, TypeVar

import msgspec

V = TypeVar("V")
"""A game's view type (``protocol.nimmt.View``...), or ``Any`` for plain JSON."""
E = TypeVar("E")
"""A game's event union (``protocol.nimmt.Event``...), or ``Any``."""

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 64 * 1024
"""Longest line either side may send, newline excluded. Longer lines are a fault."""
MAX_DEPTH = 32
"""Deepest nesting of arrays and objects (the line's own object counts) in a line from
a bot. Answers of today's games need 2; deeper lines are malformed without being decoded."""


class Limits(msgspec.Struct, frozen=True):
    """Time limits of a session, in milliseconds, and the line length cap in bytes."""

    move_ms: int
    bank_ms: int
    startup_ms: int
    max_line: int = MAX_LINE_BYTES


# --- referee -> bot -------------------------------------------------------------------


class Hello(msgspec.Struct, tag="hello", frozen=True):
    """First line of a session: what is played, by how many, and under which limits."""

    protocol: int
    game: str
    settings: dict[str, Any]
    seat: int
    players: int
    limits: Limits
    games: int = 1
    """How many games this session will hold (each starts with ``new_game``)."""


class NewGame(msgspec.Struct, tag="new_game", frozen=True):
    """A game starts; seats may differ from game to game within one session."""

    game_no: int
    seat: int
    players: int
    settings: dict[str, Any]


class Request(msgspec.Struct, Generic[V], tag="request", frozen=True):
    """A decision to make: answer with ``Answer`` echoing ``id`` before time runs out.

    ``view`` is all this seat may see, so a bot can be stateless; ``legal`` lists every
    acceptable ``answer``. ``move_ms`` is the limit for this move; overrunning it draws
    on the game's time bank, of which ``bank_ms`` remains.
    """

    id: int
    kind: str
    view: V
    legal: list[Any]
    move_ms: int
    bank_ms: int


class Events(msgspec.Struct, Generic[E], tag="events", frozen=True):
    """What became public since the last message: reveals, placements, round ends."""

    events: list[E]


class GameOver(msgspec.Struct, tag="game_over", frozen=True):
    """A game ended. ``ranks`` are 1-based and shared on ties; faulty seats rank last."""

    game_no: int
    scores: list[int]
    ranks: list[int]


class Bye(msgspec.Struct, tag="bye", frozen=True):
    """The session is over; the bot should exit."""


ToBot = Hello | NewGame | Request[Any] | Events[Any] | GameOver | Bye


# --- bot -> referee -------------------------------------------------------------------


class HelloReply(msgspec.Struct, tag="hello", frozen=True, forbid_unknown_fields=True):
    """A bot's answer to ``Hello``: who it is, and whether it accepts the game."""

    name: str
    version: str
    accept: bool = True


class Answer(msgspec.Struct, tag="answer", frozen=True, forbid_unknown_fields=True):
    """A bot's answer to ``Request`` number ``id``."""

    id: int
    answer: Any


FromBot = HelloReply | Answer

# Encoders and decoders are built once: building them is the expensive part.
encoder = msgspec.json.Encoder()
to_bot_decoder = msgspec.json.Decoder(ToBot)
from_bot_decoder = msgspec.json.Decoder(FromBot)

_STRING = re.compile(rb'"(?:[^"\\]++|\\.?)*+"?', re.DOTALL)
"""A JSON string, or what is left of the line after an unterminated one (linear: the
quantifiers never backtrack, and every quote starts a match)."""
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def nesting_depth(line: bytes) -> int:
    """How deep a decoder would nest to read ``line``: the most arrays and objects open
    at once outside strings (exact for JSON; an upper bound up to any syntax error)."""
    brackets = _STRING.sub(b"", line).translate(_BRACKETS, _NOT_BRACKETS)
    # Between two closing brackets only opening ones: the depth before each closing
    # bracket is all opened so far minus all closed so far, counted at C speed.
    opened = itertools.accumulate(map(len, brackets.split(b"]")))
    return max(map(operator.sub, opened, itertools.count()), default=0)


def decode_from_bot(line: bytes) -> HelloReply | Answer:
    """A bot's line decoded, or ``msgspec.DecodeError`` saying why not: never another
    exception, whatever the line (it is written by someone else).

    Nesting deeper than ``MAX_DEPTH`` is refused before decoding (a decoder recurses per
    level); counting brackets first keeps that check to two ``bytes.count`` calls for
    any line that could not be too deep.
    """
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and (depth := nesting_depth(line)) > MAX_DEPTH:
        raise msgspec.DecodeError(f"nested {depth} levels deep, deeper than the {MAX_DEPTH} allowed")
    try:
        return from_bot_decoder.decode(line)
    except msgspec.DecodeError:
        raise
    except Exception as exc:  # RecursionError, MemoryError...: the line's fault all the same
        raise msgspec.DecodeError(f"cannot be decoded ({type(exc).__name__}: {exc})") from None


def encode(message: msgspec.Struct) -> bytes:
    """One protocol line, newline included."""
    return encoder.encode(message) + b"\n"
