"""What a test needs to run ``arena`` commands on Liar's dice in other processes: the
environment that registers the game, bot folders a sandbox user can read, and a
database holding a finished tournament (``liars_db``; the viewer's tests use it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..outside import arena_with, registered_env
from .record import ENV_VALUE

BOT = Path(__file__).resolve().parent / "bot"


def liars_env() -> dict[str, str]:
    """This process's environment, plus what registers the game in an ``arena`` child."""
    return registered_env(ENV_VALUE)


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with the game registered."""
    return arena_with(ENV_VALUE, *args, timeout=timeout)


def liars_bots(base: Path) -> list[Path]:
    """The bot copied into ``base`` twice, cautious (``liar``) and bold (``liar-bold``),
    world-readable: local bots run as an unprivileged user."""
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    folders = []
    for name, run in (("liar", "python3 bot.py"), ("liar-bold", "python3 bot.py bold")):
        folder = base / name
        shutil.copytree(BOT, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        manifest = (folder / "bot.toml").read_text().replace('name = "liar"', f'name = "{name}"')
        (folder / "bot.toml").write_text(manifest.replace('"python3 bot.py"', f'"{run}"'))
        for path in (folder, *folder.iterdir()):
            os.chmod(path, 0o755)
        folders.append(folder)
    return folders


def liars_db(base: Path, deals: int = 2) -> Path:
    """A database in ``base`` holding one finished Liar's dice tournament: the two bots
    at a table of two, ``deals`` deals, in the local sandbox."""
    db = base / "liars.db"
    bots = liars_bots(base / "bots")
    args = ["--db", str(db), "--game", "liars-dice", "--table-size", "2", "--deals", str(deals)]
    result = arena("tournament", "run", *map(str, bots), *args, "--sandbox", "local", "--name", "dice", "--seed", "9")
    if result.returncode != 0:
        raise AssertionError(f"the Liar's dice tournament failed ({result.returncode}): {result.stderr}")
    return db
