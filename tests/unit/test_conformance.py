"""What every game must keep, checked over every registered game (Goofspiel and Liar's
dice included, and any game the user's ``ARENA_GAMES`` adds) by the contract check a
game's own tests run (``arena.gamecheck.check``, as ``arena game check`` does: random
games through every member of the rules and every part of the record), and a golden
replay per game and variant.

Golden replays: ``tests/golden/GAME-VARIANT.jsonl``, one game each played by seeded
random policies (no bot, no clock), are re-made and diffed against the committed file on
every run; a failure shows a unified diff of the first lines that differ. After a
deliberate change to a game's rules or events, regenerate them with
``ARENA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_conformance.py`` and review the diff.
Only the games this checkout ships have golden files: an outside game run through these
tests is held to the contract alone.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.gamecheck import check, policies, variant_settings
from arena.games.registry import ENV, AnyGame, games
from arena.play import replay
from arena.play.simulate import replay_of

from ..games.goofspiel.record import ENV_VALUE as GOOFSPIEL_ENTRY
from ..games.goofspiel.record import GOOFSPIEL
from ..games.liars_dice.record import ENV_VALUE as LIARS_DICE_ENTRY
from ..games.liars_dice.record import LIARS_DICE

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = "ARENA_UPDATE_GOLDEN"
with pytest.MonkeyPatch.context() as without_users:
    without_users.delenv(ENV, raising=False)
    SHIPPED: dict[str, AnyGame] = {**games(), GOOFSPIEL.name: GOOFSPIEL, LIARS_DICE.name: LIARS_DICE}
"""The games this checkout ships: the arena's own and the test games kept in tests/games/."""
RECORDS: dict[str, AnyGame] = {**SHIPPED, **games()}
"""Those, and the games the user's ``ARENA_GAMES`` adds (an outside game's author runs these tests on it)."""
GOLDEN_EXTRA: dict[str, dict[str, Any]] = {
    "nimmt": {"rounds": 1},
    "sixes": {"chips": 2},
}
"""Settings that keep a golden file short (a game's defaults play on for pages)."""
GOLDEN_HOUSE_RULES: dict[str, list[dict[str, Any]]] = {
    "nimmt": [{"shedding": True}, {"keep_rows": True, "rounds": 2}, {"cards_per_turn": 2}],
}
"""Settings beyond the variants that make a board of their own, each a golden file too."""


@pytest.fixture(autouse=True)
def test_games_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replays name their game: the test games must be found as ``arena`` commands find
    them, added to what the user's ``ARENA_GAMES`` names, never in its place."""
    monkeypatch.setenv(ENV, with_entries(os.environ.get(ENV, ""), GOOFSPIEL_ENTRY, LIARS_DICE_ENTRY))


def with_entries(value: str, *entries: str) -> str:
    """An ``ARENA_GAMES`` value with ``entries`` added after those it holds (each once)."""
    held = [part.strip() for part in value.split(",") if part.strip()]
    return ",".join([*held, *(entry for entry in entries if entry not in held)])


@pytest.mark.parametrize("record", RECORDS.values(), ids=list(RECORDS))
def test_the_game_keeps_the_contract(record: AnyGame) -> None:
    """Three seeded random games at the smallest, a middle and the largest table of each
    variant, through the rules and every part of the record (``arena.gamecheck``)."""
    problems = check(record, games=3, seed=0)
    assert not problems, "\n".join(map(str, problems))


# --- golden replays ----------------------------------------------------------------------------


def golden_cases() -> Iterator[Any]:
    for record in SHIPPED.values():
        extra = GOLDEN_EXTRA.get(record.name, {})
        for settings in [*variant_settings(record), *GOLDEN_HOUSE_RULES.get(record.name, [])]:
            words = [f"{k}={v}" if k != "variant" else str(v) for k, v in settings.items()]
            name = f"{record.name}-{','.join(words) or 'default'}"
            short = {**extra, **settings}
            try:
                record.rules.parse_settings(short, record.rules.MIN_PLAYERS)
            except ValueError:
                short = settings  # shedding plays one deal: no rounds to cut
            yield pytest.param(record, short, name, id=name)


GOLDEN_CASES = list(golden_cases())


@pytest.mark.parametrize(("record", "settings", "name"), GOLDEN_CASES)
def test_golden_replay(record: AnyGame, settings: dict[str, Any], name: str) -> None:
    players = min(max(3, record.rules.MIN_PLAYERS), record.rules.MAX_PLAYERS)
    path = GOLDEN / f"{name}.jsonl"
    made = replay.dumps(replay_of(record, settings, players, 2024, policies(players, 2024)))
    if os.environ.get(UPDATE) == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(made)
    assert path.exists(), f"{path.name} is missing: make it with {UPDATE}=1"
    committed = path.read_bytes()
    assert list(replay.verify(replay.loads(committed, path.name)))  # the rules still reproduce the file
    if made != committed:
        diff = difflib.unified_diff(
            committed.decode().splitlines(),
            made.decode().splitlines(),
            f"{path.name} (committed)",
            "the rules now",
            n=1,
        )
        shown = "\n".join(line[:200] for line in list(diff)[:40])
        pytest.fail(f"{path.name} differs from what the rules make now ({UPDATE}=1 remakes it):\n{shown}")


# --- the contract is the type checker's ----------------------------------------------------------


def test_a_rules_module_without_observe_fails_the_type_checker(tmp_path: Path) -> None:
    """mypy checks a game module against ``Rules`` where a record takes it: a missing
    function is a type error, not a surprise at run time."""
    complete = GOOFSPIEL_SOURCE
    (tmp_path / "complete_game.py").write_text(complete)
    before, _, rest = complete.partition("def observe")
    (tmp_path / "broken_game.py").write_text(before + "def outcome" + rest.partition("def outcome")[2])
    (tmp_path / "uses.py").write_text(
        textwrap.dedent(
            """
            from arena.games.base import AnyRules
            import broken_game, complete_game

            fine: AnyRules = complete_game
            wrong: AnyRules = broken_game
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", "uses.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(Path(__file__).resolve().parents[2])},
        timeout=300,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("uses.py:6:") and "Rules" in errors[0], result.stdout
    assert "protocol member:\nuses.py:6: note:     observe\n" in result.stdout


GOOFSPIEL_SOURCE = (
    (Path(__file__).resolve().parent.parent / "games" / "goofspiel" / "rules.py")
    .read_text()
    .replace("from .wire import", "from tests.games.goofspiel.wire import")
)
