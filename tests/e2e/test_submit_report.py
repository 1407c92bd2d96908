"""``arena submit --wait`` shows why a submission was rejected as ``arena bot check``
shows it: each failed check's got / expected / fix / stderr, drawn by the one renderer.
A real server, a real ladder building and checking a real failing bot, a real ``arena``."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from pathlib import Path

from arena.store import Store
from arena.store.submissions import Submissions

from ..conftest import MakeBot, serving
from .test_terminal_text import ARENA, arena

OFF_BY_ONE = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "x", "version": "1"}), flush=True)
    elif m["type"] == "request":
        sys.stderr.write("thinking about TOKEN\\n"); sys.stderr.flush()
        print(json.dumps({"type": "answer", "id": m["id"], "answer": 105}), flush=True)
    elif m["type"] == "bye":
        break
"""


def evidence(text: str) -> list[str]:
    """The lines of the failed checks: a FAIL line and the evidence under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "FAIL" in line)
    return lines[start:]


def test_submit_wait_shows_a_rejections_evidence_as_bot_check_does(make_bot: MakeBot, tmp_path: Path) -> None:
    token_text = secrets.token_hex(6)
    name = f"offbyone-{token_text}"
    folder = make_bot(name, OFF_BY_ONE.replace("TOKEN", token_text))
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    ladder_log = tmp_path / "ladder.log"
    with serving(db, extra=("--submissions",)) as url, open(ladder_log, "wb") as log:
        ladder = subprocess.Popen(
            [ARENA, "ladder", "run", "--db", str(db), "--sandbox", "local", "--seed", "5"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            waited = arena("submit", str(folder), "--server", url, "--wait", env={"ARENA_TOKEN": token})
        finally:
            ladder.send_signal(signal.SIGINT)
            try:
                ladder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(ladder.pid, signal.SIGKILL)
                ladder.wait()
    assert waited.returncode == 1, waited.stdout + waited.stderr
    text = waited.stdout.decode()
    assert "rejected" in text
    shown = evidence(text)
    labels = [line.split()[0] for line in shown if line.startswith("        ")]
    assert {"got", "expected", "fix", "stderr"} <= set(labels), text
    assert any(f"thinking about {token_text}" in line for line in shown), "the bot's stderr, quoted"
    assert any(line.startswith("        got      ") and "105" in line for line in shown), text

    checked = subprocess.run(
        [ARENA, "bot", "check", str(folder), "--sandbox", "local", "--game", "nimmt"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert checked.returncode == 1
    first_check = evidence(checked.stdout)
    first_submit = shown
    # The first failure's block, line by line the same (up to the checks' timings).
    fail_check = first_check[0].split(" · ")[0].strip()
    fail_submit = first_submit[0].split(" · ")[0].strip()
    assert fail_check == fail_submit, (first_check[0], first_submit[0])
    block_check = [line for line in first_check[1:] if line.startswith("        ")][:4]
    block_submit = [line for line in first_submit[1:] if line.startswith("        ")][:4]
    assert block_check == block_submit, (block_check, block_submit)
