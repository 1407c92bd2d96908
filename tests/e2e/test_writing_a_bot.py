"""The minimal bots in docs/writing-a-bot.md, exactly as printed, pass ``arena bot check``
in every game they list: the page cannot drift from what works."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import ROOT
from .test_botcheck import check, verdicts

PAGE = ROOT / "docs" / "writing-a-bot.md"
LANGUAGES = ("Python", "JavaScript (Node.js)", "C", "Perl")


def page_bots() -> dict[str, dict[str, str]]:
    """``{section: {file name: text}}``: each fenced block whose first line is a comment
    naming its file, under the ``###`` heading it belongs to."""
    bots: dict[str, dict[str, str]] = {}
    section = ""
    for heading, block in re.findall(r"^### ([^\n]+)$|^```\w*\n(.*?)^```$", PAGE.read_text(), re.M | re.S):
        if heading:
            section = heading.strip()
            continue
        first, _, rest = block.partition("\n")
        name = re.fullmatch(r"(?:#|//) (\S+)", first.strip())
        if section and name:
            bots.setdefault(section, {})[name.group(1)] = rest
    return bots


@pytest.fixture(scope="module")
def folders() -> Iterator[dict[str, Path]]:
    base = Path(tempfile.mkdtemp(prefix="arena-doc-bots-"))
    os.chmod(base, 0o755)
    made = {}
    for section, files in page_bots().items():
        folder = base / re.sub(r"\W+", "-", section).strip("-").lower()
        folder.mkdir(mode=0o755)
        for name, text in files.items():
            (folder / name).write_text(text)
            (folder / name).chmod(0o644)
        made[section] = folder
    yield made
    shutil.rmtree(base, ignore_errors=True)


def test_the_page_has_a_bot_in_each_sample_language() -> None:
    bots = page_bots()
    assert set(bots) == set(LANGUAGES)
    assert all("bot.toml" in files and len(files) == 2 for files in bots.values())


@pytest.mark.parametrize("language", LANGUAGES)
def test_minimal_bot_passes_the_check(folders: dict[str, Path], language: str) -> None:
    result = check(str(folders[language]))
    assert result.returncode == 0, result.stdout + result.stderr
    found = verdicts(result.stdout)
    assert set(found.values()) == {"PASS"}
    assert any(name.startswith("sixes: ") for name in found) and any(name.startswith("nimmt: ") for name in found)


@pytest.mark.docker
def test_minimal_c_bot_builds_and_passes_in_docker(folders: dict[str, Path], docker_sandbox: object) -> None:
    result = check(str(folders["C"]), "--only", "sixth card", sandbox="docker", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "docker" in result.stdout and "1 passed" not in result.stdout
