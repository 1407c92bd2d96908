"""The Python bot SDK: subclass ``Bot``, implement ``decide``, call ``run``.

    from protocol.bot import Bot, run

    class First(Bot):
        name, version = "first", "1.0"

        def decide(self, kind, view, legal):
            return legal[0]

    run(First())

``run`` speaks the protocol on stdin/stdout: it answers the handshake, decodes each
request into the game's typed view (the ``View`` of the game's wire module in this
package, ``protocol/<game>.py``; another game's after ``register_game``, else plain
dicts), sends back what ``decide`` returns, and passes events on. A bot plays the
games its class lists in ``games``, or, listing none, whichever game it is offered (the
arena offers a bot only the games its bot.toml lists). Log to stderr, never to stdout.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any, BinaryIO

import msgspec

from protocol.messages import (
    PROTOCOL_VERSION,
    Answer,
    Bye,
    Events,
    GameOver,
    Hello,
    HelloReply,
    NewGame,
    Request,
    encode,
)

_TYPES: dict[str, tuple[Any, Any]] = {}


def register_game(name: str, view: Any, event: Any) -> None:
    """Decode game ``name``'s requests into ``view`` and its events into ``event`` (msgspec
    types: a Struct, a tagged union of Structs). A game never registered is decoded
    untyped: views and events arrive as dicts and lists."""
    _TYPES[name] = (view, event)


def game_types(name: str) -> tuple[Any, Any]:
    """The view and event types ``run`` decodes game ``name`` with: those registered, else
    the ``View`` and ``Event`` of ``protocol/<name>.py`` when that module is the game's
    (its ``GAME`` is ``name``), else ``Any``."""
    if name not in _TYPES:
        _TYPES[name] = _wire_types(name)
    return _TYPES[name]


def _wire_types(name: str) -> tuple[Any, Any]:
    """The wire types this package holds for game ``name``, or ``(Any, Any)``."""
    module_name = name.replace("-", "_")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", module_name) or module_name in ("bot", "messages"):
        return Any, Any
    try:
        wire = importlib.import_module(f"protocol.{module_name}")
    except ImportError:
        return Any, Any
    if getattr(wire, "GAME", None) != name:
        return Any, Any
    return getattr(wire, "View", Any), getattr(wire, "Event", Any)


class Bot:
    """Override ``decide``; the other hooks are optional."""

    name = "bot"
    version = "0"
    games: tuple[str, ...] = ()
    """The games this bot plays (``("mygame",)``); empty: any game it is offered."""

    def hello(self, hello: Hello) -> bool:
        """Called once per session; return False to refuse the game."""
        plays = not self.games or hello.game in self.games
        return plays and hello.protocol == PROTOCOL_VERSION

    def new_game(self, message: NewGame) -> None:
        """A game starts (seat and player count are in ``message``)."""

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        """Return one of ``legal``. ``kind`` says what is asked (the game's request kinds:
        docs/protocol.md)."""
        raise NotImplementedError

    def events(self, events: list[Any]) -> None:
        """What became public (the game's events, as this seat may see them)."""

    def game_over(self, message: GameOver) -> None:
        """A game ended."""


def _decoder(game: str | None) -> msgspec.json.Decoder[Any]:
    view, event = game_types(game or "")
    return msgspec.json.Decoder(
        Hello | NewGame | Request[view] | Events[event] | GameOver | Bye  # type: ignore[valid-type]
    )


def run(bot: Bot, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Play sessions on stdin/stdout until ``bye`` or end of input."""
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    decoder = _decoder(None)
    for line in inp:
        try:
            message = decoder.decode(line)
        except msgspec.ValidationError:
            continue  # a message type from a newer referee: not for this SDK

        reply: msgspec.Struct | None = None
        match message:
            case Request(id=request_id, kind=kind, view=view, legal=legal):
                reply = Answer(request_id, bot.decide(kind, view, legal))
            case Events(events=events):
                bot.events(events)
            case NewGame():
                bot.new_game(message)
            case Hello(game=game):
                decoder = _decoder(game)
                reply = HelloReply(bot.name, bot.version, bot.hello(message))
            case GameOver():
                bot.game_over(message)
            case Bye():
                return
        if reply is not None:
            out.write(encode(reply))
            out.flush()
