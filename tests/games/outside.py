"""Running ``arena`` commands in other processes with a game registered from outside
(``ARENA_GAMES``), as its users would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")


def registered_env(value: str) -> dict[str, str]:
    """This process's environment, plus ``ARENA_GAMES=value`` and the checkout on the
    path, so an ``arena`` child finds the game."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "ARENA_GAMES": value, "PYTHONPATH": path}


def arena_with(value: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with the game of ``value`` registered."""
    return subprocess.run([ARENA, *args], capture_output=True, text=True, timeout=timeout, env=registered_env(value))
