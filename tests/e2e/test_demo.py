"""``arena demo`` as a newcomer runs it in a checkout: what it leaves there, what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ..conftest import serving
from .test_web import page

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]


def test_what_the_demo_writes_is_ignored_by_git_in_a_checkout() -> None:
    """The demo writes arena.db and arena-bots/ where it runs (README): in a checkout, git
    ignores them, and the -wal or -shm of a run that was stopped, and any <db>-bots/."""
    names = ["arena.db", "arena.db-wal", "arena.db-shm", "arena-bots/heuristic-1.0.0-0123/bot.toml", "spring-bots/x"]
    ignored = subprocess.run(["git", "check-ignore", *names], capture_output=True, text=True, cwd=ROOT)
    assert ignored.stdout.split() == names
    kept = subprocess.run(["git", "check-ignore", "sample_bots/random/bot.toml"], capture_output=True, cwd=ROOT)
    assert kept.returncode == 1, "the sample bots stay tracked"


def test_one_table_and_one_deal_are_said_in_the_singular(tmp_path: Path) -> None:
    demo = subprocess.run(
        [ARENA, "demo", "--sandbox", "local", "--deals", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert demo.returncode == 0, demo.stderr
    name = re.search(r"tournament (\S+)", demo.stdout)
    assert name is not None, demo.stdout
    shown = subprocess.run(
        [ARENA, "tournament", "show", name[1]], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    words = " ".join(shown.stdout.split())
    assert "1 deal each" in words and "; 1 table" in words, words
    assert not re.search(r"\b1 (tables|deals|games)\b", words + " ".join(demo.stdout.split())), words
    with serving(tmp_path / "arena.db") as url:
        text = " ".join(page(f"{url}/tournaments/{name[1]}").split())
    assert "1 deal each" in text and "1 deals" not in text
