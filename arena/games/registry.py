"""Every game the arena knows, each one record, found in one registry.

A ``GameRecord`` holds all the arena asks of a game: its rules (checked against
``arena.games.base.Rules`` by the type checker), its wire types, its title, how it
scores, its variants and which settings make a board. The parts that draw it or check
a bot at it are optional zero-argument factories, called only when a command needs
them, so that reading the catalog imports no terminal, web or sandbox code; a game
without them still shows and checks through the generic fallbacks.

Games living outside the arena's source (a test's, an organiser's) are named in the
``ARENA_GAMES`` environment variable, ``module:attribute`` of a ``GameRecord``,
comma-separated, and registered on the first question the registry is asked: so they
also reach ``arena`` commands run in another process.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from arena.games.base import AnyRules, Rules, SettingsError
from arena.games.nimmt import rules as nimmt
from arena.games.sixes import rules as sixes
from protocol import nimmt as nimmt_wire
from protocol import sixes as sixes_wire

if TYPE_CHECKING:
    from arena.botcheck import Scenario
    from arena.render.common import TerminalRenderer
    from arena.web.frames import WebFrames

ENV = "ARENA_GAMES"
"""Comma-separated ``module:attribute`` of the out-of-tree games' records."""

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
    """What a score counts, plural (``heads``, ``chips``)."""
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
    """The name people read (``6 nimmt!``)."""
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
    renderer: Callable[[], TerminalRenderer] | None = None
    """The terminal pictures; ``None``: events as JSON lines (``arena.render.generic``)."""
    web: Callable[[], WebFrames] | None = None
    """The replay viewer's frames; ``None``: the generic frames."""
    scenarios: Callable[[], list[Scenario]] | None = None
    """``arena bot check``'s battery; ``None``: the generic one (``arena.botcheck.generic``)."""

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
        if self.renderer is not None:
            return self.renderer()
        from arena.render import generic as pictures

        return pictures

    def frames(self) -> WebFrames:
        """The viewer's frames, or the generic ones."""
        if self.web is not None:
            return self.web()
        from arena.web.frames import generic_frames

        return generic_frames()

    def battery(self) -> list[Scenario]:
        """``arena bot check``'s scenarios, or the generic battery."""
        if self.scenarios is not None:
            return self.scenarios()
        from arena.botcheck.generic import scenarios

        return scenarios(self)


AnyGame = GameRecord[Any, Any, Any, Any, Any]
"""A record whose types the caller does not know (a registry entry)."""

__all__ = [
    "ENV",
    "AnyGame",
    "AnyRules",
    "CatalogError",
    "GameRecord",
    "Score",
    "games",
    "get_game",
    "register",
    "registered",
]


# --- the games of the arena ----------------------------------------------------------------


def _nimmt_renderer() -> TerminalRenderer:
    from arena.games.nimmt import render as pictures

    return pictures


def _sixes_renderer() -> TerminalRenderer:
    from arena.games.sixes import render as pictures

    return pictures


def _nimmt_web() -> WebFrames:
    from arena.web.frames import nimmt_frames

    return nimmt_frames()


def _sixes_web() -> WebFrames:
    from arena.web.frames import sixes_frames

    return sixes_frames()


def _nimmt_scenarios() -> list[Scenario]:
    from arena.games.nimmt.battery import scenarios

    return scenarios()


def _sixes_scenarios() -> list[Scenario]:
    from arena.games.sixes.battery import scenarios

    return scenarios()


NIMMT: GameRecord[nimmt.State, nimmt.Settings, nimmt_wire.View, Any, nimmt_wire.Event] = GameRecord(
    name=nimmt_wire.GAME,
    title="6 nimmt!",
    rules=nimmt,
    view=nimmt_wire.View,
    event=nimmt_wire.Event,
    score=Score(
        "heads",
        lower_is_better=True,
        per_round="Penalty/round",
        per_round_short="Pen.",
        per_round_hint="average penalty points (cattle heads) per round",
    ),
    variants=nimmt.VARIANTS,
    overridden_by={"end_score": "rounds"},
    setting_words={
        "end_score": lambda v: f"end at {v} heads",
        "rounds": lambda v: f"{v} round" + ("" if v == "1" else "s"),
        "keep_rows": lambda v: "rows kept" if v == "true" else "rows not kept",
        "cards_per_turn": lambda v: f"{v} cards a turn" if v != "1" else "1 card a turn",
        "shedding": lambda v: "shedding" if v == "true" else "no shedding",
    },
    private=("hands",),
    renderer=_nimmt_renderer,
    web=_nimmt_web,
    scenarios=_nimmt_scenarios,
)

SIXES: GameRecord[sixes.State, sixes.Settings, sixes_wire.View, Any, sixes_wire.Event] = GameRecord(
    name=sixes_wire.GAME,
    title="Sixes",
    rules=sixes,
    view=sixes_wire.View,
    event=sixes_wire.Event,
    score=Score("chips", lower_is_better=False),
    setting_words={
        "chips": lambda v: f"{v} chips",
        "max_rounds": lambda v: f"at most {v} rounds",
    },
    private=("hands",),
    renderer=_sixes_renderer,
    web=_sixes_web,
    scenarios=_sixes_scenarios,
)


# --- the registry ----------------------------------------------------------------------------

_REGISTRY: dict[str, AnyGame] = {NIMMT.name: NIMMT, SIXES.name: SIXES}
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


def _env_games() -> dict[str, AnyGame]:
    """The records ``ARENA_GAMES`` names now: the variable is read at every question, so
    a game it no longer names is gone; each value is imported once."""
    value = os.environ.get(ENV, "")
    if not value:
        return {}
    if value not in _from_env:
        records = [_import_record(entry) for entry in (part.strip() for part in value.split(",")) if entry]
        _from_env[value] = {record.name: record for record in records}
    return _from_env[value]


def _import_record(entry: str) -> AnyGame:
    module_name, colon, attribute = entry.partition(":")
    if not colon or not module_name or not attribute:
        raise CatalogError(f"{ENV} entry {entry!r}: expected MODULE:ATTRIBUTE, e.g. mygames.dice:GAME")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CatalogError(f"{ENV} entry {entry!r}: cannot import {module_name}: {exc}") from None
    record = getattr(module, attribute, None)
    if not isinstance(record, GameRecord):
        what = "nothing" if record is None else f"a {type(record).__name__}"
        raise CatalogError(f"{ENV} entry {entry!r}: {module_name}.{attribute} is {what}, not a GameRecord")
    return record


def games() -> dict[str, AnyGame]:
    """Every known game by name: the arena's, then those registered, then ``ARENA_GAMES``'."""
    return {**_REGISTRY, **_env_games()}


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
