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
from collections.abc import Callable
from pathlib import Path

import trio

from arena.bots import Bot, load_bot
from arena.play.human import NAME
from arena.sandbox.base import Sandbox
from arena.sandbox.local import LocalProcess
from arena.sandbox.reaper import Reaper

ISOLATION = "a person at the terminal (the arena's own program, as its user)"


def person_bot(game: str) -> Bot:
    """The person's seat as a bot: a folder of its manifest alone."""
    folder = Path(tempfile.mkdtemp(prefix="arena-person-"))
    atexit.register(shutil.rmtree, folder, True)  # the arena's own folder: gone with the command
    manifest = f'name = "{NAME}"\nversion = "1"\nlanguage = "python"\nrun = "python3 -m arena.play.human"\n'
    (folder / "bot.toml").write_text(manifest + f'games = ["{game}"]\n')
    return load_bot(folder)


class WithPerson:
    """``inner`` for the bots, the terminal for ``person`` (see the module)."""

    def __init__(self, inner: Sandbox, person: Bot, game: str, read_fd: int, write_fd: int) -> None:
        self.inner = inner
        self.person = person
        self.game = game
        self.fds = (read_fd, write_fd)
        self.isolation = inner.isolation

    def isolation_for(self, bot: Bot) -> str:
        return ISOLATION if bot.path == self.person.path else self.inner.isolation_for(bot)

    def prepare(self, bot: Bot, progress: Callable[[str], None] = print) -> None:
        if bot.path != self.person.path:
            self.inner.prepare(bot, progress)

    def sdk_fix(self) -> str:
        return self.inner.sdk_fix()

    async def start(self, bot: Bot, nursery: trio.Nursery, max_line: int) -> LocalProcess:
        if bot.path != self.person.path:
            return await self.inner.start(bot, nursery, max_line)  # type: ignore[return-value]
        read, write = self.fds
        argv = [
            sys.executable,
            "-m",
            "arena.play.human",
            "--game",
            self.game,
            "--read",
            str(read),
            "--write",
            str(write),
        ]
        proc = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=self.fds,
        )
        Reaper.watch("pg", proc.pid)
        process = LocalProcess(proc, max_line, ISOLATION, None, None, None, nested=False)
        nursery.start_soon(process.pump_stderr)
        return process
