"""What a game's optional parts look like: the shapes a ``GameRecord`` promises.

A record names its parts (terminal pictures, web frames, bot-check battery, the
viewer's drawer) by import path, and the registry imports none of them until a command
asks (``arena.games.registry``). Their shapes live here, under the registry and the
layers that implement them, so that the record can be typed without importing any of
those layers: a replay's lines and steps are ``Any`` here (``arena.play.replay``'s
``Header``, ``Line`` and ``Step`` in practice).

The generic parts, for a game that brings none, count a game's rounds the same way in
the terminal and on the web: from the ``round`` its events name (``named_round``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

# --- the terminal ---------------------------------------------------------------------------


class TerminalRenderer(Protocol):
    """A game's terminal part (``arena.games.nimmt.render`` is one; ``arena.render.generic`` the fallback)."""

    def live(self, events: Sequence[Any], labels: Sequence[str]) -> list[Any]:
        """What ``arena play`` prints of events as they happen (rich renderables)."""
        ...

    def show_replay(
        self,
        console: Console,
        lines: Sequence[Any],
        steps: Sequence[Any],
        round_no: int | None = None,
        turn: int | None = None,
        step: bool = False,
    ) -> None:
        """Show a verified replay from ``round_no``/``turn`` on; ``step`` waits for Enter after each turn."""
        ...


# --- the web viewer ---------------------------------------------------------------------------

Frame = dict[str, Any]
"""One moment of a game as JSON-able builtins (docs/viewer.md, "Every frame")."""


@dataclass(frozen=True)
class Heading:
    """What the viewer says of one game's settings before any frame."""

    variant: str
    """The settings in words, for the title line."""
    unit: str | None = None
    """What the scores count under these settings; ``None``: the record's score unit."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Top-level fields the drawer needs (the faces of the game's pieces, say)."""


class WebFrames(Protocol):
    """A game's web part: its replay steps as the viewer's frames."""

    @property
    def drawer(self) -> str:
        """The name of the drawer that draws these frames (``generic``, or the one the
        game's drawer script registers: docs/viewer.md)."""
        ...

    def heading(self, header: Any) -> Heading:
        """The variant in words, the score unit and the drawer's fields for this game."""
        ...

    def frames(self, header: Any, steps: Iterable[Any]) -> Iterator[list[Frame]]:
        """Per verified step, the frames it shows, each holding the whole table."""
        ...


# --- arena bot check ----------------------------------------------------------------------------

Opening = Callable[[Any, int], tuple[Any, list[Any]]]
"""``(settings, players) -> (state, events)``: where a game starts."""


@dataclass(frozen=True)
class Scenario:
    """One session of ``arena bot check``: a name, the game's settings, and the games it holds."""

    name: str
    settings: dict[str, Any]
    players: int
    games: tuple[tuple[int, Opening | int], ...]
    """Per game, the bot's seat and its opening (an ``Opening`` or a seed to deal)."""
    ids: Callable[[], Iterator[int]] | None = None
    """Request ids to use (default 1, 2, 3...): a scenario may scramble them."""


# --- the learning environment (arena.env) -------------------------------------------------------


@dataclass(frozen=True)
class EnvPart:
    """What the PettingZoo environment (``arena.env``) needs of a game beyond its rules."""

    arrays: str
    """The module of its array encoding (a ``protocol.arrays.Encoding``: its observation,
    its fixed action space): in the ``protocol`` package, so that a bot exported from a
    policy encodes its views in its sandbox with the same code."""
    standing: Callable[[Any], list[int]]
    """Each seat's score so far in the game's own unit, from a state: a seat's reward
    is what a step changed it by (negated when lower is better). At the game's end it is
    the outcome's scores (``arena game check`` checks it), so rewards add up to them."""


# --- rounds, as the generic parts count them ----------------------------------------------------


def named_round(events: Iterable[Any]) -> int | None:
    """The round the last of ``events`` that names one names (an integer ``round``
    field, of a Struct or of a decoded dict), or ``None``: a step naming a round other
    than the current one starts it, and a game whose events name none is one round."""
    named = None
    for event in events:
        value = event.get("round") if isinstance(event, dict) else getattr(event, "round", None)
        if type(value) is int:
            named = value
    return named
