"""How long bots take to answer, read from replays: numbers, and one reader of stored
replays (``stored_times``) for the web's bot pages and ``arena bot try``.

A replay's decision lines hold each asked seat's wall time; its header the limits. The
referee's bank rule (``referee._Clock``) is replayed here: an answer slower than
``move_ms`` takes the excess (rounded to the ms) off the seat's bank, a timeout empties
it. So the bank left after every move is known without the referee having logged it.

A seat the referee did not ask (disqualified, or its bot no longer running) is
defaulted with a wall time of 0: that is no move of the bot's, and it is left out.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.play import replay as replay_files
from arena.play.replay import DecisionLine, FaultLine, Header, Line
from arena.render.common import ms_text
from arena.store import Store, StoredGame, StoreError

BINS: tuple[tuple[str, float], ...] = (
    ("0–10%", 0.10),
    ("10–25%", 0.25),
    ("25–50%", 0.50),
    ("50–75%", 0.75),
)
"""The bins of a move's time as a share of the move limit, each up to (not including)
its bound; then ``75–100%`` (up to the limit itself), ``over`` and ``timeout``."""
BIN_NAMES = (*(name for name, _ in BINS), "75–100%", "over", "timeout")
"""Every bin, in order: ``over`` is over the limit (the bank paid the excess),
``timeout`` an answer that never came in time (the bank emptied)."""
PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class Move:
    """One answer of a seat: its wall time, the bank left after it, whether it timed out."""

    wall_ms: float
    bank_ms: int
    timeout: bool = False


@dataclass(frozen=True)
class SeatTimes:
    """One seat's moves in one game, under the game's limits."""

    seat: int
    bot: str
    """``name:version``."""
    move_ms: int
    bank_ms: int
    """The bank at the start of the game."""
    moves: list[Move] = field(default_factory=list)


def charged(bank_ms: int, wall_ms: float, move_ms: int) -> int:
    """The bank left after an answer of ``wall_ms`` (the referee's rule)."""
    return max(0, bank_ms - max(0, round(wall_ms) - move_ms))


def seat_times(lines: Sequence[Line]) -> list[SeatTimes]:
    """Every seat's moves in a replay, with the bank left after each; none when the
    header names no move limit (nothing to measure against)."""
    header = lines[0]
    assert isinstance(header, Header)
    move_ms = int(header.limits.get("move_ms", 0))
    if move_ms <= 0:
        return []
    bank_start = int(header.limits.get("bank_ms", 0))
    seats = [
        SeatTimes(seat, f"{info.name}:{info.version}", move_ms, bank_start) for seat, info in enumerate(header.seats)
    ]
    banks = [bank_start] * len(seats)
    timed_out: set[int] = set()
    for line in lines[1:]:
        if isinstance(line, FaultLine) and line.fault.kind == "timeout":
            timed_out.add(line.seat)  # logged before the decision it belongs to
        elif isinstance(line, DecisionLine):
            for seat, wall, default in zip(line.seats, line.wall_ms, line.defaulted, strict=True):
                timeout = seat in timed_out
                if default and wall == 0 and not timeout:
                    continue  # not asked
                banks[seat] = 0 if timeout else charged(banks[seat], wall, move_ms)
                seats[seat].moves.append(Move(wall, banks[seat], timeout))
            timed_out.clear()
    return seats


def stored_times(store: Store, games: Iterable[StoredGame], ref: str | None) -> tuple[list[SeatTimes], int]:
    """The seats bot ``ref`` (``name:version``; None: every bot) played in ``games``,
    their replays read one at a time, and how many replays could not be read (counted,
    not used)."""
    seats: list[SeatTimes] = []
    unreadable = 0
    for game in games:
        try:
            lines = replay_files.loads(store.replay(game.id), f"game {game.id}")
        except (zlib.error, StoreError, replay_files.ReplayError):
            unreadable += 1
            continue
        mine = {s.seat for s in game.seats if ref is None or s.bot == ref}
        seats += [s for s in seat_times(lines) if s.seat in mine]
    return seats, unreadable


def bin_of(move: Move, move_ms: int) -> str:
    """The bin (``BIN_NAMES``) a move falls in."""
    if move.timeout:
        return "timeout"
    if round(move.wall_ms) > move_ms:
        return "over"
    share = move.wall_ms / move_ms
    return next((name for name, bound in BINS if share < bound), "75–100%")


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile of sorted ``values`` (the value at rank ceil(p% of n))."""
    if not values:
        return math.nan
    return values[max(0, math.ceil(p / 100 * len(values)) - 1)]


def summary(seats: Iterable[SeatTimes]) -> dict[str, Any]:
    """What a bot's time looks like over the seats it played: percentiles of its move
    times (ms, and as a share of each game's move limit), how many moves fall in each
    bin, and how much of the bank it used (the least left, games that dipped into it)."""
    walls: list[float] = []
    shares: list[float] = []
    counts = dict.fromkeys(BIN_NAMES, 0)
    games = into_bank = 0
    least_left: int | None = None
    least_share: float | None = None
    limits: set[int] = set()
    for seat in seats:
        if not seat.moves:
            continue
        games += 1
        limits.add(seat.move_ms)
        for move in seat.moves:
            walls.append(move.wall_ms)
            shares.append(move.wall_ms / seat.move_ms)
            counts[bin_of(move, seat.move_ms)] += 1
        if seat.bank_ms <= 0:
            continue  # no bank to use
        left = min(move.bank_ms for move in seat.moves)
        if left < seat.bank_ms:
            into_bank += 1
        if least_left is None or left < least_left:
            least_left = left
            least_share = round(left / seat.bank_ms, 4)
    walls.sort()
    shares.sort()

    def points(values: list[float], digits: int) -> dict[str, float | None]:
        found: dict[str, float | None] = {
            f"p{p}": round(percentile(values, p), digits) if values else None for p in PERCENTILES
        }
        found["max"] = round(values[-1], digits) if values else None
        return found

    return {
        "games": games,
        "moves": len(walls),
        "move_ms": sorted(limits),
        "ms": points(walls, 3),
        "share": points(shares, 4),
        "bins": [{"bin": name, "moves": counts[name]} for name in BIN_NAMES],
        "bank": {
            "games_into_bank": into_bank,
            "least_left_ms": least_left,
            "least_left_share": least_share,
            "timeouts": counts["timeout"],
        },
    }


def game_times(seats: Sequence[SeatTimes]) -> list[dict[str, Any]]:
    """Each seat of one game as its page shows it: every move's time and the bank after it."""
    return [
        {
            "seat": s.seat,
            "bot": s.bot,
            "move_ms": s.move_ms,
            "bank_ms": s.bank_ms,
            "wall_ms": [m.wall_ms for m in s.moves],
            "bank_left_ms": [m.bank_ms for m in s.moves],
            "timeouts": [i for i, m in enumerate(s.moves) if m.timeout],
            "summary": summary([s]),
        }
        for s in seats
    ]


def turn_marks(frames: Sequence[dict[str, Any]], move_ms: int) -> list[dict[str, Any]]:
    """The viewer's timeline: one mark per turn (each frame that shows a decision's
    outcome, the one carrying its times), with its slowest answer (ms, share of the
    limit, as the terminal writes it), that answer's bin (and its place in
    ``BIN_NAMES``, 0 fastest), and the faults logged while it was asked."""
    marks = []
    for frame in frames:
        times = frame.get("times")
        if times is None:
            continue
        asked = [(ms, seat) for seat, ms in enumerate(times) if ms is not None]
        slowest, seat = max(asked) if asked else (0.0, None)
        faults = [n["kind"] for n in frame.get("notes", []) if n.get("kind") != "dropped"]
        timeout = "timeout" in faults
        band = bin_of(Move(slowest, 0, timeout), move_ms) if move_ms > 0 else None
        marks.append(
            {
                "frame": frame["index"],
                "seat": seat,
                "ms": slowest,
                "share": round(slowest / move_ms, 4) if move_ms > 0 else None,
                "text": ms_text(slowest),
                "bin": band,
                "level": None if band is None else BIN_NAMES.index(band),
                "faults": faults,
            }
        )
    return marks
