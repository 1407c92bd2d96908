"""Who sees a bot's stderr: for a bot an author submitted, its author only.

Issue 17's promise: other people see a submitted bot's name, ratings and replays, never
its code or its stderr (an author's debugging log may hold anything). A bot is
submitted when its name has an owner (``Submissions.owner``); the organiser's bots
(``arena bot add``) have none and stay as public as before. The stderr is taken out on
the server, before an answer leaves: from the fault evidence of a bot's page and from
the raw replay (its end line and its fault lines). The frames, the game pages, the
games lists and their CSV never held any. The signed-in author (the ``arena_session``
cookie of ``arena serve --submissions``) still sees their own bots' stderr; that answer
is private to their browser (``submit.PRIVATE``). This holds with or without --submissions:
the owners' table is always there (migration 8).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from arena.store import Store
from arena.store.submissions import Submissions
from arena.web.errors import WebError
from arena.web.pages.bots import BotPage

NOTE = "stderr shown to its author only"
"""What replaces a submitted bot's stderr for everyone else."""
SHARED_BUT_PERSONAL = {"cache-control": "no-cache", "vary": "Cookie"}
"""Everyone else's view of an answer its author sees otherwise: revalidated each time."""
STDERR_FIELDS = {"stderr": "", "stderr_tail": "", "stderr_earlier": "", "earlier_lines": 0}
"""A fault's stderr as a bot's page holds it, and what each becomes when withheld."""


def viewer(store: Store, cookie: str) -> int | None:
    """The author id signed in with this session cookie; None for anyone else."""
    found = Submissions(store).session(cookie) if cookie else None
    return None if found is None else found[0].id


def withheld(names: Iterable[str], owner: Callable[[str], int | None], author: int | None) -> set[str]:
    """The bot names whose stderr ``author`` (None: a visitor) may not see: those owned
    by an author who is not them."""
    return {name for name in set(names) if (found := owner(name)) is not None and found != author}


def bot_name(ref: str) -> str:
    """``name`` of ``name:version``."""
    return ref.rpartition(":")[0] if ":" in ref else ref


def without_stderr(fault: dict[str, Any]) -> dict[str, Any]:
    """A fault (or its latest evidence) with its stderr taken out and the note put in."""
    kept = {key: value for key, value in fault.items() if key not in STDERR_FIELDS}
    return {**kept, **{key: empty for key, empty in STDERR_FIELDS.items() if key in fault}, "stderr_note": NOTE}


def bot_page(data: BotPage) -> BotPage:
    """A bot's page (``BotPages.bot``) without its stderr: a new page, the cached faults untouched."""
    return msgspec.structs.replace(
        data,
        fault_record=[without_stderr(f) for f in data.fault_record],
        fault_groups=[{**g, "latest": without_stderr(g["latest"])} for g in data.fault_groups],
        stderr_withheld=NOTE,
    )


def replay_without_stderr(data: bytes, seats: set[int], name: str = "replay") -> bytes:
    """A replay's JSON lines with the stderr of ``seats`` taken out: emptied in the end
    line (which says so under ``withheld``) and in their faults' evidence; every other
    field as stored. A line that cannot be read is refused rather than served as it is."""
    if not seats:
        return data
    out = []
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            line = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            raise WebError(500, f"{name}: line {number} cannot be read, and the replay holds a submitted bot") from None
        if isinstance(line, dict) and line.get("type") == "fault" and line.get("seat") in seats:
            line["fault"] = _fault_without_stderr(line.get("fault"))
        elif isinstance(line, dict) and line.get("type") == "end":
            stderr, statuses = line.get("stderr"), line.get("statuses")
            for seat in seats:
                if isinstance(stderr, list) and 0 <= seat < len(stderr):
                    stderr[seat] = ""
                if isinstance(statuses, list) and 0 <= seat < len(statuses) and isinstance(statuses[seat], dict):
                    faults = statuses[seat].get("faults")
                    if isinstance(faults, list):
                        statuses[seat]["faults"] = [_fault_without_stderr(f) for f in faults]
            line["withheld"] = {"seats": sorted(seats), "note": NOTE}
        out.append(msgspec.json.encode(line) + b"\n")
    return b"".join(out)


def _fault_without_stderr(fault: Any) -> Any:
    return {**fault, "stderr": None} if isinstance(fault, dict) else fault


class Shown(msgspec.Struct, frozen=True):
    """What may be shown of an answer: names whose stderr is withheld, and whether the
    answer holds a submitted bot's stderr for its author (then it is private to them)."""

    withheld: set[str]
    personal: bool


def shown(store: Store, names: Iterable[str], cookie: str) -> Shown:
    """Of the bots ``names``, those whose stderr the holder of ``cookie`` may not see."""
    submissions = Submissions(store)
    named = set(names)
    owners = {name: submissions.owner(name) for name in named}
    author = viewer(store, cookie) if any(o is not None for o in owners.values()) else None
    hidden = withheld(named, owners.__getitem__, author)
    return Shown(hidden, author is not None and any(o == author for o in owners.values()))


def game_replay(store: Store, game_id: int, data: bytes, cookie: str) -> tuple[bytes, Shown]:
    """The stored replay of ``game_id`` as the holder of ``cookie`` may see it."""
    game = store.game(game_id)
    seats = [] if game is None else game.seats
    seen = shown(store, (bot_name(s.bot) for s in seats), cookie)
    hidden = {s.seat for s in seats if bot_name(s.bot) in seen.withheld}
    return replay_without_stderr(data, hidden, f"game {game_id}"), seen
