"""Bot names and versions follow one documented rule (issue 12, item 3), and image tags
made from them are always valid: names the docs allowed (``mybot-``, ``_mybot``,
``my..bot``) made an invalid image reference and a raw traceback in Docker, and
``my bot!`` was accepted everywhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.bots import NAME_RULE, VERSION_RULE, Bot, BotError, Manifest, load_bot
from arena.sandbox.images import bot_tag

from ..conftest import SAMPLES, MakeBot

ARENA = str(Path(sys.executable).parent / "arena")
EDGE_NAME = "a0.b1_c2-" + "d" * 31
"""40 characters, every separator: the longest, oddest name the rule allows."""
EDGE_VERSION = "V1.0+build_7-rc." + "9" * 24
REFERENCE = re.compile(
    r"(?P<repo>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r":(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})"
)
"""Docker's grammar of a name:tag reference (distribution/reference)."""


def manifest(name: str, version: str = "1.0") -> str:
    return f'name = "{name}"\nversion = "{version}"\nlanguage = "python"\nrun = "python3 bot.py"\ngames = ["nimmt"]\n'


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("name", "version", "field"),
    [
        ("mybot-", "1.0", "name"),
        ("_mybot", "1.0", "name"),
        ("my..bot", "1.0", "name"),
        ("my bot!", "1.0", "name"),
        ("mybot", "1.0 beta", "version"),
    ],
)
def test_a_bad_name_or_version_is_refused_in_one_line_by_every_command(
    make_bot: MakeBot, tmp_path: Path, name: str, version: str, field: str
) -> None:
    folder = make_bot("bad", manifest=manifest(name, version))
    rule = NAME_RULE if field == "name" else VERSION_RULE
    added = arena("bot", "add", str(folder), "--db", str(tmp_path / "arena.db"))
    played = arena("play", str(folder), str(SAMPLES / "random"), "--sandbox", "local")
    for result in (added, played):
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert f"`{field}` {(name if field == 'name' else version)!r}" in line and rule in line, line
    assert not (tmp_path / "arena.db-bots").exists() or not any((tmp_path / "arena.db-bots").iterdir())
    checked = arena("bot", "check", str(folder), "--sandbox", "local")
    assert checked.returncode == 1 and "Traceback" not in checked.stdout + checked.stderr
    assert "FAIL  manifest" in checked.stdout and rule in checked.stdout


def test_the_rule_at_its_edges(make_bot: MakeBot) -> None:
    good = [EDGE_NAME, "x", "0", "my-bot", "my_bot.v2", "a.b.c"]
    bad = ["d" * 41, "MyBot", "my-", "-my", ".my", "my__bot", "my-_bot", "my/bot", "bøt", "my bot", "my:bot"]
    for index, name in enumerate(good + bad):
        folder = make_bot(f"n{index}", manifest=manifest(name))
        if name in good:
            assert load_bot(folder).name == name
        else:
            with pytest.raises(BotError, match="breaks the rule for bot names"):
                load_bot(folder)
    for index, version in enumerate([EDGE_VERSION, "1", "2024.06.01", "1.0+local", "v2-rc_1"]):
        assert load_bot(make_bot(f"v{index}", manifest=manifest("x", version))).version == version
    for index, version in enumerate(["9" * 41, "-1", ".1", "+1", "1 0", "1:0", "1/0", "ünf"]):
        with pytest.raises(BotError, match="breaks the rule for versions"):
            load_bot(make_bot(f"w{index}", manifest=manifest("x", version)))


def test_image_tags_are_always_valid_references() -> None:
    """By the rule, and also for a name that bypassed it (a bot made in code)."""
    digest = "0123456789abcdef" * 4
    for name, version in [(EDGE_NAME, EDGE_VERSION), ("My Bot!", "-x+1"), ("_", "ü"), ("a" * 80, "9" * 80)]:
        bot = Bot(Path("/nowhere"), Manifest(name=name, version=version, language="x", run="x", games=[]))
        tag = bot_tag(bot, digest)
        assert REFERENCE.fullmatch(tag), tag
        assert tag.endswith(digest[:12])
    edge = bot_tag(Bot(Path("/nowhere"), Manifest(EDGE_NAME, EDGE_VERSION, "x", "x", [])), digest)
    assert edge == f"sixarena-bot-{EDGE_NAME}:V1.0-build_7-rc.{'9' * 24}-{digest[:12]}", "a valid name is kept as it is"


@pytest.mark.docker
def test_a_name_at_the_edge_of_the_rule_builds_and_plays_in_docker(make_bot: MakeBot, tmp_path: Path) -> None:
    import uuid

    code = (SAMPLES / "random" / "bot.py").read_text() + f"# {uuid.uuid4().hex}: new content, a new image\n"
    folder = make_bot("edge", code, manifest=manifest(EDGE_NAME, EDGE_VERSION))
    replay = tmp_path / "game.jsonl"
    played = arena(
        "play",
        str(folder),
        str(SAMPLES / "random"),
        "--sandbox",
        "docker",
        "--set",
        "rounds=1",
        "--replay",
        str(replay),
    )
    assert played.returncode == 0, played.stderr
    assert f"sixarena-bot-{EDGE_NAME}:V1.0-build_7-rc." in played.stderr, "its image was built"
    assert "sandbox: docker" in played.stdout and " ok " in played.stdout


@pytest.mark.parametrize("package", ["ruby; touch /tmp/arena-pwned", "$(id)", "-o=APT::Get", "../ruby"])
def test_a_hostile_package_name_never_reaches_a_command(make_bot: MakeBot, tmp_path: Path, package: str) -> None:
    """`packages` names go into package-manager commands: anything but a Debian package
    name is refused at the manifest, before any image or build is touched."""
    text = manifest("pkg") + f"packages = [{package!r}]\n".replace("'", '"')
    folder = make_bot("pkg", manifest=text)
    for result in (
        arena("bot", "add", str(folder), "--db", str(tmp_path / "arena.db")),
        arena("bot", "build", str(folder)),
    ):
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert "`packages`" in line and "not a Debian package name" in line, line
    assert not Path("/tmp/arena-pwned").exists()
