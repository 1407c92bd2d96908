"""The PettingZoo environments (``arena.env``, issue 29 item 2): PettingZoo's own API and
seed tests, and what the environment promises beyond them (observations are what a bot
is sent, rewards add up to the game's scores, seeds deal the arena's deals, nothing of a
simultaneous turn shows before all have chosen), with opponents in this process."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import msgspec
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import arena.env
from arena.gamecheck import ENV, check
from arena.games import SettingsError
from arena.games.parts import EnvPart
from arena.games.registry import get_game
from arena.play.session import Pending
from protocol.arrays import mask
from protocol.bot import Bot, game_types
from protocol.messages import Request

DICT_OBSERVATIONS = [
    # PettingZoo's checks know dict observations ({"observation", "action_mask"}) only by
    # the names of its own classic games; for any other environment they warn.
    "ignore:Observation is not a NumPy array:UserWarning",
    "ignore:Observation space for each agent probably should be:UserWarning",
]
TABLES = [
    ("nimmt", 2, {}, {}),
    ("nimmt", 4, {}, {2: "lowest"}),
    ("nimmt", 3, {"variant": "logical"}, {}),
    ("nimmt", 3, {"variant": "professional", "keep_rows": True}, {}),
    ("nimmt", 3, {"shedding": True}, {}),
    ("sixes", 2, {}, {}),
    ("sixes", 4, {}, {0: "first"}),
]


def lowest(kind: str, view: Any, legal: list[Any]) -> Any:
    return min(legal)


def first(kind: str, view: Any, legal: list[Any]) -> Any:
    return legal[0]


POLICIES = {"lowest": lowest, "first": first}


def make(game: str, players: int, settings: dict[str, Any], opponents: dict[int, str]) -> arena.env.ArenaEnv:
    return arena.env.make(game, players, settings, {seat: POLICIES[name] for seat, name in opponents.items()})


def play(env: arena.env.ArenaEnv, seed: int, rng: random.Random) -> dict[str, float]:
    """One game of random legal actions; each agent's rewards, summed."""
    env.reset(seed=seed)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        total[agent] += reward
        env.step(None if termination or truncation else arena.env.random_action(observation, rng))
    return total


@pytest.mark.filterwarnings(*DICT_OBSERVATIONS)
@pytest.mark.parametrize(("game", "players", "settings", "opponents"), TABLES)
def test_pettingzoos_api_test_passes(
    game: str, players: int, settings: dict[str, Any], opponents: dict[int, str]
) -> None:
    api_test(make(game, players, settings, opponents), num_cycles=400)


@pytest.mark.parametrize(("game", "players", "settings", "opponents"), TABLES)
def test_pettingzoos_seed_test_passes(
    game: str, players: int, settings: dict[str, Any], opponents: dict[int, str]
) -> None:
    seed_test(lambda: make(game, players, settings, opponents), num_cycles=400)


@pytest.mark.parametrize("game", ["nimmt", "sixes"])
def test_a_seed_deals_the_arenas_deal(game: str) -> None:
    env = arena.env.make(game, 3)
    rules = get_game(game).rules
    for seed in (0, 7, 123456):
        env.reset(seed=seed)
        dealt, _ = rules.start(env.settings, 3, seed)
        assert env.state == dealt
        assert env.seed == seed
    assert seeds_after(env, 5) == seeds_after(env, 5) != seeds_after(env, 6)


def seeds_after(env: arena.env.ArenaEnv, seed: int) -> list[int | None]:
    """The seeds of the three games dealt by ``reset()`` after ``reset(seed=seed)``."""
    env.reset(seed=seed)
    found = []
    for _ in range(3):
        env.reset()
        found.append(env.seed)
    return found


@pytest.mark.parametrize(("game", "players", "settings", "opponents"), TABLES)
def test_rewards_add_up_to_the_games_scores(
    game: str, players: int, settings: dict[str, Any], opponents: dict[int, str]
) -> None:
    env = make(game, players, settings, opponents)
    record = get_game(game)
    for seed in range(3):
        total = play(env, seed, random.Random(seed))
        outcome = record.rules.outcome(env.state)
        assert outcome is not None
        start, _ = record.rules.start(env.settings, players, seed)
        before = env.part.standing(start)
        sign = -1 if record.score.lower_is_better else 1
        for agent, reward in total.items():
            seat = int(agent.removeprefix("seat_"))
            assert reward == sign * (outcome.scores[seat] - before[seat]), (agent, total, outcome)


@pytest.mark.parametrize(("game", "players", "settings", "opponents"), TABLES)
def test_an_observation_is_what_a_bot_is_sent(
    game: str, players: int, settings: dict[str, Any], opponents: dict[int, str]
) -> None:
    """The info's view and legal answers are the request a bot decodes, and the arrays are
    the encoding of it (the code an exported bot runs)."""
    env = make(game, players, settings, opponents)
    rules = get_game(game).rules
    view_type, _ = game_types(game)
    decoder = msgspec.json.Decoder(Request[view_type])  # type: ignore[valid-type]
    rng = random.Random(1)
    env.reset(seed=11)
    for steps, agent in enumerate(env.agent_iter()):
        observation, _, termination, _, info = env.last()
        if termination:
            env.step(None)
            continue
        seat = int(agent.removeprefix("seat_"))
        line = Pending(1, info["kind"], rules.legal(env.state, seat)).request(rules.view(env.state, seat), 1000, 0)
        request = decoder.decode(line)
        assert isinstance(request, Request)
        assert (request.kind, msgspec.to_builtins(request.view), request.legal) == (
            info["kind"],
            info["view"],
            info["legal"],
        )
        encoding = env.encoding
        assert observation["observation"].tolist() == encoding.observation(info["kind"], info["view"])
        assert observation["action_mask"].tolist() == mask(encoding, info["kind"], info["legal"])
        assert sorted(encoding.answer(i) for i in np.flatnonzero(observation["action_mask"])) == sorted(info["legal"])
        env.step(arena.env.random_action(observation, rng))
        if steps > 300:
            break


def test_nothing_of_a_simultaneous_turn_shows_before_every_seat_has_chosen() -> None:
    env = arena.env.make("nimmt", 3)
    env.reset(seed=4)
    state = env.state
    before = {agent: (env.observe(agent)["observation"].copy(), dict(env.infos[agent])) for agent in env.agents}
    assert env.agent_selection == "seat_0"
    env.step(arena.env.random_action(env.observe("seat_0")))
    assert env.state is state  # nothing applied
    assert env.agent_selection == "seat_1"
    for agent in ("seat_1", "seat_2"):
        observation, info = before[agent]
        assert np.array_equal(env.observe(agent)["observation"], observation)
        assert env.infos[agent] == info
    assert env.infos["seat_0"]["kind"] is None and not env.observe("seat_0")["action_mask"].any()
    env.step(arena.env.random_action(env.observe("seat_1")))
    env.step(arena.env.random_action(env.observe("seat_2")))
    assert env.state is not state
    assert [seat for seat, kind, _ in env.chosen] == [0, 1, 2]
    revealed = env.infos["seat_1"]["view"]["revealed"]
    assert sorted(card for card, _ in revealed[0]) == sorted(answer for _, _, answer in env.chosen)


def test_an_illegal_action_is_refused_quoting_it() -> None:
    env = arena.env.make("sixes", 2)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    with pytest.raises(
        ValueError, match=rf"action {illegal} .* is not legal for seat_\d's play: the legal actions are"
    ):
        env.step(illegal)


def test_two_cards_a_turn_is_refused_with_the_reason() -> None:
    with pytest.raises(SettingsError, match="cards_per_turn = 2 answers a pair of cards"):
        arena.env.make("nimmt", 3, {"cards_per_turn": 2})


def test_opponents_name_real_seats_and_leave_one_to_the_agents() -> None:
    with pytest.raises(ValueError, match="opponent seat 5 does not exist"):
        arena.env.make("nimmt", 2, opponents={5: lowest})
    with pytest.raises(ValueError, match="leave at least one seat"):
        arena.env.make("nimmt", 2, opponents={0: lowest, 1: lowest})
    env = arena.env.make("nimmt", 4, opponents={1: lowest, 3: first})
    assert env.possible_agents == ["seat_0", "seat_2"]


class Recorder(Bot):
    """An SDK bot as an opponent: told of the game as ``protocol.bot.run`` tells it."""

    name, version = "recorder", "1"

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.games = 0
        self.over = 0

    def new_game(self, message: Any) -> None:
        self.games += 1

    def events(self, events: list[Any]) -> None:
        self.seen.extend(events)

    def decide(self, kind: str, view: Any, legal: list[Any]) -> Any:
        assert all(not hasattr(e, "hands") for e in self.seen)  # never another's hand
        return legal[-1]

    def game_over(self, message: Any) -> None:
        self.over += 1


def test_an_sdk_bot_plays_a_seat_and_is_told_only_what_its_seat_may_know() -> None:
    recorder = Recorder()
    env = arena.env.make("nimmt", 3, opponents={2: recorder})
    play(env, 3, random.Random(3))
    assert (recorder.games, recorder.over) == (1, 1)
    assert any(type(e).__name__ == "RoundStart" for e in recorder.seen)


def test_an_array_policy_plays_a_seat_as_an_agent_would() -> None:
    """``array_policy``: the same policy as an agent and as an opponent makes the same moves."""

    def last_legal(observation: dict[str, Any]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[-1])

    solo = arena.env.make("sixes", 3, opponents={1: arena.env.array_policy("sixes", last_legal)})
    solo.reset(seed=9)
    for _agent in solo.agent_iter():
        observation, _, termination, _, _ = solo.last()
        solo.step(None if termination else last_legal(observation))
    both = arena.env.make("sixes", 3)
    both.reset(seed=9)
    for _agent in both.agent_iter():
        observation, _, termination, _, _ = both.last()
        both.step(None if termination else last_legal(observation))
    assert solo.chosen == both.chosen


def standing_of_nobody(state: Any) -> list[int]:
    return [0] * state.players


SCORELESS = EnvPart("protocol.arrays.sixes", standing_of_nobody)
"""An env part whose standing never moves: its rewards miss the game's scores."""


def test_the_game_check_catches_an_env_part_whose_rewards_miss_the_scores() -> None:
    broken = dataclasses.replace(get_game("sixes"), env=f"{__name__}:SCORELESS")
    problems = [p for p in check(broken, games=1) if p.check == ENV]
    assert problems and "is not the scores" in problems[0].detail, problems
    assert not [p for p in check(get_game("sixes"), games=1) if p.check == ENV]
