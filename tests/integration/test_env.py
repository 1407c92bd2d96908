"""The environments with real bot processes (issue 29 item 2): bot folders play seats in
the local sandbox through the referee's session code, and a policy exported with
``arena bot from-policy`` plays in the arena, through the referee, the moves it plays in
the environment on the same seeds."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import arena.env
from arena.bots import load_bot
from arena.play.match import GameSpec, MatchSpec, TimeLimits
from arena.play.referee import play_match
from arena.play.replay import DecisionLine
from arena.sandbox.local import LocalSandbox

from ..conftest import SAMPLES, MakeBot

ARENA = str(Path(sys.executable).parent / "arena")
RIVAL = {"nimmt": SAMPLES / "lowest", "sixes": SAMPLES / "sixes-heuristic"}
POLICY = '''"""A deterministic policy of the arrays: a legal action picked by the observation's sum."""


def act(observation):
    legal = [i for i, bit in enumerate(observation["action_mask"]) if bit]
    return legal[int(sum(observation["observation"])) % len(legal)]
'''


def replayed(env: arena.env.ArenaEnv) -> None:
    """The game's answers, applied again through the rules from its deal: each legal, and
    together the game the environment played."""
    rules = env.rules
    state, _ = rules.start(env.settings, env.players, env.seed)
    chosen = list(env.chosen)
    while (decision := rules.decision(state)) is not None:
        answers = {}
        for seat in decision.seats:
            taken_seat, kind, answer = chosen.pop(0)
            assert (taken_seat, kind) == (seat, decision.kind)
            assert answer in rules.legal(state, seat)
            answers[seat] = answer
        state, _ = rules.apply(state, answers)
    assert state == env.state and not chosen


@pytest.mark.parametrize(
    ("game", "opponents"),
    [
        ("nimmt", {1: SAMPLES / "heuristic", 3: SAMPLES / "random"}),
        ("sixes", {0: SAMPLES / "sixes-heuristic", 2: str(SAMPLES / "sixes-random")}),
    ],
)
def test_bot_folders_play_seats_as_sandboxed_processes(game: str, opponents: dict[int, Any]) -> None:
    env = arena.env.make(game, 4, opponents=opponents, sandbox="local")
    processes = env._processes
    assert processes is not None and processes.seats == set(opponents)
    rng = random.Random(2)
    try:
        for seed in (1, 2):
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                observation, _, termination, _, _ = env.last()
                env.step(None if termination else arena.env.random_action(observation, rng))
            assert env.faults == []  # every answer came from the bot, in time, legal
            replayed(env)
            assert {seat for seat, _, _ in env.chosen} == {0, 1, 2, 3}
        assert all("bubblewrap" in processes.isolation(seat) for seat in opponents)
    finally:
        env.close()
    assert not processes.running()


ILLEGAL_THEN_CRASH = """
import sys
from protocol.bot import Bot, run

class Wrong(Bot):
    name, version = "wrong", "1"
    asked = 0

    def decide(self, kind, view, legal):
        self.asked += 1
        if self.asked == 3:
            sys.exit(4)
        return 999

run(Wrong())
"""
REFUSING = """
from protocol.bot import Bot, run

class No(Bot):
    name, version = "no", "1"

    def hello(self, hello):
        return False

run(No())
"""


def test_a_faulty_bot_is_played_by_the_default_as_the_referee_plays_it(make_bot: MakeBot) -> None:
    env = arena.env.make("nimmt", 2, opponents={1: make_bot("wrong", ILLEGAL_THEN_CRASH)})
    try:
        env.reset(seed=8)
        for _agent in env.agent_iter():
            observation, _, termination, _, _ = env.last()
            env.step(None if termination else arena.env.random_action(observation))
        kinds = [fault.kind for fault in env.faults]
        assert kinds == ["illegal", "illegal", "crash"], env.faults
        assert "illegal play answer 999" in env.faults[0].message
        replayed(env)  # the defaults are legal, and the game went on to its end
        assert env.agents == [] and env.rules.outcome(env.state) is not None
    finally:
        env.close()


def test_a_bot_that_refuses_the_game_is_named(make_bot: MakeBot) -> None:
    env = arena.env.make("nimmt", 2, opponents={0: make_bot("no", REFUSING)})
    try:
        with pytest.raises(arena.env.OpponentError, match=r"no \(.*\) cannot play seat 0: it refused nimmt"):
            env.reset(seed=1)
    finally:
        env.close()


def test_a_stored_bot_plays_a_seat(place: Path) -> None:
    from arena.store import Store

    db = place / "arena.db"
    Store(db).add_bot(SAMPLES / "random")
    env = arena.env.make("nimmt", 2, opponents={1: "random"}, db=db)
    try:
        env.reset(seed=2)
        for _agent in env.agent_iter():
            observation, _, termination, _, _ = env.last()
            env.step(None if termination else arena.env.random_action(observation))
        assert env.faults == []
        replayed(env)
    finally:
        env.close()


def test_a_bot_that_cannot_start_is_named() -> None:
    with pytest.raises(arena.env.OpponentError, match="no such bot folder"):
        arena.env.make("nimmt", 2, opponents={1: "no-such-bot"}, db=Path("/nonexistent/arena.db"))


def load_policy(path: Path) -> Callable[[dict[str, Any]], int]:
    spec = importlib.util.spec_from_file_location("exported_policy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.act  # type: ignore[no-any-return]


def env_games(game: str, policy: Callable[[dict[str, Any]], int], seeds: list[int]) -> list[list[tuple[int, str, Any]]]:
    """Each seed's answers, in the environment: the policy at seats 0 and 2, the rival
    bot (a process) at seat 1."""
    env = arena.env.make(game, 3, opponents={1: RIVAL[game]}, sandbox="local")
    played = []
    try:
        for seed in seeds:
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                observation, _, termination, _, _ = env.last()
                env.step(None if termination else policy(observation))
            assert env.faults == [], env.faults
            played.append(list(env.chosen))
    finally:
        env.close()
    return played


def arena_games(game: str, folder: Path, seeds: list[int]) -> list[list[tuple[int, str, Any]]]:
    """Each seed's answers, as the referee's replay logs them: the exported bot at seats 0
    and 2, the rival at seat 1, all in the local sandbox."""
    bots = [load_bot(folder), load_bot(RIVAL[game]), load_bot(folder)]
    games = [GameSpec(seed, [0, 1, 2]) for seed in seeds]
    spec = MatchSpec(game, {}, bots, games, TimeLimits(2000, 10_000, 10_000))
    result = trio.run(play_match, spec, LocalSandbox())
    played = []
    for outcome in result.games:
        assert [s.status for s in outcome.statuses] == ["ok"] * 3
        decisions = [line for line in outcome.replay if isinstance(line, DecisionLine)]
        assert not any(any(line.defaulted) for line in decisions)
        played.append(
            [
                (seat, line.kind, answer)
                for line in decisions
                for seat, answer in zip(line.seats, line.answers, strict=True)
            ]
        )
    return played


@pytest.mark.parametrize("game", ["nimmt", "sixes"])
def test_an_exported_policy_plays_the_same_moves_in_the_arena(place: Path, game: str) -> None:
    module = place / "sumpolicy.py"
    module.write_text(POLICY)
    weights = place / "weights.txt"
    weights.write_text("unused: shows a file travels with the policy\n")
    name = f"summed-{game}"
    made = subprocess.run(
        [
            ARENA,
            "bot",
            "from-policy",
            f"{module}:act",
            name,
            "--game",
            game,
            "--dir",
            str(place),
            "--file",
            str(weights),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    folder = place / name
    assert {p.name for p in folder.iterdir()} == {"bot.toml", "bot.py", "sumpolicy.py", "weights.txt"}
    checked = subprocess.run(
        [ARENA, "bot", "check", str(folder), "--sandbox", "local"], capture_output=True, text=True, timeout=600
    )
    assert checked.returncode == 0 and " 0 failed" in checked.stdout, checked.stdout + checked.stderr
    seeds = [3, 17, 2024]
    in_env = env_games(game, load_policy(module), seeds)
    in_arena = arena_games(game, folder, seeds)
    for seed, env_answers, arena_answers in zip(seeds, in_env, in_arena, strict=True):
        assert len(env_answers) > 20
        assert env_answers == arena_answers, f"seed {seed}: the moves differ"


def test_a_policy_that_is_not_there_is_one_clear_line(place: Path) -> None:
    (place / "empty.py").write_text("x = 1\n")
    made = subprocess.run(
        [ARENA, "bot", "from-policy", f"{place}/empty.py:act", "nobody", "--game", "nimmt", "--dir", str(place)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 2
    assert "empty.py defines no act at its top level" in made.stderr
    assert "Traceback" not in made.stderr and not (place / "nobody").exists()


def test_the_training_loop_of_the_docs_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/env.md's loop (from the repository, as its paths are), two games instead of a hundred."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    page = (root / "docs" / "env.md").read_text()
    loop = page.split("## A training loop", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "range(100)" in loop and "env.close()" in loop
    namespace: dict[str, Any] = {}
    exec(compile(loop.replace("range(100)", "range(2)"), "docs/env.md", "exec"), namespace)
    env = namespace["env"]
    assert env.seed == 1 and env.agents == [] and env.faults == []
    assert not env._processes.running()
