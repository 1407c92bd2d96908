"""What a run shows as it goes: each round of ``arena play``; a tournament's progress, a
bar and the top of the table on a terminal, plain lines into a file or a pipe.

Imported by those commands only: it needs the referee and the tournament (trio)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from rich.console import Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.boards.columns import columns_of, score_text
from arena.cli.common import console
from arena.games.registry import get_game
from arena.play.match import GameResult
from arena.play.referee import Observer
from arena.store import StoredBot
from arena.tournaments.roundrobin import Progress as TournamentProgress


class LivePrinter(Observer):
    """Prints each finished round of a game as it happens."""

    def __init__(self, game: str, labels: list[str]) -> None:
        self.render = get_game(game).terminal()
        self.labels = labels

    def events(self, game_no: int, events: list[Any]) -> None:
        for line in self.render.live(events, self.labels):
            console.print(line)


PROGRESS_SECONDS = "ARENA_PROGRESS_SECONDS"
"""Into a file or a pipe, a progress line at least this often (seconds; default 60)."""


def duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``2 h 5 min``: how long is left, as a log line says it."""
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


class LiveProgress(TournamentProgress):
    """A rich progress bar (games, games per second, ETA) over the live top of the table.

    When stdout is not a terminal (nohup, cron, CI, a pipe) a live display shows nothing
    until the end, so instead a plain line goes to stderr at every tenth of the games
    and at least every ``ARENA_PROGRESS_SECONDS`` (60): ``12/120 games (10%), 0.4
    games/s, about 4 min left``."""

    def __init__(self, live: Live, game: str) -> None:
        self.plain = not console.is_terminal
        self.columns = columns_of(game)
        """The board's columns (``arena.boards.columns``): the top of the table names and
        writes its columns as the board will."""
        self.better = 1 if get_game(game).score.lower_is_better else -1  # ties on wins: the better average first
        try:
            self.every_s = float(os.environ.get(PROGRESS_SECONDS, "60"))
        except ValueError:
            self.every_s = 60.0
        self.total = self.done = self.tenth = 0
        self.last_line = time.perf_counter()
        self.live = live
        self.bar = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.bar.add_task("games", total=1, rate="")
        self.standing: dict[str, list[float]] = {}
        self.start = time.perf_counter()
        self.played = 0

    def started(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        self.tenth = done * 10 // max(total, 1)
        self.bar.update(self.task, total=total, completed=done)
        self._draw()

    def game_stored(self, result: GameResult, bots: list[StoredBot]) -> None:
        self.played += 1
        self.done += 1
        if self.plain:
            self._line()
            return
        for bot, rank, score in zip(bots, result.ranks, result.scores, strict=True):
            entry = self.standing.setdefault(bot.ref, [0, 0, 0])
            entry[0] += 1
            entry[1] += rank == 1
            entry[2] += score / max(result.rounds, 1)
        rate = self.played / max(time.perf_counter() - self.start, 1e-9)
        self.bar.update(self.task, advance=1, rate=f"{rate:.1f} games/s")
        self._draw()

    def _line(self) -> None:
        """One plain progress line (no colours, no cursor moves) when a tenth more of the
        games is done or the period has passed."""
        now = time.perf_counter()
        tenth = self.done * 10 // max(self.total, 1)
        if tenth <= self.tenth and now - self.last_line < self.every_s:
            return
        self.tenth, self.last_line = tenth, now
        rate = self.played / max(now - self.start, 1e-9)
        left = self.total - self.done
        line = f"{self.done}/{self.total} games ({self.done / max(self.total, 1):.0%}), {rate:.1f} games/s"
        line += f", about {duration(left / rate)} left" if left > 0 else ", all played"
        print(line, file=sys.stderr, flush=True)

    def _draw(self) -> None:
        if self.plain:
            return
        table = Table(title="top of the table (wins so far)", title_justify="left")
        shown = {c.field: c for c in self.columns}
        for column in (shown["bot"], shown["games"], shown["wins"], shown["score_per_round"]):
            table.add_column(column.heading, justify="right" if column.numeric else "left")
        top = sorted(self.standing.items(), key=lambda kv: (-kv[1][1] / kv[1][0], self.better * kv[1][2] / kv[1][0]))[
            :5
        ]
        for ref, (games, wins, per_round) in top:
            table.add_row(ref, str(int(games)), f"{wins / games:.0%}", score_text(per_round / games))
        self.live.update(Group(self.bar, table))
