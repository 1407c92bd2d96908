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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.games import registry
from arena.play.replay import DecisionLine, DroppedLine, End, EventsLine, FaultLine, Header, Line, ReplayError, verify
from arena.render.common import bank_text, ms_text
from arena.web.frames import Frame, count, letters
from arena.web.timing import turn_marks

FORMAT = 1
"""The version of the frames format (docs/viewer.md)."""
STATIC = Path(__file__).parent / "static"


def frames(lines: Sequence[Line], name: str = "replay") -> dict[str, Any]:
    """The viewer's data for a replay: its header, result and frames, as JSON-able
    builtins; ``ReplayError`` naming the line where the replay and the rules part, or
    the game the arena does not know."""
    if not lines or not isinstance(lines[0], Header):
        raise ReplayError(f"{name}: not a replay (no header line)")
    header = lines[0]
    try:
        record = registry.get_game(header.game)
    except registry.CatalogError as exc:
        raise ReplayError(f"{name}: {exc}") from None
    steps = list(verify(list(lines), name))
    part = record.frames()  # the game's own, else the generic frames
    heading = part.heading(header)
    unit = heading.unit or record.score.unit
    shown = part.frames(header, steps)
    built: list[Frame] = []
    end: End | None = None
    notes: list[dict[str, Any]] = []
    decision: DecisionLine | None = None
    for line in lines[1:]:
        match line:
            case FaultLine() | DroppedLine():
                notes.append(_note(line))
            case DecisionLine():
                decision = line
            case EventsLine():
                step_frames = next(shown)
                for frame in step_frames:
                    frame.update(times=None, time_texts=None, defaulted=[], notes=[])
                if step_frames:  # else its decision's notes wait for the next frame
                    _annotate(step_frames[0], decision, notes, header.players)
                    notes, decision = [], None
                built += step_frames
            case End():
                end = line
    assert end is not None, "verify accepts no replay without an end line"
    if not built:
        raise ReplayError(f"{name}: the replay holds no event to show")
    if notes:
        built[-1]["notes"] += notes
    result = {
        "scores": end.scores,
        "ranks": end.ranks,
        "statuses": [
            {"status": s.status, "faults": [{"kind": f.kind, "message": f.message} for f in s.faults]}
            for s in end.statuses
        ],
    }
    seat_letters = letters(header.players)
    last = built[-1]
    last["scores"] = end.scores  # the rules' final scores, whatever the part followed
    last["ranks"] = end.ranks  # the rules' ranks with disqualified seats moved last
    last["caption"] = _standings(end, seat_letters, [s.name for s in header.seats], unit)
    for index, frame in enumerate(built):
        frame["index"] = index
    return {
        "format": FORMAT,
        "game": header.game,
        "drawer": part.drawer,
        "title": record.title,
        "variant": heading.variant,
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
        "unit": unit,
        "lower_is_better": record.score.lower_is_better,
        "result": result,
        "rounds": rounds_of(built),
        "timeline": turn_marks(built, int(header.limits.get("move_ms", 0))),
        **heading.extra,
        "frames": built,
    }


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
