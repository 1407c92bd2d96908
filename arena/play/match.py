"""A match as data: the description in (``MatchSpec``) and the result out (``MatchResult``).

The referee (``arena.play.referee``) plays one; the schedule, the tournament runner and,
later, another machine only build and read these. So this module imports msgspec and
light arena modules only (no trio, no sandbox): ``arena tournament list`` and ``show``
make schedules without loading the referee.
"""

from __future__ import annotations

from typing import Any

import msgspec

from arena.bots import Bot
from arena.play.replay import Line, SeatStatus
from protocol.messages import MAX_LINE_BYTES


class TimeLimits(msgspec.Struct, frozen=True):
    move_ms: int = 1000
    """Limit for one move; overrunning it draws on the bank."""
    bank_ms: int = 10_000
    """Extra time for the whole game, spent by moves that overrun ``move_ms``."""
    startup_ms: int = 10_000
    """From starting the bot to its answer to ``hello``; no game clock runs meanwhile."""


class GameSpec(msgspec.Struct, frozen=True):
    seed: int
    seats: list[int]
    """For each seat, the index of the bot (in ``MatchSpec.bots``) that sits there."""
    game_no: int | None = None
    """The game's number in its match (replays, ``new_game``); by default its index in
    ``MatchSpec.games``. A resumed match plays only some games, under their own numbers."""


class MatchSpec(msgspec.Struct, frozen=True):
    game: str
    settings: dict[str, Any]
    bots: list[Bot]
    games: list[GameSpec]
    limits: TimeLimits = TimeLimits()
    max_line: int = MAX_LINE_BYTES
    fair_time: bool = True
    """Freeze each bot while it is not being asked, and let no more bots think at once
    than there are cores (see docs/design.md, Fair time)."""
    bot_limits: dict[int, TimeLimits] = {}
    """Limits of their own for some bots, by index (a person's seat): the others have ``limits``."""
    live: str = ""
    """The name its games are published under for spectators (``t3-m12``: match 12 of
    tournament 3), where the player publishes (``arena.play.live``); empty: none."""


class GameResult(msgspec.Struct, frozen=True):
    game_no: int
    spec: GameSpec
    scores: list[int]
    ranks: list[int]
    statuses: list[SeatStatus]
    replay: list[Line]
    rounds: int = 1


class MatchResult(msgspec.Struct, frozen=True):
    games: list[GameResult]
    """Every game played, when asked for (``play_match(keep_games=True)``); else empty:
    each game went to the observer as it ended, and the match kept nothing of it."""
    isolation: str
    played: int = 0
