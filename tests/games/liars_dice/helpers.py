"""What a test needs to run ``arena`` commands on Liar's dice in other processes: the
environment that registers the game and bot folders a sandbox user can read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .record import ENV_VALUE

ROOT = Path(__file__).resolve().parents[3]
BOT = Path(__file__).resolve().parent / "bot"
ARENA = str(Path(sys.executable).parent / "arena")


def liars_env() -> dict[str, str]:
    """This process's environment, plus what registers Liar's dice in an ``arena`` child."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "ARENA_GAMES": ENV_VALUE, "PYTHONPATH": path}


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with Liar's dice registered."""
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout, env=liars_env())


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
