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

``run_pipeline`` runs it until cancelled, ``process`` takes one submission through it
now, and ``report_of`` makes the report its author reads (at most 64 KB).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
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
REPORT_BYTES = 64 * 1024
"""The stored report (JSON) at most: it is shown to its author, and a bot chooses what it
prints, so nothing it writes may make the report any bigger."""
TEXT_CAPS = {"detail": 1000, "sent": 1000, "got": 1000, "expected": 1000, "fix": 1000, "stderr": 4000}
"""Characters kept of each text of a check (its end for a stderr tail, its start otherwise)."""
BUILD_CAP = 8000
ERROR_CAP = 300


def capped(text: str, cap: int) -> str:
    """The end of ``text`` (where an error is), at most ``cap`` characters."""
    return text if len(text) <= cap else "…" + text[-cap:]


def headed(text: str, cap: int) -> str:
    """The start of ``text`` (what it says first), at most ``cap`` characters."""
    return text if len(text) <= cap else text[:cap] + "…"


def one_line(text: str, cap: int = ERROR_CAP) -> str:
    return headed(" ".join(text.split()), cap)


def _size(value: Any) -> int:
    return len(json.dumps(value))  # as the store writes it: ASCII, so characters are bytes


def _entry(check: Check, evidence: bool) -> dict[str, Any]:
    """One check as the author reads it; without ``evidence``, its name and verdict only."""
    texts = {f: "" for f in TEXT_CAPS}
    if evidence:
        texts = {f: (capped if f == "stderr" else headed)(getattr(check, f), cap) for f, cap in TEXT_CAPS.items()}
    else:
        texts["detail"] = headed(check.detail, 120)
    return {"name": headed(check.name, 200), "ok": check.ok, "skipped": check.skipped, **texts}


def report_of(checks: list[Check], build_log: list[str], error: str = "") -> dict[str, Any]:
    """What the author reads: the build's last lines, every check with its evidence, and
    the one line that decided (``error``, else the first failed check's). At most
    ``REPORT_BYTES`` however much the bot wrote: each text is capped; the deciding
    failure keeps its evidence, then every check its verdict as far as they fit, then the
    other failures and the passes their evidence."""
    failed = [i for i, c in enumerate(checks) if not c.ok and not c.skipped]
    if not error and failed:
        error = f"{checks[failed[0]].name}: {checks[failed[0]].detail}"
    report: dict[str, Any] = {"build": capped("\n".join(build_log[-40:]), BUILD_CAP), "checks": [], "error": ""}
    report["error"] = one_line(error)
    budget = REPORT_BYTES - _size(report)
    entries: dict[int, dict[str, Any]] = {}

    def put(i: int, evidence: bool) -> None:
        nonlocal budget
        entry = _entry(checks[i], evidence)
        cost = _size(entry) + 2 - (_size(entries[i]) + 2 if i in entries else 0)
        if cost <= budget:
            entries[i] = entry
            budget -= cost

    for i in failed[:1]:
        put(i, evidence=True)
    for i in range(len(checks)):
        if i not in entries:
            put(i, evidence=False)
    for i in sorted(entries, key=lambda i: checks[i].ok or checks[i].skipped):
        put(i, evidence=True)
    report["checks"] = [entries[i] for i in sorted(entries)]
    return report


def failure(text: str, paths: list[str], ref: str) -> tuple[str, list[str]]:
    """An error's first line for the author, and the lines under it (a failed build's
    output, say). The bot's folders on this machine are named by its ref; a first line
    that only announces what follows ("failed (exit 1):") gets the last of them."""
    for path in sorted(paths, key=len, reverse=True):
        text = text.replace(path, ref)
    line, *rest = text.splitlines()
    if line.endswith(":") and any(r.strip() for r in rest):
        line = f"{line} {next(r.strip() for r in reversed(rest) if r.strip())}"
    return line, rest


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
        paths: list[str] = []
        """Where the bot lies on this machine: named by its ref in what the author reads."""
        try:
            await self._db(self.submissions.set_state, s.id, BUILDING)
            self.progress(f"submission {s.id}: building {s.ref} ({s.author})")
            archive = await self._db(self.submissions.archive, s.id)
            paths.append(str(self.work / s.hash))
            folder = await trio.to_thread.run_sync(unpack, archive, s.hash, self.work)
            bot = load_bot(folder)
            if (bot.name, bot.version) != (s.name, s.version):
                raise BotError(f"bot.toml says {bot.name} {bot.version}, the submission {s.name} {s.version}")
            unknown = [g for g in bot.manifest.games if not catalog.find_game(g)]
            if unknown or not bot.manifest.games:
                listed = ", ".join(unknown) or "no game"
                raise BotError(f"bot.toml lists {listed}: this arena plays {', '.join(catalog.games())}")
            stored = await self._db(self.store.add_bot, folder)
            paths.append(str(stored.path))
            loaded = stored.load()
            await trio.to_thread.run_sync(self.sandbox.prepare, loaded, build.append)
            await self._db(self.submissions.set_state, s.id, CHECKING)
            self.progress(f"submission {s.id}: checking {s.ref}")
            checker = Checker(loaded, self.sandbox, self.move_ms, self.startup_ms, progress=build.append)
            checks = await checker.run()
        except Exception as exc:  # whatever the bot's folder, build or run did: its own failure
            line, rest = failure(str(exc).strip() or type(exc).__name__, paths, s.ref)
            build.extend(rest)
            await self._db(self.submissions.set_state, s.id, REJECTED, report_of([], build, line))
            self.progress(f"submission {s.id}: {s.ref} rejected: {one_line(line)}")
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


async def run_pipeline(
    store: Store,
    sandbox: Sandbox,
    work: Path,
    *,
    poll_s: float = POLL_S,
    progress: Callable[[str], None] = lambda line: None,
    builds: int = BUILDS,
) -> None:
    """Build and check submissions as they arrive, until cancelled (``Pipeline.run``),
    over a connection of its own to ``store``'s database: its worker threads never share
    the caller's."""
    pipeline = Pipeline(store.path, sandbox, work, progress)
    try:
        await pipeline.run(poll_s, builds)
    finally:
        pipeline.close()


async def process(
    store: Store,
    sandbox: Sandbox,
    work: Path,
    submission: Submission,
    *,
    progress: Callable[[str], None] = lambda line: None,
    move_ms: int = 1000,
) -> Submission:
    """Build and check one submission now (``Pipeline.process``); it ends active or
    rejected, and is returned as stored."""
    pipeline = Pipeline(store.path, sandbox, work, progress, move_ms)
    try:
        return await pipeline.process(submission)
    finally:
        pipeline.close()
