"""PettingZoo environments of the arena's games, on the games' own rules (docs/env.md).

    import arena.env

    env = arena.env.make("nimmt", players=4, opponents={3: "sample_bots/heuristic"})
    env.reset(seed=7)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination else arena.env.random_action(observation)
        env.step(action)
    env.close()

``make`` builds an ``ArenaEnv`` (``arena.env.aec``: the AEC API; spaces, masks, rewards and
seeds are described there); ``array_policy`` turns a policy of the arrays into an
opponent, for self-play; ``arena bot from-policy`` turns it into a bot folder
(``arena.env.export``). Needs the ``env`` extra (``pip install 'six-arena[env]'``).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from arena.env.seats import Opponent, OpponentError, Policy, SeatFault

if TYPE_CHECKING:
    import numpy as np

    from arena.env.aec import ArenaEnv

ArrayPolicy = Callable[[dict[str, Any]], int]
"""``policy(observation) -> action``: ``observation`` as ``env.last()`` gives it, a dict of
``"observation"`` and ``"action_mask"`` (numpy arrays in the environment; in an exported
bot, numpy arrays where numpy is installed, else lists of the same numbers)."""

__all__ = [
    "ArenaEnv",
    "ArrayPolicy",
    "Opponent",
    "OpponentError",
    "Policy",
    "SeatFault",
    "array_policy",
    "env",
    "make",
    "random_action",
]


def make(
    game: str,
    players: int,
    settings: Mapping[str, Any] | None = None,
    opponents: Mapping[int, Opponent] | None = None,
    **options: Any,
) -> ArenaEnv:
    """The environment of ``game`` for ``players`` seats; ``opponents`` plays some of them
    (``ArenaEnv`` lists the ``options``: sandbox, limits, db, render_mode)."""
    from arena.env.aec import ArenaEnv

    return ArenaEnv(game, players, settings, opponents, **options)


env = make
"""PettingZoo's name for an environment's constructor."""


def array_policy(game: str, policy: ArrayPolicy) -> Policy:
    """An opponent that plays ``policy`` over the game's arrays, as an exported bot does:
    the view encoded, the action turned back into the protocol's answer."""
    from arena.games.registry import get_game
    from protocol.arrays import mask

    encoding: Any = importlib.import_module(get_game(game).env_part().arrays)

    def decide(kind: str, view: Any, legal: list[Any]) -> Any:
        import numpy as np

        seen = view if isinstance(view, dict) else msgspec.to_builtins(view)
        observation = {
            "observation": np.array(encoding.observation(kind, seen), dtype=np.float32),
            "action_mask": np.array(mask(encoding, kind, legal), dtype=np.int8),
        }
        return encoding.answer(int(policy(observation)))

    return decide


def random_action(observation: Mapping[str, np.ndarray], rng: random.Random | None = None) -> int:
    """A uniformly random legal action of ``observation`` (its ``action_mask``)."""
    legal = [i for i, bit in enumerate(observation["action_mask"]) if bit]
    return (rng or random).choice(legal)
