"""Every submission's way to the ladder: stored, built in the sandbox, put through the
conformance battery, then active or rejected with the report its author reads.

It runs inside ``arena ladder run`` with a connection of its own to the database (the
web server, which received the submission, and the ladder, which plays, have theirs).
The steps are the organiser's commands, done for the author: ``arena bot add`` (the
snapshot, from the packed folder unpacked with the checks a cluster worker applies to a
bundle), ``arena bot build`` (``Sandbox.prepare``: the build runs in the sandbox with its
caps) and ``arena bot check`` (``botcheck.Checker``, every game the manifest lists). A
hostile submission can only fail its own steps: each one's errors end it rejected with
one line, and an author's submissions are built one at a time
(``Submissions.next_to_build``), so nobody's queue holds up anybody else's.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from . import catalog
from .botcheck import Check, Checker
from .bots import BotError, load_bot
from .bundle import unpack
from .sandbox.base import Sandbox
from .store import Store
from .store.submissions import BUILDING, CHECKING, REJECTED, Submission, Submissions

POLL_S = 1.0
BUILDS = 2
"""Submissions built and checked at once (each of another author)."""
TEXT_CAP = 4000
"""Characters kept of each text of the report (a line, a stderr tail): it is read, not stored whole."""
REPORT_CHECKS = 60


def capped(text: str, cap: int = TEXT_CAP) -> str:
    """The end of ``text`` (where an error is), at most ``cap`` characters."""
    return text if len(text) <= cap else "…" + text[-cap:]


def report_of(checks: list[Check], build: list[str], error: str = "") -> dict[str, Any]:
    """What the author reads: the build's last lines, every check with its evidence
    (each text capped), and the one line that decided, if it failed."""
    shown = [
        {
            "name": capped(c.name, 200),
            "ok": c.ok,
            "skipped": c.skipped,
            **{f: capped(getattr(c, f)) for f in ("detail", "sent", "got", "expected", "fix", "stderr")},
        }
        for c in checks[:REPORT_CHECKS]
    ]
    failed = next((c for c in checks if not c.ok and not c.skipped), None)
    if not error and failed is not None:
        error = f"{failed.name}: {failed.detail}"
    error = error if len(error) <= 500 else error[:499] + "…"  # a line: its start says what
    return {"build": capped("\n".join(build[-40:])), "checks": shown, "error": error}


@dataclasses.dataclass
class Pipeline:
    """The pipeline over one database: ``run`` forever, or ``process`` one submission."""

    db: Path
    sandbox: Sandbox
    work: Path
    """Where packed folders are unpacked (by content hash) before they are stored."""
    progress: Callable[[str], None] = lambda line: None
    move_ms: int = 1000
    startup_ms: int = 10_000

    def __post_init__(self) -> None:
        self.store = Store(self.db)
        self.submissions = Submissions(self.store)
        self.lock = trio.Lock()
        """One user of the connection at a time (it is used from worker threads)."""

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        async with self.lock:
            return await trio.to_thread.run_sync(fn, *args)

    async def run(self, poll_s: float = POLL_S, builds: int = BUILDS) -> None:
        """Take submissions as they arrive until cancelled. Those a killed pipeline left
        half built are received again and built from the start."""
        for s in await self._db(self.submissions.recover):
            self.progress(f"submission {s.id} ({s.ref}) was cut short: building it again")
        busy: set[int] = set()
        taken = itertools.count()
        served: dict[int, int] = {}
        """When each author's last submission was taken (a count): the author served
        longest ago goes first, so one author's queue never starves another's."""

        async def one(s: Submission) -> None:
            try:
                await self.process(s)
            finally:
                busy.discard(s.id)

        async with trio.open_nursery() as nursery:
            while True:
                ready = await self._db(self.submissions.next_to_build)
                for s in sorted(ready, key=lambda s: (served.get(s.author_id, -1), s.id)):
                    if len(busy) >= builds:
                        break
                    busy.add(s.id)
                    served[s.author_id] = next(taken)
                    await self._db(self.submissions.set_state, s.id, BUILDING)
                    nursery.start_soon(one, s)
                await trio.sleep(poll_s)

    async def process(self, s: Submission) -> Submission:
        """Build and check one submission: it ends active or rejected, never raises for
        anything the bot did."""
        build: list[str] = []
        self.progress(f"submission {s.id}: building {s.ref} ({s.author})")
        try:
            await self._db(self.submissions.set_state, s.id, BUILDING)
            archive = await self._db(self.submissions.archive, s.id)
            folder = await trio.to_thread.run_sync(unpack, archive, s.hash, self.work)
            bot = load_bot(folder)
            unknown = [g for g in bot.manifest.games if not catalog.find_game(g)]
            if unknown or not bot.manifest.games:
                listed = ", ".join(unknown) or "no game"
                raise BotError(f"bot.toml lists {listed}: this arena plays {', '.join(catalog.games())}")
            stored = await self._db(self.store.add_bot, folder)
            loaded = stored.load()
            await trio.to_thread.run_sync(self.sandbox.prepare, loaded, build.append)
            await self._db(self.submissions.set_state, s.id, CHECKING)
            checker = Checker(loaded, self.sandbox, self.move_ms, self.startup_ms, progress=build.append)
            checks = await checker.run()
        except Exception as exc:  # whatever the bot's folder, build or run did: its own failure
            line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            await self._db(self.submissions.set_state, s.id, REJECTED, report_of([], build, line))
            self.progress(f"submission {s.id}: {s.ref} rejected: {line}")
        else:
            report = report_of(checks, build)
            if report["error"]:
                await self._db(self.submissions.set_state, s.id, REJECTED, report)
                self.progress(f"submission {s.id}: {s.ref} rejected: {report['error']}")
            else:
                await self._db(self.submissions.activate, s.id, stored.id, report)
                self.progress(f"submission {s.id}: {s.ref} is active")
        found = await self._db(self.submissions.get, s.id)
        assert found is not None
        return found  # type: ignore[no-any-return]

    def close(self) -> None:
        self.store.close()
