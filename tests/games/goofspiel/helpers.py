"""What a test needs to run ``arena`` commands on Goofspiel in other processes: the
environment that registers the game, bot folders a sandbox user can read, and a
database holding a finished Goofspiel tournament (``goofspiel_db``; the web tests
reuse it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..outside import arena_with, registered_env
from .record import ENV_VALUE

BOT = Path(__file__).resolve().parent / "bot"
STRATEGIES = ("match", "high", "low")
"""One bot folder per way of bidding (``bot.py``'s argument)."""


def goofspiel_env() -> dict[str, str]:
    """This process's environment, plus what registers the game in an ``arena`` child."""
    return registered_env(ENV_VALUE)


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with the game registered."""
    return arena_with(ENV_VALUE, *args, timeout=timeout)


def goofspiel_bots(base: Path) -> list[Path]:
    """The Goofspiel bot copied into ``base`` once per strategy (``goofspiel-match``...),
    world-readable: local bots run as an unprivileged user."""
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    folders = []
    for strategy in STRATEGIES:
        folder = base / f"goofspiel-{strategy}"
        shutil.copytree(BOT, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        manifest = (folder / "bot.toml").read_text()
        manifest = manifest.replace('"goofspiel-matcher"', f'"goofspiel-{strategy}"')
        (folder / "bot.toml").write_text(manifest.replace('"python3 bot.py"', f'"python3 bot.py {strategy}"'))
        for path in (folder, *folder.iterdir()):
            os.chmod(path, 0o755)
        folders.append(folder)
    return folders


def goofspiel_db(base: Path, deals: int = 2) -> Path:
    """A database in ``base`` holding one finished Goofspiel tournament: the three bots
    at tables of two, ``deals`` deals each (12 games by default), in the local sandbox."""
    db = base / "goofspiel.db"
    bots = goofspiel_bots(base / "bots")
    args = ["--db", str(db), "--game", "goofspiel", "--table-size", "2", "--deals", str(deals)]
    result = arena("tournament", "run", *map(str, bots), *args, "--sandbox", "local", "--name", "goof", "--seed", "5")
    if result.returncode != 0:
        raise AssertionError(f"the Goofspiel tournament failed ({result.returncode}): {result.stderr}")
    return db
