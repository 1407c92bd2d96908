"""A bot's fault record: each fault of its newest faulty games with the evidence its replay
keeps, and repeated faults grouped (the same kind and message but for its numbers), as
its page and its author's submission page show them."""

from __future__ import annotations

import re
import zlib
from typing import Any

import msgspec

from arena.play import replay as replay_files
from arena.store import Store, StoreError

FAULT_GAMES = 20
"""Faulty games whose evidence a bot's page shows (the newest)."""
FAULT_SCAN = 500
"""Faulty games (the newest) whose faults a bot's page groups: their count is bounded."""
TAIL_LINES = 12
"""Lines of a fault's stderr shown at once: the last ones, where the fault is."""
TAIL_CHARS = 1500
"""At most this much of them, unless a single line is longer."""


def fault_record(store: Store, bot_id: int, games: int = FAULT_GAMES) -> list[dict[str, Any]]:
    """Each fault of the bot in its newest faulty games, with the evidence the replay keeps.

    Only the replay's last line is decoded: its end line holds every seat's faults."""
    found = []
    end_decoder = msgspec.json.Decoder(replay_files.End)
    for game_id, seat in store.faulty_seats(bot_id, games):
        try:
            data = store.replay(game_id)
            end = end_decoder.decode(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
        except (zlib.error, msgspec.DecodeError, StoreError):
            found.append({"game": game_id, "seat": seat, "kind": "unknown", "message": "the replay cannot be read"})
            continue
        for fault in end.statuses[seat].faults:
            found.append(
                {"game": game_id, "seat": seat, "status": end.statuses[seat].status, **msgspec.to_builtins(fault)}
            )
    return found


_NUMBERS = re.compile(r"(-?\d+(?:, ?-?\d+)*)")
"""A number, or a list of them (legal answers): what differs between repeats of a fault."""


def stderr_tail(stderr: str | None) -> dict[str, Any]:
    """A fault's stderr split where it matters: its last lines (``TAIL_LINES``, at most
    ``TAIL_CHARS`` unless one line is longer), which hold the fault, and what came before."""
    lines = (stderr or "").rstrip("\n").split("\n") if stderr else []
    tail, earlier = lines[-TAIL_LINES:], lines[:-TAIL_LINES]
    while len(tail) > 1 and sum(len(line) + 1 for line in tail) > TAIL_CHARS:
        earlier.append(tail.pop(0))
    return {"stderr_tail": "\n".join(tail), "stderr_earlier": "\n".join(earlier), "earlier_lines": len(earlier)}


def group_faults(faults: list[dict[str, Any]], games_shown: int = 8) -> list[dict[str, Any]]:
    """Repeated faults as one entry each: the same kind and the same message but for its
    numbers (a request id, a time). Newest first (``faults`` is: games newest first, a
    game's faults in the order they happened); each group keeps its latest evidence, its
    message with the numbers that vary as N (a list of them as …), its count and its games."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    numbers: dict[tuple[str, str], list[set[str]]] = {}
    for fault in faults:
        parts = _NUMBERS.split(fault.get("message") or "")
        key = (fault.get("kind") or "unknown", "#".join(parts[::2]))
        group = groups.get(key)
        if group is None:
            group = groups[key] = {"kind": key[0], "count": 0, "games": [], "latest": fault}
            numbers[key] = [set() for _ in parts[1::2]]
        elif fault["game"] == group["latest"]["game"]:
            group["latest"] = fault  # later in the same (newest) game
        group["count"] += 1
        if fault["game"] not in group["games"]:
            group["games"].append(fault["game"])
        for seen, value in zip(numbers[key], parts[1::2], strict=True):
            seen.add(value)
    found = []
    for key, group in groups.items():
        parts = _NUMBERS.split(group["latest"].get("message") or "")
        for i, seen in enumerate(numbers[key]):
            if len(seen) > 1:
                parts[2 * i + 1] = "…" if any("," in value for value in seen) else "N"
        games = group.pop("games")
        latest = group.pop("latest")
        found.append(
            {
                **group,
                "message": "".join(parts),
                "game_count": len(games),
                "games": games[:games_shown],
                "latest": {**latest, **stderr_tail(latest.get("stderr"))},
            }
        )
    return found


def grouped_faults(store: Store, bot_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The bot's faults as its page shows them: each fault of its newest ``FAULT_GAMES``
    faulty games, and those of its newest ``FAULT_SCAN`` grouped (``group_faults``)."""
    faults = fault_record(store, bot_id, FAULT_SCAN)
    newest: set[tuple[int, int]] = set()
    record = []
    for fault in faults:
        seat = (fault["game"], fault["seat"])
        if seat not in newest and len(newest) >= FAULT_GAMES:
            break
        newest.add(seat)
        record.append(fault)
    return record, group_faults(faults)
