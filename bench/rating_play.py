"""Real 6 nimmt! play for the rating benchmarks: in-process policies of known, different
strength, tournaments of duplicate or random deals, on both cores.

The games are the standard game (to 66 heads) played by the rule functions the referee
uses (``arena.games.nimmt.rules``); a policy answers each decision from the state the way a
bot answers from its view (it reads only its own hand, the rows and the scores).

The policies, strongest first (``LADDER``):

- ``greedy``: plays the card with the lowest estimated cost: the heads of the row it
  would complete as a sixth card, or of the cheapest row if it is below every row end,
  else a small cost growing with the gap to the row end and the row's length. A card
  below every row takes the row with the fewest heads.
- ``greedy-30`` / ``greedy-60``: ``greedy``, but a uniformly random card 30% / 60% of
  the time.
- ``lowest``: always its lowest card; the cheapest row.
- ``random``: a uniformly random card and a uniformly random row.

And ``heuristic``: the decision code of ``sample_bots/heuristic`` itself, called in
process with the view a bot process would be sent.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from arena.games.nimmt import rules as nimmt
from arena.games.registry import get_game
from arena.play.simulate import play_game
from protocol.nimmt import HEADS, ROW_CAPACITY, ROWS

Policy = Callable[[Any, int, list[Any]], Any]

LADDER = ("greedy", "greedy-30", "greedy-60", "lowest", "random")
"""Five policies of different strength, strongest first."""
SETTINGS = nimmt.Settings()


def _row_heads(row: Sequence[int]) -> int:
    return sum(HEADS[c] for c in row)


def _cheapest(rows: Sequence[Sequence[int]]) -> int:
    return min(range(ROWS), key=lambda i: (_row_heads(rows[i]), len(rows[i]), i))


def _greedy_card(state: Any, legal: list[int]) -> int:
    rows = state.rows
    ends = [row[-1] for row in rows]
    best_cost, best_card = float("inf"), legal[0]
    for card in legal:
        target, target_end = -1, 0
        for i, end in enumerate(ends):
            if target_end < end < card:
                target, target_end = i, end
        if target < 0:
            cost = min(_row_heads(row) for row in rows) + 0.5
        elif len(rows[target]) == ROW_CAPACITY:
            cost = _row_heads(rows[target]) + 0.01 * card
        else:
            cost = 0.01 * (card - target_end) * (len(rows[target]) + 1)
        if cost < best_cost:
            best_cost, best_card = cost, card
    return best_card


def sample_module(folder: str) -> ModuleType:
    """A sample bot's ``bot.py``, imported in this process."""
    path = Path(__file__).resolve().parent.parent / "sample_bots" / folder / "bot.py"
    spec = importlib.util.spec_from_file_location(f"sample_{folder}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sample_bot(folder: str) -> Any:
    """The ``Bot`` object of a sample bot's ``bot.py``, loaded in this process."""
    module = sample_module(folder)
    own = [value for value in vars(module).values() if isinstance(value, type) and value.__module__ == module.__name__]
    return next(value() for value in own if hasattr(value, "decide"))


_SAMPLES: dict[str, Any] = {}


def policy(name: str, rng: random.Random) -> Policy:
    """The policy called ``name`` (one of ``LADDER``, or ``heuristic``), drawing its
    chances from ``rng``."""
    if name == "heuristic":
        bot = _SAMPLES.get(name) or _SAMPLES.setdefault(name, _sample_bot(name))
        return lambda state, seat, legal: bot.decide(
            "row" if state.to_place else "play", nimmt.view(state, seat), legal
        )
    if name == "random":
        return lambda state, seat, legal: rng.choice(legal)
    if name == "lowest":
        return lambda state, seat, legal: _cheapest(state.rows) if state.to_place else min(legal)
    explore = {"greedy": 0.0, "greedy-30": 0.3, "greedy-60": 0.6}[name]

    def greedy(state: Any, seat: int, legal: list[Any]) -> Any:
        if state.to_place:
            return _cheapest(state.rows)
        if explore and rng.random() < explore:
            return rng.choice(legal)
        return _greedy_card(state, legal)

    return greedy


def play(seed: int, names: Sequence[str], chance: int) -> list[int]:
    """One standard game with ``names[s]`` in seat s on the deal of ``seed``; the ranks per
    seat. ``chance`` seeds the policies' own draws."""
    players = len(names)
    rng = random.Random(chance)
    policies = [policy(name, rng) for name in names]
    _, outcome = play_game(get_game(nimmt.NAME).rules, SETTINGS, players, seed, policies)
    return list(outcome.ranks)


@dataclass(frozen=True)
class Design:
    """Who plays: ``tables`` of bot indices (into ``names``), each deal of a table once
    per rotation of its seats (``duplicate``) or each game on a fresh deal."""

    names: tuple[str, ...]
    tables: tuple[tuple[int, ...], ...]
    duplicate: bool = True


def _play_groups(task: tuple[Design, int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deal groups ``start`` to ``stop`` - 1 of ``design``: group numbers, seat bots, ranks.

    Group g is played at table ``g % len(tables)``; in duplicate it is one deal in every
    rotation, at random deals each of its games has a deal of its own."""
    design, start, stop, seed = task
    groups, seat_bots, ranks = [], [], []
    for group in range(start, stop):
        table = design.tables[group % len(design.tables)]
        size = len(table)
        for rotation in range(size):
            seats = [table[(s + rotation) % size] for s in range(size)]
            deal = seed * 10_000_000 + (group if design.duplicate else group * size + rotation)
            groups.append(group)
            seat_bots.append(seats)
            ranks.append(play(deal, [design.names[b] for b in seats], deal * 16 + rotation))
    return np.array(groups), np.array(seat_bots), np.array(ranks, dtype=np.float64)


def play_groups(design: Design, count: int, seed: int, workers: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` deal groups of ``design`` on ``workers`` processes (the same games whatever
    the number of workers): group numbers, (games, seats) seat bots and ranks."""
    chunk = 50
    tasks = [(design, start, min(start + chunk, count), seed) for start in range(0, count, chunk)]
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_play_groups, tasks)
    else:
        parts = [_play_groups(task) for task in tasks]
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )
