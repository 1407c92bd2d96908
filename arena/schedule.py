"""Round-robin schedules with duplicate deals: who plays whom, on which deal, in which seat.

Bots are grouped into tables of K; each group is a match (its bots started once). A
group plays D deals, and each deal once per rotation of the seats: in rotation r the bot
that sat in seat s moves to seat s + r, so over the K games of a deal every bot holds
every hand (duplicate format, as in duplicate bridge: the luck of the deal cancels).

Groups: every combination of K bots while there are at most ``MAX_GROUPS`` of them;
beyond that, ``MAX_GROUPS`` groups chosen greedily so that every bot sits about equally
often and pairs meet about equally often (the least-used bots first, then the bots that
have met the group's members least, ties broken by the seed). Rotations are the K cyclic
shifts, not all K! orders: each bot holds each hand once per deal, which is what
duplicate needs. Everything derives from the tournament's seed, so a resumed run plays
exactly the games an uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random

import msgspec

from .referee import GameSpec

MAX_GROUPS = 64


class Match(msgspec.Struct, frozen=True):
    match_no: int
    bots: list[int]
    """Indices into the tournament's bot list: the bots of this table."""
    games: list[GameSpec]
    """``GameSpec.seats`` index into ``bots`` (as ``MatchSpec`` wants)."""
    deals: list[int]
    """The deal number of each game: games of one deal form a duplicate group."""


def deal_seed(seed: int, group: int, deal: int) -> int:
    """A deal's seed: a pure function of the tournament seed and its place in it."""
    digest = hashlib.sha256(f"tournament/{seed}/{group}/{deal}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def groups(bots: int, size: int, seed: int) -> list[list[int]]:
    """The tables: all combinations when few, else a balanced greedy choice."""
    if not 2 <= size <= bots:
        raise ValueError(f"a table of {size} needs between 2 and {bots} seats")
    if math.comb(bots, size) <= MAX_GROUPS:
        return [list(g) for g in itertools.combinations(range(bots), size)]
    rng = random.Random(f"groups/{seed}")
    sat = [0] * bots
    met = [[0] * bots for _ in range(bots)]
    chosen: list[list[int]] = []
    for _ in range(MAX_GROUPS):
        group: list[int] = []
        for _ in range(size):
            candidates = [b for b in range(bots) if b not in group]
            rng.shuffle(candidates)
            best = min(candidates, key=lambda b: (sat[b], sum(met[b][m] for m in group)))
            group.append(best)
        for b in group:
            sat[b] += 1
            for other in group:
                if other != b:
                    met[b][other] += 1
        chosen.append(sorted(group))
    return chosen


def round_robin(bots: int, size: int, deals: int, seed: int) -> list[Match]:
    """Every match of a tournament, in a fixed order."""
    if deals < 1:
        raise ValueError(f"--deals must be at least 1, not {deals}")
    matches = []
    for number, group in enumerate(groups(bots, size, seed)):
        games, deal_numbers = [], []
        for deal in range(deals):
            for rotation in range(size):
                seats = [(seat - rotation) % size for seat in range(size)]
                games.append(GameSpec(deal_seed(seed, number, deal), seats))
                deal_numbers.append(deal)
        matches.append(Match(number, group, games, deal_numbers))
    return matches
