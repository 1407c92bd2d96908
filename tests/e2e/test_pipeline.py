"""The pipeline over a real SQLite file and real bots in the real local sandbox
(bubblewrap): a good submission ends active and playable, each way a bot can fail ends
it rejected with the line that says why, an author's queue never holds up another's,
and a pipeline killed mid-build builds it again on its next start."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from arena.botcheck import Check, Checker
from arena.bots.bundle import pack
from arena.sandbox import choose_sandbox, images
from arena.sandbox.base import Sandbox
from arena.sandbox.local import is_ready, prepared_dir
from arena.store import Store
from arena.store.submissions import (
    ACTIVE,
    BUILDING,
    CHECKING,
    RECEIVED,
    REJECTED,
    RETIRED,
    Author,
    Submission,
    SubmissionError,
    Submissions,
)
from arena.tournaments import pipeline
from arena.tournaments.pipeline import REPORT_BYTES, failure, report_of

from ..conftest import SAMPLES, MakeBot, fresh_c_bot

CRASH = "import sys\nsys.exit(3)\n"
SILENT = "import time\nwhile True:\n    time.sleep(1)\n"


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-readable folder for the database (local bots run as nobody)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-test-pipeline-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def sample(base: Path, name: str, version: str = "1.0") -> Path:
    folder = base / "folders" / f"{name}-{version}"
    shutil.copytree(SAMPLES / "random", folder)
    text = (folder / "bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
    (folder / "bot.toml").write_text(text.replace('version = "1.0.0"', f'version = "{version}"'))
    with open(folder / "bot.py", "a") as code:  # new code each run: nothing built before serves it
        code.write(f"\n# {uuid.uuid4()}\n")
    for path in (base / "folders", folder, *folder.rglob("*")):
        os.chmod(path, 0o755)
    return folder


def submitted(db: Path, author: str, folder: Path) -> Submission:
    """``folder`` as the web server stores it: ``bundle.pack``'s tar, received."""
    digest, archive = pack(folder)
    with Store(db) as store:
        subs = Submissions(store)
        found = next((a for a in subs.authors() if a.name == author), None)
        who: Author = found if found is not None else subs.add_author(author)[0]
        name, version = folder.name.rsplit("-", 1)
        return subs.submit(who, name, version, digest, archive, per_hour=100)


def state(db: Path, submission_id: int) -> Submission:
    with Store(db, read_only=True) as store:
        found = Submissions(store).get(submission_id)
    assert found is not None
    return found


def process(
    db: Path, base: Path, *ids: int, progress: Callable[[str], None] = print, sandbox: Sandbox | None = None
) -> list[Submission]:
    """Each submission of ``ids`` through the pipeline, in the local sandbox unless told."""
    sandbox = sandbox or choose_sandbox("local")[0]

    async def main() -> list[Submission]:
        with Store(db) as store:
            work = base / "work"
            return [
                await pipeline.process(store, sandbox, work, state(db, i), progress=progress, move_ms=2000) for i in ids
            ]

    return trio.run(main)


def test_a_good_submission_ends_active_and_playable(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "nimble"))
    seen = [state(db, s.id).state]
    (done,) = process(db, base, s.id, progress=lambda line: seen.append(state(db, s.id).state))
    assert seen == [RECEIVED, BUILDING, CHECKING, ACTIVE]
    assert done.state == ACTIVE and done.report["error"] == ""
    assert done.report["checks"] and all(c["ok"] for c in done.report["checks"])
    assert {"manifest", "start"} <= {c["name"] for c in done.report["checks"]}
    assert sum(c["name"].startswith("nimmt: ") for c in done.report["checks"]) >= 3
    with Store(db, read_only=True) as store:
        bot = store.get_bot("nimble:1.0")
        assert bot.id == done.bot_id and bot.hash == s.hash and Path(bot.path).is_dir()
    # playable at once: this sandbox's sealed, built copy of exactly this code is made
    assert is_ready(prepared_dir(bot.load(), bot.hash))


def test_a_submission_with_a_build_step_is_built_from_its_read_only_snapshot(base: Path) -> None:
    """A C bot never built before: its `make` runs on a copy of the stored snapshot that
    the build may write (it failed on the snapshot's read-only modes)."""
    name = f"c{uuid.uuid4().hex[:10]}"
    made = fresh_c_bot(base / "folders", name)
    folder = made.rename(made.with_name(f"{name}-1.0.0"))
    db = base / "arena.db"
    (done,) = process(db, base, submitted(db, "ada", folder).id)
    assert done.state == ACTIVE, done.report
    assert any(c["name"].startswith("nimmt: ") for c in done.report["checks"])


@pytest.mark.parametrize(
    ("code", "manifest", "words"),
    [
        (CRASH, None, "exited (exited with code 3)"),
        (SILENT, None, "no answer"),
        (
            "",
            'name = "{n}"\nversion = "1.0"\nlanguage = "python"\nbuild = "exit 3"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n',
            "build",
        ),
        (
            "",
            'name = "{n}"\nversion = "1.0"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["chess"]\n',
            "chess",
        ),
    ],
    ids=["crashes", "never answers", "build fails", "unknown game"],
)
def test_a_failing_bot_is_rejected_with_the_line_that_says_why(
    base: Path, make_bot: MakeBot, code: str, manifest: str | None, words: str
) -> None:
    db = base / "arena.db"
    folder = make_bot("bad", code, manifest=None if manifest is None else manifest.format(n="bad"))
    named = folder.with_name("bad-1.0")
    folder.rename(named)
    if manifest is None:
        (named / "bot.toml").write_text((named / "bot.toml").read_text().replace('version = "0.1"', 'version = "1.0"'))
    s = submitted(db, "mallory", named)
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED, done.report
    assert words in done.report["error"].lower(), done.report["error"]
    assert "\n" not in done.report["error"]


def settle_one_at_a_time(db: Path, base: Path, sandbox: Any, submissions: list[Any]) -> list[str]:
    """Run the pipeline with one build slot until every submission is active or retired
    (at most 300 s); what it said, in order."""
    order: list[str] = []

    async def main() -> None:
        with Store(db) as store, trio.move_on_after(300):
            async with trio.open_nursery() as nursery:
                run = partial(pipeline.run_pipeline, poll_s=0.1, progress=order.append, builds=1)
                nursery.start_soon(run, store, sandbox, base / "work")
                while any(state(db, s.id).state not in (ACTIVE, RETIRED) for s in submissions):
                    await trio.sleep(0.2)
                nursery.cancel_scope.cancel()

    trio.run(main)
    return order


def test_one_authors_queue_never_holds_up_another(base: Path) -> None:
    db = base / "arena.db"
    ada = [submitted(db, "ada", sample(base, "nimble", f"1.{n}")) for n in range(3)]
    bob = submitted(db, "bob", sample(base, "other"))
    sandbox, _ = choose_sandbox("local")
    order = settle_one_at_a_time(db, base, sandbox, [*ada, bob])
    activated = [line.split(":")[0] for line in order if line.endswith("is active")]
    assert activated == [f"submission {i}" for i in (ada[0].id, bob.id, ada[1].id, ada[2].id)], order


def slow(base: Path, name: str, version: str = "1.0", seconds: int = 4) -> Path:
    """A good bot whose build takes ``seconds``."""
    folder = sample(base, name, version)
    with open(folder / "bot.toml", "a") as manifest:
        manifest.write(f'build = "sleep {seconds}"\n')
    return folder


def test_builds_run_side_by_side_one_per_author_at_most_builds(base: Path) -> None:
    db = base / "arena.db"
    queued = [submitted(db, "ada", slow(base, "ada-bot", f"1.{n}")) for n in range(2)]
    queued += [submitted(db, who, slow(base, f"{who}-bot")) for who in ("bob", "carol")]
    sandbox, _ = choose_sandbox("local")
    most = 0

    async def main() -> None:
        nonlocal most
        with Store(db) as store, trio.move_on_after(300):
            async with trio.open_nursery() as nursery:
                run = partial(pipeline.run_pipeline, poll_s=0.1, builds=2)
                nursery.start_soon(run, store, sandbox, base / "work")
                while any(state(db, s.id).state not in (ACTIVE, RETIRED) for s in queued):
                    now = [state(db, s.id) for s in queued]
                    busy = [s.author for s in now if s.state in (BUILDING, CHECKING)]
                    assert len(busy) == len(set(busy)) <= 2, busy
                    most = max(most, len(busy))
                    await trio.sleep(0.1)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert [state(db, s.id).state for s in queued] == [RETIRED, ACTIVE, ACTIVE, ACTIVE]  # ada's 1.1 replaced 1.0
    assert most == 2, "two authors' builds side by side"


def test_a_pipeline_killed_mid_build_builds_it_again(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", slow(base, "slow"))
    script = textwrap.dedent(
        f"""
        import trio
        from pathlib import Path
        from functools import partial
        from arena.tournaments.pipeline import run_pipeline
        from arena.sandbox import choose_sandbox
        from arena.store import Store
        run = partial(run_pipeline, poll_s=0.1, progress=print)
        trio.run(run, Store(Path({str(db)!r})), choose_sandbox("local")[0], Path({str(base / "work")!r}))
        """
    )

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", script], start_new_session=True)

    first = start()
    deadline = time.monotonic() + 120
    while state(db, s.id).state != BUILDING and time.monotonic() < deadline:
        time.sleep(0.1)
    assert state(db, s.id).state == BUILDING
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert state(db, s.id).state == BUILDING, "left half built"
    second = start()
    try:
        deadline = time.monotonic() + 180
        while state(db, s.id).state in (RECEIVED, BUILDING, "checking") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert state(db, s.id).state == ACTIVE, state(db, s.id).report
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()
    with Store(db, read_only=True) as store:
        assert [b.ref for b in store.list_bots()] == ["slow:1.0"]


def test_a_report_is_bounded_and_keeps_the_failures_evidence() -> None:
    """However much a bot writes, the stored report stays under 64 KB, and the failure
    that decided keeps its evidence even behind many passed checks that wrote a lot."""
    checks = [Check(f"check {n}", n != 150, "x" * 10_000, stderr="y" * 100_000) for n in range(200)]
    checks[150].stderr = "Traceback: the real reason" + "z" * 100_000 + "the last line"
    report = report_of(checks, ["line\nwith a break"] * 1000, "")
    assert len(json.dumps(report)) <= REPORT_BYTES
    assert report["error"].startswith("check 150: xxx") and len(report["error"]) <= 301
    failed = next(c for c in report["checks"] if not c["ok"])
    assert failed["name"] == "check 150" and failed["stderr"].endswith("the last line")
    assert len(failed["stderr"]) <= 4001 and failed["detail"].startswith("xxx")
    assert [c["name"] for c in report["checks"][:3]] == ["check 0", "check 1", "check 2"]
    assert len(report["checks"]) == 200  # every verdict, evidence as far as it goes


def test_a_report_error_is_one_line_and_its_own_error_comes_first() -> None:
    report = report_of([Check("start", False, "no")], ["building"], "the build failed\n  at line 3")
    assert report["error"] == "the build failed at line 3"
    assert report["build"] == "building" and report["checks"][0]["detail"] == "no"
    assert report_of([Check("start", True), Check("x", False, skipped=True)], [])["error"] == ""


def test_a_build_that_loops_is_killed_at_the_cap(
    base: Path, make_bot: MakeBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arena.sandbox.local.BUILD_SECONDS", 3)  # the sandbox's cap, shortened
    manifest = 'name = "loop"\nversion = "1.0"\nlanguage = "python"\nbuild = "while :; do :; done"\n'
    folder = make_bot("loop", "", manifest=manifest + 'run = "python3 bot.py"\ngames = ["nimmt"]\n')
    s = submitted(db := base / "arena.db", "mallory", folder.rename(folder.with_name("loop-1.0")))
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED and "killed after 3 s" in done.report["error"], done.report
    assert str(base / "work") not in json.dumps(done.report), "the server's folders are not the author's business"


def tampered(db: Path, submission_id: int, column: str, value: object) -> None:
    """What only someone with the database file could do."""
    with Store(db) as store, store.transaction():
        store.db.execute(f"UPDATE submissions SET {column} = ? WHERE id = ?", (value, submission_id))


def evil_tar() -> bytes:
    """A tar whose member climbs out of the folder it is unpacked into."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        member = tarfile.TarInfo("../escaped")
        member.size = 3
        tar.addfile(member, io.BytesIO(b"hi\n"))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("archive", evil_tar(), ".."),
        ("archive", b"not a tar at all" * 100, "tar"),
        ("hash", "0" * 64, "hash"),
        ("version", "9.9", "bot.toml says nimble 1.0, the submission nimble 9.9"),
    ],
    ids=["climbing member", "not a tar", "other hash", "other version"],
)
def test_a_tampered_submission_is_rejected_and_nothing_is_stored(
    base: Path, column: str, value: object, words: str
) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "nimble"))
    tampered(db, s.id, column, value)
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED and words in done.report["error"], done.report
    assert not (base / "escaped").exists() and not (base / "work" / "escaped").exists()
    with Store(db, read_only=True) as store:
        assert store.list_bots() == []


def test_a_version_stored_meanwhile_with_other_code_is_rejected(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "nimble"))
    with Store(db) as store:  # the organiser's `arena bot add` of other code, same name and version
        other = store.add_bot(sample(base / "elsewhere", "nimble"))
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED and done.bot_id is None
    assert done.report["error"].startswith("nimble:1.0: nimble 1.0 is already stored with other code"), done.report
    with Store(db, read_only=True) as store:
        assert store.list_bots() == [other]


@pytest.mark.docker
def test_in_docker_a_submission_is_built_network_off_checked_and_made_ready(base: Path, docker_sandbox: Any) -> None:
    """The Docker sandbox: a good submission's image is built and it passes the battery;
    a build reaching for the network fails, as every bot build runs with none."""
    db = base / "arena.db"
    good = submitted(db, "ada", sample(base, "nimble"))
    reach = sample(base, "reach")
    (reach / "reach.py").write_text('import socket\nsocket.create_connection(("1.1.1.1", 53), timeout=3)\n')
    with open(reach / "bot.toml", "a") as manifest:
        manifest.write('build = "python3 reach.py"\n')
    bad = submitted(db, "bob", reach)
    started = time.monotonic()
    done, refused = process(db, base, good.id, bad.id, sandbox=docker_sandbox)
    print(f"docker: received to active in {time.monotonic() - started:.1f} s for both")
    assert done.state == ACTIVE and done.report["error"] == "", done.report
    assert all(c["ok"] for c in done.report["checks"]) and len(done.report["checks"]) >= 5
    with Store(db, read_only=True) as store:
        bot = store.get_bot("nimble:1.0").load()
    assert images.bot_image(docker_sandbox.client, bot, build_missing=False)  # playable at once: no build left
    assert refused.state == REJECTED and "failed (exit 1):" in refused.report["error"], refused.report
    assert "Network is unreachable" in refused.report["error"] and "Traceback" in refused.report["build"]


def test_a_failure_reads_as_one_line_without_the_servers_folders() -> None:
    text = "/srv/work/ab12: the build failed (exit 1):\n  Traceback\n  OSError: no\n\n"
    assert failure(text, ["/srv/work/ab12", "/srv"], "nimble:1.0") == (
        "nimble:1.0: the build failed (exit 1): OSError: no",
        ["  Traceback", "  OSError: no", ""],
    )
    assert failure("bad: refused", [], "x:1") == ("bad: refused", [])


# --- a fair share of the build slots --------------------------------------------------------


def test_build_time_puts_the_author_who_used_least_first() -> None:
    used = pipeline.BuildTime(window_s=100)
    ada = used.start(1, 0.0)
    ada[1] = 30.0
    used.start(2, 20.0)  # bob's build still runs: it counts as it goes
    ready = [Submission(i, author, "", "x", "1", "h", 0, RECEIVED, {}, None, "", "") for i, author in ((1, 1), (2, 2))]
    ready.append(Submission(3, 3, "", "y", "1", "h", 0, RECEIVED, {}, None, "", ""))
    assert used.used(1, 60.0) == 30.0 and used.used(2, 60.0) == 40.0 and used.used(3, 60.0) == 0.0
    assert [s.id for s in used.order(ready, 60.0)] == [3, 1, 2]
    assert used.used(1, 120.0) == 10.0, "only the last window_s counts"
    assert used.used(1, 200.0) == 0.0 and used.spans[1] == [], "and what left it is forgotten"


class FakeBuilds(pipeline.Pipeline):
    """The pipeline's scheduling, with builds that take a set time on a virtual clock (and
    the database used in place, without threads, so the clock jumps only when all wait)."""

    seconds: dict[str, float] = {}
    started: list[tuple[float, str]] = []

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    async def process(self, s: Submission) -> Submission:
        self.started.append((trio.current_time(), s.name))
        await trio.sleep(self.seconds[s.author])
        self.submissions.set_state(s.id, REJECTED, {})
        return s


def test_authors_with_slow_builds_cannot_keep_the_slots(base: Path) -> None:
    """Two authors whose builds take the whole 300 s cap, three each, and one whose take
    10 s, four: once the first two slow builds end, the fast author's four all go before
    the slow authors' next (the author served longest ago first gave the slots back to
    the slow authors in turn, and the fast author's second waited 300 s more)."""
    db = base / "arena.db"
    for n in range(3):
        for who in ("ada", "dan"):
            submitted(db, who, sample(base, f"{who}-bot", f"1.{n}"))
    for n in range(4):
        submitted(db, "cyd", sample(base, "cyd-bot", f"1.{n}"))
    FakeBuilds.seconds = {"ada": 300.0, "dan": 300.0, "cyd": 10.0}
    FakeBuilds.started = []

    async def main() -> None:
        fake = FakeBuilds(db, None, base / "work")  # type: ignore[arg-type]
        with trio.move_on_after(2000):
            await fake.run(poll_s=0.5, builds=2)
        fake.close()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    starts = {name: [t for t, n in FakeBuilds.started if n == name] for name in ("ada-bot", "dan-bot", "cyd-bot")}
    assert starts["ada-bot"][0] == starts["dan-bot"][0] == 0.0
    assert len(starts["cyd-bot"]) == 4 and all(300 <= t <= 350 for t in starts["cyd-bot"]), starts
    assert max(starts["cyd-bot"]) < sorted(starts["ada-bot"] + starts["dan-bot"])[3], starts


def test_a_slow_authors_next_build_waits_for_a_fast_authors_queue(base: Path) -> None:
    """One slot, real builds: ada's take 6 s, bob's none. After ada's first and bob's
    first, bob (who used less) goes again before ada's second."""
    db = base / "arena.db"
    ada = [submitted(db, "ada", slow(base, "ada-bot", f"1.{n}", seconds=6)) for n in range(2)]
    bob = [submitted(db, "bob", sample(base, "bob-bot", f"1.{n}")) for n in range(2)]
    sandbox, _ = choose_sandbox("local")
    order = settle_one_at_a_time(db, base, sandbox, [*ada, *bob])
    built = [line.split(":")[0] for line in order if ": building " in line]
    assert built == [f"submission {s.id}" for s in (ada[0], bob[0], bob[1], ada[1])], order


# --- what a submission leaves on disk ---------------------------------------------------------


def test_a_rejected_submission_leaves_no_copy_of_its_code_but_its_archive(base: Path, make_bot: MakeBot) -> None:
    db = base / "arena.db"
    folder = sample(base, "crasher")
    (folder / "bot.py").write_text(CRASH)
    s = submitted(db, "ada", folder)
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED
    with Store(db, read_only=True) as store:
        assert store.list_bots() == [] and not any(store.snapshots.iterdir())
        assert Submissions(store).archive(s.id), "kept for a while"
    assert not (base / "work" / s.hash).exists(), "the unpacked folder is not kept beside the snapshot"


def test_a_good_submission_is_unpacked_once_into_its_snapshot(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "once"))
    (done,) = process(db, base, s.id)
    assert done.state == ACTIVE
    assert not (base / "work" / s.hash).exists()
    with Store(db, read_only=True) as store:
        assert Path(store.get_bot("once:1.0").path).is_dir()


def test_archives_of_rejected_and_retired_submissions_go_after_the_keep(base: Path) -> None:
    db = base / "arena.db"
    ids = [submitted(db, "ada", sample(base, "kept", f"1.{n}")).id for n in range(4)]
    with Store(db) as store:
        subs = Submissions(store)
        subs.set_state(ids[0], REJECTED, {"error": "x"})
        subs.set_state(ids[1], RETIRED)
        subs.set_state(ids[2], ACTIVE)
        assert subs.sweep(3600) == 0, "nothing is past the keep yet"
        assert subs.sweep(3600, clock=time.time() + 3601) == 2
        assert [
            bool(store.db.execute("SELECT length(archive) FROM submissions WHERE id = ?", (i,)).fetchone()[0])
            for i in ids
        ] == [False, False, True, True]
        assert subs.get(ids[0]) is not None and subs.get(ids[0]).report == {"error": "x"}, "the row stays"
        with pytest.raises(SubmissionError) as gone:
            subs.archive(ids[0])
        assert gone.value.status == 404


def test_the_pipeline_sweeps_archives_as_it_runs(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "swept"))
    with Store(db) as store:
        Submissions(store).set_state(s.id, REJECTED, {})
    lines: list[str] = []

    async def main() -> None:
        with Store(db) as store, trio.move_on_after(60):
            async with trio.open_nursery() as nursery:
                run = partial(pipeline.run_pipeline, poll_s=0.1, progress=lines.append, keep_archives_s=0)
                nursery.start_soon(run, store, choose_sandbox("local")[0], base / "work")
                while not lines:
                    await trio.sleep(0.1)
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert lines == ["deleted the archives of 1 rejected or retired submissions"]


def test_checks_that_take_too_long_are_stopped_at_the_cap(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot that answers every request just within its time holds a build slot for the
    whole battery: the battery has a cap of its own."""
    monkeypatch.setattr(pipeline, "CHECK_SECONDS", 3)
    folder = sample(base, "dawdler")
    code = (folder / "bot.py").read_text()
    (folder / "bot.py").write_text(
        code.replace("        rng = ", "        __import__('time').sleep(0.8)\n        rng = ")
    )
    ended: list[bool] = []  # per battery begun: whether it ran to its end

    class Watched(Checker):
        async def run(self, games: list[str] | None = None, only: str = "") -> list[Check]:
            ended.append(False)
            checks = await super().run(games, only)
            ended[-1] = True  # never reached when the cap stops it
            return checks

    monkeypatch.setattr(pipeline, "Checker", Watched)
    s = submitted(db := base / "arena.db", "mallory", folder)
    (done,) = process(db, base, s.id)
    assert done.state == REJECTED and "the checks took more than 3 s" in done.report["error"], done.report
    assert ended == [False], "stopped at the cap, not after the battery ran to its end"
