"""The pipeline over a real SQLite file and real bots in the real local sandbox
(bubblewrap): a good submission ends active and playable, each way a bot can fail ends
it rejected with the line that says why, an author's queue never holds up another's,
and a pipeline killed mid-build builds it again on its next start."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.botcheck import Check
from arena.bundle import pack
from arena.pipeline import Pipeline, report_of
from arena.sandbox import choose_sandbox
from arena.store import Store
from arena.store.submissions import ACTIVE, BUILDING, RECEIVED, REJECTED, RETIRED, Author, Submission, Submissions

from .conftest import SAMPLES, MakeBot

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


def process(db: Path, base: Path, *ids: int) -> list[Submission]:
    sandbox, _ = choose_sandbox("local")

    async def main() -> list[Submission]:
        pipeline = Pipeline(db, sandbox, base / "work", move_ms=2000)
        try:
            return [await pipeline.process(state(db, i)) for i in ids]
        finally:
            pipeline.close()

    return trio.run(main)


def test_a_good_submission_ends_active_and_playable(base: Path) -> None:
    db = base / "arena.db"
    s = submitted(db, "ada", sample(base, "nimble"))
    (done,) = process(db, base, s.id)
    assert done.state == ACTIVE and done.report["error"] == ""
    assert done.report["checks"] and all(c["ok"] or c["skipped"] for c in done.report["checks"])
    assert any("hello" in c["name"] or c["name"] == "start" for c in done.report["checks"])
    with Store(db, read_only=True) as store:
        bot = store.get_bot("nimble:1.0")
        assert bot.id == done.bot_id and bot.hash == s.hash and Path(bot.path).is_dir()


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


def test_one_authors_queue_never_holds_up_another(base: Path) -> None:
    db = base / "arena.db"
    ada = [submitted(db, "ada", sample(base, "nimble", f"1.{n}")) for n in range(3)]
    bob = submitted(db, "bob", sample(base, "other"))
    sandbox, _ = choose_sandbox("local")
    order: list[str] = []

    async def main() -> None:
        pipeline = Pipeline(db, sandbox, base / "work", progress=order.append, move_ms=2000)
        with trio.move_on_after(300):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pipeline.run, 0.1, 1)
                while any(state(db, s.id).state not in (ACTIVE, RETIRED) for s in [*ada, bob]):
                    await trio.sleep(0.2)
                nursery.cancel_scope.cancel()
        pipeline.close()

    trio.run(main)
    activated = [line.split(":")[0] for line in order if line.endswith("is active")]
    assert activated == [f"submission {i}" for i in (ada[0].id, bob.id, ada[1].id, ada[2].id)], order


def test_a_pipeline_killed_mid_build_builds_it_again(base: Path, make_bot: MakeBot) -> None:
    db = base / "arena.db"
    slow = make_bot("slow", "")
    manifest = (SAMPLES / "random" / "bot.toml").read_text().replace('name = "random"', 'name = "slow"')
    (slow / "bot.toml").write_text(manifest.replace('version = "1.0.0"', 'version = "1.0"') + 'build = "sleep 4"\n')
    # new content each run: a prepared copy is kept per content, and this one must be built
    code = (SAMPLES / "random" / "bot.py").read_text() + f"\n# {uuid.uuid4()}\n"
    (slow / "bot.py").write_text(code)
    named = slow.with_name("slow-1.0")
    slow.rename(named)
    s = submitted(db, "ada", named)
    script = textwrap.dedent(
        f"""
        import trio
        from pathlib import Path
        from arena.pipeline import Pipeline
        from arena.sandbox import choose_sandbox
        pipeline = Pipeline(Path({str(db)!r}), choose_sandbox("local")[0], Path({str(base / "work")!r}), print)
        trio.run(pipeline.run, 0.1)
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


def test_a_report_is_bounded() -> None:
    checks = [Check(f"check {n}", n != 3, "x" * 10_000, stderr="y" * 100_000) for n in range(200)]
    report = report_of(checks, ["line"] * 1000)
    assert len(report["checks"]) == 60 and report["error"].startswith("check 3: ")
    assert len(str(report)) < 600_000 and all(len(c["stderr"]) <= 4001 for c in report["checks"])
