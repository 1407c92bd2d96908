"""What every game must keep, checked over every registered game (Goofspiel included)
with seeded random play, and a golden replay per game and variant.

- **Default is legal**: at every decision, each asked seat's default is among its legal answers.
- **Apply is pure**: the same state and answers give equal results twice, and the state
  and answers passed in are equal (encoded byte for byte) before and after.
- **Nothing hidden leaks**: a record names the fields of its state and events that hold
  one private entry per seat (``private``, e.g. ``hands``). At every state, for every
  seat, the other seats' entries are shuffled among them (each keeping its size: what
  the game shows openly, how many cards a seat holds, stays) and the seat's ``view``
  must not change; nor may what ``observe`` tells it of any event so perturbed. The
  check fails if the shuffle never changed anything, so a game cannot pass it vacuously.
- **Verify reproduces the replay**: a replay written by ``arena.play.simulate.replay_of``
  re-simulates through ``arena.play.replay.verify``, and one answer changed is caught.

Golden replays: ``tests/golden/GAME-VARIANT.jsonl``, one game each played by seeded
random policies (no bot, no clock), are re-made and diffed against the committed file on
every run; a failure shows a unified diff of the first lines that differ. After a
deliberate change to a game's rules or events, regenerate them with
``ARENA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_conformance.py`` and review the diff.
"""

from __future__ import annotations

import difflib
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.games.registry import ENV, AnyGame, games
from arena.play import replay
from arena.play.simulate import Policy, random_policy, replay_of

from ..games.goofspiel.record import ENV_VALUE, GOOFSPIEL

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
UPDATE = "ARENA_UPDATE_GOLDEN"
RECORDS: dict[str, AnyGame] = {**games(), GOOFSPIEL.name: GOOFSPIEL}
SEEDS = range(3)
GOLDEN_EXTRA: dict[str, dict[str, Any]] = {
    "nimmt": {"rounds": 1},
    "sixes": {"chips": 2},
}
"""Settings that keep a golden file short (a game's defaults play on for pages)."""
GOLDEN_HOUSE_RULES: dict[str, list[dict[str, Any]]] = {
    "nimmt": [{"shedding": True}, {"keep_rows": True, "rounds": 2}, {"cards_per_turn": 2}],
}
"""Settings beyond the variants that make a board of their own, each a golden file too."""

_encode = msgspec.msgpack.Encoder().encode


@pytest.fixture(autouse=True)
def goofspiel_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replays name their game: Goofspiel must be found as ``arena`` commands find it."""
    monkeypatch.setenv(ENV, ENV_VALUE)


def table_sizes(record: AnyGame) -> list[int]:
    fewest, most = record.rules.MIN_PLAYERS, record.rules.MAX_PLAYERS
    return sorted({fewest, (fewest + most) // 2, most})


def variant_settings(record: AnyGame) -> list[dict[str, Any]]:
    """Each variant's settings (``{}`` for a game without the ``variant`` setting)."""
    if "variant" not in record.default_settings():
        return [{}]
    return [{"variant": variant} for variant in record.variants]


def cases() -> Iterator[Any]:
    for record in RECORDS.values():
        for settings in variant_settings(record):
            for players in table_sizes(record):
                try:
                    record.rules.parse_settings(settings, players)
                except ValueError:
                    continue  # a variant that takes fewer seats
                name = ",".join(f"{k}={v}" for k, v in settings.items()) or "default"
                yield pytest.param(record, settings, players, id=f"{record.name}-{name}-{players}p")


CASES = list(cases())


def policies(players: int, seed: int) -> list[Policy]:
    return [random_policy(random.Random(f"{seed}/{seat}")) for seat in range(players)]


def walk(record: AnyGame, settings: dict[str, Any], players: int, seed: int) -> Iterator[tuple[Any, list[Any]]]:
    """Every state of a seeded random game with the events that led to it."""
    rules = record.rules
    chosen = policies(players, seed)
    state, events = rules.start(rules.parse_settings(settings, players), players, seed)
    yield state, events
    while (pending := rules.decision(state)) is not None:
        answers = {seat: chosen[seat](state, seat, rules.legal(state, seat)) for seat in pending.seats}
        state, events = rules.apply(state, answers)
        yield state, events


@pytest.mark.parametrize(("record", "settings", "players"), CASES)
def test_the_default_is_always_legal(record: AnyGame, settings: dict[str, Any], players: int) -> None:
    rules = record.rules
    for seed in SEEDS:
        for state, _ in walk(record, settings, players, seed):
            pending = rules.decision(state)
            for seat in pending.seats if pending else ():
                assert rules.default(state, seat) in rules.legal(state, seat), (seed, state)
        assert rules.outcome(state) is not None


@pytest.mark.parametrize(("record", "settings", "players"), CASES)
def test_apply_is_deterministic_and_leaves_its_input_untouched(
    record: AnyGame, settings: dict[str, Any], players: int
) -> None:
    rules = record.rules
    for seed in SEEDS:
        rng = random.Random(seed)
        for state, _ in walk(record, settings, players, seed):
            pending = rules.decision(state)
            if pending is None:
                continue
            answers = {seat: rng.choice(rules.legal(state, seat)) for seat in pending.seats}
            before, asked = _encode(state), _encode(answers)
            first = rules.apply(state, answers)
            again = rules.apply(state, dict(answers))
            assert _encode(first) == _encode(again)
            assert _encode(state) == before and _encode(answers) == asked


def shuffled_among_others(value: Any, private: tuple[str, ...], seat: int, rng: random.Random) -> Any:
    """``value`` (a state or an event) with the other seats' entries of each ``private``
    field shuffled among them, each entry keeping its size."""
    changes = {}
    for name in private:
        field = getattr(value, name, None)
        if not isinstance(field, (tuple, list)) or seat >= len(field):
            continue
        others = [t for t in range(len(field)) if t != seat]
        pool = [item for t in others for item in field[t]]
        rng.shuffle(pool)
        entries = list(field)
        for t in others:
            size = len(field[t])
            entries[t], pool = type(field[t])(sorted(pool[:size])), pool[size:]
        changes[name] = type(field)(entries)
    return msgspec.structs.replace(value, **changes) if changes else value


@pytest.mark.parametrize(("record", "settings", "players"), CASES)
def test_no_seat_sees_another_seats_hidden_part(record: AnyGame, settings: dict[str, Any], players: int) -> None:
    rules, private = record.rules, record.private
    rng = random.Random(7)
    changed = 0
    for seed in SEEDS:
        for state, events in walk(record, settings, players, seed):
            for seat in range(players):
                other = shuffled_among_others(state, private, seat, rng)
                changed += other != state
                if rules.decision(state) is not None:
                    assert rules.view(other, seat) == rules.view(state, seat), (seed, seat, state)
                for event in events:
                    told = shuffled_among_others(event, private, seat, rng)
                    changed += told != event
                    assert rules.observe(told, seat) == rules.observe(event, seat), (seed, seat, event)
    # Two seats leave one other seat: nothing to shuffle among, so only larger tables must differ.
    assert changed or not private or players == 2, f"{record.name}: no private field ({private}) ever changed"


@pytest.mark.parametrize(("record", "settings", "players"), CASES)
def test_verify_reproduces_the_replay_and_catches_a_changed_answer(
    record: AnyGame, settings: dict[str, Any], players: int
) -> None:
    lines = replay_of(record, settings, players, 11, policies(players, 11))
    steps = list(replay.verify(lines))
    assert len(steps) == sum(isinstance(line, replay.EventsLine) for line in lines)
    end, outcome = lines[-1], record.rules.outcome(steps[-1].state)
    assert isinstance(end, replay.End) and outcome is not None and outcome.scores == end.scores
    for number, line in enumerate(lines):
        if not isinstance(line, replay.DecisionLine):
            continue
        state = steps[sum(isinstance(x, replay.EventsLine) for x in lines[:number]) - 1].state
        legal = record.rules.legal(state, line.seats[0])
        other = next((answer for answer in legal if answer != line.answers[0]), None)
        if other is None:
            continue
        tampered = [
            *lines[:number],
            msgspec.structs.replace(line, answers=[other, *line.answers[1:]]),
            *lines[number + 1 :],
        ]
        with pytest.raises(replay.ReplayError):
            list(replay.verify(tampered))
        return
    pytest.fail("no decision with a choice to change")


# --- golden replays ----------------------------------------------------------------------------


def golden_cases() -> Iterator[Any]:
    for record in RECORDS.values():
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
