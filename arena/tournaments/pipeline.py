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
(``Submissions.next_to_build``), so nobody's queue holds up anybody else's. When a slot
is free, the author who used the least build time in the last hour goes first
(``BuildTime``): an author whose builds are slow cannot keep the slots to themselves.

What a submission leaves on disk is its snapshot (once, in ``<db>-bots/``; a rejected
one's goes with its rejection) and its archive, gzipped, in the database until
``KEEP_ARCHIVES_S`` after it was rejected or retired (``Submissions.sweep``).

``run_pipeline`` runs it until cancelled, ``process`` takes one submission through it
now, and ``report_of`` makes the report its author reads (at most 64 KB).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import trio

from arena.botcheck import Check, Checker
from arena.bots import BotError, load_bot
from arena.bots.bundle import unpack
from arena.bots.folder import FolderError, FolderLimits, remove_tree
from arena.bots.uploads import UploadError, gunzip
from arena.games import registry
from arena.sandbox.base import Sandbox
from arena.store import Store, StoreError
from arena.store.submissions import BUILDING, CHECKING, KEEP_ARCHIVES_S, REJECTED, Submission, Submissions

POLL_S = 1.0
BUILDS = 2
"""Submissions built and checked at once (each of another author)."""
CHECK_SECONDS = 300
"""The longest the conformance battery of one submission may take (the build has its
sandbox's cap): past it the submission is rejected and its slot freed."""
FAIR_WINDOW_S = 3600.0
"""Build time counts against its author for this long (``BuildTime``)."""
SWEEP_S = 60.0
"""How often the archives kept past ``KEEP_ARCHIVES_S`` are looked for and deleted."""
REPORT_BYTES = 64 * 1024
"""The stored report (JSON) at most: it is shown to its author, and a bot chooses what it
prints, so nothing it writes may make the report any bigger."""
TEXT_CAPS = {"detail": 1000, "sent": 1000, "got": 1000, "expected": 1000, "fix": 1000, "stderr": 4000}
"""Characters kept of each text of a check (its end for a stderr tail, its start otherwise)."""
BUILD_CAP = 8000
CHUNK = 1 << 20
ERROR_CAP = 300


def inflate(packed: IO[bytes], into: IO[bytes], cap: int) -> None:
    """``packed`` (a gzipped tar; a plain one, as an older arena stored it, is copied as it
    is) written to ``into`` as a plain tar, both from their start; ``FolderError`` past
    ``cap`` bytes inflated, or when it is damaged (the door's own inflater: ``gunzip``)."""
    packed.seek(0)
    gzipped = packed.read(2) == b"\x1f\x8b"
    packed.seek(0)
    try:
        with gunzip(packed, cap) if gzipped else contextlib.nullcontext(packed) as reader:
            shutil.copyfileobj(reader, into, CHUNK)
    except UploadError as exc:
        raise FolderError(f"the stored archive: {exc.message}; refused") from None
    into.seek(0)


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
class BuildTime:
    """The build time (building and checking, wall clock) each author used in the last
    ``window_s``, running builds counted as they go: the author who used least goes first."""

    window_s: float = FAIR_WINDOW_S
    spans: dict[int, list[list[float]]] = dataclasses.field(default_factory=dict)
    """Each author's builds as ``[start, end]`` (end ``inf`` while it runs)."""

    def start(self, author_id: int, now: float) -> list[float]:
        span = [now, math.inf]
        self.spans.setdefault(author_id, []).append(span)
        return span

    def used(self, author_id: int, now: float) -> float:
        since = now - self.window_s
        spans = self.spans.get(author_id, [])
        spans[:] = [span for span in spans if span[1] > since]  # forget what left the window
        return sum(min(end, now) - max(start, since) for start, end in spans)

    def order(self, ready: list[Submission], now: float) -> list[Submission]:
        """``ready`` in the order they get a slot: least build time used first, then the
        oldest submission."""
        return sorted(ready, key=lambda s: (self.used(s.author_id, now), s.id))


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
    keep_archives_s: float = KEEP_ARCHIVES_S

    def __post_init__(self) -> None:
        self.store = Store(self.db)
        self.submissions = Submissions(self.store)
        self.lock = trio.Lock()
        """One user of the connection at a time (it is used from worker threads)."""
        self.build_time = BuildTime()

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        async with self.lock:
            return await trio.to_thread.run_sync(fn, *args)

    async def run(self, poll_s: float = POLL_S, builds: int = BUILDS) -> None:
        """Take submissions as they arrive until cancelled, a fair share of the ``builds``
        slots each (``BuildTime``). Those a killed pipeline left half built are received
        again and built from the start. Archives past their keep are deleted as it goes."""
        for s in await self._db(self.submissions.recover):
            self.progress(f"submission {s.id} ({s.ref}) was cut short: building it again")
        busy: set[int] = set()
        swept = -math.inf

        async def one(s: Submission) -> None:
            span = self.build_time.start(s.author_id, trio.current_time())
            try:
                await self.process(s)
            finally:
                span[1] = trio.current_time()
                busy.discard(s.id)

        async with trio.open_nursery() as nursery:
            while True:
                if trio.current_time() - swept >= SWEEP_S:
                    swept = trio.current_time()
                    gone = await self._db(self.submissions.sweep, self.keep_archives_s)
                    if gone:
                        self.progress(f"deleted the archives of {gone} rejected or retired submissions")
                ready = await self._db(self.submissions.next_to_build)
                for s in self.build_time.order(ready, trio.current_time()):
                    if len(busy) >= builds:
                        break
                    busy.add(s.id)
                    await self._db(self.submissions.set_state, s.id, BUILDING)
                    nursery.start_soon(one, s)
                await trio.sleep(poll_s)

    async def _unpacked(self, s: Submission) -> Path:
        """The submission's folder, unpacked from its archive (copied from the database to
        an unnamed file in chunks, never held whole, and inflated to another) into ``work``."""
        with tempfile.TemporaryFile(dir=self.work) as packed, tempfile.TemporaryFile(dir=self.work) as tar:
            await self._db(self.submissions.archive_into, s.id, packed)
            await trio.to_thread.run_sync(inflate, packed, tar, FolderLimits.from_env().total_bytes * 2)
            folder: Path = await trio.to_thread.run_sync(unpack, tar, s.hash, self.work)
            return folder

    async def process(self, s: Submission) -> Submission:
        """Build and check one submission: it ends active or rejected, never raises for
        anything the bot did."""
        build: list[str] = []
        paths: list[str] = []
        """Where the bot lies on this machine: named by its ref in what the author reads."""
        stored = None
        try:
            await self._db(self.submissions.set_state, s.id, BUILDING)
            self.progress(f"submission {s.id}: building {s.ref} ({s.author})")
            paths.append(str(self.work / s.hash))
            self.work.mkdir(parents=True, exist_ok=True)
            folder = await self._unpacked(s)
            try:
                bot = load_bot(folder)
                if (bot.name, bot.version) != (s.name, s.version):
                    raise BotError(f"bot.toml says {bot.name} {bot.version}, the submission {s.name} {s.version}")
                unknown = [g for g in bot.manifest.games if not registry.find_game(g)]
                if unknown or not bot.manifest.games:
                    listed = ", ".join(unknown) or "no game"
                    raise BotError(f"bot.toml lists {listed}: this arena plays {', '.join(registry.games())}")
                known = {b.id for b in await self._db(self.store.list_bots)}
                stored = await self._db(self.store.add_bot, folder)
                new = stored.id not in known
            finally:
                await trio.to_thread.run_sync(remove_tree, folder)  # the snapshot is the one copy kept
            paths.append(str(stored.path))
            loaded = stored.load()
            await trio.to_thread.run_sync(self.sandbox.prepare, loaded, build.append)
            await self._db(self.submissions.set_state, s.id, CHECKING)
            self.progress(f"submission {s.id}: checking {s.ref}")
            checker = Checker(loaded, self.sandbox, self.move_ms, self.startup_ms, progress=build.append)
            try:
                with trio.fail_after(CHECK_SECONDS):
                    checks = await checker.run()
            except trio.TooSlowError:
                raise BotError(
                    f"the checks took more than {CHECK_SECONDS} s, the cap: answer well within the time limits"
                ) from None
        except Exception as exc:  # whatever the bot's folder, build or run did: its own failure
            line, rest = failure(str(exc).strip() or type(exc).__name__, paths, s.ref)
            build.extend(rest)
            await self._rejected(s, report_of([], build, line), stored if stored is not None and new else None)
            self.progress(f"submission {s.id}: {s.ref} rejected: {one_line(line)}")
        else:
            report = report_of(checks, build)
            if report["error"]:
                await self._rejected(s, report, stored if new else None)
                self.progress(f"submission {s.id}: {s.ref} rejected: {report['error']}")
            else:
                await self._db(self.submissions.activate, s.id, stored.id, report)
                self.progress(f"submission {s.id}: {s.ref} is active")
        found = await self._db(self.submissions.get, s.id)
        assert found is not None
        return found  # type: ignore[no-any-return]

    async def _rejected(self, s: Submission, report: dict[str, Any], stored: Any) -> None:
        """The submission rejected; the bot it stored (``stored``: made by this submission,
        not before) removed with its snapshot, so a rejection keeps no copy of its code
        but the archive (kept ``keep_archives_s``)."""
        await self._db(self.submissions.set_state, s.id, REJECTED, report)
        if stored is not None:
            try:
                await self._db(self.store.remove_bot, stored.id)
            except StoreError as exc:  # played meanwhile (an organiser's tournament): it stays
                self.progress(f"submission {s.id}: {s.ref} kept: {exc}")

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
    keep_archives_s: float = KEEP_ARCHIVES_S,
) -> None:
    """Build and check submissions as they arrive, until cancelled (``Pipeline.run``),
    over a connection of its own to ``store``'s database: its worker threads never share
    the caller's."""
    pipeline = Pipeline(store.path, sandbox, work, progress, keep_archives_s=keep_archives_s)
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
