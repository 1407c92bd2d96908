"""``arena bot new`` (issue 29, item 1): a folder in each of the kit's languages passes
``arena bot check`` as it is and plays a game, in bubblewrap and in Docker, each bot's
code fresh (a new name, so no image or build of an earlier run serves it)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.bots.starter import LANGUAGES

ARENA = str(Path(sys.executable).parent / "arena")
ROOT = Path(__file__).resolve().parents[2]
RIVAL = {"nimmt": "sample_bots/random", "sixes": "sample_bots/sixes-random"}


def arena(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def new(place: Path, language: str, game: str) -> Path:
    name = f"kit-{language}-{uuid.uuid4().hex[:8]}"
    made = arena("bot", "new", name, "--lang", language, "--game", game, "--dir", str(place))
    assert made.returncode == 0, made.stderr
    return place / name


@pytest.mark.parametrize("game", ["nimmt", "sixes"])
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_new_bot_passes_the_check_and_plays_locally(place: Path, language: str, game: str) -> None:
    folder = new(place, language, game)
    assert {"bot.toml", "README.md"} <= {p.name for p in folder.iterdir()}
    assert f"arena bot check {folder.name}" in (folder / "README.md").read_text()
    checked = arena("bot", "check", str(folder), "--sandbox", "local")
    assert checked.returncode == 0 and " 0 failed" in checked.stdout, checked.stdout + checked.stderr
    played = arena("play", str(folder), RIVAL[game], "--game", game, "--sandbox", "local", "--strict")
    assert played.returncode == 0, played.stdout + played.stderr
    assert "Final standings" in played.stdout


@pytest.mark.docker
@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_a_new_bot_passes_the_check_and_plays_in_docker(place: Path, language: str) -> None:
    folder = new(place, language, "nimmt")
    checked = arena("bot", "check", str(folder), "--sandbox", "docker")
    assert checked.returncode == 0 and " 0 failed" in checked.stdout, checked.stdout + checked.stderr
    played = arena("play", str(folder), RIVAL["nimmt"], "--sandbox", "docker", "--strict")
    assert played.returncode == 0 and "Final standings" in played.stdout, played.stdout + played.stderr
    subprocess.run(["docker", "image", "rm", "-f", f"sixarena-bot-{folder.name}"], capture_output=True, check=False)


def test_a_new_bot_refuses_what_it_cannot_make(place: Path) -> None:
    """One line naming what is wrong, a non-zero exit, nothing left behind."""
    (place / "taken").mkdir()
    for args, needle in [
        (("Bad_Name",), "a bot's name is"),
        (("ok", "--lang", "cobol"), "--lang cobol: the kit has"),
        (("ok", "--game", "chess"), "--game chess: the arena plays"),
        (("taken",), "already there"),
    ]:
        made = arena("bot", "new", *args, "--dir", str(place))
        lines = made.stderr.strip().splitlines()
        assert made.returncode != 0 and len(lines) == 1 and needle in lines[0], made.stderr
    assert sorted(p.name for p in place.iterdir()) == ["taken"]


@pytest.mark.docker  # `arena bot check` and `play` choose Docker where it runs, as the page says
def test_the_docs_five_commands_make_and_submit_a_bot(place: Path, tmp_path: Path) -> None:
    """Item 5: docs/writing-a-bot.md's five commands, exactly as written, run one after
    another in an empty folder, the last against a real ``arena serve --submissions``
    (its address and a real token put where the page says ARENA and token)."""
    import re
    import shlex

    from arena.store import Store
    from arena.store.submissions import Submissions
    from tests.conftest import serving

    page = (ROOT / "docs" / "writing-a-bot.md").read_text()
    section = page.split("## Start here: five commands", 1)[1]
    block = section.split("\n\n")[2]  # the heading, the sentence, the commands
    commands = [line.strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 5 and all(c.startswith("arena ") for c in commands), commands
    db = tmp_path / "league.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    (place / "token").write_text(token + "\n")
    with serving(db, extra=("--submissions",)) as url:
        for command in commands:
            words = shlex.split(command.replace("https://ARENA", url))
            words = [str(ROOT / w) if re.match(r"sample_bots/", w) else w for w in words]
            done = arena(*words[1:], cwd=place)
            assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
        with Store(db, read_only=True) as store:
            subs = Submissions(store)
            assert [(s.name, s.author) for s in subs.of_author(subs.author("ada").id)] == [("my-bot", "ada")]
    assert (place / "mine.db").exists(), "the tournament was stored"
