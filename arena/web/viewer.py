"""The replay viewer's data: a verified replay cut into frames that a browser draws.

``frames(lines)`` re-simulates a replay with ``arena.replay.verify``, so the rules stay
the only judge of what happened, and cuts the game into frames, one per moment a
spectator would want to see: a deal, a draft pick, a reveal, each card placed, a row
taken, a pass, a round's end. Every frame holds the whole table (rows or suit runs,
every hand, scores), so a viewer draws any frame alone and steps back as easily as
forward; ``viewer.js`` only draws, it never applies a rule. The state between two
logged steps is followed from the events themselves and checked against the rules'
state at the end of every step.

``standalone_html`` packs the viewer and one game's frames into a single HTML file that
opens offline from disk. The frames format is documented in docs/viewer.md.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protocol import nimmt as nimmt_protocol
from protocol import sixes as sixes_protocol

from ..games import sixes as sixes_rules
from ..render import seat_labels
from ..replay import DecisionLine, DroppedLine, End, EventsLine, FaultLine, Header, Line, ReplayError, Step, verify

FORMAT = 1
"""The version of the frames format (docs/viewer.md)."""
STATIC = Path(__file__).parent / "static"

Frame = dict[str, Any]


def frames(lines: Sequence[Line], name: str = "replay") -> dict[str, Any]:
    """The viewer's data for a replay: its header, result and frames, as JSON-able
    builtins; ``ReplayError`` naming the line where the replay and the rules part."""
    if not lines or not isinstance(lines[0], Header):
        raise ReplayError(f"{name}: not a replay (no header line)")
    header = lines[0]
    steps = list(verify(list(lines), name))
    game: _Nimmt | _Sixes = _Nimmt(header) if header.game == "nimmt" else _Sixes(header)
    end: End | None = None
    notes: list[dict[str, Any]] = []
    decision: DecisionLine | None = None
    next_step = iter(steps)
    for line in lines[1:]:
        match line:
            case FaultLine() | DroppedLine():
                notes.append(_note(line))
            case DecisionLine():
                decision = line
            case EventsLine():
                first = len(game.frames)
                step = next(next_step)
                game.step(step)
                _annotate(game.frames[first], decision, notes, header.players)
                notes, decision = [], None
            case End():
                end = line
    assert end is not None, "verify accepts no replay without an end line"
    if notes:
        game.frames[-1]["notes"] += notes
    result = {
        "scores": end.scores,
        "ranks": end.ranks,
        "statuses": [
            {"status": s.status, "faults": [{"kind": f.kind, "message": f.message} for f in s.faults]}
            for s in end.statuses
        ],
    }
    last = game.frames[-1]
    last["ranks"] = end.ranks  # the rules' ranks with disqualified seats moved last
    last["caption"] = game.standings_caption(end)
    for index, frame in enumerate(game.frames):
        frame["index"] = index
    return {
        "format": FORMAT,
        "game": header.game,
        "title": game.title,
        "variant": game.variant,
        "settings": header.settings,
        "seed": str(header.seed),  # as text: a seed may pass JavaScript's exact integers (2**53)
        "players": header.players,
        "game_no": header.game_no,
        "started": header.started,
        "limits": header.limits,
        "seats": [
            {
                "seat": seat,
                "letter": game.letters[seat],
                "name": info.name,
                "version": info.version,
                "isolation": info.isolation,
            }
            for seat, info in enumerate(header.seats)
        ],
        "unit": game.unit,
        "lower_is_better": game.unit != "chips",
        "result": result,
        "rounds": game.rounds,
        **game.extra(),
        "frames": game.frames,
    }


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
        for seat, ms, default in zip(decision.seats, decision.wall_ms, decision.defaulted, strict=True):
            times[seat] = round(ms, 2)
            if default:
                frame["defaulted"].append(seat)
        frame["times"] = times
    frame["notes"] = notes


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _Game:
    """What both games' frame builders share: seat letters, the frame list, rounds."""

    title = ""
    unit = ""
    variant = ""

    def __init__(self, header: Header) -> None:
        self.players = header.players
        self.letters = [label.split(" ", 1)[0] for label in seat_labels([s.name for s in header.seats])]
        self.names = [s.name for s in header.seats]
        self.frames: list[Frame] = []
        self.rounds: list[dict[str, int]] = []
        self.round = 0
        self.turn = 0

    def new_round(self, round_no: int) -> None:
        self.round = round_no
        self.turn = 0
        self.rounds.append({"round": round_no, "frame": len(self.frames)})

    def standings_caption(self, end: End) -> str:
        order = sorted(range(self.players), key=lambda s: (end.ranks[s], s))
        parts = [
            f"{_ordinal(end.ranks[s])} {self.letters[s]} {self.names[s]} {_count(end.scores[s], self.unit[:-1])}"
            + (" (disqualified)" if end.statuses[s].status == "disqualified" else "")
            for s in order
        ]
        return "Game over · " + " · ".join(parts)

    def extra(self) -> dict[str, Any]:
        return {}


class _Nimmt(_Game):
    """6 nimmt!'s frames: deals, draft picks, reveals, placements, round ends."""

    title = "6 nimmt!"

    def __init__(self, header: Header) -> None:
        super().__init__(header)
        settings = header.settings
        self.shedding = bool(settings.get("shedding", False))
        self.keep_rows = bool(settings.get("keep_rows", False))
        self.cards_per_turn = int(settings.get("cards_per_turn", 1))
        self.professional = settings.get("variant") == "professional"
        self.unit = "cards" if self.shedding else "heads"
        parts = [str(settings.get("variant", "standard"))]
        if self.cards_per_turn == 2:
            parts.append("2 cards a turn")
        if self.keep_rows:
            parts.append("rows kept")
        if self.shedding:
            parts.append("shedding")
        if settings.get("rounds"):
            parts.append(_count(int(settings["rounds"]), "round"))
        elif not self.shedding:
            parts.append(f"to {settings.get('end_score', 66)} heads")
        self.variant = " · ".join(parts)
        players = self.players
        self.rows: list[list[int]] = []
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.scores = [0] * players
        self.round_heads = [0] * players
        self.piles: list[list[int]] = [[] for _ in range(players)]
        self.revealed: list[list[int]] = []
        self.offer: list[int] = []
        self.ranks: list[int] | None = None

    def extra(self) -> dict[str, Any]:
        return {"heads": list(nimmt_protocol.HEADS)}

    def add(self, kind: str, caption: str, move: dict[str, Any] | None = None) -> None:
        self.frames.append(
            {
                "kind": kind,
                "round": self.round,
                "turn": self.turn,
                "caption": caption,
                "rows": [list(row) for row in self.rows],
                "hands": [list(hand) for hand in self.hands],
                "piles": [list(pile) for pile in self.piles],
                "revealed": [list(play) for play in self.revealed],
                "offer": list(self.offer),
                "scores": [len(hand) for hand in self.hands] if self.shedding else list(self.scores),
                "round_heads": list(self.round_heads),
                "ranks": self.ranks,
                "move": move,
                "times": None,
                "defaulted": [],
                "notes": [],
            }
        )

    def step(self, step: Step) -> None:
        for event in step.events:
            self.event(event)
        self.check(step.state)

    def event(self, event: Any) -> None:
        letters = self.letters
        match event:
            case nimmt_protocol.DraftStart(round=round_no, offer=offer, first=first):
                self.new_round(round_no)
                self.rows, self.offer, self.revealed = [], list(offer), []
                self.hands = [[] for _ in range(self.players)]
                self.reset_round()
                self.add(
                    "draft",
                    f"Round {round_no} · the draft: {_count(len(offer), 'card')} face up, {letters[first]} picks first",
                )
            case nimmt_protocol.Pick(seat=seat, card=card):
                self.offer.remove(card)
                self.hands[seat] = sorted([*self.hands[seat], card])
                heads = nimmt_protocol.HEADS[card]
                self.add(
                    "pick", f"{letters[seat]} picks {card} ({_count(heads, 'head')})", {"seat": seat, "card": card}
                )
            case nimmt_protocol.Deal(round=round_no, rows=rows, hands=hands):
                drafted = bool(self.rounds) and self.rounds[-1]["round"] == round_no
                if not drafted:
                    self.new_round(round_no)
                self.rows = [list(row) for row in rows]
                self.hands = [list(hand) for hand in hands]
                self.offer, self.revealed = [], []
                self.reset_round()
                if drafted:
                    caption = f"Round {round_no} · the draft is over: the 4 cards left start the rows"
                elif self.keep_rows and round_no > 1:
                    caption = f"Round {round_no} · the rows stay on the table; 10 new cards each"
                else:
                    caption = f"Round {round_no} · dealt: 10 cards each, 4 cards start the rows"
                self.add("deal", caption)
            case nimmt_protocol.Reveal(turn=turn, plays=plays):
                self.turn = turn
                for card, seat in plays:
                    self.hands[seat].remove(card)
                self.revealed = [[card, seat] for card, seat in plays]
                shown = " · ".join(f"{letters[seat]} {card}" for card, seat in plays)
                self.add("reveal", f"Turn {turn} · revealed, to be placed lowest first: {shown}")
            case nimmt_protocol.Place():
                self.place(event)
            case nimmt_protocol.RoundEnd(round=round_no, heads=heads, scores=scores):
                self.round_heads = list(heads)
                self.scores = list(scores)
                parts = " · ".join(
                    f"{letters[s]} +{h} = {t}" for s, (h, t) in enumerate(zip(heads, scores, strict=True))
                )
                self.add("round_end", f"End of round {round_no} · {parts}")
            case nimmt_protocol.GameEnd(scores=scores, ranks=ranks):
                self.scores = list(scores)
                self.ranks = list(ranks)
                self.add("game_end", "Game over")

    def reset_round(self) -> None:
        self.piles = [[] for _ in range(self.players)]
        self.round_heads = [0] * self.players

    def place(self, event: nimmt_protocol.Place) -> None:
        seat, card, row, taken = event.seat, event.card, event.row, list(event.taken)
        self.revealed.remove([card, seat])
        who = f"{self.letters[seat]} {card}"
        heads = sum(nimmt_protocol.HEADS[c] for c in taken)
        if taken:
            self.rows[row] = [card]
            if self.shedding:
                self.hands[seat] = sorted(self.hands[seat] + taken)
            else:
                self.piles[seat] += taken
                self.round_heads[seat] += heads
            worth = "into hand" if self.shedding else _count(heads, "head")
            took = f"takes {_count(len(taken), 'card')} ({' '.join(map(str, taken))}), {worth}"
        elif event.end == "left":
            self.rows[row].insert(0, card)
        else:
            self.rows[row].append(card)
        where = f"row {row}, left end" if event.end == "left" else f"row {row}"
        if event.chosen:
            fits = "fits no row end" if self.professional else "is lower than every row"
            caption = f"{who} {fits}: {self.letters[seat]} chooses row {row} and {took}"
        elif taken:
            caption = f"{who} is the 6th card of {where}: {self.letters[seat]} {took}"
        else:
            caption = f"{who} → {where}"
        move = {
            "seat": seat,
            "card": card,
            "row": row,
            "end": event.end,
            "taken": taken,
            "heads": 0 if self.shedding else heads,
            "chosen": event.chosen,
            "sixth": bool(taken) and not event.chosen,
        }
        self.add("place", caption, move)

    def check(self, state: Any) -> None:
        """The table followed from the events must be the rules' own after each step."""
        rows = tuple(tuple(row) for row in self.rows)
        hands = tuple(tuple(hand) for hand in self.hands)
        same = rows == state.rows and hands == state.hands
        if self.shedding:
            same = same and (not state.over or list(state.scores) == [len(hand) for hand in self.hands])
        else:
            same = same and list(state.scores) == self.scores
            same = same and (state.over or list(state.round_heads) == self.round_heads)
        if not same:
            raise AssertionError(f"viewer state parted from the rules at round {state.round}, turn {state.turn}")


class _Sixes(_Game):
    """Sixes' frames: deals, every play and pass, round ends."""

    title = "Sixes"
    unit = "chips"

    def __init__(self, header: Header) -> None:
        super().__init__(header)
        settings = header.settings
        self.variant = f"{settings.get('chips', 10)} chips each · at most {settings.get('max_rounds', 100)} rounds"
        self.hands: list[list[str]] = [[] for _ in range(self.players)]
        self.table: tuple[tuple[int, int] | None, ...] = (None,) * len(sixes_protocol.SUITS)
        self.chips = [int(settings.get("chips", 10))] * self.players
        self.pot = 0
        self.to_move: int | None = None
        self.ranks: list[int] | None = None

    def extra(self) -> dict[str, Any]:
        return {
            "suits": [{"suit": s, "name": SUIT_NAMES[s], "french": FRENCH_SUITS[s]} for s in sixes_protocol.SUITS],
            "ranks": list(sixes_protocol.RANKS),
            "rank_names": {str(r): name for r, name in RANK_NAMES.items()},
        }

    def runs(self) -> list[list[str]]:
        """Each suit's cards on the table, lowest first (``SUITS`` order)."""
        return [
            [f"{r}{s}" for r in sixes_protocol.RANKS if run is not None and run[0] <= r <= run[1]]
            for s, run in zip(sixes_protocol.SUITS, self.table, strict=True)
        ]

    def add(self, kind: str, caption: str, move: dict[str, Any] | None = None) -> None:
        self.frames.append(
            {
                "kind": kind,
                "round": self.round,
                "turn": self.turn,
                "caption": caption,
                "runs": self.runs(),
                "hands": [list(hand) for hand in self.hands],
                "chips": list(self.chips),
                "scores": list(self.chips),
                "pot": self.pot,
                "to_move": self.to_move,
                "ranks": self.ranks,
                "move": move,
                "times": None,
                "defaulted": [],
                "notes": [],
            }
        )

    def step(self, step: Step) -> None:
        events = step.events
        for i, event in enumerate(events):
            # who moves next is the rules' business: known from the state once the
            # step's last event is shown, unknown (null) in between
            self.to_move = step.state.to_move if i == len(events) - 1 and not step.state.over else None
            self.event(event)
        self.check(step.state)

    def event(self, event: Any) -> None:
        letters = self.letters
        match event:
            case sixes_protocol.Deal(round=round_no, hands=hands, starter=starter):
                self.new_round(round_no)
                self.turn = 0
                self.hands = [list(hand) for hand in hands]
                self.table = (None,) * len(sixes_protocol.SUITS)
                self.pot = 0
                chips = " · ".join(f"{letters[s]} {c}" for s, c in enumerate(self.chips))
                self.add(
                    "deal",
                    f"Round {round_no} · dealt; {letters[starter]} holds the 6 of oros and starts · chips {chips}",
                )
            case sixes_protocol.Play(seat=seat, card=card):
                self.turn += 1
                self.hands[seat].remove(card)
                self.table = sixes_rules.place(self.table, card)
                left = _count(len(self.hands[seat]), "card")
                self.add(
                    "play",
                    f"Turn {self.turn} · {letters[seat]} plays the {card_name(card)} ({left} left)",
                    {
                        "seat": seat,
                        "card": card,
                    },
                )
            case sixes_protocol.Pass(seat=seat, paid=paid, pot=pot):
                self.turn += 1
                self.chips[seat] -= paid
                self.pot = pot
                pays = f"pays {_count(paid, 'chip')} (pot {pot})" if paid else "has no chip to pay"
                self.add(
                    "pass",
                    f"Turn {self.turn} · {letters[seat]} cannot play: passes and {pays}",
                    {
                        "seat": seat,
                        "pass": True,
                        "paid": paid,
                    },
                )
            case sixes_protocol.RoundEnd(round=round_no, winner=winner, pot=pot, chips=chips):
                self.chips = list(chips)
                self.pot = 0
                self.add(
                    "round_end",
                    f"End of round {round_no} · {letters[winner]} emptied their hand first and takes the pot of {pot}",
                    {"seat": winner, "pot": pot},
                )
            case sixes_protocol.GameEnd(chips=chips, ranks=ranks):
                self.chips = list(chips)
                self.ranks = list(ranks)
                self.add("game_end", "Game over")

    def check(self, state: Any) -> None:
        """The table followed from the events must be the rules' own after each step."""
        hands = tuple(tuple(hand) for hand in self.hands)
        same = hands == state.hands and self.table == state.table and list(state.chips) == self.chips
        if not same or (not state.over and state.pot != self.pot):
            raise AssertionError(f"viewer state parted from the rules at round {state.round}, turn {state.turn}")


SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
FRENCH_SUITS = {"o": "diamonds", "c": "hearts", "e": "spades", "b": "clubs"}
RANK_NAMES = {1: "ace", 10: "sota", 11: "caballo", 12: "rey"}


def card_name(card: str) -> str:
    """``"sota of copas"`` for ``"10c"``, ``"7 of oros"`` for ``"7o"``."""
    rank = sixes_protocol.rank(card)
    return f"{RANK_NAMES.get(rank, str(rank))} of {SUIT_NAMES[sixes_protocol.suit(card)]}"


# --- the standalone file --------------------------------------------------------------------

_PAGE_CSS = """
html { background: #10261d; }
body.rv-standalone { margin: 0; font-family: system-ui, "DejaVu Sans", sans-serif; color: #f3f1e8; }
body.rv-standalone main { max-width: 1280px; margin: 0 auto; padding: 0.25rem; }
"""


def standalone_html(lines: Sequence[Line], title: str = "replay") -> str:
    """One self-contained HTML page: the viewer's CSS and JS inline and the game's
    frames embedded, with no external asset, so it opens offline from disk."""
    data = frames(lines, title)
    css = (STATIC / "viewer.css").read_text(encoding="utf-8")
    js = (STATIC / "viewer.js").read_text(encoding="utf-8")
    assert "</style" not in css.lower() and "</script" not in js.lower(), "an asset would close its own tag"
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
{js}</script>
</body>
</html>
"""
