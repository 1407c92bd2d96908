"""A game of the arena as a PettingZoo AEC environment, on the game's own rules.

Nothing here knows a game: the rules (``arena.games.base.Rules``) deal, say who decides,
list the legal answers and apply them; the game's ``EnvPart`` (``arena.games.parts``)
names its array encoding (``protocol.arrays``) and its standing, from which rewards come.

- **Agents** are ``seat_0`` .. ``seat_{n-1}``, less the seats the environment plays itself
  (``opponents``: ``arena.env.seats``).
- **Observations** are ``{"observation": Box, "action_mask": Box}`` as PettingZoo's classic
  games have them: the seat's view as the encoding's whole numbers (float32), and 1 for
  every legal action (int8; all 0 for a seat not asked). ``infos[agent]`` holds what a bot
  is sent for the same decision: ``"view"`` (the protocol's dict, ``msgspec.to_builtins``
  of the view), ``"legal"`` (the answers allowed, ``[]`` when not asked) and ``"kind"``.
- **Actions** index the game's fixed action space (``Discrete(ACTIONS)``); an action the
  mask does not allow is a ``ValueError`` quoting it and the legal ones.
- **Rewards** come from the game's own scoring: after each step, what it changed each
  seat's standing by (negated when the game's lower score is better), so a game's rewards
  add up to its final scores (less the starting ones).
- **Terminations** come at the game's end (no truncation: every game ends by its rules).
- **Seeds**: ``reset(seed=s)`` deals the game the arena deals for seed ``s`` (the rules'
  own seeded start); a ``reset()`` after it deals the next seed of a generator seeded by ``s``.

Simultaneous decisions (every seat chooses a card at once): the seats are asked in seat
order, one step each, but nothing is applied, and no observation shows another's choice,
until every seat asked has chosen; then the rules apply all the answers together.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium
import msgspec
import numpy as np
from pettingzoo import AECEnv

from arena.bots import Bot
from arena.env.seats import InProcess, Opponent, Processes, SeatFault, load_opponent
from arena.games import Decision, SettingsError
from arena.games.registry import get_game
from arena.play.match import TimeLimits
from protocol.arrays import HIGH, Encoding, mask

SEED_RANGE = 2**31
"""Seeds drawn for a ``reset()`` without one lie in ``0..SEED_RANGE - 1``, as ``arena play``'s do."""


def agent_name(seat: int) -> str:
    return f"seat_{seat}"


class ArenaEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """One game of ``players`` seats under ``settings`` (see the module docstring).

    ``opponents`` maps seats to what plays them (a policy, an SDK bot, a bot folder or a
    stored bot: ``arena.env.seats.Opponent``); bots run in ``sandbox`` (``local``:
    bubblewrap; ``docker``, ``auto``, ``unsafe-local``) under ``limits``, stored bots are
    found in ``db``. ``close()`` stops their processes."""

    metadata = {"name": "arena_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        game: str,
        players: int,
        settings: Mapping[str, Any] | None = None,
        opponents: Mapping[int, Opponent] | None = None,
        *,
        sandbox: str = "local",
        limits: TimeLimits | None = None,
        db: Path = Path("arena.db"),
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.record = record = get_game(game)
        self.metadata = {**self.metadata, "name": f"{record.name}_v0"}
        self.rules = record.rules
        self.part = record.env_part()
        self.raw_settings = dict(settings or {})
        self.settings = self.rules.parse_settings(self.raw_settings, players)
        self.settings_dict: dict[str, Any] = msgspec.to_builtins(self.settings)
        self.encoding: Encoding = importlib.import_module(self.part.arrays)
        refused = self.encoding.refuse(self.settings_dict)
        if refused is not None:
            raise SettingsError(f"{record.name} has no environment with these settings: {refused}")
        self.players = players
        self.render_mode = render_mode
        chosen = dict(opponents or {})
        wrong = [seat for seat in chosen if not 0 <= seat < players]
        if wrong:
            raise ValueError(f"opponent seat {wrong[0]} does not exist: the seats are 0 to {players - 1}")
        self.possible_agents = [agent_name(seat) for seat in range(players) if seat not in chosen]
        if not self.possible_agents:
            raise ValueError("every seat has an opponent: leave at least one seat to the agents")
        self._seat_of = {agent_name(seat): seat for seat in range(players)}
        loaded = {seat: load_opponent(opponent, db) for seat, opponent in chosen.items()}
        bots = {seat: player for seat, player in loaded.items() if isinstance(player, Bot)}
        self._in_process = InProcess(
            record, self.settings_dict, players, {s: p for s, p in loaded.items() if s not in bots}
        )
        self._processes: Processes | None = None
        if bots:
            from arena.sandbox import choose_sandbox, sandbox_name

            name = sandbox_name(sandbox)
            if name is None:
                raise ValueError(f"sandbox {sandbox!r}: choose local (bubblewrap), docker, auto or unsafe-local")
            box, _ = choose_sandbox(name)
            self._processes = Processes(record, self.settings_dict, players, bots, box, limits or TimeLimits())
        size = self.encoding.observation_size(players)
        actions = self.encoding.ACTIONS
        self.observation_spaces = {
            agent: gymnasium.spaces.Dict(
                {
                    "observation": gymnasium.spaces.Box(0, HIGH, (size,), np.float32),
                    "action_mask": gymnasium.spaces.Box(0, 1, (actions,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: gymnasium.spaces.Discrete(actions) for agent in self.possible_agents}
        self._seeds = random.Random()
        self.seed: int | None = None
        """The seed of the game being played (the deal)."""
        self.state: Any = None
        self.faults: list[SeatFault] = []
        """The faults of the bots playing opponents' seats in this game."""
        self.chosen: list[tuple[int, str, Any]] = []
        """This game's answers so far, as ``(seat, kind, answer)`` in the order the rules
        took them: the answers of one decision in seat order, as a replay lists them."""
        self._decision: Decision | None = None
        self._answers: dict[int, Any] = {}
        self._standing: list[int] = []
        self._shown: list[Any] = []

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    # --- the game ----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
            self.seed = seed
        else:
            self.seed = self._seeds.randrange(SEED_RANGE)
        self.state, events = self.rules.start(self.settings, self.players, self.seed)
        self.chosen = []
        self._answers = {}
        self._shown = list(events)
        self._in_process.new_game(events)
        if self._processes is not None:
            self._processes.new_game(events)
            self.faults = self._processes.faults
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._standing = self.part.standing(self.state)
        self._advance()
        self.rewards = {agent: 0 for agent in self.agents}  # nothing an agent did: no seat scores before its move

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is asked to act: None is only for a finished game")
        seat = self._seat_of[agent]
        info = self.infos[agent]
        index = int(action)
        if not 0 <= index < self.encoding.ACTIONS:
            raise ValueError(f"action {index} of {agent} is not one of 0..{self.encoding.ACTIONS - 1}")
        answer = self.encoding.answer(index)
        allowed = mask(self.encoding, info["kind"], info["legal"])
        if not allowed[index]:
            legal = [i for i, bit in enumerate(allowed) if bit]
            raise ValueError(
                f"action {index} ({answer!r}) is not legal for {agent}'s {info['kind']}: "
                f"the legal actions are {legal} ({info['legal']})"
            )
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        self._answers[seat] = answer
        self._advance()
        self._accumulate_rewards()

    def _advance(self) -> None:
        """Ask the seats the environment plays, apply every decision all of whose seats have
        answered, and stop at the next agent to act (or at the game's end)."""
        rules = self.rules
        while (decision := rules.decision(self.state)) is not None:
            self._decision = decision
            waiting = next((seat for seat in decision.seats if seat not in self._answers), None)
            if waiting is not None:
                name = agent_name(waiting)
                if name in self.action_spaces:
                    self.agent_selection = name
                    self._update_infos()
                    return
                self._answers[waiting] = self._opponent(waiting, decision.kind)
                continue
            seats = decision.seats
            answers = {seat: self._answers[seat] for seat in seats}
            self.chosen.extend((seat, decision.kind, answers[seat]) for seat in seats)
            self._answers = {}
            self.state, events = rules.apply(self.state, answers)
            self._shown.extend(events)
            self._in_process.events(events)
            if self._processes is not None:
                self._processes.events(events)
            self._score()
        self._decision = None
        outcome = rules.outcome(self.state)
        assert outcome is not None
        self._in_process.game_over(outcome.scores, outcome.ranks)
        if self._processes is not None:
            self._processes.game_over(outcome.scores, outcome.ranks)
        self.terminations = {agent: True for agent in self.agents}
        self.agent_selection = self.agents[0]
        self._update_infos()

    def _opponent(self, seat: int, kind: str) -> Any:
        view = self.rules.view(self.state, seat)
        legal = self.rules.legal(self.state, seat)
        if self._processes is not None and seat in self._processes.seats:
            return self._processes.answer(seat, kind, view, legal, self.rules.default(self.state, seat))
        return self._in_process.answer(seat, kind, view, legal)

    def _score(self) -> None:
        """Each agent's reward for what was just applied: its change of standing."""
        standing = self.part.standing(self.state)
        sign = -1 if self.record.score.lower_is_better else 1
        for agent in self.agents:
            seat = self._seat_of[agent]
            self.rewards[agent] += sign * (standing[seat] - self._standing[seat])
        self._standing = standing

    def _asked(self, seat: int) -> str | None:
        """The kind of request ``seat`` has to answer now, or ``None``."""
        decision = self._decision
        if decision is None or seat not in decision.seats or seat in self._answers:
            return None
        return decision.kind

    def _update_infos(self) -> None:
        for agent in self.agents:
            seat = self._seat_of[agent]
            kind = self._asked(seat)
            legal = self.rules.legal(self.state, seat) if kind is not None else []
            view = msgspec.to_builtins(self.rules.view(self.state, seat))
            self.infos[agent] = {"kind": kind, "view": view, "legal": msgspec.to_builtins(legal)}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        info = self.infos[agent]
        seat = self._seat_of[agent]
        view = info.get("view") or msgspec.to_builtins(self.rules.view(self.state, seat))
        observation = np.array(self.encoding.observation(info.get("kind"), view), dtype=np.float32)
        action_mask = np.array(mask(self.encoding, info.get("kind"), info.get("legal", [])), dtype=np.int8)
        return {"observation": observation, "action_mask": action_mask}

    # --- the rest of the API -----------------------------------------------------------------

    def render(self) -> str | None:
        """``ansi``: the events since the last render, one JSON line each, and who is asked."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (the environment offers 'ansi')")
            return None
        lines = [msgspec.json.encode(event).decode() for event in self._shown]
        self._shown = []
        if self._decision is not None:
            lines.append(f"asked: {self._decision.kind} of seats {list(self._decision.seats)}")
        return "\n".join(lines)

    def close(self) -> None:
        """Stop the bot processes playing opponents' seats, if any."""
        if self._processes is not None:
            self._processes.close()
