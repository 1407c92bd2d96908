"""Every game the arena knows, each one record, found in one registry.

A ``GameRecord`` holds all the arena asks of a game: its rules (checked against
``arena.games.base.Rules`` by the type checker), its wire types, its title, how it
scores, its variants and which settings make a board. The parts that draw it or check
a bot at it are optional and named by import path (``"arena.games.nimmt.render"``), so
that reading the registry imports no terminal, web or sandbox code: a part is imported
when a command asks the record for it, and a game without one still shows and checks
through the generic parts, named the same way. Their shapes are ``arena.games.parts``.

The registry names games the same way (OpenSpiel's ``register_game`` is the model): the
built-in games are ``module:attribute`` of a record (``BUILT_IN``), and games living
outside the arena's source (a test's, an organiser's) are named in the ``ARENA_GAMES``
environment variable, comma-separated. Both are imported on the first question the
registry is asked, so outside games also reach ``arena`` commands run in another process.
"""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import msgspec

from arena.games.base import AnyRules, Rules, SettingsError

if TYPE_CHECKING:
    from arena.games.parts import EnvPart, Scenario, TerminalRenderer, WebFrames

ENV = "ARENA_GAMES"
"""Comma-separated ``module:attribute`` of the out-of-tree games' records."""
BUILT_IN = ("arena.games.nimmt:GAME", "arena.games.sixes:GAME")
"""The arena's own games, named as ``ARENA_GAMES`` names the others."""
GENERIC_RENDERER = "arena.render.generic"
"""The terminal pictures of a game without its own: events as JSON lines."""
GENERIC_FRAMES = "arena.web.frames:GenericFrames"
"""The viewer's frames of a game without its own: a step's answers and events."""
GENERIC_BATTERY = "arena.botcheck.generic:scenarios"
"""``arena bot check``'s battery of a game without its own (called with the record)."""

StateT = TypeVar("StateT")
SettingsT = TypeVar("SettingsT")
ViewT = TypeVar("ViewT")
AnswerT = TypeVar("AnswerT")
EventT = TypeVar("EventT")


class CatalogError(SettingsError):
    """An unknown game, or an ``ARENA_GAMES`` entry that names no record."""


@dataclass(frozen=True)
class Score:
    """How a game scores, for tables, labels and the viewer."""

    unit: str
    """What a score counts, plural (``points``)."""
    lower_is_better: bool
    per_round: str = "Score/round"
    """The heading of the average score per round."""
    per_round_short: str = "Score"
    """The same heading where space is short."""
    per_round_hint: str = "average score per round"
    """What that column means, in a sentence fragment (a tooltip)."""


@dataclass(frozen=True)
class GameRecord(Generic[StateT, SettingsT, ViewT, AnswerT, EventT]):
    """One game: what the arena needs of it, and where its optional parts are."""

    name: str
    """The name in manifests, replays, the store and on the command line."""
    title: str
    """The name people read (``Liar's dice`` for ``liars-dice``)."""
    rules: Rules[StateT, SettingsT, ViewT, AnswerT, EventT]
    view: Any
    """The wire type of a seat's view (a msgspec type: the SDK decodes requests with it)."""
    event: Any
    """The wire type of an event (a tagged union of msgspec Structs: replays decode with it)."""
    score: Score
    variants: tuple[str, ...] = ("standard",)
    """The ``variant`` setting's values, the default first; ``("standard",)`` for a game without."""
    board_settings: tuple[str, ...] | None = None
    """The settings that make a board: games differing in one are rated apart. ``None``: all."""
    overridden_by: Mapping[str, str] = field(default_factory=dict)
    """A setting the game ignores while another is set (``end_score`` while ``rounds``)."""
    setting_words: Mapping[str, Callable[[str], str]] = field(default_factory=dict)
    """How a board's label says a setting not at its default; the rest show as ``name=value``."""
    private: tuple[str, ...] = ()
    """Fields of the state and of events that hold one entry per seat, each private to
    its seat (``hands``): the conformance test checks no other seat ever sees them."""
    renderer: str | None = None
    """The module of the terminal pictures (``live``, ``show_replay``: ``parts.TerminalRenderer``);
    ``None``: events as JSON lines (``GENERIC_RENDERER``)."""
    web: str | None = None
    """``module:attribute`` of what makes the replay viewer's frames: a class or function
    called with no argument for a ``parts.WebFrames``; ``None``: the generic frames."""
    scenarios: str | None = None
    """``module:attribute`` of a function called with no argument for ``arena bot
    check``'s battery (a list of ``parts.Scenario``); ``None``: the generic battery."""
    drawer: str | None = None
    """``package:file`` of the JavaScript that draws the frames in the viewer (it
    registers the drawer its frames name: docs/viewer.md); ``None``: the generic drawer."""
    drawer_css: str | None = None
    """``package:file`` of the drawer's style sheet, sent with its script (``viewer.css``
    beside it); ``None``: the drawer needs none beyond the viewer's."""
    env: str | None = None
    """``module:attribute`` of the PettingZoo environment's part (a ``parts.EnvPart``: its
    array encoding, its standing); ``None``: the game has no environment (``arena.env``)."""
    answer_names: Mapping[str, str] = field(default_factory=dict)
    """Per request kind, what one answer is called (``{"bid": "a bid"}``): ``arena bot
    check`` names it in its fixes; ``"an answer"`` for a kind not named."""

    def default_settings(self) -> dict[str, Any]:
        """Every setting at its default, in the game's order."""
        settings = self.rules.parse_settings({}, self.rules.MIN_PLAYERS)
        built = msgspec.to_builtins(settings)
        return dict(built) if isinstance(built, dict) else {}

    def board_defaults(self) -> dict[str, Any]:
        """The settings that make a board, at their defaults, in the game's order."""
        defaults = self.default_settings()
        if self.board_settings is None:
            return defaults
        return {name: value for name, value in defaults.items() if name in self.board_settings}

    def terminal(self) -> TerminalRenderer:
        """The terminal pictures, or the generic ones."""
        return cast("TerminalRenderer", _part(self.renderer or GENERIC_RENDERER, self.name))

    def frames(self) -> WebFrames:
        """The viewer's frames, or the generic ones."""
        return cast("WebFrames", _part(self.web or GENERIC_FRAMES, self.name)())

    def battery(self) -> list[Scenario]:
        """``arena bot check``'s scenarios, or the generic battery."""
        if self.scenarios is not None:
            return cast("list[Scenario]", _part(self.scenarios, self.name)())
        return cast("list[Scenario]", _part(GENERIC_BATTERY, self.name)(self))

    def env_part(self) -> EnvPart:
        """The environment's part, or ``CatalogError`` saying the game has none."""
        if self.env is None:
            raise CatalogError(f"{self.name} has no environment: its record names no env part (an EnvPart)")
        return cast("EnvPart", _part(self.env, self.name))

    def drawer_script(self) -> str | None:
        """The JavaScript of the viewer's drawer, or ``None`` for the generic drawer."""
        return self._drawer_file("drawer", self.drawer, "viewer.js")

    def drawer_stylesheet(self) -> str | None:
        """The CSS of the drawer's style sheet, or ``None`` for a drawer without one."""
        return self._drawer_file("drawer_css", self.drawer_css, "viewer.css")

    def _drawer_file(self, part: str, spec: str | None, example: str) -> str | None:
        """The text of the package data file ``spec`` names; ``CatalogError`` naming the
        game and the part when it cannot be read."""
        if spec is None:
            return None
        package, colon, name = spec.partition(":")
        if not colon or not package or not name:
            raise CatalogError(f"{self.name}'s {part} {spec!r}: expected PACKAGE:FILE, e.g. mygames.tiles:{example}")
        try:
            return importlib.resources.files(package).joinpath(name).read_text(encoding="utf-8")
        except (ImportError, OSError) as exc:
            raise CatalogError(f"{self.name}'s {part} {spec!r}: {exc}") from None


def _part(path: str, game: str) -> Any:
    """The module ``path`` names, or its attribute after a colon; ``CatalogError`` naming
    the game and the path when there is none."""
    module_name, colon, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CatalogError(f"{game}'s part {path!r}: cannot import {module_name}: {exc}") from None
    if not colon:
        return module
    found = getattr(module, attribute, None)
    if found is None:
        raise CatalogError(f"{game}'s part {path!r}: {module_name} has no {attribute}")
    return found


AnyGame = GameRecord[Any, Any, Any, Any, Any]
"""A record whose types the caller does not know (a registry entry)."""

__all__ = [
    "BUILT_IN",
    "ENV",
    "AnyGame",
    "AnyRules",
    "CatalogError",
    "GameRecord",
    "Score",
    "find_game",
    "games",
    "get_game",
    "register",
    "registered",
]


# --- the registry ----------------------------------------------------------------------------

_REGISTRY: dict[str, AnyGame] = {}
"""The games ``register`` added (one of them may stand in for a built-in game)."""
_from_env: dict[str, dict[str, AnyGame]] = {}
"""The records of an ``ARENA_GAMES`` value, imported once per value."""


def register(record: AnyGame) -> AnyGame:
    """Add a game (replacing one of the same name); returns it, so a module may write
    ``GAME = register(GameRecord(...))``."""
    if not isinstance(record, GameRecord):
        raise CatalogError(f"{record!r} is not a GameRecord")
    _REGISTRY[record.name] = record
    return record


@contextmanager
def registered(record: AnyGame) -> Iterator[AnyGame]:
    """Register ``record`` for the ``with`` block, then restore what its name held before."""
    before = _REGISTRY.get(record.name)
    register(record)
    try:
        yield record
    finally:
        if before is None:
            _REGISTRY.pop(record.name, None)
        else:
            _REGISTRY[record.name] = before


@functools.cache
def _built_in_games() -> dict[str, AnyGame]:
    """The arena's own games, imported on the first question exactly as ``ARENA_GAMES``
    entries are, then kept (whole: a thread asking meanwhile never sees half of them)."""
    return {record.name: record for record in map(_import_record, BUILT_IN)}


def _env_games() -> dict[str, AnyGame]:
    """The records ``ARENA_GAMES`` names now: the variable is read at every question, so
    a game it no longer names is gone; each value is imported once."""
    value = os.environ.get(ENV, "")
    if not value:
        return {}
    if value not in _from_env:
        entries = (part.strip() for part in value.split(","))
        records = [_import_record(entry, f"{ENV} entry") for entry in entries if entry]
        _from_env[value] = {record.name: record for record in records}
    return _from_env[value]


def _import_record(entry: str, source: str = "built-in game") -> AnyGame:
    """The record ``module:attribute`` names; ``CatalogError`` saying what is wrong with it."""
    module_name, colon, attribute = entry.partition(":")
    if not colon or not module_name or not attribute:
        raise CatalogError(f"{source} {entry!r}: expected MODULE:ATTRIBUTE, e.g. mygames.tiles:GAME")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CatalogError(f"{source} {entry!r}: cannot import {module_name}: {exc}") from None
    record = getattr(module, attribute, None)
    if not isinstance(record, GameRecord):
        what = "nothing" if record is None else f"a {type(record).__name__}"
        raise CatalogError(f"{source} {entry!r}: {module_name}.{attribute} is {what}, not a GameRecord")
    return record


def games() -> dict[str, AnyGame]:
    """Every known game by name: the arena's, then those registered, then ``ARENA_GAMES``'."""
    return {**_built_in_games(), **_REGISTRY, **_env_games()}


def get_game(name: str) -> AnyGame:
    """The game called ``name``, or ``CatalogError`` listing the ones there are."""
    known = games()
    try:
        return known[name]
    except KeyError:
        raise CatalogError(f"unknown game {name!r}: choose one of {', '.join(known)}") from None


def find_game(name: str) -> AnyGame | None:
    """The game called ``name``, or ``None`` (a stored game the arena does not know)."""
    return games().get(name)
