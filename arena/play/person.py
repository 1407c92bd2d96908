"""A sandbox with a person in one seat (``arena play --human``): that seat is the arena's
own program (``arena.play.human``) run as this user and given the terminal; every other
seat is a bot in the sandbox chosen, as in any game.

The person's program is in a session of its own, so Ctrl-C at the terminal reaches the
arena, which stops every seat; it reads and writes the terminal through the descriptors
it is passed, never through the referee's pipes, which carry the protocol as a bot's do.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from arena.bots import Bot, load_bot
from arena.play.human import NAME
from arena.sandbox.base import BotProcess, Sandbox
from arena.sandbox.local import LocalProcess
from arena.sandbox.reaper import Reaper

ISOLATION = "a person at the terminal (the arena's own program, as its user)"


def person_bot(name: str = NAME) -> Bot:
    """The person's seat as a bot: a folder of its manifest alone, the same for every
    game (so that one stored bot is every person's seat)."""
    from arena.games.registry import games

    folder = Path(tempfile.mkdtemp(prefix="arena-person-"))
    atexit.register(shutil.rmtree, folder, True)  # the arena's own folder: gone with the command
    manifest = f'name = "{name}"\nversion = "1"\nlanguage = "python"\nrun = "python3 -m arena.play.human"\n'
    (folder / "bot.toml").write_text(manifest + f"games = {list(games())!r}\n".replace("'", '"'))
    return load_bot(folder)


SeatStart = Callable[[trio.Nursery, int], Awaitable[BotProcess]]
"""Starts a person's seat (its helper tasks in the nursery, lines capped at the int)."""


class WithPerson:
    """``inner`` for the bots, ``start`` for ``person``'s seat (the terminal's program,
    or a web page's relay), described as ``isolation``."""

    def __init__(self, inner: Sandbox, person: Bot, start: SeatStart, isolation: str = ISOLATION) -> None:
        self.inner = inner
        self.person = person
        self.start_person = start
        self.person_isolation = isolation
        self.isolation = inner.isolation

    def isolation_for(self, bot: Bot) -> str:
        return self.person_isolation if bot.path == self.person.path else self.inner.isolation_for(bot)

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        if bot.path != self.person.path:
            self.inner.prepare(bot, progress)

    def sdk_fix(self) -> str:
        return self.inner.sdk_fix()

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> BotProcess:
        if bot.path != self.person.path:
            return await self.inner.start(bot, nursery, max_line)
        return await self.start_person(nursery, max_line)


def at_terminal(game: str, read_fd: int, write_fd: int) -> SeatStart:
    """The terminal's seat: the arena's program (``arena.play.human``), given the
    terminal's descriptors, in a session of its own."""

    async def start(nursery: trio.Nursery, max_line: int) -> BotProcess:
        argv = [
            sys.executable,
            "-m",
            "arena.play.human",
            "--game",
            game,
            "--read",
            str(read_fd),
            "--write",
            str(write_fd),
        ]
        proc = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(read_fd, write_fd),
        )
        Reaper.watch("pg", proc.pid)
        process = LocalProcess(proc, max_line, ISOLATION, None, None, None, nested=False)
        nursery.start_soon(process.pump_stderr)
        return process

    return start
