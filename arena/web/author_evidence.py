"""What only a submission's author sees of their bot on the ladder: its stderr in its
newest games and its faults with their evidence (other people see its name, ratings and
replays, never its stderr)."""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from arena.play import replay as replay_files
from arena.store import Store, StoreError
from arena.store.submissions import Submission
from arena.web.fault_record import grouped_faults, stderr_tail

STDERR_GAMES = 5
"""The bot's newest games whose stderr its author sees."""


def seat_stderr(replay: bytes, seat: int) -> str:
    """A seat's stderr as the replay's end line keeps it ('' when it cannot be read)."""
    try:
        end = msgspec.json.decode(replay.rstrip(b"\n").rsplit(b"\n", 1)[-1], type=replay_files.End)
    except msgspec.DecodeError:
        return ""
    return end.stderr[seat] if 0 <= seat < len(end.stderr) else ""


def bot_evidence(store: Store, submission: Submission, games: int = STDERR_GAMES) -> dict[str, Any]:
    """The stderr of the submission's bot in its newest ``games`` games and its faults,
    grouped as its bot page groups them; empty until it is on the ladder."""
    if submission.bot_id is None:
        return {"stderr": [], "faults": []}
    stderr = []
    for game in store.find_games(bot_id=submission.bot_id, limit=games, newest_first=True):
        for seat in game.seats:
            if seat.bot != submission.ref:
                continue
            try:
                text = seat_stderr(store.replay(game.id), seat.seat)
            except (StoreError, zlib.error):
                text = ""
            stderr.append({"game": game.id, "seat": seat.seat, **stderr_tail(text)})
    _, groups = grouped_faults(store, submission.bot_id)
    return {"stderr": stderr, "faults": groups}
