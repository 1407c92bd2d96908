"""How a game shows in the replay viewer: the part of a game's record that cuts its
verified steps into frames, and names the drawer of ``viewer.js`` that draws them.

A game with a web part of its own (``nimmt_frames``, ``sixes_frames``: the catalog
calls these factories lazily) draws a card table; a game without one still shows,
through ``GenericFrames``: one frame per step with its events as JSON and the answers
that caused them. ``arena.web.viewer`` adds what every game shares (the decision's
times and faults, the result, the seats), so a part only follows its own table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from arena.play.replay import Header, Step

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
    """Top-level fields the drawer needs (card faces, suits)."""


class WebFrames(Protocol):
    """A game's web part: its replay steps as the viewer's frames."""

    @property
    def drawer(self) -> str:
        """The name of the drawer in viewer.js that draws these frames."""
        ...

    def heading(self, header: Header) -> Heading:
        """The variant in words, the score unit and the drawer's fields for this game."""
        ...

    def frames(self, header: Header, steps: Iterable[Step]) -> Iterator[list[Frame]]:
        """Per verified step, the frames it shows, each holding the whole table."""
        ...


def nimmt_frames() -> WebFrames:
    """6 nimmt!'s web part: rows, hands, piles, a frame per card placed."""
    from arena.games.nimmt.frames import NimmtFrames

    return NimmtFrames()


def sixes_frames() -> WebFrames:
    """Sixes' web part: suit runs, hands, chips and the pot."""
    from arena.games.sixes.frames import SixesFrames

    return SixesFrames()


def generic_frames() -> WebFrames:
    """The web part of a game that has none of its own."""
    return GenericFrames()


def letters(players: int) -> list[str]:
    """``A``, ``B``, ...: the seat letters of captions, as the terminal shows them."""
    return [chr(65 + seat) for seat in range(players)]


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def settings_words(settings: Mapping[str, Any]) -> str:
    """``tactical · turns=5``: the variant if the game has one, then every other setting
    as recorded; ``standard`` for a game without settings."""
    words = [str(settings["variant"])] if "variant" in settings else []
    words += [f"{key}={_text(value)}" for key, value in settings.items() if key != "variant"]
    return " · ".join(words) or "standard"


class GenericFrames:
    """One frame per step: its events as JSON, the answers that caused them, and the
    round when the events name one. The scores are known when the game ends."""

    drawer = "generic"

    def heading(self, header: Header) -> Heading:
        return Heading(settings_words(header.settings))

    def frames(self, header: Header, steps: Iterable[Step]) -> Iterator[list[Frame]]:
        seats = letters(header.players)
        round_no, turn = 1, 0
        for step in steps:
            events = [_plain(event) for event in step.events]
            decision = step.decision
            asked = [] if decision is None else zip(decision.seats, decision.answers, strict=True)
            answers = [{"seat": seat, "answer": answer} for seat, answer in asked]
            kinds = ", ".join(str(e.get("type", "event")) if isinstance(e, dict) else "event" for e in events)
            if decision is None:
                caption = f"The game starts · {kinds or 'no events'}"
            else:
                turn += 1
                said = " · ".join(f"{seats[a['seat']]} {_text(a['answer'])}" for a in answers)
                caption = f"{decision.kind} · {said} → {kinds or 'no events'}"
            named = [e["round"] for e in events if isinstance(e, dict) and type(e.get("round")) is int]
            if named and named[-1] != round_no:  # the step starts a round: shown as its first frame
                round_no, turn = named[-1], 0
            frame: Frame = {
                "kind": "start" if decision is None else "step",
                "round": round_no,
                "turn": turn,
                "caption": caption,
                "asked": None if decision is None else decision.kind,
                "answers": answers,
                "events": events,
                "scores": None,
                "ranks": None,
                "move": None,
            }
            yield [frame]


def _text(value: Any) -> str:
    """A setting or an answer as compact JSON (``5``, ``"left"``, ``[3, 17]``)."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _plain(value: Any) -> Any:
    """``value`` as JSON would bring it back (tuples become lists): frames compare equal
    to what the browser is served."""
    return msgspec.json.decode(msgspec.json.encode(value))
