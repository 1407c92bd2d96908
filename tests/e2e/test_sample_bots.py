"""Every sample bot plays whole games through the real referee, locally and in Docker.

The bots are found by their manifests, so a new folder in sample_bots/ is covered as
soon as its bot.toml lists a game. Also here: the local sandbox's builds (a clear error
when one fails, one build per content however many starts) and the variants for the
bots in other languages.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.bots import load_bot
from arena.play.match import GameResult, GameSpec, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import End, FaultLine, verify
from arena.sandbox.base import Sandbox, StartError
from arena.sandbox.local import LocalSandbox, is_ready, prepared_dir, ready_marker

from ..conftest import SAMPLES, MakeBot


def samples(game: str) -> list[Path]:
    return [
        path
        for path in sorted(SAMPLES.iterdir())
        if (path / "bot.toml").is_file() and game in load_bot(path).manifest.games
    ]


NIMMT = samples("nimmt")
SIXES = samples("sixes")
OTHER_LANGUAGES = [path for path in NIMMT if load_bot(path).manifest.language != "python"]
OPPONENT = {"nimmt": SAMPLES / "random", "sixes": SAMPLES / "sixes-random"}
QUICK: dict[str, dict[str, Any]] = {"nimmt": {"end_score": 30}, "sixes": {"chips": 4, "max_rounds": 6}}


async def play(
    folder: Path, game: str, settings: dict[str, Any], sandbox: Sandbox, seed: int = 5, players: int = 4
) -> GameResult:
    """One game of ``folder`` in seat 0 against the game's random bot in the others."""
    bots = [load_bot(folder), *(load_bot(OPPONENT[game]) for _ in range(players - 1))]
    spec = MatchSpec(game, settings, bots, [GameSpec(seed, list(range(players)))], TimeLimits(1000, 10_000, 30_000))
    result = await play_match(spec, sandbox)
    return result.games[0]


def assert_clean_game(game: GameResult, players: int = 4) -> None:
    """The game ran to its end, seat 0 never faulted, and the replay re-simulates."""
    faults = [line.fault for line in game.replay if isinstance(line, FaultLine) and line.seat == 0]
    assert faults == [], f"the sample bot faulted: {faults}"
    assert game.statuses[0].status == "ok"
    end = game.replay[-1]
    assert isinstance(end, End)
    assert len(end.scores) == len(end.ranks) == len(game.statuses) == players
    assert sorted(end.ranks)[0] == 1 and all(1 <= rank <= players for rank in end.ranks)
    assert list(verify(game.replay)), "the replay re-simulates"


def ids(paths: list[Path]) -> list[str]:
    return [path.name for path in paths]


def test_the_samples_are_found() -> None:
    names = set(ids(NIMMT))
    assert {"greedy-js", "greedy-c", "greedy-perl", "greedy-ruby", "heuristic", "random"} <= names
    assert "sixes-heuristic" in ids(SIXES)


@pytest.mark.parametrize("folder", NIMMT, ids=ids(NIMMT))
async def test_nimmt_sample_plays_a_clean_game_locally(folder: Path) -> None:
    assert_clean_game(await play(folder, "nimmt", QUICK["nimmt"], LocalSandbox()))


@pytest.mark.parametrize("folder", SIXES, ids=ids(SIXES))
async def test_sixes_sample_plays_a_clean_game_locally(folder: Path) -> None:
    assert_clean_game(await play(folder, "sixes", QUICK["sixes"], LocalSandbox()))


@pytest.mark.docker
@pytest.mark.parametrize(
    ("folder", "game"), [(f, "nimmt") for f in NIMMT] + [(f, "sixes") for f in SIXES], ids=ids(NIMMT) + ids(SIXES)
)
async def test_sample_plays_a_clean_game_in_docker(folder: Path, game: str, docker_sandbox: Any) -> None:
    for path in (folder, OPPONENT[game]):
        await trio.to_thread.run_sync(docker_sandbox.prepare, load_bot(path), lambda line: None)
    assert_clean_game(await play(folder, game, QUICK[game], docker_sandbox))


VARIANTS: dict[str, dict[str, Any]] = {
    "tactical": {"variant": "tactical", "rounds": 1},
    "logical": {"variant": "logical", "rounds": 1},
    "professional": {"variant": "professional", "rounds": 1},
    "two-cards": {"cards_per_turn": 2, "rounds": 1},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("folder", OTHER_LANGUAGES, ids=ids(OTHER_LANGUAGES))
async def test_the_other_languages_play_every_variant(folder: Path, variant: str) -> None:
    assert_clean_game(await play(folder, "nimmt", VARIANTS[variant], LocalSandbox(), seed=11))


# --- builds in the local sandbox ------------------------------------------------------


@pytest.fixture
def unique() -> str:
    """A token that makes a test bot's content new, so no earlier run's build is reused."""
    return uuid.uuid4().hex


def remove_build(folder: Path) -> None:
    target = prepared_dir(load_bot(folder))
    shutil.rmtree(target, ignore_errors=True)
    Path(f"{target}.lock").unlink(missing_ok=True)
    ready_marker(target).unlink(missing_ok=True)


def add_file(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)
    os.chmod(folder / name, 0o644)


async def test_a_failing_build_names_the_folder_the_command_and_its_output(make_bot: MakeBot, unique: str) -> None:
    manifest = (
        f'name = "broken"\nversion = "1"\nlanguage = "c"\nbuild = "make"\nrun = "./bot"\n'
        f'games = ["nimmt"]\ndescription = "{unique}"\n'
    )
    folder = make_bot("broken", manifest=manifest)
    add_file(folder, "Makefile", "bot:\n\t@echo 'bot.c:3:1: error: expected ; before }' >&2; exit 1\n")
    bot = load_bot(folder)
    with pytest.raises(StartError) as caught:
        await play(folder, "nimmt", {"rounds": 1}, LocalSandbox(), players=2)
    message = str(caught.value)
    first = message.splitlines()[0]
    assert str(bot.path) in first and "'make'" in first and "exit 2" in first
    assert "run `make` in the folder" in first
    assert "bot.c:3:1: error: expected ; before }" in message, "the tail of the build's output"
    assert not prepared_dir(bot).exists(), "a failed build leaves no copy to be taken for a good one"
    remove_build(folder)


async def test_a_build_runs_once_and_is_reused(make_bot: MakeBot, unique: str) -> None:
    code = "from protocol.bot import Bot, run\nclass B(Bot):\n    def decide(self, kind, view, legal):\n        return legal[0]\nrun(B())\n"
    manifest = (
        f'name = "counted"\nversion = "1"\nlanguage = "python"\nbuild = "echo built >> count.txt"\n'
        f'run = "python3 bot.py"\ngames = ["nimmt"]\ndescription = "{unique}"\n'
    )
    folder = make_bot("counted", code, manifest=manifest)
    add_file(folder, ".notes", "hidden files are not part of the bot")
    bot = load_bot(folder)
    try:
        # Two seats of the same folder start at once: one builds, the other waits for it.
        spec = MatchSpec("nimmt", {"rounds": 1}, [bot, bot], [GameSpec(1, [0, 1])], TimeLimits(1000, 10_000, 30_000))
        result = await play_match(spec, LocalSandbox())
        assert_clean_game(result.games[0], players=2)
        assert_clean_game(await play(folder, "nimmt", {"rounds": 1}, LocalSandbox(), players=2), players=2)
        target = prepared_dir(bot)
        assert (target / "count.txt").read_text() == "built\n", "built once for three starts"
        assert is_ready(target) and not (target / ".ready").exists(), "the marker is kept outside the copy"
        assert not (folder / "count.txt").exists(), "the build ran in a copy, not in the bot's folder"
        assert not (target / ".notes").exists()
        assert (target / "count.txt").stat().st_mode & 0o777 == 0o644, "sealed: bots cannot change their build"
    finally:
        remove_build(folder)
