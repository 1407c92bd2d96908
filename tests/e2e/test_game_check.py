"""The contract check (``arena.gamecheck.check``, ``arena game check``) passes the
games that keep the contract and names each way a game breaks it.

The command runs as a real ``arena`` process on outside games named as ``ARENA_GAMES``
entries (the test games, and broken copies of Goofspiel written to a folder of their
own); the function runs here on records whose rules have one member broken, one test a
check, so that no check passes vacuously. And an outside game named in the user's
``ARENA_GAMES`` is held to the contract by the project's own conformance tests.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena import gamecheck as contract
from arena.gamecheck import check, record_named
from arena.games.registry import CatalogError, GameRecord, get_game

from ..conftest import one_clean_line
from ..games.goofspiel import rules as goofspiel
from ..games.goofspiel.record import ENV_VALUE as GOOFSPIEL_ENTRY
from ..games.goofspiel.record import GOOFSPIEL
from ..games.liars_dice import rules as liars_dice
from ..games.liars_dice.record import ENV_VALUE as LIARS_DICE_ENTRY
from ..games.liars_dice.record import LIARS_DICE
from ..games.liars_dice.wire import Roll

ROOT = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")

OUTSIDE_GAMES = {
    "mutating": '''
        """Goofspiel whose apply empties the answers it is given."""
        import dataclasses
        import sys

        from tests.games.goofspiel import rules as fair
        from tests.games.goofspiel.record import GOOFSPIEL
        from tests.games.goofspiel.rules import (
            MAX_PLAYERS, MIN_PLAYERS, decision, default, legal, observe, outcome, parse_settings, start, view,
        )


        def apply(state, answers):
            result = fair.apply(state, answers)
            answers.clear()
            return result


        GAME = dataclasses.replace(GOOFSPIEL, name="goofspiel-mutating", rules=sys.modules[__name__])
    ''',
    "leaky": '''
        """Goofspiel whose view shows a seat the next seat's hand for its own."""
        import dataclasses
        import sys

        import msgspec

        from tests.games.goofspiel import rules as fair
        from tests.games.goofspiel.record import GOOFSPIEL
        from tests.games.goofspiel.rules import (
            MAX_PLAYERS, MIN_PLAYERS, apply, decision, default, legal, observe, outcome, parse_settings, start,
        )


        def view(state, seat):
            return msgspec.structs.replace(fair.view(state, seat), hand=state.hands[(seat + 1) % state.players])


        GAME = dataclasses.replace(GOOFSPIEL, name="goofspiel-leaky", rules=sys.modules[__name__])
    ''',
    "exploding": '''
        """A game module that cannot even be imported."""
        raise RuntimeError("the dice rolled off the table")
    ''',
    "copied": '''
        """Goofspiel under another name, as an outside game of the user's."""
        import dataclasses

        from tests.games.goofspiel.record import GOOFSPIEL

        GAME = dataclasses.replace(GOOFSPIEL, name="goofspiel-copy")
    ''',
}


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of outside games (``OUTSIDE_GAMES``), each a module of its own."""
    folder = tmp_path_factory.mktemp("outside-games")
    for name, source in OUTSIDE_GAMES.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return folder


def run(command: list[str], folder: Path, games: str = "", timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``command`` with ``folder`` and the checkout on the path, ``ARENA_GAMES`` as given."""
    path = os.pathsep.join([str(folder), str(ROOT)])
    env = {**os.environ, "PYTHONPATH": path, "ARENA_GAMES": games}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def game_check(entry: str, folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return run([ARENA, "game", "check", entry, *options], folder)


# --- the command -----------------------------------------------------------------------------


@pytest.mark.parametrize("entry", [GOOFSPIEL_ENTRY, LIARS_DICE_ENTRY])
def test_the_test_games_pass(entry: str, outside: Path) -> None:
    result = game_check(entry, outside, "--games", "2", "--seed", "5")
    assert result.returncode == 0, result.stdout + result.stderr
    name = get_game_name(entry)
    assert f"{name} keeps the contract: 2 random games (seeds 5 to 6) at each of 3 tables" in result.stdout
    assert "FAIL" not in result.stdout and not result.stderr


def get_game_name(entry: str) -> str:
    return record_named(entry).name


@pytest.mark.parametrize(
    ("entry", "broken"),
    [
        ("mutating:GAME", "apply leaves its input unchanged: 2 players, seed 0, decision 1: apply changed the answers"),
        ("leaky:GAME", "no seat sees another seat's private fields: 4 players, seed 0"),
    ],
)
def test_a_broken_outside_game_fails_naming_the_problem(entry: str, broken: str, outside: Path) -> None:
    result = game_check(entry, outside)
    assert result.returncode == 1, result.stdout + result.stderr
    problems = [line for line in result.stdout.splitlines() if line.startswith("FAIL ")]
    assert len(problems) == 1 and problems[0].startswith(f"FAIL {broken}"), result.stdout
    assert result.stdout.splitlines()[-1].endswith(
        "1 problem in 3 random games (seeds 0 to 2) at each variant and table size"
    )
    assert "Traceback" not in result.stdout + result.stderr


def test_a_registered_name_is_checked_too(outside: Path) -> None:
    result = game_check("sixes", outside, "--games", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sixes keeps the contract: 1 random game (seed 0) at each of 3 tables: 2, 5 and 8 players" in result.stdout


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("no_such_module:GAME", "cannot import no_such_module"),
        ("copied:NOPE", "copied.NOPE is nothing, not a GameRecord"),
        ("copied:dataclasses", "copied.dataclasses is a module, not a GameRecord"),
        ("copied:", "expected MODULE:ATTRIBUTE"),
        ("no-such-game", "unknown game 'no-such-game'"),
        ("exploding:GAME", "importing exploding raised RuntimeError: the dice rolled off the table"),
    ],
)
def test_an_entry_that_names_no_record_is_one_line(entry: str, said: str, outside: Path) -> None:
    one_clean_line(game_check(entry, outside), said, code=2)


# --- the user's games in the project's conformance tests ---------------------------------------


def test_the_conformance_tests_check_a_game_the_user_names(outside: Path) -> None:
    """``ARENA_GAMES`` set by the user is added to, not replaced: their game is checked,
    its replays found, and no golden file is asked of it."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/unit/test_conformance.py",
        "-p",
        "no:cacheprovider",
        "-v",
        "-n",
        "0",
    ]
    passed = run([*command, "-k", "contract and goofspiel"], outside, games="copied:GAME")
    assert passed.returncode == 0, passed.stdout[-3000:]
    assert "test_the_game_keeps_the_contract[goofspiel-copy] PASSED" in passed.stdout
    assert "goofspiel-copy" not in "".join(line for line in passed.stdout.splitlines() if "golden" in line)
    failed = run([*command, "-k", "contract and mutating"], outside, games="mutating:GAME")
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "test_the_game_keeps_the_contract[goofspiel-mutating] FAILED" in failed.stdout
    assert "apply leaves its input unchanged" in failed.stdout


# --- each check catches what it says -----------------------------------------------------------


class Changed:
    """A game's rules with some members replaced."""

    def __init__(self, rules: Any, **members: Any) -> None:
        self._rules = rules
        self.__dict__.update(members)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)


def broken(record: Any = GOOFSPIEL, fields: dict[str, Any] | None = None, **members: Any) -> Any:
    """``record`` under another name, with rules ``members`` and record ``fields`` replaced."""
    rules = Changed(record.rules, **members)
    return dataclasses.replace(record, name=f"{record.name}-broken", rules=rules, **(fields or {}))


def checks_failed(record: Any) -> dict[str, str]:
    """Each failed check's name, with its problems as lines."""
    failed: dict[str, str] = {}
    for problem in check(record, games=1):
        failed[problem.check] = "\n".join([*filter(None, [failed.get(problem.check)]), str(problem)])
    return failed


def test_a_game_that_keeps_the_contract_has_no_problem() -> None:
    assert check(GOOFSPIEL, games=1) == [] and check(LIARS_DICE, games=1) == []


def illegal_default(state: Any, seat: int) -> Any:
    return 0


def nondeterministic(counter: list[int]) -> Callable[[Any, Any], Any]:
    def apply(state: Any, answers: Any) -> Any:
        counter[0] += 1
        new, events = goofspiel.apply(state, answers)
        return msgspec.structs.replace(new, scores=tuple(s + counter[0] % 2 for s in new.scores)), events

    return apply


def tuples_only(state: Any, answers: Any) -> Any:
    """Liar's dice that takes a bid as a tuple only: a bot's JSON ``[2, 5]`` is a list."""
    if any(isinstance(a, list) for a in answers.values()):
        raise liars_dice.IllegalAnswer("a bid is a tuple")
    return liars_dice.apply(state, answers)


def anything_goes(state: Any, answers: Any) -> Any:
    return goofspiel.apply(state, {seat: goofspiel.legal(state, seat)[0] for seat in answers})


def crashes(state: Any, answers: Any) -> Any:
    if answers == {}:
        raise ValueError("no answers")
    for answer in answers.values():
        if type(answer) is not int:
            raise TypeError(f"{answer!r}")
    return goofspiel.apply(state, answers)


def tells_every_roll(event: Any, seat: int) -> Any:
    return event


def ranks_upside_down(state: Any) -> Any:
    outcome = goofspiel.outcome(state)
    return outcome and msgspec.structs.replace(outcome, ranks=[len(outcome.ranks) + 1 - r for r in outcome.ranks])


class ViewWithoutTurn(msgspec.Struct, frozen=True):
    seat: int


@pytest.mark.parametrize(
    ("changes", "failed", "said"),
    [
        ({"default": illegal_default}, contract.LEGAL, "seat 0's default 0 is not among its legal answers"),
        ({"apply": nondeterministic([0])}, contract.DETERMINISTIC, "two different results"),
        ({"apply": anything_goes}, contract.REFUSED, "apply accepted it"),
        ({"apply": crashes}, contract.REFUSED, "apply raised TypeError"),
        ({"outcome": ranks_upside_down}, contract.OUTCOME, "ranks behind it"),
        (
            {"fields": {"private": ("hand",)}},
            contract.PRIVATE,
            "private ['hand']: no field of the state or of an event",
        ),
        ({"fields": {"view": ViewWithoutTurn}}, contract.VIEW_WIRE, "decodes as"),
        ({"fields": {"variants": ("standard", "fast")}}, contract.SETTINGS, "without a 'variant' setting"),
        ({"fields": {"board_settings": ("speed",)}}, contract.SETTINGS, "board_settings names ['speed']"),
        ({"parse_settings": lambda raw, players: goofspiel.Settings()}, contract.SETTINGS, "accepted it"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_each_check_catches_its_breach(changes: dict[str, Any], failed: str, said: str) -> None:
    problems = checks_failed(broken(**changes))
    assert failed in problems and said in problems[failed], problems


class WithoutParts(GameRecord[Any, Any, Any, Any, Any]):
    """A record whose terminal renderer is broken and whose battery is empty."""

    def terminal(self) -> Any:
        return object()

    def battery(self) -> Any:
        return []


def test_the_parts_must_draw_and_the_battery_hold_a_scenario() -> None:
    record = WithoutParts(**{f.name: getattr(GOOFSPIEL, f.name) for f in dataclasses.fields(GOOFSPIEL)})
    problems = checks_failed(dataclasses.replace(record, name="goofspiel-without-parts"))
    assert "raised AttributeError" in problems[contract.TERMINAL], problems
    assert "the battery has no scenario" in problems[contract.BATTERY]


def test_an_answer_as_a_bot_sends_it_must_play() -> None:
    problems = checks_failed(broken(LIARS_DICE, apply=tuples_only))
    assert 'as a bot sends them, {"0":[' in problems[contract.WIRE_ANSWER], problems
    assert "are refused: a bid is a tuple" in problems[contract.WIRE_ANSWER]


def test_an_event_told_whole_leaks_the_others_dice() -> None:
    problems = checks_failed(broken(LIARS_DICE, observe=tells_every_roll))
    assert contract.PRIVATE in problems, problems
    assert (
        f"what seat 0 is told of {Roll.__name__} changes with the other seats' ['dice']" in problems[contract.PRIVATE]
    )


def test_a_shared_private_name_names_the_fix() -> None:
    """Liar's dice shows every die on a call: a bare ``dice`` would make that a leak, and
    the problem says how to name the private fields by type instead."""
    problems = checks_failed(broken(LIARS_DICE, {"private": ("dice",)}))
    assert "told of Call changes" in problems[contract.PRIVATE], problems
    assert "name the private fields by type" in problems[contract.PRIVATE]


def test_a_replay_that_a_changed_answer_still_verifies_is_caught() -> None:
    problems = checks_failed(broken(apply=anything_goes))
    assert "a changed answer re-simulates too (line " in problems.get(contract.REPLAY, ""), problems


def test_an_exception_in_the_rules_is_a_problem_not_a_crash() -> None:
    def view(state: Any, seat: int) -> Any:
        raise RuntimeError("no view today")

    problems = checks_failed(broken(view=view))
    assert "raised RuntimeError: no view today" in problems[contract.VIEW_WIRE], problems


def test_a_game_that_never_ends_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract, "MAX_DECISIONS", 5)
    never = broken(LIARS_DICE, decision=lambda state: liars_dice.Decision("bid", (state.turn,)))
    problems = checks_failed(never)
    assert "still going after 5 decisions" in problems[contract.ENDS], problems


def test_another_record_of_the_same_name_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_GAMES", GOOFSPIEL_ENTRY)
    problems = checks_failed(dataclasses.replace(GOOFSPIEL, title="Goofspiel again"))
    assert "another game named 'goofspiel' is registered" in problems[contract.RECORD], problems


def test_naming_a_record() -> None:
    assert record_named(GOOFSPIEL_ENTRY) is GOOFSPIEL and record_named("nimmt") is get_game("nimmt")
    with pytest.raises(CatalogError, match="or name a record as MODULE:ATTRIBUTE"):
        record_named("goofspiel-nowhere")
