"""Messages that name what the user knows and say what to do, each from a real ``arena``
process: the user's folder, never a stored snapshot or a sealed copy (a hash folder);
an upload without a manifest said once; a 409 saying to raise ``version``; a bot of
another game pointed at ``--game``; ``arena play`` taking a stored bot's name."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

from arena.bots.uploads import pack_upload
from arena.store import Store
from arena.store.submissions import Submissions

from ..conftest import SAMPLES, MakeBot, serving
from .test_cli_authors import arena as submitting
from .test_cli_output import arena
from .test_web_submissions import post

HASH_FOLDER = re.compile(r"(arena-bots|sixarena-bots)/|[0-9a-f]{12}")


def one_line(run: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The one error line of a refused command (a progress line or a resume hint may come before it)."""
    assert run.returncode == code, run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert "Traceback" not in run.stderr and len(errors) == 1, run.stderr
    return errors[0]


def fresh(make_bot: MakeBot, name: str, manifest_extra: str, code: str = "") -> Path:
    """A bot folder with a random comment, so that no copy or build of an earlier run serves it."""
    body = f"# {uuid.uuid4().hex}\n{code}"
    manifest = f'name = "{name}"\nversion = "1"\nlanguage = "python"\n{manifest_extra}games = ["nimmt"]\n'
    return make_bot(name, body, manifest=manifest)


def test_a_failed_build_names_the_users_folder_not_the_snapshot(make_bot: MakeBot, tmp_path: Path) -> None:
    folder = fresh(make_bot, "badbuild", 'run = "python3 bot.py"\nbuild = "sh -c \\"echo oops >&2; exit 3\\""\n')
    run = arena("tournament", "run", str(folder), str(SAMPLES / "random"), "--deals", "1", "--sandbox", "local",
                "--db", str(tmp_path / "t.db"))  # fmt: skip
    line = one_line(run)
    assert line.startswith(f"error: {folder}: the build command"), line
    assert "exit 3" in line and not HASH_FOLDER.search(line.split("failed")[0]), line


def test_a_missing_program_names_the_users_folder_not_the_sealed_copy(make_bot: MakeBot, tmp_path: Path) -> None:
    folder = fresh(make_bot, "noprogram", 'run = "./nothere"\n')
    wanted = f"error: {folder}: the run command's program './nothere' was not found (check `run` in bot.toml)"
    played = arena("play", str(folder), str(SAMPLES / "random"), "--sandbox", "local", "--set", "rounds=1")
    assert one_line(played) == wanted
    ran = arena("tournament", "run", str(folder), str(SAMPLES / "random"), "--deals", "1", "--sandbox", "local",
                "--db", str(tmp_path / "t.db"))  # fmt: skip
    assert one_line(ran) == wanted
    checked = arena("bot", "check", str(folder), "--sandbox", "local")
    assert checked.returncode == 1
    start = next(line for line in checked.stdout.splitlines() if "FAIL" in line)
    assert f"{folder}: the run command's program './nothere' was not found" in start, start
    assert "sixarena-bots" not in checked.stdout


def test_an_upload_without_a_manifest_says_so_once(make_bot: MakeBot, tmp_path: Path) -> None:
    folder = make_bot("nomanifest", "print('hi')\n")
    (folder / "bot.toml").unlink()
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    with serving(db, extra=("--submissions",)) as url:
        line = one_line(submitting("submit", str(folder), "--server", url, token=token))
    assert line == f"error: {folder}: the upload's bot folder: no bot.toml in this folder (every bot needs a manifest)"
    assert "the folder:" not in line


def test_a_version_submitted_before_is_refused_saying_to_raise_it(tmp_path: Path) -> None:
    folder = tmp_path / "again"
    folder.mkdir()
    for part in ("bot.py", "bot.toml"):
        (folder / part).write_text(
            (SAMPLES / "random" / part).read_text().replace('"random"', f'"again-{uuid.uuid4().hex[:8]}"')
        )
    db = tmp_path / "arena.db"
    with Store(db) as store:
        token = Submissions(store).add_author("ada")[1]
    with serving(db, extra=("--submissions",)) as url:
        first = submitting("submit", str(folder), "--server", url, token=token)
        assert first.returncode == 0, first.stderr
        same = one_line(submitting("submit", str(folder), "--server", url, token=token), 1)
        status, answer = post(url, token, pack_upload(folder))  # as the web's form sends it: no Arena-Bot header
        assert status == 409 and "with this same code" in answer["error"], answer
        assert "raise `version` in bot.toml" in answer["error"], answer
        with open(folder / "bot.py", "a") as code:
            code.write("# changed\n")
        changed = one_line(submitting("submit", str(folder), "--server", url, token=token), 1)
    for line in (same, changed):
        assert "(409)" in line and "is already submitted (submission 1)" in line, line
        assert "raise `version` in bot.toml" in line, line


def test_a_bot_of_another_game_is_pointed_at_its_game(tmp_path: Path) -> None:
    sixes = str(SAMPLES / "sixes-random")
    played = one_line(arena("play", sixes, str(SAMPLES / "random"), "--game", "nimmt", "--sandbox", "local"))
    assert played.endswith("sixes-random does not play nimmt (its bot.toml lists sixes): to play it, --game sixes")
    mixed = one_line(arena("play", sixes, str(SAMPLES / "random"), "--sandbox", "local"))
    assert mixed.endswith(
        "no game in common: sixes-random plays sixes; random plays nimmt (a table seats the bots of one game)"
    )
    ran = one_line(arena("tournament", "run", sixes, str(SAMPLES / "sixes-heuristic"), "--game", "nimmt",
                         "--sandbox", "local", "--db", str(tmp_path / "t.db")))  # fmt: skip
    assert ran.endswith("to play it, --game sixes"), ran


def test_play_takes_a_stored_bot_by_name_or_says_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "stored.db"
    for name in ("random", "heuristic"):
        assert arena("bot", "add", str(SAMPLES / name), "--db", str(db)).returncode == 0
    played = arena("play", "random", "heuristic:1.0.0", "--db", str(db), "--sandbox", "local", "--set", "rounds=1")
    assert played.returncode == 0, played.stderr
    assert "seats: A random, B heuristic" in played.stdout and "Final standings" in played.stdout
    unknown = one_line(arena("play", "random", "nobody", "--db", str(db), "--sandbox", "local"))
    assert unknown == (
        f"error: nobody: no such bot folder, nor a bot stored in {db} under that name"
        f" (`arena bot list --db {db}` shows them; --db names another database)"
    )
    missing = tmp_path / "none.db"
    nowhere = one_line(arena("play", "random", "heuristic", "--db", str(missing), "--sandbox", "local"))
    assert nowhere.startswith(f"error: random: no such bot folder, and no database {missing} to find a stored bot")
    assert "--db the database that stores it" in nowhere
    folder = one_line(arena("play", str(tmp_path / "gone"), "random", "--db", str(db), "--sandbox", "local"))
    assert folder == f"error: {tmp_path / 'gone'}: no such bot folder"
