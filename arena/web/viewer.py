"""The replay viewer's data: a verified replay cut into frames that a browser draws.

``frames(lines)`` re-simulates a replay with ``arena.play.replay.verify``, so the rules stay
the only judge of what happened, and hands the steps to the game's web part (its
record's ``web``, else ``GenericFrames``), which cuts them into frames, one per moment a
spectator would want to see. Every frame holds the whole table, so a viewer draws any
frame alone and steps back as easily as forward; ``viewer.js`` only draws, with the
drawer the part names (the script of the record's ``drawer``, else the generic one),
and never applies a rule. What every game shares is added
here: the decision's times, defaults and faults on the first frame it led to, the
rounds, the seats and the result.

``standalone_html`` packs the viewer, the game's drawer and its frames into a single
HTML file that opens offline from disk; ``drawer_script`` is what the server sends a
page for a game's drawer. The frames format is documented in docs/viewer.md.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.boards.timing import turn_marks
from arena.games import registry
from arena.play.replay import DecisionLine, DroppedLine, End, FaultLine, Header, Line, ReplayError, verify
from arena.render.common import bank_text, ms_text
from arena.web.frames import Frame, count, letters

FORMAT = 1
"""The version of the frames format (docs/viewer.md)."""
STATIC = Path(__file__).parent / "static"


def frames(lines: Sequence[Line], name: str = "replay") -> dict[str, Any]:
    """The viewer's data for a replay: its header, result and frames, as JSON-able
    builtins; ``ReplayError`` naming the line where the replay and the rules part, or
    the game the arena does not know."""
    cut = Cut(lines, name)
    return cut.data([frame for step_frames in cut.steps() for frame in step_frames])


class Cut:
    """A replay cut into the viewer's frames a step at a time, its lines read only as
    each step needs them: a game still being played (``arena.web.live``) is cut as its
    lines arrive, by the same code as a finished one.

    The header, the game's record and part are known from the first line; ``steps()``
    yields each step's frames, annotated with the decision that led to them and the
    notes logged meanwhile, numbered from 0; once it is done, ``end`` is the end line and
    ``notes`` what was logged after the last frame."""

    def __init__(self, lines: Iterable[Line], name: str = "replay") -> None:
        self._lines = iter(lines)
        header = next(self._lines, None)
        if not isinstance(header, Header):
            raise ReplayError(f"{name}: not a replay (no header line)")
        try:
            self.record = registry.get_game(header.game)
        except registry.CatalogError as exc:
            raise ReplayError(f"{name}: {exc}") from None
        self.header = header
        self.name = name
        self.part = self.record.frames()  # the game's own, else the generic frames
        self.heading = self.part.heading(header)
        self.unit = self.heading.unit or self.record.score.unit
        self.end: End | None = None
        self.notes: list[dict[str, Any]] = []

    def meta(self) -> dict[str, Any]:
        """What the viewer draws besides the frames and the result."""
        header, record = self.header, self.record
        seat_letters = letters(header.players)
        return {
            "format": FORMAT,
            "game": header.game,
            "drawer": self.part.drawer,
            "title": record.title,
            "variant": self.heading.variant,
            "settings": header.settings,
            "seed": str(header.seed),  # as text: a seed may pass JavaScript's exact integers (2**53)
            "players": header.players,
            "game_no": header.game_no,
            "started": header.started,
            "limits": header.limits,
            "seats": [
                {
                    "seat": seat,
                    "letter": seat_letters[seat],
                    "name": info.name,
                    "version": info.version,
                    "isolation": info.isolation,
                }
                for seat, info in enumerate(header.seats)
            ],
            "unit": self.unit,
            "lower_is_better": record.score.lower_is_better,
            **self.heading.extra,
        }

    def public(self, frame: Frame, seat: int | None = None) -> Frame:
        """What a spectator may see of ``frame`` while its game is played: every seat's
        entries of the game's private fields hidden (a hand shows as that many unknown
        cards, ``null``), of a fault or a dropped line only its kind (the referee's
        message quotes the legal answers, a seat's hand), and for the generic frames,
        which show the answers as they were given, no answer. ``frame`` is untouched.
        With ``seat``: what that seat's player sees, its own entries as they are."""
        hidden = {entry.rpartition(".")[2] for entry in self.record.private}
        shown: Frame = _hide(frame, hidden, seat)
        shown["notes"] = [{"seat": n["seat"], "kind": n["kind"]} for n in frame.get("notes", [])]
        if self.part.drawer == "generic":
            shown["answers"] = [{"seat": a["seat"], "answer": None} for a in frame.get("answers", [])]
            shown["caption"] = f"{frame['asked']} · answered" if frame.get("asked") else "The game starts"
        return shown

    def data(self, built: list[Frame]) -> dict[str, Any]:
        """The viewer's data once the lines have ended: ``built`` is every frame ``steps()``
        yielded; the last one gets the rules' final standings."""
        end = self.end
        assert end is not None, "verify accepts no replay without an end line"
        if not built:
            raise ReplayError(f"{self.name}: the replay holds no event to show")
        if self.notes:
            built[-1]["notes"] += self.notes
        result = {
            "scores": end.scores,
            "ranks": end.ranks,
            "statuses": [
                {"status": s.status, "faults": [{"kind": f.kind, "message": f.message} for f in s.faults]}
                for s in end.statuses
            ],
        }
        header = self.header
        last = built[-1]
        last["scores"] = end.scores  # the rules' final scores, whatever the part followed
        last["ranks"] = end.ranks  # the rules' ranks with disqualified seats moved last
        last["caption"] = _standings(end, letters(header.players), [s.name for s in header.seats], self.unit)
        return {
            **self.meta(),
            "result": result,
            "rounds": rounds_of(built),
            "timeline": turn_marks(built, int(header.limits.get("move_ms", 0))),
            "frames": built,
        }

    def steps(self) -> Iterator[list[Frame]]:
        read: list[Line] = []  # what the rules have read since the last step's frames

        def tap() -> Iterator[Line]:
            yield self.header
            for line in self._lines:
                read.append(line)
                yield line

        decision: DecisionLine | None = None
        notes: list[dict[str, Any]] = []
        index = 0
        # verify yields a step as soon as it reads its events line, and the part cuts it
        # before asking for the next: ``read`` then ends with that events line
        for step_frames in self.part.frames(self.header, verify(tap(), self.name)):
            decision, notes = self._take(read, decision, notes)
            for frame in step_frames:
                frame.update(times=None, time_texts=None, defaulted=[], notes=[], index=index)
                index += 1
            if step_frames:  # else its decision's notes wait for the next frame
                _annotate(step_frames[0], decision, notes, self.header.players)
                notes, decision = [], None
            yield step_frames
        _, self.notes = self._take(read, decision, notes)  # verify has read the end line

    def _take(
        self, read: list[Line], decision: DecisionLine | None, notes: list[dict[str, Any]]
    ) -> tuple[DecisionLine | None, list[dict[str, Any]]]:
        for line in read:
            match line:
                case FaultLine() | DroppedLine():
                    notes.append(_note(line))
                case DecisionLine():
                    decision = line
                case End():
                    self.end = line
        read.clear()
        return decision, notes


def _hide(value: Any, hidden: set[str], seat: int | None = None) -> Any:
    """``value`` with the entries of every field named in ``hidden`` replaced by ``null``s,
    as many as there were (a list of hands: each hand's cards), at any depth; but
    ``seat``'s own entry."""
    if isinstance(value, dict):
        return {key: _blank(item, seat) if key in hidden else _hide(item, hidden, seat) for key, item in value.items()}
    if isinstance(value, list):
        return [_hide(item, hidden, seat) for item in value]
    return value


def _blank(entries: Any, seat: int | None) -> Any:
    if isinstance(entries, list):
        return [
            entry if i == seat else [None] * len(entry) if isinstance(entry, list) else None
            for i, entry in enumerate(entries)
        ]
    return None


def rounds_of(built: Sequence[Frame]) -> list[dict[str, int]]:
    """Where each round starts: the first frame of each run of one round number."""
    rounds: list[dict[str, int]] = []
    for index, frame in enumerate(built):
        if not rounds or frame["round"] != rounds[-1]["round"]:
            rounds.append({"round": frame["round"], "frame": index})
    return rounds


def _note(line: FaultLine | DroppedLine) -> dict[str, Any]:
    """A fault or a dropped line as the frame where it happened shows it."""
    if isinstance(line, FaultLine):
        return {"seat": line.seat, "kind": line.fault.kind, "message": line.fault.message, "line": line.fault.line}
    return {
        "seat": line.seat,
        "kind": "dropped",
        "message": f"sent a line that answered nothing ({line.reason})",
        "line": line.line,
    }


def _annotate(frame: Frame, decision: DecisionLine | None, notes: list[dict[str, Any]], players: int) -> None:
    """Put a decision's cost (wall ms per seat asked, who was defaulted) and the notes
    logged while it was asked on the first frame that shows its outcome."""
    if decision is not None:
        times: list[float | None] = [None] * players
        texts: list[str | None] = [None] * players
        for seat, ms, default in zip(decision.seats, decision.wall_ms, decision.defaulted, strict=True):
            times[seat] = ms
            texts[seat] = ms_text(ms)  # the terminal's words: rounded once, in Python, never again in the browser
            if default:
                frame["defaulted"].append(seat)
        frame["times"] = times
        frame["time_texts"] = texts
        if decision.bank_ms:  # logged since the bank is: each asked seat's bank left after its answer
            banks: list[str | None] = [None] * players
            for seat, left in zip(decision.seats, decision.bank_ms, strict=True):
                banks[seat] = bank_text(left)
            frame["bank_texts"] = banks
    frame["notes"] = notes


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _standings(end: End, seat_letters: list[str], names: list[str], unit: str) -> str:
    """The last frame's caption: every seat from first to last, with its score."""
    order = sorted(range(len(names)), key=lambda s: (end.ranks[s], s))
    parts = [
        f"{_ordinal(end.ranks[s])} {seat_letters[s]} {names[s]} {count(end.scores[s], unit[:-1])}"
        + (" (disqualified)" if end.statuses[s].status == "disqualified" else "")
        for s in order
    ]
    return "Game over · " + " · ".join(parts)


# --- the standalone file --------------------------------------------------------------------

_PAGE_CSS = """
html { background: #10261d; }
body.rv-standalone { margin: 0; font-family: system-ui, "DejaVu Sans", sans-serif; color: #f3f1e8; }
body.rv-standalone main { max-width: 1280px; margin: 0 auto; padding: 0.25rem; }
"""


def drawer_script(game: str) -> str | None:
    """The JavaScript of game ``game``'s drawer with its style sheet attached (a call that
    hands the sheet to the viewer, which adds it once), or ``None`` (no such game, or one
    drawn by the generic drawer); ``CatalogError`` for a record whose files cannot be read.
    One response brings both, so the table is never drawn unstyled."""
    record = registry.find_game(game)
    script = None if record is None else record.drawer_script()
    if record is None or script is None:
        return None
    css = record.drawer_stylesheet()
    if css is None:
        return script
    return f"{script}\nwindow.ArenaViewer.addStyle({_js_string(game)}, {_js_string(css)});\n"


def _js_string(text: str) -> str:
    """``text`` as a JavaScript string literal that cannot close a ``<script>`` element."""
    return json.dumps(text, ensure_ascii=False).replace("<", "\\u003c")


def standalone_html(lines: Sequence[Line], title: str = "replay") -> str:
    """One self-contained HTML page: the viewer's CSS and JS and the game's drawer (with its
    style sheet) inline and the game's frames embedded, with no external asset, so it opens offline from disk."""
    data = frames(lines, title)
    css = (STATIC / "viewer.css").read_text(encoding="utf-8")
    js = (STATIC / "viewer.js").read_text(encoding="utf-8")
    drawer = drawer_script(data["game"]) or ""
    closing = "</script" in js.lower() or "</script" in drawer.lower()
    assert "</style" not in css.lower() and not closing, "an asset would close its own tag"
    # JSON inside <script>: "<", ">" and "&" only occur in strings, where \\u escapes
    # mean the same and cannot close the element or open a comment
    payload = (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_PAGE_CSS}
{css}</style>
</head>
<body class="rv-standalone">
<main>
<div id="replay-viewer"></div>
</main>
<script type="application/json" id="replay-data">{payload}</script>
<script>
{js}
{drawer}</script>
</body>
</html>
"""
