"""How a game shows in the replay viewer: what the web parts of every game share, and
the generic frames of a game that has none of its own.

A game's web part (``parts.WebFrames``, named by its record's ``web``) cuts its
verified steps into frames and names the drawer that draws them; a game without one
still shows, through ``GenericFrames``: one frame per step with its events as JSON and
the answers that caused them. ``arena.web.viewer`` adds what every game shares (the
decision's times and faults, the result, the seats), so a part only follows its own
table; ``TableFrames`` is the loop every table-following part runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from arena.games.parts import Frame, Heading, named_round
from arena.play.replay import Header, Step

__all__ = ["Frame", "GenericFrames", "Heading", "TableFrames", "count", "letters", "settings_words"]


class TableFrames:
    """What a game's frames share: a table followed event by event, a frame added for
    each moment worth seeing, and the table checked against the rules' state after each
    step. A game's part subclasses it with its table's fields (``snapshot``), its
    events (``event``) and its check (``check``)."""

    def __init__(self, header: Header) -> None:
        self.players = header.players
        self.letters = letters(header.players)
        self.added: list[Frame] = []
        self.round = 0
        self.turn = 0
        self.ranks: list[int] | None = None

    def snapshot(self) -> Frame:
        """The game's own fields of a frame: its whole table now."""
        raise NotImplementedError

    def event(self, event: Any, step: Step, last: bool) -> None:
        """Follow one event (``last``: the step's last), adding frames with ``add``."""
        raise NotImplementedError

    def check(self, state: Any) -> None:
        """Raise ``AssertionError`` when the table followed parted from the rules' ``state``."""
        raise NotImplementedError

    def add(self, kind: str, caption: str, move: Mapping[str, Any] | None = None) -> None:
        """A frame of the table as it stands: its kind, round, turn, caption and move."""
        frame: Frame = {"kind": kind, "round": self.round, "turn": self.turn, "caption": caption}
        frame.update(self.snapshot())
        frame["ranks"] = self.ranks
        frame["move"] = None if move is None else dict(move)
        self.added.append(frame)

    def step(self, step: Step) -> list[Frame]:
        """The frames of one step's events, the table then checked against the rules."""
        self.added = []
        events = step.events
        for index, event in enumerate(events):
            self.event(event, step, index == len(events) - 1)
        self.check(step.state)
        return self.added

    def parted(self, state: Any) -> AssertionError:
        """The error of a table that parted from the rules' ``state`` (it has a round and a turn)."""
        return AssertionError(f"viewer state parted from the rules at round {state.round}, turn {state.turn}")


def follow(table: TableFrames, steps: Iterable[Step]) -> Iterator[list[Frame]]:
    """Per step, the frames ``table`` adds for it: a part's ``frames``."""
    for step in steps:
        yield table.step(step)


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
    round when the events name one (``parts.named_round``, as the generic terminal
    pictures count them). The scores are known when the game ends."""

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
            named = named_round(events)
            if named is not None and named != round_no:  # the step starts a round: shown as its first frame
                round_no, turn = named, 0
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
